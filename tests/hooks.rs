//! Hooks as real child processes (`vl hook …` with JSON on stdin): recorded Claude Code and
//! Cursor sessions with the worker up and down, bad stdin, exclusion, skipped tools, privacy.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use vibelearn::sample::SampleSession;

use crate::util::{Http, TempDir, WorkerProcess, free_port, vl, wait_for};

pub const CLAUDE_SESSION: &str = include_str!("fixtures/sessions/nextjs-cart.json");
const CURSOR_SESSION: &str = include_str!("fixtures/sessions/cursor-fastapi.json");

/// Runs one hook; asserts the output contract (exit 0, one JSON line, empty stderr).
pub fn hook(dir: &Path, port: u16, platform: &str, event: &str, stdin: &[u8], env: &[(&str, &str)]) -> Value {
    let mut child = vl(dir, port)
        .args(["hook", platform, event])
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn vl hook");
    {
        let mut input = child.stdin.take().unwrap();
        let _ = input.write_all(stdin);
    }
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{platform} {event}: exit {:?}", output.status);
    assert!(output.stderr.is_empty(), "{platform} {event}: stderr: {}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{platform} {event}: stdout must be one line: {stdout:?}");
    serde_json::from_str(lines[0]).expect("stdout is JSON")
}

pub fn replay(
    session: &str,
    platform: &str,
    dir: &Path,
    project: &Path,
    port: u16,
    env: &[(&str, &str)],
) -> Vec<Value> {
    let session = SampleSession::parse(session).unwrap();
    session.materialize(project).unwrap();
    session
        .steps
        .iter()
        .map(|step| {
            let input = session.prepare_step(step, project).unwrap();
            hook(dir, port, platform, &step.event, input.to_string().as_bytes(), env)
        })
        .collect()
}

pub fn db_rows(dir: &Path, sql: &str) -> Vec<Vec<Value>> {
    let conn = rusqlite::Connection::open(dir.join("vibelearn.db")).unwrap();
    let mut stmt = conn.prepare(sql).unwrap();
    let columns = stmt.column_count();
    stmt.query_map([], |r| {
        Ok((0..columns)
            .map(|i| match r.get_ref(i).unwrap() {
                rusqlite::types::ValueRef::Null => Value::Null,
                rusqlite::types::ValueRef::Integer(n) => json!(n),
                rusqlite::types::ValueRef::Real(f) => json!(f),
                rusqlite::types::ValueRef::Text(t) => json!(String::from_utf8_lossy(t)),
                rusqlite::types::ValueRef::Blob(_) => json!("<blob>"),
            })
            .collect())
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn wait_for_ingest(http: &Http, dir: &Path) {
    wait_for("every ingest job to finish", Duration::from_secs(20), || {
        let (_, stats) = http.get("/api/jobs/stats").unwrap();
        let ingest = &stats["by_kind"]["ingest"];
        ingest["available"].as_i64().unwrap_or(0)
            + ingest["running"].as_i64().unwrap_or(0)
            + ingest["retryable"].as_i64().unwrap_or(0)
            == 0
            && ingest["succeeded"].as_i64().unwrap_or(0) > 0
    });
    let _ = dir;
}

#[test]
fn a_claude_code_session_with_the_worker_up_is_recorded_typed_and_private_free() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let lines = replay(CLAUDE_SESSION, "claude-code", dir.path(), project.path(), worker.port, &[]);
    assert_eq!(lines[0], json!({"continue": true, "suppressOutput": true}), "only keys Claude Code knows");
    assert!(lines[1..].iter().all(|l| *l == json!({"continue": true})));
    let http = worker.http();
    wait_for_ingest(&http, dir.path());
    let observations = db_rows(
        dir.path(),
        "SELECT obs_type, tool_name, action, file_path, content, packages FROM observations ORDER BY id",
    );
    let tools: Vec<&str> = observations.iter().map(|r| r[1].as_str().unwrap()).collect();
    assert_eq!(
        tools,
        ["Read", "Write", "Edit", "Write", "Write", "MultiEdit", "Write", "Bash", "mcp__github__search_code"],
        "TodoWrite is skipped"
    );
    let types: Vec<&str> = observations.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "mcp_tool",
            "file_edit",
            "file_edit",
            "file_edit",
            "file_edit",
            "file_edit",
            "file_edit",
            "bash_command",
            "mcp_tool"
        ]
    );
    assert_eq!(observations[1][2], "create");
    assert_eq!(observations[2][2], "modify");
    // The Edit captured the whole file as it was right after the edit, not just new_string.
    let edited = observations[2][4].as_str().unwrap();
    assert!(edited.contains("export async function getCart") && edited.contains("export function cartTotal"));
    // MultiEdit captured the page from disk.
    assert!(observations[5][4].as_str().unwrap().contains("Your cart"));
    assert_eq!(observations[7][5], json!("[\"zod\"]"));
    let prompts = db_rows(dir.path(), "SELECT text FROM prompts");
    assert_eq!(prompts.len(), 1);
    let prompt = prompts[0][0].as_str().unwrap();
    assert!(prompt.starts_with("Add a shopping cart") && !prompt.contains("hunter2"), "{prompt}");
    // The Stop hook queued the five steps in order, then SessionEnd ended the session.
    let kinds = db_rows(dir.path(), "SELECT kind FROM jobs WHERE kind != 'ingest' ORDER BY id");
    let kinds: Vec<&str> = kinds.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert_eq!(kinds, ["analyze_stack", "analyze_static", "analyze_concepts", "analyze_quiz", "sync"]);
    let concepts_job = db_rows(dir.path(), "SELECT payload FROM jobs WHERE kind = 'analyze_concepts'");
    assert!(
        concepts_job[0][0].as_str().unwrap().contains("useCart hook"),
        "last assistant message read from the transcript"
    );
    let ended = db_rows(dir.path(), "SELECT ended_at IS NOT NULL, end_reason, project FROM sessions");
    assert_eq!(ended[0][0], json!(1));
    assert_eq!(ended[0][1], "exit");
}

#[test]
fn with_the_worker_down_events_land_in_the_database_and_a_worker_is_started() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let port = free_port();
    let session = SampleSession::parse(CLAUDE_SESSION).unwrap();
    session.materialize(project.path()).unwrap();
    // Observations only (session-start would start the worker itself).
    for step in session.steps.iter().filter(|s| s.event == "observation").take(3) {
        let input = session.prepare_step(step, project.path()).unwrap();
        let started = Instant::now();
        assert_eq!(
            hook(dir.path(), port, "claude-code", "observation", input.to_string().as_bytes(), &[]),
            json!({"continue": true})
        );
        assert!(started.elapsed() < Duration::from_secs(3), "a hook with the worker down must stay fast");
    }
    let queued = db_rows(dir.path(), "SELECT COUNT(*) FROM jobs WHERE kind = 'ingest'");
    assert_eq!(queued[0][0], json!(3), "the events must be in the database");
    // One of the hooks spawned a worker; it runs the queued jobs.
    let http = Http::new(port).with_token(dir.path());
    wait_for("the spawned worker", Duration::from_secs(20), || {
        http.get("/api/readiness").map(|r| r.0 == 200).unwrap_or(false)
    });
    let http = Http::new(port).with_token(dir.path());
    wait_for_ingest(&http, dir.path());
    assert_eq!(db_rows(dir.path(), "SELECT COUNT(*) FROM observations")[0][0], json!(3));
    let _ = http.post("/api/admin/shutdown", &json!({}));
    wait_for("the spawned worker to stop", Duration::from_secs(15), || http.get("/api/health").is_err());
}

#[test]
fn garbage_empty_and_huge_stdin_exit_zero_and_record_nothing() {
    let dir = TempDir::new();
    let port = free_port();
    let huge = format!("{{\"session_id\":\"s\",\"prompt\":\"{}\"}}", "x".repeat(9 * 1024 * 1024));
    for stdin in [&b""[..], b"not json at all", b"{\"session_id\": \"s\", ", b"[1,2,3]", huge.as_bytes()] {
        for (platform, event) in [("claude-code", "session-init"), ("cursor", "observation"), ("raw", "summarize")] {
            assert_eq!(hook(dir.path(), port, platform, event, stdin, &[]), json!({"continue": true}));
        }
    }
    assert_eq!(hook(dir.path(), port, "nonsense", "observation", b"{}", &[]), json!({"continue": true}));
    assert!(
        !dir.path().join("vibelearn.db").exists() || db_rows(dir.path(), "SELECT COUNT(*) FROM jobs")[0][0] == json!(0)
    );
}

#[test]
fn a_hook_returns_as_soon_as_its_json_arrives_even_if_stdin_stays_open() {
    let dir = TempDir::new();
    let mut child = vl(dir.path(), free_port())
        .args(["hook", "claude-code", "observation"])
        .env("VIBELEARN_EXCLUDED_PROJECTS", "/x/**")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(br#"{"session_id":"s","cwd":"/x/y","tool_name":"Read"}"#).unwrap();
    let started = Instant::now();
    let output = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), r#"{"continue":true}"#);
    drop(stdin);
}

#[test]
fn excluded_projects_and_skipped_tools_record_nothing() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let glob = format!("{}/**", project.path().display());
    let env = [("VIBELEARN_EXCLUDED_PROJECTS", glob.as_str())];
    let lines = replay(CLAUDE_SESSION, "claude-code", dir.path(), project.path(), worker.port, &env);
    assert_eq!(lines[0], json!({"continue": true, "suppressOutput": true}));
    assert_eq!(db_rows(dir.path(), "SELECT COUNT(*) FROM jobs")[0][0], json!(0));
    let skipped =
        json!({"session_id": "s", "cwd": "/tmp/elsewhere", "tool_name": "Skill", "tool_input": {}, "tool_use_id": "x"});
    hook(dir.path(), worker.port, "claude-code", "observation", skipped.to_string().as_bytes(), &[]);
    assert_eq!(db_rows(dir.path(), "SELECT COUNT(*) FROM jobs")[0][0], json!(0));
}

#[test]
fn a_private_turn_and_nested_tags_leave_no_byte_in_the_database() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let port = worker.port;
    let marker = "MARKER-7f3a9c-PRIVATE";
    let send =
        |event: &str, input: Value| hook(dir.path(), port, "claude-code", event, input.to_string().as_bytes(), &[]);
    // An entirely private prompt (case-insensitive, attributes, nested) and its tool calls.
    send(
        "session-init",
        json!({"session_id": "p1", "cwd": "/tmp/p", "prompt": format!("  <PRIVATE reason=\"x\">{marker} <private>{marker}</private></Private>  ")}),
    );
    send(
        "observation",
        json!({"session_id": "p1", "cwd": "/tmp/p", "tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": format!("echo {marker}")}}),
    );
    // A normal prompt ends the private turn; private parts inside strings are removed.
    send(
        "session-init",
        json!({"session_id": "p1", "cwd": "/tmp/p", "prompt": format!("fix the bug <system-instruction>{marker}</system-instruction> please")}),
    );
    send(
        "observation",
        json!({"session_id": "p1", "cwd": "/tmp/p", "tool_name": "mcp__notes__save", "tool_use_id": "t2",
        "tool_input": {"text": format!("keep <vibelearn-context>{marker}</vibelearn-context> this"), "nested": [format!("<private>{marker}")]},
        "tool_response": {"echo": format!("<System_Instruction>{marker}</System_Instruction>ok")}}),
    );
    send(
        "summarize",
        json!({"session_id": "p1", "cwd": "/tmp/p", "last_assistant_message": format!("done <private>{marker}</private>")}),
    );
    let http = worker.http();
    wait_for_ingest(&http, dir.path());
    assert_eq!(
        db_rows(dir.path(), "SELECT COUNT(*) FROM observations")[0][0],
        json!(1),
        "the private turn's tool call must not be recorded"
    );
    assert_eq!(db_rows(dir.path(), "SELECT text FROM prompts")[0][0], json!("fix the bug  please"));
    drop(worker);
    for file in ["vibelearn.db", "vibelearn.db-wal"] {
        if let Ok(bytes) = std::fs::read(dir.path().join(file)) {
            assert!(!bytes.windows(marker.len()).any(|w| w == marker.as_bytes()), "{file} holds private bytes");
        }
    }
    for entry in std::fs::read_dir(dir.path().join("logs")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
        assert!(!text.contains(marker), "a log holds private bytes");
    }
}

#[test]
fn a_cursor_session_is_recorded() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let lines = replay(CURSOR_SESSION, "cursor", dir.path(), project.path(), worker.port, &[]);
    assert!(lines.iter().all(|l| *l == json!({"continue": true})));
    let http = worker.http();
    wait_for_ingest(&http, dir.path());
    let rows = db_rows(dir.path(), "SELECT obs_type, tool_name, content, packages FROM observations ORDER BY id");
    assert_eq!(rows.len(), 3);
    assert_eq!((rows[0][0].as_str(), rows[0][1].as_str()), (Some("file_edit"), Some("cursor_file_edit")));
    assert!(rows[0][2].as_str().unwrap().contains("async def read_todo"));
    assert_eq!((rows[1][0].as_str(), rows[1][3].as_str()), (Some("bash_command"), Some("[\"fastapi\",\"uvicorn\"]")));
    assert_eq!(rows[2][1], "docs_search");
    let session = db_rows(dir.path(), "SELECT id, cwd, platform FROM sessions");
    assert_eq!(session[0][0], "cursor-conv-1");
    assert_eq!(session[0][2], "cursor");
    let kinds = db_rows(dir.path(), "SELECT COUNT(*) FROM jobs WHERE kind != 'ingest'");
    assert_eq!(kinds[0][0], json!(5));
}

#[test]
fn stop_hook_active_and_auto_sync_off_are_respected() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let stop = json!({"session_id": "s", "cwd": "/tmp/s", "stop_hook_active": true});
    hook(dir.path(), worker.port, "claude-code", "summarize", stop.to_string().as_bytes(), &[]);
    assert_eq!(db_rows(dir.path(), "SELECT COUNT(*) FROM jobs")[0][0], json!(0));
    let stop = json!({"session_id": "s", "cwd": "/tmp/s", "transcript_path": "/nonexistent"});
    hook(
        dir.path(),
        worker.port,
        "claude-code",
        "summarize",
        stop.to_string().as_bytes(),
        &[("VIBELEARN_AUTO_SYNC", "false")],
    );
    let kinds = db_rows(dir.path(), "SELECT kind FROM jobs ORDER BY id");
    assert_eq!(kinds.len(), 4);
    assert!(kinds.iter().all(|k| k[0] != "sync"));
    let _ = Command::new("true").status();
}

/// Runs `vl ARGS` with `stdin`; asserts the hook contract and returns the line.
fn bare_hook(dir: &Path, port: u16, args: &[&str], stdin: &Value) -> Value {
    let mut child = vl(dir, port)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn vl");
    child.stdin.take().unwrap().write_all(stdin.to_string().as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success() && output.stderr.is_empty(), "vl {args:?}: {output:?}");
    serde_json::from_slice(&output.stdout).expect("one JSON line")
}

#[test]
fn hook_event_name_routes_a_hook_whose_arguments_were_dropped() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let cwd = project.path().to_str().unwrap();
    let prompt = json!({"session_id": "s-bare", "cwd": cwd, "hook_event_name": "UserPromptSubmit",
                        "prompt": "add a cart", "transcript_path": "/nonexistent"});
    let tool = json!({"session_id": "s-bare", "cwd": cwd, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                      "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a"}, "tool_use_id": "t1"});
    let cursor = json!({"conversation_id": "c-bare", "workspace_roots": [cwd], "hook_event_name": "beforeSubmitPrompt",
                        "prompt": "from cursor"});
    // `vl hook` without platform and event, `vl` alone (an exec-form hook without its args),
    // and `vl hook cursor` without the event.
    assert_eq!(bare_hook(dir.path(), worker.port, &["hook"], &prompt), json!({"continue": true}));
    assert_eq!(bare_hook(dir.path(), worker.port, &[], &tool), json!({"continue": true}));
    assert_eq!(bare_hook(dir.path(), worker.port, &["hook", "cursor"], &cursor), json!({"continue": true}));
    wait_for_ingest(&worker.http(), dir.path());
    wait_for("all three events", Duration::from_secs(10), || {
        db_rows(dir.path(), "SELECT COUNT(*) FROM prompts")[0][0] == 2
            && db_rows(dir.path(), "SELECT COUNT(*) FROM observations")[0][0] == 1
    });
    let platforms = db_rows(dir.path(), "SELECT id, platform FROM sessions ORDER BY id");
    assert_eq!(platforms, [[json!("c-bare"), json!("cursor")], [json!("s-bare"), json!("claude-code")]]);
    // `vl` alone with anything but a hook's JSON is a usage error, as before.
    let output = vl(dir.path(), worker.port).stdin(Stdio::null()).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
}
