//! `LlmError`: the one place a provider failure is classified (SPEC §5.3).
//!
//! The job runner only asks "retry, pause the provider, or give up?", so every failure is
//! sorted into exactly one of three variants here, at the edge where the cause is still known,
//! instead of being re-guessed from message text later.

use std::fmt;
use std::time::Duration;

/// A failed completion, already classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LlmError {
    /// Worth retrying with backoff: timeouts, connection errors, HTTP 408/425/429/5xx, a body
    /// cut short, a command that failed or hung. `retry_after` is the server's `Retry-After`
    /// (seconds or HTTP-date, capped at [`crate::remote::MAX_RETRY_AFTER`]); the runner
    /// prefers it to its own backoff.
    Transient { message: String, retry_after: Option<Duration> },
    /// HTTP 401/403. The message names the provider and the setting holding its key; the
    /// runner pauses that provider's jobs until a later success.
    Auth(String),
    /// The provider's host could not be reached at all: its name did not resolve, the
    /// connection was refused, the network is down, or TLS could not be set up. Not worth a
    /// job's retries (they would all fail within seconds): the runner pauses the provider as
    /// for [`LlmError::Auth`] and probes it on the back-off until it answers (SPEC §6.5).
    Unreachable(String),
    /// Retrying cannot help: other 4xx (400/404/422…), an answer with no text, a body that is
    /// valid JSON but not the provider's shape, a misconfigured URL or command.
    Permanent(String),
}

impl LlmError {
    pub(super) fn transient(message: impl Into<String>) -> Self {
        LlmError::Transient { message: message.into(), retry_after: None }
    }

    /// Replaces every occurrence of `secret` in the message. Applied once per call by each
    /// provider to whatever error it returns, so no path (a server echoing the key, a header
    /// error) can leak the key into logs or `last_error`.
    pub(super) fn redact(self, secret: &str) -> Self {
        let clean = |m: String| {
            if secret.len() < 4 { m } else { m.replace(secret, "[redacted]") }
        };
        match self {
            LlmError::Transient { message, retry_after } => {
                LlmError::Transient { message: clean(message), retry_after }
            }
            LlmError::Auth(m) => LlmError::Auth(clean(m)),
            LlmError::Unreachable(m) => LlmError::Unreachable(clean(m)),
            LlmError::Permanent(m) => LlmError::Permanent(clean(m)),
        }
    }
}

impl fmt::Display for LlmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LlmError::Transient { message, retry_after: Some(wait) } => {
                write!(f, "{message} (retry after {} s)", wait.as_secs())
            }
            LlmError::Transient { message, retry_after: None } => f.write_str(message),
            LlmError::Auth(m) | LlmError::Unreachable(m) | LlmError::Permanent(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for LlmError {}

/// Shortens text for an error message, on a char boundary, marking the cut.
pub(super) fn clip(text: &str, max_chars: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_hides_the_secret_in_every_variant() {
        let e = LlmError::Auth("bad key sk-secret-123".into()).redact("sk-secret-123");
        assert_eq!(e, LlmError::Auth("bad key [redacted]".into()));
        let e = LlmError::transient("x sk-secret-123").redact("sk-secret-123");
        assert!(!e.to_string().contains("sk-secret"));
    }

    #[test]
    fn clip_cuts_on_char_boundaries() {
        assert_eq!(clip("héllo", 2), "hé…");
        assert_eq!(clip("  ok  ", 10), "ok");
    }
}
