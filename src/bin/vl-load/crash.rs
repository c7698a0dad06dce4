//! `vl-load crash`: the crash-safety check. Clients POST observations (each with a unique
//! `tool_use_id`, now and then an analysis request that makes the session's next events wait
//! for the runner instead of being stored inline) to a real worker while it is killed with SIGKILL and restarted, round after
//! round. Then the last worker drains the queue and the database is checked: every event that
//! got a 202 must be a job, have run to `succeeded`, and be stored exactly once.

use std::collections::{HashMap, HashSet};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

pub(crate) struct Worker {
    pub(crate) child: Child,
}

impl Worker {
    /// Whether it is still running (it did not crash, or get stopped by someone else).
    pub(crate) fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// SIGKILL, then reap.
    pub(crate) fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn start_worker(dir: &std::path::Path, port: u16) -> Worker {
    start_worker_with(dir, port, &[])
}

/// `vl worker run` on `dir` and `port` with the offline provider, `env` added (and overriding);
/// returns once it is ready (or after 15 s).
pub(crate) fn start_worker_with(dir: &std::path::Path, port: u16, env: &[(&str, &str)]) -> Worker {
    let child = Command::new(super::vl_binary())
        .args(["worker", "run"])
        .env("VIBELEARN_DATA_DIR", dir)
        .env("VIBELEARN_WORKER_PORT", port.to_string())
        .env("VIBELEARN_PROVIDER", "offline")
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn vl worker run");
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if ready(port) {
            remember_key(port, dir);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Worker { child }
}

fn ready(port: u16) -> bool {
    status(port, "/api/readiness", None) == Some(200)
}

/// The user key of each worker this process talks to, by port (SPEC §4: every route but
/// health, readiness and version needs it). Written when a worker is started or named, read
/// by every request; a Mutex because the load's client threads read it concurrently.
static KEYS: std::sync::Mutex<std::collections::BTreeMap<u16, String>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// Reads the key of the worker on `port` from its data dir, as the hooks and the CLI do.
pub(crate) fn remember_key(port: u16, data_dir: &std::path::Path) {
    if let Ok(key) = std::fs::read_to_string(data_dir.join(vibelearn::worker::USER_KEY_FILE)) {
        KEYS.lock().unwrap_or_else(|p| p.into_inner()).insert(port, key.trim().to_owned());
    }
}

/// The key remembered for `port`, if any.
pub(crate) fn key_of(port: u16) -> Option<String> {
    KEYS.lock().unwrap_or_else(|p| p.into_inner()).get(&port).cloned()
}

/// A client for the worker on `port`, with its key when one is remembered.
pub(crate) fn client(port: u16) -> vibelearn::worker_client::WorkerClient {
    let client = vibelearn::worker_client::WorkerClient::at(&format!("127.0.0.1:{port}"), Duration::from_secs(5));
    match key_of(port) {
        Some(key) => client.with_token(&key),
        None => client,
    }
}

/// The status of one request to the worker on `port`; `None` when it is not there (refused,
/// reset, killed mid-answer).
pub(crate) fn status(port: u16, path: &str, body: Option<&serde_json::Value>) -> Option<u16> {
    let client = client(port);
    match body {
        Some(body) => client.post(path, body),
        None => client.get(path),
    }
    .ok()
    .map(|r| r.status)
}

pub fn run(rounds: usize, clients: usize) -> serde_json::Value {
    let dir = super::tempfile_dir::Dir::new();
    let port = super::load::free_port();
    let acknowledged: Arc<Mutex<HashSet<String>>> = Arc::default();
    let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut worker = start_worker(&dir.0, port);
    let handles: Vec<_> = (0..clients)
        .map(|c| {
            let (acknowledged, sent, stop) = (acknowledged.clone(), sent.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    let id = format!("crash-{c}-{n}");
                    let session = format!("crash-session-{}", c % 4);
                    super::load::busy_lane_now_and_then(port, c, n, &session);
                    n += 1;
                    let body = json!({"contentSessionId": session, "tool_name": "Bash", "tool_use_id": id,
                                      "tool_input": {"command": "echo hi"}, "tool_response": {"stdout": "hi"}, "cwd": "/tmp/crash"});
                    sent.fetch_add(1, Ordering::Relaxed);
                    match status(port, "/api/sessions/observations", Some(&body)) {
                        Some(202) => {
                            acknowledged.lock().expect("acks").insert(id);
                        }
                        _ => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            })
        })
        .collect();
    for round in 0..rounds {
        std::thread::sleep(Duration::from_millis(300 + fastrand::u64(0..400)));
        worker.kill();
        eprintln!("round {}: worker killed with SIGKILL, restarting", round + 1);
        worker = start_worker(&dir.0, port);
    }
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::SeqCst);
    for handle in handles {
        let _ = handle.join();
    }
    // Let the last worker drain the queue.
    let db = dir.0.join("vibelearn.db");
    drain(&db);
    worker.kill();
    let acknowledged = acknowledged.lock().expect("acks").clone();
    let counts = verify(&db, &acknowledged);
    let conn = rusqlite::Connection::open(&db).expect("open the database");
    let rescued: i64 =
        conn.query_row("SELECT COUNT(*) FROM job_attempts WHERE outcome = 'lost'", [], |r| r.get(0)).unwrap_or(0);
    let mut result = counts.to_json();
    result["mode"] = json!("crash");
    result["rounds"] = json!(rounds);
    result["clients"] = json!(clients);
    result["sent"] = json!(sent.load(Ordering::Relaxed));
    result["attempts_rescued"] = json!(rescued);
    result
}

/// Waits (up to a minute) until no job is waiting or running.
pub(crate) fn drain(db: &std::path::Path) {
    drain_within(db, Duration::from_secs(60));
}

/// Waits (up to `limit`) until no job is waiting or running.
pub(crate) fn drain_within(db: &std::path::Path, limit: Duration) {
    let deadline = Instant::now() + limit;
    loop {
        let waiting: i64 = rusqlite::Connection::open(db)
            .and_then(|c| {
                c.query_row("SELECT COUNT(*) FROM jobs WHERE state IN ('available','running','retryable')", [], |r| {
                    r.get(0)
                })
            })
            .unwrap_or(1);
        if waiting == 0 || Instant::now() > deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What became of the acknowledged events.
pub(crate) struct Counts {
    acknowledged: usize,
    stored: usize,
    executed: usize,
    duplicated: usize,
    lost: Vec<String>,
    /// Ingest jobs that went through the runner rather than the inline fast path.
    ingested_by_the_runner: i64,
}

impl Counts {
    pub(crate) fn to_json(&self) -> serde_json::Value {
        json!({"acknowledged": self.acknowledged, "stored": self.stored, "executed": self.executed,
               "duplicated": self.duplicated, "lost": self.lost.len(), "lost_examples": self.lost.iter().take(5).collect::<Vec<_>>(),
               "ingested_by_the_runner": self.ingested_by_the_runner})
    }
}

/// Checks every acknowledged event (by its `tool_use_id`): a job exists (stored), it succeeded
/// and its observation row exists (executed), there is one of each (not duplicated). Jobs and
/// rows are read once into maps: a query per event scanned every payload, minutes at 10,000.
pub(crate) fn verify(db: &std::path::Path, acknowledged: &HashSet<String>) -> Counts {
    let conn = rusqlite::Connection::open(db).expect("open the database");
    let mut jobs: HashMap<String, (i64, i64)> = HashMap::new();
    let mut stmt = conn
        .prepare("SELECT json_extract(payload, '$.tool_use_id'), state = 'succeeded' FROM jobs WHERE kind = 'ingest'")
        .expect("prepare");
    for (id, succeeded) in
        stmt.query_map([], |r| Ok((r.get::<_, Option<String>>(0)?, r.get::<_, bool>(1)?))).expect("read jobs").flatten()
    {
        let entry = jobs.entry(id.unwrap_or_default()).or_default();
        entry.0 += 1;
        entry.1 += i64::from(succeeded);
    }
    let mut stmt = conn.prepare("SELECT event_key, COUNT(*) FROM observations GROUP BY event_key").expect("prepare");
    let rows: HashMap<String, i64> = stmt
        .query_map([], |r| Ok((r.get::<_, Option<String>>(0)?.unwrap_or_default(), r.get(1)?)))
        .expect("read observations")
        .flatten()
        .collect();
    // Inline ingest finishes in its enqueue transaction (finished_at = created_at).
    let ingested_by_the_runner = conn
        .query_row("SELECT COUNT(*) FROM jobs WHERE kind = 'ingest' AND finished_at > created_at", [], |r| r.get(0))
        .expect("count ingest jobs");
    let mut counts = Counts {
        acknowledged: acknowledged.len(),
        stored: 0,
        executed: 0,
        duplicated: 0,
        lost: Vec::new(),
        ingested_by_the_runner,
    };
    for id in acknowledged {
        let (jobs, succeeded) = jobs.get(id).copied().unwrap_or((0, 0));
        let rows = rows.get(id).copied().unwrap_or(0);
        counts.stored += usize::from(jobs > 0);
        counts.executed += usize::from(succeeded > 0 && rows > 0);
        counts.duplicated += usize::from(jobs > 1 || rows > 1);
        if jobs == 0 || rows == 0 {
            counts.lost.push(id.clone());
        }
    }
    counts
}
