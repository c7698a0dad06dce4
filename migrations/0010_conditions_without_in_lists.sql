-- An IN list of three or more constants costs SQLite an ephemeral b-tree, built again each time
-- a statement evaluates it (lists of one or two are compared in place). The jobs CHECK, the
-- WHERE of the jobs_lane_active partial index (evaluated for the old and the new row of every
-- state change) and job_attempts' CHECK built ~12 of them per no-op job: measured, ~40 % of a
-- no-op job's instructions in the writer. The same conditions written as ORs of equalities
-- are compared in place. Queries that use jobs_lane_active write its condition the same way
-- (`queue::lane_active!`), or the planner cannot prove the partial index applies.
--
-- SQLite cannot change a CHECK constraint in place, so both tables are rebuilt
-- (create-copy-drop-rename, as in 0004, with foreign keys off around this file). Dropping
-- `jobs` drops its counting triggers; they are created again, the same but for their lists.
CREATE TABLE jobs_new (
    id               INTEGER PRIMARY KEY,
    kind             TEXT    NOT NULL,
    state            TEXT    NOT NULL CHECK (state = 'available' OR state = 'running' OR state = 'succeeded'
                       OR state = 'retryable' OR state = 'dead' OR state = 'cancelled' OR state = 'held'),
    lane             TEXT,
    unique_key       TEXT,
    payload          TEXT    NOT NULL,
    result           TEXT,
    attempt          INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL,
    created_at       INTEGER NOT NULL,
    run_at           INTEGER NOT NULL,
    finished_at      INTEGER,
    last_error       TEXT,
    lease_token      INTEGER,
    lease_expires_at INTEGER,
    -- state 'held': the paused gate it waits on (NULL: it waits on its dependencies).
    -- state 'dead': the gate whose refusal killed it, so that resuming the gate replays it.
    gate             TEXT
);
INSERT INTO jobs_new SELECT id, kind, state, lane, unique_key, payload, result, attempt, max_attempts, created_at,
                            run_at, finished_at, last_error, lease_token, lease_expires_at, gate FROM jobs;
DROP TABLE jobs;
ALTER TABLE jobs_new RENAME TO jobs;

CREATE INDEX jobs_available ON jobs (run_at, id) WHERE state = 'available';
CREATE INDEX jobs_retryable ON jobs (run_at) WHERE state = 'retryable';
CREATE INDEX jobs_lane_active ON jobs (lane, id) WHERE (state = 'available' OR state = 'running' OR state = 'retryable');
CREATE INDEX jobs_unique_key ON jobs (unique_key) WHERE unique_key IS NOT NULL;
CREATE INDEX jobs_kind_id ON jobs (kind, id);
CREATE INDEX jobs_finished ON jobs (state, finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX jobs_held ON jobs (gate) WHERE state = 'held';

CREATE TRIGGER jobs_counted_state AFTER UPDATE OF state ON jobs
    WHEN OLD.state IS NOT NEW.state
     AND NOT (OLD.state = 'available' AND NEW.state = 'running')
     AND NOT (OLD.state = 'running' AND NEW.state = 'succeeded')
BEGIN
    UPDATE job_counts SET n = n - 1 WHERE kind = OLD.kind AND state = OLD.state;
    INSERT INTO job_counts (kind, state, n) VALUES (NEW.kind, NEW.state, 1)
        ON CONFLICT (kind, state) DO UPDATE SET n = n + 1;
    INSERT INTO job_finishes (minute, state, n)
        SELECT NEW.finished_at / 60000, NEW.state, 1
        WHERE NEW.finished_at IS NOT NULL
          AND (NEW.state = 'succeeded' OR NEW.state = 'dead' OR NEW.state = 'cancelled')
        ON CONFLICT (minute, state) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER jobs_counted_delete AFTER DELETE ON jobs BEGIN
    UPDATE job_counts SET n = n - 1 WHERE kind = OLD.kind AND state = OLD.state;
END;

CREATE TABLE job_attempts_new (
    id          INTEGER PRIMARY KEY,
    job_id      INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    attempt     INTEGER NOT NULL,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    outcome     TEXT CHECK (outcome = 'succeeded' OR outcome = 'failed' OR outcome = 'timed_out' OR outcome = 'lost'),
    error       TEXT
);
INSERT INTO job_attempts_new SELECT id, job_id, attempt, started_at, finished_at, outcome, error FROM job_attempts;
DROP TABLE job_attempts;
ALTER TABLE job_attempts_new RENAME TO job_attempts;
CREATE INDEX job_attempts_job ON job_attempts (job_id, id);
