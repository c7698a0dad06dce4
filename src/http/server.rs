//! The HTTP server: rouille on a bounded thread pool, the Origin/Host/token guards, body
//! limits, per-route metrics, and the accept loop with its stop protocol.
//!
//! # Tail latency
//! rouille's `Server::new` hands every request to a fresh thread and tiny_http reads each
//! connection on its own task-pool thread. We bound the request pool (`pool_size`) and keep
//! handlers short (they only validate and wait for one group commit), and we answer every
//! request with an explicit `Content-Length`, so a keep-alive client never waits for a close
//! to learn where a response ends. See the README's "HTTP tail latency" note for what was
//! measured.
//!
//! # Stop protocol
//! [`HttpServer::stop`]: from then on every new request is answered at once with 503
//! `shutting_down` and `Connection: close`; requests already inside a handler finish (waited
//! for up to [`STOP_GRACE`]); then the accept loop is told to end. rouille's poll loop only
//! returns after a quiet gap, which a client polling the worker may never leave, so the loop
//! thread is joined only if it ends promptly — otherwise it is left to the process exit.

use std::collections::BTreeMap;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rouille::{Request, Response};
use serde_json::Value;

use super::error::{ApiError, json_response};
use super::routes;
use crate::config::Config;
use crate::intake::IntakeSettings;
use crate::queue::runner::RunnerProbe;
use crate::queue::Queue;

/// Request bodies above this are refused with 413 (SPEC §4).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// Request-handling threads. Handlers mostly wait on the writer's commit, so a few more than
/// the cores keep the writer's batches full without letting a flood pile up threads.
pub const HTTP_POOL_SIZE: usize = 16;

/// Everything the routes need, shared by all request threads.
pub struct AppContext {
    pub config: Config,
    pub queue: Queue,
    pub intake: IntakeSettings,
    pub admin_token: String,
    pub started: Instant,
    /// Set once the runner is up and migrations ran; read by `/api/readiness`.
    pub ready: AtomicBool,
    /// The runner's live state, once it runs.
    pub runner: Mutex<Option<RunnerProbe>>,
    /// Fired by `POST /api/admin/shutdown`; the worker's main loop waits on it.
    pub shutdown: crossbeam_channel::Sender<()>,
    /// HTTP requests by (route, status), for `/metrics`.
    pub http_counts: Mutex<BTreeMap<(&'static str, u16), u64>>,
    /// Bound port, for the Host guard.
    pub port: u16,
    /// Whether the last write probe succeeded, and when it ran (cached for a second).
    pub write_probe: Mutex<Option<(Instant, bool)>>,
}

/// A request after the guards: what routes look at.
pub struct ApiRequest<'a> {
    pub raw: &'a Request,
    /// The URL path without the query string.
    pub path: String,
    /// The parsed JSON body; `Value::Null` when the body was empty.
    pub body: Value,
    pub authorized: bool,
}

impl ApiRequest<'_> {
    /// The path's non-empty segments.
    pub fn segments(&self) -> Vec<&str> {
        self.path.split('/').filter(|s| !s.is_empty()).collect()
    }

    pub fn method(&self) -> &str {
        self.raw.method()
    }

    pub fn param(&self, name: &str) -> Option<String> {
        self.raw.get_param(name).filter(|v| !v.is_empty())
    }

    /// Admin mutations need the bearer token (SPEC §4).
    pub fn require_admin(&self) -> Result<(), ApiError> {
        if self.authorized {
            Ok(())
        } else {
            Err(ApiError::new(
                403,
                "forbidden",
                "this admin action needs `Authorization: Bearer <contents of <data>/admin.token>`",
            ))
        }
    }
}

/// How long [`HttpServer::stop`] waits for requests already being handled.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// Shared between the accept loop, the handler threads and [`HttpServer::stop`].
#[derive(Default)]
struct Lifecycle {
    /// Set by `stop`; read by every request.
    stopping: AtomicBool,
    /// Requests inside a handler; written by handler threads, read by `stop`.
    in_flight: std::sync::atomic::AtomicUsize,
}

/// The running server.
pub struct HttpServer {
    lifecycle: Arc<Lifecycle>,
    join: Option<JoinHandle<()>>,
    pub addr: SocketAddr,
}

impl HttpServer {
    /// Binds `addr` and starts serving. A port in use is reported as such.
    pub fn start(addr: &str, ctx: Arc<AppContext>) -> Result<HttpServer, String> {
        let handler_ctx = Arc::clone(&ctx);
        let lifecycle = Arc::new(Lifecycle::default());
        let handler_lifecycle = Arc::clone(&lifecycle);
        let server = rouille::Server::new(addr, move |request| {
            if handler_lifecycle.stopping.load(Ordering::SeqCst) {
                return ApiError::new(503, "shutting_down", "the worker is shutting down").into_response().with_additional_header("Connection", "close");
            }
            handler_lifecycle.in_flight.fetch_add(1, Ordering::SeqCst);
            let response = handle(&handler_ctx, request);
            handler_lifecycle.in_flight.fetch_sub(1, Ordering::SeqCst);
            response
        })
            .map_err(|e| {
                let text = e.to_string();
                if text.contains("in use") {
                    format!("cannot listen on {addr}: the port is already used by another program; \
                             set VIBELEARN_WORKER_PORT to a free port")
                } else {
                    format!("cannot listen on {addr}: {text}")
                }
            })?
            .pool_size(HTTP_POOL_SIZE);
        let bound = server.server_addr();
        let loop_lifecycle = Arc::clone(&lifecycle);
        let join = std::thread::Builder::new()
            .name("vl-http".into())
            .spawn(move || {
                while !loop_lifecycle.stopping.load(Ordering::SeqCst) {
                    server.poll_timeout(Duration::from_millis(50));
                }
            })
            .map_err(|e| format!("cannot start the HTTP thread: {e}"))?;
        Ok(HttpServer { lifecycle, join: Some(join), addr: bound })
    }

    /// The stop protocol of the module doc.
    pub fn stop(&mut self) {
        self.lifecycle.stopping.store(true, Ordering::SeqCst);
        let deadline = Instant::now() + STOP_GRACE;
        while self.lifecycle.in_flight.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        if let Some(join) = self.join.take() {
            let loop_ended = Instant::now() + Duration::from_millis(500);
            while !join.is_finished() && Instant::now() < loop_ended {
                std::thread::sleep(Duration::from_millis(5));
            }
            if join.is_finished() {
                let _ = join.join();
            }
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn handle(ctx: &AppContext, request: &Request) -> Response {
    let (route, result) = match guard_and_parse(ctx, request) {
        Ok(api) => routes::dispatch(ctx, &api),
        Err(e) => ("guard", Err(e)),
    };
    let response = match result {
        Ok(response) => response,
        Err(e) => {
            if e.status >= 500 {
                log::warn!(target: "http", "{} {} -> {}: {}", request.method(), request.url(), e.status, e.message);
            }
            e.into_response()
        }
    };
    let mut counts = ctx.http_counts.lock().unwrap_or_else(|p| p.into_inner());
    *counts.entry((route, response.status_code)).or_default() += 1;
    response
}

/// The guards of SPEC §4, then the body: size, type, JSON.
fn guard_and_parse<'a>(ctx: &AppContext, request: &'a Request) -> Result<ApiRequest<'a>, ApiError> {
    check_host(request.header("Host"), ctx.port)?;
    if let Some(origin) = request.header("Origin") {
        if !is_local_origin(origin) {
            return Err(ApiError::forbidden(format!("requests from the origin {origin:?} are not allowed")));
        }
    }
    let authorized = request
        .header("Authorization")
        .and_then(|h| h.strip_prefix("Bearer "))
        .is_some_and(|token| constant_time_eq(token.trim().as_bytes(), ctx.admin_token.as_bytes()));
    let body = read_json_body(request)?;
    Ok(ApiRequest { raw: request, path: request.url(), body, authorized })
}

fn check_host(host: Option<&str>, port: u16) -> Result<(), ApiError> {
    let host = host.ok_or_else(|| ApiError::forbidden("the request has no Host header"))?;
    let (name, host_port) = match host.rsplit_once(':') {
        Some((name, p)) if !name.ends_with(':') && !p.contains(']') => (name, Some(p)),
        _ => (host, None),
    };
    let local = matches!(name.to_ascii_lowercase().as_str(), "localhost" | "127.0.0.1" | "[::1]");
    let port_ok = host_port.is_none_or(|p| p.parse::<u16>().ok() == Some(port));
    if local && port_ok {
        Ok(())
    } else {
        Err(ApiError::forbidden(format!(
            "the Host {host:?} is not this worker; only localhost and 127.0.0.1 are served"
        )))
    }
}

fn is_local_origin(origin: &str) -> bool {
    let Some(rest) = origin.strip_prefix("http://") else { return false };
    let name = rest.split(':').next().unwrap_or("");
    let port = rest.strip_prefix(name).unwrap_or("");
    matches!(name, "localhost" | "127.0.0.1") && (port.is_empty() || port[1..].chars().all(|c| c.is_ascii_digit()))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn read_json_body(request: &Request) -> Result<Value, ApiError> {
    let too_large = || ApiError::new(413, "payload_too_large", format!("the request body is over {} bytes", MAX_BODY_BYTES));
    if let Some(length) = request.header("Content-Length").and_then(|l| l.trim().parse::<usize>().ok()) {
        if length > MAX_BODY_BYTES {
            return Err(too_large());
        }
    }
    let mut bytes = Vec::new();
    if let Some(data) = request.data() {
        data.take(MAX_BODY_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| ApiError::bad_request(format!("the request body could not be read: {e}")))?;
    }
    if bytes.len() > MAX_BODY_BYTES {
        return Err(too_large());
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    let content_type = request.header("Content-Type").unwrap_or("");
    if !content_type.trim().to_ascii_lowercase().starts_with("application/json") {
        return Err(ApiError::new(415, "unsupported_media_type", "send the body as Content-Type: application/json"));
    }
    serde_json::from_slice(&bytes).map_err(|e| ApiError::bad_request(format!("the body is not valid JSON: {e}")))
}

/// A JSON response with status 200.
pub fn ok(body: Value) -> Response {
    json_response(200, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_local_with_our_port_only() {
        assert!(check_host(Some("127.0.0.1:37778"), 37778).is_ok());
        assert!(check_host(Some("localhost:37778"), 37778).is_ok());
        assert!(check_host(Some("localhost"), 37778).is_ok());
        assert!(check_host(Some("[::1]:37778"), 37778).is_ok());
        assert!(check_host(Some("evil.example:37778"), 37778).is_err());
        assert!(check_host(Some("127.0.0.1:80"), 37778).is_err());
        assert!(check_host(None, 37778).is_err());
    }

    #[test]
    fn origins_must_be_local_http() {
        assert!(is_local_origin("http://localhost:3000"));
        assert!(is_local_origin("http://127.0.0.1"));
        assert!(!is_local_origin("https://localhost:3000"));
        assert!(!is_local_origin("http://localhost.evil.example"));
        assert!(!is_local_origin("http://evil.example"));
        assert!(!is_local_origin("null"));
    }
}
