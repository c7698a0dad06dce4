//! The local trust boundary (SPEC §4), tested as a hostile neighbour on the same machine would
//! try it: raw HTTP without the key and with a wrong one against every route of the router's
//! own table; events that name the key, the admin token and a file outside every session; a
//! tool output that printed a secret. Then the database file, its WAL, the logs and every reply
//! are searched for the secrets' bytes. And the user's own hooks and CLI still work with no
//! setup, an upgrade gets its key, and a key file others can read is refused.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use vibelearn::http::routes::table::{Access, ROUTES, RouteId};

use crate::hooks::{db_rows, hook};
use crate::util::{Http, TempDir, WorkerProcess, user_key, vl, wait_for};

/// One request on its own connection, as raw bytes; the status and the body.
fn raw(port: u16, method: &str, path: &str, authorization: Option<&str>, body: &str) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let auth = authorization.map(|a| format!("Authorization: {a}\r\n")).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n{auth}\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("send");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let head_end = answer.windows(4).position(|w| w == b"\r\n\r\n").map_or(answer.len(), |i| i + 4);
    let head = String::from_utf8_lossy(&answer[..head_end]).into_owned();
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, answer[head_end..].to_vec())
}

/// A concrete path for a route pattern (`:id` → a job id or session id that may not exist).
fn path_of(pattern: &str) -> String {
    if pattern == "/api/proof" {
        return format!("{pattern}?nonce={}", "ab".repeat(32));
    }
    pattern.replace(":id", "1")
}

/// A body the route would take from a keyed caller, so a refusal is about the key alone.
fn body_of(pattern: &str) -> String {
    match pattern {
        "/api/jobs/replay" => json!({"state": "dead"}),
        "/api/sessions/observations" => json!({"contentSessionId": "n", "tool_name": "Bash", "tool_use_id": "n1"}),
        "/api/sessions/file-edit" => json!({"contentSessionId": "n", "file_path": "/etc/passwd"}),
        _ => json!({"contentSessionId": "n"}),
    }
    .to_string()
}

fn jobs_in(dir: &Path) -> usize {
    db_rows(dir, "SELECT COUNT(*) FROM jobs")[0][0].as_u64().unwrap_or(0) as usize
}

#[test]
fn every_route_refuses_a_missing_or_wrong_key_and_reads_or_queues_nothing() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let port = worker.port;
    let key = user_key(dir.path());
    let wrong = format!("Bearer {}", "0".repeat(key.len()));
    let jobs_before = jobs_in(dir.path());
    let mut checked = 0;
    for route in ROUTES {
        let (path, body) = (path_of(route.pattern), body_of(route.pattern));
        let what = format!("{} {}", route.method, route.pattern);
        for authorization in [None, Some(wrong.as_str()), Some("Bearer"), Some("Basic dXNlcjpwYXNz")] {
            let (status, reply) = raw(port, route.method, &path, authorization, &body);
            if route.access == Access::Public {
                // The code exchange is public too, but opens nothing without a valid code.
                let code_refused = route.id == RouteId::DashboardExchange && status == 401;
                assert!(status == 200 || status == 503 || code_refused, "{what} is public: {status}");
                assert!(!String::from_utf8_lossy(&reply).contains(&key), "{what}: the reply shows the key");
                continue;
            }
            assert_eq!(status, 401, "{what} with {authorization:?}: {}", String::from_utf8_lossy(&reply));
            let reply: Value = serde_json::from_slice(&reply).expect("a JSON error");
            assert_eq!(reply["error"], "unauthorized", "{what}: {reply}");
            assert!(!reply.to_string().contains(&key), "{what}: the reply shows the key");
            checked += 1;
        }
        if route.access == Access::Admin {
            let (status, _) = raw(port, route.method, &path, Some(&format!("Bearer {key}")), &body);
            assert_eq!(status, 403, "{what} with the user key: the admin token is needed");
        }
    }
    assert!(checked >= 4 * 25, "every guarded route was tried: {checked}");
    assert_eq!(jobs_in(dir.path()), jobs_before, "nothing was queued by a refused request");
    // Health tells anyone the counts, but no path or notice.
    let (_, health) = raw(port, "GET", "/api/health", None, "");
    let health: Value = serde_json::from_slice(&health).unwrap();
    assert!(health.get("settings_warning").is_none() && health.get("notices").is_none(), "{health}");
    // The user's key opens the read routes.
    let (status, _) = raw(port, "GET", "/api/sessions", Some(&format!("Bearer {key}")), "");
    assert_eq!(status, 200);
}

#[test]
fn events_naming_secret_files_leave_no_secret_in_the_database_the_wal_the_logs_or_a_reply() {
    let dir = TempDir::new();
    let outside = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let key = user_key(dir.path());
    let admin = std::fs::read_to_string(dir.path().join("admin.token")).unwrap().trim().to_owned();
    let marker = "OUTSIDE-EVERY-SESSION-7f3a91";
    let secret_file = outside.path().join("id_ed25519");
    std::fs::write(&secret_file, format!("-----BEGIN KEY-----\n{marker}\n")).unwrap();
    let http = Http::new(worker.port).with_key(dir.path());
    let named = [
        dir.path().join("admin.token"),
        dir.path().join("worker.key"),
        secret_file.clone(),
        dir.path().join("config.json"),
    ];
    let mut replies = Vec::new();
    for (n, path) in named.iter().enumerate() {
        let path = path.to_string_lossy();
        // A Claude Code Edit without the file, a Cursor-style file edit, the original client's.
        let bodies = [
            (
                "/api/sessions/observations",
                json!({"contentSessionId": "s", "tool_name": "Edit", "tool_use_id": format!("e{n}"),
                "tool_input": {"file_path": path, "old_string": "a", "new_string": "b"}}),
            ),
            (
                "/api/sessions/observations",
                json!({"contentSessionId": "s", "tool_name": "MultiEdit", "tool_use_id": format!("m{n}"),
                "tool_input": {"file_path": path, "edits": [{"old_string": "a", "new_string": "b"}]}}),
            ),
            (
                "/api/sessions/file-edit",
                json!({"contentSessionId": "s", "file_path": path, "event_id": format!("f{n}"),
                "edits": [{"old_string": "a", "new_string": "b"}]}),
            ),
            (
                "/api/sessions/file-edit",
                json!({"contentSessionId": "s", "file_path": path, "event_id": format!("o{n}"),
                "tool_type": "file_edit", "content": "b"}),
            ),
        ];
        for (route, body) in bodies {
            let (status, reply) = http.post(route, &body).unwrap();
            assert_eq!(status, 202, "{route}: {reply}");
            replies.push(reply);
        }
    }
    // A tool whose output printed the secrets (the agent ran `cat ~/.vibelearn/*`).
    let printed = json!({"contentSessionId": "s", "tool_name": "Bash", "tool_use_id": "cat",
        "tool_input": {"command": "cat ~/.vibelearn/worker.key ~/.vibelearn/admin.token"},
        "tool_response": {"stdout": format!("{key}\n{admin}\n")}});
    replies.push(http.post("/api/sessions/observations", &printed).unwrap().1);
    // The user's own hook, running in the IDE's tree, editing the key file: not captured.
    let edit = json!({"session_id": "s", "cwd": dir.path(), "hook_event_name": "PostToolUse", "tool_name": "Edit",
        "tool_use_id": "h1", "tool_input": {"file_path": dir.path().join("worker.key"), "old_string": "a", "new_string": "b"},
        "tool_response": {}});
    hook(dir.path(), worker.port, "claude-code", "observation", edit.to_string().as_bytes(), &[]);
    for step in ["stack", "static", "concepts", "quiz"] {
        replies
            .push(http.post(&format!("/api/vibelearn/analyze/{step}"), &json!({"contentSessionId": "s"})).unwrap().1);
    }
    wait_for("every job to finish", Duration::from_secs(30), || {
        db_rows(dir.path(), "SELECT COUNT(*) FROM jobs WHERE state IN ('available', 'running', 'retryable')")[0][0] == 0
    });
    assert_eq!(db_rows(dir.path(), "SELECT COUNT(*) FROM observations")[0][0], 18, "every event was stored");
    let hooked = db_rows(dir.path(), "SELECT content, fragment FROM observations WHERE event_key = 'h1'").remove(0);
    assert_eq!(hooked, [json!("b"), json!(1)], "the hook did not capture a file of the data dir");
    // Every read route's answer, every job with its payload.
    let admin_http = worker.http();
    let (_, list) = admin_http.get("/api/jobs?limit=200").unwrap();
    for job in list["jobs"].as_array().unwrap() {
        replies.push(admin_http.get(&format!("/api/jobs/{}", job["id"])).unwrap().1);
    }
    replies.push(list);
    for path in [
        "/api/sessions",
        "/api/vibelearn/profile",
        "/api/vibelearn/questions/due",
        "/api/health",
        "/api/vibelearn/sessions/s/summary",
        "/api/vibelearn/sessions/s/pipeline",
        "/api/jobs/stats",
        "/metrics",
    ] {
        replies.push(http.get(path).unwrap().1);
    }
    let secrets = [key.as_str(), admin.as_str(), marker];
    for reply in &replies {
        let text = reply.to_string();
        for secret in secrets {
            assert!(!text.contains(secret), "a reply carries a secret: {text}");
        }
    }
    drop(worker); // SIGKILL: the WAL stays as it is, uncheckpointed
    let mut files = vec![dir.path().join("vibelearn.db"), dir.path().join("vibelearn.db-wal")];
    files.extend(std::fs::read_dir(dir.path().join("logs")).unwrap().map(|e| e.unwrap().path()));
    assert!(files[1].exists(), "the WAL is searched too");
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        for secret in secrets {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{} holds the secret {secret:.8}…",
                file.display()
            );
        }
    }
}

#[test]
fn keyless_events_are_let_in_only_when_the_setting_says_so_and_never_read_anything() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start_with(dir.path(), crate::util::free_port(), &[]);
    let keyless = Http::new(worker.port);
    let init = json!({"contentSessionId": "k", "cwd": "/tmp/k", "prompt": "hello"});
    assert_eq!(keyless.post("/api/sessions/init", &init).unwrap().0, 401, "off by default");
    drop(worker);
    let worker =
        WorkerProcess::start_with(dir.path(), crate::util::free_port(), &[("VIBELEARN_ACCEPT_UNKEYED_EVENTS", "true")]);
    let keyless = Http::new(worker.port);
    let (status, reply) = keyless.post("/api/sessions/init", &init).unwrap();
    assert_eq!(status, 202, "{reply}");
    let edit = json!({"contentSessionId": "k", "tool_name": "Edit", "tool_use_id": "k1",
        "tool_input": {"file_path": dir.path().join("worker.key"), "old_string": "a", "new_string": "b"}});
    assert_eq!(keyless.post("/api/sessions/observations", &edit).unwrap().0, 202);
    // Events only: no read, no analysis request, no admin route; a wrong key is never let in.
    for (method, path) in [("GET", "/api/sessions"), ("GET", "/api/jobs"), ("POST", "/api/vibelearn/analyze/stack")] {
        let (status, _) =
            keyless.request(method, path, Some(json!({"contentSessionId": "k"}).to_string()), &[]).unwrap();
        assert_eq!(status, 401, "{method} {path}");
    }
    let (status, _) = keyless
        .request("POST", "/api/sessions/init", Some(init.to_string()), &[("Authorization", "Bearer nope")])
        .unwrap();
    assert_eq!(status, 401, "a wrong key is refused even here");
    let key = user_key(dir.path());
    wait_for("the keyless edit to be stored", Duration::from_secs(10), || {
        !db_rows(dir.path(), "SELECT 1 FROM observations WHERE event_key = 'k1'").is_empty()
    });
    let row = db_rows(dir.path(), "SELECT content, fragment FROM observations WHERE event_key = 'k1'").remove(0);
    assert_eq!((row[0].clone(), row[1].clone()), (json!("b"), json!(1)), "the named file was not read");
    assert!(!row[0].as_str().unwrap().contains(&key));
}

#[test]
fn hooks_never_lose_an_event_over_the_key_and_an_upgrade_gets_one() {
    let dir = TempDir::new();
    // A data dir from before the key: the worker makes one, owner-only.
    std::fs::write(dir.path().join("admin.token"), "0123456789abcdef0123456789abcdef").unwrap();
    crate::util::set_mode(&dir.path().join("admin.token"), 0o600);
    let worker = WorkerProcess::start(dir.path());
    let key_path = dir.path().join("worker.key");
    assert!(crate::util::is_private(&key_path), "the key is owner-only");
    assert_eq!(user_key(dir.path()).len(), 64, "32 random bytes as hex");
    // The user's hooks find the key themselves: recorded through the worker.
    let init =
        |id: &str| json!({"session_id": "u", "cwd": "/tmp/u", "hook_event_name": "UserPromptSubmit", "prompt": id});
    hook(dir.path(), worker.port, "claude-code", "session-init", init("with the key").to_string().as_bytes(), &[]);
    // A worker that holds a key its data dir no longer shows (removed underneath it): the hook
    // cannot check the listener, sends it nothing and stores the event directly instead,
    // starting no second worker.
    std::fs::remove_file(&key_path).unwrap();
    hook(dir.path(), worker.port, "claude-code", "session-init", init("refused key").to_string().as_bytes(), &[]);
    wait_for("both prompts to be stored", Duration::from_secs(10), || {
        db_rows(dir.path(), "SELECT COUNT(*) FROM prompts")[0][0] == 2
    });
    let log = std::fs::read_to_string(dir.path().join("logs/vibelearn.log")).unwrap();
    assert!(log.contains("no worker key") && !log.contains("started one"), "{log}");
    drop(worker);
    // An older worker still running when the hooks are upgraded, which cannot prove itself:
    // with no key file yet the hook sends nothing and the event is stored directly.
    let old_like =
        WorkerProcess::start_with(dir.path(), crate::util::free_port(), &[("VIBELEARN_ACCEPT_UNKEYED_EVENTS", "true")]);
    std::fs::remove_file(&key_path).unwrap();
    hook(dir.path(), old_like.port, "claude-code", "session-init", init("old worker").to_string().as_bytes(), &[]);
    wait_for("the third prompt", Duration::from_secs(10), || {
        db_rows(dir.path(), "SELECT COUNT(*) FROM prompts")[0][0] == 3
    });
}

#[test]
#[cfg_attr(windows, ignore = "Unix file modes; a Windows key file is private through its folder's ACL")]
fn a_key_file_others_can_read_is_refused_with_the_fix() {
    let dir = TempDir::new();
    std::fs::write(dir.path().join("worker.key"), "a".repeat(64)).unwrap();
    crate::util::set_mode(&dir.path().join("worker.key"), 0o644);
    let output = vl(dir.path(), crate::util::free_port()).args(["worker", "run"]).output().unwrap();
    assert!(!output.status.success(), "the worker must not start");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("worker.key") && stderr.contains("chmod 600"), "{stderr}");
    assert!(!stderr.contains(&"a".repeat(64)), "the message does not show the key");
}

#[test]
fn the_cli_uses_the_worker_with_no_setup() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = Http::new(worker.port).with_key(dir.path());
    let init = json!({"contentSessionId": "c", "cwd": "/tmp/c", "prompt": "hi"});
    assert_eq!(http.post("/api/sessions/init", &init).unwrap().0, 202);
    for args in [&["jobs", "list", "--json"][..], &["jobs", "stats"], &["status"], &["worker", "status"]] {
        let output = vl(dir.path(), worker.port).args(args).output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "vl {args:?}: {stdout} {}", String::from_utf8_lossy(&output.stderr));
        // A status 401, not those digits inside a timestamp or an id (`1796598401260`).
        let status_401 = stdout.match_indices("401").any(|(at, _)| {
            let digit = |b: Option<&u8>| b.is_some_and(u8::is_ascii_digit);
            !digit(at.checked_sub(1).and_then(|i| stdout.as_bytes().get(i))) && !digit(stdout.as_bytes().get(at + 3))
        });
        assert!(!status_401 && !stdout.contains("unauthorized"), "vl {args:?}: {stdout}");
    }
    let output = vl(dir.path(), worker.port).args(["jobs", "list", "--json"]).output().unwrap();
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(!list["jobs"].as_array().unwrap().is_empty(), "through the worker: {list}");
    let output = vl(dir.path(), worker.port).args(["worker", "stop"]).output().unwrap();
    assert!(String::from_utf8_lossy(&output.stdout).contains("worker stopped"), "the admin route with the token");
}
