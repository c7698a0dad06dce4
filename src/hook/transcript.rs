//! The last assistant message from a Claude Code transcript (JSONL), for the Stop hook when
//! its input lacks `last_assistant_message`. Missing or unreadable files are fine; malformed
//! lines are skipped.

use std::io::{Read, Seek, SeekFrom};

use serde_json::Value;

/// Only the tail of a long transcript is read: the last message is near the end.
const TAIL_BYTES: u64 = 2 * 1024 * 1024;

pub fn last_assistant_message(path: &str) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    if len > TAIL_BYTES {
        file.seek(SeekFrom::Start(len - TAIL_BYTES)).ok()?;
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    text.lines().rev().find_map(assistant_text)
}

/// The text of one transcript line if it is an assistant message with text.
fn assistant_text(line: &str) -> Option<String> {
    let value: Value = serde_json::from_str(line).ok()?;
    let is_assistant = value.get("type").and_then(Value::as_str) == Some("assistant")
        || value.pointer("/message/role").and_then(Value::as_str) == Some("assistant");
    if !is_assistant {
        return None;
    }
    let content = value.pointer("/message/content")?;
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    (!text.trim().is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_last_assistant_text_and_skips_malformed_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"first"}]}}"#, "\n",
                "{not json\n",
                r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"x"},{"type":"text","text":"done: added the cart"}]}}"#, "\n",
                r#"{"type":"user","message":{"role":"user","content":"thanks"}}"#, "\n",
                "\n"
            ),
        )
        .unwrap();
        assert_eq!(last_assistant_message(path.to_str().unwrap()).as_deref(), Some("done: added the cart"));
        assert_eq!(last_assistant_message("/nonexistent/transcript.jsonl"), None);
    }
}
