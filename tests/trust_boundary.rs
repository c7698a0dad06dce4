//! The local trust boundary's second pass (SPEC §4: "the disk", "the port", "the dashboard",
//! private-turn markers), tested the way another user of the machine and a squatting process
//! would try it: a second uid (`setpriv` to `nobody`) reading the database, its WAL and the
//! logs; a data dir left loose by an older version, tightened by the next start; a listener on
//! the worker's port that answers like a worker, against a real hook, `vl status`, `vl worker
//! status`, `vl worker start`, `vl jobs replay` and `vl dashboard`, with every byte it received
//! searched for the key, the admin token (raw and base64) and the prompt; a listener answering
//! the proof with 60 MB, against a hook's peak memory; and a 300-character
//! session id whose private turn must stay private.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
#[cfg(unix)]
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use serde_json::json;

use crate::hooks::{db_rows, hook};
#[cfg(unix)]
use crate::util::free_port;
use crate::util::{TempDir, WorkerProcess, vl, wait_for};

const PROMPT: &str = "the user's secret prompt about the payroll schema";
const TOOL_OUTPUT: &str = "PRIVATE-TOOL-OUTPUT-7731";

#[cfg(unix)]
/// A data dir `data` inside a folder others may enter (0755), so the data dir's own mode is
/// what stands between another user and the files.
fn open_parent() -> (TempDir, PathBuf) {
    let parent = TempDir::new();
    crate::util::set_mode(parent.path(), 0o755);
    let data = parent.path().join("data");
    (parent, data)
}

/// Every file under `dir` with its mode (Unix).
#[cfg(unix)]
fn modes(dir: &Path) -> Vec<(PathBuf, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = vec![(dir.to_owned(), std::fs::metadata(dir).unwrap().permissions().mode() & 0o777)];
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let meta = std::fs::symlink_metadata(entry.path()).unwrap();
        if meta.is_dir() {
            out.extend(modes(&entry.path()));
        } else {
            out.push((entry.path(), meta.permissions().mode() & 0o777));
        }
    }
    out
}

#[cfg(unix)]
/// Whether this test can act as a second user: root, with `setpriv` and the `nobody` user.
fn second_user_available(test: &str) -> bool {
    // SAFETY: geteuid(2) has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let setpriv = std::process::Command::new("setpriv").arg("--version").output().is_ok_and(|o| o.status.success());
    if root && setpriv {
        return true;
    }
    if root {
        crate::util::skip_unless_ci(test, "setpriv (util-linux) is not installed");
    } else {
        // Not root: no second uid to become. Never the case under CI, which runs as root.
        crate::util::skip_unless_ci(test, "not running as root, so there is no second uid to read as");
    }
    false
}

#[cfg(unix)]
/// `cat path` as the user `nobody`: its stdout, and whether it succeeded.
fn read_as_nobody(path: &Path) -> (bool, Vec<u8>) {
    let output = std::process::Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "cat"])
        .arg(path)
        .output()
        .expect("run setpriv");
    (output.status.success(), output.stdout)
}

/// Records a prompt and a tool call through a real worker on `data`.
fn record_a_session(data: &Path, port: u16) {
    let init = json!({"session_id": "s1", "cwd": "/tmp/p", "hook_event_name": "UserPromptSubmit", "prompt": PROMPT});
    hook(data, port, "claude-code", "session-init", init.to_string().as_bytes(), &[]);
    wait_for("the prompt in the database", Duration::from_secs(10), || {
        db_rows(data, "SELECT COUNT(*) FROM prompts")[0][0] == 1
    });
}

#[cfg(unix)]
/// The worker's files as another user sees them: nothing readable, the prompt nowhere.
fn assert_unreadable_by_others(data: &Path) {
    let mut files: Vec<PathBuf> = modes(data).into_iter().map(|(p, _)| p).filter(|p| p.is_file()).collect();
    files.sort();
    for name in ["vibelearn.db", "vibelearn.db-wal", "logs/vibelearn.log", "worker.key", "admin.token"] {
        assert!(files.contains(&data.join(name)), "{name} exists to be tried: {files:?}");
    }
    for file in &files {
        let (ok, bytes) = read_as_nobody(file);
        assert!(!ok, "another user read {}", file.display());
        assert!(!String::from_utf8_lossy(&bytes).contains("payroll"), "{}", file.display());
    }
    let listing = std::process::Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "ls"])
        .arg(data)
        .output()
        .unwrap();
    assert!(!listing.status.success(), "another user cannot even list the data dir");
}

#[test]
#[cfg(unix)]
fn another_user_cannot_read_the_database_its_wal_or_the_logs() {
    if !second_user_available("another_user_cannot_read_the_database_its_wal_or_the_logs") {
        return;
    }
    let (_parent, data) = open_parent();
    let port = free_port();
    let worker = WorkerProcess::start_with(&data, port, &[]);
    record_a_session(&data, port);
    for (path, mode) in modes(&data) {
        let want = if path.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode, want, "{} is {mode:o}", path.display());
    }
    assert_unreadable_by_others(&data);
    drop(worker);
}

#[test]
#[cfg(unix)]
fn a_data_dir_left_loose_by_an_older_version_is_tightened_at_the_next_start() {
    let (_parent, data) = open_parent();
    let port = free_port();
    let mut worker = WorkerProcess::start_with(&data, port, &[]);
    record_a_session(&data, port);
    worker.terminate();
    // What 1680758 left: the dir 0755, every file 0644 (the key files it kept 0600).
    for (path, _) in modes(&data) {
        let key = path.ends_with("worker.key") || path.ends_with("admin.token");
        let mode = if path.is_dir() {
            0o755
        } else if key {
            0o600
        } else {
            0o644
        };
        crate::util::set_mode(&path, mode);
    }
    let worker = WorkerProcess::start_with(&data, port, &[]);
    for (path, mode) in modes(&data) {
        assert_eq!(mode & 0o077, 0, "{} is still {mode:o}", path.display());
    }
    let log = std::fs::read_to_string(data.join("logs/vibelearn.log")).unwrap();
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("owner-only")).collect();
    assert_eq!(lines.len(), 1, "one line says what changed: {lines:?}");
    assert!(lines[0].contains(". 755->700") && lines[0].contains("vibelearn.db 644->600"), "{}", lines[0]);
    if second_user_available("a_data_dir_left_loose_by_an_older_version_is_tightened_at_the_next_start") {
        assert_unreadable_by_others(&data);
    }
    drop(worker);
}

/// A process on the worker's port that answers every request the way a worker would (a
/// proof that cannot be right, readiness, health, 202 for the rest) and keeps every byte.
struct Squatter {
    port: u16,
    received: Arc<Mutex<Vec<u8>>>,
    connections: Arc<Mutex<usize>>,
}

impl Squatter {
    fn start() -> Squatter {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(Mutex::new(0));
        let (bytes, count) = (Arc::clone(&received), Arc::clone(&connections));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                *count.lock().unwrap() += 1;
                let bytes = Arc::clone(&bytes);
                std::thread::spawn(move || serve_like_a_worker(stream, &bytes));
            }
        });
        Squatter { port, received, connections }
    }

    fn received(&self) -> String {
        String::from_utf8_lossy(&self.received.lock().unwrap()).into_owned()
    }
}

fn serve_like_a_worker(mut stream: TcpStream, received: &Mutex<Vec<u8>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = [0u8; 65536];
    loop {
        let n = match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        received.lock().unwrap().extend_from_slice(&buf[..n]);
        let head = String::from_utf8_lossy(&buf[..n]).into_owned();
        let body = if head.starts_with("GET /api/proof") {
            json!({"proof": "00".repeat(32)})
        } else if head.starts_with("GET /api/readiness") {
            json!({"status": "ready"})
        } else if head.starts_with("GET /api/health") {
            json!({"status": "ok", "pid": 1, "uptime_ms": 1, "queue": {}, "llm": {"description": "x"}})
        } else {
            json!({"status": "queued", "jobId": 1, "deduplicated": false, "code": "ab".repeat(32)})
        };
        let status = if head.starts_with("GET") { "200 OK" } else { "202 Accepted" };
        let body = body.to_string();
        let answer = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if stream.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

#[test]
fn a_listener_that_cannot_prove_it_is_the_worker_gets_nothing_of_the_users() {
    let dir = TempDir::new();
    let data = dir.path();
    // A data dir with its key, token and a dead job, made by a real worker that then stopped.
    let mut worker = WorkerProcess::start(data);
    record_a_session(data, worker.port);
    worker.terminate();
    let key = crate::util::user_key(data);
    let token = std::fs::read_to_string(data.join("admin.token")).unwrap().trim().to_owned();
    let squatter = Squatter::start();
    let port = squatter.port;

    // A real hook: the prompt is stored directly, nothing was lost.
    let init = json!({"session_id": "s2", "cwd": "/tmp/p", "hook_event_name": "UserPromptSubmit",
                      "prompt": format!("{PROMPT} again")});
    hook(data, port, "claude-code", "session-init", init.to_string().as_bytes(), &[]);
    let observation = json!({"session_id": "s2", "cwd": "/tmp/p", "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": "ls"}, "tool_response": TOOL_OUTPUT});
    hook(data, port, "claude-code", "observation", observation.to_string().as_bytes(), &[]);
    let stored = db_text(data);
    assert!(stored.contains(&format!("{PROMPT} again")) && stored.contains(TOOL_OUTPUT), "both events are stored");
    let log = std::fs::read_to_string(data.join("logs/vibelearn.log")).unwrap();
    assert!(log.contains(&format!("port {port} is held by another process")), "{log}");

    // The CLI: status and worker status say who holds the port; start does not race it.
    let holder = format!("pid {}", std::process::id());
    for args in [&["status"][..], &["worker", "status"], &["worker", "start"]] {
        let output = vl(data, port).args(args).output().unwrap();
        let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(said.contains(&format!("port {port} is held by another process")), "vl {args:?}: {said}");
        // The holder's pid where the OS tells it (Linux's /proc; elsewhere the message goes without).
        let pid_told = !cfg!(target_os = "linux") || said.contains(&holder);
        assert!(pid_told && said.contains("VIBELEARN_WORKER_PORT"), "vl {args:?}: {said}");
    }
    assert!(!data.join("worker.pid").exists(), "no worker was started to race for the port");
    // jobs replay works on the database itself.
    let output = vl(data, port).args(["jobs", "replay", "--state", "succeeded"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    // The dashboard opens nothing and says why; the stand-in opener records any argv.
    let bin = dir.path().join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let opener = bin.join("xdg-open");
    std::fs::write(&opener, "#!/bin/sh\nprintf '%s\\n' \"$@\" >> \"$VL_TEST_OPENED\"\n").unwrap();
    crate::util::make_executable(&opener);
    let opened = dir.path().join("opened");
    let output = vl(data, port)
        .arg("dashboard")
        .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()))
        .env("VL_TEST_OPENED", &opened)
        .output()
        .unwrap();
    assert!(!output.status.success(), "no dashboard of a squatter");
    assert!(String::from_utf8_lossy(&output.stderr).contains("held by another process"));
    let argv = std::fs::read_to_string(&opened).unwrap_or_default();
    assert!(!argv.contains(&key), "{argv}");

    // Every byte the squatter got: nonces, nothing of the user's.
    let got = squatter.received();
    assert!(*squatter.connections.lock().unwrap() >= 4 && got.contains("GET /api/proof?nonce="), "{got}");
    let b64 = base64::engine::general_purpose::STANDARD;
    for (what, secret) in [
        ("the key", key.clone()),
        ("the token", token.clone()),
        ("the key in base64", b64.encode(&key)),
        ("the token in base64", b64.encode(&token)),
        ("the prompt", PROMPT.to_owned()),
        ("the tool output", TOOL_OUTPUT.to_owned()),
    ] {
        assert!(!got.contains(&secret), "the squatter received {what}: {got}");
    }
    for line in got.lines().filter(|l| l.contains(' ') && l.contains("HTTP/1.1")) {
        assert!(line.starts_with("GET /api/proof?nonce="), "only proof requests reached it: {line}");
    }
}

/// Bytes the real worker's answer to the proof request takes, head and body, read off a raw
/// connection.
fn proof_answer_bytes(port: u16) -> usize {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let nonce = "ab".repeat(32);
    write!(stream, "GET /api/proof?nonce={nonce} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    assert!(answer.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&answer));
    answer.len()
}

/// A listener on the worker's port that answers every request with a 60 MB body.
fn huge_answers() -> (u16, Arc<Mutex<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let received = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&received);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let seen = Arc::clone(&seen);
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let n = stream.read(&mut buf).unwrap_or(0);
                seen.lock().unwrap().extend_from_slice(&buf[..n]);
                let size = 60 * 1024 * 1024;
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {size}\r\n\r\n"
                );
                let chunk = vec![b'0'; 1024 * 1024];
                for _ in 0..60 {
                    if stream.write_all(&chunk).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, received)
}

/// `command` run under GNU time, which writes the peak memory (KiB) to `out`.
fn under_gnu_time(command: &std::process::Command, out: &Path) -> std::process::Command {
    let mut timed = std::process::Command::new("/usr/bin/time");
    timed.args(["-f", "%M", "-o"]).arg(out).arg(command.get_program()).args(command.get_args());
    timed.env_clear();
    for (name, value) in command.get_envs() {
        if let Some(value) = value {
            timed.env(name, value);
        }
    }
    timed
}

#[test]
fn a_listener_answering_the_proof_with_60_mb_costs_a_hook_no_memory_and_loses_no_event() {
    let dir = TempDir::new();
    let data = dir.path();
    let mut worker = WorkerProcess::start(data);
    let real = proof_answer_bytes(worker.port);
    assert!(
        real * 4 <= vibelearn::worker_client::MAX_PROOF_RESPONSE_BYTES,
        "the real proof answer ({real} bytes) fits the cap with margin"
    );
    worker.terminate();
    let (port, received) = huge_answers();
    let observation = json!({"session_id": "s3", "cwd": "/tmp/p", "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_use_id": "t-huge", "tool_input": {"command": "ls"}, "tool_response": TOOL_OUTPUT});
    // GNU time gives the hook's peak memory where it is installed; the reader's own bound is
    // the unit test `a_huge_answer_to_the_proof_is_refused_having_buffered_no_more_than_its_cap`.
    // (Linux only: under wine the path is the host's Linux binary, which cannot run a Windows
    // program.)
    let gnu_time = std::env::consts::OS == "linux" && Path::new("/usr/bin/time").exists();
    let rss_file = dir.path().join("max-rss-kb");
    let mut command = vl(data, port);
    if gnu_time {
        command = under_gnu_time(&command, &rss_file);
    }
    let started = std::time::Instant::now();
    let mut child = command
        .args(["hook", "claude-code", "observation"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(observation.to_string().as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let took = started.elapsed();
    assert!(output.status.success() && output.stderr.is_empty(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), r#"{"continue":true}"#);
    assert!(took < Duration::from_secs(3), "the hook took {took:?}");
    assert!(db_text(data).contains(TOOL_OUTPUT), "the event was stored directly");
    let log = std::fs::read_to_string(data.join("logs/vibelearn.log")).unwrap();
    assert!(log.contains(&format!("port {port} is held by another process")), "{log}");
    let got = String::from_utf8_lossy(&received.lock().unwrap()).into_owned();
    assert!(got.starts_with("GET /api/proof?nonce=") && !got.contains(TOOL_OUTPUT), "{got}");
    if gnu_time {
        let kb: u64 = std::fs::read_to_string(&rss_file).unwrap().trim().parse().unwrap();
        assert!(kb < 32 * 1024, "the hook's peak memory was {kb} KiB");
    } else if std::env::consts::OS == "linux" {
        crate::util::skip_unless_ci("the hook's peak memory", "no /usr/bin/time here to measure it");
    }
}

/// A prompt that is entirely private, and a tool call after it, for session `id`.
fn private_turn(data: &Path, port: u16, id: &str) {
    let init = json!({"session_id": id, "cwd": "/tmp/p", "hook_event_name": "UserPromptSubmit",
                      "prompt": "<private>my salary is 1</private>"});
    hook(data, port, "claude-code", "session-init", init.to_string().as_bytes(), &[]);
    let observation = json!({"session_id": id, "cwd": "/tmp/p", "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_use_id": "tp", "tool_input": {"command": "cat salary"}, "tool_response": TOOL_OUTPUT});
    hook(data, port, "claude-code", "observation", observation.to_string().as_bytes(), &[]);
}

/// The database and its WAL as text, to search for what was stored.
fn db_text(data: &Path) -> String {
    let mut bytes = Vec::new();
    for name in ["vibelearn.db", "vibelearn.db-wal"] {
        bytes.extend(std::fs::read(data.join(name)).unwrap_or_default());
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn nothing_of_the_turn_stored(data: &Path) {
    let text = db_text(data);
    assert!(!text.contains(TOOL_OUTPUT) && !text.contains("salary"), "the private turn reached the database");
}

#[test]
fn a_300_character_session_id_keeps_its_private_turn_private() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let id = "s".repeat(300);
    private_turn(dir.path(), worker.port, &id);
    let markers: Vec<String> = std::fs::read_dir(dir.path().join("private"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(markers.len(), 1, "{markers:?}");
    assert!(markers[0].len() == 64 && markers[0].bytes().all(|b| b.is_ascii_hexdigit()), "{markers:?}");
    // A prompt that is not private ends the turn: the next tool call is recorded.
    let init = json!({"session_id": id, "cwd": "/tmp/p", "hook_event_name": "UserPromptSubmit", "prompt": "public"});
    hook(dir.path(), worker.port, "claude-code", "session-init", init.to_string().as_bytes(), &[]);
    wait_for("the public prompt", Duration::from_secs(10), || {
        db_rows(dir.path(), "SELECT COUNT(*) FROM prompts")[0][0] == 1
    });
    assert!(std::fs::read_dir(dir.path().join("private")).unwrap().next().is_none(), "the marker is gone");
    drop(worker);
    nothing_of_the_turn_stored(dir.path());
}

#[test]
fn a_marker_that_cannot_be_written_keeps_the_turn_unrecorded() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    // Where the markers go is a file: no marker can be made there, nor checked.
    std::fs::write(dir.path().join("private"), "").unwrap();
    private_turn(dir.path(), worker.port, "s-fail-closed");
    // The turn's end quotes it: whether the turn is private cannot be told, so its last word
    // is dropped (the analysis is still asked for, without it).
    end_of_turn(dir.path(), worker.port, "s-fail-closed");
    wait_for("the concepts step queued", Duration::from_secs(10), || {
        db_rows(dir.path(), "SELECT COUNT(*) FROM jobs WHERE kind = 'analyze_concepts'")[0][0] == 1
    });
    drop(worker);
    nothing_of_the_turn_stored(dir.path());
    let log = std::fs::read_to_string(dir.path().join("logs/vibelearn.log")).unwrap();
    assert!(log.contains("cannot mark a private turn"), "{log}");
    assert!(log.contains("cannot tell whether the turn that ended is private"), "{log}");
    assert!(!log.contains("salary"), "the log names the failure, not the text: {log}");
}

/// The Stop hook of session `id`, whose last message quotes the private prompt.
fn end_of_turn(data: &Path, port: u16, id: &str) {
    let stop = json!({"session_id": id, "cwd": "/tmp/p", "hook_event_name": "Stop", "stop_hook_active": false,
                      "last_assistant_message": "Drafted the email saying your salary is 1"});
    hook(data, port, "claude-code", "summarize", stop.to_string().as_bytes(), &[]);
}

#[test]
fn a_marker_of_the_old_naming_keeps_its_turn_private_after_an_upgrade() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    // What a version before the digests left for a turn that was private at the upgrade: a
    // marker named by the hex of the session id.
    let id = "s-upgraded";
    std::fs::create_dir_all(dir.path().join("private")).unwrap();
    let old = dir.path().join("private").join(hex::encode(id));
    std::fs::write(&old, "").unwrap();
    let observation = json!({"session_id": id, "cwd": "/tmp/p", "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_use_id": "tp", "tool_input": {"command": "cat salary"}, "tool_response": TOOL_OUTPUT});
    hook(dir.path(), worker.port, "claude-code", "observation", observation.to_string().as_bytes(), &[]);
    end_of_turn(dir.path(), worker.port, id);
    wait_for("the concepts step queued", Duration::from_secs(10), || {
        db_rows(dir.path(), "SELECT COUNT(*) FROM jobs WHERE kind = 'analyze_concepts'")[0][0] == 1
    });
    assert_eq!(db_rows(dir.path(), "SELECT COUNT(*) FROM observations")[0][0], 0);
    // The next prompt that is not private ends the turn, and the old marker with it.
    let init = json!({"session_id": id, "cwd": "/tmp/p", "hook_event_name": "UserPromptSubmit", "prompt": "public"});
    hook(dir.path(), worker.port, "claude-code", "session-init", init.to_string().as_bytes(), &[]);
    assert!(!old.exists(), "the old marker is gone");
    let public = json!({"session_id": id, "cwd": "/tmp/p", "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_use_id": "tq", "tool_input": {"command": "ls"}, "tool_response": "a.ts"});
    hook(dir.path(), worker.port, "claude-code", "observation", public.to_string().as_bytes(), &[]);
    wait_for("the public tool call", Duration::from_secs(10), || {
        db_rows(dir.path(), "SELECT COUNT(*) FROM observations")[0][0] == 1
    });
    drop(worker);
    nothing_of_the_turn_stored(dir.path());
}
