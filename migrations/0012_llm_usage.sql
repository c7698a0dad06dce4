-- What the LLM provider was asked today, for `vl status` and the daily token budget
-- (VIBELEARN_LLM_DAILY_TOKENS, SPEC §6.5): one row per UTC day and provider, counting every
-- answered call of the worker's jobs, whether or not the job then succeeded.
CREATE TABLE llm_usage (
    day INTEGER NOT NULL,          -- days since the epoch, UTC (as daily_streaks)
    provider TEXT NOT NULL,
    calls INTEGER NOT NULL DEFAULT 0,
    tokens INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, provider)
) WITHOUT ROWID;

-- `vl jobs resume` on a day whose budget was spent grants another budget's worth: the tokens
-- counted when the admin resumed, which today's budget is measured from.
CREATE TABLE llm_budget_resets (
    day INTEGER PRIMARY KEY,
    tokens INTEGER NOT NULL
);
