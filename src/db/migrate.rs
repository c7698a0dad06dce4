//! Schema migrations: an ordered, append-only list of SQL files embedded in the binary,
//! applied in one exclusive transaction and tracked in `PRAGMA user_version`.
//!
//! Compatibility: a database whose `user_version` is higher than the number of migrations
//! this binary knows was written by a newer VibeLearn; it is refused rather than guessed at.

use rusqlite::Connection;

use super::DbError;

/// `(version, name, sql)`; version N is the N-th entry. Never edit or reorder a shipped entry.
pub const MIGRATIONS: &[(u32, &str, &str)] = &[
    (1, "0001_queue", include_str!("../../migrations/0001_queue.sql")),
    (2, "0002_vibelearn", include_str!("../../migrations/0002_vibelearn.sql")),
    (3, "0003_fewer_index_pages", include_str!("../../migrations/0003_fewer_index_pages.sql")),
];

/// The schema version this binary writes.
pub fn latest_version() -> u32 {
    MIGRATIONS.len() as u32
}

/// Brings the schema up to date. Returns how many migrations were applied.
pub fn migrate(conn: &mut Connection) -> Result<usize, DbError> {
    // BEGIN EXCLUSIVE: two processes starting at once must not both run migration N.
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Exclusive)?;
    let current: u32 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    let latest = latest_version();
    if current > latest {
        return Err(DbError::TooNew { found: current, supported: latest });
    }
    let mut applied = 0;
    for (version, name, sql) in MIGRATIONS.iter().filter(|(v, _, _)| *v > current) {
        tx.execute_batch(sql).map_err(|source| DbError::Migration { name, source })?;
        tx.pragma_update(None, "user_version", version)?;
        applied += 1;
    }
    tx.commit()?;
    Ok(applied)
}
