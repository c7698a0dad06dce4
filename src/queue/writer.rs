//! The writer thread: the only connection that writes, and the group-commit protocol.
//!
//! # Protocol
//! 1. Block until one [`Request`] arrives; then drain up to [`WriterConfig::max_batch`] − 1
//!    more that are already waiting (never wait for more: a lone request commits at once).
//! 2. `BEGIN IMMEDIATE`; run each request so that a request that fails is rolled back alone
//!    and the others still commit: inside its own `SAVEPOINT` once the transaction holds
//!    another request's work, and before that by rolling back and beginning again.
//!    After each request, check that the transaction is still open
//!    (`sqlite3_get_autocommit`): after SQLITE_FULL, SQLITE_IOERR or SQLITE_NOMEM, SQLite may
//!    have rolled the *whole* transaction back, not only the failed statement. Then the work
//!    of every request run so far in it is gone: answer those requests with the failure at
//!    once (never "committed"), and begin a new transaction for the rest of the batch — never
//!    run the rest in autocommit mode, where each would commit alone and the final `COMMIT`
//!    would then report committed work as failed.
//! 3. `COMMIT` — one fsync for the whole batch under `synchronous=FULL`; this is how many
//!    concurrent enqueuers go past the disk's fsync rate.
//! 4. Only then answer each request (its reply carries its own result), or, if `BEGIN` or
//!    `COMMIT` failed, answer every request of the batch with that error.
//! 5. If any request of the batch may have made work claimable, wake the dispatcher.
//!
//! The backlog is bounded ([`WriterConfig::capacity`]); a sender that cannot get in within
//! [`WriterConfig::send_timeout`] gets [`QueueError::Full`] instead of waiting forever.
//!
//! # Ownership
//! The `Connection` lives on this thread only. Senders hold a [`WriterHandle`] (a channel
//! sender, cheap to clone). The thread ends after a [`WriterHandle::stop`] (checkpointing
//! first) or when every handle is dropped.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, bounded};
use rusqlite::Connection;

use super::QueueError;
use crate::clock::{Millis, SharedClock};
use crate::db::Synchronous;

/// Default bound on requests waiting for the writer.
pub const DEFAULT_CAPACITY: usize = 8192;
/// Default number of requests committed together at most. Measured: beyond a few hundred the
/// transaction gets long enough to hurt the latency of the first request in it.
pub const DEFAULT_MAX_BATCH: usize = 512;
/// How long a sender waits for room in a full backlog before giving up.
pub const DEFAULT_SEND_TIMEOUT: Duration = Duration::from_secs(2);

/// Batches slower than this are logged: they are what a client sees as a stall.
const SLOW_BATCH: Duration = Duration::from_millis(100);

/// Settings of the writer thread.
#[derive(Debug, Clone)]
pub struct WriterConfig {
    /// Bound of the request channel.
    pub capacity: usize,
    /// Requests per transaction at most.
    pub max_batch: usize,
    /// Wait for room in the channel before [`QueueError::Full`].
    pub send_timeout: Duration,
}

impl Default for WriterConfig {
    fn default() -> Self {
        WriterConfig { capacity: DEFAULT_CAPACITY, max_batch: DEFAULT_MAX_BATCH, send_timeout: DEFAULT_SEND_TIMEOUT }
    }
}

/// Called after the commit with the commit's outcome; sends the request's reply.
type Responder = Box<dyn FnOnce(Result<(), QueueError>) + Send>;

/// One unit of work for the writer: runs inside the batch transaction (first in it, or in a
/// savepoint) and returns its failure (`None`: it succeeded) plus how to answer once the batch
/// is committed. Given an `Err` (the transaction or savepoint could not start) it runs nothing
/// and answers with it.
type Work = Box<dyn FnOnce(Result<&Connection, QueueError>, Millis) -> (Option<QueueError>, Responder) + Send>;

enum Request {
    Work {
        work: Work,
        wakes: bool,
        durability: Durability,
    },
    /// Checkpoint the WAL and end the thread; answered when done.
    Stop(Sender<()>),
}

/// A wake-up signal for the dispatcher: a channel of capacity one, so any number of commits
/// between two dispatcher turns coalesce into one wake-up.
#[derive(Clone)]
pub struct Waker {
    tx: Sender<()>,
    rx: Receiver<()>,
}

impl Default for Waker {
    fn default() -> Self {
        let (tx, rx) = bounded(1);
        Waker { tx, rx }
    }
}

impl Waker {
    pub fn wake(&self) {
        let _ = self.tx.try_send(());
    }

    /// The receiving side, for `select!`/`recv_timeout` in the dispatcher.
    pub fn receiver(&self) -> &Receiver<()> {
        &self.rx
    }
}

/// Whether a request's commit must reach the disk before it is answered.
///
/// Under WAL, `synchronous=NORMAL` still survives any *process* crash (the WAL is in the OS
/// cache); only an OS crash or power loss can drop the last commits. Enqueues and admin
/// changes promise more than that, so they are [`Durable`](Durability::Durable) (the
/// configured level, FULL by default). Claims, heartbeats and completions are
/// [`Relaxed`](Durability::Relaxed): losing one to power loss means a job runs again, which
/// at-least-once execution with keyed effects already allows. A batch is committed with
/// NORMAL only when every request in it is relaxed; measured here, fsync costs ~4 ms, so this
/// is what lets claims and completions run at thousands per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    Durable,
    Relaxed,
}

/// Sending side of the writer; clone it freely.
#[derive(Clone)]
pub struct WriterHandle {
    tx: Sender<Request>,
    send_timeout: Duration,
}

impl WriterHandle {
    /// Runs `op` in the writer's next transaction and returns its result once committed.
    /// `wakes`: the op may make jobs claimable (enqueue, completion, replay…).
    pub fn call<T, F>(&self, wakes: bool, durability: Durability, op: F) -> Result<T, QueueError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, Millis) -> Result<T, QueueError> + Send + 'static,
    {
        let (reply_tx, reply_rx) = super::oneshot::channel();
        let work: Work = Box::new(move |conn, now| {
            let outcome = conn.and_then(|conn| op(conn, now));
            let failure = outcome.as_ref().err().cloned();
            let responder: Responder = Box::new(move |commit| {
                reply_tx.send(commit.and(outcome));
            });
            (failure, responder)
        });
        self.send(Request::Work { work, wakes, durability })?;
        reply_rx.recv().ok_or(QueueError::WriterGone)?
    }

    /// Like [`call`](Self::call) but does not wait for the commit (heartbeats, completions
    /// whose thread has nothing to do with the answer). Errors are logged by the writer.
    pub fn submit<F>(&self, wakes: bool, durability: Durability, op: F) -> Result<(), QueueError>
    where
        F: FnOnce(&Connection, Millis) -> Result<(), QueueError> + Send + 'static,
    {
        self.submit_or(wakes, durability, op, |_| {})
    }

    /// [`submit`](Self::submit), and if the write fails (the op, or the batch's commit),
    /// `on_failure` runs on the writer thread after it is logged: keep it short.
    pub fn submit_or<F, G>(&self, wakes: bool, durability: Durability, op: F, on_failure: G) -> Result<(), QueueError>
    where
        F: FnOnce(&Connection, Millis) -> Result<(), QueueError> + Send + 'static,
        G: FnOnce(QueueError) + Send + 'static,
    {
        self.submit_then(wakes, durability, op, |outcome| {
            if let Err(e) = outcome {
                on_failure(e);
            }
        })
    }

    /// [`submit`](Self::submit), then `then` runs on the writer thread with the write's
    /// outcome once it is known (committed, or failed and logged): keep it short.
    pub fn submit_then<F, G>(&self, wakes: bool, durability: Durability, op: F, then: G) -> Result<(), QueueError>
    where
        F: FnOnce(&Connection, Millis) -> Result<(), QueueError> + Send + 'static,
        G: FnOnce(Result<(), QueueError>) + Send + 'static,
    {
        let work: Work = Box::new(move |conn, now| {
            let outcome = conn.and_then(|conn| op(conn, now));
            let failure = outcome.as_ref().err().cloned();
            let responder: Responder = Box::new(move |commit| {
                let outcome = commit.and(outcome);
                if let Err(e) = &outcome {
                    log::warn!(target: "queue", "background write failed: {e}");
                }
                then(outcome);
            });
            (failure, responder)
        });
        self.send(Request::Work { work, wakes, durability })
    }

    /// Asks the writer to checkpoint and stop after the requests already queued; waits.
    pub fn stop(&self) {
        let (tx, rx) = bounded(1);
        if self.tx.send(Request::Stop(tx)).is_ok() {
            let _ = rx.recv();
        }
    }

    fn send(&self, request: Request) -> Result<(), QueueError> {
        use crossbeam_channel::SendTimeoutError;
        match self.tx.send_timeout(request, self.send_timeout) {
            Ok(()) => Ok(()),
            Err(SendTimeoutError::Timeout(_)) => Err(QueueError::Full),
            Err(SendTimeoutError::Disconnected(_)) => Err(QueueError::WriterGone),
        }
    }
}

/// Starts the writer thread on `conn`. Joining the returned handle waits for it to end.
pub fn spawn(
    conn: Connection,
    synchronous: Synchronous,
    config: WriterConfig,
    clock: SharedClock,
    waker: Waker,
) -> std::io::Result<(WriterHandle, JoinHandle<()>)> {
    let (tx, rx) = bounded(config.capacity.max(1));
    let handle = WriterHandle { tx, send_timeout: config.send_timeout };
    let join = std::thread::Builder::new()
        .name("vl-writer".into())
        .spawn(move || run(conn, synchronous, rx, config.max_batch.max(1), clock, waker))?;
    Ok((handle, join))
}

fn run(
    conn: Connection,
    synchronous: Synchronous,
    rx: Receiver<Request>,
    max_batch: usize,
    clock: SharedClock,
    waker: Waker,
) {
    let mut stop_reply = None;
    let mut current_level = synchronous;
    while stop_reply.is_none() {
        let Ok(first) = rx.recv() else { break };
        let mut batch = Vec::with_capacity(16);
        let mut wakes = false;
        let mut durable = false;
        let mut next = Some(first);
        while let Some(request) = next.take() {
            match request {
                Request::Work { work, wakes: w, durability } => {
                    wakes |= w;
                    durable |= durability == Durability::Durable;
                    batch.push(work);
                }
                Request::Stop(reply) => {
                    stop_reply = Some(reply);
                    break;
                }
            }
            if batch.len() < max_batch {
                next = rx.try_recv().ok();
            }
        }
        if !batch.is_empty() {
            let level = if durable { synchronous } else { Synchronous::Normal };
            if level != current_level {
                match conn.pragma_update(None, "synchronous", level.as_str()) {
                    Ok(()) => current_level = level,
                    Err(e) => log::warn!(target: "queue", "cannot set synchronous={}: {e}", level.as_str()),
                }
            }
            let started = std::time::Instant::now();
            let size = batch.len();
            run_batch(&conn, batch, clock.now_ms());
            let took = started.elapsed();
            if took > SLOW_BATCH {
                log::warn!(target: "queue", "a write batch of {size} took {} ms (durable: {durable})", took.as_millis());
            }
            if wakes {
                waker.wake();
            }
        }
    }
    if let Err(e) = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);") {
        log::warn!(target: "queue", "WAL checkpoint at shutdown failed: {e}");
    }
    drop(conn);
    if let Some(reply) = stop_reply {
        let _ = reply.send(());
    }
}

/// Steps 2–4 of the protocol for one batch.
///
/// A request runs in a savepoint only once the transaction holds another request's work.
/// Until then a failure is undone by rolling the whole transaction back and beginning again,
/// which leaves exactly what a savepoint would: nothing. This spares most requests their
/// savepoint, whose journal copies every page the request touches (measured: ~10 % of a
/// lone enqueue's CPU), while a batch's later requests still fail alone.
fn run_batch(conn: &Connection, batch: Vec<Work>, now: Millis) {
    let mut works = batch.into_iter();
    // Requests whose work is in the open transaction: answered with the commit's outcome.
    let mut pending: Vec<Responder> = Vec::with_capacity(works.len());
    // Requests that failed, their work undone: answered `Ok` (the commit is nothing to them),
    // so that each reports its own error.
    let mut settled: Vec<Responder> = Vec::new();
    if let Err(error) = begin(conn) {
        answer_unstarted(works, &error, now);
        return;
    }
    let counting = CountCheck::start(conn);
    while let Some(work) = works.next() {
        let in_savepoint = !pending.is_empty();
        let (failure, responder) = if in_savepoint {
            run_in_savepoint(conn, work, now, &counting)
        } else {
            run_caught(conn, work, now, &counting)
        };
        let open = !conn.is_autocommit();
        match failure {
            None if open => pending.extend(responder),
            Some(_) if open && in_savepoint => settled.extend(responder),
            failure => {
                let lost_with_it = if open {
                    // It failed first in the transaction, with no savepoint: roll back.
                    let _ = exec_cached(conn, "ROLLBACK");
                    None
                } else {
                    // SQLite rolled the whole transaction back (or the request ended it).
                    let cause = failure.clone().unwrap_or_else(transaction_ended);
                    log::warn!(
                        target: "queue",
                        "a write request ended the batch's transaction ({cause}); the {} requests before it in the \
                         transaction are answered as failed and the rest run in a new one",
                        pending.len()
                    );
                    for lost in pending.drain(..) {
                        lost(Err(cause.clone()));
                    }
                    Some(cause)
                };
                match (failure, lost_with_it, responder) {
                    (Some(_), _, responder) => settled.extend(responder),
                    // It reported success, yet its transaction is gone: nothing was committed.
                    (None, Some(cause), Some(responder)) => responder(Err(cause)),
                    _ => {}
                }
                if let Err(error) = begin(conn) {
                    answer_unstarted(works, &error, now);
                    for responder in settled {
                        responder(Ok(()));
                    }
                    return;
                }
            }
        }
    }
    let commit = exec_cached(conn, "COMMIT").map_err(QueueError::from);
    if commit.is_err() && !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    for responder in pending {
        responder(commit.clone());
    }
    for responder in settled {
        responder(Ok(()));
    }
}

/// The failure given to requests whose work was lost with a transaction that a request ended
/// without reporting an error of its own.
fn transaction_ended() -> QueueError {
    QueueError::Database(std::sync::Arc::new(rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ABORT),
        Some("the write batch's transaction ended before its commit; nothing of this request was stored".into()),
    )))
}

fn begin(conn: &Connection) -> Result<(), QueueError> {
    exec_cached(conn, "BEGIN IMMEDIATE").map_err(|e| {
        let error = QueueError::from(e);
        log::warn!(target: "queue", "write batch could not start: {error}");
        error
    })
}

/// Answers requests that never ran with the reason: nothing of theirs is reported committed.
fn answer_unstarted(works: impl Iterator<Item = Work>, error: &QueueError, now: Millis) {
    for work in works {
        let (_, responder) = work(Err(error.clone()), now);
        responder(Ok(()));
    }
}

/// Runs one request in its own savepoint, so that its failure (or panic) undoes its work alone.
/// (After an error that rolled the whole transaction back, the savepoint is gone with it and
/// its `ROLLBACK TO` fails; the caller sees that the transaction is no longer open.)
fn run_in_savepoint(
    conn: &Connection,
    work: Work,
    now: Millis,
    counting: &CountCheck,
) -> (Option<QueueError>, Option<Responder>) {
    if let Err(e) = exec_cached(conn, "SAVEPOINT op") {
        let error = QueueError::from(e);
        let (_, responder) = work(Err(error.clone()), now);
        return (Some(error), Some(responder));
    }
    let (failure, responder) = run_caught(conn, work, now, counting);
    let _ = if failure.is_none() {
        exec_cached(conn, "RELEASE op")
    } else {
        conn.execute_batch("ROLLBACK TO op; RELEASE op")
    };
    (failure, responder)
}

/// Runs one request; its failure, and its responder unless it panicked (the reply sender went
/// down with the panicking closure, so its caller gets `WriterGone`-style disconnection). The
/// caller undoes what a failed or panicked request wrote.
fn run_caught(
    conn: &Connection,
    work: Work,
    now: Millis,
    counting: &CountCheck,
) -> (Option<QueueError>, Option<Responder>) {
    let ran = || {
        let changes = conn.total_changes();
        let ran = work(Ok(conn), now);
        if ran.0.is_none() && conn.total_changes() != changes {
            counting.verify(conn);
        }
        ran
    };
    match catch_unwind(AssertUnwindSafe(ran)) {
        Ok((failure, responder)) => (failure, Some(responder)),
        Err(_) => {
            log::error!(target: "queue", "a write operation panicked; rolled back alone");
            (Some(QueueError::Rejected("a write operation panicked".into())), None)
        }
    }
}

/// Debug builds: the stats counters' reconciliation. The counters have two sources of truth —
/// triggers for most moves, `queue::counts` for the hot ones (insert, claim, success) — so a
/// new statement that makes a hot move without counting it would skew the stats silently.
/// Here, every request that wrote something must leave `job_counts`' disagreement with the
/// jobs ([`counts::drift`](super::counts::drift)) as it found it; one that does not panics (a
/// broken invariant), which rolls it back alone and fails its caller, and says which counts
/// it skewed. Release builds compile this to nothing.
struct CountCheck {
    #[cfg(debug_assertions)]
    baseline: Option<std::collections::BTreeMap<(String, String), i64>>,
}

impl CountCheck {
    /// The disagreement at the start of a transaction (none if the tables are not there).
    fn start(_conn: &Connection) -> CountCheck {
        CountCheck {
            #[cfg(debug_assertions)]
            baseline: super::counts::drift(_conn).ok(),
        }
    }

    /// Panics if the disagreement changed. Requests that fail are rolled back, so the
    /// baseline holds for the whole transaction.
    fn verify(&self, _conn: &Connection) {
        #[cfg(debug_assertions)]
        if let (Some(baseline), Ok(now)) = (&self.baseline, super::counts::drift(_conn)) {
            assert!(
                &now == baseline,
                "uncounted move: a write request changed jobs' states without counting them in job_counts \
                 (counted minus there, per kind and state: before {baseline:?}, after {now:?}); a statement making \
                 a move the triggers leave out (insert, available → running, running → succeeded) must count it \
                 through queue::counts"
            );
        }
    }
}

/// Runs a statement that returns no rows through the statement cache: the transaction and
/// savepoint statements run for every request, and `execute_batch` would parse them each time
/// (measured: SQL parsing was a visible share of the writer's CPU).
pub(crate) fn exec_cached(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Synchronous;

    /// One way a request can end.
    #[derive(Clone, Copy)]
    enum Ends {
        Commits,
        Fails,
        Panics,
        /// Fails with a real SQLITE_FULL (see [`fill_the_disk`]).
        FillsTheDisk,
    }

    /// Makes the database full for one statement: `max_page_count` (SQLite's own size limit)
    /// set to the pages it has, then a row too big for them. SQLite answers SQLITE_FULL from
    /// the pager, exactly as for a full disk, and — the statement being a plain one-row insert,
    /// with no statement journal — rolls back the *whole* transaction. Chosen over a full
    /// tmpfs (needs root to mount; the fault suite does that with a real worker) and over a
    /// fault-injecting VFS (more code than the fault it injects).
    fn fill_the_disk(conn: &Connection) -> Result<(), QueueError> {
        let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
        conn.pragma_update(None, "max_page_count", pages)?;
        let full = conn.execute("INSERT INTO written (name) VALUES (?1)", ["x".repeat(256 * 1024)]);
        conn.pragma_update(None, "max_page_count", 1_073_741_823)?;
        let error = full.expect_err("the row cannot fit");
        assert_eq!(error.sqlite_error_code(), Some(rusqlite::ErrorCode::DiskFull), "{error}");
        Err(error.into())
    }

    /// A request that writes `name`, then ends as told; the failures it reports go to `failed`.
    fn submit(writer: &WriterHandle, name: &'static str, ends: Ends, failed: &Sender<&'static str>) {
        let failed = failed.clone();
        let op = move |conn: &Connection, _| {
            conn.execute("INSERT INTO written (name) VALUES (?1)", [name])?;
            match ends {
                Ends::Commits => Ok(()),
                Ends::Fails => Err(QueueError::Rejected(format!("{name} failed"))),
                Ends::Panics => panic!("{name} panicked"),
                Ends::FillsTheDisk => fill_the_disk(conn),
            }
        };
        writer.submit_or(false, Durability::Relaxed, op, move |_| failed.send(name).unwrap()).unwrap();
    }

    /// Requests queued while the writer is busy form one batch: a held request keeps the
    /// writer inside its own batch until every request of the next one is queued.
    fn run_one_batch(requests: &[(&'static str, Ends)]) -> (Vec<String>, Vec<&'static str>) {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::open_and_migrate(&dir.path().join("w.db"), Synchronous::Normal).unwrap();
        conn.execute_batch("CREATE TABLE written (name TEXT NOT NULL)").unwrap();
        let (writer, join) =
            spawn(conn, Synchronous::Normal, WriterConfig::default(), crate::clock::system(), Waker::default())
                .unwrap();
        let (started_tx, started) = bounded::<()>(1);
        let (release, held) = bounded::<()>(1);
        writer
            .submit(false, Durability::Relaxed, move |_, _| {
                started_tx.send(()).unwrap();
                held.recv().unwrap();
                Ok(())
            })
            .unwrap();
        started.recv().unwrap();
        let (failed_tx, failed_rx) = crossbeam_channel::unbounded();
        for &(name, ends) in requests {
            submit(&writer, name, ends, &failed_tx);
        }
        release.send(()).unwrap();
        let written = writer
            .call(false, Durability::Relaxed, |conn, _| {
                let mut stmt = conn.prepare("SELECT name FROM written ORDER BY rowid")?;
                Ok(stmt.query_map([], |r| r.get(0))?.collect::<Result<Vec<String>, _>>()?)
            })
            .unwrap();
        writer.stop();
        join.join().unwrap();
        drop(failed_tx);
        (written, failed_rx.iter().collect())
    }

    #[test]
    fn a_failing_or_panicking_request_is_rolled_back_alone_wherever_it_is_in_its_batch() {
        use Ends::*;
        // First in the batch (no savepoint yet: the transaction is rolled back and begun again).
        let (written, failed) =
            run_one_batch(&[("a", Fails), ("b", Panics), ("c", Commits), ("d", Fails), ("e", Commits)]);
        assert_eq!(written, ["c", "e"]);
        assert_eq!(failed, ["a", "d"]);
        // After a success (in savepoints), and a batch where everything fails.
        let (written, failed) = run_one_batch(&[("a", Commits), ("b", Panics), ("c", Fails), ("d", Commits)]);
        assert_eq!((written, failed), (vec!["a".to_owned(), "d".to_owned()], vec!["c"]));
        let (written, failed) = run_one_batch(&[("a", Fails), ("b", Panics), ("c", Fails)]);
        assert_eq!((written, failed), (Vec::<String>::new(), vec!["a", "c"]));
    }

    /// Debug builds: a request that moves a job without counting the move (here, available →
    /// running, which no trigger counts) fails and is rolled back; the same move counted
    /// commits.
    #[cfg(debug_assertions)]
    #[test]
    fn a_request_that_makes_an_uncounted_move_fails_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::open_and_migrate(&dir.path().join("w.db"), Synchronous::Normal).unwrap();
        let (writer, join) =
            spawn(conn, Synchronous::Normal, WriterConfig::default(), crate::clock::system(), Waker::default())
                .unwrap();
        let job = crate::queue::NewJob::new("k", serde_json::json!({}), 3).prepare();
        let id = writer
            .call(true, Durability::Durable, move |conn, now| Ok(crate::queue::store::enqueue(conn, job, now)?.id));
        let id = id.expect("a counted insert commits");
        let state = |writer: &WriterHandle| {
            writer
                .call(false, Durability::Relaxed, move |conn, _| {
                    Ok(conn.query_row("SELECT state FROM jobs WHERE id = ?1", [id], |r| r.get::<_, String>(0))?)
                })
                .unwrap()
        };
        let uncounted = writer.call(false, Durability::Relaxed, move |conn, _| {
            conn.execute("UPDATE jobs SET state = 'running' WHERE id = ?1", [id])?;
            Ok(())
        });
        assert!(uncounted.is_err(), "an uncounted move must fail its request");
        assert_eq!(state(&writer), "available", "and be rolled back");
        let counted = writer.call(false, Durability::Relaxed, move |conn, _| {
            conn.execute("UPDATE jobs SET state = 'running' WHERE id = ?1", [id])?;
            crate::queue::counts::claimed(conn, "k", 1)?;
            Ok(())
        });
        assert!(counted.is_ok(), "{counted:?}");
        assert_eq!(state(&writer), "running");
        writer.stop();
        join.join().unwrap();
    }

    #[test]
    fn after_sqlite_rolls_the_whole_transaction_back_every_waiter_hears_the_truth() {
        use Ends::*;
        // `full` rolls back the transaction that holds `a` and `b`: they are answered as
        // failed; `c` and `d` run in a new transaction, commit once, and are answered so.
        let (written, failed) =
            run_one_batch(&[("a", Commits), ("b", Commits), ("full", FillsTheDisk), ("c", Commits), ("d", Commits)]);
        assert_eq!(written, ["c", "d"], "c and d are stored, once; a and b were rolled back");
        assert_eq!(failed, ["a", "b", "full"], "exactly the requests whose work is lost hear of a failure");
        // First in its transaction, and the whole batch after a success and a failure.
        let (written, failed) = run_one_batch(&[("full", FillsTheDisk), ("c", Commits)]);
        assert_eq!((written, failed), (vec!["c".to_owned()], vec!["full"]));
        let (written, failed) =
            run_one_batch(&[("a", Commits), ("x", Fails), ("full", FillsTheDisk), ("y", Fails), ("d", Commits)]);
        assert_eq!(written, ["d"]);
        assert_eq!(failed, ["a", "x", "full", "y"]);
    }
}
