-- The new cards introduced since the learner's day began (issue 34): the new-card cap counts
-- them on every `vl quiz`, and since due counts are what the quiz asks, on every `vl status`,
-- statusline refresh and SessionStart message too. Without an index that count read the whole
-- review log (every answer ever given: 40 000 rows cost the statusline ~3 ms, docs/PERFORMANCE.md);
-- this partial one holds one row per card introduced.
CREATE INDEX review_log_new_cards ON review_log (created_at) WHERE state_before = 'new';
