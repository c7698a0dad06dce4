//! What the statusline, the SessionStart message and the dashboard lead with: the questions
//! due now, the streak, and how many concepts are met and mastered. Reads only.

use rusqlite::{Connection, params};
use serde_json::{Value, json};

use crate::clock::Millis;
use crate::learn::day::LearnerDay;
use crate::learn::schedule::Scheduler;
use crate::learning::days::streak;
use crate::learning::mastery::mastered_count;

/// `GET /api/vibelearn/overview`: what the dashboard leads with — the questions due now, the
/// streak, and how many concepts are met and mastered (as `vl status` counts them).
pub fn overview(conn: &Connection, scheduler: &Scheduler, now: Millis) -> rusqlite::Result<Value> {
    let counts = due_counts(conn, scheduler.day(), now, None)?;
    let streak = streak(conn, scheduler.day(), now)?;
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
pub fn due_counts(
    conn: &Connection,
    day: &LearnerDay,
    now: Millis,
    project: Option<&str>,
) -> rusqlite::Result<DueCounts> {
    let streak = streak(conn, day, now)?.current;
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
