//! The five agents `vl install` manages, described as data (SPEC §3.1, §3.4, §10): where each
//! keeps its hooks, the JSON it reads, how it lists an event's hooks, and our entries in it.
//! Pure: documents in, documents out; `super` does the files, the lock and the ledger.
//!
//! - Claude Code, `~/.claude/settings.json`, and Cursor, `.cursor/hooks.json` (a project's or
//!   the user's): their events, matchers and timeouts come from the plugin's own files
//!   ([`super::hooks`]).
//! - Gemini CLI, `~/.gemini/settings.json`: `hooks.<Event>` groups of `{matcher?, hooks:
//!   [{type, command, name, timeout (ms)}]}`. It runs hooks only in trusted folders; install
//!   says how to trust one. It reads comments in its settings, and they are kept.
//! - Codex, `~/.codex/hooks.json`: the same groups (`timeout` in seconds, `command_windows` for
//!   Windows' `cmd`); Codex runs a hook only once it is trusted, so install trusts ours through
//!   Codex's own app-server ([`super::codex_trust`]) and uninstall drops the trust.
//! - Copilot CLI, `~/.copilot/settings.json`: `hooks.<event>` lists of `{type, bash,
//!   powershell, timeoutSec}`. It runs both the user's and a repository's hooks, so install
//!   writes the user's file only.
//!
//! Each command is `<data>/bin/vl hook <agent> <event>` by absolute path: Codex runs hooks
//! through a login shell, which may reset `PATH`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::hooks::{self, HookForm, Layout, find_hook, remove_hooks};
use super::settings_file::JsonSyntax;
use crate::config::Config;
use crate::hook::is_ours;

/// An agent whose hooks `vl install` manages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    ClaudeCode,
    Cursor,
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
    /// Every agent, in the order `vl status` names them.
    pub const ALL: [Agent; 5] = [Agent::ClaudeCode, Agent::Cursor, Agent::Gemini, Agent::Codex, Agent::Copilot];

    /// The word of `vl hook <platform> …`.
    pub fn platform(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Cursor => "cursor",
            Agent::Gemini => "gemini",
            Agent::Codex => "codex",
            Agent::Copilot => "copilot",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude Code",
            Agent::Cursor => "Cursor",
            Agent::Gemini => "Gemini CLI",
            Agent::Codex => "Codex",
            Agent::Copilot => "Copilot CLI",
        }
    }

    /// The user's hook file under their home (Cursor's project files are named by
    /// `--project`).
    pub fn file(self, home: &Path) -> PathBuf {
        match self {
            Agent::ClaudeCode => home.join(".claude").join("settings.json"),
            Agent::Cursor => home.join(".cursor").join("hooks.json"),
            Agent::Gemini => home.join(".gemini").join("settings.json"),
            Agent::Codex => home.join(".codex").join("hooks.json"),
            Agent::Copilot => home.join(".copilot").join("settings.json"),
        }
    }

    /// The hooks of the three agents described here (Claude Code's and Cursor's come from the
    /// plugin's own files).
    fn hooks(self) -> &'static [HookSpec] {
        match self {
            Agent::Gemini => &GEMINI_HOOKS,
            Agent::Codex => &CODEX_HOOKS,
            Agent::Copilot => &COPILOT_HOOKS,
            Agent::ClaudeCode | Agent::Cursor => &[],
        }
    }

    /// How the agent's file lists an event's hooks.
    fn layout(self) -> Layout {
        match self {
            Agent::Copilot | Agent::Cursor => Layout::Flat,
            Agent::ClaudeCode | Agent::Gemini | Agent::Codex => Layout::Grouped,
        }
    }

    /// The JSON the agent reads: Gemini CLI takes comments in its settings; the others read
    /// plain JSON, so a comment or trailing comma would break them and is refused rather than
    /// kept.
    pub fn syntax(self) -> JsonSyntax {
        if self == Agent::Gemini { JsonSyntax::Jsonc } else { JsonSyntax::Strict }
    }

    /// Whether `hook` (one entry of an event's list) is one of ours for this agent.
    fn is_our_hook(self, hook: &Value) -> bool {
        match self {
            Agent::ClaudeCode | Agent::Cursor => {
                hooks::our_target(hook).is_some_and(|(platform, _)| platform == self.platform())
            }
            _ => our_event(hook, self.platform()).is_some(),
        }
    }

    /// Our hook entry for one event, running `exe` (Gemini CLI, Codex, Copilot CLI).
    fn entry(self, exe: &Path, spec: &HookSpec) -> Value {
        let (_, event, _, timeout) = *spec;
        let words = format!("hook {} {event}", self.platform());
        let shell = format!("{} {words}", crate::platform::shell_program(exe));
        match self {
            Agent::ClaudeCode | Agent::Cursor => unreachable!("their hooks come from the plugin's files"),
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

/// What install puts in a document.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The stable copy of `vl` the hooks run.
    pub exe: PathBuf,
    /// `exe` as a shell runs it ([`crate::platform::shell_program`]).
    pub program: String,
    /// Claude Code's hook form (the others have one).
    pub form: HookForm,
    /// Claude Code's status line too.
    pub statusline: bool,
}

impl Plan {
    pub fn new(exe: PathBuf, statusline: bool) -> Plan {
        let program = crate::platform::shell_program(&exe);
        Plan { exe, program, form: HookForm::Shell, statusline }
    }
}

/// What a merge did: how many hooks are ours after it, and the user's status line that ours
/// replaced (Claude Code with `--statusline`).
#[derive(Debug, Default, PartialEq)]
pub struct Merged {
    pub count: usize,
    pub replaced_statusline: Option<Value>,
}

/// Merges our hooks (and status line) into the agent's document.
pub fn merge(agent: Agent, document: &mut Value, plan: &Plan) -> Result<Merged, String> {
    let count = match (agent, plan.form) {
        (Agent::ClaudeCode, HookForm::Exec) => hooks::merge_claude(
            document,
            &hooks::plugin(hooks::CLAUDE_PLUGIN_HOOKS),
            &plan.exe.to_string_lossy(),
            HookForm::Exec,
        )?,
        (Agent::ClaudeCode, HookForm::Shell) => {
            hooks::merge_claude(document, &hooks::plugin(hooks::CLAUDE_PLUGIN_HOOKS), &plan.program, HookForm::Shell)?
        }
        (Agent::Cursor, _) => hooks::merge_cursor(document, &hooks::plugin(hooks::CURSOR_PLUGIN_HOOKS), &plan.program)?,
        _ => merge_described(agent, document, &plan.exe)?,
    };
    let replaced_statusline = match agent {
        Agent::ClaudeCode if plan.statusline => hooks::set_statusline(document, &plan.program)?,
        _ => None,
    };
    Ok(Merged { count, replaced_statusline })
}

/// Merges the hooks of Gemini CLI, Codex or Copilot CLI; returns how many are ours after it.
fn merge_described(agent: Agent, document: &mut Value, exe: &Path) -> Result<usize, String> {
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

/// Removes every hook of ours, then the containers install created that our removal emptied
/// (`created`, from the ledger; `None` for an install by an older version, see
/// [`hooks::remove_hooks`]); returns how many hooks it removed. The status line is
/// [`hooks::remove_statusline`]'s.
pub fn remove(agent: Agent, document: &mut Value, created: Option<&[String]>) -> Result<usize, String> {
    remove_hooks(document, agent.layout(), |h| agent.is_our_hook(h), created)
}

/// Whether the document holds a hook of ours.
pub fn holds_ours(agent: Agent, document: &Value) -> bool {
    remove(agent, &mut document.clone(), None).is_ok_and(|n| n > 0)
}

/// The agents whose user hook file holds VibeLearn's hooks, for `vl status`: each file read
/// as its agent reads it (Gemini's with comments), as install does.
pub fn installed(config: &Config) -> Vec<Agent> {
    let Some(home) = config.home.as_deref() else { return Vec::new() };
    Agent::ALL
        .into_iter()
        .filter(|agent| {
            let path = agent.file(home);
            let Ok(text) = std::fs::read_to_string(&path) else { return false };
            super::settings_file::parse_json(&path, Some(&text), agent.syntax())
                .is_ok_and(|document| holds_ours(*agent, &document))
        })
        .collect()
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
            assert_eq!(merge_described(agent, &mut document, &exe()), Ok(agent.hooks().len()));
            let once = document.clone();
            merge_described(agent, &mut document, &exe()).unwrap();
            assert_eq!(document, once, "{agent:?}");
            assert_eq!(document["theme"], "dark");
        }
        let mut gemini = json!({});
        merge_described(Agent::Gemini, &mut gemini, &exe()).unwrap();
        let after_tool = &gemini["hooks"]["AfterTool"][0];
        assert_eq!(after_tool["matcher"], ".*");
        assert_eq!(after_tool["hooks"][0]["command"], "/home/ann/.vibelearn/bin/vl hook gemini observation");
        assert_eq!(after_tool["hooks"][0]["timeout"], 10_000, "milliseconds");
        let mut codex = json!({});
        merge_described(Agent::Codex, &mut codex, &exe()).unwrap();
        let stop = &codex["hooks"]["Stop"][0]["hooks"][0];
        assert_eq!(stop["timeout"], 15);
        assert_eq!(stop["command_windows"], r#""\home\ann\.vibelearn\bin\vl" hook codex summarize"#);
        let mut copilot = json!({});
        merge_described(Agent::Copilot, &mut copilot, &exe()).unwrap();
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
        merge_described(Agent::Gemini, &mut document, &exe()).unwrap();
        // A moved binary is still ours; another agent's hook is not.
        document["hooks"]["AfterTool"][0]["hooks"]
            .as_array_mut()
            .unwrap()
            .push(json!({"type": "command", "command": "/old/vl hook gemini observation"}));
        assert_eq!(remove(Agent::Codex, &mut document.clone(), None), Ok(0));
        assert_eq!(remove(Agent::Gemini, &mut document, None), Ok(6));
        assert_eq!(document, theirs);
        let mut copilot = json!({"hooks": {"agentStop": [{"type": "command", "bash": "echo mine"}]}});
        let before = copilot.clone();
        merge_described(Agent::Copilot, &mut copilot, &exe()).unwrap();
        assert_eq!(remove(Agent::Copilot, &mut copilot, None), Ok(6));
        assert_eq!(copilot, before);
    }

    #[test]
    fn a_file_of_another_shape_is_refused() {
        assert!(merge_described(Agent::Codex, &mut json!({"hooks": []}), &exe()).is_err());
        assert!(merge_described(Agent::Copilot, &mut json!({"hooks": {"agentStop": {}}}), &exe()).is_err());
        assert!(merge_described(Agent::Gemini, &mut json!([1]), &exe()).is_err());
    }
}
