//! Captures let go after the window, end to end (issue 43 §2): a real worker analyses two
//! sessions; their last activity is moved past the window, one of them is given a job still to
//! run, and the worker's maintenance thread, at its next start, prunes the other. Its questions
//! stay and the quiz still asks them.

use std::time::Duration;

use serde_json::Value;

use crate::pipeline::{request_steps, seed_session, wait_step};
use crate::util::{TempDir, WorkerProcess, vl, wait_for};

const DAY_MS: i64 = 86_400_000;

fn one(conn: &rusqlite::Connection, sql: &str, session: &str) -> i64 {
    conn.query_row(sql, [session], |r| r.get(0)).unwrap()
}

/// (questions, static patterns, finished jobs, raw inputs and outputs of calls that succeeded)
fn kept(conn: &rusqlite::Connection, session: &str) -> (i64, i64, i64, i64) {
    (
        one(conn, "SELECT COUNT(*) FROM questions WHERE session_id = ?1", session),
        one(conn, "SELECT COUNT(*) FROM static_patterns WHERE session_id = ?1", session),
        one(conn, "SELECT COUNT(*) FROM jobs WHERE lane = 'session:' || ?1 AND state = 'succeeded'", session),
        one(
            conn,
            "SELECT COUNT(input) + COUNT(output) FROM observations WHERE session_id = ?1 AND outcome = 'succeeded'",
            session,
        ),
    )
}

fn next_question(dir: &std::path::Path, port: u16) -> Value {
    let out = vl(dir, port).args(["quiz", "next", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_worker_prunes_a_session_past_the_window_and_the_quiz_still_asks_its_questions() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let mut worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    for session in ["old", "busy"] {
        seed_session(&http, session, project.path());
        request_steps(&http, session, &["stack", "static", "concepts", "quiz"]);
        wait_step(&http, session, "analyze_quiz", "succeeded", Duration::from_secs(30));
    }
    let port = worker.port;
    worker.terminate();
    let conn = rusqlite::Connection::open(dir.db_path()).unwrap();
    let before = kept(&conn, "old");
    assert!(before.0 > 0 && before.1 > 0 && before.2 > 0 && before.3 > 0, "{before:?}");
    let busy_before = kept(&conn, "busy");
    // Forty days on, and the busy session has a job waiting on something.
    conn.execute("UPDATE sessions SET updated_at = updated_at - 40 * ?1", [DAY_MS]).unwrap();
    conn.execute(
        "INSERT INTO jobs (kind, state, lane, payload, max_attempts, created_at, run_at) \
         VALUES ('sync', 'held', 'session:busy', '{}', 3, 1, 1)",
        [],
    )
    .unwrap();
    let asked = next_question(dir.path(), port);
    assert!(asked["question"]["id"].is_string(), "{asked}");

    let worker = WorkerProcess::start_with(dir.path(), port, &[]);
    wait_for("the old session pruned", Duration::from_secs(20), || {
        one(&conn, "SELECT COUNT(captures_pruned_at) FROM sessions WHERE id = ?1", "old") == 1
    });
    assert_eq!(kept(&conn, "old"), (before.0, 0, 0, 0), "questions kept, captures gone");
    assert_eq!(kept(&conn, "busy"), busy_before, "a session with a job to run keeps everything");
    assert_eq!(one(&conn, "SELECT COUNT(captures_pruned_at) FROM sessions WHERE id = ?1", "busy"), 0);
    // The last version of the file is what the questions quote: still there.
    assert_eq!(one(&conn, "SELECT COUNT(content) FROM observations WHERE session_id = ?1", "old"), 1);
    assert_eq!(next_question(dir.path(), port)["question"]["id"], asked["question"]["id"]);
    let status = vl(dir.path(), port).arg("status").output().unwrap();
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(status.contains("raw captures kept 30 days") && status.contains("(1 session pruned)"), "{status}");
    drop(worker);
}
