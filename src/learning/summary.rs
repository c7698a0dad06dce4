//! What the statusline, the SessionStart message and the dashboard lead with: the questions
//! due now, the streak, and how many concepts are met, mastered and still learning. Reads only.
//!
//! "Due" is what `vl quiz` will ask now (`learning::cards::due_now` through the sitting's
//! new-card cap, `learning::days::sitting_filter`), and the concepts' standings are
//! `learning::mastery::concept_mastery`'s, counted by `learning::standings` (from the cards that
//! can change them) and worded by `learning::counts`: no count of its own here.

use std::collections::HashSet;

use rusqlite::Connection;
use serde_json::{Value, json};

use crate::clock::Millis;
use crate::learn::schedule::Scheduler;
use crate::learning::cards::{DueFilter, due_now};
use crate::learning::counts;
use crate::learning::days::{Streak, sitting_filter, streak};

/// `GET /api/vibelearn/overview`: what the dashboard leads with — the questions due now, the
/// streak, the concepts by standing, the questions and the answers, with the words `vl status`
/// says them in (`learning::counts`): `{due, streak: {current, longest}, concepts, mastered,
/// reviewing, learning, gaps, standings (words), questions: {total, cards, reflections, words},
/// answers: {total, graded, correct, reflections, words}}`.
pub fn overview(conn: &Connection, scheduler: &Scheduler, now: Millis, new_per_day: usize) -> rusqlite::Result<Value> {
    let counts = due_counts(conn, scheduler, now, None, new_per_day, Standings::Count)?;
    let s = counts.standings;
    let questions = counts::questions(conn, None)?;
    let answers = counts::answers(conn)?;
    Ok(json!({
        "due": counts.due,
        "streak": {"current": counts.streak.current, "longest": counts.streak.longest},
        "concepts": counts.concepts,
        "mastered": s.mastered,
        "reviewing": s.reviewing,
        "learning": s.learning,
        "gaps": s.gaps,
        "standings": s.words(),
        "questions": {"total": questions.total(), "cards": questions.cards, "reflections": questions.reflections,
                      "words": questions.words()},
        "answers": {"total": answers.answers, "graded": answers.graded(), "correct": answers.correct,
                    "reflections": answers.reflections, "words": answers.words()},
    }))
}

/// What is due and met, for `vl statusline` and the SessionStart message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DueCounts {
    /// Questions `vl quiz` asks now: learning steps, reviews due, and new questions within
    /// the day's cap.
    pub due: i64,
    /// Consecutive days with a quiz answer, ending today or yesterday, and the longest run
    /// (all projects).
    pub streak: Streak,
    /// Distinct concepts met.
    pub concepts: i64,
    /// Where they stand (`learning::counts`); all 0 unless asked for ([`Standings::Count`]).
    pub standings: counts::Standings,
    /// Whether the counts are for the IDE's project (else for all projects).
    pub project: bool,
}

/// Whether [`due_counts`] also judges the concepts (their standings): the statusline and the
/// dashboard show them; the SessionStart message says only what is due, and the mastery read
/// is most of the cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standings {
    Skip,
    Count,
}

/// The counts for the project directory `project` (sessions whose cwd is it or below it), or
/// for all projects when it has nothing yet, or none is given.
pub fn due_counts(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
    project: Option<&str>,
    new_per_day: usize,
    judge: Standings,
) -> rusqlite::Result<DueCounts> {
    let streak = streak(conn, scheduler.day(), now)?;
    let count = |directory: Option<&str>| -> rusqlite::Result<(i64, HashSet<String>)> {
        let filter = DueFilter { directory: directory.map(str::to_owned), ..DueFilter::default() };
        let due = due_now(conn, now, &sitting_filter(conn, scheduler.day(), now, &filter, new_per_day)?)?.total();
        Ok((due as i64, concept_keys(conn, directory)?))
    };
    let (mut due, mut keys) = (0, HashSet::new());
    let mut scoped = false;
    if let Some(project) = project {
        // A directory without a session has nothing due and no concept: asked first, since the
        // new cards' walk for a directory that holds none reads every new card of the others.
        if has_sessions(conn, project)? {
            (due, keys) = count(Some(project))?;
            scoped = due > 0 || !keys.is_empty();
        }
    }
    if !scoped {
        (due, keys) = count(None)?;
    }
    let mut standings = counts::Standings::default();
    if judge == Standings::Count && !keys.is_empty() {
        standings = crate::learning::standings::standings(conn, scheduler, now, &keys)?;
    }
    Ok(DueCounts { due, streak, concepts: keys.len() as i64, standings, project: scoped })
}

/// Whether any session was started in the project directory `directory` or below it.
fn has_sessions(conn: &Connection, directory: &str) -> rusqlite::Result<bool> {
    conn.prepare_cached(concat!("SELECT EXISTS (SELECT 1 FROM sessions s WHERE ", super::in_project_dir!("?1"), ")"))?
        .query_row([directory], |r| r.get(0))
}

/// The normalised names of the concepts met in sessions under `directory` (all when `None`:
/// from the names' index alone, migration 0018).
fn concept_keys(conn: &Connection, directory: Option<&str>) -> rusqlite::Result<HashSet<String>> {
    let Some(directory) = directory else { return crate::learning::standings::all_keys(conn) };
    conn.prepare_cached(concat!(
        // Sessions first (CROSS JOIN keeps SQLite's order): the directory's sessions from the
        // cwd's index, then their concepts from the (session, name) index; the other order
        // probed a session per concept. No DISTINCT: the set takes each name once, and SQLite's
        // temporary B-tree for it cost more than the set (1.2 M instructions at 1,000 sessions).
        "SELECT c.normalized_name FROM sessions s CROSS JOIN concepts c ON c.session_id = s.id \
             WHERE ",
        super::in_project_dir!("?1")
    ))?
    .query_map([directory], |r| r.get(0))?
    .collect()
}
