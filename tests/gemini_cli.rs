//! The real Gemini CLI (`@google/gemini-cli`, pinned in `tests/gemini/package-lock.json`), run
//! headless (`gemini -p … --yolo`) against a fake Gemini API on 127.0.0.1
//! (`GOOGLE_GEMINI_BASE_URL`, a dummy key, `security.auth.selectedType: gemini-api-key`), with
//! the hooks `vl install gemini` wrote; the test folder is trusted through
//! `GEMINI_CLI_TRUST_WORKSPACE=true`, as install tells a user. Skips only when npm or the
//! package is missing, never under `CI=true`.

use std::process::Command;

use serde_json::{Value, json};

use crate::agent_cli::{self, DONE};
use crate::fake_models::{self, Api};
use crate::util::{TempDir, WorkerProcess, skip_unless_ci};

#[test]
fn the_real_gemini_cli_reports_a_scripted_session_to_the_hooks_vl_install_wrote() {
    let bin = match agent_cli::real_cli("gemini", "gemini") {
        Ok(bin) => bin,
        Err(reason) => return skip_unless_ci("real Gemini CLI test", &reason),
    };
    let home = TempDir::new();
    let worker = WorkerProcess::start(home.path());
    let (project, shims) = agent_cli::project(home.path());
    let settings = home.path().join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let mine = json!({"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"disableAutoUpdate": true},
        "privacy": {"usageStatisticsEnabled": false}});
    std::fs::write(&settings, serde_json::to_string_pretty(&mine).unwrap()).unwrap();
    let said = agent_cli::install(home.path(), worker.port, "gemini", &agent_cli::path_with(&[]));
    assert!(said.contains("trust"), "install explains folder trust: {said}");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(written["security"], mine["security"], "the user's settings are kept");
    let api = fake_models::start(Api::Gemini, agent_cli::steps(project.path()));
    let mut command = Command::new(&bin);
    command
        .args(["-p", &agent_cli::prompt(), "--yolo"])
        .current_dir(project.path())
        .env_clear()
        .env("PATH", agent_cli::path_with(&[&shims]))
        .env("HOME", home.path())
        .env("GOOGLE_GEMINI_BASE_URL", &api.url)
        .env("GEMINI_API_KEY", "test-key-0123456789")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .env("VIBELEARN_DATA_DIR", home.path())
        .env("VIBELEARN_WORKER_PORT", worker.port.to_string())
        .env("VIBELEARN_PROVIDER", "offline");
    let output = agent_cli::finish(command);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "gemini failed: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains(DONE), "{stdout}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Line by line: a stack trace's paths may hold "hook" (a checkout named after them) while
    // another line says Gemini's own router "failed".
    let hook_failed = stderr.lines().map(str::to_lowercase).any(|l| l.contains("hook") && l.contains("fail"));
    assert!(!hook_failed, "a hook failed: {stderr}");
    // Only the fake model API was called.
    assert!(api.requests().iter().all(|r| r.path.starts_with("/v1beta/models/")), "{:?}", api.requests());
    agent_cli::check_recorded(home.path(), worker.port, "gemini", project.path());
}
