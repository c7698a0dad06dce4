//! The durable job queue, as a library that knows nothing about VibeLearn: kinds, lanes and
//! unique keys are opaque strings, payloads opaque JSON.
//!
//! - [`job`]: row types and the state machine (docs/state_machine.md)
//! - [`deps`]: dependencies between jobs (held, released, re-opened, cancelled together)
//! - [`gates`]: named conditions kinds need (a remote's credentials): paused, resumed
//! - [`store`]: the SQL of every queue operation
//! - [`writer`]: the single writing thread and its group-commit protocol (replies through
//!   `oneshot`)
//! - [`runner`]: dispatcher, job threads, watchdog (one file each, turns on an injected
//!   monotonic clock); the [`Handler`](runner::Handler) trait
//! - [`maintenance`]: scheduler, rescuer, pruner
//! - [`retry`]: backoff and failure classification
//! - [`metrics`]: counters for `/metrics`
//!
//! [`Queue`] is the handle everything else uses: enqueue and admin operations go through the
//! writer; reads use a small pool of read connections (WAL readers never block the writer).

/// `$state` (a column, as `"state"` or `"j.state"`) is a state that keeps a job in its lane:
/// available, running or retryable, written exactly as the `jobs_lane_active` index's WHERE
/// (migration 0010), so that the planner can use that partial index. An IN list of three
/// constants would cost SQLite an ephemeral b-tree per statement run.
macro_rules! lane_active {
    ($state:literal) => {
        concat!("(", $state, " = 'available' OR ", $state, " = 'running' OR ", $state, " = 'retryable')")
    };
}
pub(crate) use lane_active;

pub(crate) mod counts;
pub mod deps;
pub mod gates;
pub mod job;
pub mod maintenance;
pub mod metrics;
mod oneshot;
pub mod retry;
pub mod runner;
pub mod store;
pub mod writer;

use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::Connection;

pub use gates::{Gate, GateState, Resumed};
pub use job::{ClaimedJob, Enqueued, InlineRun, Job, JobId, JobState, NewJob, UniqueScope, WaitingOn};
pub use runner::{CancelToken, Effects, Handler, KindSpec, Outcome, Registry, Runner, RunnerConfig};
pub use writer::{Durability, Waker, WriterConfig, WriterHandle};

use crate::clock::{Millis, SharedClock};
use crate::db::{self, Synchronous};
use metrics::QueueMetrics;
use store::{ListFilter, Retention, Stats};

/// Read connections kept open for the HTTP read routes and job handlers.
pub const READ_POOL_SIZE: u32 = 8;

/// Failures of queue operations, each phrased for the person who will see it, keeping its
/// cause. Clone because the writer answers every waiter of a failed group commit with the same
/// error; the causes are shared (`Arc`) for that.
#[derive(Debug, Clone, thiserror::Error)]
pub enum QueueError {
    /// The writer's backlog stayed full for the whole send timeout.
    #[error("the job queue's write backlog is full; try again shortly")]
    Full,
    /// The writer thread is gone (shutting down, or it crashed).
    #[error("the job queue is shutting down")]
    WriterGone,
    /// Another process held the database's write lock past the busy timeout.
    #[error("the database is locked by another process ({0}); try again")]
    Busy(#[source] Arc<rusqlite::Error>),
    /// Any other database failure.
    #[error("database error: {0}")]
    Database(#[source] Arc<rusqlite::Error>),
    /// No read connection could be had from the pool.
    #[error("no database connection available: {0}")]
    Pool(#[source] Arc<r2d2::Error>),
    /// A queue thread (the writer, a job thread) could not be started.
    #[error("cannot start the {thread}: {source}")]
    Thread { thread: &'static str, source: Arc<std::io::Error> },
    /// The caller's own validation refused what it was about to enqueue.
    #[error("{0}")]
    Rejected(String),
}

impl From<rusqlite::Error> for QueueError {
    fn from(e: rusqlite::Error) -> Self {
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                QueueError::Busy(Arc::new(e))
            }
            _ => QueueError::Database(Arc::new(e)),
        }
    }
}

impl From<r2d2::Error> for QueueError {
    fn from(e: r2d2::Error) -> Self {
        QueueError::Pool(Arc::new(e))
    }
}

/// A read connection from the pool.
pub type ReadConn = r2d2::PooledConnection<SqliteConnectionManager>;

/// The handle to a running queue: clone it freely.
#[derive(Clone)]
pub struct Queue {
    writer: WriterHandle,
    reads: r2d2::Pool<SqliteConnectionManager>,
    clock: SharedClock,
    waker: Waker,
    metrics: Arc<QueueMetrics>,
    /// When the last enqueue failed on the database (disk full, read-only, locked…), cleared
    /// by the next enqueue that commits: health's "the database cannot be written" must not
    /// rest on its own small probe write alone, which can still fit when an event no longer does.
    enqueue_failed_at: Arc<std::sync::Mutex<Option<std::time::Instant>>>,
}

/// The writer thread of a [`Queue`]; [`QueueThread::stop`] checkpoints and joins it.
pub struct QueueThread {
    writer: WriterHandle,
    join: Option<JoinHandle<()>>,
}

impl QueueThread {
    pub fn stop(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        if let Some(join) = self.join.take() {
            self.writer.stop();
            let _ = join.join();
        }
    }
}

impl Drop for QueueThread {
    fn drop(&mut self) {
        self.stop_now();
    }
}

impl Queue {
    /// Starts the writer on `conn` (already opened and migrated by [`db::open_and_migrate`])
    /// and a read pool on the same file.
    pub fn start(
        conn: Connection,
        path: &Path,
        synchronous: Synchronous,
        config: WriterConfig,
        clock: SharedClock,
    ) -> Result<(Queue, QueueThread), QueueError> {
        let waker = Waker::default();
        let manager = SqliteConnectionManager::file(path).with_init(|c| {
            c.busy_timeout(db::BUSY_TIMEOUT)?;
            c.set_prepared_statement_cache_capacity(db::STATEMENT_CACHE);
            c.pragma_update(None, "foreign_keys", true)
        });
        let reads = r2d2::Pool::builder().max_size(READ_POOL_SIZE).min_idle(Some(1)).build(manager)?;
        let (writer, join) = writer::spawn(conn, synchronous, config, Arc::clone(&clock), waker.clone())
            .map_err(|e| QueueError::Thread { thread: "writer thread", source: Arc::new(e) })?;
        let queue = Queue {
            writer: writer.clone(),
            reads,
            clock,
            waker,
            metrics: Arc::default(),
            enqueue_failed_at: Arc::default(),
        };
        Ok((queue, QueueThread { writer, join: Some(join) }))
    }

    /// Starts the runner over this queue. Rescues every job a previous process left `running`
    /// first: the caller must hold the single-instance lock.
    pub fn start_runner(&self, config: RunnerConfig, registry: Registry) -> Result<Runner, QueueError> {
        let rescued = self.writer.call(true, Durability::Durable, maintenance::Rescuer::rescue_all_running)?;
        if rescued > 0 {
            log::warn!(target: "queue", "rescued {rescued} jobs left running by a previous process");
        }
        // Credentials may have changed while nothing ran: proven gates are unproven again, and
        // paused ones whose version changed resume.
        self.writer.call(false, Durability::Durable, |conn, now| Ok(gates::forget_proofs(conn, now)?))?;
        runner::resume_gates_with_new_versions(&registry, &self.writer, &self.waker);
        Runner::spawn(
            config,
            registry,
            self.writer.clone(),
            self.waker.clone(),
            Arc::clone(&self.clock),
            Arc::clone(&self.metrics),
        )
        .map_err(|e| QueueError::Thread { thread: "job threads", source: Arc::new(e) })
    }

    pub fn writer(&self) -> &WriterHandle {
        &self.writer
    }

    pub fn metrics(&self) -> &QueueMetrics {
        &self.metrics
    }

    pub fn now(&self) -> Millis {
        self.clock.now_ms()
    }

    /// A read connection.
    pub fn read(&self) -> Result<ReadConn, QueueError> {
        Ok(self.reads.get()?)
    }

    /// Enqueues one job; returns once it is durably committed. A job that ran inline
    /// ([`NewJob::inline`]) is committed done; only a job left waiting wakes the dispatcher.
    pub fn enqueue(&self, job: NewJob) -> Result<Enqueued, QueueError> {
        let kind = job.kind.clone();
        let may_run_inline = job.inline.is_some();
        let job = job.prepare();
        let enqueued = self
            .writer
            .call(!may_run_inline, Durability::Durable, move |conn, now| Ok(store::enqueue(conn, job, now)?));
        self.note_enqueue(&enqueued);
        let enqueued = enqueued?;
        self.count(&kind, &enqueued);
        if may_run_inline && !enqueued.ran_inline && !enqueued.deduplicated {
            self.waker.wake();
        }
        Ok(enqueued)
    }

    /// Metrics of one enqueue: a job that ran inline also started and succeeded.
    fn count(&self, kind: &str, enqueued: &Enqueued) {
        if enqueued.deduplicated {
            return;
        }
        self.metrics.enqueued(kind);
        if enqueued.ran_inline {
            self.metrics.started(kind, 0);
            self.metrics.finished(kind, &Outcome::Succeeded { result: None, effects: None }, std::time::Duration::ZERO);
        }
    }

    /// Enqueues several jobs in one transaction, in order (a lane's order is their order).
    pub fn enqueue_all(&self, jobs: Vec<NewJob>) -> Result<Vec<Enqueued>, QueueError> {
        let kinds: Vec<String> = jobs.iter().map(|j| j.kind.clone()).collect();
        let jobs: Vec<_> = jobs.into_iter().map(NewJob::prepare).collect();
        let enqueued = self.writer.call(true, Durability::Durable, move |conn, now| {
            jobs.into_iter().map(|job| Ok(store::enqueue(conn, job, now)?)).collect::<Result<Vec<_>, QueueError>>()
        });
        self.note_enqueue(&enqueued);
        let enqueued = enqueued?;
        for (kind, e) in kinds.iter().zip(&enqueued) {
            self.count(kind, e);
        }
        Ok(enqueued)
    }

    fn note_enqueue<T>(&self, outcome: &Result<T, QueueError>) {
        let mut failed_at = self.enqueue_failed_at.lock().unwrap_or_else(|p| p.into_inner());
        match outcome {
            Ok(_) => *failed_at = None,
            Err(QueueError::Database(_) | QueueError::Busy(_)) => *failed_at = Some(std::time::Instant::now()),
            Err(_) => {}
        }
    }

    /// Whether an enqueue failed on the database within `window` and none has committed since.
    pub fn enqueues_failing(&self, window: std::time::Duration) -> bool {
        self.enqueue_failed_at.lock().unwrap_or_else(|p| p.into_inner()).is_some_and(|at| at.elapsed() < window)
    }

    pub fn replay(&self, ids: Vec<JobId>) -> Result<Vec<JobId>, QueueError> {
        self.writer.call(true, Durability::Durable, move |conn, now| Ok(store::replay(conn, &ids, now)?))
    }

    pub fn replay_matching(
        &self,
        state: JobState,
        kind: Option<String>,
        since: Option<Millis>,
    ) -> Result<Vec<JobId>, QueueError> {
        self.writer.call(true, Durability::Durable, move |conn, now| {
            Ok(store::replay_matching(conn, state, kind.as_deref(), since, now)?)
        })
    }

    /// Resumes the paused gate `name` (or every paused gate): its held jobs become available
    /// and the jobs it refused are replayed (`queue::gates`).
    pub fn resume(&self, name: Option<String>) -> Result<Resumed, QueueError> {
        self.writer.call(true, Durability::Durable, move |conn, now| Ok(gates::resume(conn, name.as_deref(), now)?))
    }

    /// Every gate that has a row, with the jobs held on it.
    pub fn gates(&self) -> Result<Vec<Gate>, QueueError> {
        Ok(gates::list(&*self.read()?)?)
    }

    pub fn cancel(&self, ids: Vec<JobId>) -> Result<Vec<JobId>, QueueError> {
        self.writer.call(true, Durability::Durable, move |conn, now| Ok(store::cancel(conn, &ids, now)?))
    }

    pub fn prune(&self, retention: Retention) -> Result<usize, QueueError> {
        self.writer
            .call(false, Durability::Durable, move |conn, now| maintenance::Pruner { retention }.run_once(conn, now))
    }

    pub fn list(&self, filter: &ListFilter) -> Result<(Vec<Job>, Option<JobId>), QueueError> {
        Ok(store::list(&*self.read()?, filter)?)
    }

    pub fn get(&self, id: JobId) -> Result<Option<Job>, QueueError> {
        Ok(store::get(&*self.read()?, id)?)
    }

    pub fn stats(&self) -> Result<Stats, QueueError> {
        Ok(store::stats(&*self.read()?, self.now())?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_failure_keeps_its_cause_behind_the_users_message() {
        let busy = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY), None);
        let error = QueueError::from(busy);
        assert!(matches!(error, QueueError::Busy(_)), "{error:?}");
        assert!(error.to_string().starts_with("the database is locked by another process"), "{error}");
        let cause = std::error::Error::source(&error).expect("the SQLite error is kept");
        assert!(cause.to_string().contains("database is locked"), "{cause}");
        let full = QueueError::from(rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(13), None));
        assert!(matches!(full, QueueError::Database(_)) && std::error::Error::source(&full).is_some());
    }
}
