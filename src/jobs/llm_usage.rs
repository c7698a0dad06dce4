//! What the worker's LLM calls cost today, and the daily token budget (SPEC §6.5,
//! `VIBELEARN_LLM_DAILY_TOKENS`): every answered call is counted in `llm_usage` as soon as it
//! returns (through the writer, so a job that then fails still counts what it spent), and a
//! call is not made once today's tokens reached the budget — the job is refused, which pauses
//! the provider's gate with the reason. The gate's version carries the day, so the pause lifts
//! by itself when the learner's next day begins (`learn::day`: local, at
//! `VIBELEARN_DAY_STARTS_AT`); `vl jobs resume` lifts it at once and grants another
//! budget's worth for the rest of the day ([`resume`]).
//!
//! What a session costs ([`session_cost`], for `vl status` and `vl install`, issue 43 §5): an
//! analysed session makes two calls (concepts, then questions), each prompt bounded
//! (`prompts::PROMPT_BYTES`) and each answer capped; so a large session costs at most
//! [`SESSION_TOKENS`], and the default budget ([`DEFAULT_DAILY_TOKENS`]) fits a working day of them.

use rusqlite::{Connection, params};

use crate::clock::Millis;
use crate::learn::day::LearnerDay;
use crate::queue::{Durability, Queue};

/// Bytes of prompt a token stands for, about (English prose and code both run ~3.5–4.5).
pub const BYTES_PER_TOKEN: u64 = 4;
/// LLM calls one analysed session makes when no answer needs a repair.
pub const CALLS_PER_SESSION: u64 = 2;
/// The most one analysed session costs without a repair, in tokens: both prompts at their bound
/// and both answers at their cap (~41,000; issue 43 measured ~30,000 for large sessions).
pub const SESSION_TOKENS: u64 = 2 * super::prompts::PROMPT_BYTES as u64 / BYTES_PER_TOKEN
    + super::prompts::CONCEPTS_ANSWER_TOKENS as u64
    + super::prompts::QUESTIONS_ANSWER_TOKENS as u64;
/// Large sessions analysed in a working day that the default budget fits: one every 20 minutes
/// for 8 hours (the Stop hook analyses again each turn that wrote code, so a long session
/// counts more than once).
pub const WORKING_DAY_SESSIONS: u64 = 24;
/// `VIBELEARN_LLM_DAILY_TOKENS`'s default: a working day of large sessions at their bound,
/// rounded up (was 200,000, about six large sessions).
pub const DEFAULT_DAILY_TOKENS: u64 = (WORKING_DAY_SESSIONS * SESSION_TOKENS).div_ceil(100_000) * 100_000;
// It fits the working day, and not far past it.
const _: () = assert!(DEFAULT_DAILY_TOKENS / SESSION_TOKENS >= WORKING_DAY_SESSIONS);
const _: () = assert!(DEFAULT_DAILY_TOKENS < (WORKING_DAY_SESSIONS + 3) * SESSION_TOKENS);

/// What a session costs in tokens, said in one line: the bound, today's measured cost per
/// session when calls were made today (`usage`, [`CALLS_PER_SESSION`] calls a session), and
/// how many sessions at the bound `daily_tokens` fits (0: no budget).
pub fn session_cost(usage: Usage, daily_tokens: u64) -> String {
    let mut line = format!("a session costs up to ~{} tokens (its two prompts and answers)", thousands(SESSION_TOKENS));
    if let Some(per_call) = usage.tokens.checked_div(usage.calls) {
        line.push_str(&format!(", ~{} as measured today", thousands(per_call * CALLS_PER_SESSION)));
    }
    match daily_tokens {
        0 => line.push_str("; no daily budget"),
        budget => {
            let fits = budget / SESSION_TOKENS;
            let sessions = if fits == 1 { "1 session".to_owned() } else { format!("{fits} sessions") };
            line.push_str(&format!("; the daily budget of {} fits {sessions} at that", thousands(budget)));
        }
    }
    line
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Today's calls and tokens, all providers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Usage {
    pub calls: u64,
    pub tokens: u64,
}

/// Today's tokens counted against the budget: those since the last resume today, if any.
fn spent_today(conn: &Connection, day: &LearnerDay, now: Millis) -> rusqlite::Result<u64> {
    let used = today(conn, day, now)?;
    let baseline: i64 = conn
        .prepare_cached("SELECT COALESCE(MAX(tokens), 0) FROM llm_budget_resets WHERE day = ?1")?
        .query_row([day.day_of(now)], |r| r.get(0))?;
    Ok(used.tokens.saturating_sub(baseline.max(0) as u64))
}

/// Resumes the paused provider `provider` (or every one), as the queue does, and measures the
/// rest of today's budget from now: resuming after the budget was spent means "go on".
///
/// The budget is reset first: the resume makes the held jobs claimable in its own commit, and
/// a job claimed between the two commits found the budget still spent and was refused again,
/// dead (seen under load in `budget::the_daily_token_budget_pauses_the_provider_and_resume_lets_it_go_on`).
/// A reset whose resume then fails only counts today's budget from now, while the provider
/// stays paused.
pub fn resume(
    queue: &Queue,
    day: &LearnerDay,
    provider: Option<String>,
) -> Result<crate::queue::Resumed, crate::queue::QueueError> {
    let day = day.clone();
    queue.writer().call(true, Durability::Durable, move |conn, now| {
        let used = today(conn, &day, now)?;
        conn.prepare_cached(
            "INSERT INTO llm_budget_resets (day, tokens) VALUES (?1, ?2)              ON CONFLICT (day) DO UPDATE SET tokens = excluded.tokens",
        )?
        .execute(params![day.day_of(now), i64::try_from(used.tokens).unwrap_or(i64::MAX)])?;
        Ok(())
    })?;
    queue.resume(provider)
}

/// Today's usage as of `now`.
pub fn today(conn: &Connection, day: &LearnerDay, now: Millis) -> rusqlite::Result<Usage> {
    conn.prepare_cached("SELECT COALESCE(SUM(calls), 0), COALESCE(SUM(tokens), 0) FROM llm_usage WHERE day = ?1")?
        .query_row([day.day_of(now)], |r| {
            Ok(Usage { calls: r.get::<_, i64>(0)?.max(0) as u64, tokens: r.get::<_, i64>(1)?.max(0) as u64 })
        })
}

/// The budget a job checks before each call. `daily_tokens == 0` means no budget.
#[derive(Clone)]
pub struct Budget {
    pub queue: Queue,
    pub daily_tokens: u64,
    /// The days the budget resets on.
    pub day: LearnerDay,
}

impl Budget {
    /// `Err` with the refusal's reason when today's tokens reached the budget.
    pub fn check(&self) -> Result<(), String> {
        if self.daily_tokens == 0 {
            return Ok(());
        }
        let spent =
            self.queue.read().and_then(|conn| Ok(spent_today(&conn, &self.day, self.queue.now())?)).unwrap_or(0);
        if spent < self.daily_tokens {
            return Ok(());
        }
        Err(format!(
            "{} {spent} LLM tokens today reached the daily budget (VIBELEARN_LLM_DAILY_TOKENS={}); \
             calls resume when your next day begins or with `vl jobs resume`",
            BUDGET_REASON_PREFIX, self.daily_tokens
        ))
    }

    /// Counts one answered call. A failure to count is logged, never the job's failure.
    pub fn record(&self, provider: &str, tokens: u64) {
        let provider = provider.to_owned();
        let tokens = i64::try_from(tokens).unwrap_or(i64::MAX);
        let day = self.day.clone();
        let counted = self.queue.writer().call(false, Durability::Relaxed, move |conn, now| {
            conn.prepare_cached(
                "INSERT INTO llm_usage (day, provider, calls, tokens) VALUES (?1, ?2, 1, ?3) \
                 ON CONFLICT (day, provider) DO UPDATE SET calls = calls + 1, tokens = tokens + excluded.tokens",
            )?
            .execute(params![day.day_of(now), provider, tokens])?;
            Ok(())
        });
        if let Err(e) = counted {
            log::warn!(target: "llm", "could not count an LLM call's tokens: {e}");
        }
    }
}

/// How a budget refusal's reason starts (the notices tell it from a refused key).
pub const BUDGET_REASON_PREFIX: &str = "budget spent:";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_costs_its_two_prompts_and_answers_and_the_default_budget_fits_a_working_day() {
        assert_eq!(SESSION_TOKENS, 2 * 61 * 1024 / 4 + 4_000 + 6_000);
        assert_eq!(DEFAULT_DAILY_TOKENS, 1_000_000);
        let default = crate::config::DEFAULTS.iter().find(|(k, _)| *k == "VIBELEARN_LLM_DAILY_TOKENS");
        assert_eq!(default.map(|d| d.1.to_owned()), Some(DEFAULT_DAILY_TOKENS.to_string()), "one default");
        // The old default paused the provider after six large sessions of ~30,000 (issue 43).
        assert_eq!((200_000 / 30_000, DEFAULT_DAILY_TOKENS / 30_000), (6, 33));
    }

    #[test]
    fn the_cost_line_says_the_bound_the_measured_cost_and_what_the_budget_fits() {
        let none = Usage::default();
        assert_eq!(
            session_cost(none, 1_000_000),
            "a session costs up to ~41,232 tokens (its two prompts and answers); \
             the daily budget of 1,000,000 fits 24 sessions at that"
        );
        let today = Usage { calls: 4, tokens: 50_000 };
        let line = session_cost(today, 0);
        assert!(line.contains("~25,000 as measured today") && line.ends_with("; no daily budget"), "{line}");
        assert!(session_cost(none, 50_000).ends_with("fits 1 session at that"));
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(12_345_678), "12,345,678");
    }
}
