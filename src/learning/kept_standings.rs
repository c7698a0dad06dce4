//! Where each concept stands, kept between reads (issue 43 §1; migration 0020's
//! `concept_standings`): the reads on every message (the statusline, `vl status`, `vl gaps`,
//! the dashboard's overview) take a concept's standing from its row instead of judging its
//! cards, so they cost a row per concept name, not a row per answered card.
//!
//! # Why a kept row is the live judgement
//! A concept's standing is `learn::mastery::judge` over its cards (`learning::standings`). Only
//! two things change it: a change to one of its cards, and time, through the mean recall of its
//! answered cards, which only falls. So a row holds the standing judged at `judged_at` and
//! `gap_at`, the first millisecond at which `judge` says *gap* with the cards unchanged (found by
//! bisection over `judge` itself, so it is the same definition, not a formula beside it; `NULL`:
//! not within [`HORIZON_MS`]). At a later `now` the standing is *gap* from `gap_at` on, the
//! kept one before. A row is read only under the forgetting curve it was judged with (`decay`; a
//! re-fit changes it) and only at or after `judged_at` (a clock set back could raise recall).
//!
//! # Who keeps the rows
//! Triggers on `questions` and `concepts` delete a name's row whenever one of its cards or
//! concepts changes (migration 0020), whatever code changes it, so a row never outlives the
//! cards it was judged from. A name without a row is judged from its cards at read time
//! ([`judge_name`]): a missing row costs time, never truth. Rows are written back by the
//! answer's own transaction (`learning::record`, for the concept answered) and by the worker's
//! maintenance task ([`refill`], for the rest: the quiz job's new cards, suspends, a re-fit).

use std::collections::{BTreeMap, HashSet};

use rusqlite::{Connection, params};

use crate::clock::Millis;
use crate::learn::mastery::{CardFacts, Standing, judge};
use crate::learn::schedule::{Card, DAY_MS, Scheduler};
use crate::learning::cards::card_from_row_at;

/// How far ahead [`gap_at`] looks: ten thousand years. A mean recall still at 70 % after that is
/// kept as never falling (the slowest forgetting curve FSRS allows, at its largest stability,
/// crosses 70 % within ~2,000 years).
pub const HORIZON_MS: Millis = 10_000 * 366 * DAY_MS;

/// Names [`refill`] judges in one step (one writer transaction): at ~50 µs a name, a few ms.
pub const REFILL_BATCH: usize = 100;
/// How often the worker keeps the rows the triggers forgot: a minute after the quiz job wrote a
/// session's questions, its concepts are read from rows again.
pub const REFILL_INTERVAL: std::time::Duration = std::time::Duration::from_secs(60);
/// Steps of [`REFILL_BATCH`] names a run (2,000 names: a whole history after a re-fit).
pub const REFILL_MAX_STEPS: usize = 20;

/// The cards of the concepts named `?1`, every session's, with what `judge` reads of them: card
/// columns as `card_from_row_at` reads them (0–7), then whether the card is tagged a leech. A
/// reflection prompt is not a card (`learning::reflection!`).
const CARDS_OF_NAME: &str = concat!(
    "SELECT q.card_state, q.learning_step, q.stability, q.fsrs_difficulty, q.due_at, q.last_review_at, q.reps, \
            q.lapses, \
            instr(q.tags, 'leech') > 0 AND EXISTS (SELECT 1 FROM json_each(q.tags) t WHERE t.value = 'leech') \
     FROM concepts c JOIN questions q ON q.concept_id = c.id \
     WHERE c.normalized_name = ?1 AND NOT ",
    crate::learning::reflection!()
);

/// What `judge` reads of one card at `now`: the same facts `learning::standings` reads.
pub fn card_facts(scheduler: &Scheduler, card: &Card, leech: bool, now: Millis) -> CardFacts {
    CardFacts {
        recall: scheduler.retrievability(card, now),
        stability: card.memory.filter(|_| card.last_review_at.is_some()).map(|m| m.stability),
        leech,
        in_steps: card.state.in_steps(),
    }
}

/// A concept's standing at `judged_at`, and when it turns into a gap by time alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kept {
    pub standing: Standing,
    pub gap_at: Option<Millis>,
}

impl Kept {
    /// The standing at `now` (not before the judgement: module doc).
    pub fn at(&self, now: Millis) -> Standing {
        match self.gap_at {
            Some(gap_at) if now >= gap_at => Standing::Gap,
            _ => self.standing,
        }
    }
}

/// The concepts named `key` judged from every one of their cards at `now` (module doc).
pub fn judge_name(conn: &Connection, scheduler: &Scheduler, now: Millis, key: &str) -> rusqlite::Result<Kept> {
    let mut stmt = conn.prepare_cached(CARDS_OF_NAME)?;
    let cards = stmt
        .query_map([key], |r| Ok((card_from_row_at(r, 0)?, r.get::<_, Option<bool>>(8)?.unwrap_or(false))))?
        .collect::<rusqlite::Result<Vec<(Card, bool)>>>()?;
    Ok(judged(scheduler, &cards, now))
}

/// [`Kept`] for `cards` (each with whether it is a leech) at `now`.
pub fn judged(scheduler: &Scheduler, cards: &[(Card, bool)], now: Millis) -> Kept {
    let standing_at = |at: Millis| -> Standing {
        let facts: Vec<CardFacts> = cards.iter().map(|(card, leech)| card_facts(scheduler, card, *leech, at)).collect();
        judge(&facts).standing
    };
    let standing = standing_at(now);
    let answered = cards.iter().any(|(card, _)| scheduler.retrievability(card, now).is_some());
    Kept { standing, gap_at: (standing != Standing::Gap && answered).then(|| gap_at(now, standing_at)).flatten() }
}

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

/// Judges the concepts named `key` at `now` and keeps the row (writers only).
pub fn keep(conn: &Connection, scheduler: &Scheduler, now: Millis, key: &str) -> rusqlite::Result<Kept> {
    let kept = judge_name(conn, scheduler, now, key)?;
    conn.prepare_cached(
        "INSERT OR REPLACE INTO concept_standings (normalized_name, standing, gap_at, judged_at, decay) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![key, kept.standing.as_str(), kept.gap_at, now, f64::from(scheduler.decay())])?;
    Ok(kept)
}

/// Keeps a row for up to [`REFILL_BATCH`] concept names that have none under `scheduler`'s
/// forgetting curve (writers only: the worker's maintenance task). Returns how many it kept and
/// whether more are missing.
pub fn refill(conn: &Connection, scheduler: &Scheduler, now: Millis) -> rusqlite::Result<(usize, bool)> {
    let missing: Vec<String> = conn
        .prepare_cached(
            "SELECT DISTINCT c.normalized_name FROM concepts c WHERE NOT EXISTS (SELECT 1 FROM concept_standings k \
             WHERE k.normalized_name = c.normalized_name AND k.decay = ?1 AND k.judged_at <= ?2) LIMIT ?3",
        )?
        .query_map(params![f64::from(scheduler.decay()), now, REFILL_BATCH as i64 + 1], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let more = missing.len() > REFILL_BATCH;
    for key in missing.iter().take(REFILL_BATCH) {
        keep(conn, scheduler, now, key)?;
    }
    Ok((missing.len().min(REFILL_BATCH), more))
}

/// The kept standings at `now` of the names in `keys` that have a usable row (module doc), and
/// the names that have none. A database the worker has not migrated yet (the statusline reads
/// whatever version it finds) has no rows: every name is missing.
pub fn read(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
    keys: &HashSet<String>,
) -> rusqlite::Result<(BTreeMap<String, Standing>, Vec<String>)> {
    let mut kept = BTreeMap::new();
    let sql = "SELECT normalized_name, standing, gap_at FROM concept_standings WHERE decay = ?1 AND judged_at <= ?2";
    let mut stmt = match conn.prepare_cached(sql) {
        Ok(stmt) => stmt,
        Err(e) if is_missing_table(&e) => return Ok((kept, keys.iter().cloned().collect())),
        Err(e) => return Err(e),
    };
    let mut rows = stmt.query(params![f64::from(scheduler.decay()), now])?;
    while let Some(r) = rows.next()? {
        let key: String = r.get(0)?;
        if !keys.contains(&key) {
            continue;
        }
        let standing = match r.get_ref(1)?.as_str()? {
            "mastered" => Standing::Mastered,
            "reviewing" => Standing::Reviewing,
            "gap" => Standing::Gap,
            _ => Standing::Learning,
        };
        kept.insert(key, Kept { standing, gap_at: r.get(2)? }.at(now));
    }
    let missing = keys.iter().filter(|k| !kept.contains_key(*k)).cloned().collect();
    Ok((kept, missing))
}

fn is_missing_table(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(_, Some(message)) if message.starts_with("no such table"))
}
