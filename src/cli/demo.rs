//! `vl demo`: the whole product on an embedded sample, with no keys and no network. A
//! temporary data dir, an in-process worker on a free loopback port, the recorded sample
//! session replayed through the real hook code and HTTP API, the full pipeline with the
//! offline provider; then the detected stack, the concepts and the questions are printed.

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

/// A directory removed when dropped.
struct ScratchDir(std::path::PathBuf);

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn run(home: Option<std::path::PathBuf>) -> ExitCode {
    match demo(home) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vl demo: {e}");
            ExitCode::FAILURE
        }
    }
}

fn demo(home: Option<std::path::PathBuf>) -> Result<(), String> {
    let scratch =
        ScratchDir(std::env::temp_dir().join(format!("vibelearn-demo-{}-{}", std::process::id(), fastrand::u32(..))));
    let data_dir = scratch.0.join("data");
    let project = scratch.0.join("shop");
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

    println!("VibeLearn demo — a recorded Claude Code session, replayed offline\n");
    let _lock = crate::worker::try_lock(&config.data_dir).map_err(|e| e.to_string())?;
    let worker = Worker::start(config.clone()).map_err(|e| e.to_string())?;
    println!("worker    listening on http://{} (data in a temporary directory)", worker.http.addr);

    let session = SampleSession::parse(DEMO_SESSION).map_err(|e| format!("the embedded sample is broken: {e}"))?;
    println!("session   {}", session.description);
    session.materialize(&project).map_err(|e| format!("cannot write the sample project: {e}"))?;
    let started = Instant::now();
    let mut session_id = String::new();
    for step in &session.steps {
        let input = session.prepare_step(step, &project).map_err(|e| format!("cannot prepare a hook event: {e}"))?;
        if let Some(id) = input.get("session_id").and_then(Value::as_str) {
            session_id = id.to_owned();
        }
        let event = HookEvent::parse(&step.event)
            .ok_or_else(|| format!("unknown hook event {:?} in the sample", step.event))?;
        crate::hook::run(Platform::ClaudeCode, event, &input, &config);
    }
    println!("hooks     {} events replayed through the hook code and the HTTP API", session.steps.len());

    let client = WorkerClient::new(&config, Duration::from_secs(5));
    let pipeline = wait_for_pipeline(&client, &session_id)?;
    println!("pipeline  finished in {} ms:", started.elapsed().as_millis());
    for step in pipeline["steps"].as_array().into_iter().flatten() {
        let result = &step["result"];
        let note =
            result.get("skipped").and_then(Value::as_str).map(|s| format!(" (skipped: {s})")).unwrap_or_default();
        println!("  {:<17} {}{}", step["kind"].as_str().unwrap_or("?"), step["state"].as_str().unwrap_or("?"), note);
    }

    let summary = client.get(&format!("/api/vibelearn/sessions/{session_id}/summary")).map_err(|e| e.to_string())?.body;
    print_summary(&summary);
    let questions = client
        .get(&format!("/api/vibelearn/questions/due?session={session_id}&limit=50"))
        .map_err(|e| e.to_string())?
        .body;
    print_questions(&questions);
    println!("\nNext: `vl install claude-code` to record your own sessions, then `vl quiz`.");
    worker.stop();
    drop(scratch);
    Ok(())
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
    }
}
