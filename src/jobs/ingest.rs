//! The `ingest` job: one session event (a prompt, a tool call, a file edit, the end of a
//! session) validated, typed as SPEC §5.1 defines, and stored with the session's lifecycle.
//!
//! Idempotent: every row is keyed by the event's key (the IDE's `tool_use_id`, the hook's
//! `event_id`, or the job id), so a re-run of the same job — after a crash, a replay, or a
//! hook that retried its POST — changes nothing.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use crate::capture::{self, EditOp};
pub use crate::event::InvalidEvent;
use crate::event::{FileEdit, SessionEvent, ToolCall, WireEvent, truncate_capture};
use crate::queue::{CancelToken, ClaimedJob, Effects, Handler, InlineRun, JobId, Outcome};

/// An observation typed as SPEC §5.1 says.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    pub obs_type: &'static str,
    pub tool_name: String,
    pub tool_use_id: Option<String>,
    pub file_path: Option<String>,
    pub action: Option<&'static str>,
    pub content: Option<String>,
    pub command: Option<String>,
    pub packages: Vec<String>,
    pub input: Option<Value>,
    pub output: Option<Value>,
    pub truncated: bool,
    /// The call failed (PostToolUseFailure, Cursor's failure hook, a non-zero exit).
    pub failed: bool,
    /// A failed call's error text (privacy-stripped, cut to 10 KiB).
    pub error: Option<String>,
    /// `content` is only the edit's new text, not the file ([`crate::capture`]).
    pub fragment: bool,
    /// The edit's replacements, for rebuilding the file from the session's last captured
    /// version of it at store time; empty unless `fragment`.
    pub edits: Vec<EditOp>,
}

/// A validated event, ready to store.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Init { prompt: Option<String> },
    Observation(Box<Observation>),
    Complete { reason: Option<String> },
}

/// The common envelope of every event.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    pub session_id: String,
    pub cwd: Option<String>,
    pub project: Option<String>,
    pub platform: Option<String>,
    /// Makes re-delivery of the same event a no-op.
    pub event_key: String,
    pub event: Event,
}

/// Reads a job payload (a [`WireEvent`]) and types it; see [`envelope`].
pub fn parse_event(payload: &Value, fallback_key: &str) -> Result<Envelope, InvalidEvent> {
    envelope(&WireEvent::from_payload(payload)?, fallback_key)
}

/// The stored form of a typed event. `fallback_key` keys events that carry neither
/// `tool_use_id` nor `event_id`.
pub fn envelope(wire: &WireEvent, fallback_key: &str) -> Result<Envelope, InvalidEvent> {
    let (common, event) = wire.validate()?;
    let event = match event {
        SessionEvent::Init { prompt } => Event::Init { prompt: prompt.map(str::to_owned) },
        SessionEvent::Complete { reason } => Event::Complete { reason: reason.map(str::to_owned) },
        SessionEvent::ToolCall(call) => Event::Observation(Box::new(classify_tool_call(wire, *call))),
        SessionEvent::FileEdit(edit) => Event::Observation(Box::new(classify_file_edit(wire, edit))),
    };
    Ok(Envelope {
        session_id: common.session_id,
        cwd: common.cwd,
        project: common.project,
        platform: common.platform,
        event_key: common.key.unwrap_or_else(|| fallback_key.to_owned()),
        event,
    })
}

/// An observation with nothing captured yet.
fn observation(wire: &WireEvent, tool_name: &str, tool_use_id: Option<&str>) -> Observation {
    let failure = wire.failure();
    Observation {
        obs_type: "mcp_tool",
        tool_name: tool_name.to_owned(),
        tool_use_id: tool_use_id.map(str::to_owned),
        file_path: None,
        action: None,
        content: None,
        command: None,
        packages: Vec::new(),
        input: None,
        output: None,
        truncated: wire.truncated || failure.error_cut,
        failed: failure.failed,
        error: failure.error,
        fragment: false,
        edits: Vec::new(),
    }
}

/// A tool call from PostToolUse / PostToolUseFailure (or Cursor's shell, MCP and failure
/// hooks) → its observation type.
fn classify_tool_call(wire: &WireEvent, call: ToolCall<'_>) -> Observation {
    let mut o = observation(wire, call.tool_name, call.tool_use_id);
    o.input = call.input.cloned();
    o.output = call.response.cloned();
    if o.failed {
        // What else the IDE said about the failure, for the analysis (an interrupt is the
        // user's doing, not an error of the code).
        let mut notes = serde_json::Map::new();
        if let Some(interrupt) = wire.is_interrupt {
            notes.insert("is_interrupt".into(), Value::Bool(interrupt));
        }
        if let Some(kind) = &wire.failure_type {
            notes.insert("failure_type".into(), Value::String(kind.clone()));
        }
        if !notes.is_empty() {
            o.output = Some(Value::Object(notes));
        }
    }
    if let Some(edit) = &call.edit {
        o.obs_type = "file_edit";
        o.action = Some(if call.tool_name == "Write" { "create" } else { "modify" });
        o.file_path = edit.path().or(wire.file_path.as_deref()).map(str::to_owned);
        // A failed edit wrote nothing: there is no content to capture.
        if !o.failed {
            // Content captured at event time: the file the hook read right after the edit, else
            // what Write wrote (in its input or, the original client, beside it); an edit's own
            // text is only a fragment.
            let written = edit.content.as_deref().or(wire.content.as_deref());
            let whole = wire.file_content.as_deref().or(if call.tool_name == "Write" { written } else { None });
            match whole {
                Some(text) => set_content(&mut o, text, false),
                None => {
                    let ops = capture::edit_ops(&[edit.source(), wire.edit_source()]);
                    set_fragment(&mut o, ops, edit.new_source.as_deref().or(wire.content.as_deref()));
                }
            }
        }
        // The file text is the observation; keep only the small parts of the input.
        o.input = Some(serde_json::json!({ "file_path": o.file_path }));
        if !o.failed {
            o.output = None;
        }
    } else if call.tool_name == "Bash" {
        o.obs_type = "bash_command";
        o.command = call.command.clone();
        // A failed install installed nothing.
        if !o.failed {
            o.packages = o.command.as_deref().map(installed_packages).unwrap_or_default();
        }
    }
    o
}

fn set_content(observation: &mut Observation, text: &str, fragment: bool) {
    let (text, cut) = truncate_capture(text);
    observation.content = Some(text);
    observation.truncated |= cut;
    observation.fragment = fragment;
}

/// An edit that brought only its own text: a new file when it replaces nothing, else a
/// fragment, with its replacements kept for rebuilding the file at store time. `fallback` is
/// the text to keep when no replacement is usable (NotebookEdit's source, the original
/// client's `content`).
fn set_fragment(observation: &mut Observation, ops: Vec<EditOp>, fallback: Option<&str>) {
    if capture::creates_file(&ops) {
        set_content(observation, &ops[0].new, false);
        return;
    }
    let text = capture::fragment_text(&ops).or_else(|| fallback.map(str::to_owned));
    if let Some(text) = text {
        set_content(observation, &text, true);
        // A replacement cut at the capture limit no longer matches the file.
        if ops
            .iter()
            .all(|op| op.old.len() < crate::event::MAX_CAPTURE_BYTES && op.new.len() < crate::event::MAX_CAPTURE_BYTES)
        {
            observation.edits = ops;
        }
    }
}

/// Cursor's afterFileEdit (and any client's file-edit event) → a `file_edit` observation.
fn classify_file_edit(wire: &WireEvent, edit: FileEdit<'_>) -> Observation {
    let mut o = observation(wire, "cursor_file_edit", wire.tool_use_id.as_deref());
    o.obs_type = "file_edit";
    o.file_path = Some(edit.file_path.to_owned());
    o.action = Some("modify");
    o.input = Some(serde_json::json!({ "file_path": edit.file_path }));
    if o.failed {
        return o;
    }
    // The whole file: read by the hook (`file_content`), or given as `content` — unless the
    // original client's marker says its `content` is the edit's new text.
    let content_is_fragment = wire.tool_type.as_deref() == Some("file_edit");
    let whole = wire.file_content.as_deref().or(if content_is_fragment { None } else { wire.content.as_deref() });
    match whole {
        Some(text) => set_content(&mut o, text, false),
        None => set_fragment(&mut o, capture::edit_ops(&[wire.edit_source()]), wire.content.as_deref()),
    }
    o
}

/// Package names of an install command (npm/yarn/pnpm add|install, pip install, cargo add,
/// go get, bundle add), in order; flags and version specifiers stripped.
pub fn installed_packages(command: &str) -> Vec<String> {
    let mut packages = Vec::new();
    // A command line may chain several commands.
    for part in command.split(['&', ';', '|', '\n']) {
        let words: Vec<&str> = part.split_whitespace().collect();
        let args: &[&str] = match words.as_slice() {
            ["npm", "install" | "i" | "add", rest @ ..] => rest,
            ["yarn" | "pnpm" | "bun", "add", rest @ ..] => rest,
            ["pnpm", "install" | "i", rest @ ..] => rest,
            ["pip" | "pip3" | "uv" | "poetry", "install" | "add", rest @ ..] => rest,
            ["python" | "python3", "-m", "pip", "install", rest @ ..] => rest,
            ["uv", "pip", "install", rest @ ..] => rest,
            ["cargo", "add", rest @ ..] => rest,
            ["go", "get", rest @ ..] => rest,
            ["bundle", "add", rest @ ..] | ["gem", "install", rest @ ..] => rest,
            _ => &[],
        };
        // Flags that take a value consume the next word (`--features full`, `-r reqs.txt`).
        const VALUE_FLAGS: [&str; 9] =
            ["--features", "-F", "-r", "--requirement", "-i", "--index-url", "-c", "--registry", "--rename"];
        let mut skip_next = false;
        for arg in args {
            if std::mem::take(&mut skip_next) {
                continue;
            }
            if arg.starts_with('-') {
                skip_next = VALUE_FLAGS.contains(arg);
                continue;
            }
            let name = strip_version(arg);
            if !name.is_empty() && !packages.iter().any(|p| p == name) {
                packages.push(name.to_owned());
            }
        }
    }
    packages
}

fn strip_version(arg: &str) -> &str {
    // npm scopes start with '@' (@prisma/client@5); versions follow the last '@', '==', '>=', ...
    let body = arg.trim_matches(|c| c == '"' || c == '\'');
    let cut = body
        .char_indices()
        .skip(1)
        .find(|(_, c)| matches!(c, '@' | '=' | '>' | '<' | '~' | '[' | '!'))
        .map_or(body.len(), |(i, _)| i);
    &body[..cut]
}

/// The project name shown for a session: the last component of its cwd.
pub fn project_name(cwd: &str) -> String {
    cwd.replace('\\', "/")
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or("unknown")
        .to_owned()
}

/// The session row an event creates or touches.
#[derive(Debug, Clone)]
pub struct SessionRow {
    pub id: String,
    pub project: String,
    pub cwd: Option<String>,
    pub platform: Option<String>,
}

impl SessionRow {
    pub fn of(envelope: &Envelope) -> SessionRow {
        let project = envelope
            .project
            .clone()
            .or_else(|| envelope.cwd.as_deref().map(project_name))
            .unwrap_or_else(|| "unknown".to_owned());
        SessionRow {
            id: envelope.session_id.clone(),
            project,
            cwd: envelope.cwd.clone(),
            platform: envelope.platform.clone(),
        }
    }
}

/// Creates the session row or touches it. First cwd (and its project) wins; later events only
/// fill what is missing.
pub fn upsert_session(conn: &Connection, row: &SessionRow, now: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO sessions (id, project, cwd, platform, state, started_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, 'initialized', ?5, ?5) \
         ON CONFLICT (id) DO UPDATE SET updated_at = ?5, cwd = COALESCE(sessions.cwd, excluded.cwd), \
         project = CASE WHEN sessions.cwd IS NULL THEN excluded.project ELSE sessions.project END, \
         platform = COALESCE(sessions.platform, excluded.platform)",
    )?
    .execute(params![row.id, row.project, row.cwd, row.platform, now])?;
    Ok(())
}

/// Stores one event. Runs in the writer's transaction.
pub fn store_event(conn: &Connection, envelope: &Envelope, now: i64) -> rusqlite::Result<()> {
    upsert_session(conn, &SessionRow::of(envelope), now)?;
    match &envelope.event {
        Event::Init { prompt: Some(prompt) } => {
            conn.prepare_cached(
                "INSERT INTO prompts (session_id, event_key, text, created_at) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT DO NOTHING",
            )?
            .execute(params![envelope.session_id, envelope.event_key, prompt, now])?;
        }
        Event::Init { prompt: None } => {}
        Event::Observation(o) => {
            let (content, fragment, truncated) = whole_file(conn, &envelope.session_id, o)?;
            let inserted = conn
                .prepare_cached(
                    "INSERT INTO observations (session_id, event_key, obs_type, tool_name, tool_use_id, \
                     file_path, action, content, command, packages, input, output, truncated, created_at, \
                     outcome, error, fragment) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17) \
                     ON CONFLICT DO NOTHING",
                )?
                .execute(params![
                    envelope.session_id,
                    envelope.event_key,
                    o.obs_type,
                    o.tool_name,
                    o.tool_use_id,
                    o.file_path,
                    o.action,
                    content,
                    o.command,
                    (!o.packages.is_empty()).then(|| serde_json::json!(o.packages).to_string()),
                    o.input.as_ref().map(Value::to_string),
                    o.output.as_ref().map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned)),
                    truncated,
                    now,
                    if o.failed { "failed" } else { "succeeded" },
                    o.error,
                    fragment,
                ])?;
            if inserted > 0 {
                // A new observation after analysis reopens the session (SPEC §5.1).
                conn.prepare_cached("UPDATE sessions SET state = 'observing' WHERE id = ?1 AND state <> 'observing'")?
                    .execute([&envelope.session_id])?;
            }
        }
        Event::Complete { reason } => {
            conn.prepare_cached(
                "UPDATE sessions SET ended_at = COALESCE(ended_at, ?2), end_reason = COALESCE(end_reason, ?3) WHERE id = ?1",
            )?
            .execute(params![envelope.session_id, now, reason])?;
        }
    }
    Ok(())
}

/// An edit's content as stored: a fragment becomes the whole file when the session captured
/// that file before and every replacement applies to that version (the lane runs a session's
/// events in order, so "before" is the edit's past). Returns (content, still a fragment,
/// truncated).
fn whole_file(conn: &Connection, session_id: &str, o: &Observation) -> rusqlite::Result<(Option<String>, bool, bool)> {
    let unchanged = (o.content.clone(), o.fragment, o.truncated);
    let (true, false, Some(path)) = (o.fragment, o.edits.is_empty(), o.file_path.as_deref()) else {
        return Ok(unchanged);
    };
    let last: Option<(String, bool)> = conn
        .prepare_cached(
            "SELECT content, truncated FROM observations WHERE session_id = ?1 AND file_path = ?2 \
             AND obs_type = 'file_edit' AND outcome = 'succeeded' AND fragment = 0 AND content IS NOT NULL \
             ORDER BY id DESC LIMIT 1",
        )?
        .query_row(params![session_id, path], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((base, base_truncated)) = last else { return Ok(unchanged) };
    match capture::apply_edits(&base, &o.edits) {
        Some(rebuilt) => {
            let (text, cut) = truncate_capture(&rebuilt);
            Ok((Some(text), false, o.truncated || base_truncated || cut))
        }
        None => Ok(unchanged),
    }
}

/// The handler: parse (a bad payload is dead at once — retrying cannot fix it), then store as
/// an effect.
pub struct IngestHandler;

impl Handler for IngestHandler {
    fn run(&self, job: &ClaimedJob, _cancel: &CancelToken) -> Outcome {
        let envelope = match parse_event(&job.payload, &fallback_key(job.id)) {
            Ok(envelope) => envelope,
            Err(e) => return Outcome::dead(format!("invalid event: {e}")),
        };
        let result = result_of(&envelope);
        let effects: Effects = Box::new(move |conn, now| store_event(conn, &envelope, now).map_err(Into::into));
        Outcome::Succeeded { result: Some(result), effects: Some(effects) }
    }
}

/// The same work for the queue's inline fast path ([`crate::queue::NewJob::inline`]), on the
/// envelope intake already parsed: an event without its own key gets the key the handler
/// would give it, so a replay of the job stays a no-op.
pub fn inline_run(mut envelope: Envelope, has_own_key: bool) -> InlineRun {
    Box::new(move |conn, id, now| {
        if !has_own_key {
            envelope.event_key = fallback_key(id);
        }
        store_event(conn, &envelope, now)?;
        Ok(Some(result_of(&envelope)))
    })
}

/// The event key of an event that brought none (no `tool_use_id`, no `event_id`).
fn fallback_key(id: JobId) -> String {
    format!("job:{id}")
}

/// What the admin API shows as an ingest job's result.
fn result_of(envelope: &Envelope) -> Value {
    serde_json::json!({ "session": envelope.session_id, "event": event_name(&envelope.event) })
}

fn event_name(event: &Event) -> &'static str {
    match event {
        Event::Init { .. } => "init",
        Event::Observation(o) => o.obs_type,
        Event::Complete { .. } => "complete",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::MAX_CAPTURE_BYTES;
    use serde_json::json;

    fn observation(payload: Value) -> Observation {
        match parse_event(&payload, "job:1").unwrap().event {
            Event::Observation(o) => *o,
            other => panic!("expected an observation, got {other:?}"),
        }
    }

    #[test]
    fn write_is_a_created_file_with_its_content() {
        let o = observation(json!({"event":"observation","contentSessionId":"s","tool_name":"Write",
            "tool_use_id":"t1","tool_input":{"file_path":"/p/a.ts","content":"export const a = 1;"}}));
        assert_eq!((o.obs_type, o.action), ("file_edit", Some("create")));
        assert_eq!(o.content.as_deref(), Some("export const a = 1;"));
        assert_eq!(o.file_path.as_deref(), Some("/p/a.ts"));
    }

    #[test]
    fn edit_prefers_the_captured_file_then_falls_back_to_new_string() {
        let captured = observation(json!({"event":"observation","contentSessionId":"s","tool_name":"Edit",
            "tool_input":{"file_path":"/p/a.ts","old_string":"a","new_string":"b"},"file_content":"whole file"}));
        assert_eq!((captured.action, captured.content.as_deref()), (Some("modify"), Some("whole file")));
        let fallback = observation(json!({"event":"observation","contentSessionId":"s","tool_name":"MultiEdit",
            "tool_input":{"file_path":"/p/a.ts","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d"}]}}));
        assert_eq!(fallback.content.as_deref(), Some("b\nd"));
        assert!(fallback.fragment && !captured.fragment, "only the edit's own text is a fragment");
        assert_eq!(fallback.edits.len(), 2, "kept for rebuilding the file from the session");
    }

    #[test]
    fn a_failed_call_keeps_its_error_and_writes_nothing() {
        let bash = observation(json!({"event":"observation","contentSessionId":"s","tool_name":"Bash",
            "tool_input":{"command":"npm install left-padd"},"outcome":"failed","error":"npm ERR! 404 Not Found"}));
        assert!(bash.failed);
        assert_eq!(bash.error.as_deref(), Some("npm ERR! 404 Not Found"));
        assert!(bash.packages.is_empty(), "a failed install installed nothing");
        let edit = observation(json!({"event":"observation","contentSessionId":"s","tool_name":"Edit",
            "tool_input":{"file_path":"/p/a.ts","old_string":"x","new_string":"y"},"error":"String to replace not found"}));
        assert!(
            edit.failed && edit.content.is_none(),
            "an error without outcome is a failure; a failed edit wrote nothing"
        );
        let long = observation(json!({"event":"observation","contentSessionId":"s","tool_name":"Bash",
            "outcome":"failed","error":"e".repeat(MAX_CAPTURE_BYTES + 5)}));
        assert!(long.truncated && long.error.unwrap().len() == MAX_CAPTURE_BYTES);
        let bad = parse_event(
            &json!({"event":"observation","contentSessionId":"s","tool_name":"Bash","outcome":"maybe"}),
            "k",
        );
        assert!(bad.unwrap_err().0.contains("outcome"));
        let ok =
            observation(json!({"event":"observation","contentSessionId":"s","tool_name":"Bash","outcome":"succeeded"}));
        assert!(!ok.failed && ok.error.is_none());
    }

    #[test]
    fn a_write_from_the_original_client_is_the_whole_file() {
        let o = observation(
            json!({"event":"observation","contentSessionId":"s","tool_name":"Write","tool_type":"file_edit",
            "file_path":"/p/a.ts","content":"export const a = 1;"}),
        );
        assert_eq!((o.content.as_deref(), o.fragment, o.action), (Some("export const a = 1;"), false, Some("create")));
        assert_eq!(o.file_path.as_deref(), Some("/p/a.ts"));
    }

    #[test]
    fn file_edit_content_is_whole_unless_the_original_client_marks_it() {
        let file_edit = |extra: Value| {
            let mut payload = json!({"event":"file_edit","contentSessionId":"s","file_path":"/p/a.ts"});
            payload.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            match parse_event(&payload, "k").unwrap().event {
                Event::Observation(o) => *o,
                other => panic!("{other:?}"),
            }
        };
        let whole = file_edit(json!({"content": "const a = 1;\nconst b = 2;"}));
        assert!(!whole.fragment);
        let original = file_edit(json!({"content": "b = 3", "tool_type": "file_edit"}));
        assert!(original.fragment && original.content.as_deref() == Some("b = 3"));
        let created = file_edit(json!({"edits": [{"old_string": "", "new_string": "new file"}]}));
        assert!(!created.fragment && created.content.as_deref() == Some("new file"));
        let read = file_edit(json!({"edits": [{"old_string": "a", "new_string": "b"}], "file_content": "whole b"}));
        assert!(!read.fragment && read.content.as_deref() == Some("whole b"));
    }

    #[test]
    fn bash_installs_list_their_packages() {
        let o = observation(json!({"event":"observation","contentSessionId":"s","tool_name":"Bash",
            "tool_input":{"command":"npm install --save @prisma/client@5 zod && pip install 'fastapi>=0.1'"}}));
        assert_eq!(o.obs_type, "bash_command");
        assert_eq!(o.packages, vec!["@prisma/client", "zod", "fastapi"]);
        assert!(installed_packages("ls -la").is_empty());
        assert_eq!(
            installed_packages("cargo add tokio --features full; go get github.com/gin-gonic/gin@v1"),
            vec!["tokio", "github.com/gin-gonic/gin"]
        );
    }

    #[test]
    fn other_tools_are_mcp_tool_observations() {
        for tool in ["Read", "Grep", "mcp__github__search", "WebFetch"] {
            let o = observation(json!({"event":"observation","contentSessionId":"s","tool_name":tool,"tool_input":{}}));
            assert_eq!(o.obs_type, "mcp_tool", "{tool}");
            assert_eq!(o.tool_name, tool);
        }
    }

    #[test]
    fn large_content_is_truncated_on_a_char_boundary() {
        let text = "é".repeat(MAX_CAPTURE_BYTES);
        let (cut, truncated) = truncate_capture(&text);
        assert!(truncated && cut.len() <= MAX_CAPTURE_BYTES && cut.chars().all(|c| c == 'é'));
    }

    #[test]
    fn missing_and_mistyped_fields_are_clear_errors() {
        let missing = parse_event(&json!({"event":"init"}), "k").unwrap_err();
        assert!(missing.0.contains("contentSessionId"));
        let mistyped =
            parse_event(&json!({"event":"observation","contentSessionId":"s","tool_name":5}), "k").unwrap_err();
        assert!(mistyped.0.contains("tool_name"));
        let no_path = parse_event(&json!({"event":"file_edit","contentSessionId":"s"}), "k").unwrap_err();
        assert!(no_path.0.contains("file_path"));
    }

    #[test]
    fn the_event_key_prefers_tool_use_id_then_event_id() {
        let a = parse_event(&json!({"event":"init","contentSessionId":"s","tool_use_id":"t","event_id":"e"}), "job:9")
            .unwrap();
        let b = parse_event(&json!({"event":"init","contentSessionId":"s","event_id":"e"}), "job:9").unwrap();
        let c = parse_event(&json!({"event":"init","contentSessionId":"s"}), "job:9").unwrap();
        assert_eq!((a.event_key.as_str(), b.event_key.as_str(), c.event_key.as_str()), ("t", "e", "job:9"));
    }

    #[test]
    fn project_names_come_from_the_last_path_component() {
        assert_eq!(project_name("/home/dev/work/api/"), "api");
        assert_eq!(project_name("C:\\code\\web"), "web");
    }
}
