//! The load generator's HTTP/1.1 client: one persistent connection, POSTs with a
//! `Content-Length` body, responses read by their `Content-Length`. As light as a load tool
//! should be (wrk-like) — on two cores, a general client's per-request CPU (ureq: ~200 µs,
//! measured) is taken from the worker it is measuring.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

pub struct KeepAlive {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    request: Vec<u8>,
    /// `Authorization: Bearer <worker.key>\r\n`, or empty without a key.
    authorization: String,
}

impl KeepAlive {
    pub fn connect(port: u16, timeout: Duration) -> std::io::Result<KeepAlive> {
        let authorization =
            super::crash::key_of(port).map(|key| format!("Authorization: Bearer {key}\r\n")).unwrap_or_default();
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        Ok(KeepAlive {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
            request: Vec::with_capacity(1024),
            authorization,
        })
    }

    /// POSTs a JSON body; returns the status code (the body is read and dropped).
    pub fn post_json(&mut self, path: &str, body: &str) -> std::io::Result<u16> {
        self.request.clear();
        write!(
            self.request,
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{}Content-Length: {}\r\n\r\n{body}",
            self.authorization,
            body.len()
        )?;
        self.writer.write_all(&self.request)?;
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        let status = line.split(' ').nth(1).and_then(|s| s.parse().ok()).ok_or_else(|| invalid(&line))?;
        let mut length = 0usize;
        loop {
            line.clear();
            if self.reader.read_line(&mut line)? == 0 {
                return Err(invalid("connection closed in the headers"));
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().map_err(|_| invalid(header))?;
            }
        }
        std::io::copy(&mut (&mut self.reader).take(length as u64), &mut std::io::sink())?;
        Ok(status)
    }
}

fn invalid(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, format!("unexpected response: {what:?}"))
}
