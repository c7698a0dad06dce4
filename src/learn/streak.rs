//! Daily streaks (SPEC §7, shown by `vl status`): how many consecutive days the developer
//! answered at least one question. Days are plain numbers chosen by the caller (days since
//! the epoch in the user's local time), so time zones and clocks stay out of this file.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreakState {
    /// Consecutive days ending at `last_day`.
    pub current: u32,
    /// Best `current` ever reached.
    pub longest: u32,
    /// The last day with an answer.
    pub last_day: i64,
}

/// The streak after answering on `today`.
///
/// A second answer on the same day changes nothing. A `today` earlier than `last_day` (the
/// clock or the time zone moved back) also changes nothing: breaking a streak over a clock
/// change would punish the user for something they did not do.
pub fn update_streak(prev: Option<StreakState>, today: i64) -> StreakState {
    let Some(prev) = prev else {
        return StreakState { current: 1, longest: 1, last_day: today };
    };
    if today <= prev.last_day {
        return prev;
    }
    let current = if today == prev.last_day + 1 { prev.current.saturating_add(1) } else { 1 };
    StreakState { current, longest: prev.longest.max(current), last_day: today }
}

/// The streak to display on `today`: the stored one while it is still alive (the last
/// answer was today or yesterday), else 0 — a streak is not lost until a whole day passes.
pub fn current_streak(state: Option<&StreakState>, today: i64) -> u32 {
    match state {
        Some(s) if today - s.last_day <= 1 => s.current,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn days(list: &[i64]) -> StreakState {
        let mut s = None;
        for &d in list {
            s = Some(update_streak(s, d));
        }
        s.unwrap_or(StreakState { current: 0, longest: 0, last_day: 0 })
    }

    #[test]
    fn first_day_starts_at_one() {
        assert_eq!(update_streak(None, 100), StreakState { current: 1, longest: 1, last_day: 100 });
    }

    #[test]
    fn consecutive_days_extend_and_same_day_is_idempotent() {
        assert_eq!(days(&[100, 100, 101, 101, 102]), StreakState { current: 3, longest: 3, last_day: 102 });
    }

    #[test]
    fn a_gap_restarts_but_keeps_longest() {
        assert_eq!(days(&[1, 2, 3, 4, 6, 7]), StreakState { current: 2, longest: 4, last_day: 7 });
    }

    #[test]
    fn going_back_in_time_changes_nothing() {
        assert_eq!(days(&[10, 11, 9]), StreakState { current: 2, longest: 2, last_day: 11 });
    }

    #[test]
    fn displayed_streak_expires_after_a_missed_day() {
        let s = days(&[10, 11]);
        assert_eq!(current_streak(Some(&s), 11), 2);
        assert_eq!(current_streak(Some(&s), 12), 2);
        assert_eq!(current_streak(Some(&s), 13), 0);
        assert_eq!(current_streak(None, 13), 0);
    }
}
