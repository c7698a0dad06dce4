//! The read model: the queries behind the read routes and the CLI's summaries, each returning
//! the JSON shape of SPEC §4.4 / Appendix A. Reads only; any connection will do.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use crate::clock::Millis;
use crate::jobs::PIPELINE;
use crate::learn::schedule::{Card, CardState, DAY_MS, Memory, Scheduler};
use crate::learn::streak::{self, StreakState};
use crate::queue::lane_active;

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

/// The share of a session's questions grounded in its files (issue 16): `{questions,
/// grounded, share, by_kind:{quote, blank, mutation}}`, `share` null with no question.
pub fn grounding_share(conn: &Connection, session_id: &str) -> rusqlite::Result<Value> {
    let (questions, quote, blank, mutation): (i64, i64, i64, i64) = conn
        .prepare_cached(
            "SELECT COUNT(*), COUNT(*) FILTER (WHERE grounding_kind = 'quote'), \
             COUNT(*) FILTER (WHERE grounding_kind = 'blank'), COUNT(*) FILTER (WHERE grounding_kind = 'mutation') \
             FROM questions WHERE session_id = ?1",
        )?
        .query_row([session_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
    let grounded = quote + blank + mutation;
    let share = (questions > 0).then(|| grounded as f64 / questions as f64);
    Ok(json!({
        "questions": questions,
        "grounded": grounded,
        "share": share,
        "by_kind": { "quote": quote, "blank": blank, "mutation": mutation },
    }))
}

/// Which questions a quiz asks (SPEC §7): `vl quiz --session/--project/--leeches`.
#[derive(Debug, Clone, Default)]
pub struct DueFilter {
    pub session: Option<String>,
    /// A project name as `sessions.project` holds it.
    pub project: Option<String>,
    /// Only leeches, suspended or not, due or not (`vl quiz --leeches`).
    pub leeches: bool,
    /// New questions still allowed today (`VIBELEARN_NEW_PER_DAY` less those introduced since
    /// UTC midnight); `None` = no cap.
    pub new_allowed: Option<usize>,
}

/// Questions in quiz order (SPEC §7): learning cards due now (re-asks), then reviews due
/// (oldest due first), then new ones (oldest first, at most `new_allowed`). Suspended cards
/// are never due; follow-ups only once a correct answer inserted them (they then have a due
/// date). With `leeches`, every leech of the filter instead, most lapsed first.
pub fn due_questions_filtered(
    conn: &Connection,
    now: Millis,
    filter: &DueFilter,
    limit: usize,
) -> rusqlite::Result<Value> {
    let limit = limit.clamp(1, 500);
    let scope = "FROM questions q JOIN concepts c ON c.id = q.concept_id JOIN sessions s ON s.id = q.session_id \
                 WHERE (?2 IS NULL OR q.session_id = ?2) AND (?3 IS NULL OR s.project = ?3)";
    let select = "SELECT q.*, c.name AS concept_name, s.project AS project_name";
    let mut rows = Vec::new();
    if filter.leeches {
        let mut stmt = conn.prepare_cached(&format!(
            "{select} {scope} AND EXISTS (SELECT 1 FROM json_each(q.tags) t WHERE t.value = 'leech') \
             ORDER BY q.lapses DESC, q.due_at, q.id LIMIT ?4"
        ))?;
        rows = stmt
            .query_map(params![now, filter.session, filter.project, limit as i64], question_from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(json!({ "questions": rows }));
    }
    let mut seen = conn.prepare_cached(&format!(
        "{select} {scope} AND q.suspended = 0 AND q.due_at IS NOT NULL AND q.due_at <= ?1 \
         ORDER BY CASE WHEN q.card_state IN ('learning', 'relearning') THEN 0 ELSE 1 END, q.due_at, q.created_at, q.id \
         LIMIT ?4"
    ))?;
    rows.extend(
        seen.query_map(params![now, filter.session, filter.project, limit as i64], question_from_row)?
            .collect::<Result<Vec<_>, _>>()?,
    );
    let room = (limit - rows.len()).min(filter.new_allowed.unwrap_or(usize::MAX));
    if room > 0 {
        let mut fresh = conn.prepare_cached(&format!(
            "{select} {scope} AND q.suspended = 0 AND q.due_at IS NULL AND q.parent_question_id IS NULL \
             ORDER BY q.created_at, q.id LIMIT ?4"
        ))?;
        rows.extend(
            fresh
                .query_map(params![now, filter.session, filter.project, room as i64], question_from_row)?
                .collect::<Result<Vec<_>, _>>()?,
        );
    }
    Ok(json!({ "questions": rows }))
}

/// `GET /api/vibelearn/questions/due`: [`due_questions_filtered`] for one session or all,
/// without the daily cap on new questions (a reader, not a sitting).
pub fn due_questions(conn: &Connection, now: Millis, session: Option<&str>, limit: usize) -> rusqlite::Result<Value> {
    let filter = DueFilter { session: session.map(str::to_owned), ..DueFilter::default() };
    due_questions_filtered(conn, now, &filter, limit)
}

/// New questions introduced (first answered) since UTC midnight.
pub fn new_introduced_today(conn: &Connection, now: Millis) -> rusqlite::Result<usize> {
    let midnight = day_of(now) * DAY_MS;
    let n: i64 = conn
        .prepare_cached("SELECT COUNT(*) FROM review_log WHERE state_before = 'new' AND created_at >= ?1")?
        .query_row([midnight], |r| r.get(0))?;
    Ok(usize::try_from(n).unwrap_or(0))
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
        .optional()?
        .map(|stack| match serde_json::from_value::<crate::analysis::model::StackProfile>(stack.clone()) {
            // Display names, also for profiles stored by an earlier version with ids.
            Ok(mut profile) => {
                crate::analysis::stack::show_languages(&mut profile);
                serde_json::to_value(profile).unwrap_or(stack)
            }
            Err(_) => stack,
        });
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
    let grounding = grounding_share(conn, session_id)?;
    Ok(Some(json!({ "summary": summary, "stack": stack, "concepts": concepts, "grounding": grounding })))
}

/// `GET /api/vibelearn/sessions/:id/pipeline`: each step's latest job.
pub fn pipeline(conn: &Connection, session_id: &str) -> rusqlite::Result<Value> {
    let lane = crate::jobs::lane(session_id);
    let mut stmt = conn.prepare_cached(
        "SELECT id, state, attempt, last_error, result, gate FROM jobs WHERE lane = ?1 AND kind = ?2 \
         ORDER BY id DESC LIMIT 1",
    )?;
    let mut steps = Vec::new();
    for kind in PIPELINE {
        let row = stmt
            .query_row(params![lane, kind], |r| {
                let step = json!({
                    "kind": kind,
                    "job_id": r.get::<_, i64>(0)?,
                    "state": r.get::<_, String>(1)?,
                    "attempt": r.get::<_, i64>(2)?,
                    "last_error": r.get::<_, Option<String>>(3)?,
                    "result": json_column(r.get(4)?),
                });
                Ok((step, r.get::<_, crate::queue::JobId>(0)?, r.get::<_, Option<String>>(5)?))
            })
            .optional()?;
        let Some((mut step, id, gate)) = row else {
            steps.push(
                json!({"kind": kind, "job_id": null, "state": null, "attempt": 0, "last_error": null, "result": null}),
            );
            continue;
        };
        // A held step says what it waits on (the dashboard tells held on a job from paused).
        if step["state"] == "held" {
            step["waiting_on"] = json!(crate::queue::store::waiting_on(conn, id, gate)?);
        }
        steps.push(step);
    }
    Ok(json!({ "steps": steps }))
}

/// `GET /api/sessions`: most recent first, with each session's lifecycle state. `analyzing`
/// is derived (a pipeline job of the session is waiting or running) rather than stored, so it
/// can never be left stale by a crash.
pub fn sessions(conn: &Connection, limit: usize) -> rusqlite::Result<Value> {
    let mut stmt = conn.prepare_cached(concat!(
        "SELECT s.id, s.project, s.cwd, s.state, s.ended_at IS NOT NULL, s.started_at, \
           (SELECT COUNT(*) FROM prompts p WHERE p.session_id = s.id), \
           (SELECT COUNT(*) FROM observations o WHERE o.session_id = s.id), \
           (SELECT COUNT(*) FROM concepts c WHERE c.session_id = s.id), \
           (SELECT COUNT(*) FROM questions q WHERE q.session_id = s.id), \
           (SELECT COUNT(grounding_kind) FROM questions q WHERE q.session_id = s.id), \
           EXISTS (SELECT 1 FROM jobs j WHERE j.lane = 'session:' || s.id AND j.kind != 'ingest' \
                   AND ",
        lane_active!("j.state"),
        "), \
           s.ended_at, \
           (SELECT group_concat(j.kind, ',' ORDER BY j.id) FROM jobs j WHERE j.lane = 'session:' || s.id \
              AND j.kind != 'ingest' AND (j.state = 'dead' OR (j.state = 'held' AND j.gate IS NULL)) \
              AND j.id = (SELECT MAX(k.id) FROM jobs k WHERE k.lane = j.lane AND k.kind = j.kind)), \
           (SELECT group_concat(j.kind, ',' ORDER BY j.id) FROM jobs j WHERE j.lane = 'session:' || s.id \
              AND j.kind != 'ingest' AND j.state = 'held' AND j.gate IS NOT NULL \
              AND j.id = (SELECT MAX(k.id) FROM jobs k WHERE k.lane = j.lane AND k.kind = j.kind)), \
           s.platform \
         FROM sessions s ORDER BY s.started_at DESC, s.id LIMIT ?1"
    ))?;
    let rows = stmt
        .query_map([limit.clamp(1, 1000) as i64], |r| {
            let stored: String = r.get(3)?;
            let analyzing: bool = r.get(11)?;
            // A step whose latest job is dead, or held behind one: the analysis stopped there,
            // which the stored state (`observing`) would hide. Held on a paused provider reads
            // `paused`: it goes on by itself once the provider resumes.
            let list = |kinds: Option<String>| kinds.map(|k| k.split(',').map(str::to_owned).collect::<Vec<_>>());
            let stuck_on = list(r.get(13)?);
            let paused_on = list(r.get(14)?);
            let state = match (analyzing, &stuck_on, &paused_on) {
                (true, _, _) => "analyzing".to_owned(),
                (false, Some(_), _) => "stuck".to_owned(),
                (false, None, Some(_)) => "paused".to_owned(),
                (false, None, None) => stored,
            };
            Ok(json!({
                "id": r.get::<_, String>(0)?,
                "project": r.get::<_, String>(1)?,
                "cwd": r.get::<_, Option<String>>(2)?,
                "platform": r.get::<_, Option<String>>(15)?,
                "state": state,
                "stuck_on": stuck_on,
                "paused_on": paused_on,
                "ended": r.get::<_, bool>(4)?,
                "ended_at": r.get::<_, Option<i64>>(12)?,
                "started_at": r.get::<_, i64>(5)?,
                "prompts": r.get::<_, i64>(6)?,
                "observations": r.get::<_, i64>(7)?,
                "concepts": r.get::<_, i64>(8)?,
                "questions": r.get::<_, i64>(9)?,
                "grounded_questions": r.get::<_, i64>(10)?,
            }))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(json!({ "sessions": rows }))
}

/// Width of one throughput bucket.
pub const MINUTE_MS: Millis = 60_000;
/// Largest `minutes` window `GET /api/jobs/throughput` answers (a day of one-minute buckets).
pub const MAX_THROUGHPUT_MINUTES: usize = 24 * 60;

/// `GET /api/jobs/throughput?minutes=N`: jobs that reached a final state in each of the last
/// `minutes` whole minutes (the last bucket is the current, partial one), by state. Oldest
/// first; every bucket is present, empty ones with zeros, so a chart needs no gap filling.
///
/// It counts `jobs.finished_at`, which only final states set (succeeded, dead, cancelled):
/// a failed attempt that will be retried is not a finished job. Counting attempts instead
/// would scan `job_attempts`, which has no time index; the `jobs_finished` index makes this a
/// range read. Pruned jobs drop out, which retention makes irrelevant at minute scale.
pub fn throughput(conn: &Connection, now: Millis, minutes: usize) -> rusqlite::Result<Value> {
    let minutes = minutes.clamp(1, MAX_THROUGHPUT_MINUTES) as i64;
    let from = (now.div_euclid(MINUTE_MS) - minutes + 1) * MINUTE_MS;
    let mut buckets: Vec<Value> = (0..minutes)
        .map(|i| json!({ "start": from + i * MINUTE_MS, "succeeded": 0, "dead": 0, "cancelled": 0 }))
        .collect();
    let mut stmt = conn.prepare_cached(
        "SELECT (finished_at - ?1) / ?2, state, COUNT(*) FROM jobs \
         WHERE state IN ('succeeded', 'dead', 'cancelled') AND finished_at >= ?1 \
         GROUP BY 1, 2",
    )?;
    let rows = stmt.query_map(params![from, MINUTE_MS], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?))
    })?;
    for row in rows {
        let (bucket, state, count) = row?;
        // A finish stamped after `now` (clock skew between writer and reader) joins the last bucket.
        let index = bucket.clamp(0, minutes - 1) as usize;
        let slot = &mut buckets[index][state.as_str()];
        *slot = json!(slot.as_i64().unwrap_or(0) + count);
    }
    Ok(json!({ "minutes": minutes, "bucket_ms": MINUTE_MS, "from": from, "now": now, "buckets": buckets }))
}

/// Largest `days` window `GET /api/vibelearn/activity` answers.
pub const MAX_ACTIVITY_DAYS: usize = 366;

/// `GET /api/vibelearn/activity?days=N`: quiz answers (and how many were right) on each of the
/// last `days` UTC days, today included, oldest first, zero-filled. Read from `daily_streaks`,
/// which `vl quiz` keeps per day in the same transaction as each answer, rather than grouping
/// every `quiz_attempts` row by day on each refresh.
pub fn activity(conn: &Connection, now: Millis, days: usize) -> rusqlite::Result<Value> {
    let days = days.clamp(1, MAX_ACTIVITY_DAYS) as i64;
    let today = now.div_euclid(DAY_MS);
    let first = today - days + 1;
    let mut counts = std::collections::HashMap::new();
    let mut stmt =
        conn.prepare_cached("SELECT day, answers, correct FROM daily_streaks WHERE day BETWEEN ?1 AND ?2")?;
    for row in stmt
        .query_map(params![first, today], |r| Ok((r.get::<_, i64>(0)?, (r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))))?
    {
        let (day, answers) = row?;
        counts.insert(day, answers);
    }
    let rows: Vec<Value> = (first..=today)
        .map(|day| {
            let (answers, correct) = counts.get(&day).copied().unwrap_or((0, 0));
            let (y, m, d) = crate::clock::civil_from_days(day);
            json!({ "day": format!("{y:04}-{m:02}-{d:02}"), "answers": answers, "correct": correct })
        })
        .collect();
    let total: i64 = rows.iter().filter_map(|r| r["answers"].as_i64()).sum();
    Ok(json!({ "days": rows, "total_answers": total }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Millis = 20_000 * DAY_MS + 10 * MINUTE_MS + 30_000; // 2024-10-04 00:10:30 UTC

    fn db() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::open_and_migrate(&dir.path().join("t.db"), crate::db::Synchronous::Normal).unwrap();
        (dir, conn)
    }

    #[test]
    fn questions_stored_before_grounding_read_as_ungrounded_and_count_in_the_share() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = crate::db::open(&dir.path().join("t.db"), crate::db::Synchronous::Normal).unwrap();
        // A database at version 6, with one question, migrated to the latest.
        for (version, _, sql) in crate::db::migrate::MIGRATIONS.iter().filter(|(v, _, _)| *v <= 6) {
            conn.execute_batch(sql).unwrap();
            conn.pragma_update(None, "user_version", version).unwrap();
        }
        let question = |id: &str, extra: &str, values: &str| {
            format!(
                "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, question, explanation, \
                 tags, text_hash, created_at{extra}) VALUES ('{id}', 'c', 's', 'code_reading', 'mid', 'q {id}', 'e', \
                 '[]', '{id}', 1{values})"
            )
        };
        conn.execute_batch(&format!(
            "INSERT INTO sessions (id, project, started_at, updated_at) VALUES ('s', 'p', 1, 1); \
             INSERT INTO concepts (id, session_id, name, normalized_name, category, difficulty, source_file, snippet, \
             why_it_matters, confidence, created_at, updated_at) VALUES ('c', 's', 'C', 'c', 'general', 'mid', 'a.ts', \
             'x', 'y', 0.9, 1, 1); {};",
            question("old", "", "")
        ))
        .unwrap();
        crate::db::migrate(&mut conn).unwrap();
        conn.execute_batch(&format!(
            "{}; {};",
            question(
                "mutated",
                ", grounding_kind, grounding_file, grounding_line_start, grounding_line_end, grounding_mutation",
                ", 'mutation', 'a.ts', 2, 4, '{\"line\":3,\"original\":\"a\",\"mutated\":\"b\"}'"
            ),
            question(
                "quoted",
                ", grounding_kind, grounding_file, grounding_line_start, grounding_line_end",
                ", 'quote', 'a.ts', 1, 1"
            )
        ))
        .unwrap();
        let share = grounding_share(&conn, "s").unwrap();
        assert_eq!(share["questions"], 3);
        assert_eq!(share["grounded"], 2);
        assert_eq!(share["by_kind"], json!({"quote": 1, "blank": 0, "mutation": 1}));
        assert!((share["share"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9);
        let due = due_questions(&conn, 0, Some("s"), 10).unwrap();
        let by_id = |id: &str| due["questions"].as_array().unwrap().iter().find(|q| q["id"] == id).unwrap().clone();
        assert_eq!(by_id("old")["grounding"], Value::Null);
        assert_eq!(
            by_id("mutated")["grounding"],
            json!({"file": "a.ts", "line_start": 2, "line_end": 4, "kind": "mutation",
                   "mutation": {"line": 3, "original": "a", "mutated": "b"}})
        );
        assert_eq!(sessions(&conn, 10).unwrap()["sessions"][0]["grounded_questions"], 2);
        assert_eq!(session_summary(&conn, "s").unwrap().unwrap()["grounding"], share);
        assert_eq!(grounding_share(&conn, "none").unwrap()["share"], Value::Null);
    }

    fn finished(conn: &Connection, state: &str, at: Millis) {
        conn.execute(
            "INSERT INTO jobs (kind, state, payload, max_attempts, created_at, run_at, finished_at) \
             VALUES ('k', ?1, '{}', 1, 0, 0, ?2)",
            params![state, at],
        )
        .unwrap();
    }

    #[test]
    fn throughput_buckets_whole_minutes_oldest_first() {
        let (_dir, conn) = db();
        let this_minute = NOW - 30_000;
        finished(&conn, "succeeded", this_minute + 1); // last bucket
        finished(&conn, "succeeded", this_minute - 1); // the one before
        finished(&conn, "dead", this_minute - 2 * MINUTE_MS);
        finished(&conn, "succeeded", this_minute - 3 * MINUTE_MS); // outside a 3-minute window
        finished(&conn, "retryable", this_minute); // not finished: never counted
        let body = throughput(&conn, NOW, 3).unwrap();
        let buckets = body["buckets"].as_array().unwrap();
        assert_eq!(buckets.len(), 3);
        assert_eq!(body["from"], this_minute - 2 * MINUTE_MS);
        let row = |i: usize| (buckets[i]["succeeded"].as_i64().unwrap(), buckets[i]["dead"].as_i64().unwrap());
        assert_eq!([row(0), row(1), row(2)], [(0, 1), (1, 0), (1, 0)]);
        assert_eq!(throughput(&conn, NOW, 0).unwrap()["minutes"], 1, "clamped to at least one bucket");
    }

    #[test]
    fn the_profile_at_now_is_fsrs_recall_with_leeches_first() {
        let (_dir, conn) = db();
        conn.execute_batch(
            "INSERT INTO sessions (id, project, started_at, updated_at) VALUES ('s', 'p', 1, 1);
             INSERT INTO concepts (id, session_id, name, normalized_name, category, difficulty, source_file, snippet,
               why_it_matters, confidence, created_at, updated_at) VALUES
               ('c1', 's', 'Closures', 'closures', 'functional', 'mid', 'a.ts', 'x', 'y', 0.9, 1, 1),
               ('c2', 's', 'Mutexes', 'mutexes', 'concurrency', 'mid', 'a.go', 'x', 'y', 0.9, 1, 1),
               ('c3', 's', 'Unasked', 'unasked', 'other', 'mid', 'a.py', 'x', 'y', 0.9, 1, 1);",
        )
        .unwrap();
        let question = |id: &str, concept: &str, stability: f64, tags: &str| {
            conn.execute(
                "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, question, explanation, \
                 tags, text_hash, created_at, card_state, stability, fsrs_difficulty, last_review_at, reps) \
                 VALUES (?1, ?2, 's', 'true_false', 'mid', ?1, 'e', ?4, ?1, 1, 'review', ?3, 5, ?5, 1)",
                params![id, concept, stability, tags, NOW],
            )
            .unwrap();
        };
        question("q1", "c1", 10.0, "[]");
        question("q2", "c2", 10.0, "[\"leech\"]");
        let body = profile_at(&conn, &Scheduler::default(), NOW + 10 * DAY_MS).unwrap();
        let rows = body["profile"].as_array().unwrap();
        let names: Vec<&str> = rows.iter().map(|r| r["concept_name"].as_str().unwrap()).collect();
        assert_eq!(names, ["Mutexes", "Unasked", "Closures"], "the leech first, then the weakest");
        // Reviewed ten days ago with stability 10: recall 0.9, no gap; the leech is a gap anyway.
        assert!((rows[2]["mastery_score"].as_f64().unwrap() - 0.9).abs() < 1e-3, "{body}");
        assert_eq!(
            (rows[2]["gap"].as_bool(), rows[0]["gap"].as_bool(), rows[1]["gap"].as_bool()),
            (Some(false), Some(true), Some(true))
        );
        assert_eq!((rows[1]["cards"].as_i64(), rows[1]["mastery_score"].as_f64()), (Some(0), Some(0.0)));
    }

    #[test]
    fn activity_is_zero_filled_by_utc_day() {
        let (_dir, conn) = db();
        let today = NOW / DAY_MS;
        conn.execute(
            "INSERT INTO daily_streaks (day, answers, correct) VALUES (?1, 4, 3), (?2, 2, 0), (?3, 9, 9)",
            params![today, today - 2, today - 30],
        )
        .unwrap();
        let body = activity(&conn, NOW, 3).unwrap();
        let days = body["days"].as_array().unwrap();
        assert_eq!(days.len(), 3);
        assert_eq!(days[0], json!({"day": "2024-10-02", "answers": 2, "correct": 0}));
        assert_eq!(days[1]["answers"], 0);
        assert_eq!(days[2], json!({"day": "2024-10-04", "answers": 4, "correct": 3}));
        assert_eq!(body["total_answers"], 6);
    }
}

// ---- Scheduling state and mastery (SPEC §7) ----

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
        step: card_count(r.get::<_, Option<i64>>(at + 1)?.unwrap_or(0)),
        memory: stability.zip(difficulty).map(|(stability, difficulty)| Memory { stability, difficulty }),
        due_at: r.get(at + 4)?,
        last_review_at: r.get(at + 5)?,
        reps: card_count(r.get::<_, Option<i64>>(at + 6)?.unwrap_or(0)),
        lapses: card_count(r.get::<_, Option<i64>>(at + 7)?.unwrap_or(0)),
    })
}

/// A stored counter as `u32`: negative (a corrupt row) reads as 0, huge saturates.
fn card_count(n: i64) -> u32 {
    u32::try_from(n.max(0)).unwrap_or(u32::MAX)
}

/// One concept's mastery (SPEC §7), as `vl gaps`, `vl status` and the profile read it.
#[derive(Debug, Clone, PartialEq)]
pub struct ConceptMastery {
    pub name: String,
    pub category: String,
    pub level: String,
    /// Mean retrievability of the answered cards, 0 when none was answered.
    pub score: f64,
    /// Cards of the concept answered at least once, and all of its cards.
    pub answered: i64,
    pub cards: i64,
    /// Leech cards (tagged, usually suspended) and their lapses.
    pub leeches: i64,
    pub lapses: i64,
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

/// The concepts mastered at `now`: answered, no leech, recall above [`MASTERED_SCORE`].
///
/// [`MASTERED_SCORE`]: crate::learn::mastery::MASTERED_SCORE
pub fn mastered_count(conn: &Connection, scheduler: &Scheduler, now: Millis) -> rusqlite::Result<i64> {
    Ok(concept_mastery(conn, scheduler, now)?
        .iter()
        .filter(|g| g.answered > 0 && g.leeches == 0 && g.score > crate::learn::mastery::MASTERED_SCORE)
        .count() as i64)
}

/// Every concept's mastery at `now`: FSRS retrievability averaged over its answered cards (0
/// when none was), with its leeches, by normalised name.
pub fn concept_mastery(conn: &Connection, scheduler: &Scheduler, now: Millis) -> rusqlite::Result<Vec<ConceptMastery>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.normalized_name, MIN(c.name), MIN(c.category), COALESCE(MIN(p.level), 'junior'), \
                q.card_state, q.learning_step, q.stability, q.fsrs_difficulty, q.due_at, q.last_review_at, q.reps, \
                q.lapses, EXISTS (SELECT 1 FROM json_each(q.tags) t WHERE t.value = 'leech'), q.id \
         FROM concepts c LEFT JOIN questions q ON q.concept_id = c.id \
         LEFT JOIN concept_profiles p ON p.normalized_name = c.normalized_name \
         GROUP BY c.normalized_name, q.id ORDER BY c.normalized_name",
    )?;
    let mut by_name: std::collections::BTreeMap<String, (ConceptMastery, Vec<f64>)> = Default::default();
    let rows = stmt.query_map([], |r| {
        let key: String = r.get(0)?;
        let gap = ConceptMastery {
            name: r.get(1)?,
            category: r.get(2)?,
            level: r.get(3)?,
            score: 0.0,
            answered: 0,
            cards: 0,
            leeches: 0,
            lapses: 0,
        };
        let has_card = r.get::<_, Option<String>>(13)?.is_some();
        let card = if has_card { Some(card_from_row_at(r, 4)?) } else { None };
        let leech: Option<bool> = r.get(12)?;
        Ok((key, gap, card, leech.unwrap_or(false)))
    })?;
    for row in rows {
        let (key, gap, card, leech) = row?;
        let entry = by_name.entry(key).or_insert_with(|| (gap, Vec::new()));
        let Some(card) = card else { continue };
        entry.0.cards += 1;
        if leech {
            entry.0.leeches += 1;
            entry.0.lapses += i64::from(card.lapses);
        }
        if let Some(r) = scheduler.retrievability(&card, now) {
            entry.0.answered += 1;
            entry.1.push(r);
        }
    }
    Ok(by_name
        .into_values()
        .map(|(mut gap, values)| {
            gap.score = if values.is_empty() { 0.0 } else { values.iter().sum::<f64>() / values.len() as f64 };
            gap
        })
        .collect())
}

/// Below this a concept is a gap (SPEC §7), as is any concept with a leech.
pub const GAP_RECALL: f64 = 0.7;

/// The profile with mastery as SPEC §7 defines it: `{profile: [{concept_name, category, level,
/// mastery_score (retrievability now), cards, answered_cards, leeches, gap, correct_answers,
/// incorrect_answers, encounter_count, last_seen_at}]}`, leeches first, then weakest first.
/// What the profile route should serve (it still serves [`profile`], the score stored at the
/// last answer, because it passes no `now`).
pub fn profile_at(conn: &Connection, scheduler: &Scheduler, now: Millis) -> rusqlite::Result<Value> {
    let mut list = concept_mastery(conn, scheduler, now)?;
    list.sort_by(|a, b| {
        (b.leeches > 0).cmp(&(a.leeches > 0)).then(a.score.total_cmp(&b.score)).then(a.name.cmp(&b.name))
    });
    let mut counts = conn.prepare_cached(
        "SELECT correct_answers, incorrect_answers, encounter_count, last_seen_at FROM concept_profiles WHERE concept_name = ?1",
    )?;
    let mut rows = Vec::with_capacity(list.len());
    for m in list {
        let (correct, incorrect, encounters, seen): (i64, i64, i64, Option<i64>) = counts
            .query_row([&m.name], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .optional()?
            .unwrap_or((0, 0, 0, None));
        rows.push(json!({
            "concept_name": m.name, "category": m.category, "level": m.level, "mastery_score": m.score,
            "cards": m.cards, "answered_cards": m.answered, "leeches": m.leeches,
            "gap": m.leeches > 0 || m.score < GAP_RECALL,
            "correct_answers": correct, "incorrect_answers": incorrect, "encounter_count": encounters,
            "last_seen_at": seen,
        }));
    }
    Ok(json!({ "profile": rows }))
}

// ---- The learner's streak and what is due (statusline, SessionStart, vl status, vl quiz) ----

/// Days since the epoch, UTC: the key of `daily_streaks`.
pub fn day_of(now: Millis) -> i64 {
    now.div_euclid(DAY_MS)
}

/// The streak as of `now`: the stored days replayed through `learn::streak`, so the rule
/// lives in one place. `current` is 0 once a whole day has passed without an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Streak {
    pub current: u32,
    pub longest: u32,
}

pub fn streak(conn: &Connection, now: Millis) -> rusqlite::Result<Streak> {
    let mut stmt = conn.prepare_cached("SELECT day FROM daily_streaks WHERE answers > 0 ORDER BY day")?;
    let mut state: Option<StreakState> = None;
    for day in stmt.query_map([], |r| r.get::<_, i64>(0))? {
        state = Some(streak::update_streak(state, day?));
    }
    Ok(Streak { current: streak::current_streak(state.as_ref(), day_of(now)), longest: state.map_or(0, |s| s.longest) })
}

/// `GET /api/vibelearn/overview`: what the dashboard leads with — the questions due now, the
/// streak, and how many concepts are met and mastered (as `vl status` counts them).
pub fn overview(conn: &Connection, scheduler: &Scheduler, now: Millis) -> rusqlite::Result<Value> {
    let counts = due_counts(conn, now, None)?;
    let streak = streak(conn, now)?;
    let mastered = mastered_count(conn, scheduler, now)?;
    Ok(json!({
        "due": counts.due,
        "streak": {"current": streak.current, "longest": streak.longest},
        "concepts": counts.concepts,
        "mastered": mastered,
    }))
}

/// What is due and met, for `vl statusline` and the SessionStart message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DueCounts {
    /// Questions to answer now: reviews due plus new questions.
    pub due: i64,
    /// Consecutive days with a quiz answer, ending today or yesterday (all projects).
    pub streak: u32,
    /// Distinct concepts met.
    pub concepts: i64,
    /// Whether `due` and `concepts` are for the IDE's project (else for all projects).
    pub project: bool,
}

/// Sessions of a project: its directory or any directory below it (a session started in a
/// subfolder belongs to the project).
const IN_PROJECT: &str = "(s.cwd = ?1 OR substr(s.cwd, 1, length(?1) + 1) = ?1 || '/')";

/// The counts for `project` (or all projects when it has none, or none is given).
pub fn due_counts(conn: &Connection, now: Millis, project: Option<&str>) -> rusqlite::Result<DueCounts> {
    let streak = streak(conn, now)?.current;
    if let Some(project) = project {
        let (due, concepts) = scoped(conn, now, project)?;
        if due + concepts > 0 {
            return Ok(DueCounts { due, streak, concepts, project: true });
        }
    }
    let due: i64 = conn
        .prepare_cached(&format!("SELECT COUNT(*) FROM questions q WHERE {DUE}"))?
        .query_row([now], |r| r.get(0))?;
    let concepts: i64 =
        conn.prepare_cached("SELECT COUNT(DISTINCT normalized_name) FROM concepts")?.query_row([], |r| r.get(0))?;
    Ok(DueCounts { due, streak, concepts, project: false })
}

/// A question to answer now: a review whose time came, or a new question (as `vl quiz` asks).
const DUE: &str = "q.suspended = 0 AND ((q.due_at IS NOT NULL AND q.due_at <= ?1) OR (q.due_at IS NULL AND q.parent_question_id IS NULL))";

fn scoped(conn: &Connection, now: Millis, project: &str) -> rusqlite::Result<(i64, i64)> {
    let due: i64 = conn
        .prepare_cached(&format!(
            "SELECT COUNT(*) FROM questions q JOIN sessions s ON s.id = q.session_id \
             WHERE {} AND {}",
            IN_PROJECT.replace("?1", "?2"),
            DUE
        ))?
        .query_row(params![now, project], |r| r.get(0))?;
    let concepts: i64 = conn
        .prepare_cached(&format!(
            "SELECT COUNT(DISTINCT c.normalized_name) FROM concepts c JOIN sessions s ON s.id = c.session_id WHERE {IN_PROJECT}"
        ))?
        .query_row([project], |r| r.get(0))?;
    Ok((due, concepts))
}
