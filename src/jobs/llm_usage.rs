//! What the worker's LLM calls cost today, and the daily token budget (SPEC §6.5,
//! `VIBELEARN_LLM_DAILY_TOKENS`): every answered call is counted in `llm_usage` as soon as it
//! returns (through the writer, so a job that then fails still counts what it spent), and a
//! call is not made once today's tokens reached the budget — the job is refused, which pauses
//! the provider's gate with the reason. The gate's version carries the day, so the pause lifts
//! by itself when the learner's next day begins (`learn::day`: local, at
//! `VIBELEARN_DAY_STARTS_AT`); `vl jobs resume` lifts it at once and grants another
//! budget's worth for the rest of the day ([`resume`]).

use rusqlite::{Connection, params};

use crate::clock::Millis;
use crate::learn::day::LearnerDay;
use crate::queue::{Durability, Queue};

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
pub fn resume(
    queue: &Queue,
    day: &LearnerDay,
    provider: Option<String>,
) -> Result<crate::queue::Resumed, crate::queue::QueueError> {
    let resumed = queue.resume(provider)?;
    let day = day.clone();
    queue.writer().call(true, Durability::Durable, move |conn, now| {
        let used = today(conn, &day, now)?;
        conn.prepare_cached(
            "INSERT INTO llm_budget_resets (day, tokens) VALUES (?1, ?2)              ON CONFLICT (day) DO UPDATE SET tokens = excluded.tokens",
        )?
        .execute(params![day.day_of(now), i64::try_from(used.tokens).unwrap_or(i64::MAX)])?;
        Ok(())
    })?;
    Ok(resumed)
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
