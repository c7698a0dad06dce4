//! npm, the one-command channel (SPEC §10): `scripts/npm-pack.sh` packs this build's `vl` (and
//! the `vl-worker` beside it) as `vibelearn` plus the package for this OS/CPU; the two tarballs
//! are installed from files into a fresh prefix with no registry reachable; `npx vibelearn
//! install claude-code` registers the hooks; the prefix is then deleted, and the real Claude
//! Code CLI records a whole session through the stable copy the install left in the data dir.
//! With `--add-to-path`, `vl status` runs from a new login shell.
//!
//! Skips (saying why) when npm or the Claude Code CLI cannot be had on a developer's machine;
//! with CI=true that is a failure instead.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::claude_cli::{check_offline, check_recorded, real_claude, run_session};
use crate::util::{TempDir, VL, WorkerProcess};

/// This machine's OS/CPU as npm names them (`process.platform`-`process.arch`).
fn npm_platform() -> String {
    let os = match std::env::consts::OS {
        "windows" => "win32",
        "macos" => "darwin",
        other => other,
    };
    let cpu = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("{os}-{cpu}")
}

fn skip_or_fail(reason: &str) {
    crate::util::skip_unless_ci("npm package test", reason);
}

fn run(command: &mut Command, what: &str) -> String {
    let output = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{what}: {text}{}", String::from_utf8_lossy(&output.stderr));
    text
}

#[test]
fn npx_vibelearn_install_from_packed_tarballs_records_a_real_claude_code_session() {
    if Command::new("npm").arg("--version").output().is_err() {
        return skip_or_fail("npm is not on PATH");
    }
    let claude = match real_claude() {
        Ok(bin) => bin,
        Err(reason) => return skip_or_fail(&reason),
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let platform = npm_platform();
    let packed = TempDir::new();
    // The script packs into target/npm; a copy of the tarballs keeps parallel runs apart.
    run(Command::new(root.join("scripts/npm-pack.sh")).arg(format!("{platform}={VL}")), "scripts/npm-pack.sh");
    let version = env!("CARGO_PKG_VERSION");
    let tarballs: Vec<_> = [format!("vibelearn-{version}.tgz"), format!("vibelearn-{platform}-{version}.tgz")]
        .iter()
        .map(|name| {
            let to = packed.path().join(name);
            std::fs::copy(root.join("target/npm").join(name), &to).unwrap_or_else(|e| panic!("{name}: {e}"));
            to
        })
        .collect();

    // A fresh prefix, no registry: --offline, and a registry address where nothing listens.
    let prefix = TempDir::new();
    let npm_cache = TempDir::new();
    run(
        Command::new("npm")
            .args(["install", "--offline", "--no-audit", "--no-fund", "--no-update-notifier", "--loglevel=error"])
            .args(["--fetch-retries=0", "--registry", "http://127.0.0.1:9/", "--cache"])
            .arg(npm_cache.path())
            .args(&tarballs)
            .current_dir(prefix.path()),
        "npm install of the tarballs",
    );
    // Exactly the launcher and this OS/CPU's binary were installed.
    let installed: Vec<String> = std::fs::read_dir(prefix.path().join("node_modules/@vibelearn"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(installed, std::slice::from_ref(&platform));

    let home = TempDir::new();
    let worker = WorkerProcess::start(home.path());
    let path = std::env::join_paths(
        std::iter::once(claude.parent().unwrap().to_owned())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let said = run(
        Command::new("npx")
            .args(["--no-install", "--offline", "vibelearn", "install", "claude-code", "--add-to-path"])
            .current_dir(prefix.path())
            .env("PATH", &path)
            .env("HOME", home.path())
            .env(vibelearn::platform::HOME_ENV, home.path())
            .env("VIBELEARN_DATA_DIR", home.path())
            .env("VIBELEARN_WORKER_PORT", worker.port.to_string())
            .env("npm_config_cache", npm_cache.path())
            .env("SHELL", "/bin/bash")
            .env("npm_config_update_notifier", "false"),
        "npx vibelearn install claude-code",
    );
    assert!(said.contains("installed 6 Claude Code hooks"), "{said}");
    // `vl` now runs from a new login shell, as every later README command needs (SPEC §10).
    if std::env::consts::OS != "windows" {
        let status = run(
            Command::new("bash")
                .args(["-l", "-c", "command -v vl && vl status"])
                .env_clear()
                .env("HOME", home.path())
                .env("PATH", "/usr/bin:/bin")
                .env("VIBELEARN_DATA_DIR", home.path())
                .env("VIBELEARN_WORKER_PORT", worker.port.to_string()),
            "vl status from a new login shell",
        );
        let copy = home.path().join("bin").join("vl");
        assert!(status.starts_with(&format!("{}\n", copy.display())), "{status}");
    }
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(home.path().join(".claude/settings.json")).unwrap()).unwrap();
    let stop = &settings["hooks"]["Stop"][0]["hooks"][0];
    let copy = home.path().join("bin").join(format!("vl{}", std::env::consts::EXE_SUFFIX));
    assert_eq!(stop["command"], copy.to_str().unwrap(), "{settings}");
    assert_eq!(stop["args"], json!(["hook", "claude-code", "summarize"]), "{settings}");
    // The platform package carried vl-worker beside vl, and install copied it too.
    let worker_copy = home.path().join("bin").join(format!("vl-worker{}", std::env::consts::EXE_SUFFIX));
    assert!(worker_copy.is_file(), "no {} after the install", worker_copy.display());

    // npx's copy goes away (as an npx cache or a removed prefix does); the hooks do not care.
    drop(prefix);
    let project = TempDir::new();
    let (result, api) = run_session(&claude, home.path(), worker.port, project.path());
    check_offline(&api);
    let session = result["session_id"].as_str().expect("the result names its session").to_owned();
    check_recorded(home.path(), worker.port, &session, project.path());
}
