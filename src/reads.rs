//! The read model: the queries behind the read routes and the CLI's summaries, each returning
//! the JSON shape of SPEC §4.4 / Appendix A. Reads only; any connection will do.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use crate::clock::Millis;
use crate::jobs::PIPELINE;

fn json_column(text: Option<String>) -> Value {
    text.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or(Value::Null)
}

/// `GET /api/vibelearn/profile`.
pub fn profile(conn: &Connection) -> rusqlite::Result<Value> {
    let mut stmt = conn.prepare_cached(
        "SELECT concept_name, category, level, mastery_score, encounter_count, correct_answers, \
         incorrect_answers, last_seen_at FROM concept_profiles ORDER BY mastery_score ASC, concept_name",
    )?;
    let rows = stmt
        .query_map([], |r| {
            Ok(json!({
                "concept_name": r.get::<_, String>(0)?,
                "category": r.get::<_, String>(1)?,
                "level": r.get::<_, String>(2)?,
                "mastery_score": r.get::<_, f64>(3)?,
                "encounter_count": r.get::<_, i64>(4)?,
                "correct_answers": r.get::<_, i64>(5)?,
                "incorrect_answers": r.get::<_, i64>(6)?,
                "last_seen_at": r.get::<_, i64>(7)?,
            }))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(json!({ "profile": rows }))
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
    }))
}

/// Questions in quiz order: due reviews first (oldest due first), then new ones (oldest
/// first); follow-ups only when they were inserted by a correct answer (they then have a due
/// date). `session` limits to one session.
pub fn due_questions(conn: &Connection, now: Millis, session: Option<&str>, limit: usize) -> rusqlite::Result<Value> {
    let mut stmt = conn.prepare_cached(
        "SELECT q.*, c.name AS concept_name FROM questions q JOIN concepts c ON c.id = q.concept_id \
         WHERE (?2 IS NULL OR q.session_id = ?2) \
           AND ((q.due_at IS NOT NULL AND q.due_at <= ?1) OR (q.due_at IS NULL AND q.parent_question_id IS NULL)) \
         ORDER BY CASE WHEN q.due_at IS NULL THEN 1 ELSE 0 END, q.due_at, q.created_at, q.id LIMIT ?3",
    )?;
    let rows = stmt
        .query_map(params![now, session, limit.clamp(1, 500) as i64], question_from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(json!({ "questions": rows }))
}

/// `GET /api/vibelearn/sessions/:id/summary`, or `None` for an unknown session.
pub fn session_summary(conn: &Connection, session_id: &str) -> rusqlite::Result<Option<Value>> {
    let exists: Option<i64> = conn
        .prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")?
        .query_row([session_id], |r| r.get(0))
        .optional()?;
    if exists.is_none() {
        return Ok(None);
    }
    let summary = conn
        .prepare_cached(
            "SELECT what_was_built, developer_intent, architecture_decisions, duration_minutes, files_created, \
             files_edited FROM session_summaries WHERE session_id = ?1",
        )?
        .query_row([session_id], |r| {
            Ok(json!({
                "what_was_built": r.get::<_, String>(0)?,
                "developer_intent": r.get::<_, String>(1)?,
                "architecture_decisions": json_column(r.get(2)?),
                "duration_minutes": r.get::<_, i64>(3)?,
                "files_created": r.get::<_, i64>(4)?,
                "files_edited": r.get::<_, i64>(5)?,
            }))
        })
        .optional()?;
    let stack: Option<Value> = conn
        .prepare_cached("SELECT profile FROM stack_profiles WHERE session_id = ?1")?
        .query_row([session_id], |r| Ok(json_column(r.get(0)?)))
        .optional()?;
    let concepts = conn
        .prepare_cached(
            "SELECT id, name, category, difficulty, source_file, snippet, why_it_matters, confidence \
             FROM concepts WHERE session_id = ?1 ORDER BY confidence DESC, name",
        )?
        .query_map([session_id], |r| {
            Ok(json!({
                "id": r.get::<_, String>(0)?,
                "name": r.get::<_, String>(1)?,
                "category": r.get::<_, String>(2)?,
                "difficulty": r.get::<_, String>(3)?,
                "source_file": r.get::<_, String>(4)?,
                "snippet": r.get::<_, String>(5)?,
                "why_it_matters": r.get::<_, String>(6)?,
                "confidence": r.get::<_, f64>(7)?,
            }))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(json!({ "summary": summary, "stack": stack, "concepts": concepts })))
}

/// `GET /api/vibelearn/sessions/:id/pipeline`: each step's latest job.
pub fn pipeline(conn: &Connection, session_id: &str) -> rusqlite::Result<Value> {
    let lane = crate::jobs::lane(session_id);
    let mut stmt = conn.prepare_cached(
        "SELECT id, state, attempt, last_error, result FROM jobs WHERE lane = ?1 AND kind = ?2 ORDER BY id DESC LIMIT 1",
    )?;
    let mut steps = Vec::new();
    for kind in PIPELINE {
        let step = stmt
            .query_row(params![lane, kind], |r| {
                Ok(json!({
                    "kind": kind,
                    "job_id": r.get::<_, i64>(0)?,
                    "state": r.get::<_, String>(1)?,
                    "attempt": r.get::<_, i64>(2)?,
                    "last_error": r.get::<_, Option<String>>(3)?,
                    "result": json_column(r.get(4)?),
                }))
            })
            .optional()?
            .unwrap_or_else(|| json!({"kind": kind, "job_id": null, "state": null, "attempt": 0, "last_error": null, "result": null}));
        steps.push(step);
    }
    Ok(json!({ "steps": steps }))
}

/// `GET /api/sessions`: most recent first, with each session's lifecycle state. `analyzing`
/// is derived (a pipeline job of the session is waiting or running) rather than stored, so it
/// can never be left stale by a crash.
pub fn sessions(conn: &Connection, limit: usize) -> rusqlite::Result<Value> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.id, s.project, s.cwd, s.state, s.ended_at IS NOT NULL, s.started_at, \
           (SELECT COUNT(*) FROM prompts p WHERE p.session_id = s.id), \
           (SELECT COUNT(*) FROM observations o WHERE o.session_id = s.id), \
           (SELECT COUNT(*) FROM concepts c WHERE c.session_id = s.id), \
           (SELECT COUNT(*) FROM questions q WHERE q.session_id = s.id), \
           EXISTS (SELECT 1 FROM jobs j WHERE j.lane = 'session:' || s.id AND j.kind != 'ingest' \
                   AND j.state IN ('available','running','retryable')), \
           s.ended_at \
         FROM sessions s ORDER BY s.started_at DESC, s.id LIMIT ?1",
    )?;
    let rows = stmt
        .query_map([limit.clamp(1, 1000) as i64], |r| {
            let stored: String = r.get(3)?;
            let analyzing: bool = r.get(10)?;
            Ok(json!({
                "id": r.get::<_, String>(0)?,
                "project": r.get::<_, String>(1)?,
                "cwd": r.get::<_, Option<String>>(2)?,
                "state": if analyzing { "analyzing".to_owned() } else { stored },
                "ended": r.get::<_, bool>(4)?,
                "ended_at": r.get::<_, Option<i64>>(11)?,
                "started_at": r.get::<_, i64>(5)?,
                "prompts": r.get::<_, i64>(6)?,
                "observations": r.get::<_, i64>(7)?,
                "concepts": r.get::<_, i64>(8)?,
                "questions": r.get::<_, i64>(9)?,
            }))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(json!({ "sessions": rows }))
}
