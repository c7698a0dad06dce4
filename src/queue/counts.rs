//! The counters behind `GET /api/jobs/stats` (`job_counts`, `job_finishes`) for the two
//! transitions every job makes: available → running (a claim) and running → succeeded (a
//! success). Triggers (migrations 0005 and 0007) count every other change row by row; these
//! two are counted here, in the same transaction, once per kind per claim batch and per batch
//! of outcomes, because a trigger firing on them cost no-op jobs ~23 % of their CPU.
//!
//! The trigger's `WHEN` clause excludes exactly these two transitions, so every statement that
//! makes one of them must be counted here: [`store::claim_gated`](super::store::claim_gated)
//! counts its claims, [`store::complete_success`](super::store::complete_success) its success,
//! and the runner tallies the successes of [`store::record_success`](super::store::record_success)
//! ([`SuccessTally`]).

use rusqlite::{Connection, params};

use super::job::JobState;
use crate::clock::Millis;

/// The bucket of `job_finishes`: a minute of `finished_at`.
pub const MINUTE_MS: Millis = 60_000;

/// `n` jobs of `kind` claimed: available → running.
pub fn claimed(conn: &Connection, kind: &str, n: i64) -> rusqlite::Result<()> {
    moved(conn, kind, JobState::Available, JobState::Running, n)
}

/// `n` jobs of `kind` succeeded at `finished_at`: running → succeeded, and as many more
/// finishes in its minute.
pub fn succeeded(conn: &Connection, kind: &str, n: i64, finished_at: Millis) -> rusqlite::Result<()> {
    moved(conn, kind, JobState::Running, JobState::Succeeded, n)?;
    let minute = finished_at / MINUTE_MS;
    let updated = conn
        .prepare_cached("UPDATE job_finishes SET n = n + ?2 WHERE minute = ?1 AND state = 'succeeded'")?
        .execute(params![minute, n])?;
    if updated == 0 {
        conn.prepare_cached("INSERT INTO job_finishes (minute, state, n) VALUES (?1, 'succeeded', ?2)")?
            .execute(params![minute, n])?;
    }
    Ok(())
}

/// The successes one writer request records, counted together when it ends ([`flush`]): the
/// runner applies a batch of outcomes per request, and counting them one by one was three
/// statements per job. A success whose effects were rolled back is not added.
///
/// [`flush`]: SuccessTally::flush
#[derive(Debug, Default)]
pub struct SuccessTally {
    by_kind: Vec<(String, i64)>,
}

impl SuccessTally {
    pub fn add(&mut self, kind: &str) {
        match self.by_kind.iter_mut().find(|(k, _)| k == kind) {
            Some((_, n)) => *n += 1,
            None => self.by_kind.push((kind.to_owned(), 1)),
        }
    }

    /// Counts the tallied successes, in the request's transaction.
    pub fn flush(self, conn: &Connection, finished_at: Millis) -> rusqlite::Result<()> {
        for (kind, n) in &self.by_kind {
            succeeded(conn, kind, *n, finished_at)?;
        }
        Ok(())
    }
}

/// `from` loses `n`, `to` gains `n`. Plain one-row UPDATEs by primary key, with an INSERT only
/// the first time a kind reaches a state: an upsert (`ON CONFLICT`) may abort, so SQLite opens
/// a statement journal for each one, and that journal was most of what counting cost.
fn moved(conn: &Connection, kind: &str, from: JobState, to: JobState, n: i64) -> rusqlite::Result<()> {
    let mut add = conn.prepare_cached("UPDATE job_counts SET n = n + ?3 WHERE kind = ?1 AND state = ?2")?;
    add.execute(params![kind, from, -n])?;
    if add.execute(params![kind, to, n])? == 0 {
        conn.prepare_cached("INSERT INTO job_counts (kind, state, n) VALUES (?1, ?2, ?3)")?
            .execute(params![kind, to, n])?;
    }
    Ok(())
}
