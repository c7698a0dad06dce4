//! A small HTTP client for talking to the local worker (hooks and CLI): JSON in, status and
//! JSON out, every call bounded by one deadline, the admin token attached when it exists.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::config::Config;

/// A response from the worker: status and parsed body (`Null` when not JSON).
#[derive(Debug, Clone)]
pub struct WorkerResponse {
    pub status: u16,
    pub body: Value,
}

/// Why the worker could not be reached at all.
#[derive(Debug, Clone)]
pub struct Unreachable(pub String);

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the worker is not reachable: {}", self.0)
    }
}

/// Client bound to one worker address.
///
/// A plain HTTP/1.1 exchange over `std::net::TcpStream` (one connection per call,
/// `Connection: close`) rather than a general HTTP client: the worker is always plain HTTP on
/// loopback, and a hook process pays for every microsecond of client setup — measured, a
/// general client's first-call initialisation cost up to ~0.9 s when many started at once.
pub struct WorkerClient {
    addr: String,
    host_header: String,
    timeout: Duration,
    token: Option<String>,
}

impl WorkerClient {
    /// A client whose every call (connect + response) is bounded by `timeout`.
    pub fn new(config: &Config, timeout: Duration) -> WorkerClient {
        let token = std::fs::read_to_string(config.data_dir.join("admin.token")).ok().map(|t| t.trim().to_owned());
        WorkerClient {
            token,
            ..WorkerClient::at(&format!("{}:{}", config.worker_host(), config.worker_port()), timeout)
        }
    }

    /// A client for a worker at `addr` (`host:port`), without the admin token.
    pub fn at(addr: &str, timeout: Duration) -> WorkerClient {
        WorkerClient { addr: addr.to_owned(), host_header: addr.to_owned(), timeout, token: None }
    }

    /// The same client, sending `Authorization: Bearer <token>` (the admin routes).
    pub fn with_token(mut self, token: &str) -> WorkerClient {
        self.token = Some(token.trim().to_owned());
        self
    }

    pub fn get(&self, path: &str) -> Result<WorkerResponse, Unreachable> {
        self.exchange("GET", path, None)
    }

    pub fn post(&self, path: &str, body: &Value) -> Result<WorkerResponse, Unreachable> {
        self.exchange("POST", path, Some(body.to_string()))
    }

    pub fn is_ready(&self) -> bool {
        self.get("/api/readiness").is_ok_and(|r| r.status == 200)
    }

    fn exchange(&self, method: &str, path: &str, body: Option<String>) -> Result<WorkerResponse, Unreachable> {
        let deadline = Instant::now() + self.timeout;
        let unreachable = |e: std::io::Error| Unreachable(e.to_string());
        let addr = self
            .addr
            .to_socket_addrs()
            .map_err(unreachable)?
            .next()
            .ok_or_else(|| Unreachable(format!("{} does not resolve", self.addr)))?;
        let mut stream = TcpStream::connect_timeout(&addr, self.timeout).map_err(unreachable)?;
        let _ = stream.set_nodelay(true);
        let remaining = || deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
        stream.set_write_timeout(Some(remaining())).map_err(unreachable)?;
        let body = body.unwrap_or_default();
        let mut request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.host_header,
            body.len()
        );
        if !body.is_empty() {
            request.push_str("Content-Type: application/json\r\n");
        }
        if let Some(token) = &self.token {
            request.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(&body);
        stream.write_all(request.as_bytes()).map_err(unreachable)?;
        let mut raw = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        loop {
            stream.set_read_timeout(Some(remaining())).map_err(unreachable)?;
            match stream.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    raw.extend_from_slice(&chunk[..n]);
                    if response_complete(&raw) {
                        break;
                    }
                }
                Err(e) => return Err(unreachable(e)),
            }
        }
        parse_response(&raw).ok_or_else(|| Unreachable("the worker sent a malformed response".into()))
    }
}

/// The header block and `Content-Length` bytes of body have arrived.
fn response_complete(raw: &[u8]) -> bool {
    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else { return false };
    let head = String::from_utf8_lossy(&raw[..end]);
    let length = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.trim().eq_ignore_ascii_case("content-length")))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok());
    length.is_some_and(|len| raw.len() >= end + 4 + len)
}

fn parse_response(raw: &[u8]) -> Option<WorkerResponse> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let status = head.lines().next()?.split_whitespace().nth(1)?.parse().ok()?;
    let body = serde_json::from_slice(&raw[end + 4..]).unwrap_or(Value::Null);
    Some(WorkerResponse { status, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_parsed_and_completeness_detected() {
        let raw = b"HTTP/1.1 202 Accepted\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}";
        assert!(!response_complete(&raw[..raw.len() - 1]));
        assert!(response_complete(raw));
        let parsed = parse_response(raw).unwrap();
        assert_eq!((parsed.status, parsed.body["status"].as_str()), (202, Some("ok")));
        assert!(parse_response(b"garbage").is_none());
    }
}
