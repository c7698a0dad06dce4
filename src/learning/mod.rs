//! The learning layer (SPEC §7): the reads and the one write of the learning loop, shared by
//! the CLI (`vl quiz`, `vl status`, `vl gaps`, the statusline), the JSON API (`vl quiz next|answer
//! --json`), the HTTP read routes and the dashboard, and the quiz job. It sits under all of
//! them and over `learn` (the pure rules) and `db`; it knows nothing of the CLI or the jobs.
//!
//! - `cards` — which questions are due and in what order (learn-ahead included), one
//!   question or schedule by id, and the learner's scheduler.
//! - `record` — recording one answer in one transaction: schedule, review log, level, the
//!   day's streak, and follow-ups (scheduled only with their own model answer).
//! - `mastery` — every concept's standing (mastered / gap / learning) from the live FSRS state.
//! - `days` — the learner's days: the streak, the new cards introduced today, the forecast.
//! - `standings` — the concepts' standings counted from the cards that can change them (the
//!   answered ones), the same as `mastery`'s counted, for the reads paid on every message.
//! - `summary` — what is due and met, for the statusline, SessionStart and the dashboard.
//! - `counts` — the loop's counts (concepts by standing, questions, answers) and the one
//!   wording every surface prints them in.
//!
//! The quiz process writes here beside the worker's writer (see `record`'s doc for why
//! that is safe); every other function only reads.

/// SQL: session `s` is in the project directory bound to `$dir` (a placeholder such as `"?1"`,
/// given without a trailing separator: [`project_dir`]): its cwd is the directory or below it,
/// by `/` or by Windows' `\`, so a session started in a subfolder belongs to the project and a
/// sibling with a longer name does not. Where the OS's file systems ignore case
/// (`platform::PATHS_IGNORE_CASE`: Windows, macOS) so does the comparison (SQLite's NOCASE,
/// ASCII letters): Cursor reports `c:\w\app` where Claude Code reports `C:\w\app`. One
/// spelling for every scoped read.
///
/// "Below it" is a range of the cwd's index (migration 0021): the cwds that start with
/// `dir/` sort from `dir/` up to `dir0`, and with `dir\` from `dir\` up to `dir]` (`0` and
/// `]` follow `/` and `\`; NOCASE folds letters only). The three disjoint parts are a subquery
/// of rowids, which SQLite (3.53) reads through the index under either collation; written as an
/// `OR` of the same terms it did so under BINARY only and read every session under NOCASE. The
/// statusline's project scope scanned every session to test each cwd's prefix with `substr`:
/// 1.7 M instructions at 1,000 sessions, 0.2 M through the index.
macro_rules! in_project_dir {
    ($dir:literal) => {
        concat!(
            "(s.rowid IN (SELECT rowid FROM sessions WHERE cwd",
            $crate::learning::path_collation!(),
            " = ",
            $dir,
            $crate::learning::cwd_below!($dir, "/", "0"),
            $crate::learning::cwd_below!($dir, "\\", "]"),
            "))"
        )
    };
}
/// One part of [`in_project_dir!`]: the sessions whose cwd starts with `$dir` and `$separator`,
/// the range from there up to `$dir` and `$next` (the character after the separator).
macro_rules! cwd_below {
    ($dir:literal, $separator:literal, $next:literal) => {
        concat!(
            " UNION ALL SELECT rowid FROM sessions WHERE cwd",
            $crate::learning::path_collation!(),
            " >= ",
            $dir,
            " || '",
            $separator,
            "' AND cwd",
            $crate::learning::path_collation!(),
            " < ",
            $dir,
            " || '",
            $next,
            "'"
        )
    };
}
/// The collation [`in_project_dir!`] compares paths with (see `platform::PATHS_IGNORE_CASE`).
#[cfg(any(windows, target_os = "macos"))]
macro_rules! path_collation {
    () => {
        " COLLATE NOCASE"
    };
}
#[cfg(not(any(windows, target_os = "macos")))]
macro_rules! path_collation {
    () => {
        ""
    };
}
pub(crate) use cwd_below;
pub(crate) use in_project_dir;
pub(crate) use path_collation;

/// SQL over `questions q`: the question is a reflection prompt, a follow-up without its own
/// model answer — asked once, never scheduled, neither right nor wrong (SPEC §7). The one
/// spelling of `cards::Question::is_reflection` for every read that counts cards, questions
/// or answers (`counts`, `mastery`, the sessions list).
macro_rules! reflection {
    () => {
        "(q.parent_question_id IS NOT NULL AND TRIM(COALESCE(q.correct, '')) = '')"
    };
}
pub(crate) use reflection;

/// A project directory as [`in_project_dir!`] takes it: without trailing `/` or `\`.
pub fn project_dir(cwd: &str) -> &str {
    cwd.trim_end_matches(['/', '\\'])
}

pub mod cards;
pub mod counts;
pub mod days;
pub mod kept_standings;
pub mod mastery;
pub mod record;
pub mod standings;
pub mod summary;

#[cfg(test)]
mod tests {
    #[test]
    fn a_project_holds_its_subfolders_by_either_separator_and_not_its_longer_named_siblings() {
        let (_dir, conn) = crate::db::testing::fresh();
        for (id, cwd) in [
            ("unix", "/w/app"),
            ("unix-sub", "/w/app/web"),
            ("unix-sibling", "/w/app-old"),
            ("unix-slash", "/w/app/"),
            ("unix-dot", "/w/app.d/x"),
            ("unix-zero", "/w/app0/x"),
            ("win-bracket", r"C:\w\app]x"),
            ("win", r"C:\w\app"),
            ("win-sub", r"C:\w\app\web"),
            ("win-sibling", r"C:\w\app-old\web"),
        ] {
            conn.execute(
                "INSERT INTO sessions (id, project, cwd, started_at, updated_at) VALUES (?1, 'app', ?2, 1, 1)",
                [id, cwd],
            )
            .unwrap();
        }
        let in_dir = |dir: &str| -> Vec<String> {
            let sql = concat!("SELECT s.id FROM sessions s WHERE ", in_project_dir!("?1"), " ORDER BY s.id");
            let mut stmt = conn.prepare(sql).unwrap();
            stmt.query_map([super::project_dir(dir)], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
        };
        assert_eq!(in_dir("/w/app/"), ["unix", "unix-slash", "unix-sub"]);
        assert_eq!(in_dir(r"C:\w\app\"), ["win", "win-sub"]);
        assert_eq!(in_dir(r"C:\w\app"), ["win", "win-sub"]);
        // Another case: the same directory where the file systems ignore case, another on Linux.
        let folded: &[&str] = if crate::platform::PATHS_IGNORE_CASE { &["win", "win-sub"] } else { &[] };
        assert_eq!(in_dir(r"c:\W\App"), folded);
        assert_eq!(crate::platform::PATHS_IGNORE_CASE, cfg!(any(windows, target_os = "macos")));
    }
}
