//! GitHub Copilot CLI's hook input (SPEC §3.4) → [`HookInput`]. Pure.
//!
//! The payloads are camelCase and carry no event name: the registered command names it
//! (`vl hook copilot <event>`). Each has `sessionId`, `timestamp` (ms) and `cwd`;
//! userPromptSubmitted adds `prompt`; postToolUse adds `toolName`, `toolArgs`,
//! `toolResult{resultType, textResultForLlm}`; postToolUseFailure `toolName`, `toolArgs` and
//! `error`; agentStop `transcriptPath`; sessionEnd `reason`. No tool-call id: the key is
//! derived ([`derived_key`]).
//!
//! Tools are recorded under Claude Code's names: `create {path, file_text}` as `Write` (the
//! whole file), `edit {path, old_str, new_str}` as `Edit` (the hook reads the file after the
//! edit), `bash` as `Bash`, failed when its result's trailer `<shellId: N completed with exit
//! code M>` has M ≠ 0 ([`copilot_trailer`]).

use serde_json::{Value, json};

use super::exit_status::copilot_trailer;
use super::input::{HookInput, any, derived_key, json_or_text, text};

pub fn normalize(raw: &Value) -> HookInput {
    let session_id = text(raw, &["sessionId", "session_id"]);
    let mut input = HookInput {
        session_id: session_id.clone(),
        cwd: text(raw, &["cwd"]),
        transcript_path: text(raw, &["transcriptPath"]),
        prompt: text(raw, &["prompt"]),
        stop_hook_active: raw.get("stop_hook_active").and_then(Value::as_bool).unwrap_or(false),
        reason: text(raw, &["reason"]),
        ..HookInput::default()
    };
    let Some(tool) = text(raw, &["toolName"]) else { return input };
    let args = json_or_text(any(raw, &["toolArgs"]));
    let result = json_or_text(any(raw, &["toolResult"]));
    input.tool_use_id =
        Some(derived_key("copilot", session_id.as_deref(), Some(&tool), &args, &any(raw, &["timestamp"])));
    let result_text = result.get("textResultForLlm").and_then(Value::as_str).unwrap_or_default().to_owned();
    let field = |name: &str| args.get(name).cloned().unwrap_or(Value::Null);
    let (name, tool_input) = match tool.as_str() {
        "create" => ("Write", json!({"file_path": field("path"), "content": field("file_text")})),
        "edit" => (
            "Edit",
            json!({"file_path": field("path"), "old_string": field("old_str"), "new_string": field("new_str")}),
        ),
        "bash" => ("Bash", args.clone()),
        _ => ("", args.clone()),
    };
    let result_type = result.get("resultType").and_then(Value::as_str).unwrap_or("success");
    if let Some(error) = text(raw, &["error"]) {
        input.failed = true;
        input.error = Some(error);
    } else if matches!(result_type, "failure" | "rejected" | "denied") {
        input.failed = true;
        input.error = Some(if result_text.is_empty() {
            format!("the tool call ended: {result_type}")
        } else {
            result_text.clone()
        });
    } else if name == "Bash" && copilot_trailer(&result_text).is_some_and(|code| code != 0) {
        input.failed = true;
        input.error = Some(result_text.clone());
    }
    input.set_tool(tool, name);
    input.tool_input = tool_input;
    input.tool_response = result;
    input
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::fixtures::{by_event, load};

    const RECORDED: &str = include_str!("../../tests/fixtures/hooks/copilot.jsonl");

    #[test]
    fn every_recorded_event_is_read() {
        let events = load(RECORDED);
        let start = normalize(by_event(&events, "sessionStart", 0));
        assert_eq!(start.cwd.as_deref(), Some("/home/dev/shop"));
        assert!(start.session_id.is_some());
        assert!(start.prompt.is_none(), "sessionStart's initialPrompt is not the turn's prompt");
        let prompt = normalize(by_event(&events, "userPromptSubmitted", 0));
        assert!(prompt.prompt.unwrap().starts_with("Add cartTotal"));
        let stop = normalize(by_event(&events, "agentStop", 0));
        assert!(stop.transcript_path.is_some() && !stop.stop_hook_active);
        assert_eq!(normalize(by_event(&events, "sessionEnd", 0)).reason.as_deref(), Some("complete"));
    }

    #[test]
    fn tools_map_to_the_claude_code_names_with_whole_files_and_failed_shells() {
        let events = load(RECORDED);
        let create = normalize(by_event(&events, "postToolUse", 0));
        assert_eq!((create.tool_name.as_deref(), create.agent_tool.as_deref()), (Some("Write"), Some("create")));
        assert_eq!(create.tool_input["file_path"], "/home/dev/shop/src/cart.ts");
        assert!(create.tool_input["content"].as_str().unwrap().starts_with("export function cartTotal"));
        let edit = normalize(by_event(&events, "postToolUse", 1));
        assert_eq!(edit.tool_name.as_deref(), Some("Edit"));
        assert_eq!(edit.tool_input["old_string"], "(a, b) => a + b");
        let install = normalize(by_event(&events, "postToolUse", 2));
        assert_eq!((install.tool_name.as_deref(), install.failed), (Some("Bash"), false));
        let build = normalize(by_event(&events, "postToolUse", 3));
        assert!(build.failed);
        assert!(build.error.as_deref().unwrap().contains("error TS2322"));
        let failure = normalize(by_event(&events, "postToolUseFailure", 0));
        assert_eq!((failure.failed, failure.error.as_deref()), (true, Some("Parent directory does not exist")));
        let keys: std::collections::HashSet<_> =
            (0..4).map(|n| normalize(by_event(&events, "postToolUse", n)).tool_use_id.unwrap()).collect();
        assert_eq!(keys.len(), 4, "a derived key per call");
        assert_eq!(
            normalize(by_event(&events, "postToolUse", 3)).tool_use_id,
            build.tool_use_id,
            "a replay: the same key"
        );
    }

    #[test]
    fn string_tool_args_are_read_as_json() {
        let raw = json!({"sessionId": "s", "toolName": "bash", "toolArgs": "{\"command\":\"ls\"}",
            "toolResult": {"resultType": "success", "textResultForLlm": "a\n<shellId: 0 completed with exit code 0>"}});
        let input = normalize(&raw);
        assert_eq!((input.tool_input["command"].as_str(), input.failed), (Some("ls"), false));
    }

    #[test]
    fn a_status_is_read_from_the_clis_own_framing_never_from_the_output() {
        let cases =
            crate::hook::fixtures::exit_cases(include_str!("../../tests/fixtures/hooks/exit-codes.jsonl"), "copilot");
        assert!(cases.len() >= 2);
        for (payload, failed, why) in cases {
            let input = normalize(&payload);
            assert_eq!(input.failed, failed, "{why}: {input:?}");
        }
    }
}
