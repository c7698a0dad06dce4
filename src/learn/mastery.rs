//! Per-concept mastery (SPEC §7): whether a concept is mastered, a gap or still being learned,
//! judged from its cards' live FSRS state ([`judge`]); and the level (junior, mid, senior) the
//! next question is written at (§6.4), from how often the developer answered right.
//!
//! # Mastered, recall-now, gap, learning ([`judge`])
//! - A card is *mature* at an FSRS stability of [`MATURE_STABILITY_DAYS`] (21) days or more:
//!   Anki calls a card mature at a 21-day interval, and at 90 % retention FSRS's interval is
//!   its stability.
//! - A concept is *mastered* when it has at least [`MASTERED_MIN_CARDS`] (2) answered cards,
//!   every card answered and mature, and no leech. One answer can never master anything: a
//!   card answered once has a stability of days, not weeks.
//! - *Recall-now* is FSRS's retrievability now, averaged over the answered cards. It is shown
//!   beside mastery and never called mastery: right after an answer it is ~100 % whatever
//!   the answer was.
//! - A *gap* is a concept with a leech, or answered cards whose recall-now is under
//!   [`GAP_RECALL`] (70 %). A concept with unanswered cards is *learning*.
//!
//! # Level rules
//! - score = correct / attempts (0 before any attempt).
//! - Three correct answers in a row promote one level; the streak then starts again from 0,
//!   so junior → senior takes six right answers in a row. At senior the streak keeps counting.
//! - A wrong answer demotes one level (junior stays junior) and resets the streak.
//! - "The first answer never jumps past mid": a concept may be seeded at the concept's own
//!   difficulty, but a single answer is no evidence of senior skill, so the level after the
//!   first recorded answer is at most mid whatever the seed; senior is only reached by a
//!   promotion streak. [`Mastery::new`] applies the same cap to the seed, so a fresh concept
//!   never shows as senior either.
//! - The score and the level are never mastery: [`judge`] alone says what is mastered.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Correct answers in a row that earn a promotion.
pub const PROMOTION_STREAK: u32 = 3;
/// Stability (days) at which a card is mature (Anki's 21-day mature interval).
pub const MATURE_STABILITY_DAYS: f64 = 21.0;
/// Answered cards a concept needs before it can be mastered.
pub const MASTERED_MIN_CARDS: usize = 2;
/// Recall-now under this makes an answered concept a gap (SPEC §7).
pub const GAP_RECALL: f64 = 0.7;

/// One card of a concept as [`judge`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CardFacts {
    /// FSRS retrievability now; `None` for a card never answered.
    pub recall: Option<f64>,
    /// FSRS stability in days; `None` for a card never answered.
    pub stability: Option<f64>,
    pub leech: bool,
    /// In its learning or relearning steps (answered Again and not yet graduated).
    pub in_steps: bool,
}

impl CardFacts {
    pub fn is_mature(&self) -> bool {
        self.stability.is_some_and(|s| s >= MATURE_STABILITY_DAYS)
    }
}

/// Where a concept stands (SPEC §7), most settled first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Standing {
    /// At least two answered cards, all cards answered and mature, no leech.
    Mastered,
    /// A leech, or answered cards under 70 % recall-now.
    Gap,
    /// Cards not yet answered (none at all, or some), or still in their learning steps.
    Learning,
    /// Every card answered and recalled, not all mature yet.
    Reviewing,
}

impl Standing {
    pub fn as_str(self) -> &'static str {
        match self {
            Standing::Mastered => "mastered",
            Standing::Gap => "gap",
            Standing::Learning => "learning",
            Standing::Reviewing => "reviewing",
        }
    }
}

/// A concept judged from its cards.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    pub standing: Standing,
    /// Mean recall-now over the answered cards; 0 when none was answered.
    pub recall_now: f64,
    pub answered: usize,
    pub mature: usize,
    pub leeches: usize,
}

impl Judgement {
    pub fn is_mastered(&self) -> bool {
        self.standing == Standing::Mastered
    }

    pub fn is_gap(&self) -> bool {
        self.standing == Standing::Gap
    }
}

/// The one definition of mastered / gap / learning (module doc).
pub fn judge(cards: &[CardFacts]) -> Judgement {
    let recalls: Vec<f64> = cards.iter().filter_map(|c| c.recall).collect();
    let answered = recalls.len();
    let recall_now = if answered == 0 { 0.0 } else { recalls.iter().sum::<f64>() / answered as f64 };
    let mature = cards.iter().filter(|c| c.is_mature()).count();
    let leeches = cards.iter().filter(|c| c.leech).count();
    let standing = if leeches > 0 || (answered > 0 && recall_now < GAP_RECALL) {
        Standing::Gap
    } else if answered < cards.len() || answered == 0 || cards.iter().any(|c| c.in_steps) {
        Standing::Learning
    } else if answered >= MASTERED_MIN_CARDS && mature == cards.len() {
        Standing::Mastered
    } else {
        Standing::Reviewing
    };
    Judgement { standing, recall_now, answered, mature, leeches }
}

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

    fn card(recall: f64, stability: f64) -> CardFacts {
        CardFacts { recall: Some(recall), stability: Some(stability), leech: false, in_steps: false }
    }

    #[test]
    fn one_answer_right_after_it_is_full_recall_but_never_mastery() {
        // What FSRS gives a new card answered Again, right after the answer: recall 1.0,
        // stability well under a day (the fsrs crate's default parameters).
        let again = crate::learn::schedule::Scheduler::default().review(
            &crate::learn::schedule::Card::default(),
            crate::learn::schedule::Rating::Again,
            1_780_000_000_000,
        );
        let memory = again.card.memory.expect("a reviewed card has a memory");
        let facts = CardFacts { recall: Some(1.0), stability: Some(memory.stability), leech: false, in_steps: true };
        assert!(memory.stability < 1.0, "{memory:?}");
        let j = judge(&[facts, facts]);
        assert_eq!((j.standing, j.recall_now), (Standing::Learning, 1.0), "in its steps: learning");
        let graduated = CardFacts { in_steps: false, ..facts };
        let j = judge(&[graduated, graduated]);
        assert_eq!(j.standing, Standing::Reviewing, "recalled, not mature: not mastered");
    }

    #[test]
    fn mastered_needs_two_answered_cards_all_mature_and_no_leech() {
        assert_eq!(judge(&[card(0.95, 30.0)]).standing, Standing::Reviewing, "one card is not enough");
        assert_eq!(judge(&[card(0.95, 30.0), card(0.9, 21.0)]).standing, Standing::Mastered);
        assert_eq!(judge(&[card(0.95, 30.0), card(0.9, 20.9)]).standing, Standing::Reviewing);
        let unanswered = CardFacts::default();
        assert_eq!(judge(&[card(0.95, 30.0), card(0.9, 25.0), unanswered]).standing, Standing::Learning);
        let leech = CardFacts { leech: true, ..card(0.95, 30.0) };
        assert_eq!(judge(&[card(0.95, 30.0), leech]).standing, Standing::Gap);
    }

    #[test]
    fn a_gap_is_recall_under_70_percent_or_a_leech() {
        assert_eq!(judge(&[card(0.69, 30.0), card(0.69, 30.0)]).standing, Standing::Gap);
        assert_eq!(judge(&[card(0.7, 3.0)]).standing, Standing::Reviewing);
        assert_eq!(judge(&[]).standing, Standing::Learning, "no card yet: learning, not a gap");
        assert_eq!(judge(&[CardFacts::default()]).recall_now, 0.0);
    }

    #[test]
    fn counters_saturate_instead_of_overflowing() {
        let m = Mastery { attempts: u32::MAX, correct: u32::MAX, streak: u32::MAX, level: Level::Senior };
        let n = record(&m, true);
        assert_eq!((n.attempts, n.correct), (u32::MAX, u32::MAX));
        assert!(n.score() <= 1.0);
    }
}
