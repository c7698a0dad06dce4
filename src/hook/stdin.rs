//! Reading a hook's stdin: returns as soon as one complete JSON value has arrived (the IDE may
//! keep stdin open), gives up after [`STDIN_TIMEOUT`], refuses more than [`MAX_STDIN_BYTES`].

use std::io::Read;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long a hook waits for its input (SPEC §3.2).
pub const STDIN_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest accepted input (SPEC §3.2).
pub const MAX_STDIN_BYTES: usize = 8 * 1024 * 1024;

/// Why no JSON value could be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StdinError {
    Empty,
    NotJson(String),
    TooLarge,
    TimedOut,
}

impl std::fmt::Display for StdinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StdinError::Empty => write!(f, "stdin was empty"),
            StdinError::NotJson(e) => write!(f, "stdin is not JSON: {e}"),
            StdinError::TooLarge => write!(f, "stdin is over {MAX_STDIN_BYTES} bytes"),
            StdinError::TimedOut => write!(f, "no complete JSON value on stdin within {} s", STDIN_TIMEOUT.as_secs()),
        }
    }
}

/// What one parse attempt over the bytes so far says.
enum Attempt {
    Done(Value),
    NeedMore,
    Invalid(String),
}

fn try_parse(buffer: &[u8]) -> Attempt {
    let mut values = serde_json::Deserializer::from_slice(buffer).into_iter::<Value>();
    match values.next() {
        Some(Ok(value)) => Attempt::Done(value),
        Some(Err(e)) if e.is_eof() => Attempt::NeedMore,
        Some(Err(e)) => Attempt::Invalid(e.to_string()),
        None => Attempt::NeedMore,
    }
}

/// Reads `input` on a helper thread (a blocked read cannot be interrupted otherwise) and
/// returns the first complete JSON value.
pub fn read_json_value<R: Read + Send + 'static>(mut input: R, timeout: Duration) -> Result<Value, StdinError> {
    let (tx, rx) = crossbeam_channel::unbounded::<Option<Vec<u8>>>();
    std::thread::spawn(move || {
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            match input.read(&mut chunk) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(None);
                    return;
                }
                Ok(n) => {
                    if tx.send(Some(chunk[..n].to_vec())).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let deadline = Instant::now() + timeout;
    let mut buffer = Vec::new();
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(remaining) {
            Ok(Some(bytes)) => {
                buffer.extend_from_slice(&bytes);
                if buffer.len() > MAX_STDIN_BYTES {
                    return Err(StdinError::TooLarge);
                }
                // Only a closing bracket can complete a JSON object or array; skipping the
                // parse otherwise keeps large inputs arriving in small chunks linear.
                let last = buffer.iter().rev().find(|b| !b.is_ascii_whitespace());
                if matches!(last, Some(b'}' | b']')) {
                    match try_parse(&buffer) {
                        Attempt::Done(value) => return Ok(value),
                        Attempt::Invalid(e) => return Err(StdinError::NotJson(e)),
                        Attempt::NeedMore => {}
                    }
                }
            }
            Ok(None) | Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                if buffer.iter().all(u8::is_ascii_whitespace) {
                    return Err(StdinError::Empty);
                }
                return match try_parse(&buffer) {
                    Attempt::Done(value) => Ok(value),
                    Attempt::Invalid(e) => Err(StdinError::NotJson(e)),
                    Attempt::NeedMore => Err(StdinError::NotJson("the input ends in the middle of a value".into())),
                };
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => return Err(StdinError::TimedOut),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Yields its chunks, then blocks forever like an IDE that keeps stdin open.
    struct OpenPipe(Vec<Vec<u8>>);

    impl Read for OpenPipe {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                std::thread::sleep(Duration::from_secs(3600));
                return Ok(0);
            }
            let chunk = self.0.remove(0);
            buf[..chunk.len()].copy_from_slice(&chunk);
            Ok(chunk.len())
        }
    }

    #[test]
    fn returns_as_soon_as_a_value_is_complete_even_if_stdin_stays_open() {
        let pipe = OpenPipe(vec![b"{\"a\":".to_vec(), b" [1, 2]".to_vec(), b"}\n".to_vec()]);
        let started = Instant::now();
        assert_eq!(read_json_value(pipe, STDIN_TIMEOUT).unwrap(), serde_json::json!({"a": [1, 2]}));
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn gives_up_when_no_value_completes() {
        let pipe = OpenPipe(vec![b"{\"a\":".to_vec()]);
        assert_eq!(read_json_value(pipe, Duration::from_millis(100)), Err(StdinError::TimedOut));
    }

    #[test]
    fn empty_garbage_and_truncated_inputs_are_errors() {
        assert_eq!(read_json_value(&b"  \n"[..], STDIN_TIMEOUT), Err(StdinError::Empty));
        assert!(matches!(read_json_value(&b"hello"[..], STDIN_TIMEOUT), Err(StdinError::NotJson(_))));
        assert!(matches!(read_json_value(&b"{\"a\": 1"[..], STDIN_TIMEOUT), Err(StdinError::NotJson(_))));
        assert!(read_json_value(&b"{\"a\": 1}}"[..], STDIN_TIMEOUT).is_ok());
    }

    #[test]
    fn oversized_input_is_refused() {
        let huge = format!("{{\"a\":\"{}\"}}", "x".repeat(MAX_STDIN_BYTES));
        assert_eq!(read_json_value(std::io::Cursor::new(huge.into_bytes()), STDIN_TIMEOUT), Err(StdinError::TooLarge));
    }
}
