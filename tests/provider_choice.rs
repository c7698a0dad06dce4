//! The provider the user was told is the provider used (issue 42). Each agent's recorded
//! session is replayed through its real hooks (`vl hook <agent> …` child processes), the first
//! of which starts the worker, with that agent's own API keys and session variables in the
//! hooks' environment and every base URL (VibeLearn's and the agent's) pointed at a counting
//! server on 127.0.0.1: the worker is on the provider `vl provider` announced in the user's
//! shell, it holds none of the agent's keys, and the counting server gets no request. A
//! provider named for VibeLearn is used with the agent's key for it, and only that key; a
//! provider that cannot be reached pauses with a notice in `vl status`, the statusline and
//! the dashboard's JSON instead of burning the job's attempts.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::fake_http::{FakeServer, Reply};
use crate::hooks::{db_rows, hook, replay};
use crate::pipeline::{KEY, STEPS, request_steps, seed_session, wait_step};
use crate::util::{Http, TempDir, WorkerProcess, free_port, vl, wait_for};

const GEMINI: &str = include_str!("fixtures/hooks/gemini.jsonl");
const CODEX: &str = include_str!("fixtures/hooks/codex.jsonl");
const COPILOT: &str = include_str!("fixtures/hooks/copilot.jsonl");
const CLAUDE_SESSION: &str = include_str!("fixtures/sessions/claude-fastapi-orders.json");
const CURSOR_SESSION: &str = include_str!("fixtures/sessions/cursor-fastapi.json");

/// The API keys and session variables each agent runs its hooks with (what the real ones set,
/// or load for themselves: Gemini CLI reads `~/.gemini/.env`, Codex and Copilot CLI take
/// their model keys from the user's environment).
fn agent_env(agent: &str) -> Vec<(&'static str, &'static str)> {
    let keys: &[(&str, &str)] = match agent {
        "claude-code" => &[
            ("CLAUDECODE", "1"),
            ("CLAUDE_CODE_ENTRYPOINT", "cli"),
            ("CLAUDE_PROJECT_DIR", "/home/dev/shop"),
            ("ANTHROPIC_API_KEY", "sk-ant-claude-codes-own-0123456789"),
        ],
        "cursor" => &[
            ("CURSOR_TRACE_ID", "trace-0123"),
            ("OPENAI_API_KEY", "sk-cursor-openai-0123456789"),
            ("ANTHROPIC_API_KEY", "sk-ant-cursor-0123456789"),
        ],
        "gemini" => &[
            ("GEMINI_CLI", "1"),
            ("GEMINI_API_KEY", "gemini-clis-own-key-0123456789"),
            ("GOOGLE_API_KEY", "google-key-of-gemini-cli-0123456789"),
        ],
        "codex" => &[
            ("CODEX_SANDBOX", "seatbelt"),
            ("CODEX_MANAGED_BY_NPM", "1"),
            ("OPENAI_API_KEY", "sk-codexs-own-openai-0123456789"),
        ],
        "copilot" => &[
            ("COPILOT_CLI", "1"),
            ("GITHUB_TOKEN", "ghp_copilots-own-0123456789"),
            ("COPILOT_PROVIDER_API_KEY", "copilot-byok-0123456789"),
            ("OPENROUTER_API_KEY", "sk-or-copilot-0123456789"),
        ],
        other => panic!("no agent {other}"),
    };
    keys.to_vec()
}

/// Every endpoint a key could be spent on, VibeLearn's settings and the agents' own, at `url`.
fn endpoints(url: &str) -> Vec<(&'static str, String)> {
    let names = [
        "VIBELEARN_ANTHROPIC_BASE_URL",
        "VIBELEARN_OPENAI_BASE_URL",
        "VIBELEARN_GEMINI_BASE_URL",
        "VIBELEARN_OPENROUTER_BASE_URL",
        "VIBELEARN_API_URL",
        "ANTHROPIC_BASE_URL",
        "OPENAI_BASE_URL",
        "GOOGLE_GEMINI_BASE_URL",
    ];
    names.into_iter().map(|name| (name, url.to_owned())).collect()
}

/// Replays a recorded agent session (one `{"event", "payload"}` a line) through `vl hook`.
fn replay_lines(home: &Path, port: u16, agent: &str, text: &str, env: &[(&str, &str)]) {
    for line in text.lines() {
        let recorded: Value = serde_json::from_str(line).unwrap();
        let event = match recorded["event"].as_str().unwrap() {
            "SessionStart" | "sessionStart" => "session-start",
            "BeforeAgent" | "UserPromptSubmit" | "userPromptSubmitted" => "session-init",
            "AfterTool" | "PostToolUse" | "postToolUse" | "postToolUseFailure" => "observation",
            "AfterAgent" | "Stop" | "agentStop" => "summarize",
            "SessionEnd" | "sessionEnd" => "session-complete",
            other => panic!("unmapped event {other}"),
        };
        hook(home, port, agent, event, recorded["payload"].to_string().as_bytes(), env);
    }
}

/// Replays `agent`'s recorded session through its hooks; the first hook starts the worker.
fn replay_agent(agent: &str, home: &Path, project: &Path, port: u16, env: &[(&str, &str)]) {
    match agent {
        "claude-code" => drop(replay(CLAUDE_SESSION, agent, home, project, port, env)),
        "cursor" => drop(replay(CURSOR_SESSION, agent, home, project, port, env)),
        "gemini" => replay_lines(home, port, agent, GEMINI, env),
        "codex" => replay_lines(home, port, agent, CODEX, env),
        "copilot" => replay_lines(home, port, agent, COPILOT, env),
        other => panic!("no agent {other}"),
    }
}

/// Stops the detached worker a hook started, at the end of the test.
struct StopsWorker<'a>(&'a Path, u16);

impl Drop for StopsWorker<'_> {
    fn drop(&mut self) {
        let _ = vl(self.0, self.1).args(["worker", "stop"]).output();
    }
}

/// The worker's health (with the user key, so with its provider and notices).
fn health(home: &Path, port: u16) -> Value {
    Http::new(port).with_key(home).get("/api/health").expect("the worker answers").1
}

/// The names in a process's environment, where the OS shows them (`/proc` on Linux); `None`
/// elsewhere.
fn environment_of(pid: u64) -> Option<Vec<String>> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let names = environ.split(|b| *b == 0).filter_map(|var| var.split(|b| *b == b'=').next());
    Some(names.map(|name| String::from_utf8_lossy(name).into_owned()).filter(|n| !n.is_empty()).collect())
}

/// Stdout of `vl ARGS` for this data dir, with `env` on top of the test's own.
fn vl_stdout(home: &Path, port: u16, env: &[(&str, &str)], args: &[&str]) -> String {
    let output = vl(home, port).envs(env.iter().copied()).args(args).output().unwrap();
    assert!(output.status.success(), "vl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn every_agents_hooks_start_a_worker_on_the_announced_provider_that_spends_none_of_its_keys() {
    let counting = FakeServer::start(vec![], Reply::json(500, &json!({"error": {"message": "counted"}})));
    let no_claude = TempDir::new();
    let path = no_claude.path().display().to_string();
    for agent in ["claude-code", "cursor", "gemini", "codex", "copilot"] {
        let (home, project, port) = (TempDir::new(), TempDir::new(), free_port());
        // The user's shell: no provider named, no `claude` CLI on PATH.
        let shell = [("VIBELEARN_PROVIDER", "auto"), ("PATH", path.as_str())];
        let announced = vl_stdout(home.path(), port, &shell, &["provider"]);
        assert!(
            announced
                .starts_with("LLM provider: offline (no LLM, free) — nothing leaves this machine (chosen by default)"),
            "{agent}: {announced}"
        );

        let urls = endpoints(&counting.url);
        let mut env: Vec<(&str, &str)> = shell.to_vec();
        env.extend(agent_env(agent));
        env.extend(urls.iter().map(|(k, v)| (*k, v.as_str())));
        let _stop = StopsWorker(home.path(), port);
        replay_agent(agent, home.path(), project.path(), port, &env);
        wait_for(&format!("{agent}: the analysis"), Duration::from_secs(30), || {
            let done = "SELECT COUNT(*) FROM jobs WHERE kind = 'analyze_concepts' AND state = 'succeeded'";
            db_rows(home.path(), done)[0][0].as_i64().unwrap_or(0) >= 1
        });

        let health = health(home.path(), port);
        assert_eq!(health["llm"]["description"], "offline (no LLM, free)", "{agent}: {health}");
        assert_eq!(health["llm"]["source"], "default", "{agent}");
        assert_eq!(health["llm"]["note"], Value::Null, "{agent}: the worker saw no key at all");
        let status = vl_stdout(home.path(), port, &shell, &["status"]);
        assert!(status.contains("offline (no LLM, free) (the worker's; chosen by default)"), "{status}");
        let provider =
            db_rows(home.path(), "SELECT json_extract(result, '$.provider') FROM jobs WHERE kind = 'analyze_concepts'");
        assert_eq!(provider[0][0], "offline", "{agent}");
        if let Some(names) = environment_of(health["pid"].as_u64().unwrap()) {
            for (name, _) in agent_env(agent) {
                assert!(!names.iter().any(|n| n == name), "{agent}: the worker inherited {name}: {names:?}");
            }
            assert!(names.iter().any(|n| n == "VIBELEARN_WORKER_PORT"), "VibeLearn's settings pass: {names:?}");
        }
        let spent: Vec<String> = counting.requests().iter().map(|r| r.path.clone()).collect();
        assert!(spent.is_empty(), "{agent}: requests to a key's endpoint: {spent:?}");

        // Run where the agent's keys are, `vl status` names the ones it leaves and the command.
        let in_agent = vl_stdout(home.path(), port, &env, &["status"]);
        let (key, _) =
            agent_env(agent).into_iter().find(|(k, _)| k.ends_with("_API_KEY") && !k.starts_with("COPILOT")).unwrap();
        assert!(in_agent.contains(key) && in_agent.contains("set but not used"), "{agent}: {in_agent}");
        assert!(in_agent.contains("vl provider "), "{agent}: the command that turns it on: {in_agent}");
    }
}

#[test]
fn a_provider_named_for_vibelearn_is_used_with_the_agents_key_for_it_and_no_other() {
    // Any answer will do: what counts is where the requests went, and with which key.
    let fake =
        FakeServer::start(vec![], Reply::json(200, &json!({"candidates": [{"content": {"parts": [{"text": "{}"}]}}]})));
    let no_claude = TempDir::new();
    let (home, port) = (TempDir::new(), free_port());
    let path = no_claude.path().display().to_string();
    let shell = [("VIBELEARN_PROVIDER", "gemini"), ("PATH", path.as_str())];
    let urls = endpoints(&fake.url);
    let mut env: Vec<(&str, &str)> = shell.to_vec();
    env.extend(agent_env("gemini"));
    env.extend(urls.iter().map(|(k, v)| (*k, v.as_str())));
    // Announced where the key is: the same provider and model the worker then uses.
    let announced = vl_stdout(home.path(), port, &env, &["provider"]);
    assert!(announced.starts_with("LLM provider: gemini gemini-2.0-flash — billed per token"), "{announced}");
    assert!(announced.contains("(chosen by VIBELEARN_PROVIDER)"), "{announced}");
    // What a session costs in tokens, and what the default daily budget fits (issue 43 §5).
    assert!(
        announced.contains("a session costs up to ~41,232 tokens")
            && announced.contains("the daily budget of 1,000,000 fits 24 sessions"),
        "{announced}"
    );

    let _stop = StopsWorker(home.path(), port);
    replay_lines(home.path(), port, "gemini", GEMINI, &env);
    let health = health(home.path(), port);
    assert_eq!(health["llm"]["description"], "gemini gemini-2.0-flash", "{health}");
    assert_eq!(health["llm"]["source"], "VIBELEARN_PROVIDER");
    wait_for("the analysis to ask gemini", Duration::from_secs(30), || !fake.requests().is_empty());
    for request in fake.requests() {
        assert!(request.path.contains("/models/gemini-2.0-flash:generateContent"), "{}", request.path);
        assert_eq!(request.header("x-goog-api-key"), Some("gemini-clis-own-key-0123456789"));
    }
    if let Some(names) = environment_of(health["pid"].as_u64().unwrap()) {
        assert!(names.iter().any(|n| n == "GEMINI_API_KEY"), "the named provider's key passes: {names:?}");
        assert!(!names.iter().any(|n| n == "GOOGLE_API_KEY" || n == "GEMINI_CLI"), "{names:?}");
    }
}

#[test]
fn the_command_a_note_names_chooses_the_provider_and_keeps_its_key_for_every_worker() {
    let (home, port) = (TempDir::new(), free_port());
    let key = ("GEMINI_API_KEY", "gemini-from-this-shell-0123456789");
    let shell = [("VIBELEARN_PROVIDER", "auto"), key];
    let before = vl_stdout(home.path(), port, &shell, &["provider"]);
    assert!(
        before.contains("GEMINI_API_KEY is set but not used") && before.contains("`vl provider gemini`"),
        "{before}"
    );
    // `vl install` announces the same decision and names the same key and command.
    let no_claude = TempDir::new();
    let bare_path = no_claude.path().display().to_string();
    let install_env = [shell[0], shell[1], ("PATH", bare_path.as_str())];
    let installed = vl_stdout(home.path(), port, &install_env, &["install", "gemini"]);
    assert!(
        installed.contains("LLM provider: offline (no LLM, free) — nothing leaves this machine (chosen by default)")
    );
    assert!(!installed.contains("a session costs"), "offline, a session costs no tokens: {installed}");
    assert!(
        installed.contains("GEMINI_API_KEY is set but not used") && installed.contains("`vl provider gemini`"),
        "{installed}"
    );

    let mut chose = vl(home.path(), port);
    chose.env_remove("VIBELEARN_PROVIDER").env(key.0, key.1).args(["provider", "gemini"]);
    let output = chose.output().unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{said}{}", String::from_utf8_lossy(&output.stderr));
    assert!(said.contains("GEMINI_API_KEY copied from this environment into settings.json"), "{said}");
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(home.path().join("settings.json")).unwrap()).unwrap();
    assert_eq!(settings["VIBELEARN_PROVIDER"], "gemini");
    assert_eq!(settings["GEMINI_API_KEY"], key.1);
    assert_eq!(settings["VIBELEARN_WORKER_PORT"], port.to_string(), "the other settings stay");
    assert!(crate::util::is_private(&home.path().join("settings.json")), "a key lives only in an owner-only file");

    // A process without the key in its environment (another agent's hook) makes the same choice.
    let mut elsewhere = vl(home.path(), port);
    elsewhere.env_remove("VIBELEARN_PROVIDER").arg("provider");
    let elsewhere = String::from_utf8_lossy(&elsewhere.output().unwrap().stdout).into_owned();
    assert!(elsewhere.starts_with("LLM provider: gemini gemini-2.0-flash"), "{elsewhere}");
    assert!(elsewhere.contains("(chosen by settings.json)"), "{elsewhere}");
    let refused = vl(home.path(), port).args(["provider", "gpt"]).output().unwrap();
    assert!(!refused.status.success());
}

#[test]
fn a_provider_that_cannot_be_reached_pauses_with_a_notice_instead_of_burning_its_attempts() {
    let (home, project) = (TempDir::new(), TempDir::new());
    // A port that was just free: nothing listens there, as for a network that is down.
    let closed = format!("http://127.0.0.1:{}", free_port());
    let env =
        [("VIBELEARN_PROVIDER", "anthropic"), ("ANTHROPIC_API_KEY", KEY), ("VIBELEARN_ANTHROPIC_BASE_URL", &closed)];
    let worker = WorkerProcess::start_with(home.path(), free_port(), &env);
    let http = worker.http();
    let session = seed_session(&http, "unreachable-1", project.path());
    request_steps(&http, &session, &STEPS);
    let job = wait_step(&http, &session, "analyze_concepts", "dead", Duration::from_secs(20));
    assert_eq!(job["attempt"], 1, "one attempt, not six within seconds: {job}");
    let error = job["last_error"].as_str().unwrap();
    assert!(error.starts_with("unreachable: anthropic cannot be reached"), "{error}");
    assert_eq!(job["refused_by_gate"], "anthropic");
    wait_step(&http, &session, "analyze_quiz", "held", Duration::from_secs(10));

    // The dashboard's JSON: the pause with its reason and what lifts it, and the notice.
    let (_, health) = http.get("/api/health").unwrap();
    assert_eq!(health["paused"][0]["name"], "anthropic", "{health}");
    assert!(health["paused"][0]["reason"].as_str().unwrap().contains("cannot be reached"), "{health}");
    assert!(health["paused"][0]["resumes"].as_str().unwrap().starts_with("on their own once it answers again"));
    let notice = health["notices"][0].as_str().unwrap();
    assert!(notice.starts_with("anthropic paused: unreachable: anthropic cannot be reached"), "{notice}");
    assert!(notice.contains("check the network"), "what to do: {notice}");
    let status = vl_stdout(home.path(), worker.port, &env, &["status"]);
    assert!(status.contains("notice: anthropic paused: unreachable"), "never \"no notices\": {status}");
    let line = vl(home.path(), worker.port).arg("statusline").stdin(std::process::Stdio::null()).output().unwrap();
    let line = String::from_utf8_lossy(&line.stdout);
    assert!(line.contains("⚠ anthropic paused (cannot be reached) — vl status"), "{line}");
}

/// Once the network is back the paused provider resumes on its own: probed on the back-off of
/// a paused gate (the queue's clock, a manual one here), 5 minutes after the pause, and the
/// refused step is replayed and succeeds.
#[test]
fn an_unreachable_provider_is_probed_on_the_back_off_and_resumes_when_it_answers() {
    use std::collections::BTreeMap;
    let (home, project, port) = (TempDir::new(), TempDir::new(), free_port());
    let llm_port = free_port();
    let env: BTreeMap<String, String> = [
        ("VIBELEARN_DATA_DIR", home.path().to_string_lossy().into_owned()),
        ("VIBELEARN_WORKER_PORT", port.to_string()),
        ("VIBELEARN_PROVIDER", "anthropic".to_owned()),
        ("ANTHROPIC_API_KEY", KEY.to_owned()),
        ("VIBELEARN_ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{llm_port}")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let config = vibelearn::config::Config::resolve(&env);
    // Within one learner day for the next hour (the gate's version holds the day).
    let day = config.learner_day();
    let mut start = vibelearn::clock::system().now_ms();
    while day.day_of(start) != day.day_of(start + 3_600_000) {
        start += 600_000;
    }
    let clock = vibelearn::clock::ManualClock::new(start);
    let worker = vibelearn::worker::Worker::start_with_clock(config, clock.clone()).expect("worker starts");
    let http = Http::new(port).with_token(home.path());
    let session = seed_session(&http, "network-back", project.path());
    request_steps(&http, &session, &STEPS);
    wait_step(&http, &session, "analyze_concepts", "dead", Duration::from_secs(15));

    // The network comes back: the provider answers where nothing listened.
    let answers = [
        crate::pipeline::anthropic(&json!("OK")),
        crate::pipeline::anthropic(&crate::pipeline::concepts_answer("src/cart.ts")),
    ];
    let llm = FakeServer::start_on(
        llm_port,
        answers.to_vec(),
        crate::pipeline::anthropic(&crate::pipeline::questions_answer()),
    );
    clock.advance(4 * 60_000);
    // A probe that must not happen has no event to wait for: a window of a few watchdog turns.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(llm.requests().is_empty(), "not probed before its back-off");
    clock.advance(60_000);
    wait_step(&http, &session, "analyze_concepts", "succeeded", Duration::from_secs(20));
    wait_step(&http, &session, "analyze_quiz", "succeeded", Duration::from_secs(20));
    assert_eq!(http.get("/api/health").unwrap().1["notices"], json!([]), "the notice is cleared");
    worker.stop();
}
