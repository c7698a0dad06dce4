//! LLM providers: one completion call behind the [`Provider`] trait, its failures classified
//! once into [`LlmError`] (SPEC §5.3, §6.5).
//!
//! - `error` — `LlmError`, `Retry-After` parsing, key redaction.
//! - `transport` — the ureq POST shared by the HTTP providers: timeouts, status classification.
//! - `anthropic`, `openai` (also OpenRouter and local OpenAI-compatible servers), `gemini` — one
//!   file per wire format: build the request body, read the answer's text.
//! - `command` — a shell command (or the `claude` CLI) as the model; killed at the timeout.
//! - `select` — settings → the provider to use: the rule that a key is spent only on the
//!   provider named for VibeLearn, `auto`'s `claude` CLI or offline, missing keys.
//! - `probe` — the try of the `claude` CLI that `auto` makes before relying on it, and again
//!   on a back-off while it fails.
//!
//! Providers only return text: asking for and validating the JSON of Appendix A.6 (and
//! stripping a Markdown fence) is the caller's job, so nothing here knows about concepts or
//! questions. `tests` holds the one suite every HTTP provider passes against a local fake server.

mod anthropic;
mod command;
mod error;
mod gemini;
/// The deterministic offline provider (§6.5); `select` returns `Selected::Offline` for it.
pub mod offline;
mod openai;
pub mod probe;
mod select;
mod transport;

#[cfg(test)]
mod tests;

use std::time::Duration;

pub use crate::remote::MAX_RETRY_AFTER;
pub use anthropic::Anthropic;
pub use command::{CHILD_MARKER_ENV, CommandProvider};
pub use error::LlmError;
pub use gemini::Gemini;
pub use openai::{OPENAI_DEFAULT_BASE_URL, OpenAiCompatible};
pub use select::{
    CHOSEN_BY_CLI, CHOSEN_BY_DEFAULT, CHOSEN_IN_ENV, CHOSEN_IN_FILE, ProviderSettings, SelectError, Selected, select,
};

/// One completion request: the same for every provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LlmRequest {
    /// Instructions (role, output format); sent as the provider's system prompt.
    pub system: String,
    /// The user message: the session material to work on.
    pub prompt: String,
    /// Upper bound on the answer's length in tokens.
    pub max_tokens: u32,
}

/// An answer and what it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub text: String,
    /// Tokens billed, input and output: as the provider reported them, or estimated at four
    /// bytes a token when it reports none (the `command` provider).
    pub tokens: u64,
}

impl Completion {
    /// `text` with its tokens as the provider reported them, or estimated.
    pub fn new(request: &LlmRequest, text: String, reported: Option<u64>) -> Completion {
        let estimate = || ((request.system.len() + request.prompt.len() + text.len()) as u64).div_ceil(4);
        Completion { tokens: reported.unwrap_or_else(estimate), text }
    }
}

/// A model that answers one prompt. Shared across runner threads, hence `Send + Sync`;
/// implementations hold no per-call state.
pub trait Provider: Send + Sync {
    /// The `VIBELEARN_PROVIDER` value this provider serves (`anthropic`, `openai`, …); auth
    /// pauses and status lines are keyed by it.
    fn name(&self) -> &'static str;

    /// One completion; must return within `timeout` (connect + whole call).
    fn complete(&self, request: &LlmRequest, timeout: Duration) -> Result<String, LlmError>;

    /// The same, with what it cost: what the daily budget counts (SPEC §6.5). Providers whose
    /// API reports usage override it; the others are estimated.
    fn complete_counted(&self, request: &LlmRequest, timeout: Duration) -> Result<Completion, LlmError> {
        self.complete(request, timeout).map(|text| Completion::new(request, text, None))
    }

    /// The model asked, for `vl status` ("" when the provider does not say, as the `claude`
    /// CLI does not: it uses its own default).
    fn model(&self) -> &str {
        ""
    }

    /// What it runs, for people, when there is no model name to show.
    fn description(&self) -> String {
        self.name().to_owned()
    }

    /// Why this provider must not be used, if a check made before relying on it failed (the
    /// `claude` CLI `auto` found: SPEC §6.5). Runs the check if it has not run yet.
    fn unavailable(&self) -> Option<String> {
        None
    }

    /// The same, but only if the check has finished: never waits (for `/api/health`).
    fn known_unavailable(&self) -> Option<String> {
        None
    }

    /// Starts the check in the background, if the provider has one.
    fn start_check(&self) {}
}
