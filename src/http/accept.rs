//! The accept thread: takes connections, gives each a slot (evicting at the cap, see
//! [`super::slots`]) and a thread ([`super::connection`]), and backs off when accepting fails.
//!
//! # Backoff
//! `accept` fails persistently when the process is out of file descriptors (EMFILE) or the
//! system out of memory for sockets: the pending connection stays in the backlog, so retrying
//! at once fails again, and the old loop spun a core at 100 % until something closed. After
//! such an error the loop now sleeps, from [`AcceptBackoff::FIRST`] doubling to
//! [`AcceptBackoff::MAX`], and starts over after the next success. Errors about one
//! connection only (the client reset it before we took it) retry at once.

use std::io;
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::connection;
use super::error::ApiError;
use super::server::{AppContext, Lifecycle, count};
use super::slots::{Admission, Slots};
use super::wire;

/// The accept loop's pause after failures; `failed` says how long, `succeeded` resets it.
#[derive(Debug, Default)]
pub struct AcceptBackoff {
    /// Failures since the last success that paused the loop.
    streak: u32,
}

impl AcceptBackoff {
    /// The first pause: short enough that a descriptor freed meanwhile is used at once.
    pub const FIRST: Duration = Duration::from_millis(5);
    /// The longest pause: the delay a newcomer may see once descriptors are free again, and
    /// the longest `stop` waits for this thread.
    pub const MAX: Duration = Duration::from_millis(500);

    /// How long to pause after `error` (zero: retry at once).
    pub fn failed(&mut self, error: &io::Error) -> Duration {
        if matches!(
            error.kind(),
            io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset | io::ErrorKind::Interrupted
        ) {
            return Duration::ZERO;
        }
        let pause = Self::FIRST.saturating_mul(1 << self.streak.min(16)).min(Self::MAX);
        self.streak = self.streak.saturating_add(1);
        pause
    }

    pub fn succeeded(&mut self) {
        self.streak = 0;
    }

    /// The first failure of a streak: the one worth a log line.
    pub fn is_first_failure(&self) -> bool {
        self.streak == 1
    }
}

/// Accepts until the server stops.
pub(super) fn accept_loop(
    listener: &TcpListener,
    ctx: &Arc<AppContext>,
    lifecycle: &Arc<Lifecycle>,
    slots: &Arc<Slots<TcpStream>>,
) {
    let mut backoff = AcceptBackoff::default();
    loop {
        let accepted = listener.accept();
        if lifecycle.stopping.load(Ordering::SeqCst) {
            return;
        }
        match accepted {
            Ok((stream, _)) => {
                backoff.succeeded();
                start_connection(stream, ctx, lifecycle, slots);
            }
            Err(e) => {
                let pause = backoff.failed(&e);
                if backoff.is_first_failure() {
                    log::warn!(target: "http", "cannot accept connections ({e}); retrying with backoff");
                }
                std::thread::sleep(pause);
            }
        }
    }
}

fn start_connection(
    stream: TcpStream,
    ctx: &Arc<AppContext>,
    lifecycle: &Arc<Lifecycle>,
    slots: &Arc<Slots<TcpStream>>,
) {
    let stream = Arc::new(stream);
    let slot = match slots.admit(Arc::clone(&stream), Instant::now()) {
        Admission::Admitted { slot, evicted } => {
            if evicted {
                ctx.evictions.fetch_add(1, Ordering::Relaxed);
                log::debug!(target: "http", "at {} connections: evicted the longest-waiting one", slots.open());
            }
            slot
        }
        Admission::Full => {
            count(ctx, "guard", 503);
            refuse_at_cap(stream);
            return;
        }
    };
    let (ctx, lifecycle) = (Arc::clone(ctx), Arc::clone(lifecycle));
    // On a failed spawn the closure is dropped with its slot, so the slot is freed.
    let spawned = std::thread::Builder::new()
        .name("vl-http-conn".into())
        .spawn(move || connection::serve(stream, slot, &ctx, &lifecycle));
    if let Err(e) = spawned {
        log::warn!(target: "http", "cannot start a connection thread: {e}");
    }
}

/// Refusal threads alive (answering 503 at the cap); written by the accept thread (up) and each
/// refusal thread (down). An atomic, not a slot: these threads are outside the slot table, which
/// is full when they run.
static REFUSING: AtomicUsize = AtomicUsize::new(0);

/// Most refusal threads at once. Each lives at most [`connection::WRITE_TIMEOUT`] +
/// [`connection::LINGER_TIMEOUT`]; past this many, a flood is answered without lingering.
const MAX_REFUSING: usize = 32;

/// The 503 at the connection cap, answered as the other error paths answer: written with a
/// deadline, then our side closed and what the client still sends read and discarded for a
/// moment ([`connection::linger`]) — dropping a socket with unread bytes makes the kernel send a
/// reset, which can destroy the answer before the client reads it. On its own short thread, so
/// a client that reads nothing never stalls the accept loop.
fn refuse_at_cap(stream: Arc<TcpStream>) {
    let answer = |stream: &TcpStream, linger: bool| {
        let busy = ApiError::unavailable("every connection is busy in a handler; retry shortly").into_response();
        let _ = stream.set_write_timeout(Some(connection::WRITE_TIMEOUT));
        if wire::write_response(&mut &*stream, &busy, true).is_ok() && linger {
            connection::linger(stream, connection::MAX_DRAIN_BYTES, Instant::now() + connection::LINGER_TIMEOUT);
        }
    };
    if REFUSING.fetch_add(1, Ordering::SeqCst) >= MAX_REFUSING {
        REFUSING.fetch_sub(1, Ordering::SeqCst);
        let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
        answer(&stream, false);
        return;
    }
    let spawned = std::thread::Builder::new().name("vl-http-refuse".into()).spawn(move || {
        answer(&stream, true);
        REFUSING.fetch_sub(1, Ordering::SeqCst);
    });
    if spawned.is_err() {
        REFUSING.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_503_at_the_cap_reaches_a_client_still_sending_its_body() {
        use std::io::{Read, Write};
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let client = std::thread::spawn(move || {
            let mut stream = TcpStream::connect(addr).unwrap();
            stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let body = vec![b'x'; 256 * 1024];
            let head = format!("POST /api/sessions/init HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n", body.len());
            stream.write_all(head.as_bytes()).unwrap();
            // The server answers before reading any of this; the client goes on sending it.
            let _ = stream.write_all(&body);
            let mut answer = Vec::new();
            let read = stream.read_to_end(&mut answer);
            (read.map_err(|e| e.kind()), String::from_utf8_lossy(&answer).into_owned())
        });
        let (stream, _) = listener.accept().unwrap();
        // The head is in, the body on its way: as at the cap, nothing of it is read.
        std::thread::sleep(Duration::from_millis(50));
        refuse_at_cap(Arc::new(stream));
        let (read, answer) = client.join().unwrap();
        assert!(read.is_ok(), "the client saw {read:?} instead of the answer");
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer:?}");
    }

    #[test]
    fn out_of_descriptors_backs_off_doubling_to_a_cap_and_resets() {
        let emfile = io::Error::from_raw_os_error(24);
        let mut backoff = AcceptBackoff::default();
        let pauses: Vec<Duration> = (0..10).map(|_| backoff.failed(&emfile)).collect();
        assert_eq!(pauses[0], AcceptBackoff::FIRST);
        assert_eq!(pauses[1], AcceptBackoff::FIRST * 2);
        assert!(pauses.windows(2).all(|w| w[1] >= w[0]));
        assert_eq!(*pauses.last().unwrap(), AcceptBackoff::MAX);
        backoff.succeeded();
        assert_eq!(backoff.failed(&emfile), AcceptBackoff::FIRST);
        assert!(backoff.is_first_failure());
    }

    #[test]
    fn a_connection_reset_before_accept_retries_at_once() {
        let mut backoff = AcceptBackoff::default();
        assert_eq!(backoff.failed(&io::ErrorKind::ConnectionAborted.into()), Duration::ZERO);
        assert_eq!(backoff.failed(&io::Error::from_raw_os_error(24)), AcceptBackoff::FIRST, "streak not advanced");
    }
}
