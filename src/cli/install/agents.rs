//! `vl install gemini|codex|copilot` and `vl uninstall …` (SPEC §3.4, §10): the hooks of the
//! three agents that read Claude Code-like hook files, with Claude Code's guarantees — the
//! stable binary copy (`<data>/bin/vl`), a backup of the user's file before the first change,
//! every other setting kept, re-running changes nothing, uninstall removes exactly ours.
//!
//! - Gemini CLI, `~/.gemini/settings.json`: `hooks.<Event>` groups of `{matcher?, hooks:
//!   [{type, command, name, timeout (ms)}]}`. It runs hooks only in trusted folders; install
//!   says how to trust one.
//! - Codex, `~/.codex/hooks.json`: the same groups (`timeout` in seconds, `command_windows` for
//!   Windows' `cmd`); Codex runs a hook only once it is trusted, so install trusts ours through
//!   Codex's own app-server ([`super::codex_trust`]) and uninstall drops the trust.
//! - Copilot CLI, `~/.copilot/settings.json`: `hooks.<event>` lists of `{type, bash,
//!   powershell, timeoutSec}`. It runs both the user's and a repository's hooks, so install
//!   writes the user's file only.
//!
//! Each command is `<data>/bin/vl hook <agent> <event>` by absolute path: Codex runs hooks
//! through a login shell, which may reset `PATH`. The files are edited with
//! [`super::settings_file`] (format-preserving; Gemini's settings may hold comments, which it
//! reads) and remembered in [`super::ledger`], so uninstall gives back the user's exact bytes
//! when the file did not change since install.

use std::cell::Cell;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::hooks::{Layout, find_hook, remove_hooks};
use super::settings_file::{Committed, EditError, JsonSyntax, SettingsFile, edit_json};
use super::{binary, finish_uninstall, give_back, ledger, path_setup, print_provider, write_back};
use crate::cli::backend::CliError;
use crate::config::Config;
use crate::hook::is_ours;

/// An agent installed by this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Gemini,
    Codex,
    Copilot,
}

/// One hook: the agent's event, ours, its matcher, its timeout in seconds.
type HookSpec = (&'static str, &'static str, Option<&'static str>, u64);

const GEMINI_HOOKS: [HookSpec; 5] = [
    ("SessionStart", "session-start", None, 30),
    ("BeforeAgent", "session-init", None, 10),
    ("AfterTool", "observation", Some(".*"), 10),
    ("AfterAgent", "summarize", None, 15),
    ("SessionEnd", "session-complete", None, 10),
];

/// Codex clamps a SessionEnd hook's timeout to 3 s (and says so on every run): asked for as is.
const CODEX_HOOKS: [HookSpec; 5] = [
    ("SessionStart", "session-start", None, 30),
    ("UserPromptSubmit", "session-init", None, 10),
    ("PostToolUse", "observation", Some("*"), 10),
    ("Stop", "summarize", None, 15),
    ("SessionEnd", "session-complete", None, 3),
];

const COPILOT_HOOKS: [HookSpec; 6] = [
    ("sessionStart", "session-start", None, 30),
    ("userPromptSubmitted", "session-init", None, 10),
    ("postToolUse", "observation", None, 10),
    ("postToolUseFailure", "observation", None, 10),
    ("agentStop", "summarize", None, 15),
    ("sessionEnd", "session-complete", None, 10),
];

impl Agent {
    pub fn platform(self) -> &'static str {
        match self {
            Agent::Gemini => "gemini",
            Agent::Codex => "codex",
            Agent::Copilot => "copilot",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Agent::Gemini => "Gemini CLI",
            Agent::Codex => "Codex",
            Agent::Copilot => "Copilot CLI",
        }
    }

    /// The hook file under the user's home.
    pub fn file(self, home: &Path) -> PathBuf {
        match self {
            Agent::Gemini => home.join(".gemini").join("settings.json"),
            Agent::Codex => home.join(".codex").join("hooks.json"),
            Agent::Copilot => home.join(".copilot").join("settings.json"),
        }
    }

    fn hooks(self) -> &'static [HookSpec] {
        match self {
            Agent::Gemini => &GEMINI_HOOKS,
            Agent::Codex => &CODEX_HOOKS,
            Agent::Copilot => &COPILOT_HOOKS,
        }
    }

    /// How the agent's file lists an event's hooks.
    fn layout(self) -> Layout {
        if self == Agent::Copilot { Layout::Flat } else { Layout::Grouped }
    }

    /// Our hook entry for one event, running `exe`.
    fn entry(self, exe: &Path, spec: &HookSpec) -> Value {
        let (_, event, _, timeout) = *spec;
        let words = format!("hook {} {event}", self.platform());
        let shell = format!("{} {words}", crate::platform::shell_program(exe));
        match self {
            Agent::Gemini => json!({"type": "command", "name": format!("vibelearn-{event}"), "command": shell,
                "timeout": timeout * 1000}),
            Agent::Codex => json!({"type": "command", "command": shell,
                "command_windows": format!("{} {words}", cmd_program(exe)), "timeout": timeout}),
            Agent::Copilot => json!({"type": "command", "bash": shell,
                "powershell": format!("{} {words}", powershell_program(exe)), "timeoutSec": timeout}),
        }
    }
}

/// A path as Windows' `cmd` runs it: in double quotes, with backslashes.
fn cmd_program(exe: &Path) -> String {
    format!("\"{}\"", exe.to_string_lossy().replace('/', "\\"))
}

/// A path as PowerShell runs it: the call operator and a single-quoted path.
fn powershell_program(exe: &Path) -> String {
    format!("& '{}'", exe.to_string_lossy().replace('\'', "''"))
}

/// The `(platform, event)` of a hook entry of ours (any of its command keys), else `None`.
fn our_event(entry: &Value, platform: &str) -> Option<String> {
    ["command", "bash", "powershell", "command_windows"].iter().find_map(|key| {
        let command = entry.get(*key)?.as_str()?;
        let event = command.split_whitespace().last()?;
        is_ours(command, platform, event).then(|| event.to_owned())
    })
}

/// Merges our hooks into the agent's document; returns how many are ours after the merge.
pub fn merge(agent: Agent, document: &mut Value, exe: &Path) -> Result<usize, String> {
    let object = document.as_object_mut().ok_or("the file does not hold a JSON object")?;
    let hooks = object.entry("hooks").or_insert_with(|| json!({}));
    let hooks = hooks.as_object_mut().ok_or("\"hooks\" is not an object")?;
    for spec in agent.hooks() {
        let (event, ours, matcher, _) = *spec;
        let entries = hooks.entry(event).or_insert_with(|| json!([]));
        let entries = entries.as_array_mut().ok_or_else(|| format!("\"hooks.{event}\" is not a list"))?;
        let entry = agent.entry(exe, spec);
        match (
            find_hook(entries, agent.layout(), |h| our_event(h, agent.platform()).as_deref() == Some(ours)),
            agent.layout(),
        ) {
            (Some(installed), _) => *installed = entry,
            (None, Layout::Grouped) => {
                let mut group = json!({"hooks": [entry]});
                if let Some(matcher) = matcher {
                    group["matcher"] = json!(matcher);
                }
                entries.push(group);
            }
            (None, Layout::Flat) => entries.push(entry),
        }
    }
    Ok(agent.hooks().len())
}

/// Removes every hook of ours, then the groups, event lists and `hooks` object that held only
/// ours; returns how many it removed.
pub fn remove(agent: Agent, document: &mut Value) -> Result<usize, String> {
    remove_hooks(document, agent.layout(), |h| our_event(h, agent.platform()).is_some())
}

fn home(config: &Config) -> Result<PathBuf, CliError> {
    config
        .home
        .clone()
        .ok_or_else(|| CliError::Failed(format!("{} is not set; cannot find your settings", crate::platform::HOME_ENV)))
}

impl Agent {
    /// Gemini CLI reads comments in its settings; the other two read plain JSON.
    fn syntax(self) -> JsonSyntax {
        if self == Agent::Gemini { JsonSyntax::Jsonc } else { JsonSyntax::Strict }
    }
}

/// What one install wrote, for the messages and the ledger.
#[derive(Default)]
struct Wrote {
    count: usize,
    backup: Option<PathBuf>,
    created: bool,
}

pub fn install(agent: Agent, add_to_path: bool, config: &Config) -> Result<(), CliError> {
    let path = agent.file(&home(config)?);
    let mut file = SettingsFile::open(&path)?;
    let exe = binary::installed_binary(config);
    // Check first: the file takes our hooks, and (Codex) there is a Codex to trust them with,
    // before anything is copied or written.
    edit_json(&path, file.text(), agent.syntax(), |doc| merge(agent, doc, &exe).map(|_| ()))?;
    if agent == Agent::Codex {
        super::codex_trust::find_codex(config)?;
    }
    binary::install_binary(config, &path)?;
    println!("vl is installed at {}", exe.display());
    path_setup::after_install(config, exe.parent().unwrap_or(Path::new(".")), add_to_path)?;
    let mut wrote = Wrote::default();
    match file.commit(|text| write_install(agent, &path, text, &exe, &mut wrote))? {
        Committed::Unchanged => {
            println!("the {} hooks are already installed in {}; nothing changed", agent.name(), path.display())
        }
        Committed::Written { sha256, redone } => {
            ledger::record(config, &path, sha256, wrote.created)?;
            if redone {
                println!("{} changed while vl was installing; the hooks were added to the new content", path.display());
            }
            println!("installed {} {} hooks in {}", wrote.count, agent.name(), path.display());
            if let Some(backup) = &wrote.backup {
                println!("your file as it was is saved as {}", backup.display());
            }
        }
    }
    println!("each runs: {} hook {} <event>", crate::platform::shell_program(&exe), agent.platform());
    after_install(agent, config, &path)?;
    print_provider(config);
    Ok(())
}

/// The edit the commit runs (again on new content if the file changed meanwhile), and the
/// backup of the user's own file, written once.
fn write_install(
    agent: Agent,
    path: &Path,
    text: Option<&str>,
    exe: &Path,
    wrote: &mut Wrote,
) -> Result<Option<String>, EditError> {
    let new = edit_json(path, text, agent.syntax(), |doc| {
        wrote.count = merge(agent, doc, exe)?;
        Ok(())
    })?;
    if new.is_none() {
        return Ok(None);
    }
    let backup = ledger::backup_of(path);
    if let Some(original) = text
        && (wrote.backup.is_some() || !backup.exists())
    {
        std::fs::write(&backup, original).map_err(|source| EditError::Io {
            action: "back up the file to",
            path: backup.clone(),
            source,
        })?;
        wrote.backup = Some(backup);
    }
    wrote.created = text.is_none();
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
            let trusted = super::codex_trust::trust_ours(config, path)?;
            println!("trusted {trusted} VibeLearn hooks in Codex (its config.toml, hooks.state)");
        }
        Agent::Copilot => println!(
            "Copilot CLI also runs a repository's .github/hooks/*.json: add VibeLearn there only if you \
             uninstall it here, or each event is recorded twice"
        ),
    }
    Ok(())
}

pub fn uninstall(agent: Agent, config: &Config) -> Result<(), CliError> {
    let path = agent.file(&home(config)?);
    // Check first: read and validate everything; nothing changes before this succeeds.
    let mut file = SettingsFile::open(&path)?;
    let removed = Cell::new(0);
    let remove_edit = |text: Option<&str>| {
        edit_json(&path, text, agent.syntax(), |doc| {
            removed.set(remove(agent, doc)?);
            Ok(())
        })
    };
    let edited = remove_edit(file.text())?;
    let back = give_back(config, &path, file.text(), edited.as_deref(), agent.syntax())?;
    let removes_copy = binary::removes_copy(config, &path);
    // Codex's keys for our hooks, asked while the hooks are still there.
    let trust = match (agent, removed.get()) {
        (Agent::Codex, 1..) => super::codex_trust::our_keys(config, &path),
        _ => Ok(Vec::new()),
    };
    write_back(&mut file, back, removed.get() > 0, agent.name(), &removed, remove_edit)?;
    match trust {
        Ok(keys) if !keys.is_empty() => {
            super::codex_trust::forget(config, &keys)?;
            println!("removed their {} trust entries from Codex's config.toml", keys.len());
        }
        Ok(_) => {}
        Err(e) => println!("Codex's trust entries for them stay in its config.toml ({e})"),
    }
    finish_uninstall(config, &path, removes_copy)
}

/// The agents whose hook file holds VibeLearn's hooks, for `vl status`.
pub fn installed(config: &Config) -> Vec<Agent> {
    let Some(home) = config.home.as_deref() else { return Vec::new() };
    [Agent::Gemini, Agent::Codex, Agent::Copilot]
        .into_iter()
        .filter(|agent| {
            let Ok(text) = std::fs::read_to_string(agent.file(home)) else { return false };
            let Ok(mut document) = serde_json::from_str::<Value>(&text) else { return false };
            remove(*agent, &mut document).is_ok_and(|n| n > 0)
        })
        .collect()
}

/// Every agent whose hooks are installed for this user, by name, for `vl status`: Claude Code
/// and Cursor (their user files) and the three above.
pub fn installed_names(config: &Config) -> Vec<String> {
    let Some(home) = config.home.as_deref() else { return Vec::new() };
    let ours = |path: PathBuf, platform: &str| {
        let Ok(text) = std::fs::read_to_string(path) else { return false };
        let Ok(mut document) = serde_json::from_str::<Value>(&text) else { return false };
        super::remove_ours(&mut document, platform).is_ok_and(|n| n > 0)
    };
    let mut names = Vec::new();
    if ours(home.join(".claude").join("settings.json"), "claude-code") {
        names.push("Claude Code".to_owned());
    }
    if ours(home.join(".cursor").join("hooks.json"), "cursor") {
        names.push("Cursor".to_owned());
    }
    names.extend(installed(config).into_iter().map(|a| a.name().to_owned()));
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exe() -> PathBuf {
        PathBuf::from("/home/ann/.vibelearn/bin/vl")
    }

    #[test]
    fn each_agent_gets_its_own_form_and_a_rerun_changes_nothing() {
        for agent in [Agent::Gemini, Agent::Codex, Agent::Copilot] {
            let mut document = json!({"theme": "dark", "hooks": {}});
            assert_eq!(merge(agent, &mut document, &exe()), Ok(agent.hooks().len()));
            let once = document.clone();
            merge(agent, &mut document, &exe()).unwrap();
            assert_eq!(document, once, "{agent:?}");
            assert_eq!(document["theme"], "dark");
        }
        let mut gemini = json!({});
        merge(Agent::Gemini, &mut gemini, &exe()).unwrap();
        let after_tool = &gemini["hooks"]["AfterTool"][0];
        assert_eq!(after_tool["matcher"], ".*");
        assert_eq!(after_tool["hooks"][0]["command"], "/home/ann/.vibelearn/bin/vl hook gemini observation");
        assert_eq!(after_tool["hooks"][0]["timeout"], 10_000, "milliseconds");
        let mut codex = json!({});
        merge(Agent::Codex, &mut codex, &exe()).unwrap();
        let stop = &codex["hooks"]["Stop"][0]["hooks"][0];
        assert_eq!(stop["timeout"], 15);
        assert_eq!(stop["command_windows"], r#""\home\ann\.vibelearn\bin\vl" hook codex summarize"#);
        let mut copilot = json!({});
        merge(Agent::Copilot, &mut copilot, &exe()).unwrap();
        let failure = &copilot["hooks"]["postToolUseFailure"][0];
        assert_eq!(failure["bash"], "/home/ann/.vibelearn/bin/vl hook copilot observation");
        assert_eq!(failure["powershell"], "& '/home/ann/.vibelearn/bin/vl' hook copilot observation");
        assert_eq!(failure["timeoutSec"], 10);
    }

    #[test]
    fn uninstall_removes_exactly_ours() {
        let theirs = json!({"model": {"name": "x"}, "hooks": {
            "AfterTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "./lint.sh"}]}]}});
        let mut document = theirs.clone();
        merge(Agent::Gemini, &mut document, &exe()).unwrap();
        // A moved binary is still ours; another agent's hook is not.
        document["hooks"]["AfterTool"][0]["hooks"]
            .as_array_mut()
            .unwrap()
            .push(json!({"type": "command", "command": "/old/vl hook gemini observation"}));
        assert_eq!(remove(Agent::Codex, &mut document.clone()), Ok(0));
        assert_eq!(remove(Agent::Gemini, &mut document), Ok(6));
        assert_eq!(document, theirs);
        let mut copilot = json!({"hooks": {"agentStop": [{"type": "command", "bash": "echo mine"}]}});
        let before = copilot.clone();
        merge(Agent::Copilot, &mut copilot, &exe()).unwrap();
        assert_eq!(remove(Agent::Copilot, &mut copilot), Ok(6));
        assert_eq!(copilot, before);
    }

    #[test]
    fn a_file_of_another_shape_is_refused() {
        assert!(merge(Agent::Codex, &mut json!({"hooks": []}), &exe()).is_err());
        assert!(merge(Agent::Copilot, &mut json!({"hooks": {"agentStop": {}}}), &exe()).is_err());
        assert!(merge(Agent::Gemini, &mut json!([1]), &exe()).is_err());
    }
}
