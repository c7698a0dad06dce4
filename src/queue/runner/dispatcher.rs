//! The dispatcher: fills idle job threads. Each turn ([`Dispatcher::run_once`]) asks the writer
//! to promote due retries and claim as many jobs as there are idle threads, hands them over on
//! the work channel, and says how long it may sleep: until the earliest `run_at`, at most a
//! [`TICK`] (so health can tell a live runner from a wedged one). Between turns it sleeps on
//! the writer's waker, so a commit that may have made work claimable starts the next turn at
//! once; there is no polling interval on the hot path.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crossbeam_channel::select;

use super::{CancelToken, InFlight, Shared, TICK, Work};
use crate::clock::Millis;
use crate::queue::QueueError;
use crate::queue::job::ClaimedJob;
use crate::queue::store;
use crate::queue::writer::Durability;

/// The dispatcher's state between turns.
#[derive(Debug, Default)]
pub(super) struct Dispatcher {
    /// When the earliest job scheduled for later becomes due (wall clock, as `run_at` is).
    next_due: Option<Millis>,
}

/// What one turn did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DispatchTurn {
    /// Jobs claimed and handed to job threads.
    pub handed_over: usize,
    /// How long to sleep before the next turn, unless woken.
    pub wait: Duration,
}

impl Dispatcher {
    /// One turn: record liveness, claim for the idle threads, hand over, compute the sleep.
    pub(super) fn run_once(&mut self, shared: &Shared) -> DispatchTurn {
        shared.last_tick.store(shared.monotonic_ms(), Ordering::Relaxed);
        let now = shared.clock.now_ms();
        let free = shared.config.threads.saturating_sub(shared.inflight().len());
        let mut handed_over = 0;
        if free > 0 {
            match claim_batch(shared, free) {
                Ok((jobs, due)) => {
                    // A full batch: there may be more waiting, and the completions of these
                    // will wake us; no timer needed.
                    self.next_due = if jobs.len() == free { None } else { due };
                    handed_over = jobs.len();
                    hand_over(shared, jobs);
                }
                Err(e) => {
                    log::warn!(target: "queue", "claim failed: {e}; retrying in a second");
                    self.next_due = Some(now + 1000);
                }
            }
        }
        let wait = self
            .next_due
            .map(|due| Duration::from_millis((due - shared.clock.now_ms()).max(0) as u64))
            .unwrap_or(TICK)
            .min(TICK);
        DispatchTurn { handed_over, wait }
    }
}

/// The dispatcher thread: turns until shutdown, sleeping on the waker between them.
pub(super) fn run(shared: &Shared) {
    let mut dispatcher = Dispatcher::default();
    while !shared.stopping.load(Ordering::SeqCst) {
        let turn = dispatcher.run_once(shared);
        select! {
            recv(shared.waker.receiver()) -> _ => {}
            default(turn.wait) => {}
        }
    }
}

/// Asks the writer to promote due retryable jobs (the scheduler's step) and claim up to `max`.
fn claim_batch(shared: &Shared, max: usize) -> Result<(Vec<ClaimedJob>, Option<Millis>), QueueError> {
    let lease_ms = shared.config.lease.as_millis() as Millis;
    let gates = Arc::clone(&shared.kind_gates);
    shared.writer.call(false, Durability::Relaxed, move |conn, now| {
        crate::queue::maintenance::Scheduler::run_once(conn, now)?;
        let jobs = store::claim_gated(conn, max, now, lease_ms, None, &gates)?;
        let due = store::next_run_at(conn, now)?;
        Ok((jobs, due))
    })
}

fn hand_over(shared: &Shared, jobs: Vec<ClaimedJob>) {
    for job in jobs {
        register(shared, &job);
        // The receivers live as long as `shared`; a send cannot fail while we hold it.
        let _ = shared.work_tx.send(Work::Run(job));
    }
}

/// Enters a claimed job in the in-flight table (its deadline is reset when it starts).
pub(super) fn register(shared: &Shared, job: &ClaimedJob) {
    let timeout = shared.registry.spec(&job.kind).map(|s| s.timeout).unwrap_or(Duration::from_secs(60));
    shared.inflight().insert(
        job.id,
        InFlight {
            token: job.lease_token,
            kind: job.kind.clone(),
            attempt: job.attempt,
            deadline: shared.monotonic.now() + timeout,
            timeout,
            cancel: CancelToken::on(Arc::clone(&shared.monotonic), timeout),
        },
    );
    shared.metrics.started(&job.kind, job.claimed_at - job.run_at);
}
