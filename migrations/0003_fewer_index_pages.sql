-- Every index is one more page per commit under load (each page is a WAL frame). A session's
-- observations are found through UNIQUE (session_id, event_key) just as well; the few hundred
-- rows of one session are sorted by id when read.
DROP INDEX IF EXISTS observations_session;
