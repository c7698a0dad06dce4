//! `vl jobs list | show | replay | cancel | resume | stats | prune` (SPEC §1, §4.5, Appendix
//! A.1–A.2).
//!
//! Each subcommand parses its arguments into typed values (a bad state, kind or `--since` is a
//! usage error naming the valid values), runs on a [`Backend`] — the worker's HTTP API when it
//! answers, the database otherwise — and prints either a table for people or, with `--json`,
//! exactly the JSON the HTTP API returns. Asking about or acting on a job that does not exist
//! is an error (exit 1), as is a replay or cancel that cannot apply to a job's state: a script
//! must be able to tell that nothing happened.

use std::process::ExitCode;

use serde_json::Value;

use super::backend::{Backend, CliError, JobQuery};
use super::format::{DEFAULT_WIDTH, age, cut, parse_since, relative, session_of_lane, table};
use crate::cli::args::JobsAction;
use crate::clock::Millis;
use crate::clock::format_utc;
use crate::config::Config;
use crate::queue::{JobId, JobState};

pub fn run(action: JobsAction, config: &Config) -> ExitCode {
    match execute(action, config) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("vl jobs: {e}");
            e.exit_code()
        }
    }
}

/// Runs one subcommand: the dispatch, each arm a line or a function of its own.
fn execute(action: JobsAction, config: &Config) -> Result<ExitCode, CliError> {
    let now = crate::clock::system().now_ms();
    let width = config.columns.unwrap_or(DEFAULT_WIDTH);
    match action {
        JobsAction::List { state, kind, session, since, limit, before, json } => {
            let query = JobQuery {
                state: state.as_deref().map(parse_state).transpose()?,
                kind: kind.as_deref().map(parse_kind).transpose()?,
                session,
                since: since.as_deref().map(|s| parse_since(s, now).map_err(CliError::Usage)).transpose()?,
                before: before.map(JobId),
                limit: limit.clamp(1, 1000),
            };
            let page = Backend::connect(config).list(&query)?;
            print_or(json, &page, || print_list(&page, now, width));
            Ok(ExitCode::SUCCESS)
        }
        JobsAction::Show { id, json } => {
            let job = Backend::connect(config).show(JobId(id))?.ok_or_else(|| no_job(JobId(id)))?;
            print_or(json, &job, || print_job(&job, now, width));
            Ok(ExitCode::SUCCESS)
        }
        JobsAction::Replay { ids, state: None, json, .. } => {
            let ids: Vec<JobId> = ids.into_iter().map(JobId).collect();
            let backend = Backend::connect(config);
            let moved = backend.replay(&ids)?;
            print_moved(json, "replayed", &moved);
            direct_note(&backend, &moved);
            explain_unmoved(&backend, &ids, &moved, "only dead, cancelled or succeeded jobs can be replayed")
        }
        JobsAction::Replay { state: Some(state), kind, since, json, .. } => {
            replay_matching(config, &state, kind.as_deref(), since.as_deref(), json, now)
        }
        JobsAction::Cancel { ids, json } => {
            let ids: Vec<JobId> = ids.into_iter().map(JobId).collect();
            let backend = Backend::connect(config);
            let moved = backend.cancel(&ids)?;
            print_moved(json, "cancelled", &moved);
            explain_unmoved(
                &backend,
                &ids,
                &moved,
                "only available, retryable, running, held or dead jobs can be cancelled",
            )
        }
        JobsAction::Resume { provider, json } => resume(config, provider.as_deref(), json),
        JobsAction::Stats { json } => {
            let stats = Backend::connect(config).stats()?;
            print_or(json, &stats, || print_stats(&stats, width));
            Ok(ExitCode::SUCCESS)
        }
        JobsAction::Prune { json } => prune(config, json),
    }
}

/// `vl jobs replay --state S [--kind K] [--since T]`.
fn replay_matching(
    config: &Config,
    state: &str,
    kind: Option<&str>,
    since: Option<&str>,
    json: bool,
    now: Millis,
) -> Result<ExitCode, CliError> {
    let state = parse_state(state)?;
    if !matches!(state, JobState::Dead | JobState::Cancelled | JobState::Succeeded) {
        return Err(CliError::Usage(format!(
            "{} jobs cannot be replayed; use --state dead, cancelled or succeeded",
            state.as_str()
        )));
    }
    let kind = kind.map(parse_kind).transpose()?;
    let since = since.map(|s| parse_since(s, now).map_err(CliError::Usage)).transpose()?;
    let backend = Backend::connect(config);
    let moved = backend.replay_matching(state, kind.as_deref(), since)?;
    if json {
        println!("{}", serde_json::json!({ "replayed": moved }));
    } else if moved.is_empty() {
        println!(
            "no {} {}jobs to replay",
            state.as_str(),
            kind.as_deref().map(|k| format!("{k} ")).unwrap_or_default()
        );
    } else {
        print_moved(false, "replayed", &moved);
    }
    direct_note(&backend, &moved);
    Ok(ExitCode::SUCCESS)
}

/// `vl jobs resume [--provider P]`: what was resumed, or why nothing was.
fn resume(config: &Config, provider: Option<&str>, json: bool) -> Result<ExitCode, CliError> {
    let backend = Backend::connect(config);
    let reply = backend.resume(provider)?;
    if json {
        println!("{reply}");
        return Ok(ExitCode::SUCCESS);
    }
    let resumed = &reply["resumed"];
    let gates: Vec<&str> = resumed["gates"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    if gates.is_empty() {
        let paused = backend.gates()?;
        let paused: Vec<&str> = paused["gates"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|g| g["state"] == "paused")
            .filter_map(|g| g["name"].as_str())
            .collect();
        match (provider, paused.is_empty()) {
            (_, true) => println!("nothing is paused"),
            (Some(name), false) => {
                return Err(CliError::NotFound(format!("{name} is not paused; paused: {}", paused.join(", "))));
            }
            (None, false) => println!("nothing was resumed"),
        }
        return Ok(ExitCode::SUCCESS);
    }
    let replayed = resumed["replayed"].as_array().map_or(0, Vec::len);
    println!(
        "resumed {}: {} held job{} released, {replayed} refused job{} replayed",
        gates.join(", "),
        resumed["released"].as_i64().unwrap_or(0),
        if resumed["released"].as_i64() == Some(1) { "" } else { "s" },
        if replayed == 1 { "" } else { "s" },
    );
    if !backend.is_worker() {
        eprintln!("note: the worker is not running; the jobs will run when it starts (`vl worker start`)");
    }
    Ok(ExitCode::SUCCESS)
}

/// `vl jobs prune`: retention applied now.
fn prune(config: &Config, json: bool) -> Result<ExitCode, CliError> {
    let pruned = Backend::connect(config).prune()?;
    if json {
        println!("{}", serde_json::json!({ "pruned": pruned }));
    } else {
        println!(
            "pruned {pruned} finished job{} (succeeded and cancelled after {} h, dead after {} d)",
            if pruned == 1 { "" } else { "s" },
            config.retention_succeeded().as_secs() / 3600,
            config.retention_dead().as_secs() / 86_400,
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A job state named on the command line.
pub fn parse_state(raw: &str) -> Result<JobState, CliError> {
    JobState::parse(raw.trim()).ok_or_else(|| {
        let valid: Vec<&str> = JobState::ALL.iter().map(|s| s.as_str()).collect();
        CliError::Usage(format!("unknown state {raw:?}; valid states: {}", valid.join(", ")))
    })
}

/// A job kind named on the command line.
pub fn parse_kind(raw: &str) -> Result<String, CliError> {
    let raw = raw.trim();
    if crate::jobs::KIND_NAMES.contains(&raw) {
        Ok(raw.to_owned())
    } else {
        Err(CliError::Usage(format!("unknown kind {raw:?}; valid kinds: {}", crate::jobs::KIND_NAMES.join(", "))))
    }
}

fn no_job(id: JobId) -> CliError {
    CliError::NotFound(format!("no job {id} (see `vl jobs list`)"))
}

fn print_or(json: bool, value: &Value, human: impl FnOnce()) {
    if json {
        println!("{value}");
    } else {
        human();
    }
}

fn print_moved(json: bool, verb: &str, moved: &[JobId]) {
    if json {
        println!("{}", serde_json::json!({ verb: moved }));
    } else if !moved.is_empty() {
        let ids: Vec<String> = moved.iter().map(JobId::to_string).collect();
        println!("{verb} {} job{}: {}", moved.len(), if moved.len() == 1 { "" } else { "s" }, ids.join(", "));
    }
}

/// Replayed jobs only run when a worker does; say so when the change went to the database.
fn direct_note(backend: &Backend<'_>, moved: &[JobId]) {
    if !backend.is_worker() && !moved.is_empty() {
        eprintln!("note: the worker is not running; the jobs will run when it starts (`vl worker start`)");
    }
}

/// Says why each requested id did not move; exit 1 if any did not.
fn explain_unmoved(backend: &Backend<'_>, ids: &[JobId], moved: &[JobId], rule: &str) -> Result<ExitCode, CliError> {
    let mut all_moved = true;
    for id in ids.iter().filter(|id| !moved.contains(id)) {
        all_moved = false;
        match backend.show(*id)? {
            None => eprintln!("vl jobs: {}", no_job(*id)),
            Some(job) => eprintln!("vl jobs: job {id} is {}; {rule}", job["state"].as_str().unwrap_or("?")),
        }
    }
    Ok(if all_moved { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn text<'v>(value: &'v Value, field: &str) -> &'v str {
    value[field].as_str().unwrap_or("-")
}

fn attempts(job: &Value) -> String {
    format!("{}/{}", job["attempt"].as_i64().unwrap_or(0), job["max_attempts"].as_i64().unwrap_or(0))
}

fn print_list(page: &Value, now: Millis, width: usize) {
    let jobs = page["jobs"].as_array().cloned().unwrap_or_default();
    if jobs.is_empty() {
        println!("no jobs match");
        return;
    }
    let rows: Vec<Vec<String>> = jobs
        .iter()
        .map(|job| {
            vec![
                job["id"].to_string(),
                text(job, "kind").to_owned(),
                text(job, "state").to_owned(),
                attempts(job),
                cut(session_of_lane(job["lane"].as_str()), 14),
                age(now - job["created_at"].as_i64().unwrap_or(now)),
                waiting_on(job).unwrap_or_else(|| job["last_error"].as_str().unwrap_or("").to_owned()),
            ]
        })
        .collect();
    print!("{}", table(&["ID", "KIND", "STATE", "TRY", "SESSION", "AGE", "LAST ERROR / WAITING ON"], &rows, width));
    if let Some(before) = page["next_before"].as_i64() {
        println!("… older jobs: add --before {before}");
    }
}

fn print_job(job: &Value, now: Millis, width: usize) {
    let time = |field: &str| match job[field].as_i64() {
        Some(at) => format!("{} ({})", format_utc(at), relative(now - at)),
        None => "-".into(),
    };
    println!("job {} · {} · {}", job["id"], text(job, "kind"), text(job, "state"));
    println!("  session     {}", session_of_lane(job["lane"].as_str()));
    println!("  attempts    {}", attempts(job));
    println!("  created     {}", time("created_at"));
    println!("  run at      {}", time("run_at"));
    println!("  finished    {}", time("finished_at"));
    if let Some(error) = job["last_error"].as_str() {
        println!("  last error  {error}");
    }
    if let Some(deps) = job["depends_on"].as_array().filter(|d| !d.is_empty()) {
        let ids: Vec<String> = deps.iter().map(Value::to_string).collect();
        println!("  after jobs  {}", ids.join(", "));
    }
    if let Some(waiting) = waiting_on(job) {
        println!("  {waiting}");
    }
    if let Some(gate) = job["refused_by_gate"].as_str() {
        println!("  refused by  {gate}: `vl jobs resume --provider {gate}` (or replaying this job) resumes it");
    }
    println!("  payload     {}", indented(&job["payload"]));
    if !job["result"].is_null() {
        println!("  result      {}", indented(&job["result"]));
    }
    let attempts = job["attempts"].as_array().cloned().unwrap_or_default();
    if attempts.is_empty() {
        println!("  no attempt yet");
        return;
    }
    let rows: Vec<Vec<String>> = attempts
        .iter()
        .map(|a| {
            let started = a["started_at"].as_i64().unwrap_or(0);
            let took = a["finished_at"].as_i64().map_or("-".into(), |f| format!("{} ms", f - started));
            vec![
                a["attempt"].to_string(),
                a["outcome"].as_str().unwrap_or("running").to_owned(),
                format_utc(started),
                took,
                a["error"].as_str().unwrap_or("").to_owned(),
            ]
        })
        .collect();
    println!();
    print!("{}", table(&["#", "OUTCOME", "STARTED", "TOOK", "ERROR"], &rows, width));
}

/// What a held job waits on, as a phrase: "waiting on job 12", "waiting on anthropic (paused: …)".
fn waiting_on(job: &Value) -> Option<String> {
    let waiting = job.get("waiting_on")?;
    if let Some(gate) = waiting["gate"].as_str() {
        let reason = waiting["reason"].as_str().map(|r| format!(": {r}")).unwrap_or_default();
        return Some(format!("waiting on {gate} (paused{reason})"));
    }
    let ids: Vec<String> = waiting["jobs"].as_array().into_iter().flatten().map(Value::to_string).collect();
    let noun = if ids.len() == 1 { "job" } else { "jobs" };
    Some(format!("waiting on {noun} {} (replay or cancel it)", ids.join(", ")))
}

/// Pretty JSON whose continuation lines line up under the first.
fn indented(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default().replace('\n', "\n              ")
}

fn print_stats(stats: &Value, width: usize) {
    let count = |v: &Value, state: &str| v[state].as_i64().unwrap_or(0);
    let states: Vec<&str> = JobState::ALL.iter().map(|s| s.as_str()).collect();
    let mut rows: Vec<Vec<String>> = Vec::new();
    for (kind, by_state) in stats["by_kind"].as_object().into_iter().flatten() {
        let mut row = vec![kind.clone()];
        row.extend(states.iter().map(|s| count(by_state, s).to_string()));
        rows.push(row);
    }
    let mut total = vec!["all".to_owned()];
    total.extend(states.iter().map(|s| count(&stats["by_state"], s).to_string()));
    rows.push(total);
    let mut headers = vec!["KIND"];
    headers.extend(states.iter().copied());
    print!("{}", table(&headers, &rows, width));
    match stats["oldest_available_age_ms"].as_i64() {
        Some(ms) => println!("oldest waiting job: {}", age(ms)),
        None => println!("no job is waiting"),
    }
    let done = &stats["finished_last_hour"];
    if done.is_object() {
        let succeeded = count(done, "succeeded");
        println!(
            "last hour: {succeeded} succeeded ({:.1}/min), {} dead, {} cancelled",
            succeeded as f64 / 60.0,
            count(done, "dead"),
            count(done, "cancelled")
        );
    }
}
