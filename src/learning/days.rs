//! The learner's days as the loop counts them (SPEC §7, `learn::day`): the streak, the new
//! cards introduced today (and the sitting's cap they leave), and when the next cards fall due
//! (today / tomorrow / this week).
//! Reads only; `daily_streaks.day` is a learner day number, written by `learning::record`.

use rusqlite::{Connection, params};

use crate::clock::Millis;
use crate::learn::day::LearnerDay;
use crate::learn::streak::{self, StreakState};
use crate::learning::cards::DueFilter;

/// The streak as of `now`: the stored days replayed through `learn::streak`, so the rule
/// lives in one place. `current` is 0 once a whole day has passed without an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Streak {
    pub current: u32,
    pub longest: u32,
}

pub fn streak(conn: &Connection, day: &LearnerDay, now: Millis) -> rusqlite::Result<Streak> {
    let mut stmt = conn.prepare_cached("SELECT day FROM daily_streaks WHERE answers > 0 ORDER BY day")?;
    let mut state: Option<StreakState> = None;
    for stored in stmt.query_map([], |r| r.get::<_, i64>(0))? {
        state = Some(streak::update_streak(state, stored?));
    }
    Ok(Streak {
        current: streak::current_streak(state.as_ref(), day.day_of(now)),
        longest: state.map_or(0, |s| s.longest),
    })
}

/// The new cards answered since `?1`: a search of migration 0016's partial index, not a scan
/// of the whole review log (it runs on every statusline refresh).
const NEW_SINCE: &str = "SELECT COUNT(*) FROM review_log WHERE state_before = 'new' AND created_at >= ?1";

/// New questions introduced (first answered) since the learner's day began.
pub fn new_introduced_today(conn: &Connection, day: &LearnerDay, now: Millis) -> rusqlite::Result<usize> {
    let start = day.start_of(day.day_of(now));
    let n: i64 = conn.prepare_cached(NEW_SINCE)?.query_row([start], |r| r.get(0))?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// `filter` as a sitting at `now` applies it: the day's cap on new questions
/// (`VIBELEARN_NEW_PER_DAY`, less the new ones introduced since the learner's day began).
/// `vl quiz`, `vl quiz next|answer --json`, `vl status`, the statusline and the SessionStart
/// message all count through it, so what they call due is what the quiz asks.
pub fn sitting_filter(
    conn: &Connection,
    day: &LearnerDay,
    now: Millis,
    filter: &DueFilter,
    new_per_day: usize,
) -> rusqlite::Result<DueFilter> {
    let introduced = new_introduced_today(conn, day, now)?;
    Ok(DueFilter { new_allowed: Some(new_per_day.saturating_sub(introduced)), ..filter.clone() })
}

/// When the next cards fall due (SPEC §7: today / tomorrow / this week), by learner day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Forecast {
    /// Due before the learner's next day begins, learning cards and those due already included.
    pub today: i64,
    pub tomorrow: i64,
    /// Due within seven days from now (today's and tomorrow's included).
    pub week: i64,
    /// The earliest due time (`now` when a card is due already).
    pub first: Option<Millis>,
}

/// The forecast of the cards the sitting's `filter` covers (suspended and unanswered ones
/// aside).
pub fn forecast(conn: &Connection, day: &LearnerDay, now: Millis, filter: &DueFilter) -> rusqlite::Result<Forecast> {
    let tomorrow = day.next_start(now);
    let after = day.start_of(day.day_of(now) + 2);
    conn.prepare_cached(
        "SELECT COUNT(*) FILTER (WHERE q.due_at < ?4), COUNT(*) FILTER (WHERE q.due_at >= ?4 AND q.due_at < ?5), \
         COUNT(*) FILTER (WHERE q.due_at <= ?1 + 604800000), MIN(q.due_at) \
         FROM questions q JOIN sessions s ON s.id = q.session_id \
         WHERE q.due_at IS NOT NULL AND q.suspended = 0 AND (?2 IS NULL OR q.session_id = ?2) \
           AND (?3 IS NULL OR s.project = ?3)",
    )?
    .query_row(params![now, filter.session, filter.project, tomorrow, after], |r| {
        let first: Option<Millis> = r.get(3)?;
        Ok(Forecast { today: r.get(0)?, tomorrow: r.get(1)?, week: r.get(2)?, first: first.map(|f| f.max(now)) })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::schedule::MINUTE_MS;

    fn db() -> (tempfile::TempDir, Connection) {
        crate::db::testing::with(crate::db::testing::SESSION_AND_CONCEPT)
    }

    fn card(conn: &Connection, id: &str, state: &str, due_at: Millis) {
        conn.execute(
            "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, question, explanation, tags, \
             text_hash, created_at, card_state, due_at) VALUES (?1, 'c', 's', 'true_false', 'mid', ?1, 'e', '[]', ?1, 1, ?2, ?3)",
            params![id, state, due_at],
        )
        .unwrap();
    }

    #[test]
    fn today_s_new_cards_are_counted_from_an_index() {
        let (_dir, conn) = db();
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {NEW_SINCE}"))
            .unwrap()
            .query_map([0], |r| r.get(3))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(plan.iter().any(|step| step.contains("INDEX review_log_new_cards")), "{plan:?}");
    }

    #[test]
    fn the_forecast_counts_learning_cards_and_the_learners_tomorrow() {
        let (_dir, conn) = db();
        let la = crate::learn::day::tests::los_angeles();
        let now = 1_796_194_800_000; // 23:00 in Los Angeles (07:00 UTC the next day)
        card(&conn, "learning-now", "learning", now); // due this instant: the sitting ended before it
        card(&conn, "learning-soon", "relearning", now + 5 * MINUTE_MS);
        card(&conn, "after-four", "review", now + 5 * 3_600_000 + MINUTE_MS); // 04:01: tomorrow
        card(&conn, "before-four", "review", now + 4 * 3_600_000); // 03:00: still today
        let f = forecast(&conn, &la, now, &DueFilter::default()).unwrap();
        assert_eq!((f.today, f.tomorrow, f.week, f.first), (3, 1, 4, Some(now)));
    }
}
