-- Failed tool calls and edit fragments (issue "First contact").
--
-- `outcome` / `error`: Claude Code reports a tool call that failed (a failing build, a test run,
-- an Edit that did not apply) as PostToolUseFailure, Cursor as postToolUseFailure or a shell
-- command's non-zero exit. It is stored as an observation of the call with outcome 'failed'
-- and the error text (privacy-stripped, cut to 10 KiB like every capture): the analysis can
-- ground a concept in an error the developer met.
--
-- `fragment`: an edit whose whole file could be neither read on this machine nor rebuilt from
-- the session's last captured version of the file; `content` then holds only the edit's new
-- text, and the analysis must not take it for the file.
ALTER TABLE observations ADD COLUMN outcome TEXT NOT NULL DEFAULT 'succeeded'
    CHECK (outcome IN ('succeeded', 'failed'));
ALTER TABLE observations ADD COLUMN error TEXT;
ALTER TABLE observations ADD COLUMN fragment INTEGER NOT NULL DEFAULT 0;
