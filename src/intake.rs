//! What enters the system: validation, privacy, exclusion and the enqueue of session events
//! and analysis requests. The worker's HTTP routes and the hooks' direct-enqueue fallback call
//! the same functions, so an event is treated the same whichever way it arrives.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::event::{EventKind, InvalidEvent, WireEvent};
use crate::jobs;
use crate::policy::exclude::is_excluded;
use crate::policy::privacy::{redact_secrets_json, strip_private_json};
use crate::policy::turns::{Privacy, PrivateTurns};
use crate::queue::{NewJob, Queue, QueueError, UniqueScope};

/// The settings intake needs, taken from the resolved config once.
#[derive(Debug, Clone)]
pub struct IntakeSettings {
    pub skip_tools: Vec<String>,
    pub excluded_projects: String,
    pub home: Option<String>,
    /// Where private-turn markers live (`<data>/private`).
    pub private_dir: PathBuf,
    /// Whether a session's analysis ends with the sync step (`VIBELEARN_AUTO_SYNC`).
    pub auto_sync: bool,
    /// Secrets masked out of every event (the user key, the admin token, API keys).
    pub secrets: Vec<String>,
}

impl IntakeSettings {
    pub fn from_config(config: &crate::config::Config) -> IntakeSettings {
        IntakeSettings {
            skip_tools: config.skip_tools(),
            excluded_projects: config.excluded_projects().to_owned(),
            home: config.home.as_ref().map(|h| h.to_string_lossy().into_owned()),
            private_dir: config.data_dir.join("private"),
            auto_sync: config.flag("VIBELEARN_AUTO_SYNC"),
            // The API keys, and the user key and admin token when their files exist and are
            // private (each read at most once per process, by the config).
            secrets: config.all_secrets(),
        }
    }
}

/// The answer to a submission (SPEC Appendix A.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Queued { job_id: i64, deduplicated: bool, session: Option<SessionRef> },
    Skipped { reason: &'static str },
}

/// What an init reply adds for the original VibeLearn client, whose hook reads them: the
/// session's row id and how many prompts it has with this one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionRef {
    pub session_db_id: i64,
    pub prompt_number: i64,
}

impl Reply {
    fn queued(job_id: i64, deduplicated: bool) -> Reply {
        Reply::Queued { job_id, deduplicated, session: None }
    }

    pub fn to_json(&self) -> Value {
        match self {
            Reply::Queued { job_id, deduplicated, session } => {
                let mut reply = json!({"status": "queued", "jobId": job_id, "deduplicated": deduplicated});
                if let Some(session) = session {
                    reply["sessionDbId"] = json!(session.session_db_id);
                    reply["promptNumber"] = json!(session.prompt_number);
                }
                reply
            }
            Reply::Skipped { reason } => json!({"status": "skipped", "reason": reason}),
        }
    }
}

/// Why a submission was refused.
#[derive(Debug, Clone, thiserror::Error)]
pub enum IntakeError {
    /// The caller's mistake (400): missing or mistyped field.
    #[error("{0}")]
    Invalid(String),
    /// The queue could not take it (503): full, shutting down, locked.
    #[error(transparent)]
    Queue(#[from] QueueError),
}

impl From<InvalidEvent> for IntakeError {
    fn from(e: InvalidEvent) -> Self {
        IntakeError::Invalid(e.0)
    }
}

/// Validates, strips and enqueues one session event as an `ingest` job.
pub fn submit_event(
    queue: &Queue,
    settings: &IntakeSettings,
    kind: EventKind,
    mut body: Value,
) -> Result<Reply, IntakeError> {
    // Whether the prompt is entirely private must be judged before stripping; then strip
    // before anything else looks at the body: nothing private may reach a log line or the queue.
    let raw_prompt = body.get("prompt").and_then(Value::as_str).map(str::to_owned);
    strip_private_json(&mut body);
    redact_secrets_json(&mut body, &settings.secrets);
    // The one parse: from here on the event is typed.
    let wire = WireEvent::parse(kind, body)?;
    // Reject what the job would reject, now, while the caller can still hear about it.
    let envelope = jobs::ingest::envelope(&wire, "validation")?;
    let session_id = envelope.session_id.clone();
    if let Some(cwd) = &envelope.cwd
        && is_excluded(cwd, &settings.excluded_projects, settings.home.as_deref())
    {
        return Ok(Reply::Skipped { reason: "project_excluded" });
    }
    let turns = PrivateTurns::new(&settings.private_dir);
    match kind {
        EventKind::Init => {
            // A prompt opens a turn: private until the next prompt that is not.
            if let Some(prompt) = &raw_prompt
                && turns.open_turn(&session_id, prompt)
            {
                return Ok(Reply::Skipped { reason: "private" });
            }
        }
        EventKind::Observation | EventKind::FileEdit => {
            if turns.is_private(&session_id) {
                return Ok(Reply::Skipped { reason: "private" });
            }
            if let Some(tool) = &wire.tool_name
                && settings.skip_tools.iter().any(|t| t == tool)
            {
                return Ok(Reply::Skipped { reason: "tool_excluded" });
            }
        }
        EventKind::Complete => {}
    }
    let session_row = jobs::ingest::SessionRow::of(&envelope);
    let dedup_key = wire
        .tool_use_id
        .as_ref()
        .map(|id| format!("tool:{session_id}:{id}"))
        .or(wire.event_id.as_ref().map(|id| format!("event:{session_id}:{id}")));
    let max_attempts = jobs::default_spec(jobs::INGEST).map_or(5, |s| s.max_attempts);
    // Storing an event is a few inserts: when the session has nothing waiting, the writer does
    // it in the enqueue transaction (docs/DECISIONS.md, "Inline ingest").
    let inline = jobs::ingest::inline_run(envelope, dedup_key.is_some());
    let mut job =
        NewJob::new(jobs::INGEST, wire.to_payload(), max_attempts).lane(jobs::lane(&session_id)).inline(inline);
    if let Some(key) = dedup_key {
        job = job.unique(key, UniqueScope::Ever);
    }
    let enqueued = queue.enqueue(job)?;
    let mut reply = Reply::queued(enqueued.id.0, enqueued.deduplicated);
    match kind {
        EventKind::Init => {
            if let Reply::Queued { session, .. } = &mut reply {
                *session = session_ref(queue, session_row, enqueued.id.0);
            }
        }
        EventKind::Complete => finalize(queue, settings, &session_id),
        EventKind::Observation | EventKind::FileEdit => {}
    }
    Ok(reply)
}

/// The session's row id and prompt count for an init reply. When the event was stored inline
/// the rows are there; when it waits in its lane, the prompts waiting up to it count too, and
/// the session row is created now (the upsert ingest does, which ingest later completes) so
/// that it has an id. `None` (and a reply without them) only when the database cannot say.
fn session_ref(queue: &Queue, row: jobs::ingest::SessionRow, job_id: i64) -> Option<SessionRef> {
    let found = queue.read().ok().and_then(|conn| jobs::session_data::session_ref(&conn, &row.id, job_id).ok());
    let (db_id, prompt_number) = found?;
    let session_db_id = match db_id {
        Some(id) => id,
        None => queue
            .writer()
            .call(false, crate::queue::Durability::Relaxed, move |conn, now| {
                jobs::ingest::upsert_session(conn, &row, now)?;
                Ok(jobs::session_data::session_row_id(conn, &row.id)?.unwrap_or_default())
            })
            .ok()?,
    };
    Some(SessionRef { session_db_id, prompt_number })
}

/// SessionEnd (Cursor's `sessionEnd`): a session whose Stop never came — Cursor's `stop` is
/// reported not to fire in some sessions, Cloud Agents run no stop hooks, a Claude Code turn
/// interrupted with Ctrl-C ends without one — is analysed now. Only when events arrived after
/// its last analysis request: a session that stopped normally is not analysed twice.
fn finalize(queue: &Queue, settings: &IntakeSettings, session_id: &str) {
    let needed = queue.read().ok().and_then(|conn| jobs::session_needs_analysis(&conn, session_id).ok());
    if needed != Some(true) {
        return;
    }
    log::info!(target: "intake", "the session ended without a Stop after its last events; analysing it now");
    for kind in jobs::pipeline_steps(settings.auto_sync) {
        if let Err(e) = submit_analysis(queue, settings, kind, json!({ "contentSessionId": session_id })) {
            log::warn!(target: "intake", "could not queue {kind} at the end of the session: {e}");
        }
    }
}

/// An analysis request's body (SPEC §4.3).
#[derive(Debug, serde::Deserialize)]
struct AnalysisRequest {
    #[serde(rename = "contentSessionId", default)]
    session_id: Option<String>,
    #[serde(default)]
    last_assistant_message: Option<String>,
}

/// Whether a Stop's last message may be stored: not when the session's turn is private or its
/// privacy cannot be told (the hooks drop it first; this holds for any other client too).
fn may_keep_last_word(settings: &IntakeSettings, session_id: &str) -> bool {
    match PrivateTurns::new(&settings.private_dir).privacy(session_id) {
        Privacy::Public => true,
        Privacy::Private => {
            log::info!(target: "intake", "a private turn ended; its last message is not stored");
            false
        }
        Privacy::Unknown(why) => {
            log::error!(target: "intake", "cannot tell whether the turn that ended is private ({why}); its last message is dropped");
            false
        }
    }
}

/// Enqueues one analysis step for a session (SPEC §4.3).
pub fn submit_analysis(
    queue: &Queue,
    settings: &IntakeSettings,
    kind: &str,
    mut body: Value,
) -> Result<Reply, IntakeError> {
    if !body.is_object() {
        return Err(IntakeError::Invalid("the body must be a JSON object".into()));
    }
    strip_private_json(&mut body);
    redact_secrets_json(&mut body, &settings.secrets);
    let request: AnalysisRequest = serde_path_to_error::deserialize(&body)
        .map_err(|e| IntakeError::Invalid(format!("the field {:?}: {}", e.path().to_string(), e.inner())))?;
    let session_id = request.session_id.filter(|s| !s.trim().is_empty()).ok_or_else(|| {
        IntakeError::Invalid("the field \"contentSessionId\" is required and must be a non-empty string".into())
    })?;
    let mut payload = json!({ "contentSessionId": session_id });
    if kind == jobs::ANALYZE_CONCEPTS
        && let Some(message) = request.last_assistant_message
        && may_keep_last_word(settings, &session_id)
    {
        payload["last_assistant_message"] = json!(message);
    }
    let enqueued = queue.enqueue(jobs::analysis_job(kind, &session_id, payload))?;
    Ok(Reply::queued(enqueued.id.0, enqueued.deduplicated))
}
