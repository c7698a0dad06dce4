//! The quiz's database side: which questions to ask, and recording one answer.
//!
//! # One answer, one transaction
//! [`record_answer`] writes everything an answer changes in a single `BEGIN IMMEDIATE`
//! transaction: the `quiz_attempts` row, its `review_log` row, the question's FSRS schedule
//! (and, at the leech threshold, its `leech` tag and suspension), the concept's
//! `concept_profiles` row, the day's `daily_streaks` row and, when earned, the follow-up
//! question. It commits before the quiz prints the feedback, so an interrupted quiz (Ctrl-C,
//! EOF, a closed terminal) keeps every answer it showed feedback for and nothing half-written.
//! IMMEDIATE rather than DEFERRED: the transaction reads then writes, and a deferred read lock
//! upgraded while the worker writes fails with SQLITE_BUSY at once instead of waiting out the
//! busy timeout.
//!
//! # Beside the worker's writer (issue 27, point 10)
//! "Only the writer writes" is a rule inside the worker process: it keeps SQLITE_BUSY off the
//! hot path and makes group commit possible. The quiz is another process, and routing its
//! writes to the worker would need a worker (the quiz works without one) and an HTTP route.
//! It is safe to write here because both sides take SQLite's write lock the same way: the
//! writer's batches and this transaction both `BEGIN IMMEDIATE` (never a read lock upgraded
//! later, the one case where SQLite answers BUSY without waiting), both connections wait up to
//! `db::BUSY_TIMEOUT` (5 s) for the lock, and this transaction holds it for a few
//! milliseconds (one answer: about ten statements). So the writer at worst waits that long
//! once per answer, and no write of either side fails or is lost. The test
//! `quiz_answers_beside_a_busy_worker_lose_nothing` drives both at once.
//!
//! # Follow-ups
//! A follow-up (`questions.follow_up`, written for junior questions) becomes its own row:
//! `question_type = 'open_ended'` (free text, self-graded; the schema has no CHECK on the type
//! and every reader already treats `open_ended` as free text), `difficulty = 'mid'` (SPEC
//! §6.4 calls it a mid-level follow-up), `parent_question_id` set, `correct` NULL and an empty
//! `explanation` (there is no model answer, and the parent's explanation answers another
//! question, so the quiz shows none: SPEC §7), the parent's snippet (with its blank filled in for a fill-in-the-blank parent)
//! and the tag `follow-up`. It is inserted with `due_at = now`, which is what makes
//! `reads::due_questions` pick it up if the quiz ends before it is asked.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde_json::Value;

use crate::analysis::questions::normalized_text_hash;
use crate::clock::Millis;
use crate::db::fsrs_migration::save_card;
use crate::learn::mastery::{self, Level, Mastery};
use crate::learn::schedule::{Card, CardState, Rating, Reviewed, Scheduler};
use crate::reads::DueFilter;

/// Tag carried by follow-up questions.
pub const FOLLOW_UP_TAG: &str = "follow-up";

/// A question as the quiz asks it (the fields of Appendix A.5 it needs).
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub id: String,
    pub concept: String,
    pub question_type: String,
    pub difficulty: String,
    pub snippet: Option<String>,
    pub question: String,
    pub options: Option<Vec<String>>,
    pub correct: Option<String>,
    pub explanation: String,
    pub tags: Vec<String>,
    /// Never answered (`due_at` NULL) rather than a review.
    pub due_at: Option<Millis>,
    /// `new`, `learning`, `review` or `relearning`.
    pub card_state: CardState,
    pub lapses: i64,
    /// A follow-up's parent.
    pub parent_question_id: Option<String>,
}

impl Question {
    /// From the JSON of `reads::question_from_row`. Lenient: a JSON column that does not
    /// parse (a hand-edited row) reads as absent, and `check_answer` then reports the
    /// question as malformed instead of the quiz failing.
    pub fn from_json(v: &Value) -> Question {
        let text = |key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
        let strings = |key: &str| {
            v.get(key).and_then(Value::as_array).map(|items| {
                items.iter().map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned)).collect::<Vec<_>>()
            })
        };
        Question {
            id: text("id").unwrap_or_default(),
            concept: text("concept").unwrap_or_default(),
            question_type: text("question_type").unwrap_or_default(),
            difficulty: text("difficulty").unwrap_or_default(),
            snippet: text("snippet"),
            question: text("question").unwrap_or_default(),
            options: strings("options"),
            correct: text("correct"),
            explanation: text("explanation").unwrap_or_default(),
            tags: strings("tags").unwrap_or_default(),
            due_at: v.get("due_at").and_then(Value::as_i64),
            card_state: CardState::parse(v.get("card_state").and_then(Value::as_str).unwrap_or("new")),
            lapses: v.get("lapses").and_then(Value::as_i64).unwrap_or(0),
            parent_question_id: text("parent_question_id"),
        }
    }

    pub fn is_new(&self) -> bool {
        self.due_at.is_none()
    }

    pub fn is_follow_up(&self) -> bool {
        self.parent_question_id.is_some() || self.tags.iter().any(|t| t == FOLLOW_UP_TAG)
    }

    pub fn is_leech(&self) -> bool {
        self.tags.iter().any(|t| t == crate::db::fsrs_migration::LEECH_TAG)
    }

    /// The model answer, if the question has its own (a follow-up usually has none).
    pub fn model_answer(&self) -> Option<&str> {
        self.correct.as_deref().map(str::trim).filter(|c| !c.is_empty())
    }

    /// The explanation to show: a follow-up without its own model answer shows none, never
    /// its parent's (rows stored before this rule carry a copy of it).
    pub fn explanation(&self) -> Option<&str> {
        let text = self.explanation.trim();
        if text.is_empty() || (self.is_follow_up() && self.model_answer().is_none()) { None } else { Some(text) }
    }
}

/// Questions in quiz order, as `reads::due_questions_filtered` defines it.
pub fn due(conn: &Connection, now: Millis, filter: &DueFilter, limit: usize) -> rusqlite::Result<Vec<Question>> {
    let value = crate::reads::due_questions_filtered(conn, now, filter, limit)?;
    Ok(value["questions"].as_array().into_iter().flatten().map(Question::from_json).collect())
}

/// A question's schedule; `None` when the question is gone.
pub fn card(conn: &Connection, id: &str) -> rusqlite::Result<Option<Card>> {
    conn.prepare_cached(
        "SELECT card_state, learning_step, stability, fsrs_difficulty, due_at, last_review_at, reps, lapses          FROM questions WHERE id = ?1",
    )?
    .query_row([id], card_from_row)
    .optional()
}

pub use crate::reads::{card_from_row, card_from_row_at};

pub use crate::reads::scheduler;

/// When the next cards fall due after `now` (SPEC §7: today / tomorrow / this week), by UTC
/// day as the streak counts days.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Forecast {
    /// Due later today.
    pub today: i64,
    pub tomorrow: i64,
    /// Due within seven days from now (today's and tomorrow's included).
    pub week: i64,
    pub first: Option<Millis>,
}

pub fn forecast(conn: &Connection, now: Millis, filter: &DueFilter) -> rusqlite::Result<Forecast> {
    let tomorrow = (day_of(now) + 1) * crate::learn::schedule::DAY_MS;
    conn.prepare_cached(
        "SELECT COUNT(*) FILTER (WHERE q.due_at < ?4), COUNT(*) FILTER (WHERE q.due_at >= ?4 AND q.due_at < ?4 + 86400000), \
         COUNT(*) FILTER (WHERE q.due_at <= ?1 + 604800000), MIN(q.due_at) \
         FROM questions q JOIN sessions s ON s.id = q.session_id \
         WHERE q.due_at > ?1 AND q.suspended = 0 AND (?2 IS NULL OR q.session_id = ?2) AND (?3 IS NULL OR s.project = ?3)",
    )?
    .query_row(params![now, filter.session, filter.project, tomorrow], |r| {
        Ok(Forecast { today: r.get(0)?, tomorrow: r.get(1)?, week: r.get(2)?, first: r.get(3)? })
    })
}

/// One question by id, in the same shape.
pub fn question(conn: &Connection, id: &str) -> rusqlite::Result<Option<Question>> {
    conn.prepare_cached(
        "SELECT q.*, c.name AS concept_name FROM questions q JOIN concepts c ON c.id = q.concept_id WHERE q.id = ?1",
    )?
    .query_row([id], crate::reads::question_from_row)
    .optional()
    .map(|row| row.as_ref().map(Question::from_json))
}

/// The session most recently started that has questions.
pub fn latest_session_with_questions(conn: &Connection) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached(
        "SELECT s.id FROM sessions s WHERE EXISTS (SELECT 1 FROM questions q WHERE q.session_id = s.id) \
         ORDER BY s.started_at DESC, s.id LIMIT 1",
    )?
    .query_row([], |r| r.get(0))
    .optional()
}

pub fn session_exists(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1)")?.query_row([id], |r| r.get(0))
}

/// The earliest future due date (for "nothing is due; next review in …").
pub fn next_due(conn: &Connection, now: Millis, session: Option<&str>) -> rusqlite::Result<Option<Millis>> {
    conn.prepare_cached(
        "SELECT MIN(due_at) FROM questions WHERE due_at > ?1 AND suspended = 0 AND (?2 IS NULL OR session_id = ?2)",
    )?
    .query_row(params![now, session], |r| r.get(0))
}

/// What the developer answered, judged.
#[derive(Debug, Clone)]
pub struct Answer<'a> {
    pub question_id: &'a str,
    /// The text typed (for a self-graded answer, the answer, not the grade).
    pub text: &'a str,
    pub correct: bool,
    pub rating: Rating,
    /// From the question shown to the rating given, when measured.
    pub duration_ms: Option<Millis>,
}

/// What one answer changed.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub reviewed: Reviewed,
    pub before: Mastery,
    pub after: Mastery,
    /// The follow-up to ask next, when this answer earned one that was never answered.
    pub follow_up: Option<String>,
}

/// The question's row, as recording needs it.
struct Row {
    card: Card,
    concept_id: String,
    session_id: String,
    normalized_name: String,
    concept_name: String,
    category: String,
    concept_difficulty: String,
    difficulty: String,
    question_type: String,
    correct: Option<String>,
    snippet: Option<String>,
    follow_up: Option<String>,
    tags: String,
    /// A spot_the_bug's planted edit (`{"line", "original", "mutated"}`), to show the
    /// follow-up the repaired code.
    mutation: Option<String>,
}

/// Records one answer (module doc: one transaction). `Ok(None)`: the question no longer
/// exists (its session was deleted while the quiz ran); nothing was written.
pub fn record_answer(
    conn: &mut Connection,
    answer: &Answer<'_>,
    scheduler: &Scheduler,
    now: Millis,
) -> rusqlite::Result<Option<Recorded>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let Some(row) = load_row(&tx, answer.question_id)? else {
        return Ok(None);
    };
    let reviewed = scheduler.review(&row.card, answer.rating, now);
    save_card(&tx, answer.question_id, &reviewed.card, reviewed.leech.is_some())?;
    tx.prepare_cached(
        "INSERT INTO quiz_attempts (question_id, answer, correct, quality, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![answer.question_id, answer.text, answer.correct, legacy_quality(answer.rating), now])?;
    let attempt_id = tx.last_insert_rowid();
    crate::db::fsrs_migration::insert_review_log(
        &tx,
        answer.question_id,
        Some(attempt_id),
        &reviewed.log,
        answer.duration_ms,
        now,
    )?;
    let before = load_mastery(&tx, &row)?;
    let after = mastery::record(&before, answer.correct);
    let retrievability = concept_retrievability(&tx, scheduler, &row.normalized_name, now)?;
    save_mastery(&tx, &row, &after, retrievability, now)?;
    tx.prepare_cached(
        "INSERT INTO daily_streaks (day, answers, correct) VALUES (?1, 1, ?2) \
         ON CONFLICT (day) DO UPDATE SET answers = answers + 1, correct = correct + excluded.correct",
    )?
    .execute(params![day_of(now), i64::from(answer.correct)])?;
    // "Junior questions answered right while still junior": the level the concept had when
    // the question was answered, so the answer that promotes a concept still earns its follow-up.
    let earns_follow_up = answer.correct && row.difficulty == "junior" && before.level == Level::Junior;
    let follow_up = match row.follow_up.as_deref().map(str::trim).filter(|t| earns_follow_up && !t.is_empty()) {
        Some(text) => insert_follow_up(&tx, answer.question_id, &row, text, now)?,
        None => None,
    };
    tx.commit()?;
    Ok(Some(Recorded { reviewed, before, after, follow_up }))
}

/// The SM-2 quality column of `quiz_attempts`, kept filled for readers of the old shape
/// (the upstream's attempt records): Again 1, Hard 3, Good 4, Easy 5.
fn legacy_quality(rating: Rating) -> u8 {
    match rating {
        Rating::Again => 1,
        Rating::Hard => 3,
        Rating::Good => 4,
        Rating::Easy => 5,
    }
}

/// Mastery of a concept (SPEC §7): FSRS retrievability at `now` averaged over its answered
/// cards in every session; 0 when none was answered.
pub fn concept_retrievability(
    conn: &Connection,
    scheduler: &Scheduler,
    normalized_name: &str,
    now: Millis,
) -> rusqlite::Result<f64> {
    let mut stmt = conn.prepare_cached(
        "SELECT q.card_state, q.learning_step, q.stability, q.fsrs_difficulty, q.due_at, q.last_review_at, q.reps, \
         q.lapses FROM questions q JOIN concepts c ON c.id = q.concept_id \
         WHERE c.normalized_name = ?1 AND q.last_review_at IS NOT NULL",
    )?;
    let cards = stmt.query_map([normalized_name], card_from_row)?.collect::<Result<Vec<_>, _>>()?;
    let values: Vec<f64> = cards.iter().filter_map(|c| scheduler.retrievability(c, now)).collect();
    Ok(if values.is_empty() { 0.0 } else { values.iter().sum::<f64>() / values.len() as f64 })
}

fn load_row(conn: &Connection, question_id: &str) -> rusqlite::Result<Option<Row>> {
    conn.prepare_cached(
        "SELECT q.card_state, q.learning_step, q.stability, q.fsrs_difficulty, q.due_at, q.last_review_at, q.reps, \
                q.lapses, q.concept_id, q.session_id, c.normalized_name, c.name, \
                c.category, c.difficulty, q.difficulty, q.snippet, q.follow_up, q.tags, q.question_type, q.correct, \
                q.grounding_mutation \
         FROM questions q JOIN concepts c ON c.id = q.concept_id WHERE q.id = ?1",
    )?
    .query_row([question_id], |r| {
        Ok(Row {
            card: card_from_row(r)?,
            concept_id: r.get(8)?,
            session_id: r.get(9)?,
            normalized_name: r.get(10)?,
            concept_name: r.get(11)?,
            category: r.get(12)?,
            concept_difficulty: r.get(13)?,
            difficulty: r.get(14)?,
            snippet: r.get(15)?,
            follow_up: r.get(16)?,
            tags: r.get(17)?,
            question_type: r.get(18)?,
            correct: r.get(19)?,
            mutation: r.get(20)?,
        })
    })
    .optional()
}

/// A stored counter as `u32`: negative (a corrupt row) reads as 0, huge saturates.
fn count(n: i64) -> u32 {
    u32::try_from(n.max(0)).unwrap_or(u32::MAX)
}

/// The concept's record before this answer; a concept without a profile row (created by an
/// older version, or removed) starts at its own difficulty, capped at mid by `Mastery::new`.
fn load_mastery(conn: &Connection, row: &Row) -> rusqlite::Result<Mastery> {
    let seed = row.concept_difficulty.parse::<Level>().unwrap_or_default();
    let stored = conn
        .prepare_cached(
            "SELECT level, correct_answers, incorrect_answers, correct_streak FROM concept_profiles WHERE normalized_name = ?1",
        )?
        .query_row([&row.normalized_name], |r| {
            let level: String = r.get(0)?;
            let correct = count(r.get(1)?);
            Ok(Mastery {
                attempts: correct.saturating_add(count(r.get(2)?)),
                correct,
                streak: count(r.get(3)?),
                level: level.parse().unwrap_or(seed),
            })
        })
        .optional()?;
    Ok(stored.unwrap_or_else(|| Mastery::new(seed)))
}

/// Upserts the profile. `last_seen_at` keeps its meaning (when the concept was last met in a
/// session, written by `analyze_concepts`); a row created here starts it at the answer time.
/// `mastery_score` is the concept's retrievability at the answer (what `analyze_quiz` reads
/// to skip mastered concepts); the readers of SPEC §7 compute it live.
fn save_mastery(conn: &Connection, row: &Row, m: &Mastery, retrievability: f64, now: Millis) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO concept_profiles (normalized_name, concept_name, category, level, mastery_score, encounter_count, \
           correct_answers, incorrect_answers, correct_streak, last_seen_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, (SELECT COUNT(DISTINCT session_id) FROM concepts WHERE normalized_name = ?1), \
           ?6, ?7, ?8, ?9) \
         ON CONFLICT (normalized_name) DO UPDATE SET level = excluded.level, mastery_score = excluded.mastery_score, \
           correct_answers = excluded.correct_answers, incorrect_answers = excluded.incorrect_answers, \
           correct_streak = excluded.correct_streak",
    )?
    .execute(params![
        row.normalized_name,
        row.concept_name,
        row.category,
        m.level.as_str(),
        retrievability,
        m.correct,
        m.attempts.saturating_sub(m.correct),
        m.streak,
        now
    ])?;
    Ok(())
}

/// `code` with a planted edit reverted; unchanged when the edit is unknown or not found.
fn repaired(code: &str, mutation: Option<&str>) -> String {
    let edit: Option<Value> = mutation.and_then(|m| serde_json::from_str(m).ok());
    let text = |key: &str| {
        edit.as_ref().and_then(|e| e.get(key)).and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty())
    };
    match (text("mutated"), text("original")) {
        (Some(mutated), Some(original)) if code.contains(mutated) => code.replacen(mutated, original, 1),
        _ => code.to_owned(),
    }
}

/// Inserts (or finds) the follow-up of `parent_id`; returns its id when it was never
/// answered, so it is asked now. A follow-up already answered keeps its own schedule.
fn insert_follow_up(
    conn: &Connection,
    parent_id: &str,
    row: &Row,
    text: &str,
    now: Millis,
) -> rusqlite::Result<Option<String>> {
    let text_hash = normalized_text_hash(text);
    let mut tags: Vec<String> = serde_json::from_str(&row.tags).unwrap_or_default();
    if !tags.iter().any(|t| t == FOLLOW_UP_TAG) {
        tags.push(FOLLOW_UP_TAG.to_owned());
    }
    // The parent's code gives the follow-up its context; a fill-in-the-blank snippet is shown
    // completed, since its blank was the parent's question, not this one's.
    // A spot_the_bug snippet is shown repaired: the bug was the parent's question, and a
    // follow-up about correct code must not quote the planted mistake as if it were the code.
    let snippet = match (row.question_type.as_str(), &row.snippet, &row.correct) {
        ("fill_in_blank", Some(code), Some(answer)) => Some(code.replacen("___", answer, 1)),
        ("spot_the_bug", Some(code), _) => Some(repaired(code, row.mutation.as_deref())),
        _ => row.snippet.clone(),
    };
    conn.prepare_cached(
        "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, snippet, question, options, correct, \
           explanation, follow_up, tags, text_hash, parent_question_id, due_at, created_at) \
         VALUES (?1, ?2, ?3, 'open_ended', 'mid', ?4, ?5, NULL, NULL, '', NULL, ?6, ?7, ?8, ?9, ?9) ON CONFLICT DO NOTHING",
    )?
    .execute(params![
        format!("{parent_id}-follow-up"),
        row.concept_id,
        row.session_id,
        snippet,
        text,
        serde_json::to_string(&tags).unwrap_or_else(|_| "[]".into()),
        text_hash,
        parent_id,
        now
    ])?;
    // The row may predate this answer (inserted by an earlier run, or the same text exists).
    let found: Option<(String, bool)> = conn
        .prepare_cached(
            "SELECT q.id, EXISTS (SELECT 1 FROM quiz_attempts a WHERE a.question_id = q.id) FROM questions q \
             WHERE q.concept_id = ?1 AND q.question_type = 'open_ended' AND q.text_hash = ?2",
        )?
        .query_row(params![row.concept_id, text_hash], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    match found {
        Some((id, false)) => {
            conn.prepare_cached("UPDATE questions SET due_at = MIN(COALESCE(due_at, ?2), ?2) WHERE id = ?1")?
                .execute(params![id, now])?;
            Ok(Some(id))
        }
        _ => Ok(None),
    }
}

pub use crate::reads::{Streak, day_of, streak};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spot_the_bug_follow_up_quotes_the_repaired_code() {
        let code = "async function f() {\n  const items = getCart(id);\n}";
        let edit =
            r#"{"line":2,"original":"  const items = await getCart(id);","mutated":"  const items = getCart(id);"}"#;
        assert_eq!(repaired(code, Some(edit)), "async function f() {\n  const items = await getCart(id);\n}");
        assert_eq!(repaired(code, None), code);
        assert_eq!(repaired(code, Some("not json")), code);
    }
}
