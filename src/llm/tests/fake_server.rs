//! A scripted HTTP/1.1 server on `127.0.0.1:0` for the provider suite.
//!
//! Every connection gets a thread that reads one request (request line, headers, a
//! `Content-Length` body), hands it to the test through a channel, then plays the scripted
//! [`Reply`]. Stalling replies hold the socket until the client hangs up, so no test sleeps: the
//! client's own timeout ends them.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// Bounds how long a connection thread can outlive a broken test.
const CONNECTION_IDLE_LIMIT: Duration = Duration::from_secs(10);

/// What the server does after reading a request.
#[derive(Clone)]
pub enum Reply {
    /// A complete answer.
    Respond { status: u16, headers: Vec<(&'static str, String)>, body: String },
    /// A 200 whose `Content-Length` promises more than is sent before the connection closes.
    CutBody(String),
    /// Never answers; holds the connection until the client gives up.
    StallHeaders,
    /// Sends the headers and half a body, then holds the connection.
    StallBody,
    /// Closes the connection without answering.
    Close,
}

impl Reply {
    pub fn json(status: u16, body: &str) -> Reply {
        Reply::Respond { status, headers: Vec::new(), body: body.to_string() }
    }
}

/// One request as the server saw it.
#[derive(Debug)]
pub struct Recorded {
    pub method: String,
    /// The request target: path and query.
    pub target: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("the request body is JSON")
    }
}

pub struct FakeServer {
    /// `http://127.0.0.1:<port>`, to use as a provider's base URL.
    pub base: String,
    addr: SocketAddr,
    requests: Receiver<Recorded>,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl FakeServer {
    /// Starts a server answering every request with `reply`.
    pub fn start(reply: Reply) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let (tx, requests) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let acceptor = thread::spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (tx, reply) = (tx.clone(), reply.clone());
                thread::spawn(move || serve(stream, &reply, &tx));
            }
        });
        FakeServer { base: format!("http://{addr}"), addr, requests, stop, acceptor: Some(acceptor) }
    }

    /// The next request received (waits for it: the provider call may still be in flight).
    pub fn request(&self) -> Recorded {
        self.requests.recv_timeout(Duration::from_secs(5)).expect("the server got a request")
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the blocking accept so the acceptor sees the flag and ends.
        let _ = TcpStream::connect(self.addr);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

fn serve(stream: TcpStream, reply: &Reply, tx: &Sender<Recorded>) {
    let _ = stream.set_read_timeout(Some(CONNECTION_IDLE_LIMIT));
    let mut reader = BufReader::new(stream);
    let Some(request) = read_request(&mut reader) else {
        return;
    };
    let _ = tx.send(request);
    let mut stream = reader.into_inner();
    match reply {
        Reply::Respond { status, headers, body } => {
            let extra: String = headers.iter().map(|(n, v)| format!("{n}: {v}\r\n")).collect();
            let _ = write!(
                stream,
                "HTTP/1.1 {status} Scripted\r\ncontent-type: application/json\r\n\
                 content-length: {}\r\nconnection: close\r\n{extra}\r\n{body}",
                body.len()
            );
        }
        Reply::CutBody(body) => {
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{}",
                body.len() * 2,
                body
            );
        }
        Reply::StallHeaders => hold_until_client_leaves(stream),
        Reply::StallBody => {
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{\"content\":");
            hold_until_client_leaves(stream);
        }
        Reply::Close => {}
    }
}

/// Blocks until the client closes its side (read returns 0 or fails).
fn hold_until_client_leaves(mut stream: TcpStream) {
    let mut sink = [0u8; 1024];
    while let Ok(1..) = stream.read(&mut sink) {}
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Recorded> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next()?.to_string(), parts.next()?.to_string());
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let length: usize =
        headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(Recorded { method, target, headers, body: String::from_utf8_lossy(&body).into_owned() })
}
