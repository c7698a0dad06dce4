-- `vl jobs stats`' "last hour: … dead" counted a dead job still after its replay succeeded:
-- job_finishes kept the finish of a state the job had left. A job that leaves a final state
-- (replay, re-open) now takes its finish back out of the minute it was counted in, so the
-- figures are the jobs that finished in the window and are still in that state. The rest of
-- the trigger is 0010's.
DROP TRIGGER jobs_counted_state;

CREATE TRIGGER jobs_counted_state AFTER UPDATE OF state ON jobs
    WHEN OLD.state IS NOT NEW.state
     AND NOT (OLD.state = 'available' AND NEW.state = 'running')
     AND NOT (OLD.state = 'running' AND NEW.state = 'succeeded')
BEGIN
    UPDATE job_counts SET n = n - 1 WHERE kind = OLD.kind AND state = OLD.state;
    INSERT INTO job_counts (kind, state, n) VALUES (NEW.kind, NEW.state, 1)
        ON CONFLICT (kind, state) DO UPDATE SET n = n + 1;
    UPDATE job_finishes SET n = n - 1
        WHERE OLD.finished_at IS NOT NULL
          AND (OLD.state = 'succeeded' OR OLD.state = 'dead' OR OLD.state = 'cancelled')
          AND minute = OLD.finished_at / 60000 AND state = OLD.state AND n > 0;
    INSERT INTO job_finishes (minute, state, n)
        SELECT NEW.finished_at / 60000, NEW.state, 1
        WHERE NEW.finished_at IS NOT NULL
          AND (NEW.state = 'succeeded' OR NEW.state = 'dead' OR NEW.state = 'cancelled')
        ON CONFLICT (minute, state) DO UPDATE SET n = n + 1;
END;
