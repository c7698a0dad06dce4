//! `vl install <agent>` and `vl uninstall <agent>`: register and remove the hooks of Claude
//! Code, Cursor, Gemini CLI, Codex and Copilot CLI (SPEC §3.1, §3.4, §10), all five through
//! one path.
//!
//! Claude Code's and Cursor's events, matchers and timeouts come from the plugin's own files
//! (`plugin/hooks/hooks.json`, `plugin/cursor/hooks.json`, embedded at build time), so the
//! plugin and the installer cannot drift apart; each command is rewritten to run
//! `<data>/bin/vl hook <platform> <event>`, which works without PATH or a plugin root.
//!
//! The parts:
//! - [`agents`]: the five agents, their files and our entries in them (pure);
//! - [`settings_file`]: the format-preserving editor (symlinks followed, every byte we did not
//!   add kept, a concurrent write never lost, atomic writes);
//! - [`hooks`]: Claude Code's and Cursor's entries, and the removal every agent shares;
//! - `lock`: the one lock an install or uninstall holds while it changes anything;
//! - `binary`: the stable copy `<data>/bin/vl[.exe]` the hooks run;
//! - `claude_form`: which hook form the Claude Code on PATH reads;
//! - [`ledger`]: what install changed, so uninstall takes out exactly that;
//! - [`codex_trust`]: our hooks' trust in Codex, through Codex's own app-server.
//!
//! Check first, then change. Install reads the file and tries the edit (and, for Codex, finds
//! Codex) before it takes the lock, creates the data dir, copies the binary or asks
//! `claude --version`: a refused install leaves nothing behind. Uninstall reads and validates
//! the file before it removes anything. Every change happens under the lock.
//!
//! Status line (`--statusline`): Claude Code's `statusLine` becomes `<vl> statusline`. A status
//! line of the user's own is kept in `<file>.vibelearn-statusline.json` and put back by
//! `vl uninstall claude-code`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub mod agents;
mod binary;
mod claude_form;
pub mod codex_trust;
pub mod hooks;
pub mod ledger;
mod lock;
pub mod path_setup;
pub mod settings_file;
mod uninstall;

use agents::{Agent, Plan};
pub use binary::installed_binary;
pub use claude_form::{HookForm, Version};
pub use hooks::{merge_claude, merge_cursor, our_target, remove_ours, remove_statusline, set_statusline};
use ledger::Ledger;
use settings_file::{Committed, EditError, SettingsFile, edit_json};

use super::backend::CliError;
use crate::cli::args::{InstallTarget, UninstallTarget};
use crate::config::Config;

impl From<EditError> for CliError {
    fn from(e: EditError) -> CliError {
        CliError::Failed(e.to_string())
    }
}

pub fn run(target: InstallTarget, add_to_path: bool, config: &Config) -> ExitCode {
    let (agent, project, statusline) = match target {
        InstallTarget::ClaudeCode { statusline } => (Agent::ClaudeCode, None, statusline),
        InstallTarget::Cursor { project } => (Agent::Cursor, project, false),
        InstallTarget::Gemini => (Agent::Gemini, None, false),
        InstallTarget::Codex => (Agent::Codex, None, false),
        InstallTarget::Copilot => (Agent::Copilot, None, false),
    };
    let request = Request { agent, project, statusline, add_to_path };
    match install(&request, config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vl install: {e}");
            e.exit_code()
        }
    }
}

pub fn run_uninstall(target: UninstallTarget, config: &Config) -> ExitCode {
    let (agent, project) = match target {
        UninstallTarget::ClaudeCode => (Agent::ClaudeCode, None),
        UninstallTarget::Cursor { project } => (Agent::Cursor, project),
        UninstallTarget::Gemini => (Agent::Gemini, None),
        UninstallTarget::Codex => (Agent::Codex, None),
        UninstallTarget::Copilot => (Agent::Copilot, None),
    };
    match uninstall::uninstall(agent, project, config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vl uninstall: {e}");
            e.exit_code()
        }
    }
}

/// What the user asked `vl install` for.
struct Request {
    agent: Agent,
    /// Cursor's `--project DIR`.
    project: Option<PathBuf>,
    /// Claude Code's `--statusline`.
    statusline: bool,
    add_to_path: bool,
}

/// The settings file an agent's hooks live in: its user file, or a Cursor project's.
fn settings_path(agent: Agent, project: Option<&Path>, config: &Config) -> Result<PathBuf, CliError> {
    if let Some(dir) = project {
        if !dir.is_dir() {
            return Err(CliError::NotFound(format!("{} is not a directory", dir.display())));
        }
        return Ok(dir.join(".cursor").join("hooks.json"));
    }
    let home = config.home.as_deref().ok_or_else(|| {
        CliError::Failed(format!("{} is not set; cannot find your settings", crate::platform::HOME_ENV))
    })?;
    Ok(agent.file(home))
}

/// What one install wrote, for the messages and the ledger (set by the last run of the edit,
/// which [`SettingsFile::commit`] may redo on new content).
#[derive(Default)]
struct Wrote {
    count: usize,
    kept_statusline: bool,
    backup: Option<PathBuf>,
    /// The content the edit was applied to.
    before: Option<String>,
    /// It held hooks of ours already.
    had_ours: bool,
    /// The containers the edit created.
    added: Vec<String>,
}

fn install(request: &Request, config: &Config) -> Result<(), CliError> {
    let agent = request.agent;
    let path = settings_path(agent, request.project.as_deref(), config)?;
    let exe = installed_binary(config);
    let mut plan = Plan::new(exe.clone(), request.statusline);
    // Check first: the file parses and takes our hooks, and (Codex) there is a Codex to trust
    // them with, before anything is created, copied or asked.
    let file = SettingsFile::open(&path)?;
    edit_json(&path, file.text(), agent.syntax(), |doc| agents::merge(agent, doc, &plan).map(|_| ()))?;
    if agent == Agent::Codex {
        codex_trust::find_codex(config)?;
    }
    // Then change, under the lock.
    let _lock = lock::InstallLock::acquire(config)?;
    // The data dir owner-only before anything is put in it (SPEC §4, "the disk").
    if let Ok(Some(line)) = crate::worker::secure_data_dir(config, crate::platform::Scope::Everything) {
        println!("{line}");
    }
    let why = match agent {
        Agent::ClaudeCode => {
            let (form, why) = claude_form::claude_code_form(config);
            plan.form = form;
            why
        }
        _ => String::new(),
    };
    let mut ledger = Ledger::load(config);
    binary::install_binary(config)?;
    println!("vl is installed at {}", exe.display());
    path_setup::after_install(config, exe.parent().unwrap_or(Path::new(".")), request.add_to_path, &mut ledger)?;
    let mut file = SettingsFile::open(&path)?;
    let mut wrote = Wrote::default();
    let committed = file.commit(|text| write_install(agent, &path, text, &plan, &mut wrote));
    let committed = committed.inspect_err(|_| {
        // What --add-to-path did is on disk: its record must be too.
        let _ = ledger.save(config);
    })?;
    match &committed {
        Committed::Unchanged => ledger.note(&path, file.text()),
        Committed::Written { sha256, .. } => {
            ledger.record(&path, wrote.before.as_deref(), wrote.had_ours, sha256.clone(), wrote.added.clone())
        }
    }
    ledger.save(config)?;
    say_installed(agent, &path, &committed, &wrote, &plan, &why);
    after_install(agent, config, &path)?;
    print_provider(config);
    Ok(())
}

/// What install tells the user it did.
fn say_installed(agent: Agent, path: &Path, committed: &Committed, wrote: &Wrote, plan: &Plan, why: &str) {
    let (ide, platform) = (agent.name(), agent.platform());
    match committed {
        Committed::Unchanged => {
            println!("the {ide} hooks are already installed in {}; nothing changed", path.display())
        }
        Committed::Written { redone, .. } => {
            if *redone {
                println!("{} changed while vl was installing; the hooks were added to the new content", path.display());
            }
            println!("installed {} {ide} hooks in {}", wrote.count, path.display());
        }
    }
    if plan.statusline {
        println!("the status line runs: {} statusline", plan.program);
    }
    if wrote.kept_statusline {
        println!(
            "your previous status line is kept in {} and comes back with `vl uninstall claude-code`",
            sidecar(path).display()
        );
    }
    if let Some(backup) = &wrote.backup {
        println!("a safety copy of your file as it was is saved as {}", backup.display());
    }
    match (agent, plan.form) {
        (Agent::ClaudeCode, HookForm::Exec) => {
            println!("each runs {} with the arguments: hook {platform} <event> ({why})", plan.exe.display())
        }
        (Agent::ClaudeCode, HookForm::Shell) => {
            println!("each runs: {} hook {platform} <event> (a shell command: {why})", plan.program)
        }
        _ => println!("each runs: {} hook {platform} <event>", plan.program),
    }
}

/// The edit [`SettingsFile::commit`] runs (again, on new content, if the file changed): the
/// new text, and before it is put in place, the safety copy of the user's own file (once:
/// never over an earlier one) and the user's status line kept aside.
fn write_install(
    agent: Agent,
    path: &Path,
    text: Option<&str>,
    plan: &Plan,
    wrote: &mut Wrote,
) -> Result<Option<String>, EditError> {
    let mut replaced = None;
    let new = edit_json(path, text, agent.syntax(), |doc| {
        let before = hooks::containers(doc);
        wrote.had_ours = agents::holds_ours(agent, doc);
        let merged = agents::merge(agent, doc, plan)?;
        wrote.added = hooks::containers(doc).into_iter().filter(|c| !before.contains(c)).collect();
        (wrote.count, replaced) = (merged.count, merged.replaced_statusline);
        Ok(())
    })?;
    wrote.before = text.map(str::to_owned);
    if new.is_none() {
        return Ok(None);
    }
    fn io<'p>(action: &'static str, p: &'p Path) -> impl FnOnce(std::io::Error) -> EditError + 'p {
        move |source| EditError::Io { action, path: p.to_path_buf(), source }
    }
    let backup = ledger::backup_of(path);
    if let Some(original) = text
        && !wrote.had_ours
        && (wrote.backup.is_some() || !backup.exists())
    {
        std::fs::write(&backup, original).map_err(io("back up the file to", &backup))?;
        wrote.backup = Some(backup);
    }
    if let Some(previous) = &replaced {
        let aside = sidecar(path);
        let json = serde_json::to_string_pretty(previous).expect("a JSON value always serialises") + "\n";
        std::fs::write(&aside, json).map_err(io("keep your status line in", &aside))?;
        wrote.kept_statusline = true;
    }
    Ok(new)
}

/// Each agent's own rule, once its file is written.
fn after_install(agent: Agent, config: &Config, path: &Path) -> Result<(), CliError> {
    match agent {
        Agent::Gemini => println!(
            "Gemini CLI runs hooks only in folders you trust: answer its trust prompt in a project, or \
             run it with GEMINI_CLI_TRUST_WORKSPACE=true"
        ),
        Agent::Codex => {
            let trusted = codex_trust::trust_ours(config, path)?;
            println!("trusted {trusted} VibeLearn hooks in Codex (its config.toml, hooks.state)");
        }
        Agent::Copilot => println!(
            "Copilot CLI also runs a repository's .github/hooks/*.json: add VibeLearn there only if you \
             uninstall it here, or each event is recorded twice"
        ),
        Agent::ClaudeCode | Agent::Cursor => {}
    }
    Ok(())
}

/// Which LLM provider the worker's `auto` will use on this machine, what it costs, and how
/// to change it (SPEC §6.5).
fn print_provider(config: &Config) {
    // The one decision the worker makes too, whichever agent's hook starts it (issue 42).
    let choice = crate::jobs::decide(config);
    let source = crate::jobs::provider_source(config, &choice);
    // The worker tries a `claude` CLI once before relying on it; so does this line.
    if let Ok(crate::llm::Selected::Remote(provider)) = &choice
        && let Some(why) = provider.unavailable()
    {
        println!("LLM provider: offline (no LLM, free) — nothing leaves this machine");
        println!(
            "  auto did not choose the claude CLI on PATH: it answered \"{why}\"; log it in (run `claude`, then /login) to use it"
        );
    } else {
        let (described, cost) = (crate::jobs::describe_provider(&choice), crate::jobs::provider_cost(&choice));
        println!("LLM provider: {described} — {cost} (chosen by {source})");
        if let Ok(crate::llm::Selected::Remote(_)) = &choice {
            let usage = crate::jobs::llm_usage::Usage::default();
            println!("  {}", crate::jobs::llm_usage::session_cost(usage, config.llm_daily_tokens()));
        }
    }
    if let Some(note) = crate::jobs::provider_note(config) {
        println!("  {note}");
    }
    println!("  to change it: vl provider <anthropic|openai|gemini|openrouter|command|offline|auto>");
}

/// Where a status line replaced by `--statusline` is kept.
fn sidecar(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".vibelearn-statusline.json");
    PathBuf::from(name)
}
