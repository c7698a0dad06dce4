//! Per-concept mastery (SPEC §7): how often the developer answered a concept's questions
//! right, and the level (junior, mid, senior) the next question is written at (§6.4).
//!
//! # Rules
//! - score = correct / attempts (0 before any attempt).
//! - Three correct answers in a row promote one level; the streak then starts again from 0,
//!   so junior → senior takes six right answers in a row. At senior the streak keeps counting.
//! - A wrong answer demotes one level (junior stays junior) and resets the streak.
//! - "The first answer never jumps past mid": a concept may be seeded at the concept's own
//!   difficulty, but a single answer is no evidence of senior skill, so the level after the
//!   first recorded answer is at most mid whatever the seed; senior is only reached by a
//!   promotion streak. [`Mastery::new`] applies the same cap to the seed, so a fresh concept
//!   never shows as senior either.
//! - Mastered: score > 0.85 with at least 3 attempts (§6.4 skips such concepts). The minimum
//!   keeps one lucky answer (1/1 = 100 %) from retiring a concept for good.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Correct answers in a row that earn a promotion.
pub const PROMOTION_STREAK: u32 = 3;
/// Score above which a concept counts as mastered (SPEC §6.4: "mastery > 0.85").
pub const MASTERED_SCORE: f64 = 0.85;
/// Attempts needed before a concept can count as mastered.
pub const MASTERED_MIN_ATTEMPTS: u32 = 3;

/// The level questions about a concept are written at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    #[default]
    Junior,
    Mid,
    Senior,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Junior => "junior",
            Level::Mid => "mid",
            Level::Senior => "senior",
        }
    }

    fn up(self) -> Level {
        match self {
            Level::Junior => Level::Mid,
            Level::Mid | Level::Senior => Level::Senior,
        }
    }

    fn down(self) -> Level {
        match self {
            Level::Junior | Level::Mid => Level::Junior,
            Level::Senior => Level::Mid,
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A level name that is not junior, mid or senior.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownLevel(pub String);

impl fmt::Display for UnknownLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown level {:?} (expected junior, mid or senior)", self.0)
    }
}

impl std::error::Error for UnknownLevel {}

impl FromStr for Level {
    type Err = UnknownLevel;

    /// Trimmed and case-insensitive, since levels also come from LLM output.
    fn from_str(s: &str) -> Result<Level, UnknownLevel> {
        match s.trim().to_ascii_lowercase().as_str() {
            "junior" => Ok(Level::Junior),
            "mid" => Ok(Level::Mid),
            "senior" => Ok(Level::Senior),
            _ => Err(UnknownLevel(s.to_string())),
        }
    }
}

/// A developer's record on one concept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Mastery {
    pub attempts: u32,
    pub correct: u32,
    /// Correct answers in a row since the last wrong answer or promotion.
    pub streak: u32,
    pub level: Level,
}

impl Mastery {
    /// A concept not yet answered, seeded at `seed` (capped at mid, see the module doc).
    pub fn new(seed: Level) -> Mastery {
        Mastery { level: seed.min(Level::Mid), ..Mastery::default() }
    }

    /// correct / attempts, in [0, 1]; 0 before any attempt.
    pub fn score(&self) -> f64 {
        if self.attempts == 0 {
            return 0.0;
        }
        (f64::from(self.correct) / f64::from(self.attempts)).min(1.0)
    }

    pub fn is_mastered(&self) -> bool {
        self.attempts >= MASTERED_MIN_ATTEMPTS && self.score() > MASTERED_SCORE
    }
}

/// The record after one more answer.
pub fn record(prev: &Mastery, correct: bool) -> Mastery {
    let mut next = Mastery {
        attempts: prev.attempts.saturating_add(1),
        correct: prev.correct.saturating_add(u32::from(correct)),
        ..*prev
    };
    if correct {
        next.streak = prev.streak.saturating_add(1);
        if next.streak >= PROMOTION_STREAK && prev.level != Level::Senior {
            next.level = prev.level.up();
            next.streak = 0;
        }
    } else {
        next.streak = 0;
        next.level = prev.level.down();
    }
    if prev.attempts == 0 {
        next.level = next.level.min(Level::Mid);
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(answers: &[bool]) -> Mastery {
        answers.iter().fold(Mastery::default(), |m, &c| record(&m, c))
    }

    #[test]
    fn level_names_round_trip() {
        for l in [Level::Junior, Level::Mid, Level::Senior] {
            assert_eq!(l.as_str().parse::<Level>(), Ok(l));
            assert_eq!(serde_json::to_string(&l).unwrap_or_default(), format!("\"{l}\""));
            assert_eq!(serde_json::from_str::<Level>(&format!("\"{l}\"")).ok(), Some(l));
        }
        assert_eq!(Level::from_str(" Senior "), Ok(Level::Senior));
        assert_eq!(Level::from_str("expert"), Err(UnknownLevel("expert".into())));
    }

    #[test]
    fn score_is_correct_over_attempts() {
        assert_eq!(Mastery::default().score(), 0.0);
        let m = run(&[true, false, true, true]);
        assert_eq!((m.attempts, m.correct), (4, 3));
        assert_eq!(m.score(), 0.75);
    }

    #[test]
    fn three_in_a_row_promotes_and_resets_streak() {
        let m = run(&[true, true]);
        assert_eq!((m.level, m.streak), (Level::Junior, 2));
        let m = run(&[true, true, true]);
        assert_eq!((m.level, m.streak), (Level::Mid, 0));
        let m = run(&[true; 6]);
        assert_eq!((m.level, m.streak), (Level::Senior, 0));
        // At the top the streak keeps counting.
        let m = run(&[true; 8]);
        assert_eq!((m.level, m.streak), (Level::Senior, 2));
    }

    #[test]
    fn wrong_answer_demotes_one_level_and_resets_streak() {
        let m = run(&[true, true, true, true, false]);
        assert_eq!((m.level, m.streak), (Level::Junior, 0));
        let m = run(&[true, true, true, true, true, true, false]);
        assert_eq!(m.level, Level::Mid);
        let m = run(&[false, false]);
        assert_eq!(m.level, Level::Junior);
        // A wrong answer breaks a streak: 2 right, 1 wrong, 2 right is no promotion.
        let m = run(&[true, true, false, true, true]);
        assert_eq!((m.level, m.streak), (Level::Junior, 2));
    }

    #[test]
    fn first_answer_never_lands_past_mid() {
        let seeded = Mastery { level: Level::Senior, ..Mastery::default() };
        assert_eq!(record(&seeded, true).level, Level::Mid);
        assert_eq!(record(&seeded, false).level, Level::Mid);
        assert_eq!(Mastery::new(Level::Senior).level, Level::Mid);
        assert_eq!(Mastery::new(Level::Junior).level, Level::Junior);
        // Even a streak carried in a corrupt row cannot land the first answer at senior.
        let odd = Mastery { streak: 2, level: Level::Mid, ..Mastery::default() };
        assert_eq!(record(&odd, true).level, Level::Mid);
    }

    #[test]
    fn mastered_needs_score_above_085_and_three_attempts() {
        assert!(!run(&[true]).is_mastered());
        assert!(!run(&[true, true]).is_mastered());
        assert!(run(&[true, true, true]).is_mastered());
        // 6/7 ≈ 0.857 > 0.85; 5/6 ≈ 0.833 is not.
        assert!(run(&[false, true, true, true, true, true, true]).is_mastered());
        assert!(!run(&[false, true, true, true, true, true]).is_mastered());
    }

    #[test]
    fn counters_saturate_instead_of_overflowing() {
        let m = Mastery { attempts: u32::MAX, correct: u32::MAX, streak: u32::MAX, level: Level::Senior };
        let n = record(&m, true);
        assert_eq!((n.attempts, n.correct), (u32::MAX, u32::MAX));
        assert!(n.score() <= 1.0);
    }
}
