-- VibeLearn's own tables (SPEC §5.5). Written only by job effects (through the queue's writer)
-- and by the quiz. Timestamps are ms since the epoch.
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,            -- the IDE's session / conversation id
    project     TEXT NOT NULL,               -- folder name of the first cwd
    cwd         TEXT,                        -- first cwd seen; full path keeps same-named repos apart
    platform    TEXT,
    state       TEXT NOT NULL DEFAULT 'initialized' CHECK (state IN
                  ('initialized','observing','analyzing','analyzed','synced')),
    started_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    ended_at    INTEGER,
    end_reason  TEXT
);
CREATE INDEX sessions_started ON sessions (started_at DESC);

CREATE TABLE prompts (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    event_key   TEXT NOT NULL,               -- makes a re-run of the same ingest a no-op
    text        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (session_id, event_key)
);

CREATE TABLE observations (
    id           INTEGER PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    event_key    TEXT NOT NULL,              -- tool_use_id when the IDE gives one
    obs_type     TEXT NOT NULL CHECK (obs_type IN ('file_edit','bash_command','mcp_tool')),
    tool_name    TEXT NOT NULL,
    tool_use_id  TEXT,
    file_path    TEXT,
    action       TEXT CHECK (action IS NULL OR action IN ('create','modify')),
    content      TEXT,                       -- file text captured at event time (≤ 10 KiB)
    command      TEXT,
    packages     TEXT,                       -- JSON array for package installs
    input        TEXT,                       -- JSON
    output       TEXT,                       -- JSON or text
    truncated    INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    UNIQUE (session_id, event_key)
);
CREATE INDEX observations_session ON observations (session_id, id);

CREATE TABLE stack_profiles (
    session_id  TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    profile     TEXT NOT NULL,               -- JSON StackProfile
    updated_at  INTEGER NOT NULL
);

CREATE TABLE static_patterns (
    id            INTEGER PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    pattern_type  TEXT NOT NULL,
    name          TEXT NOT NULL,
    file          TEXT NOT NULL,
    line          INTEGER NOT NULL,
    snippet       TEXT NOT NULL,
    language      TEXT NOT NULL
);
CREATE INDEX static_patterns_session ON static_patterns (session_id);

CREATE TABLE session_summaries (
    session_id              TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    what_was_built          TEXT NOT NULL,
    developer_intent        TEXT NOT NULL,
    architecture_decisions  TEXT NOT NULL,   -- JSON array of strings
    duration_minutes        INTEGER NOT NULL,
    files_created           INTEGER NOT NULL,
    files_edited            INTEGER NOT NULL,
    updated_at              INTEGER NOT NULL
);

CREATE TABLE concepts (
    id               TEXT PRIMARY KEY,
    session_id       TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    name             TEXT NOT NULL,
    normalized_name  TEXT NOT NULL,
    category         TEXT NOT NULL,
    difficulty       TEXT NOT NULL CHECK (difficulty IN ('junior','mid','senior')),
    source_file      TEXT NOT NULL,
    snippet          TEXT NOT NULL,
    why_it_matters   TEXT NOT NULL,
    confidence       REAL NOT NULL,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    UNIQUE (session_id, normalized_name)
);

CREATE TABLE questions (
    id                  TEXT PRIMARY KEY,
    concept_id          TEXT NOT NULL REFERENCES concepts (id) ON DELETE CASCADE,
    session_id          TEXT NOT NULL,
    question_type       TEXT NOT NULL,
    difficulty          TEXT NOT NULL CHECK (difficulty IN ('junior','mid','senior')),
    snippet             TEXT,
    question            TEXT NOT NULL,
    options             TEXT,                -- JSON array
    correct             TEXT,
    explanation         TEXT NOT NULL,
    follow_up           TEXT,
    tags                TEXT NOT NULL,       -- JSON array
    text_hash           TEXT NOT NULL,
    parent_question_id  TEXT REFERENCES questions (id) ON DELETE CASCADE,
    -- SM-2 schedule (SPEC §7); due_at NULL = never answered (a "new" question).
    ease                REAL NOT NULL DEFAULT 2.5,
    interval_days       INTEGER NOT NULL DEFAULT 0,
    repetitions         INTEGER NOT NULL DEFAULT 0,
    due_at              INTEGER,
    created_at          INTEGER NOT NULL,
    UNIQUE (concept_id, question_type, text_hash)
);
CREATE INDEX questions_due ON questions (due_at);
CREATE INDEX questions_session ON questions (session_id);

CREATE TABLE quiz_attempts (
    id           INTEGER PRIMARY KEY,
    question_id  TEXT NOT NULL REFERENCES questions (id) ON DELETE CASCADE,
    answer       TEXT NOT NULL,
    correct      INTEGER NOT NULL,
    quality      INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    synced_at    INTEGER
);

CREATE TABLE concept_profiles (
    normalized_name    TEXT PRIMARY KEY,
    concept_name       TEXT NOT NULL,
    category           TEXT NOT NULL,
    level              TEXT NOT NULL DEFAULT 'junior',
    mastery_score      REAL NOT NULL DEFAULT 0,
    encounter_count    INTEGER NOT NULL DEFAULT 0,
    correct_answers    INTEGER NOT NULL DEFAULT 0,
    incorrect_answers  INTEGER NOT NULL DEFAULT 0,
    correct_streak     INTEGER NOT NULL DEFAULT 0,
    last_seen_at       INTEGER NOT NULL
);

CREATE TABLE daily_streaks (
    day      INTEGER PRIMARY KEY,            -- days since the epoch (UTC)
    answers  INTEGER NOT NULL,
    correct  INTEGER NOT NULL
);

CREATE TABLE sync_state (
    session_id        TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    last_synced_at    INTEGER NOT NULL,
    -- Hash of the last delivered payload without its quiz attempts: equal and no new
    -- attempts means there is nothing to send.
    content_hash      TEXT NOT NULL
);

-- Input hash of each analysis step's last successful run: the "unchanged" skip (SPEC §5.3).
CREATE TABLE analysis_inputs (
    session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    step        TEXT NOT NULL,
    input_hash  TEXT NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (session_id, step)
);
