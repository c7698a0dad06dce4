//! The one JSON line a hook prints, in the form its agent accepts (SPEC §3.3, §3.4).
//!
//! Claude Code and Cursor take the line as the hook built it. Codex rejects a hook's output
//! with any key it does not know (the run is marked failed), so only its known keys are kept;
//! Gemini CLI reads the same common keys and is given the same. Copilot CLI takes `{}`.

use serde_json::{Map, Value};

use super::adapters::Platform;

/// The keys Codex (and Gemini CLI) know in a hook's output.
pub const KNOWN_KEYS: [&str; 7] =
    ["continue", "stopReason", "suppressOutput", "systemMessage", "decision", "reason", "hookSpecificOutput"];

pub fn for_agent(platform: Platform, line: Value) -> Value {
    match platform {
        Platform::ClaudeCode | Platform::Cursor | Platform::Raw => line,
        Platform::Codex | Platform::Gemini => known_keys_only(line),
        Platform::Copilot => Value::Object(Map::new()),
    }
}

fn known_keys_only(line: Value) -> Value {
    let Value::Object(map) = line else { return Value::Object(Map::new()) };
    Value::Object(map.into_iter().filter(|(k, _)| KNOWN_KEYS.contains(&k.as_str())).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_agent_gets_only_what_it_accepts() {
        let line = json!({"continue": true, "suppressOutput": true, "status": "ready", "systemMessage": "2 due"});
        assert_eq!(for_agent(Platform::ClaudeCode, line.clone()), line);
        assert_eq!(
            for_agent(Platform::Codex, line.clone()),
            json!({"continue": true, "suppressOutput": true, "systemMessage": "2 due"})
        );
        assert_eq!(for_agent(Platform::Gemini, line.clone())["status"], Value::Null);
        assert_eq!(for_agent(Platform::Copilot, line), json!({}));
        assert_eq!(for_agent(Platform::Codex, json!("odd")), json!({}));
    }
}
