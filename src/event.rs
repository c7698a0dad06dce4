//! A session event, typed once at the edge (SPEC §4.2, §5.1).
//!
//! Every client's shape — the hooks' own, the original VibeLearn client's, a Cursor file edit —
//! is adapted into one serde struct, [`WireEvent`]: what the HTTP routes and the hooks' direct
//! enqueue parse a body into, what intake enqueues, and what the ingest job reads back from the
//! payload. [`WireEvent::validate`] turns it into the per-kind [`SessionEvent`], with clear
//! errors naming the field; below the edge nothing reads a key out of raw JSON (a tool's input
//! and output stay opaque JSON, stored as they came, except an edit tool's input, typed as
//! [`EditInput`]).
//!
//! Compatibility: the field names are those the payloads of earlier versions carry (the body a
//! route received plus `event`), and unknown fields are ignored, so jobs already in the queue
//! still ingest.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A captured file content or tool output is cut to this many bytes (SPEC §3.3).
pub const MAX_CAPTURE_BYTES: usize = 10 * 1024;

/// Cuts `text` to [`MAX_CAPTURE_BYTES`] on a character boundary; says whether it cut.
pub fn truncate_capture(text: &str) -> (String, bool) {
    if text.len() <= MAX_CAPTURE_BYTES {
        return (text.to_owned(), false);
    }
    let mut end = MAX_CAPTURE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text[..end].to_owned(), true)
}

/// Which route an event came through (and the `event` field of its job payload).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    Init,
    Observation,
    FileEdit,
    Complete,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Init => "init",
            EventKind::Observation => "observation",
            EventKind::FileEdit => "file_edit",
            EventKind::Complete => "complete",
        }
    }
}

/// Whether a tool call succeeded, as the client says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallOutcome {
    Succeeded,
    Failed,
}

/// One replacement as the clients send it (`old_string` empty or absent: a new file).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_string: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_string: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replace_all: bool,
}

/// The input of Write, Edit, MultiEdit and NotebookEdit, as far as capture reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct EditInput {
    #[serde(default)]
    pub file_path: Option<String>,
    #[serde(default)]
    pub notebook_path: Option<String>,
    #[serde(default)]
    pub old_string: Option<String>,
    #[serde(default)]
    pub new_string: Option<String>,
    #[serde(default)]
    pub replace_all: bool,
    #[serde(default)]
    pub edits: Option<Vec<EditSpec>>,
    /// Write's whole file.
    #[serde(default)]
    pub content: Option<String>,
    /// NotebookEdit's new cell source.
    #[serde(default)]
    pub new_source: Option<String>,
}

/// Where an edit's replacements may be: one `old_string`/`new_string` pair, or a list.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditSource<'a> {
    pub old_string: Option<&'a str>,
    pub new_string: Option<&'a str>,
    pub replace_all: bool,
    pub edits: Option<&'a [EditSpec]>,
}

impl EditInput {
    /// Its replacements, for [`crate::capture::edit_ops`].
    pub fn source(&self) -> EditSource<'_> {
        EditSource {
            old_string: self.old_string.as_deref(),
            new_string: self.new_string.as_deref(),
            replace_all: self.replace_all,
            edits: self.edits.as_deref(),
        }
    }

    /// An edit tool's input, read leniently: a shape that does not fit gives nothing usable
    /// (the observation then keeps no content), never an error — the tool call happened.
    pub fn of(input: Option<&Value>) -> EditInput {
        input.and_then(|v| EditInput::deserialize(v).ok()).unwrap_or_default()
    }

    /// The path it edits.
    pub fn path(&self) -> Option<&str> {
        self.file_path.as_deref().or(self.notebook_path.as_deref())
    }
}

/// The wire event: every field any client sends, each optional here; [`WireEvent::validate`]
/// says which a kind needs. Serialised as it is, it is the ingest job's payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireEvent {
    pub event: EventKind,
    #[serde(rename = "contentSessionId", default)]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// The hook's id for this event: a POST that timed out after the commit and was then
    /// enqueued directly is stored once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    // init
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    // complete
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    // observation
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_input: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_response: Option<Value>,
    // edits: the file, the replacements, the whole text when a client captured it
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edits: Option<Vec<EditSpec>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_string: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_string: Option<String>,
    /// The edited file as the hook read it right after the edit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_content: Option<String>,
    /// A file edit's whole text — or, marked by `tool_type: "file_edit"`, the original
    /// client's `new_string` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_type: Option<String>,
    // a failed call
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<CallOutcome>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_interrupt: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_type: Option<String>,
    /// Something was cut to fit (SPEC §3.3).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// Why an event cannot be taken: the caller's mistake (400 at the edge; a job with such a
/// payload is dead at once, since retrying cannot fix it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidEvent(pub String);

/// What every event carries, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Common {
    pub session_id: String,
    pub cwd: Option<String>,
    pub project: Option<String>,
    pub platform: Option<String>,
    /// `tool_use_id`, else `event_id`: what makes a re-delivery a no-op (else the job id).
    pub key: Option<String>,
}

/// A tool call (PostToolUse, PostToolUseFailure, Cursor's shell and MCP hooks).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall<'a> {
    pub tool_name: &'a str,
    pub tool_use_id: Option<&'a str>,
    pub input: Option<&'a Value>,
    pub response: Option<&'a Value>,
    /// Set for Write, Edit, MultiEdit and NotebookEdit.
    pub edit: Option<EditInput>,
    /// Bash's command line.
    pub command: Option<String>,
}

/// Bash's input, as far as ingest reads it.
#[derive(Debug, Default, Deserialize)]
struct BashInput {
    #[serde(default)]
    command: Option<String>,
}

/// A Cursor file edit (or any client's `file-edit` event).
#[derive(Debug, Clone, PartialEq)]
pub struct FileEdit<'a> {
    pub file_path: &'a str,
    pub edits: &'a [EditSpec],
}

/// A failed call: its error (cut to 10 KiB) and what else the IDE said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Failure {
    pub failed: bool,
    pub error: Option<String>,
    pub error_cut: bool,
}

/// A validated event, per kind.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent<'a> {
    Init { prompt: Option<&'a str> },
    ToolCall(Box<ToolCall<'a>>),
    FileEdit(FileEdit<'a>),
    Complete { reason: Option<&'a str> },
}

/// Tools whose observation is a `file_edit`; `Write` creates, the others modify.
pub const EDIT_TOOLS: [&str; 4] = ["Write", "Edit", "MultiEdit", "NotebookEdit"];

impl WireEvent {
    /// A route's or a hook's body as the event of `kind` (its `event` field set from the
    /// route, whatever the body said). Errors name the field.
    pub fn parse(kind: EventKind, mut body: Value) -> Result<WireEvent, InvalidEvent> {
        let Some(object) = body.as_object_mut() else {
            return Err(InvalidEvent("the body must be a JSON object".into()));
        };
        object.insert("event".into(), Value::String(kind.as_str().into()));
        WireEvent::from_payload(&body)
    }

    /// A job payload (this struct as serialised, or an earlier version's body plus `event`).
    pub fn from_payload(payload: &Value) -> Result<WireEvent, InvalidEvent> {
        serde_path_to_error::deserialize(payload).map_err(|e| {
            let field = e.path().to_string();
            let message = e.into_inner().to_string();
            InvalidEvent(if field == "." { message } else { format!("the field {field:?}: {message}") })
        })
    }

    /// The payload a job stores.
    pub fn to_payload(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The common part, validated: a non-empty session id.
    fn common(&self) -> Result<Common, InvalidEvent> {
        let session_id = required("contentSessionId", self.session_id.as_deref())?.to_owned();
        let given = |v: &Option<String>| v.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
        Ok(Common {
            session_id,
            cwd: given(&self.cwd),
            project: given(&self.project),
            platform: self.platform.clone(),
            key: self.tool_use_id.clone().or(self.event_id.clone()),
        })
    }

    /// The common part and the per-kind event: the fields each kind needs are there and not
    /// empty.
    pub fn validate(&self) -> Result<(Common, SessionEvent<'_>), InvalidEvent> {
        let common = self.common()?;
        let event = match self.event {
            EventKind::Init => SessionEvent::Init { prompt: self.prompt.as_deref().filter(|p| !p.trim().is_empty()) },
            EventKind::Complete => SessionEvent::Complete { reason: self.reason.as_deref() },
            EventKind::Observation => {
                let tool_name = required("tool_name", self.tool_name.as_deref())?;
                let input = self.tool_input.as_ref().filter(|v| !v.is_null());
                SessionEvent::ToolCall(Box::new(ToolCall {
                    tool_name,
                    tool_use_id: self.tool_use_id.as_deref(),
                    input,
                    response: self.tool_response.as_ref().filter(|v| !v.is_null()),
                    edit: EDIT_TOOLS.contains(&tool_name).then(|| EditInput::of(input)),
                    command: (tool_name == "Bash")
                        .then(|| input.and_then(|v| BashInput::deserialize(v).ok()).and_then(|b| b.command))
                        .flatten(),
                }))
            }
            EventKind::FileEdit => SessionEvent::FileEdit(FileEdit {
                file_path: required("file_path", self.file_path.as_deref())?,
                edits: self.edits.as_deref().unwrap_or_default(),
            }),
        };
        Ok((common, event))
    }

    /// The replacements sent beside the tool input (Cursor's `edits`, a top-level pair).
    pub fn edit_source(&self) -> EditSource<'_> {
        EditSource {
            old_string: self.old_string.as_deref(),
            new_string: self.new_string.as_deref(),
            replace_all: false,
            edits: self.edits.as_deref(),
        }
    }

    /// The call's outcome: failed when the client said so or sent an error.
    pub fn failure(&self) -> Failure {
        let error = self.error.as_deref().filter(|e| !e.trim().is_empty());
        let failed = match self.outcome {
            Some(CallOutcome::Failed) => true,
            Some(CallOutcome::Succeeded) => false,
            None => error.is_some(),
        };
        if !failed {
            return Failure::default();
        }
        let (error, error_cut) = truncate_capture(error.unwrap_or("the tool call failed"));
        Failure { failed, error: Some(error), error_cut }
    }
}

fn required<'a>(field: &str, value: Option<&'a str>) -> Result<&'a str, InvalidEvent> {
    value
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| InvalidEvent(format!("the field {field:?} is required and must be a non-empty string")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_name_the_field() {
        let mistyped = WireEvent::parse(EventKind::Observation, json!({"contentSessionId": "s", "tool_name": 5}));
        assert!(mistyped.unwrap_err().0.contains("tool_name"));
        let missing = WireEvent::parse(EventKind::Init, json!({})).unwrap().validate().map(|_| ()).unwrap_err();
        assert!(missing.0.contains("contentSessionId"));
        let no_path = WireEvent::parse(EventKind::FileEdit, json!({"contentSessionId": "s"})).unwrap();
        assert!(no_path.validate().map(|_| ()).unwrap_err().0.contains("file_path"));
        let bad_outcome =
            WireEvent::parse(EventKind::Observation, json!({"contentSessionId": "s", "outcome": "maybe"}));
        assert!(bad_outcome.unwrap_err().0.contains("outcome"));
        let edits = WireEvent::parse(EventKind::FileEdit, json!({"contentSessionId": "s", "edits": "x"}));
        assert!(edits.unwrap_err().0.contains("edits"));
        assert!(WireEvent::parse(EventKind::Init, json!([1])).unwrap_err().0.contains("JSON object"));
    }

    #[test]
    fn a_payload_of_the_previous_version_reads_and_round_trips() {
        // As 0.1.0 stored it: the route's body plus `event`, with fields this struct ignores.
        let old = json!({"event": "observation", "contentSessionId": "s", "tool_name": "Edit", "tool_use_id": "t",
            "tool_input": {"file_path": "/p/a.ts", "old_string": "a", "new_string": "b"}, "cwd": "/p",
            "platform": "claude-code", "truncated": false, "unknown_extra": 1});
        let wire = WireEvent::from_payload(&old).unwrap();
        let (_, SessionEvent::ToolCall(call)) = wire.validate().unwrap() else { panic!() };
        assert_eq!(call.edit.as_ref().and_then(|e| e.path()), Some("/p/a.ts"));
        assert_eq!(WireEvent::from_payload(&wire.to_payload()).unwrap(), wire);
    }

    #[test]
    fn failures_come_from_the_outcome_or_an_error() {
        let wire = |v: Value| WireEvent::parse(EventKind::Observation, v).unwrap().failure();
        assert!(wire(json!({"contentSessionId": "s", "error": "boom"})).failed);
        assert!(!wire(json!({"contentSessionId": "s", "outcome": "succeeded", "error": "x"})).failed);
        let long =
            wire(json!({"contentSessionId": "s", "outcome": "failed", "error": "e".repeat(MAX_CAPTURE_BYTES + 1)}));
        assert!(long.error_cut && long.error.unwrap().len() == MAX_CAPTURE_BYTES);
    }
}
