//! The real OpenAI Codex CLI (`@openai/codex`, a native binary, pinned in
//! `tests/codex/package-lock.json`), run as `codex exec --json` against a fake Responses API on
//! 127.0.0.1 (`[model_providers.fake]` with `wire_api = "responses"` in the test home's
//! `config.toml`), with the hooks `vl install codex` wrote and trusted. Codex skips an untrusted
//! hook silently, so a session recorded here proves the trust works; the JSON events also show
//! any hook output Codex rejected (its strict stdout). Skips only when npm or the package is
//! missing, never under `CI=true`.

use std::process::Command;

use crate::agent_cli::{self, DONE};
use crate::fake_models::{self, Api};
use crate::util::{TempDir, WorkerProcess, skip_unless_ci};

#[test]
fn the_real_codex_cli_runs_the_hooks_vl_install_wrote_and_trusted() {
    let bin = match agent_cli::real_cli("codex", "codex") {
        Ok(bin) => bin,
        Err(reason) => return skip_unless_ci("real Codex CLI test", &reason),
    };
    let home = TempDir::new();
    let worker = WorkerProcess::start(home.path());
    let (project, shims) = agent_cli::project(home.path());
    let api = fake_models::start(Api::Responses, agent_cli::steps(project.path()));
    let config = home.path().join(".codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let mine = format!(
        "# my settings\nmodel = \"gpt-5.5\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\n\
         base_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_API_KEY\"\n",
        api.url
    );
    std::fs::write(&config, &mine).unwrap();
    let bin_dir = bin.parent().unwrap();
    let said = agent_cli::install(home.path(), worker.port, "codex", &agent_cli::path_with(&[bin_dir]));
    assert!(said.contains("trusted 5 VibeLearn hooks in Codex"), "{said}");
    let toml = std::fs::read_to_string(&config).unwrap();
    assert!(toml.starts_with(&mine), "the user's config is kept as it was: {toml}");
    assert_eq!(toml.matches("trusted_hash").count(), 5, "{toml}");
    let mut command = Command::new(&bin);
    command
        .args(["exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"])
        .arg(agent_cli::prompt())
        .current_dir(project.path())
        .env_clear()
        .env("PATH", agent_cli::path_with(&[&shims]))
        .env("HOME", home.path())
        .env("SHELL", "/bin/bash")
        .env("FAKE_API_KEY", "test-key-0123456789")
        .env("VIBELEARN_DATA_DIR", home.path())
        .env("VIBELEARN_WORKER_PORT", worker.port.to_string())
        .env("VIBELEARN_PROVIDER", "offline");
    let output = agent_cli::finish(command);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "codex failed: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains(DONE), "{stdout}");
    let errors: Vec<&str> = stdout.lines().filter(|l| l.contains("\"type\":\"error\"")).collect();
    assert!(errors.is_empty(), "Codex reported: {errors:?}");
    agent_cli::check_recorded(home.path(), worker.port, "codex", project.path());
    // Uninstall removes the hooks and their trust, and gives back the user's config.
    let output = crate::util::vl(home.path(), worker.port)
        .args(["uninstall", "codex"])
        .env("PATH", agent_cli::path_with(&[bin_dir]))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let toml = std::fs::read_to_string(&config).unwrap();
    assert!(!toml.contains("trusted_hash") && toml.starts_with(&mine), "{toml}");
}
