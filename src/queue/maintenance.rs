//! The queue's maintenance services, each a small component with a config and a pure-ish
//! `run_once(conn, now)` that tests call directly:
//! - [`Scheduler`]: retryable jobs whose `run_at` came become available (run by the dispatcher
//!   before every claim, so a due retry never waits for a timer);
//! - [`Rescuer`]: running jobs whose lease expired go back to available (or dead);
//! - [`Pruner`]: finished jobs past retention are deleted and free pages given back.
//!
//! [`Maintainer`] is the one thread that runs the rescuer and the pruner on their intervals,
//! and the [`Task`]s its owner adds (the queue knows nothing of what they do: the worker adds
//! the retention of VibeLearn's captures, `crate::retention`).

use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, bounded};
use rusqlite::Connection;

use super::QueueError;
use super::store::{self, RescueScope, Retention};
use super::writer::{Durability, WriterHandle};
use crate::clock::Millis;

/// Promotes due retryable jobs.
pub struct Scheduler;

impl Scheduler {
    pub fn run_once(conn: &Connection, now: Millis) -> Result<usize, QueueError> {
        Ok(store::promote_due_retryable(conn, now)?)
    }
}

/// How often the rescuer looks for expired leases.
pub const DEFAULT_RESCUE_INTERVAL: Duration = Duration::from_secs(30);

/// Takes back running jobs whose lease expired (their thread died without a word).
pub struct Rescuer;

impl Rescuer {
    pub fn run_once(conn: &Connection, now: Millis) -> Result<usize, QueueError> {
        Ok(store::rescue(conn, RescueScope::ExpiredLeases, now)?.len())
    }

    /// At startup, with the single-instance lock held: every `running` job belongs to a
    /// process that is gone.
    pub fn rescue_all_running(conn: &Connection, now: Millis) -> Result<usize, QueueError> {
        Ok(store::rescue(conn, RescueScope::AllRunning, now)?.len())
    }
}

/// Default retention of succeeded and cancelled jobs (SPEC §5.3).
pub const DEFAULT_RETENTION_SUCCEEDED: Duration = Duration::from_secs(24 * 3600);
/// Default retention of dead jobs.
pub const DEFAULT_RETENTION_DEAD: Duration = Duration::from_secs(30 * 24 * 3600);
/// How often the pruner runs.
pub const DEFAULT_PRUNE_INTERVAL: Duration = Duration::from_secs(600);
/// Pages given back per prune: bounds the time one vacuum step holds the write lock.
const VACUUM_PAGES_PER_RUN: u32 = 2000;

/// Deletes finished jobs past retention.
pub struct Pruner {
    pub retention: Retention,
}

impl Pruner {
    pub fn run_once(&self, conn: &Connection, now: Millis) -> Result<usize, QueueError> {
        let pruned = store::prune(conn, self.retention, now)?;
        if pruned > 0 {
            // incremental_vacuum returns a row per page freed; step through them.
            let mut stmt = conn.prepare(&format!("PRAGMA incremental_vacuum({VACUUM_PAGES_PER_RUN})"))?;
            let mut rows = stmt.query([])?;
            while rows.next()?.is_some() {}
        }
        Ok(pruned)
    }
}

/// One step of a [`Task`], run in the writer's transaction: how many things it did, and
/// whether it has more to do now (then the thread runs it again at once, each step its own
/// transaction, so the writer serves others between steps).
pub type TaskStep = dyn Fn(&Connection, Millis) -> Result<TaskProgress, QueueError> + Send + Sync;

/// What one step of a [`Task`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskProgress {
    pub done: usize,
    pub more: bool,
}

/// A periodic job of the maintenance thread that its owner defines.
#[derive(Clone)]
pub struct Task {
    /// For the log.
    pub name: &'static str,
    pub interval: Duration,
    /// At most this many steps a run (bounds one run however much there is to do).
    pub max_steps: usize,
    pub step: std::sync::Arc<TaskStep>,
}

impl std::fmt::Debug for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Task").field("name", &self.name).field("interval", &self.interval).finish_non_exhaustive()
    }
}

/// Settings of the maintenance thread.
#[derive(Debug, Clone)]
pub struct MaintainerConfig {
    pub rescue_interval: Duration,
    pub prune_interval: Duration,
    pub retention: Retention,
    pub tasks: Vec<Task>,
}

impl Default for MaintainerConfig {
    fn default() -> Self {
        MaintainerConfig {
            rescue_interval: DEFAULT_RESCUE_INTERVAL,
            prune_interval: DEFAULT_PRUNE_INTERVAL,
            retention: Retention {
                succeeded_ms: DEFAULT_RETENTION_SUCCEEDED.as_millis() as Millis,
                dead_ms: DEFAULT_RETENTION_DEAD.as_millis() as Millis,
            },
            tasks: Vec::new(),
        }
    }
}

/// The thread running [`Rescuer`] and [`Pruner`]; stops when dropped.
pub struct Maintainer {
    stop: Option<Sender<()>>,
    join: Option<JoinHandle<()>>,
}

impl Maintainer {
    /// Prunes once, then starts the thread. The first prune is done before this returns, so a
    /// worker that marks itself ready after `spawn` never has a job it finished after that
    /// moment taken by the prune of its own start (with a retention of 0 it took jobs a client
    /// had just seen succeed, when the thread's first turn came late).
    pub fn spawn(config: MaintainerConfig, writer: WriterHandle) -> std::io::Result<Maintainer> {
        prune(config.retention, &writer);
        let (stop_tx, stop_rx) = bounded(1);
        let join = std::thread::Builder::new()
            .name("vl-maintenance".into())
            .spawn(move || maintain(config, writer, stop_rx))?;
        Ok(Maintainer { stop: Some(stop_tx), join: Some(join) })
    }
}

impl Drop for Maintainer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(join) = self.join.take() {
            let _ = join.join();
        }
    }
}

fn maintain(config: MaintainerConfig, writer: WriterHandle, stop: Receiver<()>) {
    let tick =
        config.tasks.iter().map(|t| t.interval).fold(config.rescue_interval.min(config.prune_interval), Duration::min);
    let mut since_prune = Duration::ZERO; // pruned once by `spawn`
    let mut since_task: Vec<Duration> = config.tasks.iter().map(|t| t.interval).collect(); // each once at startup
    loop {
        if since_prune >= config.prune_interval {
            prune(config.retention, &writer);
            since_prune = Duration::ZERO;
        }
        for (task, since) in config.tasks.iter().zip(since_task.iter_mut()) {
            if *since >= task.interval {
                run_task(task, &writer);
                *since = Duration::ZERO;
            }
        }
        match writer.call(true, Durability::Relaxed, Rescuer::run_once) {
            Ok(n) if n > 0 => log::warn!(target: "queue", "rescued {n} jobs whose lease expired"),
            Ok(_) => {}
            Err(e) => log::warn!(target: "queue", "lease rescue failed: {e}"),
        }
        match stop.recv_timeout(tick) {
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                since_prune += tick;
                since_task.iter_mut().for_each(|since| *since += tick);
            }
            _ => return,
        }
    }
}

/// One [`Pruner`] pass through the writer; a failure is logged, and the next pass tries again.
fn prune(retention: Retention, writer: &WriterHandle) {
    match writer.call(false, Durability::Durable, move |conn, now| Pruner { retention }.run_once(conn, now)) {
        Ok(n) if n > 0 => log::info!(target: "queue", "pruned {n} finished jobs"),
        Ok(_) => {}
        Err(e) => log::warn!(target: "queue", "pruning failed: {e}"),
    }
}

/// Runs `task` through the writer, step after step while it has more, up to its bound.
fn run_task(task: &Task, writer: &WriterHandle) {
    let mut done = 0;
    for _ in 0..task.max_steps.max(1) {
        let step = task.step.clone();
        match writer.call(false, Durability::Durable, move |conn, now| step(conn, now)) {
            Ok(progress) => {
                done += progress.done;
                if !progress.more {
                    break;
                }
            }
            Err(e) => {
                log::warn!(target: "queue", "{} failed: {e}", task.name);
                break;
            }
        }
    }
    if done > 0 {
        log::info!(target: "queue", "{}: {done}", task.name);
    }
}
