//! `vl install claude-code` / `vl install cursor [--project DIR]`: register the hooks (SPEC §3.1).
//!
//! The events, matchers and timeouts come from the plugin's own files (`plugin/hooks/hooks.json`,
//! `plugin/cursor/hooks.json`, embedded at build time), so the plugin and the installer cannot
//! drift apart; only each command is rewritten to run `<data>/bin/vl hook <platform> <event>`,
//! which works without PATH or a plugin root.
//!
//! The binary (SPEC §10): install copies the running `vl` to `<data>/bin/vl[.exe]` and
//! registers that copy, so hooks keep working when the `vl` that ran the install lives in a
//! temporary or versioned place (`npx`, a plugin cache, a download folder); re-running install
//! after an upgrade refreshes it. `<data>/bin/installs.json` lists the settings files that
//! point at it; uninstalling the last one removes the copy.
//!
//! The form of a command (SPEC §10): Claude Code ≥ 2.1.139 (asked with `claude --version`)
//! gets the exec form, `"command"` the binary's absolute path and `"args"` the words, which no
//! shell parses (PowerShell on Windows without Git Bash included). An older or unknown Claude
//! Code, and Cursor, get one command string that the shells they may use all read
//! ([`crate::platform::shell_program`]).
//!
//! Merging: a hook is recognised as ours when its program is a file named `vl` (or `vl.exe`)
//! and its words are `hook <platform> <event>`, in either form. Ours is replaced in place (a
//! moved binary is re-pointed, a shell form becomes an exec form); missing ones are appended;
//! everything else in the file is kept. Re-running changes nothing and does not rewrite the
//! file. Before a file that exists is changed, it is
//! copied to `<file>.vibelearn.bak`; the new content is written beside it and renamed over it,
//! keeping its permissions, so a crash never leaves half a settings file.
//!
//! Compatibility: the file is re-serialised with keys in sorted order (serde_json's map; the
//! sync job's canonical payload relies on that order, so `preserve_order` is not an option).
//! The content is unchanged apart from our hooks, and the backup holds the original bytes.
//!
//! Status line (`--statusline`): Claude Code's `statusLine` becomes `<vl> statusline`. A status
//! line of the user's own is not lost: it is kept in `<file>.vibelearn-statusline.json` and put
//! back by `vl uninstall claude-code`.
//!
//! Uninstall removes exactly what install added: every hook whose command is ours (any event,
//! any path to `vl`), then the groups and event lists that only held ours, then an emptied
//! `hooks` object, and our status line (restoring the kept one). Everything else stays; the
//! file is backed up first, like install.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};

use super::backend::CliError;
use crate::cli::args::{InstallTarget, UninstallTarget};
use crate::config::Config;
use crate::hook::{is_ours, is_vl_program};

/// The first Claude Code release that runs a hook's `command` with its `args` and no shell.
const EXEC_FORM_SINCE: Version = Version(2, 1, 139);
/// `claude --version` gets this long before the version counts as unknown.
const VERSION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How a Claude Code hook names what it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookForm {
    /// `"command"`: the binary's path, `"args"`: `["hook", platform, event]`; no shell.
    Exec,
    /// `"command"`: one shell string, `<program> hook <platform> <event>`.
    Shell,
}

/// A Claude Code version, `major.minor.patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u64, pub u64, pub u64);

impl Version {
    /// The first `X.Y.Z` word of `claude --version`'s output (`2.1.332 (Claude Code)`).
    pub fn parse(text: &str) -> Option<Version> {
        text.split_whitespace().find_map(|word| {
            let mut parts = word.trim_start_matches('v').splitn(3, '.').map(|p| p.parse::<u64>().ok());
            Some(Version(parts.next()??, parts.next()??, parts.next()??))
        })
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// The form for the Claude Code on `PATH`, and what to tell the user about it.
fn claude_code_form(config: &Config) -> (HookForm, String) {
    let claude = config.path_var.as_deref().and_then(|p| crate::platform::find_executable(p, "claude"));
    let Some(claude) = claude else {
        return (HookForm::Shell, "no `claude` on PATH, so its version is unknown".into());
    };
    match claude_version(&claude) {
        Some(version) if version >= EXEC_FORM_SINCE => {
            (HookForm::Exec, format!("Claude Code {version} runs each hook as a program with its arguments, no shell"))
        }
        Some(version) => (HookForm::Shell, format!("Claude Code {version} is older than {EXEC_FORM_SINCE}")),
        None => (HookForm::Shell, format!("`{} --version` did not say its version", claude.display())),
    }
}

/// Runs `claude --version` (killed past [`VERSION_TIMEOUT`]); `None` if it says nothing usable.
fn claude_version(claude: &Path) -> Option<Version> {
    use std::io::Read;
    let mut child = std::process::Command::new(claude)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + VERSION_TIMEOUT;
    while child.try_wait().ok()?.is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut text = String::new();
    child.stdout.take()?.take(4096).read_to_string(&mut text).ok()?;
    Version::parse(&text)
}

/// Where the stable copy of `vl` lives.
pub fn installed_binary(config: &Config) -> PathBuf {
    config.data_dir.join("bin").join(format!("vl{}", std::env::consts::EXE_SUFFIX))
}

/// Copies the running `vl` to [`installed_binary`] (beside it, then renamed over it, so a hook
/// starting at that moment runs the old or the new one, never half a file) and records that
/// `settings` uses it. Returns the copy's path.
fn install_binary(config: &Config, settings: &Path) -> Result<PathBuf, CliError> {
    let exe = std::env::current_exe().map_err(|e| CliError::caused("cannot find the vl executable", e))?;
    let target = installed_binary(config);
    let dir = target.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| CliError::caused(format!("cannot create {}", dir.display()), e))?;
    remove_stale_copies(dir);
    let same = |a: &Path, b: &Path| {
        std::fs::canonicalize(a).ok().zip(std::fs::canonicalize(b).ok()).is_some_and(|(a, b)| a == b)
    };
    if !same(&exe, &target) {
        let fresh = dir.join(format!("vl.new{}", std::env::consts::EXE_SUFFIX));
        std::fs::copy(&exe, &fresh)
            .map_err(|e| CliError::caused(format!("cannot copy {} to {}", exe.display(), fresh.display()), e))?;
        if std::fs::rename(&fresh, &target).is_err() {
            // Windows will not replace a program that is running (a hook, the worker), but
            // lets it be renamed: move it aside, then put the new one in its place.
            let aside = dir.join(format!("vl.old-{}{}", std::process::id(), std::env::consts::EXE_SUFFIX));
            let _ = std::fs::rename(&target, &aside);
            std::fs::rename(&fresh, &target)
                .map_err(|e| CliError::caused(format!("cannot put the new vl at {}", target.display()), e))?;
        }
    }
    let mut users = read_installs(dir);
    let settings = settings.to_string_lossy().into_owned();
    if !users.contains(&settings) {
        users.push(settings);
        write_installs(dir, &users)?;
    }
    Ok(target)
}

/// Forgets that `settings` uses the copy; removes the copy when nothing uses it any more.
/// Returns the removed copy's path.
fn uninstall_binary(config: &Config, settings: &Path) -> Result<Option<PathBuf>, CliError> {
    let target = installed_binary(config);
    let dir = target.parent().unwrap_or(Path::new("."));
    let mut users = read_installs(dir);
    let settings = settings.to_string_lossy();
    users.retain(|u| *u != settings);
    if !users.is_empty() {
        write_installs(dir, &users)?;
        return Ok(None);
    }
    let _ = std::fs::remove_file(dir.join(INSTALLS_FILE));
    if !target.exists() {
        return Ok(None);
    }
    if std::fs::remove_file(&target).is_err() {
        // Running (Windows): moved aside, and removed by the next install or uninstall.
        let aside = dir.join(format!("vl.old-{}{}", std::process::id(), std::env::consts::EXE_SUFFIX));
        std::fs::rename(&target, &aside)
            .map_err(|e| CliError::caused(format!("cannot remove {}", target.display()), e))?;
    }
    remove_stale_copies(dir);
    let _ = std::fs::remove_dir(dir);
    Ok(Some(target))
}

/// The settings files that use the copy, one per line.
const INSTALLS_FILE: &str = "installs.txt";

fn read_installs(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(INSTALLS_FILE))
        .map(|text| text.lines().filter(|l| !l.trim().is_empty()).map(str::to_owned).collect())
        .unwrap_or_default()
}

fn write_installs(dir: &Path, users: &[String]) -> Result<(), CliError> {
    let path = dir.join(INSTALLS_FILE);
    std::fs::write(&path, users.join("\n") + "\n")
        .map_err(|e| CliError::caused(format!("cannot write {}", path.display()), e))
}

/// Copies moved aside while they ran, and a copy left half-made: gone once nothing runs them.
fn remove_stale_copies(dir: &Path) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("vl.old-") || name.starts_with("vl.new") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

const CLAUDE_PLUGIN_HOOKS: &str = include_str!("../../plugin/hooks/hooks.json");
const CURSOR_PLUGIN_HOOKS: &str = include_str!("../../plugin/cursor/hooks.json");

pub fn run(target: InstallTarget, config: &Config) -> ExitCode {
    match install(target, config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vl install: {e}");
            e.exit_code()
        }
    }
}

pub fn run_uninstall(target: UninstallTarget, config: &Config) -> ExitCode {
    match uninstall(target, config) {
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
}

fn target(config: &Config, claude: bool, project: Option<PathBuf>) -> Result<Target, CliError> {
    let home = || {
        config.home.clone().ok_or_else(|| {
            CliError::Failed(format!("{} is not set; cannot find your settings", crate::platform::HOME_ENV))
        })
    };
    Ok(match (claude, project) {
        (true, _) => {
            Target { path: home()?.join(".claude").join("settings.json"), platform: "claude-code", ide: "Claude Code" }
        }
        (false, Some(dir)) => {
            if !dir.is_dir() {
                return Err(CliError::NotFound(format!("{} is not a directory", dir.display())));
            }
            Target { path: dir.join(".cursor").join("hooks.json"), platform: "cursor", ide: "Cursor" }
        }
        (false, None) => Target { path: home()?.join(".cursor").join("hooks.json"), platform: "cursor", ide: "Cursor" },
    })
}

fn install(target_ide: InstallTarget, config: &Config) -> Result<(), CliError> {
    let (claude, project, statusline) = match target_ide {
        InstallTarget::ClaudeCode { statusline } => (true, None, statusline),
        InstallTarget::Cursor { project } => (false, project, false),
    };
    let Target { path, platform, ide } = target(config, claude, project)?;
    let existed = path.exists();
    let mut document = read_document(&path)?;
    let before = document.clone();
    let exe = install_binary(config, &path)?;
    let program = crate::platform::shell_program(&exe);
    let (form, why) = if claude { claude_code_form(config) } else { (HookForm::Shell, String::new()) };
    let count = match (platform, form) {
        ("claude-code", HookForm::Exec) => {
            merge_claude(&mut document, &plugin(CLAUDE_PLUGIN_HOOKS), &exe.to_string_lossy(), HookForm::Exec)
        }
        ("claude-code", HookForm::Shell) => {
            merge_claude(&mut document, &plugin(CLAUDE_PLUGIN_HOOKS), &program, HookForm::Shell)
        }
        _ => merge_cursor(&mut document, &plugin(CURSOR_PLUGIN_HOOKS), &program),
    }
    .map_err(|e| CliError::Failed(format!("{}: {e}; nothing changed", path.display())))?;
    println!("vl is installed at {}", exe.display());
    let mut kept_statusline = None;
    if statusline {
        kept_statusline = set_statusline(&mut document, &program)
            .map_err(|e| CliError::Failed(format!("{}: {e}; nothing changed", path.display())))?;
    }
    if document == before {
        println!("the {ide} hooks are already installed in {}; nothing changed", path.display());
        return Ok(());
    }
    if let Some(previous) = &kept_statusline {
        let aside = sidecar(&path);
        let text = serde_json::to_string_pretty(previous).expect("a JSON value always serialises") + "\n";
        std::fs::write(&aside, text).map_err(|e| {
            CliError::Failed(format!("cannot keep your status line in {}: {e}; nothing changed", aside.display()))
        })?;
    }
    let backup = write_document(&path, &document, true)?;
    if !existed {
        remember_created(config, &path)?;
    }
    println!("installed {count} {ide} hooks in {}", path.display());
    if statusline {
        println!("the status line runs: {program} statusline");
    }
    if kept_statusline.is_some() {
        println!(
            "your previous status line is kept in {} and comes back with `vl uninstall claude-code`",
            sidecar(&path).display()
        );
    }
    if let Some(backup) = backup {
        println!("the previous file is saved as {}", backup.display());
    }
    match form {
        HookForm::Exec => println!("each runs {} with the arguments: hook {platform} <event> ({why})", exe.display()),
        HookForm::Shell if claude => println!("each runs: {program} hook {platform} <event> (a shell command: {why})"),
        HookForm::Shell => println!("each runs: {program} hook {platform} <event>"),
    }
    print_provider(config);
    Ok(())
}

/// Which LLM provider the worker's `auto` will use on this machine, what it costs, and how
/// to change it (SPEC §6.5).
fn print_provider(config: &Config) {
    let choice = crate::llm::select(&crate::jobs::provider_settings(config));
    // The worker tries a `claude` CLI once before relying on it; so does this line.
    if let Ok(crate::llm::Selected::Remote(provider)) = &choice
        && let Some(why) = provider.unavailable()
    {
        println!("LLM provider: offline (no LLM, free) — nothing leaves this machine");
        println!(
            "  auto did not choose the claude CLI on PATH: it answered \"{why}\"; log it in (run `claude`, then /login) to use it"
        );
    } else {
        println!("LLM provider: {} — {}", crate::jobs::describe_provider(&choice), crate::jobs::provider_cost(&choice));
    }
    if let Some(note) = crate::jobs::provider_note(config) {
        println!("  {note}");
    }
    println!(
        "  to change it, set VIBELEARN_PROVIDER in {} (offline never spends anything)",
        config.data_dir.join("settings.json").display()
    );
}

/// The settings files install created (they did not exist): uninstall removes them again
/// when nothing but our hooks was in them.
const CREATED_FILE: &str = "created-by-install.txt";

fn created_files(config: &Config) -> Vec<String> {
    std::fs::read_to_string(config.data_dir.join(CREATED_FILE))
        .map(|text| text.lines().filter(|l| !l.trim().is_empty()).map(str::to_owned).collect())
        .unwrap_or_default()
}

fn remember_created(config: &Config, path: &Path) -> Result<(), CliError> {
    let mut files = created_files(config);
    let path = path.to_string_lossy().into_owned();
    if !files.contains(&path) {
        files.push(path);
    }
    let list = config.data_dir.join(CREATED_FILE);
    std::fs::write(&list, files.join("\n") + "\n")
        .map_err(|e| CliError::caused(format!("cannot write {}", list.display()), e))
}

/// Whether install created `path`; forgets it (the list goes when empty).
fn forget_created(config: &Config, path: &Path) -> bool {
    let mut files = created_files(config);
    let path = path.to_string_lossy();
    let created = files.iter().any(|f| *f == path);
    files.retain(|f| *f != path);
    let list = config.data_dir.join(CREATED_FILE);
    let _ = if files.is_empty() { std::fs::remove_file(&list) } else { std::fs::write(&list, files.join("\n") + "\n") };
    created
}

fn uninstall(target_ide: UninstallTarget, config: &Config) -> Result<(), CliError> {
    let (claude, project) = match target_ide {
        UninstallTarget::ClaudeCode => (true, None),
        UninstallTarget::Cursor { project } => (false, project),
    };
    let Target { path, platform, ide } = target(config, claude, project)?;
    let removed_binary = uninstall_binary(config, &path)?;
    if let Some(binary) = &removed_binary {
        println!("removed {}", binary.display());
    }
    if !path.exists() {
        println!("there is no {}; nothing to remove", path.display());
        return Ok(());
    }
    let mut document = read_document(&path)?;
    let kept = match std::fs::read_to_string(sidecar(&path)) {
        Ok(text) => serde_json::from_str::<Value>(&text).ok(),
        Err(_) => None,
    };
    let removed = remove_ours(&mut document, platform)
        .map_err(|e| CliError::Failed(format!("{}: {e}; nothing changed", path.display())))?;
    let statusline = platform == "claude-code" && remove_statusline(&mut document, kept.clone());
    if removed == 0 && !statusline {
        println!("no VibeLearn hooks in {}; nothing changed", path.display());
        return Ok(());
    }
    // Nothing of ours stays behind: a file install created and only our hooks filled goes, and
    // the backup install kept (it still holds the hooks) is no longer needed.
    let created = forget_created(config, &path);
    if created && document.as_object().is_some_and(|o| o.is_empty()) {
        std::fs::remove_file(&path).map_err(|e| CliError::caused(format!("cannot remove {}", path.display()), e))?;
        println!("removed {removed} {ide} hooks, and {} which install had created", path.display());
    } else {
        write_document(&path, &document, false)?;
        println!("removed {removed} {ide} hooks from {}", path.display());
    }
    let _ = std::fs::remove_file(backup_of(&path));
    if statusline && kept.is_some() {
        let _ = std::fs::remove_file(sidecar(&path));
    }
    match (statusline, kept.is_some()) {
        (true, true) => println!("your previous status line is back"),
        (true, false) => println!("removed the VibeLearn status line"),
        _ => {}
    }
    print_what_stays(config);
    Ok(())
}

/// What uninstall leaves, said: a running worker, and the data.
fn print_what_stays(config: &Config) {
    let client = crate::worker_client::WorkerClient::new(config, std::time::Duration::from_millis(500));
    if let Ok(health) = client.get("/api/health") {
        let pid = health.body["pid"].as_u64().map(|p| format!(" (pid {p})")).unwrap_or_default();
        println!("the worker is still running{pid}: `vl worker stop` stops it");
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

/// Whether a `statusLine` value is ours.
fn is_our_statusline(value: &Value) -> bool {
    value
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|command| command.trim().strip_suffix(" statusline").is_some_and(is_vl_program))
}

/// Sets `statusLine` to ours; returns the user's own status line it replaced, to keep aside.
pub fn set_statusline(settings: &mut Value, program: &str) -> Result<Option<Value>, String> {
    let object = settings.as_object_mut().ok_or("the file does not hold a JSON object")?;
    let ours = json!({"type": "command", "command": format!("{program} statusline"), "padding": 0});
    let previous = object.insert("statusLine".into(), ours);
    Ok(previous.filter(|p| !is_our_statusline(p)))
}

/// Removes our `statusLine`, putting `kept` back in its place; says whether it removed one.
pub fn remove_statusline(settings: &mut Value, kept: Option<Value>) -> bool {
    let Some(object) = settings.as_object_mut() else { return false };
    if !object.get("statusLine").is_some_and(is_our_statusline) {
        return false;
    }
    match kept {
        Some(previous) => object.insert("statusLine".into(), previous),
        None => object.remove("statusLine"),
    };
    true
}

/// Removes every hook of ours from a Claude Code settings or Cursor hooks document, and the
/// containers that held only ours; returns how many hooks it removed.
pub fn remove_ours(document: &mut Value, platform: &str) -> Result<usize, String> {
    let ours = |hook: &Value| our_target(hook).is_some_and(|(p, _)| p == platform);
    let Some(hooks) = document.get_mut("hooks") else { return Ok(0) };
    let hooks = hooks.as_object_mut().ok_or("\"hooks\" is not an object")?;
    let mut removed = 0;
    for entries in hooks.values_mut() {
        let Some(entries) = entries.as_array_mut() else { continue };
        let before = entries.len();
        if platform == "claude-code" {
            // Groups of `{matcher?, hooks:[…]}`: drop ours inside, then groups we emptied.
            for group in entries.iter_mut() {
                if let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                    let n = list.len();
                    list.retain(|h| !ours(h));
                    removed += n - list.len();
                }
            }
            entries.retain(|g| g.get("hooks").and_then(Value::as_array).is_none_or(|l| !l.is_empty()));
        } else {
            entries.retain(|e| !ours(e));
            removed += before - entries.len();
        }
    }
    if removed > 0 {
        // Event lists that only held ours, and then an emptied `hooks`, go too.
        hooks.retain(|_, entries| entries.as_array().is_none_or(|e| !e.is_empty()));
        if hooks.is_empty() {
            document.as_object_mut().map(|o| o.remove("hooks"));
        }
    }
    Ok(removed)
}

fn plugin(text: &str) -> Value {
    serde_json::from_str(text).expect("the plugin's hooks.json is embedded at build time and is valid JSON")
}

/// `{}` for a missing (or empty) file; an error for one that is not a JSON object.
fn read_document(path: &Path) -> Result<Value, CliError> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(json!({})),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(value @ Value::Object(_)) => Ok(value),
            Ok(_) => Err(CliError::Failed(format!("{} does not hold a JSON object; nothing changed", path.display()))),
            Err(e) => Err(CliError::Failed(format!(
                "{} is not valid JSON ({e}); fix it first, nothing changed",
                path.display()
            ))),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(json!({})),
        Err(e) => Err(CliError::caused(format!("cannot read {}", path.display()), e)),
    }
}

/// The backup install keeps of a settings file before changing it.
fn backup_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".vibelearn.bak");
    PathBuf::from(name)
}

/// Backs up an existing file (when `keep_backup`), then writes beside it and renames; returns
/// the backup's path.
fn write_document(path: &Path, document: &Value, keep_backup: bool) -> Result<Option<PathBuf>, CliError> {
    let failed =
        |what: &str, p: &Path, e: std::io::Error| CliError::caused(format!("cannot {what} {}", p.display()), e);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| failed("create", dir, e))?;
    let with_suffix = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    let backup = if keep_backup && path.exists() {
        let backup = backup_of(path);
        std::fs::copy(path, &backup).map_err(|e| failed("back up", path, e))?;
        Some(backup)
    } else {
        None
    };
    let temp = with_suffix(".vibelearn.tmp");
    let text = serde_json::to_string_pretty(document).expect("a JSON value always serialises") + "\n";
    std::fs::write(&temp, text).map_err(|e| failed("write", &temp, e))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&temp, meta.permissions());
    }
    std::fs::rename(&temp, path).map_err(|e| failed("replace", path, e))?;
    Ok(backup)
}

/// The `(platform, event)` of a hook of ours, in either form; `None` for anyone else's.
pub fn our_target(hook: &Value) -> Option<(String, String)> {
    let command = hook.get("command")?.as_str()?;
    match hook.get("args") {
        Some(args) => {
            let words: Vec<&str> = args.as_array()?.iter().map(Value::as_str).collect::<Option<_>>()?;
            match (is_vl_program(command), words.as_slice()) {
                (true, ["hook", platform, event]) => Some(((*platform).to_owned(), (*event).to_owned())),
                _ => None,
            }
        }
        None => {
            let (platform, event) = plugin_target(command)?;
            is_ours(command, &platform, &event).then_some((platform, event))
        }
    }
}

/// The `<platform> <event>` a plugin command ends with.
fn plugin_target(command: &str) -> Option<(String, String)> {
    let mut words = command.split_whitespace().rev();
    let event = words.next()?.to_owned();
    let platform = words.next()?.to_owned();
    Some((platform, event))
}

/// Our command for a plugin command.
fn our_command(plugin_command: &str, program: &str) -> Result<(String, String, String), String> {
    let (platform, event) =
        plugin_target(plugin_command).ok_or_else(|| format!("unreadable plugin command {plugin_command:?}"))?;
    Ok((format!("{program} hook {platform} {event}"), platform, event))
}

fn object_field<'v>(value: &'v mut Value, field: &str, default: Value) -> Result<&'v mut Value, String> {
    let object = value.as_object_mut().ok_or("the file does not hold a JSON object")?;
    let slot = object.entry(field).or_insert(default.clone());
    if std::mem::discriminant(slot) != std::mem::discriminant(&default) {
        let kind = match default {
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
            _ => "a number",
        };
        return Err(format!("\"{field}\" is not {kind}"));
    }
    Ok(slot)
}

/// Claude Code's `settings.json`: `hooks.<Event>` is a list of `{matcher?, hooks:[{type,
/// command, args?, timeout}]}` groups. `program` is the binary's path for [`HookForm::Exec`],
/// its shell-ready form ([`crate::platform::shell_program`]) for [`HookForm::Shell`]. Returns
/// how many hooks are ours after the merge.
pub fn merge_claude(settings: &mut Value, plugin: &Value, program: &str, form: HookForm) -> Result<usize, String> {
    let hooks = object_field(settings, "hooks", json!({}))?;
    let mut count = 0;
    for (event, plugin_groups) in plugin["hooks"].as_object().into_iter().flatten() {
        let groups = object_field(hooks, event, json!([]))?.as_array_mut().expect("checked to be an array");
        for plugin_group in plugin_groups.as_array().into_iter().flatten() {
            let mut missing = Vec::new();
            for plugin_hook in plugin_group["hooks"].as_array().into_iter().flatten() {
                let (command, platform, vl_event) =
                    our_command(plugin_hook["command"].as_str().unwrap_or(""), program)?;
                let mut hook = plugin_hook.clone();
                match form {
                    HookForm::Shell => hook["command"] = json!(command),
                    HookForm::Exec => {
                        hook["command"] = json!(program);
                        hook["args"] = json!(["hook", platform, vl_event]);
                    }
                }
                let target = Some((platform.clone(), vl_event.clone()));
                let installed = groups
                    .iter_mut()
                    .filter_map(|g| g.get_mut("hooks").and_then(Value::as_array_mut))
                    .flatten()
                    .find(|h| our_target(h) == target);
                match installed {
                    Some(installed) => *installed = hook,
                    None => missing.push(hook),
                }
                count += 1;
            }
            if !missing.is_empty() {
                let mut group = plugin_group.clone();
                group["hooks"] = Value::Array(missing);
                groups.push(group);
            }
        }
    }
    Ok(count)
}

/// Cursor's `hooks.json`: `{"version":1,"hooks":{"<event>":[{"command":…}]}}`.
pub fn merge_cursor(document: &mut Value, plugin: &Value, program: &str) -> Result<usize, String> {
    object_field(document, "version", json!(1))?;
    let hooks = object_field(document, "hooks", json!({}))?;
    let mut count = 0;
    for (event, plugin_entries) in plugin["hooks"].as_object().into_iter().flatten() {
        for plugin_entry in plugin_entries.as_array().into_iter().flatten() {
            let (command, platform, vl_event) = our_command(plugin_entry["command"].as_str().unwrap_or(""), program)?;
            let mut entry = plugin_entry.clone();
            entry["command"] = json!(command);
            let entries = object_field(hooks, event, json!([]))?.as_array_mut().expect("checked to be an array");
            let target = Some((platform, vl_event));
            match entries.iter_mut().find(|e| our_target(e) == target) {
                Some(installed) => *installed = entry,
                None => entries.push(entry),
            }
            count += 1;
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_versions_are_read_and_compared() {
        assert_eq!(Version::parse("2.1.332 (Claude Code)\n"), Some(Version(2, 1, 332)));
        assert_eq!(Version::parse("claude v2.1.139"), Some(Version(2, 1, 139)));
        assert_eq!(Version::parse("Claude Code"), None);
        assert!(Version(2, 1, 139) >= EXEC_FORM_SINCE && Version(2, 1, 138) < EXEC_FORM_SINCE);
        assert!(Version(2, 2, 0) > EXEC_FORM_SINCE && Version(1, 9, 999) < EXEC_FORM_SINCE);
    }

    #[test]
    fn exec_form_hooks_carry_args_and_replace_a_shell_form_in_place() {
        let plugin = plugin(CLAUDE_PLUGIN_HOOKS);
        let mut settings = json!({"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "echo mine"},
            {"type": "command", "command": "'/old place/vl' hook claude-code summarize", "timeout": 15}]}]}});
        assert_eq!(
            merge_claude(&mut settings, &plugin, r"C:\Users\Ann Lee\.vibelearn\bin\vl.exe", HookForm::Exec),
            Ok(6)
        );
        let stop = &settings["hooks"]["Stop"][0]["hooks"];
        assert_eq!(stop.as_array().unwrap().len(), 2, "re-pointed, not duplicated: {stop}");
        assert_eq!(stop[1]["command"], r"C:\Users\Ann Lee\.vibelearn\bin\vl.exe");
        assert_eq!(stop[1]["args"], json!(["hook", "claude-code", "summarize"]));
        let once = settings.clone();
        merge_claude(&mut settings, &plugin, r"C:\Users\Ann Lee\.vibelearn\bin\vl.exe", HookForm::Exec).unwrap();
        assert_eq!(settings, once);
        assert_eq!(remove_ours(&mut settings, "claude-code"), Ok(6));
        assert_eq!(settings, json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}}));
        // Someone else's program with the same words is not ours.
        assert_eq!(our_target(&json!({"command": "/bin/other", "args": ["hook", "claude-code", "stop"]})), None);
    }

    #[test]
    fn powershell_and_windows_paths_are_recognised_as_ours() {
        assert!(is_ours("& 'C:/Users/Ann Lee/.vibelearn/bin/vl.exe' hook cursor summarize", "cursor", "summarize"));
        assert!(is_ours(
            "C:/Users/ann/.vibelearn/bin/vl.exe hook claude-code observation",
            "claude-code",
            "observation"
        ));
        assert!(is_ours(r"C:\vl\VL.EXE hook cursor stop", "cursor", "stop"));
        assert!(!is_ours("& 'C:/tools/vlc.exe' hook cursor stop", "cursor", "stop"));
    }

    #[test]
    fn our_hooks_are_recognised_by_program_and_target() {
        assert!(is_ours("/usr/bin/vl hook claude-code observation", "claude-code", "observation"));
        assert!(is_ours("'/Users/Ann Lee/bin/vl' hook claude-code observation", "claude-code", "observation"));
        assert!(is_ours("vl hook cursor summarize", "cursor", "summarize"));
        assert!(!is_ours("/usr/bin/vl hook claude-code summarize", "claude-code", "observation"));
        assert!(!is_ours("/usr/bin/other hook claude-code observation", "claude-code", "observation"));
        assert!(!is_ours("echo done", "claude-code", "observation"));
    }

    #[test]
    fn claude_merge_keeps_foreign_hooks_and_is_idempotent() {
        let plugin = plugin(CLAUDE_PLUGIN_HOOKS);
        let mut settings = json!({
            "model": "opus",
            "hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}],
                      "Stop": [{"hooks": [{"type": "command", "command": "/old/place/vl hook claude-code summarize"}]}]}
        });
        assert_eq!(merge_claude(&mut settings, &plugin, "/new/vl", HookForm::Shell), Ok(6));
        let once = settings.clone();
        assert_eq!(merge_claude(&mut settings, &plugin, "/new/vl", HookForm::Shell), Ok(6));
        assert_eq!(settings, once, "a second merge changes nothing");
        assert_eq!(settings["model"], "opus");
        let post = settings["hooks"]["PostToolUse"].as_array().unwrap();
        assert_eq!(post.len(), 2);
        assert_eq!(post[0]["hooks"][0]["command"], "echo mine");
        assert_eq!(post[1]["matcher"], "*");
        assert_eq!(post[1]["hooks"][0]["command"], "/new/vl hook claude-code observation");
        let stop = settings["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(stop.len(), 1, "the old install was re-pointed, not duplicated");
        assert_eq!(stop[0]["hooks"][0]["command"], "/new/vl hook claude-code summarize");
        assert_eq!(stop[0]["hooks"][0]["timeout"], 15);
        assert_eq!(settings["hooks"]["SessionStart"][0]["matcher"], "startup|resume|clear|compact");
        // Failed tool calls come through their own event, to the same hook.
        let failure = settings["hooks"]["PostToolUseFailure"].as_array().unwrap();
        assert_eq!(failure.len(), 1);
        assert_eq!(failure[0]["matcher"], "*");
        assert_eq!(failure[0]["hooks"][0]["command"], "/new/vl hook claude-code observation");
    }

    #[test]
    fn an_earlier_install_is_upgraded_in_place() {
        // What `vl install claude-code` wrote before PostToolUseFailure was registered.
        let mut plugin_before = plugin(CLAUDE_PLUGIN_HOOKS);
        plugin_before["hooks"].as_object_mut().unwrap().remove("PostToolUseFailure");
        let mut settings =
            json!({"hooks": {"PostToolUseFailure": [{"hooks": [{"type": "command", "command": "./notify.sh"}]}]}});
        merge_claude(&mut settings, &plugin_before, "/old/vl", HookForm::Shell).unwrap();
        assert_eq!(settings["hooks"]["PostToolUseFailure"].as_array().unwrap().len(), 1);
        merge_claude(&mut settings, &plugin(CLAUDE_PLUGIN_HOOKS), "/new/vl", HookForm::Shell).unwrap();
        let hooks = settings["hooks"].as_object().unwrap();
        for (event, groups) in hooks {
            let commands: Vec<&str> = groups
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|g| g["hooks"].as_array().unwrap())
                .filter_map(|h| h["command"].as_str())
                .collect();
            let ours: Vec<&&str> = commands.iter().filter(|c| c.contains(" hook claude-code ")).collect();
            assert_eq!(ours.len(), 1, "{event}: exactly one of ours: {commands:?}");
            assert!(ours[0].starts_with("/new/vl "), "{event}: re-pointed: {commands:?}");
        }
        assert_eq!(settings["hooks"]["PostToolUseFailure"][0]["hooks"][0]["command"], "./notify.sh");
    }

    #[test]
    fn cursor_merge_keeps_foreign_hooks_and_is_idempotent() {
        let plugin = plugin(CURSOR_PLUGIN_HOOKS);
        let mut document = json!({"version": 1, "hooks": {"stop": [{"command": "./audit.sh"}]}});
        assert_eq!(merge_cursor(&mut document, &plugin, "/bin/vl"), Ok(7));
        let once = document.clone();
        merge_cursor(&mut document, &plugin, "/bin/vl").unwrap();
        assert_eq!(document, once);
        assert_eq!(
            document["hooks"]["stop"],
            json!([{"command": "./audit.sh"}, {"command": "/bin/vl hook cursor summarize"}])
        );
        assert_eq!(document["hooks"]["afterMCPExecution"], json!([{"command": "/bin/vl hook cursor observation"}]));
        assert_eq!(document["hooks"]["postToolUseFailure"], json!([{"command": "/bin/vl hook cursor observation"}]));
        assert_eq!(document["hooks"]["sessionEnd"], json!([{"command": "/bin/vl hook cursor session-complete"}]));
        let mut empty = json!({});
        merge_cursor(&mut empty, &plugin, "/bin/vl").unwrap();
        assert_eq!(empty["version"], 1);
    }

    #[test]
    fn uninstall_removes_exactly_what_install_added() {
        let original = json!({
            "model": "opus",
            "statusLine": {"type": "command", "command": "~/bin/my-status"},
            "hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}]}
        });
        let mut settings = original.clone();
        merge_claude(&mut settings, &plugin(CLAUDE_PLUGIN_HOOKS), "/opt/vl", HookForm::Shell).unwrap();
        let kept = set_statusline(&mut settings, "/opt/vl").unwrap();
        assert_eq!(kept, Some(original["statusLine"].clone()));
        assert_eq!(settings["statusLine"]["command"], "/opt/vl statusline");
        assert_eq!(set_statusline(&mut settings.clone(), "/new/vl").unwrap(), None, "ours is not kept aside");
        assert_eq!(remove_ours(&mut settings, "claude-code"), Ok(6));
        assert!(remove_statusline(&mut settings, kept));
        assert_eq!(settings, original);
        assert_eq!(remove_ours(&mut settings, "claude-code"), Ok(0), "a second uninstall changes nothing");
        assert!(!remove_statusline(&mut settings, None), "the user's own status line stays");

        let mut fresh = json!({});
        merge_claude(&mut fresh, &plugin(CLAUDE_PLUGIN_HOOKS), "/opt/vl", HookForm::Shell).unwrap();
        set_statusline(&mut fresh, "/opt/vl").unwrap();
        remove_ours(&mut fresh, "claude-code").unwrap();
        assert!(remove_statusline(&mut fresh, None));
        assert_eq!(fresh, json!({}), "containers only we filled go too");

        let cursor_original = json!({"version": 1, "hooks": {"stop": [{"command": "./audit.sh"}]}});
        let mut cursor = cursor_original.clone();
        merge_cursor(&mut cursor, &plugin(CURSOR_PLUGIN_HOOKS), "/opt/vl").unwrap();
        assert_eq!(remove_ours(&mut cursor, "cursor"), Ok(7));
        assert_eq!(cursor, cursor_original);
    }

    #[test]
    fn a_file_of_the_wrong_shape_is_refused() {
        assert!(merge_cursor(&mut json!({"hooks": []}), &plugin(CURSOR_PLUGIN_HOOKS), "/bin/vl").is_err());
        assert!(merge_cursor(&mut json!({"version": "one"}), &plugin(CURSOR_PLUGIN_HOOKS), "/bin/vl").is_err());
        assert!(
            merge_claude(&mut json!({"hooks": {"Stop": {}}}), &plugin(CLAUDE_PLUGIN_HOOKS), "/bin/vl", HookForm::Shell)
                .is_err()
        );
    }
}
