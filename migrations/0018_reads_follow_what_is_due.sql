-- Reads that follow what is due, not the whole history (issue 43 §1): every learning read
-- (the statusline on every message, `vl status`, `vl gaps`, the SessionStart count, `vl quiz
-- next`, the dashboard) read every question ever written, ~2.3 µs per question held: 39-44 ms
-- at 1,000 sessions (docs/PERFORMANCE.md "Reads at scale").
--
-- The new questions a sitting may introduce, in the order it introduces them (oldest first):
-- `due_at IS NULL` is the index's first column and the order its next two, so the selection
-- stops at the day's cap (20) instead of sorting every question never answered. Its condition
-- is part of `learning::cards`' new-card condition, word for word, so the planner may use it.
CREATE INDEX questions_new_in_order ON questions (due_at, created_at, id)
    WHERE suspended = 0 AND parent_question_id IS NULL;
-- The cards whose standing can change with time or has changed (`learning::mastery::standings`):
-- answered, in their steps, or tagged a leech. Every other card is a plain new card, whose facts
-- are always the same (never answered, not in steps, no leech), so the concepts' standings read
-- these and only ask whether a concept has a plain new card at all. The condition is
-- `learning::standings::live_card!`, word for word. It holds every column that read needs, so
-- a fresh process (the statusline) reads the index's pages and not the questions' (measured
-- 2.8 -> 1.9 ms for that query at 2,400 answered cards, sqlite3 shell, a new process each run).
CREATE INDEX questions_live ON questions (concept_id, card_state, learning_step, stability, fsrs_difficulty,
    due_at, last_review_at, reps, lapses, tags, parent_question_id, correct)
    WHERE last_review_at IS NOT NULL OR card_state <> 'new' OR instr(tags, 'leech') > 0;
-- "Has this concept a plain new card?", asked per concept name of the live cards.
CREATE INDEX questions_plain_new ON questions (concept_id)
    WHERE last_review_at IS NULL AND card_state = 'new';
-- A concept's rows by name (the live cards' concepts across sessions), and the distinct names
-- from the index alone.
CREATE INDEX concepts_by_name ON concepts (normalized_name);
-- The follow-ups (few), for the reflection prompts' counts: `vl status` and the dashboard count
-- the questions and the answers as every question and every answer, less the reflections, instead
-- of joining every answer to its question.
CREATE INDEX questions_follow_ups ON questions (parent_question_id) WHERE parent_question_id IS NOT NULL;
-- The wrong answers (the fewer: ~15 %), counted from an index of them alone; the right ones are
-- every answer less these.
CREATE INDEX quiz_attempts_wrong ON quiz_attempts (question_id) WHERE NOT correct;
