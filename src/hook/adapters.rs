//! IDE adapters: Claude Code, Cursor and `raw` stdin shapes (SPEC §3.2) normalised into one
//! [`HookInput`]; Gemini CLI, Codex and Copilot CLI (SPEC §3.4) in their own modules
//! ([`super::gemini`], [`super::codex`], [`super::copilot`]). Pure: JSON in, struct out.

use serde_json::Value;

pub use super::input::HookInput;
use super::input::{any, json_or_text, text};

/// Which IDE sent the hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    ClaudeCode,
    Cursor,
    Raw,
    Gemini,
    Codex,
    Copilot,
}

impl Platform {
    pub fn parse(raw: &str) -> Option<Platform> {
        match raw {
            "claude-code" => Some(Platform::ClaudeCode),
            "cursor" => Some(Platform::Cursor),
            "raw" => Some(Platform::Raw),
            "gemini" => Some(Platform::Gemini),
            "codex" => Some(Platform::Codex),
            "copilot" => Some(Platform::Copilot),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Platform::ClaudeCode => "claude-code",
            Platform::Cursor => "cursor",
            Platform::Raw => "raw",
            Platform::Gemini => "gemini",
            Platform::Codex => "codex",
            Platform::Copilot => "copilot",
        }
    }
}

/// Which hook event ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    SessionStart,
    SessionInit,
    Observation,
    FileEdit,
    Summarize,
    SessionComplete,
}

impl HookEvent {
    pub fn parse(raw: &str) -> Option<HookEvent> {
        match raw {
            "session-start" => Some(HookEvent::SessionStart),
            "session-init" => Some(HookEvent::SessionInit),
            "observation" => Some(HookEvent::Observation),
            "file-edit" => Some(HookEvent::FileEdit),
            "summarize" => Some(HookEvent::Summarize),
            "session-complete" => Some(HookEvent::SessionComplete),
            _ => None,
        }
    }
}

pub fn normalize(platform: Platform, raw: &Value) -> HookInput {
    match platform {
        // Cursor runs the hooks configured for Claude Code with its own field names.
        Platform::ClaudeCode if is_cursor_payload(raw) => from_cursor(raw),
        Platform::ClaudeCode => from_claude_code(raw, &|n| n),
        Platform::Raw => from_raw(raw),
        Platform::Cursor => from_cursor(raw),
        Platform::Gemini => super::gemini::normalize(raw),
        Platform::Codex => super::codex::normalize(raw),
        Platform::Copilot => super::copilot::normalize(raw),
    }
}

fn from_claude_code(raw: &Value, name: &dyn Fn(&'static str) -> &'static str) -> HookInput {
    HookInput {
        session_id: text(raw, &[name("session_id")]),
        cwd: text(raw, &[name("cwd")]),
        transcript_path: text(raw, &[name("transcript_path")]),
        prompt: text(raw, &[name("prompt")]),
        tool_name: text(raw, &[name("tool_name")]),
        tool_input: any(raw, &[name("tool_input")]),
        tool_response: any(raw, &[name("tool_response")]),
        tool_use_id: text(raw, &[name("tool_use_id")]),
        file_path: None,
        edits: Value::Null,
        stop_hook_active: raw.get(name("stop_hook_active")).and_then(Value::as_bool).unwrap_or(false),
        last_assistant_message: text(raw, &[name("last_assistant_message")]),
        reason: text(raw, &[name("reason")]),
        error: failure_text(raw.get(name("error"))),
        failed: raw.get(name("hook_event_name")).and_then(Value::as_str) == Some("PostToolUseFailure")
            || raw.get(name("error")).is_some_and(|e| !e.is_null()),
        is_interrupt: raw.get(name("is_interrupt")).and_then(Value::as_bool).unwrap_or(false),
        failure_type: None,
        from_cursor: false,
        ..HookInput::default()
    }
}

/// A failure's text: Claude Code sends a string; anything else is kept as its JSON.
fn failure_text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// `raw`: the Claude Code fields in snake_case or camelCase.
fn from_raw(raw: &Value) -> HookInput {
    let snake = from_claude_code(raw, &|n| n);
    let camel = from_claude_code(raw, &|n| match n {
        "session_id" => "sessionId",
        "transcript_path" => "transcriptPath",
        "tool_name" => "toolName",
        "tool_input" => "toolInput",
        "tool_response" => "toolResponse",
        "tool_use_id" => "toolUseId",
        "stop_hook_active" => "stopHookActive",
        "last_assistant_message" => "lastAssistantMessage",
        "hook_event_name" => "hookEventName",
        "is_interrupt" => "isInterrupt",
        other => other,
    });
    HookInput {
        session_id: snake.session_id.or(camel.session_id).or_else(|| text(raw, &["contentSessionId"])),
        cwd: snake.cwd.or(camel.cwd),
        transcript_path: snake.transcript_path.or(camel.transcript_path),
        prompt: snake.prompt.or(camel.prompt),
        tool_name: snake.tool_name.or(camel.tool_name),
        tool_input: if snake.tool_input.is_null() { camel.tool_input } else { snake.tool_input },
        tool_response: if snake.tool_response.is_null() { camel.tool_response } else { snake.tool_response },
        tool_use_id: snake.tool_use_id.or(camel.tool_use_id),
        file_path: text(raw, &["file_path", "filePath"]),
        edits: any(raw, &["edits"]),
        stop_hook_active: snake.stop_hook_active || camel.stop_hook_active,
        last_assistant_message: snake.last_assistant_message.or(camel.last_assistant_message),
        reason: snake.reason.or(camel.reason),
        error: snake.error.or(camel.error),
        failed: snake.failed || camel.failed,
        is_interrupt: snake.is_interrupt || camel.is_interrupt,
        failure_type: None,
        from_cursor: false,
        ..HookInput::default()
    }
}

/// Whether a payload is Cursor's, whichever hook command received it: Cursor names its
/// session `conversation_id` and stamps `cursor_version` on every hook input, including the
/// hooks it runs from Claude Code's settings files.
pub fn is_cursor_payload(raw: &Value) -> bool {
    raw.get("cursor_version").is_some() || (raw.get("conversation_id").is_some() && raw.get("session_id").is_none())
}

fn from_cursor(raw: &Value) -> HookInput {
    let cwd = raw
        .get("workspace_roots")
        .and_then(Value::as_array)
        .and_then(|r| r.first())
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| text(raw, &["cwd"]));
    let error = failure_text(raw.get("error_message").or_else(|| raw.get("error")));
    let mut input = HookInput {
        session_id: text(raw, &["conversation_id", "session_id", "generation_id"]),
        cwd,
        transcript_path: text(raw, &["transcript_path"]),
        prompt: text(raw, &["prompt"]),
        file_path: text(raw, &["file_path"]),
        edits: any(raw, &["edits"]),
        stop_hook_active: raw.get("stop_hook_active").and_then(Value::as_bool).unwrap_or(false),
        last_assistant_message: text(raw, &["last_assistant_message"]),
        reason: text(raw, &["reason", "status"]),
        tool_use_id: text(raw, &["tool_use_id", "execution_id"]),
        failed: error.is_some()
            || raw
                .get("hook_event_name")
                .and_then(Value::as_str)
                .is_some_and(|e| e.eq_ignore_ascii_case("postToolUseFailure")),
        error,
        is_interrupt: raw.get("is_interrupt").and_then(Value::as_bool).unwrap_or(false),
        failure_type: text(raw, &["failure_type"]),
        from_cursor: true,
        ..HookInput::default()
    };
    if let Some(command) = text(raw, &["command"]) {
        // afterShellExecution: recorded as the Bash tool, like Claude Code's.
        input.tool_name = Some("Bash".into());
        input.tool_input = serde_json::json!({ "command": command });
        let output = any(raw, &["output"]);
        input.tool_response = serde_json::json!({ "output": output });
        // A non-zero exit status, where the payload carries one, is a failed call whose error
        // is what the command printed.
        let exit = ["exit_code", "exitCode", "exit_status"].iter().find_map(|k| raw.get(*k)).and_then(Value::as_i64);
        if let Some(code) = exit.filter(|c| *c != 0) {
            input.failed = true;
            input.error.get_or_insert_with(|| match output.as_str() {
                Some(text) if !text.trim().is_empty() => text.to_owned(),
                _ => format!("exited with status {code}"),
            });
        }
    } else {
        // afterMCPExecution, postToolUseFailure, and the generic tool payloads Cursor sends to
        // Claude Code's hooks. Its shell tool is recorded as Bash, like its shell hook.
        input.tool_name = text(raw, &["tool_name"]);
        input.tool_input = json_or_text(any(raw, &["tool_input"]));
        input.tool_response = json_or_text(any(raw, &["result_json", "tool_output", "tool_response"]));
        if matches!(input.tool_name.as_deref(), Some("Shell" | "run_terminal_cmd")) {
            input.tool_name = Some("Bash".into());
        }
    }
    input
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claude_code_fields_are_read() {
        let input = normalize(
            Platform::ClaudeCode,
            &json!({"session_id":"s","cwd":"/p","tool_name":"Write",
            "tool_input":{"file_path":"/p/a"},"tool_response":{"ok":true},"tool_use_id":"t","stop_hook_active":true}),
        );
        assert_eq!(input.session_id.as_deref(), Some("s"));
        assert_eq!(input.tool_name.as_deref(), Some("Write"));
        assert_eq!(input.tool_use_id.as_deref(), Some("t"));
        assert!(input.stop_hook_active);
    }

    #[test]
    fn cursor_shell_mcp_and_edits_are_read() {
        let shell = normalize(
            Platform::Cursor,
            &json!({"conversation_id":"c","workspace_roots":["/w"],"command":"ls","output":"a"}),
        );
        assert_eq!(
            (shell.session_id.as_deref(), shell.cwd.as_deref(), shell.tool_name.as_deref()),
            (Some("c"), Some("/w"), Some("Bash"))
        );
        assert_eq!(shell.tool_input, json!({"command":"ls"}));
        let mcp = normalize(
            Platform::Cursor,
            &json!({"generation_id":"g","tool_name":"search","tool_input":"{\"q\":1}","result_json":"{\"hits\":2}"}),
        );
        assert_eq!(
            (mcp.session_id.as_deref(), mcp.tool_input.clone(), mcp.tool_response.clone()),
            (Some("g"), json!({"q":1}), json!({"hits":2}))
        );
        let edit = normalize(
            Platform::Cursor,
            &json!({"conversation_id":"c","file_path":"/w/a.ts","edits":[{"old_string":"a","new_string":"b"}]}),
        );
        assert_eq!(edit.file_path.as_deref(), Some("/w/a.ts"));
        assert!(edit.edits.is_array());
    }

    #[test]
    fn raw_accepts_camel_and_snake_case() {
        let camel = normalize(Platform::Raw, &json!({"sessionId":"s","toolName":"Read","toolUseId":"t"}));
        let snake = normalize(Platform::Raw, &json!({"session_id":"s","tool_name":"Read","tool_use_id":"t"}));
        assert_eq!(camel, snake);
    }
}
