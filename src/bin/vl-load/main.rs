//! `vl-load`: the load generator behind `scripts/bench.sh`. Each mode prints one JSON object
//! with its measurements, which the script gathers into the PERFORMANCE table.
//!
//! Modes:
//! - `enqueue <producers> <count> <FULL|NORMAL>`: durable in-process enqueue throughput
//! - `noop <count> <threads>`: end-to-end throughput of no-op jobs (enqueue all, run all)
//! - `latency <count>`: enqueue→start latency at light load (one job at a time)
//! - `http <port> <connections> <count>`: observation POSTs over keep-alive connections
//!
//! `http` and `pipeline` talk to a worker they did not start: its key is read from the data
//! dir of `VIBELEARN_DATA_DIR` (or `~/.vibelearn`), as the hooks do.
//! - `crash <rounds> <clients>`: SIGKILL the worker under load, restart it, and check that
//!   every acknowledged event is stored and ran exactly once in effect
//! - `faults <disk-full|write-lock|read-only|clock-jump|llm-upstream> <dir>`: one fault under
//!   load, then what was acknowledged, stored, executed, duplicated, lost (scripts/fault-suite.sh)
//! - `pipeline <port> <events>`: a session of that many events through HTTP, then the five
//!   steps with the offline provider; times the stack + static steps and the whole pipeline
//! - `hook <runs> <port|down>`: wall time of `vl hook claude-code observation`, start to exit
//! - `static <megabytes>`: static-analysis throughput over generated code
//! - `stats <jobs>`: `GET /api/jobs/stats`'s query (`Queue::stats`) over that many jobs,
//!   most of them finished within the hour; the best of seven
//! - `history <data-dir> <sessions> [per-day] [answers-per-day]`: a learner's history of that
//!   many analysed sessions, answered day by day (`scripts/scale-bench.sh`, issue 43)
//! - `reads <data-dir> [runs]`: the learning reads over such a history, in process
//! - `session-size <files>`: a session of that many written files through the real hooks into
//!   a fresh worker (offline provider), each analysis step's time and the worker's peak RSS
//!   (`scripts/scale-bench.sh sessions`, issue 43 §6)
//! - `grounding <session.json>…`: recorded sessions through the offline pipeline, and the
//!   share of their questions grounded in their files (issue 16)

mod clock_jump;
mod crash;
mod fake_remote;
mod faults;
mod grounding;
mod history;
mod keep_alive;
mod load;
mod remote_faults;
mod session_size;

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
        "http" => http(worker_port(number(1, 37778)), number(2, 16), number(3, 20_000)),
        "crash" => crash::run(number(1, 10), number(2, 16)),
        "faults" => faults::run(&arg(1, "disk-full"), std::path::Path::new(&arg(2, "."))),
        "pipeline" => pipeline(worker_port(number(1, 37778)), number(2, 200)),
        "hook" => hook_latency(number(1, 200), &arg(2, "down")),
        "static" => static_throughput(number(1, 5)),
        "stats" => stats_time(number(1, 100_000)),
        "grounding" => grounding::run(&args[1..]),
        "coverage" => grounding::coverage(&args[1..]),
        "history" => history::run(std::path::Path::new(&arg(1, ".")), number(2, 1), number(3, 5), number(4, 100)),
        "reads" => history::reads(std::path::Path::new(&arg(1, ".")), number(2, 7)),
        "session-size" => session_size::run(number(1, 200)),
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
    let (queue, thread) =
        Queue::start(conn, &path, sync, WriterConfig::default(), vibelearn::clock::system()).expect("start");
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
        registry.register(
            "noop",
            KindSpec::new(Duration::from_secs(10), 1).batched(32),
            move |_: &ClaimedJob, _: &_| {
                done.fetch_add(1, Ordering::Relaxed);
                Outcome::Succeeded { result: None, effects: None }
            },
        );
    }
    // Jobs in many lanes (sessions), enqueued in batches before the runner starts.
    for first in (0..count).step_by(1000) {
        let chunk = (first..count.min(first + 1000)).map(|_| NewJob::new("noop", json!({}), 1)).collect();
        queue.enqueue_all(chunk).expect("enqueue");
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
    registry.register("probe", KindSpec::new(Duration::from_secs(10), 1).batched(32), move |_: &ClaimedJob, _: &_| {
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
                let mut connection = keep_alive::KeepAlive::connect(port, Duration::from_secs(30));
                let mut mine = Vec::with_capacity(per);
                for n in 0..per {
                    let body = json!({"contentSessionId": format!("bench-{c}"), "tool_name": "Read", "tool_use_id": format!("b-{c}-{n}-{}", fastrand::u64(..)),
                                      "tool_input": {"file_path": "/tmp/x.ts"}, "tool_response": {"ok": true}, "cwd": "/tmp/bench"})
                    .to_string();
                    let t = Instant::now();
                    let ok = match connection.as_mut() {
                        Ok(c) => c.post_json("/api/sessions/observations", &body).is_ok_and(|status| status == 202),
                        Err(_) => false,
                    };
                    if !ok {
                        errors.fetch_add(1, Ordering::Relaxed);
                        // A broken connection is replaced, as a client's pool would.
                        connection = keep_alive::KeepAlive::connect(port, Duration::from_secs(30));
                    }
                    let ms = t.elapsed().as_secs_f64() * 1000.0;
                    if ms > 500.0 {
                        eprintln!("slow request: connection {c} request {n} took {ms:.0} ms");
                    }
                    mine.push(ms);
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

/// The `vl` binary next to this one.
fn vl_binary() -> std::path::PathBuf {
    std::env::current_exe().ok().and_then(|p| p.parent().map(|d| d.join("vl"))).unwrap_or_else(|| "vl".into())
}

fn hook_latency(runs: usize, port: &str) -> serde_json::Value {
    use std::io::Write;
    let dir = tempfile_dir::Dir::new();
    let worker_up = port != "down";
    // With the worker down, point at a port nobody listens on and keep the hooks from
    // spawning a worker (a recent spawn stamp), so every run measures the direct enqueue.
    let port = if worker_up { port.to_owned() } else { "9".to_owned() };
    if !worker_up {
        let _ = std::fs::write(dir.0.join("worker-spawn.stamp"), "bench\n");
    }
    let mut latencies = Vec::with_capacity(runs);
    for n in 0..runs {
        let input = json!({"session_id": "bench-hook", "cwd": "/tmp/bench", "tool_name": "Read", "tool_use_id": format!("h-{n}-{}", fastrand::u64(..)),
                           "tool_input": {"file_path": "/tmp/bench/a.ts"}, "tool_response": {"ok": true}});
        let started = Instant::now();
        let mut child = std::process::Command::new(vl_binary())
            .args(["hook", "claude-code", "observation"])
            .env(
                "VIBELEARN_DATA_DIR",
                if worker_up {
                    std::env::var("VIBELEARN_DATA_DIR").unwrap_or_default()
                } else {
                    dir.0.to_string_lossy().into_owned()
                },
            )
            .env("VIBELEARN_WORKER_PORT", &port)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn vl hook");
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(input.to_string().as_bytes());
        }
        let _ = child.wait();
        latencies.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    latencies.sort_by(f64::total_cmp);
    json!({"mode": "hook", "worker": if worker_up { "up" } else { "down" }, "runs": runs, "p50_ms": percentile(&latencies, 0.5), "p99_ms": percentile(&latencies, 0.99)})
}

fn static_throughput(megabytes: usize) -> serde_json::Value {
    use vibelearn::analysis::model::SourceFile;
    let unit = vibelearn::sample::DEMO_SESSION;
    let session: serde_json::Value = serde_json::from_str(unit).expect("sample");
    let sources: Vec<String> = session["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["write_file"]["content"].as_str().map(str::to_owned))
        .collect();
    let mut files = Vec::new();
    let mut bytes = 0;
    let mut n = 0;
    while bytes < megabytes * 1024 * 1024 {
        let content = &sources[n % sources.len()];
        bytes += content.len();
        files.push(SourceFile::new(format!("src/gen/file{n}.tsx"), content.clone()));
        n += 1;
    }
    let lines: usize = files.iter().map(|f| f.content.lines().count()).sum();
    let started = Instant::now();
    let patterns = vibelearn::analysis::analyze_files(&files);
    let secs = started.elapsed().as_secs_f64();
    json!({"mode": "static", "files": files.len(), "lines": lines, "patterns": patterns.len(), "lines_per_sec": lines as f64 / secs, "mb_per_sec": bytes as f64 / 1048576.0 / secs})
}

/// The port of a worker this process did not start, with its key remembered from the data dir.
fn worker_port(port: usize) -> u16 {
    let port = port as u16;
    crash::remember_key(port, &vibelearn::config::Config::load().data_dir);
    port
}

/// A timing, so it lives here and not in a debug-build test, where SQLite and the code around
/// it run unoptimised and a 2-core machine shared with compilers makes milliseconds noise.
fn stats_time(jobs: usize) -> serde_json::Value {
    let (_dir, queue, thread) = temp_queue(Synchronous::Normal);
    for chunk in 0..jobs.div_ceil(10_000) {
        let batch: Vec<NewJob> = (0..10_000.min(jobs - chunk * 10_000))
            .map(|n| {
                let kind = ["ingest", "analyze_stack", "sync"][n % 3];
                NewJob::new(kind, json!({ "n": n, "chunk": chunk, "pad": "x".repeat(200) }), 3)
                    .lane(format!("session:{}", n % 500))
            })
            .collect();
        queue.enqueue_all(batch).expect("enqueue");
    }
    queue
        .writer()
        .call(false, vibelearn::queue::Durability::Durable, |conn, now| {
            conn.execute(
                "UPDATE jobs SET state = CASE WHEN id % 50 = 0 THEN 'dead' ELSE 'succeeded' END, finished_at = ?1 \
                 WHERE id % 10 != 0",
                [now - 1_000],
            )?;
            Ok(())
        })
        .expect("finish most");
    let best = (0..7)
        .map(|_| {
            let started = Instant::now();
            let stats = queue.stats().expect("stats");
            assert_eq!(stats.by_state.values().sum::<i64>(), jobs as i64);
            started.elapsed()
        })
        .min()
        .unwrap_or_default();
    drop(queue);
    thread.stop();
    json!({"mode": "stats", "jobs": jobs, "best_ms": best.as_secs_f64() * 1000.0})
}

fn pipeline(port: u16, events: usize) -> serde_json::Value {
    let session = format!("bench-pipeline-{}", fastrand::u32(..));
    let sample = vibelearn::sample::SampleSession::parse(vibelearn::sample::DEMO_SESSION).expect("sample");
    let files: Vec<(String, String)> = sample
        .steps
        .iter()
        .filter_map(|s| s.write_file.as_ref().map(|f| (f.path.clone(), f.content.clone())))
        .collect();
    let client = crash::client(port);
    let post = |path: &str, body: serde_json::Value| client.post(path, &body);
    let _ =
        post("/api/sessions/init", json!({"contentSessionId": session, "cwd": "/tmp/bench-shop", "prompt": "bench"}));
    for n in 0..events {
        let body = match n % 4 {
            0 | 1 => {
                let (path, content) = &files[n % files.len()];
                json!({"contentSessionId": session, "tool_name": "Write", "tool_use_id": format!("{session}-{n}"), "cwd": "/tmp/bench-shop",
                       "tool_input": {"file_path": format!("/tmp/bench-shop/{}/{path}", n % 20), "content": content}})
            }
            2 => {
                json!({"contentSessionId": session, "tool_name": "Bash", "tool_use_id": format!("{session}-{n}"), "cwd": "/tmp/bench-shop",
                        "tool_input": {"command": "npm install zod"}, "tool_response": {"stdout": "ok"}})
            }
            _ => {
                json!({"contentSessionId": session, "tool_name": "Read", "tool_use_id": format!("{session}-{n}"), "cwd": "/tmp/bench-shop",
                        "tool_input": {"file_path": "/tmp/bench-shop/package.json"}})
            }
        };
        let _ = post("/api/sessions/observations", body);
    }
    let started = Instant::now();
    for step in ["analyze/stack", "analyze/static", "analyze/concepts", "analyze/quiz"] {
        let _ = post(&format!("/api/vibelearn/{step}"), json!({"contentSessionId": session}));
    }
    let _ = post("/api/vibelearn/sync", json!({"contentSessionId": session}));
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut steps = serde_json::Value::Null;
    while Instant::now() < deadline {
        if let Ok(response) = client.get(&format!("/api/vibelearn/sessions/{session}/pipeline")) {
            steps = response.body;
            if steps["steps"].as_array().is_some_and(|s| s.iter().all(|s| s["state"] == "succeeded")) {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let total = started.elapsed().as_secs_f64() * 1000.0;
    let duration_of = |kind: &str| job_run_ms(&client, &steps, kind);
    json!({"mode": "pipeline", "events": events, "stack_plus_static_ms": duration_of("analyze_stack") + duration_of("analyze_static"),
           "concepts_ms": duration_of("analyze_concepts"), "quiz_ms": duration_of("analyze_quiz"), "pipeline_ms": total,
           "all_succeeded": steps["steps"].as_array().is_some_and(|s| s.iter().all(|s| s["state"] == "succeeded"))})
}

/// How long the last attempt of the pipeline step of `kind` ran, in ms, read from the job the
/// pipeline view (`steps`) names; 0 when the step or its attempt is missing.
fn job_run_ms(client: &vibelearn::worker_client::WorkerClient, steps: &serde_json::Value, kind: &str) -> f64 {
    let id = steps["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["kind"] == kind)
        .and_then(|s| s["job_id"].as_i64())
        .unwrap_or(0);
    let job = client.get(&format!("/api/jobs/{id}")).map(|r| r.body).unwrap_or_default();
    let attempt = job["attempts"].as_array().and_then(|a| a.last().cloned()).unwrap_or_default();
    (attempt["finished_at"].as_i64().unwrap_or(0) - attempt["started_at"].as_i64().unwrap_or(0)) as f64
}
