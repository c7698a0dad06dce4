//! A small HTTP client for talking to the local worker (hooks and CLI): JSON in, status and
//! JSON out, every call bounded by one deadline, the user key (or, for the admin commands, the
//! admin token) attached as a bearer token: the worker answers nothing else without it (SPEC §4).
//!
//! Responses are read by [`ResponseReader`]: the head is found by scanning each byte once and
//! parsed once by `httparse`, the body is framed by its one `Content-Length`, and nothing past
//! [`MAX_RESPONSE_BYTES`] is buffered, whatever answers on the worker's port.

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
#[derive(Debug, thiserror::Error)]
pub enum Unreachable {
    /// Connecting, writing or reading failed.
    #[error("the worker is not reachable: {0}")]
    Io(#[from] std::io::Error),
    /// The configured address names no socket address.
    #[error("the worker is not reachable: {0} does not resolve")]
    Unresolved(String),
    /// What came back is not an HTTP response we take (malformed, or over the size cap).
    #[error("the worker is not reachable: {0}")]
    BadResponse(String),
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
    /// A client whose every call (connect + response) is bounded by `timeout`, sending the user
    /// key (`<data>/worker.key`): what the hooks and the read commands use. Without a readable
    /// key (no worker has started yet, or its mode lets others read it) it sends none, and the
    /// worker answers 401, which the hooks treat as "enqueue directly".
    pub fn new(config: &Config, timeout: Duration) -> WorkerClient {
        WorkerClient::with_secret_file(config, timeout, crate::worker::USER_KEY_FILE)
    }

    /// The same, sending the admin token (`<data>/admin.token`), which also opens every route
    /// the user key does: what `vl jobs …` uses.
    pub fn admin(config: &Config, timeout: Duration) -> WorkerClient {
        WorkerClient::with_secret_file(config, timeout, crate::worker::ADMIN_TOKEN_FILE)
    }

    fn with_secret_file(config: &Config, timeout: Duration, name: &str) -> WorkerClient {
        let token = match crate::platform::read_private_file(&config.data_dir.join(name)) {
            Ok(token) => token.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()),
            Err(e) => {
                log::warn!(target: "client", "{e}");
                None
            }
        };
        WorkerClient {
            token,
            ..WorkerClient::at(&format!("{}:{}", config.worker_host(), config.worker_port()), timeout)
        }
    }

    /// A client for a worker at `addr` (`host:port`), sending no token.
    pub fn at(addr: &str, timeout: Duration) -> WorkerClient {
        WorkerClient { addr: addr.to_owned(), host_header: addr.to_owned(), timeout, token: None }
    }

    /// The same client, sending `Authorization: Bearer <token>`.
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
        let unreachable = Unreachable::Io;
        let addr = self
            .addr
            .to_socket_addrs()
            .map_err(unreachable)?
            .next()
            .ok_or_else(|| Unreachable::Unresolved(self.addr.clone()))?;
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
        let mut response = ResponseReader::new(MAX_RESPONSE_BYTES);
        loop {
            if let Some(done) = response.progress().map_err(Unreachable::BadResponse)? {
                return Ok(done);
            }
            stream.set_read_timeout(Some(remaining())).map_err(unreachable)?;
            match stream.read(response.spare()) {
                Ok(n) => response.filled(n),
                Err(e) => return Err(unreachable(e)),
            }
        }
    }
}

/// Largest response read: the biggest the worker sends is a page of `GET /api/jobs` (at most
/// 1,000 jobs with their payloads; a typical page of 50 is ~60 KiB). A bound that no real
/// answer meets, so a wrong program on the port cannot make a hook or the CLI buffer without
/// limit.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// Largest response head (status line and headers); the worker's are under 1 KiB.
const MAX_RESPONSE_HEAD: usize = 64 * 1024;

/// Most headers in a response head; the worker sends at most 8.
const MAX_RESPONSE_HEADERS: usize = 32;

/// Bytes asked of each read before the length is known: most answers fit in one.
const READ_CHUNK: usize = 16 * 1024;

/// Most bytes asked of one read once the length is known.
const MAX_READ: usize = 1024 * 1024;

/// One response being read: the bytes so far, how far the head search got, and, once the head
/// is parsed, where the body ends.
pub struct ResponseReader {
    raw: Vec<u8>,
    /// Bytes of `raw` already in use (the rest of `raw` is spare room for the next read).
    len: usize,
    /// The head search resumes here.
    scanned: usize,
    /// Status, where the body starts, where it ends (`None`: at the close).
    framing: Option<(u16, usize, Option<usize>)>,
    /// The peer closed.
    closed: bool,
    max: usize,
    /// How many times a head was parsed (once per response; the tests check it).
    pub head_parses: usize,
}

impl ResponseReader {
    pub fn new(max: usize) -> ResponseReader {
        ResponseReader { raw: Vec::new(), len: 0, scanned: 0, framing: None, closed: false, max, head_parses: 0 }
    }

    /// Room for the next read.
    pub fn spare(&mut self) -> &mut [u8] {
        // Grown as bytes arrive, never to a length the peer merely announced.
        let want = match self.framing {
            Some((_, _, Some(end))) => end.saturating_sub(self.len).clamp(1, MAX_READ),
            _ => READ_CHUNK,
        };
        let room = want.min(self.max + 1 - self.len.min(self.max));
        if self.raw.len() < self.len + room {
            self.raw.resize(self.len + room, 0);
        }
        &mut self.raw[self.len..self.len + room]
    }

    /// `n` bytes were read into [`Self::spare`]; 0 is the peer's close.
    pub fn filled(&mut self, n: usize) {
        self.len += n;
        self.closed |= n == 0;
    }

    /// The response once complete; `Ok(None)`: read more.
    pub fn progress(&mut self) -> Result<Option<WorkerResponse>, String> {
        loop {
            if self.len > self.max {
                return Err(format!("the response is over {} bytes", self.max));
            }
            if self.framing.is_none() {
                let raw = &self.raw[..self.len];
                let Some(end) = crate::http::head::find_end(raw, self.scanned) else {
                    if self.len > MAX_RESPONSE_HEAD {
                        return Err(format!("the response head is over {MAX_RESPONSE_HEAD} bytes"));
                    }
                    if self.closed {
                        return Err("the worker closed the connection before answering".into());
                    }
                    self.scanned = self.len;
                    return Ok(None);
                };
                self.head_parses += 1;
                let (status, length) = parse_head(&raw[..end])?;
                if (100..200).contains(&status) {
                    // An interim answer: the real one follows.
                    self.raw.copy_within(end..self.len, 0);
                    self.len -= end;
                    self.scanned = 0;
                    continue;
                }
                let body_end = length.map(|l| end.saturating_add(l));
                if body_end.is_some_and(|e| e > self.max) {
                    return Err(format!("the response is over {} bytes", self.max));
                }
                self.framing = Some((status, end, body_end));
            }
            let Some((status, start, end)) = self.framing else { return Ok(None) };
            let end = match end {
                Some(end) if self.len >= end => end,
                None if self.closed => self.len,
                _ if self.closed => return Err("the worker closed the connection inside its answer".into()),
                _ => return Ok(None),
            };
            let body = serde_json::from_slice(&self.raw[start..end]).unwrap_or(Value::Null);
            return Ok(Some(WorkerResponse { status, body }));
        }
    }
}

/// Status and `Content-Length` (`None`: the body runs to the close) of a complete head.
fn parse_head(head: &[u8]) -> Result<(u16, Option<usize>), String> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_RESPONSE_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    match response.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err("the worker sent an incomplete response head".into()),
        Err(e) => return Err(format!("the worker sent a malformed response ({e})")),
    }
    let status = response.code.ok_or("the worker sent a response without a status")?;
    let mut length = None;
    for header in response.headers.iter() {
        if header.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err("the worker sent a chunked response, which this client does not read".into());
        }
        if header.name.eq_ignore_ascii_case("content-length") {
            let value = std::str::from_utf8(header.value).unwrap_or("").trim();
            let parsed = value
                .parse::<usize>()
                .ok()
                .filter(|_| value.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| format!("the worker sent a bad Content-Length {value:?}"))?;
            if length.replace(parsed).is_some_and(|earlier| earlier != parsed) {
                return Err("the worker sent two different Content-Lengths".into());
            }
        }
    }
    Ok((status, length))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `raw` in pieces of `piece` bytes; the response, or the error.
    fn read_in_pieces(raw: &[u8], piece: usize, max: usize) -> (Result<WorkerResponse, String>, usize) {
        let mut reader = ResponseReader::new(max);
        let mut rest = raw;
        loop {
            match reader.progress() {
                Ok(Some(done)) => return (Ok(done), reader.head_parses),
                Err(e) => return (Err(e), reader.head_parses),
                Ok(None) => {}
            }
            let spare = reader.spare();
            let n = rest.len().min(piece).min(spare.len());
            spare[..n].copy_from_slice(&rest[..n]);
            rest = &rest[n..];
            reader.filled(n);
        }
    }

    const OK: &[u8] = b"HTTP/1.1 202 Accepted\r\nContent-Length: 15\r\nConnection: close\r\n\r\n{\"status\":\"ok\"}";

    #[test]
    fn a_response_is_parsed_whole_or_byte_by_byte_with_one_head_parse() {
        for piece in [1, 3, 1000] {
            let (parsed, parses) = read_in_pieces(OK, piece, MAX_RESPONSE_BYTES);
            let parsed = parsed.unwrap();
            assert_eq!((parsed.status, parsed.body["status"].as_str()), (202, Some("ok")));
            assert_eq!(parses, 1, "the head is parsed once, not per chunk");
        }
    }

    #[test]
    fn bytes_after_the_body_are_not_read_into_it() {
        let mut raw = OK.to_vec();
        raw.extend_from_slice(b"garbage after the body");
        assert_eq!(read_in_pieces(&raw, 7, MAX_RESPONSE_BYTES).0.unwrap().body["status"], "ok");
    }

    #[test]
    fn an_interim_100_is_skipped() {
        let mut raw = b"HTTP/1.1 100 Continue\r\n\r\n".to_vec();
        raw.extend_from_slice(OK);
        assert_eq!(read_in_pieces(&raw, 5, MAX_RESPONSE_BYTES).0.unwrap().status, 202);
    }

    #[test]
    fn a_body_without_a_length_runs_to_the_close() {
        let raw = b"HTTP/1.1 200 OK\r\n\r\n{\"a\":1}";
        assert_eq!(read_in_pieces(raw, 4, MAX_RESPONSE_BYTES).0.unwrap().body["a"], 1);
    }

    #[test]
    fn oversized_or_malformed_responses_are_refused() {
        let big = b"HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n";
        assert!(read_in_pieces(big, 100, 1000).0.unwrap_err().contains("over 1000 bytes"), "refused from its length");
        let mut endless = b"HTTP/1.1 200 OK\r\n\r\n".to_vec();
        endless.extend(std::iter::repeat_n(b'x', 5000));
        let (error, _) = read_in_pieces(&endless, 512, 1000);
        assert!(error.unwrap_err().contains("over 1000 bytes"), "refused once it passed the cap");
        let endless_head = [b"HTTP/1.1 200 OK\r\nX: ".to_vec(), vec![b'a'; 70_000]].concat();
        assert!(read_in_pieces(&endless_head, 4096, MAX_RESPONSE_BYTES).0.unwrap_err().contains("head is over"));
        assert!(read_in_pieces(b"garbage\r\n\r\n", 100, 1000).0.is_err());
        assert!(read_in_pieces(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", 100, 1000).0.is_err());
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n";
        assert!(read_in_pieces(chunked, 100, 1000).0.unwrap_err().contains("chunked"));
        let two = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}";
        assert!(read_in_pieces(two, 100, 1000).0.unwrap_err().contains("two different"));
        assert!(read_in_pieces(b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n{}", 100, 1000).0.is_err());
    }
}
