//! One LLM exchange for a job: the call bounded by the job's remaining time, the answer parsed
//! and validated by the caller's function, one repair round-trip on an invalid answer, and the
//! provider's errors mapped onto the queue's outcomes (SPEC §5.3, §6.3): a refused account and
//! an unreachable host pause the provider's gate; a transient failure is retried; anything
//! else is dead.

use std::time::Duration;

use super::llm_usage::Budget;
use crate::llm::{LlmError, LlmRequest, Provider, SelectError, Selected};
use crate::queue::{CancelToken, ClaimedJob, Outcome};

/// The provider an LLM step uses and the session it is for, or the outcome when either is
/// missing: a missing key is a refusal (the provider's gate pauses until credentials appear),
/// any other setting mistake is dead. A `claude` CLI that `auto` found but that failed its
/// last try gives offline instead (tried again on a back-off: `llm::probe`).
pub fn provider_and_session<'a>(
    choice: &'a Result<Selected, SelectError>,
    job: &ClaimedJob,
) -> Result<(&'a Selected, String), Outcome> {
    let selected = match choice {
        Ok(selected) => selected.usable(),
        Err(problem @ SelectError::MissingKey { .. }) => {
            return Err(Outcome::Refused { error: format!("{}: {problem}", super::AUTH_ERROR_PREFIX) });
        }
        Err(problem) => return Err(Outcome::dead(problem.to_string())),
    };
    Ok((selected, super::session_id_of(job)?))
}

/// What bounds a job's LLM calls: the time one call may take, and the day's token budget.
#[derive(Clone)]
pub struct Limits {
    /// `VIBELEARN_LLM_TIMEOUT_SECS`, cut to what is left of the job's time.
    pub timeout: Duration,
    pub budget: Budget,
}

/// Leaves this much of the job's time for storing results after the last call.
const STORE_MARGIN: Duration = Duration::from_secs(2);

/// Asks `provider` and validates with `accept`; on a rejected answer, asks once more with the
/// rejection reason. `Err` is the job's outcome (retry or dead), never a fake success.
pub fn ask_with_repair<T>(
    provider: &dyn Provider,
    request: &LlmRequest,
    limits: &Limits,
    cancel: &CancelToken,
    accept: impl Fn(&str) -> Result<T, String>,
) -> Result<T, Outcome> {
    let first = complete(provider, request, limits, cancel)?;
    let reason = match accept(&first) {
        Ok(value) => return Ok(value),
        Err(reason) => reason,
    };
    log::info!(target: "llm", "{} answer rejected ({reason}); asking for a repair", provider.name());
    let repair = LlmRequest {
        system: request.system.clone(),
        prompt: format!(
            "{}\n\nYour previous answer was:\n{}\n\nIt was rejected because: {reason}\n\
             Return only the corrected JSON object, with no prose around it.",
            request.prompt,
            truncate(&first, 20_000)
        ),
        max_tokens: request.max_tokens,
    };
    let second = complete(provider, &repair, limits, cancel)?;
    accept(&second).map_err(|reason| {
        Outcome::dead(format!(
            "the {} answer did not match the expected JSON after one repair: {reason}",
            provider.name()
        ))
    })
}

fn complete(
    provider: &dyn Provider,
    request: &LlmRequest,
    limits: &Limits,
    cancel: &CancelToken,
) -> Result<String, Outcome> {
    // Spent: no call. A refusal pauses the provider's gate, which lifts the next day.
    limits.budget.check().map_err(|error| Outcome::Refused { error })?;
    let time = limits.timeout.min(cancel.remaining().saturating_sub(STORE_MARGIN));
    if time.is_zero() {
        return Err(Outcome::retry("no time left in this attempt for an LLM call"));
    }
    // Name the provider once, whether or not its own message already does.
    let named = |message: String| {
        if message.starts_with(provider.name()) { message } else { format!("{}: {message}", provider.name()) }
    };
    let answer = provider.complete_counted(request, time).map_err(|e| match e {
        LlmError::Transient { message, retry_after } => Outcome::Retry { error: named(message), after: retry_after },
        LlmError::Auth(message) => {
            Outcome::Refused { error: format!("{}: {}", super::AUTH_ERROR_PREFIX, named(message)) }
        }
        // Not reachable at all: retries would fail within seconds and leave a dead job no one
        // is told of; a refusal pauses the provider, which is probed on the back-off (issue 42).
        LlmError::Unreachable(message) => {
            Outcome::Refused { error: format!("{}: {}", super::UNREACHABLE_ERROR_PREFIX, named(message)) }
        }
        LlmError::Permanent(message) => Outcome::dead(named(message)),
    })?;
    limits.budget.record(provider.name(), answer.tokens);
    Ok(answer.text)
}

fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
