//! The HTTP server: its shared context, the stop protocol, the Origin/Host/token guards, the
//! JSON body, per-route metrics. Accepting is in [`super::accept`], one connection's life in
//! [`super::connection`], the slot table in [`super::slots`], reading in [`super::reader`] and
//! [`super::head`]; [`super::wire`] says why this replaced rouille.
//!
//! # Threads
//! The accept thread takes connections and starts one thread per connection, up to
//! [`MAX_CONNECTIONS`]; at the cap the connection that has waited longest without a complete
//! request gives way ([`super::slots`]), so slow clients cannot lock others out and a flood
//! cannot pile up threads. Handlers are short: they validate and wait for one group commit.
//!
//! # Stop protocol
//! [`HttpServer::stop`]: from then on every new request is answered 503 `shutting_down` with
//! `Connection: close`; requests already inside a handler finish (waited for up to
//! [`STOP_GRACE`]); the accept thread is woken by a connection to itself and ends.

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::error::{ApiError, json_response};
use super::routes::table::{Access, Lookup, Route};
use super::routes::{self, table};
use super::slots::Slots;
use super::wire::{self, Request, Response};
use crate::config::Config;
use crate::intake::IntakeSettings;
use crate::queue::Queue;
use crate::queue::runner::RunnerProbe;

/// Request bodies above this are refused with 413 (SPEC §4).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// Connections served at once (a thread each). At the cap a newcomer evicts the connection
/// that has waited longest without a complete request ([`super::slots`]); only when every
/// one is inside a handler is it refused with 503. Hooks and the CLI use one connection per
/// call and the load test 64; 256 threads of 2 MiB virtual stack each stay well within memory.
pub const MAX_CONNECTIONS: usize = 256;

/// Everything the routes need, shared by all request threads.
pub struct AppContext {
    pub config: Config,
    pub queue: Queue,
    pub intake: IntakeSettings,
    /// The user key (`<data>/worker.key`): every route but health, readiness, version and the
    /// static page needs it (SPEC §4).
    pub user_key: String,
    /// The admin token (`<data>/admin.token`): admin mutations need it; it also opens every
    /// route the user key does.
    pub admin_token: String,
    /// `VIBELEARN_ACCEPT_UNKEYED_EVENTS`: session events without a key are let in (never reads).
    pub accept_unkeyed_events: bool,
    /// The LLM provider the worker's jobs use, described once at start (`/api/health`).
    pub provider: String,
    /// The worker's provider choice itself: its `claude` CLI check may end after start.
    pub llm_choice: crate::jobs::concepts::ProviderChoice,
    /// `VIBELEARN_LLM_DAILY_TOKENS` (0: none).
    pub daily_tokens: u64,
    pub started: Instant,
    /// Set once the runner is up and migrations ran; read by `/api/readiness`.
    pub ready: AtomicBool,
    /// The runner's live state, once it runs.
    pub runner: Mutex<Option<RunnerProbe>>,
    /// Fired by `POST /api/admin/shutdown`; the worker's main loop waits on it.
    pub shutdown: crossbeam_channel::Sender<()>,
    /// HTTP requests by (route, status), for `/metrics`.
    pub http_counts: Mutex<BTreeMap<(&'static str, u16), u64>>,
    /// Connections closed to admit a new one at the connection cap, for `/metrics`.
    pub evictions: AtomicU64,
    /// Bound port, for the Host guard.
    pub port: u16,
    /// Whether the last write probe succeeded, and when it ran (cached for a second).
    pub write_probe: Arc<Mutex<WriteProbe>>,
    /// The dashboard's outstanding one-time codes.
    pub dashboard_codes: super::routes::proof::DashboardCodes,
}

/// The health check's view of whether the database takes writes. Written by the probe thread
/// and by `/api/health` (starting a probe); a Mutex because both do.
#[derive(Debug, Clone, Copy)]
pub struct WriteProbe {
    /// The last probe's result (assumed true before the first one ends).
    pub writable: bool,
    pub checked_at: Option<Instant>,
    /// When the outstanding probe started, if one is running.
    pub in_flight: Option<Instant>,
}

impl Default for WriteProbe {
    fn default() -> Self {
        WriteProbe { writable: true, checked_at: None, in_flight: None }
    }
}

/// What a request's `Authorization: Bearer …` proved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    /// No `Authorization` header.
    None,
    /// A header whose token is neither the user key nor the admin token.
    Wrong,
    /// The user key.
    User,
    /// The admin token (which opens everything the user key does).
    Admin,
}

impl Credential {
    /// Whether it opens the routes that need the user key.
    pub fn is_user(self) -> bool {
        matches!(self, Credential::User | Credential::Admin)
    }

    /// What `Authorization` says, each token compared in constant time.
    fn of(request: &Request, user_key: &str, admin_token: &str) -> Credential {
        let Some(header) = request.header("Authorization") else { return Credential::None };
        let token = header.strip_prefix("Bearer ").unwrap_or("").trim().as_bytes();
        // Both compared always, so the time taken says nothing about which one nearly matched.
        let admin = constant_time_eq(token, admin_token.as_bytes());
        let user = constant_time_eq(token, user_key.as_bytes());
        match (admin, user) {
            (true, _) => Credential::Admin,
            (false, true) => Credential::User,
            (false, false) => Credential::Wrong,
        }
    }
}

/// A request after the guards: what routes look at.
pub struct ApiRequest<'a> {
    pub raw: &'a Request,
    /// The route the table found, and its `:name` segments' values.
    pub route: &'static Route,
    pub params: Vec<String>,
    /// The parsed JSON body; `Value::Null` when the body was empty.
    pub body: Value,
    pub credential: Credential,
}

/// A request path's non-empty segments, each percent-decoded after splitting, so an id holding
/// an encoded `/` (`%2F`) stays one segment.
fn segments(path: &str) -> Vec<String> {
    path.split('/').filter(|s| !s.is_empty()).map(wire::decode_path_segment).collect()
}

impl ApiRequest<'_> {
    pub fn method(&self) -> &str {
        &self.raw.method
    }

    /// The request target as sent, for messages.
    pub fn url(&self) -> &str {
        &self.raw.target
    }

    pub fn param(&self, name: &str) -> Option<String> {
        self.raw.param(name).filter(|v| !v.is_empty()).map(str::to_owned)
    }
}

/// How long [`HttpServer::stop`] waits for requests already being handled.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// Shared between the accept thread, the connection threads and [`HttpServer::stop`].
#[derive(Default)]
pub(super) struct Lifecycle {
    /// Set by `stop`; read by every request and by the accept loop.
    pub(super) stopping: AtomicBool,
    /// Requests inside a handler; written by connection threads (through a guard), read by
    /// `stop`.
    pub(super) in_flight: AtomicUsize,
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
        let listener = TcpListener::bind(addr).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AddrInUse {
                format!("cannot listen on {addr}: {}", crate::worker_protocol::port_held(addr))
            } else {
                format!("cannot listen on {addr}: {e}")
            }
        })?;
        let bound = listener.local_addr().map_err(|e| format!("cannot read the bound address: {e}"))?;
        let lifecycle = Arc::new(Lifecycle::default());
        let accept_lifecycle = Arc::clone(&lifecycle);
        let slots = Slots::new(MAX_CONNECTIONS);
        let join = std::thread::Builder::new()
            .name("vl-http-accept".into())
            .spawn(move || super::accept::accept_loop(&listener, &ctx, &accept_lifecycle, &slots))
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
            // Wake the blocking accept() so the loop sees `stopping`.
            let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
            let _ = join.join();
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Counts one answer for `/metrics`.
pub(super) fn count(ctx: &AppContext, route: &'static str, status: u16) {
    let mut counts = ctx.http_counts.lock().unwrap_or_else(|p| p.into_inner());
    *counts.entry((route, status)).or_default() += 1;
}

/// The guards, then the route; counted for `/metrics`.
pub(super) fn handle(ctx: &AppContext, request: &Request) -> Response {
    let (route, result) = match guard_and_parse(ctx, request) {
        Ok(api) => (api.route.metric, routes::dispatch(ctx, &api)),
        Err((metric, e)) => (metric, Err(e)),
    };
    let response = match result {
        Ok(response) => response,
        Err(e) => {
            if e.status >= 500 {
                log::warn!(target: "http", "{} {} -> {}: {}", request.method, request.path, e.status, e.message);
            }
            e.into_response()
        }
    };
    count(ctx, route, response.status);
    response
}

/// The guards of SPEC §4 — Host and Origin, the route, who may call it — then the body: type,
/// JSON. A refusal names what `/metrics` counts it under: `unknown` (404, 405) or `guard`.
fn guard_and_parse<'a>(ctx: &AppContext, request: &'a Request) -> Result<ApiRequest<'a>, (&'static str, ApiError)> {
    let guard = |e| ("guard", e);
    check_host(request.header("Host"), ctx.port).map_err(guard)?;
    if let Some(origin) = request.header("Origin")
        && !is_local_origin(origin)
    {
        return Err(guard(ApiError::forbidden(format!("requests from the origin {origin:?} are not allowed"))));
    }
    let (route, params) = match table::lookup(&request.method, &segments(&request.path)) {
        Lookup::Found(route, params) => (route, params),
        Lookup::MethodNotAllowed => return Err(("unknown", routes::method_not_allowed(request))),
        Lookup::NotFound => return Err(("unknown", routes::unknown_route(request))),
    };
    let credential = Credential::of(request, &ctx.user_key, &ctx.admin_token);
    authorize(route.access, credential, ctx.accept_unkeyed_events).map_err(guard)?;
    // Only now, with the caller let in, is the body looked at.
    let body = read_json_body(request).map_err(guard)?;
    Ok(ApiRequest { raw: request, route, params, body, credential })
}

/// Whether `credential` may call a route of `access` (SPEC §4): 401 without a key or with a
/// wrong one, 403 with the user key on an admin route. The messages say where the key is and
/// never repeat what was sent.
fn authorize(access: Access, credential: Credential, accept_unkeyed_events: bool) -> Result<(), ApiError> {
    let unauthorized = |message: &str| ApiError::new(401, "unauthorized", message);
    match (access, credential) {
        (Access::Public, _) | (Access::Admin, Credential::Admin) => Ok(()),
        (Access::Key | Access::Event, c) if c.is_user() => Ok(()),
        (Access::Event, Credential::None) if accept_unkeyed_events => Ok(()),
        (Access::Admin, Credential::User) => {
            Err(ApiError::forbidden("this admin action needs `Authorization: Bearer <contents of <data>/admin.token>`"))
        }
        (_, Credential::Wrong) => Err(unauthorized(
            "the bearer token sent is not this worker's key; the hooks and `vl` read it from <data>/worker.key",
        )),
        (Access::Admin, _) => {
            Err(unauthorized("this admin action needs `Authorization: Bearer <contents of <data>/admin.token>`"))
        }
        _ => Err(unauthorized(
            "this route needs `Authorization: Bearer <contents of <data>/worker.key>`; the hooks and `vl` send it \
             themselves, and `vl dashboard` opens the dashboard with it",
        )),
    }
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
    // The size limit was enforced while reading (413 before the body is read).
    let bytes = &request.body;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    let content_type = request.header("Content-Type").unwrap_or("");
    if !content_type.trim().to_ascii_lowercase().starts_with("application/json") {
        return Err(ApiError::new(415, "unsupported_media_type", "send the body as Content-Type: application/json"));
    }
    serde_json::from_slice(bytes).map_err(|e| ApiError::bad_request(format!("the body is not valid JSON: {e}")))
}

/// A JSON response with status 200.
pub fn ok(body: impl serde::Serialize) -> Response {
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
