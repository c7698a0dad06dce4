//! Where the concepts stand, counted (mastered, reviewing, learning, gap) from the cards that
//! can change a standing, not from every card ever written (issue 43 §1): the statusline on
//! every message, `vl status`, the SessionStart message and the dashboard's overview count here.
//! Reads only. The standing is still `learn::mastery::judge`'s, over the same facts
//! `learning::mastery::concept_mastery` reads: this module only skips the cards whose facts are
//! known without reading them.
//!
//! # Why it is the same standing
//! A *plain new* card — never answered, in state `new`, not tagged a leech — has the facts
//! [`CardFacts::default`] (no recall, no stability, no leech, not in steps), always. `judge`
//! reads such cards only through "are there cards not answered?", so one of them weighs as
//! much as a thousand: a concept is judged over its *live* cards ([`live_card!`], migration
//! 0018's partial index `questions_live`) plus one plain new card when it has any (one probe
//! of `questions_plain_new`), and a concept without live cards is learning. The probe is asked
//! only of the concepts the live cards judge mastered or reviewing: a plain new card turns
//! those into learning and changes no other standing (a gap stays a gap, learning stays
//! learning), so at 1,000 sessions it went from one probe per concept met to a handful. The test
//! `standings_are_concept_mastery_s_counted` holds this to the full read.
//!
//! # Kept rows first
//! Each concept's judgement is kept in a row (`learning::kept_standings`, forgotten by triggers
//! whenever its cards change), so the reads here take the rows and judge only the names that
//! have none: one by one by name when they are few (a card answered since the worker last kept
//! them), or in the one pass over the live cards described above when many are (a database no
//! worker has kept yet, or right after a re-fit).
//!
//! # Performance
//! At 1,000 sessions (15,000 questions, 2,400 answered) the full read took ~25 ms, most of it
//! building a row per card; the pass over the live cards ~5 ms; the kept rows a row per
//! concept name (docs/PERFORMANCE.md "Reads at scale").

use std::collections::{BTreeMap, HashMap, HashSet};

use rusqlite::Connection;

use crate::clock::Millis;
use crate::learn::mastery::{CardFacts, Judgement, Standing, judge};
use crate::learn::schedule::Scheduler;
use crate::learning::cards::card_from_row_at;
use crate::learning::counts;
use crate::learning::kept_standings;
use crate::learning::mastery::{ConceptMastery, Counted, card_facts, concept_mastery_of, counted_at, counted_columns};

/// SQL over `questions q`: a card whose facts are not those of a plain new card (module doc) —
/// answered, in state other than `new`, or tagged a leech. Migration 0018's `questions_live`
/// indexes exactly these, under the same condition (the planner uses a partial index only for
/// a query whose condition implies the index's).
macro_rules! live_card {
    () => {
        "(q.last_review_at IS NOT NULL OR q.card_state <> 'new' OR instr(q.tags, 'leech') > 0)"
    };
}
pub(crate) use live_card;

/// The live cards of every concept, with the concept's name: card columns 1–8 as
/// `card_from_row_at` reads them, then whether the card is a leech. No `INDEXED BY`: the
/// statusline and the SessionStart hook read a database the worker may not have migrated yet,
/// where naming a missing index would fail the read; the planner picks `questions_live` on its
/// own (its condition is this one), and a test holds it to that.
const LIVE_CARDS: &str = concat!(
    "SELECT c.normalized_name, q.card_state, q.learning_step, q.stability, q.fsrs_difficulty, q.due_at, \
            q.last_review_at, q.reps, q.lapses, \
            instr(q.tags, 'leech') > 0 AND EXISTS (SELECT 1 FROM json_each(q.tags) t WHERE t.value = 'leech') \
     FROM questions q JOIN concepts c ON c.id = q.concept_id \
     WHERE ",
    live_card!(),
    " AND NOT ",
    crate::learning::reflection!()
);

/// Whether the concept named `?1` has a plain new card (module doc), in any session.
const HAS_PLAIN_NEW: &str = concat!(
    "SELECT EXISTS (SELECT 1 FROM concepts c JOIN questions q ON q.concept_id = c.id \
     WHERE c.normalized_name = ?1 AND q.last_review_at IS NULL AND q.card_state = 'new' \
       AND NOT (instr(q.tags, 'leech') > 0) AND NOT ",
    crate::learning::reflection!(),
    ")"
);

/// The standings of the concepts named in `keys`, each judged over all its cards (module doc),
/// as [`counts::Standings::of`] would count `learning::mastery::concept_mastery`'s for them.
pub fn standings(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
    keys: &HashSet<String>,
) -> rusqlite::Result<counts::Standings> {
    Ok(counted(&live_standings(conn, scheduler, now, keys)?, keys.len()))
}

/// The standing of concepts of `keys`, by name: every concept with a kept standing
/// (`learning::kept_standings`), and every other one that has a live card (module doc); every
/// concept of `keys` left out is learning.
pub fn live_standings(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
    keys: &HashSet<String>,
) -> rusqlite::Result<BTreeMap<String, Standing>> {
    standings_judging_by_name(conn, scheduler, now, keys, JUDGED_BY_NAME)
}

/// [`live_standings`], judging up to `by_name_at_most` names without a kept row by name.
fn standings_judging_by_name(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
    keys: &HashSet<String>,
    by_name_at_most: usize,
) -> rusqlite::Result<BTreeMap<String, Standing>> {
    let (mut by_name, missing) = kept_standings::standings(conn, scheduler, now, keys)?;
    if missing.len() <= by_name_at_most {
        // A few names without a row (a card answered or written since the worker last kept
        // them): judged from their own cards, through the names' index.
        let names: Vec<&str> = missing.iter().map(String::as_str).collect();
        for concept in concept_mastery_of(conn, scheduler, now, &names)? {
            by_name.insert(concept.key, concept.standing);
        }
        return Ok(by_name);
    }
    let missing: HashSet<String> = missing.into_iter().collect();
    let mut probe = conn.prepare_cached(HAS_PLAIN_NEW)?;
    for (key, cards) in live_facts(conn, scheduler, now, Some(&missing))? {
        let mut facts: Vec<CardFacts> = cards.into_iter().map(|(f, _)| f).collect();
        let mut standing = judge(&facts).standing;
        // A plain new card leaves a gap a gap (it adds no recall and no leech) and makes any
        // other standing learning (a card not answered): it can only turn mastered or
        // reviewing into learning, so only those concepts are asked whether they have one.
        if matches!(standing, Standing::Mastered | Standing::Reviewing)
            && probe.query_row([&key], |r| r.get::<_, bool>(0))?
        {
            facts.push(CardFacts::default());
            standing = judge(&facts).standing;
        }
        by_name.insert(key, standing);
    }
    Ok(by_name)
}

/// Up to this many names without a kept row are judged from their cards, found by name
/// (`learning::mastery::concept_mastery_of`); more (a database no worker has kept yet, or just
/// after a re-fit) are judged in one pass over every live card, as before the rows were kept.
const JUDGED_BY_NAME: usize = 32;

/// [`live_standings`] counted over `concepts` concepts: those without a live card (only plain
/// new cards, or none) are learning.
pub fn counted(live: &BTreeMap<String, Standing>, concepts: usize) -> counts::Standings {
    let mut standings = counts::Standings::default();
    for standing in live.values() {
        standings.add(*standing);
    }
    standings.learning += concepts as i64 - standings.concepts();
    standings
}

/// The facts and lapses of the live cards of the concepts in `keys` (all when `None`), by name.
fn live_facts(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
    keys: Option<&HashSet<String>>,
) -> rusqlite::Result<BTreeMap<String, Vec<(CardFacts, u32)>>> {
    let mut stmt = conn.prepare_cached(LIVE_CARDS)?;
    let mut rows = stmt.query([])?;
    let mut by_name: BTreeMap<String, Vec<(CardFacts, u32)>> = BTreeMap::new();
    while let Some(r) = rows.next()? {
        let key: String = r.get(0)?;
        if keys.is_some_and(|keys| !keys.contains(&key)) {
            continue;
        }
        let card = card_from_row_at(r, 1)?;
        let facts = card_facts(scheduler, &card, r.get::<_, Option<bool>>(9)?.unwrap_or(false), now);
        by_name.entry(key).or_default().push((facts, card.lapses));
    }
    Ok(by_name)
}

/// Every concept judged at `now`, equal to `learning::mastery::concept_mastery` (the test
/// `every_concept_read_live_is_concept_mastery` holds it to it), read from the live cards and
/// a count of each concept's plain new cards (module doc) from migration 0018's
/// `questions_plain_new` alone, not from a row per card: the profile route. In name order
/// (`key`, byte-wise, as SQLite orders text).
pub fn concept_mastery_live(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
) -> rusqlite::Result<Vec<ConceptMastery>> {
    concept_mastery_judging_by_name(conn, scheduler, now, JUDGED_BY_NAME)
}

/// [`concept_mastery_live`]: the kept rows (`learning::kept_standings`), and up to
/// `by_name_at_most` names without one judged by name; with more missing, every concept read
/// from the live cards.
fn concept_mastery_judging_by_name(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
    by_name_at_most: usize,
) -> rusqlite::Result<Vec<ConceptMastery>> {
    let (mut kept, missing) = match kept_standings::masteries(conn, scheduler, now)? {
        Some(read) => read,
        None => (Vec::new(), all_keys(conn)?.into_iter().collect()),
    };
    if missing.len() <= by_name_at_most {
        // The kept rows come in name order; the few judged by name are put in theirs.
        if !missing.is_empty() {
            let names: Vec<&str> = missing.iter().map(String::as_str).collect();
            kept.extend(concept_mastery_of(conn, scheduler, now, &names)?);
            kept.sort_by(|a, b| a.key.cmp(&b.key));
        }
        return Ok(kept);
    }
    every_concept_from_live_cards(conn, scheduler, now)
}

/// Every concept read from its live cards and its count of plain new cards (module doc).
fn every_concept_from_live_cards(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
) -> rusqlite::Result<Vec<ConceptMastery>> {
    // The concepts' rows: the first name and category in sort order, as the full read keeps.
    let mut name_of: HashMap<String, String> = HashMap::new();
    let mut heads: BTreeMap<String, (String, String, String, Counted)> = BTreeMap::new();
    let mut stmt = conn.prepare_cached(concat!(
        "SELECT c.id, c.normalized_name, c.name, c.category, COALESCE(p.level, 'junior'), ",
        counted_columns!(),
        " FROM concepts c LEFT JOIN concept_profiles p ON p.normalized_name = c.normalized_name"
    ))?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let (id, key, name, category, level): (String, String, String, String, String) =
            (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?);
        let counted = counted_at(r, 5)?;
        let head = heads.entry(key.clone()).or_insert_with(|| (name.clone(), category.clone(), level, counted));
        if name < head.0 {
            head.0 = name;
        }
        if category < head.1 {
            head.1 = category;
        }
        name_of.insert(id, key);
    }
    let plain = plain_new_counts(conn)?;
    let mut plain_by_name: HashMap<&str, usize> = HashMap::new();
    for (concept_id, n) in &plain {
        if let Some(key) = name_of.get(concept_id) {
            *plain_by_name.entry(key.as_str()).or_default() += n;
        }
    }
    let mut live = live_facts(conn, scheduler, now, None)?;
    Ok(heads
        .into_iter()
        .map(|(key, (name, category, level, counted))| {
            let cards = live.remove(&key).unwrap_or_default();
            let lapses = cards.iter().filter(|(f, _)| f.leech).map(|(_, l)| i64::from(*l)).sum();
            let mut facts: Vec<CardFacts> = cards.into_iter().map(|(f, _)| f).collect();
            let plain = plain_by_name.get(key.as_str()).copied().unwrap_or(0);
            facts.extend(std::iter::repeat_n(CardFacts::default(), plain));
            let Judgement { standing, recall_now, answered, mature, leeches } = judge(&facts);
            ConceptMastery {
                key,
                name,
                category,
                level,
                score: recall_now,
                standing,
                answered: answered as i64,
                mature: mature as i64,
                cards: facts.len() as i64,
                leeches: leeches as i64,
                lapses,
                counted,
            }
        })
        .collect())
}

/// The plain new cards (module doc) of each concept row, by concept id: every card never
/// answered in state `new` counted from the covering index `questions_plain_new`, less those
/// tagged a leech (live cards, from `questions_live`) and the reflection prompts among the rest
/// (follow-ups, from `questions_follow_ups`): three index reads, no row per card.
fn plain_new_counts(conn: &Connection) -> rusqlite::Result<HashMap<String, usize>> {
    let mut counts: HashMap<String, i64> = HashMap::new();
    // A row per concept and its count, or (the few exceptions) a row per card.
    let mut add = |sql: &str, sign: i64| -> rusqlite::Result<()> {
        let mut stmt = conn.prepare_cached(sql)?;
        let counted = stmt.column_count() == 2;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let n = if counted { r.get::<_, i64>(1)? } else { 1 };
            *counts.entry(r.get(0)?).or_default() += sign * n;
        }
        Ok(())
    };
    add(PLAIN_STATE_COUNTS, 1)?;
    add(PLAIN_STATE_LEECHES, -1)?;
    add(PLAIN_STATE_REFLECTIONS, -1)?;
    Ok(counts.into_iter().filter_map(|(id, n)| usize::try_from(n).ok().filter(|n| *n > 0).map(|n| (id, n))).collect())
}

/// Cards never answered and in state `new`, by concept row (`questions_plain_new`'s condition).
const PLAIN_STATE_COUNTS: &str = "SELECT q.concept_id, COUNT(*) FROM questions q \
     WHERE q.last_review_at IS NULL AND q.card_state = 'new' GROUP BY q.concept_id";
/// Those of them tagged a leech (live cards all the same), a row each (few; no GROUP BY, which
/// would have the planner walk a concept index over every card).
const PLAIN_STATE_LEECHES: &str = concat!(
    "SELECT q.concept_id FROM questions q WHERE ",
    live_card!(),
    " AND q.last_review_at IS NULL AND q.card_state = 'new' AND instr(q.tags, 'leech') > 0"
);
/// The reflection prompts among the rest (no card), a row each from the follow-ups (`+`: not
/// from the never-answered cards' index, which holds every new card).
const PLAIN_STATE_REFLECTIONS: &str = concat!(
    "SELECT q.concept_id FROM questions q WHERE q.parent_question_id IS NOT NULL AND ",
    crate::learning::reflection!(),
    " AND +q.last_review_at IS NULL AND +q.card_state = 'new' AND NOT (instr(q.tags, 'leech') > 0)"
);

/// Every concept name met: a row a name (`learning::kept_standings::names`), or, on a database
/// not migrated yet, the distinct names of migration 0018's `concepts_by_name`.
pub fn all_keys(conn: &Connection) -> rusqlite::Result<HashSet<String>> {
    if let Some(names) = kept_standings::names(conn)? {
        return Ok(names);
    }
    conn.prepare_cached("SELECT DISTINCT normalized_name FROM concepts")?.query_map([], |r| r.get(0))?.collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::schedule::DAY_MS;
    use crate::learning::mastery::{concept_mastery, concept_mastery_in, concept_mastery_of};
    use rusqlite::params;

    const NOW: Millis = 20_000 * DAY_MS;

    /// The steps of `sql`'s query plan (`?` parameters bound to NULL).
    fn plan(conn: &Connection, sql: &str) -> Vec<String> {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let n = stmt.parameter_count();
        stmt.query_map(rusqlite::params_from_iter(std::iter::repeat_n(None::<i64>, n)), |r| r.get(3))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    /// A history of every kind of card: plain new ones, answered ones recalled well and badly,
    /// mature and not, cards in their steps, leeches (one never answered, as a hand edit
    /// leaves it), reflection prompts, and concepts without questions, over two projects and
    /// names met in several sessions.
    fn history(conn: &Connection, seed: u64) {
        let mut rng = fastrand::Rng::with_seed(seed);
        for s in 0..12 {
            let cwd = if s % 3 == 0 { "/w/a" } else { "/w/b" };
            conn.execute(
                "INSERT INTO sessions (id, project, cwd, started_at, updated_at) VALUES (?1, 'p', ?2, 1, 1)",
                params![format!("s{s}"), cwd],
            )
            .unwrap();
            for c in 0..4 {
                let (concept, name) = (format!("s{s}c{c}"), format!("n{}", rng.usize(0..9)));
                let inserted = conn
                    .execute(
                        "INSERT OR IGNORE INTO concepts (id, session_id, name, normalized_name, category, difficulty, \
                         source_file, snippet, why_it_matters, confidence, created_at, updated_at) \
                         VALUES (?1, ?2, ?3, ?3, 'x', 'mid', 'a.rs', 'x', 'y', 0.9, 1, 1)",
                        params![concept, format!("s{s}"), name],
                    )
                    .unwrap();
                for q in 0..rng.usize(0..4) * inserted {
                    card(conn, &mut rng, &format!("{concept}q{q}"), &concept, &format!("s{s}"));
                }
            }
        }
    }

    fn card(conn: &Connection, rng: &mut fastrand::Rng, id: &str, concept: &str, session: &str) {
        let answered = rng.bool();
        let state = match rng.u8(0..6) {
            _ if !answered => "new",
            0 => "learning",
            1 => "relearning",
            _ => "review",
        };
        let tags = if rng.u8(0..8) == 0 { r#"["leech"]"# } else { "[]" };
        let stability = answered.then(|| rng.f64() * 60.0);
        let reviewed = answered.then(|| NOW - rng.i64(0..90) * DAY_MS);
        let (parent, correct) = if rng.u8(0..8) == 0 { (Some("parent"), None) } else { (None, Some("true")) };
        conn.execute(
            "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, question, correct, \
             explanation, tags, text_hash, created_at, card_state, stability, fsrs_difficulty, last_review_at, \
             due_at, reps, parent_question_id) \
             VALUES (?1, ?2, ?3, 'true_false', 'mid', ?1, ?4, 'e', ?5, ?1, 1, ?6, ?7, 5, ?8, ?8, 1, ?9)",
            params![id, concept, session, correct, tags, state, stability, reviewed, parent.map(|_| id)],
        )
        .unwrap();
    }

    #[test]
    fn standings_are_concept_mastery_s_counted() {
        let mut seen = counts::Standings::default();
        for seed in 0..20 {
            let (_dir, conn) = crate::db::testing::fresh();
            history(&conn, seed);
            let scheduler = Scheduler::default();
            let all = concept_mastery(&conn, &scheduler, NOW).unwrap();
            let keys = all_keys(&conn).unwrap();
            assert_eq!(keys.len(), all.len(), "seed {seed}");
            let expected = counts::Standings::of(&all);
            assert_eq!(standings(&conn, &scheduler, NOW, &keys).unwrap(), expected, "seed {seed}");
            // The gaps are concepts with live cards, and read alone they are the same.
            let live = live_standings(&conn, &scheduler, NOW, &keys).unwrap();
            let names: Vec<&str> = live.iter().filter(|(_, s)| **s == Standing::Gap).map(|(k, _)| k.as_str()).collect();
            let gaps: Vec<_> = all.iter().filter(|c| c.is_gap()).cloned().collect();
            assert_eq!(concept_mastery_of(&conn, &scheduler, NOW, &names).unwrap(), gaps, "seed {seed}");
            for (sum, n) in [(&mut seen.mastered, expected.mastered), (&mut seen.reviewing, expected.reviewing)]
                .into_iter()
                .chain([(&mut seen.learning, expected.learning), (&mut seen.gaps, expected.gaps)])
            {
                *sum += n;
            }
            // A project's concepts, judged over all their cards.
            let here = concept_mastery_in(&conn, &scheduler, NOW, Some("/w/a")).unwrap();
            let keys: HashSet<String> = here.iter().map(|c| c.key.clone()).collect();
            let expected = counts::Standings::of(&here);
            assert_eq!(standings(&conn, &scheduler, NOW, &keys).unwrap(), expected, "seed {seed}");
        }
        // The histories put concepts in every standing.
        assert!(seen.mastered > 0 && seen.reviewing > 0 && seen.learning > 0 && seen.gaps > 0, "{seen:?}");
    }

    /// The standings read from kept rows (`learning::kept_standings`) are the full read's, when
    /// every row is kept, when time has turned some into gaps since, when cards changed after
    /// (the triggers forget their rows) and when no row is kept, judged name by name or in one
    /// pass; and a row judged under another forgetting curve is not read.
    #[test]
    fn kept_standings_are_the_full_read_s_whatever_is_kept_and_whenever_it_is_read() {
        let expected_at = |conn: &Connection, scheduler: &Scheduler, now: Millis| {
            let all = concept_mastery(conn, scheduler, now).unwrap();
            all.iter().map(|c| (c.key.clone(), c.standing)).collect::<BTreeMap<_, _>>()
        };
        let read_at = |conn: &Connection, scheduler: &Scheduler, now: Millis, by_name: usize| {
            let keys = all_keys(conn).unwrap();
            let mut read = standings_judging_by_name(conn, scheduler, now, &keys, by_name).unwrap();
            for key in keys {
                read.entry(key).or_insert(Standing::Learning);
            }
            read
        };
        let kept = |conn: &Connection| -> i64 {
            conn.query_row("SELECT COUNT(*) FROM concept_standings WHERE standing IS NOT NULL", [], |r| r.get(0))
                .unwrap()
        };
        // The table's names are the concepts' distinct names, whatever changed (the triggers).
        let names_are_the_concepts = |conn: &Connection, seed: u64| {
            let distinct: HashSet<String> = conn
                .prepare("SELECT DISTINCT normalized_name FROM concepts")
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            assert_eq!(all_keys(conn).unwrap(), distinct, "seed {seed}");
        };
        let mut turned_to_gaps = 0;
        for seed in 0..20 {
            let (_dir, conn) = crate::db::testing::fresh();
            history(&conn, seed);
            let scheduler = Scheduler::default();
            let expected = expected_at(&conn, &scheduler, NOW);
            // Nothing kept: judged name by name, or in one pass over the live cards.
            assert_eq!(read_at(&conn, &scheduler, NOW, usize::MAX), expected, "seed {seed}");
            assert_eq!(read_at(&conn, &scheduler, NOW, 0), expected, "seed {seed}");
            // Everything kept, read now and later: time alone turns some into gaps.
            let (done, more) = kept_standings::refill(&conn, &scheduler, NOW).unwrap();
            assert_eq!((done, more), (expected.len(), false), "seed {seed}");
            assert_eq!(kept(&conn), expected.len() as i64);
            for days in [0, 1, 3, 10, 30, 100, 1000] {
                let later = NOW + days * DAY_MS + 12_345;
                let expected = expected_at(&conn, &scheduler, later);
                assert_eq!(read_at(&conn, &scheduler, later, 0), expected, "seed {seed}, {days} days later");
                turned_to_gaps += expected.values().filter(|s| **s == Standing::Gap).count();
                // The profile's lines from the rows alone: the full read's, recall-now included.
                let full = concept_mastery(&conn, &scheduler, later).unwrap();
                assert_same_concepts(&concept_mastery_judging_by_name(&conn, &scheduler, later, 0).unwrap(), &full);
            }
            // Cards change: an answer, a new card, a card deleted, a concept deleted. Each
            // forgets its name's row; the rest stay kept.
            let before = kept(&conn);
            conn.execute(
                "UPDATE questions SET stability = 90.0, last_review_at = ?1, card_state = 'review'                  WHERE rowid = (SELECT MIN(rowid) FROM questions WHERE parent_question_id IS NULL)",
                [NOW - DAY_MS],
            )
            .unwrap();
            conn.execute("DELETE FROM questions WHERE rowid = (SELECT MAX(rowid) FROM questions)", []).unwrap();
            conn.execute("DELETE FROM concepts WHERE rowid = (SELECT MAX(rowid) FROM concepts)", []).unwrap();
            assert!(kept(&conn) < before, "seed {seed}: the triggers forgot the changed names");
            names_are_the_concepts(&conn, seed);
            let expected = expected_at(&conn, &scheduler, NOW + 1);
            assert_eq!(read_at(&conn, &scheduler, NOW + 1, usize::MAX), expected, "seed {seed}");
            let full = concept_mastery(&conn, &scheduler, NOW + 1).unwrap();
            assert_same_concepts(
                &concept_mastery_judging_by_name(&conn, &scheduler, NOW + 1, usize::MAX).unwrap(),
                &full,
            );
            // A level changed (read beside the row), a concept row added under a kept name (its
            // row is forgotten).
            let before = kept(&conn);
            conn.execute(
                "INSERT INTO concept_profiles (normalized_name, concept_name, category, level, mastery_score, \
                 encounter_count, correct_answers, incorrect_answers, last_seen_at) \
                 SELECT normalized_name, name, category, 'senior', 0, 1, 0, 0, 1 FROM concept_standings \
                 WHERE standing IS NOT NULL LIMIT 1",
                [],
            )
            .unwrap();
            assert_eq!(kept(&conn), before, "seed {seed}: a level is read beside the row");
            conn.execute(
                "INSERT INTO sessions (id, project, cwd, started_at, updated_at) VALUES ('added', 'p', '/w/c', 1, 1)",
                [],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO concepts (id, session_id, name, normalized_name, category, difficulty, source_file, \
                 snippet, why_it_matters, confidence, created_at, updated_at) \
                 SELECT 'added', 'added', 'A first name', normalized_name, 'a category', 'mid', 'a.rs', 'x', 'y', 0.9, 1, 1 \
                 FROM concept_standings WHERE standing IS NOT NULL LIMIT 1",
                [],
            )
            .unwrap();
            assert_eq!(kept(&conn), before - 1, "seed {seed}: a concept row");
            names_are_the_concepts(&conn, seed);
            // A concept row renamed to a name not met before, another to a name met, and a
            // session deleted with its concept rows: names come and go with their last row.
            conn.execute(
                "UPDATE concepts SET normalized_name = 'a new name' WHERE rowid = (SELECT MIN(rowid) FROM concepts)",
                [],
            )
            .unwrap();
            conn.execute(
                "UPDATE concepts SET normalized_name = (SELECT MAX(normalized_name) FROM concepts) \
                 WHERE rowid = (SELECT MAX(rowid) FROM concepts)",
                [],
            )
            .unwrap();
            names_are_the_concepts(&conn, seed);
            conn.execute("DELETE FROM sessions WHERE id = 's1'", []).unwrap();
            names_are_the_concepts(&conn, seed);
            let full = concept_mastery(&conn, &scheduler, NOW + 1).unwrap();
            assert_same_concepts(
                &concept_mastery_judging_by_name(&conn, &scheduler, NOW + 1, usize::MAX).unwrap(),
                &full,
            );
            // A re-fit's curve reads no row of the old one; refilled under it, all are read.
            let refit = Scheduler::new(&fitted_parameters(0.3), 0.9, 8).unwrap();
            let (_, missing) = kept_standings::standings(&conn, &refit, NOW + 1, &all_keys(&conn).unwrap()).unwrap();
            assert_eq!(missing.len(), all_keys(&conn).unwrap().len(), "seed {seed}");
            kept_standings::refill(&conn, &refit, NOW + 1).unwrap();
            assert_eq!(read_at(&conn, &refit, NOW + 40 * DAY_MS, 0), expected_at(&conn, &refit, NOW + 40 * DAY_MS));
            // A clock set back before the judgement reads the cards, not the row.
            assert_eq!(read_at(&conn, &refit, NOW - DAY_MS, 0), expected_at(&conn, &refit, NOW - DAY_MS));
        }
        assert!(turned_to_gaps > 0, "some kept standings turned into gaps with time");
    }

    /// `read` is `full`, concept for concept (recall-now summed in another order: equal to the
    /// last bits).
    fn assert_same_concepts(read: &[ConceptMastery], full: &[ConceptMastery]) {
        assert_eq!(read.len(), full.len());
        for (r, f) in read.iter().zip(full) {
            assert!((r.score - f.score).abs() < 1e-12, "{r:?} {f:?}");
            assert_eq!(ConceptMastery { score: f.score, ..r.clone() }, *f);
        }
    }

    /// FSRS-6's default parameters with the forgetting curve's decay set to `decay`.
    fn fitted_parameters(decay: f32) -> Vec<f32> {
        let mut parameters = fsrs::DEFAULT_PARAMETERS.to_vec();
        parameters[20] = decay;
        parameters
    }

    /// An answer keeps its concept's standing in its own transaction.
    #[test]
    fn an_answer_keeps_its_concepts_standing() {
        let (_dir, mut conn) = crate::db::testing::fresh();
        history(&conn, 3);
        let (question, key): (String, String) = conn
            .query_row(
                "SELECT q.id, c.normalized_name FROM questions q JOIN concepts c ON c.id = q.concept_id                  WHERE q.parent_question_id IS NULL LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let scheduler = Scheduler::default();
        let answer = crate::learning::record::Answer {
            question_id: &question,
            text: "x",
            correct: true,
            rating: crate::learn::schedule::Rating::Good,
            duration_ms: None,
        };
        crate::learning::record::record_answer(&mut conn, &answer, &scheduler, NOW).unwrap().unwrap();
        let (_, missing) = kept_standings::standings(&conn, &scheduler, NOW, &HashSet::from([key.clone()])).unwrap();
        assert!(missing.is_empty(), "{key} is kept");
        let expected = concept_mastery(&conn, &scheduler, NOW).unwrap().into_iter().find(|c| c.key == key).unwrap();
        let (kept, _) = kept_standings::standings(&conn, &scheduler, NOW, &HashSet::from([key.clone()])).unwrap();
        assert_eq!(kept[&key], expected.standing);
    }

    /// The profile's read from the live cards is the full read, concept for concept (recall-now
    /// summed in another order: equal to the last bits).
    #[test]
    fn every_concept_read_live_is_concept_mastery() {
        for seed in 0..20 {
            let (_dir, conn) = crate::db::testing::fresh();
            history(&conn, seed);
            let scheduler = Scheduler::default();
            let all = concept_mastery(&conn, &scheduler, NOW).unwrap();
            let live = concept_mastery_live(&conn, &scheduler, NOW).unwrap();
            assert_eq!(live.len(), all.len(), "seed {seed}");
            for (l, a) in live.iter().zip(&all) {
                assert!((l.score - a.score).abs() < 1e-12, "seed {seed}: {l:?} {a:?}");
                assert_eq!(ConceptMastery { score: a.score, ..l.clone() }, *a, "seed {seed}");
            }
        }
    }

    /// The reads the statusline pays on every message follow what can be due, not the history:
    /// each is an index search or a scan of a partial index of the live cards, never a scan of
    /// every question, and the new cards are read in order (no sort of all of them).
    #[test]
    fn the_reads_of_every_message_search_indexes_not_the_history() {
        let (_dir, conn) = crate::db::testing::fresh();
        let live = plan(&conn, LIVE_CARDS);
        assert!(live.iter().any(|s| s == "SCAN q USING COVERING INDEX questions_live"), "{live:?}");
        let probe = plan(&conn, HAS_PLAIN_NEW);
        assert!(probe.iter().any(|s| s.contains("SEARCH c USING INDEX concepts_by_name")), "{probe:?}");
        assert!(probe.iter().any(|s| s.contains("SEARCH q USING INDEX questions_plain_new")), "{probe:?}");
        // A project's sessions from the cwd's index (migration 0021), not a scan of every session.
        let project =
            plan(&conn, concat!("SELECT s.id FROM sessions s WHERE ", crate::learning::in_project_dir!("?1")));
        assert!(project.iter().all(|s| !s.starts_with("SCAN")), "{project:?}");
        assert!(project.iter().any(|s| s.contains("USING COVERING INDEX sessions_by_cwd")), "{project:?}");
        let names = plan(&conn, "SELECT DISTINCT normalized_name FROM concepts");
        assert!(names.iter().any(|s| s.contains("COVERING INDEX concepts_by_name")), "{names:?}");
        let new = plan(&conn, &crate::learning::cards::due_sql("q.id", crate::learning::cards::NEW_IN_ORDER));
        assert!(new.iter().any(|s| s.contains("SEARCH q USING INDEX questions_new_in_order (due_at=?)")), "{new:?}");
        assert!(!new.iter().any(|s| s.contains("TEMP B-TREE")), "the new cards are sorted: {new:?}");
        // The loop's counts: every question and answer from an index, the reflections from the
        // follow-ups (no join of every answer to its question).
        let mut counts = Vec::new();
        for sql in [concat!("SELECT COUNT(*) FROM questions q WHERE ", crate::learning::reflection!()), counts::ANSWERS]
        {
            counts.extend(plan(&conn, sql));
        }
        assert!(counts.iter().any(|s| s.contains("SEARCH q USING INDEX questions_follow_ups")), "{counts:?}");
        assert!(counts.iter().any(|s| s.contains("SEARCH a USING INDEX quiz_attempts_question")), "{counts:?}");
        assert!(counts.iter().any(|s| s.contains("INDEX quiz_attempts_wrong")), "{counts:?}");
        for step in ["SCAN q", "SCAN a", "SCAN quiz_attempts", "SCAN questions"] {
            assert!(!counts.iter().any(|s| s == step), "{counts:?}");
        }
        // The profile's count of plain new cards: indexes only, never a walk of every card.
        let plain = plan(&conn, PLAIN_STATE_COUNTS);
        assert!(plain.iter().any(|s| s.contains("INDEX questions_plain_new")), "{plain:?}");
        let leeches = plan(&conn, PLAIN_STATE_LEECHES);
        assert!(leeches.iter().any(|s| s.contains("COVERING INDEX questions_live")), "{leeches:?}");
        let reflections = plan(&conn, PLAIN_STATE_REFLECTIONS);
        assert!(reflections.iter().any(|s| s.contains("INDEX questions_follow_ups")), "{reflections:?}");
        for plan in [&live, &probe, &names, &new] {
            assert!(!plan.iter().any(|s| s == "SCAN q" || s == "SCAN c" || s == "SCAN concepts"), "{plan:?}");
        }
    }
}
