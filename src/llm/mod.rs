//! LLM providers: one completion call behind the [`Provider`] trait, its failures classified
//! once into [`LlmError`] (SPEC §5.3, §6.5).
//!
//! - `error` — `LlmError`, `Retry-After` parsing, key redaction.
//! - `transport` — the ureq POST shared by the HTTP providers: timeouts, status classification.
//! - `anthropic`, `openai` (also OpenRouter and local OpenAI-compatible servers), `gemini` — one
//!   file per wire format: build the request body, read the answer's text.
//! - `command` — a shell command (or the `claude` CLI) as the model; killed at the timeout.
//! - `select` — settings → the provider to use (`auto` order, missing keys).
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
pub use select::{ProviderSettings, SelectError, Selected, select};

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

/// A model that answers one prompt. Shared across runner threads, hence `Send + Sync`;
/// implementations hold no per-call state.
pub trait Provider: Send + Sync {
    /// The `VIBELEARN_PROVIDER` value this provider serves (`anthropic`, `openai`, …); auth
    /// pauses and status lines are keyed by it.
    fn name(&self) -> &'static str;

    /// One completion; must return within `timeout` (connect + whole call).
    fn complete(&self, request: &LlmRequest, timeout: Duration) -> Result<String, LlmError>;
}
