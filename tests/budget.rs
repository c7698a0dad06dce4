//! The provider the user sees and the daily token budget (SPEC §6.5): against a fake Messages
//! API that reports 1,000 tokens a call, a budget of 2,500 lets a session's three calls through (one is a repair),
//! then refuses the next session's call (no request reaches the fake), pauses the provider with
//! a notice, and `vl jobs resume` lets the refused step run. `vl status` shows the worker's
//! provider and model (not this shell's) with today's calls and tokens.

use std::time::Duration;

use serde_json::{Value, json};

use crate::fake_http::{FakeServer, Reply};
use crate::pipeline::{STEPS, concepts_answer, llm_worker, questions_answer, request_steps, seed_session, wait_step};
use crate::util::{TempDir, vl, wait_for};

/// A Messages API answer that reports its usage: 600 tokens in, 400 out.
fn counted(text: &Value) -> Reply {
    Reply::json(
        200,
        &json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": text.to_string()}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 600, "output_tokens": 400}}),
    )
}

#[test]
fn the_daily_token_budget_pauses_the_provider_and_resume_lets_it_go_on() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let fake = FakeServer::start(
        vec![counted(&concepts_answer("src/cart.ts")), counted(&questions_answer()), counted(&questions_answer())],
        counted(&concepts_answer("src/cart.ts")),
    );
    let worker = llm_worker(&dir, &fake, &[("VIBELEARN_LLM_DAILY_TOKENS", "2500")]);
    let http = worker.http();
    let first = seed_session(&http, "budget-1", project.path());
    request_steps(&http, &first, &STEPS);
    wait_step(&http, &first, "analyze_quiz", "succeeded", Duration::from_secs(20));
    let calls = fake.requests().len();
    let (_, health) = http.get("/api/health").unwrap();
    assert_eq!(health["llm"]["tokens_today"], json!(calls * 1000), "{health}");
    assert_eq!(health["llm"]["calls_today"], json!(calls));
    assert!(health["llm"]["description"].as_str().unwrap().starts_with("anthropic claude-"), "{health}");

    // Spent: the next session's concept step is refused without a call, and the provider pauses.
    let second = seed_session(&http, "budget-2", project.path());
    request_steps(&http, &second, &STEPS);
    let refused = wait_step(&http, &second, "analyze_concepts", "dead", Duration::from_secs(20));
    assert!(refused["last_error"].as_str().unwrap().contains("daily budget"), "{refused}");
    wait_step(&http, &second, "analyze_quiz", "held", Duration::from_secs(20));
    assert_eq!(fake.requests().len(), calls, "no call once the budget is spent");
    let (_, health) = http.get("/api/health").unwrap();
    let notices = health["notices"].to_string();
    assert!(notices.contains("anthropic paused") && notices.contains("when your next day begins"), "{notices}");
    let status = vl(dir.path(), worker.port).arg("status").output().unwrap();
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(status.contains("(the worker's; chosen by VIBELEARN_PROVIDER)"), "{status}");
    assert!(status.contains(&format!("{calls} calls")), "{status}");
    assert!(status.contains("of 2500 tokens"), "{status}");
    // What a session costs: the prompts' bound, and today's 1,000 tokens a call twice.
    assert!(status.contains("a session costs up to ~41,232 tokens"), "{status}");
    assert!(
        status.contains("~2,000 as measured today") && status.contains("budget of 2,500 fits 0 sessions"),
        "{status}"
    );
    let line = vl(dir.path(), worker.port).arg("statusline").stdin(std::process::Stdio::null()).output().unwrap();
    let line = String::from_utf8_lossy(&line.stdout);
    assert!(line.contains("⚠ anthropic paused (daily budget spent) — vl status"), "the status line says so: {line}");

    // Resume: the refused step is replayed and runs, the budget counted from now.
    let resume = vl(dir.path(), worker.port).args(["jobs", "resume", "--provider", "anthropic"]).output().unwrap();
    assert!(resume.status.success(), "{}", String::from_utf8_lossy(&resume.stderr));
    wait_step(&http, &second, "analyze_concepts", "succeeded", Duration::from_secs(20));
    wait_for("more calls after the resume", Duration::from_secs(10), || fake.requests().len() > calls);
}

#[test]
fn status_names_the_provider_even_without_sessions() {
    let dir = TempDir::new();
    let output = vl(dir.path(), crate::util::free_port()).arg("status").output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("provider") && stdout.contains("offline (no LLM, free)"), "{stdout}");
    assert!(stdout.contains("from this shell's settings"), "{stdout}");
    assert!(!stdout.contains("a session costs"), "the offline provider spends no tokens: {stdout}");
}

#[test]
#[cfg_attr(windows, ignore = "the stand-in claude CLI is a shell script")]
fn a_worker_started_from_claude_code_does_not_spend_its_api_key() {
    // Claude Code's environment (CLAUDECODE=1 and an API key), and a `claude` CLI on PATH that
    // records whether it was handed the key, then answers nothing useful.
    let dir = TempDir::new();
    let project = TempDir::new();
    let bin = dir.path().join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let seen = dir.path().join("claude-saw-key");
    let claude = bin.join("claude");
    std::fs::write(
        &claude,
        format!("#!/bin/sh\necho \"key=${{ANTHROPIC_API_KEY:-none}}\" > '{}'\necho '{{}}'\n", seen.display()),
    )
    .unwrap();
    crate::util::make_executable(&claude);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let env = [
        ("VIBELEARN_PROVIDER", "auto"),
        ("CLAUDECODE", "1"),
        ("ANTHROPIC_API_KEY", "sk-ant-claude-codes-own-0123456789"),
        ("PATH", path.as_str()),
    ];
    let worker = crate::util::WorkerProcess::start_with(dir.path(), crate::util::free_port(), &env);
    let http = worker.http();
    let (_, health) = http.get("/api/health").unwrap();
    let provider = health["llm"]["description"].as_str().unwrap();
    assert!(provider.starts_with("command (the claude CLI"), "the key is left alone: {provider}");
    assert_eq!(health["llm"]["source"], "claude CLI", "{health}");
    let note = health["llm"]["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("ANTHROPIC_API_KEY is set but not used") && note.contains("`vl provider anthropic`"),
        "{note}"
    );
    let session = seed_session(&http, "cc-key", project.path());
    request_steps(&http, &session, &STEPS[..3]);
    wait_for("the claude CLI to be asked", Duration::from_secs(20), || seen.exists());
    assert_eq!(std::fs::read_to_string(&seen).unwrap().trim(), "key=none", "the CLI ran on its own login");
}
