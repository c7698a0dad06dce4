//! Spreading the review load over days (SPEC §7, issue 34): a review interval is a whole
//! number of learner days, and within its *fuzz range* the card goes to the day with the
//! fewest reviews already due, as Anki's load balancer (24.11) does. Pure: the range comes
//! from the interval, the loads are given by the caller (`learning::record` counts them).
//!
//! # Why
//! Cards introduced together and answered alike would otherwise fall due together for ever:
//! the learning simulation (docs/LEARNING.md) had 16 reviews on day 3 and none on day 2. Anki
//! adds a random fuzz to break such clusters; its load balancer then chooses inside the same
//! range by how many reviews each day already holds. Here the choice is deterministic (fewest
//! due, then the day closest to FSRS's interval, then the earlier one): it breaks the cluster
//! as well, keeps every run reproducible, and a tie goes to the safer, shorter interval.
//!
//! # The range
//! Anki's fuzz: ±(1 day + 15 % of the part of the interval between 2.5 and 7 days + 10 % of
//! the part between 7 and 20 + 5 % of the part above 20), rounded, and never under 2 days. A
//! 10-day interval may move ±2.0 days, a 100-day one ±6.9. Anki leaves intervals under 2.5
//! days alone; here one that rounds to 2 days (1.5 or more) may also wait a third day. The
//! learning simulation showed why: the cards a first sitting missed graduate together, come
//! back together the next day, and then all get FSRS's ~2 days, which Anki's rule would keep
//! together (11 reviews on day 4 of ten). A third day costs such a card about 3 points of
//! recall (FSRS: 0.90 at 2 days, 0.87 at 3, for a stability of 2), and only when its second
//! day is the busier one. One-day intervals are never moved.

use std::ops::RangeInclusive;

/// Intervals under this many days are never moved (module doc: Anki's own limit is 2.5).
pub const FUZZ_FROM_DAYS: f64 = 1.5;
/// (from, to, share of that part of the interval the range may move).
const FUZZ_PARTS: [(f64, f64, f64); 3] = [(2.5, 7.0, 0.15), (7.0, 20.0, 0.10), (20.0, f64::INFINITY, 0.05)];

/// The whole days a card with FSRS interval `interval` (days, fractional) may be given, from
/// shortest to longest; one day when it is too short to move. `max` caps it (the maximum
/// interval).
pub fn fuzz_range(interval: f64, max: f64) -> RangeInclusive<i64> {
    let interval = if interval.is_finite() { interval.clamp(1.0, max.max(1.0)) } else { 1.0 };
    let target = interval.round() as i64;
    if interval < FUZZ_FROM_DAYS {
        return target..=target;
    }
    let delta = FUZZ_PARTS.iter().fold(1.0, |d, (from, to, share)| d + share * (interval.min(*to) - from).max(0.0));
    let low = ((interval - delta).round() as i64).max(2);
    let high = ((interval + delta).round() as i64).min(max.max(1.0) as i64).max(low);
    low..=high
}

/// The day in `range` (whole days from today) with the fewest reviews due, `load(days)`
/// giving that count; ties go to the day closest to `interval`, then to the earlier one.
pub fn least_loaded(range: RangeInclusive<i64>, interval: f64, load: impl Fn(i64) -> usize) -> i64 {
    let start = *range.start();
    range
        .min_by(|a, b| {
            let distance = |d: i64| (d as f64 - interval).abs();
            load(*a).cmp(&load(*b)).then(distance(*a).total_cmp(&distance(*b))).then(a.cmp(b))
        })
        .unwrap_or(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_intervals_are_not_moved_and_longer_ones_get_anki_s_range() {
        assert_eq!(fuzz_range(1.0, 36_500.0), 1..=1);
        assert_eq!(fuzz_range(1.4, 36_500.0), 1..=1);
        // Two days (FSRS's 1.5 to 2.5) may wait a third (module doc).
        assert_eq!(fuzz_range(1.6, 36_500.0), 2..=3);
        assert_eq!(fuzz_range(2.3065, 36_500.0), 2..=3);
        // 3 days: ±(1 + 0.15 × 0.5) = ±1.075 → 2..4 (never under 2).
        assert_eq!(fuzz_range(3.0, 36_500.0), 2..=4);
        // 10 days: ±(1 + 0.15 × 4.5 + 0.1 × 3) = ±1.975 → 8..12.
        assert_eq!(fuzz_range(10.0, 36_500.0), 8..=12);
        // 100 days: ±(1 + 0.675 + 1.3 + 0.05 × 80) = ±6.975 → 93..107.
        assert_eq!(fuzz_range(100.0, 36_500.0), 93..=107);
        assert_eq!(fuzz_range(100.0, 50.0), 46..=50, "capped by the maximum interval");
        assert_eq!(fuzz_range(f64::NAN, 36_500.0), 1..=1);
    }

    #[test]
    fn the_least_loaded_day_wins_then_the_closest_then_the_earlier() {
        let loads = [0usize, 0, 0, 0, 0, 0, 0, 0, 5, 3, 4, 1, 1];
        let load = |d: i64| loads[d as usize];
        assert_eq!(least_loaded(8..=12, 10.0, load), 11, "fewest due (1), the closer of 11 and 12");
        assert_eq!(least_loaded(8..=12, 10.0, |_| 0), 10, "all equal: FSRS's own interval");
        assert_eq!(least_loaded(8..=12, 10.5, |_| 0), 10, "equally close: the earlier day");
        assert_eq!(least_loaded(2..=2, 2.3, load), 2);
    }

    #[test]
    fn cards_answered_alike_spread_over_the_range() {
        let mut loads = std::collections::HashMap::<i64, usize>::new();
        for _ in 0..5 {
            let day = least_loaded(fuzz_range(10.0, 36_500.0), 10.0, |d| loads.get(&d).copied().unwrap_or(0));
            *loads.entry(day).or_default() += 1;
        }
        let mut days: Vec<i64> = loads.keys().copied().collect();
        days.sort();
        assert_eq!(days, [8, 9, 10, 11, 12], "five cards, five days: {loads:?}");
    }
}
