//! Helpers shared by the integration tests: temp databases, waiting on conditions.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use vibelearn::clock::{self, SharedClock};
use vibelearn::db::{self, Synchronous};
use vibelearn::queue::{Queue, QueueThread, WriterConfig};

/// A fresh directory removed at the end of the test.
pub struct TempDir(tempfile::TempDir);

impl TempDir {
    pub fn new() -> TempDir {
        TempDir(tempfile::tempdir().expect("create a temp dir"))
    }

    #[allow(dead_code)] // used by the worker and hook tests
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    pub fn db_path(&self) -> PathBuf {
        self.0.path().join("vibelearn.db")
    }
}

/// Opens (and migrates) a database in `dir` and starts a queue on it.
pub fn start_queue(dir: &TempDir) -> (Queue, QueueThread) {
    start_queue_with_clock(dir, clock::system())
}

pub fn start_queue_with_clock(dir: &TempDir, clock: SharedClock) -> (Queue, QueueThread) {
    let path = dir.db_path();
    let conn = db::open_and_migrate(&path, Synchronous::Normal).expect("open the database");
    Queue::start(conn, &path, Synchronous::Normal, WriterConfig::default(), clock).expect("start the queue")
}

/// Polls `condition` until it holds or `timeout` passes; panics with `what` on timeout.
pub fn wait_for(what: &str, timeout: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}
