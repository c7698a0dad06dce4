//! The real GitHub Copilot CLI (`@github/copilot`, pinned in `tests/copilot/package-lock.json`),
//! run as `copilot -p … --allow-all-tools` against a fake chat-completions API on 127.0.0.1
//! (`COPILOT_PROVIDER_BASE_URL`, `COPILOT_PROVIDER_WIRE_API=completions`, `COPILOT_OFFLINE=true`;
//! `COPILOT_MODEL=claude-sonnet-4`, a model whose tools are `create`/`edit`/`bash`), with the
//! hooks `vl install copilot` wrote. Its payloads carry no event name: the commands do. Skips
//! only when npm or the package is missing, never under `CI=true`.

use std::process::Command;

use crate::agent_cli::{self, DONE};
use crate::fake_models::{self, Api};
use crate::util::{TempDir, WorkerProcess, skip_unless_ci};

#[test]
fn the_real_copilot_cli_reports_a_scripted_session_to_the_hooks_vl_install_wrote() {
    let bin = match agent_cli::real_cli("copilot", "copilot") {
        Ok(bin) => bin,
        Err(reason) => return skip_unless_ci("real Copilot CLI test", &reason),
    };
    let home = TempDir::new();
    let worker = WorkerProcess::start(home.path());
    let (project, shims) = agent_cli::project(home.path());
    let said = agent_cli::install(home.path(), worker.port, "copilot", &agent_cli::path_with(&[]));
    assert!(said.contains("installed 6 Copilot CLI hooks"), "{said}");
    let api = fake_models::start(Api::Completions, agent_cli::steps(project.path()));
    let mut command = Command::new(&bin);
    command
        .args(["-p", &agent_cli::prompt(), "--allow-all-tools"])
        .current_dir(project.path())
        .env_clear()
        .env("PATH", agent_cli::path_with(&[&shims]))
        .env("HOME", home.path())
        .env("COPILOT_MODEL", "claude-sonnet-4")
        .env("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", api.url))
        .env("COPILOT_PROVIDER_API_KEY", "test-key-0123456789")
        .env("COPILOT_PROVIDER_WIRE_API", "completions")
        .env("COPILOT_OFFLINE", "true")
        .env("VIBELEARN_DATA_DIR", home.path())
        .env("VIBELEARN_WORKER_PORT", worker.port.to_string())
        .env("VIBELEARN_PROVIDER", "offline");
    let output = agent_cli::finish(command);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "copilot failed: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains(DONE), "{stdout}");
    assert!(api.requests().iter().all(|r| r.path.starts_with("/v1/")), "{:?}", api.requests());
    agent_cli::check_recorded(home.path(), worker.port, "copilot", project.path());
}
