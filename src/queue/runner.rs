//! The runner: the dispatcher thread, the job-thread pool and the watchdog, and the
//! [`Handler`] trait that job kinds implement.
//!
//! # Flow
//! The dispatcher sleeps until the writer wakes it (after any commit that may have made work
//! claimable) or until the next `run_at`; it then asks the writer to claim as many jobs as there
//! are idle job threads and hands them over on a channel. A job thread runs the kind's handler
//! and submits the outcome; the writer applies effects and the `succeeded` state together,
//! fenced by the lease token. There is no polling interval on this path.
//!
//! # Stuck handlers
//! The watchdog ends an attempt that outlives its kind's timeout: it records `timed_out`,
//! raises the attempt's [`CancelToken`] (so a child process can be killed), and starts a
//! replacement thread so the pool keeps its full concurrency. The stuck thread, when its
//! handler finally returns, finds its job gone from the in-flight table, drops the result and
//! exits. Who owns a job is decided by who removes it from that table, under its mutex.
//!
//! # Shutdown
//! [`Runner::shutdown`]: stop claiming; wait up to the grace period for running jobs; release
//! the leases of the rest (back to `available`, the attempt not counted); stop the threads.

use std::collections::{HashMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, select, unbounded};
use rusqlite::Connection;

use super::gates::{self, KindGates};
use super::job::{AttemptOutcome, ClaimedJob, JobId};
use super::retry::backoff_jittered;
use super::store::{self, FailureDisposition};
use super::writer::{Durability, Waker, WriterHandle};
use super::{QueueError, metrics::QueueMetrics};
use crate::clock::{Millis, SharedClock};

/// Default number of job threads (`VIBELEARN_RUNNER_THREADS`).
pub const DEFAULT_THREADS: usize = 4;
/// A claimed job's lease; extended by the watchdog's heartbeat while its attempt lives.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(60);
/// How often leases are extended: a third of the lease, so two heartbeats may be missed.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(20);
/// How long shutdown waits for running jobs (SPEC §5.6).
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// The dispatcher wakes at least this often, so `/api/health` can tell a live runner
/// (`last_tick_ms_ago`) from a wedged one.
const TICK: Duration = Duration::from_secs(1);
/// How often a job thread retries giving back jobs whose outcome could not be written.
const ORPHAN_RETRY: Duration = Duration::from_secs(1);
/// How often the watchdog compares paused gates' versions with the current ones (new
/// credentials resume a gate within this long, without a restart).
pub const GATE_CHECK: Duration = Duration::from_secs(3);

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
#[derive(Debug, Clone)]
pub struct CancelToken {
    cancelled: Arc<AtomicBool>,
    deadline: Instant,
}

impl CancelToken {
    pub fn new(timeout: Duration) -> CancelToken {
        CancelToken { cancelled: Arc::new(AtomicBool::new(false)), deadline: Instant::now() + timeout }
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed) || Instant::now() >= self.deadline
    }

    /// Time left before the watchdog gives up on this attempt.
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    fn cancel(&self) {
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
    pub fn new(timeout: Duration, max_attempts: u32) -> KindSpec {
        KindSpec { timeout, max_attempts, batch: 1 }
    }

    pub fn batched(self, batch: usize) -> KindSpec {
        KindSpec { batch: batch.max(1), ..self }
    }
}

/// The fingerprint of what a gate guards (e.g. a hash of the credentials); a paused gate
/// resumes when it changes. Called at runner start and by the watchdog, never by the writer.
pub type GateVersion = Arc<dyn Fn() -> String + Send + Sync>;

/// The handlers by kind name, and the gates kinds need (`queue::gates`).
#[derive(Default, Clone)]
pub struct Registry {
    kinds: HashMap<String, (KindSpec, Arc<dyn Handler>)>,
    /// kind → gate name.
    gates: KindGates,
    /// gate name → its version.
    gate_versions: HashMap<String, GateVersion>,
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

    pub fn kind_gates(&self) -> &KindGates {
        &self.gates
    }

    /// Every gate's current version.
    pub fn gate_versions(&self) -> HashMap<String, String> {
        self.gate_versions.iter().map(|(name, version)| (name.clone(), version())).collect()
    }
}

/// Settings of the runner.
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// Job threads; also the number of jobs running at once (stuck ones not counted).
    pub threads: usize,
    pub lease: Duration,
    pub heartbeat: Duration,
    pub shutdown_grace: Duration,
}

impl Default for RunnerConfig {
    fn default() -> Self {
        RunnerConfig {
            threads: DEFAULT_THREADS,
            lease: DEFAULT_LEASE,
            heartbeat: DEFAULT_HEARTBEAT,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
        }
    }
}

/// An attempt that a job thread is running.
struct InFlight {
    token: i64,
    kind: String,
    attempt: u32,
    deadline: Instant,
    timeout: Duration,
    cancel: CancelToken,
}

/// What a job thread receives.
enum Work {
    Run(ClaimedJob),
    Exit,
}

/// A finished attempt, waiting to be recorded.
struct Done {
    job: ClaimedJob,
    outcome: Outcome,
    /// The gate the job's kind needs, if any: a success proves it, a refusal pauses it.
    gate: Option<String>,
    /// For a refusal, the gate's version now (the credentials it paused under). Read on the
    /// job thread: a version may read a file, and the writer must not wait for that.
    gate_version: Option<String>,
}

/// State shared by the runner's threads.
struct Shared {
    config: RunnerConfig,
    registry: Registry,
    /// The registry's kind → gate map, shared with claims that run on the writer's thread.
    kind_gates: Arc<KindGates>,
    writer: WriterHandle,
    waker: Waker,
    clock: SharedClock,
    metrics: Arc<QueueMetrics>,
    /// Attempts being run. Written by the dispatcher (insert), job threads and the watchdog
    /// (remove — whoever removes an entry owns its outcome), shutdown (drain). A Mutex because
    /// three threads mutate it; each holds it for a map operation only.
    inflight: Mutex<HashMap<JobId, InFlight>>,
    /// Set once by shutdown; read by the dispatcher and the watchdog each turn.
    stopping: AtomicBool,
    /// When the runner started; `last_tick` counts from it on the monotonic clock, so a wall
    /// clock jump can neither fake a stall nor hide one.
    started: Instant,
    /// Monotonic ms since `started` of the dispatcher's last turn; written by the dispatcher,
    /// read by health.
    last_tick: AtomicI64,
    /// Live job threads, stuck ones included; written by job threads and the watchdog.
    live_threads: AtomicUsize,
    /// Job hand-off; the dispatcher sends, job threads receive. Shutdown sends one `Exit` per
    /// live thread (the channel never disconnects: every thread holds `Shared`).
    work_tx: Sender<Work>,
    work_rx: Receiver<Work>,
}

impl Shared {
    fn monotonic_ms(&self) -> Millis {
        self.started.elapsed().as_millis() as Millis
    }

    fn inflight(&self) -> MutexGuard<'_, HashMap<JobId, InFlight>> {
        // A panic while holding this lock happens only inside HashMap operations; the map is
        // still consistent, so recover it rather than wedge the runner.
        self.inflight.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A point-in-time view for `/api/health`.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct RunnerState {
    pub threads: usize,
    pub busy: usize,
    pub last_tick_ms_ago: Millis,
}

/// A cheap handle for reading the runner's state from other threads (health checks).
#[derive(Clone)]
pub struct RunnerProbe {
    shared: Arc<Shared>,
}

impl RunnerProbe {
    pub fn state(&self) -> RunnerState {
        RunnerState {
            threads: self.shared.config.threads,
            busy: self.shared.inflight().len(),
            last_tick_ms_ago: self.shared.monotonic_ms() - self.shared.last_tick.load(Ordering::Relaxed),
        }
    }
}

/// The running runner; [`Runner::shutdown`] stops it (also called on drop).
pub struct Runner {
    shared: Arc<Shared>,
    dispatcher: Option<JoinHandle<()>>,
    watchdog: Option<(Sender<()>, JoinHandle<()>)>,
}

impl Runner {
    /// Starts the dispatcher, the job threads and the watchdog.
    pub fn spawn(
        config: RunnerConfig,
        registry: Registry,
        writer: WriterHandle,
        waker: Waker,
        clock: SharedClock,
        metrics: Arc<QueueMetrics>,
    ) -> std::io::Result<Runner> {
        let (work_tx, work_rx) = unbounded();
        let shared = Arc::new(Shared {
            config: RunnerConfig { threads: config.threads.max(1), ..config },
            kind_gates: Arc::new(registry.kind_gates().clone()),
            registry,
            writer,
            waker,
            clock,
            metrics,
            inflight: Mutex::new(HashMap::new()),
            stopping: AtomicBool::new(false),
            started: Instant::now(),
            last_tick: AtomicI64::new(0),
            live_threads: AtomicUsize::new(0),
            work_tx,
            work_rx,
        });
        for _ in 0..shared.config.threads {
            spawn_job_thread(&shared)?;
        }
        let dispatcher = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new().name("vl-dispatcher".into()).spawn(move || dispatch_loop(&shared))?
        };
        let (stop_tx, stop_rx) = crossbeam_channel::bounded(1);
        let watchdog = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new().name("vl-watchdog".into()).spawn(move || watchdog_loop(&shared, &stop_rx))?
        };
        Ok(Runner { shared, dispatcher: Some(dispatcher), watchdog: Some((stop_tx, watchdog)) })
    }

    pub fn probe(&self) -> RunnerProbe {
        RunnerProbe { shared: Arc::clone(&self.shared) }
    }

    /// The shutdown protocol of the module doc. Returns how many leases were released.
    pub fn shutdown(&mut self) -> usize {
        let shared = &self.shared;
        if shared.stopping.swap(true, Ordering::SeqCst) {
            return 0;
        }
        shared.waker.wake();
        if let Some(dispatcher) = self.dispatcher.take() {
            let _ = dispatcher.join();
        }
        let give_up = Instant::now() + shared.config.shutdown_grace;
        while !shared.inflight().is_empty() && Instant::now() < give_up {
            std::thread::sleep(Duration::from_millis(10));
        }
        let abandoned: Vec<(JobId, InFlight)> = shared.inflight().drain().collect();
        let released = abandoned.len();
        for (id, flight) in abandoned {
            flight.cancel.cancel();
            let result = shared.writer.call(false, Durability::Durable, move |conn, now| {
                store::release_lease(conn, id, flight.token, now).map_err(QueueError::from)
            });
            if let Err(e) = result {
                log::warn!(target: "queue", "could not release job {id} at shutdown: {e}; it will be rescued at the next start");
            }
        }
        if let Some((stop, watchdog)) = self.watchdog.take() {
            let _ = stop.send(());
            let _ = watchdog.join();
        }
        // Idle job threads take an Exit each. Threads still inside a handler are not joined:
        // they find their job gone from the in-flight table and exit on their own.
        for _ in 0..shared.live_threads.load(Ordering::SeqCst) {
            let _ = shared.work_tx.send(Work::Exit);
        }
        released
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn spawn_job_thread(shared: &Arc<Shared>) -> std::io::Result<()> {
    let thread_shared = Arc::clone(shared);
    shared.live_threads.fetch_add(1, Ordering::SeqCst);
    let spawned = std::thread::Builder::new().name("vl-job".into()).spawn(move || {
        job_thread_loop(&thread_shared);
        thread_shared.live_threads.fetch_sub(1, Ordering::SeqCst);
    });
    if let Err(e) = spawned {
        shared.live_threads.fetch_sub(1, Ordering::SeqCst);
        return Err(e);
    }
    Ok(())
}

fn dispatch_loop(shared: &Shared) {
    let mut next_due: Option<Millis> = None;
    loop {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        shared.last_tick.store(shared.monotonic_ms(), Ordering::Relaxed);
        let now = shared.clock.now_ms();
        let free = shared.config.threads.saturating_sub(shared.inflight().len());
        if free > 0 {
            match claim_batch(shared, free) {
                Ok((jobs, due)) => {
                    next_due = due;
                    let full = jobs.len() == free;
                    hand_over(shared, jobs);
                    if full {
                        // There may be more waiting; the completions of these will wake us.
                        next_due = None;
                    }
                }
                Err(e) => {
                    log::warn!(target: "queue", "claim failed: {e}; retrying in a second");
                    next_due = Some(now + 1000);
                }
            }
        }
        let wait = next_due
            .map(|due| Duration::from_millis((due - shared.clock.now_ms()).max(0) as u64))
            .unwrap_or(TICK)
            .min(TICK);
        select! {
            recv(shared.waker.receiver()) -> _ => {}
            default(wait) => {}
        }
    }
}

/// Asks the writer to promote due retryable jobs (the scheduler's step) and claim up to `max`.
fn claim_batch(shared: &Shared, max: usize) -> Result<(Vec<ClaimedJob>, Option<Millis>), QueueError> {
    let lease_ms = shared.config.lease.as_millis() as Millis;
    let gates = Arc::clone(&shared.kind_gates);
    shared.writer.call(false, Durability::Relaxed, move |conn, now| {
        super::maintenance::Scheduler::run_once(conn, now)?;
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
fn register(shared: &Shared, job: &ClaimedJob) {
    let timeout = shared.registry.spec(&job.kind).map(|s| s.timeout).unwrap_or(Duration::from_secs(60));
    shared.inflight().insert(
        job.id,
        InFlight {
            token: job.lease_token,
            kind: job.kind.clone(),
            attempt: job.attempt,
            deadline: Instant::now() + timeout,
            timeout,
            cancel: CancelToken::new(timeout),
        },
    );
    shared.metrics.started(&job.kind, job.claimed_at - job.run_at);
}

fn job_thread_loop(shared: &Shared) {
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

/// Records outcomes without waiting for the commit.
fn submit_outcomes(shared: &Shared, finished: Vec<Done>) {
    if finished.is_empty() {
        return;
    }
    let submitted = shared.writer.submit(true, Durability::Relaxed, move |conn, now| {
        for done in finished {
            apply_outcome(conn, done, now)?;
        }
        Ok(())
    });
    if let Err(e) = submitted {
        log::warn!(target: "queue", "could not record job outcomes: {e}; their leases will expire and they will be rescued");
    }
}

/// Runs one claimed job; `None` when its attempt was taken away (timed out) meanwhile.
fn run_one(shared: &Shared, job: ClaimedJob) -> Option<Done> {
    // The attempt's clock starts now, not at the claim: a job may wait briefly in the
    // hand-off channel when a thread and the dispatcher both claimed for the same slot.
    let cancel = {
        let mut inflight = shared.inflight();
        let flight = inflight.get_mut(&job.id)?;
        flight.deadline = Instant::now() + flight.timeout;
        flight.cancel = CancelToken::new(flight.timeout);
        flight.cancel.clone()
    };
    let started = Instant::now();
    let outcome = match shared.registry.kinds.get(&job.kind) {
        Some((_, handler)) => catch_unwind(AssertUnwindSafe(|| handler.run(&job, &cancel)))
            .unwrap_or_else(|panic| Outcome::retry(format!("the handler panicked: {}", panic_message(&panic)))),
        None => Outcome::dead(format!("no handler is registered for job kind {:?}", job.kind)),
    };
    let elapsed = started.elapsed();
    // Whoever removes the entry owns the outcome: if the watchdog got there first, this
    // attempt already counts as timed out and a replacement thread exists.
    if shared.inflight().remove(&job.id).is_none() {
        log::info!(target: "queue", "job {} finished after its timeout; late result dropped", job.id);
        return None;
    }
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
        for done in finished {
            apply_outcome(conn, done, now)?;
        }
        if !claim_next {
            return Ok(Vec::new());
        }
        super::maintenance::Scheduler::run_once(conn, now)?;
        let mut next =
            if batch > 1 { store::claim_gated(conn, batch, now, lease_ms, Some(&kind), &gates)? } else { Vec::new() };
        if next.is_empty() {
            next = store::claim_gated(conn, 1, now, lease_ms, None, &gates)?;
        }
        Ok(next)
    });
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
fn rescue_when_writable(shared: &Shared, attempts: Vec<(JobId, i64)>) {
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

/// Runs in the writer: records an attempt's outcome, fenced by its lease token.
fn apply_outcome(conn: &Connection, done: Done, now: Millis) -> Result<(), QueueError> {
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
    super::writer::exec_cached(conn, "SAVEPOINT effects")?;
    if !store::complete_success(conn, id, token, result.as_ref(), output_changed, now)? {
        conn.execute_batch("ROLLBACK TO effects; RELEASE effects")?;
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
            super::writer::exec_cached(conn, "RELEASE effects")?;
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

fn watchdog_loop(shared: &Arc<Shared>, stop: &Receiver<()>) {
    let mut next_heartbeat = Instant::now() + shared.config.heartbeat;
    let mut next_gate_check = Instant::now() + GATE_CHECK;
    loop {
        let now = Instant::now();
        let next_deadline = shared.inflight().values().map(|f| f.deadline).min();
        let wake_at = next_deadline.map_or(next_heartbeat, |d| d.min(next_heartbeat)).min(now + TICK);
        match stop.recv_timeout(wake_at.saturating_duration_since(now)) {
            Ok(()) | Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
        }
        time_out_expired(shared);
        if Instant::now() >= next_heartbeat {
            heartbeat(shared);
            next_heartbeat = Instant::now() + shared.config.heartbeat;
        }
        if Instant::now() >= next_gate_check && !shared.registry.gate_versions.is_empty() {
            resume_gates_with_new_versions(&shared.registry, &shared.writer, &shared.waker);
            next_gate_check = Instant::now() + GATE_CHECK;
        }
    }
}

/// Resumes every paused gate whose version changed (new credentials: `queue::gates`). The
/// versions are read here, on the calling thread; only the comparison runs in the writer.
pub(super) fn resume_gates_with_new_versions(registry: &Registry, writer: &WriterHandle, waker: &Waker) {
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

/// Ends attempts past their deadline and replaces their threads. Returns how many.
fn time_out_expired(shared: &Arc<Shared>) -> usize {
    let now = Instant::now();
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
            let at = now + backoff_jittered(attempt).as_millis() as Millis;
            store::fail_attempt(
                conn,
                id,
                token,
                AttemptOutcome::TimedOut,
                &error,
                FailureDisposition::RetryAt(at),
                now,
            )?;
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
        let submitted = shared.writer.submit_or(true, Durability::Relaxed, record, give_back);
        if let Err(e) = submitted {
            log::warn!(target: "queue", "could not record the timeout of job {id}: {e}");
        }
        if let Err(e) = spawn_job_thread(shared) {
            log::error!(target: "queue", "could not start a replacement job thread: {e}");
        }
    }
    expired.len()
}

fn heartbeat(shared: &Shared) {
    let leases: Vec<(JobId, i64)> = shared.inflight().iter().map(|(id, f)| (*id, f.token)).collect();
    if leases.is_empty() {
        return;
    }
    let lease_ms = shared.config.lease.as_millis() as Millis;
    let submitted = shared.writer.submit(false, Durability::Relaxed, move |conn, now| {
        store::extend_leases(conn, &leases, now + lease_ms)?;
        Ok(())
    });
    if let Err(e) = submitted {
        log::warn!(target: "queue", "lease heartbeat failed: {e}");
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}
