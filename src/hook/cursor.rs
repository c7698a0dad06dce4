//! Cursor runs the hooks configured for Claude Code (`~/.claude/settings.json`,
//! `.claude/settings.json`) besides its own, passing them its own field names
//! (`conversation_id`, `cursor_version`). A user with both `vl install claude-code` and
//! `vl install cursor` would get every event twice. [`records_natively`] tells whether an event
//! that arrived through the Claude Code hook is also recorded by a VibeLearn hook Cursor runs
//! natively; only then is the Claude Code copy dropped, so nothing is lost with an older or
//! partial Cursor install (an event with no native hook of ours is recorded once, here).
//!
//! Performance: two small file reads, only for Cursor payloads on the Claude Code path; a
//! Claude Code event never pays for it.

use std::path::PathBuf;

use serde_json::Value;

use super::adapters::{HookEvent, HookInput};
use super::is_ours;
use crate::capture::FRAGMENT_TOOLS;
use crate::config::Config;

/// The Cursor events whose VibeLearn hook records what `event` (with `input`) would record.
pub fn native_events(event: HookEvent, input: &HookInput) -> &'static [&'static str] {
    match event {
        HookEvent::SessionStart => &[],
        HookEvent::SessionInit => &["beforeSubmitPrompt"],
        HookEvent::FileEdit => &["afterFileEdit"],
        HookEvent::Summarize => &["stop"],
        HookEvent::SessionComplete => &["sessionEnd"],
        HookEvent::Observation if input.failed => &["postToolUseFailure"],
        HookEvent::Observation => match input.tool_name.as_deref() {
            Some("Bash") => &["afterShellExecution"],
            Some(tool) if tool == "Write" || FRAGMENT_TOOLS.contains(&tool) => &["afterFileEdit"],
            Some(tool) if tool.starts_with("mcp__") || tool.starts_with("MCP:") => &["afterMCPExecution"],
            // Reads, searches and the like have no native hook of ours: recorded here.
            _ => &[],
        },
    }
}

/// Whether a VibeLearn hook in Cursor's own hook files (the user's, or the workspace's)
/// records this event.
pub fn records_natively(config: &Config, input: &HookInput, event: HookEvent) -> bool {
    let events = native_events(event, input);
    if events.is_empty() {
        return false;
    }
    let mut files: Vec<PathBuf> = Vec::new();
    if let Some(home) = &config.home {
        files.push(home.join(".cursor").join("hooks.json"));
    }
    if let Some(root) = &input.cwd {
        files.push(PathBuf::from(root).join(".cursor").join("hooks.json"));
    }
    files.iter().any(|path| {
        let Ok(text) = std::fs::read_to_string(path) else { return false };
        let Ok(document) = serde_json::from_str::<Value>(&text) else { return false };
        events.iter().any(|name| registers(&document, name))
    })
}

/// Whether a Cursor hooks document runs VibeLearn's hook for the Cursor event `name`.
fn registers(document: &Value, name: &str) -> bool {
    document
        .pointer(&format!("/hooks/{name}"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.get("command").and_then(Value::as_str))
        .any(|command| {
            let event = command.split_whitespace().last().unwrap_or("");
            is_ours(command, "cursor", event)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_map_to_the_native_hooks_that_record_them() {
        let bash = HookInput { tool_name: Some("Bash".into()), ..HookInput::default() };
        assert_eq!(native_events(HookEvent::Observation, &bash), ["afterShellExecution"]);
        let failed = HookInput { failed: true, ..bash.clone() };
        assert_eq!(native_events(HookEvent::Observation, &failed), ["postToolUseFailure"]);
        let read = HookInput { tool_name: Some("Read".into()), ..HookInput::default() };
        assert!(native_events(HookEvent::Observation, &read).is_empty());
        let edit = HookInput { tool_name: Some("Edit".into()), ..HookInput::default() };
        assert_eq!(native_events(HookEvent::Observation, &edit), ["afterFileEdit"]);
    }

    #[test]
    fn only_our_hooks_count() {
        let ours = json!({"version": 1, "hooks": {"afterFileEdit": [{"command": "./fmt.sh"}, {"command": "/usr/bin/vl hook cursor file-edit"}]}});
        assert!(registers(&ours, "afterFileEdit"));
        assert!(!registers(&ours, "stop"));
        let foreign = json!({"hooks": {"afterFileEdit": [{"command": "./fmt.sh"}]}});
        assert!(!registers(&foreign, "afterFileEdit"));
    }
}
