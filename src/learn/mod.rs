//! The learning loop's pure rules (SPEC §7); `vl quiz` and `vl status` own the I/O around them.
//!
//! - `sm2` — when a question is due again (SM-2 scheduling).
//! - `mastery` — per-concept score and junior/mid/senior level.
//! - `streak` — consecutive days with at least one answer.
//! - `answer` — reading what the developer typed and judging it.
//! - `rubric` — grading a free-text answer through an LLM with the five weighted dimensions.

pub mod answer;
pub mod mastery;
pub mod rubric;
pub mod sm2;
pub mod streak;
