-- Where each concept stands, kept (issue 43 §1): the statusline on every message, `vl status`,
-- `vl gaps` and the dashboard's overview and profile judged every answered card of every
-- concept on every read (~2,400 cards at 1,000 sessions, most of the statusline's time). A
-- concept's standing is `learn::mastery::judge` over its cards; it changes only when a card
-- changes, or when the mean recall of its answered cards falls under 70 % with time, and that
-- moment can be computed when it is judged. So a row keeps the standing judged at `judged_at`
-- and `gap_at`, the moment it turns into a gap by time alone (NULL: it never does), judged
-- with the forgetting curve's `decay` (a re-fit changes it, and a row of another decay is not
-- read), with what the profile lists of it. `learning::kept_standings` writes and reads it; a
-- name without a row is judged from its cards, so a missing row costs time, never truth.
CREATE TABLE concept_standings (
    normalized_name TEXT PRIMARY KEY NOT NULL,
    -- The concept as `learning::mastery` heads it: the first name and category in sort order of
    -- its rows (its level is read from `concept_profiles`, which every answer changes).
    name            TEXT NOT NULL,
    category        TEXT NOT NULL,
    standing        TEXT NOT NULL CHECK (standing IN ('mastered', 'reviewing', 'learning', 'gap')),
    gap_at          INTEGER,
    judged_at       INTEGER NOT NULL,
    decay           REAL NOT NULL,
    -- What time does not change: its cards, answered, mature, tagged a leech, those leeches'
    -- lapses; and what recall-now is computed from at any moment: `[stability, difficulty,
    -- last_review_at]` of each answered card, as JSON.
    cards           INTEGER NOT NULL,
    answered        INTEGER NOT NULL,
    mature          INTEGER NOT NULL,
    leeches         INTEGER NOT NULL,
    lapses          INTEGER NOT NULL,
    recalls         TEXT NOT NULL
) WITHOUT ROWID;

-- Every change to a card, or to which name a card belongs to, forgets its name's row, whoever
-- makes it (an answer, the quiz job's inserts and stale deletes, a suspend, the FSRS migration,
-- retention, a hand edit): the rows cannot drift from the cards, and no writer has to remember
-- them. The columns are those the judgement reads (`learning::standings`' live cards, the
-- reflection prompts' condition) and the concept a card belongs to.
CREATE TRIGGER concept_standings_card_in AFTER INSERT ON questions BEGIN
    DELETE FROM concept_standings
    WHERE normalized_name = (SELECT normalized_name FROM concepts WHERE id = NEW.concept_id);
END;
CREATE TRIGGER concept_standings_card_out AFTER DELETE ON questions BEGIN
    DELETE FROM concept_standings
    WHERE normalized_name = (SELECT normalized_name FROM concepts WHERE id = OLD.concept_id);
END;
CREATE TRIGGER concept_standings_card_changed
AFTER UPDATE OF concept_id, card_state, learning_step, stability, fsrs_difficulty, last_review_at, tags,
    parent_question_id, correct ON questions BEGIN
    DELETE FROM concept_standings
    WHERE normalized_name IN (SELECT normalized_name FROM concepts WHERE id IN (OLD.concept_id, NEW.concept_id));
END;
-- A concept row added, removed or renamed changes its name's head (a concept deleted also takes
-- its cards with it, ON DELETE CASCADE, after which their triggers find no name).
CREATE TRIGGER concept_standings_concept_in AFTER INSERT ON concepts BEGIN
    DELETE FROM concept_standings WHERE normalized_name = NEW.normalized_name;
END;
CREATE TRIGGER concept_standings_concept_out AFTER DELETE ON concepts BEGIN
    DELETE FROM concept_standings WHERE normalized_name = OLD.normalized_name;
END;
CREATE TRIGGER concept_standings_concept_renamed AFTER UPDATE OF normalized_name, name, category ON concepts BEGIN
    DELETE FROM concept_standings WHERE normalized_name IN (OLD.normalized_name, NEW.normalized_name);
END;

-- `vl status`'s top categories (distinct names per category) from an index of the two, not a
-- scan of every concept row with its snippet: 1.8-3.5 -> 0.2 ms at 1,000 sessions (5,000
-- concept rows; sqlite3 shell).
CREATE INDEX concepts_by_category ON concepts (category, normalized_name);
