//! `vl hook <platform> <event>`: the process shell around [`crate::hook::run`]. Whatever
//! happens, it prints exactly one JSON line, writes nothing to stderr and exits 0.
//!
//! The platform and event may also come from stdin's `hook_event_name` (SPEC §10): `vl hook`
//! without them, and `vl` alone with a hook's JSON on stdin (an IDE that dropped an exec-form
//! hook's `args`), land on the same handler.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::CommandFactory;
use serde_json::Value;

use crate::config::Config;
use crate::hook::adapters::{HookEvent, Platform};
use crate::hook::{self, stdin};

pub fn run(platform: Option<&str>, event: Option<&str>, config: Config) -> ExitCode {
    init(&config);
    let line = match std::panic::catch_unwind(|| {
        let raw = read_stdin();
        line_for(platform, event, raw, &config)
    }) {
        Ok(line) => line,
        Err(_) => hook::continue_line(),
    };
    println!("{line}");
    log::logger().flush();
    ExitCode::SUCCESS
}

/// `vl` with no subcommand: a hook whose `args` were dropped when stdin holds a hook's JSON
/// naming its event, else the usage (exit 2), as clap gives it.
pub fn run_bare(config: Config) -> ExitCode {
    let usage = || {
        eprintln!("{}", crate::cli::args::Cli::command().render_help());
        ExitCode::from(2)
    };
    if std::io::stdin().is_terminal() {
        return usage();
    }
    init(&config);
    let raw = read_stdin();
    if raw.as_ref().ok().and_then(event_by_name).is_none() {
        return usage();
    }
    let line =
        std::panic::catch_unwind(|| line_for(None, None, raw, &config)).unwrap_or_else(|_| hook::continue_line());
    println!("{line}");
    log::logger().flush();
    ExitCode::SUCCESS
}

fn init(config: &Config) {
    let level = config.get("VIBELEARN_LOG_LEVEL");
    crate::logging::init(&config.logs_dir(), level, config.secrets(), crate::logging::Rotation::AppendOnly);
    // A panic must not print to stderr (the IDE shows it); log it instead.
    std::panic::set_hook(Box::new(|info| log::error!(target: "hook", "hook panicked: {info}")));
}

fn read_stdin() -> Result<Value, String> {
    stdin::read_json_value(std::io::stdin(), stdin::STDIN_TIMEOUT).map_err(|e| e.to_string())
}

/// The platform and event a hook input names in `hook_event_name` (Claude Code's events are
/// PascalCase, Cursor's camelCase).
pub fn event_by_name(raw: &Value) -> Option<(Platform, HookEvent)> {
    use HookEvent::*;
    use Platform::{ClaudeCode, Cursor, Gemini};
    Some(match raw.get("hook_event_name")?.as_str()? {
        "SessionStart" => (ClaudeCode, SessionStart),
        "UserPromptSubmit" => (ClaudeCode, SessionInit),
        "PostToolUse" | "PostToolUseFailure" => (ClaudeCode, Observation),
        "Stop" => (ClaudeCode, Summarize),
        "SessionEnd" => (ClaudeCode, SessionComplete),
        "beforeSubmitPrompt" => (Cursor, SessionInit),
        "afterShellExecution" | "afterMCPExecution" | "postToolUseFailure" => (Cursor, Observation),
        "afterFileEdit" => (Cursor, FileEdit),
        "stop" => (Cursor, Summarize),
        "sessionEnd" => (Cursor, SessionComplete),
        // Gemini CLI's own names (its SessionStart and SessionEnd are Claude Code's).
        "BeforeAgent" => (Gemini, SessionInit),
        "AfterTool" => (Gemini, Observation),
        "AfterAgent" => (Gemini, Summarize),
        _ => return None,
    })
}

/// The arguments decide when both are valid; else `hook_event_name` (with the platform argument
/// kept when it was given).
fn line_for(platform: Option<&str>, event: Option<&str>, raw: Result<Value, String>, config: &Config) -> Value {
    let named = (platform.and_then(Platform::parse), event.and_then(HookEvent::parse));
    let by_name = raw.as_ref().ok().and_then(event_by_name);
    let (platform, event) = match (named, by_name) {
        ((Some(platform), Some(event)), _) => (platform, event),
        ((given, _), Some((platform, event))) => (given.unwrap_or(platform), event),
        _ => {
            log::warn!(target: "hook", "unknown hook {platform:?} {event:?} and no known hook_event_name on stdin");
            return hook::continue_line();
        }
    };
    match raw {
        Ok(raw) => hook::run(platform, event, &raw, config),
        Err(e) => {
            log::warn!(target: "hook", "{} {:?}: {e}; nothing recorded", platform.as_str(), event);
            if event == HookEvent::SessionStart {
                crate::worker_spawn::start(config).hook_line()
            } else {
                hook::continue_line()
            }
        }
    }
}
