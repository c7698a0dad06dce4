-- Captures let go after a window (issue 43 §2, `crate::retention`): when the retention pass
-- last pruned a session's raw captures. A session pruned and then resumed (new events move
-- `updated_at` past this) is pruned again once its window has passed anew.
ALTER TABLE sessions ADD COLUMN captures_pruned_at INTEGER;
-- The pass looks for analysed sessions whose last activity is older than the window and that
-- were not pruned since: a range of this index, not a scan of every session.
CREATE INDEX sessions_updated ON sessions (updated_at) WHERE state = 'analyzed' OR state = 'synced';
