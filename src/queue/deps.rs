//! Dependencies between jobs: the SQL behind "a job may start only after the jobs it depends
//! on succeeded" (docs/state_machine.md, "Dependencies").
//!
//! A job names its dependencies at enqueue (ids, or unique keys resolved to the latest job
//! holding them); they are rows of `job_deps`. The rules, all applied by the writer in the
//! transaction of the state change that triggers them:
//! - **Claim**: a candidate whose dependencies all succeeded is claimable; one with a
//!   dependency dead, cancelled or held is moved to `held` (it must not run on partial input,
//!   and `held` blocks no lane); one whose dependency is still waiting or running stays where it
//!   is (only possible across lanes: a dependency always precedes its dependent).
//! - **Success** of a job releases its held dependents (→ available; the claim re-checks the
//!   others). Success with a *changed* output also re-opens dependents that already succeeded
//!   on the old one (→ available), so they run again on the new input.
//! - **Cancel** of a job cancels its waiting dependents, transitively: they could never run.
//! - **Prune** of a dead or cancelled job cancels its waiting dependents the same way.
//!
//! Why lazily at claim and not eagerly when a dependency dies: the claim already looks at
//! every lane head, the check is one index seek, and no failure path (timeout, rescue, crash)
//! needs its own cascade.

use rusqlite::{Connection, params};

use super::job::{JobId, JobState};
use crate::clock::Millis;

/// Resolves a new job's dependencies: its explicit ids and the latest job of each key, sorted
/// and without repeats.
pub fn resolve(conn: &Connection, ids: &[JobId], keys: &[String]) -> rusqlite::Result<Vec<JobId>> {
    let mut deps = ids.to_vec();
    let mut latest = conn.prepare_cached("SELECT MAX(id) FROM jobs WHERE unique_key = ?1")?;
    for key in keys {
        if let Some(id) = latest.query_row([key], |r| r.get::<_, Option<JobId>>(0))? {
            deps.push(id);
        }
    }
    deps.sort_unstable();
    deps.dedup();
    Ok(deps)
}

/// Records that `job` depends on each of `deps`.
pub fn insert(conn: &Connection, job: JobId, deps: &[JobId]) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached("INSERT OR IGNORE INTO job_deps (job_id, dep_id) VALUES (?1, ?2)")?;
    for dep in deps {
        stmt.execute(params![job, dep])?;
    }
    Ok(())
}

/// The dependencies of `job`, in id order.
pub fn of(conn: &Connection, job: JobId) -> rusqlite::Result<Vec<JobId>> {
    conn.prepare_cached("SELECT dep_id FROM job_deps WHERE job_id = ?1 ORDER BY dep_id")?
        .query_map([job], |r| r.get(0))?
        .collect()
}

/// Whether an existing job depends on every one of `deps` (so a new job with these
/// dependencies may be deduplicated onto it).
pub fn covers(conn: &Connection, job: JobId, deps: &[JobId]) -> rusqlite::Result<bool> {
    if deps.is_empty() {
        return Ok(true);
    }
    let mut has = conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM job_deps WHERE job_id = ?1 AND dep_id = ?2)")?;
    for dep in deps {
        if !has.query_row(params![job, dep], |r| r.get::<_, bool>(0))? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Where a job stands with respect to its dependencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// Every dependency succeeded (or it has none).
    Ready,
    /// A dependency is still waiting or running: not yet.
    Waiting,
    /// A dependency is dead, cancelled or held: the job must be held.
    Blocked,
}

pub fn readiness(conn: &Connection, job: JobId) -> rusqlite::Result<Readiness> {
    let mut stmt = conn.prepare_cached(
        "SELECT j.state FROM job_deps d JOIN jobs j ON j.id = d.dep_id \
         WHERE d.job_id = ?1 AND j.state != 'succeeded'",
    )?;
    let mut readiness = Readiness::Ready;
    for state in stmt.query_map([job], |r| r.get::<_, JobState>(0))? {
        if state?.is_active() {
            readiness = Readiness::Waiting;
        } else {
            return Ok(Readiness::Blocked);
        }
    }
    Ok(readiness)
}

/// The dependencies of `job` that have not succeeded (what a held job waits on).
pub fn unmet(conn: &Connection, job: JobId) -> rusqlite::Result<Vec<JobId>> {
    conn.prepare_cached(
        "SELECT d.dep_id FROM job_deps d JOIN jobs j ON j.id = d.dep_id \
         WHERE d.job_id = ?1 AND j.state != 'succeeded' ORDER BY d.dep_id",
    )?
    .query_map([job], |r| r.get(0))?
    .collect()
}

/// Whether any job depends on `job`.
pub fn has_dependents(conn: &Connection, job: JobId) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM job_deps WHERE dep_id = ?1)")?.query_row([job], |r| r.get(0))
}

/// available → held, waiting on its dependencies (`gate` None) or on a paused gate.
pub fn hold(conn: &Connection, job: JobId, gate: Option<&str>) -> rusqlite::Result<bool> {
    let changed = conn
        .prepare_cached("UPDATE jobs SET state = 'held', gate = ?2 WHERE id = ?1 AND state = 'available'")?
        .execute(params![job, gate])?;
    Ok(changed == 1)
}

/// After `job` succeeded: its dependents held on dependencies become available (the claim
/// holds again any whose other dependencies still cannot succeed). Returns how many.
pub fn release_dependents(conn: &Connection, job: JobId, now: Millis) -> rusqlite::Result<usize> {
    conn.prepare_cached(
        "UPDATE jobs SET state = 'available', run_at = ?2 \
         WHERE state = 'held' AND gate IS NULL AND id IN (SELECT job_id FROM job_deps WHERE dep_id = ?1)",
    )?
    .execute(params![job, now])
}

/// After `job` succeeded with a changed output: dependents that had already succeeded run
/// again, like a replay (attempts reset, history kept). Returns how many.
pub fn reopen_dependents(conn: &Connection, job: JobId, now: Millis) -> rusqlite::Result<usize> {
    conn.prepare_cached(
        "UPDATE jobs SET state = 'available', attempt = 0, run_at = ?2, finished_at = NULL \
         WHERE state = 'succeeded' AND id IN (SELECT job_id FROM job_deps WHERE dep_id = ?1)",
    )?
    .execute(params![job, now])
}

/// Cancels every waiting (available, retryable or held) job that depends on `job`, directly
/// or through others. Returns their ids.
pub fn cancel_dependents(conn: &Connection, job: JobId, why: &str, now: Millis) -> rusqlite::Result<Vec<JobId>> {
    let ids: Vec<JobId> = conn
        .prepare_cached(
            "WITH RECURSIVE dependents(id) AS ( \
               SELECT job_id FROM job_deps WHERE dep_id = ?1 \
               UNION SELECT d.job_id FROM job_deps d JOIN dependents ON d.dep_id = dependents.id) \
             SELECT j.id FROM jobs j JOIN dependents USING (id) \
             WHERE j.state IN ('available','retryable','held') ORDER BY j.id",
        )?
        .query_map([job], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut cancel = conn.prepare_cached(
        "UPDATE jobs SET state = 'cancelled', finished_at = ?2, gate = NULL, last_error = ?3 WHERE id = ?1",
    )?;
    let error = format!("cancelled: it depends on job {job}, which {why}");
    for id in &ids {
        cancel.execute(params![id, now, error])?;
    }
    Ok(ids)
}
