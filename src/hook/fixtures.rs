//! Test helper: the recorded hook payloads in `tests/fixtures/hooks/*.jsonl`, one
//! `{"event": <the agent's event>, "payload": <stdin>}` per line, as each real CLI sent them
//! (Copilot's postToolUseFailure comes from a second run, a create in a missing folder, its
//! `sessionId` set to the first run's so the file is one session).
//!
//! `exit-codes.jsonl` holds shell calls in each CLI's recorded shape, one
//! `{"agent", "event", "expect": "succeeded"|"failed", "why", "command"|"file_path", "payload"}`
//! per line: the recorded builds, and recorded payloads whose output was edited to quote exit
//! codes (the two reproductions of issue 39 among them), for [`super::exit_status`].

use serde_json::Value;

pub fn load(text: &str) -> Vec<(String, Value)> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let value: Value = serde_json::from_str(line).expect("a fixture line is JSON");
            (value["event"].as_str().expect("the fixture names its event").to_owned(), value["payload"].clone())
        })
        .collect()
}

/// The `n`th recorded payload of `event`.
pub fn by_event<'a>(events: &'a [(String, Value)], event: &str, n: usize) -> &'a Value {
    events.iter().filter(|(e, _)| e == event).nth(n).map(|(_, p)| p).unwrap_or_else(|| panic!("no {event} #{n}"))
}

/// `exit-codes.jsonl`'s lines for `agent`: each payload, whether it is a failed call, and why.
pub fn exit_cases(text: &str, agent: &str) -> Vec<(Value, bool, String)> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| serde_json::from_str::<Value>(line).expect("a fixture line is JSON"))
        .filter(|case| case["agent"] == agent)
        .map(|case| {
            (case["payload"].clone(), case["expect"] == "failed", case["why"].as_str().unwrap_or("").to_owned())
        })
        .collect()
}
