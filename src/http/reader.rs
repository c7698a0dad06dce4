//! Reading requests off one connection: a fixed buffer of [`MAX_HEAD_BYTES`], one deadline for
//! the whole head and one for the whole body, and the leftover bytes of a pipelined request
//! kept for the next call. What a head means is [`super::head`]'s business; this module only
//! decides when there are enough bytes, and never holds more than the limit.
//!
//! # Why deadlines, not per-read timeouts
//! A timeout per `read` lets a client that sends one byte every few seconds hold its thread
//! forever (measured on the old reader: 300 such clients locked every other client out). Each
//! read here waits only for what is left of one deadline, so a head takes at most
//! [`HEAD_TIMEOUT`](super::connection::HEAD_TIMEOUT) and a body at most
//! [`BODY_TIMEOUT`](super::connection::BODY_TIMEOUT), however the bytes trickle.
//!
//! # Cost
//! Each byte is scanned once for the end of the head (`worker_protocol::find_end` resumes where it
//! stopped) and the head is parsed once, when its blank line has arrived: a head trickled one
//! byte at a time costs no more parsing than one sent whole.

use std::io::{self, Read};
use std::net::TcpStream;
use std::time::Instant;

use super::head::{self, Head, HeadError, MAX_HEAD_BYTES};

/// A byte stream with deadlines: `TcpStream` in the server, a script in the tests.
pub trait Transport {
    /// Reads into `buf`, waiting no later than `deadline`. `Ok(0)` is the peer's close; a passed
    /// deadline is `ErrorKind::TimedOut`.
    fn read_by(&self, buf: &mut [u8], deadline: Instant) -> io::Result<usize>;
}

impl Transport for TcpStream {
    fn read_by(&self, buf: &mut [u8], deadline: Instant) -> io::Result<usize> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::ErrorKind::TimedOut.into());
            }
            // One setsockopt per read, so the wait is whatever is left of the deadline (no
            // measurable cost: 119 µs of worker CPU per observation POST, 118 before).
            self.set_read_timeout(Some(left))?;
            match (&*self).read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                    return Err(io::ErrorKind::TimedOut.into());
                }
                other => return other,
            }
        }
    }
}

/// Why no request (or no body) could be read.
#[derive(Debug)]
pub enum ReadError {
    /// The peer closed, or the head deadline passed, before any byte of a request: an idle
    /// keep-alive connection ending. Close quietly.
    Closed,
    /// Part of a head arrived, then the deadline passed: answer 408.
    HeadTimeout,
    /// Part of a head arrived, then the peer closed: nobody to answer.
    PeerClosedInHead,
    /// The head is refused (400 or 431, [`HeadError::status`]).
    Head(HeadError),
    /// The body did not fully arrive before its deadline, or the peer closed inside it.
    BodyIncomplete,
    Io(io::Error),
}

/// One connection's read side: the buffer and where the unread bytes are in it.
pub struct RequestReader {
    buf: Box<[u8]>,
    /// Unread bytes are `buf[start..end]`.
    start: usize,
    end: usize,
}

impl Default for RequestReader {
    fn default() -> Self {
        RequestReader { buf: vec![0; MAX_HEAD_BYTES].into_boxed_slice(), start: 0, end: 0 }
    }
}

impl RequestReader {
    /// Reads the next request's head, whole, by `deadline`.
    pub fn read_head<T: Transport>(&mut self, transport: &T, deadline: Instant) -> Result<Head, ReadError> {
        let mut skipped = 0;
        let mut scanned = 0;
        loop {
            let blank = head::leading_blank_lines(&self.buf[self.start..self.end]);
            if blank > 0 {
                self.start += blank;
                skipped += blank;
                scanned = 0;
            }
            let pending = &self.buf[self.start..self.end];
            // The end first, then the size: whether a head fits must not depend on how much
            // beyond it one read happened to bring.
            if let Some(end) = crate::worker_protocol::find_end(pending, scanned) {
                if skipped + end > MAX_HEAD_BYTES {
                    return Err(ReadError::Head(HeadError::TooLarge));
                }
                match head::parse(&pending[..end]) {
                    Ok(Some((parsed, n))) => {
                        self.start += n;
                        return Ok(parsed);
                    }
                    // The blank line was found but httparse wants more: read on; the limit
                    // and the deadline still bound it.
                    Ok(None) => {}
                    Err(e) => return Err(ReadError::Head(e)),
                }
            }
            if skipped + pending.len() >= MAX_HEAD_BYTES {
                return Err(ReadError::Head(HeadError::TooLarge));
            }
            scanned = pending.len();
            let idle = skipped == 0 && pending.is_empty();
            self.compact();
            match transport.read_by(&mut self.buf[self.end..], deadline) {
                Ok(0) if idle => return Err(ReadError::Closed),
                Ok(0) => return Err(ReadError::PeerClosedInHead),
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::TimedOut && idle => return Err(ReadError::Closed),
                Err(e) if e.kind() == io::ErrorKind::TimedOut => return Err(ReadError::HeadTimeout),
                Err(e) => return Err(ReadError::Io(e)),
            }
        }
    }

    /// Reads a body of `length` bytes (already checked against the limit) by `deadline`:
    /// first what the head's read brought along, then straight from the transport.
    pub fn read_body<T: Transport>(
        &mut self,
        transport: &T,
        length: usize,
        deadline: Instant,
    ) -> Result<Vec<u8>, ReadError> {
        let buffered = length.min(self.end - self.start);
        let mut body = Vec::with_capacity(length);
        body.extend_from_slice(&self.buf[self.start..self.start + buffered]);
        self.start += buffered;
        body.resize(length, 0);
        let mut filled = buffered;
        while filled < length {
            match transport.read_by(&mut body[filled..], deadline) {
                Ok(0) => return Err(ReadError::BodyIncomplete),
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::TimedOut => return Err(ReadError::BodyIncomplete),
                Err(e) => return Err(ReadError::Io(e)),
            }
        }
        Ok(body)
    }

    /// Bytes already read past the last request (a pipelined request, or a refused body).
    pub fn buffered(&self) -> usize {
        self.end - self.start
    }

    /// Forgets the buffered bytes (a refused body being drained).
    pub fn discard_buffered(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Moves the unread bytes to the front, so a read has the rest of the buffer.
    fn compact(&mut self) {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::VecDeque;
    use std::time::Duration;

    /// A transport that returns its chunks one read at a time, then closes (or times out).
    pub(crate) struct Script {
        chunks: RefCell<VecDeque<Vec<u8>>>,
        then: io::ErrorKind,
        pub reads: RefCell<usize>,
    }

    impl Script {
        pub(crate) fn new(chunks: &[&[u8]]) -> Script {
            Script {
                chunks: RefCell::new(chunks.iter().map(|c| c.to_vec()).collect()),
                then: io::ErrorKind::UnexpectedEof,
                reads: RefCell::new(0),
            }
        }

        /// After the chunks, reads time out instead of returning the peer's close.
        pub(crate) fn then_time_out(mut self) -> Script {
            self.then = io::ErrorKind::TimedOut;
            self
        }
    }

    impl Transport for Script {
        fn read_by(&self, buf: &mut [u8], _deadline: Instant) -> io::Result<usize> {
            *self.reads.borrow_mut() += 1;
            let mut chunks = self.chunks.borrow_mut();
            let Some(chunk) = chunks.front_mut() else {
                return if self.then == io::ErrorKind::TimedOut { Err(self.then.into()) } else { Ok(0) };
            };
            let n = chunk.len().min(buf.len());
            buf[..n].copy_from_slice(&chunk[..n]);
            chunk.drain(..n);
            if chunk.is_empty() {
                chunks.pop_front();
            }
            Ok(n)
        }
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    #[test]
    fn pipelined_requests_come_out_one_by_one_with_their_bodies() {
        let script = Script::new(&[
            b"POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\n\r\nGET /c HTTP/1.1\r\n\r\n",
        ]);
        let mut reader = RequestReader::default();
        let first = reader.read_head(&script, soon()).unwrap();
        assert_eq!((first.target.as_str(), first.content_length), ("/a", 3));
        assert_eq!(reader.read_body(&script, 3, soon()).unwrap(), b"abc");
        assert_eq!(reader.read_head(&script, soon()).unwrap().target, "/b");
        assert_eq!(reader.read_head(&script, soon()).unwrap().target, "/c");
        assert_eq!(*script.reads.borrow(), 1, "one read brought all three");
        assert!(matches!(reader.read_head(&script, soon()), Err(ReadError::Closed)));
    }

    #[test]
    fn a_head_trickled_byte_by_byte_is_parsed_once_complete() {
        let raw = b"\r\nGET /x HTTP/1.1\r\nHost: h\r\n\r\n";
        let chunks: Vec<&[u8]> = raw.chunks(1).collect();
        let script = Script::new(&chunks);
        let mut reader = RequestReader::default();
        assert_eq!(reader.read_head(&script, soon()).unwrap().target, "/x");
        assert_eq!(reader.buffered(), 0);
    }

    #[test]
    fn a_body_arrives_partly_with_the_head_and_partly_after() {
        let script = Script::new(&[b"POST / HTTP/1.1\r\nContent-Length: 6\r\n\r\nab", b"cd", b"ef"]);
        let mut reader = RequestReader::default();
        let head = reader.read_head(&script, soon()).unwrap();
        assert_eq!(reader.read_body(&script, head.content_length, soon()).unwrap(), b"abcdef");
    }

    #[test]
    fn silence_is_a_quiet_close_but_half_a_head_is_a_timeout() {
        let mut reader = RequestReader::default();
        assert!(matches!(reader.read_head(&Script::new(&[]).then_time_out(), soon()), Err(ReadError::Closed)));
        let half = Script::new(&[b"GET / HTTP/1.1\r\nHo"]).then_time_out();
        assert!(matches!(reader.read_head(&half, soon()), Err(ReadError::HeadTimeout)));
        let closed = Script::new(&[b"GET / HTTP/1.1\r\nHo"]);
        assert!(matches!(RequestReader::default().read_head(&closed, soon()), Err(ReadError::PeerClosedInHead)));
    }

    #[test]
    fn a_short_body_is_incomplete() {
        let script = Script::new(&[b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab"]);
        let mut reader = RequestReader::default();
        reader.read_head(&script, soon()).unwrap();
        assert!(matches!(reader.read_body(&script, 5, soon()), Err(ReadError::BodyIncomplete)));
    }

    #[test]
    fn an_endless_line_stops_at_the_limit_without_reading_further() {
        let line = vec![b'a'; 4096];
        let chunks: Vec<&[u8]> =
            std::iter::once(&b"GET / HTTP/1.1\r\nX: "[..]).chain(std::iter::repeat_n(&line[..], 100)).collect();
        let script = Script::new(&chunks);
        let mut reader = RequestReader::default();
        assert!(matches!(reader.read_head(&script, soon()), Err(ReadError::Head(HeadError::TooLarge))));
        assert!(*script.reads.borrow() <= 6, "stops at 16 KiB: {} reads", script.reads.borrow());
    }

    #[test]
    fn endless_blank_lines_count_towards_the_limit() {
        let blank = b"\r\n".repeat(MAX_HEAD_BYTES);
        let script = Script::new(&[&blank]);
        assert!(matches!(
            RequestReader::default().read_head(&script, soon()),
            Err(ReadError::Head(HeadError::TooLarge))
        ));
    }

    #[test]
    fn a_smuggling_head_is_refused_before_its_body_is_read() {
        let script = Script::new(&[b"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 30\r\n\r\nabc"]);
        assert!(matches!(
            RequestReader::default().read_head(&script, soon()),
            Err(ReadError::Head(HeadError::RepeatedContentLength))
        ));
    }
}
