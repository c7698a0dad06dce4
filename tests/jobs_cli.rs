//! The admin commands as real child processes: `vl jobs …` with the worker up (HTTP) and down
//! (the database directly), `vl sync`, `vl login`, `vl install`. A provider that cannot run
//! (`command` with a missing program: the shell cannot find it, permanent) makes `analyze_concepts` dead at
//! once, which gives the replay tests real dead jobs.

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use vibelearn::clock::ManualClock;
use vibelearn::queue::{JobId, NewJob};
use vibelearn::sample::SampleSession;

use crate::util::{Http, TempDir, WorkerProcess, free_port, start_queue, start_queue_with_clock, vl, wait_for};

const CURSOR_SESSION: &str = include_str!("fixtures/sessions/cursor-fastapi.json");

/// A worker whose LLM provider is a program that does not exist.
const BROKEN_PROVIDER: &[(&str, &str)] =
    &[("VIBELEARN_PROVIDER", "command"), ("VIBELEARN_LLM_COMMAND", "/nonexistent/llm-tool")];

/// Runs `vl args…` against a data dir and port.
fn run(dir: &Path, port: u16, args: &[&str], env: &[(&str, &str)]) -> Output {
    vl(dir, port).args(args).envs(env.iter().copied()).stdin(Stdio::null()).output().expect("run vl")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `vl args… --json`-style commands that must succeed and print one JSON value.
fn run_json(dir: &Path, port: u16, args: &[&str]) -> Value {
    let output = run(dir, port, args, &[]);
    assert!(output.status.success(), "vl {args:?}: {}{}", stdout(&output), stderr(&output));
    serde_json::from_str(stdout(&output).trim())
        .unwrap_or_else(|e| panic!("vl {args:?} printed no JSON ({e}): {}", stdout(&output)))
}

/// Replays the recorded Cursor session under `session_id` through real hook processes
/// (the worker must be up); `with_stop` includes the Stop hook that queues the pipeline.
fn record_session(dir: &Path, port: u16, project: &Path, session_id: &str, with_stop: bool) {
    let session = SampleSession::parse(CURSOR_SESSION).unwrap();
    session.materialize(project).unwrap();
    for step in session.steps.iter().filter(|s| with_stop || s.event != "summarize") {
        let mut input = session.prepare_step(step, project).unwrap();
        input["conversation_id"] = json!(session_id);
        let mut child = vl(dir, port)
            .args(["hook", "cursor", &step.event])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
        let output = child.wait_with_output().unwrap();
        assert_eq!(stdout(&output).trim(), r#"{"continue":true}"#);
    }
}

fn job(http: &Http, id: i64) -> Value {
    http.get(&format!("/api/jobs/{id}")).unwrap().1
}

fn wait_for_state(http: &Http, ids: &[i64], state: &str) {
    wait_for(&format!("jobs {ids:?} to be {state}"), Duration::from_secs(20), || {
        ids.iter().all(|id| job(http, *id)["state"] == state)
    });
}

fn dead_concepts(http: &Http, count: usize) -> Vec<i64> {
    let mut ids = Vec::new();
    wait_for(&format!("{count} dead analyze_concepts jobs"), Duration::from_secs(20), || {
        let (_, page) = http.get("/api/jobs?state=dead&kind=analyze_concepts").unwrap();
        ids = page["jobs"].as_array().unwrap().iter().map(|j| j["id"].as_i64().unwrap()).collect();
        ids.len() == count
    });
    ids
}

/// Appendix A.1, list view.
fn assert_job_shape(job: &Value) {
    for (field, ok) in [
        ("id", job["id"].is_i64()),
        ("kind", job["kind"].is_string()),
        ("state", job["state"].is_string()),
        ("lane", job["lane"].is_string() || job["lane"].is_null()),
        ("attempt", job["attempt"].is_i64()),
        ("max_attempts", job["max_attempts"].is_i64()),
        ("created_at", job["created_at"].is_i64()),
        ("run_at", job["run_at"].is_i64()),
        ("finished_at", job["finished_at"].is_i64() || job["finished_at"].is_null()),
        ("last_error", job["last_error"].is_string() || job["last_error"].is_null()),
        ("result", job["result"].is_object() || job["result"].is_null()),
        ("payload", job["payload"].is_object()),
    ] {
        assert!(ok, "field {field} of {job}");
    }
}

#[test]
fn dead_jobs_are_listed_with_their_errors_and_replayed_through_the_worker() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let mut broken = WorkerProcess::start_with(dir.path(), free_port(), BROKEN_PROVIDER);
    record_session(dir.path(), broken.port, project.path(), "s-a", true);
    record_session(dir.path(), broken.port, project.path(), "s-b", true);
    dead_concepts(&broken.http(), 2);

    let page =
        run_json(dir.path(), broken.port, &["jobs", "list", "--state", "dead", "--kind", "analyze_concepts", "--json"]);
    assert_eq!(page.as_object().unwrap().keys().collect::<Vec<_>>(), ["jobs", "next_before"]);
    assert!(page["next_before"].is_null());
    let jobs = page["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    for job in jobs {
        assert_job_shape(job);
        assert_eq!((job["kind"].as_str(), job["state"].as_str()), (Some("analyze_concepts"), Some("dead")));
        assert_eq!(
            (job["attempt"].as_i64(), job["max_attempts"].as_i64()),
            (Some(1), Some(6)),
            "permanent: dead at once"
        );
        // sh's 127 (cmd's 9009 on Windows): the shell could not find the program.
        assert!(job["last_error"].as_str().unwrap().contains("could not find or run"), "{job}");
        assert!(job.get("attempts").is_none(), "attempts only in the single-job view");
    }
    assert_eq!(jobs[0]["lane"], "session:s-b", "newest first");

    // The single-job view has every attempt with its error.
    let id = jobs[1]["id"].as_i64().unwrap();
    let shown = run_json(dir.path(), broken.port, &["jobs", "show", &id.to_string(), "--json"]);
    assert_job_shape(&shown);
    assert_eq!(shown["payload"]["contentSessionId"], "s-a");
    let attempts = shown["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0]["outcome"], "failed");
    assert!(attempts[0]["error"].as_str().unwrap().contains("could not find or run"));
    assert!(attempts[0]["started_at"].is_i64() && attempts[0]["finished_at"].is_i64());

    // People get a table with the error cut to the line.
    let table = run(dir.path(), broken.port, &["jobs", "list", "--state", "dead"], &[]);
    let text = stdout(&table);
    assert!(text.starts_with("ID  "), "{text}");
    assert!(
        text.lines().filter(|l| l.contains("analyze_concepts") && l.contains("dead") && l.contains("1/6")).count() == 2,
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    let human = stdout(&run(dir.path(), broken.port, &["jobs", "show", &id.to_string()], &[]));
    assert!(
        human.contains("analyze_concepts") && human.contains("could not find or run") && human.contains("failed"),
        "{human}"
    );
    // "(just now)", or "(1s ago)" where starting processes is slow (Windows under wine).
    let english = human.contains("(just now)") || human.contains("s ago)");
    assert!(!human.contains("now ago") && english, "times read as English: {human}");

    // `vl sync` on the broken provider ends with the dead step and a non-zero exit.
    let synced = run(dir.path(), broken.port, &["sync", "s-a"], &[]);
    assert_eq!(synced.status.code(), Some(1), "{}{}", stdout(&synced), stderr(&synced));
    let text = stdout(&synced);
    assert!(text.contains("analyze_concepts failed") && text.contains("vl jobs replay"), "{text}");
    assert!(
        text.lines().any(|l| l.contains("analyze_stack") && l.contains("succeeded")),
        "one line per change in a pipe: {text}"
    );
    let dead = dead_concepts(&broken.http(), 3);

    // A working provider, and one command brings every dead analyze_concepts job back.
    broken.terminate();
    let worker = WorkerProcess::start(dir.path());
    let replay =
        run(dir.path(), worker.port, &["jobs", "replay", "--state", "dead", "--kind", "analyze_concepts"], &[]);
    assert!(replay.status.success(), "{}", stderr(&replay));
    assert!(stdout(&replay).starts_with("replayed 3 jobs"), "{}", stdout(&replay));
    assert!(stderr(&replay).is_empty(), "the worker ran the replay: {}", stderr(&replay));
    let http = worker.http();
    wait_for_state(&http, &dead, "succeeded");
    // The oldest replayed job ran first in its lane, so it made the real call (the later one
    // of the same session found its input unchanged).
    let shown = run_json(dir.path(), worker.port, &["jobs", "show", &dead[2].to_string(), "--json"]);
    assert_eq!(shown["attempt"], 1, "the attempt counter was reset");
    assert_eq!(shown["attempts"].as_array().unwrap().len(), 2, "history is kept");
    assert!(shown["result"]["concepts"].as_array().is_some_and(|c| !c.is_empty()), "{shown}");
}

#[test]
fn dead_jobs_are_replayed_on_the_database_while_the_worker_is_down() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let mut broken = WorkerProcess::start_with(dir.path(), free_port(), BROKEN_PROVIDER);
    record_session(dir.path(), broken.port, project.path(), "s-down", true);
    let dead = dead_concepts(&broken.http(), 1);
    let args = ["jobs", "list", "--state", "dead", "--json"];
    let through_worker = run_json(dir.path(), broken.port, &args);
    let stats_through_worker = run_json(dir.path(), broken.port, &["jobs", "stats", "--json"]);
    broken.terminate();

    // Down: the same JSON, read from the database.
    let port = free_port();
    assert_eq!(run_json(dir.path(), port, &args), through_worker);
    let mut stats = run_json(dir.path(), port, &["jobs", "stats", "--json"]);
    let mut expected = stats_through_worker.clone();
    for s in [&mut stats, &mut expected] {
        s.as_object_mut().unwrap().remove("oldest_available_age_ms");
    }
    assert_eq!(stats, expected);

    let replay =
        run(dir.path(), port, &["jobs", "replay", "--state", "dead", "--kind", "analyze_concepts", "--json"], &[]);
    assert!(replay.status.success(), "{}", stderr(&replay));
    assert_eq!(serde_json::from_str::<Value>(&stdout(&replay)).unwrap(), json!({"replayed": dead}));
    assert!(stderr(&replay).contains("the worker is not running"), "{}", stderr(&replay));
    let available =
        run_json(dir.path(), port, &["jobs", "list", "--state", "available", "--kind", "analyze_concepts", "--json"]);
    assert_eq!(available["jobs"][0]["id"], dead[0]);
    assert_eq!(available["jobs"][0]["attempt"], 0);

    let worker = WorkerProcess::start_with(dir.path(), port, &[]);
    wait_for_state(&worker.http(), &dead, "succeeded");
}

#[test]
fn show_cancel_and_unknown_ids_in_both_modes() {
    let dir = TempDir::new();
    let port = free_port();
    let (queue, thread) = start_queue(&dir);
    let later = queue.now() + 3_600_000;
    let waiting = |session: &str| NewJob {
        run_at: Some(later),
        ..NewJob::new("ingest", json!({"contentSessionId": session}), 5).lane(format!("session:{session}"))
    };
    let first = queue.enqueue(waiting("x")).unwrap().id.0;
    let second = queue.enqueue(waiting("y")).unwrap().id.0;
    thread.stop();
    drop(queue);

    // Down.
    let cancel = run(dir.path(), port, &["jobs", "cancel", &first.to_string(), "--json"], &[]);
    assert!(cancel.status.success(), "{}", stderr(&cancel));
    assert_eq!(stdout(&cancel).trim(), format!(r#"{{"cancelled":[{first}]}}"#));
    let again = run(dir.path(), port, &["jobs", "cancel", &first.to_string()], &[]);
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains(&format!("job {first} is cancelled")), "{}", stderr(&again));
    for args in [["jobs", "show", "9999"], ["jobs", "replay", "9999"], ["jobs", "cancel", "9999"]] {
        let missing = run(dir.path(), port, &args, &[]);
        assert_eq!(missing.status.code(), Some(1), "{args:?}");
        assert!(stderr(&missing).contains("no job 9999"), "{args:?}: {}", stderr(&missing));
    }
    let replay = run(dir.path(), port, &["jobs", "replay", &first.to_string()], &[]);
    assert!(replay.status.success());
    assert_eq!(stdout(&replay).trim(), format!("replayed 1 job: {first}"));
    let shown = run_json(dir.path(), port, &["jobs", "show", &first.to_string(), "--json"]);
    assert_eq!((shown["state"].as_str(), shown["attempt"].as_i64()), (Some("available"), Some(0)));
    let waiting_job = run(dir.path(), port, &["jobs", "replay", &second.to_string()], &[]);
    assert_eq!(waiting_job.status.code(), Some(1));
    assert!(
        stderr(&waiting_job).contains("is available; only dead, cancelled or succeeded jobs can be replayed"),
        "{}",
        stderr(&waiting_job)
    );

    // The replayed job is due now; cancel it again so the worker does not run it.
    assert!(run(dir.path(), port, &["jobs", "cancel", &first.to_string()], &[]).status.success());

    // Up: the second job waits an hour, so it is still cancellable through the worker.
    let worker = WorkerProcess::start_with(dir.path(), port, &[]);
    let cancel = run(dir.path(), port, &["jobs", "cancel", &second.to_string(), &first.to_string(), "--json"], &[]);
    assert_eq!(cancel.status.code(), Some(1), "one of the two could not be cancelled");
    assert_eq!(stdout(&cancel).trim(), format!(r#"{{"cancelled":[{second}]}}"#));
    assert!(stderr(&cancel).contains(&format!("job {first} is cancelled")), "{}", stderr(&cancel));
    assert_eq!(job(&worker.http(), second)["state"], "cancelled");
    let shown = run_json(dir.path(), port, &["jobs", "show", &second.to_string(), "--json"]);
    assert_eq!(shown["last_error"], "cancelled by an admin");
    for args in [["jobs", "show", "9999"], ["jobs", "replay", "9999"], ["jobs", "cancel", "9999"]] {
        let missing = run(dir.path(), port, &args, &[]);
        assert_eq!(missing.status.code(), Some(1), "{args:?}");
        assert!(stderr(&missing).contains("no job 9999"), "{args:?}: {}", stderr(&missing));
    }
}

#[test]
fn stats_and_prune_in_both_modes() {
    let dir = TempDir::new();
    let port = free_port();
    let retention = [("VIBELEARN_RETENTION_SUCCEEDED_HOURS", "0")];
    let (queue, thread) = start_queue(&dir);
    let later = queue.now() + 3_600_000;
    queue
        .enqueue(NewJob { run_at: Some(later), ..NewJob::new("analyze_stack", json!({"contentSessionId": "a"}), 3) })
        .unwrap();
    let doomed = queue.enqueue(NewJob::new("sync", json!({"contentSessionId": "b"}), 12)).unwrap().id;
    queue.cancel(vec![doomed]).unwrap();
    thread.stop();
    drop(queue);

    let stats = run_json(dir.path(), port, &["jobs", "stats", "--json"]);
    assert_eq!(
        stats["by_state"],
        json!({"available": 1, "running": 0, "succeeded": 0, "retryable": 0, "dead": 0, "cancelled": 1, "held": 0})
    );
    assert_eq!(stats["by_kind"], json!({"analyze_stack": {"available": 1}, "sync": {"cancelled": 1}}));
    assert!(stats["oldest_available_age_ms"].is_null(), "the available job is not due for an hour: {stats}");
    assert_eq!(stats["finished_last_hour"]["cancelled"], 1);
    let human = stdout(&run(dir.path(), port, &["jobs", "stats"], &[]));
    assert!(human.contains("KIND") && human.contains("cancelled") && human.contains("no job is waiting"), "{human}");
    let pruned = run(dir.path(), port, &["jobs", "prune"], &retention);
    assert!(stdout(&pruned).starts_with("pruned 1 finished job "), "{}", stdout(&pruned));
    assert_eq!(run_json(dir.path(), port, &["jobs", "stats", "--json"])["by_state"]["cancelled"], 0);

    let worker = WorkerProcess::start_with(dir.path(), port, &retention);
    let http = worker.http();
    let (_, reply) =
        http.post("/api/sessions/init", &json!({"contentSessionId": "s1", "prompt": "hi", "cwd": "/tmp/s1"})).unwrap();
    let id = reply["jobId"].as_i64().unwrap();
    wait_for_state(&http, &[id], "succeeded");
    let stats = run_json(dir.path(), port, &["jobs", "stats", "--json"]);
    assert_eq!(stats["by_kind"]["ingest"]["succeeded"], 1);
    assert_eq!(stats["finished_last_hour"]["succeeded"], 1);
    assert_eq!(stats["by_state"]["available"], 1);
    let pruned = run_json(dir.path(), port, &["jobs", "prune", "--json"]);
    assert!(pruned["pruned"].is_i64());
    assert_eq!(run_json(dir.path(), port, &["jobs", "list", "--state", "succeeded", "--json"])["jobs"], json!([]));
}

#[test]
fn since_filters_lists_and_replays() {
    let dir = TempDir::new();
    let port = free_port();
    let now = vibelearn::clock::system().now_ms();
    let clock = ManualClock::new(now - 3 * 3_600_000);
    let (queue, thread) = start_queue_with_clock(&dir, clock.clone());
    let old = queue.enqueue(NewJob::new("ingest", json!({}), 5)).unwrap().id;
    queue.cancel(vec![old]).unwrap();
    clock.set(now);
    let new = queue.enqueue(NewJob::new("ingest", json!({}), 5)).unwrap().id;
    queue.cancel(vec![new]).unwrap();
    thread.stop();
    drop(queue);

    let ids = |page: Value| -> Vec<JobId> {
        page["jobs"].as_array().unwrap().iter().map(|j| JobId(j["id"].as_i64().unwrap())).collect()
    };
    assert_eq!(ids(run_json(dir.path(), port, &["jobs", "list", "--since", "1h", "--json"])), [new]);
    assert_eq!(ids(run_json(dir.path(), port, &["jobs", "list", "--since", "4h", "--json"])), [new, old]);
    let future = (now + 3_600_000).to_string();
    assert_eq!(ids(run_json(dir.path(), port, &["jobs", "list", "--since", &future, "--json"])), Vec::<JobId>::new());
    let bad = run(dir.path(), port, &["jobs", "list", "--since", "yesterday"], &[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("30m, 2h, 1d"), "{}", stderr(&bad));
    let replayed = run_json(dir.path(), port, &["jobs", "replay", "--state", "cancelled", "--since", "90m", "--json"]);
    assert_eq!(replayed, json!({"replayed": [new]}));
}

#[test]
fn bad_states_and_kinds_name_the_valid_ones() {
    let dir = TempDir::new();
    let port = free_port();
    let state = run(dir.path(), port, &["jobs", "list", "--state", "failed"], &[]);
    assert_eq!(state.status.code(), Some(2));
    assert!(
        stderr(&state).contains("valid states: available, running, succeeded, retryable, dead, cancelled"),
        "{}",
        stderr(&state)
    );
    let kind = run(dir.path(), port, &["jobs", "replay", "--state", "dead", "--kind", "concepts"], &[]);
    assert_eq!(kind.status.code(), Some(2));
    assert!(stderr(&kind).contains("valid kinds: ingest, analyze_stack"), "{}", stderr(&kind));
    let running = run(dir.path(), port, &["jobs", "replay", "--state", "running"], &[]);
    assert_eq!(running.status.code(), Some(2));
    assert!(!dir.path().join("vibelearn.db").exists(), "reads and refused commands create no database");
    assert_eq!(stdout(&run(dir.path(), port, &["jobs", "list"], &[])).trim(), "no jobs match");
}

#[test]
fn every_new_command_explains_itself_with_an_example() {
    let dir = TempDir::new();
    for args in [
        &["jobs", "list"][..],
        &["jobs", "show"],
        &["jobs", "replay"],
        &["jobs", "cancel"],
        &["jobs", "stats"],
        &["jobs", "prune"],
        &["jobs"],
        &["sync"],
        &["login"],
        &["install"],
        &["install", "claude-code"],
        &["install", "cursor"],
    ] {
        let output = run(dir.path(), 1, &[args, &["--help"]].concat(), &[]);
        assert!(output.status.success(), "{args:?}");
        assert!(stdout(&output).contains("Example"), "{args:?} --help: {}", stdout(&output));
    }
}

/// Stops a worker that `vl sync` started detached, whatever the test's outcome.
struct StopWorker<'a>(&'a Path, u16);

impl Drop for StopWorker<'_> {
    fn drop(&mut self) {
        let _ = run(self.0, self.1, &["worker", "stop"], &[]);
    }
}

#[test]
fn sync_enqueues_the_pipeline_with_the_worker_down_then_up() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let port = free_port();
    let mut recorder = WorkerProcess::start_with(dir.path(), port, &[]);
    record_session(dir.path(), port, project.path(), "s-sync", false);
    wait_for("the session's events to be ingested", Duration::from_secs(20), || {
        let (_, stats) = recorder.http().get("/api/jobs/stats").unwrap();
        stats["by_kind"]["ingest"]["succeeded"] == 4
    });
    recorder.terminate();

    let no_auto_sync = [("VIBELEARN_AUTO_SYNC", "false")];
    let _stop = StopWorker(dir.path(), port);
    let down = run(dir.path(), port, &["sync", "s-sync"], &no_auto_sync);
    let text = stdout(&down);
    assert!(down.status.success(), "{text}{}", stderr(&down));
    assert!(text.contains("the worker was not running, starting it"), "{text}");
    assert!(text.contains("finished in") && text.contains("5 succeeded"), "{text}");
    assert!(
        text.lines().any(|l| l.contains("sync") && l.contains("(skipped: no_api_key)")),
        "a manual sync ignores AUTO_SYNC=false: {text}"
    );
    let http = Http::new(port).with_token(dir.path());
    assert_eq!(http.get("/api/readiness").unwrap().0, 200, "vl sync started the worker");

    // Up, and no session named: the latest session with code changes.
    let up = run(dir.path(), port, &["sync"], &no_auto_sync);
    let text = stdout(&up);
    assert!(up.status.success(), "{text}{}", stderr(&up));
    assert!(text.starts_with("session s-sync: queued 5 steps\n"), "{text}");
    assert!(text.contains("5 succeeded"), "{text}");
    let unknown = run(dir.path(), port, &["sync", "nobody"], &[]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(stderr(&unknown).contains("no session \"nobody\""), "{}", stderr(&unknown));
}

#[test]
fn login_stores_the_key_privately_and_shows_it_masked() {
    let private = |path: &std::path::Path| {
        let meta = std::fs::metadata(path).unwrap();
        vibelearn::platform::check_private_file(path, &meta).is_ok()
    };
    let dir = TempDir::new();
    let port = free_port();
    let key = "vl_live_0123456789abcdef";
    let status = stdout(&run(dir.path(), port, &["login", "--status"], &[]));
    assert!(status.starts_with("not logged in"), "{status}");
    let login = run(dir.path(), port, &["login", key], &[]);
    assert!(login.status.success(), "{}", stderr(&login));
    assert!(!stdout(&login).contains(key), "the key is never printed whole");
    let path = dir.path().join("config.json");
    assert!(private(&path), "config.json is owner-only");
    let config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(config["api_key"], key);
    let status = stdout(&run(dir.path(), port, &["login", "--status"], &[]));
    assert!(status.contains("vl_l…cdef") && !status.contains(key), "{status}");

    // `-` reads the key from stdin; other fields survive; logout removes only the key.
    std::fs::write(&path, r#"{"api_key":"old","team":"blue"}"#).unwrap();
    let mut child =
        vl(dir.path(), port).args(["login", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"vl_live_fromstdin_9876\n").unwrap();
    assert!(child.wait_with_output().unwrap().status.success());
    let config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(config, json!({"api_key": "vl_live_fromstdin_9876", "team": "blue"}));
    assert!(private(&path), "config.json is owner-only");
    assert!(run(dir.path(), port, &["login", "--logout"], &[]).status.success());
    let config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(config, json!({"team": "blue"}));
    assert!(stdout(&run(dir.path(), port, &["login", "--status"], &[])).starts_with("not logged in"));
    let empty = run(dir.path(), port, &["login", "two words"], &[]);
    assert_eq!(empty.status.code(), Some(2));
}

#[test]
fn install_merges_with_existing_hooks_and_is_idempotent() {
    let home = TempDir::new();
    let port = free_port();
    let claude = home.path().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let settings = claude.join("settings.json");
    let original = r#"{"model": "opus", "hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}]}}"#;
    std::fs::write(&settings, original).unwrap();

    // Installs copy `vl` to <data>/bin and register the copy (no `claude` on PATH here, so the
    // Claude Code version is unknown: the shell form).
    let copy = home.path().join("bin").join(format!("vl{}", std::env::consts::EXE_SUFFIX));
    let program = vibelearn::platform::shell_program(&copy);
    let first = run(home.path(), port, &["install", "claude-code"], &[]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(stdout(&first).contains("installed 6 Claude Code hooks"), "{}", stdout(&first));
    assert_eq!(std::fs::read_to_string(claude.join("settings.json.vibelearn.bak")).unwrap(), original);
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(merged["model"], "opus");
    assert_eq!(merged["hooks"]["PostToolUse"][0]["hooks"][0]["command"], "echo mine");
    for (event, vl_event) in [
        ("SessionStart", "session-start"),
        ("UserPromptSubmit", "session-init"),
        ("PostToolUse", "observation"),
        ("PostToolUseFailure", "observation"),
        ("Stop", "summarize"),
        ("SessionEnd", "session-complete"),
    ] {
        let ours: Vec<&Value> = merged["hooks"][event]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["hooks"].as_array().unwrap())
            .filter(|h| h["command"] != "echo mine")
            .collect();
        assert_eq!(ours.len(), 1, "{event}: {merged}");
        assert_eq!(ours[0]["command"], format!("{program} hook claude-code {vl_event}"));
        assert!(ours[0]["timeout"].is_i64());
    }
    let installed = std::fs::read(&settings).unwrap();
    let second = run(home.path(), port, &["install", "claude-code"], &[]);
    assert!(stdout(&second).contains("already installed"), "{}", stdout(&second));
    assert_eq!(std::fs::read(&settings).unwrap(), installed, "a re-run rewrites nothing");

    // Cursor, for a project with a hook of its own, then for the user.
    let project = TempDir::new();
    std::fs::create_dir_all(project.path().join(".cursor")).unwrap();
    let hooks = project.path().join(".cursor/hooks.json");
    std::fs::write(&hooks, r#"{"version":1,"hooks":{"stop":[{"command":"./audit.sh"}]}}"#).unwrap();
    let project_arg = project.path().to_str().unwrap();
    assert!(run(home.path(), port, &["install", "cursor", "--project", project_arg], &[]).status.success());
    let installed = std::fs::read(&hooks).unwrap();
    assert!(
        stdout(&run(home.path(), port, &["install", "cursor", "--project", project_arg], &[]))
            .contains("already installed")
    );
    assert_eq!(std::fs::read(&hooks).unwrap(), installed);
    let merged: Value = serde_json::from_slice(&installed).unwrap();
    assert_eq!(merged["version"], 1);
    assert_eq!(
        merged["hooks"]["stop"],
        json!([{"command": "./audit.sh"}, {"command": format!("{program} hook cursor summarize")}])
    );
    assert_eq!(merged["hooks"]["afterFileEdit"], json!([{"command": format!("{program} hook cursor file-edit")}]));
    assert!(run(home.path(), port, &["install", "cursor"], &[]).status.success());
    let user: Value =
        serde_json::from_str(&std::fs::read_to_string(home.path().join(".cursor/hooks.json")).unwrap()).unwrap();
    assert_eq!(user["hooks"].as_object().unwrap().len(), 7);
    let missing = run(home.path(), port, &["install", "cursor", "--project", "/nonexistent/project"], &[]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(copy.is_file(), "the stable copy exists");
    let version = std::process::Command::new(&copy).arg("--version").output().unwrap();
    assert!(version.status.success(), "the copy runs");
    let worker_copy = home.path().join("bin").join(format!("vl-worker{}", std::env::consts::EXE_SUFFIX));
    let worker_version = std::process::Command::new(&worker_copy).arg("--version").output().unwrap();
    assert!(worker_version.status.success(), "the vl-worker beside the copy runs");

    // The copy stays while any install uses it, and goes with the last.
    assert!(run(home.path(), port, &["uninstall", "cursor"], &[]).status.success());
    assert!(run(home.path(), port, &["uninstall", "cursor", "--project", project_arg], &[]).status.success());
    assert!(copy.is_file(), "Claude Code's hooks still use it");
    let last = run(home.path(), port, &["uninstall", "claude-code"], &[]);
    let both = format!("removed {} and {}", copy.display(), worker_copy.display());
    assert!(stdout(&last).contains(&both), "{}", stdout(&last));
    assert!(!copy.exists() && !home.path().join("bin").exists());
}

#[test]
fn install_says_the_provider_and_uninstall_leaves_nothing_it_created_and_says_what_stays() {
    let home = TempDir::new();
    let worker = crate::util::WorkerProcess::start(home.path());
    let installed = run(home.path(), worker.port, &["install", "claude-code"], &[]);
    let said = stdout(&installed);
    assert!(installed.status.success(), "{said}{}", stderr(&installed));
    assert!(said.contains("LLM provider: offline") && said.contains("VIBELEARN_PROVIDER"), "{said}");
    let settings = home.path().join(".claude").join("settings.json");
    assert!(settings.exists());
    let removed = run(home.path(), worker.port, &["uninstall", "claude-code"], &[]);
    let said = stdout(&removed);
    assert!(removed.status.success(), "{said}{}", stderr(&removed));
    // The settings file install created, and its backup, are gone; nothing of ours is left
    // beside them.
    let claude_files: Vec<String> = std::fs::read_dir(home.path().join(".claude"))
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    assert!(claude_files.is_empty(), "left behind: {claude_files:?}");
    assert!(!home.path().join("bin").exists() && !home.path().join("created-by-install.txt").exists());
    // The copy the hooks ran is gone, so the worker is stopped first, and no `vl` command
    // (the one just removed) is suggested.
    assert!(said.contains("stopped the worker (pid ") && !said.contains("vl worker stop"), "{said}");
    assert!(crate::util::Http::new(worker.port).get("/api/health").is_err(), "the worker was stopped");
    assert!(said.contains(&format!("stay in {}", home.path().display())), "{said}");
}
