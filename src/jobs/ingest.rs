//! The `ingest` job: one session event (a prompt, a tool call, a file edit, the end of a
//! session) validated, typed as SPEC §5.1 defines, and stored with the session's lifecycle.
//!
//! Idempotent: every row is keyed by the event's key (the IDE's `tool_use_id`, the hook's
//! `event_id`, or the job id), so a re-run of the same job — after a crash, a replay, or a
//! hook that retried its POST — changes nothing.

use rusqlite::{Connection, params};
use serde_json::Value;

use crate::queue::{CancelToken, ClaimedJob, Effects, Handler, InlineRun, JobId, Outcome};

/// A captured file content or tool output is cut to this many bytes (SPEC §3.3).
pub const MAX_CAPTURE_BYTES: usize = 10 * 1024;

/// Tools whose observation is a `file_edit`; `Write` creates, the others modify.
const EDIT_TOOLS: [&str; 4] = ["Write", "Edit", "MultiEdit", "NotebookEdit"];

/// Which route an event came through (and the `event` field of its job payload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

    pub fn parse(raw: &str) -> Option<EventKind> {
        [EventKind::Init, EventKind::Observation, EventKind::FileEdit, EventKind::Complete]
            .into_iter()
            .find(|k| k.as_str() == raw)
    }
}

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

/// Why an event payload cannot be ingested: permanent, the job goes dead with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidEvent(pub String);

impl std::fmt::Display for InvalidEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A required non-empty string field.
pub fn required_str<'a>(body: &'a Value, field: &str) -> Result<&'a str, InvalidEvent> {
    match body.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s),
        Some(Value::String(_)) | None | Some(Value::Null) => {
            Err(InvalidEvent(format!("the field {field:?} is required and must be a non-empty string")))
        }
        Some(_) => Err(InvalidEvent(format!("the field {field:?} must be a string"))),
    }
}

/// An optional string field (a wrong type is an error, not silently dropped).
pub fn optional_str(body: &Value, field: &str) -> Result<Option<String>, InvalidEvent> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(InvalidEvent(format!("the field {field:?} must be a string"))),
    }
}

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

/// Validates and types an event payload (the job's payload: the route's body plus `event`).
/// `fallback_key` keys events that carry neither `tool_use_id` nor `event_id`.
pub fn parse_event(payload: &Value, fallback_key: &str) -> Result<Envelope, InvalidEvent> {
    let kind_name = required_str(payload, "event")?;
    let kind = EventKind::parse(kind_name).ok_or_else(|| InvalidEvent(format!("unknown event {kind_name:?}")))?;
    let session_id = required_str(payload, "contentSessionId")?.to_owned();
    let tool_use_id = optional_str(payload, "tool_use_id")?;
    let event_key =
        tool_use_id.clone().or(optional_str(payload, "event_id")?).unwrap_or_else(|| fallback_key.to_owned());
    let event = match kind {
        EventKind::Init => Event::Init { prompt: optional_str(payload, "prompt")?.filter(|p| !p.trim().is_empty()) },
        EventKind::Complete => Event::Complete { reason: optional_str(payload, "reason")? },
        EventKind::Observation => Event::Observation(Box::new(classify_tool_call(payload, tool_use_id)?)),
        EventKind::FileEdit => Event::Observation(Box::new(classify_cursor_edit(payload, tool_use_id)?)),
    };
    Ok(Envelope {
        session_id,
        cwd: optional_str(payload, "cwd")?.filter(|c| !c.trim().is_empty()),
        project: optional_str(payload, "project")?.filter(|p| !p.trim().is_empty()),
        platform: optional_str(payload, "platform")?,
        event_key,
        event,
    })
}

/// A tool call from PostToolUse (or Cursor's shell/MCP hooks) → its observation type.
fn classify_tool_call(payload: &Value, tool_use_id: Option<String>) -> Result<Observation, InvalidEvent> {
    let tool_name = required_str(payload, "tool_name")?.to_owned();
    let input = payload.get("tool_input").cloned().filter(|v| !v.is_null());
    let output = payload.get("tool_response").cloned().filter(|v| !v.is_null());
    let mut observation = Observation {
        obs_type: "mcp_tool",
        tool_name: tool_name.clone(),
        tool_use_id,
        file_path: None,
        action: None,
        content: None,
        command: None,
        packages: Vec::new(),
        input: input.clone(),
        output: output.clone(),
        truncated: payload.get("truncated").and_then(Value::as_bool).unwrap_or(false),
    };
    let input = input.unwrap_or(Value::Null);
    if EDIT_TOOLS.contains(&tool_name.as_str()) {
        observation.obs_type = "file_edit";
        observation.action = Some(if tool_name == "Write" { "create" } else { "modify" });
        observation.file_path =
            input.get("file_path").or_else(|| input.get("notebook_path")).and_then(Value::as_str).map(str::to_owned);
        // Content captured at event time: the hook's read of the file right after the edit,
        // else what Write wrote, else the edit's replacement text.
        let captured = payload
            .get("file_content")
            .and_then(Value::as_str)
            .or_else(|| input.get("content").and_then(Value::as_str))
            .map(str::to_owned)
            .or_else(|| edit_new_strings(&input));
        if let Some(text) = captured {
            let (text, cut) = truncate_capture(&text);
            observation.content = Some(text);
            observation.truncated |= cut;
        }
        // The file text is the observation; keep only the small parts of the input.
        observation.input = Some(serde_json::json!({ "file_path": observation.file_path }));
        observation.output = None;
    } else if tool_name == "Bash" {
        observation.obs_type = "bash_command";
        observation.command = input.get("command").and_then(Value::as_str).map(str::to_owned);
        observation.packages = observation.command.as_deref().map(installed_packages).unwrap_or_default();
    }
    Ok(observation)
}

/// Cursor's afterFileEdit → a `file_edit` observation.
fn classify_cursor_edit(payload: &Value, tool_use_id: Option<String>) -> Result<Observation, InvalidEvent> {
    let file_path = required_str(payload, "file_path")?.to_owned();
    let edits = payload.get("edits").cloned().unwrap_or(Value::Null);
    if !(edits.is_null() || edits.is_array()) {
        return Err(InvalidEvent("the field \"edits\" must be an array of {old_string, new_string}".into()));
    }
    let captured = optional_str(payload, "content")?
        .or(optional_str(payload, "file_content")?)
        .or_else(|| edit_new_strings(&serde_json::json!({ "edits": edits })));
    let (content, truncated) = match captured {
        Some(text) => {
            let (text, cut) = truncate_capture(&text);
            (Some(text), cut)
        }
        None => (None, false),
    };
    Ok(Observation {
        obs_type: "file_edit",
        tool_name: "cursor_file_edit".into(),
        tool_use_id,
        file_path: Some(file_path.clone()),
        action: Some("modify"),
        content,
        command: None,
        packages: Vec::new(),
        input: Some(serde_json::json!({ "file_path": file_path })),
        output: None,
        truncated: truncated || payload.get("truncated").and_then(Value::as_bool).unwrap_or(false),
    })
}

/// The replacement texts of an Edit/MultiEdit/Cursor edit, joined: the fallback content when
/// the file itself could not be read.
fn edit_new_strings(input: &Value) -> Option<String> {
    if let Some(new) = input.get("new_string").and_then(Value::as_str) {
        return Some(new.to_owned());
    }
    let parts: Vec<&str> = input
        .get("edits")
        .and_then(Value::as_array)?
        .iter()
        .filter_map(|e| e.get("new_string").and_then(Value::as_str))
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n"))
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

/// Stores one event. Runs in the writer's transaction.
pub fn store_event(conn: &Connection, envelope: &Envelope, now: i64) -> rusqlite::Result<()> {
    let project = envelope
        .project
        .clone()
        .or_else(|| envelope.cwd.as_deref().map(project_name))
        .unwrap_or_else(|| "unknown".to_owned());
    // First cwd (and its project) wins; later events only fill what is missing.
    conn.prepare_cached(
        "INSERT INTO sessions (id, project, cwd, platform, state, started_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, 'initialized', ?5, ?5) \
         ON CONFLICT (id) DO UPDATE SET updated_at = ?5, cwd = COALESCE(sessions.cwd, excluded.cwd), \
         project = CASE WHEN sessions.cwd IS NULL THEN excluded.project ELSE sessions.project END, \
         platform = COALESCE(sessions.platform, excluded.platform)",
    )?
    .execute(params![envelope.session_id, project, envelope.cwd, envelope.platform, now])?;
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
            let inserted = conn
                .prepare_cached(
                    "INSERT INTO observations (session_id, event_key, obs_type, tool_name, tool_use_id, \
                     file_path, action, content, command, packages, input, output, truncated, created_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) ON CONFLICT DO NOTHING",
                )?
                .execute(params![
                    envelope.session_id,
                    envelope.event_key,
                    o.obs_type,
                    o.tool_name,
                    o.tool_use_id,
                    o.file_path,
                    o.action,
                    o.content,
                    o.command,
                    (!o.packages.is_empty()).then(|| serde_json::json!(o.packages).to_string()),
                    o.input.as_ref().map(Value::to_string),
                    o.output.as_ref().map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned)),
                    o.truncated,
                    now,
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
