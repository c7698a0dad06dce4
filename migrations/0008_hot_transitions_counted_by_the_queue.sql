-- The two transitions every job makes, available → running (a claim) and running → succeeded
-- (a success), are counted by the queue's own code (`queue::counts`), once per claim batch and
-- per success, instead of by a trigger per row: firing the trigger on them cost no-op jobs
-- ~23 % of their CPU (measured: 20,000 jobs took 1.00 s of CPU with it, 0.78 s with no
-- counting at all). Every other change is still counted by the triggers of migration 0005,
-- and claim and success are the only statements that make these two transitions.
DROP TRIGGER jobs_counted_state;

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
        WHERE NEW.finished_at IS NOT NULL AND NEW.state IN ('succeeded','dead','cancelled')
        ON CONFLICT (minute, state) DO UPDATE SET n = n + 1;
END;
