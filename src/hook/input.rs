//! The one shape every agent's hook input is read into ([`HookInput`]), and the small readers
//! the adapters share (the first present field, a tool call's derived key). Below the adapters
//! (`adapters.rs` for Claude Code, Cursor and `raw`; `gemini.rs`, `codex.rs`, `copilot.rs`), so
//! each of them imports it and none imports another. Pure.

use serde_json::Value;

/// The fields any hook may need, whatever the IDE called them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookInput {
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub transcript_path: Option<String>,
    pub prompt: Option<String>,
    pub tool_name: Option<String>,
    pub tool_input: Value,
    pub tool_response: Value,
    pub tool_use_id: Option<String>,
    pub file_path: Option<String>,
    pub edits: Value,
    pub stop_hook_active: bool,
    pub last_assistant_message: Option<String>,
    pub reason: Option<String>,
    /// The error of a tool call that failed (Claude Code's PostToolUseFailure `error`, Cursor's
    /// postToolUseFailure `error_message`, a shell command's output when it exited non-zero).
    pub error: Option<String>,
    /// Whether the call failed (its observation is stored with outcome `failed`).
    pub failed: bool,
    /// The failure was the user interrupting the call, not an error of the code.
    pub is_interrupt: bool,
    /// Cursor's kind of failure (`error`, `timeout`, `permission_denied`), when it says.
    pub failure_type: Option<String>,
    /// The agent's own name for the tool when the adapter recorded it under Claude Code's
    /// (Gemini's `write_file` as `Write`, Copilot's `bash` as `Bash`); the skip list matches both.
    pub agent_tool: Option<String>,
    /// More files of the same tool call (a Codex patch that touches several), each recorded
    /// as its own observation.
    pub more: Vec<HookInput>,
    /// The payload came from Cursor (its own field names), whichever hook path it took:
    /// Cursor also runs the hooks configured for Claude Code.
    pub from_cursor: bool,
}

impl HookInput {
    /// Records the agent's tool under Claude Code's name `claude_name` when it has one (the
    /// agent's own name kept in `agent_tool`), else under its own.
    pub(super) fn set_tool(&mut self, agent_tool: String, claude_name: &str) {
        if claude_name.is_empty() {
            self.tool_name = Some(agent_tool);
        } else {
            self.tool_name = Some(claude_name.to_owned());
            self.agent_tool = Some(agent_tool);
        }
    }
}

/// The first present, non-empty string among `names`.
pub(super) fn text(raw: &Value, names: &[&str]) -> Option<String> {
    names.iter().find_map(|n| raw.get(*n).and_then(Value::as_str)).filter(|s| !s.is_empty()).map(str::to_owned)
}

pub(super) fn any(raw: &Value, names: &[&str]) -> Value {
    names.iter().find_map(|n| raw.get(*n)).cloned().unwrap_or(Value::Null)
}

/// Cursor sometimes sends tool input/output as a JSON string; read it as JSON when it is.
pub(super) fn json_or_text(value: Value) -> Value {
    match value {
        Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
        other => other,
    }
}

/// A stable key for a tool call whose agent sends no id (Gemini, Copilot): the session, the
/// tool, its input and the event's own timestamp, hashed. A replayed event gets the same key
/// (stored once); two identical calls at different moments do not.
pub fn derived_key(prefix: &str, session: Option<&str>, tool: Option<&str>, input: &Value, stamp: &Value) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for part in [session.unwrap_or(""), tool.unwrap_or(""), &input.to_string(), &stamp.to_string()] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    let digest = hasher.finalize();
    format!("{prefix}-{}", hex::encode(&digest[..12]))
}
