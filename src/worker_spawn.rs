//! Starting a detached worker: what `vl worker start`, the SessionStart hook and the hooks'
//! fallback (worker unreachable) share. Below both `cli/` and `hook/`, so neither imports the
//! other.
//!
//! # Environment
//! The worker gets the user's environment without the agent's: [`Config::worker_env`], an
//! allowlist (paths, locale, proxies, VibeLearn's settings, and the API key of the provider
//! named in `VIBELEARN_PROVIDER` only). A hook runs inside an agent's process tree, with that
//! agent's session variables and often the API keys it loaded for itself; a worker that
//! inherited them chose its provider by whichever agent happened to start it (issue 42).

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::config::Config;
use crate::worker_client::{Unreachable, WorkerClient};

/// Readiness is polled this often after spawning a worker (SPEC §1).
const READY_POLL: Duration = Duration::from_millis(200);
/// ... for at most this long.
const READY_WAIT: Duration = Duration::from_secs(15);

/// What [`start`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Started {
    /// A worker was already answering.
    Found { pid: Option<u64> },
    /// This call started one, and it is ready.
    Started { pid: Option<u64> },
    /// No worker: why, for a person.
    Failed(String),
}

impl Started {
    pub fn is_ready(&self) -> bool {
        !matches!(self, Started::Failed(_))
    }

    /// The SessionStart hook's line: only keys Claude Code knows (a failure goes to the log).
    pub fn hook_line(&self) -> serde_json::Value {
        if let Started::Failed(why) = self {
            log::warn!(target: "hook", "no worker: {why}");
        }
        json!({"continue": true, "suppressOutput": true})
    }

    /// What `vl worker start` tells a person.
    pub fn describe(&self, url: &str) -> String {
        let pid = |pid: &Option<u64>| pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
        match self {
            Started::Found { pid: p } => format!("a worker is already running{} at {url}", pid(p)),
            Started::Started { pid: p } => format!("started a worker{} at {url}", pid(p)),
            Started::Failed(why) => format!("no worker is running: {why}"),
        }
    }
}

/// Starts a detached worker unless one is ready; waits for its readiness. A port held by a
/// listener that cannot prove it is the user's worker is reported, and no worker is started
/// to race it for the port.
pub fn start(config: &Config) -> Started {
    let client = WorkerClient::new(config, Duration::from_millis(500));
    match client.check() {
        Ok(()) if client.is_ready() => return Started::Found { pid: pid_of(&client) },
        Err(Unreachable::NotOurWorker(why)) => return Started::Failed(why),
        _ => {}
    }
    if let Err(e) = spawn_detached(config) {
        return Started::Failed(e);
    }
    let deadline = Instant::now() + READY_WAIT;
    while Instant::now() < deadline {
        // A new client each time: a first start makes the key file this one proves with.
        let client = WorkerClient::new(config, Duration::from_millis(500));
        match client.check() {
            Ok(()) if client.is_ready() => return Started::Started { pid: pid_of(&client) },
            Err(Unreachable::NotOurWorker(why)) => return Started::Failed(why),
            _ => {}
        }
        std::thread::sleep(READY_POLL);
    }
    Started::Failed(format!(
        "the worker did not become ready within {} s; see {}",
        READY_WAIT.as_secs(),
        config.logs_dir().join("vibelearn.log").display()
    ))
}

/// The worker's pid, from its health answer.
fn pid_of(client: &WorkerClient) -> Option<u64> {
    client.get("/api/health").ok().and_then(|r| r.body["pid"].as_u64())
}

/// Spawns `vl-worker worker run` detached from us (see [`spawn_vl_detached`]).
pub fn spawn_detached(config: &Config) -> Result<(), String> {
    spawn_vl_detached(config, &["worker", "run"])
}

/// Spawns `vl-worker ARGS` for this data dir detached from us ([`crate::platform::spawn_detached`]:
/// its own process group, none of our handles; stderr goes to `logs/worker.stderr.log`), so it
/// outlives the caller and the IDE, and the IDE waiting for a hook's output is not kept
/// waiting for the worker.
///
/// `vl-worker` itself, beside the running executable (or the running executable when it is
/// `vl-worker`), so the worker is one process on every OS, not a `vl` that hands over to it.
/// A missing `vl-worker` is said here, at once: a `vl` started in its place could only fail.
pub fn spawn_vl_detached(config: &Config, args: &[&str]) -> Result<(), String> {
    let exe = crate::executables::worker().map_err(|e| format!("cannot start the worker: {e}"))?;
    let _ = crate::platform::create_private_dir(&config.logs_dir());
    let stderr = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(config.logs_dir().join("worker.stderr.log"))
        .map(Stdio::from)
        .unwrap_or_else(|_| Stdio::null());
    let mut command = crate::platform::command(exe);
    command
        .args(args)
        .env_clear()
        .envs(config.worker_env())
        .env("VIBELEARN_DATA_DIR", &config.data_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr);
    crate::platform::spawn_detached(&mut command).map(|_| ()).map_err(|e| format!("cannot start the worker: {e}"))
}
