//! Job threads: each runs claimed jobs one at a time, under a [`CancelToken`] whose deadline
//! the watchdog enforces, and records their outcomes through the writer — claiming its own
//! next jobs in the same transaction when it can (see [`finish_and_claim`]). Whoever removes a
//! job from the in-flight table owns its outcome: a job the watchdog took over is dropped here.
//!
//! [`apply_outcome`] is the one place an outcome becomes a state change: effects and
//! `succeeded` in one savepoint, fenced by the lease token; a refusal pauses the kind's gate; a
//! success proves it.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use rusqlite::Connection;

use super::dispatcher::register;
use super::{CancelToken, ORPHAN_RETRY, Outcome, Shared, Work, panic_message};
use crate::clock::Millis;
use crate::queue::QueueError;
use crate::queue::counts::SuccessTally;
use crate::queue::gates;
use crate::queue::job::{AttemptOutcome, ClaimedJob, JobId};
use crate::queue::retry::backoff_jittered;
use crate::queue::store::{self, FailureDisposition};
use crate::queue::writer::Durability;

/// A finished attempt, waiting to be recorded.
pub(super) struct Done {
    job: ClaimedJob,
    outcome: Outcome,
    /// The gate the job's kind needs, if any: a success proves it, a refusal pauses it.
    gate: Option<String>,
    /// For a refusal, the gate's version now (the credentials it paused under). Read on the
    /// job thread: a version may read a file, and the writer must not wait for that.
    gate_version: Option<String>,
}

/// A job thread: runs handed-over or self-claimed jobs until told to exit (or replaced).
pub(super) fn run(shared: &Shared) {
    // Jobs this thread claimed for itself, and outcomes not yet recorded.
    let mut local: VecDeque<ClaimedJob> = VecDeque::new();
    let mut finished: Vec<Done> = Vec::new();
    loop {
        let job = match local.pop_front() {
            Some(job) => job,
            None if !finished.is_empty() => {
                local.extend(finish_and_claim(shared, std::mem::take(&mut finished)));
                continue;
            }
            None => match shared.work_rx.recv() {
                Ok(Work::Run(job)) => job,
                Ok(Work::Exit) | Err(_) => return,
            },
        };
        let Some(done) = run_one(shared, job) else {
            // The watchdog took this attempt over and started a replacement thread: give the
            // jobs still in hand to the others, record what finished, and leave.
            for job in local.drain(..) {
                let _ = shared.work_tx.send(Work::Run(job));
            }
            submit_outcomes(shared, std::mem::take(&mut finished));
            return;
        };
        finished.push(done);
        if local.is_empty() {
            // Work the dispatcher already handed over comes first: claiming our own next job
            // while one waits in the channel would let it starve past its deadline.
            match shared.work_rx.try_recv() {
                Ok(Work::Run(waiting)) => {
                    submit_outcomes(shared, std::mem::take(&mut finished));
                    local.push_back(waiting);
                }
                Ok(Work::Exit) => {
                    submit_outcomes(shared, std::mem::take(&mut finished));
                    return;
                }
                Err(_) => {}
            }
        }
    }
}

/// Records outcomes without waiting for the commit. Their leases are heartbeated until the
/// writer has answered (`Shared::unrecorded`).
fn submit_outcomes(shared: &Shared, finished: Vec<Done>) {
    if finished.is_empty() {
        return;
    }
    let ids: Vec<JobId> = finished.iter().map(|done| done.job.id).collect();
    let unrecorded = Arc::clone(&shared.unrecorded);
    let answered = ids.clone();
    let recorded = move |_| forget(&unrecorded, &answered);
    let submitted = shared.writer.submit_then(
        true,
        Durability::Relaxed,
        move |conn, now| apply_outcomes(conn, finished, now),
        recorded,
    );
    if let Err(e) = submitted {
        forget(&shared.unrecorded, &ids);
        log::warn!(target: "queue", "could not record job outcomes: {e}; their leases will expire and they will be rescued");
    }
}

/// Stops heartbeating these attempts: their outcome is recorded (or could not be, and they
/// are to be given back).
fn forget(unrecorded: &std::sync::Mutex<std::collections::HashMap<JobId, i64>>, ids: &[JobId]) {
    let mut table = super::lock_unrecorded(unrecorded);
    for id in ids {
        table.remove(id);
    }
}

/// Runs one claimed job; `None` when its attempt was taken away (timed out) meanwhile.
fn run_one(shared: &Shared, job: ClaimedJob) -> Option<Done> {
    // The attempt's clock starts now, not at the claim: a job may wait briefly in the
    // hand-off channel when a thread and the dispatcher both claimed for the same slot.
    let cancel = {
        let mut inflight = shared.inflight();
        let flight = inflight.get_mut(&job.id)?;
        flight.deadline = shared.monotonic.now() + flight.timeout;
        flight.cancel = CancelToken::on(Arc::clone(&shared.monotonic), flight.timeout);
        flight.cancel.clone()
    };
    let started = shared.monotonic.now();
    let outcome = match shared.registry.kinds.get(&job.kind) {
        Some((_, handler)) => catch_unwind(AssertUnwindSafe(|| handler.run(&job, &cancel)))
            .unwrap_or_else(|panic| Outcome::retry(format!("the handler panicked: {}", panic_message(&panic)))),
        None => Outcome::dead(format!("no handler is registered for job kind {:?}", job.kind)),
    };
    let elapsed = shared.monotonic.now().saturating_duration_since(started);
    // Whoever removes the entry owns the outcome: if the watchdog got there first, this
    // attempt already counts as timed out and a replacement thread exists.
    if shared.inflight().remove(&job.id).is_none() {
        log::info!(target: "queue", "job {} finished after its timeout; late result dropped", job.id);
        return None;
    }
    shared.unrecorded().insert(job.id, job.lease_token);
    shared.metrics.finished(&job.kind, &outcome, elapsed);
    let gate = shared.kind_gates.get(&job.kind).cloned();
    let gate_version = match (&outcome, &gate) {
        (Outcome::Refused { .. }, Some(gate)) => shared.registry.gate_versions.get(gate).map(|version| version()),
        _ => None,
    };
    Some(Done { job, outcome, gate, gate_version })
}

/// Records the outcomes and, in the same writer transaction, claims this thread's next jobs:
/// up to the kind's `batch` more of the kind just run, else one of any kind.
///
/// Why here and not only in the dispatcher: a round trip through the dispatcher costs a
/// wake-up and a transaction of its own per free slot; claiming on completion keeps a busy
/// thread busy with one transaction per job, or per batch for batched kinds.
fn finish_and_claim(shared: &Shared, finished: Vec<Done>) -> Vec<ClaimedJob> {
    let claim_next = !shared.stopping.load(Ordering::SeqCst);
    let lease_ms = shared.config.lease.as_millis() as Millis;
    let kind = finished.last().map(|done| done.job.kind.clone()).unwrap_or_default();
    let batch = shared.registry.spec(&kind).map_or(1, |s| s.batch);
    let count = finished.len();
    let attempts: Vec<(JobId, i64)> = finished.iter().map(|done| (done.job.id, done.job.lease_token)).collect();
    let gates = Arc::clone(&shared.kind_gates);
    let result = shared.writer.call(true, Durability::Relaxed, move |conn, now| {
        apply_outcomes(conn, finished, now)?;
        if !claim_next {
            return Ok(Vec::new());
        }
        crate::queue::maintenance::Scheduler::run_once(conn, now)?;
        let mut next =
            if batch > 1 { store::claim_gated(conn, batch, now, lease_ms, Some(&kind), &gates)? } else { Vec::new() };
        if next.is_empty() {
            next = store::claim_gated(conn, 1, now, lease_ms, None, &gates)?;
        }
        Ok(next)
    });
    let ids: Vec<JobId> = attempts.iter().map(|(id, _)| *id).collect();
    forget(&shared.unrecorded, &ids);
    match result {
        Ok(next) => {
            for job in &next {
                register(shared, job);
            }
            next
        }
        Err(e) => {
            log::warn!(target: "queue", "could not record {count} job outcomes: {e}; they run again once the database takes writes");
            rescue_when_writable(shared, attempts);
            Vec::new()
        }
    }
}

/// The outcomes of `attempts` (completions, or the watchdog's timeout records) could not be
/// written — the database was locked, full or read-only — so their jobs are still `running`
/// with nobody running them. Rather than leave them, and their sessions' lanes, waiting a whole
/// lease for the rescuer, the calling thread gives them back (as lost attempts) as soon as a
/// write goes through: it tries once a second until the lease would have run out anyway, or
/// shutdown.
pub(super) fn rescue_when_writable(shared: &Shared, attempts: Vec<(JobId, i64)>) {
    // Real time: this loop really waits between tries.
    let give_up = Instant::now() + shared.config.lease;
    while Instant::now() < give_up && !shared.stopping.load(Ordering::SeqCst) {
        std::thread::sleep(ORPHAN_RETRY);
        let attempts = attempts.clone();
        if let Ok(rescued) = shared
            .writer
            .call(true, Durability::Durable, move |conn, now| Ok(store::rescue_orphans(conn, &attempts, now)?))
        {
            log::info!(target: "queue", "{} jobs whose outcome could not be recorded are available again", rescued.len());
            return;
        }
    }
}

/// Runs in the writer: records a batch of outcomes, their successes counted together.
fn apply_outcomes(conn: &Connection, finished: Vec<Done>, now: Millis) -> Result<(), QueueError> {
    let mut successes = SuccessTally::default();
    for done in finished {
        apply_outcome(conn, done, now, &mut successes)?;
    }
    successes.flush(conn, now)?;
    Ok(())
}

/// Runs in the writer: records an attempt's outcome, fenced by its lease token; a success is
/// added to `successes` once its effects are stored.
fn apply_outcome(conn: &Connection, done: Done, now: Millis, successes: &mut SuccessTally) -> Result<(), QueueError> {
    let Done { job, outcome, gate, gate_version } = done;
    let (id, token, attempt) = (job.id, job.lease_token, job.attempt);
    let backoff_at = || now + backoff_jittered(attempt).as_millis() as Millis;
    let (result, effects, output_changed) = match outcome {
        Outcome::Succeeded { result, effects } => (result, effects, true),
        Outcome::Unchanged { result, effects } => (result, effects, false),
        Outcome::Retry { error, after } => {
            let at = after.map_or_else(backoff_at, |wait| now + wait.as_millis() as Millis);
            store::fail_attempt(conn, id, token, AttemptOutcome::Failed, &error, FailureDisposition::RetryAt(at), now)?;
            return Ok(());
        }
        Outcome::Dead { error } => {
            store::fail_attempt(conn, id, token, AttemptOutcome::Failed, &error, FailureDisposition::Dead, now)?;
            return Ok(());
        }
        Outcome::Refused { error } => {
            let state =
                store::fail_attempt(conn, id, token, AttemptOutcome::Failed, &error, FailureDisposition::Dead, now)?;
            if let (Some(_), Some(gate)) = (state, &gate) {
                store::mark_refused(conn, id, gate)?;
                gates::pause(conn, gate, &error, gate_version.as_deref().unwrap_or_default(), now)?;
                log::warn!(target: "queue", "{gate} paused: {error}; jobs needing it are held until it resumes");
            }
            return Ok(());
        }
    };
    // Effects run in a savepoint with the success, so that their failure undoes both. Without
    // effects there is nothing to undo: a savepoint would only copy the pages the success
    // touches into the statement journal.
    let savepoint = effects.is_some();
    if savepoint {
        crate::queue::writer::exec_cached(conn, "SAVEPOINT effects")?;
    }
    if !store::record_success(conn, id, token, result.as_ref(), output_changed, now)? {
        if savepoint {
            conn.execute_batch("ROLLBACK TO effects; RELEASE effects")?;
        }
        log::info!(target: "queue", "job {id}: result dropped, the attempt no longer owns the job");
        return Ok(());
    }
    let applied = match effects {
        Some(effects) => catch_unwind(AssertUnwindSafe(|| effects(conn, now)))
            .unwrap_or_else(|panic| Err(format!("storing the results panicked: {}", panic_message(&panic)).into())),
        None => Ok(()),
    };
    match applied {
        Ok(()) => {
            if let Some(gate) = &gate {
                gates::proven(conn, gate, now)?;
            }
            if savepoint {
                crate::queue::writer::exec_cached(conn, "RELEASE effects")?;
            }
            successes.add(&job.kind);
        }
        Err(e) => {
            conn.execute_batch("ROLLBACK TO effects; RELEASE effects")?;
            let error = format!("could not store the job's results: {e}");
            let at = FailureDisposition::RetryAt(backoff_at());
            store::fail_attempt(conn, id, token, AttemptOutcome::Failed, &error, at, now)?;
        }
    }
    Ok(())
}
