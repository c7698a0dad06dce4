//! Starting a detached worker: what `vl worker start`, the SessionStart hook and the hooks'
//! fallback (worker unreachable) share. Below both `cli/` and `hook/`, so neither imports the
//! other.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::config::Config;
use crate::worker_client::WorkerClient;

/// Readiness is polled this often after spawning a worker (SPEC §1).
const READY_POLL: Duration = Duration::from_millis(200);
/// ... for at most this long.
const READY_WAIT: Duration = Duration::from_secs(15);

/// Starts a detached worker unless one is healthy; returns the JSON line to print.
pub fn start(config: &Config) -> serde_json::Value {
    let client = WorkerClient::new(config, Duration::from_millis(500));
    if client.is_ready() {
        return ready_line();
    }
    if let Err(e) = spawn_detached(config) {
        return json!({"continue": true, "suppressOutput": true, "status": "error", "message": e});
    }
    let deadline = Instant::now() + READY_WAIT;
    while Instant::now() < deadline {
        if client.is_ready() {
            return ready_line();
        }
        std::thread::sleep(READY_POLL);
    }
    json!({"continue": true, "suppressOutput": true, "status": "error",
           "message": format!("the worker did not become ready within {} s; see {}", READY_WAIT.as_secs(), config.logs_dir().join("vibelearn.log").display())})
}

fn ready_line() -> serde_json::Value {
    json!({"continue": true, "suppressOutput": true, "status": "ready"})
}

/// Spawns `vl worker run` in its own process group, detached from our stdio.
pub fn spawn_detached(config: &Config) -> Result<(), String> {
    spawn_vl_detached(config, &["worker", "run"])
}

/// Spawns `vl ARGS` for this data dir in its own process group, detached from our stdio
/// (stderr goes to `logs/worker.stderr.log`), so it outlives the caller and the IDE.
pub fn spawn_vl_detached(config: &Config, args: &[&str]) -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the vl executable: {e}"))?;
    let _ = crate::platform::create_private_dir(&config.logs_dir());
    let stderr = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(config.logs_dir().join("worker.stderr.log"))
        .map(Stdio::from)
        .unwrap_or_else(|_| Stdio::null());
    Command::new(exe)
        .args(args)
        .env("VIBELEARN_DATA_DIR", &config.data_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .process_group(0)
        .spawn()
        .map(|_| ())
        .map_err(|e| format!("cannot start the worker: {e}"))
}
