//! HTTP/1.1 on the wire, as much as the worker needs: reading one request (request line,
//! headers, a `Content-Length` body, `Expect: 100-continue`) and writing one response with an
//! explicit `Content-Length`. Loopback clients only: hooks, the CLI, the dashboard.
//!
//! Why not rouille/tiny_http (DESIGN.md's first choice): tiny_http hands every accepted
//! connection to a task pool whose `spawn` decides between "wake an idle thread" and "start a
//! thread" from a counter of waiting threads that still counts a thread already woken; two
//! connections accepted back to back can then leave the second queued with no thread to run it
//! until some other keep-alive connection closes — the multi-second stalls seen under
//! keep-alive (measured here: 0.9–5.4 s on a connection's first request). The server cannot
//! force `Connection: close` either (tiny_http drops that header). The replacement is a thread
//! per connection with a cap, and an idle timeout on keep-alive connections.

use std::io::{BufRead, BufReader, Read, Write};

/// Header block limit: a request line and headers larger than this are refused (431-ish 400).
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// A parsed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    /// Path without the query string, still percent-encoded: decode per segment after
    /// splitting, or an encoded `/` would split an id in two.
    pub path: String,
    /// The raw target as sent (path and query), for messages.
    pub target: String,
    pub query: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The client asked to close after this exchange (or spoke HTTP/1.0 without keep-alive).
    pub close: bool,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn param(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// A response: status, content type, extra headers, body. `Content-Length`,
/// `Cache-Control: no-store` and `Connection` are always sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Response {
        Response { status, content_type, headers: Vec::new(), body: body.into() }
    }

    pub fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Response {
        self.headers.push((name, value.into()));
        self
    }
}

/// Why no request could be read.
#[derive(Debug)]
pub enum ReadError {
    /// The connection closed (or timed out) before a request started: not an error.
    Closed,
    /// A malformed request: answer 400 with this and close.
    Malformed(String),
    /// `Content-Length` over the limit (the announced length): answer 413, drain, close.
    TooLarge(usize),
    /// A body was announced with a transfer encoding we do not read.
    LengthRequired,
    Io(std::io::Error),
}

/// Reads one request. `writer` is used only for `100 Continue`.
pub fn read_request<R: Read, W: Write>(
    reader: &mut BufReader<R>,
    writer: &mut W,
    max_body: usize,
) -> Result<Request, ReadError> {
    let mut head_bytes = 0;
    let mut line = String::new();
    // Tolerate blank lines between pipelined requests (RFC 9112 §2.2).
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => return Err(ReadError::Closed),
            Ok(n) => head_bytes += n,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return Err(ReadError::Closed);
            }
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                return Err(ReadError::Malformed("the request line is not UTF-8".into()));
            }
            Err(e) => return Err(ReadError::Io(e)),
        }
        if !line.trim().is_empty() {
            break;
        }
        if head_bytes > MAX_HEAD_BYTES {
            return Err(ReadError::Malformed("too many blank lines".into()));
        }
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(ReadError::Malformed(format!("bad request line {:?}", line.trim())));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(ReadError::Malformed(format!("unsupported protocol {version}")));
    }
    let (method, target, http10) = (method.to_owned(), target.to_owned(), version == "HTTP/1.0");
    let mut headers = Vec::new();
    loop {
        line.clear();
        let n = reader.read_line(&mut line).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => ReadError::Malformed("a header is not UTF-8".into()),
            _ => ReadError::Io(e),
        })?;
        head_bytes += n;
        if n == 0 {
            return Err(ReadError::Malformed("the connection closed inside the headers".into()));
        }
        if head_bytes > MAX_HEAD_BYTES {
            return Err(ReadError::Malformed(format!("the request head is over {MAX_HEAD_BYTES} bytes")));
        }
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        let (name, value) =
            header.split_once(':').ok_or_else(|| ReadError::Malformed(format!("bad header {header:?}")))?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let find = |name: &str| headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
    let connection = find("Connection").map(str::to_ascii_lowercase);
    let close = match &connection {
        Some(c) if c.contains("close") => true,
        Some(c) if c.contains("keep-alive") => false,
        _ => http10,
    };
    if find("Transfer-Encoding").is_some_and(|te| !te.eq_ignore_ascii_case("identity")) {
        return Err(ReadError::LengthRequired);
    }
    let length = match find("Content-Length") {
        Some(raw) => {
            raw.trim().parse::<usize>().map_err(|_| ReadError::Malformed(format!("bad Content-Length {raw:?}")))?
        }
        None => 0,
    };
    if length > max_body {
        return Err(ReadError::TooLarge(length));
    }
    if length > 0 && find("Expect").is_some_and(|e| e.eq_ignore_ascii_case("100-continue")) {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").map_err(ReadError::Io)?;
        writer.flush().map_err(ReadError::Io)?;
    }
    let mut body = vec![0u8; length];
    reader
        .read_exact(&mut body)
        .map_err(|_| ReadError::Malformed("the body is shorter than its Content-Length".into()))?;
    let (raw_path, raw_query) = target.split_once('?').unwrap_or((&target, ""));
    let query = raw_query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect();
    Ok(Request { method, path: raw_path.to_owned(), target: target.clone(), query, headers, body, close })
}

/// Reads and discards up to `length` bytes (bounded by [`MAX_DRAIN_BYTES`]) so that closing
/// after an early answer does not reset the connection under the client's unsent body, which
/// would lose the answer.
pub fn drain<R: Read>(reader: &mut BufReader<R>, length: usize) {
    let _ = std::io::copy(&mut reader.take(length.min(MAX_DRAIN_BYTES) as u64), &mut std::io::sink());
}

/// Most bytes [`drain`] reads of a refused body.
pub const MAX_DRAIN_BYTES: usize = 64 * 1024 * 1024;

/// Decodes `%XX` escapes and `+` (as a space) in a URL component; invalid escapes stay as they are.
pub fn percent_decode(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(byte) => {
                        out.push(byte);
                        i += 3;
                    }
                    _ => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        411 => "Length Required",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// Writes a response; `close` adds `Connection: close`.
pub fn write_response<W: Write>(writer: &mut W, response: &Response, close: bool) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: {}\r\n",
        response.status,
        reason(response.status),
        response.content_type,
        response.body.len(),
        if close { "close" } else { "keep-alive" }
    );
    for (name, value) in &response.headers {
        // Header values are ours, but a stray line break must never split the response.
        head.push_str(&format!("{name}: {}\r\n", value.replace(['\r', '\n'], " ")));
    }
    head.push_str("\r\n");
    // One write for head and body: two small writes would meet Nagle + delayed ACK.
    let mut out = Vec::with_capacity(head.len() + response.body.len());
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(&response.body);
    writer.write_all(&out)?;
    writer.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &[u8]) -> (Result<Request, ReadError>, Vec<u8>) {
        let mut reader = BufReader::new(raw);
        let mut written = Vec::new();
        (read_request(&mut reader, &mut written, 64), written)
    }

    #[test]
    fn reads_a_request_with_query_and_body() {
        let (request, _) =
            parse(b"POST /api/x%20y?limit=5&session=a%2Fb&flag HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}");
        let request = request.unwrap();
        assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/api/x%20y"));
        assert_eq!(request.param("limit"), Some("5"));
        assert_eq!(request.param("session"), Some("a/b"));
        assert_eq!(request.param("flag"), Some(""));
        assert_eq!(request.body, b"{}");
        assert!(!request.close);
    }

    #[test]
    fn connection_close_and_http10_close() {
        assert!(parse(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n").0.unwrap().close);
        assert!(parse(b"GET / HTTP/1.0\r\n\r\n").0.unwrap().close);
        assert!(!parse(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").0.unwrap().close);
    }

    #[test]
    fn expect_continue_is_answered_before_the_body() {
        let (request, written) = parse(b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx");
        assert_eq!(request.unwrap().body, b"x");
        assert_eq!(written, b"HTTP/1.1 100 Continue\r\n\r\n");
    }

    #[test]
    fn bad_requests_are_classified() {
        assert!(matches!(parse(b"").0, Err(ReadError::Closed)));
        assert!(matches!(parse(b"garbage\r\n\r\n").0, Err(ReadError::Malformed(_))));
        assert!(matches!(parse(b"GET / SPDY/3\r\n\r\n").0, Err(ReadError::Malformed(_))));
        assert!(matches!(parse(b"POST / HTTP/1.1\r\nContent-Length: 999\r\n\r\n").0, Err(ReadError::TooLarge(999))));
        assert!(matches!(parse(b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab").0, Err(ReadError::Malformed(_))));
        assert!(matches!(
            parse(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").0,
            Err(ReadError::LengthRequired)
        ));
        assert!(matches!(parse(b"GET / HTTP/1.1\r\nno colon\r\n\r\n").0, Err(ReadError::Malformed(_))));
        assert!(matches!(parse(b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n").0, Err(ReadError::Malformed(_))));
    }

    #[test]
    fn percent_decoding_is_forgiving() {
        assert_eq!(percent_decode("a%2Fb+c"), "a/b c");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("%C3%A9"), "é");
    }

    #[test]
    fn responses_carry_their_length() {
        let mut out = Vec::new();
        write_response(&mut out, &Response::new(202, "application/json", "{}"), false).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("HTTP/1.1 202 Accepted\r\n"));
        assert!(
            text.contains("Content-Length: 2\r\n")
                && text.contains("Connection: keep-alive")
                && text.ends_with("\r\n\r\n{}")
        );
    }
}
