-- Where each concept stands, kept (issue 43 §1): the statusline on every message, `vl status`,
-- `vl gaps` and the dashboard's overview and profile judged every answered card of every
-- concept on every read (~2,400 cards at 1,000 sessions, most of the statusline's time). A
-- concept's standing is `learn::mastery::judge` over its cards; it changes only when a card
-- changes, or when the mean recall of its answered cards falls under 70 % with time, and that
-- moment can be computed when it is judged. So a row keeps the standing judged at `judged_at`
-- and `gap_at`, the moment it turns into a gap by time alone (NULL: it never does), judged
-- with the forgetting curve's `decay` (a re-fit changes it, and a row of another decay is not
-- read), with what the profile lists of it. `learning::kept_standings` writes and reads it; a
-- name whose standing is not kept is judged from its cards, so a forgotten judgement costs
-- time, never truth.
--
-- A row for every concept name met, and only for those (the triggers below keep the set): the
-- reads that need every name read these 400 rows at 1,000 sessions, not the 5,000 concept rows
-- (`SELECT DISTINCT` over them was a quarter of the profile's time). A row whose `standing` is
-- NULL is a name whose judgement is not kept (never kept yet, or forgotten by a trigger): its
-- other columns are left as they were and read by nothing.
CREATE TABLE concept_standings (
    normalized_name TEXT PRIMARY KEY NOT NULL,
    -- The concept as `learning::mastery` heads it: the first name and category in sort order of
    -- its rows (its level is read from `concept_profiles`, which every answer changes).
    name            TEXT,
    category        TEXT,
    standing        TEXT CHECK (standing IN ('mastered', 'reviewing', 'learning', 'gap')),
    gap_at          INTEGER,
    judged_at       INTEGER,
    decay           REAL,
    -- What time does not change: its cards, answered, mature, tagged a leech, those leeches'
    -- lapses; and what recall-now is computed from at any moment: each answered card's
    -- stability and difficulty (little-endian f64) and last_review_at (little-endian i64), 24
    -- bytes a card. Not JSON: the profile reads every row, and parsing the numbers as JSON was
    -- a third of its time at 1,000 sessions (~8,000 instructions a concept).
    cards           INTEGER,
    answered        INTEGER,
    mature          INTEGER,
    leeches         INTEGER,
    lapses          INTEGER,
    recalls         BLOB
) WITHOUT ROWID;
INSERT INTO concept_standings (normalized_name) SELECT DISTINCT normalized_name FROM concepts;

-- Every change to a card, or to which name a card belongs to, forgets its name's judgement,
-- whoever makes it (an answer, the quiz job's inserts and stale deletes, a suspend, the FSRS
-- migration, retention, a hand edit): the rows cannot drift from the cards, and no writer has
-- to remember them. The columns are those the judgement reads (`learning::standings`' live
-- cards, the reflection prompts' condition) and the concept a card belongs to.
CREATE TRIGGER concept_standings_card_in AFTER INSERT ON questions BEGIN
    UPDATE concept_standings SET standing = NULL
    WHERE normalized_name = (SELECT normalized_name FROM concepts WHERE id = NEW.concept_id);
END;
CREATE TRIGGER concept_standings_card_out AFTER DELETE ON questions BEGIN
    UPDATE concept_standings SET standing = NULL
    WHERE normalized_name = (SELECT normalized_name FROM concepts WHERE id = OLD.concept_id);
END;
CREATE TRIGGER concept_standings_card_changed
AFTER UPDATE OF concept_id, card_state, learning_step, stability, fsrs_difficulty, last_review_at, tags,
    parent_question_id, correct ON questions BEGIN
    UPDATE concept_standings SET standing = NULL
    WHERE normalized_name IN (SELECT normalized_name FROM concepts WHERE id IN (OLD.concept_id, NEW.concept_id));
END;
-- A concept row added, removed or renamed changes its name's head, and may add a name or take
-- the last row of one away (a concept deleted also takes its cards with it, ON DELETE CASCADE,
-- after which their triggers find no name).
CREATE TRIGGER concept_standings_concept_in AFTER INSERT ON concepts BEGIN
    INSERT INTO concept_standings (normalized_name) VALUES (NEW.normalized_name)
    ON CONFLICT (normalized_name) DO UPDATE SET standing = NULL;
END;
CREATE TRIGGER concept_standings_concept_out AFTER DELETE ON concepts BEGIN
    UPDATE concept_standings SET standing = NULL WHERE normalized_name = OLD.normalized_name;
    DELETE FROM concept_standings WHERE normalized_name = OLD.normalized_name
        AND NOT EXISTS (SELECT 1 FROM concepts WHERE normalized_name = OLD.normalized_name);
END;
CREATE TRIGGER concept_standings_concept_renamed AFTER UPDATE OF normalized_name, name, category ON concepts BEGIN
    UPDATE concept_standings SET standing = NULL WHERE normalized_name = OLD.normalized_name;
    DELETE FROM concept_standings WHERE normalized_name = OLD.normalized_name
        AND NOT EXISTS (SELECT 1 FROM concepts WHERE normalized_name = OLD.normalized_name);
    INSERT INTO concept_standings (normalized_name) VALUES (NEW.normalized_name)
    ON CONFLICT (normalized_name) DO UPDATE SET standing = NULL;
END;

-- `vl status`'s top categories (distinct names per category) from an index of the two, not a
-- scan of every concept row with its snippet: 1.8-3.5 -> 0.2 ms at 1,000 sessions (5,000
-- concept rows; sqlite3 shell).
CREATE INDEX concepts_by_category ON concepts (category, normalized_name);
