//! Where each concept stands, kept between reads (issue 43 §1; migration 0020's
//! `concept_standings`): the reads on every message (the statusline, `vl status`, `vl gaps`,
//! the dashboard's overview) take a concept's standing from its row, and the profile its whole
//! line, instead of judging its cards, so they cost a row per concept name, not a row per card.
//!
//! # Why a kept row is the live judgement
//! A concept is `learning::mastery`'s judgement of its cards. Only two things change it: a
//! change to one of its cards or concept rows, and time, through the mean recall of its answered
//! cards, which only falls. So a row holds the judgement at `judged_at` and `gap_at`, the first
//! millisecond at which `judge` says *gap* with the cards unchanged (found by bisection over
//! `judge` itself, so it is the same definition, not a formula beside it; `NULL`: not within
//! [`HORIZON_MS`]). At a later `now` the standing is *gap* from `gap_at` on, the kept one
//! before, and recall-now is computed again from the answered cards' memory the row keeps. A row
//! is read only under the forgetting curve it was judged with (`decay`; a re-fit changes it) and
//! only at or after `judged_at` (a clock set back could raise recall).
//!
//! # Who keeps the rows
//! The table holds a row for every concept name met and for no other ([`names`]: the reads
//! that need every name read a row a name, not the concept rows). Triggers on `questions` and
//! `concepts` add and remove names, and forget a name's judgement (its `standing` set to NULL)
//! whenever one of its cards or concept rows changes (migration 0020), whatever code changes
//! it, so a judgement never outlives what it was judged from. A name whose judgement is not
//! kept is judged from its cards at read time: a forgotten row costs time, never truth.
//! Judgements are written back by the answer's own transaction (`learning::record`, for the
//! concept answered) and by the worker's maintenance task ([`refill`], for the rest: the quiz
//! job's new cards, suspends, a re-fit).

use std::collections::{BTreeMap, HashSet};

use rusqlite::{Connection, params};

use crate::clock::Millis;
use crate::learn::mastery::{CardFacts, Standing, judge};
use crate::learn::schedule::{Card, DAY_MS, Memory, Scheduler};
use crate::learning::mastery::{ConceptMastery, NamedCards, card_facts, cards_of, counted_at, counted_columns};

/// How far ahead a row's `gap_at` is looked for: ten thousand years. A mean recall still at
/// 70 % after that is kept as never falling (the slowest forgetting curve FSRS allows, at its
/// largest stability, crosses 70 % within ~2,000 years).
pub const HORIZON_MS: Millis = 10_000 * 366 * DAY_MS;
/// Names [`refill`] judges in one step (one writer transaction).
pub const REFILL_BATCH: usize = 100;
/// How often the worker keeps the rows the triggers forgot: a minute after the quiz job wrote a
/// session's questions, its concepts are read from rows again.
pub const REFILL_INTERVAL: std::time::Duration = std::time::Duration::from_secs(60);
/// Steps of [`REFILL_BATCH`] names a run (2,000 names: a whole history after a re-fit).
pub const REFILL_MAX_STEPS: usize = 20;

/// The first millisecond after `from` at which `standing_at` says gap, within [`HORIZON_MS`]:
/// a bisection, since a concept that is a gap at some moment stays one after it (its recall only
/// falls while its cards are unchanged).
fn gap_at(from: Millis, standing_at: impl Fn(Millis) -> Standing) -> Option<Millis> {
    let (mut before, mut after) = (from, from.saturating_add(HORIZON_MS));
    if standing_at(after) != Standing::Gap {
        return None;
    }
    while after - before > 1 {
        let mid = before + (after - before) / 2;
        if standing_at(mid) == Standing::Gap {
            after = mid;
        } else {
            before = mid;
        }
    }
    Some(after)
}

/// When `named` turns into a gap by time alone, judged at `now` as `judged` (None when it is a
/// gap already, or never becomes one: nothing answered).
fn gap_at_of(named: &NamedCards, judged: &ConceptMastery, scheduler: &Scheduler, now: Millis) -> Option<Millis> {
    if judged.standing == Standing::Gap || judged.answered == 0 {
        return None;
    }
    gap_at(now, |at| judge(&named.facts_at(scheduler, at)).standing)
}

/// Judges the concepts named `keys` at `now` from their cards and keeps their rows (writers
/// only); a name with no concept row left loses its row.
pub fn keep(conn: &Connection, scheduler: &Scheduler, now: Millis, keys: &[&str]) -> rusqlite::Result<()> {
    let mut insert = conn.prepare_cached(
        "INSERT OR REPLACE INTO concept_standings (normalized_name, name, category, standing, gap_at, \
         judged_at, decay, cards, answered, mature, leeches, lapses, recalls) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?;
    let mut found = cards_of(conn, keys)?;
    for key in keys {
        let Some(named) = found.remove(*key) else {
            conn.prepare_cached("DELETE FROM concept_standings WHERE normalized_name = ?1")?.execute([key])?;
            continue;
        };
        let judged = named.judged((*key).to_owned(), scheduler, now);
        let answered = named.cards.iter().filter(|(card, _)| scheduler.retrievability(card, now).is_some());
        let recalls = packed_recalls(
            answered
                .filter_map(|(card, _)| Some((card.memory?.stability, card.memory?.difficulty, card.last_review_at?))),
        );
        insert.execute(params![
            key,
            judged.name,
            judged.category,
            judged.standing.as_str(),
            gap_at_of(&named, &judged, scheduler, now),
            now,
            f64::from(scheduler.decay()),
            judged.cards,
            judged.answered,
            judged.mature,
            judged.leeches,
            judged.lapses,
            recalls,
        ])?;
    }
    Ok(())
}

/// Keeps a row for up to [`REFILL_BATCH`] concept names that have none usable under
/// `scheduler` at `now` (writers only: the worker's maintenance task). Returns how many it kept
/// and whether more are missing.
pub fn refill(conn: &Connection, scheduler: &Scheduler, now: Millis) -> rusqlite::Result<(usize, bool)> {
    // A kept standing always comes with its decay and moment (`keep`).
    let missing: Vec<String> = conn
        .prepare_cached(
            "SELECT normalized_name FROM concept_standings \
             WHERE standing IS NULL OR decay <> ?1 OR judged_at > ?2 LIMIT ?3",
        )?
        .query_map(params![f64::from(scheduler.decay()), now, REFILL_BATCH as i64 + 1], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let batch: Vec<&str> = missing.iter().take(REFILL_BATCH).map(String::as_str).collect();
    keep(conn, scheduler, now, &batch)?;
    Ok((batch.len(), missing.len() > REFILL_BATCH))
}

/// The kept standings at `now` of the names in `keys` that have a usable row (module doc), and
/// the names that have none. A database the worker has not migrated yet (the statusline reads
/// whatever version it finds) has no rows: every name is missing.
pub fn standings(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
    keys: &HashSet<String>,
) -> rusqlite::Result<(BTreeMap<String, Standing>, Vec<String>)> {
    let mut kept = BTreeMap::new();
    // The rows usable under `scheduler` at `now` (module doc).
    let sql = "SELECT normalized_name, standing, gap_at FROM concept_standings \
               WHERE standing IS NOT NULL AND decay = ?1 AND judged_at <= ?2";
    let Some(mut stmt) = prepare_if_migrated(conn, sql)? else {
        return Ok((kept, keys.iter().cloned().collect()));
    };
    let mut rows = stmt.query(params![f64::from(scheduler.decay()), now])?;
    while let Some(r) = rows.next()? {
        let key: String = r.get(0)?;
        if keys.contains(&key) {
            kept.insert(key, standing_at(parse_standing(r.get_ref(1)?.as_str()?), r.get(2)?, now));
        }
    }
    let missing = keys.iter().filter(|k| !kept.contains_key(*k)).cloned().collect();
    Ok((kept, missing))
}

/// Every concept whose judgement is kept and usable under `scheduler` at `now`, as
/// `learning::mastery` judges it then (module doc), in name order, and the names whose
/// judgement is not: every name met, read from its row. `None` on a database the worker has not
/// migrated yet.
pub fn masteries(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
) -> rusqlite::Result<Option<(Vec<ConceptMastery>, Vec<String>)>> {
    // The level and the counts are the concept profile's (every answer changes them), read
    // beside the row as `learning::mastery` reads them.
    let sql = concat!(
        "SELECT k.normalized_name, COALESCE(k.standing IS NOT NULL AND k.decay = ?1 AND k.judged_at <= ?2, 0), \
           k.name, k.category, COALESCE(p.level, 'junior'), k.standing, k.gap_at, k.cards, k.answered, k.mature, \
           k.leeches, k.lapses, k.recalls, ",
        counted_columns!(),
        " FROM concept_standings k LEFT JOIN concept_profiles p ON p.normalized_name = k.normalized_name \
         ORDER BY k.normalized_name"
    );
    let Some(mut stmt) = prepare_if_migrated(conn, sql)? else {
        return Ok(None);
    };
    let mut rows = stmt.query(params![f64::from(scheduler.decay()), now])?;
    let (mut kept, mut missing) = (Vec::new(), Vec::new());
    while let Some(r) = rows.next()? {
        let key: String = r.get(0)?;
        if !r.get::<_, bool>(1)? {
            missing.push(key);
            continue;
        }
        kept.push(ConceptMastery {
            key,
            name: r.get(2)?,
            category: r.get(3)?,
            level: r.get(4)?,
            score: recall_now(scheduler, r.get_ref(12)?.as_blob()?, now),
            standing: standing_at(parse_standing(r.get_ref(5)?.as_str()?), r.get(6)?, now),
            cards: r.get(7)?,
            answered: r.get(8)?,
            mature: r.get(9)?,
            leeches: r.get(10)?,
            lapses: r.get(11)?,
            counted: counted_at(r, 13)?,
        });
    }
    Ok(Some((kept, missing)))
}

/// Bytes a kept answered card takes in `recalls` (migration 0020): its stability and
/// difficulty as little-endian f64, its last review as a little-endian i64.
const RECALL_BYTES: usize = 24;

/// `(stability, difficulty, last_review_at)` of each answered card, packed for `recalls`.
fn packed_recalls(cards: impl Iterator<Item = (f64, f64, Millis)>) -> Vec<u8> {
    let mut packed = Vec::new();
    for (stability, difficulty, last_review_at) in cards {
        packed.extend_from_slice(&stability.to_le_bytes());
        packed.extend_from_slice(&difficulty.to_le_bytes());
        packed.extend_from_slice(&last_review_at.to_le_bytes());
    }
    packed
}

/// The cards [`packed_recalls`] packed (a trailing partial card, which it never writes, is
/// left out).
fn unpacked_recalls(packed: &[u8]) -> impl Iterator<Item = (f64, f64, Millis)> + '_ {
    packed.chunks_exact(RECALL_BYTES).map(|card| {
        let word = |at: usize| <[u8; 8]>::try_from(&card[at..at + 8]).expect("a chunk of 24 bytes holds three words");
        (f64::from_le_bytes(word(0)), f64::from_le_bytes(word(8)), Millis::from_le_bytes(word(16)))
    })
}

/// Recall-now at `now` of the answered cards packed in `recalls`: `judge`'s own mean over them.
fn recall_now(scheduler: &Scheduler, recalls: &[u8], now: Millis) -> f64 {
    let facts: Vec<CardFacts> = unpacked_recalls(recalls)
        .map(|(stability, difficulty, last_review_at)| {
            let card = Card {
                memory: Some(Memory { stability, difficulty }),
                last_review_at: Some(last_review_at),
                ..Card::default()
            };
            card_facts(scheduler, &card, false, now)
        })
        .collect();
    judge(&facts).recall_now
}

/// The kept `standing` at `now`: a gap from `gap_at` on.
fn standing_at(standing: Standing, gap_at: Option<Millis>, now: Millis) -> Standing {
    match gap_at {
        Some(gap_at) if now >= gap_at => Standing::Gap,
        _ => standing,
    }
}

fn parse_standing(text: &str) -> Standing {
    match text {
        "mastered" => Standing::Mastered,
        "reviewing" => Standing::Reviewing,
        "gap" => Standing::Gap,
        _ => Standing::Learning,
    }
}

/// Every concept name met (a row each, module doc), or `None` on a database the worker has
/// not migrated yet.
pub fn names(conn: &Connection) -> rusqlite::Result<Option<HashSet<String>>> {
    let Some(mut stmt) = prepare_if_migrated(conn, "SELECT normalized_name FROM concept_standings")? else {
        return Ok(None);
    };
    stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>().map(Some)
}

/// `sql` prepared, or `None` on a database without the table (not migrated yet).
fn prepare_if_migrated<'c>(conn: &'c Connection, sql: &str) -> rusqlite::Result<Option<rusqlite::CachedStatement<'c>>> {
    match conn.prepare_cached(sql) {
        Ok(stmt) => Ok(Some(stmt)),
        Err(rusqlite::Error::SqliteFailure(_, Some(message))) if message.starts_with("no such table") => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recalls_unpack_as_they_were_packed() {
        let cards = [(21.5, 5.25, 1_700_000_000_123), (0.1, 10.0, -1), (f64::MAX, 1.0, Millis::MAX)];
        let packed = packed_recalls(cards.into_iter());
        assert_eq!(packed.len(), cards.len() * RECALL_BYTES);
        assert_eq!(unpacked_recalls(&packed).collect::<Vec<_>>(), cards);
        assert_eq!(unpacked_recalls(&packed[..RECALL_BYTES + 5]).count(), 1, "a partial card is left out");
    }
}
