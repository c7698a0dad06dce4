//! The watchdog: each turn ([`Watchdog::run_once`], on the runner's monotonic clock) ends the
//! attempts past their kind's timeout — records `timed_out`, raises their [`CancelToken`]
//! (so a child process is killed) — extends the leases of live attempts, and of finished ones
//! whose outcome is not recorded yet, when a heartbeat is due, and, every [`GATE_CHECK`], resumes paused gates whose credentials changed
//! and starts the probes of paused gates that are due for one (`reprobe`). The thread
//! ([`run`]) starts a replacement job thread for each attempt timed out, so the pool keeps its
//! full concurrency while a handler is stuck.
//!
//! [`CancelToken`]: super::CancelToken

use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::{Receiver, RecvTimeoutError};
use rusqlite::Connection;

use super::job_thread::rescue_when_writable;
use super::{GATE_CHECK, InFlight, Registry, Shared, TICK, spawn_job_thread};
use crate::clock::Millis;
use crate::queue::gates;
use crate::queue::job::{AttemptOutcome, JobId};
use crate::queue::retry::backoff_jittered;
use crate::queue::store::{self, FailureDisposition};
use crate::queue::writer::{Durability, Waker, WriterHandle};

/// The watchdog's schedule between turns.
#[derive(Debug)]
pub(super) struct Watchdog {
    next_heartbeat: Instant,
    next_gate_check: Instant,
}

/// What one turn did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct WatchdogTurn {
    /// Attempts ended as timed out (each needs a replacement thread).
    pub timed_out: Vec<JobId>,
    /// Leases extended by a heartbeat this turn.
    pub heartbeat: usize,
    /// Whether paused gates were compared with the current credentials.
    pub gates_checked: bool,
}

impl Watchdog {
    pub(super) fn new(shared: &Shared, now: Instant) -> Watchdog {
        Watchdog { next_heartbeat: now + shared.config.heartbeat, next_gate_check: now + GATE_CHECK }
    }

    /// One turn at `now` (the runner's monotonic clock). See the module doc.
    pub(super) fn run_once(&mut self, shared: &Arc<Shared>, now: Instant) -> WatchdogTurn {
        let mut turn = WatchdogTurn { timed_out: time_out_expired(shared, now), ..WatchdogTurn::default() };
        if now >= self.next_heartbeat {
            turn.heartbeat = heartbeat(shared);
            self.next_heartbeat = now + shared.config.heartbeat;
        }
        if now >= self.next_gate_check && !shared.registry.gate_versions.is_empty() {
            resume_gates_with_new_versions(&shared.registry, &shared.writer, &shared.waker);
            if !shared.registry.gate_probes.is_empty() {
                let probes = &shared.registry.gate_probes;
                super::reprobe::probe_due_gates(probes, &shared.reprobe, &shared.writer, &shared.waker);
            }
            turn.gates_checked = true;
            self.next_gate_check = now + GATE_CHECK;
        }
        turn
    }

    /// When the next turn is due: the earliest deadline or heartbeat, at most a [`TICK`] away.
    fn next_turn(&self, shared: &Shared, now: Instant) -> Instant {
        let next_deadline = shared.inflight().values().map(|f| f.deadline).min();
        next_deadline.map_or(self.next_heartbeat, |d| d.min(self.next_heartbeat)).min(now + TICK)
    }
}

/// The watchdog thread: a turn whenever one is due, until `stop` says so.
pub(super) fn run(shared: &Arc<Shared>, stop: &Receiver<()>) {
    let mut watchdog = Watchdog::new(shared, shared.monotonic.now());
    loop {
        let now = shared.monotonic.now();
        let wake_at = watchdog.next_turn(shared, now);
        match stop.recv_timeout(wake_at.saturating_duration_since(now)) {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
            Err(RecvTimeoutError::Timeout) => {}
        }
        let turn = watchdog.run_once(shared, shared.monotonic.now());
        for _ in &turn.timed_out {
            if let Err(e) = spawn_job_thread(shared) {
                log::error!(target: "queue", "could not start a replacement job thread: {e}");
            }
        }
    }
}

/// Resumes every paused gate whose version changed (new credentials: `queue::gates`), or that
/// no kind needs any more. The versions are read here, on the calling thread; only the
/// comparison runs in the writer.
pub(in crate::queue) fn resume_gates_with_new_versions(registry: &Registry, writer: &WriterHandle, waker: &Waker) {
    let versions = registry.gate_versions();
    match writer.call(false, Durability::Durable, move |conn, now| Ok(gates::resume_changed(conn, &versions, now)?)) {
        Ok(resumed) if !resumed.gates.is_empty() => {
            log::info!(
                target: "queue",
                "resumed {} (credentials changed, or no kind needs it any more): {} held jobs released, \
                 {} refused jobs replayed",
                resumed.gates.join(", "),
                resumed.released,
                resumed.replayed.len()
            );
            waker.wake();
        }
        Ok(_) => {}
        Err(e) => log::warn!(target: "queue", "could not check the paused gates: {e}"),
    }
}

/// Ends the attempts past their deadline at `now`; returns their jobs.
fn time_out_expired(shared: &Arc<Shared>, now: Instant) -> Vec<JobId> {
    let expired: Vec<(JobId, InFlight)> = {
        let mut inflight = shared.inflight();
        let ids: Vec<JobId> = inflight.iter().filter(|(_, f)| f.deadline <= now).map(|(id, _)| *id).collect();
        ids.into_iter().filter_map(|id| inflight.remove(&id).map(|f| (id, f))).collect()
    };
    for (id, flight) in &expired {
        flight.cancel.cancel();
        shared.metrics.timed_out(&flight.kind);
        let (id, token, attempt) = (*id, flight.token, flight.attempt);
        let error = format!("timed out after {} s", flight.timeout.as_secs_f64());
        log::warn!(target: "queue", "job {id} ({}) {error}; its thread is replaced", flight.kind);
        let record = move |conn: &Connection, now| {
            let at = FailureDisposition::RetryAt(now + backoff_jittered(attempt).as_millis() as Millis);
            store::fail_attempt(conn, id, token, AttemptOutcome::TimedOut, &error, at, now)?;
            Ok(())
        };
        // If the database refuses the record, give the job back once it takes writes (on a
        // thread of its own: this runs on the writer's thread).
        let orphan = Arc::clone(shared);
        let give_back = move |_| {
            let spawned = std::thread::Builder::new()
                .name("vl-give-back".into())
                .spawn(move || rescue_when_writable(&orphan, vec![(id, token)]));
            if let Err(e) = spawned {
                log::warn!(target: "queue", "job {id} stays running until its lease expires: {e}");
            }
        };
        if let Err(e) = shared.writer.submit_or(true, Durability::Relaxed, record, give_back) {
            log::warn!(target: "queue", "could not record the timeout of job {id}: {e}");
        }
    }
    expired.into_iter().map(|(id, _)| id).collect()
}

/// Pushes the leases of live attempts forward, and of finished ones whose outcome is not
/// recorded yet; returns how many it asked for.
fn heartbeat(shared: &Shared) -> usize {
    let mut leases: Vec<(JobId, i64)> = shared.inflight().iter().map(|(id, f)| (*id, f.token)).collect();
    leases.extend(shared.unrecorded().iter().map(|(id, token)| (*id, *token)));
    if leases.is_empty() {
        return 0;
    }
    let count = leases.len();
    let lease_ms = shared.config.lease.as_millis() as Millis;
    let submitted = shared.writer.submit(false, Durability::Relaxed, move |conn, now| {
        store::extend_leases(conn, &leases, now + lease_ms)?;
        Ok(())
    });
    if let Err(e) = submitted {
        log::warn!(target: "queue", "lease heartbeat failed: {e}");
    }
    count
}
