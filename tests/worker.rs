//! The worker as a real child process on a free loopback port: every route with good and bad
//! input, the guards, single instance, graceful shutdown and restart after SIGKILL.

use std::time::Duration;

use serde_json::{Value, json};

use crate::util::{Http, TempDir, WorkerProcess, free_port, vl, wait_for};

fn observation(session: &str, tool_use_id: &str) -> Value {
    json!({"contentSessionId": session, "tool_name": "Bash", "tool_use_id": tool_use_id,
           "tool_input": {"command": "npm install zod"}, "tool_response": {"stdout": "added 1 package"},
           "cwd": "/home/dev/shop"})
}

fn job_state(http: &Http, id: i64) -> String {
    let (_, job) = http.get(&format!("/api/jobs/{id}")).unwrap();
    job["state"].as_str().unwrap_or("?").to_owned()
}

#[test]
fn core_routes_answer_json() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let (status, health) = http.get("/api/health").unwrap();
    assert_eq!(status, 200, "{health}");
    assert_eq!(health["status"], "ok");
    assert_eq!(health["runner"]["threads"], 4);
    assert!(health["queue"]["available"].is_number());
    assert_eq!(http.get("/api/readiness").unwrap(), (200, json!({"status": "ready"})));
    assert_eq!(http.get("/api/version").unwrap().1["version"], env!("CARGO_PKG_VERSION"));
    http.post("/api/sessions/observations", &observation("s1", "t1")).unwrap();
    let (status, metrics) = http.get("/metrics").unwrap();
    assert_eq!(status, 200);
    let text = metrics.as_str().unwrap();
    assert!(text.contains("vibelearn_jobs_enqueued_total{kind=\"ingest\"} 1"), "{text}");
    assert!(text.contains("vibelearn_http_requests_total{route=\"session_event\",status=\"202\"} 1"), "{text}");
    assert!(text.contains("vibelearn_queue_depth{state=\"available\"}"));
}

#[test]
fn session_events_are_queued_ingested_and_visible() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let (status, reply) = http
        .post(
            "/api/sessions/init",
            &json!({"contentSessionId": "s1", "prompt": "build a cart", "cwd": "/home/dev/shop"}),
        )
        .unwrap();
    assert_eq!(status, 202, "{reply}");
    assert_eq!(reply["status"], "queued");
    assert_eq!(reply["deduplicated"], false);
    // The session has nothing waiting, so the event was stored before the 202 (inline ingest).
    let init = reply["jobId"].as_i64().unwrap();
    assert_eq!(job_state(&http, init), "succeeded");
    let (status, first) = http.post("/api/sessions/observations", &observation("s1", "toolu_1")).unwrap();
    assert_eq!(status, 202);
    assert_eq!(job_state(&http, first["jobId"].as_i64().unwrap()), "succeeded");
    // A replay goes through the runner's handler, which keys an event without an id the same
    // way: the prompt is not stored twice.
    http.post(&format!("/api/jobs/{init}/replay"), &json!({})).unwrap();
    wait_for("replayed init", Duration::from_secs(10), || job_state(&http, init) == "succeeded");
    let (_, again) = http.post("/api/sessions/observations", &observation("s1", "toolu_1")).unwrap();
    assert_eq!((again["jobId"].clone(), again["deduplicated"].clone()), (first["jobId"].clone(), json!(true)));
    let (status, _) = http
        .post(
            "/api/sessions/file-edit",
            &json!({"contentSessionId": "s1", "file_path": "/home/dev/shop/cart.ts",
            "edits": [{"old_string": "a", "new_string": "export const total = 1;"}]}),
        )
        .unwrap();
    assert_eq!(status, 202);
    let (status, done) = http.post("/api/sessions/complete", &json!({"contentSessionId": "s1"})).unwrap();
    assert_eq!(status, 202);
    let last = done["jobId"].as_i64().unwrap();
    wait_for("ingest", Duration::from_secs(10), || job_state(&http, last) == "succeeded");
    let (_, sessions) = http.get("/api/sessions?limit=5").unwrap();
    let session = &sessions["sessions"][0];
    assert_eq!(session["id"], "s1");
    assert_eq!(session["project"], "shop");
    assert_eq!(session["cwd"], "/home/dev/shop");
    assert_eq!(session["prompts"], 1);
    assert_eq!(session["observations"], 2);
    assert_eq!(session["ended"], true);
    // No Stop came after the observations: SessionEnd analysed the session (once).
    wait_for("the analysis queued at the session's end", Duration::from_secs(20), || {
        let (_, sessions) = http.get("/api/sessions?limit=5").unwrap();
        sessions["sessions"][0]["state"] == "analyzed"
    });
    let (_, pipeline) = http.get("/api/vibelearn/sessions/s1/pipeline").unwrap();
    let steps: Vec<&str> = pipeline["steps"].as_array().unwrap().iter().map(|s| s["state"].as_str().unwrap()).collect();
    assert_eq!(steps, ["succeeded"; 5], "{pipeline}");
    let (_, again) = http.post("/api/sessions/complete", &json!({"contentSessionId": "s1", "event_id": "e2"})).unwrap();
    wait_for("second end", Duration::from_secs(10), || {
        job_state(&http, again["jobId"].as_i64().unwrap()) == "succeeded"
    });
    let (_, stats) = http.get("/api/jobs/stats").unwrap();
    let stacks: i64 = stats["by_kind"]["analyze_stack"].as_object().unwrap().values().filter_map(Value::as_i64).sum();
    assert_eq!(stacks, 1, "an analysed session is not analysed again at a second end: {stats}");
}

#[test]
fn skipped_events_say_why() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start_with(dir.path(), free_port(), &[("VIBELEARN_EXCLUDED_PROJECTS", "/secret/**")]);
    let http = worker.http();
    let mut excluded = observation("s1", "t1");
    excluded["cwd"] = json!("/secret/repo");
    assert_eq!(
        http.post("/api/sessions/observations", &excluded).unwrap(),
        (200, json!({"status": "skipped", "reason": "project_excluded"}))
    );
    let mut skipped = observation("s1", "t2");
    skipped["tool_name"] = json!("TodoWrite");
    assert_eq!(http.post("/api/sessions/observations", &skipped).unwrap().1["reason"], "tool_excluded");
    let private = json!({"contentSessionId": "s2", "prompt": "<private>my password is hunter2</private>"});
    assert_eq!(http.post("/api/sessions/init", &private).unwrap().1["reason"], "private");
    // The tool calls of that private turn are not recorded either, until a normal prompt.
    assert_eq!(http.post("/api/sessions/observations", &observation("s2", "t3")).unwrap().1["reason"], "private");
    assert_eq!(
        http.post("/api/sessions/init", &json!({"contentSessionId": "s2", "prompt": "now normal"})).unwrap().0,
        202
    );
    assert_eq!(http.post("/api/sessions/observations", &observation("s2", "t4")).unwrap().0, 202);
}

#[test]
fn analysis_requests_dedup_while_waiting() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start_with(dir.path(), free_port(), &[("VIBELEARN_RUNNER_THREADS", "1")]);
    let http = worker.http();
    // Hold the session's lane with a cancelled... simpler: enqueue twice back to back.
    let body = json!({"contentSessionId": "s9"});
    let (status, a) = http.post("/api/vibelearn/analyze/stack", &body).unwrap();
    assert_eq!(status, 202);
    let (_, b) = http.post("/api/vibelearn/analyze/stack", &body).unwrap();
    if b["deduplicated"] == json!(true) {
        assert_eq!(a["jobId"], b["jobId"]);
    } else {
        // The first had already started: a second run is legitimately queued.
        assert_ne!(a["jobId"], b["jobId"]);
    }
    for step in ["static", "concepts", "quiz"] {
        assert_eq!(http.post(&format!("/api/vibelearn/analyze/{step}"), &body).unwrap().0, 202, "{step}");
    }
    assert_eq!(http.post("/api/vibelearn/sync", &body).unwrap().0, 202);
    let (status, pipeline) = http.get("/api/vibelearn/sessions/s9/pipeline").unwrap();
    assert_eq!(status, 200);
    let kinds: Vec<&str> = pipeline["steps"].as_array().unwrap().iter().map(|s| s["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["analyze_stack", "analyze_static", "analyze_concepts", "analyze_quiz", "sync"]);
    assert!(pipeline["steps"][4]["job_id"].is_number());
}

#[test]
fn read_routes_have_their_shapes() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    assert_eq!(http.get("/api/vibelearn/profile").unwrap(), (200, json!({"profile": []})));
    assert_eq!(http.get("/api/vibelearn/questions/due?limit=5").unwrap(), (200, json!({"questions": []})));
    assert_eq!(http.get("/api/sessions").unwrap(), (200, json!({"sessions": []})));
    let (status, missing) = http.get("/api/vibelearn/sessions/nope/summary").unwrap();
    assert_eq!((status, missing["error"].as_str()), (404, Some("not_found")));
    assert_eq!(http.get("/api/sessions?limit=abc").unwrap().0, 400);
}

#[test]
fn bad_input_gets_a_clear_json_error() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let json_header = [("Content-Type", "application/json")];
    /// (method, path, body, headers, expected status)
    type Case<'a> = (&'a str, &'a str, Option<String>, Vec<(&'a str, &'a str)>, u16);
    let cases: Vec<Case> = vec![
        ("POST", "/api/sessions/init", Some("{not json".into()), json_header.to_vec(), 400),
        ("POST", "/api/sessions/init", Some("{}".into()), json_header.to_vec(), 400),
        ("POST", "/api/sessions/init", Some("[1,2]".into()), json_header.to_vec(), 400),
        ("POST", "/api/sessions/observations", Some(r#"{"contentSessionId":"s"}"#.into()), json_header.to_vec(), 400),
        (
            "POST",
            "/api/sessions/observations",
            Some(r#"{"contentSessionId":7,"tool_name":"X"}"#.into()),
            json_header.to_vec(),
            400,
        ),
        ("POST", "/api/sessions/file-edit", Some(r#"{"contentSessionId":"s"}"#.into()), json_header.to_vec(), 400),
        (
            "POST",
            "/api/sessions/init",
            Some(r#"{"contentSessionId":"s"}"#.into()),
            vec![("Content-Type", "text/plain")],
            415,
        ),
        (
            "POST",
            "/api/sessions/init",
            Some(format!(r#"{{"contentSessionId":"s","prompt":"{}"}}"#, "x".repeat(1_100_000))),
            json_header.to_vec(),
            413,
        ),
        ("GET", "/api/nothing/here", None, vec![], 404),
        ("GET", "/favicon.ico", None, vec![], 404),
        ("DELETE", "/api/health", None, vec![], 405),
        ("GET", "/api/sessions/init", None, vec![], 405),
        ("GET", "/api/jobs/abc", None, vec![], 400),
        ("GET", "/api/jobs/999999", None, vec![], 404),
        ("GET", "/api/jobs?state=bogus", None, vec![], 400),
        ("POST", "/api/jobs/replay", Some(r#"{"state":"running"}"#.into()), json_header.to_vec(), 400),
    ];
    for (method, path, body, headers, expected) in cases {
        let (status, reply) = http.request(method, path, body, &headers).unwrap();
        assert_eq!(status, expected, "{method} {path}: {reply}");
        assert!(
            reply["error"].is_string() && reply["message"].is_string(),
            "{method} {path}: not a JSON error: {reply}"
        );
    }
    // Still healthy after all that.
    assert_eq!(http.get("/api/health").unwrap().0, 200);
}

#[test]
fn guards_refuse_foreign_origins_hosts_and_missing_tokens() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let body = Some(r#"{"contentSessionId":"s"}"#.to_owned());
    let json_header = ("Content-Type", "application/json");
    let (status, reply) = http
        .request("POST", "/api/sessions/init", body.clone(), &[json_header, ("Origin", "https://evil.example")])
        .unwrap();
    assert_eq!((status, reply["error"].as_str()), (403, Some("forbidden")));
    let (status, _) = http
        .request("POST", "/api/sessions/init", body.clone(), &[json_header, ("Origin", "http://localhost:3000")])
        .unwrap();
    assert_eq!(status, 202);
    let (status, _) = http.request("GET", "/api/health", None, &[("Host", "evil.example:37778")]).unwrap();
    assert_eq!(status, 403);
    let no_token = Http::new(worker.port);
    assert_eq!(no_token.post("/api/jobs/prune", &json!({})).unwrap().0, 401);
    assert_eq!(no_token.post("/api/admin/shutdown", &json!({})).unwrap().0, 401);
    let (status, _) = no_token.request("POST", "/api/jobs/prune", None, &[("Authorization", "Bearer wrong")]).unwrap();
    assert_eq!(status, 401);
    let user = Http::new(worker.port).with_key(dir.path());
    assert_eq!(user.post("/api/jobs/prune", &json!({})).unwrap().0, 403, "the user key is not the admin token");
    assert_eq!(http.post("/api/jobs/prune", &json!({})).unwrap().0, 200);
    let token_path = dir.path().join("admin.token");
    let meta = std::fs::metadata(&token_path).unwrap();
    vibelearn::platform::check_private_file(&token_path, &meta).expect("the admin token is owner-only");
}

#[test]
fn queue_admin_routes_list_show_cancel_replay_and_count() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let mut ids = Vec::new();
    for n in 0..5 {
        let (_, reply) = http.post("/api/sessions/observations", &observation("s1", &format!("t{n}"))).unwrap();
        ids.push(reply["jobId"].as_i64().unwrap());
    }
    wait_for("ingest", Duration::from_secs(10), || job_state(&http, ids[4]) == "succeeded");
    let (_, page) = http.get("/api/jobs?kind=ingest&limit=2").unwrap();
    assert_eq!(page["jobs"].as_array().unwrap().len(), 2);
    let before = page["next_before"].as_i64().unwrap();
    let (_, rest) = http.get(&format!("/api/jobs?kind=ingest&limit=10&before={before}")).unwrap();
    assert_eq!(rest["jobs"].as_array().unwrap().len(), 3);
    assert_eq!(rest["next_before"], Value::Null);
    let (_, job) = http.get(&format!("/api/jobs/{}", ids[0])).unwrap();
    assert_eq!(job["attempts"][0]["outcome"], "succeeded");
    assert_eq!(job["payload"]["tool_use_id"], "t0");
    let (_, replayed) = http.post(&format!("/api/jobs/{}/replay", ids[0]), &json!({})).unwrap();
    assert_eq!(replayed, json!({"replayed": [ids[0]]}));
    wait_for("replayed", Duration::from_secs(10), || job_state(&http, ids[0]) == "succeeded");
    let (_, session) = http.get("/api/sessions").unwrap();
    assert_eq!(session["sessions"][0]["observations"], 5, "a replayed ingest must not duplicate");
    let (_, stats) = http.get("/api/jobs/stats").unwrap();
    assert_eq!(stats["by_state"]["succeeded"], 5);
    assert_eq!(stats["by_kind"]["ingest"]["succeeded"], 5);
    // Cancel a job that is waiting behind a future run_at is hard to arrange over HTTP;
    // cancelling a finished job is a no-op that says so.
    let (status, cancelled) = http.post(&format!("/api/jobs/{}/cancel", ids[1]), &json!({})).unwrap();
    assert_eq!((status, cancelled), (200, json!({"cancelled": []})));
    let (_, none) = http.post("/api/jobs/replay", &json!({"state": "dead", "kind": "ingest"})).unwrap();
    assert_eq!(none, json!({"replayed": []}));
}

#[test]
fn a_second_worker_on_the_same_data_dir_exits_zero_with_a_message() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let output = vl(dir.path(), free_port()).args(["worker", "run"]).output().unwrap();
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("already running"));
    assert_eq!(worker.http().get("/api/health").unwrap().0, 200);
}

#[test]
fn a_port_taken_by_another_program_is_reported() {
    let dir = TempDir::new();
    let squatter = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = squatter.local_addr().unwrap().port();
    let output = vl(dir.path(), port).args(["worker", "run"]).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Who holds it (this test process, which /proc shows) and how to choose another port.
    assert!(stderr.contains(&format!("port {port} is held by another process")), "{stderr}");
    #[cfg(target_os = "linux")]
    assert!(stderr.contains(&format!("pid {}", std::process::id())), "{stderr}");
    assert!(stderr.contains("VIBELEARN_WORKER_PORT"), "{stderr}");
}

#[test]
fn sigterm_shuts_down_gracefully_and_sigkill_loses_no_acknowledged_job() {
    let dir = TempDir::new();
    let port = free_port();
    let mut worker = WorkerProcess::start_with(dir.path(), port, &[]);
    let http = worker.http();
    let mut acknowledged = Vec::new();
    for n in 0..50 {
        let (status, reply) = http.post("/api/sessions/observations", &observation("s1", &format!("k{n}"))).unwrap();
        assert_eq!(status, 202);
        acknowledged.push(reply["jobId"].as_i64().unwrap());
    }
    worker.kill(); // SIGKILL: no chance to clean up
    let mut worker = WorkerProcess::start_with(dir.path(), port, &[]);
    let http = worker.http();
    for id in &acknowledged {
        wait_for("every acknowledged job to run", Duration::from_secs(10), || job_state(&http, *id) == "succeeded");
    }
    let (_, sessions) = http.get("/api/sessions").unwrap();
    assert_eq!(sessions["sessions"][0]["observations"], 50, "exactly once in effect");
    let status = worker.terminate();
    assert!(status.success(), "graceful shutdown must exit 0, got {status:?}");
    assert!(!dir.path().join("worker.pid").exists());
    assert!(Http::new(port).get("/api/health").is_err(), "the port must be closed");
}

#[test]
fn many_keep_alive_connections_opened_at_once_see_no_stall() {
    // The stall this guards against: connections accepted back to back left waiting for a
    // thread until another keep-alive connection closed (seen at 0.9–5.4 s with tiny_http).
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let port = worker.port;
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(32));
    let handles: Vec<_> = (0..32)
        .map(|c| {
            let barrier = barrier.clone();
            let dir = dir.path().to_owned();
            std::thread::spawn(move || {
                let http = Http::new(port).with_key(&dir);
                barrier.wait();
                let mut worst = Duration::ZERO;
                for n in 0..20 {
                    let started = std::time::Instant::now();
                    let (status, _) = http
                        .post("/api/sessions/observations", &observation(&format!("k{c}"), &format!("k{c}-{n}")))
                        .unwrap();
                    assert_eq!(status, 202);
                    worst = worst.max(started.elapsed());
                }
                worst
            })
        })
        .collect();
    let worst = handles.into_iter().map(|h| h.join().unwrap()).max().unwrap();
    assert!(worst < Duration::from_millis(1500), "a request took {worst:?}");
}

#[test]
fn a_locked_database_turns_health_degraded_and_enqueues_into_clear_503s() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    assert_eq!(http.get("/api/health").unwrap().0, 200);
    // Another process holds the write lock past the 5 s busy timeout.
    let locker = rusqlite::Connection::open(dir.db_path()).unwrap();
    locker.execute_batch("BEGIN IMMEDIATE; INSERT INTO queue_meta (key, value) VALUES ('lock', 'held');").unwrap();
    std::thread::sleep(Duration::from_millis(1100)); // let the health probe's cache expire
    // The 503 comes after the writer's busy waits (9.9 s here), close to the client's usual
    // 10 s: a loaded machine had the client give up first.
    let (status, reply) =
        worker.http().waiting(30).post("/api/sessions/observations", &observation("s1", "locked-1")).unwrap();
    assert_eq!((status, reply["error"].as_str()), (503, Some("database_busy")), "{reply}");
    // Health answers at once throughout, and turns degraded once its write probe is stuck.
    let mut degraded = Value::Null;
    wait_for("health to report the locked database", Duration::from_secs(6), || {
        let started = std::time::Instant::now();
        let (status, health) = http.get("/api/health").unwrap();
        assert!(started.elapsed() < Duration::from_secs(1), "health must not wait for the lock");
        degraded = health;
        status == 503
    });
    assert_eq!(degraded["status"], "degraded");
    assert!(degraded["problems"][0].as_str().unwrap().contains("cannot be written"), "{degraded}");
    locker.execute_batch("ROLLBACK").unwrap();
    wait_for("health to recover", Duration::from_secs(10), || http.get("/api/health").unwrap().0 == 200);
    assert_eq!(
        http.post("/api/sessions/observations", &observation("s1", "locked-2")).unwrap().0,
        202,
        "nothing stays broken"
    );
}

#[test]
fn the_dashboard_is_one_html_page_with_a_strict_policy() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let mut response = ureq::get(format!("http://127.0.0.1:{}/", worker.port)).call().unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    assert_eq!(header("content-type"), "text/html; charset=utf-8");
    let csp = header("content-security-policy");
    assert!(
        csp.contains("script-src 'sha256-") && csp.contains("connect-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    let html = response.body_mut().read_to_string().unwrap();
    assert!(html.starts_with("<!doctype html>") && html.contains("/api/jobs/stats"), "the page must carry its script");
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"), "no external assets");
    // Same guards as the API: a foreign Host is refused even for the page.
    let (status, _) = worker.http().request("GET", "/", None, &[("Host", "evil.example")]).unwrap();
    assert_eq!(status, 403);
}

#[test]
fn throughput_counts_finished_jobs_per_minute() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let mut last = 0;
    for n in 0..3 {
        last = http.post("/api/sessions/observations", &observation("s1", &format!("t{n}"))).unwrap().1["jobId"]
            .as_i64()
            .unwrap();
    }
    wait_for("ingest", Duration::from_secs(10), || job_state(&http, last) == "succeeded");
    let (status, body) = http.get("/api/jobs/throughput?minutes=5").unwrap();
    assert_eq!(status, 200, "{body}");
    let buckets = body["buckets"].as_array().unwrap();
    assert_eq!((buckets.len(), body["bucket_ms"].as_i64()), (5, Some(60_000)));
    let sum = |state: &str| buckets.iter().map(|b| b[state].as_i64().unwrap()).sum::<i64>();
    // The three may straddle a minute boundary; together they are all there.
    assert_eq!((sum("succeeded"), sum("dead"), sum("cancelled")), (3, 0, 0), "{body}");
    assert!(buckets.windows(2).all(|w| w[1]["start"].as_i64().unwrap() - w[0]["start"].as_i64().unwrap() == 60_000));
    assert_eq!(http.get("/api/jobs/throughput").unwrap().1["minutes"], 15, "15 minutes by default");
    let (status, error) = http.get("/api/jobs/throughput?minutes=soon").unwrap();
    assert_eq!((status, error["error"].as_str()), (400, Some("bad_request")));
    assert_eq!(http.post("/api/jobs/throughput", &json!({})).unwrap().0, 405);
}

#[test]
fn activity_lists_quiz_answers_per_day() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let (status, empty) = http.get("/api/vibelearn/activity?days=7").unwrap();
    assert_eq!(status, 200, "{empty}");
    assert_eq!(empty["days"].as_array().unwrap().len(), 7);
    assert_eq!(empty["total_answers"], 0);
    // `vl quiz` writes `daily_streaks`; a direct row stands in for a day of answers here.
    let today = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() / 86_400;
    let conn = rusqlite::Connection::open(dir.path().join("vibelearn.db")).unwrap();
    conn.execute("INSERT INTO daily_streaks (day, answers, correct) VALUES (?1, 5, 4)", [today as i64]).unwrap();
    drop(conn);
    let (_, body) = http.get("/api/vibelearn/activity?days=7").unwrap();
    let days = body["days"].as_array().unwrap();
    assert_eq!((days[6]["answers"].as_i64(), days[6]["correct"].as_i64()), (Some(5), Some(4)), "{body}");
    assert!(days[6]["day"].as_str().unwrap().len() == 10, "an ISO date: {body}");
    assert_eq!(body["total_answers"], 5);
    assert_eq!(
        http.get("/api/vibelearn/activity").unwrap().1["days"].as_array().unwrap().len(),
        30,
        "30 days by default"
    );
    assert_eq!(http.get("/api/vibelearn/activity?days=-1").unwrap().0, 400);
    assert_eq!(http.request("DELETE", "/api/vibelearn/activity", None, &[]).unwrap().0, 405);
}

#[test]
fn a_session_id_with_an_encoded_slash_stays_one_path_segment() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let (_, reply) = http.post("/api/sessions/init", &json!({"contentSessionId": "team/a b", "prompt": "x"})).unwrap();
    let id = reply["jobId"].as_i64().unwrap();
    wait_for("ingest", Duration::from_secs(10), || job_state(&http, id) == "succeeded");
    let (status, summary) = http.get("/api/vibelearn/sessions/team%2Fa%20b/summary").unwrap();
    assert_eq!(status, 200, "{summary}");
    assert_eq!(http.get("/api/vibelearn/sessions/team%2Fa%20b/pipeline").unwrap().0, 200);
}

#[test]
fn a_plus_in_a_path_is_a_plus_and_in_a_query_a_space() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let (status, reply) = http.post("/api/vibelearn/analyze/stack", &json!({"contentSessionId": "a+b"})).unwrap();
    assert_eq!(status, 202, "{reply}");
    let (_, pipeline) = http.get("/api/vibelearn/sessions/a+b/pipeline").unwrap();
    assert_eq!(pipeline["steps"][0]["job_id"], reply["jobId"], "the session a+b, not \"a b\": {pipeline}");
    let (_, listed) = http.get("/api/jobs?session=a%2Bb").unwrap();
    assert_eq!(listed["jobs"].as_array().map(Vec::len), Some(1), "{listed}");
    let (_, spaced) = http.get("/api/jobs?session=a+b").unwrap();
    assert_eq!(spaced["jobs"].as_array().map(Vec::len), Some(0), "a query's + is a space: {spaced}");
}

#[test]
fn absurd_numbers_in_the_settings_are_clamped_and_said_not_a_panic() {
    let dir = TempDir::new();
    let env = [
        ("VIBELEARN_TIMEOUT_ANALYZE_CONCEPTS_SECS", "1e20"),
        ("VIBELEARN_RETENTION_DEAD_DAYS", "1e20"),
        ("VIBELEARN_LLM_TIMEOUT_SECS", "-3"),
    ];
    let worker = WorkerProcess::start_with(dir.path(), crate::util::free_port(), &env);
    let http = worker.http();
    // Prune with the clamped retention keeps a fresh dead job (a wrapped one deleted them all).
    let (_, health) = http.get("/api/health").unwrap();
    let warning = health["settings_warning"].as_str().unwrap_or_default();
    assert!(
        warning.contains("VIBELEARN_TIMEOUT_ANALYZE_CONCEPTS_SECS=1e20") && warning.contains("using 86400"),
        "{health}"
    );
    let output = crate::util::vl(dir.path(), worker.port).envs(env).args(["worker", "status"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("warning:") && stdout.contains("RETENTION_DEAD_DAYS=1e20"), "{stdout}");
    let log = std::fs::read_to_string(dir.path().join("logs/vibelearn.log")).unwrap();
    assert!(log.contains("LLM_TIMEOUT_SECS=-3"), "the log says so too");
    assert_eq!(http.post("/api/jobs/prune", &json!({})).unwrap().0, 200);
}

#[test]
fn worker_start_says_to_a_person_whether_it_started_one_or_found_one() {
    let dir = TempDir::new();
    let port = crate::util::free_port();
    let first = crate::util::vl(dir.path(), port).args(["worker", "start"]).output().unwrap();
    let first_out = String::from_utf8_lossy(&first.stdout);
    assert!(first.status.success(), "{first_out}");
    let url = format!("http://127.0.0.1:{port}");
    assert!(first_out.starts_with("started a worker (pid ") && first_out.trim_end().ends_with(&url), "{first_out}");
    let second = crate::util::vl(dir.path(), port).args(["worker", "start"]).output().unwrap();
    let second_out = String::from_utf8_lossy(&second.stdout);
    assert!(second_out.starts_with("a worker is already running (pid "), "{second_out}");
    assert!(!first_out.contains('{') && !second_out.contains('{'), "no hook JSON for a person");
    let stop = crate::util::vl(dir.path(), port).args(["worker", "stop"]).output().unwrap();
    assert!(String::from_utf8_lossy(&stop.stdout).contains("worker stopped"));
}
