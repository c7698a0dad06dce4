//! Install state shared across runs and processes (issue 39 §1, §2, §6; issue 41 §2): a second
//! install never costs the user an edit, installs started together keep every hook runnable,
//! uninstall takes out only what install added. Real `vl` processes, real files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::util::{TempDir, free_port, vl};

fn run(home: &Path, args: &[&str]) -> Output {
    vl(home, free_port()).env("PATH", "/usr/bin:/bin").args(args).stdin(Stdio::null()).output().expect("run vl")
}

fn said(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn assert_ok(output: &Output) {
    assert!(output.status.success(), "{}", said(output));
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `text` with `"<key>": <value>` added as the object's first member (a user's hand edit).
fn with_member(text: &str, key: &str, value: &str) -> String {
    let at = text.find('{').expect("an object") + 1;
    format!("{}\n  \"{key}\": {value},{}", &text[..at], &text[at..])
}

/// The agents whose user files these tests install into (Codex needs a Codex to trust its
/// hooks with; `tests/codex_cli.rs` covers it with the real one).
const AGENTS: [(&str, &str); 4] = [
    ("claude-code", ".claude/settings.json"),
    ("cursor", ".cursor/hooks.json"),
    ("gemini", ".gemini/settings.json"),
    ("copilot", ".copilot/settings.json"),
];

#[test]
fn a_second_install_never_costs_the_user_an_edit() {
    // The reproduction: `{"model":"opus"}`, a permissions block added by the user,
    // then `--statusline`, then uninstall.
    let home = TempDir::new();
    let path = home.path().join(".claude/settings.json");
    write(&path, "{\"model\":\"opus\"}\n");
    assert_ok(&run(home.path(), &["install", "claude-code"]));
    let edited = with_member(&read(&path), "permissions", "{\"allow\": [\"Bash(ls:*)\"]}");
    std::fs::write(&path, &edited).unwrap();
    assert_ok(&run(home.path(), &["install", "claude-code", "--statusline"]));
    let out = run(home.path(), &["uninstall", "claude-code"]);
    assert_ok(&out);
    let after: Value = serde_json::from_str(&read(&path)).unwrap();
    assert_eq!(
        after,
        serde_json::json!({"model": "opus", "permissions": {"allow": ["Bash(ls:*)"]}}),
        "{}\n{}",
        said(&out),
        read(&path)
    );

    // Every agent, in a file install created: the user's block added between two installs
    // stays, and so does the file.
    for (agent, file) in AGENTS {
        let home = TempDir::new();
        let path = home.path().join(file);
        assert_ok(&run(home.path(), &["install", agent]));
        let edited = with_member(&read(&path), "env", "{\"A\": \"1\"}");
        std::fs::write(&path, &edited).unwrap();
        let again: &[&str] =
            if agent == "claude-code" { &["install", agent, "--statusline"] } else { &["install", agent] };
        assert_ok(&run(home.path(), again));
        assert_ok(&run(home.path(), &["uninstall", agent]));
        assert!(path.exists(), "{agent}: the file holds the user's env now; it must stay");
        let after: Value = serde_json::from_str(&read(&path)).unwrap();
        let env = serde_json::json!({"A": "1"});
        assert_eq!(after["env"], env, "{agent}: {}", read(&path));
        assert!(after.get("hooks").is_none() && after.get("statusLine").is_none(), "{agent}: {}", read(&path));
    }

    // Unchanged between installs, a re-install that changes the file still gives the user's
    // own bytes back, byte for byte.
    let home = TempDir::new();
    let path = home.path().join(".claude/settings.json");
    let mine = "{\n    \"model\": \"opus\",   \"n\": 1.10\n}\n";
    write(&path, mine);
    assert_ok(&run(home.path(), &["install", "claude-code"]));
    assert_ok(&run(home.path(), &["install", "claude-code", "--statusline"]));
    let out = run(home.path(), &["uninstall", "claude-code"]);
    assert!(said(&out).contains("back to your own bytes"), "{}", said(&out));
    assert_eq!(read(&path), mine);
}

#[test]
fn uninstall_leaves_the_containers_and_profiles_the_user_had() {
    let home = TempDir::new();
    let path = home.path().join(".gemini/settings.json");
    // An empty `hooks` object of the user's, and an empty event list, kept after a user edit.
    write(&path, "{\n  \"hooks\": {\n    \"AfterAgent\": []\n  }\n}\n");
    assert_ok(&run(home.path(), &["install", "gemini"]));
    let edited = with_member(&read(&path), "theme", "\"dark\"");
    std::fs::write(&path, &edited).unwrap();
    assert_ok(&run(home.path(), &["uninstall", "gemini"]));
    let after: Value = serde_json::from_str(&read(&path)).unwrap();
    assert_eq!(after, serde_json::json!({"theme": "dark", "hooks": {"AfterAgent": []}}), "{}", read(&path));
    if vibelearn::platform::HAS_USER_PATH {
        return; // Windows: --add-to-path edits the registry, which a test must not touch.
    }
    // A profile file that existed, empty, before `--add-to-path` stays after uninstall.
    let home = TempDir::new();
    std::fs::write(home.path().join(".profile"), "").unwrap();
    let out = vl(home.path(), free_port())
        .env("PATH", "/usr/bin:/bin")
        .env("SHELL", "/bin/sh")
        .args(["install", "copilot", "--add-to-path"])
        .output()
        .unwrap();
    assert_ok(&out);
    assert!(read(&home.path().join(".profile")).contains("/env\""), "{}", said(&out));
    assert_ok(&run(home.path(), &["uninstall", "copilot"]));
    assert_eq!(read(&home.path().join(".profile")), "", "the user's empty profile stays");
}

#[test]
fn a_refused_install_leaves_nothing_behind() {
    let home = TempDir::new();
    let data = home.path().join(".vibelearn");
    let out = vl(home.path(), free_port())
        .env("VIBELEARN_DATA_DIR", &data)
        .env("PATH", "/nowhere")
        .args(["install", "codex"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success(), "{}", said(&out));
    assert!(said(&out).contains("nothing changed") || said(&out).contains("no `codex` on PATH"), "{}", said(&out));
    assert!(!data.exists(), "no data dir after a refused install: {:?}", std::fs::read_dir(&data).ok());
    assert!(!home.path().join(".codex").exists());
    // Nor does an uninstall on a machine it was never installed on make one.
    let out = vl(home.path(), free_port())
        .env("VIBELEARN_DATA_DIR", &data)
        .args(["uninstall", "claude-code"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ok(&out);
    assert!(!data.exists(), "no data dir after an uninstall of nothing: {}", said(&out));
}

/// Every program the hooks in `file` run: an exec form's `command`, a shell form's first word.
fn hook_programs(file: &Path) -> Vec<PathBuf> {
    fn walk(value: &Value, out: &mut Vec<PathBuf>) {
        match value {
            Value::Object(map) => {
                for key in ["command", "bash"] {
                    if let Some(command) = map.get(key).and_then(Value::as_str) {
                        let program = if map.contains_key("args") {
                            command
                        } else {
                            command.split_whitespace().next().unwrap_or("")
                        };
                        out.push(PathBuf::from(program.trim_matches('\'')));
                    }
                }
                map.values().for_each(|v| walk(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let document: Value = serde_json::from_str(&read(file)).unwrap();
    let mut programs = Vec::new();
    walk(&document["hooks"], &mut programs);
    programs
}

/// Each hook in `file` runs a program that exists and starts.
fn assert_hooks_run(file: &Path, context: &str) {
    let mut programs = hook_programs(file);
    assert!(!programs.is_empty(), "{context}: no hooks in {}", file.display());
    programs.sort_unstable();
    programs.dedup();
    for program in programs {
        let out = Command::new(&program).arg("--version").stdin(Stdio::null()).output();
        assert!(
            out.as_ref().is_ok_and(|o| o.status.success()),
            "{context}: {} in {} does not run: {out:?}",
            program.display(),
            file.display()
        );
    }
}

/// Starts `vl <args…>` for each agent at the same moment and waits for all of them.
fn all_at_once(home: &Path, verb: &str, agents: &[&str]) -> Vec<Output> {
    let children: Vec<_> = agents
        .iter()
        .map(|agent| {
            vl(home, free_port())
                .env("PATH", "/usr/bin:/bin")
                .args([verb, agent])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children.into_iter().map(|c| c.wait_with_output().unwrap()).collect()
}

#[test]
fn installs_at_once_keep_every_hook_runnable_and_uninstalls_keep_the_copy_the_others_run() {
    let agents: Vec<&str> = AGENTS.iter().map(|(a, _)| *a).collect();
    let copy = |home: &Path| home.join("bin").join(format!("vl{}", std::env::consts::EXE_SUFFIX));
    let worker_copy = |home: &Path| home.join("bin").join(format!("vl-worker{}", std::env::consts::EXE_SUFFIX));
    for round in 0..4 {
        let home = TempDir::new();
        for out in all_at_once(home.path(), "install", &agents) {
            assert_ok(&out);
        }
        for (agent, file) in AGENTS {
            assert_hooks_run(&home.path().join(file), &format!("round {round}, {agent} after the installs"));
        }
        let ledger: Value = serde_json::from_str(&read(&home.path().join("installed-settings.json"))).unwrap();
        assert_eq!(ledger["files"].as_object().map(|f| f.len()), Some(4), "round {round}: {ledger}");
        // Two uninstalled together: the two others still run the copy, which stays.
        for out in all_at_once(home.path(), "uninstall", &agents[..2]) {
            assert_ok(&out);
        }
        for (agent, file) in &AGENTS[2..] {
            assert_hooks_run(&home.path().join(file), &format!("round {round}, {agent} after two uninstalls"));
        }
        assert!(copy(home.path()).exists() && worker_copy(home.path()).exists(), "round {round}");
        // A hook of a remaining agent is heard (its program runs the hook path, exit 0).
        let hook = Command::new(copy(home.path()))
            .args(["hook", "copilot", "session-init"])
            .env("VIBELEARN_DATA_DIR", home.path())
            .env("HOME", home.path())
            .env("VIBELEARN_WORKER_PORT", free_port().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let out = hook.wait_with_output().unwrap();
        assert!(out.status.success(), "round {round}: {out:?}");
        // The last two: nothing runs the copy any more, so it goes.
        for out in all_at_once(home.path(), "uninstall", &agents[2..]) {
            assert_ok(&out);
        }
        assert!(!copy(home.path()).exists(), "round {round}: the copy goes with the last agent");
        assert!(!worker_copy(home.path()).exists(), "round {round}: and its vl-worker");
        let left: Vec<_> = std::fs::read_dir(home.path().join("bin")).into_iter().flatten().flatten().collect();
        assert!(left.is_empty(), "round {round}: nothing half-made or moved aside is left: {left:?}");
        assert!(!home.path().join("installed-settings.json").exists(), "round {round}");
    }
}

#[test]
fn status_reads_each_agents_file_as_that_agent_does() {
    let home = TempDir::new();
    let path = home.path().join(".gemini/settings.json");
    // Gemini CLI takes comments in its settings, and install keeps them.
    write(&path, "{\n  // my theme\n  \"theme\": \"dark\",\n}\n");
    assert_ok(&run(home.path(), &["install", "gemini"]));
    assert!(read(&path).contains("// my theme"), "{}", read(&path));
    let status = run(home.path(), &["status"]);
    let agents = said(&status).lines().find(|l| l.trim_start().starts_with("agents")).unwrap_or("").to_owned();
    assert!(agents.ends_with("Gemini CLI"), "{}", said(&status));
}
