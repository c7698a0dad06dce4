//! Analysis of a session's code (SPEC §6.1–6.2), pure functions over captured files with no
//! I/O of their own:
//!
//! - `model`: the shared data types (`SourceFile` in, `StackProfile` and `Pattern` out).
//! - `stack`: stack detection from manifests (real JSON/TOML parsers) and touched paths.
//! - `lang`: the languages we read, and which one a file is in.
//! - `static_rules`: pattern detection (hooks, routes, async, errors, tests …): one
//!   tree-sitter query file per grammar, run by one engine.
//! - `concepts`: the concept answer shape, category aliases, grounding validation.
//! - `questions`: the question shape and its structural validation.
//! - `catalogue`: the concept catalogue the offline provider draws on.
//! - `grounding`: where a question's code comes from in the session's files.
//! - `path_index`: a session's files by the paths that cite them, built once per job.
//! - `grounded`: questions built from the session's own files (bugs, blanks, orderings, quotes).
//! - `grounding_check`: verifying a question's grounding and answer key against those files.
//! - `failures`: errors the developer met (failed tool calls), classified by kind.
//! - `story`: the session's own story: the edit that fixed a failure, the error read in its
//!   tool's terms, and the questions built from the two.
//! - `precision`: SPEC §6.4's precision rules (whole units, steps that run, the session's
//!   language, premises that hold) as checks on one question.
//! - `concept_syntax`: which syntax each concept needs in a snippet (tree-sitter queries).
//! - `syntax`: the real grammars (tree-sitter): which one reads a file, its parse, and the
//!   masking of comments and strings every rule searches past.
//! - `lint`: issue 40's question lint, which measures what the rules above let through.

pub mod catalogue;
pub mod concept_syntax;
pub mod concepts;
pub mod failures;
pub mod grounded;
pub mod grounding;
pub mod grounding_check;
pub mod lang;
pub mod lint;
pub mod model;
pub mod path_index;
pub mod precision;
pub mod questions;
pub mod stack;
pub mod static_rules;
pub mod story;
pub mod syntax;

pub use lang::{Lang, lang_for_path};
pub use stack::{SessionEvidence, detect_stack, detect_stack_with, is_manifest};
pub use static_rules::analyze_files;

#[cfg(test)]
mod fixture_tests;
