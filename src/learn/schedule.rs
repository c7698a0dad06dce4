//! When a question is asked again (SPEC §7): FSRS-6 through the `fsrs` crate (the
//! implementation Anki links), Anki's four ratings, its learning steps and its leeches. Pure:
//! the card, the rating and `now` go in, the card after the answer and its review-log row come
//! out; the parameters and settings are given once to [`Scheduler::new`].
//!
//! # Card states (as Anki names them)
//! - `new`: never answered. Again → `learning` step 0; Hard/Good/Easy graduate at once to
//!   `review` with FSRS's interval for that rating (a new card rated Good is due in 2 days,
//!   FSRS's 2.3 rounded, Easy in 8, with the default parameters). Anki would put a new card through its
//!   learning steps even on Good; a quiz question answered right is already a recall, so here
//!   only a failed card is re-drilled in the sitting (decided in docs/DECISIONS.md).
//! - `learning` / `relearning` at step i of [`LEARNING_STEPS_MS`] (1 min, 10 min): Again →
//!   step 0; Hard → the same step again (on the first step, halfway to the second, as Anki
//!   does); Good → the next step, or graduate after the last; Easy → graduate at once.
//! - `review`: Again is a *lapse* (counted, and the only thing counted as one: a card failed in
//!   learning has not lapsed) → `relearning` step 0; Hard/Good/Easy stay in review with FSRS's
//!   interval, kept in the order Hard < Good < Easy (a day apart when the floor of one day
//!   would make them equal).
//!
//! FSRS's memory state (stability, difficulty) is updated on every answer, same-day ones
//! included (FSRS-6 has a short-term formula for those), with whole elapsed *learner* days (`learn::day`, the same count the re-fit uses) as FSRS
//! counts them.
//!
//! # Review intervals are whole learner days
//! As in Anki, a review card is due on a *day*, from the moment that learner day begins
//! (`VIBELEARN_DAY_STARTS_AT`), not at the minute it was answered plus a fraction of days;
//! learning steps stay in minutes. Earlier versions kept the fraction (2.3 days) and a due
//! *time*: a card answered at 20:10 with one day to wait missed the next evening's sitting at
//! 20:00 and waited two days instead of one, and day 2 of the learning simulation had nothing
//! due while day 3 had every card (docs/LEARNING.md). FSRS's interval is rounded to whole days
//! (at least 1), and [`Scheduler::balance_range`] says within which days `learn::balance` may
//! move it to spread the load (Anki's fuzz and load balancer).
//!
//! # Leeches
//! At `leech_threshold` lapses (8) the card is a leech: the caller tags and suspends it
//! (Anki's default action). Every half threshold after that (12, 16, …) it is flagged again.

use fsrs::{FSRS, MemoryState};

use crate::clock::Millis;
use crate::learn::day::LearnerDay;

/// One minute, one day, in ms.
pub const MINUTE_MS: Millis = 60_000;
pub const DAY_MS: Millis = 86_400_000;
/// Anki's default learning steps, also used for relearning (SPEC §7: "1 min, then 10 min").
pub const LEARNING_STEPS_MS: [Millis; 2] = [MINUTE_MS, 10 * MINUTE_MS];
/// Anki's maximum interval: a hundred years is "never again".
pub const MAX_INTERVAL_DAYS: f64 = 36_500.0;
/// SPEC §2 defaults.
pub const DEFAULT_RETENTION: f64 = 0.9;
pub const DEFAULT_LEECH_THRESHOLD: u32 = 8;
/// The retention SM-2 intervals are read at when an old card without history is converted:
/// the desired retention FSRS assumes for an SM-2 schedule (Anki's migration uses the same).
pub const SM2_RETENTION: f32 = 0.9;

/// Anki's four answer buttons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rating {
    Again = 1,
    Hard = 2,
    Good = 3,
    Easy = 4,
}

impl Rating {
    pub const ALL: [Rating; 4] = [Rating::Again, Rating::Hard, Rating::Good, Rating::Easy];

    pub fn from_number(n: i64) -> Option<Rating> {
        match n {
            1 => Some(Rating::Again),
            2 => Some(Rating::Hard),
            3 => Some(Rating::Good),
            4 => Some(Rating::Easy),
            _ => None,
        }
    }

    pub fn number(self) -> u8 {
        self as u8
    }

    pub fn name(self) -> &'static str {
        match self {
            Rating::Again => "Again",
            Rating::Hard => "Hard",
            Rating::Good => "Good",
            Rating::Easy => "Easy",
        }
    }

    /// Recalled: every rating but Again (FSRS's and Anki's meaning of "pass").
    pub fn passed(self) -> bool {
        self != Rating::Again
    }

    /// The rating of an answer stored before ratings existed: its SM-2 quality 0–5.
    pub fn from_sm2_quality(quality: i64) -> Rating {
        match quality {
            i64::MIN..=2 => Rating::Again,
            3 => Rating::Hard,
            4 => Rating::Good,
            _ => Rating::Easy,
        }
    }
}

/// Where a card is in Anki's life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CardState {
    #[default]
    New,
    Learning,
    Review,
    Relearning,
}

impl CardState {
    pub fn as_str(self) -> &'static str {
        match self {
            CardState::New => "new",
            CardState::Learning => "learning",
            CardState::Review => "review",
            CardState::Relearning => "relearning",
        }
    }

    /// Unknown text (a hand-edited row) reads as new, so the card is simply asked again.
    pub fn parse(s: &str) -> CardState {
        match s {
            "learning" => CardState::Learning,
            "review" => CardState::Review,
            "relearning" => CardState::Relearning,
            _ => CardState::New,
        }
    }

    /// In a learning step: due again within minutes, re-asked in the same sitting.
    pub fn in_steps(self) -> bool {
        matches!(self, CardState::Learning | CardState::Relearning)
    }
}

/// FSRS's memory of a card.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Memory {
    /// Days until recall probability falls to 90 %.
    pub stability: f64,
    /// 1 (easy) to 10 (hard).
    pub difficulty: f64,
}

/// A question's schedule.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Card {
    pub state: CardState,
    /// Index into [`LEARNING_STEPS_MS`] while learning or relearning.
    pub step: u32,
    pub memory: Option<Memory>,
    pub due_at: Option<Millis>,
    pub last_review_at: Option<Millis>,
    pub reps: u32,
    pub lapses: u32,
}

/// What a leech asks of the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leech {
    /// The threshold was reached: tag `leech` and suspend.
    Reached,
    /// Another half threshold of lapses on a known leech: warn again (and keep it suspended).
    Again,
}

/// The review-log row of one answer (SPEC §7).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogEntry {
    pub rating: Rating,
    pub state_before: CardState,
    /// Days since the previous answer (fractional; 0 for a new card).
    pub elapsed_days: f64,
    /// Days until the card is due again (fractional: 1 min is 0.0007).
    pub scheduled_days: f64,
    pub stability: f64,
    pub difficulty: f64,
}

/// One answer's effect.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reviewed {
    pub card: Card,
    pub log: LogEntry,
    /// A review card answered Again.
    pub lapse: bool,
    pub leech: Option<Leech>,
}

/// Parameters that FSRS refused (wrong count, or not finite).
#[derive(Debug, thiserror::Error)]
#[error("invalid FSRS parameters: {0:?}")]
pub struct BadParameters(#[source] pub fsrs::FSRSError);

/// FSRS with the user's parameters and the settings of SPEC §2.
#[derive(Debug, Clone)]
pub struct Scheduler {
    fsrs: FSRS,
    /// The forgetting curve's decay: the last of the 21 parameters (`FSRS` keeps them private).
    decay: f32,
    retention: f32,
    leech_threshold: u32,
    /// How FSRS's elapsed days are counted: whole learner days, as the re-fit counts them.
    day: LearnerDay,
}

impl Default for Scheduler {
    fn default() -> Scheduler {
        Scheduler {
            fsrs: FSRS::default(),
            decay: fsrs::FSRS6_DEFAULT_DECAY,
            retention: DEFAULT_RETENTION as f32,
            leech_threshold: DEFAULT_LEECH_THRESHOLD,
            day: LearnerDay::default(),
        }
    }
}

impl Scheduler {
    /// `parameters` empty: FSRS-6's defaults. Retention is clamped to 0.7–0.99 (Anki's range)
    /// and the threshold to at least 1.
    pub fn new(parameters: &[f32], desired_retention: f64, leech_threshold: u32) -> Result<Scheduler, BadParameters> {
        let fsrs = FSRS::new(parameters).map_err(BadParameters)?;
        let filled = fsrs::check_and_fill_parameters(parameters).map_err(BadParameters)?;
        let decay = filled.get(20).copied().filter(|d| d.is_finite() && *d > 0.0).unwrap_or(fsrs::FSRS6_DEFAULT_DECAY);
        let retention =
            if desired_retention.is_finite() { desired_retention.clamp(0.7, 0.99) } else { DEFAULT_RETENTION };
        Ok(Scheduler {
            fsrs,
            decay,
            retention: retention as f32,
            leech_threshold: leech_threshold.max(1),
            day: LearnerDay::default(),
        })
    }

    /// The forgetting curve's decay (FSRS-6's last parameter): a re-fit changes it, and with it
    /// every card's recall.
    pub fn decay(&self) -> f32 {
        self.decay
    }

    /// The same scheduler counting elapsed days as `day` does (the learner's days).
    pub fn with_day(self, day: LearnerDay) -> Scheduler {
        Scheduler { day, ..self }
    }

    pub fn day(&self) -> &LearnerDay {
        &self.day
    }

    pub fn leech_threshold(&self) -> u32 {
        self.leech_threshold
    }

    /// The card after `rating` at `now`.
    pub fn review(&self, card: &Card, rating: Rating, now: Millis) -> Reviewed {
        let elapsed_ms = card.last_review_at.map_or(0, |last| now.saturating_sub(last).max(0));
        let elapsed_days = elapsed_ms as f64 / DAY_MS as f64;
        let days = card.last_review_at.map_or(0, |last| self.day.elapsed_days(last, now));
        let (memory, intervals) = self.next(card.memory, days, rating, card.state == CardState::Review);
        let graduate = |days: f64| (CardState::Review, 0, days);
        let step = |state: CardState, i: u32| (state, i, step_ms(i) as f64 / DAY_MS as f64);
        let (state, step_index, days) = match (card.state, rating) {
            (CardState::New | CardState::Review, Rating::Again) => {
                step(if card.state == CardState::New { CardState::Learning } else { CardState::Relearning }, 0)
            }
            (CardState::New | CardState::Review, _) => graduate(intervals.of(rating)),
            (s, Rating::Again) => step(s, 0),
            (s, Rating::Hard) => {
                let i = card.step.min(last_step());
                let ms = if i == 0 { (step_ms(0) + step_ms(1)) / 2 } else { step_ms(i) };
                (s, i, ms as f64 / DAY_MS as f64)
            }
            (s, Rating::Good) if card.step < last_step() => step(s, card.step + 1),
            (_, other) => graduate(intervals.of(other)),
        };
        let lapse = card.state == CardState::Review && rating == Rating::Again;
        let lapses = card.lapses.saturating_add(u32::from(lapse));
        let leech = if lapse { self.leech_at(lapses) } else { None };
        let due_at = if state == CardState::Review {
            self.due_on(now, days as i64)
        } else {
            now.saturating_add((days * DAY_MS as f64).round() as Millis)
        };
        let next = Card {
            state,
            step: step_index,
            memory: Some(memory),
            due_at: Some(due_at),
            last_review_at: Some(now),
            reps: card.reps.saturating_add(1),
            lapses,
        };
        let log = LogEntry {
            rating,
            state_before: card.state,
            elapsed_days,
            scheduled_days: days,
            stability: memory.stability,
            difficulty: memory.difficulty,
        };
        Reviewed { card: next, log, lapse, leech }
    }

    /// The interval after each rating, Again first (the buttons' labels): a learning step's
    /// minutes, or a review's whole days (as `1 day`, though the card is due from the start of
    /// tomorrow).
    pub fn preview(&self, card: &Card, now: Millis) -> [Millis; 4] {
        Rating::ALL.map(|r| {
            let reviewed = self.review(card, r, now);
            if reviewed.card.state == CardState::Review {
                (reviewed.log.scheduled_days * DAY_MS as f64) as Millis
            } else {
                reviewed.card.due_at.unwrap_or(now).saturating_sub(now)
            }
        })
    }

    /// When the learner day `days` days after the one `now` falls in begins: a review's due time.
    pub fn due_on(&self, now: Millis, days: i64) -> Millis {
        self.day.start_of(self.day.day_of(now).saturating_add(days))
    }

    /// The whole days (from today) a review just scheduled may be moved to by
    /// `learn::balance`, when it may move at all (a review interval of two days or more).
    pub fn balance_range(&self, reviewed: &Reviewed) -> Option<std::ops::RangeInclusive<i64>> {
        if reviewed.card.state != CardState::Review {
            return None;
        }
        let range = crate::learn::balance::fuzz_range(reviewed.log.scheduled_days, MAX_INTERVAL_DAYS);
        (range.start() < range.end()).then_some(range)
    }

    /// `reviewed` (a review) moved to `days` days from the day of `now`.
    pub fn on_day(&self, reviewed: Reviewed, now: Millis, days: i64) -> Reviewed {
        let days = days.max(1);
        let card = Card { due_at: Some(self.due_on(now, days)), ..reviewed.card };
        Reviewed { card, log: LogEntry { scheduled_days: days as f64, ..reviewed.log }, ..reviewed }
    }

    /// Probability of recall at `now` (FSRS's retrievability); `None` for a card never answered.
    pub fn retrievability(&self, card: &Card, now: Millis) -> Option<f64> {
        let memory = card.memory?;
        let last = card.last_review_at?;
        let days = (now.saturating_sub(last).max(0) as f64 / DAY_MS as f64) as f32;
        let state = MemoryState { stability: memory.stability as f32, difficulty: memory.difficulty as f32 };
        let r = fsrs::current_retrievability(state, days, self.decay);
        r.is_finite().then(|| f64::from(r).clamp(0.0, 1.0))
    }

    /// The memory FSRS reads into an SM-2 schedule (ease, interval in days), for a card whose
    /// answers are not on record. `None` when the numbers make no sense (a corrupt row).
    pub fn memory_from_sm2(&self, ease: f64, interval_days: f64) -> Option<Memory> {
        if !ease.is_finite() || !interval_days.is_finite() || interval_days <= 0.0 {
            return None;
        }
        let m = self.fsrs.memory_state_from_sm2(ease.max(1.3) as f32, interval_days as f32, SM2_RETENTION).ok()?;
        Some(Memory { stability: f64::from(m.stability), difficulty: f64::from(m.difficulty) })
    }

    fn leech_at(&self, lapses: u32) -> Option<Leech> {
        let threshold = self.leech_threshold;
        let half = (threshold / 2).max(1);
        match lapses {
            n if n == threshold => Some(Leech::Reached),
            n if n > threshold && (n - threshold).is_multiple_of(half) => Some(Leech::Again),
            _ => None,
        }
    }

    /// FSRS's next memory for `rating` and the review interval (days) of every rating.
    fn next(&self, memory: Option<Memory>, days: u32, rating: Rating, in_review: bool) -> (Memory, Intervals) {
        let current = memory
            .filter(|m| m.stability.is_finite() && m.difficulty.is_finite() && m.stability > 0.0)
            .map(|m| MemoryState { stability: m.stability as f32, difficulty: m.difficulty as f32 });
        // A state FSRS cannot step from (NaN creeping in from a corrupt row) restarts as new.
        let states = self
            .fsrs
            .next_states(current, self.retention, days)
            .or_else(|_| self.fsrs.next_states(None, self.retention, 0));
        let Ok(states) = states else {
            // Unreachable with parameters FSRS accepted; a day and a middling memory is a safe answer.
            return (Memory { stability: 1.0, difficulty: 5.0 }, Intervals([1.0; 4]));
        };
        let chosen = match rating {
            Rating::Again => &states.again,
            Rating::Hard => &states.hard,
            Rating::Good => &states.good,
            Rating::Easy => &states.easy,
        };
        // Whole days (module doc), at least one.
        let clamp = |d: f32| f64::from(d).round().clamp(1.0, MAX_INTERVAL_DAYS);
        // Kept apart as Anki keeps them: when the one-day floor makes two equal (a card
        // graduating from its steps), the better rating still waits a day longer. Hard is a
        // review interval only for a review card (in the steps it repeats a step).
        let hard = clamp(states.hard.interval);
        let good = clamp(states.good.interval);
        let good = if in_review && good <= hard { (hard + 1.0).min(MAX_INTERVAL_DAYS) } else { good };
        let easy = clamp(states.easy.interval);
        let easy = if easy <= good { (good + 1.0).min(MAX_INTERVAL_DAYS) } else { easy };
        let memory =
            Memory { stability: f64::from(chosen.memory.stability), difficulty: f64::from(chosen.memory.difficulty) };
        (memory, Intervals([clamp(states.again.interval), hard, good, easy]))
    }
}

/// Review intervals in days, Again to Easy.
#[derive(Debug, Clone, Copy)]
struct Intervals([f64; 4]);

impl Intervals {
    fn of(self, rating: Rating) -> f64 {
        self.0[usize::from(rating.number() - 1)]
    }
}

fn last_step() -> u32 {
    (LEARNING_STEPS_MS.len() - 1) as u32
}

fn step_ms(i: u32) -> Millis {
    LEARNING_STEPS_MS[(i as usize).min(LEARNING_STEPS_MS.len() - 1)]
}

/// A card's history replayed (oldest first): the schedule it has after these answers. How
/// existing cards are migrated from SM-2 (SPEC §7: "replaying their answer history").
pub fn replay(scheduler: &Scheduler, answers: &[(Rating, Millis)]) -> (Card, Vec<Reviewed>) {
    let mut card = Card::default();
    let mut log = Vec::with_capacity(answers.len());
    for &(rating, at) in answers {
        let reviewed = scheduler.review(&card, rating, at);
        card = reviewed.card;
        log.push(reviewed);
    }
    (card, log)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: Millis = 1_780_000_000_000;

    fn new_card_after(rating: Rating) -> Reviewed {
        Scheduler::default().review(&Card::default(), rating, T0)
    }

    #[test]
    fn a_new_card_rated_good_is_due_in_2_days_and_easy_in_8_from_the_start_of_that_day() {
        // FSRS's 2.3065, 8.2956 and 1.2931 days, rounded to whole days.
        let day = LearnerDay::default();
        for (rating, whole) in [(Rating::Good, 2), (Rating::Easy, 8), (Rating::Hard, 1)] {
            let r = new_card_after(rating);
            assert_eq!(r.card.state, CardState::Review);
            assert_eq!(r.log.scheduled_days, whole as f64, "{r:?}");
            assert_eq!(r.card.due_at, Some(day.start_of(day.day_of(T0) + whole)), "{r:?}");
        }
        let good = new_card_after(Rating::Good);
        // FSRS-6's initial memory for Good: S = w2, D = 2.118.
        let m = good.card.memory.unwrap();
        assert!((m.stability - 2.3065).abs() < 1e-3 && (m.difficulty - 2.118).abs() < 1e-2, "{m:?}");
    }

    #[test]
    fn a_review_due_tomorrow_is_due_from_tomorrow_s_rollover_so_the_next_evening_sees_it() {
        // 20:10 in Los Angeles; graduating from the steps with Good: one day. Due from 04:00
        // tomorrow, so tomorrow's sitting at 20:00 asks it (a due *time* of 20:10 would not).
        let la = crate::learn::day::tests::los_angeles();
        let s = Scheduler::default().with_day(la.clone());
        let evening: Millis = 1_796_184_000_000 + 10 * MINUTE_MS;
        let step = s.review(&s.review(&Card::default(), Rating::Again, evening).card, Rating::Good, evening).card;
        let done = s.review(&step, Rating::Good, evening);
        assert_eq!((done.card.state, done.log.scheduled_days), (CardState::Review, 1.0));
        assert_eq!(done.card.due_at, Some(la.next_start(evening)));
        assert!(done.card.due_at.unwrap() < evening + DAY_MS - 10 * MINUTE_MS);
        // A 1-day review does not move; a longer one may, within Anki's range, and `on_day` moves it.
        assert_eq!(s.balance_range(&done), None);
        assert_eq!(s.balance_range(&s.review(&Card::default(), Rating::Good, evening)), Some(2..=3));
        let easy = s.review(&Card::default(), Rating::Easy, evening);
        let range = s.balance_range(&easy).unwrap();
        assert_eq!(range, 6..=10, "8 days: ±(1 + 0.15 × 4.5 + 0.1 × 1) = ±1.775");
        let moved = s.on_day(easy, evening, 7);
        assert_eq!((moved.log.scheduled_days, moved.card.due_at), (7.0, Some(s.due_on(evening, 7))));
        assert_eq!(s.balance_range(&s.review(&Card::default(), Rating::Again, evening)), None, "steps never move");
    }

    #[test]
    fn again_goes_through_the_learning_steps_1_then_10_minutes_and_graduates_on_good() {
        let s = Scheduler::default();
        let again = s.review(&Card::default(), Rating::Again, T0);
        assert_eq!((again.card.state, again.card.step), (CardState::Learning, 0));
        assert_eq!(again.card.due_at, Some(T0 + MINUTE_MS));
        let good = s.review(&again.card, Rating::Good, T0 + MINUTE_MS);
        assert_eq!((good.card.state, good.card.step), (CardState::Learning, 1));
        assert_eq!(good.card.due_at, Some(T0 + 11 * MINUTE_MS));
        let hard = s.review(&good.card, Rating::Hard, T0 + 11 * MINUTE_MS);
        assert_eq!((hard.card.state, hard.card.due_at), (CardState::Learning, Some(T0 + 21 * MINUTE_MS)));
        let done = s.review(&hard.card, Rating::Good, T0 + 21 * MINUTE_MS);
        assert_eq!(done.card.state, CardState::Review);
        assert!(done.log.scheduled_days >= 1.0);
        assert_eq!(done.card.due_at, Some(s.due_on(T0 + 21 * MINUTE_MS, done.log.scheduled_days as i64)));
        // Hard on the first step is halfway to the second (Anki: 5.5 min).
        let first_hard = s.review(&again.card, Rating::Hard, T0);
        assert_eq!(first_hard.card.due_at, Some(T0 + 330_000));
        // Easy leaves the steps at once.
        assert_eq!(s.review(&again.card, Rating::Easy, T0).card.state, CardState::Review);
        assert_eq!(done.card.reps, 4);
        assert_eq!(done.card.lapses, 0, "failing a card still in learning is no lapse");
    }

    #[test]
    fn a_lapse_counts_only_on_a_review_card() {
        let s = Scheduler::default();
        let learning = s.review(&Card::default(), Rating::Again, T0);
        assert!(!learning.lapse);
        assert_eq!(learning.card.lapses, 0);
        let relearn_again = s.review(&learning.card, Rating::Again, T0 + MINUTE_MS);
        assert!(!relearn_again.lapse);
        let review = s.review(&Card::default(), Rating::Good, T0).card;
        let lapsed = s.review(&review, Rating::Again, T0 + 3 * DAY_MS);
        assert!(lapsed.lapse);
        assert_eq!((lapsed.card.state, lapsed.card.lapses), (CardState::Relearning, 1));
        assert_eq!(lapsed.card.due_at, Some(T0 + 3 * DAY_MS + MINUTE_MS));
        assert!(lapsed.card.memory.unwrap().stability < review.memory.unwrap().stability);
        // In relearning, Again again is no second lapse.
        let still = s.review(&lapsed.card, Rating::Again, T0 + 3 * DAY_MS + MINUTE_MS);
        assert_eq!((still.lapse, still.card.lapses), (false, 1));
    }

    #[test]
    fn an_sm2_card_with_ease_2_5_and_interval_10_migrates_to_stability_about_10() {
        let m = Scheduler::default().memory_from_sm2(2.5, 10.0).unwrap();
        assert!((m.stability - 10.0).abs() < 0.05, "{m:?}");
        assert!((1.0..=10.0).contains(&m.difficulty), "{m:?}");
        assert_eq!(Scheduler::default().memory_from_sm2(f64::NAN, 10.0), None);
        assert_eq!(Scheduler::default().memory_from_sm2(2.5, 0.0), None);
    }

    #[test]
    fn leeches_at_the_threshold_then_every_half_threshold() {
        let s = Scheduler::new(&[], 0.9, 8).unwrap();
        let mut card = s.review(&Card::default(), Rating::Good, T0).card;
        let mut now = T0;
        let mut flagged = Vec::new();
        for lapse in 1..=16 {
            now = card.due_at.unwrap();
            let r = s.review(&card, Rating::Again, now);
            assert!(r.lapse);
            if let Some(l) = r.leech {
                flagged.push((lapse, l));
            }
            // Relearn and graduate again.
            let g1 = s.review(&r.card, Rating::Good, now + MINUTE_MS);
            card = s.review(&g1.card, Rating::Good, now + 11 * MINUTE_MS).card;
        }
        assert_eq!(flagged, [(8, Leech::Reached), (12, Leech::Again), (16, Leech::Again)]);
        assert_eq!(card.lapses, 16);
        assert!(now > T0);
    }

    #[test]
    fn review_intervals_keep_hard_good_easy_in_order_and_use_retention() {
        let s = Scheduler::default();
        let card = s.review(&Card::default(), Rating::Good, T0).card;
        let later = card.due_at.unwrap();
        let [again, hard, good, easy] = s.preview(&card, later);
        assert_eq!(again, MINUTE_MS);
        assert!(hard < good && good < easy && hard >= DAY_MS, "{hard} {good} {easy}");
        // Graduating from the last learning step: FSRS's short-term intervals are all under a
        // day, so the floor would make Good and Easy equal; Easy waits a day longer.
        let stepping = s.review(&s.review(&Card::default(), Rating::Again, T0).card, Rating::Good, T0).card;
        let [_, _, graduate_good, graduate_easy] = s.preview(&stepping, T0 + 10 * MINUTE_MS);
        assert_eq!((graduate_good, graduate_easy), (DAY_MS, 2 * DAY_MS));
        let keen = Scheduler::new(&[], 0.97, 8).unwrap();
        assert!(keen.preview(&card, later)[2] < good, "higher retention, shorter intervals");
        // Out-of-range settings are clamped, never a panic.
        assert!(Scheduler::new(&[], 5.0, 0).is_ok());
        assert!(Scheduler::new(&[1.0, 2.0], 0.9, 8).is_err());
    }

    #[test]
    fn retrievability_is_0_9_at_stability_days_and_falls_after() {
        let s = Scheduler::default();
        let card = s.review(&Card::default(), Rating::Good, T0).card;
        assert_eq!(s.retrievability(&Card::default(), T0), None);
        let at = |d: f64| s.retrievability(&card, T0 + (d * DAY_MS as f64) as Millis).unwrap();
        assert!((at(0.0) - 1.0).abs() < 1e-6);
        assert!((at(card.memory.unwrap().stability) - 0.9).abs() < 1e-3);
        assert!(at(30.0) < 0.8);
    }

    #[test]
    fn replaying_history_gives_the_same_card_as_answering_live() {
        let s = Scheduler::default();
        let answers =
            [(Rating::Good, T0), (Rating::Again, T0 + 3 * DAY_MS), (Rating::Good, T0 + 3 * DAY_MS + MINUTE_MS)];
        let (card, log) = replay(&s, &answers);
        assert_eq!(log.len(), 3);
        assert_eq!(card.lapses, 1);
        assert_eq!(log[1].log.state_before, CardState::Review);
        assert_eq!(Rating::from_sm2_quality(1), Rating::Again);
        assert_eq!(Rating::from_sm2_quality(4), Rating::Good);
        assert_eq!(Rating::from_sm2_quality(5), Rating::Easy);
    }

    #[test]
    fn corrupt_memory_restarts_instead_of_propagating_nan() {
        let s = Scheduler::default();
        let card = Card {
            state: CardState::Review,
            memory: Some(Memory { stability: f64::NAN, difficulty: 5.0 }),
            last_review_at: Some(T0),
            ..Card::default()
        };
        let r = s.review(&card, Rating::Good, T0 + DAY_MS);
        assert!(r.card.memory.unwrap().stability.is_finite());
        let far = s.review(&card, Rating::Easy, i64::MAX - 1);
        assert!(far.card.due_at.is_some());
    }

    #[test]
    fn elapsed_days_are_the_learners_days_as_the_fit_counts_them() {
        // 23:00 in Los Angeles, then 09:00 the next morning: one UTC day (a 24-hour floor of 0),
        // two learner days (1 elapsed), so FSRS steps the memory as a next-day review.
        let la = crate::learn::day::tests::los_angeles();
        let evening: Millis = 1_796_194_800_000;
        let morning = evening + 10 * 3_600_000;
        let by_learner = Scheduler::default().with_day(la.clone());
        let first = by_learner.review(&Card::default(), Rating::Good, evening).card;
        let next_day = by_learner.review(&first, Rating::Good, morning).card.memory.unwrap();
        let same_day = Scheduler::default().review(&first, Rating::Good, morning).card.memory.unwrap();
        assert!(next_day.stability > same_day.stability, "{next_day:?} vs {same_day:?}");
        // Exactly what FSRS gives for one elapsed day.
        let fsrs = FSRS::default();
        let m = first.memory.unwrap();
        let state = MemoryState { stability: m.stability as f32, difficulty: m.difficulty as f32 };
        let expected = fsrs.next_states(Some(state), 0.9, la.elapsed_days(evening, morning)).unwrap().good.memory;
        assert!((next_day.stability - f64::from(expected.stability)).abs() < 1e-6);
    }
}
