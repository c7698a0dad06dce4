//! `vl-load faults <disk-full|read-only|write-lock> <data-dir>`: a storage fault while clients
//! POST observations. The data dir must be a small tmpfs the caller mounted (scripts/
//! fault-suite.sh does): `disk-full` fills it (the caller made it tiny), then the caller's
//! remount signal frees space; `read-only` remounts it read-only for a while, then writable;
//! `write-lock` has a second process hold the write lock past the busy timeout.
//! Afterwards every acknowledged event must be stored and executed exactly once, and the
//! worker must have answered `/api/health` throughout.

use std::collections::HashSet;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use super::crash::{drain, start_worker, status, verify};

fn remount(dir: &std::path::Path, options: &str) -> bool {
    Command::new("mount").args(["-o", &format!("remount,{options}")]).arg(dir).status().is_ok_and(|s| s.success())
}

pub fn run(scenario: &str, dir: &std::path::Path) -> serde_json::Value {
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("free port");
    let mut worker = start_worker(dir, port);
    let acknowledged: Arc<Mutex<HashSet<String>>> = Arc::default();
    let refused = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    // Bodies carry ~4 KiB of file content so a small file system fills in seconds.
    let content = "x".repeat(4096);
    let clients: Vec<_> = (0..8)
        .map(|c| {
            let (acknowledged, refused, stop, content) = (acknowledged.clone(), refused.clone(), stop.clone(), content.clone());
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    let id = format!("fault-{c}-{n}");
                    n += 1;
                    let body = json!({"contentSessionId": format!("fault-session-{c}"), "tool_name": "Write", "tool_use_id": id, "cwd": "/tmp/fault",
                                      "tool_input": {"file_path": format!("/tmp/fault/f{n}.ts"), "content": content}});
                    match status(port, "/api/sessions/observations", Some(&body)) {
                        Some(202) => {
                            acknowledged.lock().expect("acks").insert(id);
                        }
                        _ => {
                            refused.fetch_add(1, Ordering::Relaxed);
                            std::thread::sleep(Duration::from_millis(20));
                        }
                    }
                }
            })
        })
        .collect();
    // Health must answer (200 or 503) throughout the fault.
    let health_misses = Arc::new(AtomicUsize::new(0));
    let health_checks = Arc::new(AtomicUsize::new(0));
    let prober = {
        let (stop, misses, checks) = (stop.clone(), health_misses.clone(), health_checks.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                checks.fetch_add(1, Ordering::Relaxed);
                if !matches!(status(port, "/api/health", None), Some(200 | 503)) {
                    misses.fetch_add(1, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        })
    };
    let mut degraded_seen = false;
    match scenario {
        "write-lock" => {
            // A second process holds the database's write lock past the busy timeout.
            std::thread::sleep(Duration::from_secs(1));
            let locker = rusqlite::Connection::open(dir.join("vibelearn.db")).expect("open the database");
            let _ = locker.execute_batch("BEGIN IMMEDIATE; INSERT INTO queue_meta (key, value) VALUES ('fault', 'lock') ON CONFLICT (key) DO NOTHING;");
            eprintln!("write lock held by another process for 7 s");
            let until = Instant::now() + Duration::from_secs(7);
            while Instant::now() < until {
                degraded_seen |= status(port, "/api/health", None) == Some(503);
                std::thread::sleep(Duration::from_millis(300));
            }
            let _ = locker.execute_batch("ROLLBACK");
        }
        "read-only" => {
            std::thread::sleep(Duration::from_secs(1));
            if !remount(dir, "ro") {
                // Linux refuses to remount read-only while a process holds a file open for
                // writing (EBUSY) — the worker always does — so the fault cannot be produced.
                stop.store(true, Ordering::SeqCst);
                for client in clients {
                    let _ = client.join();
                }
                let _ = prober.join();
                let _ = worker.child.kill();
                let _ = worker.child.wait();
                return json!({"mode": "faults", "scenario": scenario,
                              "skipped": "the kernel refuses a read-only remount while the worker holds the database open (EBUSY)"});
            }
            let until = Instant::now() + Duration::from_secs(3);
            while Instant::now() < until {
                degraded_seen |= status(port, "/api/health", None) == Some(503);
                std::thread::sleep(Duration::from_millis(300));
            }
            eprintln!("file system writable again: {}", remount(dir, "rw"));
        }
        _ => {
            // disk-full: run until writes are refused, stay full a moment, then grow the fs.
            let until = Instant::now() + Duration::from_secs(20);
            while Instant::now() < until && refused.load(Ordering::Relaxed) < 50 {
                std::thread::sleep(Duration::from_millis(100));
            }
            std::thread::sleep(Duration::from_secs(2));
            degraded_seen |= status(port, "/api/health", None) == Some(503);
            eprintln!("file system full ({} refusals); growing it: {}", refused.load(Ordering::Relaxed), remount(dir, "size=256m"));
        }
    }
    std::thread::sleep(Duration::from_secs(2));
    stop.store(true, Ordering::SeqCst);
    for client in clients {
        let _ = client.join();
    }
    let _ = prober.join();
    // Drain: a fresh worker (as after a restart) must run everything acknowledged.
    let _ = worker.child.kill();
    let _ = worker.child.wait();
    let mut worker = start_worker(dir, port);
    let db = dir.join("vibelearn.db");
    drain(&db);
    let _ = worker.child.kill();
    let _ = worker.child.wait();
    let acknowledged = acknowledged.lock().expect("acks").clone();
    let mut result = verify(&db, &acknowledged).to_json();
    result["mode"] = json!("faults");
    result["scenario"] = json!(scenario);
    result["refused"] = json!(refused.load(Ordering::Relaxed));
    result["health_checks"] = json!(health_checks.load(Ordering::Relaxed));
    result["health_unanswered"] = json!(health_misses.load(Ordering::Relaxed));
    result["degraded_seen"] = json!(degraded_seen);
    result
}
