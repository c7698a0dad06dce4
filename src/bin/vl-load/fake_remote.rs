//! A fake remote on 127.0.0.1 (an LLM provider or the upstream sync server) for the
//! `llm-upstream` fault scenario: of its first `faulty` requests, request n gets
//! `CYCLE[n % 7]` — a hang past the client's timeout, 429 with Retry-After, 500, 401, malformed
//! JSON, a connection cut mid-response, or a good answer made by the caller's closure — and every
//! later one a good answer (the remote heals); every request is recorded with what it got.
//! One connection = one request (`Connection: close`); tests/fake_http.rs is the scripted
//! sibling the integration tests use.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the remote does with one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Fault {
    /// Reads the request, answers nothing for `hang`, then closes.
    Hang,
    RateLimited,
    ServerError,
    Unauthorised,
    /// 200 with a body that is not JSON.
    Malformed,
    /// 200 whose `Content-Length` promises more than is sent before the connection closes.
    CutMidResponse,
    Good,
}

impl Fault {
    /// Whether the remote applied the request: every 2xx, and a hang — modelled as a server
    /// that applied it but whose answer never came back, the case idempotency keys exist for.
    pub(crate) fn took_in(self) -> bool {
        matches!(self, Fault::Hang | Fault::Malformed | Fault::CutMidResponse | Fault::Good)
    }
}

pub(crate) const CYCLE: [Fault; 7] = [
    Fault::Hang,
    Fault::RateLimited,
    Fault::ServerError,
    Fault::Unauthorised,
    Fault::Malformed,
    Fault::CutMidResponse,
    Fault::Good,
];

/// One request as received, and the fault it was served.
pub(crate) struct Served {
    pub(crate) fault: Fault,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Served {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

type GoodAnswer = dyn Fn(&[u8]) -> String + Send + Sync;

/// The running server; its accept thread lives until the process ends.
pub(crate) struct FakeRemote {
    pub(crate) url: String,
    /// Appended by connection threads, read by the scenario at the end.
    served: Arc<Mutex<Vec<Served>>>,
}

impl FakeRemote {
    pub(crate) fn start(
        hang: Duration,
        faulty: usize,
        good: impl Fn(&[u8]) -> String + Send + Sync + 'static,
    ) -> FakeRemote {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a fake remote");
        let url = format!("http://{}", listener.local_addr().expect("fake remote address"));
        let served: Arc<Mutex<Vec<Served>>> = Arc::default();
        let good: Arc<GoodAnswer> = Arc::new(good);
        let log = served.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (log, good) = (log.clone(), good.clone());
                std::thread::spawn(move || serve(stream, &log, &*good, hang, faulty));
            }
        });
        FakeRemote { url, served }
    }

    /// Takes what was served so far.
    pub(crate) fn served(&self) -> Vec<Served> {
        std::mem::take(&mut *self.served.lock().expect("served"))
    }
}

fn serve(stream: TcpStream, log: &Mutex<Vec<Served>>, good: &GoodAnswer, hang: Duration, faulty: usize) {
    let Ok(clone) = stream.try_clone() else { return };
    let mut reader = BufReader::new(clone);
    let mut writer = stream;
    let mut line = String::new();
    let mut headers = Vec::new();
    while reader.read_line(&mut line).unwrap_or(0) > 0 {
        let header = std::mem::take(&mut line);
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
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let (fault, answer) = {
        let mut log = log.lock().expect("served");
        let fault = if log.len() < faulty { CYCLE[log.len() % CYCLE.len()] } else { Fault::Good };
        let answer = if fault == Fault::Good { good(&body) } else { String::new() };
        log.push(Served { fault, headers, body });
        (fault, answer)
    };
    let head = |status: &str, extra: &str, declared: usize| {
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nConnection: close\r\n{extra}Content-Length: {declared}\r\n\r\n"
        )
    };
    let respond = |status: &str, extra: &str, body: &str| head(status, extra, body.len()) + body;
    let reply = match fault {
        Fault::Hang => {
            std::thread::sleep(hang);
            return;
        }
        Fault::RateLimited => respond("429 Too Many Requests", "Retry-After: 1\r\n", "{}"),
        Fault::ServerError => respond("500 Internal Server Error", "", "{}"),
        Fault::Unauthorised => respond("401 Unauthorized", "", r#"{"error":"invalid key"}"#),
        Fault::Malformed => respond("200 OK", "", "{\"content\": [{\"type\": \"te"),
        Fault::CutMidResponse => head("200 OK", "", 4096) + "{\"content\": [",
        Fault::Good => respond("200 OK", "", &answer),
    };
    let _ = writer.write_all(reply.as_bytes());
}
