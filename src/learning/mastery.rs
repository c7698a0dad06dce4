//! Mastery read from the live review state (SPEC §7): every concept judged by
//! `learn::mastery::judge` from its cards' FSRS state at `now`. The one source for `vl status`,
//! `vl gaps`, the profile route, the dashboard, the statusline and the quiz job's choice of
//! concepts; no stored score stands in for it (`concept_profiles.mastery_score` is no longer
//! written or read). The rows of `learning::kept_standings` are this judgement memoised —
//! computed here, forgotten by triggers whenever anything it reads changes, and the moment time
//! alone turns one into a gap computed with it — never a score of their own. Reads only.
//!
//! A follow-up without its own model answer is a reflection prompt, not a card
//! (`learning::record`), so it counts for nothing here.

use std::collections::BTreeMap;

use rusqlite::Connection;
use serde::Serialize;

use crate::clock::Millis;
use crate::learn::mastery::{CardFacts, Judgement, Standing, judge};
use crate::learn::schedule::{Card, Scheduler};
use crate::learning::cards::card_from_row_at;

/// One concept's standing at `now`, by normalised name.
#[derive(Debug, Clone, PartialEq)]
pub struct ConceptMastery {
    /// The normalised name (the key across sessions).
    pub key: String,
    pub name: String,
    pub category: String,
    pub level: String,
    /// Recall-now: mean FSRS retrievability of the answered cards, 0 when none was answered.
    pub score: f64,
    pub standing: Standing,
    /// Cards of the concept answered at least once, mature, and all of its cards.
    pub answered: i64,
    pub mature: i64,
    pub cards: i64,
    /// Leech cards (tagged, usually suspended) and their lapses.
    pub leeches: i64,
    pub lapses: i64,
    /// What its answers and sessions counted (`concept_profiles`, read beside the level).
    pub counted: Counted,
}

/// What `concept_profiles` counted of a concept name: its answers right and wrong, the sessions
/// it was met in and when it was last seen; zero before the first (no row).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counted {
    pub correct: i64,
    pub incorrect: i64,
    pub encounters: i64,
    pub last_seen_at: Option<Millis>,
}

/// The columns [`counted_at`] reads, of `concept_profiles p` joined by name.
macro_rules! counted_columns {
    () => {
        "COALESCE(p.correct_answers, 0), COALESCE(p.incorrect_answers, 0), COALESCE(p.encounter_count, 0), p.last_seen_at"
    };
}
pub(crate) use counted_columns;

/// The [`counted_columns!`] of `row` from column `at` on.
pub fn counted_at(row: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Counted> {
    Ok(Counted {
        correct: row.get(at)?,
        incorrect: row.get(at + 1)?,
        encounters: row.get(at + 2)?,
        last_seen_at: row.get(at + 3)?,
    })
}

impl ConceptMastery {
    pub fn is_mastered(&self) -> bool {
        self.standing == Standing::Mastered
    }

    pub fn is_gap(&self) -> bool {
        self.standing == Standing::Gap
    }
}

/// Every concept judged at `now` (module doc), ordered by normalised name.
pub fn concept_mastery(conn: &Connection, scheduler: &Scheduler, now: Millis) -> rusqlite::Result<Vec<ConceptMastery>> {
    concept_mastery_in(conn, scheduler, now, None)
}

/// The SELECT of the mastery read, before its WHERE: one row per (concept row, card), merged by
/// name in [`judged`]: no GROUP BY or ORDER BY (their temporary B-trees were half of this read's
/// time, which the statusline paid on every refresh: docs/PERFORMANCE.md), and the tags' JSON
/// is parsed only when it names a leech.
macro_rules! mastery_rows {
    () => {
        concat!(
            "SELECT c.normalized_name, c.name, c.category, COALESCE(p.level, 'junior'), \
                    q.card_state, q.learning_step, q.stability, q.fsrs_difficulty, q.due_at, q.last_review_at, \
                    q.reps, q.lapses, \
                    instr(q.tags, 'leech') > 0 AND EXISTS (SELECT 1 FROM json_each(q.tags) t WHERE t.value = 'leech'), \
                    q.id, ",
            counted_columns!(),
            " FROM concepts c LEFT JOIN questions q ON q.concept_id = c.id AND NOT ",
            crate::learning::reflection!(),
            " LEFT JOIN concept_profiles p ON p.normalized_name = c.normalized_name "
        )
    };
}

/// [`concept_mastery`] for the concepts met in sessions under the project directory
/// `directory` (its cwd or below; all when `None`), each still judged over all its cards: the
/// statusline's scope, read without the other projects' cards.
pub fn concept_mastery_in(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
    directory: Option<&str>,
) -> rusqlite::Result<Vec<ConceptMastery>> {
    let sql = concat!(
        mastery_rows!(),
        "WHERE ?1 IS NULL OR c.normalized_name IN (SELECT c2.normalized_name FROM concepts c2 \
           JOIN sessions s ON s.id = c2.session_id WHERE ",
        super::in_project_dir!("?1"),
        ")",
    );
    judged(conn, scheduler, now, sql, directory.map(str::to_owned))
}

/// [`concept_mastery`] for the concepts named `names` (normalised names) alone, each judged
/// over all its cards and found by migration 0018's index of names: `vl gaps` reads the few
/// concepts `learning::standings` found to be gaps, not every concept.
pub fn concept_mastery_of(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
    names: &[&str],
) -> rusqlite::Result<Vec<ConceptMastery>> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let sql = concat!(mastery_rows!(), "WHERE c.normalized_name IN (SELECT value FROM json_each(?1))");
    judged(conn, scheduler, now, sql, Some(serde_json::to_string(names).unwrap_or_default()))
}

/// The concepts of the rows `sql` selects ([`mastery_rows!`] and a WHERE over `?1`), judged.
fn judged(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
    sql: &str,
    param: Option<String>,
) -> rusqlite::Result<Vec<ConceptMastery>> {
    Ok(named_cards(conn, sql, param)?.into_iter().map(|(key, named)| named.judged(key, scheduler, now)).collect())
}

/// The concepts named `names` (normalised names) with every card of theirs, by name: what
/// [`concept_mastery_of`] judges, for a reader that judges them at other moments too
/// (`learning::kept_standings`).
pub fn cards_of(conn: &Connection, names: &[&str]) -> rusqlite::Result<BTreeMap<String, NamedCards>> {
    if names.is_empty() {
        return Ok(BTreeMap::new());
    }
    let sql = concat!(mastery_rows!(), "WHERE c.normalized_name IN (SELECT value FROM json_each(?1))");
    named_cards(conn, sql, Some(serde_json::to_string(names).unwrap_or_default()))
}

/// The concept rows of one normalised name merged, with all their cards.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedCards {
    /// The first name and category in sort order (the same name met in several sessions).
    pub name: String,
    pub category: String,
    pub level: String,
    pub counted: Counted,
    /// Each card and whether it is tagged a leech; reflection prompts are no cards.
    pub cards: Vec<(Card, bool)>,
}

impl NamedCards {
    /// What `judge` reads of the cards at `now`.
    pub fn facts_at(&self, scheduler: &Scheduler, now: Millis) -> Vec<CardFacts> {
        self.cards.iter().map(|(card, leech)| card_facts(scheduler, card, *leech, now)).collect()
    }

    /// The concept judged at `now` (module doc).
    pub fn judged(&self, key: String, scheduler: &Scheduler, now: Millis) -> ConceptMastery {
        let Judgement { standing, recall_now, answered, mature, leeches } = judge(&self.facts_at(scheduler, now));
        let lapses = self.cards.iter().filter(|(_, leech)| *leech).map(|(card, _)| i64::from(card.lapses)).sum();
        ConceptMastery {
            key,
            name: self.name.clone(),
            category: self.category.clone(),
            level: self.level.clone(),
            score: recall_now,
            standing,
            answered: answered as i64,
            mature: mature as i64,
            cards: self.cards.len() as i64,
            leeches: leeches as i64,
            lapses,
            counted: self.counted.clone(),
        }
    }
}

/// What `judge` reads of one card at `now`.
pub fn card_facts(scheduler: &Scheduler, card: &Card, leech: bool, now: Millis) -> CardFacts {
    CardFacts {
        recall: scheduler.retrievability(card, now),
        stability: card.memory.filter(|_| card.last_review_at.is_some()).map(|m| m.stability),
        leech,
        in_steps: card.state.in_steps(),
    }
}

/// The rows `sql` selects ([`mastery_rows!`] and a WHERE over `?1`), merged by name.
fn named_cards(conn: &Connection, sql: &str, param: Option<String>) -> rusqlite::Result<BTreeMap<String, NamedCards>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let mut by_name: BTreeMap<String, NamedCards> = BTreeMap::new();
    let rows = stmt.query_map([param], |r| {
        let key: String = r.get(0)?;
        let head: (String, String, String, Counted) = (r.get(1)?, r.get(2)?, r.get(3)?, counted_at(r, 14)?);
        let card = match r.get::<_, Option<String>>(13)? {
            Some(_) => Some((card_from_row_at(r, 4)?, r.get::<_, Option<bool>>(12)?.unwrap_or(false))),
            None => None,
        };
        Ok((key, head, card))
    })?;
    for row in rows {
        let (key, (name, category, level, counted), card) = row?;
        let entry = by_name.entry(key).or_insert_with(|| NamedCards {
            name: name.clone(),
            category: category.clone(),
            level,
            counted,
            cards: Vec::new(),
        });
        if name < entry.name {
            entry.name = name;
        }
        if category < entry.category {
            entry.category = category;
        }
        entry.cards.extend(card);
    }
    Ok(by_name)
}

/// `GET /api/vibelearn/profile`: every concept met, leeches first, then the weakest recall
/// first ([`profile_at`]).
#[derive(Debug, Serialize)]
pub struct Profile {
    pub profile: Vec<ProfileLine>,
}

/// One concept's line of the profile: its live standing and what its answers and sessions
/// counted (`concept_profiles`).
#[derive(Debug, Serialize)]
pub struct ProfileLine {
    pub concept_name: String,
    pub category: String,
    pub level: String,
    pub standing: &'static str,
    pub mastered: bool,
    pub gap: bool,
    pub recall_now: f64,
    /// The same recall-now, under the field's old name.
    pub mastery_score: f64,
    pub cards: i64,
    pub answered_cards: i64,
    pub mature_cards: i64,
    pub leeches: i64,
    pub correct_answers: i64,
    pub incorrect_answers: i64,
    pub encounter_count: i64,
    pub last_seen_at: Option<Millis>,
}

/// The profile at `now`. A typed reply, serialised once by the route: built as a
/// `serde_json::Value`, its 400 lines at 1,000 sessions cost as much again in map inserts and
/// a copy of the whole array (docs/DECISIONS.md, "Concepts' judgements kept").
pub fn profile_at(conn: &Connection, scheduler: &Scheduler, now: Millis) -> rusqlite::Result<Profile> {
    // `concept_mastery`, read from the live cards (`learning::standings`): not a row per card.
    let mut profile: Vec<ProfileLine> = crate::learning::standings::concept_mastery_live(conn, scheduler, now)?
        .into_iter()
        .map(|m| ProfileLine {
            standing: m.standing.as_str(),
            mastered: m.is_mastered(),
            gap: m.is_gap(),
            recall_now: m.score,
            mastery_score: m.score,
            cards: m.cards,
            answered_cards: m.answered,
            mature_cards: m.mature,
            leeches: m.leeches,
            correct_answers: m.counted.correct,
            incorrect_answers: m.counted.incorrect,
            encounter_count: m.counted.encounters,
            last_seen_at: m.counted.last_seen_at,
            concept_name: m.name,
            category: m.category,
            level: m.level,
        })
        .collect();
    profile.sort_by(|a, b| {
        (b.leeches > 0)
            .cmp(&(a.leeches > 0))
            .then(a.recall_now.total_cmp(&b.recall_now))
            .then(a.concept_name.cmp(&b.concept_name))
    });
    Ok(Profile { profile })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::schedule::DAY_MS;
    use rusqlite::params;
    use serde_json::{Value, json};

    const NOW: Millis = 20_000 * DAY_MS;

    fn db() -> (tempfile::TempDir, Connection) {
        crate::db::testing::fresh()
    }

    #[test]
    fn a_project_s_concepts_are_judged_over_all_their_cards() {
        let (_dir, conn) = db();
        conn.execute_batch(
            "INSERT INTO sessions (id, project, cwd, started_at, updated_at) VALUES
               ('a', 'app', '/w/app', 1, 1), ('b', 'other', '/w/app-other', 1, 1);
             INSERT INTO concepts (id, session_id, name, normalized_name, category, difficulty, source_file, snippet,
               why_it_matters, confidence, created_at, updated_at) VALUES
               ('ca', 'a', 'Closures', 'closures', 'x', 'mid', 'a.ts', 'x', 'y', 0.9, 1, 1),
               ('cb', 'b', 'Closures', 'closures', 'x', 'mid', 'a.ts', 'x', 'y', 0.9, 1, 1),
               ('cc', 'b', 'Mutexes', 'mutexes', 'x', 'mid', 'a.go', 'x', 'y', 0.9, 1, 1);",
        )
        .unwrap();
        for (id, concept, session) in [("q1", "ca", "a"), ("q2", "cb", "b")] {
            conn.execute(
                "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, question, explanation, \
                 tags, text_hash, created_at, card_state, stability, fsrs_difficulty, last_review_at, reps) \
                 VALUES (?1, ?2, ?3, 'true_false', 'mid', ?1, 'e', '[]', ?1, 1, 'review', 30, 5, ?4, 1)",
                params![id, concept, session, NOW],
            )
            .unwrap();
        }
        let here = concept_mastery_in(&conn, &Scheduler::default(), NOW, Some("/w/app")).unwrap();
        // Only the project's concept (a sibling directory is another project), mastered by its two
        // mature cards, one of them met in the other project.
        assert_eq!(here.iter().map(|c| c.key.as_str()).collect::<Vec<_>>(), ["closures"]);
        assert_eq!((here[0].cards, here[0].standing), (2, Standing::Mastered));
        let all = concept_mastery(&conn, &Scheduler::default(), NOW).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all.iter().find(|c| c.key == "closures"), Some(&here[0]));
    }

    #[test]
    fn the_profile_is_the_live_standing_with_leeches_first() {
        let (_dir, conn) = db();
        conn.execute_batch(
            "INSERT INTO sessions (id, project, started_at, updated_at) VALUES ('s', 'p', 1, 1);
             INSERT INTO concepts (id, session_id, name, normalized_name, category, difficulty, source_file, snippet,
               why_it_matters, confidence, created_at, updated_at) VALUES
               ('c1', 's', 'Closures', 'closures', 'functional', 'mid', 'a.ts', 'x', 'y', 0.9, 1, 1),
               ('c2', 's', 'Mutexes', 'mutexes', 'concurrency', 'mid', 'a.go', 'x', 'y', 0.9, 1, 1),
               ('c3', 's', 'Unasked', 'unasked', 'other', 'mid', 'a.py', 'x', 'y', 0.9, 1, 1);",
        )
        .unwrap();
        let question = |id: &str, concept: &str, stability: f64, tags: &str| {
            conn.execute(
                "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, question, explanation, \
                 tags, text_hash, created_at, card_state, stability, fsrs_difficulty, last_review_at, reps) \
                 VALUES (?1, ?2, 's', 'true_false', 'mid', ?1, 'e', ?4, ?1, 1, 'review', ?3, 5, ?5, 1)",
                params![id, concept, stability, tags, NOW],
            )
            .unwrap();
        };
        question("q1", "c1", 10.0, "[]");
        question("q2", "c2", 10.0, "[\"leech\"]");
        let body = serde_json::to_value(profile_at(&conn, &Scheduler::default(), NOW + 10 * DAY_MS).unwrap()).unwrap();
        let rows = body["profile"].as_array().unwrap();
        let names: Vec<&str> = rows.iter().map(|r| r["concept_name"].as_str().unwrap()).collect();
        assert_eq!(names, ["Mutexes", "Unasked", "Closures"], "the leech first, then the weakest");
        // Reviewed ten days ago with stability 10: recall 0.9, no gap; the leech is a gap anyway.
        assert!((rows[2]["mastery_score"].as_f64().unwrap() - 0.9).abs() < 1e-3, "{body}");
        assert_eq!(
            (rows[2]["gap"].as_bool(), rows[0]["gap"].as_bool(), rows[1]["gap"].as_bool()),
            (Some(false), Some(true), Some(false))
        );
        assert_eq!((rows[1]["cards"].as_i64(), rows[1]["recall_now"].as_f64()), (Some(0), Some(0.0)));
        assert_eq!(rows[1]["standing"], "learning", "no card answered: learning, not a gap");
        assert_eq!(rows[2]["standing"], "reviewing", "one card of stability 10: not mastered");
        // Two mature cards (stability 30 and 21) and no leech: mastered.
        question("q3", "c1", 30.0, "[]");
        conn.execute("UPDATE questions SET stability = 21 WHERE id = 'q1'", []).unwrap();
        let body = serde_json::to_value(profile_at(&conn, &Scheduler::default(), NOW + 10 * DAY_MS).unwrap()).unwrap();
        let closures = body["profile"].as_array().unwrap().iter().find(|r| r["concept_name"] == "Closures").unwrap();
        assert_eq!((closures["standing"].as_str(), closures["mastered"].as_bool()), (Some("mastered"), Some(true)));
        let standings = crate::learning::counts::Standings::of(
            &concept_mastery(&conn, &Scheduler::default(), NOW + 10 * DAY_MS).unwrap(),
        );
        assert_eq!(standings.mastered, 1);
        // The answers and sessions counted, judged from the cards and then from the kept rows.
        conn.execute(
            "INSERT INTO concept_profiles (normalized_name, concept_name, category, level, encounter_count, \
             correct_answers, incorrect_answers, last_seen_at) VALUES ('closures', 'Closures', 'functional', 'mid', 3, 7, 2, 99)",
            [],
        )
        .unwrap();
        let at = NOW + 10 * DAY_MS;
        let judged = serde_json::to_value(profile_at(&conn, &Scheduler::default(), at).unwrap()).unwrap();
        let closures = judged["profile"].as_array().unwrap().iter().find(|r| r["concept_name"] == "Closures").unwrap();
        let counted =
            ["level", "encounter_count", "correct_answers", "incorrect_answers", "last_seen_at"].map(|k| &closures[k]);
        assert_eq!(counted.map(ToString::to_string), ["\"mid\"", "3", "7", "2", "99"]);
        let unasked = judged["profile"].as_array().unwrap().iter().find(|r| r["concept_name"] == "Unasked").unwrap();
        assert_eq!(
            (&unasked["correct_answers"], &unasked["last_seen_at"]),
            (&json!(0), &Value::Null),
            "no profile row"
        );
        assert_eq!(crate::learning::kept_standings::refill(&conn, &Scheduler::default(), NOW).unwrap(), (3, false));
        let kept = serde_json::to_value(profile_at(&conn, &Scheduler::default(), at).unwrap()).unwrap();
        assert_eq!(kept, judged, "the kept rows' profile is the cards'");
    }
}
