//! The learning loop's pure rules (SPEC §7); `vl quiz` and `vl status` own the I/O around them.
//!
//! - `schedule` — when a question is due again: FSRS-6, four ratings, learning steps, leeches.
//! - `mastery` — per-concept junior/mid/senior level, and mastery as FSRS retrievability.
//! - `streak` — consecutive days with at least one answer.
//! - `answer` — reading what the developer typed and judging it.
//! - `rubric` — grading a free-text answer through an LLM with the five weighted dimensions.
//! - `fit` — FSRS parameters re-fitted to the learner's review log.
//! - `export` — cards out to Anki's text import and to Markdown.

pub mod answer;
pub mod export;
pub mod fit;
pub mod mastery;
pub mod rubric;
pub mod schedule;
pub mod streak;
