//! The request head: the request line and headers, parsed by `httparse` out of a bounded
//! buffer, then framed strictly. Pure (bytes in, a [`Head`] or a [`HeadError`] out), so every
//! rule has a unit test here and the fuzz target in `tests/fuzz.rs` drives it directly.
//!
//! # Framing (RFC 9112 §6)
//! The body's length comes from one `Content-Length` header of ASCII digits, or is zero.
//! Everything that lets two parsers disagree on where a request ends is refused with 400 and
//! the connection closed, so no request-smuggling shape can become a job: a repeated
//! `Content-Length` (even with the same value), a value that is not all digits (`+5`, `5, 5`,
//! `0x5`, empty), any `Transfer-Encoding` (with or without a length: the worker never reads a
//! chunked body, and honouring `Content-Length` beside it is exactly the smuggling shape),
//! more than one `Host`. `httparse` itself refuses whitespace between a header name and its
//! colon and obsolete line folding (a line starting with a space or a tab) in requests; the
//! tests below pin that, so an upgrade that relaxed it would be noticed.
//!
//! # Limits
//! A head over [`MAX_HEAD_BYTES`] or with more than [`MAX_HEADERS`] headers gets 431.

use std::fmt;

/// Largest request head (request line, headers, the blank line; blank lines before the request
/// line count too). Hooks and the CLI send heads of ~200 bytes and a browser's request for the
/// dashboard is typically under 2 KiB; 16 KiB leaves room for large localhost cookies while
/// bounding what one connection can make the worker hold (the issue's figure).
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// Most headers in one request (the issue's figure). A browser sends fewer than 20.
pub const MAX_HEADERS: usize = 100;

/// A parsed, validated request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub method: String,
    /// The request target as sent (origin-form: a path and an optional query).
    pub target: String,
    /// Header names and values as sent (values with surrounding spaces trimmed; bytes that are
    /// not UTF-8 replaced, since no header the worker reads carries any).
    pub headers: Vec<(String, String)>,
    /// The body's length (0 without `Content-Length`). A length too large for `usize` is
    /// `usize::MAX`, which every body limit refuses.
    pub content_length: usize,
    /// The client asked to close after this exchange (or spoke HTTP/1.0 without keep-alive).
    pub close: bool,
    /// `Expect: 100-continue` was sent.
    pub expect_continue: bool,
}

/// Why a head was refused. [`HeadError::status`] is the answer's status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadError {
    /// The head is longer than [`MAX_HEAD_BYTES`] (431).
    TooLarge,
    /// More than [`MAX_HEADERS`] headers (431).
    TooManyHeaders,
    /// `httparse` refused the syntax: a bad request line, a bad header name (including
    /// whitespace before the colon, or a folded line), a bad character in a value (400).
    Syntax(httparse::Error),
    /// The request target is not a path (absolute-form or authority-form) (400).
    Target,
    /// A `Content-Length` that is not one run of ASCII digits (400).
    BadContentLength(String),
    /// `Content-Length` appears more than once (400).
    RepeatedContentLength,
    /// `Transfer-Encoding` appears at all (400).
    TransferEncoding,
    /// `Host` appears more than once (400, RFC 9112 §3.2).
    RepeatedHost,
}

impl HeadError {
    /// The status of the answer before the connection closes.
    pub fn status(&self) -> u16 {
        match self {
            HeadError::TooLarge | HeadError::TooManyHeaders => 431,
            _ => 400,
        }
    }

    /// The machine code of the JSON error.
    pub fn code(&self) -> &'static str {
        match self {
            HeadError::TooLarge | HeadError::TooManyHeaders => "header_fields_too_large",
            _ => "bad_request",
        }
    }
}

impl fmt::Display for HeadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeadError::TooLarge => write!(f, "the request head is over {MAX_HEAD_BYTES} bytes"),
            HeadError::TooManyHeaders => write!(f, "the request has more than {MAX_HEADERS} headers"),
            HeadError::Syntax(e) => write!(f, "the request head is malformed ({e})"),
            HeadError::Target => write!(f, "the request target must be a path starting with /"),
            HeadError::BadContentLength(raw) => write!(f, "Content-Length {raw:?} is not a number"),
            HeadError::RepeatedContentLength => write!(f, "Content-Length is sent more than once"),
            HeadError::TransferEncoding => {
                write!(f, "Transfer-Encoding is not accepted; send the body with one Content-Length")
            }
            HeadError::RepeatedHost => write!(f, "Host is sent more than once"),
        }
    }
}

impl std::error::Error for HeadError {}

/// Parses the head at the start of `buf` (which must not start with blank lines the caller
/// skipped; `httparse` would skip them too). `Ok(None)`: incomplete, read more. `Ok(Some((head,
/// n)))`: the head took `n` bytes; what follows is the body.
pub fn parse(buf: &[u8]) -> Result<Option<(Head, usize)>, HeadError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let consumed = match request.parse(buf) {
        Ok(httparse::Status::Complete(n)) if n <= MAX_HEAD_BYTES => n,
        Ok(httparse::Status::Complete(_)) => return Err(HeadError::TooLarge),
        Ok(httparse::Status::Partial) if buf.len() >= MAX_HEAD_BYTES => return Err(HeadError::TooLarge),
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(HeadError::TooManyHeaders),
        Err(e) => return Err(HeadError::Syntax(e)),
    };
    // A complete parse fills all three; `httparse` accepts only HTTP/1.0 and HTTP/1.1.
    let (Some(method), Some(target), Some(version)) = (request.method, request.path, request.version) else {
        return Err(HeadError::Syntax(httparse::Error::Version));
    };
    if !target.starts_with('/') {
        return Err(HeadError::Target);
    }
    let mut head = Head {
        method: method.to_owned(),
        target: target.to_owned(),
        headers: Vec::with_capacity(request.headers.len()),
        content_length: 0,
        close: false,
        expect_continue: false,
    };
    let (mut seen_length, mut seen_host, mut keep_alive) = (false, false, false);
    for header in request.headers.iter() {
        let value = trim(header.value);
        let name = header.name;
        if name.eq_ignore_ascii_case("content-length") {
            if std::mem::replace(&mut seen_length, true) {
                return Err(HeadError::RepeatedContentLength);
            }
            head.content_length = content_length(value)?;
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(HeadError::TransferEncoding);
        } else if name.eq_ignore_ascii_case("host") {
            if std::mem::replace(&mut seen_host, true) {
                return Err(HeadError::RepeatedHost);
            }
        } else if name.eq_ignore_ascii_case("connection") {
            for token in value.split(|b| *b == b',').map(trim) {
                head.close |= token.eq_ignore_ascii_case(b"close");
                keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
            }
        } else if name.eq_ignore_ascii_case("expect") {
            head.expect_continue = value.eq_ignore_ascii_case(b"100-continue");
        }
        head.headers.push((name.to_owned(), String::from_utf8_lossy(value).into_owned()));
    }
    // HTTP/1.0 closes unless asked not to; `close` wins over `keep-alive` in any order.
    head.close |= version == 0 && !keep_alive;
    Ok(Some((head, consumed)))
}

/// `1*DIGIT` (RFC 9110 §8.6), nothing else: no sign, no spaces inside, no list.
fn content_length(value: &[u8]) -> Result<usize, HeadError> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return Err(HeadError::BadContentLength(String::from_utf8_lossy(value).into_owned()));
    }
    Ok(value
        .iter()
        .try_fold(0usize, |n, d| n.checked_mul(10)?.checked_add(usize::from(d - b'0')))
        .unwrap_or(usize::MAX))
}

fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|b| !matches!(b, b' ' | b'\t')).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !matches!(b, b' ' | b'\t')).map_or(start, |i| i + 1);
    &bytes[start..end.max(start)]
}

/// How many bytes of blank lines (`\r\n` or `\n`) open `buf`: RFC 9112 §2.2 lets a server skip
/// them before a request line. A lone `\r` at the end is left until its `\n` arrives.
pub fn leading_blank_lines(buf: &[u8]) -> usize {
    let mut i = 0;
    loop {
        match buf.get(i..) {
            Some([b'\n', ..]) => i += 1,
            Some([b'\r', b'\n', ..]) => i += 2,
            _ => return i,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(raw: &str) -> Result<Option<(Head, usize)>, HeadError> {
        parse(raw.as_bytes())
    }

    fn ok(raw: &str) -> Head {
        head(raw).expect("valid").expect("complete").0
    }

    #[test]
    fn a_plain_request_parses_with_its_length() {
        let raw =
            "POST /api/x?a=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 12\r\nContent-Type: application/json\r\n\r\n{}";
        let (parsed, n) = head(raw).unwrap().unwrap();
        assert_eq!(n, raw.len() - 2, "the body starts right after the blank line");
        assert_eq!((parsed.method.as_str(), parsed.target.as_str()), ("POST", "/api/x?a=1"));
        assert_eq!(parsed.content_length, 12);
        assert!(!parsed.close && !parsed.expect_continue);
        assert_eq!(parsed.headers[2], ("Content-Type".to_owned(), "application/json".to_owned()));
    }

    #[test]
    fn an_incomplete_head_asks_for_more() {
        assert_eq!(head("GET / HTTP/1.1\r\nHost: h\r\n"), Ok(None));
        assert_eq!(head("GET / HT"), Ok(None));
    }

    #[test]
    fn connection_close_and_http10() {
        assert!(ok("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").close);
        assert!(ok("GET / HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n").close);
        assert!(ok("GET / HTTP/1.0\r\n\r\n").close);
        assert!(!ok("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").close);
        assert!(!ok("GET / HTTP/1.1\r\n\r\n").close);
        assert!(ok("GET / HTTP/1.1\r\nExpect: 100-Continue\r\n\r\n").expect_continue);
    }

    #[test]
    fn repeated_content_length_is_refused_even_when_equal() {
        assert_eq!(
            head("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"),
            Err(HeadError::RepeatedContentLength)
        );
        assert_eq!(
            head("POST / HTTP/1.1\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n"),
            Err(HeadError::RepeatedContentLength)
        );
    }

    #[test]
    fn content_length_must_be_digits_only() {
        for bad in ["+5", "-1", "5, 5", "0x5", "", "5 5", "1e3", "５"] {
            let raw = format!("POST / HTTP/1.1\r\nContent-Length: {bad}\r\n\r\n");
            assert!(
                matches!(head(&raw), Err(HeadError::BadContentLength(_))),
                "{bad:?} must be refused, got {:?}",
                head(&raw)
            );
        }
        assert_eq!(ok("POST / HTTP/1.1\r\nContent-Length: 007\r\n\r\n").content_length, 7);
        assert_eq!(ok("POST / HTTP/1.1\r\nContent-Length:  3 \r\n\r\n").content_length, 3);
        let huge = ok("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999999\r\n\r\n");
        assert_eq!(huge.content_length, usize::MAX, "too large for usize: refused by any body limit");
    }

    #[test]
    fn any_transfer_encoding_is_refused() {
        for te in ["chunked", "identity", "gzip, chunked", "chunked\r\nContent-Length: 3"] {
            let raw = format!("POST / HTTP/1.1\r\nTransfer-Encoding: {te}\r\n\r\n");
            assert_eq!(head(&raw), Err(HeadError::TransferEncoding), "{te:?}");
        }
        assert_eq!(
            head("POST / HTTP/1.1\r\nContent-Length: 3\r\ntransfer-encoding: chunked\r\n\r\n"),
            Err(HeadError::TransferEncoding),
            "a length beside it does not make it acceptable"
        );
    }

    #[test]
    fn whitespace_before_the_colon_is_refused_by_httparse() {
        for raw in [
            "POST / HTTP/1.1\r\nContent-Length : 5\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length\t: 5\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n",
        ] {
            assert_eq!(head(raw), Err(HeadError::Syntax(httparse::Error::HeaderName)), "{raw:?}");
        }
    }

    #[test]
    fn obsolete_line_folding_is_refused_by_httparse() {
        for raw in [
            "POST / HTTP/1.1\r\nX-A: 1\r\n Content-Length: 5\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 5\r\n\t6\r\n\r\n",
            "GET / HTTP/1.1\r\n Host: h\r\n\r\n",
        ] {
            assert_eq!(head(raw), Err(HeadError::Syntax(httparse::Error::HeaderName)), "{raw:?}");
        }
    }

    #[test]
    fn repeated_host_is_refused() {
        assert_eq!(head("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), Err(HeadError::RepeatedHost));
    }

    #[test]
    fn bad_request_lines_and_targets_are_refused() {
        assert!(matches!(head("garbage\r\n\r\n"), Err(HeadError::Syntax(_))));
        assert!(matches!(head("GET / SPDY/3\r\n\r\n"), Err(HeadError::Syntax(_))));
        assert!(matches!(head("GET / HTTP/2.0\r\n\r\n"), Err(HeadError::Syntax(_))));
        assert!(matches!(head("GET /a b HTTP/1.1\r\n\r\n"), Err(HeadError::Syntax(_))));
        assert!(matches!(head("GET / HTTP/1.1\r\nno colon\r\n\r\n"), Err(HeadError::Syntax(_))));
        assert!(matches!(head("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n"), Err(HeadError::Syntax(_))), "a bare CR");
        assert!(matches!(head("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n"), Err(HeadError::Syntax(_))), "a NUL");
        assert_eq!(head("GET http://evil.example/ HTTP/1.1\r\n\r\n"), Err(HeadError::Target));
        assert_eq!(head("CONNECT evil.example:443 HTTP/1.1\r\n\r\n"), Err(HeadError::Target));
    }

    #[test]
    fn limits_answer_431() {
        let many: String = (0..=MAX_HEADERS).map(|i| format!("X-{i}: v\r\n")).collect();
        assert_eq!(head(&format!("GET / HTTP/1.1\r\n{many}\r\n")), Err(HeadError::TooManyHeaders));
        let exactly: String = (0..MAX_HEADERS).map(|i| format!("X-{i}: v\r\n")).collect();
        assert_eq!(ok(&format!("GET / HTTP/1.1\r\n{exactly}\r\n")).headers.len(), MAX_HEADERS);
        let endless = format!("GET / HTTP/1.1\r\nX: {}", "a".repeat(MAX_HEAD_BYTES));
        assert_eq!(head(&endless), Err(HeadError::TooLarge));
        let long_but_complete = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD_BYTES));
        assert_eq!(head(&long_but_complete), Err(HeadError::TooLarge));
        assert_eq!((HeadError::TooLarge.status(), HeadError::TooManyHeaders.status()), (431, 431));
        assert_eq!(HeadError::TransferEncoding.status(), 400);
    }

    #[test]
    fn blank_lines_before_the_request_line_are_counted() {
        assert_eq!(leading_blank_lines(b"\r\n\n\r\nGET"), 5);
        assert_eq!(leading_blank_lines(b"\r"), 0, "a CR waits for its LF");
        assert_eq!(leading_blank_lines(b"GET"), 0);
    }
}
