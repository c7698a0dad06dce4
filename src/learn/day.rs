//! The learner's days (SPEC §7): a day is a local calendar day in the learner's time zone that
//! begins at `VIBELEARN_DAY_STARTS_AT` (0–23, default 4, Anki's rollover), not a UTC day. One
//! numbering serves the new-card cap, the streak, "today / tomorrow / this week", the forecast,
//! the LLM budget's reset and FSRS's elapsed days (when scheduling and when fitting).
//!
//! Pure: the zone is a value (`jiff::tz::TimeZone`, the OS's zone database read once by
//! whoever builds a [`LearnerDay`]); the arithmetic here reads nothing.
//!
//! A day number is the count of days from 1970-01-01 to the learner's date, so `day 0` is
//! 1970-01-01 whatever the zone, and the `daily_streaks.day` key converts back to the civil
//! date by plain arithmetic.

use jiff::civil::{Date, DateTime, Time};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};

use crate::clock::Millis;

/// Anki's rollover hour (SPEC §2: `VIBELEARN_DAY_STARTS_AT`).
pub const DEFAULT_STARTS_AT: u8 = 4;
const EPOCH: Date = Date::constant(1970, 1, 1);
const DAY_MS: Millis = 86_400_000;

/// How instants fall into the learner's days.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnerDay {
    tz: TimeZone,
    /// The local hour a new day begins, 0–23.
    starts_at: u8,
}

impl Default for LearnerDay {
    /// UTC days from midnight: what a reader without settings (and a unit test) counts.
    fn default() -> LearnerDay {
        LearnerDay { tz: TimeZone::UTC, starts_at: 0 }
    }
}

impl LearnerDay {
    /// `starts_at` above 23 is clamped to 23.
    pub fn new(tz: TimeZone, starts_at: u8) -> LearnerDay {
        LearnerDay { tz, starts_at: starts_at.min(23) }
    }

    pub fn starts_at(&self) -> u8 {
        self.starts_at
    }

    /// The zone's name as the OS gave it (`America/Los_Angeles`), when it has one.
    pub fn zone_name(&self) -> Option<&str> {
        self.tz.iana_name()
    }

    /// The learner's day that `at` falls in, as days since 1970-01-01.
    pub fn day_of(&self, at: Millis) -> i64 {
        let Ok(ts) = Timestamp::from_millisecond(at) else {
            return at.div_euclid(DAY_MS);
        };
        let local = self.tz.to_datetime(ts);
        let shifted = local.checked_sub(SignedDuration::from_hours(i64::from(self.starts_at))).unwrap_or(local);
        days_since_epoch(shifted.date())
    }

    /// When learner day `day` begins (its local `starts_at` hour; on a DST gap, the instant
    /// after it).
    pub fn start_of(&self, day: i64) -> Millis {
        let Ok(date) = EPOCH.checked_add(SignedDuration::from_hours(day.saturating_mul(24))) else {
            return day.saturating_mul(DAY_MS);
        };
        let Ok(time) = Time::new(self.starts_at as i8, 0, 0, 0) else { return day.saturating_mul(DAY_MS) };
        let local = DateTime::from_parts(date, time);
        match self.tz.to_ambiguous_timestamp(local).compatible() {
            Ok(ts) => ts.as_millisecond(),
            Err(_) => day.saturating_mul(DAY_MS),
        }
    }

    /// When the day after the one `at` falls in begins.
    pub fn next_start(&self, at: Millis) -> Millis {
        self.start_of(self.day_of(at) + 1)
    }

    /// Whole learner days between two instants (FSRS's elapsed days): 0 within one day,
    /// 1 from 23:00 to 09:00 the next morning, never negative.
    pub fn elapsed_days(&self, from: Millis, to: Millis) -> u32 {
        u32::try_from((self.day_of(to) - self.day_of(from)).max(0)).unwrap_or(u32::MAX)
    }
}

fn days_since_epoch(date: Date) -> i64 {
    date.duration_since(EPOCH).as_secs().div_euclid(86_400)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Los Angeles with Anki's rollover: the zone of the time-zone tests.
    pub(crate) fn los_angeles() -> LearnerDay {
        LearnerDay::new(TimeZone::get("America/Los_Angeles").expect("the tz database has Los Angeles"), 4)
    }

    fn at(text: &str) -> Millis {
        text.parse::<Timestamp>().expect("a valid instant").as_millisecond()
    }

    #[test]
    fn utc_default_is_the_old_day_number() {
        let d = LearnerDay::default();
        for ms in [0, 1, DAY_MS - 1, DAY_MS, 1_780_000_000_000, -1] {
            assert_eq!(d.day_of(ms), ms.div_euclid(DAY_MS));
        }
        assert_eq!(d.start_of(20_000), 20_000 * DAY_MS);
    }

    #[test]
    fn an_evening_and_the_next_morning_in_los_angeles_are_two_days_in_one_utc_day() {
        let la = los_angeles();
        // 23:00 PST on 1 Dec is 07:00 UTC on 2 Dec; 09:00 PST on 2 Dec is 17:00 UTC on 2 Dec.
        let evening = at("2026-12-02T07:00:00Z");
        let morning = at("2026-12-02T17:00:00Z");
        assert_eq!(evening.div_euclid(DAY_MS), morning.div_euclid(DAY_MS), "one UTC day");
        assert_eq!(la.day_of(morning), la.day_of(evening) + 1, "two learner days");
        assert_eq!(la.elapsed_days(evening, morning), 1);
        // The day the evening belongs to is 1 Dec.
        assert_eq!(la.day_of(evening), days_since_epoch(Date::constant(2026, 12, 1)));
    }

    #[test]
    fn the_day_turns_at_four_in_the_morning_local_time() {
        let la = los_angeles();
        let before = at("2026-12-02T11:59:00Z"); // 03:59 PST
        let after = at("2026-12-02T12:00:00Z"); // 04:00 PST
        assert_eq!(la.day_of(after), la.day_of(before) + 1);
        assert_eq!(la.start_of(la.day_of(after)), after);
        assert_eq!(la.next_start(before), after);
        // A 02:00 answer after a 22:00 one is the same day: no elapsed day for FSRS.
        assert_eq!(la.elapsed_days(at("2026-12-02T06:00:00Z"), at("2026-12-02T10:00:00Z")), 0);
    }

    #[test]
    fn a_dst_change_keeps_the_rollover_at_local_four() {
        let la = los_angeles();
        // 8 March 2026: clocks go from 02:00 PST to 03:00 PDT; the day still starts at 04:00 PDT.
        let start = la.start_of(days_since_epoch(Date::constant(2026, 3, 8)));
        assert_eq!(start, at("2026-03-08T11:00:00Z"));
        let next = la.start_of(days_since_epoch(Date::constant(2026, 3, 9)));
        assert_eq!(next - start, 24 * 3_600_000);
    }
}
