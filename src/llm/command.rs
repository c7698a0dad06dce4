//! The `command` provider: runs a shell command line as the model (SPEC §6.5).
//!
//! Protocol: the command line through the system shell (`sh -c`, or `cmd /c` on Windows:
//! [`crate::platform::shell_command`]); stdin gets the system text, a blank line, then the
//! prompt (just the prompt when the system text is empty); stdout is the answer. The same
//! provider runs the `claude` CLI when `auto` finds one on PATH, as the program itself with
//! `-p --output-format text` and no shell in between (print mode reads its prompt from stdin
//! and prints only the answer).
//!
//! # Failures
//! - Timeout: the whole tree is killed (the command runs in a process group or Job Object of
//!   its own, [`crate::platform::spawn_tree`], so a pipeline or a script's children die too,
//!   not just the shell) → Transient.
//! - Non-zero exit → Transient, with the last 500 chars of stdout and of stderr (the end is
//!   where the error usually is; the `claude` CLI prints "Not logged in · Please run /login" on
//!   stdout). An exit whose output says the account cannot be used (not logged in, no credit,
//!   an unknown model: [`account_problem`]) → Auth, so the provider pauses like after a 401
//!   instead of burning its retries; one whose output says the API could not be reached
//!   ([`network_problem`]) → Unreachable, which pauses it the same way. The shell's own "not executable"/"not found" (126/127
//!   from `sh`, 9009 from `cmd`) and a program that cannot be started: Permanent, as no retry
//!   can fix a misspelt command.
//! - Empty stdout with exit 0 → Permanent.
//!
//! # Nesting
//! The child gets `VIBELEARN_LLM_CHILD=1` so VibeLearn's own hooks, fired by a nested `claude`
//! session, can tell they are inside an analysis call and stay out of it (else each analysis
//! would create a new session to analyse).
//!
//! # Waiting
//! std has no wait-with-timeout, so the child is polled every [`POLL_INTERVAL`]; a thread
//! blocked in `wait()` would own the `Child` and leave no way to kill it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use super::error::clip;
use super::{LlmError, LlmRequest, Provider};

/// Set in the child's environment; see "Nesting" above.
pub const CHILD_MARKER_ENV: &str = "VIBELEARN_LLM_CHILD";

/// Polling period while the command runs: adds at most 10 ms to a call that lasts seconds.
const POLL_INTERVAL: Duration = Duration::from_millis(10);

/// Largest answer kept; the rest is drained so the command never blocks on a full pipe.
const MAX_STDOUT_BYTES: usize = 8 * 1024 * 1024;

/// How much of stderr is kept (its end) and how much of it, or of stdout, goes into a message.
const STDERR_KEEP_BYTES: usize = 16 * 1024;
const STDERR_MESSAGE_CHARS: usize = 500;

/// Runs a command per completion.
#[derive(Clone)]
pub struct CommandProvider {
    invocation: Invocation,
    /// Names the command in messages without quoting it: a command line may hold secrets.
    label: &'static str,
    /// Environment variables the child does not get (the API keys `auto` leaves alone).
    withheld: Vec<&'static str>,
    /// The try `auto` makes before relying on the `claude` CLI, and again while it fails
    /// (SPEC §6.5, `probe`).
    probe: Option<std::sync::Arc<super::probe::CliProbe>>,
}

/// What is run per completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// A command line for the system shell (the user's `VIBELEARN_LLM_COMMAND`).
    Shell(String),
    /// A program and its arguments, run directly (no shell parses a path with spaces).
    Program(PathBuf, Vec<String>),
}

impl CommandProvider {
    /// The `command` provider for `VIBELEARN_LLM_COMMAND`.
    pub fn new(command_line: &str) -> Self {
        CommandProvider {
            invocation: Invocation::Shell(command_line.to_string()),
            label: "VIBELEARN_LLM_COMMAND",
            withheld: Vec::new(),
            probe: None,
        }
    }

    /// The `claude` CLI at `path`, in print mode.
    pub fn claude_cli(path: &Path) -> Self {
        let args = ["-p", "--output-format", "text"].map(String::from).to_vec();
        CommandProvider {
            invocation: Invocation::Program(path.to_owned(), args),
            label: CLAUDE_CLI,
            withheld: Vec::new(),
            probe: None,
        }
    }

    /// The same, run without `names` in its environment: the `claude` CLI that `auto` runs would
    /// otherwise bill an `ANTHROPIC_API_KEY` in the worker's environment instead of the user's
    /// Claude login (`auto` spends no key: `select`).
    pub fn without_env(mut self, names: &[&'static str]) -> Self {
        self.withheld = names.to_vec();
        self
    }

    /// The same, tried (on first need, or by [`Provider::start_check`]) before it is relied on,
    /// and again on a back-off while it fails (`probe`): `auto`'s `claude` CLI, which falls
    /// back to offline while the try fails.
    pub fn tried_first(mut self) -> Self {
        let tried =
            super::probe::CliProbe::new(Box::new(self.clone()), std::sync::Arc::new(crate::clock::SystemMonotonic));
        self.probe = Some(std::sync::Arc::new(tried));
        self
    }

    /// What is run per completion.
    pub fn invocation(&self) -> &Invocation {
        &self.invocation
    }

    fn command(&self) -> Command {
        match &self.invocation {
            Invocation::Shell(line) => crate::platform::shell_command(line),
            Invocation::Program(program, args) => {
                let mut command = crate::platform::command(program);
                command.args(args);
                command
            }
        }
    }
}

/// The label of the `claude` CLI as the provider.
const CLAUDE_CLI: &str = "the claude CLI";

impl Provider for CommandProvider {
    fn name(&self) -> &'static str {
        "command"
    }

    fn description(&self) -> String {
        match self.label {
            CLAUDE_CLI => format!("{CLAUDE_CLI}, its own default model, on your Claude login"),
            label => label.to_owned(),
        }
    }

    fn unavailable(&self) -> Option<String> {
        self.probe.as_ref().and_then(|probe| probe.outcome().err())
    }

    fn known_unavailable(&self) -> Option<String> {
        self.probe.as_ref().and_then(|probe| probe.known()).and_then(Result::err)
    }

    fn start_check(&self) {
        if let Some(probe) = &self.probe {
            probe.start();
        }
    }

    fn complete(&self, request: &LlmRequest, timeout: Duration) -> Result<String, LlmError> {
        let deadline = Instant::now() + timeout;
        let label = self.label;
        let mut command = self.command();
        for name in &self.withheld {
            command.env_remove(name);
        }
        command.env(CHILD_MARKER_ENV, "1").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut tree = crate::platform::spawn_tree(&mut command)
            .map_err(|e| LlmError::Permanent(format!("command: could not start {label}: {e}")))?;
        let child = &mut tree.child;

        let input = match request.system.is_empty() {
            true => request.prompt.clone(),
            false => format!("{}\n\n{}", request.system, request.prompt),
        };
        if let Some(mut stdin) = child.stdin.take() {
            // A command that ignores stdin closes the pipe early; that broken pipe is fine.
            thread::spawn(move || stdin.write_all(input.as_bytes()));
        }
        let stdout = child.stdout.take().map(|s| read_in_thread(s, Keep::Head(MAX_STDOUT_BYTES)));
        let stderr = child.stderr.take().map(|s| read_in_thread(s, Keep::Tail(STDERR_KEEP_BYTES)));

        let timed_out = || {
            LlmError::transient(format!(
                "command: {label} gave no answer within {:.1} s and was killed",
                timeout.as_secs_f64()
            ))
        };
        let Some(status) = wait_until(child, deadline) else {
            tree.kill_tree();
            return Err(timed_out());
        };
        // The shell has exited, but a background child may still hold the pipes open.
        let (Some(stdout), Some(stderr)) = (collect(stdout, deadline), collect(stderr, deadline)) else {
            tree.kill_tree();
            return Err(timed_out());
        };
        interpret(label, status, &stdout, &stderr)
    }
}

fn interpret(label: &str, status: ExitStatus, stdout: &[u8], stderr: &[u8]) -> Result<String, LlmError> {
    let stdout = String::from_utf8_lossy(stdout);
    let stderr = String::from_utf8_lossy(stderr);
    let tail = stderr_tail(&stderr);
    match status.code() {
        Some(0) => {
            let text = stdout.trim().to_string();
            if text.is_empty() {
                return Err(LlmError::Permanent(format!("command: {label} printed nothing{tail}")));
            }
            Ok(text)
        }
        Some(code) if crate::platform::shell_could_not_run(code) => {
            Err(LlmError::Permanent(format!("command: the shell could not find or run {label} (exit {code}){tail}")))
        }
        code => {
            let how = code.map_or("was killed by a signal".to_owned(), |code| format!("exited with {code}"));
            let message = format!("command: {label} {how}{}", output_tails(&stdout, &stderr));
            let said = format!("{stdout}\n{stderr}");
            if account_problem(&said) {
                Err(LlmError::Auth(message))
            } else if network_problem(&said) {
                Err(LlmError::Unreachable(message))
            } else {
                Err(LlmError::transient(message))
            }
        }
    }
}

/// Words with which a model's CLI or API says the account cannot be used as it is: not logged
/// in, a refused key, no credit or quota left, a model it does not know. Retrying cannot help;
/// the user has to act (SPEC §6.5: such a provider pauses like after a 401).
pub(super) fn account_problem(output: &str) -> bool {
    const PHRASES: [&str; 13] = [
        "not logged in",
        "please run /login",
        "invalid api key",
        "authentication_error",
        "credit balance is too low",
        "insufficient credit",
        "insufficient_quota",
        "exceeded your current quota",
        "selected model",
        "model_not_found",
        "unknown model",
        "invalid model",
        "model not found",
    ];
    let output = output.to_lowercase();
    PHRASES.iter().any(|phrase| output.contains(phrase))
        || (output.contains("model") && (output.contains("does not exist") || output.contains("not_found_error")))
}

/// Words with which a model's CLI says it could not reach its API at all (the `claude` CLI is
/// a Node program: `getaddrinfo ENOTFOUND`, `ECONNREFUSED`, "Connection error."). Such a
/// provider pauses and is probed on the back-off, as an HTTP provider's unreachable host is.
pub(super) fn network_problem(output: &str) -> bool {
    const PHRASES: [&str; 7] = [
        "enotfound",
        "econnrefused",
        "enetunreach",
        "eai_again",
        "getaddrinfo",
        "connection error",
        "could not resolve host",
    ];
    let output = output.to_lowercase();
    PHRASES.iter().any(|phrase| output.contains(phrase))
}

/// `": stdout: <tail> · stderr: <tail>"` with whichever of the two said anything.
fn output_tails(stdout: &str, stderr: &str) -> String {
    let parts: Vec<String> = [("stdout", stdout), ("stderr", stderr)]
        .into_iter()
        .filter(|(_, text)| !text.trim().is_empty())
        .map(|(name, text)| format!("{name}: {}", tail_of(text)))
        .collect();
    if parts.is_empty() { String::new() } else { format!(": {}", parts.join(" · ")) }
}

/// `": <last 500 chars of stderr>"`, or nothing when stderr is blank.
fn stderr_tail(stderr: &str) -> String {
    if stderr.trim().is_empty() { String::new() } else { format!(": {}", tail_of(stderr)) }
}

/// The last 500 chars of `text`, trimmed, marked with `…` when cut.
fn tail_of(text: &str) -> String {
    let text = text.trim();
    let skip = text.chars().count().saturating_sub(STDERR_MESSAGE_CHARS);
    let start = text.char_indices().nth(skip).map_or(0, |(i, _)| i);
    let marker = if skip > 0 { "…" } else { "" };
    format!("{marker}{}", clip(&text[start..], STDERR_MESSAGE_CHARS))
}

/// Polls the child until it exits or `deadline` passes (`None`).
fn wait_until(child: &mut Child, deadline: Instant) -> Option<ExitStatus> {
    loop {
        // An error from waitpid is treated like "still running": at the deadline the caller
        // kills and reaps what it can.
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        thread::sleep(POLL_INTERVAL.min(deadline - now));
    }
}

enum Keep {
    /// The first N bytes (the answer; more than that is a runaway command).
    Head(usize),
    /// The last N bytes (stderr, whose end holds the error).
    Tail(usize),
}

/// Reads a pipe to its end on a thread of its own, so stdout and stderr drain together and
/// neither can fill up and block the command.
fn read_in_thread(mut pipe: impl Read + Send + 'static, keep: Keep) -> Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut kept = Vec::new();
        let mut chunk = [0u8; 8192];
        // A read error ends the output like EOF does: the exit status tells what happened.
        while let Ok(n @ 1..) = pipe.read(&mut chunk) {
            match keep {
                Keep::Head(max) => {
                    let room = max.saturating_sub(kept.len());
                    kept.extend_from_slice(&chunk[..n.min(room)]);
                }
                Keep::Tail(max) => {
                    kept.extend_from_slice(&chunk[..n]);
                    if kept.len() > 2 * max {
                        kept.drain(..kept.len() - max);
                    }
                }
            }
        }
        let _ = tx.send(kept);
    });
    rx
}

/// The reader's output, or `None` if the pipe stays open past `deadline`.
fn collect(reader: Option<Receiver<Vec<u8>>>, deadline: Instant) -> Option<Vec<u8>> {
    let Some(reader) = reader else {
        return Some(Vec::new());
    };
    reader.recv_timeout(deadline.saturating_duration_since(Instant::now())).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tail_keeps_the_end() {
        let long = format!("{}END", "x".repeat(1000));
        let tail = stderr_tail(&long);
        assert!(tail.ends_with("END"));
        assert!(tail.chars().count() <= STDERR_MESSAGE_CHARS + 3, "{}", tail.len());
        assert_eq!(stderr_tail("  \n"), "");
    }

    #[test]
    fn account_problems_are_told_from_failures_worth_a_retry() {
        for said in [
            "Not logged in · Please run /login",
            "Invalid API key · Please run /login",
            "Credit balance is too low",
            "There's an issue with the selected model (claude-nope). It may not exist or you may not have access to it.",
            r#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}"#,
        ] {
            assert!(account_problem(said), "{said}");
        }
        for said in ["connection reset by peer", "API Error: 529 Overloaded", "Request timed out", ""] {
            assert!(!account_problem(said), "{said}");
        }
    }

    #[test]
    fn a_cli_that_cannot_reach_its_api_is_told_from_one_that_failed_otherwise() {
        for said in ["API Error: Connection error.", "getaddrinfo ENOTFOUND api.anthropic.com", "connect ECONNREFUSED"]
        {
            assert!(network_problem(said), "{said}");
        }
        for said in ["API Error: 529 Overloaded", "Request timed out", "Not logged in · Please run /login", ""] {
            assert!(!network_problem(said), "{said}");
        }
    }

    #[test]
    fn output_tails_name_both_streams() {
        assert_eq!(output_tails("Not logged in\n", " "), ": stdout: Not logged in");
        assert_eq!(output_tails("a", "b"), ": stdout: a · stderr: b");
        assert_eq!(output_tails("", ""), "");
    }

    #[test]
    fn the_claude_cli_runs_without_a_shell() {
        let p = CommandProvider::claude_cli(Path::new("/opt/it's here/claude"));
        let args = ["-p", "--output-format", "text"].map(String::from).to_vec();
        assert_eq!(p.invocation(), &Invocation::Program(PathBuf::from("/opt/it's here/claude"), args));
    }
}
