-- The last attempt of `optimize_scheduler` (issue 34): when it ran, on how many reviews, and
-- what came of it ('fitted', or why not). The weekly re-fit is asked for only a week after
-- the last attempt, fitted or not, so a log too small to fit is not re-queued after every
-- quiz job, and a fit error is recorded instead of re-created as a dead job.
CREATE TABLE scheduler_fit_attempts (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    attempted_at  INTEGER NOT NULL,
    reviews       INTEGER NOT NULL,
    outcome       TEXT NOT NULL
);
