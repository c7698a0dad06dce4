-- FSRS scheduling, the review log and leeches (SPEC §7, issue 25).
--
-- The SM-2 columns (ease, interval_days, repetitions) stay, unread: SQLite drops a column only
-- by rebuilding the table, and the replay below needs nothing from them but the conversion of
-- cards whose answers are not on record. `due_at` keeps its meaning (NULL = new).
-- After this SQL, the migration runner replays every card's quiz_attempts through FSRS
-- (`learn::replay` via `cli::quiz::store::replay_history`) and fills the columns and the log.
ALTER TABLE questions ADD COLUMN card_state TEXT NOT NULL DEFAULT 'new'
    CHECK (card_state IN ('new', 'learning', 'review', 'relearning'));
ALTER TABLE questions ADD COLUMN learning_step INTEGER NOT NULL DEFAULT 0;
ALTER TABLE questions ADD COLUMN stability REAL;
ALTER TABLE questions ADD COLUMN fsrs_difficulty REAL;
ALTER TABLE questions ADD COLUMN last_review_at INTEGER;
ALTER TABLE questions ADD COLUMN reps INTEGER NOT NULL DEFAULT 0;
ALTER TABLE questions ADD COLUMN lapses INTEGER NOT NULL DEFAULT 0;
-- Suspended cards are never due (a leech, Anki's default action); `vl quiz --leeches` asks them.
ALTER TABLE questions ADD COLUMN suspended INTEGER NOT NULL DEFAULT 0;

-- One row per answer: the history FSRS fits its parameters to, synced with the attempts.
CREATE TABLE review_log (
    id              INTEGER PRIMARY KEY,
    question_id     TEXT NOT NULL REFERENCES questions (id) ON DELETE CASCADE,
    attempt_id      INTEGER REFERENCES quiz_attempts (id) ON DELETE SET NULL,
    rating          INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 4),
    state_before    TEXT NOT NULL,
    elapsed_days    REAL NOT NULL,
    scheduled_days  REAL NOT NULL,
    stability       REAL NOT NULL,
    difficulty      REAL NOT NULL,
    duration_ms     INTEGER,
    created_at      INTEGER NOT NULL,
    synced_at       INTEGER
);
CREATE INDEX review_log_question ON review_log (question_id, created_at);
CREATE INDEX review_log_unsynced ON review_log (synced_at) WHERE synced_at IS NULL;

-- The user's fitted FSRS parameters (`optimize_scheduler`); no row = FSRS-6's defaults.
CREATE TABLE scheduler_parameters (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    parameters  TEXT NOT NULL,               -- JSON array of 21 numbers
    reviews     INTEGER NOT NULL,            -- review-log rows the fit saw
    fitted_at   INTEGER NOT NULL
);
