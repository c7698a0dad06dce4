//! A small HTTP client for talking to the local worker (hooks and CLI): JSON in, status and
//! JSON out, every call bounded by one deadline, the user key (or, for the admin commands, the
//! admin token) attached as a bearer token: the worker answers nothing else without it (SPEC §4).
//!
//! # The proof
//! Nothing of the user's — the key, the admin token, an event — is written to a connection
//! before the listener has proved it is the user's worker: a fresh nonce goes out on a new
//! connection, the answer must be the HMAC of it under the user key and the port
//! ([`crate::worker_protocol`]), checked in constant time, and the real requests follow on
//! that same connection (kept alive for the client's life: a hook run or a CLI command). A
//! listener that fails is [`Unreachable::NotOurWorker`], with who holds the port when the OS
//! tells ([`port_held`]). Without a key file there is nothing to check a proof against, so the
//! client sends nothing ([`Unreachable::NoKey`]).
//!
//! Responses are read by [`ResponseReader`]: the head is found by scanning each byte once and
//! parsed once by `httparse`, the body is framed by its one `Content-Length`, and nothing past
//! [`MAX_RESPONSE_BYTES`] is buffered. The proof's answer, which comes from whatever holds the
//! port, is read with its own cap of [`MAX_PROOF_RESPONSE_BYTES`] within [`PROOF_TIMEOUT`].

use std::cell::RefCell;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::config::Config;
use crate::worker_protocol::{self as proof, port_held, port_of};

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
    /// Something listens on the port but could not prove it is the user's worker: nothing was
    /// sent to it. The message says who holds the port and how to choose another.
    #[error("{0}")]
    NotOurWorker(String),
    /// Something listens on the port, but there is no readable `<data>/worker.key` (removed
    /// under a running worker, or loose), so the listener cannot be checked, and nothing is
    /// sent. (With nothing listening the error is [`Unreachable::Io`], as for any worker down.)
    #[error("no worker key yet in the data dir; nothing was sent")]
    NoKey,
}

/// How a client makes sure of the listener before it sends anything.
#[derive(Debug, Clone)]
enum Proof {
    /// Check the proof under this user key on each new connection.
    Required(String),
    /// No key to check with: send nothing.
    Unavailable,
    /// No check: a developer tool or test that started the worker on that port itself.
    Skipped,
}

/// Client bound to one worker address.
///
/// A plain HTTP/1.1 exchange over `std::net::TcpStream` rather than a general HTTP client: the
/// worker is always plain HTTP on loopback, and a hook process pays for every microsecond of
/// client setup — measured, a general client's first-call initialisation cost up to ~0.9 s
/// when many started at once. One connection, proved once, serves every call of the client.
pub struct WorkerClient {
    addr: String,
    host_header: String,
    port: u16,
    timeout: Duration,
    token: Option<String>,
    proof: Proof,
    /// The proved connection, kept alive between calls. A RefCell: a client is used by one
    /// thread, and `get`/`post` take `&self`.
    conn: RefCell<Option<TcpStream>>,
}

impl WorkerClient {
    /// A client whose every call (connect + proof + response) is bounded by `timeout`, sending
    /// the user key (`<data>/worker.key`, read once per process by the config): what the hooks
    /// and the read commands use.
    pub fn new(config: &Config, timeout: Duration) -> WorkerClient {
        WorkerClient::proving(config, timeout, config.user_key())
    }

    /// The same, sending the admin token (`<data>/admin.token`), which also opens every route
    /// the user key does: what `vl jobs …` uses. The proof is still under the user key.
    pub fn admin(config: &Config, timeout: Duration) -> WorkerClient {
        WorkerClient::proving(config, timeout, config.admin_token())
    }

    fn proving(config: &Config, timeout: Duration, token: Option<&str>) -> WorkerClient {
        let proof = match config.user_key() {
            Some(key) => Proof::Required(key.to_owned()),
            None => Proof::Unavailable,
        };
        WorkerClient {
            token: token.map(str::to_owned),
            proof,
            ..WorkerClient::at(&format!("{}:{}", config.worker_host(), config.worker_port()), timeout)
        }
    }

    /// A client for a worker at `addr` (`host:port`) that this process started itself (the
    /// developer tools, the tests), sending no token and checking no proof.
    pub fn at(addr: &str, timeout: Duration) -> WorkerClient {
        WorkerClient {
            addr: addr.to_owned(),
            host_header: addr.to_owned(),
            port: port_of(addr),
            timeout,
            token: None,
            proof: Proof::Skipped,
            conn: RefCell::new(None),
        }
    }

    /// The same client, sending `Authorization: Bearer <token>`.
    pub fn with_token(mut self, token: &str) -> WorkerClient {
        self.token = Some(token.trim().to_owned());
        self
    }

    /// The same client, checking the proof under `user_key` first.
    pub fn proving_with(mut self, user_key: &str) -> WorkerClient {
        self.proof = Proof::Required(user_key.trim().to_owned());
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

    /// Connects and checks the proof without sending anything else: `Ok` when the user's
    /// worker answers on the port.
    pub fn check(&self) -> Result<(), Unreachable> {
        let deadline = Instant::now() + self.timeout;
        let stream = self.connection(deadline)?;
        *self.conn.borrow_mut() = Some(stream);
        Ok(())
    }

    fn exchange(&self, method: &str, path: &str, body: Option<String>) -> Result<WorkerResponse, Unreachable> {
        let deadline = Instant::now() + self.timeout;
        let request = self.request(method, path, body.as_deref().unwrap_or_default());
        let reused = self.conn.borrow().is_some();
        let stream = self.connection(deadline)?;
        match round_trip(&stream, request.as_bytes(), deadline, MAX_RESPONSE_BYTES) {
            Ok((response, keep)) => {
                if keep {
                    *self.conn.borrow_mut() = Some(stream);
                }
                Ok(response)
            }
            // A kept connection the worker closed meanwhile (idle timeout): once more on a new,
            // proved one. Nothing came back, so the request was not answered.
            Err(RoundTrip::Silent(_)) if reused => {
                let stream = self.connection(deadline)?;
                let (response, keep) =
                    round_trip(&stream, request.as_bytes(), deadline, MAX_RESPONSE_BYTES).map_err(Unreachable::from)?;
                if keep {
                    *self.conn.borrow_mut() = Some(stream);
                }
                Ok(response)
            }
            Err(e) => Err(e.into()),
        }
    }

    fn request(&self, method: &str, path: &str, body: &str) -> String {
        self.request_with(method, path, body, self.token.as_deref())
    }

    /// The request's bytes, with `Authorization` only when `token` is given.
    fn request_with(&self, method: &str, path: &str, body: &str, token: Option<&str>) -> String {
        let mut request =
            format!("{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n", self.host_header, body.len());
        if !body.is_empty() {
            request.push_str("Content-Type: application/json\r\n");
        }
        if let Some(token) = token {
            request.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        request
    }

    /// The kept connection, or a new one whose listener has proved it is the user's worker.
    fn connection(&self, deadline: Instant) -> Result<TcpStream, Unreachable> {
        if let Some(stream) = self.conn.borrow_mut().take() {
            return Ok(stream);
        }
        let addr = self
            .addr
            .to_socket_addrs()
            .map_err(Unreachable::Io)?
            .next()
            .ok_or_else(|| Unreachable::Unresolved(self.addr.clone()))?;
        // Connected before the key is looked at, so "nothing listens" (start a worker) and
        // "something listens, and we cannot check it" (send it nothing) stay apart.
        let stream = TcpStream::connect_timeout(&addr, remaining(deadline)).map_err(Unreachable::Io)?;
        let _ = stream.set_nodelay(true);
        match &self.proof {
            Proof::Unavailable => return Err(Unreachable::NoKey),
            Proof::Required(key) => self.prove(&stream, key, deadline)?,
            Proof::Skipped => {}
        }
        Ok(stream)
    }

    /// Sends a fresh nonce (and nothing else) and checks the answer, read with its own small
    /// cap and short deadline: whatever holds the port chooses what it answers.
    fn prove(&self, stream: &TcpStream, key: &str, deadline: Instant) -> Result<(), Unreachable> {
        let mut nonce = [0u8; proof::NONCE_BYTES];
        getrandom::fill(&mut nonce).map_err(|e| Unreachable::Io(std::io::Error::other(e)))?;
        let path = format!("/api/proof?nonce={}", hex::encode(nonce));
        let not_ours = |why: &str| Unreachable::NotOurWorker(format!("{why}: {}", port_held(&self.addr)));
        let deadline = deadline.min(Instant::now() + PROOF_TIMEOUT);
        // The one request sent before the proof: a nonce, no token.
        let request = self.request_with("GET", &path, "", None);
        let (response, _) =
            round_trip(stream, request.as_bytes(), deadline, MAX_PROOF_RESPONSE_BYTES).map_err(|e| match e {
                RoundTrip::Fatal(Unreachable::BadResponse(why)) => not_ours(&why),
                other => other.into(),
            })?;
        let answer = response.body["proof"].as_str().unwrap_or_default();
        if response.status == 200 && proof::verify(key, &nonce, self.port, answer) {
            Ok(())
        } else {
            Err(not_ours(&format!("the listener on {} did not prove it holds this data dir's key", self.addr)))
        }
    }
}

/// Why one request on one connection failed.
enum RoundTrip {
    /// The connection closed or failed before a byte of the answer came back.
    Silent(std::io::Error),
    Fatal(Unreachable),
}

impl From<RoundTrip> for Unreachable {
    fn from(e: RoundTrip) -> Unreachable {
        match e {
            RoundTrip::Silent(e) => Unreachable::Io(e),
            RoundTrip::Fatal(e) => e,
        }
    }
}

fn remaining(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1))
}

/// Writes one request and reads its response, buffering at most `max` bytes of it; whether the
/// connection may carry another.
fn round_trip(
    mut stream: &TcpStream,
    request: &[u8],
    deadline: Instant,
    max: usize,
) -> Result<(WorkerResponse, bool), RoundTrip> {
    let silent = |e: std::io::Error| RoundTrip::Silent(e);
    stream.set_write_timeout(Some(remaining(deadline))).map_err(silent)?;
    stream.write_all(request).map_err(silent)?;
    let mut response = ResponseReader::new(max);
    loop {
        match response.progress() {
            Ok(Some(done)) => return Ok((done, !response.close)),
            Err(_) if response.len == 0 => {
                return Err(RoundTrip::Silent(std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "the worker closed the connection",
                )));
            }
            Err(e) => return Err(RoundTrip::Fatal(Unreachable::BadResponse(e))),
            Ok(None) => {}
        }
        stream.set_read_timeout(Some(remaining(deadline))).map_err(|e| RoundTrip::Fatal(e.into()))?;
        match stream.read(response.spare()) {
            Ok(n) => response.filled(n),
            Err(e)
                if response.len == 0
                    && e.kind() != std::io::ErrorKind::WouldBlock
                    && e.kind() != std::io::ErrorKind::TimedOut =>
            {
                return Err(RoundTrip::Silent(e));
            }
            Err(e) => return Err(RoundTrip::Fatal(e.into())),
        }
    }
}

/// Largest response read: the biggest the worker sends is a page of `GET /api/jobs` (at most
/// 1,000 jobs with their payloads; a typical page of 50 is ~60 KiB). A bound that no real
/// answer meets, so a wrong program on the port cannot make a hook or the CLI buffer without
/// limit.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// Largest answer to the proof request, head and body: the worker's is 191 bytes (a head of
/// five headers and `{"proof":"<64 hex>"}`; `tests/trust_boundary.rs` measures it and keeps it
/// under a quarter of this). Before the proof the listener is anyone; with the general cap a
/// listener answering 60 MB pushed each hook to a 77 MB peak (19 MB with this cap).
pub const MAX_PROOF_RESPONSE_BYTES: usize = 1024;

/// Most time the proof's answer may take, within the call's own deadline: the worker answers
/// in about a millisecond, so this only bounds what a listener that is not the worker costs.
pub const PROOF_TIMEOUT: Duration = Duration::from_millis(500);

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
    pub len: usize,
    /// The head search resumes here.
    scanned: usize,
    /// Status, where the body starts, where it ends (`None`: at the close).
    framing: Option<(u16, usize, Option<usize>)>,
    /// The peer closed.
    closed: bool,
    /// The response said `Connection: close`, or the peer closed: no further request on it.
    pub close: bool,
    max: usize,
    /// How many times a head was parsed (once per response; the tests check it).
    pub head_parses: usize,
}

impl ResponseReader {
    pub fn new(max: usize) -> ResponseReader {
        ResponseReader {
            raw: Vec::new(),
            len: 0,
            scanned: 0,
            framing: None,
            closed: false,
            close: false,
            max,
            head_parses: 0,
        }
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
                let Some(end) = crate::worker_protocol::find_end(raw, self.scanned) else {
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
                let (status, length, close) = parse_head(&raw[..end])?;
                self.close |= close;
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
                None if self.closed => {
                    self.close = true;
                    self.len
                }
                _ if self.closed => return Err("the worker closed the connection inside its answer".into()),
                _ => return Ok(None),
            };
            let body = serde_json::from_slice(&self.raw[start..end]).unwrap_or(Value::Null);
            return Ok(Some(WorkerResponse { status, body }));
        }
    }
}

/// Status, `Content-Length` (`None`: the body runs to the close) and whether the server closes
/// the connection after it, of a complete head.
fn parse_head(head: &[u8]) -> Result<(u16, Option<usize>, bool), String> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_RESPONSE_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    match response.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err("the worker sent an incomplete response head".into()),
        Err(e) => return Err(format!("the worker sent a malformed response ({e})")),
    }
    let status = response.code.ok_or("the worker sent a response without a status")?;
    let mut length = None;
    let mut close = false;
    for header in response.headers.iter() {
        if header.name.eq_ignore_ascii_case("connection") {
            close |= std::str::from_utf8(header.value).unwrap_or("").to_ascii_lowercase().contains("close");
        }
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
    Ok((status, length, close))
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
    fn a_huge_answer_to_the_proof_is_refused_having_buffered_no_more_than_its_cap() {
        // A listener's 60 MB answer, announced or running to the close, fed in the 64 KiB
        // pieces a socket hands over.
        for head in [&b"HTTP/1.1 200 OK\r\nContent-Length: 62914560\r\n\r\n"[..], b"HTTP/1.1 200 OK\r\n\r\n"] {
            let mut raw = head.to_vec();
            raw.resize(60 * 1024 * 1024, b'0');
            let mut reader = ResponseReader::new(MAX_PROOF_RESPONSE_BYTES);
            let mut fed = 0;
            let error = loop {
                match reader.progress() {
                    Err(e) => break e,
                    Ok(done) => assert!(done.is_none(), "a 60 MB answer is never taken"),
                }
                let spare = reader.spare();
                assert!(spare.len() <= MAX_PROOF_RESPONSE_BYTES + 1, "a read asks for {} bytes", spare.len());
                let n = spare.len().min(64 * 1024).min(raw.len() - fed);
                spare[..n].copy_from_slice(&raw[fed..fed + n]);
                fed += n;
                reader.filled(n);
            };
            assert!(error.contains("over 1024 bytes"), "{error}");
            assert!(fed <= MAX_PROOF_RESPONSE_BYTES + 1, "{fed} bytes read");
            assert!(reader.raw.capacity() <= 2 * (MAX_PROOF_RESPONSE_BYTES + 1), "{}", reader.raw.capacity());
        }
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
