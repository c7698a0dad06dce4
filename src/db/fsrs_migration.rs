//! The one-off of migration 0011 (SPEC §7, issue 25): every existing card's SM-2 schedule is
//! replaced by the FSRS state its answer history gives, replayed through
//! [`learn::schedule`](crate::learn::schedule) — not guessed from the SM-2 numbers — and each
//! replayed answer becomes a `review_log` row, so the history FSRS fits starts complete.
//!
//! A card with an SM-2 schedule but no answer on record (its attempts were deleted by hand)
//! is converted from its ease and interval instead (`memory_from_sm2`, as Anki does for cards
//! with an incomplete history). Runs inside the migration's exclusive transaction, with the
//! default parameters and settings: the user's own exist only after this step. The days are
//! the learner's at the default rollover (the system zone, 04:00), as the quiz counts them, not
//! UTC days: a migration has no settings to read, and a review is due from a day's start.

use rusqlite::{Connection, params};

use crate::learn::schedule::{self, Card, CardState, DAY_MS, Rating, Scheduler};

/// Tag a leech carries (SPEC §7).
pub const LEECH_TAG: &str = "leech";

/// Replays every card's history; returns how many cards it rescheduled.
pub fn replay_history(conn: &Connection) -> rusqlite::Result<usize> {
    use crate::learn::day::{DEFAULT_STARTS_AT, LearnerDay};
    let scheduler = Scheduler::default().with_day(LearnerDay::new(jiff::tz::TimeZone::system(), DEFAULT_STARTS_AT));
    let ids: Vec<String> = conn
        .prepare("SELECT DISTINCT question_id FROM quiz_attempts ORDER BY question_id")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut attempts_of = conn
        .prepare("SELECT id, quality, created_at FROM quiz_attempts WHERE question_id = ?1 ORDER BY created_at, id")?;
    for id in &ids {
        let rows: Vec<(i64, i64, i64)> =
            attempts_of.query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<Result<_, _>>()?;
        let answers: Vec<(Rating, i64)> =
            rows.iter().map(|(_, quality, at)| (Rating::from_sm2_quality(*quality), *at)).collect();
        let (card, log) = schedule::replay(&scheduler, &answers);
        for ((attempt_id, _, at), reviewed) in rows.iter().zip(&log) {
            insert_review_log(conn, id, Some(*attempt_id), &reviewed.log, None, *at)?;
        }
        let leech = card.lapses >= scheduler.leech_threshold();
        save_card(conn, id, &card, leech)?;
    }
    let converted = convert_unrecorded(conn, &scheduler)?;
    Ok(ids.len() + converted)
}

/// Cards with an SM-2 interval and no recorded answer.
fn convert_unrecorded(conn: &Connection, scheduler: &Scheduler) -> rusqlite::Result<usize> {
    let cards: Vec<(String, f64, i64, i64)> = conn
        .prepare(
            "SELECT id, ease, interval_days, due_at FROM questions q WHERE interval_days > 0 AND due_at IS NOT NULL \
             AND NOT EXISTS (SELECT 1 FROM quiz_attempts a WHERE a.question_id = q.id)",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<Result<_, _>>()?;
    for (id, ease, interval, due_at) in &cards {
        let Some(memory) = scheduler.memory_from_sm2(*ease, *interval as f64) else { continue };
        let card = Card {
            state: CardState::Review,
            memory: Some(memory),
            due_at: Some(*due_at),
            last_review_at: Some(due_at.saturating_sub(interval.saturating_mul(DAY_MS))),
            reps: 1,
            ..Card::default()
        };
        save_card(conn, id, &card, false)?;
    }
    Ok(cards.len())
}

/// Writes a card's schedule; a leech is also tagged and suspended.
pub fn save_card(conn: &Connection, id: &str, card: &Card, leech: bool) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "UPDATE questions SET card_state = ?2, learning_step = ?3, stability = ?4, fsrs_difficulty = ?5, \
         last_review_at = ?6, reps = ?7, lapses = ?8, due_at = ?9 WHERE id = ?1",
    )?
    .execute(params![
        id,
        card.state.as_str(),
        card.step,
        card.memory.map(|m| m.stability),
        card.memory.map(|m| m.difficulty),
        card.last_review_at,
        card.reps,
        card.lapses,
        card.due_at
    ])?;
    if leech {
        tag_leech(conn, id)?;
    }
    Ok(())
}

/// Tags a card `leech` (once) and suspends it.
pub fn tag_leech(conn: &Connection, id: &str) -> rusqlite::Result<()> {
    let tags: Option<String> =
        conn.prepare_cached("SELECT tags FROM questions WHERE id = ?1")?.query_row([id], |r| r.get(0))?;
    let mut list: Vec<String> = tags.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
    if !list.iter().any(|t| t == LEECH_TAG) {
        list.push(LEECH_TAG.to_owned());
    }
    conn.prepare_cached("UPDATE questions SET tags = ?2, suspended = 1 WHERE id = ?1")?
        .execute(params![id, serde_json::to_string(&list).unwrap_or_else(|_| "[\"leech\"]".into())])?;
    Ok(())
}

/// One row of `review_log` (SPEC §7): what the quiz writes for each answer, and what the
/// migration writes when it replays an answer history (without a duration).
pub fn insert_review_log(
    conn: &Connection,
    question_id: &str,
    attempt_id: Option<i64>,
    log: &crate::learn::schedule::LogEntry,
    duration_ms: Option<i64>,
    at: i64,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO review_log (question_id, attempt_id, rating, state_before, elapsed_days, scheduled_days, \
         stability, difficulty, duration_ms, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        question_id,
        attempt_id,
        log.rating.number(),
        log.state_before.as_str(),
        log.elapsed_days,
        log.scheduled_days,
        log.stability,
        log.difficulty,
        duration_ms,
        at
    ])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::schedule::MINUTE_MS;

    const T0: i64 = 1_780_000_000_000;

    #[test]
    fn migrating_replays_each_cards_answers_and_converts_cards_without_history() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = crate::db::open(&dir.path().join("t.db"), crate::db::Synchronous::Normal).unwrap();
        let before = crate::db::migrate::MIGRATIONS.iter().position(|(_, name, _)| *name == "0014_fsrs_review_log");
        for (version, _, sql) in &crate::db::migrate::MIGRATIONS[..before.unwrap()] {
            conn.execute_batch(sql).unwrap();
            conn.pragma_update(None, "user_version", version).unwrap();
        }
        conn.execute_batch(
            "INSERT INTO sessions (id, project, started_at, updated_at) VALUES ('s', 'p', 1, 1);
             INSERT INTO concepts (id, session_id, name, normalized_name, category, difficulty, source_file, snippet,
               why_it_matters, confidence, created_at, updated_at) VALUES ('c', 's', 'C', 'c', 'general', 'mid', 'a.py',
               'x', 'y', 0.9, 1, 1);",
        )
        .unwrap();
        let question = |id: &str, ease: f64, interval: i64, due: Option<i64>| {
            conn.execute(
                "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, question, explanation,
                 tags, text_hash, created_at, ease, interval_days, due_at) VALUES (?1, 'c', 's', 'true_false', 'mid',
                 ?1, 'e', '[]', ?1, 1, ?2, ?3, ?4)",
                params![id, ease, interval, due],
            )
            .unwrap();
        };
        question("answered", 2.36, 6, Some(T0 + 6 * DAY_MS));
        question("sm2-only", 2.5, 10, Some(T0 + 3 * DAY_MS));
        question("new", 2.5, 0, None);
        question("reviewed", 2.5, 1, Some(T0 + DAY_MS));
        let attempt = |quality: i64, at: i64| {
            conn.execute(
                "INSERT INTO quiz_attempts (question_id, answer, correct, quality, created_at) VALUES ('answered', 'x', ?1, ?2, ?3)",
                params![quality >= 3, quality, at],
            )
            .unwrap();
        };
        attempt(4, T0 - 3 * DAY_MS);
        attempt(1, T0);
        attempt(4, T0 + MINUTE_MS);
        conn.execute(
            "INSERT INTO quiz_attempts (question_id, answer, correct, quality, created_at) VALUES ('reviewed', 'x', 1, 4, ?1)",
            [T0],
        )
        .unwrap();
        crate::db::migrate(&mut conn).unwrap();
        let row = |id: &str| -> (String, i64, Option<f64>, i64, Option<i64>) {
            conn.query_row(
                "SELECT card_state, reps, stability, lapses, last_review_at FROM questions WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .unwrap()
        };
        let (state, reps, stability, lapses, last) = row("answered");
        assert_eq!((state.as_str(), reps, lapses, last), ("relearning", 3, 1, Some(T0 + MINUTE_MS)));
        assert!(stability.unwrap() > 0.0);
        let logged: Vec<(i64, String)> = conn
            .prepare("SELECT rating, state_before FROM review_log WHERE question_id = 'answered' ORDER BY created_at")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(logged, [(3, "new".into()), (1, "review".into()), (3, "relearning".into())]);
        let (state, _, stability, _, last) = row("sm2-only");
        assert_eq!(state, "review");
        assert!((stability.unwrap() - 10.0).abs() < 0.05, "{stability:?}");
        assert_eq!(last, Some(T0 - 7 * DAY_MS));
        assert_eq!(row("new").0, "new");
        // A replayed review is due from the start of a learner day (04:00 in the system zone),
        // as a review the quiz schedules is, not from UTC midnight.
        let due: i64 = conn.query_row("SELECT due_at FROM questions WHERE id = 'reviewed'", [], |r| r.get(0)).unwrap();
        let day = crate::learn::day::LearnerDay::new(jiff::tz::TimeZone::system(), 4);
        assert_eq!((row("reviewed").0.as_str(), due), ("review", day.start_of(day.day_of(due))));
        assert!(due > T0 + DAY_MS / 2, "a day or more on: {due}");
        // Migrating again changes nothing (the step ran once, with its SQL).
        assert_eq!(crate::db::migrate(&mut conn).unwrap(), 0);
    }
}
