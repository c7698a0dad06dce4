//! `vl demo`: the whole product on an embedded sample, with no keys and no network. A
//! temporary data dir, an in-process worker on a free loopback port, the recorded sample
//! session replayed through the real hook code and HTTP API, the full pipeline with the
//! offline provider; then the detected stack, the concepts, the questions (each with where
//! its code comes from in the session) and the share of grounded questions are printed.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::config::Config;
use crate::hook::adapters::{HookEvent, Platform};
use crate::sample::{DEMO_SESSION, SampleSession};
use crate::worker::Worker;
use crate::worker_client::WorkerClient;

/// How long the demo waits for the pipeline.
const PIPELINE_WAIT: Duration = Duration::from_secs(60);

/// A directory removed when dropped, unless kept (`vl demo --keep`).
struct ScratchDir {
    path: std::path::PathBuf,
    keep: bool,
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// How many concepts, and which question, the short summary shows.
const CONCEPTS_SHOWN: usize = 8;

pub fn run(home: Option<std::path::PathBuf>, verbose: bool, keep: bool) -> ExitCode {
    match demo(home, verbose, keep) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vl demo: {e}");
            ExitCode::FAILURE
        }
    }
}

fn demo(home: Option<std::path::PathBuf>, verbose: bool, keep: bool) -> Result<(), String> {
    println!("VibeLearn demo — a recorded Claude Code session, replayed offline\n");
    let replayed = replay(DEMO_SESSION, home, keep)?;
    println!("session   {}", replayed.description);
    println!("hooks     {} events through the hook code and the HTTP API of a worker", replayed.events);
    if verbose {
        println!("worker    http://{} (data in a temporary directory)", replayed.worker_addr);
        println!("pipeline  finished in {} ms:", replayed.pipeline_ms);
        for step in replayed.pipeline["steps"].as_array().into_iter().flatten() {
            let note = skipped_note(&step["result"]);
            println!("  {:<17} {}{note}", step["kind"].as_str().unwrap_or("?"), step["state"].as_str().unwrap_or("?"));
        }
        print_summary(&replayed.summary);
        print_questions(&replayed.questions);
    } else {
        print_short(&replayed);
    }
    println!("\n{}", grounding_line(&replayed.summary["grounding"]));
    match &replayed.kept {
        Some(data_dir) => {
            println!("\nThe demo's data is kept in {}. Quiz yourself on it:", data_dir.display());
            println!("  VIBELEARN_DATA_DIR={} vl quiz", data_dir.display());
            println!(
                "(PowerShell: $env:VIBELEARN_DATA_DIR=\"{}\"; vl quiz). Delete the folder when done.",
                data_dir.display()
            );
        }
        None if verbose => println!("\nNext: `vl install claude-code` to record your own sessions, then `vl quiz`."),
        None => println!(
            "\nNext: `vl demo --verbose` for every question, `vl demo --keep` to quiz yourself on them,\n\
             or `vl install claude-code` to record your own sessions."
        ),
    }
    Ok(())
}

/// ` (skipped: why)` when a step skipped its work.
fn skipped_note(result: &Value) -> String {
    result.get("skipped").and_then(Value::as_str).map(|s| format!(" (skipped: {s})")).unwrap_or_default()
}

/// The summary a newcomer reads without scrolling: the steps on one line, the stack, the
/// concepts, the questions by type and one of them.
fn print_short(replayed: &Replayed) {
    let steps: Vec<String> = replayed.pipeline["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|step| {
            let kind = step["kind"].as_str().unwrap_or("?").trim_start_matches("analyze_");
            let state = step["state"].as_str().unwrap_or("?");
            format!("{kind} {state}{}", skipped_note(&step["result"]))
        })
        .collect();
    println!("pipeline  {} ms: {}", replayed.pipeline_ms, steps.join(" · "));
    let stack = &replayed.summary["stack"];
    let parts: Vec<String> = ["languages", "framework", "orm", "testing", "styling"]
        .iter()
        .map(|k| list(&stack[*k]))
        .filter(|v| v != "—")
        .collect();
    println!("stack     {}", parts.join(" · "));
    let concepts = replayed.summary["concepts"].as_array().cloned().unwrap_or_default();
    println!("\nConcepts met ({})", concepts.len());
    for concept in concepts.iter().take(CONCEPTS_SHOWN) {
        println!("  • {} [{}]", concept["name"].as_str().unwrap_or("?"), concept["category"].as_str().unwrap_or("?"));
    }
    let questions = replayed.questions["questions"].as_array().cloned().unwrap_or_default();
    let mut by_type: BTreeMap<&str, usize> = BTreeMap::new();
    for q in &questions {
        *by_type.entry(q["question_type"].as_str().unwrap_or("?")).or_default() += 1;
    }
    let types: Vec<String> = by_type.iter().map(|(t, n)| format!("{n} {t}")).collect();
    println!("\nQuiz questions ({}): {}", questions.len(), types.join(", "));
    if let Some(first) = questions.first() {
        println!("  for example: {}", first["question"].as_str().unwrap_or("?"));
    }
}

/// What replaying a recorded session through a fresh in-process worker produced.
pub struct Replayed {
    /// The data dir, when kept (`vl demo --keep`).
    pub kept: Option<std::path::PathBuf>,
    pub description: String,
    pub worker_addr: String,
    pub events: usize,
    pub pipeline_ms: u128,
    /// `GET /api/vibelearn/sessions/:id/pipeline`, `…/summary`, and the session's questions.
    pub pipeline: Value,
    pub summary: Value,
    pub questions: Value,
}

/// Replays a recorded session (`sample::SampleSession` JSON) through the real hook code and
/// HTTP API of an in-process worker with the offline provider, in a temporary data directory
/// removed afterwards unless `keep`, and returns what the worker's read API says about it.
/// `vl demo` runs it on the embedded sample; `vl-load grounding` on every fixture session.
pub fn replay(session_json: &str, home: Option<std::path::PathBuf>, keep: bool) -> Result<Replayed, String> {
    let scratch = ScratchDir {
        path: std::env::temp_dir().join(format!("vibelearn-demo-{}-{}", std::process::id(), fastrand::u32(..))),
        keep,
    };
    let data_dir = scratch.path.join("data");
    let project = scratch.path.join("shop");
    std::fs::create_dir_all(&project).map_err(|e| format!("cannot create {}: {e}", project.display()))?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free loopback port: {e}"))?;
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    env.insert("VIBELEARN_DATA_DIR".into(), data_dir.to_string_lossy().into_owned());
    env.insert("VIBELEARN_WORKER_PORT".into(), port.to_string());
    env.insert("VIBELEARN_PROVIDER".into(), "offline".into());
    env.insert("VIBELEARN_LOG_LEVEL".into(), "INFO".into());
    if let Some(home) = home {
        env.insert("HOME".into(), home.to_string_lossy().into_owned());
    }
    let config = Config::resolve(&env);
    config.ensure_settings_file();
    crate::logging::init(&config.logs_dir(), "INFO", Vec::new(), crate::logging::Rotation::BySize);

    let _lock = crate::worker::try_lock(&config.data_dir).map_err(|e| e.to_string())?;
    let worker = Worker::start(config.clone()).map_err(|e| e.to_string())?;
    let worker_addr = worker.http.addr.to_string();

    let session = SampleSession::parse(session_json).map_err(|e| format!("the sample session is broken: {e}"))?;
    session.materialize(&project).map_err(|e| format!("cannot write the sample project: {e}"))?;
    let started = Instant::now();
    let mut session_id = String::new();
    for step in &session.steps {
        let input = session.prepare_step(step, &project).map_err(|e| format!("cannot prepare a hook event: {e}"))?;
        // Claude Code names the session `session_id`; a recorded Cursor session, `conversation_id`.
        let platform = if input.get("session_id").is_some() { Platform::ClaudeCode } else { Platform::Cursor };
        if let Some(id) = input.get("session_id").or_else(|| input.get("conversation_id")).and_then(Value::as_str) {
            session_id = id.to_owned();
        }
        let event = HookEvent::parse(&step.event)
            .ok_or_else(|| format!("unknown hook event {:?} in the sample", step.event))?;
        crate::hook::run(platform, event, &input, &config);
    }

    let client = WorkerClient::new(&config, Duration::from_secs(5));
    let read = |path: String| client.get(&path).map(|reply| reply.body).map_err(|e| e.to_string());
    let pipeline = wait_for_pipeline(&client, &session_id)?;
    let pipeline_ms = started.elapsed().as_millis();
    let summary = read(format!("/api/vibelearn/sessions/{session_id}/summary"))?;
    let questions = read(format!("/api/vibelearn/questions/due?session={session_id}&limit=50"))?;
    worker.stop();
    let kept = keep.then(|| data_dir.clone());
    drop(scratch);
    Ok(Replayed {
        kept,
        description: session.description.clone(),
        worker_addr,
        events: session.steps.len(),
        pipeline_ms,
        pipeline,
        summary,
        questions,
    })
}

/// The summary's grounding figure as one line: how many questions show this session's code.
fn grounding_line(grounding: &Value) -> String {
    let count = |v: &Value| v.as_i64().unwrap_or(0);
    let by_kind = &grounding["by_kind"];
    format!(
        "Grounded  {} of {} questions show this session's own code ({:.0} %): {} quoted, {} blanked, {} mutated",
        count(&grounding["grounded"]),
        count(&grounding["questions"]),
        grounding["share"].as_f64().unwrap_or(0.0) * 100.0,
        count(&by_kind["quote"]),
        count(&by_kind["blank"]),
        count(&by_kind["mutation"]),
    )
}

fn wait_for_pipeline(client: &WorkerClient, session_id: &str) -> Result<Value, String> {
    let deadline = Instant::now() + PIPELINE_WAIT;
    loop {
        let pipeline =
            client.get(&format!("/api/vibelearn/sessions/{session_id}/pipeline")).map_err(|e| e.to_string())?.body;
        let steps = pipeline["steps"].as_array().cloned().unwrap_or_default();
        let finished = !steps.is_empty()
            && steps.iter().all(|s| matches!(s["state"].as_str(), Some("succeeded" | "dead" | "cancelled")));
        if finished {
            let failed: Vec<String> = steps
                .iter()
                .filter(|s| s["state"] != "succeeded")
                .map(|s| format!("{}: {}", s["kind"].as_str().unwrap_or("?"), s["last_error"].as_str().unwrap_or("?")))
                .collect();
            if failed.is_empty() {
                return Ok(pipeline);
            }
            return Err(format!("pipeline steps failed: {}", failed.join("; ")));
        }
        if Instant::now() > deadline {
            return Err(format!("the pipeline did not finish within {} s: {pipeline}", PIPELINE_WAIT.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn list(value: &Value) -> String {
    match value {
        Value::Array(items) if !items.is_empty() => {
            items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")
        }
        Value::String(s) => s.clone(),
        _ => "—".into(),
    }
}

fn print_summary(summary: &Value) {
    let stack = &summary["stack"];
    println!("\nDetected stack");
    println!("  languages   {}", list(&stack["languages"]));
    println!("  framework   {}", list(&stack["framework"]));
    println!("  orm         {}", list(&stack["orm"]));
    println!("  testing     {}", list(&stack["testing"]));
    println!("  styling     {}", list(&stack["styling"]));
    if let Some(built) = summary["summary"]["what_was_built"].as_str() {
        println!("\nWhat was built\n  {built}");
    }
    println!("\nConcepts met");
    for concept in summary["concepts"].as_array().into_iter().flatten() {
        println!(
            "  • {} [{} · {}] — {}",
            concept["name"].as_str().unwrap_or("?"),
            concept["category"].as_str().unwrap_or("?"),
            concept["difficulty"].as_str().unwrap_or("?"),
            concept["source_file"].as_str().unwrap_or("?").rsplit('/').next().unwrap_or("?"),
        );
    }
}

fn print_questions(questions: &Value) {
    let items = questions["questions"].as_array().cloned().unwrap_or_default();
    println!("\nQuiz questions ({})", items.len());
    for (n, q) in items.iter().enumerate() {
        println!(
            "\n  {}. [{} · {}] {}",
            n + 1,
            q["question_type"].as_str().unwrap_or("?"),
            q["concept"].as_str().unwrap_or("?"),
            q["question"].as_str().unwrap_or("?")
        );
        if let Some(snippet) = q["snippet"].as_str() {
            const SHOWN: usize = 8;
            for line in snippet.lines().take(SHOWN) {
                println!("       │ {line}");
            }
            if snippet.lines().count() > SHOWN {
                println!("       │ …");
            }
        }
        for (i, option) in q["options"].as_array().into_iter().flatten().enumerate() {
            println!("       {}) {}", (b'A' + i as u8) as char, option.as_str().unwrap_or("?"));
        }
        let origin = &q["grounding"];
        if let Some(kind) = origin["kind"].as_str() {
            println!(
                "       ↳ {kind} of {}:{}-{}",
                origin["file"].as_str().unwrap_or("?"),
                origin["line_start"].as_i64().unwrap_or(0),
                origin["line_end"].as_i64().unwrap_or(0)
            );
        }
    }
}
