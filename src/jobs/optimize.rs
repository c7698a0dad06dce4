//! The `optimize_scheduler` job (SPEC §7): re-fits FSRS's parameters to the learner's whole
//! review log, weekly, and only with at least `learn::fit::MIN_REVIEWS` reviews; below that
//! the defaults stand (the job succeeds saying so). The fit is pure (`learn::fit`); the
//! parameters are stored by the job's effects in `scheduler_parameters`, which `vl quiz`
//! reads at the start of each sitting.
//!
//! # Weekly
//! The queue has no cron, and adding one would teach it about time tables; a job parked a
//! week ahead would also sit in every queue listing and keep the queue from ever draining.
//! Instead every `analyze_quiz` success asks for a fit when one is due: at least
//! `MIN_REVIEWS` reviews on record and no *attempt* in the last [`EVERY_MS`], fitted or not
//! (a unique key, [`UNIQUE_KEY`], makes a second ask while one waits a dedup). Every run
//! records its outcome in `scheduler_fit_attempts`: "fitted", or why not (too few reviews for
//! FSRS, no usable item, FSRS's error). A fit that fails is recorded and succeeds as a job, so
//! it is neither re-queued after every quiz job nor re-created dead; it is tried again a week
//! later, on a larger log.
//!
//! The fit counts elapsed days as the scheduler does: the learner's days (`learn::day`). A learner who stops coding
//! also stops being re-fitted, which costs nothing: the reviews since the last fit wait for
//! the next session.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::json;

use crate::clock::Millis;
use crate::learn::day::LearnerDay;
use crate::learn::fit::{self, CardHistory};
use crate::learn::schedule::{DAY_MS, Rating};
use crate::queue::{CancelToken, ClaimedJob, Handler, NewJob, Outcome, Queue, UniqueScope};

/// The unique key of the waiting job.
pub const UNIQUE_KEY: &str = "optimize_scheduler";
/// How often the parameters are re-fitted.
pub const EVERY_MS: Millis = 7 * DAY_MS;

pub struct OptimizeHandler {
    pub queue: Queue,
    /// The learner's days, as the scheduler counts them.
    pub day: LearnerDay,
}

/// A fit, to run now.
pub fn job() -> NewJob {
    NewJob::new(super::OPTIMIZE_SCHEDULER, json!({}), 3).unique(UNIQUE_KEY, UniqueScope::Waiting)
}

/// Asks for a fit when one is due (module doc). Runs in the effects of the job that calls it,
/// inside the writer's transaction.
pub fn schedule(conn: &Connection, now: Millis) -> rusqlite::Result<()> {
    let reviews: i64 = conn.prepare_cached("SELECT COUNT(*) FROM review_log")?.query_row([], |r| r.get(0))?;
    if usize::try_from(reviews).unwrap_or(0) < fit::MIN_REVIEWS {
        return Ok(());
    }
    let last: Option<Millis> = conn
        .prepare_cached(
            "SELECT MAX(at) FROM (SELECT fitted_at AS at FROM scheduler_parameters \
             UNION ALL SELECT attempted_at FROM scheduler_fit_attempts)",
        )?
        .query_row([], |r| r.get(0))
        .optional()?
        .flatten();
    if last.is_some_and(|at| now.saturating_sub(at) < EVERY_MS) {
        return Ok(());
    }
    crate::queue::store::enqueue(conn, job().prepare(), now)?;
    Ok(())
}

/// Every card's answers from the review log, oldest first.
fn histories(conn: &Connection) -> rusqlite::Result<Vec<CardHistory>> {
    let mut stmt = conn.prepare_cached(
        "SELECT question_id, rating, created_at FROM review_log ORDER BY question_id, created_at, id",
    )?;
    let mut cards: Vec<CardHistory> = Vec::new();
    let mut current: Option<String> = None;
    for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)))? {
        let (id, rating, at) = row?;
        let Some(rating) = Rating::from_number(rating) else { continue };
        if current.as_deref() != Some(id.as_str()) {
            cards.push(Vec::new());
            current = Some(id);
        }
        if let Some(card) = cards.last_mut() {
            card.push((rating, at));
        }
    }
    Ok(cards)
}

/// Records the outcome of a run (module doc), inside the writer's transaction.
fn record_attempt(conn: &Connection, now: Millis, reviews: usize, outcome: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO scheduler_fit_attempts (id, attempted_at, reviews, outcome) VALUES (1, ?1, ?2, ?3) \
         ON CONFLICT (id) DO UPDATE SET attempted_at = excluded.attempted_at, reviews = excluded.reviews, \
         outcome = excluded.outcome",
    )?
    .execute(params![now, reviews as i64, outcome])?;
    Ok(())
}

impl Handler for OptimizeHandler {
    fn run(&self, _job: &ClaimedJob, _cancel: &CancelToken) -> Outcome {
        let cards = match self.queue.read().and_then(|conn| Ok(histories(&conn)?)) {
            Ok(cards) => cards,
            Err(e) => return Outcome::retry(e.to_string()),
        };
        let reviews: usize = cards.iter().map(Vec::len).sum();
        match fit::fit(&cards, &self.day) {
            Ok(parameters) => {
                let stored = serde_json::to_string(&parameters).unwrap_or_else(|_| "[]".into());
                Outcome::Succeeded {
                    result: Some(json!({"fitted": true, "reviews": reviews, "parameters": parameters})),
                    effects: Some(Box::new(move |conn, now| {
                        conn.prepare_cached(
                            "INSERT INTO scheduler_parameters (id, parameters, reviews, fitted_at) VALUES (1, ?1, ?2, ?3) \
                             ON CONFLICT (id) DO UPDATE SET parameters = excluded.parameters, reviews = excluded.reviews, \
                             fitted_at = excluded.fitted_at",
                        )?
                        .execute(params![stored, reviews as i64, now])?;
                        Ok(record_attempt(conn, now, reviews, "fitted")?)
                    })),
                }
            }
            Err(e) => {
                // Too few reviews, no usable item, or FSRS's own error: the defaults (or the last
                // fit) stand, the reason is kept, and the next try is a week away.
                let reason = e.to_string();
                let stored = reason.clone();
                Outcome::Succeeded {
                    result: Some(json!({"fitted": false, "reviews": reviews, "reason": reason})),
                    effects: Some(Box::new(move |conn, now| Ok(record_attempt(conn, now, reviews, &stored)?))),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Millis = 1_780_000_000_000;

    fn optimize_jobs(conn: &Connection) -> i64 {
        conn.query_row("SELECT COUNT(*) FROM jobs WHERE kind = 'optimize_scheduler'", [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn a_run_that_could_not_fit_is_recorded_and_not_asked_again_within_the_week() {
        let (_dir, conn) = crate::db::testing::with(crate::db::testing::SESSION_AND_CONCEPT);
        conn.execute_batch(
            "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, question, explanation, tags,
               text_hash, created_at) VALUES ('q', 'c', 's', 'true_false', 'mid', 'q', 'e', '[]', 'h', 1);",
        )
        .unwrap();
        // 70 reviews, all on one day: enough rows, but no item FSRS can learn from.
        for i in 0..70 {
            conn.execute(
                "INSERT INTO review_log (question_id, rating, state_before, elapsed_days, scheduled_days, stability, \
                 difficulty, created_at) VALUES ('q', 3, 'review', 0, 1, 1, 5, ?1)",
                [NOW + i * 1000],
            )
            .unwrap();
        }
        schedule(&conn, NOW).unwrap();
        assert_eq!(optimize_jobs(&conn), 1, "due: asked for");
        let cards = histories(&conn).unwrap();
        let why = fit::fit(&cards, &LearnerDay::default()).unwrap_err().to_string();
        // What the job's effects do with the failure: record it; the job itself succeeds.
        record_attempt(&conn, NOW, 70, &why).unwrap();
        conn.execute("UPDATE jobs SET state = 'succeeded', finished_at = ?1", [NOW]).unwrap();
        let outcome: String = conn.query_row("SELECT outcome FROM scheduler_fit_attempts", [], |r| r.get(0)).unwrap();
        assert!(outcome.contains("no item"), "{outcome}");
        for later in [NOW + 60_000, NOW + 6 * DAY_MS] {
            schedule(&conn, later).unwrap();
            assert_eq!(optimize_jobs(&conn), 1, "not asked again before the week is over");
        }
        schedule(&conn, NOW + EVERY_MS).unwrap();
        assert_eq!(optimize_jobs(&conn), 2, "a week after the attempt it is tried again");
    }
}
