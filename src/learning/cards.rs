//! The cards as the learning loop reads them: which questions are due, in what order
//! (SPEC §7), one question or schedule by id, and the learner's scheduler. Reads only.
//!
//! # Learn-ahead
//! When nothing else is due, learning and relearning cards due within [`LEARN_AHEAD_MS`]
//! (20 minutes, Anki's learn-ahead limit) are due now, in `vl quiz` and in `vl quiz next
//! --json` alike: a card answered Again finishes its 1-minute and 10-minute steps in the same
//! sitting instead of waiting for tomorrow, so a card forgotten every day lapses every day.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use crate::clock::Millis;
use crate::config::Config;
use crate::learn::schedule::{Card, CardState, MINUTE_MS, Memory, Scheduler};

/// Anki's learn-ahead limit.
pub const LEARN_AHEAD_MS: Millis = 20 * MINUTE_MS;

fn json_column(text: Option<String>) -> Value {
    text.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or(Value::Null)
}

/// One question as Appendix A.5 shows it.
pub fn question_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Value> {
    Ok(json!({
        "id": r.get::<_, String>("id")?,
        "concept": r.get::<_, String>("concept_name")?,
        "question_type": r.get::<_, String>("question_type")?,
        "difficulty": r.get::<_, String>("difficulty")?,
        "snippet": r.get::<_, Option<String>>("snippet")?,
        "question": r.get::<_, String>("question")?,
        "options": json_column(r.get("options")?),
        "correct": r.get::<_, Option<String>>("correct")?,
        "explanation": r.get::<_, String>("explanation")?,
        "follow_up": r.get::<_, Option<String>>("follow_up")?,
        "tags": json_column(r.get("tags")?),
        "due_at": r.get::<_, Option<i64>>("due_at")?,
        "session_id": r.get::<_, String>("session_id")?,
        "grounding": grounding_from_row(r)?,
        "card_state": r.get::<_, Option<String>>("card_state").ok().flatten(),
        "suspended": r.get::<_, Option<bool>>("suspended").ok().flatten().unwrap_or(false),
        "lapses": r.get::<_, Option<i64>>("lapses").ok().flatten().unwrap_or(0),
        "parent_question_id": r.get::<_, Option<String>>("parent_question_id")?,
    }))
}

/// A question row's grounding (`analysis::grounding::Grounding` as JSON), or null.
fn grounding_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Value> {
    let Some(kind) = r.get::<_, Option<String>>("grounding_kind")? else { return Ok(Value::Null) };
    Ok(json!({
        "file": r.get::<_, Option<String>>("grounding_file")?,
        "line_start": r.get::<_, Option<i64>>("grounding_line_start")?,
        "line_end": r.get::<_, Option<i64>>("grounding_line_end")?,
        "kind": kind,
        "mutation": json_column(r.get("grounding_mutation")?),
    }))
}

/// Which questions a quiz asks (SPEC §7): `vl quiz --session/--project/--leeches`.
#[derive(Debug, Clone, Default)]
pub struct DueFilter {
    pub session: Option<String>,
    /// A project name as `sessions.project` holds it.
    pub project: Option<String>,
    /// A project directory: sessions whose cwd is it or below it (the statusline's and the
    /// SessionStart hook's scope; a sibling with a longer name is another project).
    pub directory: Option<String>,
    /// Only leeches, suspended or not, due or not (`vl quiz --leeches`).
    pub leeches: bool,
    /// New questions still allowed today (`VIBELEARN_NEW_PER_DAY` less those introduced since
    /// the learner's day began, `learning::days::sitting_filter`); `None` = no cap.
    pub new_allowed: Option<usize>,
}

/// Questions in quiz order (SPEC §7): learning cards due now (re-asks), then reviews due
/// (oldest due first), then new ones (oldest first, at most `new_allowed`); when none of
/// these is due, the learning cards due within the learn-ahead limit (module doc). Suspended
/// cards are never due; follow-ups only once a correct answer inserted them (they then have a
/// due date). With `leeches`, every leech of the filter instead, most lapsed first.
pub fn due_questions_filtered(
    conn: &Connection,
    now: Millis,
    filter: &DueFilter,
    limit: usize,
) -> rusqlite::Result<Value> {
    let columns = "q.*, c.name AS concept_name, s.project AS project_name";
    let rows = select_due(conn, now, filter, limit.clamp(1, 500), columns, question_from_row)?;
    Ok(json!({ "questions": rows }))
}

/// What a sitting would ask now, counted: the questions [`due_questions_filtered`] selects
/// (the same selection, so `vl status`, the statusline and the SessionStart message say what
/// `vl quiz` will ask, the new-card cap and learn-ahead included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DueNow {
    /// Learning and relearning cards (learning steps).
    pub learning: usize,
    /// Review cards due.
    pub reviews: usize,
    /// New questions within the day's cap, and follow-ups waiting to be asked.
    pub new: usize,
}

impl DueNow {
    pub fn total(&self) -> usize {
        self.learning + self.reviews + self.new
    }
}

/// Most questions [`due_now`] reads: a bound on the statusline's work; more due than this
/// are counted as this many.
pub const COUNT_LIMIT: usize = 10_000;

/// [`DueNow`] for `filter` at `now` (apply `learning::days::sitting_filter` for the cap).
pub fn due_now(conn: &Connection, now: Millis, filter: &DueFilter) -> rusqlite::Result<DueNow> {
    // A follow-up waiting to be asked (due, never answered: state `new`) counts as new.
    let states = select_due(
        conn,
        now,
        filter,
        COUNT_LIMIT,
        "q.card_state, COALESCE(q.card_state, 'new') = 'new' OR q.due_at IS NULL",
        |r| Ok((CardState::parse(&r.get::<_, Option<String>>(0)?.unwrap_or_default()), r.get::<_, bool>(1)?)),
    )?;
    let mut due = DueNow::default();
    for (state, new) in states {
        match state {
            _ if new => due.new += 1,
            s if s.in_steps() => due.learning += 1,
            _ => due.reviews += 1,
        }
    }
    Ok(due)
}

/// The new questions a sitting introduces, oldest first: read in order from migration 0018's
/// `questions_new_in_order` (its condition is part of this one), so the selection stops at the
/// day's cap instead of sorting every question never answered (~10 ms at 12,000 of them).
pub(crate) const NEW_IN_ORDER: &str =
    "q.suspended = 0 AND q.due_at IS NULL AND q.parent_question_id IS NULL ORDER BY q.created_at, q.id";

/// The statement [`select_due`] runs: `columns` of the questions meeting the filter's
/// parameters (`?2` session, `?3` project, `?5` directory, `?4` limit) and `condition`.
pub(crate) fn due_sql(columns: &str, condition: &str) -> String {
    format!(
        "SELECT {columns} \
         FROM questions q JOIN concepts c ON c.id = q.concept_id JOIN sessions s ON s.id = q.session_id \
         WHERE (?2 IS NULL OR q.session_id = ?2) AND (?3 IS NULL OR s.project = ?3) \
           AND (?5 IS NULL OR {in_dir}) AND {condition} LIMIT ?4",
        in_dir = super::in_project_dir!("?5")
    )
}

/// The one selection behind [`due_questions_filtered`] and [`due_now`]: `columns` of the due
/// questions (aliases `q` questions, `c` concepts, `s` sessions) in quiz order, each `map`ped.
fn select_due<T>(
    conn: &Connection,
    now: Millis,
    filter: &DueFilter,
    limit: usize,
    columns: &str,
    map: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> rusqlite::Result<Vec<T>> {
    let limit = limit.max(1);
    let select = |condition: &str, at: Millis, limit: usize| -> rusqlite::Result<Vec<T>> {
        let mut stmt = conn.prepare_cached(&due_sql(columns, condition))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        stmt.query_map(params![at, filter.session, filter.project, limit, filter.directory], &map)?.collect()
    };
    if filter.leeches {
        return select(
            "EXISTS (SELECT 1 FROM json_each(q.tags) t WHERE t.value = 'leech') ORDER BY q.lapses DESC, q.due_at, q.id",
            now,
            limit,
        );
    }
    let mut rows = select(
        "q.suspended = 0 AND q.due_at IS NOT NULL AND q.due_at <= ?1 \
         ORDER BY CASE WHEN q.card_state IN ('learning', 'relearning') THEN 0 ELSE 1 END, q.due_at, q.created_at, q.id",
        now,
        limit,
    )?;
    let room = limit.saturating_sub(rows.len()).min(filter.new_allowed.unwrap_or(usize::MAX));
    if room > 0 {
        rows.extend(select(NEW_IN_ORDER, now, room)?);
    }
    if rows.is_empty() {
        rows = select(
            "q.suspended = 0 AND q.card_state IN ('learning', 'relearning') AND q.due_at <= ?1 ORDER BY q.due_at, q.id",
            now.saturating_add(LEARN_AHEAD_MS),
            limit,
        )?;
    }
    Ok(rows)
}

/// `GET /api/vibelearn/questions/due`: [`due_questions_filtered`] for one session or all,
/// without the daily cap on new questions (a reader, not a sitting).
pub fn due_questions(conn: &Connection, now: Millis, session: Option<&str>, limit: usize) -> rusqlite::Result<Value> {
    let filter = DueFilter { session: session.map(str::to_owned), ..DueFilter::default() };
    due_questions_filtered(conn, now, &filter, limit)
}

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
    /// From the JSON of [`question_from_row`]. Lenient: a JSON column that does not
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

    /// A follow-up without its own model answer: asked once as a reflection prompt, never
    /// scheduled (`learning::record`).
    pub fn is_reflection(&self) -> bool {
        self.parent_question_id.is_some() && self.model_answer().is_none()
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

/// Questions in quiz order, as [`due_questions_filtered`] defines it.
pub fn due(conn: &Connection, now: Millis, filter: &DueFilter, limit: usize) -> rusqlite::Result<Vec<Question>> {
    let value = due_questions_filtered(conn, now, filter, limit)?;
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

/// One question by id, in the same shape.
pub fn question(conn: &Connection, id: &str) -> rusqlite::Result<Option<Question>> {
    conn.prepare_cached(
        "SELECT q.*, c.name AS concept_name FROM questions q JOIN concepts c ON c.id = q.concept_id WHERE q.id = ?1",
    )?
    .query_row([id], question_from_row)
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

/// A [`Card`] from eight columns, in this order: card_state, learning_step, stability,
/// fsrs_difficulty, due_at, last_review_at, reps, lapses.
pub fn card_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Card> {
    card_from_row_at(r, 0)
}

/// The same eight columns starting at column `at`.
pub fn card_from_row_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Card> {
    let state: Option<String> = r.get(at)?;
    let stability: Option<f64> = r.get(at + 2)?;
    let difficulty: Option<f64> = r.get(at + 3)?;
    Ok(Card {
        state: CardState::parse(state.as_deref().unwrap_or("new")),
        step: stored_count(r.get::<_, Option<i64>>(at + 1)?.unwrap_or(0)),
        memory: stability.zip(difficulty).map(|(stability, difficulty)| Memory { stability, difficulty }),
        due_at: r.get(at + 4)?,
        last_review_at: r.get(at + 5)?,
        reps: stored_count(r.get::<_, Option<i64>>(at + 6)?.unwrap_or(0)),
        lapses: stored_count(r.get::<_, Option<i64>>(at + 7)?.unwrap_or(0)),
    })
}

/// A stored counter as `u32`: negative (a corrupt row) reads as 0, huge saturates (for this
/// module's card rows and [`super::record`]'s concept rows alike).
pub(super) fn stored_count(n: i64) -> u32 {
    u32::try_from(n.max(0)).unwrap_or(u32::MAX)
}

/// The scheduler with the user's fitted parameters (`optimize_scheduler`), or FSRS-6's
/// defaults when there are none or they no longer load.
pub fn scheduler(conn: &Connection, retention: f64, leech_threshold: u32) -> rusqlite::Result<Scheduler> {
    let fitted: Option<String> = conn
        .prepare_cached("SELECT parameters FROM scheduler_parameters WHERE id = 1")?
        .query_row([], |r| r.get(0))
        .optional()?;
    let parameters: Vec<f32> = fitted.and_then(|p| serde_json::from_str(&p).ok()).unwrap_or_default();
    Ok(Scheduler::new(&parameters, retention, leech_threshold)
        .or_else(|_| Scheduler::new(&[], retention, leech_threshold))
        .unwrap_or_default())
}

/// What a scheduler is built from besides the fitted parameters: the settings of SPEC §7 and
/// the learner's days. Resolved once from the configuration (the jobs keep one).
#[derive(Debug, Clone)]
pub struct SchedulerSettings {
    pub retention: f64,
    pub leech_threshold: u32,
    pub day: crate::learn::day::LearnerDay,
}

impl SchedulerSettings {
    pub fn from_config(config: &Config) -> SchedulerSettings {
        SchedulerSettings {
            retention: config.desired_retention(),
            leech_threshold: config.leech_threshold(),
            day: config.learner_day(),
        }
    }

    /// The learner's scheduler: the fitted parameters with these settings.
    pub fn load(&self, conn: &Connection) -> rusqlite::Result<Scheduler> {
        Ok(scheduler(conn, self.retention, self.leech_threshold)?.with_day(self.day.clone()))
    }
}

/// [`scheduler`] with the settings: retention, leech threshold and the learner's days.
pub fn scheduler_for(conn: &Connection, config: &Config) -> rusqlite::Result<Scheduler> {
    SchedulerSettings::from_config(config).load(conn)
}
