//! Pipeline recovery end to end (issue: "a fixed key or a replay completes every session"):
//! a real worker, a fake Anthropic Messages API and a fake upstream on 127.0.0.1, the `vl`
//! CLI as an admin would use it. Each scenario ends with every session complete: concepts,
//! questions, its pipeline all `succeeded`, and the upstream holding it exactly once.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::fake_http::{FakeServer, Recorded, Reply};
use crate::hooks::db_rows;
use crate::pipeline::{
    KEY, STEPS, anthropic, concepts_answer, pipeline, questions_answer, request_steps, seed_session, step, wait_step,
};
use crate::util::{Http, TempDir, WorkerProcess, free_port, vl, wait_for};

const WAIT: Duration = Duration::from_secs(30);
const REFUSED: &str = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;

/// A fake Anthropic API that refuses every call until `fix` is called.
fn refusing_llm() -> FakeServer {
    FakeServer::start(vec![], Reply::raw(401, REFUSED))
}

/// From now on the fake answers like a working provider: concepts or questions, by prompt.
fn fix(llm: &FakeServer) {
    answer(llm, Duration::ZERO);
}

/// Like [`fix`], with each quiz answer held back `quiz_delay`.
fn answer(llm: &FakeServer, quiz_delay: Duration) {
    llm.set_responder(move |request: &Recorded| {
        let prompt = request.json()["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
        if prompt.starts_with("Extract the programming concepts") {
            anthropic(&concepts_answer("src/cart.ts"))
        } else {
            anthropic(&questions_answer()).delayed(quiz_delay)
        }
    });
}

fn llm_calls(llm: &FakeServer) -> usize {
    llm.requests().len()
}

fn login(dir: &Path, key: &str) {
    std::fs::write(dir.join("config.json"), json!({ "api_key": key }).to_string()).unwrap();
}

/// A worker with the Anthropic provider on `llm` and the upstream on `upstream`.
fn worker(dir: &TempDir, llm: &FakeServer, upstream: &FakeServer, key: &str, port: u16) -> WorkerProcess {
    WorkerProcess::start_with(
        dir.path(),
        port,
        &[
            ("VIBELEARN_PROVIDER", "anthropic"),
            ("ANTHROPIC_API_KEY", key),
            ("VIBELEARN_ANTHROPIC_BASE_URL", llm.url.as_str()),
            ("VIBELEARN_API_URL", upstream.url.as_str()),
        ],
    )
}

/// Seeds a session with one written file and requests its five steps, like a Stop hook.
fn stopped_session(http: &Http, id: &str, project: &Path) {
    seed_session(http, id, project);
    request_steps(http, id, &STEPS);
    let (status, reply) = http.post("/api/vibelearn/sync", &json!({ "contentSessionId": id })).unwrap();
    assert_eq!(status, 202, "{reply}");
}

/// Waits until every step of the session's pipeline succeeded; returns the pipeline.
fn wait_complete(http: &Http, session: &str) -> Value {
    let mut last = Value::Null;
    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_for(&format!("session {session} to complete"), WAIT, || {
            last = pipeline(http, session);
            last["steps"].as_array().is_some_and(|steps| steps.iter().all(|s| s["state"] == "succeeded"))
        })
    }));
    assert!(done.is_ok(), "session {session} did not complete: {last}");
    last
}

/// What the upstream received, per session id.
fn deliveries(upstream: &FakeServer) -> HashMap<String, Vec<Value>> {
    let mut by_session: HashMap<String, Vec<Value>> = HashMap::new();
    for request in upstream.requests() {
        let payload = request.json();
        by_session.entry(payload["session"]["id"].as_str().unwrap_or("?").to_owned()).or_default().push(payload);
    }
    by_session
}

/// The session's concepts and questions are stored and were delivered upstream exactly once.
fn assert_complete_and_delivered_once(dir: &TempDir, upstream: &FakeServer, session: &str) {
    let count = |table: &str| {
        db_rows(dir.path(), &format!("SELECT COUNT(*) FROM {table} WHERE session_id = '{session}'"))[0][0]
            .as_i64()
            .unwrap()
    };
    let (concepts, questions) = (count("concepts"), count("questions"));
    assert!(concepts >= 2 && questions >= 2, "{session}: {concepts} concepts, {questions} questions");
    let delivered = deliveries(upstream).remove(session).unwrap_or_default();
    assert_eq!(delivered.len(), 1, "{session} must reach the upstream exactly once: {delivered:?}");
    let payload = &delivered[0];
    assert_eq!(payload["concepts"].as_array().unwrap().len() as i64, concepts, "{payload}");
    assert_eq!(payload["questions"].as_array().unwrap().len() as i64, questions, "{payload}");
}

fn run_vl(dir: &Path, port: u16, args: &[&str]) -> (bool, String) {
    let output = vl(dir, port).args(args).output().expect("run vl");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), text)
}

#[test]
fn a_refused_key_holds_the_chain_and_a_replay_after_the_fix_completes_it() {
    let (dir, project) = (TempDir::new(), TempDir::new());
    let (llm, upstream) = (refusing_llm(), FakeServer::start(vec![], Reply::raw(200, "{}")));
    login(dir.path(), KEY);
    let port = free_port();
    let mut first = worker(&dir, &llm, &upstream, KEY, port);
    let http = first.http();
    stopped_session(&http, "s1", project.path());
    let concepts = wait_step(&http, "s1", "analyze_concepts", "dead", WAIT);
    // Nothing downstream runs on partial input, and nothing reaches the upstream.
    let quiz = wait_step(&http, "s1", "analyze_quiz", "held", WAIT);
    let sync = wait_step(&http, "s1", "sync", "held", WAIT);
    assert_eq!(quiz["waiting_on"]["jobs"], json!([concepts["id"]]), "{quiz}");
    assert_eq!(sync["waiting_on"]["jobs"], json!([concepts["id"], quiz["id"]]), "{sync}");
    assert_eq!(upstream.requests().len(), 0);
    let (_, sessions) = http.get("/api/sessions").unwrap();
    assert_eq!(sessions["sessions"][0]["state"], "stuck", "a dead step shows, not `observing`: {sessions}");
    assert_eq!(sessions["sessions"][0]["stuck_on"], json!(["analyze_concepts", "analyze_quiz", "sync"]), "{sessions}");
    let (_, shown) = run_vl(dir.path(), port, &["jobs", "show", &quiz["id"].to_string()]);
    assert!(shown.contains(&format!("waiting on job {} (replay or cancel it)", concepts["id"])), "{shown}");

    // The provider's side is fixed; the admin restarts the worker and replays the dead jobs.
    fix(&llm);
    first.terminate();
    let second = worker(&dir, &llm, &upstream, KEY, port);
    let http = second.http();
    let (ok, replayed) = run_vl(dir.path(), port, &["jobs", "replay", "--state", "dead"]);
    assert!(ok && replayed.contains(&format!("replayed 1 job: {}", concepts["id"])), "{replayed}");
    wait_complete(&http, "s1");
    assert_complete_and_delivered_once(&dir, &upstream, "s1");
    let (_, health) = http.get("/api/health").unwrap();
    assert_eq!(health["notices"], json!([]), "replaying the refused job resumed the provider: {health}");
}

#[test]
fn during_an_outage_five_sessions_cost_one_call_and_new_credentials_complete_them_all() {
    let (dir, project) = (TempDir::new(), TempDir::new());
    let (llm, upstream) = (refusing_llm(), FakeServer::start(vec![], Reply::raw(200, "{}")));
    login(dir.path(), KEY);
    let port = free_port();
    let mut first = worker(&dir, &llm, &upstream, KEY, port);
    let http = first.http();
    let sessions: Vec<String> = (1..=5).map(|n| format!("outage-{n}")).collect();
    for session in &sessions {
        stopped_session(&http, session, project.path());
    }
    wait_for("every session's steps to stop", WAIT, || {
        sessions
            .iter()
            .all(|s| ["held", "dead"].contains(&step(&pipeline(&http, s), "sync")["state"].as_str().unwrap_or("")))
    });
    assert_eq!(llm_calls(&llm), 1, "one refused call pauses the provider for every session");
    let held_on_provider = sessions
        .iter()
        .filter(|s| step(&pipeline(&http, s), "analyze_concepts")["waiting_on"]["gate"] == "anthropic")
        .count();
    assert_eq!(held_on_provider, 4);

    // Visible everywhere an admin looks.
    let (_, health) = http.get("/api/health").unwrap();
    assert_eq!(health["paused"][0]["name"], "anthropic", "{health}");
    assert!(health["queue"]["held"].as_i64().unwrap() >= 4 * 3, "{health}");
    let metrics = http.get("/metrics").unwrap().1.as_str().unwrap_or_default().to_owned();
    assert!(metrics.contains("vibelearn_gate_paused{gate=\"anthropic\"} 1"), "{metrics}");
    assert!(metrics.contains("vibelearn_queue_depth{state=\"held\"}"), "{metrics}");
    let (_, status) = run_vl(dir.path(), port, &["status"]);
    assert!(status.contains("anthropic paused: not authorised"), "{status}");
    let (_, listed) = run_vl(dir.path(), port, &["jobs", "list", "--state", "held", "--kind", "analyze_concepts"]);
    assert!(listed.contains("waiting on anthropic (paused"), "{listed}");

    // The developer puts in a new key and restarts: no replay, no resume needed.
    fix(&llm);
    first.terminate();
    let second = worker(&dir, &llm, &upstream, "sk-test-new-key-0000000000", port);
    let http = second.http();
    for session in &sessions {
        wait_complete(&http, session);
    }
    for session in &sessions {
        assert_complete_and_delivered_once(&dir, &upstream, session);
    }
    // The quiz answer holds one invalid question, which costs its one repair round-trip.
    assert_eq!(llm_calls(&llm), 1 + 5 * 3, "one refused call, then concepts, quiz and its repair per session");
    let (_, dead) = run_vl(dir.path(), port, &["jobs", "list", "--state", "dead"]);
    assert!(dead.contains("no jobs match"), "{dead}");
}

#[test]
fn an_admin_resume_and_vl_login_lift_a_paused_provider_without_a_restart() {
    let (dir, project) = (TempDir::new(), TempDir::new());
    let upstream = FakeServer::start(vec![], Reply::raw(401, "{}"));
    login(dir.path(), KEY);
    let port = free_port();
    let worker = WorkerProcess::start_with(dir.path(), port, &[("VIBELEARN_API_URL", upstream.url.as_str())]);
    let http = worker.http();
    for session in ["up-1", "up-2"] {
        stopped_session(&http, session, project.path());
    }
    wait_for("one sync refused, the other held", WAIT, || {
        let states: Vec<String> = ["up-1", "up-2"]
            .iter()
            .map(|s| step(&pipeline(&http, s), "sync")["state"].as_str().unwrap_or("").to_owned())
            .collect();
        states.contains(&"dead".to_owned()) && states.contains(&"held".to_owned())
    });
    assert_eq!(upstream.requests().len(), 1);
    // An admin resume with the same key: the provider gets one more call, is refused again.
    let (ok, resumed) = run_vl(dir.path(), port, &["jobs", "resume", "--provider", "upstream"]);
    assert!(ok && resumed.contains("resumed upstream: 1 held job released, 1 refused job replayed"), "{resumed}");
    wait_for("the upstream paused again", WAIT, || {
        http.get("/api/health").unwrap().1["paused"].as_array().is_some_and(|p| !p.is_empty())
            && upstream.requests().len() == 2
    });
    let (ok, nothing) = run_vl(dir.path(), port, &["jobs", "resume", "--provider", "anthropic"]);
    assert!(!ok && nothing.contains("anthropic is not paused; paused: upstream"), "{nothing}");
    // `vl login` with a working key: the watchdog sees new credentials and resumes it.
    upstream.set_script(vec![], Reply::raw(200, "{}"));
    let (ok, out) = run_vl(dir.path(), port, &["login", "sk-test-another-key-1234567890"]);
    assert!(ok, "{out}");
    for session in ["up-1", "up-2"] {
        wait_complete(&http, session);
    }
    let delivered = deliveries(&upstream);
    assert_eq!(
        upstream.requests().iter().filter(|r| r.header("authorization").unwrap().contains("another")).count(),
        2
    );
    assert!(delivered.contains_key("up-1") && delivered.contains_key("up-2"), "{delivered:?}");
}

#[test]
fn replaying_static_reruns_downstream_only_when_its_output_changed() {
    let (dir, project) = (TempDir::new(), TempDir::new());
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    stopped_session(&http, "rerun", project.path());
    let before = wait_complete(&http, "rerun");
    let attempts = |kind: &str| -> usize {
        let id = step(&pipeline(&http, "rerun"), kind)["job_id"].as_i64().unwrap();
        http.get(&format!("/api/jobs/{id}")).unwrap().1["attempts"].as_array().unwrap().len()
    };
    let static_id = step(&before, "analyze_static")["job_id"].as_i64().unwrap();
    // Unchanged output: the re-run's success re-opens nothing (decided in that same commit).
    http.post(&format!("/api/jobs/{static_id}/replay"), &json!({})).unwrap();
    wait_for("the static re-run", WAIT, || {
        attempts("analyze_static") == 2 && step(&pipeline(&http, "rerun"), "analyze_static")["state"] == "succeeded"
    });
    assert_eq!(step(&pipeline(&http, "rerun"), "analyze_static")["result"]["skipped"], "unchanged");
    for kind in ["analyze_concepts", "analyze_quiz", "sync"] {
        assert_eq!(attempts(kind), 1, "{kind} re-ran after an unchanged upstream output");
    }
    // New code in the session (no Stop yet), then the replay: concepts and what follows re-run.
    let cwd = project.path().to_string_lossy().into_owned();
    let write = json!({"contentSessionId": "rerun", "cwd": cwd, "tool_name": "Write", "tool_use_id": "rerun-w2",
        "tool_input": {"file_path": format!("{cwd}/src/store.py"),
                       "content": "import asyncio\n\nasync def load(ids):\n    return await asyncio.gather(*(fetch(i) for i in ids))\n"}});
    assert_eq!(http.post("/api/sessions/observations", &write).unwrap().0, 202);
    let questions_before = db_rows(dir.path(), "SELECT COUNT(*) FROM questions")[0][0].as_i64().unwrap();
    http.post(&format!("/api/jobs/{static_id}/replay"), &json!({})).unwrap();
    wait_for("the chain to re-run", WAIT, || {
        let p = pipeline(&http, "rerun");
        attempts("sync") == 2 && p["steps"].as_array().unwrap().iter().all(|s| s["state"] == "succeeded")
    });
    assert_eq!((attempts("analyze_concepts"), attempts("analyze_quiz")), (2, 2));
    assert_eq!(step(&pipeline(&http, "rerun"), "analyze_static")["result"]["files"], 2);
    let rows =
        db_rows(dir.path(), "SELECT COUNT(*), COUNT(DISTINCT concept_id || question_type || text_hash) FROM questions");
    assert_eq!(rows[0][0], rows[0][1], "no question twice");
    assert!(rows[0][0].as_i64().unwrap() >= questions_before);
}

#[test]
fn a_sigkill_in_the_middle_of_a_cascade_loses_nothing_and_the_chain_goes_on() {
    let (dir, project) = (TempDir::new(), TempDir::new());
    let (llm, upstream) = (refusing_llm(), FakeServer::start(vec![], Reply::raw(200, "{}")));
    login(dir.path(), KEY);
    let port = free_port();
    let mut first = worker(&dir, &llm, &upstream, KEY, port);
    let http = first.http();
    stopped_session(&http, "crash", project.path());
    let concepts = wait_step(&http, "crash", "analyze_concepts", "dead", WAIT);
    wait_step(&http, "crash", "sync", "held", WAIT);
    // The quiz answer is slow: the cascade is in flight (concepts done, quiz running) when
    // the worker is killed.
    answer(&llm, Duration::from_secs(30));
    http.post(&format!("/api/jobs/{}/replay", concepts["id"]), &json!({})).unwrap();
    wait_step(&http, "crash", "analyze_quiz", "running", WAIT);
    first.kill();
    fix(&llm);
    let second = worker(&dir, &llm, &upstream, KEY, port);
    let http = second.http();
    let done = wait_complete(&http, "crash");
    let quiz_id = step(&done, "analyze_quiz")["job_id"].as_i64().unwrap();
    let quiz = http.get(&format!("/api/jobs/{quiz_id}")).unwrap().1;
    assert_eq!(quiz["attempts"][0]["outcome"], "lost", "{quiz}");
    assert_complete_and_delivered_once(&dir, &upstream, "crash");
}

#[test]
fn the_resume_route_needs_the_admin_token_and_a_string_provider() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let anonymous = Http::new(worker.port);
    let (status, body) = anonymous.post("/api/jobs/resume", &json!({})).unwrap();
    assert_eq!((status, body["error"].as_str()), (401, Some("unauthorized")), "{body}");
    let user = Http::new(worker.port).with_key(dir.path());
    let (status, body) = user.post("/api/jobs/resume", &json!({})).unwrap();
    assert_eq!(
        (status, body["error"].as_str()),
        (403, Some("forbidden")),
        "the user key is not the admin token: {body}"
    );
    let http = worker.http();
    let (status, body) = http.post("/api/jobs/resume", &json!({ "provider": 7 })).unwrap();
    assert_eq!(status, 400, "{body}");
    let (status, body) = http.post("/api/jobs/resume", &json!({ "provider": "anthropic" })).unwrap();
    assert_eq!((status, &body["resumed"]["gates"]), (200, &json!([])), "nothing was paused: {body}");
    let (status, body) = http.get("/api/jobs/gates").unwrap();
    assert_eq!((status, &body["gates"]), (200, &json!([])), "{body}");
    let (status, _) = http.get("/api/jobs/resume").unwrap();
    assert_eq!(status, 405);
}

#[test]
fn an_absurd_retry_after_is_capped_at_the_backoff_limit_and_panics_nothing() {
    let (dir, project) = (TempDir::new(), TempDir::new());
    let upstream = FakeServer::start(
        vec![Reply::raw(429, "{}").with_header("Retry-After", "100000000000000000000")],
        Reply::raw(200, "{}"),
    );
    login(dir.path(), KEY);
    let worker = WorkerProcess::start_with(dir.path(), free_port(), &[("VIBELEARN_API_URL", upstream.url.as_str())]);
    let http = worker.http();
    stopped_session(&http, "absurd", project.path());
    let sync = wait_step(&http, "absurd", "sync", "retryable", WAIT);
    // Before: `Duration::from_secs_f64(1e20)` panicked in the handler ("the handler panicked").
    assert_eq!(sync["last_error"], "upstream answered 429", "{sync}");
    let attempt = &sync["attempts"][0];
    let wait_ms = sync["run_at"].as_i64().unwrap() - attempt["finished_at"].as_i64().unwrap();
    assert!((599_000..=600_000).contains(&wait_ms), "retried after the 10-minute cap, not never: {wait_ms} ms");
}
