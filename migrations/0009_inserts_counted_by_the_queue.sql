-- A job's insert is counted by the queue's own code (`queue::counts`) instead of by a trigger
-- per row, like the claim and the success in migration 0008: the trigger cost a lone enqueue
-- ~5,000 instructions, ~4 % (valgrind). `store::enqueue` and its inline path are the only
-- statements that insert jobs. Updates and deletes are still counted by the triggers of 0005
-- and 0008.
DROP TRIGGER jobs_counted_insert;
