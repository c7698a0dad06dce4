//! Dependencies between jobs and gates (paused providers), on the queue alone: a real SQLite
//! file, real runner threads, handlers that record what ran.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use vibelearn::queue::store::{self, ListFilter};
use vibelearn::queue::{
    ClaimedJob, Durability, GateState, JobId, JobState, KindSpec, NewJob, Outcome, Queue, Registry, RunnerConfig,
    UniqueScope,
};

use crate::util::{TempDir, start_queue, wait_for};

const WAIT: Duration = Duration::from_secs(10);

fn spec() -> KindSpec {
    KindSpec::new(Duration::from_secs(5), 3)
}

fn threads(n: usize) -> RunnerConfig {
    RunnerConfig { threads: n, ..RunnerConfig::default() }
}

fn state(queue: &Queue, id: JobId) -> JobState {
    queue.get(id).unwrap().unwrap().state
}

fn wait_state(queue: &Queue, id: JobId, wanted: JobState) {
    wait_for(&format!("job {id} to be {wanted:?}"), WAIT, || state(queue, id) == wanted);
}

/// The order in which handlers ran, as `kind:n`.
type Log = Arc<Mutex<Vec<String>>>;

/// A handler that logs `kind:n` and answers with what `decide` says for that payload.
fn logging(
    log: &Log,
    kind: &'static str,
    decide: impl Fn(&ClaimedJob) -> Outcome + Send + Sync + 'static,
) -> impl Fn(&ClaimedJob, &vibelearn::queue::CancelToken) -> Outcome + Send + Sync + 'static {
    let log = Arc::clone(log);
    move |job: &ClaimedJob, _: &_| {
        log.lock().unwrap().push(format!("{kind}:{}", job.payload["n"]));
        decide(job)
    }
}

fn ran(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

#[test]
fn a_dependent_runs_only_after_its_prerequisite_succeeded_and_is_held_while_it_is_dead() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let log: Log = Arc::default();
    let fail_first = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::default();
    {
        let fail_first = Arc::clone(&fail_first);
        registry.register(
            "up",
            spec(),
            logging(&log, "up", move |_| {
                if fail_first.fetch_add(1, Ordering::SeqCst) == 0 {
                    Outcome::dead("broken")
                } else {
                    Outcome::done(json!({}))
                }
            }),
        );
    }
    registry.register("down", spec(), logging(&log, "down", |_| Outcome::done(json!({}))));
    registry.register("later", spec(), logging(&log, "later", |_| Outcome::done(json!({}))));
    let up =
        queue.enqueue(NewJob::new("up", json!({"n": 1}), 1).lane("s").unique("up:s", UniqueScope::Waiting)).unwrap();
    let down =
        queue.enqueue(NewJob::new("down", json!({"n": 1}), 3).lane("s").after_keys(["up:s".to_owned()])).unwrap();
    let runner = queue.start_runner(threads(2), registry).unwrap();
    wait_state(&queue, down.id, JobState::Held);
    assert_eq!(state(&queue, up.id), JobState::Dead);
    let held = queue.get(down.id).unwrap().unwrap();
    assert_eq!(held.depends_on, [up.id]);
    assert_eq!(held.waiting_on.as_ref().unwrap().jobs, [up.id], "{held:?}");
    // Held blocks no lane: a later job of the same lane runs.
    let later = queue.enqueue(NewJob::new("later", json!({"n": 1}), 3).lane("s")).unwrap();
    wait_state(&queue, later.id, JobState::Succeeded);
    assert_eq!(state(&queue, down.id), JobState::Held);
    assert_eq!(ran(&log), ["up:1", "later:1"], "the dependent never ran on partial input");
    // Replaying the prerequisite completes the chain with no further command.
    queue.replay(vec![up.id]).unwrap();
    wait_state(&queue, down.id, JobState::Succeeded);
    assert_eq!(ran(&log), ["up:1", "later:1", "up:1", "down:1"]);
    drop(runner);
}

#[test]
fn a_succeeded_dependent_runs_again_only_when_its_prerequisite_output_changed() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let log: Log = Arc::default();
    let changed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut registry = Registry::default();
    {
        let changed = Arc::clone(&changed);
        registry.register(
            "up",
            spec(),
            logging(&log, "up", move |_| {
                if changed.load(Ordering::SeqCst) { Outcome::done(json!({})) } else { Outcome::unchanged(json!({})) }
            }),
        );
    }
    registry.register("mid", spec(), logging(&log, "mid", |_| Outcome::done(json!({}))));
    registry.register("end", spec(), logging(&log, "end", |_| Outcome::done(json!({}))));
    let up = queue.enqueue(NewJob::new("up", json!({"n": 1}), 3).lane("s").unique("up:s", UniqueScope::Waiting));
    let up = up.unwrap().id;
    let mid = NewJob::new("mid", json!({"n": 1}), 3).lane("s").unique("mid:s", UniqueScope::Waiting);
    let mid = queue.enqueue(mid.after_keys(["up:s".to_owned()])).unwrap().id;
    let end = NewJob::new("end", json!({"n": 1}), 3).lane("s").after_keys(["mid:s".to_owned(), "up:s".to_owned()]);
    let end = queue.enqueue(end).unwrap().id;
    let _runner = queue.start_runner(threads(2), registry).unwrap();
    wait_state(&queue, end, JobState::Succeeded);
    assert_eq!(ran(&log), ["up:1", "mid:1", "end:1"]);
    // Unchanged output: its success re-opens nothing (decided in the transaction of that success).
    queue.replay(vec![up]).unwrap();
    wait_for("the replayed job", WAIT, || ran(&log).len() == 4);
    wait_state(&queue, up, JobState::Succeeded);
    assert_eq!((state(&queue, mid), state(&queue, end)), (JobState::Succeeded, JobState::Succeeded));
    assert_eq!(queue.get(mid).unwrap().unwrap().attempts.unwrap().len(), 1);
    // Changed output: the dependents run again, in order, each once.
    changed.store(true, Ordering::SeqCst);
    queue.replay(vec![up]).unwrap();
    wait_for("the re-run chain", WAIT, || ran(&log).len() == 7 && state(&queue, end) == JobState::Succeeded);
    assert_eq!(ran(&log)[4..], ["up:1", "mid:1", "end:1"]);
}

#[test]
fn a_newer_chain_supersedes_the_one_held_behind_a_dead_step_so_a_bulk_replay_runs_each_step_once() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let log: Log = Arc::default();
    let calls = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::default();
    {
        let calls = Arc::clone(&calls);
        registry.register(
            "up",
            spec(),
            logging(&log, "up", move |_| {
                if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                    Outcome::dead("broken")
                } else {
                    Outcome::done(json!({}))
                }
            }),
        );
    }
    registry.register("down", spec(), logging(&log, "down", |_| Outcome::done(json!({}))));
    let step = |kind: &str, n: u32, after: &[&str]| {
        NewJob::new(kind, json!({ "n": n }), 1)
            .lane("s")
            .unique(format!("{kind}:s"), UniqueScope::Waiting)
            .after_keys(after.iter().map(|k| format!("{k}:s")))
    };
    let _runner = queue.start_runner(threads(2), registry).unwrap();
    // The first chain: its `up` dies, its `down` is held behind it.
    let first = queue.enqueue_all(vec![step("up", 1, &[]), step("down", 1, &["up"])]).unwrap();
    let (up1, down1) = (first[0].id, first[1].id);
    wait_state(&queue, down1, JobState::Held);
    // The next Stop builds a fresh chain, which supersedes the held one.
    let second = queue.enqueue_all(vec![step("up", 2, &[]), step("down", 2, &["up"])]).unwrap();
    assert!(!second[1].deduplicated);
    wait_state(&queue, second[1].id, JobState::Succeeded);
    let superseded = queue.get(down1).unwrap().unwrap();
    assert_eq!(superseded.state, JobState::Cancelled, "{superseded:?}");
    assert!(superseded.last_error.as_deref().unwrap().contains(&format!("superseded by job {}", second[1].id)));
    // A bulk replay of the dead jobs re-runs the dead step alone, not its stale chain.
    assert_eq!(queue.replay_matching(JobState::Dead, None, None).unwrap(), [up1]);
    wait_state(&queue, up1, JobState::Succeeded);
    assert_eq!(state(&queue, down1), JobState::Cancelled, "the stale chain stays cancelled");
    assert_eq!(ran(&log), ["up:1", "up:2", "down:2", "up:1"]);
}

#[test]
fn cancelling_a_dead_step_cancels_everything_waiting_on_it() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let mut registry = Registry::default();
    registry.register("up", spec(), |_: &ClaimedJob, _: &_| Outcome::dead("broken"));
    registry.register("down", spec(), |_: &ClaimedJob, _: &_| Outcome::done(json!({})));
    let up = queue.enqueue(NewJob::new("up", json!({}), 1).lane("s").unique("up:s", UniqueScope::Waiting)).unwrap();
    let mid = queue
        .enqueue(NewJob::new("down", json!({}), 3).lane("s").unique("mid:s", UniqueScope::Waiting).depends_on([up.id]));
    let mid = mid.unwrap().id;
    let end = queue.enqueue(NewJob::new("down", json!({}), 3).lane("s").depends_on([mid])).unwrap().id;
    let _runner = queue.start_runner(threads(1), registry).unwrap();
    wait_state(&queue, end, JobState::Held);
    assert_eq!(state(&queue, mid), JobState::Held);
    let cancelled = queue.cancel(vec![up.id]).unwrap();
    assert_eq!(cancelled, [up.id, mid, end]);
    let end = queue.get(end).unwrap().unwrap();
    assert_eq!(end.state, JobState::Cancelled);
    assert!(end.last_error.unwrap().contains(&format!("depends on job {}", up.id)));
}

#[test]
fn a_waiting_job_absorbs_a_duplicate_only_if_it_already_depends_on_the_same_prerequisites() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let step = |kind: &str, after: &[&str]| {
        NewJob::new(kind, json!({}), 3)
            .lane("s")
            .unique(format!("{kind}:s"), UniqueScope::Waiting)
            .after_keys(after.iter().map(|k| format!("{k}:s")))
    };
    let up1 = queue.enqueue(step("up", &[])).unwrap();
    let down1 = queue.enqueue(step("down", &["up"])).unwrap();
    // A second request while both wait: both absorbed.
    assert!(queue.enqueue(step("up", &[])).unwrap().deduplicated);
    let again = queue.enqueue(step("down", &["up"])).unwrap();
    assert_eq!((again.id, again.deduplicated), (down1.id, true));
    // `up` ran meanwhile: a new `up` is queued, and `down` must follow the new one, not be
    // absorbed into the old `down`, which would run on the old output.
    queue
        .writer()
        .call(false, Durability::Durable, move |conn, now| {
            let claimed = store::claim(conn, 1, now, 60_000, None)?;
            assert_eq!(claimed[0].id, up1.id);
            store::complete_success(conn, up1.id, claimed[0].lease_token, None, true, now)?;
            Ok(())
        })
        .unwrap();
    let up2 = queue.enqueue(step("up", &[])).unwrap();
    assert!(!up2.deduplicated);
    let down2 = queue.enqueue(step("down", &["up"])).unwrap();
    assert!(!down2.deduplicated, "the old down does not depend on the new up");
    assert_eq!(queue.get(down2.id).unwrap().unwrap().depends_on, [up2.id]);
    assert!(up2.id < down2.id && down1.id < up2.id, "dependencies only ever point back in a lane");
}

/// A registry whose `call` kind needs the gate `remote`, version from `version`; the handler
/// answers what `answer` holds and counts its calls.
fn gated(calls: &Arc<AtomicUsize>, answer: &Arc<Mutex<&'static str>>, version: &Arc<Mutex<String>>) -> Registry {
    let mut registry = Registry::default();
    let (calls, answer) = (Arc::clone(calls), Arc::clone(answer));
    registry.register("call", spec(), move |_: &ClaimedJob, _: &_| {
        calls.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(30));
        match *answer.lock().unwrap() {
            "refuse" => Outcome::Refused { error: "not authorised: 401".into() },
            "fail" => Outcome::retry("503"),
            _ => Outcome::done(json!({})),
        }
    });
    let version = Arc::clone(version);
    registry.gate("remote", &["call"], move || version.lock().unwrap().clone());
    registry
}

fn calls_in_lanes(queue: &Queue, n: usize) -> Vec<JobId> {
    (0..n).map(|i| queue.enqueue(NewJob::new("call", json!({ "n": i }), 3).lane(format!("l{i}"))).unwrap().id).collect()
}

#[test]
fn a_refusal_pauses_the_gate_later_jobs_make_no_call_and_an_admin_resume_completes_them() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let calls = Arc::new(AtomicUsize::new(0));
    let answer = Arc::new(Mutex::new("refuse"));
    let version = Arc::new(Mutex::new("key-1".to_owned()));
    let ids = calls_in_lanes(&queue, 6);
    let _runner = queue.start_runner(threads(4), gated(&calls, &answer, &version)).unwrap();
    wait_for("five held, one dead", WAIT, || {
        let held = ids.iter().filter(|id| state(&queue, **id) == JobState::Held).count();
        held == 5 && ids.iter().any(|id| state(&queue, *id) == JobState::Dead)
    });
    assert_eq!(calls.load(Ordering::SeqCst), 1, "an unproven gate lets one job through; the refusal pauses it");
    let gate = &queue.gates().unwrap()[0];
    assert_eq!((gate.name.as_str(), gate.state, gate.held), ("remote", GateState::Paused, 5));
    let dead = *ids.iter().find(|id| state(&queue, **id) == JobState::Dead).unwrap();
    assert_eq!(queue.get(dead).unwrap().unwrap().refused_by_gate.as_deref(), Some("remote"));
    let held = queue.get(ids.iter().copied().find(|id| *id != dead).unwrap()).unwrap().unwrap();
    let waiting = held.waiting_on.unwrap();
    assert_eq!((waiting.gate.as_deref(), waiting.reason.as_deref()), (Some("remote"), Some("not authorised: 401")));

    *answer.lock().unwrap() = "ok";
    let resumed = queue.resume(Some("remote".into())).unwrap();
    assert_eq!((resumed.gates.len(), resumed.released, resumed.replayed.as_slice()), (1, 5, [dead].as_slice()));
    wait_for("all six", WAIT, || ids.iter().all(|id| state(&queue, *id) == JobState::Succeeded));
    assert_eq!(calls.load(Ordering::SeqCst), 7);
    assert_eq!(queue.gates().unwrap()[0].state, GateState::Open);
}

#[test]
fn new_credentials_resume_a_paused_gate_and_transient_failures_never_pause() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let calls = Arc::new(AtomicUsize::new(0));
    let answer = Arc::new(Mutex::new("fail"));
    let version = Arc::new(Mutex::new("key-1".to_owned()));
    let ids = calls_in_lanes(&queue, 2);
    let runner = queue.start_runner(threads(2), gated(&calls, &answer, &version)).unwrap();
    wait_for("transient failures", WAIT, || calls.load(Ordering::SeqCst) >= 2);
    assert!(queue.gates().unwrap().iter().all(|g| g.state != GateState::Paused), "a 503 never pauses");
    *answer.lock().unwrap() = "refuse";
    wait_for("a refusal", WAIT, || queue.gates().unwrap().iter().any(|g| g.state == GateState::Paused));
    wait_for("the other held", WAIT, || {
        ids.iter().filter(|id| state(&queue, **id) == JobState::Held).count()
            + ids.iter().filter(|id| state(&queue, **id) == JobState::Dead).count()
            == 2
    });
    // A restart under the same credentials keeps the pause (`start_runner` compares the
    // versions before it returns; the watchdog's later checks are driven turn by turn in
    // `queue::runner::tests`); new ones lift it.
    drop(runner);
    *answer.lock().unwrap() = "ok";
    let runner = queue.start_runner(threads(2), gated(&calls, &answer, &version)).unwrap();
    assert_eq!(queue.gates().unwrap()[0].state, GateState::Paused);
    drop(runner);
    *version.lock().unwrap() = "key-2".to_owned();
    let _runner = queue.start_runner(threads(2), gated(&calls, &answer, &version)).unwrap();
    wait_for("both done", WAIT, || ids.iter().all(|id| state(&queue, *id) == JobState::Succeeded));
}

#[test]
fn pruning_a_dead_prerequisite_cancels_what_still_waits_on_it() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let up = queue.enqueue(NewJob::new("up", json!({}), 1).lane("s")).unwrap().id;
    let down = queue.enqueue(NewJob::new("down", json!({}), 1).lane("s").depends_on([up])).unwrap().id;
    queue
        .writer()
        .call(false, Durability::Durable, move |conn, now| {
            let claimed = store::claim(conn, 1, now, 60_000, None)?;
            let dead = store::FailureDisposition::Dead;
            let failed = vibelearn::queue::job::AttemptOutcome::Failed;
            store::fail_attempt(conn, up, claimed[0].lease_token, failed, "x", dead, now - 10_000)?;
            assert!(store::claim(conn, 1, now, 60_000, None)?.is_empty(), "the dependent is held, not claimed");
            Ok(())
        })
        .unwrap();
    assert_eq!(state(&queue, down), JobState::Held);
    let pruned = queue.prune(store::Retention { succeeded_ms: 1, dead_ms: 1 }).unwrap();
    assert_eq!(pruned, 1, "the dead job");
    let (left, _) = queue.list(&ListFilter { limit: 10, ..Default::default() }).unwrap();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!((left[0].id, left[0].state), (down, JobState::Cancelled));
    assert!(left[0].last_error.as_deref().unwrap().contains("pruned"), "{left:?}");
}

#[test]
fn pruning_a_dead_prerequisite_cancels_its_dependents_transitively() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let up = queue.enqueue(NewJob::new("up", json!({}), 1).lane("s")).unwrap().id;
    let mid = queue.enqueue(NewJob::new("mid", json!({}), 1).lane("s").depends_on([up])).unwrap().id;
    let down = queue.enqueue(NewJob::new("down", json!({}), 1).lane("s").depends_on([mid])).unwrap().id;
    queue
        .writer()
        .call(false, Durability::Durable, move |conn, now| {
            let claimed = store::claim(conn, 1, now, 60_000, None)?;
            let dead = store::FailureDisposition::Dead;
            let failed = vibelearn::queue::job::AttemptOutcome::Failed;
            store::fail_attempt(conn, up, claimed[0].lease_token, failed, "x", dead, now - 10_000)?;
            // The claim holds `mid`; `down` waits on a held job and is held in turn.
            assert!(store::claim(conn, 1, now, 60_000, None)?.is_empty());
            Ok(())
        })
        .unwrap();
    assert_eq!((state(&queue, mid), state(&queue, down)), (JobState::Held, JobState::Held));
    assert_eq!(queue.prune(store::Retention { succeeded_ms: 1, dead_ms: 1 }).unwrap(), 1, "the dead job");
    for id in [mid, down] {
        let job = queue.get(id).unwrap().unwrap();
        assert_eq!(job.state, JobState::Cancelled, "job {id} could never run: {job:?}");
        assert!(job.last_error.as_deref().unwrap().contains("pruned"), "{job:?}");
    }
}

#[test]
fn a_paused_gate_that_no_kind_needs_any_more_resumes_at_start() {
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let calls = Arc::new(AtomicUsize::new(0));
    let answer = Arc::new(Mutex::new("refuse"));
    let version = Arc::new(Mutex::new("key-1".to_owned()));
    let ids = calls_in_lanes(&queue, 3);
    let runner = queue.start_runner(threads(2), gated(&calls, &answer, &version)).unwrap();
    wait_for("two held", WAIT, || ids.iter().filter(|id| state(&queue, **id) == JobState::Held).count() == 2);
    drop(runner);
    // The provider was switched (say, to offline): the kind needs no gate now.
    let mut registry = Registry::default();
    registry.register("call", spec(), |_: &ClaimedJob, _: &_| Outcome::done(json!({})));
    let _runner = queue.start_runner(threads(2), registry).unwrap();
    wait_for("all three", WAIT, || ids.iter().all(|id| state(&queue, *id) == JobState::Succeeded));
    assert_ne!(queue.gates().unwrap()[0].state, GateState::Paused);
}
