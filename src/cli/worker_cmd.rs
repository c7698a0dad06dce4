//! `vl worker run | start | stop | status` (SPEC §1).

use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::cli::args::WorkerAction;
use crate::config::Config;
use crate::worker::{self, RunOutcome};
use crate::worker_client::WorkerClient;

/// Readiness is polled this often after spawning a worker (SPEC §1).
const READY_POLL: Duration = Duration::from_millis(200);
/// ... for at most this long.
const READY_WAIT: Duration = Duration::from_secs(15);

pub fn run(action: WorkerAction, config: Config) -> ExitCode {
    match action {
        WorkerAction::Run => match worker::run(config) {
            Ok(RunOutcome::Stopped) => ExitCode::SUCCESS,
            Ok(RunOutcome::AlreadyRunning) => {
                println!("a worker is already running for this data directory; nothing to do");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("vl worker: {e}");
                ExitCode::FAILURE
            }
        },
        WorkerAction::Start => {
            println!("{}", start(&config));
            ExitCode::SUCCESS
        }
        WorkerAction::Stop => stop(&config),
        WorkerAction::Status => status(&config),
    }
}

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
    let _ = std::fs::create_dir_all(config.logs_dir());
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

fn stop(config: &Config) -> ExitCode {
    let client = WorkerClient::new(config, Duration::from_secs(2));
    match client.post("/api/admin/shutdown", &json!({})) {
        Ok(response) if response.status == 202 => {
            let deadline = Instant::now() + Duration::from_secs(15);
            while Instant::now() < deadline && client.get("/api/health").is_ok() {
                std::thread::sleep(Duration::from_millis(100));
            }
            println!("worker stopped");
            ExitCode::SUCCESS
        }
        Ok(response) => {
            eprintln!("vl worker stop: the worker refused ({}): {}", response.status, response.body);
            ExitCode::FAILURE
        }
        Err(_) => {
            println!("no worker is running at {}", config.worker_url());
            ExitCode::SUCCESS
        }
    }
}

fn status(config: &Config) -> ExitCode {
    let client = WorkerClient::new(config, Duration::from_secs(2));
    if let Some(warning) = &config.settings_warning {
        println!("warning: {warning}");
    }
    match client.get("/api/health") {
        Ok(response) => {
            let h = &response.body;
            println!("worker: running ({})", h["status"].as_str().unwrap_or("unknown"));
            println!("  pid     {}", h["pid"]);
            println!("  port    {}", config.worker_port());
            println!("  uptime  {} s", h["uptime_ms"].as_u64().unwrap_or(0) / 1000);
            let q = &h["queue"];
            println!(
                "  queue   {} available, {} running, {} retryable, {} dead",
                q["available"], q["running"], q["retryable"], q["dead"]
            );
            for notice in h["notices"].as_array().into_iter().flatten() {
                println!("  notice  {}", notice.as_str().unwrap_or_default());
            }
            ExitCode::SUCCESS
        }
        Err(_) => {
            println!("worker: not running (expected at {})", config.worker_url());
            ExitCode::SUCCESS
        }
    }
}
