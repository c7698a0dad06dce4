//! The worker process: single-instance lock, database, queue, runner, HTTP server, signals,
//! and the shutdown protocol (SPEC §5.4, §5.6).
//!
//! # Startup
//! 0. Make the data dir owner-only (0700, its files 0600; SPEC §4 "the disk"), logging once
//!    what an older version had left loose. Read or make the key files, once.
//! 1. Take an exclusive OS lock on `<data>/worker.lock` (non-blocking). Held: another worker
//!    owns this data dir; say so and exit 0. The lock, not a PID file, decides; the OS drops it
//!    when the process dies, however it dies.
//! 2. Open and migrate the database (pragmas checked), start the writer.
//! 3. Bind the HTTP port. A port another process holds is a clear error naming it (its pid
//!    where the OS tells), exit 1: the worker never races a squatter for its port.
//! 4. Rescue jobs a previous process left `running`, start the runner, mark ready.
//!
//! # Shutdown
//! On SIGTERM/SIGINT or `POST /api/admin/shutdown`: stop taking HTTP requests (in-flight ones
//! finish), stop claiming, give running jobs up to 10 s, release the rest without costing an
//! attempt, checkpoint the WAL, remove `worker.pid`, exit 0.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::db;
use crate::http::{AppContext, HttpServer};
use crate::intake::IntakeSettings;
use crate::platform::Scope;
use crate::queue::maintenance::{Maintainer, MaintainerConfig, Task, TaskProgress};
use crate::queue::store::Retention;
use crate::queue::{Queue, RunnerConfig, WriterConfig};

/// How `worker run` ended.
#[derive(Debug, PartialEq, Eq)]
pub enum RunOutcome {
    /// Ran and stopped cleanly.
    Stopped,
    /// Another worker holds the lock on this data dir.
    AlreadyRunning,
}

/// A startup failure, phrased for the user, with its cause.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("cannot create the data directory {}: {source}", path.display())]
    DataDir { path: PathBuf, source: std::io::Error },
    #[error("cannot {action} {}: {source}", path.display())]
    LockFile { action: &'static str, path: PathBuf, source: std::io::Error },
    #[error("cannot write {}: {source}", path.display())]
    TokenFile { path: PathBuf, source: std::io::Error },
    /// A key file others may read, or one that cannot be read.
    #[error(transparent)]
    KeyFile(#[from] crate::platform::PrivateFileError),
    #[error("cannot read the OS random source for a new key: {0}")]
    Random(#[source] getrandom::Error),
    #[error("cannot install the signal handler: {0}")]
    Signals(#[source] std::io::Error),
    #[error("cannot open the database at {}: {source}", path.display())]
    Database { path: PathBuf, source: crate::db::DbError },
    #[error(transparent)]
    Queue(#[from] crate::queue::QueueError),
    /// The HTTP listener could not start (the message names the address and why).
    #[error("{0}")]
    Http(String),
    #[error("cannot start the maintenance thread: {0}")]
    Maintenance(#[source] std::io::Error),
}

/// Holds the single-instance lock for as long as it lives.
pub struct InstanceLock {
    _file: File,
}

/// Takes `<data>/worker.lock`, or `None` when another process holds it.
pub fn try_lock(data_dir: &Path) -> Result<Option<InstanceLock>, WorkerError> {
    crate::platform::create_private_dir(data_dir)
        .map_err(|source| WorkerError::DataDir { path: data_dir.to_owned(), source })?;
    let path = data_dir.join("worker.lock");
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|source| WorkerError::LockFile { action: "open", path: path.clone(), source })?;
    match file.try_lock() {
        Ok(()) => Ok(Some(InstanceLock { _file: file })),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(source)) => Err(WorkerError::LockFile { action: "lock", path, source }),
    }
}

/// The user key's file: every HTTP route but health, readiness and version needs it (SPEC §4).
pub const USER_KEY_FILE: &str = crate::config::USER_KEY_FILE;
/// The admin token's file: admin mutations need it.
pub const ADMIN_TOKEN_FILE: &str = crate::config::ADMIN_TOKEN_FILE;

/// Reads `<data>/admin.token`, creating it (owner-only, 32 random bytes as hex) at first start.
pub fn admin_token(data_dir: &Path) -> Result<String, WorkerError> {
    secret_file(&data_dir.join(ADMIN_TOKEN_FILE))
}

/// Reads `<data>/worker.key`, creating it the same way (an upgrade from a data dir without one
/// gets one at the worker's first start).
pub fn user_key(data_dir: &Path) -> Result<String, WorkerError> {
    secret_file(&data_dir.join(USER_KEY_FILE))
}

/// A secret file's contents, made at first use; one others may read is refused.
fn secret_file(path: &Path) -> Result<String, WorkerError> {
    if let Some(secret) = crate::platform::read_private_file(path)?
        && !secret.trim().is_empty()
    {
        return Ok(secret.trim().to_owned());
    }
    let secret = new_secret()?;
    crate::platform::write_private_file(path, &secret)
        .map_err(|source| WorkerError::TokenFile { path: path.to_owned(), source })?;
    Ok(secret)
}

/// 32 bytes from the operating system's random source, as hex: the key and the admin token
/// guard the user's code and the queue, so a guessable PRNG will not do — when the OS cannot
/// give randomness the worker refuses to start rather than mint a weak key.
fn new_secret() -> Result<String, WorkerError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(WorkerError::Random)?;
    Ok(hex::encode(bytes))
}

/// Runs the worker in this process until it is told to stop.
pub fn run(config: Config) -> Result<RunOutcome, WorkerError> {
    // Owner-only before anything else is created or read: a data dir an older version left
    // 0755 (and its files 0644) is tightened here, and said so once the log is open.
    let tightened = secure_data_dir(&config, Scope::Everything)
        .map_err(|source| WorkerError::DataDir { path: config.data_dir.clone(), source })?;
    let Some(_lock) = try_lock(&config.data_dir)? else {
        return Ok(RunOutcome::AlreadyRunning);
    };
    config.ensure_settings_file();
    let level = config.get("VIBELEARN_LOG_LEVEL").to_owned();
    // The key and the token are read (or made) once, here, before the first log line, so the
    // log redacts them; every later use takes them from the config.
    let config = with_key_files(config)?;
    crate::logging::init(&config.logs_dir(), &level, config.all_secrets(), crate::logging::Rotation::BySize);
    if let Some(line) = tightened {
        log::warn!(target: "worker", "{line}");
    }
    if let Some(warning) = &config.settings_warning {
        log::warn!(target: "worker", "{warning}");
    }
    let stop_signal = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, Arc::clone(&stop_signal)).map_err(WorkerError::Signals)?;
    }
    let worker = Worker::start(config)?;
    log::info!(target: "worker", "worker ready on {} (pid {})", worker.http.addr, std::process::id());
    worker.wait(&stop_signal);
    worker.stop();
    Ok(RunOutcome::Stopped)
}

/// Creates the data dir owner-only or tightens a loose one (SPEC §4, "the disk"): what the
/// worker, the hooks' direct path, the CLI's writes and `vl install` call. Returns the one
/// line saying what changed, if anything did, for the caller to log (or print).
pub fn secure_data_dir(config: &Config, scope: Scope) -> std::io::Result<Option<String>> {
    let secrets = [USER_KEY_FILE, ADMIN_TOKEN_FILE];
    let tightened = crate::platform::secure_data_dir(&config.data_dir, config.home.as_deref(), scope, &secrets)?;
    Ok(tightened.log_line(&config.data_dir))
}

/// `config` with the user key and the admin token read from their files, or made at first
/// start: one read of each file per worker process.
pub fn with_key_files(config: Config) -> Result<Config, WorkerError> {
    let admin = admin_token(&config.data_dir)?;
    let user = user_key(&config.data_dir)?;
    Ok(config.with_keys(user, admin))
}

/// A started worker: everything `run` owns, in shutdown order.
pub struct Worker {
    pub http: HttpServer,
    pub ctx: Arc<AppContext>,
    runner: crate::queue::Runner,
    maintainer: Maintainer,
    queue_thread: crate::queue::QueueThread,
    shutdown_rx: crossbeam_channel::Receiver<()>,
    pid_file: PathBuf,
}

/// The product's periodic tasks the queue's maintenance thread runs through the writer: capture
/// retention (`crate::retention`) and the concepts' kept judgements (`learning::kept_standings`).
fn maintenance_tasks(config: &Config) -> Vec<Task> {
    let captures = crate::retention::CaptureRetention::days(config.capture_retention_days());
    let (retention_goal, leech_threshold) = (config.desired_retention(), config.leech_threshold());
    vec![
        Task {
            name: "capture retention",
            interval: crate::retention::INTERVAL,
            max_steps: crate::retention::MAX_STEPS,
            step: Arc::new(move |conn, now| {
                let step = captures.step(conn, now)?;
                Ok(TaskProgress { done: step.sessions + step.pages_freed, more: step.more })
            }),
        },
        Task {
            name: "concept standings",
            interval: crate::learning::kept_standings::REFILL_INTERVAL,
            max_steps: crate::learning::kept_standings::REFILL_MAX_STEPS,
            step: Arc::new(move |conn, now| {
                let scheduler = crate::learning::cards::scheduler(conn, retention_goal, leech_threshold)?;
                let (done, more) = crate::learning::kept_standings::refill(conn, &scheduler, now)?;
                Ok(TaskProgress { done, more })
            }),
        },
    ]
}

impl Worker {
    /// Steps 2–4 of startup. The caller holds the instance lock.
    pub fn start(config: Config) -> Result<Worker, WorkerError> {
        Worker::start_with_clock(config, crate::clock::system())
    }

    /// [`Worker::start`] with the queue's clock given: a test drives back-offs measured in
    /// minutes (a paused provider's probes) with a `ManualClock` instead of waiting.
    pub fn start_with_clock(config: Config, clock: crate::clock::SharedClock) -> Result<Worker, WorkerError> {
        // Made or read by `run`; a worker started another way (the demo, tests) reads them here.
        let config = match (config.user_key(), config.admin_token()) {
            (Some(_), Some(_)) => config,
            _ => with_key_files(config)?,
        };
        let db_path = config.db_path();
        let conn = db::open_and_migrate(&db_path, config.synchronous())
            .map_err(|source| WorkerError::Database { path: db_path.clone(), source })?;
        // A file made without `auto_vacuum = INCREMENTAL` cannot give pruned pages back: it is
        // rewritten once, here, before the writer and the HTTP server start (docs/DECISIONS.md).
        match crate::retention::ensure_incremental(&conn) {
            Ok(true) => log::info!(target: "db", "set auto_vacuum=INCREMENTAL (the file was rewritten once)"),
            Ok(false) => {}
            Err(e) => {
                log::warn!(target: "db", "cannot set auto_vacuum=INCREMENTAL, pruned pages stay in the file: {e}")
            }
        }
        let (queue, queue_thread) = Queue::start(conn, &db_path, config.synchronous(), WriterConfig::default(), clock)?;
        let admin_token = config.admin_token().unwrap_or_default().to_owned();
        let user_key = config.user_key().unwrap_or_default().to_owned();
        let (shutdown_tx, shutdown_rx) = crossbeam_channel::bounded(1);
        let port = config.worker_port();
        let llm_choice = crate::jobs::choose_provider(&config);
        let ctx = Arc::new(AppContext {
            intake: IntakeSettings::from_config(&config),
            queue: queue.clone(),
            admin_token,
            user_key,
            accept_unkeyed_events: config.flag(crate::config::ACCEPT_UNKEYED_EVENTS),
            provider: crate::jobs::describe_provider(&llm_choice),
            llm_choice: Arc::clone(&llm_choice),
            daily_tokens: config.llm_daily_tokens(),
            started: Instant::now(),
            ready: AtomicBool::new(false),
            runner: Mutex::new(None),
            shutdown: shutdown_tx,
            http_counts: Mutex::default(),
            evictions: AtomicU64::default(),
            port,
            write_probe: Arc::default(),
            dashboard_codes: Default::default(),
            config: config.clone(),
        });
        let addr = format!("{}:{}", config.worker_host(), port);
        let http = HttpServer::start(&addr, Arc::clone(&ctx)).map_err(WorkerError::Http)?;
        let registry = crate::jobs::registry(&config, &queue, llm_choice);
        let runner = queue
            .start_runner(RunnerConfig { threads: config.runner_threads(), ..RunnerConfig::default() }, registry)?;
        *ctx.runner.lock().unwrap_or_else(|p| p.into_inner()) = Some(runner.probe());
        let retention = Retention {
            succeeded_ms: crate::clock::millis(config.retention_succeeded()),
            dead_ms: crate::clock::millis(config.retention_dead()),
        };
        let tasks = maintenance_tasks(&config);
        let maintainer = Maintainer::spawn(
            MaintainerConfig { retention, tasks, ..MaintainerConfig::default() },
            queue.writer().clone(),
        )
        .map_err(WorkerError::Maintenance)?;
        let pid_file = config.data_dir.join("worker.pid");
        let _ = std::fs::write(&pid_file, format!("{}\n", std::process::id()));
        ctx.ready.store(true, Ordering::SeqCst);
        Ok(Worker { http, ctx, runner, maintainer, queue_thread, shutdown_rx, pid_file })
    }

    /// Blocks until a signal sets `stop_signal` or the admin route asks for shutdown.
    pub fn wait(&self, stop_signal: &AtomicBool) {
        while !stop_signal.load(Ordering::SeqCst) {
            if self.shutdown_rx.recv_timeout(Duration::from_millis(100)).is_ok() {
                break;
            }
        }
    }

    /// The shutdown protocol of the module doc.
    pub fn stop(mut self) {
        log::info!(target: "worker", "shutting down");
        self.ctx.ready.store(false, Ordering::SeqCst);
        self.http.stop();
        let released = self.runner.shutdown();
        if released > 0 {
            log::info!(target: "worker", "released {released} running jobs; they run again at the next start");
        }
        drop(self.maintainer);
        self.queue_thread.stop();
        let _ = std::fs::remove_file(&self.pid_file);
        log::info!(target: "worker", "stopped");
        log::logger().flush();
    }
}
