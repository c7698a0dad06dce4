//! The HTTP transport shared by the remote providers: one POST of a JSON body, with the call's
//! timeout, turned into either the parsed JSON answer or a classified [`LlmError`].
//!
//! Each provider file only builds its request body and reads its own answer shape; status codes,
//! `Retry-After`, transport failures and unparseable bodies are classified here, once, so the
//! four HTTP providers cannot drift apart.
//!
//! # Classification
//! - 2xx: the body must parse as JSON. A body that does not (cut mid-way, or an HTML page from a
//!   proxy) is **Transient**: with a 200 the likeliest cause is a connection dropped mid-body,
//!   and a retry costs one more call, while calling it permanent would kill the job for a
//!   network blip. Valid JSON of the wrong shape is the provider file's call (Permanent).
//! - 401/403: Auth. So is any status whose explanation says the account cannot be used as it
//!   is — no credit (Anthropic's 400, OpenRouter's 402), a spent quota (OpenAI's 429
//!   `insufficient_quota`), a model the account does not know (404): the provider pauses like
//!   after a 401 instead of retrying to dead (SPEC §6.5).
//! - 408/425/429/5xx: Transient with `Retry-After`. Other statuses: Permanent.
//! - Transport: a host that cannot be reached at all — its name does not resolve, the
//!   connection is refused, the network is down, TLS cannot be set up — is **Unreachable**: the
//!   provider pauses and is probed on the back-off (issue 42; six retries used to burn out in
//!   13 seconds, and the dead job said nothing `vl status` showed). So is a connection or a name
//!   lookup that does not complete within [`CONNECT_TIMEOUT`]. Other timeouts and connections
//!   cut mid-way are Transient (the host is there, a retry may well pass); a bad URL or header
//!   is Permanent (a configuration mistake no retry fixes).
//!
//! Redirects are not followed (`max_redirects(0)`): these are POST APIs that never redirect,
//! and following one would resend the API key to wherever it pointed.

use std::time::Duration;

use super::LlmError;
use super::error::clip;
use crate::remote::{StatusClass, classify_status as class_of, parse_retry_after};

/// Bound on the connect phase, inside the call's own timeout. A host that does not accept a TCP
/// connection in 10 s is down; failing early lets the retry (with backoff) come sooner than
/// waiting out the whole call budget (50 s by default). 10 s still covers a slow TLS handshake.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest answer body read. A completion of a few thousand tokens is tens of kilobytes; the
/// cap only stops a misbehaving server from filling memory.
const MAX_BODY_BYTES: u64 = 8 * 1024 * 1024;

/// How much of an error body goes into a message: enough for the provider's explanation.
const ERROR_SNIPPET_CHARS: usize = 300;

/// Who is calling, for messages: the provider's name and the setting that holds its key.
#[derive(Clone, Copy)]
pub(super) struct Caller {
    pub name: &'static str,
    pub key_setting: &'static str,
    /// The setting of its endpoint, named when it cannot be reached.
    pub base_url_setting: &'static str,
}

/// One agent per provider: it keeps the connection pool (and TLS sessions) across calls; the
/// timeouts are set per request because each call brings its own.
pub(super) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .max_redirects_will_error(false)
        .user_agent(concat!("vibelearn/", env!("CARGO_PKG_VERSION")))
        .build()
        .new_agent()
}

/// POSTs `body` as JSON to `url` and returns the parsed JSON of a 2xx answer.
pub(super) fn post_json(
    agent: &ureq::Agent,
    caller: Caller,
    url: &str,
    headers: &[(&str, &str)],
    body: &serde_json::Value,
    timeout: Duration,
) -> Result<serde_json::Value, LlmError> {
    let mut request = agent
        .post(url)
        .config()
        .timeout_global(Some(timeout))
        .timeout_connect(Some(CONNECT_TIMEOUT.min(timeout)))
        .build()
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.send(body.to_string()).map_err(|e| transport_error(caller, &e, timeout))?;

    let status = response.status().as_u16();
    let now = crate::clock::system().now_ms();
    let retry_after =
        response.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| parse_retry_after(v, now));
    let bytes = response.body_mut().with_config().limit(MAX_BODY_BYTES).read_to_vec();

    if (200..300).contains(&status) {
        let bytes = bytes.map_err(|e| transport_error(caller, &e, timeout))?;
        return serde_json::from_slice(&bytes).map_err(|e| {
            LlmError::transient(format!(
                "{}: the answer (HTTP {status}) is not complete JSON ({e}); the connection may \
                 have been cut",
                caller.name
            ))
        });
    }
    // The body of an error answer only adds detail; failing to read it changes nothing.
    let detail = bytes.map(|b| error_detail(&b)).unwrap_or_default();
    Err(classify_status(caller, status, &detail, retry_after))
}

/// Sorts a non-2xx status into the three classes (SPEC §5.3).
fn classify_status(caller: Caller, status: u16, detail: &str, retry_after: Option<Duration>) -> LlmError {
    let name = caller.name;
    if !matches!(class_of(status), StatusClass::Refused | StatusClass::Success)
        && (status == 402
            || (status == 404 && detail.to_lowercase().contains("model"))
            || super::command::account_problem(detail))
    {
        return LlmError::Auth(format!(
            "{name} refused this account's request (HTTP {status}): {detail}; check its plan, credit and \
             model setting, and {}",
            caller.key_setting
        ));
    }
    match class_of(status) {
        StatusClass::Refused => LlmError::Auth(format!(
            "{name} rejected the credentials (HTTP {status}): {detail}; check {}",
            caller.key_setting
        )),
        StatusClass::Transient => {
            LlmError::Transient { message: format!("{name} answered HTTP {status}: {detail}"), retry_after }
        }
        StatusClass::Redirect => {
            LlmError::Permanent(format!("{name} answered with a redirect (HTTP {status}); check its base URL setting"))
        }
        StatusClass::Success | StatusClass::Permanent => {
            LlmError::Permanent(format!("{name} answered HTTP {status}: {detail}"))
        }
    }
}

/// The provider's own explanation from an error body: `error.message` (Anthropic, OpenAI,
/// OpenRouter and Gemini all use it), else `message`, else the start of the raw text.
fn error_detail(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let json: Option<serde_json::Value> = serde_json::from_str(&text).ok();
    let message = json.as_ref().and_then(|j| {
        j.pointer("/error/message")
            .or_else(|| j.get("message"))
            .or_else(|| j.get("error").filter(|e| e.is_string()))
            .and_then(|m| m.as_str())
    });
    let detail = clip(message.unwrap_or(&text), ERROR_SNIPPET_CHARS);
    if detail.is_empty() { "(empty body)".to_string() } else { detail }
}

/// Classifies a failure before a complete answer arrived.
fn transport_error(caller: Caller, error: &ureq::Error, timeout: Duration) -> LlmError {
    let name = caller.name;
    match error {
        ureq::Error::Timeout(_) if !unreachable(error) => {
            LlmError::transient(format!("{name}: no complete answer within {:.1} s (timeout)", timeout.as_secs_f64()))
        }
        ureq::Error::Io(e) if e.kind() == std::io::ErrorKind::TimedOut => {
            LlmError::transient(format!("{name}: no complete answer within {:.1} s (timeout)", timeout.as_secs_f64()))
        }
        ureq::Error::BadUri(_)
        | ureq::Error::Http(_)
        | ureq::Error::InvalidProxyUrl
        | ureq::Error::RequireHttpsOnly(_) => {
            LlmError::Permanent(format!("{name}: the request could not be built: {error}"))
        }
        _ if unreachable(error) => LlmError::Unreachable(format!(
            "{name} cannot be reached: {error}; check the network (and {}, if you set it)",
            caller.base_url_setting
        )),
        // Connections reset or cut short, protocol errors: things a later attempt may not meet.
        _ => LlmError::transient(format!("{name}: request failed: {error}")),
    }
}

/// Whether `error` says the host could not be reached at all (no answer was begun): DNS,
/// a refused or unroutable connection, TLS set-up. TLS certificate errors count: behind a
/// captive portal or a broken proxy no retry within seconds passes either, and the probe
/// sees the fix.
fn unreachable(error: &ureq::Error) -> bool {
    use std::io::ErrorKind::{AddrNotAvailable, ConnectionRefused, HostUnreachable, NetworkDown, NetworkUnreachable};
    match error {
        // No TCP connection within CONNECT_TIMEOUT, or no name within it: a host that is down.
        ureq::Error::Timeout(ureq::Timeout::Connect | ureq::Timeout::Resolve) => true,
        ureq::Error::HostNotFound
        | ureq::Error::ConnectionFailed
        | ureq::Error::ConnectProxyFailed(_)
        | ureq::Error::Tls(_)
        | ureq::Error::TlsRequired
        | ureq::Error::Pem(_)
        | ureq::Error::Rustls(_) => true,
        ureq::Error::Io(e) => {
            matches!(
                e.kind(),
                ConnectionRefused | NetworkUnreachable | HostUnreachable | NetworkDown | AddrNotAvailable
            ) || e.raw_os_error().is_some_and(|code| WINDOWS_NAME_ERRORS.contains(&code))
                || unresolved(&e.to_string())
        }
        _ => false,
    }
}

/// Winsock's codes for a name that does not resolve (WSAHOST_NOT_FOUND, WSATRY_AGAIN,
/// WSANO_DATA), which std maps to no error kind; no Unix errno has these values, so the check
/// needs no platform switch.
const WINDOWS_NAME_ERRORS: [i32; 3] = [11001, 11002, 11004];

/// The system resolver's words for a name that does not resolve (std gives no error kind).
fn unresolved(message: &str) -> bool {
    let message = message.to_lowercase();
    [
        "failed to lookup address",
        "name or service not known",
        "nodename nor servname",
        "no such host is known",
        "host not found",
    ]
    .iter()
    .any(|said| message.contains(said))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CALLER: Caller = Caller { name: "p", key_setting: "P_KEY", base_url_setting: "P_BASE_URL" };

    #[test]
    fn statuses_map_to_classes() {
        let class = |s| match classify_status(CALLER, s, "d", None) {
            LlmError::Transient { .. } => "transient",
            LlmError::Auth(_) => "auth",
            LlmError::Unreachable(_) => "unreachable",
            LlmError::Permanent(_) => "permanent",
        };
        for s in [408, 425, 429, 500, 502, 503, 529] {
            assert_eq!(class(s), "transient", "{s}");
        }
        for s in [401, 403] {
            assert_eq!(class(s), "auth", "{s}");
        }
        for s in [301, 400, 404, 413, 422] {
            assert_eq!(class(s), "permanent", "{s}");
        }
    }

    #[test]
    fn an_account_that_cannot_be_used_is_refused_like_a_401() {
        let auth = |status, detail| matches!(classify_status(CALLER, status, detail, None), LlmError::Auth(_));
        assert!(auth(400, "Your credit balance is too low to access the Anthropic API."));
        assert!(auth(402, "Insufficient credits"));
        assert!(auth(429, "You exceeded your current quota, please check your plan and billing details."));
        assert!(auth(404, "model: claude-nope"));
        assert!(auth(404, "The model `gpt-nope` does not exist or you do not have access to it."));
        assert!(!auth(429, "Rate limit reached for requests"));
        assert!(!auth(400, "messages: field required"));
        assert!(!auth(503, "overloaded"));
        assert!(!auth(404, "Not Found"), "a wrong base URL is a setting mistake, not the account");
    }

    #[test]
    fn error_detail_prefers_the_provider_message() {
        assert_eq!(error_detail(br#"{"error":{"message":"slow down"}}"#), "slow down");
        assert_eq!(error_detail(br#"{"error":"nope"}"#), "nope");
        assert_eq!(error_detail(b"<html>bad gateway</html>"), "<html>bad gateway</html>");
        assert_eq!(error_detail(b""), "(empty body)");
    }
}
