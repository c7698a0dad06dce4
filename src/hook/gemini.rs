//! Gemini CLI's hook input (SPEC §3.4) → [`HookInput`]. Pure.
//!
//! Events: SessionStart, BeforeAgent (`prompt`), AfterTool (`tool_name`, `tool_input`,
//! `tool_response{llmContent, returnDisplay}`), AfterAgent (`prompt_response`: the end of a
//! turn), SessionEnd (`reason`); each with `session_id`, `cwd`, `transcript_path` and
//! `timestamp`. Gemini sends no tool-call id, so the key is derived ([`derived_key`]).
//!
//! Tools are recorded under Claude Code's names where ingest types them: `write_file` as
//! `Write` (its `content` is the whole file), `replace` as `Edit` (the hook then reads the file
//! after the edit), `run_shell_command` as `Bash`, failed when Gemini's own closing
//! `Exit Code: N` line after the output has N ≠ 0 ([`gemini_trailer`]) or the response carries
//! an `error`.

use serde_json::{Value, json};

use super::exit_status::gemini_trailer;
use super::input::{HookInput, any, derived_key, text};

pub fn normalize(raw: &Value) -> HookInput {
    let session_id = text(raw, &["session_id"]);
    let mut input = HookInput {
        session_id: session_id.clone(),
        cwd: text(raw, &["cwd"]),
        transcript_path: text(raw, &["transcript_path"]),
        prompt: text(raw, &["prompt"]),
        stop_hook_active: raw.get("stop_hook_active").and_then(Value::as_bool).unwrap_or(false),
        last_assistant_message: text(raw, &["prompt_response"]),
        reason: text(raw, &["reason"]),
        ..HookInput::default()
    };
    let Some(tool) = text(raw, &["tool_name"]) else { return input };
    let tool_input = any(raw, &["tool_input"]);
    let response = any(raw, &["tool_response"]);
    input.tool_use_id =
        Some(derived_key("gemini", session_id.as_deref(), Some(&tool), &tool_input, &any(raw, &["timestamp"])));
    let llm_content = llm_text(&response);
    let (name, tool_input) = match tool.as_str() {
        "write_file" => ("Write", tool_input),
        "replace" => ("Edit", edit_input(tool_input)),
        "run_shell_command" => ("Bash", tool_input),
        _ => ("", tool_input),
    };
    if let Some(error) = response.get("error").filter(|e| !e.is_null()) {
        input.failed = true;
        input.error = Some(error.as_str().map_or_else(|| error.to_string(), str::to_owned));
    } else if name == "Bash"
        && let display = response.get("returnDisplay").and_then(Value::as_str)
        && let Some(code) = gemini_trailer(&llm_content, display).filter(|code| *code != 0)
    {
        input.failed = true;
        let shown = display.filter(|s| !s.trim().is_empty());
        input.error = Some(format!("{}\nExit Code: {code}", shown.unwrap_or(&llm_content)));
    }
    input.set_tool(tool, name);
    input.tool_input = tool_input;
    input.tool_response = response;
    input
}

/// `replace`'s `allow_multiple` is Edit's `replace_all`.
fn edit_input(mut input: Value) -> Value {
    if let Some(all) = input.get("allow_multiple").and_then(Value::as_bool) {
        input["replace_all"] = json!(all);
    }
    input
}

/// `llmContent` as text (a string, or the text parts of a list).
fn llm_text(response: &Value) -> String {
    match response.get("llmContent") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::fixtures::{by_event, load};

    const RECORDED: &str = include_str!("../../tests/fixtures/hooks/gemini.jsonl");

    #[test]
    fn every_recorded_event_is_read() {
        let events = load(RECORDED);
        let start = normalize(by_event(&events, "SessionStart", 0));
        assert_eq!(start.cwd.as_deref(), Some("/home/dev/shop"));
        assert!(start.session_id.is_some());
        let prompt = normalize(by_event(&events, "BeforeAgent", 0));
        assert!(prompt.prompt.as_deref().is_some_and(|p| p.contains("<private>")));
        let turn_end = normalize(by_event(&events, "AfterAgent", 0));
        assert_eq!(
            turn_end.last_assistant_message.as_deref(),
            Some("Done: cartTotal is written; the build still fails.")
        );
        assert!(!turn_end.stop_hook_active);
        assert_eq!(normalize(by_event(&events, "SessionEnd", 0)).reason.as_deref(), Some("exit"));
    }

    #[test]
    fn tools_map_to_the_claude_code_names_with_whole_files_and_failed_shells() {
        let events = load(RECORDED);
        let write = normalize(by_event(&events, "AfterTool", 0));
        assert_eq!((write.tool_name.as_deref(), write.agent_tool.as_deref()), (Some("Write"), Some("write_file")));
        assert!(write.tool_input["content"].as_str().unwrap().starts_with("export function cartTotal"));
        let edit = normalize(by_event(&events, "AfterTool", 1));
        assert_eq!(edit.tool_name.as_deref(), Some("Edit"));
        assert_eq!(edit.tool_input["new_string"], "(sum, price) => sum + price");
        let install = normalize(by_event(&events, "AfterTool", 2));
        assert_eq!((install.tool_name.as_deref(), install.failed), (Some("Bash"), false));
        assert_eq!(install.tool_input["command"], "npm install zod");
        let build = normalize(by_event(&events, "AfterTool", 3));
        assert!(build.failed, "{build:?}");
        let error = build.error.unwrap();
        assert!(error.contains("error TS2322") && error.contains("Exit Code: 1"), "{error}");
    }

    #[test]
    fn derived_keys_are_stable_for_a_replay_and_distinct_per_call() {
        let events = load(RECORDED);
        let first = normalize(by_event(&events, "AfterTool", 2));
        assert_eq!(first.tool_use_id, normalize(by_event(&events, "AfterTool", 2)).tool_use_id);
        let keys: std::collections::HashSet<_> =
            (0..4).map(|n| normalize(by_event(&events, "AfterTool", n)).tool_use_id.unwrap()).collect();
        assert_eq!(keys.len(), 4);
        let mut again = by_event(&events, "AfterTool", 2).clone();
        again["timestamp"] = json!("2026-12-01T20:25:00.000Z");
        assert_ne!(normalize(&again).tool_use_id, first.tool_use_id, "the same command run again later");
    }

    #[test]
    fn a_tool_error_is_a_failed_call() {
        let raw = json!({"session_id": "s", "tool_name": "read_file", "tool_input": {"file_path": "a"},
            "tool_response": {"llmContent": "", "error": "File not found"}});
        let input = normalize(&raw);
        assert_eq!(
            (input.tool_name.as_deref(), input.failed, input.error.as_deref()),
            (Some("read_file"), true, Some("File not found"))
        );
    }

    #[test]
    fn a_status_is_read_from_the_clis_own_framing_never_from_the_output() {
        let cases =
            crate::hook::fixtures::exit_cases(include_str!("../../tests/fixtures/hooks/exit-codes.jsonl"), "gemini");
        assert!(cases.len() >= 2);
        for (payload, failed, why) in cases {
            let input = normalize(&payload);
            assert_eq!(input.failed, failed, "{why}: {input:?}");
        }
    }
}
