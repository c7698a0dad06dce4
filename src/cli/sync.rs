//! `vl sync [SESSION]`: analyse a session now and watch each step until it ends (SPEC §1).
//!
//! 1. The session: the one named, or the latest with code changes (the session of the newest
//!    `file_edit` observation). A name that no event or job mentions is an error.
//! 2. Enqueue the five pipeline steps in order — through the worker's analysis routes when it
//!    answers, else directly through `intake::submit_analysis` (what a hook does), and then
//!    start a detached worker. `sync` is enqueued even when `VIBELEARN_AUTO_SYNC=false`: that
//!    setting is about the Stop hook, and asking by hand is the point of this command.
//! 3. Poll the pipeline (`GET /api/vibelearn/sessions/:id/pipeline`, or the same read on the
//!    database while no worker answers) until every step is succeeded, dead or cancelled. On a
//!    terminal the block of steps is redrawn in place; in a pipe one line is printed per change.
//! 4. A summary; exit 1 if a step ended dead, with the command that replays it.
//!
//! Retries can keep a step waiting for minutes, and that is still progress: there is no overall
//! deadline while a worker answers. There is one while none does ([`NO_WORKER_GRACE`]): the
//! jobs are durable and will run at the next start, so waiting forever would help nobody.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::backend::{self, Backend, CliError};
use super::format::{cut, encode};
use crate::config::Config;
use crate::jobs::PIPELINE;
use crate::worker_client::WorkerClient;

/// How often the pipeline is read.
const POLL: Duration = Duration::from_millis(250);
/// Budget of one pipeline read from the worker; past it the database is read instead.
const POLL_TIMEOUT: Duration = Duration::from_millis(500);
/// How long the steps may wait with no worker answering before `vl sync` gives up watching.
/// A spawned worker is ready in well under a second; 20 s covers a loaded machine.
const NO_WORKER_GRACE: Duration = Duration::from_secs(20);
/// Width of a step's error in the live view.
const ERROR_WIDTH: usize = 60;

pub fn run(session: Option<String>, config: &Config) -> ExitCode {
    match sync(session, config) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("vl sync: {e}");
            e.exit_code()
        }
    }
}

fn sync(session: Option<String>, config: &Config) -> Result<ExitCode, CliError> {
    let session_id = match session {
        Some(id) => known_session(config, id)?,
        None => latest_session_with_code(config)?,
    };
    let backend = Backend::connect(config);
    backend.enqueue_analysis(&session_id, &PIPELINE)?;
    if backend.is_worker() {
        println!("session {session_id}: queued {} steps", PIPELINE.len());
    } else {
        crate::worker_spawn::spawn_detached(config).map_err(CliError::Failed)?;
        println!("session {session_id}: queued {} steps; the worker was not running, starting it", PIPELINE.len());
    }
    let started = Instant::now();
    let steps = watch(config, &session_id)?;
    Ok(summarize(&steps, started.elapsed()))
}

/// The named session if any event or job mentions it (its events may still wait in the queue).
fn known_session(config: &Config, id: String) -> Result<String, CliError> {
    let known = backend::read(config, false, |conn| {
        conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1) OR EXISTS (SELECT 1 FROM jobs WHERE lane = ?2)",
            rusqlite::params![id, crate::jobs::lane(&id)],
            |r| r.get(0),
        )
    })?;
    if known {
        Ok(id)
    } else {
        Err(CliError::NotFound(format!(
            "no session {id:?} has been recorded; `vl sync` alone picks the latest one with code changes"
        )))
    }
}

/// The session of the newest `file_edit` observation.
fn latest_session_with_code(config: &Config) -> Result<String, CliError> {
    let latest: Option<String> = backend::read(config, None, |conn| {
        use rusqlite::OptionalExtension;
        conn.query_row(
            "SELECT session_id FROM observations WHERE obs_type = 'file_edit' ORDER BY id DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()
    })?;
    latest.ok_or_else(|| {
        CliError::NotFound(
            "no recorded session has code changes yet (events still queued are ingested when the worker runs); \
             name one: vl sync SESSION"
                .into(),
        )
    })
}

/// One step as the pipeline route shows it.
#[derive(Debug, Clone, PartialEq)]
struct Step {
    kind: String,
    job_id: Option<i64>,
    state: String,
    attempt: i64,
    error: Option<String>,
    skipped: Option<String>,
    /// For a held step: what it waits on, as a phrase.
    waiting: Option<String>,
}

impl Step {
    fn from_json(step: &Value) -> Step {
        Step {
            kind: step["kind"].as_str().unwrap_or("?").to_owned(),
            job_id: step["job_id"].as_i64(),
            state: step["state"].as_str().unwrap_or("waiting").to_owned(),
            attempt: step["attempt"].as_i64().unwrap_or(0),
            error: step["last_error"].as_str().map(str::to_owned),
            skipped: step["result"]["skipped"].as_str().map(str::to_owned),
            waiting: step.get("waiting_on").map(|w| match w["gate"].as_str() {
                Some(gate) => format!("waiting: {gate} is paused ({})", w["reason"].as_str().unwrap_or("refused")),
                None => {
                    let ids: Vec<String> = w["jobs"].as_array().into_iter().flatten().map(Value::to_string).collect();
                    format!("waiting on job {}", ids.join(", "))
                }
            }),
        }
    }

    /// Nothing more happens to it without someone: done, failed, or held on a failure.
    fn finished(&self) -> bool {
        matches!(self.state.as_str(), "succeeded" | "dead" | "cancelled" | "held")
    }

    fn line(&self) -> String {
        let mut line = format!("  {:<17} {:<10} attempt {}", self.kind, self.state, self.attempt);
        if let Some(waiting) = &self.waiting {
            line.push_str(&format!("  {}", cut(waiting, ERROR_WIDTH)));
        } else if let Some(skipped) = &self.skipped {
            line.push_str(&format!("  (skipped: {skipped})"));
        } else if let (Some(error), "retryable" | "dead") = (&self.error, self.state.as_str()) {
            // Only then is the error about this run: a replayed job waits with its old one.
            line.push_str(&format!("  {}", cut(error, ERROR_WIDTH)));
        }
        line
    }
}

/// Polls until every step has finished; draws progress as it goes.
fn watch(config: &Config, session_id: &str) -> Result<Vec<Step>, CliError> {
    let client = WorkerClient::new(config, POLL_TIMEOUT);
    let path = format!("/api/vibelearn/sessions/{}/pipeline", encode(session_id));
    // On a terminal a wrapped line would throw the redraw's cursor arithmetic off: cut lines
    // to the width (80 when the shell does not export COLUMNS).
    let terminal = std::io::stdout().is_terminal().then(|| config.columns.unwrap_or(80) - 1);
    let mut shown: Vec<Step> = Vec::new();
    let mut last_worker = Instant::now();
    loop {
        let pipeline = match client.get(&path) {
            Ok(response) if response.status == 200 => {
                last_worker = Instant::now();
                response.body
            }
            _ => Backend::Database(config).pipeline(session_id)?,
        };
        let steps: Vec<Step> = pipeline["steps"].as_array().into_iter().flatten().map(Step::from_json).collect();
        draw(&shown, &steps, terminal);
        if !steps.is_empty() && steps.iter().all(Step::finished) {
            return Ok(steps);
        }
        shown = steps;
        if last_worker.elapsed() > NO_WORKER_GRACE {
            return Err(CliError::Failed(format!(
                "no worker answered for {} s; the steps stay queued and run when it starts \
                 (`vl worker start`; its errors are in {})",
                NO_WORKER_GRACE.as_secs(),
                config.logs_dir().join("worker.stderr.log").display()
            )));
        }
        std::thread::sleep(POLL);
    }
}

/// On a terminal (`Some(width)`): the block of steps, redrawn in place. In a pipe: a line per
/// changed step.
fn draw(shown: &[Step], steps: &[Step], terminal: Option<usize>) {
    let mut out = std::io::stdout().lock();
    if let Some(width) = terminal {
        if shown == steps {
            return;
        }
        if !shown.is_empty() {
            let _ = write!(out, "\x1b[{}A", shown.len()); // cursor up to the block's first line
        }
        for step in steps {
            // Clear the line, then draw it (cut by characters: `cut` would collapse the padding).
            let line: String = step.line().chars().take(width).collect();
            let _ = writeln!(out, "\x1b[2K{line}");
        }
    } else {
        for step in steps {
            let before = shown.iter().find(|s| s.kind == step.kind);
            if before.is_none_or(|b| (&b.state, b.attempt) != (&step.state, step.attempt)) {
                let _ = writeln!(out, "{}", step.line());
            }
        }
    }
    let _ = out.flush();
}

fn summarize(steps: &[Step], took: Duration) -> ExitCode {
    let count = |state: &str| steps.iter().filter(|s| s.state == state).count();
    let dead: Vec<&Step> = steps.iter().filter(|s| s.state == "dead").collect();
    let mut parts = vec![format!("{} succeeded", count("succeeded"))];
    if !dead.is_empty() {
        parts.push(format!("{} dead", dead.len()));
    }
    if count("cancelled") > 0 {
        parts.push(format!("{} cancelled", count("cancelled")));
    }
    let held: Vec<&Step> = steps.iter().filter(|s| s.state == "held").collect();
    if !held.is_empty() {
        parts.push(format!("{} held", held.len()));
    }
    println!("finished in {:.1} s: {}", took.as_secs_f64(), parts.join(", "));
    if dead.is_empty() && held.is_empty() {
        return ExitCode::SUCCESS;
    }
    for step in &dead {
        println!("  {} failed: {}", step.kind, step.error.as_deref().unwrap_or("no error recorded"));
    }
    for step in &held {
        println!("  {} {}", step.kind, step.waiting.as_deref().unwrap_or("is held"));
    }
    if !dead.is_empty() {
        let ids: Vec<String> = dead.iter().filter_map(|s| s.job_id).map(|id| id.to_string()).collect();
        println!("fix the cause, then: vl jobs replay {} (the held steps follow by themselves)", ids.join(" "));
    } else if held.iter().any(|s| s.waiting.as_deref().is_some_and(|w| w.contains("paused"))) {
        println!("fix the credentials (they resume by themselves when they change), or: vl jobs resume");
    }
    ExitCode::FAILURE
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_step_line_shows_the_error_only_when_it_matters() {
        let dead = Step::from_json(&json!({"kind": "analyze_concepts", "job_id": 4, "state": "dead", "attempt": 1,
                                           "last_error": "command: exit 127", "result": null}));
        assert!(dead.finished());
        assert!(dead.line().ends_with("command: exit 127"), "{}", dead.line());
        let skipped = Step::from_json(&json!({"kind": "sync", "job_id": 5, "state": "succeeded", "attempt": 1,
                                              "last_error": null, "result": {"skipped": "no_api_key"}}));
        assert!(skipped.line().ends_with("(skipped: no_api_key)"));
        let waiting = Step::from_json(&json!({"kind": "sync", "job_id": null, "state": null, "attempt": 0}));
        assert!(!waiting.finished());
        assert_eq!(waiting.state, "waiting");
    }
}
