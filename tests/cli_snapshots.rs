//! The words each command prints for a person, pinned in `tests/snapshots/*.txt`: a change to
//! what a user reads shows in review as a change to a file. Volatile parts (the temporary
//! directory, the port, pids, times, durations) are replaced by placeholders first.
//! `UPDATE_SNAPSHOTS=1 cargo test cli_snapshots` rewrites the files; never under `CI=true`.

use std::path::Path;

use crate::util::{TempDir, free_port, vl};

/// The placeholders for what changes from run to run.
fn normalize(text: &str, dir: &Path, port: u16) -> String {
    let mut text = text.replace(&dir.display().to_string(), "<dir>").replace(&port.to_string(), "<port>");
    for (marker, placeholder) in [("(pid ", "(pid <pid>)")] {
        while let Some(start) =
            text.find(marker).filter(|i| text[i + marker.len()..].starts_with(|c: char| c.is_ascii_digit()))
        {
            let end = text[start..].find(')').map_or(text.len(), |e| start + e + 1);
            text.replace_range(start..end, placeholder);
        }
    }
    // ISO times and durations.
    let words: Vec<String> = text
        .split_inclusive([' ', '\n'])
        .map(|w| {
            let core = w.trim_end();
            let tail = &w[core.len()..];
            if core.len() >= 20 && core.as_bytes()[4] == b'-' && core.contains('T') && core.ends_with('Z') {
                format!("<time>{tail}")
            } else {
                w.to_owned()
            }
        })
        .collect();
    words.concat()
}

/// Compares `actual` with the snapshot `name`, or writes it with `UPDATE_SNAPSHOTS=1`.
fn assert_snapshot(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots").join(format!("{name}.txt"));
    let updating = std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1");
    if updating {
        assert!(std::env::var("CI").map_or(true, |v| v != "true"), "snapshots are never rewritten under CI=true");
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("no snapshot {}: run with UPDATE_SNAPSHOTS=1 and review it", path.display()));
    assert_eq!(actual, expected, "{name}: the output changed (UPDATE_SNAPSHOTS=1 rewrites it, then review the diff)");
}

fn run(dir: &Path, port: u16, args: &[&str], path_var: Option<&str>) -> String {
    let mut command = vl(dir, port);
    command.args(args).stdin(std::process::Stdio::null());
    if let Some(path_var) = path_var {
        command.env("PATH", path_var);
    }
    let output = command.output().unwrap();
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !stderr.is_empty() {
        text.push_str("--- stderr\n");
        text.push_str(&stderr);
    }
    text.push_str(&format!("--- exit {}\n", output.status.code().unwrap_or(-1)));
    normalize(&text, dir, port)
}

#[test]
#[cfg_attr(windows, ignore = "paths and the data dir read differently on Windows")]
fn what_the_commands_say_to_a_person() {
    let dir = TempDir::new();
    let port = free_port();
    // No `claude` on PATH: the provider and the hook form are the same on every machine.
    let bare_path = "/usr/bin:/bin";
    assert_snapshot("status-first-run", &run(dir.path(), port, &["status"], Some(bare_path)));
    assert_snapshot("gaps-first-run", &run(dir.path(), port, &["gaps"], Some(bare_path)));
    let _stop = StopWorker(dir.path(), port);
    assert_snapshot("worker-start", &run(dir.path(), port, &["worker", "start"], None));
    assert_snapshot("worker-start-again", &run(dir.path(), port, &["worker", "start"], None));
    let install = run(dir.path(), port, &["install", "claude-code"], Some(bare_path));
    assert_snapshot("install-claude-code", &install);
    // The worker is stopped first: uninstall would stop it itself, before removing the copy.
    assert_snapshot("worker-stop", &run(dir.path(), port, &["worker", "stop"], None));
    assert_snapshot("uninstall-claude-code", &run(dir.path(), port, &["uninstall", "claude-code"], Some(bare_path)));
}

/// Stops the detached worker `vl worker start` left, however the test ends.
struct StopWorker<'a>(&'a Path, u16);

impl Drop for StopWorker<'_> {
    fn drop(&mut self) {
        let _ = vl(self.0, self.1).args(["worker", "stop"]).output();
    }
}
