//! The real Claude Code CLI (issue 18, point 7): `@anthropic-ai/claude-code` from the npm
//! registry (a native binary; pinned in `tests/claude-code/package-lock.json`), run as
//! `claude -p` fully offline against a fake Messages API on 127.0.0.1 that streams a scripted
//! session — Write, Edit, a Bash call that fails, a final answer — with VibeLearn's hooks
//! installed two ways: by `vl install claude-code`, and as a plugin from this repository's
//! marketplace. Every event must arrive (the failed call with its error), the Edit must hold
//! the whole file, no private text may be stored, and the pipeline must finish.
//!
//! Offline: `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` (no telemetry, error reporting or
//! auto-update checks) and `ANTHROPIC_BASE_URL` at the fake. Measured with `strace -e connect`
//! on 2.1.332: with it, the CLI connects to nothing but the fake (and the hooks to the worker);
//! without it, it starts by resolving other hosts (DNS). The fake sees only the four
//! `/v1/messages` calls of the session, every one streamed, which `check_offline` asserts.
//! `--dangerously-skip-permissions` refuses to run as root unless `IS_SANDBOX=1`.
//!
//! Skips (saying why, on stderr) only when npm is missing or the package cannot be installed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::fake_messages::{FakeMessages, Turn};
use crate::hooks::db_rows;
use crate::util::{Http, TempDir, VL, WorkerProcess, vl, wait_for};

const MARKER: &str = "MARKER-real-client-5c1b-PRIVATE";
const CART: &str =
    "export function cartTotal(prices: number[]): number {\n  return prices.reduce((a, b) => a + b, 0);\n}\n";
const TSC: &str = "src/cart.ts(2,10): error TS2322: Type 'string' is not assignable to type 'number'.";

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Says why the test did not run; under `CI=true` that fails it.
pub fn skip(reason: &str) {
    crate::util::skip_unless_ci("real Claude Code CLI test", reason);
}

/// The CLI, installed with `npm ci` from the lock file when it is not there yet; `Err` says
/// why it cannot run here.
pub fn real_claude() -> Result<PathBuf, String> {
    crate::agent_cli::real_cli("claude-code", "claude")
}

/// `claude ARGS` for a test: its HOME, offline, the fake API, the worker's settings for the
/// hooks it runs, and the test's `vl` first on PATH (the plugin's hooks look for it there).
fn claude(bin: &Path, home: &Path, port: u16, api: &FakeMessages, cwd: &Path, args: &[&str]) -> Command {
    let vl_dir = Path::new(VL).parent().expect("vl has a directory");
    let mut command = Command::new(bin);
    command
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", crate::agent_cli::path_with(&[vl_dir]))
        .env("HOME", home)
        .env("IS_SANDBOX", "1")
        .env("ANTHROPIC_BASE_URL", &api.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("VIBELEARN_DATA_DIR", home)
        .env("VIBELEARN_WORKER_PORT", port.to_string())
        .env("VIBELEARN_PROVIDER", "offline")
        .env("VIBELEARN_SYNCHRONOUS", "NORMAL");
    command
}

/// The scripted session, in a project at `project`.
fn session_turns(project: &Path) -> Vec<Turn> {
    let file = project.join("src/cart.ts").to_string_lossy().into_owned();
    let failing = format!("printf '%s\\n' \"{TSC}\" '<private>{MARKER}</private>' >&2; exit 2");
    vec![
        Turn::tool("toolu_write", "Write", json!({"file_path": file, "content": CART})),
        Turn::tool(
            "toolu_edit",
            "Edit",
            json!({"file_path": file, "old_string": "(a, b) => a + b", "new_string": "(sum, price) => sum + price"}),
        ),
        Turn::tool("toolu_bash", "Bash", json!({"command": failing, "description": "Type-check the project"})),
        Turn::text(&format!("Done: cartTotal is written; the type check still fails. <private>{MARKER}</private>")),
    ]
}

fn prompt() -> String {
    format!("Add a cartTotal function to src/cart.ts and type-check it. <private>{MARKER}</private>")
}

/// Runs the scripted session through `claude -p`; returns its JSON result.
pub fn run_session(bin: &Path, home: &Path, port: u16, project: &Path) -> (Value, FakeMessages) {
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("package.json"), r#"{"devDependencies":{"typescript":"5.6.0"}}"#).unwrap();
    let api = FakeMessages::start(session_turns(project));
    let prompt = prompt();
    let debug_file = home.join("claude-debug.log");
    let debug = debug_file.to_string_lossy().into_owned();
    let args =
        ["-p", prompt.as_str(), "--dangerously-skip-permissions", "--output-format", "json", "--debug-file", &debug];
    let output = crate::agent_cli::finish(claude(bin, home, port, &api, project, &args));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "claude failed: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    // Every hook's output carries only keys Claude Code knows: its debug log names any other.
    let debug = std::fs::read_to_string(&debug_file).expect("claude wrote its debug log");
    assert!(debug.to_lowercase().contains("hook"), "the debug log shows the hooks ran");
    let unknown: Vec<&str> = debug.lines().filter(|l| l.contains("unrecognized keys")).collect();
    assert!(unknown.is_empty(), "hook output Claude Code does not know: {unknown:?}");
    let result: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(result["num_turns"], 4, "{result}");
    (result, api)
}

/// Waits for the session's pipeline to finish; checks what arrived and what was stored.
pub fn check_recorded(home: &Path, port: u16, session: &str, project: &Path) {
    let http = Http::new(port).with_token(home);
    let pipeline = |http: &Http| http.get(&format!("/api/vibelearn/sessions/{session}/pipeline")).unwrap().1;
    wait_for("the session's pipeline to finish", Duration::from_secs(30), || {
        pipeline(&http)["steps"].as_array().is_some_and(|s| s.iter().all(|s| s["state"] == "succeeded"))
    });
    // SessionEnd's event comes after Stop's steps and may still be waiting when they are done
    // (its session's `ended_at` was read unset under a loaded full run), as `agent_cli` waits.
    let ended = || db_rows(home, "SELECT ended_at IS NOT NULL FROM sessions");
    wait_for("the session to end", Duration::from_secs(30), || ended().first().is_some_and(|s| s[0] == 1));
    // Every event arrived, in order: SessionStart, the prompt, Write, Edit, the failed Bash
    // (PostToolUseFailure), Stop's five steps, SessionEnd.
    let jobs = db_rows(
        home,
        "SELECT kind, json_extract(payload, '$.event'), json_extract(payload, '$.tool_name') FROM jobs ORDER BY id",
    );
    let seen: Vec<String> = jobs
        .iter()
        .map(|r| match (&r[1], &r[2]) {
            (Value::String(event), Value::String(tool)) => format!("{event}:{tool}"),
            (Value::String(event), _) => event.clone(),
            _ => r[0].as_str().unwrap().to_owned(),
        })
        .collect();
    assert_eq!(
        seen,
        [
            "init",
            "init",
            "observation:Write",
            "observation:Edit",
            "observation:Bash",
            "analyze_stack",
            "analyze_static",
            "analyze_concepts",
            "analyze_quiz",
            "sync",
            "complete"
        ],
        "every event, once"
    );
    let rows = db_rows(
        home,
        "SELECT tool_name, action, outcome, error, content, fragment, command FROM observations ORDER BY id",
    );
    let (write, edit, bash) = (&rows[0], &rows[1], &rows[2]);
    assert_eq!((write[1].as_str(), write[4].as_str()), (Some("create"), Some(CART)));
    let on_disk = std::fs::read_to_string(project.join("src/cart.ts")).unwrap();
    assert!(on_disk.contains("(sum, price) => sum + price"), "the CLI really edited the file: {on_disk}");
    assert_eq!(
        (edit[1].as_str(), edit[4].as_str(), edit[5].clone()),
        (Some("modify"), Some(on_disk.as_str()), json!(0))
    );
    assert_eq!(bash[2], "failed");
    let error = bash[3].as_str().unwrap();
    assert!(error.contains(TSC) && error.contains("Exit code 2"), "{error}");
    assert!(!error.contains(MARKER) && !bash[6].as_str().unwrap().contains(MARKER));
    let prompts = db_rows(home, "SELECT text FROM prompts");
    assert_eq!(prompts.len(), 1);
    assert!(prompts[0][0].as_str().unwrap().starts_with("Add a cartTotal function"), "{prompts:?}");
    // The error the developer met became a concept, grounded in the failed call.
    let concepts = db_rows(home, "SELECT name, source_file FROM concepts");
    assert!(
        concepts
            .iter()
            .any(|c| c[0] == "Reading compiler type errors" && c[1].as_str().unwrap().starts_with("failed Bash: ")),
        "{concepts:?}"
    );
    let session_row = db_rows(home, "SELECT platform, ended_at IS NOT NULL FROM sessions");
    assert_eq!(session_row, [[json!("claude-code"), json!(1)]]);
    // No private byte in the database, its WAL, a queued payload or a log line.
    let mut files = vec![home.join("vibelearn.db"), home.join("vibelearn.db-wal")];
    files.extend(std::fs::read_dir(home.join("logs")).unwrap().map(|e| e.unwrap().path()));
    for file in files {
        if let Ok(bytes) = std::fs::read(&file) {
            assert!(
                !bytes.windows(MARKER.len()).any(|w| w == MARKER.as_bytes()),
                "{} holds private bytes",
                file.display()
            );
        }
    }
}

/// Only the Messages API was called, and for the session's four turns only.
pub fn check_offline(api: &FakeMessages) {
    let requests = api.requests();
    let calls: Vec<String> = requests.iter().map(|r| format!("{} {}", r.method, r.path)).collect();
    assert!(calls.iter().all(|c| c.starts_with("POST /v1/messages")), "{calls:?}");
    let turns = requests.iter().filter(|r| r.body["tools"].as_array().is_some_and(|t| !t.is_empty())).count();
    assert_eq!(turns, 4, "{calls:?}");
    assert!(requests.iter().all(|r| r.body["stream"] == true), "every turn was streamed");
}

#[test]
fn the_real_claude_code_cli_reports_every_event_of_a_scripted_session_to_vl_install_hooks() {
    let bin = match real_claude() {
        Ok(bin) => bin,
        Err(reason) => return skip(&reason),
    };
    let home = TempDir::new();
    let project = TempDir::new();
    let worker = WorkerProcess::start(home.path());
    // With this `claude` on PATH, install asks its version (≥ 2.1.139) and writes the exec form.
    let bin_dir = bin.parent().expect("the CLI has a directory");
    let path = std::env::join_paths(
        std::iter::once(bin_dir.to_owned()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let installed = vl(home.path(), worker.port).args(["install", "claude-code"]).env("PATH", path).output().unwrap();
    let said = String::from_utf8_lossy(&installed.stdout);
    assert!(installed.status.success(), "{}", String::from_utf8_lossy(&installed.stderr));
    assert!(said.contains("with the arguments: hook claude-code <event>"), "{said}");
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(home.path().join(".claude/settings.json")).unwrap()).unwrap();
    let stop = &settings["hooks"]["Stop"][0]["hooks"][0];
    let copy = home.path().join("bin").join(format!("vl{}", std::env::consts::EXE_SUFFIX));
    assert_eq!(stop["command"], copy.to_str().unwrap(), "the stable copy, by absolute path: {settings}");
    assert_eq!(stop["args"], json!(["hook", "claude-code", "summarize"]), "{settings}");
    let (result, api) = run_session(&bin, home.path(), worker.port, project.path());
    assert!(result["result"].as_str().unwrap().starts_with("Done: cartTotal is written"), "{result}");
    check_offline(&api);
    let session = result["session_id"].as_str().expect("the result names its session").to_owned();
    check_recorded(home.path(), worker.port, &session, project.path());
    let last = db_rows(
        home.path(),
        "SELECT json_extract(payload, '$.last_assistant_message') FROM jobs WHERE kind = 'analyze_concepts'",
    );
    assert_eq!(
        last[0][0], "Done: cartTotal is written; the type check still fails. ",
        "the Stop hook's last message, stripped"
    );
}

#[test]
fn the_repository_is_a_marketplace_whose_plugin_the_real_cli_installs_and_runs() {
    let bin = match real_claude() {
        Ok(bin) => bin,
        Err(reason) => return skip(&reason),
    };
    let home = TempDir::new();
    let project = TempDir::new();
    let repository = manifest_dir();
    let repo = repository.to_str().unwrap();
    let worker = WorkerProcess::start(home.path());
    let api = FakeMessages::start(vec![Turn::text("unused")]);
    let plugin_cli = |args: &[&str]| {
        let output = crate::agent_cli::finish(claude(&bin, home.path(), worker.port, &api, home.path(), args));
        let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success(), "claude {args:?}: {text}");
        text
    };
    assert!(plugin_cli(&["plugin", "validate", repo]).contains("Validation passed"));
    plugin_cli(&["plugin", "marketplace", "add", repo]);
    plugin_cli(&["plugin", "install", "vibelearn@vibelearn"]);
    let listed: Value = serde_json::from_str(&plugin_cli(&["plugin", "list", "--json"])).unwrap();
    let plugin = listed.as_array().unwrap().iter().find(|p| p["id"] == "vibelearn@vibelearn").cloned();
    let plugin = plugin.unwrap_or_else(|| panic!("not installed: {listed}"));
    assert_eq!(plugin["enabled"], true, "{plugin}");
    assert!(plugin.get("errors").is_none_or(|e| e.as_array().is_some_and(Vec::is_empty)), "{plugin}");
    // The plugin's hooks (vl-hook, finding `vl` on PATH) record the same session.
    let (result, api) = run_session(&bin, home.path(), worker.port, project.path());
    check_offline(&api);
    let session = result["session_id"].as_str().unwrap().to_owned();
    check_recorded(home.path(), worker.port, &session, project.path());
}

#[test]
fn the_marketplace_lists_the_plugin_directory() {
    let root = manifest_dir();
    let read = |path: PathBuf| -> Value { serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap() };
    let marketplace = read(root.join(".claude-plugin/marketplace.json"));
    assert_eq!(marketplace["name"], "vibelearn");
    assert!(marketplace["owner"]["name"].is_string());
    let entry = &marketplace["plugins"][0];
    assert_eq!(entry["source"], "./plugin");
    let manifest = read(root.join("plugin/.claude-plugin/plugin.json"));
    assert_eq!(entry["name"], manifest["name"]);
    assert_eq!(entry["version"], manifest["version"]);
    // hooks/hooks.json loads by convention; naming it in the manifest makes Claude Code report
    // a duplicate hooks file.
    assert!(manifest.get("hooks").is_none(), "{manifest}");
    assert!(root.join("plugin/hooks/hooks.json").exists());
    // What it says about getting `vl` is how the hooks find it: the copy in <data>/bin first.
    let said = entry["description"].as_str().unwrap();
    assert!(said.contains("npx vibelearn install claude-code") && said.contains("~/.vibelearn/bin"), "{said}");
    assert!(!said.contains("on PATH (cargo install)"), "{said}");
    let finder = std::fs::read_to_string(root.join("plugin/bin/vl-hook")).unwrap();
    assert!(finder.find("$data/bin/vl").unwrap() < finder.find("command -v vl").unwrap(), "{finder}");
}

/// A question the plugin's quiz command is scripted to answer, in the data dir `home`.
fn seed_question(home: &Path) {
    let conn = rusqlite::Connection::open(home.join("vibelearn.db")).unwrap();
    conn.execute_batch(
        "INSERT INTO sessions (id, project, started_at, updated_at) VALUES ('s-quiz', 'shop', 1, 1);
         INSERT INTO concepts (id, session_id, name, normalized_name, category, difficulty, source_file, snippet,
           why_it_matters, confidence, created_at, updated_at) VALUES ('c-quiz', 's-quiz', 'Closures', 'closures',
           'functional_pattern', 'junior', 'src/cart.ts', 'x', 'y', 0.9, 1, 1);
         INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, question, correct, explanation,
           tags, text_hash, created_at) VALUES ('q-plugin', 'c-quiz', 's-quiz', 'true_false', 'junior',
           'True or false: a closure captures variables, not values.', 'true', 'It sees later changes.', '[]', 'h', 1);",
    )
    .unwrap();
}

#[test]
fn the_plugins_quiz_command_runs_vl_quiz_next_and_answer_and_the_answer_is_recorded() {
    let bin = match real_claude() {
        Ok(bin) => bin,
        Err(reason) => return skip(&reason),
    };
    let home = TempDir::new();
    let project = TempDir::new();
    let repo = manifest_dir();
    let worker = WorkerProcess::start(home.path());
    seed_question(home.path());
    let setup = FakeMessages::start(vec![Turn::text("unused")]);
    for args in
        [&["plugin", "marketplace", "add", repo.to_str().unwrap()][..], &["plugin", "install", "vibelearn@vibelearn"]]
    {
        let output = crate::agent_cli::finish(claude(&bin, home.path(), worker.port, &setup, home.path(), args));
        assert!(output.status.success(), "claude {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    }
    // The model's scripted turns: ask for the next card, answer it as the learner did, report.
    let api = FakeMessages::start(vec![
        Turn::tool("toolu_next", "Bash", json!({"command": "vl quiz next --json", "description": "Next due card"})),
        Turn::tool(
            "toolu_answer",
            "Bash",
            json!({"command": "vl quiz answer q-plugin 'true' --json", "description": "Record the answer"}),
        ),
        Turn::text("Correct. Next review in 2.3 days."),
    ]);
    let args = ["-p", "/vibelearn:quiz 1", "--dangerously-skip-permissions", "--output-format", "json"];
    let output = crate::agent_cli::finish(claude(&bin, home.path(), worker.port, &api, project.path(), &args));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "claude failed: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let result: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(result["is_error"], false, "{result}");
    let requests = api.requests();
    let turns: Vec<&Value> =
        requests.iter().map(|r| &r.body).filter(|b| b["tools"].as_array().is_some_and(|t| !t.is_empty())).collect();
    assert_eq!(turns.len(), 3, "{requests:?}");
    // The slash command expanded into the plugin's instructions.
    let first = turns[0]["messages"].to_string();
    assert!(first.contains("vl quiz next --json") && first.contains("Never reveal or guess the answer"), "{first}");
    // The tool results the CLI sent back are vl's JSON: the card without its answer, then the grade.
    let results = |body: &Value| -> String {
        body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .filter(|c| c["type"] == "tool_result")
            .map(|c| c["content"].to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let next = results(turns[1]);
    assert!(next.contains("q-plugin") && next.contains("a closure captures variables"), "{next}");
    assert!(!next.contains("It sees later changes"), "no answer or explanation before answering: {next}");
    let graded = results(turns[2]);
    assert!(graded.contains("recorded") && graded.contains("It sees later changes"), "{graded}");
    // Recorded: the attempt, its review-log row, the FSRS schedule.
    let rows = db_rows(
        home.path(),
        "SELECT a.answer, a.correct, r.rating, q.card_state FROM quiz_attempts a JOIN review_log r ON r.attempt_id = a.id \
         JOIN questions q ON q.id = a.question_id",
    );
    assert_eq!(rows, [[json!("true"), json!(1), json!(3), json!("review")]]);
}
