-- The durable job queue (SPEC §5). Knows nothing about sessions: `lane` and `unique_key` are
-- opaque strings chosen by whoever enqueues. Timestamps are ms since the epoch.
CREATE TABLE jobs (
    id               INTEGER PRIMARY KEY,
    kind             TEXT    NOT NULL,
    state            TEXT    NOT NULL CHECK (state IN
                       ('available','running','succeeded','retryable','dead','cancelled')),
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
    -- Id of the job_attempts row that currently owns the job; completions are fenced on it.
    lease_token      INTEGER,
    lease_expires_at INTEGER
);
-- Indexes are partial over the states that need them, so a job that finishes leaves them
-- and most state changes touch fewer index pages (measured: each page is a WAL frame).
-- Claiming: available jobs in run_at order. Scheduling: retryable jobs by run_at.
CREATE INDEX jobs_available ON jobs (run_at, id) WHERE state = 'available';
CREATE INDEX jobs_retryable ON jobs (run_at) WHERE state = 'retryable';
-- Lane ordering: "is there an earlier active job in my lane?"
CREATE INDEX jobs_lane_active ON jobs (lane, id) WHERE state IN ('available','running','retryable');
-- Dedup lookups.
CREATE INDEX jobs_unique_key ON jobs (unique_key) WHERE unique_key IS NOT NULL;
-- Admin listing by kind; pruning and dead-job listing by finish time.
CREATE INDEX jobs_kind_id ON jobs (kind, id);
CREATE INDEX jobs_finished ON jobs (state, finished_at) WHERE finished_at IS NOT NULL;

CREATE TABLE job_attempts (
    id          INTEGER PRIMARY KEY,
    job_id      INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    attempt     INTEGER NOT NULL,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    outcome     TEXT CHECK (outcome IN ('succeeded','failed','timed_out','lost')),
    error       TEXT
);
CREATE INDEX job_attempts_job ON job_attempts (job_id, id);

-- Small key/value facts about the queue (e.g. the health check's write probe).
CREATE TABLE queue_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
