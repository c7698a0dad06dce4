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

// A private turn's last word (issue 39 §3): a prompt that is all `<private>my salary is …`, then
// the agent's end of turn quoting it, in its last-message field and in a transcript.

const SALARY: &str = "salary is 91,234";
const CODE: &str =
    "export function cartTotal(prices: number[]): number {\n  return prices.reduce((a, b) => a + b, 0);\n}\n";

/// One agent's turns: a public prompt and a file it wrote (so the concepts step has code and
/// asks the LLM), a private prompt, and the end of the turn quoting it.
struct Turns {
    agent: &'static str,
    public: Vec<(&'static str, Value)>,
    private_prompt: Value,
    stop: Value,
}

/// The last line of a transcript that holds `said` as the assistant's last message.
fn transcript_saying(dir: &Path, said: &str) -> String {
    let path = dir.join("transcript.jsonl");
    let line =
        json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": said}]}});
    std::fs::write(&path, format!("{line}\n")).unwrap();
    path.to_string_lossy().into_owned()
}

/// The recorded payloads of `agent` turned into [`Turns`]: `prompt_key`, `last_key` (or none)
/// and `transcript_key` are the fields that agent names them by.
fn recorded_turns(agent: &'static str, text: &str, keys: (&str, Option<&str>, &str), transcript: &str) -> Turns {
    let (prompt_key, last_key, transcript_key) = keys;
    let events = recorded(text);
    let find = |name: &str| events.iter().find(|(e, _)| our_event(e) == name).map(|(_, p)| p.clone()).unwrap();
    let prompt = find("session-init");
    let mut private_prompt = prompt.clone();
    private_prompt[prompt_key] = json!(format!("<private>my {SALARY} a year</private>"));
    let mut stop = find("summarize");
    if let Some(key) = last_key {
        stop[key] = json!(format!("Drafted the email saying your {SALARY} a year."));
    }
    if agent == "gemini" {
        stop["prompt"] = private_prompt[prompt_key].clone(); // AfterAgent repeats the turn's prompt
    }
    stop[transcript_key] = json!(transcript);
    Turns { agent, public: vec![("session-init", prompt), ("observation", find("observation"))], private_prompt, stop }
}

/// Claude Code's and Cursor's payloads, as their CLIs send them.
fn ide_turns(agent: &'static str, project: &Path, transcript: &str) -> Turns {
    let file = project.join("src/cart.ts");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(&file, CODE).unwrap();
    let (file, cwd) = (file.to_string_lossy().into_owned(), project.to_string_lossy().into_owned());
    let said = format!("Drafted the email saying your {SALARY} a year.");
    if agent == "cursor" {
        let base = json!({"conversation_id": "cu-1", "generation_id": "g-1", "cursor_version": "1.7.0", "workspace_roots": [cwd]});
        let with = |extra: Value| {
            let mut payload = base.clone();
            payload.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            payload
        };
        return Turns {
            agent,
            public: vec![
                ("session-init", with(json!({"hook_event_name": "beforeSubmitPrompt", "prompt": "Add cartTotal"}))),
                (
                    "file-edit",
                    with(json!({"hook_event_name": "afterFileEdit", "file_path": file,
                    "edits": [{"old_string": "", "new_string": CODE}]})),
                ),
            ],
            private_prompt: with(
                json!({"hook_event_name": "beforeSubmitPrompt", "prompt": format!("<private>my {SALARY} a year</private>")}),
            ),
            stop: with(
                json!({"hook_event_name": "stop", "status": "completed", "loop_count": 0, "transcript_path": transcript}),
            ),
        };
    }
    let base = json!({"session_id": "cc-1", "cwd": cwd, "transcript_path": transcript});
    let with = |extra: Value| {
        let mut payload = base.clone();
        payload.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        payload
    };
    Turns {
        agent,
        public: vec![
            ("session-init", with(json!({"hook_event_name": "UserPromptSubmit", "prompt": "Add cartTotal"}))),
            (
                "observation",
                with(json!({"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_use_id": "w1",
                "tool_input": {"file_path": file, "content": CODE}, "tool_response": {"type": "create"}})),
            ),
        ],
        private_prompt: with(
            json!({"hook_event_name": "UserPromptSubmit", "prompt": format!("<private>my {SALARY} a year</private>")}),
        ),
        stop: with(json!({"hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": said})),
    }
}

/// The database file and its WAL, and every log, as text.
fn stored_text(home: &Path) -> (String, String) {
    let mut db = Vec::new();
    for name in ["vibelearn.db", "vibelearn.db-wal"] {
        db.extend(std::fs::read(home.join(name)).unwrap_or_default());
    }
    let mut logs = String::new();
    for entry in std::fs::read_dir(home.join("logs")).unwrap().flatten() {
        logs.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
    }
    (String::from_utf8_lossy(&db).into_owned(), logs)
}

/// Runs `turns` through real `vl hook <agent> …` processes against a worker whose LLM is a
/// fake; then nothing of the private turn's last word is in the jobs table, the database
/// file, the logs or what the LLM received, and the log says why.
fn the_private_turns_last_word_goes_nowhere(home: &Path, turns: Turns) {
    let fake = FakeServer::start(vec![], crate::pipeline::anthropic(&crate::pipeline::concepts_answer("src/cart.ts")));
    let worker = WorkerProcess::start_with(
        home,
        free_port(),
        &[
            ("VIBELEARN_PROVIDER", "anthropic"),
            ("ANTHROPIC_API_KEY", crate::pipeline::KEY),
            ("VIBELEARN_ANTHROPIC_BASE_URL", fake.url.as_str()),
        ],
    );
    let agent = turns.agent;
    for (event, payload) in &turns.public {
        hook(home, worker.port, agent, event, payload.to_string().as_bytes(), &[]);
    }
    hook(home, worker.port, agent, "session-init", turns.private_prompt.to_string().as_bytes(), &[]);
    hook(home, worker.port, agent, "summarize", turns.stop.to_string().as_bytes(), &[]);
    wait_for("the concepts step to ask the LLM", Duration::from_secs(30), || !fake.requests().is_empty());
    let payloads = db_rows(home, "SELECT payload FROM jobs WHERE kind = 'analyze_concepts'");
    assert_eq!(payloads.len(), 1, "{agent}: {payloads:?}");
    assert!(!payloads[0][0].as_str().unwrap().contains("salary"), "{agent}: {payloads:?}");
    let asked = fake.requests()[0].json().to_string();
    assert!(asked.contains("cartTotal") && !asked.contains("salary"), "{agent}: the LLM was asked {asked:.600}");
    drop(worker);
    let (db, logs) = stored_text(home);
    assert!(!db.contains("salary") && !db.contains("91,234"), "{agent}: the database holds the private turn");
    assert!(!logs.contains("salary") && !logs.contains("91,234"), "{agent}: a log holds the private turn");
    assert!(logs.contains("a private turn ended; its last message is not recorded"), "{agent}: {logs}");
}

#[test]
fn claude_codes_private_turn_keeps_its_last_assistant_message_and_transcript() {
    let home = TempDir::new();
    let transcript = transcript_saying(home.path(), &format!("Sent: your {SALARY} a year."));
    let turns = ide_turns("claude-code", &home.path().join("shop"), &transcript);
    the_private_turns_last_word_goes_nowhere(home.path(), turns);
}

#[test]
fn cursors_private_turn_keeps_its_transcripts_last_message() {
    let home = TempDir::new();
    let transcript = transcript_saying(home.path(), &format!("Sent: your {SALARY} a year."));
    let turns = ide_turns("cursor", &home.path().join("shop"), &transcript);
    the_private_turns_last_word_goes_nowhere(home.path(), turns);
}

#[test]
fn geminis_private_turn_keeps_its_prompt_response() {
    let home = TempDir::new();
    let transcript = transcript_saying(home.path(), &format!("Sent: your {SALARY} a year."));
    let turns = recorded_turns("gemini", GEMINI, ("prompt", Some("prompt_response"), "transcript_path"), &transcript);
    the_private_turns_last_word_goes_nowhere(home.path(), turns);
}

#[test]
fn codexs_private_turn_keeps_its_last_assistant_message() {
    let home = TempDir::new();
    let transcript = transcript_saying(home.path(), &format!("Sent: your {SALARY} a year."));
    let turns =
        recorded_turns("codex", CODEX, ("prompt", Some("last_assistant_message"), "transcript_path"), &transcript);
    the_private_turns_last_word_goes_nowhere(home.path(), turns);
}

#[test]
fn copilots_private_turn_keeps_its_transcripts_last_message() {
    let home = TempDir::new();
    let transcript = transcript_saying(home.path(), &format!("Sent: your {SALARY} a year."));
    let turns = recorded_turns("copilot", COPILOT, ("prompt", None, "transcriptPath"), &transcript);
    the_private_turns_last_word_goes_nowhere(home.path(), turns);
}

/// Shell calls whose output quotes exit codes, and real failures, in each CLI's recorded shape
/// (`tests/fixtures/hooks/exit-codes.jsonl`), through real `vl hook <agent> observation`
/// processes: a call is stored as failed only when its CLI's own status line says so.
#[test]
fn a_command_that_succeeded_is_stored_as_succeeded_whatever_its_output_quotes() {
    let home = TempDir::new();
    let worker = WorkerProcess::start(home.path());
    let transcript = home.path().join("rollout.jsonl");
    std::fs::write(&transcript, include_str!("fixtures/hooks/codex-transcript.jsonl")).unwrap();
    let cases: Vec<Value> =
        include_str!("fixtures/hooks/exit-codes.jsonl").lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for case in &cases {
        let mut payload = case["payload"].clone();
        if case["transcript"] == true {
            payload["transcript_path"] = json!(transcript);
        }
        let agent = case["agent"].as_str().unwrap();
        hook(home.path(), worker.port, agent, "observation", payload.to_string().as_bytes(), &[]);
    }
    wait_for("every call stored", Duration::from_secs(20), || observations(home.path()) == cases.len() as i64);
    let stored = db_rows(home.path(), "SELECT command, file_path, outcome FROM observations");
    for case in &cases {
        let (column, wanted) = match case.get("command") {
            Some(command) => (0, command),
            None => (1, &case["file_path"]),
        };
        let rows: Vec<_> = stored.iter().filter(|row| row[column] == *wanted).collect();
        let outcomes: Vec<&Value> = rows.iter().map(|row| &row[2]).collect();
        let agent = &case["agent"];
        // Several agents ran `npm run build` or `cat CHANGELOG.md`: each row of it counts.
        assert!(
            !outcomes.is_empty() && outcomes.iter().all(|o| **o == case["expect"]),
            "{agent} {}: {outcomes:?}",
            case["why"]
        );
    }
}
