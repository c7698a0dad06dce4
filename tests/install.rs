//! `vl install` / `vl uninstall` on settings files as users keep them (issue 33, SPEC §10): a
//! symlink into a dotfiles folder, a 23-digit integer, `1.10`, unusual key order, a comment, a
//! trailing comma, a write while install runs, a re-install. Real `vl` processes, real files.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::Value;

use crate::util::{TempDir, free_port, make_executable, vl};

/// How a user's `~/.claude/settings.json` may look: odd order, odd numbers, its own hook.
const USER_SETTINGS: &str = r#"{
  "zeta": 12345678901234567890123,
  "permissions": {
    "allow": [ "Bash(ls:*)", "Read" ]
  },
  "version":   1.10,
  "hooks": {
    "Stop": [
      {
        "hooks": [
          { "type": "command", "command": "~/bin/notify.sh" }
        ]
      }
    ]
  },
  "alpha": true
}
"#;

fn run(home: &Path, args: &[&str], path_var: Option<&str>) -> Output {
    let mut command = vl(home, free_port());
    if let Some(path) = path_var {
        command.env("PATH", path);
    }
    command.args(args).stdin(Stdio::null()).output().expect("run vl")
}

fn said(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn settings(home: &Path) -> PathBuf {
    home.join(".claude").join("settings.json")
}

fn write_settings(home: &Path, text: &str) -> PathBuf {
    let path = settings(home);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn installed_copy(home: &Path) -> PathBuf {
    home.join("bin").join(format!("vl{}", std::env::consts::EXE_SUFFIX))
}

/// The `vl-worker` copied beside [`installed_copy`] (it runs the worker and the demo for it).
fn installed_worker(home: &Path) -> PathBuf {
    home.join("bin").join(format!("vl-worker{}", std::env::consts::EXE_SUFFIX))
}

fn assert_ok(output: &Output) {
    assert!(output.status.success(), "{}", said(output));
}

#[test]
fn install_keeps_every_byte_of_the_users_file_and_uninstall_gives_them_back() {
    let home = TempDir::new();
    let path = write_settings(home.path(), USER_SETTINGS);
    assert_ok(&run(home.path(), &["install", "claude-code"], None));
    let installed = std::fs::read_to_string(&path).unwrap();
    for kept in ["12345678901234567890123", "\"version\":   1.10", "[ \"Bash(ls:*)\", \"Read\" ]", "~/bin/notify.sh"] {
        assert!(installed.contains(kept), "{kept} kept:\n{installed}");
    }
    let keys = ["\"zeta\"", "\"permissions\"", "\"version\"", "\"hooks\"", "\"alpha\""];
    let at: Vec<usize> = keys.iter().map(|k| installed.find(k).unwrap()).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "key order kept:\n{installed}");
    let value: Value = serde_json::from_str(&installed).unwrap();
    assert_eq!(value["hooks"]["Stop"].as_array().unwrap().len(), 2, "{installed}");
    // Everything before the hooks is the user's text, byte for byte.
    assert_eq!(
        &installed[..installed.find("\"hooks\"").unwrap()],
        &USER_SETTINGS[..USER_SETTINGS.find("\"hooks\"").unwrap()]
    );
    // Re-installing writes nothing and keeps the backup of the user's own file.
    assert_ok(&run(home.path(), &["install", "claude-code"], None));
    let backup = home.path().join(".claude/settings.json.vibelearn.bak");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), USER_SETTINGS);
    let out = run(home.path(), &["uninstall", "claude-code"], None);
    assert_ok(&out);
    assert!(said(&out).contains("back to your own bytes"), "{}", said(&out));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), USER_SETTINGS);
    assert!(!backup.exists() && !installed_copy(home.path()).exists());
    assert!(!installed_worker(home.path()).exists(), "vl-worker goes with the copy");
}

#[test]
fn a_reinstall_after_the_user_edited_keeps_the_first_backup_and_uninstall_removes_only_ours() {
    let home = TempDir::new();
    let path = write_settings(home.path(), USER_SETTINGS);
    assert_ok(&run(home.path(), &["install", "claude-code"], None));
    // The user (or Claude Code) changes a setting after the install.
    let edited = std::fs::read_to_string(&path).unwrap().replace("\"alpha\": true", "\"alpha\": false");
    std::fs::write(&path, &edited).unwrap();
    assert_ok(&run(home.path(), &["install", "claude-code"], None));
    let backup = home.path().join(".claude/settings.json.vibelearn.bak");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), USER_SETTINGS, "the backup is never overwritten");
    let out = run(home.path(), &["uninstall", "claude-code"], None);
    assert_ok(&out);
    assert!(said(&out).contains("removed 6 Claude Code hooks from"), "{}", said(&out));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), USER_SETTINGS.replace("\"alpha\": true", "\"alpha\": false"));
}

#[test]
fn a_symlinked_settings_file_is_written_through_and_the_link_stays() {
    let home = TempDir::new();
    let dotfiles = home.path().join("dotfiles/claude");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::write(dotfiles.join("settings.json"), USER_SETTINGS).unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    let link = settings(home.path());
    if let Err(e) = vibelearn::platform::symlink_file(Path::new("../dotfiles/claude/settings.json"), &link) {
        // Windows without Developer Mode (or wine) refuses symlinks to non-administrators: a
        // permission of the account, not a missing tool, so not a CI failure there.
        assert_eq!(std::env::consts::OS, "windows", "cannot make a symlink: {e}");
        eprintln!("SKIPPED symlinked settings test: this Windows account may not make symlinks ({e})");
        return;
    }
    assert_ok(&run(home.path(), &["install", "claude-code"], None));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link is still a link");
    let target = std::fs::read_to_string(dotfiles.join("settings.json")).unwrap();
    assert!(
        target.contains(" hook claude-code ") || target.contains("\"claude-code\""),
        "hooks in the dotfiles copy:\n{target}"
    );
    assert_eq!(std::fs::read_dir(&dotfiles).unwrap().count(), 1, "no temp or backup left in the dotfiles folder");
    assert_ok(&run(home.path(), &["uninstall", "claude-code"], None));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(dotfiles.join("settings.json")).unwrap(), USER_SETTINGS);
}

#[test]
fn an_invalid_file_is_refused_before_anything_changes() {
    let home = TempDir::new();
    let path = write_settings(home.path(), "{\n  \"model\": \"opus\"\n}\n");
    assert_ok(&run(home.path(), &["install", "claude-code"], None));
    let copy = installed_copy(home.path());
    assert!(copy.exists());
    assert!(installed_worker(home.path()).exists(), "vl-worker is copied beside vl");
    // A trailing comma (a hand edit): uninstall refuses and keeps the binary the hooks run.
    let text = std::fs::read_to_string(&path).unwrap();
    let end = text.rfind("\n}").unwrap();
    let broken = format!("{},{}", &text[..end], &text[end..]);
    std::fs::write(&path, &broken).unwrap();
    let out = run(home.path(), &["uninstall", "claude-code"], None);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    assert!(said(&out).contains("is not valid JSON") && said(&out).contains("nothing changed"), "{}", said(&out));
    assert!(!said(&out).contains("removed"), "{}", said(&out));
    assert!(copy.exists(), "the binary the hooks run is kept");
    assert!(installed_worker(home.path()).exists(), "and the vl-worker it runs the worker with");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);
    // A comment (Claude Code reads plain JSON): install refuses before copying anything.
    let fresh = TempDir::new();
    let commented = "{\n  // mine\n  \"model\": \"opus\"\n}\n";
    let path = write_settings(fresh.path(), commented);
    let out = run(fresh.path(), &["install", "claude-code"], None);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    assert!(said(&out).contains("fix it first, nothing changed"), "{}", said(&out));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), commented);
    assert!(!installed_copy(fresh.path()).exists(), "nothing copied");
    assert!(!installed_worker(fresh.path()).exists(), "nothing copied");
}

/// A `claude` that saves the settings file while install asks its version: what Claude Code
/// does when the user changes a setting in that second. Install reads the file again after
/// asking (under its lock), and the editor's re-read before the rename covers a write later
/// still (its unit test).
fn claude_that_writes(dir: &Path, settings: &Path) -> PathBuf {
    let bin = dir.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("claude");
    let theirs = USER_SETTINGS.replace("\"alpha\": true", "\"alpha\": true,\n  \"theme\": \"dark\"");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ncat > '{}' <<'EOF'\n{}EOF\necho '2.1.200 (Claude Code)'\n", settings.display(), theirs),
    )
    .unwrap();
    make_executable(&script);
    bin
}

#[test]
fn a_write_to_the_file_while_install_runs_is_kept() {
    if std::env::consts::OS == "windows" {
        // Not applicable: the stand-in `claude` is a shell script (the editor's own unit test
        // covers the same race on every OS).
        return;
    }
    let home = TempDir::new();
    let path = write_settings(home.path(), USER_SETTINGS);
    let bin = claude_that_writes(home.path(), &path);
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    let path_var = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&path_var))).unwrap();
    let out = run(home.path(), &["install", "claude-code"], Some(path_var.to_str().unwrap()));
    assert_ok(&out);
    let now = std::fs::read_to_string(&path).unwrap();
    let value: Value = serde_json::from_str(&now).unwrap();
    assert_eq!(value["theme"], "dark", "the write made during install is kept:\n{now}");
    assert_eq!(value["hooks"]["Stop"][1]["hooks"][0]["args"][1], "claude-code", "and the hooks are in:\n{now}");
}

#[test]
fn after_install_vl_runs_from_a_new_login_shell_with_add_to_path_and_uninstall_takes_it_out() {
    if std::env::consts::OS == "windows" {
        // Not applicable: there --add-to-path edits the account's own PATH in the registry,
        // which a test must not touch on a developer's or runner's machine.
        return;
    }
    let bash = ["/bin/bash", "/usr/bin/bash"].into_iter().map(Path::new).find(|p| p.exists());
    let Some(bash) = bash else {
        crate::util::skip_unless_ci("login shell PATH test", "no bash on this machine");
        return;
    };
    let home = TempDir::new();
    let bin = home.path().join("bin");
    std::fs::write(home.path().join(".bashrc"), "alias ll='ls -l'\n").unwrap();
    // Without the flag: the exact line for the user's shell, nothing changed.
    let out = vl(home.path(), free_port()).env("SHELL", bash).args(["install", "claude-code"]).output().unwrap();
    assert_ok(&out);
    let line = format!("export PATH=\"{}:$PATH\"", bin.display());
    assert!(said(&out).contains("is not on your PATH") && said(&out).contains(&line), "{}", said(&out));
    // A login bash (macOS Terminal, `bash -lc`) reads no ~/.bashrc: its file is named too, and
    // the flag that does it all comes first.
    assert!(said(&out).contains("add this line to ~/.bashrc and ~/.profile"), "{}", said(&out));
    assert!(said(&out).find("--add-to-path") < said(&out).find(&line), "{}", said(&out));
    assert!(!home.path().join(".profile").exists());
    let fish =
        vl(home.path(), free_port()).env("SHELL", "/usr/bin/fish").args(["install", "claude-code"]).output().unwrap();
    assert!(said(&fish).contains(&format!("fish_add_path \"{}\"", bin.display())), "{}", said(&fish));
    // With it: rustup's way, and `vl` runs from a new login shell.
    let out = vl(home.path(), free_port())
        .env("SHELL", bash)
        .args(["install", "claude-code", "--add-to-path"])
        .output()
        .unwrap();
    assert_ok(&out);
    assert!(said(&out).contains("added ") && said(&out).contains(".profile"), "{}", said(&out));
    let status = std::process::Command::new(bash)
        .args(["-l", "-c", "command -v vl && vl status"])
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", "/usr/bin:/bin")
        .env("VIBELEARN_DATA_DIR", home.path())
        .env("VIBELEARN_WORKER_PORT", free_port().to_string())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ok(&status);
    let printed = String::from_utf8_lossy(&status.stdout);
    assert!(printed.starts_with(&format!("{}\n", installed_copy(home.path()).display())), "{printed}");
    // Re-running adds nothing twice.
    let again = vl(home.path(), free_port())
        .env("SHELL", bash)
        .args(["install", "claude-code", "--add-to-path"])
        .output()
        .unwrap();
    assert!(said(&again).contains("already added"), "{}", said(&again));
    let out = run(home.path(), &["uninstall", "claude-code"], None);
    assert_ok(&out);
    assert!(said(&out).contains("out of your PATH again"), "{}", said(&out));
    assert_eq!(std::fs::read_to_string(home.path().join(".bashrc")).unwrap(), "alias ll='ls -l'\n");
    assert!(!home.path().join(".profile").exists() && !home.path().join("env").exists());
}

#[test]
fn cursor_hooks_json_gets_its_bytes_back_too() {
    let home = TempDir::new();
    let project = TempDir::new();
    let hooks = project.path().join(".cursor/hooks.json");
    std::fs::create_dir_all(hooks.parent().unwrap()).unwrap();
    let mine = "{\n    \"version\": 1,\n    \"hooks\": {\n        \"stop\": [ { \"command\": \"./audit.sh\" } ]\n    },\n    \"x\": 1.10\n}\n";
    std::fs::write(&hooks, mine).unwrap();
    let dir = project.path().to_str().unwrap();
    assert_ok(&run(home.path(), &["install", "cursor", "--project", dir], None));
    let installed = std::fs::read_to_string(&hooks).unwrap();
    assert!(installed.contains("\"x\": 1.10") && installed.contains("./audit.sh"), "{installed}");
    assert!(installed.contains("\n        \"sessionEnd\": ["), "indented like the file:\n{installed}");
    assert_ok(&run(home.path(), &["uninstall", "cursor", "--project", dir], None));
    assert_eq!(std::fs::read_to_string(&hooks).unwrap(), mine);
}
