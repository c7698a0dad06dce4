//! The payloads the real Gemini CLI, Codex and Copilot CLI sent (recorded in
//! `tests/fixtures/hooks/`), replayed through `vl hook <agent> <event>` as child processes:
//! each line on stdout is what that agent accepts, each call is stored once (a replay too,
//! with the keys derived for agents that send no call id), the skip list matches the agent's
//! own tool names, excluded projects record nothing, and sync sends the session's agent.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::fake_http::{FakeServer, Reply};
use crate::hooks::{db_rows, hook};
use crate::util::{TempDir, WorkerProcess, free_port, wait_for};

const GEMINI: &str = include_str!("fixtures/hooks/gemini.jsonl");
const CODEX: &str = include_str!("fixtures/hooks/codex.jsonl");
const COPILOT: &str = include_str!("fixtures/hooks/copilot.jsonl");

/// Our event for an agent's recorded event name.
fn our_event(agent_event: &str) -> &'static str {
    match agent_event {
        "SessionStart" | "sessionStart" => "session-start",
        "BeforeAgent" | "UserPromptSubmit" | "userPromptSubmitted" => "session-init",
        "AfterTool" | "PostToolUse" | "postToolUse" | "postToolUseFailure" => "observation",
        "AfterAgent" | "Stop" | "agentStop" => "summarize",
        "SessionEnd" | "sessionEnd" => "session-complete",
        other => panic!("unmapped event {other}"),
    }
}

fn recorded(text: &str) -> Vec<(String, Value)> {
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| (v["event"].as_str().unwrap().to_owned(), v["payload"].clone()))
        .collect()
}

/// Replays an agent's recording; returns each stdout line.
fn replay(home: &Path, port: u16, agent: &str, text: &str, env: &[(&str, &str)]) -> Vec<Value> {
    recorded(text)
        .iter()
        .map(|(event, payload)| hook(home, port, agent, our_event(event), payload.to_string().as_bytes(), env))
        .collect()
}

fn observations(home: &Path) -> i64 {
    db_rows(home, "SELECT COUNT(*) FROM observations")[0][0].as_i64().unwrap()
}

fn wait_ingested(home: &Path) {
    wait_for("every ingest job", Duration::from_secs(20), || {
        db_rows(home, "SELECT COUNT(*) FROM jobs WHERE kind = 'ingest' AND state NOT IN ('succeeded', 'dead')")[0][0]
            == 0
    });
}

#[test]
fn each_agents_recorded_session_is_stored_once_in_the_form_its_agent_accepts() {
    for (agent, text, calls) in [("gemini", GEMINI, 4), ("codex", CODEX, 4), ("copilot", COPILOT, 5)] {
        let home = TempDir::new();
        let worker = WorkerProcess::start(home.path());
        let lines = replay(home.path(), worker.port, agent, text, &[]);
        for line in &lines {
            match agent {
                "copilot" => assert_eq!(line, &json!({}), "Copilot CLI takes {{}}"),
                _ => {
                    let keys: Vec<&String> = line.as_object().unwrap().keys().collect();
                    assert!(
                        keys.iter().all(|k| ["continue", "suppressOutput", "systemMessage"].contains(&k.as_str())),
                        "{agent}: only keys it knows: {line}"
                    );
                }
            }
        }
        wait_ingested(home.path());
        assert_eq!(observations(home.path()), calls, "{agent}");
        let sessions = db_rows(home.path(), "SELECT platform, ended_at IS NOT NULL FROM sessions");
        assert_eq!(sessions, [[json!(agent), json!(1)]], "{agent}");
        let prompts = db_rows(home.path(), "SELECT text FROM prompts");
        assert_eq!(prompts.len(), 1, "{agent}");
        assert!(!prompts[0][0].as_str().unwrap().contains("private"), "{agent}: {prompts:?}");
        // A replay of the tool calls is stored once: the same (derived) keys.
        for (event, payload) in recorded(text).iter().filter(|(e, _)| our_event(e) == "observation") {
            hook(home.path(), worker.port, agent, our_event(event), payload.to_string().as_bytes(), &[]);
        }
        wait_ingested(home.path());
        assert_eq!(observations(home.path()), calls, "{agent}: a replay adds nothing");
        let tools = db_rows(home.path(), "SELECT DISTINCT tool_name FROM observations ORDER BY 1");
        assert!(tools.iter().any(|t| t[0] == "Write") && tools.iter().any(|t| t[0] == "Bash"), "{agent}: {tools:?}");
    }
}

#[test]
fn the_skip_list_takes_the_agents_own_tool_names_and_excluded_projects_record_nothing() {
    let home = TempDir::new();
    let worker = WorkerProcess::start(home.path());
    replay(home.path(), worker.port, "gemini", GEMINI, &[("VIBELEARN_SKIP_TOOLS", "write_file,run_shell_command")]);
    wait_ingested(home.path());
    let tools = db_rows(home.path(), "SELECT tool_name FROM observations");
    assert_eq!(tools, [[json!("Edit")]], "only the edit is left");
    let other = TempDir::new();
    let worker = WorkerProcess::start(other.path());
    let lines =
        replay(other.path(), worker.port, "copilot", COPILOT, &[("VIBELEARN_EXCLUDED_PROJECTS", "/home/dev/**")]);
    assert!(lines.iter().all(|l| l == &json!({})));
    assert_eq!(db_rows(other.path(), "SELECT COUNT(*) FROM jobs")[0][0], json!(0));
}

#[test]
fn sync_sends_the_sessions_agent() {
    let home = TempDir::new();
    let upstream = FakeServer::start(vec![], Reply::raw(200, r#"{"ok":true}"#));
    std::fs::write(home.path().join("config.json"), json!({"api_key": crate::pipeline::KEY}).to_string()).unwrap();
    let env = [("VIBELEARN_API_URL", upstream.url.as_str()), ("VIBELEARN_TIMEOUT_SYNC_SECS", "5")];
    let worker = WorkerProcess::start_with(home.path(), free_port(), &env);
    replay(home.path(), worker.port, "codex", CODEX, &[]);
    wait_for("the sync upload", Duration::from_secs(40), || !upstream.requests().is_empty());
    let sent = upstream.requests()[0].json();
    assert_eq!(sent["session"]["ide"], "codex", "{sent}");
}

#[test]
fn status_lists_the_agents_installed_and_the_sessions_by_agent() {
    let home = TempDir::new();
    let worker = WorkerProcess::start(home.path());
    let vl = |args: &[&str], path: &str| {
        crate::util::vl(home.path(), worker.port).args(args).env("PATH", path).output().unwrap()
    };
    for agent in ["gemini", "copilot"] {
        let output = vl(&["install", agent], "/usr/bin:/bin");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    }
    // Without Codex there is nothing to trust its hooks with: refused, nothing written.
    let refused = vl(&["install", "codex"], "/nowhere");
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no `codex` on PATH"), "{refused:?}");
    assert!(!home.path().join(".codex/hooks.json").exists());
    replay(home.path(), worker.port, "gemini", GEMINI, &[]);
    wait_ingested(home.path());
    let status = String::from_utf8(vl(&["status"], "/usr/bin:/bin").stdout).unwrap();
    let row = |label: &str| status.lines().find(|l| l.trim_start().starts_with(label)).unwrap_or("").to_owned();
    assert!(row("agents").ends_with("Gemini CLI, Copilot CLI"), "{status}");
    assert!(row("sessions").ends_with("1 (gemini 1)"), "{status}");
    // The dashboard's session list says which agent each came from.
    let (_, sessions) = worker.http().with_token(home.path()).get("/api/sessions?limit=5").unwrap();
    assert_eq!(sessions["sessions"][0]["platform"], "gemini", "{sessions}");
    for agent in ["gemini", "copilot"] {
        assert!(vl(&["uninstall", agent], "/usr/bin:/bin").status.success());
    }
    let status = String::from_utf8(vl(&["status"], "/usr/bin:/bin").stdout).unwrap();
    assert!(status.contains("none installed"), "{status}");
}
