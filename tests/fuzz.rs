//! Fuzzing with seeds kept in `tests/fuzz/seeds/`: every HTTP route's body and every hook's
//! stdin, mutated by a deterministic generator (bit flips, truncation, type swaps, huge and
//! deeply nested values, bad UTF-8). The properties: no 5xx other than 503 for bad input, no
//! crash (the worker stays healthy), and a hook always exits 0 with one JSON line.

use std::io::Write;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::util::{TempDir, WorkerProcess, free_port, vl};

/// fastrand's generator, seeded: a failing case reproduces from its number.
struct Rng(fastrand::Rng);

impl Rng {
    fn seeded(seed: u64) -> Rng {
        Rng(fastrand::Rng::with_seed(seed))
    }

    fn below(&mut self, n: usize) -> usize {
        self.0.usize(..n.max(1))
    }
}

fn seed(name: &str) -> Value {
    let path = format!("{}/tests/fuzz/seeds/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect("seed file")).expect("seed JSON")
}

/// A structural mutation of a JSON value.
fn mutate_value(rng: &mut Rng, value: &Value, depth: usize) -> Value {
    let replacements = [
        Value::Null,
        json!(true),
        json!(-1),
        json!(1e308),
        json!(""),
        json!("<private>x</private><PRIVATE a=1>"),
        json!([]),
        json!({}),
        json!("x".repeat(20_000)),
        json!("\u{0}\u{feff}é漢字🙂"),
    ];
    match value {
        Value::Object(map) if depth < 4 => {
            let mut out = map.clone();
            let keys: Vec<String> = out.keys().cloned().collect();
            match rng.below(4) {
                0 if !keys.is_empty() => {
                    out.remove(&keys[rng.below(keys.len())]);
                }
                1 if !keys.is_empty() => {
                    let key = keys[rng.below(keys.len())].clone();
                    out.insert(key, replacements[rng.below(replacements.len())].clone());
                }
                2 if !keys.is_empty() => {
                    let key = keys[rng.below(keys.len())].clone();
                    let inner = mutate_value(rng, &out[&key], depth + 1);
                    out.insert(key, inner);
                }
                _ => {
                    out.insert(format!("extra{}", rng.below(10)), replacements[rng.below(replacements.len())].clone());
                }
            }
            Value::Object(out)
        }
        _ => replacements[rng.below(replacements.len())].clone(),
    }
}

/// Raw bytes: a mutated value serialised, sometimes damaged at the byte level.
fn mutate_bytes(rng: &mut Rng, seed: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(&mutate_value(rng, seed, 0)).expect("serialise");
    match rng.below(6) {
        0 => bytes.truncate(rng.below(bytes.len())),
        1 => {
            for _ in 0..3 {
                let i = rng.below(bytes.len());
                bytes[i] ^= 1 << rng.below(8);
            }
        }
        2 => bytes = format!("{}{}", "[".repeat(5000), "]".repeat(5000)).into_bytes(),
        3 => bytes.extend_from_slice(&[0xff, 0xfe, 0x00]),
        _ => {}
    }
    bytes
}

#[test]
fn http_routes_survive_mutated_bodies() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let routes = [
        ("/api/sessions/init", "init.json"),
        ("/api/sessions/observations", "observation.json"),
        ("/api/sessions/observations", "observation-failed.json"),
        ("/api/sessions/file-edit", "file-edit.json"),
        ("/api/sessions/file-edit", "file-edit-original.json"),
        ("/api/sessions/complete", "analysis.json"),
        ("/api/vibelearn/analyze/stack", "analysis.json"),
        ("/api/vibelearn/analyze/concepts", "analysis.json"),
        ("/api/vibelearn/sync", "analysis.json"),
        ("/api/jobs/replay", "replay.json"),
    ];
    let mut rng = Rng::seeded(0x5eed_1234_abcd_0001);
    for case in 0..240 {
        let (route, seed_name) = routes[case % routes.len()];
        let body = mutate_bytes(&mut rng, &seed(seed_name));
        let text = String::from_utf8_lossy(&body).into_owned();
        let (status, reply) = http
            .request("POST", route, Some(text), &[("Content-Type", "application/json")])
            .unwrap_or_else(|e| panic!("case {case} on {route}: the worker did not answer: {e}"));
        assert!(status < 500, "case {case} on {route}: {status} {reply}");
        if status >= 400 {
            assert!(reply["error"].is_string(), "case {case} on {route}: not a JSON error: {reply}");
        }
    }
    assert_eq!(http.get("/api/health").unwrap().0, 200, "the worker must still be healthy");
}

#[test]
fn hooks_survive_mutated_stdin() {
    let dir = TempDir::new();
    let port = free_port(); // no worker: every delivery takes the direct-enqueue path
    std::fs::write(dir.path().join("worker-spawn.stamp"), "fuzz\n").unwrap(); // no worker spawns
    let events = ["session-init", "observation", "file-edit", "summarize", "session-complete"];
    let mut rng = Rng::seeded(0x5eed_4321_dcba_0002);
    for case in 0..45 {
        let (platform, seed_name) = match case % 3 {
            0 => ("claude-code", "hook-claude.json"),
            // A failure, with Cursor's fields: the Claude Code path reads it as Cursor's.
            1 => ("claude-code", "hook-claude-failure.json"),
            _ => ("cursor", "hook-cursor.json"),
        };
        let event = events[case % events.len()];
        let input = mutate_bytes(&mut rng, &seed(seed_name));
        let mut child = vl(dir.path(), port)
            .args(["hook", platform, event])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = child.stdin.take().unwrap().write_all(&input);
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "case {case}: {platform} {event} exited {:?}", output.status);
        assert!(output.stderr.is_empty(), "case {case}: stderr {}", String::from_utf8_lossy(&output.stderr));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(stdout.lines().count(), 1, "case {case}: {stdout:?}");
        serde_json::from_str::<Value>(stdout.trim()).unwrap_or_else(|e| panic!("case {case}: {e}: {stdout}"));
    }
}

// ---------------------------------------------------------------------------------------------
// The request-head parser (`vibelearn::http::head` and `reader`), seeded with the raw heads in
// `tests/fuzz/seeds/heads/` (normal requests, pipelining, each smuggling shape). Properties:
// no panic; a parsed head is framed strictly (a path target, no Transfer-Encoding, at most one
// Content-Length, within the limits); the outcome does not depend on how the bytes are split
// into reads; what the reader accepts, the whole-buffer parse accepts identically; a parsed
// head written out again parses to the same head. `VL_FUZZ_HEAD_CASES` runs more cases.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

use vibelearn::http::head::{self, Head, MAX_HEAD_BYTES, MAX_HEADERS};
use vibelearn::http::reader::{ReadError, RequestReader, Transport};

fn head_seeds() -> Vec<(String, Vec<u8>)> {
    let dir = format!("{}/tests/fuzz/seeds/heads", env!("CARGO_MANIFEST_DIR"));
    let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .expect("the heads seed directory")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "http"))
        .map(|path| (path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&path).unwrap()))
        .collect();
    seeds.sort();
    assert!(seeds.len() >= 10, "seeds missing from {dir}");
    seeds
}

/// Pieces a head parser must meet: line ends, separators, framing headers, odd bytes.
const HEAD_TOKENS: &[&[u8]] = &[
    b"\r\n",
    b"\n",
    b"\r",
    b" ",
    b"\t",
    b":",
    b",",
    b"\r\n ",
    b"\r\n\t",
    b"\r\n\r\n",
    b"Content-Length: 5\r\n",
    b"Content-Length: +5\r\n",
    b"Content-Length : 5\r\n",
    b"content-length: 99999999999999999999999\r\n",
    b"Transfer-Encoding: chunked\r\n",
    b"Host: a\r\n",
    b"Expect: 100-continue\r\n",
    b"Connection: close\r\n",
    b"\0",
    b"\x7f",
    b"\xc3\xa9",
    b"\xff",
    b"HTTP/1.1",
    b"HTTP/1.0",
    b"?a=%2F&b",
    b"0",
    b"-",
];

fn mutate_head(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(8) {
            0 if !bytes.is_empty() => {
                let i = rng.below(bytes.len());
                bytes[i] ^= 1 << rng.below(8);
            }
            1 | 2 => {
                let token = HEAD_TOKENS[rng.below(HEAD_TOKENS.len())];
                bytes.splice(at..at, token.iter().copied());
            }
            3 if !bytes.is_empty() => {
                let end = (at + 1 + rng.below(8)).min(bytes.len());
                bytes.drain(at.min(end)..end);
            }
            4 => bytes.truncate(at),
            5 => {
                // Repeat one line (a second Content-Length, a second Host…).
                let lines: Vec<&[u8]> = seed.split_inclusive(|b| *b == b'\n').collect();
                let line = lines[rng.below(lines.len())].to_vec();
                bytes.splice(at..at, line);
            }
            6 => {
                let i = rng.below(bytes.len().max(1));
                if let Some(b) = bytes.get_mut(i) {
                    b.make_ascii_uppercase();
                }
            }
            _ => {
                // Many headers or one long line, around the limits.
                let filler: Vec<u8> = if rng.below(2) == 0 {
                    (0..MAX_HEADERS - 5 + rng.below(10)).flat_map(|i| format!("X-{i}: v\r\n").into_bytes()).collect()
                } else {
                    format!("X-Long: {}\r\n", "a".repeat(MAX_HEAD_BYTES - 200 + rng.below(400))).into_bytes()
                };
                let first_line_end = bytes.iter().position(|b| *b == b'\n').map_or(bytes.len(), |i| i + 1);
                bytes.splice(first_line_end..first_line_end, filler);
            }
        }
    }
    bytes
}

/// A transport over fixed bytes delivered in the given piece sizes, then the peer's close.
struct Pieces(RefCell<VecDeque<Vec<u8>>>);

impl Pieces {
    fn new(bytes: &[u8], rng: &mut Rng) -> Pieces {
        let mut pieces = VecDeque::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            let n = match rng.below(3) {
                0 => 1,
                1 => 1 + rng.below(16),
                _ => 1 + rng.below(rest.len()),
            }
            .min(rest.len());
            pieces.push_back(rest[..n].to_vec());
            rest = &rest[n..];
        }
        Pieces(RefCell::new(pieces))
    }
}

impl Transport for Pieces {
    fn read_by(&self, buf: &mut [u8], _deadline: Instant) -> std::io::Result<usize> {
        let mut pieces = self.0.borrow_mut();
        let Some(piece) = pieces.front_mut() else { return Ok(0) };
        let n = piece.len().min(buf.len());
        buf[..n].copy_from_slice(&piece[..n]);
        piece.drain(..n);
        if piece.is_empty() {
            pieces.pop_front();
        }
        Ok(n)
    }
}

/// The reader's outcome in a comparable form.
fn read_outcome(bytes: &[u8], rng: &mut Rng) -> Result<Head, String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    RequestReader::default().read_head(&Pieces::new(bytes, rng), deadline).map_err(|e| match e {
        ReadError::Head(e) => format!("refused: {e:?}"),
        other => format!("no request: {other:?}"),
    })
}

/// An input for a failure message: escaped, and cut in the middle when long.
fn shown(input: &[u8]) -> String {
    let text = input.escape_ascii().to_string();
    if text.len() <= 400 {
        text
    } else {
        format!("{} … ({} bytes) … {}", &text[..200], input.len(), &text[text.len() - 200..])
    }
}

fn check_framing(case: usize, input: &[u8], head: &Head) {
    let what = || format!("case {case}: {}", shown(input));
    assert!(head.target.starts_with('/'), "{}", what());
    let count = |name: &str| head.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name)).count();
    assert_eq!(count("transfer-encoding"), 0, "{}", what());
    assert!(count("content-length") <= 1 && count("host") <= 1, "{}", what());
    assert!(head.headers.len() <= MAX_HEADERS, "{}", what());
    if count("content-length") == 0 {
        assert_eq!(head.content_length, 0, "{}", what());
    }
}

/// A head written out again (as HTTP/1.1) parses to the same method, target, headers, length.
fn check_round_trip(case: usize, head: &Head) {
    let mut raw = format!("{} {} HTTP/1.1\r\n", head.method, head.target).into_bytes();
    for (name, value) in &head.headers {
        raw.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    raw.extend_from_slice(b"\r\n");
    // Values with replaced (non-UTF-8) bytes are longer when written out: skip those near the limit.
    if raw.len() > MAX_HEAD_BYTES {
        return;
    }
    let (again, n) = head::parse(&raw).unwrap_or_else(|e| panic!("case {case}: {e}")).expect("complete");
    assert_eq!(n, raw.len());
    assert_eq!(
        (&again.method, &again.target, &again.headers, again.content_length, again.expect_continue),
        (&head.method, &head.target, &head.headers, head.content_length, head.expect_continue),
        "case {case}"
    );
}

#[test]
fn http_heads_parse_strictly_and_the_same_in_any_pieces() {
    let seeds = head_seeds();
    let cases: usize = std::env::var("VL_FUZZ_HEAD_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(3000);
    let mut rng = Rng::seeded(0x5eed_4ead_0000_0003);
    let (mut parsed, mut refused) = (0usize, 0usize);
    for case in 0..cases {
        let (name, seed) = &seeds[case % seeds.len()];
        // The first round is the seeds as they are.
        let input = if case < seeds.len() { seed.clone() } else { mutate_head(&mut rng, seed) };
        let whole = head::parse(&input);
        if let Ok(Some((head, n))) = &whole {
            assert!(*n <= input.len() && *n <= MAX_HEAD_BYTES, "case {case} ({name})");
            check_framing(case, &input, head);
            check_round_trip(case, head);
        }
        let first = read_outcome(&input, &mut rng);
        let second = read_outcome(&input, &mut rng);
        assert_eq!(first, second, "case {case} ({name}): the outcome depends on the read sizes: {}", shown(&input));
        match &first {
            Ok(head) => {
                parsed += 1;
                let Ok(Some((whole_head, _))) = &whole else {
                    panic!(
                        "case {case} ({name}): the reader accepted what the parser did not ({whole:?}): {}",
                        shown(&input)
                    )
                };
                assert_eq!(head, whole_head, "case {case} ({name})");
            }
            Err(e) if e.starts_with("refused") => refused += 1,
            Err(_) => {}
        }
    }
    // The generator must reach both sides of the parser, or the properties prove little.
    assert!(parsed > cases / 10 && refused > cases / 10, "parsed {parsed}, refused {refused} of {cases}");
}

#[test]
fn the_statusline_survives_mutated_stdin() {
    let dir = TempDir::new();
    let mut rng = Rng::seeded(0x5eed_7777_0003);
    let status =
        json!({"session_id": "s", "cwd": "/tmp/x", "workspace": {"current_dir": "/tmp/x", "project_dir": "/tmp/x"}});
    for case in 0..20 {
        let input = mutate_bytes(&mut rng, &status);
        let mut child = vl(dir.path(), free_port())
            .arg("statusline")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = child.stdin.take().unwrap().write_all(&input);
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success() && output.stderr.is_empty(), "case {case}");
        assert_eq!(String::from_utf8_lossy(&output.stdout).lines().count(), 1, "case {case}");
    }
}
