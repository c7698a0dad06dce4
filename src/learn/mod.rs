//! The learning loop's pure rules (SPEC §7); `crate::learning` owns the reads and writes
//! around them.
//!
//! - `schedule` — when a question is due again: FSRS-6, four ratings, learning steps, leeches.
//! - `balance` — a review's fuzz range of days and the least loaded day in it.
//! - `mastery` — mastered / gap / learning from the cards' FSRS state, and the question level.
//! - `day` — the learner's days: local, rolling over at `VIBELEARN_DAY_STARTS_AT`.
//! - `streak` — consecutive days with at least one answer.
//! - `answer` — reading what the developer typed and judging it.
//! - `rubric` — grading a free-text answer through an LLM with the five weighted dimensions.
//! - `fit` — FSRS parameters re-fitted to the learner's review log.
//! - `export` — cards out to Anki's text import and to Markdown.

pub mod answer;
pub mod balance;
pub mod day;
pub mod export;
pub mod fit;
pub mod mastery;
pub mod rubric;
pub mod schedule;
pub mod streak;
