//! The counters behind `GET /api/jobs/stats` (`job_counts`, `job_finishes`) for the changes
//! every job makes: it is inserted (available, or succeeded when it ran inline), claimed
//! (available → running) and succeeds (running → succeeded). Triggers (0005, narrowed by 0008
//! and 0009, last created by 0010) count every other change row by row; these are counted
//! here, in the same transaction, because a trigger firing on them cost no-op jobs ~23 % of
//! their CPU and a lone enqueue ~4 % of its instructions. Claims and a batch of outcomes are
//! counted once per kind.
//!
//! The triggers leave exactly these changes out, so every statement that makes one of them
//! must be counted here: [`store::enqueue`](super::store::enqueue) counts its insert,
//! [`store::claim_gated`](super::store::claim_gated) its claims,
//! [`store::complete_success`](super::store::complete_success) its success, and the runner
//! tallies the successes of [`store::record_success`](super::store::record_success)
//! ([`SuccessTally`]).

use rusqlite::{Connection, ToSql, params};

use super::job::JobState;
use crate::clock::Millis;

/// The bucket of `job_finishes`: a minute of `finished_at`.
pub const MINUTE_MS: Millis = 60_000;

/// A job of `kind` inserted available.
pub fn inserted(conn: &Connection, kind: &str) -> rusqlite::Result<()> {
    add(conn, kind, JobState::Available, 1)
}

/// A job of `kind` inserted succeeded at `finished_at` (it ran inline), and a finish in its
/// minute.
pub fn inserted_succeeded(conn: &Connection, kind: &str, finished_at: Millis) -> rusqlite::Result<()> {
    add(conn, kind, JobState::Succeeded, 1)?;
    finished(conn, JobState::Succeeded, 1, finished_at)
}

/// `n` jobs of `kind` claimed: available → running.
pub fn claimed(conn: &Connection, kind: &str, n: i64) -> rusqlite::Result<()> {
    moved(conn, kind, JobState::Available, JobState::Running, n)
}

/// `n` jobs of `kind` succeeded at `finished_at`: running → succeeded, and as many more
/// finishes in its minute.
pub fn succeeded(conn: &Connection, kind: &str, n: i64, finished_at: Millis) -> rusqlite::Result<()> {
    moved(conn, kind, JobState::Running, JobState::Succeeded, n)?;
    finished(conn, JobState::Succeeded, n, finished_at)
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

/// Debug builds: where `job_counts` and the jobs themselves disagree, per (kind, state), as
/// jobs counted minus jobs there (zeros left out). The writer compares it before and after
/// every request that wrote something ([`super::writer`]): a request that changes it made a
/// move neither a trigger nor this module counted. A drift that was already there (a table
/// changed by hand) is not the request's doing and is tolerated. A full count of `jobs`,
/// hence debug builds only.
#[cfg(debug_assertions)]
pub(crate) fn drift(conn: &Connection) -> rusqlite::Result<std::collections::BTreeMap<(String, String), i64>> {
    let mut drift = std::collections::BTreeMap::new();
    let mut counted = conn.prepare_cached("SELECT kind, state, n FROM job_counts")?;
    for row in counted.query_map([], |r| Ok(((r.get(0)?, r.get(1)?), r.get::<_, i64>(2)?)))? {
        let (key, n) = row?;
        *drift.entry(key).or_default() += n;
    }
    let mut there = conn.prepare_cached("SELECT kind, state, COUNT(*) FROM jobs GROUP BY kind, state")?;
    for row in there.query_map([], |r| Ok(((r.get(0)?, r.get(1)?), r.get::<_, i64>(2)?)))? {
        let (key, n) = row?;
        *drift.entry(key).or_default() -= n;
    }
    drift.retain(|_, n| *n != 0);
    Ok(drift)
}

/// `from` loses `n`, `to` gains `n`.
fn moved(conn: &Connection, kind: &str, from: JobState, to: JobState, n: i64) -> rusqlite::Result<()> {
    add(conn, kind, from, -n)?;
    add(conn, kind, to, n)
}

/// `n` more jobs of `kind` in `state`.
fn add(conn: &Connection, kind: &str, state: JobState, n: i64) -> rusqlite::Result<()> {
    bump(
        conn,
        "UPDATE job_counts SET n = n + ?3 WHERE kind = ?1 AND state = ?2",
        "INSERT INTO job_counts (kind, state, n) VALUES (?1, ?2, ?3)",
        params![kind, state, n],
    )
}

/// `n` more jobs reached final `state` in the minute of `at`.
fn finished(conn: &Connection, state: JobState, n: i64, at: Millis) -> rusqlite::Result<()> {
    bump(
        conn,
        "UPDATE job_finishes SET n = n + ?3 WHERE minute = ?1 AND state = ?2",
        "INSERT INTO job_finishes (minute, state, n) VALUES (?1, ?2, ?3)",
        params![at / MINUTE_MS, state, n],
    )
}

/// Adds to a counter row by `update` (a plain one-row UPDATE by primary key), or creates it by
/// `insert` the first time: an upsert (`ON CONFLICT`) may abort, so SQLite opens a statement
/// journal for each one, and that journal was most of what counting cost.
fn bump(conn: &Connection, update: &str, insert: &str, args: &[&dyn ToSql]) -> rusqlite::Result<()> {
    if conn.prepare_cached(update)?.execute(args)? == 0 {
        conn.prepare_cached(insert)?.execute(args)?;
    }
    Ok(())
}
