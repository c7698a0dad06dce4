//! Retry policy: exponential backoff with full jitter, and the one place where a failure is
//! classified as transient (retry) or permanent (dead at once).

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

/// How a handler's failure should be treated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureClass {
    /// Worth another attempt (timeouts, connection errors, 408/429/5xx, SQLITE_BUSY).
    /// `retry_after` is the remote's own request, which overrides the backoff.
    Transient { retry_after: Option<Duration> },
    /// Will fail the same way again (bad payload, 400/401/403/404/422, schema violations).
    Permanent,
}

/// Classifies an HTTP status from a remote service (an LLM provider, the upstream server).
pub fn classify_http_status(status: u16, retry_after: Option<Duration>) -> FailureClass {
    match status {
        408 | 425 | 429 | 500..=599 => FailureClass::Transient { retry_after },
        _ => FailureClass::Permanent,
    }
}

/// Parses a `Retry-After` header given in seconds (the HTTP-date form is rare from APIs and
/// falls back to our own backoff). Capped at [`BACKOFF_CAP`] so a hostile value cannot park
/// a job for a year.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    if !secs.is_finite() || secs < 0.0 {
        return None;
    }
    Some(Duration::from_secs_f64(secs).min(BACKOFF_CAP))
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

    #[test]
    fn http_statuses_are_classified() {
        for transient in [408, 429, 500, 502, 503] {
            assert!(matches!(classify_http_status(transient, None), FailureClass::Transient { .. }));
        }
        for permanent in [400, 401, 403, 404, 422] {
            assert_eq!(classify_http_status(permanent, None), FailureClass::Permanent);
        }
    }

    #[test]
    fn retry_after_is_parsed_and_capped() {
        assert_eq!(parse_retry_after(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("99999"), Some(BACKOFF_CAP));
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }
}
