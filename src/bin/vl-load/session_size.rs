//! `vl-load session-size <files>`: the session-size half of the scale benchmark (issue 43 §6,
//! `scripts/scale-bench.sh sessions`). A session of `files` written files goes through the
//! real hooks into a fresh worker (offline provider): `vl hook claude-code session-init`, one
//! `observation` child per Write (and a failing test run, then its fix), then the Stop hook
//! (`summarize`), which asks for the analysis steps. Then, per step (stack, static, concepts,
//! quiz), the time its job ran (from the job's attempt), Stop→everything done, the hooks' p50,
//! the worker's peak RSS (`VmHWM`, a fresh worker per size) and what the steps wrote.
//!
//! The files are the demo session's (a Next.js cart in TypeScript: ~0.3–1.4 KB each, some
//! thirty static patterns a file), each copy in a folder of its own with its number in it, so
//! no two are alike.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The analysis steps the Stop hook asks for, in the order they run.
const STEPS: [&str; 4] = ["analyze_stack", "analyze_static", "analyze_concepts", "analyze_quiz"];

pub fn run(files: usize) -> Value {
    let dir = super::tempfile_dir::Dir::new();
    let port = super::load::free_port();
    let worker = super::crash::start_worker(&dir.0, port);
    let pid = worker.child.id();
    let cwd = format!("/tmp/vl-bench-session-{files}");
    let session = format!("size-{files}-{}", fastrand::u32(..));
    let hook = |event: &str, input: &Value| -> f64 {
        let started = Instant::now();
        let child = Command::new(super::vl_binary())
            .args(["hook", "claude-code", event])
            .env("VIBELEARN_DATA_DIR", &dir.0)
            .env("VIBELEARN_WORKER_PORT", port.to_string())
            .env("VIBELEARN_PROVIDER", "offline")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        if let Ok(mut child) = child {
            if let Some(mut stdin) = child.stdin.take() {
                let _ = stdin.write_all(input.to_string().as_bytes());
            }
            let _ = child.wait();
        }
        started.elapsed().as_secs_f64() * 1000.0
    };
    let write = |n: usize, path: &str, content: &str| {
        json!({"session_id": session, "cwd": cwd, "tool_name": "Write", "tool_use_id": format!("w-{n}"),
               "tool_input": {"file_path": format!("{cwd}/{path}"), "content": content}, "tool_response": {"ok": true}})
    };
    hook("session-init", &json!({"session_id": session, "cwd": cwd, "prompt": "make the cart work"}));
    let sources = demo_files();
    let mut hooks = Vec::with_capacity(files + 3);
    for n in 0..files {
        let (path, content) = &sources[n % sources.len()];
        let path = format!("pkg{n:04}/{path}");
        hooks.push(hook("observation", &write(n, &path, &format!("{content}\n// copy {n}\n"))));
    }
    // A failed test run and the edit after it: the story the prompts and questions look for.
    let failed = json!({"session_id": session, "cwd": cwd, "tool_name": "Bash", "tool_use_id": "test-run",
        "tool_input": {"command": "npx vitest run"},
        "error": "FAIL pkg0005/lib/cart.test.ts > cartTotal\nAssertionError: expected 3 to be 4"});
    hooks.push(hook("observation", &failed));
    let (path, content) = &sources[0];
    hooks.push(hook("observation", &write(files, &format!("pkg0000/{path}"), &format!("{content}\n// fixed\n"))));
    let client = super::crash::client(port);
    // The hooks' events are stored before the Stop hook is sent, so Stop→done times the steps.
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline && stored_edits(&dir.0) < files + 1 {
        std::thread::sleep(Duration::from_millis(20));
    }
    let started = Instant::now();
    hook("summarize", &json!({"session_id": session, "cwd": cwd, "transcript_path": "/nonexistent"}));
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut steps = Value::Null;
    let done = |steps: &Value| {
        STEPS.iter().all(|kind| {
            steps["steps"].as_array().into_iter().flatten().any(|s| s["kind"] == *kind && s["state"] == "succeeded")
        })
    };
    while Instant::now() < deadline {
        if let Ok(response) = client.get(&format!("/api/vibelearn/sessions/{session}/pipeline")) {
            steps = response.body;
            if done(&steps) {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let stop_to_done = started.elapsed().as_secs_f64() * 1000.0;
    let peak_rss_kb = peak_rss_kb(pid);
    let duration_of = |kind: &str| super::job_run_ms(&client, &steps, kind);
    let mut result = json!({"mode": "session-size", "files": files, "succeeded": done(&steps),
        "hook_p50_ms": super::percentile(&sorted(hooks.clone()), 0.5), "stop_to_done_ms": stop_to_done,
        "peak_rss_mb": peak_rss_kb as f64 / 1024.0});
    for kind in STEPS {
        result[format!("{}_ms", kind.trim_start_matches("analyze_"))] = json!(duration_of(kind));
    }
    let count = |sql: &str| -> i64 {
        rusqlite::Connection::open(dir.0.join("vibelearn.db"))
            .and_then(|c| c.query_row(sql, [], |r| r.get(0)))
            .unwrap_or(-1)
    };
    result["patterns"] = json!(count("SELECT COUNT(*) FROM static_patterns"));
    result["concepts"] = json!(count("SELECT COUNT(*) FROM concepts"));
    result["questions"] = json!(count("SELECT COUNT(*) FROM questions"));
    worker.kill();
    result
}

/// The latest content of each file the demo session writes.
fn demo_files() -> Vec<(String, String)> {
    let sample = vibelearn::sample::SampleSession::parse(vibelearn::sample::DEMO_SESSION).expect("the demo session");
    let mut latest: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    for file in sample.steps.iter().filter_map(|s| s.write_file.as_ref()) {
        latest.insert(file.path.clone(), file.content.clone());
    }
    latest.into_iter().collect()
}

/// File edits stored so far (read-only; the worker is the writer).
fn stored_edits(dir: &std::path::Path) -> usize {
    rusqlite::Connection::open_with_flags(dir.join("vibelearn.db"), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|c| c.query_row("SELECT COUNT(*) FROM observations WHERE obs_type = 'file_edit'", [], |r| r.get(0)))
        .map_or(0, |n: i64| n as usize)
}

/// The process's peak resident set (`VmHWM` in /proc), in kB; 0 where there is no /proc.
fn peak_rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn sorted(mut values: Vec<f64>) -> Vec<f64> {
    values.sort_by(f64::total_cmp);
    values
}
