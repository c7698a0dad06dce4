//! `vl statusline`: one short line for Claude Code's `statusLine` setting (SPEC §1), e.g.
//! `📚 3 to review · 🔥 4-day streak · 12 concepts here`, and the one-line SessionStart
//! message when questions are due.
//!
//! Claude Code runs the command on every status refresh (several times a minute) with a JSON
//! object on stdin (`cwd`, `workspace.current_dir`, `workspace.project_dir`, `session_id`,
//! `model`, …) and shows the first line of stdout. So: read the database directly, read-only,
//! never the worker (it may be down, and HTTP would double the cost); no log file, no
//! migrations, no database created; a few small queries — a few milliseconds, most of it
//! process start. Whatever goes wrong (no stdin, no database, an older schema, a panic),
//! it prints a line and exits 0: a status bar must never show an error of ours.
//!
//! Scope: the counts are for the project the IDE is in (sessions whose cwd is the project
//! directory or below it); a project with nothing yet shows the totals of all projects, so a
//! new project still shows what is due.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use rusqlite::{Connection, params};
use serde_json::Value;

use crate::clock::{Clock, Millis, SystemClock};
use crate::config::Config;

/// How long to wait for the status JSON; Claude Code writes it at once and closes stdin.
const STDIN_WAIT: Duration = Duration::from_millis(500);

/// The line shown when there is nothing to count yet (no database).
const EMPTY: &str = "📚 VibeLearn: no sessions yet";

/// What the line shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// Questions to answer now: reviews due plus new questions.
    pub due: i64,
    /// Consecutive days with a quiz answer, ending today or yesterday (all projects).
    pub streak: u32,
    /// Distinct concepts met.
    pub concepts: i64,
    /// Whether `due` and `concepts` are for the IDE's project (else for all projects).
    pub project: bool,
}

pub fn run(config: &Config) -> ExitCode {
    // A panic must not reach the IDE's status bar as a backtrace.
    std::panic::set_hook(Box::new(|_| {}));
    let line = std::panic::catch_unwind(|| line(config)).unwrap_or_else(|_| EMPTY.to_owned());
    println!("{line}");
    ExitCode::SUCCESS
}

fn line(config: &Config) -> String {
    let input = read_input();
    let project = input.as_ref().and_then(project_dir);
    let path = config.db_path();
    if !path.exists() {
        return EMPTY.to_owned();
    }
    let counts = crate::db::open_read_only(&path)
        .ok()
        .and_then(|conn| counts(&conn, SystemClock.now_ms(), project.as_deref()).ok());
    match counts {
        Some(counts) => render(&counts),
        None => "📚 VibeLearn".to_owned(),
    }
}

/// The status JSON, unless stdin is a terminal (run by hand) or brings none in time.
fn read_input() -> Option<Value> {
    if std::io::stdin().is_terminal() {
        return None;
    }
    crate::hook::stdin::read_json_value(std::io::stdin(), STDIN_WAIT).ok()
}

/// The project directory in Claude Code's status JSON (or a hook's `cwd`).
pub fn project_dir(input: &Value) -> Option<String> {
    ["/workspace/project_dir", "/workspace/current_dir", "/cwd"]
        .iter()
        .find_map(|pointer| input.pointer(pointer).and_then(Value::as_str))
        .map(|dir| dir.trim_end_matches('/').to_owned())
        .filter(|dir| !dir.is_empty())
}

/// Sessions of a project: its directory or any directory below it (a session started in a
/// subfolder belongs to the project).
const IN_PROJECT: &str = "(s.cwd = ?1 OR substr(s.cwd, 1, length(?1) + 1) = ?1 || '/')";

/// The counts for `project` (or all projects when it has none, or none is given).
pub fn counts(conn: &Connection, now: Millis, project: Option<&str>) -> rusqlite::Result<Counts> {
    let streak = crate::cli::quiz::store::streak(conn, now)?.current;
    if let Some(project) = project {
        let (due, concepts) = scoped(conn, now, project)?;
        if due + concepts > 0 {
            return Ok(Counts { due, streak, concepts, project: true });
        }
    }
    let due: i64 = conn
        .prepare_cached(&format!("SELECT COUNT(*) FROM questions q WHERE {DUE}"))?
        .query_row([now], |r| r.get(0))?;
    let concepts: i64 =
        conn.prepare_cached("SELECT COUNT(DISTINCT normalized_name) FROM concepts")?.query_row([], |r| r.get(0))?;
    Ok(Counts { due, streak, concepts, project: false })
}

/// A question to answer now: a review whose time came, or a new question (as `vl quiz` asks).
const DUE: &str = "((q.due_at IS NOT NULL AND q.due_at <= ?1) OR (q.due_at IS NULL AND q.parent_question_id IS NULL))";

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

/// The line: what is due first (what the developer can act on), then streak and concepts.
pub fn render(c: &Counts) -> String {
    let mut parts = vec![match c.due {
        0 => "📚 nothing due".to_owned(),
        1 => "📚 1 question due · vl quiz".to_owned(),
        n => format!("📚 {n} questions due · vl quiz"),
    }];
    if c.streak > 0 {
        parts.push(format!("🔥 {}-day streak", c.streak));
    }
    let here = if c.project { " here" } else { "" };
    match c.concepts {
        0 => {}
        1 => parts.push(format!("1 concept{here}")),
        n => parts.push(format!("{n} concepts{here}")),
    }
    parts.join(" · ")
}

/// The SessionStart hook's one-line `systemMessage` when questions are due, or `None` (nothing
/// due, no database, or `VIBELEARN_SESSION_START_MESSAGE=false`).
pub fn session_start_message(config: &Config, cwd: Option<&str>) -> Option<String> {
    if !config.flag("VIBELEARN_SESSION_START_MESSAGE") {
        return None;
    }
    let path = config.db_path();
    if !path.exists() {
        return None;
    }
    let conn = crate::db::open_read_only(&path).ok()?;
    let project = cwd.map(|c| c.trim_end_matches('/').to_owned());
    let counts = counts(&conn, SystemClock.now_ms(), project.as_deref()).ok()?;
    let plural = if counts.due == 1 { "" } else { "s" };
    let scope = if counts.project { " from this project" } else { "" };
    (counts.due > 0).then(|| format!("VibeLearn: {} question{plural} due{scope} — run `vl quiz`", counts.due))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_line_puts_what_is_due_first_and_leaves_out_zeros() {
        let full = Counts { due: 3, streak: 4, concepts: 12, project: true };
        assert_eq!(render(&full), "📚 3 questions due · vl quiz · 🔥 4-day streak · 12 concepts here");
        assert_eq!(
            render(&Counts { due: 1, concepts: 1, ..Counts::default() }),
            "📚 1 question due · vl quiz · 1 concept"
        );
        assert_eq!(render(&Counts::default()), "📚 nothing due");
    }

    #[test]
    fn the_project_comes_from_the_workspace_then_the_cwd() {
        let status = json!({"cwd": "/a/b/sub", "workspace": {"current_dir": "/a/b/sub", "project_dir": "/a/b/"}});
        assert_eq!(project_dir(&status).as_deref(), Some("/a/b"));
        assert_eq!(project_dir(&json!({"cwd": "/x"})).as_deref(), Some("/x"));
        assert_eq!(project_dir(&json!({})), None);
    }
}
