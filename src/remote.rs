//! How an answer from a remote service — an LLM provider or the upstream sync server — is
//! classified, in one place for every caller (SPEC §5.3): which HTTP statuses are worth a
//! retry, which mean "your credentials were refused", and how long a `Retry-After` asks us to
//! wait. The queue keeps only its generic backoff (`queue::retry`); what a status *means* is
//! knowledge about remotes, so it lives here, outside the queue.

use std::time::{Duration, SystemTime};

use crate::clock::Millis;
use crate::queue::retry::BACKOFF_CAP;

/// What an HTTP status from a remote means for the job that made the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusClass {
    /// 2xx.
    Success,
    /// 401/403: the credentials were refused; the remote's gate pauses.
    Refused,
    /// 408/425/429/5xx: try again later (honouring `Retry-After`).
    Transient,
    /// 3xx: a redirect we do not follow; the base URL setting is wrong.
    Redirect,
    /// Any other status: the same request will fail the same way (400, 404, 422, …).
    Permanent,
}

pub fn classify_status(status: u16) -> StatusClass {
    match status {
        200..=299 => StatusClass::Success,
        401 | 403 => StatusClass::Refused,
        408 | 425 | 429 | 500..=599 => StatusClass::Transient,
        300..=399 => StatusClass::Redirect,
        _ => StatusClass::Permanent,
    }
}

/// The longest `Retry-After` honoured: the backoff cap. Some servers send hours on quota
/// exhaustion, and a hostile one any number at all; one job is never parked longer than a
/// backoff could park it.
pub const MAX_RETRY_AFTER: Duration = BACKOFF_CAP;

/// Parses a `Retry-After` value: delay-seconds (`120`, also `1.5`) or an HTTP-date
/// (`Wed, 21 Oct 2015 07:28:00 GMT`, as `now` is on the wall clock), clamped to
/// [`MAX_RETRY_AFTER`]. A date in the past means "now" (zero). Anything else — negative,
/// not a number, not a date — is `None`, and the caller's own backoff applies. Never panics,
/// whatever the value (`1e30` is just "the cap").
pub fn parse_retry_after(value: &str, now: Millis) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        if !secs.is_finite() || secs < 0.0 {
            return None;
        }
        // Compared as seconds before converting: `Duration::from_secs_f64` panics past ~5.8e11 years.
        return Some(if secs >= MAX_RETRY_AFTER.as_secs_f64() {
            MAX_RETRY_AFTER
        } else {
            Duration::from_secs_f64(secs)
        });
    }
    let at = httpdate::parse_http_date(value).ok()?;
    let now = SystemTime::UNIX_EPOCH + Duration::from_millis(now.max(0) as u64);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO).min(MAX_RETRY_AFTER))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2015-10-21T07:28:00Z in ms.
    const BACK_TO_THE_FUTURE: Millis = 1_445_412_480_000;

    #[test]
    fn statuses_are_classified_once_for_every_remote() {
        assert_eq!(classify_status(204), StatusClass::Success);
        for refused in [401, 403] {
            assert_eq!(classify_status(refused), StatusClass::Refused);
        }
        for transient in [408, 425, 429, 500, 502, 503, 599] {
            assert_eq!(classify_status(transient), StatusClass::Transient, "{transient}");
        }
        assert_eq!(classify_status(301), StatusClass::Redirect);
        for permanent in [400, 404, 405, 409, 422, 0, 999] {
            assert_eq!(classify_status(permanent), StatusClass::Permanent, "{permanent}");
        }
    }

    #[test]
    fn retry_after_seconds_are_parsed_and_capped_without_panicking() {
        assert_eq!(parse_retry_after(" 7 ", 0), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after("1.5", 0), Some(Duration::from_millis(1500)));
        assert_eq!(parse_retry_after("86400", 0), Some(MAX_RETRY_AFTER));
        assert_eq!(parse_retry_after("100000000000000000000", 0), Some(MAX_RETRY_AFTER));
        assert_eq!(parse_retry_after("1e308", 0), Some(MAX_RETRY_AFTER));
        for bad in ["-1", "NaN", "inf", "soon", ""] {
            assert_eq!(parse_retry_after(bad, 0), None, "{bad:?}");
        }
    }

    #[test]
    fn retry_after_dates_count_from_now() {
        let date = "Wed, 21 Oct 2015 07:28:00 GMT";
        assert_eq!(parse_retry_after(date, BACK_TO_THE_FUTURE - 30_000), Some(Duration::from_secs(30)));
        assert_eq!(parse_retry_after(date, BACK_TO_THE_FUTURE + 5_000), Some(Duration::ZERO), "a past date: now");
        assert_eq!(parse_retry_after(date, 0), Some(MAX_RETRY_AFTER), "decades ahead: the cap");
        // The two obsolete forms HTTP/1.1 still asks recipients to accept.
        assert_eq!(
            parse_retry_after("Wednesday, 21-Oct-15 07:28:00 GMT", BACK_TO_THE_FUTURE - 1_000),
            Some(Duration::from_secs(1))
        );
        assert_eq!(
            parse_retry_after("Wed Oct 21 07:28:00 2015", BACK_TO_THE_FUTURE - 2_000),
            Some(Duration::from_secs(2))
        );
    }
}
