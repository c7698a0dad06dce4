//! The learning loop's counts, and the words every surface says them in (issue 41): `vl
//! status`, `vl gaps`, `vl quiz`'s end of a sitting, the statusline, the dashboard (through
//! `GET /api/vibelearn/overview`, `/activity` and `/api/sessions`) and `vl export` count here
//! and print [`Standings::words`], [`Questions::words`] and [`Answers::detail`], so one thing
//! has one name and one number everywhere. Reads only.
//!
//! # The words
//! - *Concepts* stand where `learn::mastery::judge` puts them: mastered, reviewing (every card
//!   answered and recalled, not all mature yet), learning (cards unanswered or in their
//!   steps), gap. All four are named, so the sum is the number of concepts.
//! - *Questions* are every question written; a *card* is one that is scheduled, and a
//!   *reflection prompt* is a follow-up without its own model answer, asked once and never
//!   scheduled ([`reflection!`](crate::learning::reflection)).
//! - *Answers* are every answer given; the *graded* ones are those to cards (right or wrong,
//!   `correct` of them), and answers to reflection prompts are *reflections*, neither right
//!   nor wrong — never counted as wrong.

use std::collections::HashMap;

use rusqlite::{Connection, params};

use crate::clock::Millis;
use crate::learn::day::LearnerDay;
use crate::learn::mastery::Standing;
use crate::learning::mastery::ConceptMastery;

/// Concepts by standing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Standings {
    pub mastered: i64,
    pub reviewing: i64,
    pub learning: i64,
    pub gaps: i64,
}

impl Standings {
    pub fn of<'a>(concepts: impl IntoIterator<Item = &'a ConceptMastery>) -> Standings {
        concepts.into_iter().fold(Standings::default(), |mut s, c| {
            s.add(c.standing);
            s
        })
    }

    /// One more concept, standing where `standing` says.
    pub fn add(&mut self, standing: Standing) {
        match standing {
            Standing::Mastered => self.mastered += 1,
            Standing::Reviewing => self.reviewing += 1,
            Standing::Learning => self.learning += 1,
            Standing::Gap => self.gaps += 1,
        }
    }

    pub fn concepts(&self) -> i64 {
        self.mastered + self.reviewing + self.learning + self.gaps
    }

    /// `2 mastered, 3 reviewing, 5 learning, 1 gap`: mastered always (it is the goal), the
    /// others when there are any.
    pub fn words(&self) -> String {
        let mut parts = vec![format!("{} mastered", self.mastered)];
        for (n, word) in [(self.reviewing, "reviewing"), (self.learning, "learning")] {
            if n > 0 {
                parts.push(format!("{n} {word}"));
            }
        }
        if self.gaps > 0 {
            parts.push(plural(self.gaps, "gap"));
        }
        parts.join(", ")
    }
}

/// Questions written: cards and reflection prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Questions {
    pub cards: i64,
    pub reflections: i64,
}

impl Questions {
    pub fn total(&self) -> i64 {
        self.cards + self.reflections
    }

    /// `16 questions (13 cards, 3 reflection prompts)`, or `13 questions` when all are cards.
    pub fn words(&self) -> String {
        let total = plural(self.total(), "question");
        match self.detail() {
            None => total,
            Some(detail) => format!("{total} ({detail})"),
        }
    }

    /// `13 cards, 3 reflection prompts`; `None` when every question is a card.
    pub fn detail(&self) -> Option<String> {
        (self.reflections > 0)
            .then(|| format!("{}, {}", plural(self.cards, "card"), plural(self.reflections, "reflection prompt")))
    }
}

/// The questions of project `project` (all when `None`). For all projects: every question
/// (SQLite counts a table from its smallest index) less the reflection prompts, read from the
/// follow-ups alone (migration 0018), not every question joined to its session.
pub fn questions(conn: &Connection, project: Option<&str>) -> rusqlite::Result<Questions> {
    if project.is_none() {
        let (total, reflections): (i64, i64) = conn
            .prepare_cached(concat!(
                "SELECT (SELECT COUNT(*) FROM questions), (SELECT COUNT(*) FROM questions q WHERE ",
                crate::learning::reflection!(),
                ")"
            ))?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        return Ok(Questions { cards: total - reflections, reflections });
    }
    conn.prepare_cached(concat!(
        "SELECT COUNT(*) FILTER (WHERE NOT ",
        crate::learning::reflection!(),
        "), COUNT(*) FILTER (WHERE ",
        crate::learning::reflection!(),
        ") FROM questions q JOIN sessions s ON s.id = q.session_id WHERE s.project = ?1"
    ))?
    .query_row([project], |r| Ok(Questions { cards: r.get(0)?, reflections: r.get(1)? }))
}

/// Answers given: graded ones (to cards) and reflections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Answers {
    pub answers: i64,
    /// Graded answers that were right.
    pub correct: i64,
    pub reflections: i64,
    /// Graded answers rated Again, where it is known (the end of a sitting).
    pub again: Option<i64>,
}

impl Answers {
    pub fn graded(&self) -> i64 {
        self.answers - self.reflections
    }

    /// `11 answers: 6 correct of 8 graded, 3 reflections`.
    pub fn words(&self) -> String {
        match self.answers {
            0 => "0 answers".to_owned(),
            n => format!("{}: {}", plural(n, "answer"), self.detail()),
        }
    }

    /// `6 correct of 8 graded, 2 again, 3 reflections`: the graded part when there is one
    /// (or nothing else), Again when known, the reflections when there are any.
    pub fn detail(&self) -> String {
        let mut parts = Vec::new();
        if self.graded() > 0 || self.reflections == 0 {
            parts.push(format!("{} correct of {} graded", self.correct, self.graded()));
        }
        if let Some(again) = self.again {
            parts.push(format!("{again} again"));
        }
        if self.reflections > 0 {
            parts.push(plural(self.reflections, "reflection"));
        }
        parts.join(", ")
    }
}

/// Every answer recorded, reflections told apart by the question answered: every answer less
/// the wrong ones, each counted from an index (migrations 0017, 0018), less the right answers
/// to reflection prompts, found from the follow-ups (CROSS JOIN keeps that order: the other
/// read every answer). Foreign keys hold every answer to a question, so counting the answers
/// needs no join.
pub fn answers(conn: &Connection) -> rusqlite::Result<Answers> {
    conn.prepare_cached(ANSWERS)?
        .query_row([], |r| Ok(Answers { answers: r.get(0)?, correct: r.get(1)?, reflections: r.get(2)?, again: None }))
}

/// [`answers`]' statement.
pub(crate) const ANSWERS: &str = concat!(
    "SELECT (SELECT COUNT(*) FROM quiz_attempts), \
            (SELECT COUNT(*) FROM quiz_attempts) - (SELECT COUNT(*) FROM quiz_attempts WHERE NOT correct) \
              - COUNT(*) FILTER (WHERE a.correct), \
            COUNT(a.id) \
     FROM questions q CROSS JOIN quiz_attempts a ON a.question_id = q.id WHERE ",
    crate::learning::reflection!()
);

/// Reflections answered since `from`, by learner day: the dashboard's answers per day come
/// from `daily_streaks`, which counts a reflection as an answer that was not correct. Read
/// from the reflection prompts (few) and their attempts by migration 0017's index, not from
/// every attempt.
pub fn reflections_by_day(conn: &Connection, day: &LearnerDay, from: Millis) -> rusqlite::Result<HashMap<i64, i64>> {
    let mut stmt = conn.prepare_cached(concat!(
        "SELECT a.created_at FROM questions q JOIN quiz_attempts a ON a.question_id = q.id WHERE ",
        crate::learning::reflection!(),
        " AND a.created_at >= ?1"
    ))?;
    let mut days = HashMap::new();
    for at in stmt.query_map(params![from], |r| r.get::<_, Millis>(0))? {
        *days.entry(day.day_of(at?)).or_default() += 1;
    }
    Ok(days)
}

fn plural(n: i64, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_count_has_one_wording() {
        let standings = Standings { mastered: 0, reviewing: 2, learning: 6, gaps: 1 };
        assert_eq!((standings.words(), standings.concepts()), ("0 mastered, 2 reviewing, 6 learning, 1 gap".into(), 9));
        assert_eq!(Standings { mastered: 3, ..Standings::default() }.words(), "3 mastered");
        assert_eq!(Questions { cards: 13, reflections: 3 }.words(), "16 questions (13 cards, 3 reflection prompts)");
        assert_eq!(Questions { cards: 1, reflections: 0 }.words(), "1 question");
        // The sitting: 11 answers, 3 of them reflections, 6 of the 8 graded right.
        let answers = Answers { answers: 11, correct: 6, reflections: 3, again: None };
        assert_eq!(answers.words(), "11 answers: 6 correct of 8 graded, 3 reflections");
        assert_eq!(Answers { again: Some(2), ..answers }.detail(), "6 correct of 8 graded, 2 again, 3 reflections");
        assert_eq!(Answers { answers: 1, correct: 0, reflections: 1, again: None }.detail(), "1 reflection");
        assert_eq!(Answers::default().words(), "0 answers");
    }

    #[test]
    fn reflections_are_told_apart_by_the_question_answered() {
        let (_dir, conn) = crate::db::testing::with(crate::db::testing::SESSION_AND_CONCEPT);
        conn.execute_batch(
            "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, question, correct, \
               explanation, tags, text_hash, created_at, parent_question_id) VALUES
               ('card', 'c', 's', 'true_false', 'mid', 'q', 'true', 'e', '[]', 'a', 1, NULL),
               ('follow-up card', 'c', 's', 'open_ended', 'mid', 'q', 'its own answer', 'e', '[]', 'b', 1, 'card'),
               ('reflection', 'c', 's', 'open_ended', 'mid', 'q', NULL, '', '[]', 'c', 1, 'card'),
               ('blank', 'c', 's', 'open_ended', 'mid', 'q', '  ', '', '[]', 'd', 1, 'card');
             INSERT INTO quiz_attempts (question_id, answer, correct, quality, created_at) VALUES
               ('card', 't', 1, 4, 10), ('card', 'f', 0, 1, 20), ('follow-up card', 'x', 1, 4, 30),
               ('reflection', 'r', 0, 4, 40), ('blank', 'r', 0, 4, 50);",
        )
        .unwrap();
        assert_eq!(questions(&conn, None).unwrap(), Questions { cards: 2, reflections: 2 });
        assert_eq!(questions(&conn, Some("other")).unwrap(), Questions::default());
        assert_eq!(answers(&conn).unwrap(), Answers { answers: 5, correct: 2, reflections: 2, again: None });
        let day = LearnerDay::new(jiff::tz::TimeZone::UTC, 0);
        assert_eq!(reflections_by_day(&conn, &day, 0).unwrap(), HashMap::from([(0, 2)]));
        assert!(reflections_by_day(&conn, &day, 45).unwrap().values().eq([&1]));
    }
}
