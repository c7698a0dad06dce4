//! A scripted HTTP/1.1 server on 127.0.0.1 for tests: it answers requests from a script of
//! responses (status, headers, body, delay, or a dropped connection), then repeats a default;
//! every request is recorded (method, path, headers, body) for assertions.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    Respond {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
        delay: Duration,
    },
    /// Close the connection without answering.
    Drop,
}

impl Reply {
    pub fn json(status: u16, body: &serde_json::Value) -> Reply {
        Reply::Respond { status, headers: vec![], body: body.to_string(), delay: Duration::ZERO }
    }

    pub fn raw(status: u16, body: &str) -> Reply {
        Reply::Respond { status, headers: vec![], body: body.to_owned(), delay: Duration::ZERO }
    }

    pub fn with_header(self, name: &str, value: &str) -> Reply {
        match self {
            Reply::Respond { status, mut headers, body, delay } => {
                headers.push((name.to_owned(), value.to_owned()));
                Reply::Respond { status, headers, body, delay }
            }
            Reply::Drop => Reply::Drop,
        }
    }

    pub fn delayed(self, by: Duration) -> Reply {
        match self {
            Reply::Respond { status, headers, body, .. } => Reply::Respond { status, headers, body, delay: by },
            Reply::Drop => Reply::Drop,
        }
    }
}

/// A request as received.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// Answers a request when the script is empty (instead of the default).
pub type Responder = Arc<dyn Fn(&Recorded) -> Reply + Send + Sync>;

struct State {
    script: VecDeque<Reply>,
    default: Reply,
    responder: Option<Responder>,
    requests: Vec<Recorded>,
}

/// The running server; it lives until the test process ends (threads are cheap).
#[derive(Clone)]
pub struct FakeServer {
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl FakeServer {
    pub fn start(script: Vec<Reply>, default: Reply) -> FakeServer {
        FakeServer::start_on(0, script, default)
    }

    /// The same on `port` (0: any free one): a host that comes up where nothing listened.
    pub fn start_on(port: u16, script: Vec<Reply>, default: Reply) -> FakeServer {
        let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind a fake server");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let state =
            Arc::new(Mutex::new(State { script: script.into(), default, responder: None, requests: Vec::new() }));
        let server = FakeServer { url, state: Arc::clone(&state) };
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = Arc::clone(&state);
                std::thread::spawn(move || serve(stream, &state));
            }
        });
        server
    }

    /// Replaces what is answered from now on.
    pub fn set_script(&self, script: Vec<Reply>, default: Reply) {
        let mut state = self.state.lock().unwrap();
        state.script = script.into();
        state.default = default;
    }

    /// From now on, answers every request with what `responder` says about it.
    pub fn set_responder(&self, responder: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) {
        let mut state = self.state.lock().unwrap();
        state.script.clear();
        state.responder = Some(Arc::new(responder));
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }
}

fn serve(stream: TcpStream, state: &Mutex<State>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let mut writer = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let (method, path) = (parts.next().unwrap_or("").to_owned(), parts.next().unwrap_or("").to_owned());
        let mut headers = Vec::new();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((k, v)) = header.split_once(':') {
                headers.push((k.trim().to_owned(), v.trim().to_owned()));
            }
        }
        let length = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .unwrap_or(0);
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let reply = {
            let mut state = state.lock().unwrap();
            let request = Recorded { method, path, headers, body };
            let reply = match (state.script.pop_front(), &state.responder) {
                (Some(reply), _) => reply,
                (None, Some(responder)) => responder(&request),
                (None, None) => state.default.clone(),
            };
            state.requests.push(request);
            reply
        };
        match reply {
            Reply::Drop => return,
            Reply::Respond { status, headers, body, delay } => {
                std::thread::sleep(delay);
                // A reply that names its own Content-Type (an event stream) keeps it.
                let typed = headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type"));
                let kind = if typed { "" } else { "Content-Type: application/json\r\n" };
                let mut head = format!("HTTP/1.1 {status} X\r\n{kind}Content-Length: {}\r\n", body.len());
                for (k, v) in headers {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                head.push_str("\r\n");
                if writer.write_all(head.as_bytes()).and_then(|_| writer.write_all(body.as_bytes())).is_err() {
                    return;
                }
            }
        }
    }
}
