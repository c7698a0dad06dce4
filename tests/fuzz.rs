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
