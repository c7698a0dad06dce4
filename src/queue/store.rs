//! The queue's SQL: every statement that reads or changes `jobs` and `job_attempts`.
//!
//! Functions take a `&Connection` (inside the writer's transaction for changes, any connection
//! for reads) and `now` as a parameter: SQL never reads its own clock. Each change keeps the
//! edges of docs/state_machine.md; completions are fenced with `WHERE lease_token = ?`.
//!
//! No IN list of three or more constants in a statement a job runs every time: SQLite builds
//! an ephemeral b-tree for one on every run (measured: most of a no-op job's cost before
//! migration 0010). Lanes' active states are written with [`lane_active!`](super::lane_active).

use rusqlite::{Connection, OptionalExtension, Row, params};

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::counts::{self, MINUTE_MS};
use super::deps::{self, Readiness};
use super::gates::{self, GateState, KindGates};
use super::job::{
    Attempt, AttemptOutcome, ClaimedJob, Enqueued, Inline, InlineRun, Job, JobId, JobState, NewJob, PreparedJob,
    UniqueScope, WaitingOn,
};
use super::runner::EffectError;
use super::writer::exec_cached;
use crate::clock::Millis;

const JOB_COLUMNS: &str = "id, kind, state, lane, attempt, max_attempts, created_at, run_at, \
                           finished_at, last_error, result, payload, gate";

/// Inserts a job, or returns the existing one with the same unique key (per its scope). A job
/// with an [`Inline`](super::job::Inline) run that could start at once runs it here and is
/// inserted `succeeded` ([`run_inline`]). Dependencies are resolved here ([`deps::resolve`]).
///
/// A waiting job is returned for a new one with the same key only if it already depends on
/// every dependency of the new one: otherwise the new one's input (a newer prerequisite) would
/// be missed, so a job of its own is inserted after that prerequisite.
pub fn enqueue(conn: &Connection, prepared: PreparedJob, now: Millis) -> rusqlite::Result<Enqueued> {
    let PreparedJob { mut job, payload } = prepared;
    let deps = if job.depends_on.is_empty() && job.after_keys.is_empty() {
        Vec::new()
    } else {
        deps::resolve(conn, &job.depends_on, &job.after_keys)?
    };
    if let Some(key) = &job.unique_key
        && let Some(id) = existing_for(conn, key, &job.kind, job.unique_scope, &deps)?
    {
        return Ok(Enqueued { id, deduplicated: true, ran_inline: false });
    }
    let run_at = job.run_at.unwrap_or(now);
    if let Some(Inline(run)) = job.inline.take()
        && deps.is_empty()
        && run_at <= now
        && !lane_busy(conn, job.lane.as_deref())?
        && let Some(id) = run_inline(conn, &job, &payload, run, now)?
    {
        supersede(conn, id, &job, now)?;
        return Ok(Enqueued { id, deduplicated: false, ran_inline: true });
    }
    conn.prepare_cached(
        "INSERT INTO jobs (kind, state, lane, unique_key, payload, max_attempts, created_at, run_at) \
         VALUES (?1, 'available', ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![job.kind, job.lane, job.unique_key, payload, job.max_attempts, now, run_at])?;
    // Not `RETURNING id`: SQLite collects RETURNING rows in a temporary b-tree it opens and
    // closes per statement (measured: a visible share of the writer's allocations).
    let id = JobId(conn.last_insert_rowid());
    counts::inserted(conn, &job.kind)?;
    deps::insert(conn, id, &deps)?;
    supersede(conn, id, &job, now)?;
    Ok(Enqueued { id, deduplicated: false, ran_inline: false })
}

/// A job just inserted under a unique key (scope [`UniqueScope::Waiting`]) supersedes the
/// older jobs of its kind and key still waiting (available, retryable or held): it was not
/// deduplicated onto them, so none of them depends on its newer prerequisites, and each would
/// only do the same work again on older input. They are cancelled, saying by which job, and
/// so are the jobs waiting on them ([`deps::cancel_dependents`]): otherwise a chain held
/// behind a dead step stays held for the dead-job retention, and a bulk replay runs it beside
/// the newer one, paying for every call twice. Returns the ids cancelled.
fn supersede(conn: &Connection, id: JobId, job: &NewJob, now: Millis) -> rusqlite::Result<Vec<JobId>> {
    let Some(key) = job.unique_key.as_deref().filter(|_| job.unique_scope == UniqueScope::Waiting) else {
        return Ok(Vec::new());
    };
    let older: Vec<JobId> = conn
        .prepare_cached(
            "SELECT id FROM jobs WHERE unique_key = ?1 AND kind = ?2 AND id < ?3 \
             AND (state = 'available' OR state = 'retryable' OR state = 'held') ORDER BY id",
        )?
        .query_map(params![key, job.kind, id], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut cancelled = Vec::new();
    for old in older {
        conn.prepare_cached(
            "UPDATE jobs SET state = 'cancelled', finished_at = ?2, gate = NULL, last_error = ?3 WHERE id = ?1",
        )?
        .execute(params![
            old,
            now,
            format!("cancelled: superseded by job {id}, a newer job with the same key")
        ])?;
        cancelled.push(old);
        cancelled.extend(deps::cancel_dependents(conn, old, &format!("was superseded by job {id}"), now)?);
    }
    Ok(cancelled)
}

/// The job a new one with this unique key is deduplicated onto, if any (see [`enqueue`]).
fn existing_for(
    conn: &Connection,
    key: &str,
    kind: &str,
    scope: UniqueScope,
    deps: &[JobId],
) -> rusqlite::Result<Option<JobId>> {
    match scope {
        UniqueScope::Waiting => {
            let waiting: Vec<JobId> = conn
                .prepare_cached(
                    "SELECT id FROM jobs WHERE unique_key = ?1 AND kind = ?2 \
                     AND (state = 'available' OR state = 'retryable' OR state = 'held') ORDER BY id",
                )?
                .query_map(params![key, kind], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            for id in waiting {
                if deps::covers(conn, id, deps)? {
                    return Ok(Some(id));
                }
            }
            Ok(None)
        }
        UniqueScope::Ever => conn
            .prepare_cached("SELECT id FROM jobs WHERE unique_key = ?1 AND kind = ?2 ORDER BY id LIMIT 1")?
            .query_row(params![key, kind], |r| r.get(0))
            .optional(),
    }
}

/// Whether a job of `lane` is still waiting or running (a new job of the lane must wait).
fn lane_busy(conn: &Connection, lane: Option<&str>) -> rusqlite::Result<bool> {
    let Some(lane) = lane else { return Ok(false) };
    conn.prepare_cached(concat!("SELECT EXISTS (SELECT 1 FROM jobs WHERE lane = ?1 AND ", lane_active!("state"), ")"))?
        .query_row([lane], |r| r.get(0))
}

/// The inline fast path: inserts the job `succeeded` with one succeeded attempt and runs its
/// work, all in one savepoint. Returns `None` — having changed nothing — when the work or any
/// statement failed; the caller then enqueues the job as usual. An error when the failure
/// took the whole transaction with it (SQLITE_FULL, IOERR, NOMEM): enqueuing on regardless
/// would commit the job alone, in autocommit mode, outside the writer's batch.
fn run_inline(
    conn: &Connection,
    job: &NewJob,
    payload: &str,
    run: InlineRun,
    now: Millis,
) -> rusqlite::Result<Option<JobId>> {
    let attempt = || -> Result<JobId, EffectError> {
        conn.prepare_cached(
            "INSERT INTO jobs (kind, state, lane, unique_key, payload, attempt, max_attempts, created_at, run_at, finished_at) \
             VALUES (?1, 'succeeded', ?2, ?3, ?4, 1, ?5, ?6, ?6, ?6)",
        )?
        .execute(params![job.kind, job.lane, job.unique_key, payload, job.max_attempts, now])?;
        let id = JobId(conn.last_insert_rowid());
        counts::inserted_succeeded(conn, &job.kind, now)?;
        let result = catch_unwind(AssertUnwindSafe(|| run(conn, id, now))).map_err(|_| "the inline run panicked")??;
        if let Some(result) = result {
            conn.prepare_cached("UPDATE jobs SET result = ?2 WHERE id = ?1")?
                .execute(params![id, result.to_string()])?;
        }
        conn.prepare_cached(
            "INSERT INTO job_attempts (job_id, attempt, started_at, finished_at, outcome) VALUES (?1, 1, ?2, ?2, 'succeeded')",
        )?
        .execute(params![id, now])?;
        Ok(id)
    };
    if exec_cached(conn, "SAVEPOINT inline").is_err() {
        return Ok(None);
    }
    match attempt() {
        Ok(id) if exec_cached(conn, "RELEASE inline").is_ok() => Ok(Some(id)),
        outcome => {
            let error = outcome.err().map(|e| e.to_string()).unwrap_or_else(|| "its savepoint could not end".into());
            let _ = conn.execute_batch("ROLLBACK TO inline; RELEASE inline");
            if conn.is_autocommit() {
                return Err(rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ABORT),
                    Some(format!("the database rolled back the write while a {} job ran inline: {error}", job.kind)),
                ));
            }
            log::info!(target: "queue", "a {} job could not run inline ({error}); it waits for the runner", job.kind);
            Ok(None)
        }
    }
}

/// No retry is ever scheduled further ahead than this (the backoff cap; Retry-After is capped
/// the same). A retryable job's `run_at` beyond `now + MAX_DELAY_MS` therefore means the wall
/// clock went back, and the job is treated as due rather than left waiting for the clock.
pub const MAX_DELAY_MS: Millis = 600_000;

/// The scheduler's step: retryable jobs whose `run_at` has come become available.
pub fn promote_due_retryable(conn: &Connection, now: Millis) -> rusqlite::Result<usize> {
    conn.prepare_cached(
        "UPDATE jobs SET state = 'available', run_at = MIN(run_at, ?1) \
         WHERE state = 'retryable' AND (run_at <= ?1 OR run_at > ?1 + ?2)",
    )?
    .execute(params![now, MAX_DELAY_MS])
}

/// Claims up to `max` due jobs, respecting lanes: a job is eligible only when no earlier job
/// of its lane is active and no job of its lane is running. Due means `run_at <= now`, or never delayed (`run_at = created_at`:
/// a backward clock jump must not hold fresh work back). A job scheduled for later on purpose
/// keeps its wall-clock time. Each claim opens an attempt row whose id becomes the lease token.
/// `kind`, when given, restricts the claim to jobs of that kind. Candidates are taken in
/// `(run_at, id)` order. No kind needs a gate here: see [`claim_gated`].
pub fn claim(
    conn: &Connection,
    max: usize,
    now: Millis,
    lease_ms: Millis,
    kind: Option<&str>,
) -> rusqlite::Result<Vec<ClaimedJob>> {
    claim_gated(conn, max, now, lease_ms, kind, &KindGates::new())
}

/// How many times one claim looks again after holding jobs (each hold can make the next job
/// of that lane its head).
const HOLD_ROUNDS: usize = 8;

/// [`claim`], with dependencies and gates: a candidate whose dependencies cannot succeed, or
/// whose kind's gate (per `gates`) is paused, is moved to `held` instead; one whose
/// dependencies are still pending, or whose gate is unproven with a job already running, is
/// left for later (docs/state_machine.md).
pub fn claim_gated(
    conn: &Connection,
    max: usize,
    now: Millis,
    lease_ms: Millis,
    kind: Option<&str>,
    gates: &KindGates,
) -> rusqlite::Result<Vec<ClaimedJob>> {
    if max == 0 {
        return Ok(Vec::new());
    }
    let gate_states = if gates.is_empty() { Default::default() } else { gates::states(conn)? };
    // Unproven gates that already have a job running (or claimed in this call).
    let mut probing: std::collections::HashMap<&str, bool> = std::collections::HashMap::new();
    let mut claimed = Vec::new();
    // Candidates left where they are (dependencies pending, a gate admitting one at a time):
    // the next round looks that much further among jobs without a lane.
    let mut skipped = 0;
    for _ in 0..HOLD_ROUNDS {
        let (mut held_any, skipped_before) = (false, skipped);
        for (id, job_kind) in claim_candidates(conn, max - claimed.len() + skipped, now, kind)? {
            if claimed.len() == max {
                break;
            }
            match deps::readiness(conn, id)? {
                Readiness::Ready => {}
                Readiness::Waiting => {
                    skipped += 1;
                    continue;
                }
                Readiness::Blocked => {
                    held_any |= deps::hold(conn, id, None)?;
                    continue;
                }
            }
            if let Some(gate) = gates.get(&job_kind) {
                match gate_states.get(gate).copied().unwrap_or(GateState::Unproven) {
                    GateState::Open => {}
                    GateState::Paused => {
                        held_any |= deps::hold(conn, id, Some(gate))?;
                        continue;
                    }
                    GateState::Unproven => {
                        let busy = match probing.get(gate.as_str()) {
                            Some(busy) => *busy,
                            None => {
                                let kinds: Vec<&str> =
                                    gates.iter().filter(|(_, g)| *g == gate).map(|(k, _)| k.as_str()).collect();
                                gates::running_any(conn, &kinds)?
                            }
                        };
                        probing.insert(gate.as_str(), true);
                        if busy {
                            skipped += 1;
                            continue;
                        }
                    }
                }
            }
            claimed.push(claim_one(conn, id, now, lease_ms)?);
        }
        if (!held_any && skipped == skipped_before) || claimed.len() == max {
            break;
        }
    }
    count_claims(conn, &claimed)?;
    Ok(claimed)
}

/// Counts a claim's jobs as running, once per kind ([`counts`]).
fn count_claims(conn: &Connection, claimed: &[ClaimedJob]) -> rusqlite::Result<()> {
    let mut kinds: Vec<&str> = claimed.iter().map(|job| job.kind.as_str()).collect();
    kinds.sort_unstable();
    for group in kinds.chunk_by(|a, b| a == b) {
        counts::claimed(conn, group[0], group.len() as i64)?;
    }
    Ok(())
}

/// available → running for one job: a new attempt row, whose id is the lease token.
///
/// The row is read first and written with plain statements: `INSERT … SELECT` made SQLite
/// keep a statement journal (a copy of every page the insert touched) and `RETURNING` a
/// temporary b-tree, per claim (measured with the success's `RETURNING`: 17 % of a no-op
/// job's instructions).
fn claim_one(conn: &Connection, id: JobId, now: Millis, lease_ms: Millis) -> rusqlite::Result<ClaimedJob> {
    let mut job = conn
        .prepare_cached("SELECT kind, lane, payload, attempt, max_attempts, run_at FROM jobs WHERE id = ?1")?
        .query_row([id], |r| {
            Ok(ClaimedJob {
                id,
                kind: r.get(0)?,
                lane: r.get(1)?,
                payload: parse_json_column(r, 2)?,
                attempt: r.get(3)?,
                max_attempts: r.get(4)?,
                lease_token: 0,
                run_at: r.get(5)?,
                claimed_at: now,
            })
        })?;
    job.attempt += 1;
    conn.prepare_cached("INSERT INTO job_attempts (job_id, attempt, started_at) VALUES (?1, ?2, ?3)")?
        .execute(params![id, job.attempt, now])?;
    job.lease_token = conn.last_insert_rowid();
    conn.prepare_cached(
        "UPDATE jobs SET state = 'running', attempt = ?2, lease_token = ?3, lease_expires_at = ?4 WHERE id = ?1",
    )?
    .execute(params![id, job.attempt, job.lease_token, now + lease_ms])?;
    Ok(job)
}

/// A lane head (`?1`) the claim may take: available, due (`?2`), of the kind asked (`?3`),
/// and no job of its lane running. The head is the lane's *oldest* active job, and a replayed,
/// re-opened, resumed or released job is older than the later one that may be running (two
/// jobs of one session must never run at once). The running check is one seek in
/// `jobs_lane_running` (migration 0011), left to the planner rather than `INDEXED BY` so that
/// the statement also runs on a database one migration behind.
const HEAD_IF_ELIGIBLE: &str = "SELECT run_at, kind FROM jobs WHERE id = ?1 AND state = 'available' \
     AND (run_at <= ?2 OR run_at = created_at) AND (?3 IS NULL OR kind = ?3) \
     AND NOT EXISTS (SELECT 1 FROM jobs AS r WHERE r.lane = jobs.lane AND r.state = 'running')";

/// The jobs [`claim`] may take, best first. Only the head of each lane (its oldest job still
/// waiting, running or retryable) can be eligible, so lanes are walked one index seek at a
/// time (`jobs_lane_active`) rather than testing every waiting job against its lane: a lane
/// with a deep backlog behind a running job costs one seek, not one probe per waiting job
/// (measured with 10,000 waiting behind one running and 20 busy lanes: 1.7 ms per claim,
/// all of it in the writer, before; 0.12 ms now). Jobs without a lane come from the NULL end
/// of the same index, in id order.
fn claim_candidates(
    conn: &Connection,
    max: usize,
    now: Millis,
    kind: Option<&str>,
) -> rusqlite::Result<Vec<(JobId, String)>> {
    let heads: Vec<JobId> = conn
        .prepare_cached(concat!(
            "WITH RECURSIVE lanes(lane) AS ( \
               SELECT (SELECT MIN(lane) FROM jobs INDEXED BY jobs_lane_active \
                       WHERE lane IS NOT NULL AND ",
            lane_active!("state"),
            ") \
               UNION ALL \
               SELECT (SELECT MIN(lane) FROM jobs INDEXED BY jobs_lane_active \
                       WHERE lane > lanes.lane AND ",
            lane_active!("state"),
            ") \
               FROM lanes WHERE lanes.lane IS NOT NULL) \
             SELECT (SELECT h.id FROM jobs AS h INDEXED BY jobs_lane_active \
                     WHERE h.lane = lanes.lane AND ",
            lane_active!("h.state"),
            " ORDER BY h.id LIMIT 1) \
             FROM lanes WHERE lanes.lane IS NOT NULL"
        ))?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut eligible: Vec<(Millis, JobId, String)> = Vec::new();
    let mut head_if_eligible = conn.prepare_cached(HEAD_IF_ELIGIBLE)?;
    for id in heads {
        if let Some((run_at, kind)) =
            head_if_eligible.query_row(params![id, now, kind], |r| Ok((r.get(0)?, r.get(1)?))).optional()?
        {
            eligible.push((run_at, id, kind));
        }
    }
    // Every lane head is returned, not only `max`: the caller may skip some (dependencies
    // pending, a gate admitting one job at a time), and those must not hide the rest. Jobs
    // without a lane come `max` at a time (the caller asks again, for more, after skips):
    // reading a fixed slack of extra rows on every claim cost no-op jobs a visible share.
    let mut unlaned = conn.prepare_cached(concat!(
        "SELECT run_at, id, kind FROM jobs INDEXED BY jobs_lane_active \
         WHERE lane IS NULL AND ",
        lane_active!("state"),
        " AND state = 'available' \
         AND (run_at <= ?1 OR run_at = created_at) AND (?3 IS NULL OR kind = ?3) ORDER BY id LIMIT ?2"
    ))?;
    let unlaned_limit = max as i64;
    for row in unlaned.query_map(params![now, unlaned_limit, kind], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))? {
        eligible.push(row?);
    }
    eligible.sort_unstable();
    Ok(eligible.into_iter().map(|(_, id, kind)| (id, kind)).collect())
}

/// Marks an attempt succeeded, releases the job's held dependents and — when
/// `output_changed` — re-opens those that had already succeeded ([`deps`]). Returns false (and
/// changes nothing) when the job no longer belongs to this attempt: it timed out, was
/// cancelled or rescued meanwhile.
pub fn complete_success(
    conn: &Connection,
    id: JobId,
    token: i64,
    result: Option<&serde_json::Value>,
    output_changed: bool,
    now: Millis,
) -> rusqlite::Result<bool> {
    if !record_success(conn, id, token, result, output_changed, now)? {
        return Ok(false);
    }
    let kind: String = conn.prepare_cached("SELECT kind FROM jobs WHERE id = ?1")?.query_row([id], |r| r.get(0))?;
    counts::succeeded(conn, &kind, 1, now)?;
    Ok(true)
}

/// [`complete_success`] without counting the success in the stats, which the caller does
/// (the runner tallies a batch of them, [`counts::SuccessTally`], with the kind its claim
/// read). False, having changed nothing, when the attempt no longer owns the job.
pub(crate) fn record_success(
    conn: &Connection,
    id: JobId,
    token: i64,
    result: Option<&serde_json::Value>,
    output_changed: bool,
    now: Millis,
) -> rusqlite::Result<bool> {
    // No `RETURNING`: a temporary b-tree per statement (see `claim_one`).
    let owned = conn
        .prepare_cached(
            "UPDATE jobs SET state = 'succeeded', finished_at = ?3, result = ?4, last_error = NULL, \
             lease_token = NULL, lease_expires_at = NULL \
             WHERE id = ?1 AND lease_token = ?2 AND state = 'running'",
        )?
        .execute(params![id, token, now, result.map(|r| r.to_string())])?
        == 1;
    if !owned {
        return Ok(false);
    }
    finish_attempt(conn, token, AttemptOutcome::Succeeded, None, now)?;
    // One index seek decides for the common case, a job nothing depends on (measured: the
    // two UPDATEs on every completion cost no-op jobs ~10 % of their throughput).
    if deps::has_dependents(conn, id)? {
        deps::release_dependents(conn, id, now)?;
        if output_changed {
            deps::reopen_dependents(conn, id, now)?;
        }
    }
    Ok(true)
}

/// A dead job that `gate` refused: remembered so that resuming the gate replays it.
pub fn mark_refused(conn: &Connection, id: JobId, gate: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE jobs SET gate = ?2 WHERE id = ?1 AND state = 'dead'")?.execute(params![id, gate])?;
    Ok(())
}

/// What to do with a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureDisposition {
    /// Retry at this time if attempts remain, else dead.
    RetryAt(Millis),
    /// Dead now, whatever the attempt count.
    Dead,
}

/// Records a failed (or timed-out) attempt and moves the job to retryable or dead.
/// Returns the new state, or `None` when the attempt no longer owns the job.
pub fn fail_attempt(
    conn: &Connection,
    id: JobId,
    token: i64,
    outcome: AttemptOutcome,
    error: &str,
    disposition: FailureDisposition,
    now: Millis,
) -> rusqlite::Result<Option<JobState>> {
    let (force_dead, retry_at) = match disposition {
        FailureDisposition::RetryAt(at) => (false, at),
        FailureDisposition::Dead => (true, now),
    };
    let state: Option<JobState> = conn
        .prepare_cached(
            "UPDATE jobs SET \
               state = CASE WHEN ?4 OR attempt >= max_attempts THEN 'dead' ELSE 'retryable' END, \
               run_at = CASE WHEN ?4 OR attempt >= max_attempts THEN run_at ELSE ?5 END, \
               finished_at = CASE WHEN ?4 OR attempt >= max_attempts THEN ?6 ELSE NULL END, \
               last_error = ?3, lease_token = NULL, lease_expires_at = NULL \
             WHERE id = ?1 AND lease_token = ?2 AND state = 'running' RETURNING state",
        )?
        .query_row(params![id, token, error, force_dead, retry_at, now], |r| r.get(0))
        .optional()?;
    if state.is_some() {
        finish_attempt(conn, token, outcome, Some(error), now)?;
    }
    Ok(state)
}

fn finish_attempt(
    conn: &Connection,
    token: i64,
    outcome: AttemptOutcome,
    error: Option<&str>,
    now: Millis,
) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE job_attempts SET finished_at = ?2, outcome = ?3, error = ?4 WHERE id = ?1")?
        .execute(params![token, now, outcome.as_str(), error])?;
    Ok(())
}

/// Pushes the lease expiry of live attempts forward (the watchdog's heartbeat).
pub fn extend_leases(conn: &Connection, tokens: &[(JobId, i64)], expires_at: Millis) -> rusqlite::Result<usize> {
    let mut stmt = conn.prepare_cached(
        "UPDATE jobs SET lease_expires_at = ?3 WHERE id = ?1 AND lease_token = ?2 AND state = 'running'",
    )?;
    let mut extended = 0;
    for (id, token) in tokens {
        extended += stmt.execute(params![id, token, expires_at])?;
    }
    Ok(extended)
}

/// Which running jobs the rescuer takes back.
#[derive(Debug, Clone, Copy)]
pub enum RescueScope {
    /// Every running job: at startup, when the single-instance lock proves that whoever ran
    /// them is gone.
    AllRunning,
    /// Running jobs whose lease expired before `now`.
    ExpiredLeases,
}

/// Ends abandoned attempts as `lost` and makes their jobs available again (or dead when out
/// of attempts). Returns the ids rescued.
pub fn rescue(conn: &Connection, scope: RescueScope, now: Millis) -> rusqlite::Result<Vec<JobId>> {
    let sql = match scope {
        RescueScope::AllRunning => {
            concat!("SELECT id, lease_token FROM jobs WHERE ", lane_active!("state"), " AND state = 'running'")
        }
        RescueScope::ExpiredLeases => {
            concat!(
                "SELECT id, lease_token FROM jobs WHERE ",
                lane_active!("state"),
                " AND state = 'running' AND lease_expires_at < ?1"
            )
        }
    };
    let mut stmt = conn.prepare_cached(sql)?;
    let rows: Vec<(JobId, Option<i64>)> = match scope {
        RescueScope::AllRunning => stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?,
        RescueScope::ExpiredLeases => {
            stmt.query_map([now], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?
        }
    };
    let error = match scope {
        RescueScope::AllRunning => "the process running this attempt stopped before it finished",
        RescueScope::ExpiredLeases => "the attempt's lease expired without a heartbeat",
    };
    rescue_rows(conn, rows, error, now)
}

/// Rescues attempts whose outcome could not be written (the database refused the write), at
/// once rather than a lease later. Fenced like a completion: a job that moved on meanwhile is
/// left alone. Returns the ids rescued.
pub fn rescue_orphans(conn: &Connection, attempts: &[(JobId, i64)], now: Millis) -> rusqlite::Result<Vec<JobId>> {
    let mut owned = conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM jobs WHERE id = ?1 AND lease_token = ?2 AND state = 'running')",
    )?;
    let mut rows = Vec::new();
    for &(id, token) in attempts {
        if owned.query_row(params![id, token], |r| r.get(0))? {
            rows.push((id, Some(token)));
        }
    }
    rescue_rows(conn, rows, "the attempt's outcome could not be written (the database refused writes)", now)
}

/// Ends each attempt as `lost` and makes its job available again, or dead when out of attempts.
fn rescue_rows(
    conn: &Connection,
    rows: Vec<(JobId, Option<i64>)>,
    error: &str,
    now: Millis,
) -> rusqlite::Result<Vec<JobId>> {
    for (id, token) in &rows {
        conn.prepare_cached(
            "UPDATE jobs SET \
               state = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'available' END, \
               finished_at = CASE WHEN attempt >= max_attempts THEN ?2 ELSE NULL END, \
               run_at = ?2, last_error = ?3, lease_token = NULL, lease_expires_at = NULL \
             WHERE id = ?1",
        )?
        .execute(params![id, now, error])?;
        if let Some(token) = token {
            finish_attempt(conn, *token, AttemptOutcome::Lost, Some(error), now)?;
        }
    }
    Ok(rows.into_iter().map(|(id, _)| id).collect())
}

/// Shutdown: gives a running attempt back without costing an attempt. Fenced like a completion.
pub fn release_lease(conn: &Connection, id: JobId, token: i64, now: Millis) -> rusqlite::Result<bool> {
    let changed = conn
        .prepare_cached(
            "UPDATE jobs SET state = 'available', attempt = attempt - 1, run_at = ?3, \
             lease_token = NULL, lease_expires_at = NULL \
             WHERE id = ?1 AND lease_token = ?2 AND state = 'running'",
        )?
        .execute(params![id, token, now])?;
    if changed == 1 {
        finish_attempt(conn, token, AttemptOutcome::Lost, Some("released at shutdown; not counted"), now)?;
    }
    Ok(changed == 1)
}

/// Admin replay of specific jobs: dead, cancelled or succeeded → available, attempts reset,
/// history kept. Replaying a job that a gate refused resumes that gate ([`gates::resume`]):
/// the admin says the cause is fixed. Returns the ids that moved (others were not in a
/// replayable state), including jobs the resume replayed.
pub fn replay(conn: &Connection, ids: &[JobId], now: Millis) -> rusqlite::Result<Vec<JobId>> {
    let mut refused_by: Vec<String> = Vec::new();
    let mut gate_of = conn.prepare_cached("SELECT gate FROM jobs WHERE id = ?1 AND state = 'dead'")?;
    for id in ids {
        if let Some(Some(gate)) = gate_of.query_row([id], |r| r.get::<_, Option<String>>(0)).optional()? {
            refused_by.push(gate);
        }
    }
    let mut moved = replay_rows(conn, ids, now)?;
    refused_by.sort_unstable();
    refused_by.dedup();
    for gate in refused_by {
        moved.extend(gates::resume(conn, Some(&gate), now)?.replayed);
    }
    moved.sort_unstable();
    moved.dedup();
    Ok(moved)
}

/// dead, cancelled or succeeded → available (attempts reset, history kept), nothing else.
pub(super) fn replay_rows(conn: &Connection, ids: &[JobId], now: Millis) -> rusqlite::Result<Vec<JobId>> {
    let mut stmt = conn.prepare_cached(
        "UPDATE jobs SET state = 'available', attempt = 0, run_at = ?2, finished_at = NULL, gate = NULL \
         WHERE id = ?1 AND state IN ('dead','cancelled','succeeded') RETURNING id",
    )?;
    let mut moved = Vec::new();
    for id in ids {
        if let Some(id) = stmt.query_row(params![id, now], |r| r.get(0)).optional()? {
            moved.push(id);
        }
    }
    Ok(moved)
}

/// Admin replay by filter: every job in `state` (of `kind`, finished since `since`).
pub fn replay_matching(
    conn: &Connection,
    state: JobState,
    kind: Option<&str>,
    since: Option<Millis>,
    now: Millis,
) -> rusqlite::Result<Vec<JobId>> {
    let ids: Vec<JobId> = conn
        .prepare_cached(
            "SELECT id FROM jobs WHERE state = ?1 AND (?2 IS NULL OR kind = ?2) \
             AND (?3 IS NULL OR COALESCE(finished_at, created_at) >= ?3) ORDER BY id",
        )?
        .query_map(params![state, kind, since], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    replay(conn, &ids, now)
}

/// Admin cancel: available, retryable, running, held or dead → cancelled. A running attempt is
/// ended as failed; its late result will be dropped by the lease fence. The jobs waiting on a
/// cancelled job are cancelled with it, transitively (they could never run). Returns the
/// cancelled ids, dependents included.
pub fn cancel(conn: &Connection, ids: &[JobId], now: Millis) -> rusqlite::Result<Vec<JobId>> {
    let mut cancelled = Vec::new();
    for id in ids {
        // RETURNING sees the row after the update, so the lease token is read first.
        let token: Option<Option<i64>> = conn
            .prepare_cached(
                "SELECT lease_token FROM jobs WHERE id = ?1 AND state IN ('available','retryable','running','held','dead')",
            )?
            .query_row([id], |r| r.get(0))
            .optional()?;
        let Some(token) = token else { continue };
        conn.prepare_cached(
            "UPDATE jobs SET state = 'cancelled', finished_at = ?2, lease_token = NULL, gate = NULL, \
             lease_expires_at = NULL, last_error = COALESCE(last_error, 'cancelled by an admin') \
             WHERE id = ?1",
        )?
        .execute(params![id, now])?;
        if let Some(token) = token {
            finish_attempt(conn, token, AttemptOutcome::Failed, Some("cancelled by an admin"), now)?;
        }
        cancelled.push(*id);
        cancelled.extend(deps::cancel_dependents(conn, *id, "was cancelled", now)?);
    }
    Ok(cancelled)
}

/// Retention windows for [`prune`].
#[derive(Debug, Clone, Copy)]
pub struct Retention {
    pub succeeded_ms: Millis,
    pub dead_ms: Millis,
}

/// Deletes finished jobs past retention (attempts go with them by cascade). Returns the count.
///
/// A waiting job that depends on a dead or cancelled job being pruned is cancelled first, and
/// so is every job waiting on it in turn: with its prerequisite gone it could only wait
/// forever (or run on partial input).
pub fn prune(conn: &Connection, retention: Retention, now: Millis) -> rusqlite::Result<usize> {
    let (succeeded_before, dead_before) = (now - retention.succeeded_ms, now - retention.dead_ms);
    // The prerequisites about to go that something still waits on. Their dependents are
    // cancelled transitively: a dependent cancelled here finishes now, so a level-by-level
    // pass over jobs past retention would never reach the dependents of the dependents.
    let doomed: Vec<(JobId, JobState)> = conn
        .prepare_cached(
            "SELECT DISTINCT p.id, p.state FROM jobs p JOIN job_deps d ON d.dep_id = p.id JOIN jobs j ON j.id = d.job_id \
             WHERE ((p.state = 'cancelled' AND p.finished_at < ?1) OR (p.state = 'dead' AND p.finished_at < ?2)) \
             AND (j.state = 'available' OR j.state = 'retryable' OR j.state = 'held') ORDER BY p.id",
        )?
        .query_map(params![succeeded_before, dead_before], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (id, state) in doomed {
        let why = if state == JobState::Dead { "failed and was pruned" } else { "was cancelled and pruned" };
        deps::cancel_dependents(conn, id, why, now)?;
    }
    conn.prepare_cached("DELETE FROM job_finishes WHERE minute < ?1")?
        .execute([(now - FINISHES_KEPT_MS) / MINUTE_MS])?;
    conn.prepare_cached(
        "DELETE FROM jobs WHERE (state IN ('succeeded','cancelled') AND finished_at < ?1) \
         OR (state = 'dead' AND finished_at < ?2)",
    )?
    .execute(params![succeeded_before, dead_before])
}

/// Whether `lane` has a job still to run or running (waiting, held, retrying, running).
pub fn lane_pending(conn: &Connection, lane: &str) -> rusqlite::Result<bool> {
    // Two index searches (the lanes' active jobs, the held ones), not a scan of every job.
    conn.prepare_cached(concat!(
        "SELECT EXISTS (SELECT 1 FROM jobs WHERE lane = ?1 AND ",
        super::lane_active!("state"),
        ") OR EXISTS (SELECT 1 FROM jobs WHERE state = 'held' AND lane = ?1)"
    ))?
    .query_row([lane], |r| r.get(0))
}

/// Deletes every finished job of `lane` (succeeded, cancelled, dead), whatever its age: its
/// owner let the lane's work go (`crate::retention`). Whatever still waits on one of them is
/// cancelled first, as [`prune`] does. Returns how many went.
pub fn prune_lane(conn: &Connection, lane: &str, now: Millis) -> rusqlite::Result<usize> {
    let doomed: Vec<JobId> = conn
        .prepare_cached(
            "SELECT DISTINCT p.id FROM jobs p JOIN job_deps d ON d.dep_id = p.id JOIN jobs j ON j.id = d.job_id \
             WHERE p.lane = ?1 AND (p.state = 'cancelled' OR p.state = 'dead') \
             AND (j.state = 'available' OR j.state = 'retryable' OR j.state = 'held') ORDER BY p.id",
        )?
        .query_map([lane], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for id in doomed {
        deps::cancel_dependents(conn, id, "was pruned with its lane", now)?;
    }
    conn.prepare_cached(
        "DELETE FROM jobs WHERE lane = ?1 AND (state = 'succeeded' OR state = 'cancelled' OR state = 'dead')",
    )?
    .execute([lane])
}

/// The earliest future `run_at` among waiting jobs: when the dispatcher must wake next.
pub fn next_run_at(conn: &Connection, now: Millis) -> rusqlite::Result<Option<Millis>> {
    conn.prepare_cached(
        "SELECT MIN(run_at) FROM (\
           SELECT MIN(run_at) AS run_at FROM jobs WHERE state = 'available' AND run_at > ?1 \
           UNION ALL SELECT MIN(run_at) FROM jobs WHERE state = 'retryable')",
    )?
    .query_row([now], |r| r.get(0))
}

/// Filters for [`list`]; `before` is the keyset cursor (an id).
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    pub state: Option<JobState>,
    pub kind: Option<String>,
    pub lane: Option<String>,
    pub since: Option<Millis>,
    pub before: Option<JobId>,
    pub limit: usize,
}

/// Lists jobs newest first; returns the page and the cursor for the next one.
pub fn list(conn: &Connection, filter: &ListFilter) -> rusqlite::Result<(Vec<Job>, Option<JobId>)> {
    let limit = filter.limit.clamp(1, 1000);
    let sql = format!(
        "SELECT {JOB_COLUMNS} FROM jobs WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR kind = ?2) \
         AND (?3 IS NULL OR lane = ?3) AND (?4 IS NULL OR created_at >= ?4) AND (?5 IS NULL OR id < ?5) \
         ORDER BY id DESC LIMIT ?6"
    );
    let jobs: Vec<Job> = conn
        .prepare_cached(&sql)?
        .query_map(
            params![filter.state, filter.kind, filter.lane, filter.since, filter.before, limit as i64 + 1],
            job_from_row,
        )?
        .collect::<Result<_, _>>()?;
    let mut jobs = jobs;
    let next = if jobs.len() > limit {
        jobs.truncate(limit);
        jobs.last().map(|j| j.id)
    } else {
        None
    };
    for job in &mut jobs {
        add_dependencies(conn, job)?;
    }
    Ok((jobs, next))
}

/// Fills in what a job depends on and, when it is held, what it waits on.
fn add_dependencies(conn: &Connection, job: &mut Job) -> rusqlite::Result<()> {
    job.depends_on = deps::of(conn, job.id)?;
    if job.state == JobState::Held {
        job.waiting_on = Some(waiting_on(conn, job.id, job.refused_by_gate.take())?);
    }
    Ok(())
}

/// What the held job `id` waits on: the paused gate `gate` (its `gate` column), or else the
/// dependencies that have not succeeded.
pub fn waiting_on(conn: &Connection, id: JobId, gate: Option<String>) -> rusqlite::Result<WaitingOn> {
    Ok(match gate {
        Some(gate) => WaitingOn { jobs: Vec::new(), reason: gates::pause_reason(conn, &gate)?, gate: Some(gate) },
        None => WaitingOn { jobs: deps::unmet(conn, id)?, gate: None, reason: None },
    })
}

/// One job with its attempts, or `None`.
pub fn get(conn: &Connection, id: JobId) -> rusqlite::Result<Option<Job>> {
    let sql = format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1");
    let Some(mut job) = conn.prepare_cached(&sql)?.query_row([id], job_from_row).optional()? else {
        return Ok(None);
    };
    let attempts = conn
        .prepare_cached(
            "SELECT attempt, outcome, error, started_at, finished_at FROM job_attempts \
             WHERE job_id = ?1 ORDER BY id",
        )?
        .query_map([id], |r| {
            let outcome: Option<String> = r.get(1)?;
            Ok(Attempt {
                attempt: r.get(0)?,
                outcome: outcome.as_deref().and_then(parse_outcome),
                error: r.get(2)?,
                started_at: r.get(3)?,
                finished_at: r.get(4)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    job.attempts = Some(attempts);
    add_dependencies(conn, &mut job)?;
    Ok(Some(job))
}

fn parse_outcome(raw: &str) -> Option<AttemptOutcome> {
    [AttemptOutcome::Succeeded, AttemptOutcome::Failed, AttemptOutcome::TimedOut, AttemptOutcome::Lost]
        .into_iter()
        .find(|o| o.as_str() == raw)
}

/// Counts per state and kind, and the age of the oldest due job (SPEC Appendix A.2).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Stats {
    pub by_state: std::collections::BTreeMap<String, i64>,
    pub by_kind: std::collections::BTreeMap<String, std::collections::BTreeMap<String, i64>>,
    pub oldest_available_age_ms: Option<Millis>,
    /// Transitions into a final state in the last hour (from the window's first whole
    /// minute), per state: recent throughput (an extra field; Appendix A allows them). A job
    /// replayed and finished again counts again.
    pub finished_last_hour: std::collections::BTreeMap<String, i64>,
}

/// The window of [`Stats::finished_last_hour`].
pub const THROUGHPUT_WINDOW_MS: Millis = 3_600_000;
/// How long per-minute finish counts are kept (the pruner drops older minutes).
const FINISHES_KEPT_MS: Millis = 24 * 3_600_000;

pub fn stats(conn: &Connection, now: Millis) -> rusqlite::Result<Stats> {
    let mut stats = Stats::default();
    for state in JobState::ALL {
        stats.by_state.insert(state.as_str().to_owned(), 0);
    }
    // Kept exact by triggers and `counts` (see there): a GROUP BY over `jobs` read every row.
    let mut stmt = conn.prepare_cached("SELECT kind, state, n FROM job_counts WHERE n != 0")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?)))?;
    for row in rows {
        let (kind, state, count) = row?;
        *stats.by_state.entry(state.clone()).or_default() += count;
        *stats.by_kind.entry(kind).or_default().entry(state).or_default() += count;
    }
    let oldest: Option<Millis> = conn
        .prepare_cached("SELECT MIN(run_at) FROM jobs WHERE state = 'available' AND run_at <= ?1")?
        .query_row([now], |r| r.get(0))?;
    stats.oldest_available_age_ms = oldest.map(|t| now - t);
    for state in [JobState::Succeeded, JobState::Dead, JobState::Cancelled] {
        // Per-minute finish counts (trigger-kept): the window starts at its first whole minute.
        let count: i64 = conn
            .prepare_cached("SELECT COALESCE(SUM(n), 0) FROM job_finishes WHERE state = ?1 AND minute >= ?2")?
            .query_row(params![state, (now - THROUGHPUT_WINDOW_MS) / MINUTE_MS], |r| r.get(0))?;
        stats.finished_last_hour.insert(state.as_str().to_owned(), count);
    }
    Ok(stats)
}

/// Jobs in each of `states`, for `/api/health` and `/metrics`. Each state is counted through
/// its own partial index (`jobs_available`, `jobs_retryable`, `jobs_lane_active`,
/// `jobs_finished`, `jobs_held`) instead of one `GROUP BY` over the table, which read every row: measured
/// ~100 ms per health check at 100,000 jobs. Counting the finished states still walks their
/// index entries, so callers ask only for the states they show.
pub fn count_by_state(
    conn: &Connection,
    states: &[JobState],
) -> rusqlite::Result<std::collections::HashMap<JobState, i64>> {
    let mut counts = std::collections::HashMap::new();
    for &state in states {
        let sql = match state {
            JobState::Available | JobState::Retryable => "SELECT COUNT(*) FROM jobs WHERE state = ?1",
            JobState::Running => {
                concat!(
                    "SELECT COUNT(*) FROM jobs INDEXED BY jobs_lane_active WHERE ",
                    lane_active!("state"),
                    " AND state = ?1"
                )
            }
            JobState::Succeeded | JobState::Dead | JobState::Cancelled => {
                "SELECT COUNT(*) FROM jobs WHERE state = ?1 AND finished_at IS NOT NULL"
            }
            // Through jobs_held; the literal lets the planner see the partial index applies.
            JobState::Held => "SELECT COUNT(*) FROM jobs WHERE state = 'held' AND ?1 = ?1",
        };
        counts.insert(state, conn.prepare_cached(sql)?.query_row([state], |r| r.get(0))?);
    }
    Ok(counts)
}

fn job_from_row(r: &Row<'_>) -> rusqlite::Result<Job> {
    let result: Option<String> = r.get(10)?;
    Ok(Job {
        id: r.get(0)?,
        kind: r.get(1)?,
        state: r.get(2)?,
        lane: r.get(3)?,
        attempt: r.get(4)?,
        max_attempts: r.get(5)?,
        created_at: r.get(6)?,
        run_at: r.get(7)?,
        finished_at: r.get(8)?,
        last_error: r.get(9)?,
        result: result.and_then(|text| serde_json::from_str(&text).ok()),
        payload: parse_json_column(r, 11)?,
        attempts: None,
        depends_on: Vec::new(),
        waiting_on: None,
        // The column means "refused by" for a dead job and "held on" for a held one; the
        // latter moves to `waiting_on` in `add_dependencies`.
        refused_by_gate: r.get(12)?,
    })
}

fn parse_json_column(r: &Row<'_>, index: usize) -> rusqlite::Result<serde_json::Value> {
    let text: String = r.get(index)?;
    serde_json::from_str(&text)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Text, Box::new(e)))
}

#[cfg(test)]
mod tests {
    /// The lane check must stay one index seek: walking the lane's backlog instead would make
    /// every claim as slow as the deepest lane.
    #[test]
    fn the_running_check_of_a_lane_head_uses_the_running_index() {
        let dir = tempfile::tempdir().expect("temp dir");
        let conn = crate::db::open_and_migrate(&dir.path().join("p.db"), crate::db::Synchronous::Normal).expect("open");
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {}", super::HEAD_IF_ELIGIBLE)).expect("plan");
        let plan: Vec<String> = stmt
            .query_map(rusqlite::params![1, 0, rusqlite::types::Null], |r| r.get(3))
            .expect("plan rows")
            .collect::<Result<_, _>>()
            .expect("plan text");
        assert!(plan.iter().any(|step| step.contains("INDEX jobs_lane_running (lane=?)")), "{plan:?}");
        assert!(!plan.iter().any(|step| step.starts_with("SCAN")), "{plan:?}");
    }
}
