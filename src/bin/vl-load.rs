//! `vl-load`: the load generator behind `scripts/bench.sh`. Each mode prints one JSON object
//! with its measurements, which the script gathers into the PERFORMANCE table.
//!
//! Modes:
//! - `enqueue <producers> <count> <FULL|NORMAL>`: durable in-process enqueue throughput
//! - `noop <count> <threads>`: end-to-end throughput of no-op jobs (enqueue all, run all)
//! - `latency <count>`: enqueue→start latency at light load (one job at a time)
//! - `http <port> <connections> <count>`: observation POSTs over keep-alive connections
//! - `static <megabytes>`: static-analysis throughput over generated code

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use vibelearn::db::{self, Synchronous};
use vibelearn::queue::{ClaimedJob, KindSpec, NewJob, Outcome, Queue, Registry, RunnerConfig, WriterConfig};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.to_owned());
    let number = |i: usize, default: usize| arg(i, &default.to_string()).parse::<usize>().unwrap_or(default);
    let result = match arg(0, "").as_str() {
        "enqueue" => enqueue(number(1, 16), number(2, 20_000), &arg(3, "FULL")),
        "noop" => noop(number(1, 20_000), number(2, 4)),
        "latency" => latency(number(1, 500)),
        "http" => http(number(1, 37778) as u16, number(2, 16), number(3, 20_000)),
        other => {
            eprintln!("usage: vl-load enqueue|noop|latency|http … (got {other:?})");
            std::process::exit(2);
        }
    };
    println!("{result}");
}

fn temp_queue(sync: Synchronous) -> (tempfile_dir::Dir, Queue, vibelearn::queue::QueueThread) {
    let dir = tempfile_dir::Dir::new();
    let path = dir.0.join("bench.db");
    let conn = db::open_and_migrate(&path, sync).expect("open the database");
    let (queue, thread) = Queue::start(conn, &path, sync, WriterConfig::default(), vibelearn::clock::system()).expect("start");
    (dir, queue, thread)
}

/// A temp dir without a dev-dependency: removed on drop.
mod tempfile_dir {
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new() -> Dir {
            let path = std::env::temp_dir().join(format!("vl-load-{}-{}", std::process::id(), fastrand::u64(..)));
            std::fs::create_dir_all(&path).expect("create a temp dir");
            Dir(path)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn enqueue(producers: usize, count: usize, sync: &str) -> serde_json::Value {
    let synchronous = Synchronous::parse(sync).unwrap_or(Synchronous::Full);
    let (_dir, queue, thread) = temp_queue(synchronous);
    let per = count / producers.max(1);
    let started = Instant::now();
    let handles: Vec<_> = (0..producers)
        .map(|p| {
            let queue = queue.clone();
            std::thread::spawn(move || {
                let mut latencies = Vec::with_capacity(per);
                for n in 0..per {
                    let t = Instant::now();
                    queue.enqueue(NewJob::new("noop", json!({"p": p, "n": n}), 1)).expect("enqueue");
                    latencies.push(t.elapsed().as_secs_f64() * 1000.0);
                }
                latencies
            })
        })
        .collect();
    let mut latencies: Vec<f64> = handles.into_iter().flat_map(|h| h.join().expect("producer")).collect();
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort_by(f64::total_cmp);
    thread.stop();
    json!({"mode": "enqueue", "producers": producers, "synchronous": synchronous.as_str(), "jobs": latencies.len(),
           "per_sec": latencies.len() as f64 / elapsed, "p50_ms": percentile(&latencies, 0.5), "p99_ms": percentile(&latencies, 0.99)})
}

fn noop(count: usize, threads: usize) -> serde_json::Value {
    let (_dir, queue, thread) = temp_queue(Synchronous::Full);
    let done = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::default();
    {
        let done = done.clone();
        registry.register("noop", KindSpec { timeout: Duration::from_secs(10), max_attempts: 1 }, move |_: &ClaimedJob, _: &_| {
            done.fetch_add(1, Ordering::Relaxed);
            Outcome::Succeeded { result: None, effects: None }
        });
    }
    // Jobs in many lanes (sessions), enqueued in batches before the runner starts.
    let jobs: Vec<NewJob> = (0..count).map(|n| NewJob::new("noop", json!({}), 1).lane(format!("s{}", n % 64))).collect();
    for chunk in jobs.chunks(1000) {
        queue.enqueue_all(chunk.to_vec()).expect("enqueue");
    }
    let started = Instant::now();
    let mut runner = queue.start_runner(RunnerConfig { threads, ..RunnerConfig::default() }, registry).expect("runner");
    while done.load(Ordering::Relaxed) < count {
        std::thread::sleep(Duration::from_millis(1));
    }
    let ran = started.elapsed().as_secs_f64();
    // Completions are committed asynchronously; wait until the last is recorded.
    while queue.stats().map(|s| s.by_state["succeeded"]).unwrap_or(0) < count as i64 {
        std::thread::sleep(Duration::from_millis(2));
    }
    let committed = started.elapsed().as_secs_f64();
    runner.shutdown();
    thread.stop();
    json!({"mode": "noop", "jobs": count, "threads": threads, "run_per_sec": count as f64 / ran, "committed_per_sec": count as f64 / committed})
}

fn latency(count: usize) -> serde_json::Value {
    let (_dir, queue, thread) = temp_queue(Synchronous::Full);
    let (tx, rx) = crossbeam_channel::unbounded::<Instant>();
    let mut registry = Registry::default();
    registry.register("probe", KindSpec { timeout: Duration::from_secs(10), max_attempts: 1 }, move |_: &ClaimedJob, _: &_| {
        let _ = tx.send(Instant::now());
        Outcome::Succeeded { result: None, effects: None }
    });
    let mut runner = queue.start_runner(RunnerConfig::default(), registry).expect("runner");
    let mut latencies = Vec::with_capacity(count);
    for _ in 0..count {
        queue.enqueue(NewJob::new("probe", json!({}), 1)).expect("enqueue");
        // Measured from the moment the enqueue is acknowledged (committed).
        let acknowledged = Instant::now();
        let started = rx.recv_timeout(Duration::from_secs(5)).expect("job started");
        latencies.push(started.saturating_duration_since(acknowledged).as_secs_f64() * 1000.0);
        std::thread::sleep(Duration::from_millis(2));
    }
    latencies.sort_by(f64::total_cmp);
    runner.shutdown();
    thread.stop();
    json!({"mode": "latency", "jobs": count, "p50_ms": percentile(&latencies, 0.5), "p99_ms": percentile(&latencies, 0.99), "max_ms": percentile(&latencies, 1.0)})
}

fn http(port: u16, connections: usize, count: usize) -> serde_json::Value {
    let per = count / connections.max(1);
    let errors = Arc::new(AtomicUsize::new(0));
    let latencies = Arc::new(Mutex::new(Vec::with_capacity(count)));
    let started = Instant::now();
    let handles: Vec<_> = (0..connections)
        .map(|c| {
            let (errors, latencies) = (errors.clone(), latencies.clone());
            std::thread::spawn(move || {
                // One agent per connection: ureq keeps its connection alive between calls.
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .timeout_global(Some(Duration::from_secs(30)))
                    .http_status_as_error(false)
                    .max_idle_connections_per_host(1)
                    .build()
                    .into();
                let url = format!("http://127.0.0.1:{port}/api/sessions/observations");
                let mut mine = Vec::with_capacity(per);
                for n in 0..per {
                    let body = json!({"contentSessionId": format!("bench-{c}"), "tool_name": "Read", "tool_use_id": format!("b-{c}-{n}-{}", fastrand::u64(..)),
                                      "tool_input": {"file_path": "/tmp/x.ts"}, "tool_response": {"ok": true}, "cwd": "/tmp/bench"});
                    let t = Instant::now();
                    let ok = agent
                        .post(&url)
                        .header("Content-Type", "application/json")
                        .send(body.to_string())
                        .map(|mut r| {
                            let _ = r.body_mut().read_to_string();
                            r.status().as_u16() == 202
                        })
                        .unwrap_or(false);
                    if !ok {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                    mine.push(t.elapsed().as_secs_f64() * 1000.0);
                }
                latencies.lock().expect("latencies").extend(mine);
            })
        })
        .collect();
    for handle in handles {
        let _ = handle.join();
    }
    let elapsed = started.elapsed().as_secs_f64();
    let mut latencies = std::mem::take(&mut *latencies.lock().expect("latencies"));
    latencies.sort_by(f64::total_cmp);
    json!({"mode": "http", "connections": connections, "requests": latencies.len(), "errors": errors.load(Ordering::Relaxed),
           "per_sec": latencies.len() as f64 / elapsed, "p50_ms": percentile(&latencies, 0.5), "p99_ms": percentile(&latencies, 0.99),
           "max_ms": percentile(&latencies, 1.0)})
}
