//! `vl-load faults <scenario> <data-dir>`: one fault while clients POST observations, then a
//! check that every acknowledged event was stored and executed exactly once and that the
//! worker answered `/api/health` throughout. This file owns the dispatch and the storage
//! faults; `clock_jump.rs` and `remote_faults.rs` own the other two.
//!
//! - `disk-full`: the data dir is a tiny tmpfs (the caller made it 4 MB); clients fill it,
//!   then it is grown with a remount.
//! - `write-lock`: a second process holds the write lock 7 s, past the busy timeout.
//! - `read-only`: `chattr +i` on the database and its `-wal` for 4 s, then `chattr -i`. A
//!   read-only remount is refused (EBUSY) while the worker holds the database open for
//!   writing, and `chmod` does not touch open descriptors; the immutable flag does, on ext4
//!   (writes on open descriptors fail with EPERM), so the caller mounts a small loop ext4 here —
//!   tmpfs ignores the flag for descriptors already open (measured on Linux 6.18). The `-shm`
//!   file is left writable on purpose: SQLite maps it, and ext4 answers the first write to a
//!   mapped page of an immutable file (after writeback cleaned it) with SIGBUS — measured: the
//!   worker died of SIGBUS within seconds of a `sync`. That kills any SQLite process
//!   and says nothing about the queue; a database that turned read-only is the db and the WAL
//!   refusing writes, which is what is produced here.
//!
//! Besides the counts, `checks` says the fault happened (writes refused, health `degraded`) and
//! that the same worker recovered (it acknowledged again after the fault, before the restart
//! that drains).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use super::crash::{drain, start_worker, verify};
use super::load::{Load, free_port, merge};

fn remount(dir: &Path, options: &str) -> bool {
    Command::new("mount").args(["-o", &format!("remount,{options}")]).arg(dir).status().is_ok_and(|s| s.success())
}

fn chattr(flag: &str, files: &[std::path::PathBuf]) -> bool {
    Command::new("chattr").arg(flag).args(files).status().is_ok_and(|s| s.success())
}

pub fn run(scenario: &str, dir: &Path) -> serde_json::Value {
    match scenario {
        "clock-jump" => return super::clock_jump::run(dir),
        "llm-upstream" => return super::remote_faults::run(dir),
        "disk-full" | "write-lock" | "read-only" => {}
        other => return json!({"mode": "faults", "scenario": other, "skipped": "unknown scenario"}),
    }
    let port = free_port();
    let mut worker = start_worker(dir, port);
    // Bodies carry ~4 KiB of file content so a small file system fills in seconds.
    let load = Load::start(port, 8, "fault", "x".repeat(4096));
    let refused_before = load.refused_count();
    let fault_took_effect = match scenario {
        "write-lock" => hold_write_lock(dir),
        "read-only" => make_immutable(dir),
        _ => fill_disk(dir, &load),
    };
    let refused_during = load.refused_count() - refused_before;
    // The same worker must take writes again once the fault is gone.
    let acked_after_fault = load.acknowledged_count();
    std::thread::sleep(Duration::from_secs(3));
    let recovered = load.acknowledged_count() > acked_after_fault;
    let report = load.stop();
    let survived = worker.alive();
    // Drain: a fresh worker (as after a restart) must run everything acknowledged.
    worker.kill();
    let worker = start_worker(dir, port);
    let db = dir.join("vibelearn.db");
    drain(&db);
    worker.kill();
    let mut result = verify(&db, &report.acknowledged).to_json();
    merge(&mut result, report.health);
    merge(
        &mut result,
        json!({"mode": "faults", "scenario": scenario, "refused": report.refused,
        "checks": {"fault_took_effect": fault_took_effect && refused_during > 0, "worker_survived": survived,
                   "same_worker_recovered": recovered}}),
    );
    result
}

/// A second process holds the database's write lock past the busy timeout. Returns whether it
/// got the lock.
fn hold_write_lock(dir: &Path) -> bool {
    std::thread::sleep(Duration::from_secs(1));
    let locker = rusqlite::Connection::open(dir.join("vibelearn.db")).expect("open the database");
    // The worker writes all the time under the load: wait for a gap rather than fail at once
    // (seen with a debug build, whose transactions are longer).
    let _ = locker.busy_timeout(Duration::from_secs(5));
    let locked = locker
        .execute_batch("BEGIN IMMEDIATE; INSERT INTO queue_meta (key, value) VALUES ('fault', 'lock') ON CONFLICT (key) DO NOTHING;")
        .is_ok();
    eprintln!("write lock held by another process for 7 s");
    std::thread::sleep(Duration::from_secs(7));
    let _ = locker.execute_batch("ROLLBACK");
    locked
}

/// The database and its WAL immutable for 4 s (see the module doc for why not `-shm`).
/// Returns whether the flag was set and really refused a write.
fn make_immutable(dir: &Path) -> bool {
    std::thread::sleep(Duration::from_secs(1));
    let files = [dir.join("vibelearn.db"), dir.join("vibelearn.db-wal")];
    if !chattr("+i", &files) {
        return false;
    }
    // The flag refuses opening for writing on every file system; it is the worker's own
    // refusals (counted by the caller) that show open descriptors are refused too.
    let refused_here = std::fs::OpenOptions::new().append(true).open(&files[1]).is_err();
    eprintln!("database and WAL immutable for 4 s");
    std::thread::sleep(Duration::from_secs(4));
    let restored = chattr("-i", &files);
    eprintln!("immutable flag removed: {restored}");
    refused_here && restored
}

/// Runs until writes are refused, stays full a moment, then grows the file system.
fn fill_disk(dir: &Path, load: &Load) -> bool {
    let until = Instant::now() + Duration::from_secs(20);
    while Instant::now() < until && load.refused_count() < 50 {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(2));
    let grown = remount(dir, "size=256m");
    eprintln!("file system full ({} refusals); growing it: {grown}", load.refused_count());
    grown && load.refused_count() >= 50
}
