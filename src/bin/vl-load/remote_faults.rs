//! `vl-load faults llm-upstream <data-dir>`: the LLM provider (Anthropic wire format) and the
//! upstream sync server are fakes on 127.0.0.1 that cycle through every failure
//! (`fake_remote::CYCLE`: hang past the timeout, 429 + Retry-After, 500, 401, malformed JSON,
//! a connection cut mid-response, a good answer) twice, then heal, while clients post whole
//! sessions — init, a written TypeScript file, a command, complete — and ask for the five
//! steps (stack, static, concepts, quiz, sync), as the Stop hook does. The worker (Anthropic
//! provider, 2 s LLM timeout, 5 s sync timeout) drains everything it was given. A 401 pauses
//! the provider (its later jobs are held, making no call); the scenario plays the admin who
//! fixed the cause and presses Resume (`POST /api/jobs/resume`) whenever the queue has drained
//! with a provider paused, so each 401 of the cycle is met once and the held steps complete.
//!
//! Counts are per acknowledged request (an event or a step; each 202 names its job):
//! - stored: its job exists; executed: the job reached a terminal state — `succeeded`, or
//!   `dead` with its error recorded (attempts ran out while the cycle kept failing) — and for
//!   an observation, its row exists;
//! - lost: no job, a job still waiting, running or held after the drain, or an observation
//!   without its row;
//! - duplicated: an observation, concept or question stored twice in a session, or a session
//!   the upstream took in under two idempotency keys. It takes in every 2xx and every hang (a
//!   server that applied the request but whose answer was lost); the retry then carries the
//!   same key, which a real upstream deduplicates (counted as `upstream_same_key_redelivered`),
//!   so only a second key for one session breaks idempotency.
//!
//! Pass: lost = 0, duplicated = 0, health answered throughout, and `checks`: each fake served
//! every fault at least once (the faults happened), some session came through with questions
//! and was delivered upstream (the pipeline recovers), every dead job carries an error, every
//! sync recorded as delivered was received by the upstream, and the worker is still up.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::crash::{drain_within, start_worker_with, status};
use super::fake_remote::{CYCLE, FakeRemote, Served};
use super::load::{HealthProbe, free_port, merge};

const CLIENTS: usize = 3;
const SESSIONS_PER_CLIENT: usize = 3;
const KEY: &str = "sk-fault-0123456789abcdef";
/// Past `VIBELEARN_LLM_TIMEOUT_SECS` (2) and the sync call's timeout (the sync job's 5 s less 1).
const HANG: Duration = Duration::from_secs(6);
/// Each fake cycles through every fault this many requests (twice), then heals.
const FAULTY_REQUESTS: usize = 2 * CYCLE.len();
/// Sessions run through up to six LLM attempts with backoff, in two steps, then sync.
const DRAIN_LIMIT: Duration = Duration::from_secs(240);
const STEPS: [&str; 5] = ["analyze/stack", "analyze/static", "analyze/concepts", "analyze/quiz", "sync"];

const CART: &str = "export interface CartItem {\n  id: string;\n  quantity: number;\n  price: number;\n}\n\n\
export function cartTotal(items: CartItem[]): number {\n  return items.reduce((sum, item) => sum + item.quantity * item.price, 0);\n}\n\n\
export async function loadCart(userId: string): Promise<CartItem[]> {\n  try {\n    const response = await fetch(`/api/cart/${userId}`);\n    return await response.json();\n  } catch (error) {\n    console.error(error);\n    return [];\n  }\n}\n";

/// A good Anthropic answer: questions when asked for a quiz, concepts otherwise (three: fewer
/// fail validation, `analysis::concepts::MIN_CONCEPTS`).
fn llm_answer(request: &[u8]) -> String {
    let quiz = String::from_utf8_lossy(request).contains("Write one quiz question");
    let text = if quiz {
        json!({"questions": [
            {"concept": "Array reduce", "question_type": "multiple_choice", "difficulty": "junior", "snippet": null,
             "question": "What does the second argument of reduce set?", "options": ["The initial accumulator", "The index", "The array", "Nothing"],
             "correct": "A", "explanation": "It seeds the accumulator.", "follow_up": null, "tags": ["functional"]},
            {"concept": "Async error handling", "question_type": "true_false", "difficulty": "mid", "snippet": null,
             "question": "A rejected awaited promise inside try is caught by its catch.", "options": null, "correct": "true",
             "explanation": "await turns rejection into a throw.", "follow_up": null, "tags": ["async"]}]})
    } else {
        json!({"summary": {"what_was_built": "A cart module with totals and loading", "developer_intent": "add a cart", "architecture_decisions": []},
               "concepts": [
            {"name": "Array reduce", "category": "functional", "difficulty": "junior", "source_file": "src/cart.ts",
             "snippet": "return items.reduce((sum, item) => sum + item.quantity * item.price, 0);", "why_it_matters": "Folding a list into one value.", "confidence": 0.9},
            {"name": "Async error handling", "category": "error_handling", "difficulty": "mid", "source_file": "src/cart.ts",
             "snippet": "  } catch (error) {\n    console.error(error);", "why_it_matters": "Failures of awaited calls surface here.", "confidence": 0.8},
            {"name": "TypeScript interfaces", "category": "types", "difficulty": "junior", "source_file": "src/cart.ts",
             "snippet": "export interface CartItem {", "why_it_matters": "Shapes checked at compile time.", "confidence": 0.85}]})
    };
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn",
           "content": [{"type": "text", "text": format!("```json\n{text}\n```")}]})
    .to_string()
}

/// One acknowledged request: the job the worker answered with, and the observation it carries.
struct Acked {
    job_id: i64,
    tool_use_id: Option<String>,
}

/// Posts one session and its five steps; `None` unless every request was acknowledged.
fn post_session(port: u16, id: &str) -> Option<Vec<Acked>> {
    let cwd = format!("/tmp/vl-remote/{id}");
    let mut requests = vec![
        (
            "/api/sessions/init".to_owned(),
            json!({"contentSessionId": id, "cwd": cwd, "prompt": "write a cart module"}),
            None,
        ),
        (
            "/api/sessions/observations".to_owned(),
            json!({"contentSessionId": id, "cwd": cwd, "tool_name": "Write", "tool_use_id": format!("{id}-w"),
            "tool_input": {"file_path": format!("{cwd}/src/cart.ts"), "content": CART}}),
            Some(format!("{id}-w")),
        ),
        (
            "/api/sessions/observations".to_owned(),
            json!({"contentSessionId": id, "cwd": cwd, "tool_name": "Bash", "tool_use_id": format!("{id}-b"),
            "tool_input": {"command": "npm test"}, "tool_response": {"stdout": "ok"}}),
            Some(format!("{id}-b")),
        ),
        ("/api/sessions/complete".to_owned(), json!({"contentSessionId": id, "cwd": cwd, "reason": "exit"}), None),
    ];
    requests.extend(STEPS.iter().map(|step| (format!("/api/vibelearn/{step}"), json!({"contentSessionId": id}), None)));
    let client = super::crash::client(port);
    let mut acked = Vec::new();
    for (path, body, tool_use_id) in requests {
        let reply = client.post(&path, &body).ok().filter(|r| r.status == 202)?;
        acked.push(Acked { job_id: reply.body["jobId"].as_i64()?, tool_use_id });
    }
    Some(acked)
}

pub fn run(dir: &Path) -> serde_json::Value {
    let llm = FakeRemote::start(HANG, FAULTY_REQUESTS, llm_answer);
    let upstream = FakeRemote::start(HANG, FAULTY_REQUESTS, |_| r#"{"ok":true}"#.to_owned());
    std::fs::write(dir.join("config.json"), json!({"api_key": KEY}).to_string()).expect("write the account key");
    let env = [
        ("VIBELEARN_PROVIDER", "anthropic"),
        ("ANTHROPIC_API_KEY", KEY),
        ("VIBELEARN_ANTHROPIC_BASE_URL", llm.url.as_str()),
        ("VIBELEARN_LLM_TIMEOUT_SECS", "2"),
        ("VIBELEARN_API_URL", upstream.url.as_str()),
        ("VIBELEARN_TIMEOUT_SYNC_SECS", "5"),
    ];
    let port = free_port();
    let mut worker = start_worker_with(dir, port, &env);
    let probe = HealthProbe::start(port);
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            std::thread::spawn(move || {
                (0..SESSIONS_PER_CLIENT)
                    .filter_map(|s| post_session(port, &format!("remote-{c}-{s}")))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let sessions: Vec<Vec<Acked>> =
        clients.into_iter().flat_map(|c| c.join().expect("a session client panicked")).collect();
    let db = dir.join("vibelearn.db");
    let resumes = drain_resuming(dir, port, &db, DRAIN_LIMIT);
    let health = probe.stop();
    let survived = worker.alive() && status(port, "/api/health", None).is_some();
    worker.kill();
    let conn = rusqlite::Connection::open(&db).expect("open the database");
    let (llm_served, upstream_served) = (llm.served(), upstream.served());
    let mut result = verify(&conn, &sessions);
    let upstream_check = upstream_duplicates(&conn, &upstream_served);
    result["duplicated"] = json!(result["duplicated"].as_u64().unwrap_or(0) + upstream_check.duplicated);
    let every_fault = |served: &[Served]| CYCLE.iter().all(|f| served.iter().any(|s| s.fault == *f));
    let scalar = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).expect("count") };
    let synced_with_questions = scalar(
        "SELECT COUNT(*) FROM jobs j WHERE kind = 'sync' AND state = 'succeeded' AND json_extract(result, '$.status') = 200 \
         AND EXISTS (SELECT 1 FROM questions q WHERE q.session_id = json_extract(j.payload, '$.contentSessionId'))",
    );
    let dead_without_error =
        scalar("SELECT COUNT(*) FROM jobs WHERE state = 'dead' AND (last_error IS NULL OR last_error = '')");
    merge(&mut result, health);
    merge(
        &mut result,
        json!({"mode": "faults", "scenario": "llm-upstream", "refused": 0,
        "details": {"sessions_acknowledged": sessions.len(), "jobs_by_kind_and_state": jobs_by_kind_and_state(&conn),
                    "llm_requests": by_fault(&llm_served), "upstream_requests": by_fault(&upstream_served),
                    "upstream_sessions_taken_in": upstream_check.sessions, "upstream_same_key_redelivered": upstream_check.redelivered,
                    "sessions_synced_with_questions": synced_with_questions, "admin_resumes": resumes},
        "checks": {"llm_served_every_fault": every_fault(&llm_served), "upstream_served_every_fault": every_fault(&upstream_served),
                   "a_session_came_through": synced_with_questions > 0, "dead_jobs_carry_their_error": dead_without_error == 0,
                   "delivered_syncs_reached_upstream": upstream_check.delivered_but_not_received == 0,
                   "worker_survived": survived}}),
    );
    result
}

/// Drains the queue; whenever it has drained with a provider paused, resumes it (as an admin
/// would once the cause is fixed) and drains again, until nothing is paused or `limit` passed.
/// Returns how many resumes it took.
fn drain_resuming(dir: &Path, port: u16, db: &Path, limit: Duration) -> usize {
    let deadline = std::time::Instant::now() + limit;
    let token = std::fs::read_to_string(dir.join("admin.token")).unwrap_or_default();
    let admin = vibelearn::worker_client::WorkerClient::at(&format!("127.0.0.1:{port}"), Duration::from_secs(5))
        .with_token(&token);
    let mut resumes = 0;
    loop {
        drain_within(db, deadline.saturating_duration_since(std::time::Instant::now()));
        let paused: i64 = rusqlite::Connection::open(db)
            .and_then(|c| c.query_row("SELECT COUNT(*) FROM queue_gates WHERE state = 'paused'", [], |r| r.get(0)))
            .unwrap_or(0);
        if paused == 0 || std::time::Instant::now() > deadline {
            return resumes;
        }
        if admin.post("/api/jobs/resume", &json!({})).is_ok_and(|r| r.status == 200) {
            resumes += 1;
        }
    }
}

/// The common counts (see the module doc) over every acknowledged request.
fn verify(conn: &rusqlite::Connection, sessions: &[Vec<Acked>]) -> Value {
    let mut job = conn.prepare("SELECT state, last_error FROM jobs WHERE id = ?1").expect("prepare");
    let mut rows = conn.prepare("SELECT COUNT(*) FROM observations WHERE event_key = ?1").expect("prepare");
    let (mut acknowledged, mut stored, mut executed, mut duplicated, mut lost) = (0, 0, 0, 0i64, Vec::new());
    for acked in sessions.iter().flatten() {
        acknowledged += 1;
        let found: Option<(String, Option<String>)> =
            job.query_row([acked.job_id], |r| Ok((r.get(0)?, r.get(1)?))).ok();
        let observed = acked.tool_use_id.as_ref().map(|id| rows.query_row([id], |r| r.get::<_, i64>(0)).unwrap_or(0));
        stored += usize::from(found.is_some());
        let terminal = match &found {
            Some((state, _)) if state == "succeeded" => true,
            Some((state, error)) => state == "dead" && error.is_some(),
            None => false,
        };
        if terminal && observed != Some(0) {
            executed += 1;
        } else {
            lost.push(acked.job_id);
        }
        duplicated += i64::from(observed.is_some_and(|n| n > 1));
    }
    let scalar = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).expect("count") };
    duplicated += scalar("SELECT COUNT(*) - COUNT(DISTINCT session_id || char(0) || question) FROM questions");
    duplicated += scalar("SELECT COUNT(*) - COUNT(DISTINCT session_id || char(0) || name) FROM concepts");
    json!({"acknowledged": acknowledged, "stored": stored, "executed": executed, "duplicated": duplicated,
           "lost": lost.len(), "lost_examples": lost.iter().take(5).collect::<Vec<_>>()})
}

/// What the upstream took in, against what the worker recorded as delivered.
struct UpstreamCheck {
    /// Sessions taken in (see `Fault::took_in`).
    sessions: usize,
    /// Sessions taken in under more than one idempotency key.
    duplicated: u64,
    /// Takes of a key already taken (a retry after a cut answer; harmless by idempotency).
    redelivered: usize,
    /// Sync jobs `succeeded` with an HTTP status whose key the upstream never took in.
    delivered_but_not_received: usize,
}

fn upstream_duplicates(conn: &rusqlite::Connection, served: &[Served]) -> UpstreamCheck {
    let mut keys_by_session: HashMap<String, HashSet<String>> = HashMap::new();
    let mut taken = HashSet::new();
    let mut redelivered = 0;
    for request in served.iter().filter(|s| s.fault.took_in()) {
        let session = serde_json::from_slice::<Value>(&request.body)
            .ok()
            .and_then(|b| b["session"]["id"].as_str().map(str::to_owned));
        let key = request.header("idempotency-key").unwrap_or("").to_owned();
        redelivered += usize::from(!taken.insert(key.clone()));
        keys_by_session.entry(session.unwrap_or_default()).or_default().insert(key);
    }
    let mut delivered = conn
        .prepare("SELECT json_extract(result, '$.idempotency_key') FROM jobs WHERE kind = 'sync' AND state = 'succeeded' AND json_extract(result, '$.status') IS NOT NULL")
        .expect("prepare");
    let delivered: Vec<String> = delivered.query_map([], |r| r.get(0)).expect("query").flatten().collect();
    UpstreamCheck {
        sessions: keys_by_session.len(),
        duplicated: keys_by_session.values().filter(|keys| keys.len() > 1).count() as u64,
        redelivered,
        delivered_but_not_received: delivered.iter().filter(|key| !taken.contains(*key)).count(),
    }
}

fn by_fault(served: &[Served]) -> Value {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for s in served {
        *counts.entry(format!("{:?}", s.fault)).or_default() += 1;
    }
    json!(counts)
}

fn jobs_by_kind_and_state(conn: &rusqlite::Connection) -> Value {
    let mut stmt = conn.prepare("SELECT kind, state, COUNT(*) FROM jobs GROUP BY kind, state").expect("prepare");
    let mut out = serde_json::Map::new();
    for row in stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?)))
        .expect("query")
        .flatten()
    {
        out.entry(row.0).or_insert_with(|| json!({}))[row.1.as_str()] = json!(row.2);
    }
    Value::Object(out)
}
