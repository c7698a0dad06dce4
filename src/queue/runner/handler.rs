//! What a job kind implements and what it reports: the [`Handler`] trait, its [`Outcome`] and
//! [`Effects`], the [`CancelToken`] an attempt runs under, per-kind settings ([`KindSpec`]),
//! and the [`Registry`] of kinds and of the gates they need (`queue::gates`).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use crate::clock::{Millis, SharedMonotonic};
use crate::queue::gates::KindGates;
use crate::queue::job::ClaimedJob;

/// The error type of effects: whatever went wrong while storing a job's outputs.
pub type EffectError = Box<dyn std::error::Error + Send + Sync>;

/// A job's outputs, applied by the writer in the same transaction as its `succeeded` state.
pub type Effects = Box<dyn FnOnce(&Connection, Millis) -> Result<(), EffectError> + Send>;

/// What a handler reports.
pub enum Outcome {
    /// Done. `result` is shown in the admin API; `effects` are committed atomically with it.
    /// Dependents that already succeeded on this job's previous output run again.
    Succeeded { result: Option<serde_json::Value>, effects: Option<Effects> },
    /// Done, and the output is what it was (the input had not changed): like `Succeeded`, but
    /// dependents that already succeeded are left alone.
    Unchanged { result: Option<serde_json::Value>, effects: Option<Effects> },
    /// Failed transiently: try again after `after` (the remote's Retry-After) or the backoff.
    Retry { error: String, after: Option<Duration> },
    /// Failed permanently: dead now, with the reason.
    Dead { error: String },
    /// Refused by what the kind's gate guards (a remote rejected our credentials): dead now,
    /// and the gate pauses, so later jobs needing it are held instead of refused one by one
    /// (`queue::gates`). For a kind without a gate this is `Dead`.
    Refused { error: String },
}

impl Outcome {
    pub fn done(result: serde_json::Value) -> Outcome {
        Outcome::Succeeded { result: Some(result), effects: None }
    }

    pub fn retry(error: impl Into<String>) -> Outcome {
        Outcome::Retry { error: error.into(), after: None }
    }

    pub fn dead(error: impl Into<String>) -> Outcome {
        Outcome::Dead { error: error.into() }
    }

    /// Done with an output equal to the previous run's ([`Outcome::Unchanged`]).
    pub fn unchanged(result: serde_json::Value) -> Outcome {
        Outcome::Unchanged { result: Some(result), effects: None }
    }
}

/// Raised when an attempt is abandoned (timeout, shutdown); handlers doing long work check it,
/// and use [`CancelToken::remaining`] to bound their own waits (child processes, HTTP calls).
/// Its deadline is on the runner's monotonic clock.
#[derive(Clone)]
pub struct CancelToken {
    cancelled: Arc<AtomicBool>,
    deadline: Instant,
    clock: SharedMonotonic,
}

impl std::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelToken").field("cancelled", &self.cancelled).field("remaining", &self.remaining()).finish()
    }
}

impl CancelToken {
    /// A token that expires `timeout` from now on `clock`.
    pub fn on(clock: SharedMonotonic, timeout: Duration) -> CancelToken {
        CancelToken { cancelled: Arc::new(AtomicBool::new(false)), deadline: clock.now() + timeout, clock }
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed) || self.clock.now() >= self.deadline
    }

    /// Time left before the watchdog gives up on this attempt.
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(self.clock.now())
    }

    pub(super) fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }
}

/// One job kind's implementation.
pub trait Handler: Send + Sync {
    fn run(&self, job: &ClaimedJob, cancel: &CancelToken) -> Outcome;
}

impl<F> Handler for F
where
    F: Fn(&ClaimedJob, &CancelToken) -> Outcome + Send + Sync,
{
    fn run(&self, job: &ClaimedJob, cancel: &CancelToken) -> Outcome {
        self(job, cancel)
    }
}

/// Per-kind settings.
#[derive(Debug, Clone, Copy)]
pub struct KindSpec {
    pub timeout: Duration,
    pub max_attempts: u32,
    /// How many jobs of this kind a job thread may claim at once when it finishes one. Only
    /// for short jobs: their outcomes are then recorded, and the next batch claimed, in one
    /// writer transaction (measured: no-op jobs 5.2k/s → 8.2k/s with 32). Slow kinds keep 1,
    /// so a quick job never waits in a thread's hands behind a slow one. The cost: if one job
    /// of a batch hangs, the rest of its batch waits in that thread's hands, times out with it
    /// and is retried — at-least-once still holds, an attempt is spent.
    pub batch: usize,
}

impl KindSpec {
    /// The longest timeout a kind may have. Deadlines are `Instant + timeout`, which panics on
    /// overflow; a year is past any job and far from that edge.
    pub const MAX_TIMEOUT: Duration = Duration::from_secs(365 * 86_400);

    /// A kind's spec; its timeout is capped at [`KindSpec::MAX_TIMEOUT`].
    pub fn new(timeout: Duration, max_attempts: u32) -> KindSpec {
        KindSpec { timeout: timeout.min(Self::MAX_TIMEOUT), max_attempts, batch: 1 }
    }

    pub fn batched(self, batch: usize) -> KindSpec {
        KindSpec { batch: batch.max(1), ..self }
    }
}

/// The fingerprint of what a gate guards (e.g. a hash of the credentials); a paused gate
/// resumes when it changes. Called at runner start and by the watchdog, never by the writer.
pub type GateVersion = Arc<dyn Fn() -> String + Send + Sync>;

/// A try of what a paused gate guards (one tiny request to a provider), given the pause's
/// reason: `Some(Ok)` when it answers again (the gate resumes), `Some(Err(why))` while it is
/// still refused, `None` when this pause is not one a probe can lift (it waits for its own
/// condition). Run on a thread of its own, never by the writer (`runner::reprobe`).
pub type GateProbe = Arc<dyn Fn(&str) -> Option<Result<(), String>> + Send + Sync>;

/// The handlers by kind name, and the gates kinds need (`queue::gates`).
#[derive(Default, Clone)]
pub struct Registry {
    pub(super) kinds: HashMap<String, (KindSpec, Arc<dyn Handler>)>,
    /// kind → gate name.
    pub(super) gates: KindGates,
    /// gate name → its version.
    pub(super) gate_versions: HashMap<String, GateVersion>,
    /// gate name → its probe, for the gates that are tried again on their own.
    pub(super) gate_probes: HashMap<String, GateProbe>,
}

impl Registry {
    pub fn register(&mut self, kind: &str, spec: KindSpec, handler: impl Handler + 'static) {
        self.kinds.insert(kind.to_owned(), (spec, Arc::new(handler)));
    }

    pub fn spec(&self, kind: &str) -> Option<KindSpec> {
        self.kinds.get(kind).map(|(spec, _)| *spec)
    }

    /// Jobs of `kinds` need the gate `name`, whose current version `version` tells.
    pub fn gate(&mut self, name: &str, kinds: &[&str], version: impl Fn() -> String + Send + Sync + 'static) {
        for kind in kinds {
            self.gates.insert((*kind).to_owned(), name.to_owned());
        }
        self.gate_versions.insert(name.to_owned(), Arc::new(version));
    }

    /// A paused `name` is tried again with `probe` after a back-off, and resumed when it
    /// answers (`runner::reprobe`).
    pub fn gate_probe(
        &mut self,
        name: &str,
        probe: impl Fn(&str) -> Option<Result<(), String>> + Send + Sync + 'static,
    ) {
        self.gate_probes.insert(name.to_owned(), Arc::new(probe));
    }

    pub fn kind_gates(&self) -> &KindGates {
        &self.gates
    }

    /// Every gate's current version.
    pub fn gate_versions(&self) -> HashMap<String, String> {
        self.gate_versions.iter().map(|(name, version)| (name.clone(), version())).collect()
    }
}
