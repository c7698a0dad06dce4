//! The IDE hook entry point, `vl hook <platform> <event>` (SPEC §3).
//!
//! Contract: exit 0 always; exactly one JSON line on stdout; nothing on stderr; logging goes to
//! the log file. A hook never blocks or slows the IDE because of VibeLearn's own trouble.
//!
//! - [`stdin`]: the first complete JSON value, 5 s limit, 8 MiB cap
//! - [`input`]: the one [`input::HookInput`] every adapter fills, and their shared readers
//! - [`adapters`]: Claude Code / Cursor / raw input → [`input::HookInput`]; [`gemini`],
//!   [`codex`], [`copilot`]: those agents' inputs (SPEC §3.4); [`exit_status`]: a shell
//!   call's status from where each agent's CLI writes it
//! - [`output`]: the one line each agent accepts on stdout
//! - [`cursor`]: whether Cursor's own VibeLearn hooks record an event (Cursor also runs Claude
//!   Code's hooks)
//! - [`privacy`]: private-tag stripping (pure); [`exclude`]: project globs (pure);
//!   [`PrivateTurns`]: a private turn records nothing, its last message included
//! - [`transcript`]: the last assistant message from a transcript
//! - [`transport`]: POST to the worker or enqueue directly

pub mod adapters;
pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod exit_status;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod gemini;
pub mod input;
pub mod output;
pub mod stdin;
pub mod transcript;
pub mod transport;

use serde_json::{Value, json};

use crate::config::Config;
use crate::event::{EventKind, MAX_CAPTURE_BYTES, truncate_capture};
use crate::policy::turns::{Privacy, PrivateTurns};
use crate::policy::{exclude, privacy};
use adapters::{HookEvent, HookInput, Platform};
use transport::{Route, Transport};

/// A whole event never exceeds this (SPEC §3.3).
pub const MAX_EVENT_BYTES: usize = 256 * 1024;

use crate::capture::FRAGMENT_TOOLS;

/// The line every hook but SessionStart prints.
pub fn continue_line() -> Value {
    json!({ "continue": true })
}

/// Runs one hook with its raw stdin value; returns the line to print, in the form the agent
/// accepts.
pub fn run(platform: Platform, event: HookEvent, raw: &Value, config: &Config) -> Value {
    output::for_agent(platform, record(platform, event, raw, config))
}

fn record(platform: Platform, event: HookEvent, raw: &Value, config: &Config) -> Value {
    if config.llm_child {
        // This session is VibeLearn's own `claude` CLI call (the `command` provider): recording
        // it would analyse the analysis, in a loop.
        return continue_line();
    }
    let mut input = adapters::normalize(platform, raw);
    if platform == Platform::Codex && event == HookEvent::Observation {
        codex::mark_failed_shell(&mut input);
    }
    // Cursor also runs the hooks configured for Claude Code, with its own field names: such an
    // event is Cursor's, and when Cursor's own VibeLearn hook records it too, it is left to that
    // one, so a user with both installs gets it once.
    let via_claude_code = platform == Platform::ClaudeCode && input.from_cursor;
    let platform = if input.from_cursor { Platform::Cursor } else { platform };
    if via_claude_code && cursor::records_natively(config, &input, event) {
        log::debug!(target: "hook", "a Cursor event on the Claude Code path; Cursor's own hook records it");
        return match event {
            HookEvent::SessionStart => crate::worker_spawn::start(config).hook_line(),
            _ => continue_line(),
        };
    }
    let excluded = input.cwd.as_deref().is_some_and(|cwd| {
        exclude::is_excluded(cwd, config.excluded_projects(), config.home.as_deref().and_then(|h| h.to_str()))
    });
    if excluded {
        log::debug!(target: "hook", "project excluded; nothing recorded");
        return match event {
            HookEvent::SessionStart => json!({"continue": true, "suppressOutput": true}),
            _ => continue_line(),
        };
    }
    if event == HookEvent::SessionStart {
        return session_start(&input, platform, config);
    }
    let Some(session_id) = input.session_id.clone() else {
        log::warn!(target: "hook", "{:?} input has no session id; nothing recorded", event);
        return continue_line();
    };
    let mut transport = Transport::new(config);
    let turns_dir = config.data_dir.join("private");
    let turns = PrivateTurns::new(&turns_dir);
    match event {
        HookEvent::SessionStart => {}
        HookEvent::SessionInit => {
            let prompt = input.prompt.clone().unwrap_or_default();
            if turns.open_turn(&session_id, &prompt) {
                log::info!(target: "hook", "a private prompt; this turn is not recorded");
            } else {
                let mut body = session_body(&input, &session_id, platform);
                body["prompt"] = json!(privacy::strip_private(&prompt));
                transport.send(Route::Event(EventKind::Init), body);
            }
        }
        HookEvent::Observation | HookEvent::FileEdit => {
            if !turns.is_private(&session_id) {
                send_observations(&mut transport, event, &input, &session_id, platform, config);
            }
        }
        HookEvent::Summarize => {
            if !input.stop_hook_active {
                let message = last_word(&turns, &input, &session_id);
                request_analysis(&mut transport, message.as_deref(), &session_id, config);
            }
        }
        HookEvent::SessionComplete => {
            let mut body = session_body(&input, &session_id, platform);
            body["reason"] = json!(input.reason);
            transport.send(Route::Event(EventKind::Complete), body);
        }
    }
    continue_line()
}

/// SessionStart: starts the worker if it is down, says in the IDE when questions are due, and
/// records the session's start when the agent names it.
fn session_start(input: &HookInput, platform: Platform, config: &Config) -> Value {
    let mut line = crate::worker_spawn::start(config).hook_line();
    // One line in the IDE when questions are due (VIBELEARN_SESSION_START_MESSAGE).
    if let Some(message) = session_start_message(config, input.cwd.as_deref()) {
        line["systemMessage"] = json!(message);
    }
    if let Some(session_id) = &input.session_id {
        let mut transport = Transport::new(config);
        transport.send(Route::Event(EventKind::Init), session_body(input, session_id, platform));
    }
    line
}

/// A tool call or file edit, as one event per file (a Codex patch over several files becomes
/// one observation per file, keyed apart).
fn send_observations(
    transport: &mut Transport<'_>,
    event: HookEvent,
    input: &HookInput,
    session_id: &str,
    platform: Platform,
    config: &Config,
) {
    let route = if event == HookEvent::FileEdit { EventKind::FileEdit } else { EventKind::Observation };
    let more = input.more.iter().enumerate().map(|(n, file)| {
        let key = input.tool_use_id.as_deref().map(|id| format!("{id}#{}", n + 1));
        HookInput { tool_use_id: key, ..file.clone() }
    });
    for one in std::iter::once(input.clone()).chain(more) {
        if let Some(body) = observation_body(event, &one, session_id, platform, config) {
            transport.send(Route::Event(route), body);
        }
    }
}

/// The agent's last message of the turn that ended (from the event, or else from its
/// transcript), stripped; `None` when the turn is private or its privacy cannot be told
/// (fail closed): then the message is not even read from the transcript, and the log says
/// why without a word of it. The same for every agent: Claude Code's and Codex's
/// `last_assistant_message`, Gemini's `prompt_response`, Copilot's and Cursor's transcripts.
fn last_word(turns: &PrivateTurns<'_>, input: &HookInput, session_id: &str) -> Option<String> {
    if input.last_assistant_message.is_none() && input.transcript_path.is_none() {
        return None;
    }
    match turns.privacy(session_id) {
        Privacy::Public => {}
        Privacy::Private => {
            log::info!(target: "hook", "a private turn ended; its last message is not recorded");
            return None;
        }
        Privacy::Unknown(why) => {
            log::error!(target: "hook", "cannot tell whether the turn that ended is private ({why}); its last message is dropped");
            return None;
        }
    }
    input
        .last_assistant_message
        .clone()
        .or_else(|| input.transcript_path.as_deref().and_then(transcript::last_assistant_message))
        .map(|m| privacy::strip_private(&m).into_owned())
}

/// The agent stopped: asks for the session's analysis steps, the concepts step with the
/// agent's last message when it may be recorded ([`last_word`]).
fn request_analysis(transport: &mut Transport<'_>, message: Option<&str>, session_id: &str, config: &Config) {
    for kind in crate::jobs::pipeline_steps(config.flag("VIBELEARN_AUTO_SYNC")) {
        let mut body = json!({ "contentSessionId": session_id });
        if kind == crate::jobs::ANALYZE_CONCEPTS
            && let Some(message) = message
        {
            body["last_assistant_message"] = json!(truncate_capture(message).0);
        }
        transport.send(Route::Analysis(kind), body);
    }
}

fn session_body(input: &HookInput, session_id: &str, platform: Platform) -> Value {
    json!({
        "contentSessionId": session_id,
        "cwd": input.cwd,
        "platform": platform.as_str(),
        "event_id": event_id(),
    })
}

/// A fresh id per hook event: a POST that timed out after the worker committed and was then
/// enqueued directly must still be stored once.
fn event_id() -> String {
    // Unique, not secret: the thread-local PRNG (seeded from the OS) is enough.
    let bytes: [u8; 12] = std::array::from_fn(|_| fastrand::u8(..));
    hex::encode(bytes)
}

/// The body of an observation or Cursor file edit, or `None` when the tool is skipped.
fn observation_body(
    event: HookEvent,
    input: &HookInput,
    session_id: &str,
    platform: Platform,
    config: &Config,
) -> Option<Value> {
    let mut body = session_body(input, session_id, platform);
    let mut truncated = false;
    if event == HookEvent::FileEdit {
        let file_path = input.file_path.clone()?;
        body["file_path"] = json!(file_path);
        body["edits"] = input.edits.clone();
        body["tool_use_id"] = json!(input.tool_use_id);
        // The whole file right after the edit; without it intake or ingest rebuild it.
        if let Some((text, cut)) = local_file(&file_path, input, config) {
            body["file_content"] = json!(text);
            truncated |= cut;
        }
        truncated |= cap_strings(&mut body["edits"]);
    } else {
        let tool = input.tool_name.clone()?;
        let skip = config.skip_tools();
        if skip.contains(&tool) || input.agent_tool.as_ref().is_some_and(|t| skip.contains(t)) {
            return None;
        }
        body["tool_name"] = json!(tool);
        body["tool_use_id"] = json!(input.tool_use_id);
        body["tool_input"] = input.tool_input.clone();
        if FRAGMENT_TOOLS.contains(&tool.as_str()) || tool == "Write" {
            // The edit's response repeats the whole file; the captured content replaces it.
            body["tool_response"] = Value::Null;
            // A failed edit changed nothing: the file on disk is not what it wrote.
            if tool != "Write" && !input.failed {
                let path = input
                    .tool_input
                    .get("file_path")
                    .or_else(|| input.tool_input.get("notebook_path"))
                    .and_then(Value::as_str);
                if let Some((text, cut)) = path.and_then(|p| local_file(p, input, config)) {
                    body["file_content"] = json!(text);
                    truncated |= cut;
                }
            }
        } else {
            body["tool_response"] = input.tool_response.clone();
        }
        truncated |= cap_strings(&mut body["tool_input"]);
        truncated |= cap_strings(&mut body["tool_response"]);
    }
    if input.failed {
        // PostToolUseFailure (or Cursor's failure / non-zero exit): the call and its error.
        let error = input.error.as_deref().unwrap_or("the tool call failed");
        let (error, cut) = truncate_capture(&privacy::strip_private(error));
        body["outcome"] = json!("failed");
        body["error"] = json!(error);
        truncated |= cut;
        if input.is_interrupt {
            body["is_interrupt"] = json!(true);
        }
        if let Some(kind) = &input.failure_type {
            body["failure_type"] = json!(kind);
        }
    }
    body["truncated"] = json!(truncated);
    privacy::strip_private_json(&mut body);
    fit_event(&mut body);
    Some(body)
}

/// The edited file read from this machine, relative paths against the event's cwd. Never a file
/// of VibeLearn's data dir (the key, the admin token, `config.json`'s account key, the
/// database): an edit there is recorded as its fragment only.
fn local_file(path: &str, input: &HookInput, config: &Config) -> Option<(String, bool)> {
    let path = crate::capture::local_path(path, input.cwd.as_deref())?;
    let resolved = path.canonicalize().ok()?;
    if config.data_dir.canonicalize().is_ok_and(|data| resolved.starts_with(data)) {
        log::info!(target: "hook", "an edit inside the data dir; its file is not captured");
        return None;
    }
    crate::capture::read_captured(&resolved)
}

/// Cuts every string longer than 10 KiB; says whether any was cut.
fn cap_strings(value: &mut Value) -> bool {
    match value {
        Value::String(s) if s.len() > MAX_CAPTURE_BYTES => {
            *s = truncate_capture(s).0;
            true
        }
        Value::Array(items) => items.iter_mut().fold(false, |cut, v| cap_strings(v) | cut),
        Value::Object(map) => map.values_mut().fold(false, |cut, v| cap_strings(v) | cut),
        _ => false,
    }
}

/// Keeps the whole event under [`MAX_EVENT_BYTES`]: drops the tool output, then the input.
fn fit_event(body: &mut Value) {
    for field in ["tool_response", "tool_input", "edits"] {
        if body.to_string().len() <= MAX_EVENT_BYTES {
            return;
        }
        if body.get(field).is_some() {
            body[field] = json!({ "omitted": "the event was over 256 KiB" });
            body["truncated"] = json!(true);
        }
    }
}

/// Whether an installed shell-form command is VibeLearn's hook for this platform and event.
pub fn is_ours(command: &str, platform: &str, event: &str) -> bool {
    let Some(program) = command.trim().strip_suffix(&format!(" hook {platform} {event}")) else { return false };
    is_vl_program(program)
}

/// Whether a command's program names a `vl` binary (`vl`, `vl.exe`), as a path, a quoted path,
/// or after PowerShell's call operator `&` (see [`crate::platform::shell_program`]).
pub fn is_vl_program(program: &str) -> bool {
    let program = program.trim();
    let program = program.strip_prefix("& ").unwrap_or(program).trim().trim_matches(|c| c == '\'' || c == '"');
    let program = program.replace('\\', "/");
    let name = std::path::Path::new(&program).file_name().map(|n| n.to_string_lossy().to_ascii_lowercase());
    matches!(name.as_deref(), Some("vl" | "vl.exe"))
}

/// The SessionStart hook's one-line `systemMessage` when questions are due, or `None` (nothing
/// due, no database, or `VIBELEARN_SESSION_START_MESSAGE=false`).
fn session_start_message(config: &Config, cwd: Option<&str>) -> Option<String> {
    if !config.flag("VIBELEARN_SESSION_START_MESSAGE") {
        return None;
    }
    let path = config.db_path();
    if !path.exists() {
        return None;
    }
    let conn = crate::db::open_read_only(&path).ok()?;
    let project = cwd.map(|c| crate::learning::project_dir(c).to_owned());
    let scheduler = crate::learning::cards::scheduler_for(&conn, config).ok()?;
    let new_per_day = config.new_per_day() as usize;
    let counts = crate::learning::summary::due_counts(
        &conn,
        &scheduler,
        config.now_ms(),
        project.as_deref(),
        new_per_day,
        crate::learning::summary::Standings::Skip,
    )
    .ok()?;
    let plural = if counts.due == 1 { "" } else { "s" };
    let scope = if counts.project { " from this project" } else { "" };
    (counts.due > 0).then(|| format!("VibeLearn: {} question{plural} due{scope} — run `vl quiz`", counts.due))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_strings_are_capped_and_events_fit() {
        let mut body = json!({"tool_input": {"a": "x".repeat(50_000)}, "tool_response": ["y".repeat(20_000)]});
        assert!(cap_strings(&mut body));
        assert!(body.to_string().len() < 2 * MAX_CAPTURE_BYTES + 100);
        let many: Vec<String> = (0..40).map(|_| "z".repeat(MAX_CAPTURE_BYTES)).collect();
        let mut big = json!({"tool_response": many, "tool_input": {}});
        fit_event(&mut big);
        assert!(big.to_string().len() <= MAX_EVENT_BYTES);
        assert_eq!(big["truncated"], true);
    }
}
