//! The queue's generic retry policy: exponential backoff with full jitter. What a remote's
//! answer means (retry, refused, permanent; `Retry-After`) is `crate::remote`'s business.

use std::time::Duration;

/// First retry waits up to this long.
pub const BACKOFF_BASE: Duration = Duration::from_secs(1);
/// No retry waits longer than this (SPEC §5.3).
pub const BACKOFF_CAP: Duration = Duration::from_secs(600);

/// The wait before attempt `failed_attempt + 1`: uniform in [0, min(cap, base·2^(n−1))]
/// ("full jitter": spreads a burst of failures instead of retrying them in lockstep).
/// `unit` is a number in [0, 1) supplied by the caller so the function stays pure.
pub fn backoff(failed_attempt: u32, unit: f64) -> Duration {
    let exponent = failed_attempt.saturating_sub(1).min(20);
    let ceiling = BACKOFF_BASE.saturating_mul(1u32 << exponent).min(BACKOFF_CAP);
    ceiling.mul_f64(unit.clamp(0.0, 1.0))
}

/// [`backoff`] with a random jitter.
pub fn backoff_jittered(failed_attempt: u32) -> Duration {
    backoff(failed_attempt, fastrand::f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        assert_eq!(backoff(1, 1.0), Duration::from_secs(1));
        assert_eq!(backoff(2, 1.0), Duration::from_secs(2));
        assert_eq!(backoff(4, 1.0), Duration::from_secs(8));
        assert_eq!(backoff(11, 1.0), BACKOFF_CAP);
        assert_eq!(backoff(200, 1.0), BACKOFF_CAP);
        assert_eq!(backoff(3, 0.5), Duration::from_secs(2));
        assert_eq!(backoff(3, 0.0), Duration::ZERO);
    }

    #[test]
    fn jitter_stays_within_the_ceiling() {
        for _ in 0..1000 {
            assert!(backoff_jittered(3) <= Duration::from_secs(4));
        }
    }
}
