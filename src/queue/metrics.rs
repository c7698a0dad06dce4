//! Counters the queue keeps for `/metrics`: jobs enqueued, completed, failed, dead and timed
//! out per kind, a duration histogram per kind, and enqueue→start latency.
//!
//! Written by the enqueue path and the job threads, read by the metrics route. One Mutex over
//! a small map: each update is a handful of integer additions, far below the cost of the job.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use super::runner::Outcome;

/// Upper bounds (seconds) of the duration histogram buckets.
pub const DURATION_BUCKETS: [f64; 10] = [0.001, 0.005, 0.025, 0.1, 0.5, 1.0, 5.0, 15.0, 60.0, 120.0];

/// Counters of one kind.
#[derive(Debug, Clone, Default)]
pub struct KindCounters {
    pub enqueued: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub dead: u64,
    pub timed_out: u64,
    /// Cumulative-free counts per bucket of [`DURATION_BUCKETS`], plus one for +Inf.
    pub duration_buckets: [u64; DURATION_BUCKETS.len() + 1],
    pub duration_sum_secs: f64,
    pub start_latency_sum_ms: i64,
    pub started: u64,
}

/// The queue's counters.
#[derive(Debug, Default)]
pub struct QueueMetrics {
    kinds: Mutex<BTreeMap<String, KindCounters>>,
}

impl QueueMetrics {
    fn update(&self, kind: &str, f: impl FnOnce(&mut KindCounters)) {
        let mut kinds = self.kinds.lock().unwrap_or_else(|p| p.into_inner());
        match kinds.get_mut(kind) {
            Some(counters) => f(counters),
            None => f(kinds.entry(kind.to_owned()).or_default()),
        }
    }

    pub fn enqueued(&self, kind: &str) {
        self.update(kind, |c| c.enqueued += 1);
    }

    pub fn started(&self, kind: &str, latency_ms: i64) {
        self.update(kind, |c| {
            c.started += 1;
            c.start_latency_sum_ms += latency_ms.max(0);
        });
    }

    pub fn finished(&self, kind: &str, outcome: &Outcome, elapsed: Duration) {
        self.update(kind, |c| {
            match outcome {
                Outcome::Succeeded { .. } | Outcome::Unchanged { .. } => c.succeeded += 1,
                Outcome::Retry { .. } => c.failed += 1,
                Outcome::Dead { .. } | Outcome::Refused { .. } => c.dead += 1,
            }
            let secs = elapsed.as_secs_f64();
            let bucket = DURATION_BUCKETS.iter().position(|b| secs <= *b).unwrap_or(DURATION_BUCKETS.len());
            c.duration_buckets[bucket] += 1;
            c.duration_sum_secs += secs;
        });
    }

    pub fn timed_out(&self, kind: &str) {
        self.update(kind, |c| c.timed_out += 1);
    }

    pub fn snapshot(&self) -> BTreeMap<String, KindCounters> {
        self.kinds.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
