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
//! Triggers on `questions` and `concepts` delete a name's row whenever one of its cards or
//! concept rows changes (migration 0020), whatever code changes it,
//! so a row never outlives what it was judged from. A name without a row is judged from its
//! cards at read time: a missing row costs time, never truth. Rows are written back by the
//! answer's own transaction (`learning::record`, for the concept answered) and by the worker's
//! maintenance task ([`refill`], for the rest: the quiz job's new cards, suspends, a re-fit).

use std::collections::{BTreeMap, HashSet};

use rusqlite::{Connection, params};

use crate::clock::Millis;
use crate::learn::mastery::{CardFacts, Standing, judge};
use crate::learn::schedule::{Card, DAY_MS, Memory, Scheduler};
use crate::learning::mastery::{ConceptMastery, NamedCards, card_facts, cards_of};

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
        let recalls: Vec<(f64, f64, Millis)> = named
            .cards
            .iter()
            .filter(|(card, _)| scheduler.retrievability(card, now).is_some())
            .filter_map(|(card, _)| Some((card.memory?.stability, card.memory?.difficulty, card.last_review_at?)))
            .collect();
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
            serde_json::to_string(&recalls).unwrap_or_default(),
        ])?;
    }
    Ok(())
}

/// Keeps a row for up to [`REFILL_BATCH`] concept names that have none usable under
/// `scheduler` at `now` (writers only: the worker's maintenance task). Returns how many it kept
/// and whether more are missing.
pub fn refill(conn: &Connection, scheduler: &Scheduler, now: Millis) -> rusqlite::Result<(usize, bool)> {
    let missing: Vec<String> = conn
        .prepare_cached(
            "SELECT DISTINCT c.normalized_name FROM concepts c WHERE NOT EXISTS (SELECT 1 FROM concept_standings k \
             WHERE k.normalized_name = c.normalized_name AND k.decay = ?1 AND k.judged_at <= ?2) LIMIT ?3",
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
    let sql = "SELECT normalized_name, standing, gap_at FROM concept_standings WHERE decay = ?1 AND judged_at <= ?2";
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

/// Every concept with a usable row, as `learning::mastery` judges it at `now` (module doc), by
/// name, and the names of `keys` that have none.
pub fn masteries(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
    keys: &HashSet<String>,
) -> rusqlite::Result<(Vec<ConceptMastery>, Vec<String>)> {
    let mut kept = Vec::new();
    // The level is the concept profile's (every answer changes it), as `learning::mastery` reads it.
    let sql = "SELECT k.normalized_name, k.name, k.category, COALESCE(p.level, 'junior'), k.standing, k.gap_at, k.cards, \
         k.answered, k.mature, k.leeches, k.lapses, k.recalls \
         FROM concept_standings k LEFT JOIN concept_profiles p ON p.normalized_name = k.normalized_name \
         WHERE k.decay = ?1 AND k.judged_at <= ?2";
    let Some(mut stmt) = prepare_if_migrated(conn, sql)? else {
        return Ok((kept, keys.iter().cloned().collect()));
    };
    let mut rows = stmt.query(params![f64::from(scheduler.decay()), now])?;
    let mut seen = HashSet::new();
    while let Some(r) = rows.next()? {
        let key: String = r.get(0)?;
        if !keys.contains(&key) {
            continue;
        }
        let recalls: Vec<(f64, f64, Millis)> = serde_json::from_str(r.get_ref(11)?.as_str()?).unwrap_or_default();
        seen.insert(key.clone());
        kept.push(ConceptMastery {
            key,
            name: r.get(1)?,
            category: r.get(2)?,
            level: r.get(3)?,
            score: recall_now(scheduler, &recalls, now),
            standing: standing_at(parse_standing(r.get_ref(4)?.as_str()?), r.get(5)?, now),
            cards: r.get(6)?,
            answered: r.get(7)?,
            mature: r.get(8)?,
            leeches: r.get(9)?,
            lapses: r.get(10)?,
        });
    }
    let missing = keys.iter().filter(|k| !seen.contains(*k)).cloned().collect();
    Ok((kept, missing))
}

/// Recall-now at `now` of the answered cards whose `[stability, difficulty, last_review_at]`
/// are `recalls`: `judge`'s own mean over them.
fn recall_now(scheduler: &Scheduler, recalls: &[(f64, f64, Millis)], now: Millis) -> f64 {
    let facts: Vec<CardFacts> = recalls
        .iter()
        .map(|&(stability, difficulty, last_review_at)| {
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

/// `sql` prepared, or `None` on a database without the table (not migrated yet).
fn prepare_if_migrated<'c>(conn: &'c Connection, sql: &str) -> rusqlite::Result<Option<rusqlite::CachedStatement<'c>>> {
    match conn.prepare_cached(sql) {
        Ok(stmt) => Ok(Some(stmt)),
        Err(rusqlite::Error::SqliteFailure(_, Some(message))) if message.starts_with("no such table") => Ok(None),
        Err(e) => Err(e),
    }
}
