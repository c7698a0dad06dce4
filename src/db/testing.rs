//! Fixtures for the unit tests of every layer above `db`: a fresh, migrated database in its
//! own temporary directory, and the one session and concept most tests hang questions on.
//! Test builds only.

use rusqlite::Connection;

/// Session `s` (project `p`) and its concept `c` (`C`, category `x`, mid), created at 1.
pub const SESSION_AND_CONCEPT: &str =
    "INSERT INTO sessions (id, project, started_at, updated_at) VALUES ('s', 'p', 1, 1);
     INSERT INTO concepts (id, session_id, name, normalized_name, category, difficulty, source_file, snippet,
       why_it_matters, confidence, created_at, updated_at)
       VALUES ('c', 's', 'C', 'c', 'x', 'mid', 'a.ts', 'x', 'y', 0.9, 1, 1);";

/// A migrated database at `t.db` in a new temporary directory (kept alive by the `TempDir`).
pub fn fresh() -> (tempfile::TempDir, Connection) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let conn = super::open_and_migrate(&dir.path().join("t.db"), super::Synchronous::Normal).expect("a fresh database");
    (dir, conn)
}

/// [`fresh`] with `sql` run on it (the fixture rows of a test).
pub fn with(sql: &str) -> (tempfile::TempDir, Connection) {
    let (dir, conn) = fresh();
    conn.execute_batch(sql).expect("the fixture rows");
    (dir, conn)
}
