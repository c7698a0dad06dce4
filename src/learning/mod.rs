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
//! - `summary` — what is due and met, for the statusline, SessionStart and the dashboard.
//!
//! The quiz process writes here beside the worker's writer (see `record`'s doc for why
//! that is safe); every other function only reads.

/// SQL: session `s` is in the project directory bound to `$dir` (a placeholder such as `"?1"`):
/// its cwd is the directory or below it, so a session started in a subfolder belongs to the
/// project and a sibling with a longer name does not. One spelling for every scoped read.
macro_rules! in_project_dir {
    ($dir:literal) => {
        concat!("(s.cwd = ", $dir, " OR substr(s.cwd, 1, length(", $dir, ") + 1) = ", $dir, " || '/')")
    };
}
pub(crate) use in_project_dir;

pub mod cards;
pub mod days;
pub mod mastery;
pub mod record;
pub mod summary;
