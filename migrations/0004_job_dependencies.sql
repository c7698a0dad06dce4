-- Dependencies between jobs, a `held` state, and gates (docs/state_machine.md). Still no
-- VibeLearn knowledge: a job names the jobs it depends on; a gate is an opaque name (for the
-- product, a remote's credentials) that a job kind may need.
--
-- SQLite cannot change a CHECK constraint in place, so `jobs` is rebuilt (the documented
-- create-copy-drop-rename procedure). The migration runner turns foreign keys off around this
-- file's transaction and runs `PRAGMA foreign_key_check` before committing: with them on, the
-- DROP would cascade into job_attempts.
CREATE TABLE jobs_new (
    id               INTEGER PRIMARY KEY,
    kind             TEXT    NOT NULL,
    state            TEXT    NOT NULL CHECK (state IN
                       ('available','running','succeeded','retryable','dead','cancelled','held')),
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
INSERT INTO jobs_new (id, kind, state, lane, unique_key, payload, result, attempt, max_attempts, created_at,
                      run_at, finished_at, last_error, lease_token, lease_expires_at)
    SELECT id, kind, state, lane, unique_key, payload, result, attempt, max_attempts, created_at,
           run_at, finished_at, last_error, lease_token, lease_expires_at FROM jobs;
DROP TABLE jobs;
ALTER TABLE jobs_new RENAME TO jobs;

-- The indexes of 0001, unchanged (held jobs are not active: they block no lane).
CREATE INDEX jobs_available ON jobs (run_at, id) WHERE state = 'available';
CREATE INDEX jobs_retryable ON jobs (run_at) WHERE state = 'retryable';
CREATE INDEX jobs_lane_active ON jobs (lane, id) WHERE state IN ('available','running','retryable');
CREATE INDEX jobs_unique_key ON jobs (unique_key) WHERE unique_key IS NOT NULL;
CREATE INDEX jobs_kind_id ON jobs (kind, id);
CREATE INDEX jobs_finished ON jobs (state, finished_at) WHERE finished_at IS NOT NULL;
-- Held jobs by gate: resuming a gate, counting held jobs.
CREATE INDEX jobs_held ON jobs (gate) WHERE state = 'held';

-- `job_id` may start only after every `dep_id` succeeded. Rows go with either job.
CREATE TABLE job_deps (
    job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    dep_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    PRIMARY KEY (job_id, dep_id)
) WITHOUT ROWID;
-- "Who depends on this job?": releasing and re-opening dependents, cascading a cancel.
CREATE INDEX job_deps_dep ON job_deps (dep_id);

-- Gates: `unproven` (no job needing it has succeeded since the worker started or the gate
-- resumed: one such job runs at a time), `open`, or `paused` (a job was refused; jobs needing
-- it are held). `version` is the credentials' fingerprint when it paused: a different one
-- resumes it.
CREATE TABLE queue_gates (
    name       TEXT PRIMARY KEY,
    state      TEXT NOT NULL CHECK (state IN ('unproven','open','paused')),
    reason     TEXT,
    version    TEXT,
    changed_at INTEGER NOT NULL
);
