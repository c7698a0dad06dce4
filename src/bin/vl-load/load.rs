//! The load every fault scenario runs under, and the health prober that watches the worker
//! meanwhile. `Load` is a few clients POSTing observations, each with a unique `tool_use_id`
//! remembered once acknowledged (202); `HealthProbe` asks `/api/health` every 200 ms and counts
//! the probes that got no answer (200 and 503 `degraded` both count as answered).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::json;

use super::crash::status;

/// Between two health probes.
const PROBE_EVERY: Duration = Duration::from_millis(200);

/// Asks `/api/health` until stopped. Counters are written by the probe thread only and read
/// after it joined, so relaxed atomics suffice.
pub(crate) struct HealthProbe {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<serde_json::Value>,
}

impl HealthProbe {
    pub(crate) fn start(port: u16) -> HealthProbe {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let (mut checks, mut unanswered, mut degraded, mut slowest) = (0usize, 0usize, false, Duration::ZERO);
            while !flag.load(Ordering::SeqCst) {
                let started = Instant::now();
                let answer = status(port, "/api/health", None);
                slowest = slowest.max(started.elapsed());
                checks += 1;
                unanswered += usize::from(!matches!(answer, Some(200 | 503)));
                degraded |= answer == Some(503);
                std::thread::sleep(PROBE_EVERY);
            }
            json!({"health_checks": checks, "health_unanswered": unanswered, "degraded_seen": degraded,
                   "health_slowest_ms": slowest.as_millis() as u64})
        });
        HealthProbe { stop, thread }
    }

    /// Stops probing; `health_checks`, `health_unanswered`, `degraded_seen`, `health_slowest_ms`.
    pub(crate) fn stop(self) -> serde_json::Value {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().expect("the health probe thread panicked")
    }
}

/// Clients POSTing observations to the worker on `port`, plus a [`HealthProbe`].
pub(crate) struct Load {
    stop: Arc<AtomicBool>,
    clients: Vec<JoinHandle<()>>,
    probe: HealthProbe,
    /// Inserted by the client threads, read by the scenario; a Mutex because a set is shared.
    acknowledged: Arc<Mutex<HashSet<String>>>,
    refused: Arc<AtomicUsize>,
}

/// What the load saw: the acknowledged `tool_use_id`s and the health probe's counts.
pub(crate) struct LoadReport {
    pub(crate) acknowledged: HashSet<String>,
    pub(crate) refused: usize,
    pub(crate) health: serde_json::Value,
}

impl Load {
    /// `clients` threads; each body carries `content` as the written file (a few KiB fills a
    /// small file system in seconds; empty keeps requests light).
    pub(crate) fn start(port: u16, clients: usize, prefix: &str, content: String) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let acknowledged: Arc<Mutex<HashSet<String>>> = Arc::default();
        let refused = Arc::new(AtomicUsize::new(0));
        let clients = (0..clients)
            .map(|c| {
                let (stop, acknowledged, refused, content) = (stop.clone(), acknowledged.clone(), refused.clone(), content.clone());
                let prefix = prefix.to_owned();
                std::thread::spawn(move || {
                    let mut n = 0;
                    while !stop.load(Ordering::SeqCst) {
                        let id = format!("{prefix}-{c}-{n}");
                        let session = format!("{prefix}-session-{c}");
                        busy_lane_now_and_then(port, c, n, &session);
                        n += 1;
                        let body = json!({"contentSessionId": session, "tool_name": "Write", "tool_use_id": id,
                                          "cwd": "/tmp/fault", "tool_input": {"file_path": format!("/tmp/fault/f{n}.ts"), "content": content}});
                        if status(port, "/api/sessions/observations", Some(&body)) == Some(202) {
                            acknowledged.lock().expect("acks").insert(id);
                        } else {
                            refused.fetch_add(1, Ordering::Relaxed);
                            std::thread::sleep(Duration::from_millis(20));
                        }
                    }
                })
            })
            .collect();
        Load { stop, clients, probe: HealthProbe::start(port), acknowledged, refused }
    }

    pub(crate) fn acknowledged_count(&self) -> usize {
        self.acknowledged.lock().expect("acks").len()
    }

    pub(crate) fn refused_count(&self) -> usize {
        self.refused.load(Ordering::Relaxed)
    }

    pub(crate) fn stop(self) -> LoadReport {
        self.stop.store(true, Ordering::SeqCst);
        for client in self.clients {
            let _ = client.join();
        }
        let health = self.probe.stop();
        let acknowledged = std::mem::take(&mut *self.acknowledged.lock().expect("acks"));
        LoadReport { acknowledged, refused: self.refused.load(Ordering::Relaxed), health }
    }
}

/// For one client in four, an analysis request every 50 events: it keeps the session's lane
/// busy for a moment, so the events behind it go through the runner (claims, leases, rescue)
/// while the other clients' events are stored inline.
pub(crate) fn busy_lane_now_and_then(port: u16, client: usize, n: usize, session: &str) {
    if client.is_multiple_of(4) && n.is_multiple_of(50) {
        let _ = status(port, "/api/vibelearn/analyze/stack", Some(&json!({"contentSessionId": session})));
    }
}

/// Merges `extra`'s fields into `result` (both JSON objects).
pub(crate) fn merge(result: &mut serde_json::Value, extra: serde_json::Value) {
    if let (Some(result), serde_json::Value::Object(extra)) = (result.as_object_mut(), extra) {
        result.extend(extra);
    }
}

/// A port nobody listens on yet.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("free port")
}
