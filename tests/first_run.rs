//! A first run always teaches (issue 31, point 1): `auto` tries a `claude` CLI once before it
//! relies on it. A real worker with a stand-in `claude` on PATH — one that is not logged in (it
//! says so on stdout and exits 1, as the real CLI does), one that works — and a recorded session
//! replayed through the real hooks: with the first, the questions come from the offline
//! catalogue and `vl status`, `vl worker status` and `/api/health` say why in the CLI's words;
//! with the second, the CLI stays the provider. A named `command` provider that is not logged in
//! pauses like after a 401, its stdout in the job's error, and is tried again on its own after a
//! back-off: once the stand-in is logged in, the provider resumes and the notice goes.

use std::path::Path;
use std::time::Duration;

use crate::hooks::{db_rows, replay};
use crate::pipeline::{STEPS, pipeline, request_steps, seed_session, step, wait_step};
use crate::util::{TempDir, WorkerProcess, free_port, vl, wait_for};

const NOT_LOGGED_IN: &str = "#!/bin/sh\ncat > /dev/null\necho 'Not logged in · Please run /login'\nexit 1\n";
const SESSION: &str = include_str!("fixtures/sessions/claude-fastapi-orders.json");

/// A directory holding `claude` with `script`, and a PATH with it first.
fn claude_on_path(script: &str) -> (TempDir, String) {
    let bin = TempDir::new();
    let path = bin.path().join("claude");
    std::fs::write(&path, script).unwrap();
    crate::util::make_executable(&path);
    let system = std::env::var("PATH").unwrap_or_default();
    let path_var = format!("{}:{system}", bin.path().display());
    (bin, path_var)
}

fn vl_output(dir: &Path, port: u16, path_var: &str, args: &[&str]) -> String {
    let output = vl(dir, port).env("VIBELEARN_PROVIDER", "auto").env("PATH", path_var).args(args).output().unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
#[cfg_attr(windows, ignore = "a #!/bin/sh script as claude")]
fn a_claude_cli_that_is_not_logged_in_leaves_the_first_run_with_offline_questions_and_says_why() {
    let (_bin, path_var) = claude_on_path(NOT_LOGGED_IN);
    let dir = TempDir::new();
    // As under Claude Code: an inherited API key that `auto` must not spend.
    let env = [
        ("VIBELEARN_PROVIDER", "auto"),
        ("PATH", path_var.as_str()),
        ("CLAUDECODE", "1"),
        ("ANTHROPIC_API_KEY", "sk-ant-inherited-0123456789"),
    ];
    let worker = WorkerProcess::start_with(dir.path(), free_port(), &env);
    let http = worker.http();
    let project = TempDir::new();
    replay(SESSION, "claude-code", dir.path(), project.path(), worker.port, &env);
    let quiz = wait_step(&http, "fastapi-orders-session", "analyze_quiz", "succeeded", Duration::from_secs(30));
    assert_eq!(quiz["result"]["provider"], "offline", "{quiz}");
    let concepts = wait_step(&http, "fastapi-orders-session", "analyze_concepts", "succeeded", Duration::from_secs(1));
    assert_eq!(concepts["attempt"], 1, "no attempt was burnt on the CLI: {concepts}");
    let questions = db_rows(dir.path(), "SELECT COUNT(*) FROM questions")[0][0].as_i64().unwrap();
    assert!(questions >= 3, "a first run with questions: {questions}");

    let (_, health) = http.get("/api/health").unwrap();
    let notice = health["notices"][0].as_str().unwrap_or_default();
    assert!(notice.contains("auto did not choose the claude CLI"), "{health}");
    assert!(notice.contains("Not logged in · Please run /login"), "in the CLI's own words: {health}");
    assert!(notice.contains("`vl provider <name>`"), "and how to change it: {notice}");
    assert_eq!(health["provider_notice"].as_str(), Some(notice));
    assert!(health["llm"]["description"].as_str().unwrap().starts_with("offline"), "{health}");

    let status = vl_output(dir.path(), worker.port, &path_var, &["status"]);
    assert!(status.contains("notice: auto did not choose the claude CLI"), "{status}");
    assert!(status.contains("Not logged in · Please run /login"), "{status}");
    let worker_status = vl_output(dir.path(), worker.port, &path_var, &["worker", "status"]);
    assert!(worker_status.contains("notice  auto did not choose the claude CLI"), "{worker_status}");
}

#[test]
#[cfg_attr(windows, ignore = "a #!/bin/sh script as claude")]
fn a_claude_cli_that_answers_stays_the_provider_without_a_notice() {
    let dir = TempDir::new();
    let tries = dir.path().join("claude-tries");
    let script = format!("#!/bin/sh\ncat > /dev/null\necho try >> '{}'\necho OK\n", tries.display());
    let (_bin, path_var) = claude_on_path(&script);
    let env = [("VIBELEARN_PROVIDER", "auto"), ("PATH", path_var.as_str())];
    let worker = WorkerProcess::start_with(dir.path(), free_port(), &env);
    let http = worker.http();
    wait_for("the CLI's one try", Duration::from_secs(10), || tries.exists());
    std::thread::sleep(Duration::from_millis(300));
    let (_, health) = http.get("/api/health").unwrap();
    assert!(health["llm"]["description"].as_str().unwrap().contains("the claude CLI"), "{health}");
    assert_eq!(health["provider_notice"], serde_json::Value::Null, "{health}");
    assert_eq!(health["notices"], serde_json::json!([]), "{health}");
    assert_eq!(std::fs::read_to_string(&tries).unwrap().lines().count(), 1, "tried once");
}

#[test]
#[cfg_attr(windows, ignore = "a #!/bin/sh script as the command")]
fn a_named_command_that_is_not_logged_in_pauses_like_a_401_with_its_stdout_in_the_error() {
    let (bin, _) = claude_on_path(NOT_LOGGED_IN);
    let dir = TempDir::new();
    let line = format!("'{}' -p", bin.path().join("claude").display());
    let env = [("VIBELEARN_PROVIDER", "command"), ("VIBELEARN_LLM_COMMAND", line.as_str())];
    let worker = WorkerProcess::start_with(dir.path(), free_port(), &env);
    let http = worker.http();
    let project = TempDir::new();
    let session = seed_session(&http, "cli-not-logged-in", project.path());
    request_steps(&http, &session, &STEPS);
    let job = wait_step(&http, &session, "analyze_concepts", "dead", Duration::from_secs(15));
    assert_eq!(job["attempt"], 1, "not retried to dead: {job}");
    let error = job["last_error"].as_str().unwrap();
    assert!(error.starts_with("not authorised"), "{error}");
    assert!(error.contains("stdout: Not logged in · Please run /login"), "{error}");
    assert_eq!(job["refused_by_gate"], "command");
    let (_, health) = http.get("/api/health").unwrap();
    assert!(health["notices"][0].as_str().unwrap().starts_with("command paused: not authorised"), "{health}");
}

/// A stand-in `claude` that is not logged in until `logged-in` exists next to it, then answers
/// every prompt with `answer`; each run appends a line to `tries`. Returns its directory.
fn claude_logging_in_later(answer: &serde_json::Value) -> TempDir {
    let bin = TempDir::new();
    let (tries, marker, reply, refused) = (
        bin.path().join("tries"),
        bin.path().join("logged-in"),
        bin.path().join("answer.json"),
        bin.path().join("refused"),
    );
    std::fs::write(&reply, answer.to_string()).unwrap();
    // `tries` counts the runs, `refused` the runs that have decided to refuse.
    let script = format!(
        "#!/bin/sh\ncat > /dev/null\necho try >> '{}'\nif [ -e '{}' ]; then cat '{}'; exit 0; fi\n\
         echo refused >> '{}'\necho 'Not logged in · Please run /login'\nexit 1\n",
        tries.display(),
        marker.display(),
        reply.display(),
        refused.display()
    );
    let claude = bin.path().join("claude");
    std::fs::write(&claude, script).unwrap();
    crate::util::make_executable(&claude);
    bin
}

/// Issue 31: a named provider paused because its CLI is not logged in is probed again on its
/// own, on the queue's clock (a manual one here): 5 minutes after the pause (still refused:
/// it stays paused, its notice says it is tried again), then 10 minutes later, when it is
/// logged in: the gate resumes, the refused step is replayed and succeeds, the notice is gone.
#[test]
#[cfg_attr(windows, ignore = "a #!/bin/sh script as the command")]
fn a_provider_paused_for_its_login_is_probed_on_a_back_off_and_resumes_when_it_answers() {
    use std::collections::BTreeMap;
    let bin = claude_logging_in_later(&crate::pipeline::concepts_answer("src/cart.ts"));
    let runs = || std::fs::read_to_string(bin.path().join("tries")).map_or(0, |t| t.lines().count());
    let dir = TempDir::new();
    let port = free_port();
    let line = format!("'{}' -p", bin.path().join("claude").display());
    let env: BTreeMap<String, String> = [
        ("VIBELEARN_DATA_DIR", dir.path().to_string_lossy().into_owned()),
        ("VIBELEARN_WORKER_PORT", port.to_string()),
        ("VIBELEARN_PROVIDER", "command".to_owned()),
        ("VIBELEARN_LLM_COMMAND", line),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let config = vibelearn::config::Config::resolve(&env);
    // The LLM gate's version holds the learner's day (a spent budget lifts with it): a start
    // whose next hour crosses the day's rollover would resume the gate by the day, not by the
    // probe. So the clock starts where the next hour stays within one learner day.
    let day = config.learner_day();
    let mut start = vibelearn::clock::system().now_ms();
    while day.day_of(start) != day.day_of(start + 3_600_000) {
        start += 600_000;
    }
    let clock = vibelearn::clock::ManualClock::new(start);
    let worker = vibelearn::worker::Worker::start_with_clock(config, clock.clone()).expect("worker starts");
    let http = crate::util::Http::new(port).with_token(dir.path());
    let project = TempDir::new();
    let session = seed_session(&http, "cli-logs-in-later", project.path());
    request_steps(&http, &session, &STEPS);
    let job = wait_step(&http, &session, "analyze_concepts", "dead", Duration::from_secs(15));
    assert_eq!(job["refused_by_gate"], "command", "{job}");
    assert_eq!(runs(), 1);
    let notice = |http: &crate::util::Http| http.get("/api/health").unwrap().1["notices"].clone();
    let paused = notice(&http)[0].as_str().unwrap_or_default().to_owned();
    assert!(paused.starts_with("command paused: not authorised"), "{paused}");
    assert!(paused.contains("it is tried 5 min after the pause"), "the notice says it is tried again: {paused}");

    clock.advance(5 * 60_000);
    wait_for("the first probe, 5 min after the pause", Duration::from_secs(15), || runs() == 2);
    // It has refused (the CLI logs in only after that), and the gate stays paused.
    let refused = || std::fs::read_to_string(bin.path().join("refused")).map_or(0, |t| t.lines().count());
    wait_for("the first probe's refusal", Duration::from_secs(15), || refused() == 2);
    assert!(notice(&http)[0].as_str().is_some_and(|n| n.starts_with("command paused")), "still paused");
    assert_eq!(step(&pipeline(&http, &session), "analyze_concepts")["state"], "dead", "still refused");

    std::fs::write(bin.path().join("logged-in"), "").unwrap();
    // Not probed again before its back-off, 10 min after the first probe.
    clock.advance(9 * 60_000);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(runs(), 2, "no probe 9 min on");
    clock.advance(60_000);
    wait_step(&http, &session, "analyze_concepts", "succeeded", Duration::from_secs(20));
    assert!(runs() >= 4, "the probe, then the replayed step: {}", runs());
    assert_eq!(notice(&http), serde_json::json!([]), "the notice is cleared");
    let gates = http.get("/api/jobs/gates").map(|r| r.1).unwrap_or_default();
    assert!(!gates.to_string().contains("\"paused\""), "{gates}");
    worker.stop();
}
