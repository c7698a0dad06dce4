//! The job queue against a real SQLite file: ordering, retries, timeouts, rescue, replay,
//! dedup, concurrency, migrations and pruning.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use vibelearn::clock::ManualClock;
use vibelearn::db::{self, DbError, Synchronous};
use vibelearn::queue::store::{self, ListFilter, Retention};
use vibelearn::queue::{
    ClaimedJob, Durability, JobState, KindSpec, NewJob, Outcome, Registry, RunnerConfig, UniqueScope,
};

use crate::util::{TempDir, start_queue, start_queue_with_clock, wait_for};

const WAIT: Duration = Duration::from_secs(10);

fn spec(timeout_ms: u64, max_attempts: u32) -> KindSpec {
    KindSpec::new(Duration::from_millis(timeout_ms), max_attempts)
}

fn runner_config(threads: usize) -> RunnerConfig {
    RunnerConfig { threads, ..RunnerConfig::default() }
}

fn state_of(queue: &vibelearn::queue::Queue, id: vibelearn::queue::JobId) -> JobState {
    queue.get(id).expect("read job").expect("job exists").state
}

/// Stand-in for a database that refuses some writes (full disk, read-only): a trigger,
/// `when` saying which (`BEFORE INSERT ON jobs`, …), aborts them with SQLite's disk-full text.
fn refuse_writes(queue: &vibelearn::queue::Queue, when: &str) {
    let sql = format!("CREATE TRIGGER refuse {when} BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;");
    queue.writer().call(false, Durability::Durable, move |conn, _| Ok(conn.execute_batch(&sql)?)).unwrap();
}

/// Undoes [`refuse_writes`].
fn allow_writes(queue: &vibelearn::queue::Queue) {
    queue.writer().call(false, Durability::Durable, |conn, _| Ok(conn.execute_batch("DROP TRIGGER refuse;")?)).unwrap();
}

#[test]
fn jobs_of_a_lane_run_in_order_while_lanes_run_in_parallel() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let log: Arc<Mutex<Vec<(String, i64)>>> = Arc::default();
    let running = Arc::new(AtomicUsize::new(0));
    let max_parallel = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::default();
    {
        let (log, running, max_parallel) = (log.clone(), running.clone(), max_parallel.clone());
        registry.register("step", spec(5000, 1), move |job: &ClaimedJob, _: &_| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            max_parallel.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(20));
            log.lock().unwrap().push((job.lane.clone().unwrap(), job.payload["n"].as_i64().unwrap()));
            running.fetch_sub(1, Ordering::SeqCst);
            Outcome::done(json!({}))
        });
    }
    let mut jobs = Vec::new();
    for n in 0..5 {
        for lane in ["a", "b", "c"] {
            jobs.push(NewJob::new("step", json!({ "n": n }), 1).lane(lane));
        }
    }
    queue.enqueue_all(jobs).unwrap();
    let _runner = queue.start_runner(runner_config(4), registry).unwrap();
    wait_for("15 jobs", WAIT, || log.lock().unwrap().len() == 15);
    let log = log.lock().unwrap();
    for lane in ["a", "b", "c"] {
        let order: Vec<i64> = log.iter().filter(|(l, _)| l == lane).map(|(_, n)| *n).collect();
        assert_eq!(order, vec![0, 1, 2, 3, 4], "lane {lane} ran out of order");
    }
    assert!(max_parallel.load(Ordering::SeqCst) >= 2, "lanes did not run in parallel");
    assert!(max_parallel.load(Ordering::SeqCst) <= 3, "a lane ran two jobs at once");
}

#[test]
fn a_failing_job_is_retried_then_succeeds_and_every_attempt_is_recorded() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let calls = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::default();
    {
        let calls = calls.clone();
        registry.register("flaky", spec(5000, 5), move |_: &ClaimedJob, _: &_| {
            if calls.fetch_add(1, Ordering::SeqCst) < 2 {
                Outcome::Retry { error: "upstream said 503".into(), after: Some(Duration::from_millis(10)) }
            } else {
                Outcome::done(json!({"ok": true}))
            }
        });
    }
    let id = queue.enqueue(NewJob::new("flaky", json!({}), 5)).unwrap().id;
    let _runner = queue.start_runner(runner_config(2), registry).unwrap();
    wait_for("success", WAIT, || state_of(&queue, id) == JobState::Succeeded);
    let job = queue.get(id).unwrap().unwrap();
    let attempts = job.attempts.unwrap();
    assert_eq!(attempts.len(), 3);
    assert_eq!(attempts[0].error.as_deref(), Some("upstream said 503"));
    assert_eq!(attempts[2].outcome.map(|o| o.as_str()), Some("succeeded"));
    assert_eq!(job.result, Some(json!({"ok": true})));
    assert_eq!(job.last_error, None);
}

#[test]
fn a_job_out_of_attempts_is_dead_with_its_reason_and_does_not_block_its_lane() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let mut registry = Registry::default();
    registry.register("broken", spec(5000, 2), |_: &ClaimedJob, _: &_| Outcome::Retry {
        error: "connection refused".into(),
        after: Some(Duration::from_millis(5)),
    });
    registry.register("fatal", spec(5000, 5), |_: &ClaimedJob, _: &_| Outcome::dead("401 from the provider"));
    registry.register("ok", spec(5000, 1), |_: &ClaimedJob, _: &_| Outcome::done(json!({})));
    let ids = queue
        .enqueue_all(vec![
            NewJob::new("broken", json!({}), 2).lane("s1"),
            NewJob::new("fatal", json!({}), 5).lane("s1"),
            NewJob::new("ok", json!({}), 1).lane("s1"),
        ])
        .unwrap();
    let _runner = queue.start_runner(runner_config(2), registry).unwrap();
    wait_for("the lane to drain", WAIT, || state_of(&queue, ids[2].id) == JobState::Succeeded);
    let broken = queue.get(ids[0].id).unwrap().unwrap();
    assert_eq!(broken.state, JobState::Dead);
    assert_eq!(broken.attempt, 2);
    assert_eq!(broken.last_error.as_deref(), Some("connection refused"));
    let fatal = queue.get(ids[1].id).unwrap().unwrap();
    assert_eq!(fatal.state, JobState::Dead);
    assert_eq!(fatal.attempt, 1, "a permanent error must not be retried");
    assert_eq!(fatal.last_error.as_deref(), Some("401 from the provider"));
}

#[test]
fn a_stuck_handler_times_out_its_late_result_is_dropped_and_others_keep_flowing() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let calls = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::default();
    {
        let calls = calls.clone();
        registry.register("slow", spec(150, 3), move |_: &ClaimedJob, _: &_| {
            if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                std::thread::sleep(Duration::from_millis(1500)); // stuck far past the timeout
                Outcome::done(json!({"late": true}))
            } else {
                Outcome::done(json!({"second": true}))
            }
        });
    }
    let quick_done = Arc::new(AtomicUsize::new(0));
    {
        let quick_done = quick_done.clone();
        registry.register("quick", spec(5000, 1), move |_: &ClaimedJob, _: &_| {
            quick_done.fetch_add(1, Ordering::SeqCst);
            Outcome::done(json!({}))
        });
    }
    let slow = queue.enqueue(NewJob::new("slow", json!({}), 3)).unwrap().id;
    // One thread only: if the stuck handler kept its slot, nothing else could run.
    let _runner = queue.start_runner(runner_config(1), registry).unwrap();
    wait_for("the slow job to start", WAIT, || calls.load(Ordering::SeqCst) == 1);
    let quick: Vec<_> = (0..20).map(|_| queue.enqueue(NewJob::new("quick", json!({}), 1)).unwrap().id).collect();
    wait_for("quick jobs to run beside the stuck one", Duration::from_millis(1200), || {
        quick_done.load(Ordering::SeqCst) == 20
    });
    wait_for("the slow job's retry", WAIT, || state_of(&queue, slow) == JobState::Succeeded);
    // Let the stuck thread return; its result must not overwrite the retry's.
    std::thread::sleep(Duration::from_millis(1600));
    let job = queue.get(slow).unwrap().unwrap();
    assert_eq!(job.result, Some(json!({"second": true})), "the late result leaked through");
    let attempts = job.attempts.unwrap();
    assert_eq!(attempts[0].outcome.map(|o| o.as_str()), Some("timed_out"));
    assert!(quick.iter().all(|id| state_of(&queue, *id) == JobState::Succeeded));
}

#[test]
fn jobs_left_running_by_a_dead_process_are_rescued_at_startup() {
    let dir = TempDir::new();
    {
        let (queue, thread) = start_queue(&dir);
        queue.enqueue(NewJob::new("work", json!({"n": 1}), 3)).unwrap();
        // Claim it as a process would, then "die" without completing.
        let claimed = queue
            .writer()
            .call(false, Durability::Durable, |conn, now| Ok(store::claim(conn, 10, now, 60_000, None)?))
            .unwrap();
        assert_eq!(claimed.len(), 1);
        thread.stop();
    }
    let (queue, _thread) = start_queue(&dir);
    let ran = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::default();
    {
        let ran = ran.clone();
        registry.register("work", spec(5000, 3), move |_: &ClaimedJob, _: &_| {
            ran.fetch_add(1, Ordering::SeqCst);
            Outcome::done(json!({}))
        });
    }
    let _runner = queue.start_runner(runner_config(1), registry).unwrap();
    let (jobs, _) = queue.list(&ListFilter { limit: 10, ..ListFilter::default() }).unwrap();
    let id = jobs[0].id;
    wait_for("the rescued job to run", WAIT, || state_of(&queue, id) == JobState::Succeeded);
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    let attempts = queue.get(id).unwrap().unwrap().attempts.unwrap();
    assert_eq!(attempts[0].outcome.map(|o| o.as_str()), Some("lost"));
    assert_eq!(attempts[1].outcome.map(|o| o.as_str()), Some("succeeded"));
}

#[test]
fn an_expired_lease_is_rescued_by_the_rescuer() {
    let dir = TempDir::new();
    let clock = ManualClock::new(1_000_000);
    let (queue, _thread) = start_queue_with_clock(&dir, clock.clone());
    let id = queue.enqueue(NewJob::new("work", json!({}), 3)).unwrap().id;
    queue.writer().call(false, Durability::Durable, |conn, now| Ok(store::claim(conn, 1, now, 1000, None)?)).unwrap();
    let rescued =
        queue.writer().call(false, Durability::Durable, vibelearn::queue::maintenance::Rescuer::run_once).unwrap();
    assert_eq!(rescued, 0, "a live lease must not be rescued");
    clock.advance(1001);
    let rescued =
        queue.writer().call(false, Durability::Durable, vibelearn::queue::maintenance::Rescuer::run_once).unwrap();
    assert_eq!(rescued, 1);
    assert_eq!(state_of(&queue, id), JobState::Available);
}

#[test]
fn a_replayed_dead_job_runs_again_with_its_history_kept() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let healthy = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::default();
    {
        let healthy = healthy.clone();
        registry.register("provider", spec(5000, 1), move |_: &ClaimedJob, _: &_| {
            if healthy.load(Ordering::SeqCst) == 0 { Outcome::dead("provider down") } else { Outcome::done(json!({})) }
        });
    }
    let id = queue.enqueue(NewJob::new("provider", json!({}), 1)).unwrap().id;
    let _runner = queue.start_runner(runner_config(1), registry).unwrap();
    wait_for("dead", WAIT, || state_of(&queue, id) == JobState::Dead);
    healthy.store(1, Ordering::SeqCst);
    assert_eq!(queue.replay_matching(JobState::Dead, Some("provider".into()), None).unwrap(), vec![id]);
    wait_for("replayed success", WAIT, || state_of(&queue, id) == JobState::Succeeded);
    let job = queue.get(id).unwrap().unwrap();
    assert_eq!(job.attempts.unwrap().len(), 2, "history must be kept across a replay");
    assert_eq!(job.attempt, 1, "the attempt counter restarts at replay");
    assert!(queue.replay(vec![id]).unwrap() == vec![id], "succeeded jobs are replayable too");
}

#[test]
fn a_waiting_job_with_the_same_key_is_returned_instead_of_duplicated() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let key = "analyze_stack:s1";
    let first = queue.enqueue(NewJob::new("analyze_stack", json!({}), 3).unique(key, UniqueScope::Waiting)).unwrap();
    let second = queue.enqueue(NewJob::new("analyze_stack", json!({}), 3).unique(key, UniqueScope::Waiting)).unwrap();
    assert!(!first.deduplicated);
    assert!(second.deduplicated);
    assert_eq!(first.id, second.id);
    // Once it is no longer waiting, a new request queues a fresh run.
    queue.cancel(vec![first.id]).unwrap();
    let third = queue.enqueue(NewJob::new("analyze_stack", json!({}), 3).unique(key, UniqueScope::Waiting)).unwrap();
    assert!(!third.deduplicated);
    // `Ever` keys dedup in any state.
    let a = queue.enqueue(NewJob::new("ingest", json!({}), 5).unique("toolu_1", UniqueScope::Ever)).unwrap();
    queue.cancel(vec![a.id]).unwrap();
    let b = queue.enqueue(NewJob::new("ingest", json!({}), 5).unique("toolu_1", UniqueScope::Ever)).unwrap();
    assert_eq!((a.id, b.deduplicated), (b.id, true));
}

#[test]
fn sixteen_threads_enqueuing_at_once_lose_nothing_and_never_see_busy() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let handles: Vec<_> = (0..16)
        .map(|t| {
            let queue = queue.clone();
            std::thread::spawn(move || {
                (0..200)
                    .map(|n| queue.enqueue(NewJob::new("noop", json!({"t": t, "n": n}), 1)).map(|e| e.id))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut ids = Vec::new();
    for handle in handles {
        for result in handle.join().unwrap() {
            ids.push(result.expect("an enqueue failed"));
        }
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3200);
    let stats = queue.stats().unwrap();
    assert_eq!(stats.by_state["available"], 3200);
}

#[test]
fn shutdown_releases_running_jobs_without_costing_an_attempt() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let started = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::default();
    {
        let started = started.clone();
        registry.register("long", spec(60_000, 3), move |_: &ClaimedJob, cancel: &vibelearn::queue::CancelToken| {
            started.fetch_add(1, Ordering::SeqCst);
            while !cancel.is_cancelled() {
                std::thread::sleep(Duration::from_millis(5));
            }
            Outcome::retry("cancelled")
        });
    }
    let id = queue.enqueue(NewJob::new("long", json!({}), 3)).unwrap().id;
    let mut runner = queue
        .start_runner(
            RunnerConfig { threads: 1, shutdown_grace: Duration::from_millis(100), ..RunnerConfig::default() },
            registry,
        )
        .unwrap();
    wait_for("start", WAIT, || started.load(Ordering::SeqCst) == 1);
    assert_eq!(runner.shutdown(), 1);
    let job = queue.get(id).unwrap().unwrap();
    assert_eq!(job.state, JobState::Available);
    assert_eq!(job.attempt, 0, "a released lease must not cost an attempt");
}

#[test]
fn pruning_deletes_finished_jobs_past_retention_only() {
    let dir = TempDir::new();
    let clock = ManualClock::new(10_000_000);
    let (queue, _thread) = start_queue_with_clock(&dir, clock.clone());
    let done = queue.enqueue(NewJob::new("x", json!({}), 1)).unwrap().id;
    let waiting = queue.enqueue(NewJob::new("y", json!({}), 1)).unwrap().id;
    queue.cancel(vec![done]).unwrap();
    let retention = Retention { succeeded_ms: 1000, dead_ms: 5000 };
    assert_eq!(queue.prune(retention).unwrap(), 0);
    clock.advance(1001);
    assert_eq!(queue.prune(retention).unwrap(), 1);
    assert!(queue.get(done).unwrap().is_none());
    assert!(queue.get(waiting).unwrap().is_some());
}

#[test]
fn migrating_twice_is_a_no_op_and_a_newer_database_is_refused() {
    let dir = TempDir::new();
    let path = dir.db_path();
    let mut conn = db::open(&path, Synchronous::Full).unwrap();
    assert_eq!(db::migrate(&mut conn).unwrap(), db::latest_version() as usize);
    assert_eq!(db::migrate(&mut conn).unwrap(), 0);
    // From every older version: a database left at version N gets exactly the rest.
    for start in 0..db::latest_version() {
        let older = TempDir::new();
        let mut old_conn = db::open(&older.db_path(), Synchronous::Full).unwrap();
        for (version, _, sql) in db::migrate::MIGRATIONS.iter().filter(|(v, _, _)| *v <= start) {
            old_conn.execute_batch(sql).unwrap();
            old_conn.pragma_update(None, "user_version", version).unwrap();
        }
        assert_eq!(db::migrate(&mut old_conn).unwrap(), (db::latest_version() - start) as usize);
    }
    conn.pragma_update(None, "user_version", db::latest_version() + 1).unwrap();
    match db::migrate(&mut conn) {
        Err(DbError::TooNew { found, .. }) => assert_eq!(found, db::latest_version() + 1),
        other => panic!("expected TooNew, got {other:?}"),
    }
    let message = db::migrate(&mut conn).unwrap_err().to_string();
    assert!(message.contains("upgrade vl"), "{message}");
}

#[test]
fn pragmas_are_checked_at_open() {
    let dir = TempDir::new();
    let conn = db::open(&dir.db_path(), Synchronous::Full).unwrap();
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    let sync: i64 = conn.query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
    assert_eq!(sync, 2);
    let busy: i64 = conn.query_row("PRAGMA busy_timeout", [], |r| r.get(0)).unwrap();
    assert!(busy >= 5000);
    drop(conn);
    let normal = db::open(&dir.db_path(), Synchronous::Normal).unwrap();
    let sync: i64 = normal.query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
    assert_eq!(sync, 1);
}

#[test]
fn a_full_write_backlog_is_refused_with_a_clear_error_instead_of_waiting_forever() {
    let dir = TempDir::new();
    let path = dir.db_path();
    let conn = db::open_and_migrate(&path, Synchronous::Normal).unwrap();
    let config = vibelearn::queue::WriterConfig { capacity: 1, max_batch: 1, send_timeout: Duration::from_millis(50) };
    let (queue, _thread) =
        vibelearn::queue::Queue::start(conn, &path, Synchronous::Normal, config, vibelearn::clock::system()).unwrap();
    // Another process holds the write lock, so the writer is stuck in BEGIN for the busy timeout.
    let locker = rusqlite::Connection::open(&path).unwrap();
    locker.execute_batch("BEGIN IMMEDIATE; INSERT INTO queue_meta (key, value) VALUES ('x', 'y');").unwrap();
    let results: Vec<_> = (0..4)
        .map(|n| {
            let queue = queue.clone();
            std::thread::spawn(move || queue.enqueue(NewJob::new("x", json!({"n": n}), 1)))
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    let full = results.iter().filter(|r| matches!(r, Err(vibelearn::queue::QueueError::Full))).count();
    assert!(full >= 1, "{results:?}");
    assert!(results.iter().filter_map(|r| r.as_ref().err()).all(|e| e.to_string().contains("try again")));
    locker.execute_batch("ROLLBACK").unwrap();
    // Once the lock is gone, the queue works again.
    assert!(queue.enqueue(NewJob::new("x", json!({}), 1)).is_ok());
}

#[test]
fn batched_kinds_keep_lane_order_and_run_every_job_exactly_once() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    /// (lane, n) of each job run, in order.
    type RunLog = Arc<Mutex<Vec<(Option<String>, i64)>>>;
    let log: RunLog = Arc::default();
    let mut registry = Registry::default();
    {
        let log = log.clone();
        registry.register("quick", spec(5000, 1).batched(8), move |job: &ClaimedJob, _: &_| {
            log.lock().unwrap().push((job.lane.clone(), job.payload["n"].as_i64().unwrap()));
            Outcome::done(json!({}))
        });
    }
    let mut jobs = Vec::new();
    for n in 0..300 {
        let job = NewJob::new("quick", json!({ "n": n }), 1);
        jobs.push(match n % 3 {
            0 => job,
            1 => job.lane("a"),
            _ => job.lane("b"),
        });
    }
    queue.enqueue_all(jobs).unwrap();
    let _runner = queue.start_runner(runner_config(3), registry).unwrap();
    wait_for("300 jobs", WAIT, || queue.stats().unwrap().by_state["succeeded"] == 300);
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 300, "every job ran exactly once");
    for lane in ["a", "b"] {
        let order: Vec<i64> = log.iter().filter(|(l, _)| l.as_deref() == Some(lane)).map(|(_, n)| *n).collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted, "lane {lane} ran out of order");
    }
}

#[test]
fn a_clock_jumping_back_does_not_hold_waiting_jobs_and_a_jump_forward_rescues_leases() {
    let dir = TempDir::new();
    let hour = 3_600_000;
    let clock = ManualClock::new(100 * hour);
    let (queue, _thread) = start_queue_with_clock(&dir, clock.clone());
    let fresh = queue.enqueue(NewJob::new("x", json!({}), 3)).unwrap().id;
    let retrying = queue.enqueue(NewJob::new("y", json!({}), 3)).unwrap().id;
    // `retrying` failed and waits 5 s for its retry.
    queue
        .writer()
        .call(false, Durability::Durable, move |conn, now| {
            Ok(conn.execute(
                "UPDATE jobs SET state = 'retryable', run_at = ?2 WHERE id = ?1",
                rusqlite::params![retrying, now + 5_000],
            )?)
        })
        .unwrap();
    // The wall clock jumps back an hour.
    clock.advance(-hour);
    let claimed = queue
        .writer()
        .call(false, Durability::Relaxed, |conn, now| {
            vibelearn::queue::maintenance::Scheduler::run_once(conn, now)?;
            Ok(store::claim(conn, 10, now, 60_000, None)?)
        })
        .unwrap();
    let ids: Vec<_> = claimed.iter().map(|j| j.id).collect();
    assert!(ids.contains(&fresh), "a job enqueued before the jump must stay claimable");
    assert!(ids.contains(&retrying), "a retry an hour ahead cannot be a real backoff (cap 10 min)");
    // A job scheduled for later on purpose keeps its time.
    let waiting =
        queue.enqueue(NewJob { run_at: Some(99 * hour + 5_000), ..NewJob::new("z", json!({}), 3) }).unwrap().id;
    let claimed = queue
        .writer()
        .call(false, Durability::Relaxed, |conn, now| Ok(store::claim(conn, 10, now, 60_000, None)?))
        .unwrap();
    assert!(claimed.iter().all(|j| j.id != waiting), "a 5 s delay is honoured");
    // The clock jumps forward two hours: the running leases expire and are rescued, at-least-once.
    clock.advance(2 * hour);
    let rescued =
        queue.writer().call(false, Durability::Durable, vibelearn::queue::maintenance::Rescuer::run_once).unwrap();
    assert_eq!(rescued, 2);
    assert_eq!(state_of(&queue, fresh), JobState::Available);
}

/// The effect both paths of the "step" kind apply: one row per run, in commit order.
fn record_step(conn: &rusqlite::Connection, lane: &str, n: i64) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO queue_meta (key, value) VALUES (?1, ?2)",
        rusqlite::params![format!("step-{lane}-{n}"), n.to_string()],
    )?;
    Ok(())
}

fn inline_step(lane: &'static str, n: i64, fail: bool) -> NewJob {
    NewJob::new("step", json!({ "n": n }), 3).lane(lane).inline(Box::new(move |conn, _id, _now| {
        if fail {
            record_step(conn, lane, n)?; // written, then rolled back with the failure
            return Err("the inline run failed".into());
        }
        record_step(conn, lane, n)?;
        Ok(Some(json!({ "inline": n })))
    }))
}

#[test]
fn an_inline_job_runs_in_its_enqueue_transaction_only_when_nothing_would_make_it_wait() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let steps = |queue: &vibelearn::queue::Queue| -> Vec<String> {
        let conn = queue.read().unwrap();
        let mut stmt = conn.prepare("SELECT key FROM queue_meta WHERE key LIKE 'step-%' ORDER BY rowid").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
    };
    // Idle lane: done at once, with its effect and one succeeded attempt.
    let a = queue.enqueue(inline_step("x", 1, false)).unwrap();
    assert!(a.ran_inline);
    let job = queue.get(a.id).unwrap().unwrap();
    assert_eq!((job.state, job.attempt, job.result), (JobState::Succeeded, 1, Some(json!({ "inline": 1 }))));
    let attempts = job.attempts.unwrap();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].outcome, Some(vibelearn::queue::job::AttemptOutcome::Succeeded));
    assert_eq!(steps(&queue), ["step-x-1"]);
    // A waiting job in the lane: the next one waits behind it instead of overtaking it.
    let b = queue.enqueue(NewJob::new("step", json!({ "n": 2 }), 3).lane("x")).unwrap();
    let c = queue.enqueue(inline_step("x", 3, false)).unwrap();
    assert!(!c.ran_inline);
    assert_eq!((state_of(&queue, b.id), state_of(&queue, c.id)), (JobState::Available, JobState::Available));
    // A failing inline run leaves nothing behind but the waiting job.
    let d = queue.enqueue(inline_step("y", 4, true)).unwrap();
    assert!(!d.ran_inline);
    assert_eq!(state_of(&queue, d.id), JobState::Available);
    // Delayed and deduplicated jobs never run inline.
    let mut delayed = inline_step("z", 5, false);
    delayed.run_at = Some(queue.now() + 60_000);
    assert!(!queue.enqueue(delayed).unwrap().ran_inline);
    let keyed = queue.enqueue(inline_step("w", 6, false).unique("k", UniqueScope::Ever)).unwrap();
    let again = queue.enqueue(inline_step("w", 7, false).unique("k", UniqueScope::Ever)).unwrap();
    assert!(keyed.ran_inline && again.deduplicated && !again.ran_inline);
    assert_eq!(steps(&queue), ["step-x-1", "step-w-6"]);
    // The runner runs what waits, in lane order, through the handler's own effects.
    let mut registry = Registry::default();
    registry.register("step", spec(5000, 3), |job: &ClaimedJob, _: &_| {
        let (lane, n) = (job.lane.clone().unwrap_or_default(), job.payload["n"].as_i64().unwrap_or(0));
        Outcome::Succeeded { result: None, effects: Some(Box::new(move |conn, _| Ok(record_step(conn, &lane, n)?))) }
    });
    let _runner = queue.start_runner(runner_config(2), registry).unwrap();
    wait_for("the waiting jobs", WAIT, || {
        [b.id, c.id, d.id].iter().all(|id| state_of(&queue, *id) == JobState::Succeeded)
    });
    let steps = steps(&queue);
    let x: Vec<&String> = steps.iter().filter(|s| s.starts_with("step-x")).collect();
    assert_eq!(x, ["step-x-1", "step-x-2", "step-x-3"]);
    assert!(steps.contains(&"step-y-4".to_owned()));
}

#[test]
fn runner_liveness_is_measured_on_the_monotonic_clock_so_wall_clock_jumps_neither_fake_nor_hide_a_stall() {
    let dir = TempDir::new();
    let hour = 3_600_000;
    let clock = ManualClock::new(100 * hour);
    let (queue, _thread) = start_queue_with_clock(&dir, clock.clone());
    let runner = queue.start_runner(runner_config(1), Registry::default()).unwrap();
    let probe = runner.probe();
    for jump in [hour, -2 * hour] {
        clock.advance(jump);
        let ago = probe.state().last_tick_ms_ago;
        assert!((0..10_000).contains(&ago), "after a {jump} ms jump the runner looks {ago} ms stale");
    }
}

#[test]
fn a_failing_enqueue_is_reported_until_the_next_one_commits() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let window = Duration::from_secs(10);
    queue.enqueue(NewJob::new("x", json!({}), 1)).unwrap();
    assert!(!queue.enqueues_failing(window));
    // Stand-in for a full disk: every insert into jobs fails on the database.
    refuse_writes(&queue, "BEFORE INSERT ON jobs");
    assert!(queue.enqueue(NewJob::new("x", json!({}), 1)).is_err());
    assert!(queue.enqueues_failing(window), "health must see that events are being refused");
    allow_writes(&queue);
    queue.enqueue(NewJob::new("x", json!({}), 1)).unwrap();
    assert!(!queue.enqueues_failing(window));
}

#[test]
fn a_claim_takes_each_lanes_head_and_unlaned_jobs_in_run_at_order_whatever_the_backlog() {
    let dir = TempDir::new();
    let clock = ManualClock::new(1_000_000);
    let (queue, _thread) = start_queue_with_clock(&dir, clock.clone());
    let claim = |max: usize, kind: Option<&'static str>| -> Vec<i64> {
        queue
            .writer()
            .call(false, Durability::Relaxed, move |conn, now| Ok(store::claim(conn, max, now, 60_000, kind)?))
            .unwrap()
            .iter()
            .map(|j| j.payload["n"].as_i64().unwrap())
            .collect()
    };
    let job = |n: i64, kind: &str, lane: Option<&str>| {
        let job = NewJob::new(kind, json!({ "n": n }), 3);
        queue
            .enqueue(match lane {
                Some(lane) => job.lane(lane),
                None => job,
            })
            .unwrap()
            .id
    };
    // Lane "deep": a head that will be running, then a backlog of 2,000 behind it.
    job(1, "a", Some("deep"));
    assert_eq!(claim(1, None), [1]);
    queue.enqueue_all((0..2000).map(|n| NewJob::new("a", json!({ "n": 100 + n }), 3).lane("deep")).collect()).unwrap();
    // Two more lanes with two jobs each, jobs without a lane, and one scheduled for later.
    job(10, "a", Some("x"));
    job(11, "a", Some("x"));
    job(20, "b", Some("y"));
    job(21, "a", Some("y"));
    job(30, "a", None);
    job(31, "b", None);
    let later = NewJob { run_at: Some(queue.now() + 60_000), ..NewJob::new("a", json!({ "n": 40 }), 3) };
    queue.enqueue(later).unwrap();
    // Only heads and due unlaned jobs, oldest first; nothing of the blocked backlog.
    assert_eq!(claim(3, Some("a")), [10, 30], "lane y's head is a `b`, so the `a` behind it waits");
    assert_eq!(claim(10, None), [20, 31]);
    assert_eq!(claim(10, None), Vec::<i64>::new(), "every lane is busy and the rest is not due");
    clock.advance(60_000);
    assert_eq!(claim(10, None), [40]);
    // A cancelled head no longer blocks its lane.
    let (_, deep_head) = queue
        .writer()
        .call(false, Durability::Relaxed, |conn, _| {
            Ok(conn.query_row(
                "SELECT COUNT(*), MIN(id) FROM jobs WHERE lane = 'deep' AND state = 'running'",
                [],
                |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
            )?)
        })
        .unwrap();
    queue.cancel(vec![vibelearn::queue::JobId(deep_head)]).unwrap();
    assert_eq!(claim(1, None), [100]);
}

#[test]
fn counts_by_state_through_the_indexes_match_a_full_count() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let ids: Vec<_> = (0..12)
        .map(|n| queue.enqueue(NewJob::new("k", json!({ "n": n }), 3).lane(format!("l{n}"))).unwrap().id)
        .collect();
    queue.cancel(vec![ids[0], ids[1]]).unwrap();
    queue
        .writer()
        .call(false, Durability::Durable, move |conn, now| {
            let claimed = store::claim(conn, 6, now, 60_000, None)?;
            store::complete_success(conn, claimed[0].id, claimed[0].lease_token, None, true, now)?;
            store::complete_success(conn, claimed[1].id, claimed[1].lease_token, None, true, now)?;
            let dead = store::FailureDisposition::Dead;
            store::fail_attempt(
                conn,
                claimed[2].id,
                claimed[2].lease_token,
                vibelearn::queue::job::AttemptOutcome::Failed,
                "x",
                dead,
                now,
            )?;
            let later = store::FailureDisposition::RetryAt(now + 60_000);
            store::fail_attempt(
                conn,
                claimed[3].id,
                claimed[3].lease_token,
                vibelearn::queue::job::AttemptOutcome::Failed,
                "y",
                later,
                now,
            )?;
            Ok(())
        })
        .unwrap();
    // A job depending on the dead one is held by the claim that reaches it.
    let dead = queue.list(&store::ListFilter { state: Some(JobState::Dead), limit: 1, ..Default::default() });
    let dead = dead.unwrap().0[0].id;
    queue.enqueue(NewJob::new("after-dead", json!({}), 3).lane("l-held").depends_on([dead])).unwrap();
    let held = queue
        .writer()
        .call(false, Durability::Durable, |conn, now| Ok(store::claim(conn, 1, now, 60_000, Some("after-dead"))?));
    assert!(held.unwrap().is_empty(), "a job whose dependency is dead is never claimed");
    let conn = queue.read().unwrap();
    let counts = store::count_by_state(&conn, &JobState::ALL).unwrap();
    let mut stmt = conn.prepare("SELECT state, COUNT(*) FROM jobs GROUP BY state").unwrap();
    let full: std::collections::HashMap<JobState, i64> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().collect::<Result<_, _>>().unwrap();
    for state in JobState::ALL {
        assert_eq!(counts[&state], full.get(&state).copied().unwrap_or(0), "{state:?}");
    }
    assert!(JobState::ALL.iter().all(|s| counts[s] > 0), "every state is represented: {counts:?}");
}

#[test]
fn a_job_whose_outcome_cannot_be_written_is_given_back_once_writes_work_not_a_lease_later() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    refuse_writes(&queue, "BEFORE UPDATE OF outcome ON job_attempts WHEN NEW.outcome = 'succeeded'");
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::default();
    {
        let runs = runs.clone();
        registry.register("step", spec(5000, 10), move |_: &ClaimedJob, _: &_| {
            runs.fetch_add(1, Ordering::SeqCst);
            Outcome::done(json!({}))
        });
    }
    let id = queue.enqueue(NewJob::new("step", json!({}), 10).lane("s")).unwrap().id;
    let _runner = queue.start_runner(runner_config(1), registry).unwrap();
    // The refused completion is given back as a lost attempt once a write goes through (the
    // give-back itself is allowed), not a lease later; then writes work again.
    wait_for("the attempt given back", WAIT, || {
        let attempts = queue.get(id).unwrap().unwrap().attempts.unwrap();
        attempts.iter().any(|a| a.error.as_deref().is_some_and(|e| e.contains("could not be written")))
    });
    allow_writes(&queue);
    // The default lease is 60 s; the job must not wait for it.
    wait_for("the job to succeed", WAIT, || state_of(&queue, id) == JobState::Succeeded);
    let attempts = queue.get(id).unwrap().unwrap().attempts.unwrap();
    assert!(
        attempts.iter().any(|a| a.error.as_deref().is_some_and(|e| e.contains("could not be written"))),
        "{attempts:?}"
    );
}

#[test]
fn a_timed_out_job_whose_timeout_cannot_be_written_is_given_back_once_writes_work() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    // Neither the timeout nor the give-back (a `lost` attempt) can be written until allowed.
    refuse_writes(&queue, "BEFORE UPDATE OF outcome ON job_attempts WHEN NEW.outcome IN ('timed_out', 'lost')");
    let runs = Arc::new(AtomicUsize::new(0));
    let hang_ends = Arc::new(AtomicBool::new(false));
    let mut registry = Registry::default();
    {
        let (runs, hang_ends) = (runs.clone(), hang_ends.clone());
        registry.register("step", spec(200, 10), move |_: &ClaimedJob, _: &_| {
            // The first run hangs past its 200 ms timeout until the test ends it; later runs
            // are quick.
            if runs.fetch_add(1, Ordering::SeqCst) == 0 {
                let deadline = Instant::now() + Duration::from_secs(30);
                while !hang_ends.load(Ordering::SeqCst) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            Outcome::done(json!({}))
        });
    }
    let id = queue.enqueue(NewJob::new("step", json!({}), 10).lane("s")).unwrap().id;
    let _runner = queue.start_runner(runner_config(1), registry).unwrap();
    // The watchdog times the run out (within its 1 s tick) and cannot record it; the give-back
    // it then tries every second is refused too: the job stays running, its attempt open.
    wait_for("the watchdog to time the run out", WAIT, || {
        queue.metrics().snapshot().get("step").is_some_and(|k| k.timed_out == 1)
    });
    std::thread::sleep(Duration::from_millis(1500));
    let attempts = queue.get(id).unwrap().unwrap().attempts.unwrap();
    assert_eq!((state_of(&queue, id), attempts[0].outcome), (JobState::Running, None), "the timeout was refused");
    allow_writes(&queue);
    // Given back within a second of writes working; the default lease is 60 s, and the job
    // must not wait for it.
    wait_for("the job to succeed", WAIT, || state_of(&queue, id) == JobState::Succeeded);
    hang_ends.store(true, Ordering::SeqCst);
    let attempts = queue.get(id).unwrap().unwrap().attempts.unwrap();
    assert_eq!(attempts[0].outcome, Some(vibelearn::queue::job::AttemptOutcome::Lost), "{attempts:?}");
    assert!(attempts[0].error.as_deref().is_some_and(|e| e.contains("could not be written")), "{attempts:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[test]
fn no_job_of_a_lane_starts_while_another_of_its_lane_runs_even_an_older_one_made_available_again() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let claim = |max: usize| -> Vec<(vibelearn::queue::JobId, i64)> {
        queue
            .writer()
            .call(false, Durability::Relaxed, move |conn, now| Ok(store::claim(conn, max, now, 60_000, None)?))
            .unwrap()
            .iter()
            .map(|j| (j.id, j.lease_token))
            .collect()
    };
    let succeed = |(id, token): (vibelearn::queue::JobId, i64)| {
        queue
            .writer()
            .call(false, Durability::Relaxed, move |conn, now| {
                Ok(store::complete_success(conn, id, token, None, true, now)?)
            })
            .unwrap()
    };
    let old = queue.enqueue(NewJob::new("a", json!({}), 3).lane("s")).unwrap().id;
    let first = claim(10);
    assert_eq!(first.iter().map(|c| c.0).collect::<Vec<_>>(), [old]);
    assert!(succeed(first[0]));
    let later = queue.enqueue(NewJob::new("a", json!({}), 3).lane("s")).unwrap().id;
    let running = claim(10);
    assert_eq!(running.iter().map(|c| c.0).collect::<Vec<_>>(), [later]);
    // The old job comes back (a replay; a re-open, a gate's resume or a released lease do the
    // same): it is now the lane's oldest active job, yet the later one is running.
    assert_eq!(queue.replay(vec![old]).unwrap(), [old]);
    assert_eq!(claim(10), [], "two jobs of one lane would run at once");
    assert_eq!(state_of(&queue, old), JobState::Available);
    // Once the running one is done, the old one runs.
    assert!(succeed(running[0]));
    assert_eq!(claim(10).iter().map(|c| c.0).collect::<Vec<_>>(), [old]);
}

/// The maintenance thread runs its owner's tasks through the writer at start: a step again at
/// once while it says there is more, at most `max_steps` a run, each step committed.
#[test]
fn maintenance_runs_its_owners_tasks_step_by_step_through_the_writer() {
    use vibelearn::queue::maintenance::{Maintainer, MaintainerConfig, Task, TaskProgress};
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let steps = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&steps);
    let task = Task {
        name: "test task",
        interval: Duration::from_secs(3_600),
        max_steps: 5,
        step: Arc::new(move |conn, now| {
            let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
            conn.execute(
                "INSERT INTO queue_meta (key, value) VALUES (?1, ?2)",
                rusqlite::params![format!("step{n}"), now],
            )?;
            // Three steps' work, then none; a fourth step would be a bug.
            Ok(TaskProgress { done: 1, more: n < 3 })
        }),
    };
    let maintainer = Maintainer::spawn(
        MaintainerConfig { tasks: vec![task], ..MaintainerConfig::default() },
        queue.writer().clone(),
    )
    .unwrap();
    let conn = rusqlite::Connection::open(dir.db_path()).unwrap();
    wait_for("three steps committed", Duration::from_secs(10), || {
        conn.query_row("SELECT COUNT(*) FROM queue_meta WHERE key LIKE 'step%'", [], |r| r.get::<_, i64>(0)).unwrap()
            == 3
    });
    drop(maintainer);
    assert_eq!(steps.load(Ordering::SeqCst), 3);
}

/// The maintenance thread's first prune is done when `spawn` returns: a worker marks itself
/// ready after it, so a job that finishes once the worker is ready is never taken by the prune
/// of the worker's own start, whatever the retention.
#[test]
fn maintenance_prunes_once_before_spawn_returns() {
    use vibelearn::queue::maintenance::{Maintainer, MaintainerConfig};
    let dir = TempDir::new();
    let clock = ManualClock::new(1_000_000);
    let (queue, _thread) = start_queue_with_clock(&dir, clock.clone());
    let finished = queue.enqueue(NewJob::new("ingest", json!({}), 5)).unwrap().id;
    queue.cancel(vec![finished]).unwrap();
    clock.advance(1_000);
    let retention = Retention { succeeded_ms: 0, dead_ms: 0 };
    let maintainer =
        Maintainer::spawn(MaintainerConfig { retention, ..MaintainerConfig::default() }, queue.writer().clone())
            .unwrap();
    assert!(queue.get(finished).unwrap().is_none(), "the finished job was pruned before spawn returned");
    let waiting = queue.enqueue(NewJob::new("ingest", json!({}), 5)).unwrap().id;
    drop(maintainer);
    assert!(queue.get(waiting).unwrap().is_some(), "a job not finished is never pruned");
}
