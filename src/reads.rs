//! The read model of sessions and jobs: the queries behind the read routes and the CLI's
//! summaries, each returning the JSON shape of SPEC §4.4 / Appendix A. Reads only; any
//! connection will do. What the learner learns (due cards, mastery, streaks, the learner's
//! days) is read by `crate::learning`.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use crate::clock::Millis;
use crate::jobs::PIPELINE;
use crate::learn::day::LearnerDay;
use crate::queue::lane_active;

fn json_column(text: Option<String>) -> Value {
    text.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or(Value::Null)
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
           s.platform, \
           (SELECT COUNT(*) FROM questions q WHERE q.session_id = s.id AND ",
        crate::learning::reflection!(),
        ") \
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
                // Questions = cards + reflection prompts, as `vl status` and `vl export` count
                // them (`learning::counts::Questions`).
                "questions": r.get::<_, i64>(9)?,
                "cards": r.get::<_, i64>(9)? - r.get::<_, i64>(16)?,
                "reflections": r.get::<_, i64>(16)?,
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

/// `GET /api/vibelearn/activity?days=N`: quiz answers on each of the last `days` learner days
/// (`learn::day`), today included, oldest first, zero-filled: `answers`, `correct`,
/// `reflections` (answers to reflection prompts, neither right nor wrong) and `words`, the day
/// in `vl status`'s words (`learning::counts::Answers`). Answers and correct are read from
/// `daily_streaks`, which `vl quiz` keeps per day in the same transaction as each answer,
/// rather than grouping every `quiz_attempts` row by day on each refresh; the reflections of
/// the window from the reflection prompts' own attempts.
pub fn activity(conn: &Connection, day: &LearnerDay, now: Millis, days: usize) -> rusqlite::Result<Value> {
    let days = days.clamp(1, MAX_ACTIVITY_DAYS) as i64;
    let today = day.day_of(now);
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
    let reflections = crate::learning::counts::reflections_by_day(conn, day, day.start_of(first))?;
    let rows: Vec<Value> = (first..=today)
        .map(|n| {
            let (answers, correct) = counts.get(&n).copied().unwrap_or((0, 0));
            // A reflection is stored as an answer that was not correct; never more than the day's answers.
            let reflections = reflections.get(&n).copied().unwrap_or(0).min(answers - correct).max(0);
            let tally = crate::learning::counts::Answers { answers, correct, reflections, again: None };
            let (y, m, d) = crate::clock::civil_from_days(n);
            json!({ "day": format!("{y:04}-{m:02}-{d:02}"), "answers": answers, "correct": correct,
                    "reflections": reflections, "words": tally.words() })
        })
        .collect();
    let total: i64 = rows.iter().filter_map(|r| r["answers"].as_i64()).sum();
    Ok(json!({ "days": rows, "total_answers": total }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::schedule::DAY_MS;
    use crate::learning::cards::due_questions;

    const NOW: Millis = 20_000 * DAY_MS + 10 * MINUTE_MS + 30_000; // 2024-10-04 00:10:30 UTC

    fn db() -> (tempfile::TempDir, Connection) {
        crate::db::testing::fresh()
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
    fn activity_is_zero_filled_by_utc_day() {
        let (_dir, conn) = db();
        let today = NOW / DAY_MS;
        conn.execute(
            "INSERT INTO daily_streaks (day, answers, correct) VALUES (?1, 4, 3), (?2, 2, 0), (?3, 9, 9)",
            params![today, today - 2, today - 30],
        )
        .unwrap();
        // One of today's four answers went to a reflection prompt: neither right nor wrong.
        conn.execute_batch(crate::db::testing::SESSION_AND_CONCEPT).unwrap();
        conn.execute(
            "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, question, explanation, \
             tags, text_hash, created_at, parent_question_id) VALUES ('p', 'c', 's', 'true_false', 'mid', 'q', 'e', \
             '[]', 'p', 1, NULL), ('r', 'c', 's', 'open_ended', 'mid', 'why?', '', '[]', 'r', 1, 'p')",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO quiz_attempts (question_id, answer, correct, quality, created_at) VALUES ('r', 'x', 0, 4, ?1)",
            [NOW - 60_000],
        )
        .unwrap();
        let body = activity(&conn, &LearnerDay::default(), NOW, 3).unwrap();
        let days = body["days"].as_array().unwrap();
        assert_eq!(days.len(), 3);
        assert_eq!(
            days[0],
            json!({"day": "2024-10-02", "answers": 2, "correct": 0, "reflections": 0,
                   "words": "2 answers: 0 correct of 2 graded"})
        );
        assert_eq!(days[1]["answers"], 0);
        assert_eq!(
            days[2],
            json!({"day": "2024-10-04", "answers": 4, "correct": 3, "reflections": 1,
                   "words": "4 answers: 3 correct of 3 graded, 1 reflection"})
        );
        assert_eq!(body["total_answers"], 6);
    }
}
