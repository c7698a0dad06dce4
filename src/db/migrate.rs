//! Schema migrations: an ordered, append-only list of SQL files embedded in the binary,
//! applied in one exclusive transaction and tracked in `PRAGMA user_version`.
//!
//! Compatibility: a database whose `user_version` is higher than the number of migrations
//! this binary knows was written by a newer VibeLearn; it is refused rather than guessed at.

use rusqlite::{Connection, OptionalExtension};

use super::DbError;

/// `(version, name, sql)`; version N is the N-th entry. Never edit or reorder a shipped entry.
pub const MIGRATIONS: &[(u32, &str, &str)] = &[
    (1, "0001_queue", include_str!("../../migrations/0001_queue.sql")),
    (2, "0002_vibelearn", include_str!("../../migrations/0002_vibelearn.sql")),
    (3, "0003_fewer_index_pages", include_str!("../../migrations/0003_fewer_index_pages.sql")),
    (4, "0004_job_dependencies", include_str!("../../migrations/0004_job_dependencies.sql")),
    (5, "0005_job_counts", include_str!("../../migrations/0005_job_counts.sql")),
    (6, "0006_failed_calls_and_fragments", include_str!("../../migrations/0006_failed_calls_and_fragments.sql")),
    (7, "0007_question_grounding", include_str!("../../migrations/0007_question_grounding.sql")),
    (
        8,
        "0008_hot_transitions_counted_by_the_queue",
        include_str!("../../migrations/0008_hot_transitions_counted_by_the_queue.sql"),
    ),
    (9, "0009_inserts_counted_by_the_queue", include_str!("../../migrations/0009_inserts_counted_by_the_queue.sql")),
    (10, "0010_conditions_without_in_lists", include_str!("../../migrations/0010_conditions_without_in_lists.sql")),
    (11, "0011_lane_running", include_str!("../../migrations/0011_lane_running.sql")),
    (12, "0012_llm_usage", include_str!("../../migrations/0012_llm_usage.sql")),
    (13, "0013_finishes_follow_replays", include_str!("../../migrations/0013_finishes_follow_replays.sql")),
    (14, "0014_fsrs_review_log", include_str!("../../migrations/0014_fsrs_review_log.sql")),
    (15, "0015_scheduler_fit_attempts", include_str!("../../migrations/0015_scheduler_fit_attempts.sql")),
    (16, "0016_review_log_new_cards", include_str!("../../migrations/0016_review_log_new_cards.sql")),
    (17, "0017_attempts_by_question", include_str!("../../migrations/0017_attempts_by_question.sql")),
    (18, "0018_reads_follow_what_is_due", include_str!("../../migrations/0018_reads_follow_what_is_due.sql")),
    (19, "0019_capture_retention", include_str!("../../migrations/0019_capture_retention.sql")),
    (20, "0020_concept_standings", include_str!("../../migrations/0020_concept_standings.sql")),
    (21, "0021_sessions_by_cwd", include_str!("../../migrations/0021_sessions_by_cwd.sql")),
];

/// A migration whose work SQL cannot do, run right after that migration's SQL in the same
/// transaction; named rather than numbered, so a renumbering keeps it attached.
type RustStep = fn(&Connection) -> rusqlite::Result<usize>;

/// `(migration name, step)`.
const RUST_STEPS: &[(&str, RustStep)] = &[("0014_fsrs_review_log", super::fsrs_migration::replay_history)];

/// The schema version this binary writes.
pub fn latest_version() -> u32 {
    MIGRATIONS.len() as u32
}

/// Brings the schema up to date. Returns how many migrations were applied.
///
/// Foreign keys are off while migrations run, because rebuilding a table (SQLite's only way to
/// change a CHECK constraint) drops the old one, and with foreign keys on that DROP deletes
/// the rows referencing it by cascade. `PRAGMA foreign_key_check` must find nothing before the
/// commit; the pragma is back on afterwards, whatever happened (the caller's checks expect it).
pub fn migrate(conn: &mut Connection) -> Result<usize, DbError> {
    conn.pragma_update(None, "foreign_keys", false)?;
    let applied = migrate_with_foreign_keys_off(conn);
    conn.pragma_update(None, "foreign_keys", true)?;
    applied
}

fn migrate_with_foreign_keys_off(conn: &mut Connection) -> Result<usize, DbError> {
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
        for (_, step) in RUST_STEPS.iter().filter(|(step_name, _)| step_name == name) {
            step(&tx).map_err(|source| DbError::Migration { name, source })?;
        }
        tx.pragma_update(None, "user_version", version)?;
        applied += 1;
    }
    if applied > 0 {
        let dangling: Option<String> = tx.query_row("PRAGMA foreign_key_check", [], |row| row.get(0)).optional()?;
        if let Some(table) = dangling {
            return Err(DbError::DanglingReference { table });
        }
    }
    tx.commit()?;
    Ok(applied)
}
