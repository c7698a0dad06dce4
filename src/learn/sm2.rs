//! SM-2 scheduling (SPEC §7): given a question's schedule and the quality of an answer,
//! when it is due next. Time is an input (`now_ms`), so the rules are tested without a clock.
//!
//! The formula is the one SuperMemo published for SM-2 (and Wikipedia's pseudo-code):
//! - quality < 3: repetitions back to 0, interval 1 day;
//! - otherwise intervals 1, 6, then `round(previous interval × previous ease)`;
//! - after every answer, wrong ones included, `ease += 0.1 − (5 − q)(0.08 + (5 − q)·0.02)`,
//!   floored at 1.3. (Some variants freeze the ease on a wrong answer; the original text
//!   updates it on every answer and only restarts the repetitions, and so do we.)
//!
//! Decisions where the spec is silent: intervals are capped at [`MAX_INTERVAL_DAYS`] (ten
//! years) so a long run of perfect answers cannot push a due date past what `i64` ms and a
//! human life can use; a stored ease that is not finite or below the floor (a corrupt row)
//! is read as the starting ease or the floor, never propagated as NaN.

use serde::{Deserialize, Serialize};

/// Ease of a new card.
pub const START_EASE: f64 = 2.5;
/// SM-2's lower bound on the ease: below it intervals would shrink instead of grow.
pub const MIN_EASE: f64 = 1.3;
/// Longest interval we schedule; ten years is "never again" for a quiz.
pub const MAX_INTERVAL_DAYS: u32 = 3650;
/// One day in milliseconds. Days are fixed 24 h spans from the answer time, not calendar days.
pub const DAY_MS: i64 = 86_400_000;

/// When a question is next due and the state SM-2 needs to compute the following interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    pub ease: f64,
    pub interval_days: u32,
    /// Correct answers in a row since the last wrong one.
    pub repetitions: u32,
    /// Milliseconds since the epoch.
    pub due_at_ms: i64,
}

impl Schedule {
    /// A card never reviewed: starting ease, due at once.
    pub fn new_card(now_ms: i64) -> Schedule {
        Schedule { ease: START_EASE, interval_days: 0, repetitions: 0, due_at_ms: now_ms }
    }
}

/// The schedule after an answer of `quality` (0–5; larger values are read as 5) at `now_ms`.
pub fn review(prev: &Schedule, quality: u8, now_ms: i64) -> Schedule {
    let q = quality.min(5);
    let ease = sane_ease(prev.ease);
    let (repetitions, interval_days) = if q < 3 {
        (0, 1)
    } else {
        let interval = match prev.repetitions {
            0 => 1,
            1 => 6,
            // `as` saturates on overflow; the cap below keeps the result sensible anyway.
            _ => (f64::from(prev.interval_days.max(1)) * ease).round() as u32,
        };
        (prev.repetitions.saturating_add(1), interval.min(MAX_INTERVAL_DAYS))
    };
    let miss = f64::from(5 - q);
    let new_ease = (ease + 0.1 - miss * (0.08 + miss * 0.02)).max(MIN_EASE);
    Schedule {
        ease: new_ease,
        interval_days,
        repetitions,
        due_at_ms: now_ms.saturating_add(i64::from(interval_days) * DAY_MS),
    }
}

/// SM-2 quality of an objectively checked answer: right 4, right and fast 5, wrong 1.
pub fn objective_quality(correct: bool, fast: bool) -> u8 {
    match (correct, fast) {
        (true, true) => 5,
        (true, false) => 4,
        (false, _) => 1,
    }
}

fn sane_ease(ease: f64) -> f64 {
    if ease.is_finite() { ease.max(MIN_EASE) } else { START_EASE }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_700_000_000_000;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn new_card_is_due_now_with_starting_ease() {
        let s = Schedule::new_card(T0);
        assert_eq!(s, Schedule { ease: 2.5, interval_days: 0, repetitions: 0, due_at_ms: T0 });
    }

    #[test]
    fn worked_sequence_of_quality_four() {
        // q = 4 leaves the ease unchanged: 0.1 - 1 * (0.08 + 0.02) = 0.
        let mut s = Schedule::new_card(T0);
        let mut now = T0;
        let mut intervals = Vec::new();
        for _ in 0..5 {
            s = review(&s, 4, now);
            assert!(close(s.ease, 2.5));
            assert_eq!(s.due_at_ms, now + i64::from(s.interval_days) * DAY_MS);
            intervals.push(s.interval_days);
            now = s.due_at_ms;
        }
        // 1, 6, round(6 × 2.5) = 15, round(15 × 2.5) = 37.5 → 38, round(38 × 2.5) = 95.
        assert_eq!(intervals, [1, 6, 15, 38, 95]);
        assert_eq!(s.repetitions, 5);
    }

    #[test]
    fn worked_sequence_of_quality_five_grows_ease() {
        let mut s = Schedule::new_card(T0);
        s = review(&s, 5, T0);
        assert!(close(s.ease, 2.6));
        assert_eq!(s.interval_days, 1);
        s = review(&s, 5, T0);
        assert!(close(s.ease, 2.7));
        assert_eq!(s.interval_days, 6);
        // The interval uses the ease before this answer: round(6 × 2.7) = 16.
        s = review(&s, 5, T0);
        assert_eq!(s.interval_days, 16);
        assert!(close(s.ease, 2.8));
    }

    #[test]
    fn quality_three_lowers_ease_but_still_advances() {
        let s = review(&Schedule::new_card(T0), 3, T0);
        // 0.1 - 2 * (0.08 + 2 * 0.02) = -0.14
        assert!(close(s.ease, 2.36));
        assert_eq!((s.repetitions, s.interval_days), (1, 1));
    }

    #[test]
    fn wrong_answer_resets_to_one_day_and_lowers_ease() {
        let mut s = Schedule::new_card(T0);
        for _ in 0..3 {
            s = review(&s, 4, T0);
        }
        assert_eq!(s.interval_days, 15);
        let wrong = review(&s, 1, T0 + 5);
        assert_eq!((wrong.repetitions, wrong.interval_days), (0, 1));
        assert_eq!(wrong.due_at_ms, T0 + 5 + DAY_MS);
        // 0.1 - 4 * (0.08 + 4 * 0.02) = -0.54
        assert!(close(wrong.ease, 1.96));
        // Back on track: 1 then 6 days again.
        let again = review(&wrong, 4, T0);
        assert_eq!(again.interval_days, 1);
        assert_eq!(review(&again, 4, T0).interval_days, 6);
    }

    #[test]
    fn ease_never_drops_below_floor() {
        let mut s = Schedule::new_card(T0);
        for _ in 0..10 {
            s = review(&s, 0, T0);
        }
        assert!(close(s.ease, MIN_EASE));
    }

    #[test]
    fn quality_above_five_is_clamped() {
        let s = Schedule::new_card(T0);
        assert_eq!(review(&s, 200, T0), review(&s, 5, T0));
    }

    #[test]
    fn corrupt_stored_values_do_not_propagate() {
        let bad = Schedule { ease: f64::NAN, interval_days: 0, repetitions: 7, due_at_ms: 0 };
        let s = review(&bad, 4, T0);
        assert!(s.ease.is_finite());
        assert_eq!(s.interval_days, 3); // max(0, 1) × 2.5 rounded
        let huge = Schedule { ease: 1e300, interval_days: u32::MAX, repetitions: 9, due_at_ms: 0 };
        let s = review(&huge, 5, i64::MAX - 1);
        assert_eq!(s.interval_days, MAX_INTERVAL_DAYS);
        assert_eq!(s.due_at_ms, i64::MAX);
    }

    #[test]
    fn objective_quality_values() {
        assert_eq!(objective_quality(true, true), 5);
        assert_eq!(objective_quality(true, false), 4);
        assert_eq!(objective_quality(false, true), 1);
        assert_eq!(objective_quality(false, false), 1);
    }
}
