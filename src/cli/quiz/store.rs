//! The quiz's database side: which questions to ask, and recording one answer.
//!
//! # One answer, one transaction
//! [`record_answer`] writes everything an answer changes in a single `BEGIN IMMEDIATE`
//! transaction: the `quiz_attempts` row, the question's SM-2 schedule, the concept's
//! `concept_profiles` row, the day's `daily_streaks` row and, when earned, the follow-up
//! question. It commits before the quiz prints the feedback, so an interrupted quiz (Ctrl-C,
//! EOF, a closed terminal) keeps every answer it showed feedback for and nothing half-written.
//! IMMEDIATE rather than DEFERRED: the transaction reads then writes, and a deferred read lock
//! upgraded while the worker writes fails with SQLITE_BUSY at once instead of waiting out the
//! busy timeout.
//!
//! # Follow-ups
//! A follow-up (`questions.follow_up`, written for junior questions) becomes its own row:
//! `question_type = 'open_ended'` (free text, self-graded; the schema has no CHECK on the type
//! and every reader already treats `open_ended` as free text), `difficulty = 'mid'` (SPEC
//! §6.4 calls it a mid-level follow-up), `parent_question_id` set, `correct` NULL (there is no
//! model answer: the quiz shows the parent's explanation, copied into `explanation`, as the
//! reference), the parent's snippet (with its blank filled in for a fill-in-the-blank parent)
//! and the tag `follow-up`. It is inserted with `due_at = now`, which is what makes
//! `reads::due_questions` pick it up if the quiz ends before it is asked.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde_json::Value;

use crate::analysis::questions::normalized_text_hash;
use crate::clock::Millis;
use crate::learn::mastery::{self, Level, Mastery};
use crate::learn::sm2::{self, Schedule};

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
        }
    }

    pub fn is_new(&self) -> bool {
        self.due_at.is_none()
    }

    pub fn is_follow_up(&self) -> bool {
        self.tags.iter().any(|t| t == FOLLOW_UP_TAG)
    }
}

/// Questions in quiz order (due reviews first, then new), as `reads::due_questions` defines it.
pub fn due(conn: &Connection, now: Millis, session: Option<&str>, limit: usize) -> rusqlite::Result<Vec<Question>> {
    let value = crate::reads::due_questions(conn, now, session, limit)?;
    Ok(value["questions"].as_array().into_iter().flatten().map(Question::from_json).collect())
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
    conn.prepare_cached("SELECT MIN(due_at) FROM questions WHERE due_at > ?1 AND (?2 IS NULL OR session_id = ?2)")?
        .query_row(params![now, session], |r| r.get(0))
}

/// What the developer answered, judged.
#[derive(Debug, Clone)]
pub struct Answer<'a> {
    pub question_id: &'a str,
    /// The text typed (for a self-graded answer, the answer, not the grade).
    pub text: &'a str,
    pub correct: bool,
    /// SM-2 quality 0–5.
    pub quality: u8,
}

/// What one answer changed.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub schedule: Schedule,
    pub before: Mastery,
    pub after: Mastery,
    /// The follow-up to ask next, when this answer earned one that was never answered.
    pub follow_up: Option<String>,
}

/// The question's row, as recording needs it.
struct Row {
    schedule: Schedule,
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
    explanation: String,
    follow_up: Option<String>,
    tags: String,
}

/// Records one answer (module doc: one transaction). `Ok(None)`: the question no longer
/// exists (its session was deleted while the quiz ran); nothing was written.
pub fn record_answer(conn: &mut Connection, answer: &Answer<'_>, now: Millis) -> rusqlite::Result<Option<Recorded>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let Some(row) = load_row(&tx, answer.question_id, now)? else {
        return Ok(None);
    };
    let schedule = sm2::review(&row.schedule, answer.quality, now);
    tx.prepare_cached(
        "UPDATE questions SET ease = ?2, interval_days = ?3, repetitions = ?4, due_at = ?5 WHERE id = ?1",
    )?
    .execute(params![
        answer.question_id,
        schedule.ease,
        schedule.interval_days,
        schedule.repetitions,
        schedule.due_at_ms
    ])?;
    tx.prepare_cached(
        "INSERT INTO quiz_attempts (question_id, answer, correct, quality, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![answer.question_id, answer.text, answer.correct, answer.quality, now])?;
    let before = load_mastery(&tx, &row)?;
    let after = mastery::record(&before, answer.correct);
    save_mastery(&tx, &row, &after, now)?;
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
    Ok(Some(Recorded { schedule, before, after, follow_up }))
}

fn load_row(conn: &Connection, question_id: &str, now: Millis) -> rusqlite::Result<Option<Row>> {
    conn.prepare_cached(
        "SELECT q.ease, q.interval_days, q.repetitions, q.due_at, q.concept_id, q.session_id, c.normalized_name, c.name, \
                c.category, c.difficulty, q.difficulty, q.snippet, q.explanation, q.follow_up, q.tags, q.question_type, q.correct \
         FROM questions q JOIN concepts c ON c.id = q.concept_id WHERE q.id = ?1",
    )?
    .query_row([question_id], |r| {
        Ok(Row {
            schedule: Schedule {
                ease: r.get(0)?,
                interval_days: count(r.get(1)?),
                repetitions: count(r.get(2)?),
                due_at_ms: r.get::<_, Option<i64>>(3)?.unwrap_or(now),
            },
            concept_id: r.get(4)?,
            session_id: r.get(5)?,
            normalized_name: r.get(6)?,
            concept_name: r.get(7)?,
            category: r.get(8)?,
            concept_difficulty: r.get(9)?,
            difficulty: r.get(10)?,
            snippet: r.get(11)?,
            explanation: r.get(12)?,
            follow_up: r.get(13)?,
            tags: r.get(14)?,
            question_type: r.get(15)?,
            correct: r.get(16)?,
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
fn save_mastery(conn: &Connection, row: &Row, m: &Mastery, now: Millis) -> rusqlite::Result<()> {
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
        m.score(),
        m.correct,
        m.attempts.saturating_sub(m.correct),
        m.streak,
        now
    ])?;
    Ok(())
}

/// Inserts (or finds) the follow-up of `parent_id`; returns its id when it was never
/// answered, so it is asked now. A follow-up already answered keeps its own SM-2 schedule.
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
    let snippet = match (row.question_type.as_str(), &row.snippet, &row.correct) {
        ("fill_in_blank", Some(code), Some(answer)) => Some(code.replacen("___", answer, 1)),
        _ => row.snippet.clone(),
    };
    conn.prepare_cached(
        "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, snippet, question, options, correct, \
           explanation, follow_up, tags, text_hash, parent_question_id, due_at, created_at) \
         VALUES (?1, ?2, ?3, 'open_ended', 'mid', ?4, ?5, NULL, NULL, ?6, NULL, ?7, ?8, ?9, ?10, ?10) ON CONFLICT DO NOTHING",
    )?
    .execute(params![
        format!("{parent_id}-follow-up"),
        row.concept_id,
        row.session_id,
        snippet,
        text,
        row.explanation,
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
