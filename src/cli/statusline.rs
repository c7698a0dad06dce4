//! `vl statusline`: one short line for Claude Code's `statusLine` setting (SPEC §1), e.g.
//! `📚 3 questions due · vl quiz · 🔥 4-day streak · 12 concepts here (2 mastered, 3
//! reviewing, 5 learning)`. The counts are `learning::summary::due_counts`, whose due count the
//! SessionStart hook's message shares: "due" is what `vl quiz` will ask now (the new-card cap
//! applied), and the concepts' standings are `learning::mastery::concept_mastery`'s, in the
//! words `vl status` says them in (`learning::counts`).
//!
//! Claude Code runs the command on every status refresh (several times a minute) with a JSON
//! object on stdin (`cwd`, `workspace.current_dir`, `workspace.project_dir`, `session_id`,
//! `model`, …) and shows the first line of stdout. So: read the database directly, read-only,
//! never the worker (it may be down, and HTTP would double the cost); no log file, no
//! migrations, no database created; a few small queries and the mastery read of the project's
//! concepts only — a few milliseconds, most of it process start (measured before and after
//! the mastery read: docs/PERFORMANCE.md). Whatever goes wrong (no stdin, no database, an older schema, a panic),
//! it prints a line and exits 0: a status bar must never show an error of ours.
//!
//! Scope: the counts are for the project the IDE is in (sessions whose cwd is the project
//! directory or below it); a project with nothing yet shows the totals of all projects, so a
//! new project still shows what is due.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::Value;

use crate::config::Config;
use crate::learning::summary::{DueCounts, Standings, due_counts};

/// How long to wait for the status JSON; Claude Code writes it at once and closes stdin.
const STDIN_WAIT: Duration = Duration::from_millis(500);

/// The line shown when there is nothing to count yet (no database).
const EMPTY: &str = "📚 VibeLearn: no sessions yet";

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
    let Ok(conn) = crate::db::open_read_only(&path) else { return "📚 VibeLearn".to_owned() };
    // One read transaction for every query: one snapshot, and the WAL's locks taken once
    // rather than per statement (profiled: ~500 of the ~1,500 system calls of a refresh at
    // 1,000 sessions were those locks). Dropped with the connection.
    let _ = conn.execute_batch("BEGIN");
    let counts = crate::learning::cards::scheduler_for(&conn, config).and_then(|scheduler| {
        let new_per_day = config.new_per_day() as usize;
        due_counts(&conn, &scheduler, config.now_ms(), project.as_deref(), new_per_day, Standings::Count)
    });
    let mut line = match counts {
        Ok(counts) => render(&counts),
        Err(_) => "📚 VibeLearn".to_owned(),
    };
    // When something is wrong, the line says which provider stopped (SPEC §6.5); the
    // details are in `vl status`.
    let paused: Vec<String> = crate::queue::gates::list(&conn)
        .map(|gates| {
            gates
                .into_iter()
                .filter(|g| g.state == crate::queue::GateState::Paused)
                .map(|g| paused_note(&g.name, g.reason.as_deref()))
                .collect()
        })
        .unwrap_or_default();
    for note in paused {
        line.push_str(" · ");
        line.push_str(&note);
    }
    line
}

/// `⚠ anthropic paused (daily budget spent) — vl status`: the pause's own reason in a few
/// words ([`pause_words`]), the details in `vl status`.
pub fn paused_note(provider: &str, reason: Option<&str>) -> String {
    format!("⚠ {provider} paused ({}) — vl status", pause_words(reason.unwrap_or_default()))
}

/// A pause's reason (the refused job's error, or the budget's) in the few words a status bar
/// has room for. Read from the reason itself: a `claude` CLI that is only not logged in once
/// showed "key refused" here, because every refusal of an account was called that.
fn pause_words(reason: &str) -> &'static str {
    let lower = reason.to_lowercase();
    let says = |phrases: &[&str]| phrases.iter().any(|p| lower.contains(p));
    if reason.contains(crate::jobs::llm_usage::BUDGET_REASON_PREFIX) {
        "daily budget spent"
    } else if reason.starts_with(crate::jobs::UNREACHABLE_ERROR_PREFIX) {
        "cannot be reached"
    } else if says(&["not logged in", "please run /login"]) {
        "not logged in"
    } else if says(&["is not set"]) {
        "no key set"
    } else if says(&["credit", "quota", "billing"]) {
        "no credit left"
    } else if says(&["model"]) {
        "model unknown"
    } else if says(&["rejected the credentials", "invalid api key", "http 401", "http 403"]) {
        "key refused"
    } else {
        "refused"
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
        .map(|dir| crate::learning::project_dir(dir).to_owned())
        .filter(|dir| !dir.is_empty())
}

/// The line: what is due first (what the developer can act on), then streak and concepts.
pub fn render(c: &DueCounts) -> String {
    let mut parts = vec![match c.due {
        0 => "📚 nothing due".to_owned(),
        1 => "📚 1 question due · vl quiz".to_owned(),
        n => format!("📚 {n} questions due · vl quiz"),
    }];
    if c.streak.current > 0 {
        parts.push(format!("🔥 {}-day streak", c.streak.current));
    }
    let here = if c.project { " here" } else { "" };
    // The standings in `vl status`'s words (`learning::counts::Standings::words`).
    let standing = c.standings.words();
    match c.concepts {
        0 => {}
        1 => parts.push(format!("1 concept{here} ({standing})")),
        n => parts.push(format!("{n} concepts{here} ({standing})")),
    }
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learning::counts::Standings;
    use crate::learning::days::Streak;
    use serde_json::json;

    #[test]
    fn the_line_puts_what_is_due_first_and_leaves_out_zeros() {
        let standings = Standings { mastered: 2, reviewing: 3, learning: 5, gaps: 2 };
        let full =
            DueCounts { due: 3, streak: Streak { current: 4, longest: 6 }, concepts: 12, standings, project: true };
        assert_eq!(
            render(&full),
            "📚 3 questions due · vl quiz · 🔥 4-day streak · 12 concepts here (2 mastered, 3 reviewing, 5 learning, 2 gaps)"
        );
        let one = Standings { learning: 1, ..Standings::default() };
        assert_eq!(
            render(&DueCounts { due: 1, concepts: 1, standings: one, ..DueCounts::default() }),
            "📚 1 question due · vl quiz · 1 concept (0 mastered, 1 learning)"
        );
        assert_eq!(render(&DueCounts::default()), "📚 nothing due");
    }

    #[test]
    fn a_paused_provider_says_why_in_a_few_words() {
        let budget = format!("{} 210000 LLM tokens today", crate::jobs::llm_usage::BUDGET_REASON_PREFIX);
        assert_eq!(paused_note("anthropic", Some(&budget)), "⚠ anthropic paused (daily budget spent) — vl status");
        let refused = format!(
            "{}: anthropic rejected the credentials (HTTP 401): invalid x-api-key; check ANTHROPIC_API_KEY",
            crate::jobs::AUTH_ERROR_PREFIX
        );
        assert_eq!(paused_note("anthropic", Some(&refused)), "⚠ anthropic paused (key refused) — vl status");
        // The reasons the worker stores, each in its own words (issue 41, point 14).
        let cases = [
            ("command: the claude CLI exited with 1: stdout: Not logged in · Please run /login", "not logged in"),
            ("VIBELEARN_PROVIDER=gemini but GEMINI_API_KEY is not set", "no key set"),
            ("anthropic refused this account's request (HTTP 400): Your credit balance is too low", "no credit left"),
            ("openai refused this account's request (HTTP 404): The model `gpt-nope` does not exist", "model unknown"),
        ];
        for (reason, words) in cases {
            let reason = format!("{}: {reason}", crate::jobs::AUTH_ERROR_PREFIX);
            assert_eq!(paused_note("command", Some(&reason)), format!("⚠ command paused ({words}) — vl status"));
        }
        let unreachable =
            format!("{}: gemini cannot be reached: failed to lookup address", crate::jobs::UNREACHABLE_ERROR_PREFIX);
        assert_eq!(paused_note("gemini", Some(&unreachable)), "⚠ gemini paused (cannot be reached) — vl status");
        assert_eq!(paused_note("x", None), "⚠ x paused (refused) — vl status");
    }

    #[test]
    fn the_project_comes_from_the_workspace_then_the_cwd() {
        let status = json!({"cwd": "/a/b/sub", "workspace": {"current_dir": "/a/b/sub", "project_dir": "/a/b/"}});
        assert_eq!(project_dir(&status).as_deref(), Some("/a/b"));
        assert_eq!(project_dir(&json!({"cwd": "/x"})).as_deref(), Some("/x"));
        assert_eq!(project_dir(&json!({})), None);
    }
}
