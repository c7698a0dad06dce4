//! The worker's proof that it is the user's worker (SPEC §4, "the port"), and the dashboard's
//! one-time codes (SPEC §4, "the dashboard").
//!
//! # The proof
//! A port on 127.0.0.1 is first come, first served: after a reboot any local process may take
//! the worker's port before the worker does. So before a hook or the CLI sends the key, the
//! admin token or an event, it sends `GET /api/proof?nonce=<hex>` — a fresh random nonce and
//! nothing secret — and the worker answers `{"proof": hex(HMAC-SHA256(key, CONTEXT || nonce ||
//! port))}` under the user key. The client computes the same and compares in constant time
//! ([`crate::worker_protocol::verify`]). Then it sends its real requests on the *same* TCP connection (keep-alive), so
//! what it proved is the listener it is talking to. The port is inside the MAC: a squatter on
//! port P that relays the nonce to the real worker on port Q gets a proof for Q, which a
//! client of P refuses. The route is public (it has to be: the client has not yet decided to
//! send the key) and answers nothing but the MAC of a nonce the caller chose, which reveals
//! nothing of the key.
//!
//! # Dashboard codes
//! `vl dashboard` asks (with the key, over a proven connection) for a code: 32 random bytes as
//! hex, valid once and for [`CODE_TTL`]. The page it opens exchanges the code for the key
//! (`POST /api/dashboard/exchange`), so what the browser's history and its argv hold is a code
//! that no longer opens anything.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::http::error::{ApiError, json_response};
use crate::http::server::{ApiRequest, AppContext, ok};
use crate::http::wire::Response;
use crate::worker_protocol::prove;

/// How long a dashboard code stays valid.
pub const CODE_TTL: Duration = Duration::from_secs(60);

/// Most codes outstanding at once; the oldest goes first (a user opening the dashboard twice
/// in a minute is the common case, a thousand times is not).
const MAX_CODES: usize = 16;

/// `GET /api/proof?nonce=<hex>`.
pub fn answer(ctx: &AppContext, req: &ApiRequest<'_>) -> Result<Response, ApiError> {
    let nonce = req.param("nonce").and_then(|n| hex::decode(n).ok()).filter(|n| (16..=64).contains(&n.len()));
    let Some(nonce) = nonce else {
        return Err(ApiError::bad_request("`nonce` must be 16 to 64 bytes as hex"));
    };
    Ok(ok(json!({ "proof": prove(&ctx.user_key, &nonce, ctx.port) })))
}

/// The dashboard's outstanding one-time codes, each with when it was issued. A Mutex: any
/// request thread may issue or redeem one, and both are a few comparisons.
#[derive(Debug, Default)]
pub struct DashboardCodes {
    codes: Mutex<Vec<(String, Instant)>>,
}

impl DashboardCodes {
    /// A new code, valid once within [`CODE_TTL`] of `now`.
    pub fn issue(&self, now: Instant) -> Result<String, getrandom::Error> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)?;
        let code = hex::encode(bytes);
        let mut codes = self.codes.lock().unwrap_or_else(|p| p.into_inner());
        codes.retain(|(_, at)| now.duration_since(*at) < CODE_TTL);
        if codes.len() >= MAX_CODES {
            codes.remove(0);
        }
        codes.push((code.clone(), now));
        Ok(code)
    }

    /// Whether `code` was issued, unused and unexpired at `now`; it is spent either way.
    pub fn redeem(&self, code: &str, now: Instant) -> bool {
        let mut codes = self.codes.lock().unwrap_or_else(|p| p.into_inner());
        codes.retain(|(_, at)| now.duration_since(*at) < CODE_TTL);
        // Every outstanding code is compared whole, so the time taken says nothing of a prefix.
        let found = codes.iter().position(|(c, _)| constant_time_eq(c.as_bytes(), code.as_bytes()));
        found.map(|i| codes.remove(i)).is_some()
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `POST /api/dashboard/code` (with the key): a one-time code for the page.
pub fn issue_code(ctx: &AppContext) -> Result<Response, ApiError> {
    let code = ctx
        .dashboard_codes
        .issue(Instant::now())
        .map_err(|e| ApiError::new(503, "no_randomness", format!("cannot read the OS random source: {e}")))?;
    Ok(ok(json!({ "code": code, "expires_in_s": CODE_TTL.as_secs() })))
}

/// `POST /api/dashboard/exchange` `{"code": …}` (public): the key, once, for a valid code.
pub fn exchange_code(ctx: &AppContext, req: &ApiRequest<'_>) -> Result<Response, ApiError> {
    let code = req.body.get("code").and_then(|c| c.as_str()).unwrap_or_default();
    if code.is_empty() || !ctx.dashboard_codes.redeem(code, Instant::now()) {
        return Err(ApiError::new(
            401,
            "unauthorized",
            "this dashboard code is used or expired; run `vl dashboard` again to open the page",
        ));
    }
    Ok(json_response(200, &json!({ "key": ctx.user_key })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_opens_once_and_only_within_its_minute() {
        let codes = DashboardCodes::default();
        let t0 = Instant::now();
        let code = codes.issue(t0).unwrap();
        assert_eq!(code.len(), 64);
        assert!(!codes.redeem("not-it", t0));
        assert!(codes.redeem(&code, t0 + Duration::from_secs(1)));
        assert!(!codes.redeem(&code, t0 + Duration::from_secs(2)), "used once");
        let late = codes.issue(t0).unwrap();
        assert!(!codes.redeem(&late, t0 + CODE_TTL), "expired");
    }
}
