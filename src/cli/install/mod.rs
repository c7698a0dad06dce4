//! `vl install claude-code` / `vl install cursor [--project DIR]` and `vl uninstall`: register
//! and remove the hooks (SPEC §3.1, §10).
//!
//! The events, matchers and timeouts come from the plugin's own files (`plugin/hooks/hooks.json`,
//! `plugin/cursor/hooks.json`, embedded at build time), so the plugin and the installer cannot
//! drift apart; only each command is rewritten to run `<data>/bin/vl hook <platform> <event>`,
//! which works without PATH or a plugin root.
//!
//! The parts:
//! - [`settings_file`]: the format-preserving editor (symlinks followed, every byte we did not
//!   add kept, a concurrent write never lost);
//! - [`hooks`]: our entries in a settings document, as JSON values (pure);
//! - `binary`: the stable copy `<data>/bin/vl[.exe]` the hooks run;
//! - `claude_form`: which hook form the Claude Code on PATH reads;
//! - `ledger`: the user's original bytes and what install wrote, for an exact uninstall;
//! - [`agents`]: Gemini CLI, Codex and Copilot CLI, on the same parts; [`codex_trust`]: their
//!   trust in Codex, through Codex's own app-server.
//!
//! Check first, then change. Install reads the file and tries the edit before it copies the
//! binary or asks `claude --version`; a file it cannot edit is refused with nothing changed.
//! Uninstall reads and validates the file before it removes anything: an invalid file is
//! refused and the binary kept. A worker running from the copy being removed is stopped
//! first, and no message names a command that was just removed.
//!
//! Status line (`--statusline`): Claude Code's `statusLine` becomes `<vl> statusline`. A status
//! line of the user's own is kept in `<file>.vibelearn-statusline.json` and put back by
//! `vl uninstall claude-code`.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::Value;

pub mod agents;
mod binary;
mod claude_form;
pub mod codex_trust;
pub mod hooks;
pub mod ledger;
pub mod path_setup;
pub mod settings_file;

pub use binary::installed_binary;
pub use claude_form::{HookForm, Version};
pub use hooks::{merge_claude, merge_cursor, our_target, remove_ours, remove_statusline, set_statusline};
use settings_file::{Committed, EditError, JsonSyntax, SettingsFile, edit_json, sha256_hex};

use super::backend::CliError;
use crate::cli::args::{InstallTarget, UninstallTarget};
use crate::config::Config;

impl From<EditError> for CliError {
    fn from(e: EditError) -> CliError {
        CliError::Failed(e.to_string())
    }
}

pub fn run(target: InstallTarget, add_to_path: bool, config: &Config) -> ExitCode {
    // The data dir owner-only before anything is put in it (SPEC §4, "the disk").
    if let Ok(Some(line)) = crate::worker::secure_data_dir(config, crate::platform::Scope::Everything) {
        println!("{line}");
    }
    let done = match target {
        InstallTarget::Gemini => agents::install(agents::Agent::Gemini, add_to_path, config),
        InstallTarget::Codex => agents::install(agents::Agent::Codex, add_to_path, config),
        InstallTarget::Copilot => agents::install(agents::Agent::Copilot, add_to_path, config),
        other => install(other, add_to_path, config),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vl install: {e}");
            e.exit_code()
        }
    }
}

pub fn run_uninstall(target: UninstallTarget, config: &Config) -> ExitCode {
    let done = match target {
        UninstallTarget::Gemini => agents::uninstall(agents::Agent::Gemini, config),
        UninstallTarget::Codex => agents::uninstall(agents::Agent::Codex, config),
        UninstallTarget::Copilot => agents::uninstall(agents::Agent::Copilot, config),
        other => uninstall(other, config),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vl uninstall: {e}");
            e.exit_code()
        }
    }
}

/// Which settings file an IDE's hooks live in.
struct Target {
    path: PathBuf,
    platform: &'static str,
    ide: &'static str,
    /// Both IDEs read their file as plain JSON: a comment or a trailing comma would break
    /// them, so it is refused here too rather than kept.
    syntax: JsonSyntax,
}

fn target(config: &Config, claude: bool, project: Option<PathBuf>) -> Result<Target, CliError> {
    let home = || {
        config.home.clone().ok_or_else(|| {
            CliError::Failed(format!("{} is not set; cannot find your settings", crate::platform::HOME_ENV))
        })
    };
    Ok(match (claude, project) {
        (true, _) => Target {
            path: home()?.join(".claude").join("settings.json"),
            platform: "claude-code",
            ide: "Claude Code",
            syntax: JsonSyntax::Strict,
        },
        (false, Some(dir)) => {
            if !dir.is_dir() {
                return Err(CliError::NotFound(format!("{} is not a directory", dir.display())));
            }
            Target {
                path: dir.join(".cursor").join("hooks.json"),
                platform: "cursor",
                ide: "Cursor",
                syntax: JsonSyntax::Strict,
            }
        }
        (false, None) => Target {
            path: home()?.join(".cursor").join("hooks.json"),
            platform: "cursor",
            ide: "Cursor",
            syntax: JsonSyntax::Strict,
        },
    })
}

/// What install puts in the document.
struct Plan {
    claude: bool,
    exe: PathBuf,
    program: String,
    form: HookForm,
    statusline: bool,
}

/// Our hooks (and status line) into `document`: how many hooks are ours, and the user's status
/// line that ours replaced.
fn apply_install(document: &mut Value, plan: &Plan) -> Result<(usize, Option<Value>), String> {
    let count = match (plan.claude, plan.form) {
        (true, HookForm::Exec) => merge_claude(
            document,
            &hooks::plugin(hooks::CLAUDE_PLUGIN_HOOKS),
            &plan.exe.to_string_lossy(),
            HookForm::Exec,
        ),
        (true, HookForm::Shell) => {
            merge_claude(document, &hooks::plugin(hooks::CLAUDE_PLUGIN_HOOKS), &plan.program, HookForm::Shell)
        }
        (false, _) => merge_cursor(document, &hooks::plugin(hooks::CURSOR_PLUGIN_HOOKS), &plan.program),
    }?;
    let kept = if plan.statusline { set_statusline(document, &plan.program)? } else { None };
    Ok((count, kept))
}

/// What one install wrote, for the messages.
#[derive(Default)]
struct Wrote {
    count: usize,
    kept_statusline: bool,
    backup: Option<PathBuf>,
    created: bool,
}

fn install(target_ide: InstallTarget, add_to_path: bool, config: &Config) -> Result<(), CliError> {
    let (claude, project, statusline) = match target_ide {
        InstallTarget::ClaudeCode { statusline } => (true, None, statusline),
        InstallTarget::Cursor { project } => (false, project, false),
        _ => return Err(CliError::Failed("not a Claude Code or Cursor install".into())),
    };
    let Target { path, platform, ide, syntax } = target(config, claude, project)?;
    let mut file = SettingsFile::open(&path)?;
    let exe = installed_binary(config);
    let program = crate::platform::shell_program(&exe);
    let mut plan = Plan { claude, exe: exe.clone(), program: program.clone(), form: HookForm::Shell, statusline };
    // Check first: the file parses and takes our hooks before anything is copied or asked.
    edit_json(&path, file.text(), syntax, |doc| apply_install(doc, &plan).map(|_| ()))?;
    let why = if claude {
        let (form, why) = claude_form::claude_code_form(config);
        plan.form = form;
        why
    } else {
        String::new()
    };
    binary::install_binary(config, &path)?;
    println!("vl is installed at {}", exe.display());
    path_setup::after_install(config, exe.parent().unwrap_or(Path::new(".")), add_to_path)?;
    let mut wrote = Wrote::default();
    let committed = file.commit(|text| write_install(&path, text, syntax, &plan, &mut wrote))?;
    let Committed::Written { sha256, redone } = committed else {
        println!("the {ide} hooks are already installed in {}; nothing changed", path.display());
        return Ok(());
    };
    ledger::record(config, &path, sha256, wrote.created)?;
    if redone {
        println!("{} changed while vl was installing; the hooks were added to the new content", path.display());
    }
    println!("installed {} {ide} hooks in {}", wrote.count, path.display());
    if statusline {
        println!("the status line runs: {program} statusline");
    }
    if wrote.kept_statusline {
        println!(
            "your previous status line is kept in {} and comes back with `vl uninstall claude-code`",
            sidecar(&path).display()
        );
    }
    if let Some(backup) = &wrote.backup {
        println!("your file as it was is saved as {}", backup.display());
    }
    match plan.form {
        HookForm::Exec => println!("each runs {} with the arguments: hook {platform} <event> ({why})", exe.display()),
        HookForm::Shell if claude => println!("each runs: {program} hook {platform} <event> (a shell command: {why})"),
        HookForm::Shell => println!("each runs: {program} hook {platform} <event>"),
    }
    print_provider(config);
    Ok(())
}

/// The edit [`SettingsFile::commit`] runs (again, on new content, if the file changed): the
/// new text, and before it is put in place, the backup of the user's own file (once: never
/// over an earlier one) and the user's status line kept aside.
fn write_install(
    path: &Path,
    text: Option<&str>,
    syntax: JsonSyntax,
    plan: &Plan,
    wrote: &mut Wrote,
) -> Result<Option<String>, EditError> {
    let mut kept = None;
    let new = edit_json(path, text, syntax, |doc| {
        let (count, statusline) = apply_install(doc, plan)?;
        (wrote.count, kept) = (count, statusline);
        Ok(())
    })?;
    if new.is_none() {
        return Ok(None);
    }
    fn io<'p>(action: &'static str, p: &'p Path) -> impl FnOnce(std::io::Error) -> EditError + 'p {
        move |source| EditError::Io { action, path: p.to_path_buf(), source }
    }
    let backup = ledger::backup_of(path);
    if let Some(original) = text
        && (wrote.backup.is_some() || !backup.exists())
    {
        std::fs::write(&backup, original).map_err(io("back up the file to", &backup))?;
        wrote.backup = Some(backup);
    }
    wrote.created = text.is_none();
    if let Some(previous) = &kept {
        let aside = sidecar(path);
        let json = serde_json::to_string_pretty(previous).expect("a JSON value always serialises") + "\n";
        std::fs::write(&aside, json).map_err(io("keep your status line in", &aside))?;
        wrote.kept_statusline = true;
    }
    Ok(new)
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
    }
    if let Some(note) = crate::jobs::provider_note(config) {
        println!("  {note}");
    }
    println!("  to change it: vl provider <anthropic|openai|gemini|openrouter|command|offline|auto>");
}

/// How uninstall gives the file back.
enum GiveBack {
    /// It is exactly what install wrote: the user's own bytes go back in.
    Original(String),
    /// Install created it and it is exactly what install wrote: it goes.
    Remove,
    /// Edited since: only our entries come out.
    Edit,
}

fn uninstall(target_ide: UninstallTarget, config: &Config) -> Result<(), CliError> {
    let (claude, project) = match target_ide {
        UninstallTarget::ClaudeCode => (true, None),
        UninstallTarget::Cursor { project } => (false, project),
        _ => return Err(CliError::Failed("not a Claude Code or Cursor uninstall".into())),
    };
    let Target { path, platform, ide, syntax } = target(config, claude, project)?;
    // Check first: read and validate everything; nothing is changed before this succeeds.
    let mut file = SettingsFile::open(&path)?;
    let kept: Option<Value> = std::fs::read_to_string(sidecar(&path)).ok().and_then(|t| serde_json::from_str(&t).ok());
    let hooks = Cell::new(0);
    let statusline = Cell::new(false);
    let remove_edit = |text: Option<&str>| {
        edit_json(&path, text, syntax, |doc| {
            hooks.set(remove_ours(doc, platform)?);
            statusline.set(platform == "claude-code" && remove_statusline(doc, kept.clone()));
            Ok(())
        })
    };
    let edited = remove_edit(file.text())?;
    let give_back = give_back(config, &path, file.text(), edited.as_deref(), syntax)?;
    let removes_copy = binary::removes_copy(config, &path);
    // Then change: the settings first (so no hook points at a removed binary), then the copy.
    let found = hooks.get() > 0 || statusline.get();
    if write_back(&mut file, give_back, found, ide, &hooks, remove_edit)? {
        match (statusline.get(), kept.is_some()) {
            (true, true) => println!("your previous status line is back"),
            (true, false) => println!("removed the VibeLearn status line"),
            _ => {}
        }
    }
    if statusline.get() {
        let _ = std::fs::remove_file(sidecar(&path));
    }
    finish_uninstall(config, &path, removes_copy)
}

/// The change half of uninstalling one settings file, once the check half passed: nothing when
/// the file is missing or holds nothing of ours (`found`), else the user's own bytes back, the
/// file install created removed, or our entries edited out (`remove_edit`, redone on the new
/// content if the file changed meanwhile; `hooks` counts what it took out). Says which, and
/// whether the file changed.
fn write_back(
    file: &mut SettingsFile,
    give_back: GiveBack,
    found: bool,
    ide: &str,
    hooks: &Cell<usize>,
    remove_edit: impl FnMut(Option<&str>) -> Result<Option<String>, EditError>,
) -> Result<bool, CliError> {
    let path = file.path().display().to_string();
    if file.text().is_none() {
        println!("there is no {path}; nothing to remove");
        return Ok(false);
    }
    if !found {
        println!("no VibeLearn hooks in {path}; nothing changed");
        return Ok(false);
    }
    match give_back {
        GiveBack::Original(bytes) => {
            file.restore(&bytes)?;
            println!("removed {} {ide} hooks: {path} is back to your own bytes", hooks.get());
        }
        GiveBack::Remove => {
            file.remove()?;
            println!("removed {} {ide} hooks, and {path} which install had created", hooks.get());
        }
        GiveBack::Edit => {
            file.commit(remove_edit)?;
            println!("removed {} {ide} hooks from {path}", hooks.get());
        }
    }
    Ok(true)
}

/// The end of every uninstall: the backup and the ledger's record of the file go; then, when no
/// settings file uses the copy of `vl` any more (`removes_copy`), the worker running from it
/// and the copy itself; then what stays is said.
fn finish_uninstall(config: &Config, path: &Path, removes_copy: bool) -> Result<(), CliError> {
    let _ = std::fs::remove_file(ledger::backup_of(path));
    ledger::forget(config, path)?;
    if removes_copy {
        stop_worker(config);
    }
    remove_binary(config, path)?;
    print_what_stays(config, removes_copy);
    Ok(())
}

/// Removes the copy of `vl` when no settings file uses it any more, and its PATH entry.
fn remove_binary(config: &Config, path: &Path) -> Result<(), CliError> {
    if let Some(binary) = binary::uninstall_binary(config, path)? {
        println!("removed {}", binary.display());
        let changed = path_setup::remove_from_path(config, binary.parent().unwrap_or(Path::new(".")))?;
        if !changed.is_empty() {
            println!(
                "took {} out of your PATH again: {}",
                binary.parent().unwrap_or(Path::new(".")).display(),
                changed.join(", ")
            );
        }
    }
    Ok(())
}

/// Whether the file is exactly what install last wrote, and so gets the user's bytes back.
fn give_back(
    config: &Config,
    path: &Path,
    text: Option<&str>,
    edited: Option<&str>,
    syntax: JsonSyntax,
) -> Result<GiveBack, CliError> {
    let Some(text) = text else { return Ok(GiveBack::Edit) };
    let record = ledger::get(config, path);
    let ours = record.as_ref().filter(|r| r.sha256 == sha256_hex(text.as_bytes()));
    let emptied = || {
        edited.is_some_and(|t| {
            settings_file::parse_json(path, Some(t), syntax).is_ok_and(|v| v == Value::Object(Default::default()))
        })
    };
    Ok(match (ours, std::fs::read_to_string(ledger::backup_of(path))) {
        (Some(r), _) if r.created => GiveBack::Remove,
        (Some(_), Ok(original)) => GiveBack::Original(original),
        // Edited since, but only our hooks were ever in a file install created.
        _ if record.as_ref().is_some_and(|r| r.created) && emptied() => GiveBack::Remove,
        _ => GiveBack::Edit,
    })
}

/// Stops the worker of this data dir, which runs from the copy about to be removed (the hooks
/// start it from there); says whether one was running and stopped.
fn stop_worker(config: &Config) -> bool {
    use std::time::{Duration, Instant};
    let client = crate::worker_client::WorkerClient::admin(config, Duration::from_secs(2));
    let Ok(health) = client.get("/api/health") else { return false };
    let pid = health.body["pid"].as_u64();
    let asked = client.post("/api/admin/shutdown", &serde_json::json!({})).is_ok_and(|r| r.status == 202);
    let deadline = Instant::now() + Duration::from_secs(15);
    while asked && Instant::now() < deadline && client.get("/api/health").is_ok() {
        std::thread::sleep(Duration::from_millis(100));
    }
    let stopped = client.get("/api/health").is_err();
    if stopped {
        println!(
            "stopped the worker{} before removing the copy it runs from",
            pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
        );
    }
    stopped
}

/// What uninstall leaves, said: a worker still running, and the data. A command is suggested
/// only with a program that is still there.
fn print_what_stays(config: &Config, copy_removed: bool) {
    let client = crate::worker_client::WorkerClient::new(config, std::time::Duration::from_millis(500));
    if let Ok(health) = client.get("/api/health") {
        let pid = health.body["pid"].as_u64();
        let shown = pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
        if copy_removed {
            let how = match pid {
                Some(p) => format!("`{}` stops it", crate::platform::stop_process_command(p)),
                None => "end it from your task manager".into(),
            };
            println!("a worker is still running{shown}: {how}");
        } else {
            println!(
                "the worker is still running{shown}: `{} worker stop` stops it",
                crate::platform::shell_program(&installed_binary(config))
            );
        }
    }
    println!(
        "your sessions, questions and answers stay in {}; delete that folder to remove them",
        config.data_dir.display()
    );
}

/// Where a status line replaced by `--statusline` is kept.
fn sidecar(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".vibelearn-statusline.json");
    PathBuf::from(name)
}
