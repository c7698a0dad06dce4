//! `vl-load faults clock-jump <data-dir>`: the worker's wall clock jumps an hour back, returns,
//! then jumps an hour forward (past every lease and job timeout) and returns, while clients
//! POST observations.
//!
//! The worker alone runs under libfaketime (`LD_PRELOAD`, path in `$FAKETIME_LIB`, which
//! scripts/fault-suite.sh sets): `FAKETIME_TIMESTAMP_FILE` names an offset file this scenario
//! rewrites (atomically, by rename) at each phase, `FAKETIME_NO_CACHE=1` makes every clock read
//! see the current offset, and `FAKETIME_DONT_FAKE_MONOTONIC=1` leaves `Instant` monotonic, so
//! only `SystemTime` — `clock::SystemClock`, hence every timestamp and lease — jumps.
//!
//! Pass: every acknowledged event stored, executed once, none lost; health answered; and the
//! jumps reached the worker: jobs it enqueued carry `created_at` stamps about an hour behind
//! and an hour ahead of the real time (a fault that did not happen is not a pass). The same
//! worker drains the queue after the clock returns, so it must also have recovered.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;

use super::crash::{drain, start_worker_with, verify};
use super::load::{Load, free_port, merge};

/// The clock's phases: libfaketime offset in seconds, and how long it holds.
const PHASES: [(&str, u64); 5] = [("+0", 2), ("-3600", 3), ("+0", 2), ("+3600", 4), ("+0", 2)];

/// A stamp this far from the real time counts as produced by a jump (the jumps are an hour).
const JUMPED_MS: i64 = 30 * 60 * 1000;

fn real_now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).expect("a clock after 1970")
}

fn set_offset(file: &Path, offset: &str) {
    let temp = file.with_extension("tmp");
    std::fs::write(&temp, format!("{offset}\n")).expect("write the faketime offset");
    std::fs::rename(&temp, file).expect("replace the faketime offset");
}

pub fn run(dir: &Path) -> serde_json::Value {
    let skipped = |why: &str| json!({"mode": "faults", "scenario": "clock-jump", "skipped": why});
    let Some(lib) = std::env::var_os("FAKETIME_LIB").map(PathBuf::from).filter(|p| p.is_file()) else {
        return skipped("libfaketime not found ($FAKETIME_LIB unset or missing)");
    };
    let offset_file = dir.join("faketime.offset");
    set_offset(&offset_file, "+0");
    let (lib, offset_path) = (lib.to_string_lossy().into_owned(), offset_file.to_string_lossy().into_owned());
    let env = [
        ("LD_PRELOAD", lib.as_str()),
        ("FAKETIME_TIMESTAMP_FILE", offset_path.as_str()),
        ("FAKETIME_NO_CACHE", "1"),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
    ];
    let port = free_port();
    let started = real_now_ms();
    let mut worker = start_worker_with(dir, port, &env);
    let load = Load::start(port, 8, "clock", String::new());
    for (offset, secs) in PHASES {
        set_offset(&offset_file, offset);
        eprintln!("worker clock offset {offset} s for {secs} s ({} acknowledged so far)", load.acknowledged_count());
        std::thread::sleep(Duration::from_secs(secs));
    }
    let report = load.stop();
    let ended = real_now_ms();
    let db = dir.join("vibelearn.db");
    // The worker that lived through the jumps drains its own queue.
    drain(&db);
    let survived = worker.alive();
    worker.kill();
    let conn = rusqlite::Connection::open(&db).expect("open the database");
    let count = |sql: &str, bound: i64| -> i64 { conn.query_row(sql, [bound], |r| r.get(0)).expect("count jobs") };
    let behind = count("SELECT COUNT(*) FROM jobs WHERE created_at < ?1", started - JUMPED_MS);
    let ahead = count("SELECT COUNT(*) FROM jobs WHERE created_at > ?1", ended + JUMPED_MS);
    let interrupted: i64 = conn
        .query_row("SELECT COUNT(*) FROM job_attempts WHERE outcome IN ('lost', 'timed_out')", [], |r| r.get(0))
        .expect("count attempts");
    let mut result = verify(&db, &report.acknowledged).to_json();
    merge(&mut result, report.health);
    merge(
        &mut result,
        json!({"mode": "faults", "scenario": "clock-jump", "refused": report.refused,
        "details": {"jobs_stamped_an_hour_behind": behind, "jobs_stamped_an_hour_ahead": ahead, "attempts_lost_or_timed_out": interrupted},
        "checks": {"backward_jump_reached_the_worker": behind > 0, "forward_jump_reached_the_worker": ahead > 0, "worker_survived": survived}}),
    );
    result
}
