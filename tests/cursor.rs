//! Cursor as it is today (issue 18, point 6): `postToolUseFailure` and `sessionEnd` (the
//! finalizer) registered; Cursor also runs the hooks configured for Claude Code with its own
//! field names, so with both `vl install claude-code` and `vl install cursor` each event must
//! be recorded once. Recorded payloads of both shapes for the same events.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::hooks::{db_rows, hook};
use crate::util::{TempDir, WorkerProcess, vl, wait_for};

/// Cursor's own hook inputs (afterFileEdit, beforeSubmitPrompt, stop, sessionEnd) and what it
/// passes to the Claude Code hooks for the same moments, for one edit of `file`.
struct Recorded {
    native: Vec<(&'static str, Value)>,
    via_claude_code: Vec<(&'static str, Value)>,
}

fn recorded(project: &Path, file: &Path) -> Recorded {
    let root = project.to_str().unwrap();
    let path = file.to_str().unwrap();
    let common = json!({"conversation_id": "cur-both-1", "generation_id": "gen-7", "model": "claude-4-sonnet",
        "cursor_version": "2.1.32", "workspace_roots": [root], "user_email": "dev@example.com",
        "transcript_path": null});
    let with = |extra: Value| {
        let mut v = common.clone();
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v
    };
    let native = vec![
        (
            "session-init",
            with(
                json!({"hook_event_name": "beforeSubmitPrompt", "prompt": "make the total a number", "attachments": []}),
            ),
        ),
        (
            "file-edit",
            with(json!({"hook_event_name": "afterFileEdit", "file_path": path,
            "edits": [{"old_string": "return String(total);", "new_string": "return total;"}]})),
        ),
        ("summarize", with(json!({"hook_event_name": "stop", "status": "completed", "loop_count": 0}))),
        (
            "session-complete",
            with(json!({"hook_event_name": "sessionEnd", "session_id": "cur-both-1",
            "reason": "completed", "duration_ms": 5230, "is_background_agent": false, "final_status": "completed"})),
        ),
    ];
    let via_claude_code = vec![
        ("session-start", with(json!({"hook_event_name": "SessionStart", "source": "startup"}))),
        ("session-init", with(json!({"hook_event_name": "UserPromptSubmit", "prompt": "make the total a number"}))),
        (
            "observation",
            with(json!({"hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_use_id": "tool_5f1",
            "cwd": root, "tool_input": {"file_path": path, "old_string": "return String(total);", "new_string": "return total;"},
            "tool_output": "{\"success\":true}"})),
        ),
        ("summarize", with(json!({"hook_event_name": "Stop", "status": "completed", "stop_hook_active": false}))),
        ("session-complete", with(json!({"hook_event_name": "SessionEnd", "reason": "completed"}))),
    ];
    Recorded { native, via_claude_code }
}

fn install(dir: &Path, port: u16, target: &str) {
    let output = vl(dir, port).args(["install", target]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

fn project_with_file() -> (TempDir, std::path::PathBuf) {
    let project = TempDir::new();
    let file = project.path().join("total.ts");
    std::fs::write(&file, "export function total(items: number[]): number {\n  const total = items.reduce((a, b) => a + b, 0);\n  return total;\n}\n").unwrap();
    (project, file)
}

fn wait_for_jobs(dir: &Path, port: u16) {
    let http = crate::util::Http::new(port).with_token(dir);
    wait_for("the queue to drain", Duration::from_secs(20), || {
        let (_, stats) = http.get("/api/jobs/stats").unwrap();
        ["available", "running", "retryable"].iter().all(|s| stats["by_state"][s].as_i64().unwrap_or(0) == 0)
    });
}

/// Runs the events in Cursor's order: each moment fires its native hook and its Claude Code hook.
fn run_both(dir: &Path, port: u16, events: &Recorded) {
    for (event, input) in &events.via_claude_code {
        assert!(hook(dir, port, "claude-code", event, input.to_string().as_bytes(), &[]).is_object());
    }
    for (event, input) in &events.native {
        assert_eq!(hook(dir, port, "cursor", event, input.to_string().as_bytes(), &[]), json!({"continue": true}));
    }
}

#[test]
fn with_both_installs_a_cursor_session_is_recorded_once() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    install(dir.path(), worker.port, "claude-code");
    install(dir.path(), worker.port, "cursor");
    let (project, file) = project_with_file();
    run_both(dir.path(), worker.port, &recorded(project.path(), &file));
    // A read has no native hook of ours: through the Claude Code path it is recorded, once.
    let read = json!({"conversation_id": "cur-both-1", "cursor_version": "2.1.32", "workspace_roots": [project.path()],
        "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_use_id": "tool_r1", "tool_input": {"file_path": file}});
    hook(dir.path(), worker.port, "claude-code", "observation", read.to_string().as_bytes(), &[]);
    wait_for_jobs(dir.path(), worker.port);
    let observations = db_rows(dir.path(), "SELECT tool_name, content FROM observations ORDER BY id");
    assert_eq!(observations.len(), 2, "the edit once, the read once: {observations:?}");
    assert_eq!(observations[0][0], "cursor_file_edit", "recorded by Cursor's own hook");
    assert!(observations[0][1].as_str().unwrap().contains("return total;"), "the whole file");
    assert_eq!(observations[1][0], "Read");
    assert_eq!(db_rows(dir.path(), "SELECT COUNT(*) FROM prompts")[0][0], json!(1));
    let sessions = db_rows(dir.path(), "SELECT id, platform, end_reason FROM sessions");
    assert_eq!(sessions, [[json!("cur-both-1"), json!("cursor"), json!("completed")]]);
    let stacks = db_rows(dir.path(), "SELECT COUNT(*) FROM jobs WHERE kind = 'analyze_stack'");
    assert_eq!(stacks[0][0], json!(1), "one Stop, one pipeline; the session end adds none");
}

#[test]
fn with_only_the_claude_code_install_cursor_events_are_recorded_as_cursors() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    install(dir.path(), worker.port, "claude-code");
    let (project, file) = project_with_file();
    let events = recorded(project.path(), &file);
    for (event, input) in &events.via_claude_code {
        hook(dir.path(), worker.port, "claude-code", event, input.to_string().as_bytes(), &[]);
    }
    wait_for_jobs(dir.path(), worker.port);
    let observations = db_rows(dir.path(), "SELECT tool_name, content, fragment FROM observations");
    assert_eq!(observations.len(), 1, "{observations:?}");
    assert_eq!(observations[0][0], "Edit");
    assert!(observations[0][1].as_str().unwrap().starts_with("export function total"), "read from disk");
    assert_eq!(db_rows(dir.path(), "SELECT COUNT(*) FROM prompts")[0][0], json!(1));
    let sessions = db_rows(dir.path(), "SELECT id, platform FROM sessions");
    assert_eq!(sessions, [[json!("cur-both-1"), json!("cursor")]]);
}

#[test]
fn a_cursor_session_whose_stop_never_came_is_analysed_at_session_end_once() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let (project, file) = project_with_file();
    let events = recorded(project.path(), &file);
    let (prompt, edit, end) = (&events.native[0], &events.native[1], &events.native[3]);
    for (event, input) in [prompt, edit, end, end] {
        hook(dir.path(), worker.port, "cursor", event, input.to_string().as_bytes(), &[]);
    }
    wait_for_jobs(dir.path(), worker.port);
    let kinds = db_rows(dir.path(), "SELECT kind, state FROM jobs WHERE kind != 'ingest' ORDER BY id");
    let kinds: Vec<&str> = kinds.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert_eq!(kinds, ["analyze_stack", "analyze_static", "analyze_concepts", "analyze_quiz", "sync"], "once");
    let http = worker.http();
    let (_, summary) = http.get("/api/vibelearn/sessions/cur-both-1/summary").unwrap();
    assert!(!summary["concepts"].as_array().unwrap().is_empty(), "{summary}");
}

#[test]
fn cursor_hooks_register_failures_and_the_session_end() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let output =
        vl(dir.path(), 1).args(["install", "cursor", "--project", project.path().to_str().unwrap()]).output().unwrap();
    assert!(output.status.success());
    let hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(project.path().join(".cursor/hooks.json")).unwrap()).unwrap();
    let command = |event: &str| hooks["hooks"][event][0]["command"].as_str().unwrap_or_default().to_owned();
    assert!(command("postToolUseFailure").ends_with(" hook cursor observation"), "{hooks}");
    assert!(command("sessionEnd").ends_with(" hook cursor session-complete"), "{hooks}");
}
