//! The runner's components driven one turn at a time on a manual monotonic clock: no runner
//! threads, no sleeps. A real queue (writer thread, SQLite file in a temp dir) records what
//! they do.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::dispatcher::Dispatcher;
use super::watchdog::Watchdog;
use super::{KindSpec, Outcome, Registry, RunnerConfig, Shared, TICK, Work};
use crate::clock::{ManualClock, ManualMonotonic, Monotonic};
use crate::db::{self, Synchronous};
use crate::queue::job::{JobId, JobState};
use crate::queue::writer::Durability;
use crate::queue::{NewJob, Queue, QueueThread, WriterConfig};

const TIMEOUT: Duration = Duration::from_secs(5);

struct Fixture {
    queue: Queue,
    _thread: QueueThread,
    _dir: tempfile::TempDir,
    clock: Arc<ManualMonotonic>,
    wall: Arc<ManualClock>,
    shared: Arc<Shared>,
}

fn fixture(threads: usize) -> Fixture {
    let mut registry = Registry::default();
    registry.register("k", KindSpec::new(TIMEOUT, 3), |_: &_, _: &_| Outcome::done(json!({})));
    fixture_with(threads, registry)
}

fn fixture_with(threads: usize, registry: Registry) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("vibelearn.db");
    let conn = db::open_and_migrate(&path, Synchronous::Normal).expect("open");
    let wall = ManualClock::new(1_700_000_000_000);
    let (queue, thread) =
        Queue::start(conn, &path, Synchronous::Normal, WriterConfig::default(), wall.clone()).expect("queue");
    let clock = ManualMonotonic::new();
    let config = RunnerConfig { threads, monotonic: clock.clone(), ..RunnerConfig::default() };
    let shared = Shared::new(
        config,
        registry,
        queue.writer.clone(),
        queue.waker.clone(),
        wall.clone(),
        Arc::clone(&queue.metrics),
    );
    Fixture { queue, _thread: thread, _dir: dir, clock, wall, shared }
}

fn enqueue(queue: &Queue, n: usize) -> Vec<JobId> {
    (0..n).map(|i| queue.enqueue(NewJob::new("k", json!({ "i": i }), 3)).expect("enqueue").id).collect()
}

/// Waits for the writer to apply what was submitted before (it runs requests in order).
fn barrier(queue: &Queue) {
    queue.writer.call(false, Durability::Relaxed, |_, _| Ok(())).expect("writer");
}

/// Polls `condition` (a readiness poll: the state is written by another thread) for up to ten
/// seconds.
fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn handed_over(shared: &Shared) -> Vec<JobId> {
    shared.work_rx.try_iter().filter_map(|w| if let Work::Run(job) = w { Some(job.id) } else { None }).collect()
}

#[test]
fn a_dispatcher_turn_fills_only_the_idle_threads_then_sleeps_a_tick() {
    let f = fixture(2);
    let ids = enqueue(&f.queue, 3);
    let mut dispatcher = Dispatcher::default();
    let turn = dispatcher.run_once(&f.shared);
    assert_eq!(turn.handed_over, 2);
    assert!(turn.wait <= TICK, "never longer than a tick: {turn:?}");
    assert_eq!(handed_over(&f.shared), ids[..2]);
    // No idle thread: nothing claimed, and the third job stays available.
    let turn = dispatcher.run_once(&f.shared);
    assert_eq!((turn.handed_over, turn.wait), (0, TICK));
    assert_eq!(f.queue.get(ids[2]).unwrap().unwrap().state, JobState::Available);
}

#[test]
fn a_dispatcher_turn_sleeps_until_the_next_scheduled_job() {
    let f = fixture(2);
    let later = f.queue.now() + 400;
    f.queue.enqueue(NewJob { run_at: Some(later), ..NewJob::new("k", json!({}), 3) }).unwrap();
    let turn = Dispatcher::default().run_once(&f.shared);
    assert_eq!(turn.handed_over, 0);
    assert!(turn.wait <= Duration::from_millis(400) && turn.wait > Duration::ZERO, "{turn:?}");
}

#[test]
fn the_watchdog_times_out_an_attempt_on_the_injected_clock_and_raises_its_token() {
    let f = fixture(1);
    let id = enqueue(&f.queue, 1)[0];
    Dispatcher::default().run_once(&f.shared);
    let token = f.shared.inflight().get(&id).expect("in flight").cancel.clone();
    let mut watchdog = Watchdog::new(&f.shared, f.clock.now());
    // Just before the deadline nothing happens; just after, the attempt ends.
    f.clock.advance(TIMEOUT - Duration::from_millis(1));
    assert_eq!(watchdog.run_once(&f.shared, f.clock.now()).timed_out, []);
    assert!(!token.is_cancelled());
    f.clock.advance(Duration::from_millis(1));
    assert!(token.is_cancelled(), "the handler's own token expires on the same clock");
    let turn = watchdog.run_once(&f.shared, f.clock.now());
    assert_eq!(turn.timed_out, [id]);
    assert!(f.shared.inflight().is_empty(), "the late result will be dropped");
    barrier(&f.queue);
    let job = f.queue.get(id).unwrap().unwrap();
    assert_eq!(job.state, JobState::Retryable);
    assert_eq!(job.attempts.unwrap()[0].outcome, Some(crate::queue::job::AttemptOutcome::TimedOut));
}

#[test]
fn the_watchdog_extends_live_leases_when_a_heartbeat_is_due() {
    let f = fixture(1);
    let id = enqueue(&f.queue, 1)[0];
    Dispatcher::default().run_once(&f.shared);
    let lease = |queue: &Queue| -> i64 {
        queue.read().unwrap().query_row("SELECT lease_expires_at FROM jobs WHERE id = ?1", [id], |r| r.get(0)).unwrap()
    };
    let before = lease(&f.queue);
    let mut watchdog = Watchdog::new(&f.shared, f.clock.now());
    assert_eq!(watchdog.run_once(&f.shared, f.clock.now()).heartbeat, 0, "not due yet");
    // Past the heartbeat (20 s) but inside the job's timeout: a job with a longer timeout.
    f.shared.inflight().get_mut(&id).unwrap().deadline = f.clock.now() + Duration::from_secs(60);
    f.clock.advance(f.shared.config.heartbeat);
    f.wall.advance(f.shared.config.heartbeat.as_millis() as i64); // leases are stamped on the wall clock
    assert_eq!(watchdog.run_once(&f.shared, f.clock.now()).heartbeat, 1);
    barrier(&f.queue);
    assert_eq!(lease(&f.queue) - before, 20_000, "the lease moved forward by the time passed");
}

#[test]
fn liveness_follows_the_injected_clock() {
    let f = fixture(1);
    Dispatcher::default().run_once(&f.shared);
    f.clock.advance(Duration::from_secs(12));
    let probe = super::RunnerProbe { shared: Arc::clone(&f.shared) };
    assert_eq!(probe.state().last_tick_ms_ago, 12_000);
    Dispatcher::default().run_once(&f.shared);
    assert_eq!(probe.state().last_tick_ms_ago, 0);
}

#[test]
fn a_finished_attempt_waiting_in_its_threads_batch_keeps_its_lease_until_it_is_recorded() {
    // Kind `b` is claimed three at a time; a job with `"block"` waits until the test lets it go.
    let (started_tx, started) = crossbeam_channel::bounded::<()>(1);
    let (release, released) = crossbeam_channel::bounded::<()>(1);
    let mut registry = Registry::default();
    let spec = KindSpec::new(Duration::from_secs(600), 3).batched(3);
    registry.register("b", spec, move |job: &crate::queue::ClaimedJob, _: &_| {
        if job.payload["block"] == true {
            started_tx.send(()).expect("the test waits");
            released.recv().expect("the test releases");
        }
        Outcome::done(json!({}))
    });
    let f = fixture_with(1, registry);
    let ids: Vec<JobId> = [false, false, true]
        .iter()
        .map(|&block| f.queue.enqueue(NewJob::new("b", json!({ "block": block }), 3)).expect("enqueue").id)
        .collect();
    let mut watchdog = Watchdog::new(&f.shared, f.clock.now());
    // The dispatcher hands the first job over; its thread records it and claims the other two
    // itself, runs the second, and holds that outcome in its batch while the third runs.
    assert_eq!(Dispatcher::default().run_once(&f.shared).handed_over, 1);
    let thread = {
        let shared = Arc::clone(&f.shared);
        std::thread::spawn(move || super::job_thread::run(&shared))
    };
    started.recv_timeout(Duration::from_secs(10)).expect("the third job starts");
    // A whole lease passes, heartbeat by heartbeat, while the third job runs.
    let lease = f.shared.config.lease;
    let mut waited = Duration::ZERO;
    while waited <= lease {
        f.clock.advance(f.shared.config.heartbeat);
        f.wall.advance(f.shared.config.heartbeat.as_millis() as i64);
        waited += f.shared.config.heartbeat;
        assert!(watchdog.run_once(&f.shared, f.clock.now()).heartbeat >= 1);
        barrier(&f.queue);
    }
    let rescued = f
        .queue
        .writer
        .call(false, Durability::Relaxed, |conn, now| {
            Ok(crate::queue::store::rescue(conn, crate::queue::store::RescueScope::ExpiredLeases, now)?)
        })
        .expect("rescue");
    assert_eq!(rescued, [], "the finished second job and the running third keep their leases");
    release.send(()).expect("the third job waits");
    wait_until("every job recorded", || {
        ids.iter().all(|id| f.queue.get(*id).unwrap().unwrap().state == JobState::Succeeded)
    });
    let second = f.queue.get(ids[1]).unwrap().unwrap();
    assert_eq!(second.attempts.unwrap().len(), 1, "it ran once, and its own outcome was recorded");
    // The thread forgets a batch once the writer has recorded it, just after the rows change.
    wait_until("nothing left to heartbeat", || f.shared.unrecorded().is_empty());
    f.shared.work_tx.send(Work::Exit).expect("the thread listens");
    thread.join().expect("the job thread ends");
}

#[test]
fn the_watchdog_keeps_a_paused_gate_under_the_same_credentials_and_resumes_it_on_new_ones() {
    let version = Arc::new(std::sync::Mutex::new("key-1".to_owned()));
    let mut registry = Registry::default();
    registry.register("k", KindSpec::new(TIMEOUT, 3), |_: &_, _: &_| Outcome::done(json!({})));
    {
        let version = Arc::clone(&version);
        registry.gate("remote", &["k"], move || version.lock().unwrap().clone());
    }
    let f = fixture_with(1, registry);
    f.queue
        .writer
        .call(false, Durability::Durable, |conn, now| {
            Ok(crate::queue::gates::pause(conn, "remote", "401", "key-1", now)?)
        })
        .expect("pause");
    let state = |queue: &Queue| queue.gates().expect("gates")[0].state;
    let mut watchdog = Watchdog::new(&f.shared, f.clock.now());
    // Before its check is due, the watchdog does not look; at each check, the same
    // credentials keep the pause.
    assert!(!watchdog.run_once(&f.shared, f.clock.now()).gates_checked);
    for _ in 0..2 {
        f.clock.advance(super::GATE_CHECK);
        assert!(watchdog.run_once(&f.shared, f.clock.now()).gates_checked);
        assert_eq!(state(&f.queue), crate::queue::GateState::Paused);
    }
    // New credentials: the next check resumes it (unproven: one job goes first).
    *version.lock().unwrap() = "key-2".to_owned();
    f.clock.advance(super::GATE_CHECK);
    assert!(watchdog.run_once(&f.shared, f.clock.now()).gates_checked);
    assert_eq!(state(&f.queue), crate::queue::GateState::Unproven);
}

#[test]
fn a_probe_that_answers_lifts_only_the_pause_it_was_for() {
    use crate::queue::gates;
    let f = fixture_with(1, Registry::default());
    let pause = |reason: &'static str| {
        f.queue
            .writer
            .call(true, Durability::Durable, move |conn, now| Ok(gates::pause(conn, "llm", reason, "v", now)?))
    };
    let reason_now =
        || f.queue.writer.call(false, Durability::Relaxed, |conn, _| Ok(gates::pause_reason(conn, "llm")?));
    let answers: super::handler::GateProbe = Arc::new(|_| Some(Ok(())));
    let schedule = std::sync::Mutex::new(super::reprobe::Reprobe::default());
    // Paused for a login; while the probe ran, the pause became another (a spent budget): the
    // probe's answer does not lift it.
    pause("not logged in").expect("pause");
    f.queue
        .writer
        .call(true, Durability::Durable, |conn, now| Ok(gates::resume(conn, Some("llm"), now)?))
        .expect("resume");
    pause("daily budget spent").expect("pause again");
    super::reprobe::probe_one("llm", "not logged in", &answers, &schedule, &f.queue.writer, &f.queue.waker);
    assert_eq!(reason_now().expect("read").as_deref(), Some("daily budget spent"));
    // The pause it was for: lifted.
    super::reprobe::probe_one("llm", "daily budget spent", &answers, &schedule, &f.queue.writer, &f.queue.waker);
    assert_eq!(reason_now().expect("read"), None, "resumed");
}
