//! One connection's life, on its own thread: read a request (the head by one deadline, the body
//! by another), run the route inside `catch_unwind`, answer, and go on while the client keeps
//! the connection alive. A request that cannot be read is answered with the JSON error of its
//! kind and the connection is closed gracefully (`linger`).
//!
//! # Guards
//! The connection's [`Slot`] and the server's in-flight counter are guards: a return, an
//! eviction, a panicking route or a panic anywhere else on this thread releases both. A route
//! that panics is answered 500 JSON and the connection closed, so a bug costs one request, not
//! a slot (the old server leaked one per panic, and had no answer for the client).
//!
//! # One descriptor
//! Reads and writes go through `&TcpStream` (both `Read` and `Write` are implemented for it),
//! and the slot table holds the same `Arc`: no `try_clone`, one descriptor per connection
//! (the old server used two).

use std::io::Write;
use std::net::{Shutdown, TcpStream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::error::ApiError;
use super::head::HeadError;
use super::reader::{ReadError, RequestReader, Transport};
use super::server::{AppContext, Lifecycle, MAX_BODY_BYTES, count, handle};
use super::slots::{Phase, Slot};
use super::wire::{self, Request, Response};

/// A whole request head must arrive within this, counted from when the connection became ready
/// for it (accepted, or its previous response sent). It doubles as the keep-alive idle
/// timeout: a connection that sends nothing for this long is closed quietly, giving its thread
/// back. 5 s is what the old per-read timeout was; a hook's or the CLI's head arrives in one
/// segment within a millisecond on loopback, so only a stalled or hostile client meets it.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(5);

/// A whole body (at most [`MAX_BODY_BYTES`]) must arrive within this, counted from the end of
/// its head. Loopback moves 1 MiB in milliseconds; the margin is for a client that waits for
/// `100 Continue`, or a loaded machine.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// Writing one response (or the `100 Continue`) may block this long on a client that does not
/// read; the old server used the same 5 s.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// After an error answer, how long the connection keeps reading (and discarding) what the
/// client still sends before closing: closing with unread bytes makes the kernel send a reset,
/// which can destroy the answer before the client reads it (the client of a 413 is usually
/// still sending its body). Lingering connections are the first evicted at the cap.
pub const LINGER_TIMEOUT: Duration = Duration::from_secs(2);

/// Most bytes discarded while lingering: the largest refused body a client may finish sending
/// (the old server's drain limit, kept).
pub const MAX_DRAIN_BYTES: usize = 64 * 1024 * 1024;

/// Requests inside a handler; the guard keeps the count right on any exit.
struct InFlight<'a>(&'a AtomicUsize);

impl<'a> InFlight<'a> {
    fn enter(counter: &'a AtomicUsize) -> InFlight<'a> {
        counter.fetch_add(1, Ordering::SeqCst);
        InFlight(counter)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Serves one connection's requests until it closes, idles out, is evicted, or the server stops.
pub(super) fn serve(stream: Arc<TcpStream>, slot: Slot<TcpStream>, ctx: &AppContext, lifecycle: &Lifecycle) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let mut reader = RequestReader::default();
    loop {
        let ready = Instant::now();
        if !slot.enter(Phase::Head, ready) {
            return;
        }
        let request = match read_request(&stream, &mut reader, &slot, ready) {
            Ok(request) => request,
            Err(refusal) => return refuse(ctx, &stream, &mut reader, &slot, refusal),
        };
        let in_flight = InFlight::enter(&lifecycle.in_flight);
        // Checked after counting the request in, so `stop` either sees it or it sees `stopping`.
        if lifecycle.stopping.load(Ordering::SeqCst) {
            drop(in_flight);
            let response = ApiError::new(503, "shutting_down", "the worker is shutting down").into_response();
            let _ = wire::write_response(&mut &*stream, &response, true);
            return;
        }
        if !slot.enter(Phase::Handling, Instant::now()) {
            return; // evicted while the request completed: nobody would read the answer
        }
        let (response, panicked) = handle_caught(ctx, &request);
        drop(in_flight);
        let close = request.close || panicked || lifecycle.stopping.load(Ordering::SeqCst);
        if wire::write_response(&mut &*stream, &response, close).is_err() || close {
            return;
        }
    }
}

/// Why a request was not handled, and what to answer.
enum Refusal {
    /// Nothing to answer: the client left, idled out, or the connection was evicted.
    Quiet,
    /// Answer this error, then linger, discarding up to this many bytes.
    Answer(ApiError, usize),
}

fn read_request(
    stream: &TcpStream,
    reader: &mut RequestReader,
    slot: &Slot<TcpStream>,
    ready: Instant,
) -> Result<Request, Refusal> {
    let head = reader.read_head(stream, ready + HEAD_TIMEOUT).map_err(refusal)?;
    let length = head.content_length;
    if length > MAX_BODY_BYTES {
        // Before reading any of it (and without `100 Continue`, so a client that waits for
        // one never sends it).
        let error = ApiError::new(413, "payload_too_large", format!("the request body is over {MAX_BODY_BYTES} bytes"));
        return Err(Refusal::Answer(error, length.min(MAX_DRAIN_BYTES)));
    }
    if length == 0 {
        return Ok(Request::new(head, Vec::new()));
    }
    let started = Instant::now();
    if !slot.enter(Phase::Body, started) {
        return Err(Refusal::Quiet);
    }
    if head.expect_continue && reader.buffered() < length {
        let mut writer = stream;
        writer.write_all(wire::CONTINUE).map_err(|_| Refusal::Quiet)?;
    }
    let body = reader.read_body(stream, length, started + BODY_TIMEOUT).map_err(refusal)?;
    Ok(Request::new(head, body))
}

fn refusal(error: ReadError) -> Refusal {
    match error {
        ReadError::Closed | ReadError::PeerClosedInHead | ReadError::Io(_) => Refusal::Quiet,
        ReadError::HeadTimeout => Refusal::Answer(
            ApiError::new(
                408,
                "request_timeout",
                format!("the request head did not arrive within {} s", HEAD_TIMEOUT.as_secs()),
            ),
            MAX_DRAIN_BYTES,
        ),
        ReadError::Head(e) => Refusal::Answer(head_error(&e), MAX_DRAIN_BYTES),
        ReadError::BodyIncomplete => Refusal::Answer(
            ApiError::bad_request(format!(
                "the body is shorter than its Content-Length (or took over {} s)",
                BODY_TIMEOUT.as_secs()
            )),
            MAX_DRAIN_BYTES,
        ),
    }
}

fn head_error(error: &HeadError) -> ApiError {
    ApiError::new(error.status(), error.code(), error.to_string())
}

fn refuse(ctx: &AppContext, stream: &TcpStream, reader: &mut RequestReader, slot: &Slot<TcpStream>, refusal: Refusal) {
    let Refusal::Answer(error, drain) = refusal else { return };
    count(ctx, "guard", error.status);
    if wire::write_response(&mut &*stream, &error.into_response(), true).is_ok()
        && slot.enter(Phase::Lingering, Instant::now())
    {
        reader.discard_buffered();
        linger(stream, drain, Instant::now() + LINGER_TIMEOUT);
    }
}

/// Closes gracefully after an error answer: our side first (the client sees the end of the
/// answer), then reads and discards what the client still sends, until it closes, `drain`
/// bytes, or `deadline`.
pub(super) fn linger<T: Transport + ShutdownWrite>(stream: &T, drain: usize, deadline: Instant) {
    stream.shutdown_write();
    let mut sink = [0u8; 16 * 1024];
    let mut discarded = 0;
    while discarded < drain {
        match stream.read_by(&mut sink, deadline) {
            Ok(0) | Err(_) => return,
            Ok(n) => discarded += n,
        }
    }
}

/// The write half's close, for [`linger`].
pub(super) trait ShutdownWrite {
    fn shutdown_write(&self);
}

impl ShutdownWrite for TcpStream {
    fn shutdown_write(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
}

/// Runs the route; a panic becomes a 500 JSON answer (and the caller closes the connection).
fn handle_caught(ctx: &AppContext, request: &Request) -> (Response, bool) {
    match catch_unwind(AssertUnwindSafe(|| handle(ctx, request))) {
        Ok(response) => (response, false),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_owned());
            log::error!(target: "http", "{} {} panicked: {what}", request.method, request.path);
            count(ctx, "panic", 500);
            let error = ApiError::new(
                500,
                "internal_error",
                "the worker failed on this request (a bug, written to its log); other requests are unaffected",
            );
            (error.into_response(), true)
        }
    }
}
