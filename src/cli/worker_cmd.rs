//! `vl worker run | start | stop | status` (SPEC §1): one function each, so that `vl`, which
//! forwards `run` to `vl-worker` ([`crate::cli::dispatch`]), references only the other three.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::config::Config;
use crate::worker::{self, RunOutcome};
use crate::worker_client::{Unreachable, WorkerClient};

/// `vl worker run`: the worker in the foreground. Only `vl-worker` calls it
/// ([`crate::cli::dispatch::InProcess`]); nothing else here names [`worker::run`], so `vl`
/// links none of the worker's runner.
pub fn run_worker(config: Config) -> ExitCode {
    match worker::run(config) {
        Ok(RunOutcome::Stopped) => ExitCode::SUCCESS,
        Ok(RunOutcome::AlreadyRunning) => {
            println!("a worker is already running for this data directory; nothing to do");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("vl worker: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `vl worker start`: a detached worker unless one is ready.
pub fn start(config: &Config) -> ExitCode {
    let started = crate::worker_spawn::start(config);
    println!("{}", started.describe(&config.worker_url()));
    if started.is_ready() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// `vl worker stop`.
pub fn stop(config: &Config) -> ExitCode {
    let client = WorkerClient::admin(config, Duration::from_secs(2));
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
        Err(Unreachable::NotOurWorker(why)) => {
            eprintln!("vl worker stop: no worker of yours is running; {why}");
            ExitCode::FAILURE
        }
        Err(_) => {
            println!("no worker is running at {}", config.worker_url());
            ExitCode::SUCCESS
        }
    }
}

/// `vl worker status`.
pub fn status(config: &Config) -> ExitCode {
    let client = WorkerClient::new(config, Duration::from_secs(2));
    let health = client.get("/api/health");
    // The worker's own warning when it answers (its environment may differ from this shell's).
    let worker_warning = health.as_ref().ok().and_then(|r| r.body["settings_warning"].as_str().map(str::to_owned));
    if let Some(warning) = worker_warning.as_ref().or(config.settings_warning.as_ref()) {
        println!("warning: {warning}");
    }
    match health {
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
            if let Some(provider) = h["llm"]["description"].as_str() {
                let source = h["llm"]["source"].as_str().unwrap_or("unknown");
                println!("  llm     {provider} (chosen by {source})");
            }
            for notice in h["notices"].as_array().into_iter().flatten() {
                println!("  notice  {}", notice.as_str().unwrap_or_default());
            }
            ExitCode::SUCCESS
        }
        Err(Unreachable::NotOurWorker(why)) => {
            println!("worker: not running; {why}");
            ExitCode::FAILURE
        }
        Err(_) => {
            println!("worker: not running (expected at {})", config.worker_url());
            ExitCode::SUCCESS
        }
    }
}
