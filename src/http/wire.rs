//! HTTP/1.1 on the wire, as much as the worker needs: the request the routes see (built from a
//! head parsed by [`super::head`] and a body read by [`super::reader`]) and one response written
//! with an explicit `Content-Length`. Loopback clients only: hooks, the CLI, the dashboard.
//!
//! Why not rouille/tiny_http (DESIGN.md's first choice): tiny_http hands every accepted
//! connection to a task pool whose `spawn` decides between "wake an idle thread" and "start a
//! thread" from a counter of waiting threads that still counts a thread already woken; two
//! connections accepted back to back can then leave the second queued with no thread to run it
//! until some other keep-alive connection closes — the multi-second stalls seen under
//! keep-alive (measured here: 0.9–5.4 s on a connection's first request). The server cannot
//! force `Connection: close` either (tiny_http drops that header). The replacement is a thread
//! per connection with a cap (see [`super::slots`] for who gives way at the cap), and deadlines
//! for heads, bodies and idle keep-alive connections (see [`super::connection`]).

use std::io::Write;

use super::head::Head;

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
    /// The request of a validated head and its body.
    pub fn new(head: Head, body: Vec<u8>) -> Request {
        let (raw_path, raw_query) = head.target.split_once('?').unwrap_or((&head.target, ""));
        let query = raw_query
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                (decode_query_component(k), decode_query_component(v))
            })
            .collect();
        let path = raw_path.to_owned();
        Request {
            method: head.method,
            path,
            target: head.target,
            query,
            headers: head.headers,
            body,
            close: head.close,
        }
    }

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

/// The interim answer to `Expect: 100-continue`, sent before reading the body.
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// A path segment, percent-decoded as RFC 3986 says: `%XX` escapes only, so a `+` stays a `+`
/// (a session id `a+b` is addressed as `/…/a+b`). Invalid escapes stay as they are; bytes that
/// are not UTF-8 become U+FFFD.
pub fn decode_path_segment(raw: &str) -> String {
    percent_encoding::percent_decode_str(raw).decode_utf8_lossy().into_owned()
}

/// A query-string name or value, decoded as an HTML form encodes it: `+` is a space, then
/// `%XX` escapes (so `%2B` is a `+`).
pub fn decode_query_component(raw: &str) -> String {
    decode_path_segment(&raw.replace('+', " "))
}

fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
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

    #[test]
    fn a_request_splits_its_target_into_path_and_decoded_query() {
        let raw = b"POST /api/x%20y?limit=5&session=a%2Fb&flag HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n";
        let (head, _) = super::super::head::parse(raw).unwrap().unwrap();
        let request = Request::new(head, b"{}".to_vec());
        assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/api/x%20y"));
        assert_eq!(request.target, "/api/x%20y?limit=5&session=a%2Fb&flag");
        assert_eq!(request.param("limit"), Some("5"));
        assert_eq!(request.param("session"), Some("a/b"));
        assert_eq!(request.param("flag"), Some(""));
        assert_eq!(request.header("host"), Some("h"));
        assert_eq!(request.body, b"{}");
        assert!(!request.close);
    }

    #[test]
    fn paths_decode_as_rfc_3986_and_queries_as_forms() {
        // A `+` in a path is a `+` (a session id `a+b`); in a query it is a space.
        assert_eq!(decode_path_segment("a%2Fb+c"), "a/b+c");
        assert_eq!(decode_query_component("a%2Fb+c"), "a/b c");
        assert_eq!(decode_query_component("a%2Bb"), "a+b");
        assert_eq!(decode_path_segment("100%"), "100%");
        assert_eq!(decode_path_segment("%zz%4"), "%zz%4");
        assert_eq!(decode_path_segment("%C3%A9"), "é");
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
