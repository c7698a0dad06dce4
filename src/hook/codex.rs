//! OpenAI Codex's hook input (SPEC §3.4) → [`HookInput`]; the field names are Claude Code's
//! (`session_id` is the thread id, `tool_use_id` the call id).
//!
//! Edits arrive as one `apply_patch` call whose `tool_input.command` is the patch: an
//! `*** Add File:` section carries the whole file (recorded as `Write`), an `*** Update File:`
//! section carries hunks (recorded as `Edit`, whose file the hook reads right after the edit;
//! paths are relative to the cwd). A patch over several files gives one observation per file
//! ([`HookInput::more`]). A failed shell call carries no exit code in the hook input; the
//! session's transcript (rollout JSONL) has it: [`read_exit_status`], the one function here
//! that reads a file.

use std::io::{Read, Seek, SeekFrom};

use serde_json::{Value, json};

use super::exit_status::codex_header;
use super::input::{HookInput, any, text};

/// Only the tail of a transcript is read: the call that just ended is near the end.
/// (Codex writes the call's end before it runs the hook: its `item_completed` line, then the
/// `function_call_output`, whose output Codex caps, so even after a huge command the last one fits.)
const TAIL_BYTES: u64 = 256 * 1024;

pub fn normalize(raw: &Value) -> HookInput {
    let mut input = HookInput {
        session_id: text(raw, &["session_id"]),
        cwd: text(raw, &["cwd"]),
        transcript_path: text(raw, &["transcript_path"]),
        prompt: text(raw, &["prompt"]),
        tool_name: text(raw, &["tool_name"]),
        tool_input: any(raw, &["tool_input"]),
        tool_response: any(raw, &["tool_response"]),
        tool_use_id: text(raw, &["tool_use_id"]),
        stop_hook_active: raw.get("stop_hook_active").and_then(Value::as_bool).unwrap_or(false),
        last_assistant_message: text(raw, &["last_assistant_message"]),
        reason: text(raw, &["reason"]),
        ..HookInput::default()
    };
    if input.tool_name.as_deref() == Some("apply_patch") {
        let response = input.tool_response.as_str().unwrap_or_default();
        if let Some(code) = codex_header(response).filter(|code| *code != 0) {
            input.failed = true;
            input.error = Some(format!("{response}\nExit code: {code}"));
        }
        let patch = input.tool_input.get("command").and_then(Value::as_str).unwrap_or_default().to_owned();
        let mut files = parse_patch(&patch).into_iter().map(|file| file.into_input(&input));
        if let Some(first) = files.next() {
            let more: Vec<HookInput> = files.collect();
            input = HookInput { more, ..first };
        }
    }
    input
}

/// What a patch did to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FileChange {
    Add { path: String, text: String },
    Update { path: String, hunks: Vec<(String, String)> },
    Delete { path: String },
}

impl FileChange {
    /// The observation of this file: the call's fields, with this file's tool and input.
    fn into_input(self, call: &HookInput) -> HookInput {
        let (tool, tool_input) = match self {
            FileChange::Add { path, text } => ("Write", json!({"file_path": path, "content": text})),
            FileChange::Update { path, mut hunks } if hunks.len() == 1 => {
                let (old, new) = hunks.remove(0);
                ("Edit", json!({"file_path": path, "old_string": old, "new_string": new}))
            }
            FileChange::Update { path, hunks } => {
                let edits: Vec<Value> =
                    hunks.into_iter().map(|(old, new)| json!({"old_string": old, "new_string": new})).collect();
                ("MultiEdit", json!({"file_path": path, "edits": edits}))
            }
            FileChange::Delete { path } => ("apply_patch", json!({"delete_file": path})),
        };
        HookInput {
            tool_name: Some(tool.to_owned()),
            agent_tool: Some("apply_patch".into()),
            tool_input,
            more: Vec::new(),
            ..call.clone()
        }
    }
}

/// The files of an `apply_patch` patch, in order. Lines outside a file section are ignored.
fn parse_patch(patch: &str) -> Vec<FileChange> {
    let mut files: Vec<FileChange> = Vec::new();
    // The hunk being read: its old and new lines.
    let mut hunk: Option<(Vec<&str>, Vec<&str>)> = None;
    let close = |files: &mut Vec<FileChange>, hunk: &mut Option<(Vec<&str>, Vec<&str>)>| {
        if let (Some((old, new)), Some(FileChange::Update { hunks, .. })) = (hunk.take(), files.last_mut())
            && (!old.is_empty() || !new.is_empty())
        {
            hunks.push((lines_text(&old), lines_text(&new)));
        }
    };
    for line in patch.lines() {
        if let Some(header) = line.strip_prefix("*** ") {
            close(&mut files, &mut hunk);
            if let Some(path) = header.strip_prefix("Add File: ") {
                files.push(FileChange::Add { path: path.trim().to_owned(), text: String::new() });
            } else if let Some(path) = header.strip_prefix("Update File: ") {
                files.push(FileChange::Update { path: path.trim().to_owned(), hunks: Vec::new() });
                hunk = Some((Vec::new(), Vec::new()));
            } else if let Some(path) = header.strip_prefix("Delete File: ") {
                files.push(FileChange::Delete { path: path.trim().to_owned() });
            } else if let (Some(path), Some(FileChange::Update { path: target, .. })) =
                (header.strip_prefix("Move to: "), files.last_mut())
            {
                *target = path.trim().to_owned();
                hunk = Some((Vec::new(), Vec::new()));
            }
            continue;
        }
        match files.last_mut() {
            Some(FileChange::Add { text, .. }) => {
                if let Some(added) = line.strip_prefix('+') {
                    text.push_str(added);
                    text.push('\n');
                }
            }
            Some(FileChange::Update { .. }) => {
                if line.starts_with("@@") {
                    close(&mut files, &mut hunk);
                    hunk = Some((Vec::new(), Vec::new()));
                    continue;
                }
                let (old, new) = hunk.get_or_insert_with(Default::default);
                match line.split_at_checked(1) {
                    Some(("-", rest)) => old.push(rest),
                    Some(("+", rest)) => new.push(rest),
                    Some((" ", rest)) => {
                        old.push(rest);
                        new.push(rest);
                    }
                    _ if line.is_empty() => {
                        old.push("");
                        new.push("");
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    close(&mut files, &mut hunk);
    files
}

fn lines_text(lines: &[&str]) -> String {
    lines.join("\n")
}

/// A shell call's non-zero exit status from the session's transcript: the `item_completed`
/// event of the call (`exit_code`), or its `function_call_output` ("Process exited with code
/// N"). `None` when the file is missing, unreadable, or does not say.
pub fn read_exit_status(transcript: &str, call_id: &str) -> Option<i64> {
    let mut file = std::fs::File::open(transcript).ok()?;
    let len = file.metadata().ok()?.len();
    if len > TAIL_BYTES {
        file.seek(SeekFrom::Start(len - TAIL_BYTES)).ok()?;
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    exit_status_in(&String::from_utf8_lossy(&bytes), call_id)
}

/// [`read_exit_status`] over the transcript's text (pure).
fn exit_status_in(text: &str, call_id: &str) -> Option<i64> {
    let quoted = format!("\"{call_id}\"");
    text.lines()
        .rev()
        .filter(|line| line.contains(&quoted))
        .find_map(|line| {
            let value: Value = serde_json::from_str(line).ok()?;
            let payload = value.get("payload")?;
            match payload.get("type").and_then(Value::as_str)? {
                "item_completed" if payload.pointer("/item/id").and_then(Value::as_str) == Some(call_id) => {
                    Some(payload.pointer("/item/exit_code")?.as_i64().unwrap_or(0))
                }
                "function_call_output" if payload.get("call_id").and_then(Value::as_str) == Some(call_id) => {
                    let output = payload.get("output").and_then(Value::as_str)?;
                    Some(codex_header(output).unwrap_or(0))
                }
                _ => None,
            }
        })
        .filter(|code| *code != 0)
}

/// A Bash call that the transcript says failed becomes a failed call, its error the output.
pub fn mark_failed_shell(input: &mut HookInput) {
    if input.tool_name.as_deref() != Some("Bash") || input.failed {
        return;
    }
    let (Some(transcript), Some(call)) = (input.transcript_path.as_deref(), input.tool_use_id.as_deref()) else {
        return;
    };
    if let Some(code) = read_exit_status(transcript, call) {
        let output = input.tool_response.as_str().unwrap_or_default();
        input.failed = true;
        input.error = Some(format!("{output}\nExit code {code}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::fixtures::{by_event, load};

    const RECORDED: &str = include_str!("../../tests/fixtures/hooks/codex.jsonl");
    const TRANSCRIPT: &str = include_str!("../../tests/fixtures/hooks/codex-transcript.jsonl");

    #[test]
    fn every_recorded_event_is_read() {
        let events = load(RECORDED);
        let start = normalize(by_event(&events, "SessionStart", 0));
        assert!(start.session_id.is_some() && start.transcript_path.is_some());
        let prompt = normalize(by_event(&events, "UserPromptSubmit", 0));
        assert!(prompt.prompt.unwrap().starts_with("Add cartTotal"));
        let stop = normalize(by_event(&events, "Stop", 0));
        assert_eq!(stop.last_assistant_message.as_deref(), Some("Done: cartTotal is written; the build still fails."));
        assert_eq!(normalize(by_event(&events, "SessionEnd", 0)).reason.as_deref(), Some("other"));
    }

    #[test]
    fn patches_become_a_write_with_the_whole_file_and_an_edit() {
        let events = load(RECORDED);
        let add = normalize(by_event(&events, "PostToolUse", 0));
        assert_eq!((add.tool_name.as_deref(), add.tool_use_id.as_deref()), (Some("Write"), Some("call_0")));
        assert_eq!(add.tool_input["file_path"], "src/cart.ts");
        assert_eq!(
            add.tool_input["content"],
            "export function cartTotal(prices: number[]): number {\n  return prices.reduce((a, b) => a + b, 0);\n}\n"
        );
        let update = normalize(by_event(&events, "PostToolUse", 1));
        assert_eq!(update.tool_name.as_deref(), Some("Edit"));
        assert!(update.tool_input["new_string"].as_str().unwrap().contains("(sum, price) => sum + price"));
        assert!(update.tool_input["old_string"].as_str().unwrap().contains("(a, b) => a + b"));
        let shell = normalize(by_event(&events, "PostToolUse", 2));
        assert_eq!(
            (shell.tool_name.as_deref(), shell.tool_input["command"].as_str()),
            (Some("Bash"), Some("npm install zod"))
        );
    }

    #[test]
    fn a_patch_over_several_files_gives_one_observation_each() {
        let patch = "*** Begin Patch\n*** Add File: a.ts\n+one\n*** Update File: b.ts\n*** Move to: c.ts\n@@ fn\n-x\n+y\n@@\n keep\n-p\n+q\n*** Delete File: d.ts\n*** End Patch\n";
        let input = normalize(&json!({"session_id": "s", "tool_name": "apply_patch", "tool_use_id": "c",
            "tool_input": {"command": patch}, "tool_response": "Exit code: 0\nOutput:\nSuccess."}));
        assert_eq!(input.tool_input, json!({"file_path": "a.ts", "content": "one\n"}));
        let more: Vec<_> = input.more.iter().map(|m| (m.tool_name.clone().unwrap(), m.tool_input.clone())).collect();
        assert_eq!(more[0].0, "MultiEdit");
        assert_eq!(more[0].1["file_path"], "c.ts");
        assert_eq!(more[0].1["edits"][1], json!({"old_string": "keep\np", "new_string": "keep\nq"}));
        assert_eq!(more[1], ("apply_patch".to_owned(), json!({"delete_file": "d.ts"})));
        assert!(!input.failed);
    }

    #[test]
    fn a_failed_patch_and_a_failed_shell_from_the_transcript() {
        let failed = normalize(&json!({"session_id": "s", "tool_name": "apply_patch", "tool_use_id": "c",
            "tool_input": {"command": "*** Begin Patch\n*** Update File: a.ts\n-x\n+y\n*** End Patch"},
            "tool_response": "Exit code: 1\nOutput:\nFailed to find expected lines"}));
        assert!(failed.failed && failed.error.unwrap().contains("Failed to find"));
        assert_eq!(exit_status_in(TRANSCRIPT, "call_3"), Some(1), "the failed build");
        assert_eq!(exit_status_in(TRANSCRIPT, "call_2"), None, "the install succeeded");
        assert_eq!(exit_status_in(TRANSCRIPT, "call_9"), None);
        assert_eq!(exit_status_in(TRANSCRIPT, "call_4"), None, "its output quotes a code; its header says 0");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl");
        std::fs::write(&path, format!("not json\n{TRANSCRIPT}")).unwrap();
        let events = load(RECORDED);
        let mut build = normalize(by_event(&events, "PostToolUse", 3));
        build.transcript_path = Some(path.to_string_lossy().into_owned());
        mark_failed_shell(&mut build);
        assert!(build.failed);
        assert!(build.error.unwrap().contains("error TS2322"));
        let mut missing = normalize(by_event(&events, "PostToolUse", 3));
        mark_failed_shell(&mut missing);
        assert!(!missing.failed, "no transcript: not known to have failed");
    }

    #[test]
    fn a_status_is_read_from_the_clis_own_framing_never_from_the_output() {
        let cases =
            crate::hook::fixtures::exit_cases(include_str!("../../tests/fixtures/hooks/exit-codes.jsonl"), "codex");
        assert!(cases.len() >= 2);
        for (payload, failed, why) in cases {
            let mut input = normalize(&payload);
            if input.tool_name.as_deref() == Some("Bash") {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("rollout.jsonl");
                std::fs::write(&path, TRANSCRIPT).unwrap();
                input.transcript_path = Some(path.to_string_lossy().into_owned());
                mark_failed_shell(&mut input);
            }
            assert_eq!(input.failed, failed, "{why}: {input:?}");
        }
    }
}
