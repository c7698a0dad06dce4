//! Time as an input. Every state change takes `now` from a [`Clock`], so tests can freeze and
//! advance time instead of sleeping, and SQL never calls its own clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, the unit of every timestamp in the database.
pub type Millis = i64;

/// A source of the current time.
pub trait Clock: Send + Sync {
    fn now_ms(&self) -> Millis;
}

/// The wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> Millis {
        // A clock before 1970 is a broken machine, not a user error; 0 keeps arithmetic sane.
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as Millis).unwrap_or(0)
    }
}

/// A clock that only moves when told to; for tests of backoff, leases and retention.
#[derive(Debug, Default)]
pub struct ManualClock {
    now: AtomicI64,
}

impl ManualClock {
    pub fn new(start: Millis) -> Arc<ManualClock> {
        Arc::new(ManualClock { now: AtomicI64::new(start) })
    }

    pub fn advance(&self, by: Millis) {
        self.now.fetch_add(by, Ordering::SeqCst);
    }

    pub fn set(&self, to: Millis) {
        self.now.store(to, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> Millis {
        self.now.load(Ordering::SeqCst)
    }
}

/// Shared handle passed to every component.
pub type SharedClock = Arc<dyn Clock>;

/// The wall clock as a shared handle.
pub fn system() -> SharedClock {
    Arc::new(SystemClock)
}

/// A monotonic clock: deadlines, timeouts, heartbeats and liveness are measured on it, never
/// on the wall clock (which jumps). Injected into the runner so its components can be driven
/// by a test without sleeping.
pub trait Monotonic: Send + Sync {
    fn now(&self) -> std::time::Instant;
}

/// `Instant::now()`.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemMonotonic;

impl Monotonic for SystemMonotonic {
    fn now(&self) -> std::time::Instant {
        std::time::Instant::now()
    }
}

/// A monotonic clock that only moves when told to (tests of timeouts and heartbeats).
#[derive(Debug)]
pub struct ManualMonotonic {
    start: std::time::Instant,
    /// Nanoseconds advanced since `start`.
    offset_ns: std::sync::atomic::AtomicU64,
}

impl ManualMonotonic {
    pub fn new() -> Arc<ManualMonotonic> {
        Arc::new(ManualMonotonic { start: std::time::Instant::now(), offset_ns: std::sync::atomic::AtomicU64::new(0) })
    }

    pub fn advance(&self, by: std::time::Duration) {
        self.offset_ns.fetch_add(by.as_nanos() as u64, Ordering::SeqCst);
    }
}

impl Monotonic for ManualMonotonic {
    fn now(&self) -> std::time::Instant {
        self.start + std::time::Duration::from_nanos(self.offset_ns.load(Ordering::SeqCst))
    }
}

/// Shared handle to a monotonic clock.
pub type SharedMonotonic = Arc<dyn Monotonic>;
