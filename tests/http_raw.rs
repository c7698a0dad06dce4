//! The worker's HTTP layer over raw sockets (issue 15): request-smuggling shapes, endless and
//! oversized heads, pipelining, slow clients at the connection cap, deadlines, a panicking
//! route, out-of-descriptors backoff, and what must keep working (100-continue, 413).
//! A general client would normalise exactly the bytes these tests are about, so each test
//! writes its bytes itself and reads answers with the small reader below.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{Http, TempDir, VL, WorkerProcess, free_port, vl, wait_for};

/// One answer as read off the socket.
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// A JSON error with `code` and a message, announcing the close.
    fn assert_error(&self, status: u16, code: &str, what: &str) {
        assert_eq!(self.status, status, "{what}: {self:?}");
        let body = self.json();
        assert_eq!(body["error"], code, "{what}: {body}");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{what}: {body}");
        assert_eq!(self.header("Connection"), Some("close"), "{what}");
    }
}

/// A raw connection: bytes out, answers in (framed by their `Content-Length`).
struct Raw {
    stream: TcpStream,
    pending: Vec<u8>,
}

impl Raw {
    fn connect(port: u16) -> Raw {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
        stream.set_nodelay(true).unwrap();
        Raw { stream, pending: Vec::new() }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("send");
    }

    /// The next answer; `None` when the connection closed first.
    fn reply(&mut self) -> Option<Reply> {
        let head_end = loop {
            if let Some(i) = self.pending.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            if !self.fill() {
                return None;
            }
        };
        let head = String::from_utf8_lossy(&self.pending[..head_end]).into_owned();
        let mut lines = head.split("\r\n");
        let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
        let headers: Vec<(String, String)> =
            lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned())).collect();
        let length = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .map_or(0, |(_, v)| v.parse().expect("a numeric Content-Length"));
        while self.pending.len() < head_end + length {
            assert!(self.fill(), "the connection closed inside an answer");
        }
        let body = self.pending[head_end..head_end + length].to_vec();
        self.pending.drain(..head_end + length);
        Some(Reply { status, headers, body })
    }

    /// The server closed the connection, with nothing more to read.
    fn is_closed(&mut self) -> bool {
        self.pending.is_empty() && !self.fill() && self.pending.is_empty()
    }

    fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 16 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(0) => false,
            Ok(n) => {
                self.pending.extend_from_slice(&chunk[..n]);
                true
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => false,
            Err(e) => panic!("read: {e}"),
        }
    }
}

fn observation(tool_use_id: &str) -> String {
    json!({"contentSessionId": "raw", "tool_name": "Bash", "tool_use_id": tool_use_id,
           "tool_input": {"command": "ls"}, "cwd": "/home/dev/shop"})
    .to_string()
}

/// An observation POST to `worker` with its user key (the guard's own refusals are tested in
/// `a_request_without_the_key_is_refused_on_every_route`).
fn post(worker: &WorkerProcess, extra_headers: &str, body: &str) -> Vec<u8> {
    let (port, key) = (worker.port, crate::util::user_key(&worker.dir));
    format!(
        "POST /api/sessions/observations HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Authorization: Bearer {key}\r\n{extra_headers}\r\n{body}"
    )
    .into_bytes()
}

fn job_count(http: &Http) -> usize {
    let (status, list) = http.get("/api/jobs?limit=100").unwrap();
    assert_eq!(status, 200, "{list}");
    list["jobs"].as_array().map_or(0, Vec::len)
}

#[test]
fn request_smuggling_shapes_get_400_and_never_become_jobs() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let port = worker.port;
    let body = observation("smuggled");
    let n = body.len();
    let chunked = format!("{n:x}\r\n{body}\r\n0\r\n\r\n");
    // (what, extra header lines, body as sent)
    let shapes: Vec<(&str, String, String)> = vec![
        (
            "two different Content-Lengths",
            format!("Content-Length: {n}\r\nContent-Length: {}\r\n", n + 10),
            body.clone(),
        ),
        ("the same Content-Length twice", format!("Content-Length: {n}\r\nContent-Length: {n}\r\n"), body.clone()),
        ("a Content-Length list", format!("Content-Length: {n}, {n}\r\n"), body.clone()),
        ("space before the colon", format!("Content-Length : {n}\r\n"), body.clone()),
        ("tab before the colon", format!("Content-Length\t: {n}\r\n"), body.clone()),
        ("a signed length", format!("Content-Length: +{n}\r\n"), body.clone()),
        ("a hex length", format!("Content-Length: 0x{n:x}\r\n"), body.clone()),
        ("chunked with a length", format!("Transfer-Encoding: chunked\r\nContent-Length: {n}\r\n"), body.clone()),
        ("a length with chunked", format!("Content-Length: {n}\r\nTransfer-Encoding: chunked\r\n"), chunked.clone()),
        ("chunked alone", "Transfer-Encoding: chunked\r\n".to_owned(), chunked.clone()),
        ("identity coding", format!("Content-Length: {n}\r\nTransfer-Encoding: identity\r\n"), body.clone()),
        ("a folded header line", format!("Content-Length: {n}\r\nX-Folded: a\r\n b\r\n"), body.clone()),
        (
            "Transfer-Encoding hidden in a fold",
            format!("X-Folded: a\r\n Transfer-Encoding: chunked\r\nContent-Length: {n}\r\n"),
            body.clone(),
        ),
        ("two Hosts", format!("Host: evil.example\r\nContent-Length: {n}\r\n"), body.clone()),
        ("a bare CR in a value", format!("X-A: a\rContent-Length: 5\r\nContent-Length: {n}\r\n"), body.clone()),
    ];
    for (what, headers, sent) in &shapes {
        let mut raw = Raw::connect(port);
        raw.send(&post(&worker, headers, sent));
        let reply = raw.reply().unwrap_or_else(|| panic!("{what}: no answer"));
        reply.assert_error(400, "bad_request", what);
        assert!(raw.is_closed(), "{what}: the connection must close, so the body is never read as a request");
    }
    let http = worker.http();
    assert_eq!(job_count(&http), 0, "no smuggling shape may become a job");
    // The same request, framed properly, is accepted: the refusals were about framing alone.
    let mut raw = Raw::connect(port);
    raw.send(&post(&worker, &format!("Content-Length: {n}\r\n"), &body));
    assert_eq!(raw.reply().unwrap().status, 202);
    assert_eq!(job_count(&http), 1);
}

#[test]
fn an_endless_header_line_gets_431_at_the_head_limit() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let mut raw = Raw::connect(worker.port);
    raw.send(format!("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nX-Endless: ", worker.port).as_bytes());
    // Keep sending the same line (up to 32 MiB) while the answer is awaited.
    let mut writer = raw.stream.try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        let chunk = [b'a'; 16 * 1024];
        let mut sent = 0;
        while sent < 32 * 1024 * 1024 && writer.write_all(&chunk).is_ok() {
            sent += chunk.len();
        }
        sent
    });
    let started = Instant::now();
    let reply = raw.reply().expect("an answer while the line is still coming");
    reply.assert_error(431, "header_fields_too_large", "endless line");
    assert!(started.elapsed() < Duration::from_secs(2), "answered at the limit, not at a timeout");
    assert!(raw.is_closed());
    sender.join().unwrap();
    assert_eq!(worker.http().get("/api/health").unwrap().0, 200);
}

#[test]
fn too_many_headers_get_431_and_the_limit_itself_is_served() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let port = worker.port;
    let head = |count: usize| {
        let headers: String = (0..count).map(|i| format!("X-H{i}: v\r\n")).collect();
        format!("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{headers}\r\n").into_bytes()
    };
    // 20,000 headers (~230 KB): sent from a thread, since the server stops reading at 16 KiB.
    let mut raw = Raw::connect(port);
    let mut writer = raw.stream.try_clone().unwrap();
    let flood = head(20_000);
    let sender = std::thread::spawn(move || {
        let _ = writer.write_all(&flood);
    });
    raw.reply().expect("an answer").assert_error(431, "header_fields_too_large", "20,000 headers");
    sender.join().unwrap();
    // 101 short headers fit in 16 KiB: refused for their number.
    let mut raw = Raw::connect(port);
    raw.send(&head(100)); // Host + 100 = 101 headers
    raw.reply().expect("an answer").assert_error(431, "header_fields_too_large", "101 headers");
    let mut raw = Raw::connect(port);
    raw.send(&head(99)); // Host + 99 = the limit of 100
    assert_eq!(raw.reply().expect("an answer").status, 200);
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let port = worker.port;
    let (first, second) = (observation("pipe-1"), observation("pipe-2"));
    let mut bytes = post(&worker, &format!("Content-Length: {}\r\n", first.len()), &first);
    bytes.extend_from_slice(format!("GET /api/nothing/here HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").as_bytes());
    bytes.extend_from_slice(format!("GET /api/readiness HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").as_bytes());
    bytes.extend(post(&worker, &format!("Content-Length: {}\r\nConnection: close\r\n", second.len()), &second));
    let mut raw = Raw::connect(port);
    raw.send(&bytes); // one write: the server finds all four in its buffer
    let replies: Vec<Reply> = std::iter::from_fn(|| raw.reply()).collect();
    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [202, 404, 200, 202]);
    assert_eq!(replies[2].json(), json!({"status": "ready"}));
    let (a, b) = (replies[0].json()["jobId"].as_i64().unwrap(), replies[3].json()["jobId"].as_i64().unwrap());
    assert!(a < b, "the first POST was handled first");
    let http = worker.http();
    assert_eq!(http.get(&format!("/api/jobs/{a}")).unwrap().1["payload"]["tool_use_id"], "pipe-1");
    assert_eq!(http.get(&format!("/api/jobs/{b}")).unwrap().1["payload"]["tool_use_id"], "pipe-2");
}

/// `count` connections that each sent the start of a head; a thread adds one byte to each
/// every 100 ms and counts those the server closed.
struct Tricklers {
    stop: Arc<AtomicBool>,
    closed: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Tricklers {
    fn start(port: u16, count: usize) -> Tricklers {
        let streams: Vec<TcpStream> = (0..count)
            .map(|_| {
                let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect a trickler");
                s.write_all(format!("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ").as_bytes())
                    .unwrap();
                s.set_nonblocking(true).unwrap();
                s
            })
            .collect();
        let (stop, closed) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
        let (stop2, closed2) = (Arc::clone(&stop), Arc::clone(&closed));
        let thread = std::thread::spawn(move || {
            let mut open: Vec<TcpStream> = streams;
            while !stop2.load(Ordering::SeqCst) {
                open.retain_mut(|s| {
                    let _ = s.write(b"a");
                    let mut sink = [0u8; 512];
                    let alive = loop {
                        match s.read(&mut sink) {
                            Ok(0) => break false,
                            Ok(_) => continue, // a 408 on the way to the close
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break true,
                            Err(_) => break false,
                        }
                    };
                    if !alive {
                        closed2.fetch_add(1, Ordering::SeqCst);
                    }
                    alive
                });
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        Tricklers { stop, closed, thread: Some(thread) }
    }
}

impl Drop for Tricklers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn threads_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count())
}

#[test]
fn three_hundred_slow_clients_do_not_lock_out_a_normal_request() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let port = worker.port;
    let started = Instant::now();
    let tricklers = Tricklers::start(port, 300);
    // 300 connections against a cap of 256: the newest evict the oldest at once (the head
    // deadline is 5 s away), so at least 44 are closed before any deadline passes.
    wait_for("the cap to evict the oldest slow clients", Duration::from_secs(4), || {
        tricklers.closed.load(Ordering::SeqCst) >= 300 - 256
    });
    for n in 0..10 {
        let asked = Instant::now();
        let mut raw = Raw::connect(port);
        raw.send(format!("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n").as_bytes());
        let reply = raw.reply().unwrap_or_else(|| panic!("request {n}: closed without an answer"));
        assert_eq!(reply.status, 200, "request {n}: {}", String::from_utf8_lossy(&reply.body));
        assert!(asked.elapsed() < Duration::from_secs(1), "request {n} took {:?}", asked.elapsed());
    }
    let threads = threads_of(worker.child.id());
    assert!(threads <= 256 + 40, "a thread per connection, capped: {threads} threads");
    // `/metrics` counts the evictions (at least the 44 above).
    let mut raw = Raw::connect(port);
    let key = crate::util::user_key(&worker.dir);
    raw.send(
        format!("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {key}\r\nConnection: close\r\n\r\n")
            .as_bytes(),
    );
    let metrics = String::from_utf8(raw.reply().expect("a /metrics answer").body).unwrap();
    let evicted: u64 = metrics
        .lines()
        .find_map(|line| line.strip_prefix("vibelearn_http_connections_evicted_total "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no eviction counter in:\n{metrics}"));
    assert!(evicted >= 300 - 256, "{evicted} evictions counted");
    assert!(
        started.elapsed() < Duration::from_millis(4500),
        "inconclusive: the slow clients' head deadline may have passed ({:?})",
        started.elapsed()
    );
}

#[test]
fn trickling_heads_and_bodies_are_cut_off_at_their_deadlines_and_idle_connections_close() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let port = worker.port;
    // Each client sends one byte every 100 ms (a per-read timeout would never fire) and
    // reports when the server answered and closed.
    let trickle = move |start: String| {
        std::thread::spawn(move || {
            let began = Instant::now();
            let mut raw = Raw::connect(port);
            raw.send(start.as_bytes());
            raw.stream.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
            let mut got = Vec::new();
            let mut chunk = [0u8; 4096];
            while began.elapsed() < Duration::from_secs(20) {
                let _ = raw.stream.write(b"a");
                match raw.stream.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => got.extend_from_slice(&chunk[..n]),
                    Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                    Err(_) => break,
                }
            }
            (began.elapsed(), String::from_utf8_lossy(&got).into_owned())
        })
    };
    let head = trickle(format!("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: "));
    let body =
        trickle(String::from_utf8(post(&worker, "Content-Length: 100000\r\n", "{\"contentSessionId\":\"")).unwrap());
    let idle = std::thread::spawn(move || {
        let began = Instant::now();
        let mut raw = Raw::connect(port);
        let closed = raw.is_closed();
        (began.elapsed(), closed)
    });
    let (elapsed, answer) = head.join().unwrap();
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer}");
    assert!((4..8).contains(&elapsed.as_secs()), "the head deadline is 5 s: closed after {elapsed:?}");
    let (elapsed, answer) = body.join().unwrap();
    assert!(answer.starts_with("HTTP/1.1 400 ") && answer.contains("shorter than its Content-Length"), "{answer}");
    assert!((9..13).contains(&elapsed.as_secs()), "the body deadline is 10 s: closed after {elapsed:?}");
    let (elapsed, closed) = idle.join().unwrap();
    assert!(closed, "an idle connection is closed without an answer");
    assert!((4..8).contains(&elapsed.as_secs()), "idle for 5 s: closed after {elapsed:?}");
    assert_eq!(job_count(&worker.http()), 0);
}

#[test]
fn expect_continue_and_an_early_413_still_work() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let port = worker.port;
    let body = observation("continue-1");
    let mut raw = Raw::connect(port);
    raw.send(&post(&worker, &format!("Expect: 100-continue\r\nContent-Length: {}\r\n", body.len()), ""));
    assert_eq!(raw.reply().expect("100 Continue").status, 100, "the interim answer comes before the body is sent");
    raw.send(body.as_bytes());
    let reply = raw.reply().expect("the answer");
    assert_eq!(reply.status, 202);
    assert_eq!(reply.header("Connection"), Some("keep-alive"));
    // Too large: refused from the head, without `100 Continue`, so the body is never sent.
    let mut raw = Raw::connect(port);
    raw.send(&post(&worker, "Expect: 100-continue\r\nContent-Length: 2000000\r\n", ""));
    raw.reply().expect("413").assert_error(413, "payload_too_large", "2 MB body");
    assert!(raw.is_closed());
    assert_eq!(job_count(&worker.http()), 1);
}

/// Sockets a process holds open.
fn sockets_of(pid: u32) -> usize {
    let links = std::fs::read_dir(format!("/proc/{pid}/fd")).into_iter().flatten().flatten();
    links.filter(|e| std::fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy().starts_with("socket:"))).count()
}

#[test]
#[cfg_attr(not(target_os = "linux"), ignore = "counts descriptors in /proc: Linux only")]
fn each_connection_costs_one_descriptor() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let (port, pid) = (worker.port, worker.child.id());
    // Only the listener once the readiness poll's connection is gone.
    wait_for("earlier connections to close", Duration::from_secs(10), || sockets_of(pid) == 1);
    // Each connection is answered once, so its thread is running and holds what it needs.
    let open: Vec<Raw> = (0..20)
        .map(|_| {
            let mut raw = Raw::connect(port);
            raw.send(format!("GET /api/version HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").as_bytes());
            assert_eq!(raw.reply().expect("an answer").status, 200);
            raw
        })
        .collect();
    assert_eq!(sockets_of(pid), 1 + open.len(), "one descriptor per connection (no try_clone)");
}

/// A worker whose stderr is discarded (a panic message per request would fill an unread pipe).
fn start_quiet_worker(dir: &std::path::Path, settings: Value) -> WorkerProcess {
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    let port = free_port();
    let child = vl(dir, port)
        .args(["worker", "run"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the worker");
    let worker = WorkerProcess { child, port, dir: dir.to_owned() };
    let http = Http::new(port);
    wait_for("worker readiness", Duration::from_secs(15), || http.get("/api/readiness").is_ok_and(|(s, _)| s == 200));
    worker
}

#[test]
fn a_panicking_route_answers_500_and_gives_its_slot_back() {
    let dir = TempDir::new();
    // The route exists in debug builds only, and only with this setting (see routes/mod.rs).
    let mut worker = start_quiet_worker(dir.path(), json!({"VIBELEARN_DEBUG_PANIC_ROUTE": "1"}));
    let port = worker.port;
    // More panics than there are connection slots (256): a leaked slot per panic would leave
    // none for the health check below.
    let key = crate::util::user_key(&worker.dir);
    for n in 0..300 {
        let mut raw = Raw::connect(port);
        raw.send(
            format!("POST /api/debug/panic HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {key}\r\n\r\n")
                .as_bytes(),
        );
        let reply = raw.reply().unwrap_or_else(|| panic!("panic {n}: closed without an answer"));
        reply.assert_error(500, "internal_error", "a panicking route");
        assert!(raw.is_closed(), "panic {n}: the connection closes after a 500");
    }
    let http = worker.http();
    assert_eq!(http.get("/api/health").unwrap().0, 200);
    let (_, metrics) = http.get("/metrics").unwrap();
    assert!(metrics.as_str().unwrap().contains("route=\"panic\",status=\"500\"} 300"), "{metrics}");
    // The in-flight count went back to zero after each panic: a graceful stop does not wait
    // out its 5 s grace for requests that will never finish.
    let stopping = Instant::now();
    assert!(worker.terminate().success());
    assert!(stopping.elapsed() < Duration::from_secs(4), "stop took {:?}", stopping.elapsed());
}

#[test]
fn the_panic_route_is_off_without_its_setting() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let (status, reply) = worker.http().post("/api/debug/panic", &json!({})).unwrap();
    assert_eq!((status, reply["error"].as_str()), (404, Some("not_found")));
}

/// utime + stime of a process, in clock ticks (1/100 s).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_name.split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
#[cfg_attr(not(target_os = "linux"), ignore = "counts descriptors in /proc: Linux only")]
fn out_of_descriptors_the_accept_loop_backs_off_and_recovers() {
    let dir = TempDir::new();
    let port = free_port();
    // The worker with a small descriptor limit (it needs ~12 at rest).
    let child = sh_as_vl(dir.path(), port, "ulimit -n 48 && exec \"$VL\" worker run")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the worker under sh");
    let worker = WorkerProcess { child, port, dir: dir.path().to_owned() };
    let pid = worker.child.id();
    let http = Http::new(port);
    wait_for("worker readiness", Duration::from_secs(15), || http.get("/api/readiness").is_ok_and(|(s, _)| s == 200));
    // More idle connections than the worker has descriptors left (48 - ~12): the rest wait in
    // the backlog, so every accept fails with EMFILE until something closes.
    let fds = || std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
    let idle: Vec<TcpStream> = (0..60).map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap()).collect();
    wait_for("the worker to run out of descriptors", Duration::from_secs(5), || fds() >= 48);
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_millis(1500));
    let used = cpu_ticks(pid) - before;
    // Spinning on accept burns ~150 ticks in 1.5 s; backing off, a few.
    assert!(used < 40, "the worker used {used} ticks of CPU in 1.5 s while out of descriptors");
    drop(idle);
    wait_for("the worker to serve again", Duration::from_secs(5), || {
        http.get("/api/health").is_ok_and(|(s, _)| s == 200)
    });
}

/// `sh -c SCRIPT` with the environment a [`vl`] command would have, and `$VL` naming it.
fn sh_as_vl(dir: &std::path::Path, port: u16, script: &str) -> std::process::Command {
    let template = vl(dir, port);
    let mut sh = std::process::Command::new("sh");
    sh.env_clear();
    for (key, value) in template.get_envs() {
        if let Some(value) = value {
            sh.env(key, value);
        }
    }
    sh.env("VL", VL).arg("-c").arg(script);
    sh
}
