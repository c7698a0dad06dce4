-- The sessions of a project directory found through an index of their cwd (issue 43 §1): the
-- statusline, SessionStart and `vl gaps` scope their reads to the project the agent runs in, and
-- the test of each session's cwd (`learning::in_project_dir!`) was a scan of every session
-- (1.7 M instructions of the statusline's 12 M at 1,000 sessions). It is now two ranges of the
-- cwd, which an index of the same collation serves: BINARY where paths keep their case
-- (Linux), NOCASE where the file systems ignore it (macOS, Windows). Each OS reads one of the
-- two; the other costs an entry a session, written once when the session starts.
CREATE INDEX sessions_by_cwd ON sessions (cwd);
CREATE INDEX sessions_by_cwd_nocase ON sessions (cwd COLLATE NOCASE);
