//! The `sync` job (SPEC §8): the session's learning material and the quiz attempts (with their
//! review-log rows, SPEC §7) not yet
//! synced, POSTed to `{API_URL}/api/sync`, signed and idempotent. The account key is read
//! from `<data>/config.json` at every run, so `vl login` needs no restart.
//!
//! Outcomes: not configured → succeeded `skipped:no_api_key`; 2xx → the session and the sent
//! attempts are marked synced in the job's effects; 408/429/5xx/network → retried with the
//! remote's Retry-After or backoff; 401/403 → dead at once, "not authorised — run vl login".

use std::path::PathBuf;
use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};
use sha2::Sha256;

use super::session_data;
use super::{missing_session, session_id_of};
use crate::queue::{CancelToken, ClaimedJob, Effects, Handler, Outcome, Queue};
use crate::remote::{StatusClass, classify_status, parse_retry_after};

pub struct SyncHandler {
    pub queue: Queue,
    pub data_dir: PathBuf,
    pub api_url: String,
    pub include_snippets: bool,
}

/// Reads the account key from `<data>/config.json`, if one is configured.
pub fn api_key(data_dir: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(data_dir.join("config.json")).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    value.get("api_key").and_then(Value::as_str).map(str::trim).filter(|k| !k.is_empty()).map(str::to_owned)
}

/// Hex HMAC-SHA256 of `data` under `key`.
pub fn sign(key: &str, data: &[u8]) -> String {
    // HMAC accepts keys of any length; `new_from_slice` cannot fail for it.
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(data);
    hex::encode(mac.finalize().into_bytes())
}

/// What a payload carries that is marked synced once delivered: quiz attempts and
/// review-log rows, by id.
#[derive(Debug, Default)]
struct Carried {
    attempts: Vec<i64>,
    reviews: Vec<i64>,
}

impl Carried {
    fn is_empty(&self) -> bool {
        self.attempts.is_empty() && self.reviews.is_empty()
    }
}

/// The payload of SPEC §8 and the ids of the attempts and review-log rows it carries.
fn build_payload(
    conn: &Connection,
    session_id: &str,
    key: &str,
    include_snippets: bool,
) -> rusqlite::Result<Option<(Value, Carried)>> {
    let Some(session) = session_data::session(conn, session_id)? else { return Ok(None) };
    let (created, edited) = session_data::file_counts(conn, session_id)?;
    let stack: Option<Value> = session_data::stack_profile(conn, session_id)?.map(|s| json!(s));
    let mut concepts = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT id, name, category, difficulty, source_file, snippet, why_it_matters, confidence FROM concepts WHERE session_id = ?1 ORDER BY id",
    )?;
    for row in stmt.query_map([session_id], |r| {
        Ok(json!({"id": r.get::<_, String>(0)?, "name": r.get::<_, String>(1)?, "category": r.get::<_, String>(2)?,
                  "difficulty": r.get::<_, String>(3)?, "source_file": r.get::<_, String>(4)?, "snippet": r.get::<_, String>(5)?,
                  "why_it_matters": r.get::<_, String>(6)?, "confidence": r.get::<_, f64>(7)?}))
    })? {
        let mut concept = row?;
        if !include_snippets {
            concept.as_object_mut().map(|o| o.remove("snippet"));
        }
        concepts.push(concept);
    }
    let mut questions = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT id, concept_id, question_type, difficulty, snippet, question, options, correct, explanation FROM questions \
         WHERE session_id = ?1 ORDER BY id",
    )?;
    for row in stmt.query_map([session_id], |r| {
        Ok(json!({"id": r.get::<_, String>(0)?, "concept_id": r.get::<_, String>(1)?, "question_type": r.get::<_, String>(2)?,
                  "difficulty": r.get::<_, String>(3)?, "snippet": r.get::<_, Option<String>>(4)?, "question": r.get::<_, String>(5)?,
                  "options": r.get::<_, Option<String>>(6)?.and_then(|o| serde_json::from_str::<Value>(&o).ok()),
                  "correct": r.get::<_, Option<String>>(7)?, "explanation": r.get::<_, String>(8)?}))
    })? {
        let mut question = row?;
        if !include_snippets {
            question.as_object_mut().map(|o| o.remove("snippet"));
        }
        questions.push(question);
    }
    let (attempt_ids, attempts) = unsynced_attempts(conn, session_id, key)?;
    let (review_ids, reviews) = unsynced_reviews(conn, session_id, key)?;
    let ended = session.ended_at;
    let payload = json!({
        "client_version": env!("CARGO_PKG_VERSION"),
        "session": {
            "id": session.id, "project": session.project, "started_at": session.started_at, "ended_at": ended,
            "duration_minutes": (ended.unwrap_or(session.updated_at) - session.started_at).max(0) / 60_000,
            "files_created": created, "files_edited": edited, "ide": session.platform,
        },
        "stack": stack,
        "concepts": concepts,
        "questions": questions,
        "quiz_attempts": attempts,
        "review_log": reviews,
    });
    Ok(Some((payload, Carried { attempts: attempt_ids, reviews: review_ids })))
}

/// The session's quiz attempts not yet synced, each signed (HMAC over
/// `question_id:correct:created_at`), with their row ids.
fn unsynced_attempts(conn: &Connection, session_id: &str, key: &str) -> rusqlite::Result<(Vec<i64>, Vec<Value>)> {
    let mut attempt_ids = Vec::new();
    let mut attempts = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT a.id, a.question_id, a.correct, a.quality, a.created_at FROM quiz_attempts a \
         JOIN questions q ON q.id = a.question_id WHERE q.session_id = ?1 AND a.synced_at IS NULL ORDER BY a.id",
    )?;
    for row in stmt.query_map([session_id], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, bool>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, i64>(4)?,
        ))
    })? {
        let (id, question_id, correct, quality, created_at) = row?;
        let signature = sign(key, format!("{question_id}:{correct}:{created_at}").as_bytes());
        attempt_ids.push(id);
        attempts.push(json!({"question_id": question_id, "correct": correct, "quality": quality, "created_at": created_at, "signature": signature}));
    }
    Ok((attempt_ids, attempts))
}

/// The session's review-log rows not yet synced, with their row ids.
fn unsynced_reviews(conn: &Connection, session_id: &str, key: &str) -> rusqlite::Result<(Vec<i64>, Vec<Value>)> {
    // The review log (SPEC §7): every answer's rating and FSRS state, the history the
    // scheduler fits; each row signed like an attempt (HMAC over `question_id:rating:created_at`).
    let mut review_ids = Vec::new();
    let mut reviews = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT r.id, r.question_id, r.rating, r.state_before, r.elapsed_days, r.scheduled_days, r.stability, \
         r.difficulty, r.duration_ms, r.created_at FROM review_log r JOIN questions q ON q.id = r.question_id \
         WHERE q.session_id = ?1 AND r.synced_at IS NULL ORDER BY r.id",
    )?;
    for row in stmt.query_map([session_id], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            json!({"question_id": r.get::<_, String>(1)?, "rating": r.get::<_, i64>(2)?,
                   "state_before": r.get::<_, String>(3)?, "elapsed_days": r.get::<_, f64>(4)?,
                   "scheduled_days": r.get::<_, f64>(5)?, "stability": r.get::<_, f64>(6)?,
                   "difficulty": r.get::<_, f64>(7)?, "duration_ms": r.get::<_, Option<i64>>(8)?,
                   "created_at": r.get::<_, i64>(9)?}),
        ))
    })? {
        let (id, mut review) = row?;
        let data =
            format!("{}:{}:{}", review["question_id"].as_str().unwrap_or(""), review["rating"], review["created_at"]);
        review["signature"] = json!(sign(key, data.as_bytes()));
        review_ids.push(id);
        reviews.push(review);
    }
    Ok((review_ids, reviews))
}

fn last_content_hash(conn: &Connection, session_id: &str) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached("SELECT content_hash FROM sync_state WHERE session_id = ?1")?
        .query_row([session_id], |r| r.get(0))
        .optional()
}

fn mark_synced(session_id: String, content_hash: Option<String>, carried: Carried) -> Effects {
    Box::new(move |conn, now| {
        if let Some(hash) = content_hash {
            conn.prepare_cached(
                "INSERT INTO sync_state (session_id, last_synced_at, content_hash) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (session_id) DO UPDATE SET last_synced_at = excluded.last_synced_at, content_hash = excluded.content_hash",
            )?
            .execute(params![session_id, now, hash])?;
        }
        let mut mark =
            conn.prepare_cached("UPDATE quiz_attempts SET synced_at = ?2 WHERE id = ?1 AND synced_at IS NULL")?;
        for id in &carried.attempts {
            mark.execute(params![id, now])?;
        }
        let mut mark =
            conn.prepare_cached("UPDATE review_log SET synced_at = ?2 WHERE id = ?1 AND synced_at IS NULL")?;
        for id in &carried.reviews {
            mark.execute(params![id, now])?;
        }
        conn.prepare_cached("UPDATE sessions SET state = 'synced' WHERE id = ?1")?.execute([&session_id])?;
        Ok(())
    })
}

impl Handler for SyncHandler {
    fn run(&self, job: &ClaimedJob, cancel: &CancelToken) -> Outcome {
        let session_id = match session_id_of(job) {
            Ok(id) => id,
            Err(outcome) => return outcome,
        };
        let Some(key) = api_key(&self.data_dir) else {
            // Nothing left the machine: the session stays `analyzed`, not `synced`.
            return Outcome::Succeeded { result: Some(json!({"skipped": "no_api_key"})), effects: None };
        };
        let built = self.queue.read().and_then(|conn| {
            Ok((
                build_payload(&conn, &session_id, &key, self.include_snippets)?,
                last_content_hash(&conn, &session_id)?,
            ))
        });
        let (payload, last_hash) = match built {
            Ok((Some(payload), last_hash)) => (payload, last_hash),
            Ok((None, _)) => return missing_session(&session_id),
            Err(e) => return Outcome::retry(e.to_string()),
        };
        let (payload, carried) = payload;
        // serde_json's Map is ordered by key, so `to_string` is the canonical form.
        let body = payload.to_string();
        let idempotency_key = session_data::sha256_hex(body.as_bytes());
        let mut content = payload.clone();
        if let Some(o) = content.as_object_mut() {
            o.remove("quiz_attempts");
            o.remove("review_log");
        }
        let content_hash = session_data::hash_of(&content);
        if carried.is_empty() && last_hash.as_deref() == Some(content_hash.as_str()) {
            return Outcome::Unchanged {
                result: Some(json!({"skipped": "unchanged"})),
                effects: Some(mark_synced(session_id, None, Carried::default())),
            };
        }
        let timeout = Duration::from_secs(30).min(cancel.remaining().saturating_sub(Duration::from_secs(1)));
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout.max(Duration::from_millis(100))))
            .http_status_as_error(false)
            .build()
            .into();
        let url = format!("{}/api/sync", self.api_url.trim_end_matches('/'));
        let response = agent
            .post(&url)
            .header("Authorization", format!("Bearer {key}"))
            .header("Content-Type", "application/json")
            .header("X-VibeLearn-Version", env!("CARGO_PKG_VERSION"))
            .header("Idempotency-Key", &idempotency_key)
            .header("X-VibeLearn-Signature", format!("sha256={}", sign(&key, body.as_bytes())))
            .send(body.as_bytes());
        let mut response = match response {
            Ok(response) => response,
            Err(e) => return Outcome::retry(crate::config::redact(&format!("upstream unreachable: {e}"), &[key])),
        };
        let status = response.status().as_u16();
        let now = crate::clock::system().now_ms();
        let retry_after =
            response.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| parse_retry_after(v, now));
        let _ = response.body_mut().read_to_string();
        match classify_status(status) {
            StatusClass::Success => Outcome::Succeeded {
                result: Some(
                    json!({"status": status, "attempts": carried.attempts.len(), "reviews": carried.reviews.len(),
                           "idempotency_key": idempotency_key}),
                ),
                effects: Some(mark_synced(session_id, Some(content_hash), carried)),
            },
            StatusClass::Refused => Outcome::Refused {
                error: format!("{} — run vl login (upstream answered {status})", super::AUTH_ERROR_PREFIX),
            },
            StatusClass::Transient => {
                Outcome::Retry { error: format!("upstream answered {status}"), after: retry_after }
            }
            StatusClass::Redirect | StatusClass::Permanent => {
                Outcome::dead(format!("upstream refused the payload with {status}"))
            }
        }
    }
}
