//! Time as an input, and its one text format. Every state change takes `now` from a
//! [`Clock`], so tests can freeze and advance time instead of sleeping, and SQL never calls its
//! own clock; deadlines use a [`Monotonic`] clock; [`format_utc`] is how a time is written.

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

/// `2026-11-29T13:25:34.123Z` from ms since the epoch (civil-from-days, proleptic Gregorian).
/// A duration in whole milliseconds as the `i64` the database keeps, saturating at `i64::MAX`
/// (an `as` cast would wrap a huge one negative).
pub fn millis(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

pub fn format_utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Days since 1970-01-01 → (year, month, day). Howard Hinnant's algorithm.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_timestamps() {
        assert_eq!(format_utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_utc(1_795_958_734_123), "2026-11-29T13:25:34.123Z");
        assert_eq!(format_utc(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }
}
