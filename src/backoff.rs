//! The probe back-off: how long to wait before trying again something that refused (a paused
//! provider, a `claude` CLI that is not logged in) — [`FIRST_PROBE`] after the first refusal,
//! twice as long after each try that fails, at most [`MAX_PROBE_INTERVAL`].
//!
//! One home for two users that must not depend on each other: the queue's re-probe of a paused
//! gate (`queue::runner::reprobe`) and the LLM layer's re-try of the `claude` CLI `auto` found
//! (`llm::probe`). It was first written inside the runner and `llm::probe` reached into it; the
//! queue is a library that knows nothing of LLMs, and the LLM layer should not know the
//! runner's insides, so the schedule sits below both and knows nothing of either. (The queue's
//! per-job retry back-off, with jitter, stays in `queue::retry`: it is the queue's own policy.)

use std::time::Duration;

/// The first probe, after a refusal: long enough that a user who is logging in meanwhile is
/// not raced, short enough that a first run is not left without an LLM for long.
pub const FIRST_PROBE: Duration = Duration::from_secs(5 * 60);

/// The longest wait between two probes: a refused probe costs one tiny request (no tokens
/// when the account is refused), so an hourly one is no burden and a fix is seen within it.
pub const MAX_PROBE_INTERVAL: Duration = Duration::from_secs(3600);

/// The wait before probe number `failed + 1`, when `failed` probes have failed since the
/// refusal: 5, 10, 20, 40, 60, 60, … minutes.
pub fn probe_backoff(failed: u32) -> Duration {
    FIRST_PROBE.saturating_mul(1u32 << failed.min(16)).min(MAX_PROBE_INTERVAL)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_back_off_starts_at_five_minutes_and_doubles_to_an_hour() {
        let waits: Vec<u64> = (0..7).map(|n| probe_backoff(n).as_secs() / 60).collect();
        assert_eq!(waits, [5, 10, 20, 40, 60, 60, 60]);
        assert_eq!(probe_backoff(u32::MAX), MAX_PROBE_INTERVAL);
    }
}
