//! The runner: the dispatcher thread ([`dispatcher`]), the job-thread pool ([`job_thread`]) and
//! the watchdog ([`watchdog`]), and the [`Handler`] trait that job kinds implement
//! ([`handler`]). The dispatcher and the watchdog each have a `run_once` turn that takes its
//! time from the runner's injected monotonic clock (`RunnerConfig::monotonic`), so their unit
//! tests drive them without threads or sleeps.
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

mod dispatcher;
mod handler;
mod job_thread;
pub mod reprobe;
mod watchdog;

pub use handler::{CancelToken, EffectError, Effects, GateProbe, GateVersion, Handler, KindSpec, Outcome, Registry};
pub(super) use watchdog::resume_gates_with_new_versions;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, unbounded};

use super::gates::KindGates;
use super::job::{ClaimedJob, JobId};
use super::store;
use super::writer::{Durability, Waker, WriterHandle};
use super::{QueueError, metrics::QueueMetrics};
use crate::clock::{Millis, SharedClock, SharedMonotonic, SystemMonotonic};

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

/// Settings of the runner.
#[derive(Clone)]
pub struct RunnerConfig {
    /// Job threads; also the number of jobs running at once (stuck ones not counted).
    pub threads: usize,
    pub lease: Duration,
    pub heartbeat: Duration,
    pub shutdown_grace: Duration,
    /// The clock of deadlines, timeouts, heartbeats and liveness (never the wall clock, which
    /// jumps); a test injects a `ManualMonotonic`.
    pub monotonic: SharedMonotonic,
}

impl std::fmt::Debug for RunnerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunnerConfig")
            .field("threads", &self.threads)
            .field("lease", &self.lease)
            .field("heartbeat", &self.heartbeat)
            .field("shutdown_grace", &self.shutdown_grace)
            .finish_non_exhaustive()
    }
}

impl Default for RunnerConfig {
    fn default() -> Self {
        RunnerConfig {
            threads: DEFAULT_THREADS,
            lease: DEFAULT_LEASE,
            heartbeat: DEFAULT_HEARTBEAT,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            monotonic: Arc::new(SystemMonotonic),
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

/// State shared by the runner's threads.
struct Shared {
    config: RunnerConfig,
    registry: Registry,
    /// The registry's kind → gate map, shared with claims that run on the writer's thread.
    kind_gates: Arc<KindGates>,
    writer: WriterHandle,
    waker: Waker,
    clock: SharedClock,
    /// `config.monotonic`, at hand.
    monotonic: SharedMonotonic,
    metrics: Arc<QueueMetrics>,
    /// When each paused gate with a probe is tried again: the watchdog starts probes, their
    /// threads report back (`reprobe`).
    reprobe: Arc<Mutex<reprobe::Reprobe>>,
    /// Attempts being run. Written by the dispatcher (insert), job threads and the watchdog
    /// (remove — whoever removes an entry owns its outcome), shutdown (drain). A Mutex because
    /// three threads mutate it; each holds it for a map operation only.
    inflight: Mutex<HashMap<JobId, InFlight>>,
    /// Attempts whose handler finished but whose outcome is not recorded yet (job → lease
    /// token): it may wait in its thread's batch while the thread runs the next jobs it
    /// claimed, then in the writer's backlog. Job threads insert (when they take the outcome
    /// from `inflight`) and remove (once the writer answered); the watchdog's heartbeat reads
    /// it, so such a lease never lapses — a lapsed one would be rescued and run again, and
    /// the real outcome dropped by the lease fence. An `Arc` because the removal also runs on
    /// the writer's thread, after the commit of a background submit.
    unrecorded: Arc<Mutex<HashMap<JobId, i64>>>,
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
    fn new(
        config: RunnerConfig,
        registry: Registry,
        writer: WriterHandle,
        waker: Waker,
        clock: SharedClock,
        metrics: Arc<QueueMetrics>,
    ) -> Arc<Shared> {
        let (work_tx, work_rx) = unbounded();
        let monotonic = Arc::clone(&config.monotonic);
        Arc::new(Shared {
            config: RunnerConfig { threads: config.threads.max(1), ..config },
            kind_gates: Arc::new(registry.kind_gates().clone()),
            registry,
            writer,
            waker,
            clock,
            metrics,
            reprobe: Arc::default(),
            inflight: Mutex::new(HashMap::new()),
            unrecorded: Arc::default(),
            stopping: AtomicBool::new(false),
            started: monotonic.now(),
            monotonic,
            last_tick: AtomicI64::new(0),
            live_threads: AtomicUsize::new(0),
            work_tx,
            work_rx,
        })
    }

    fn monotonic_ms(&self) -> Millis {
        self.monotonic.now().saturating_duration_since(self.started).as_millis() as Millis
    }

    fn inflight(&self) -> MutexGuard<'_, HashMap<JobId, InFlight>> {
        // A panic while holding this lock happens only inside HashMap operations; the map is
        // still consistent, so recover it rather than wedge the runner.
        self.inflight.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn unrecorded(&self) -> MutexGuard<'_, HashMap<JobId, i64>> {
        lock_unrecorded(&self.unrecorded)
    }
}

/// The `unrecorded` table, recovered from poisoning like `inflight` (map operations only).
fn lock_unrecorded(table: &Mutex<HashMap<JobId, i64>>) -> MutexGuard<'_, HashMap<JobId, i64>> {
    table.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
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
        let shared = Shared::new(config, registry, writer, waker, clock, metrics);
        for _ in 0..shared.config.threads {
            spawn_job_thread(&shared)?;
        }
        let dispatcher = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new().name("vl-dispatcher".into()).spawn(move || dispatcher::run(&shared))?
        };
        let (stop_tx, stop_rx) = crossbeam_channel::bounded(1);
        let watchdog = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new().name("vl-watchdog".into()).spawn(move || watchdog::run(&shared, &stop_rx))?
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
        // Real time, not the injected clock: this loop really waits (and a test's manual clock
        // might never reach the grace period).
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
        job_thread::run(&thread_shared);
        thread_shared.live_threads.fetch_sub(1, Ordering::SeqCst);
    });
    if let Err(e) = spawned {
        shared.live_threads.fetch_sub(1, Ordering::SeqCst);
        return Err(e);
    }
    Ok(())
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

#[cfg(test)]
mod tests;
