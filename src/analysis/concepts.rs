//! Concept extraction output (SPEC §6.3, Appendix A.6): the types a provider's answer parses
//! into, the category alias table, the difficulty levels, and `validate_concepts`, the single
//! gate every answer passes before anything is stored.
//!
//! Validation never invents data. A concept that cannot be tied to the session's captured code
//! is dropped with a reason; when fewer than three survive, the caller gets an error (so it can
//! ask the model to repair once, or fail the job) instead of a quiet "success" with nothing in
//! it, which is the defect the old worker had.

pub mod answer_json;
mod category;

pub use answer_json::{ParseError, parse_json_answer};
pub use category::{CATEGORIES, normalize_category};

use category::words;

use crate::analysis::model::SourceFile;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fmt;

/// Concepts whose confidence is below this are dropped (SPEC §6.3).
pub const MIN_CONFIDENCE: f64 = 0.4;
/// Fewer surviving concepts than this is a failed extraction, not a thin one.
pub const MIN_CONCEPTS: usize = 3;
/// At most this many concepts are kept per session; more would flood the quiz.
pub const MAX_CONCEPTS: usize = 8;

/// The key concepts are deduplicated and looked up by: lowercase, trimmed, and every run of
/// whitespace or punctuation collapsed into one space, so "Async/Await", "async-await" and
/// " async  await " are the same concept. A space (rather than a hyphen) keeps the key
/// readable in logs; it is a key, never shown as the concept's name.
pub fn normalize_name(name: &str) -> String {
    words(name).join(" ")
}

/// Difficulty of a concept or question, and a developer's level on a concept (SPEC §6.4, §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Junior,
    Mid,
    Senior,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Junior, Level::Mid, Level::Senior];

    /// The wire form: "junior", "mid" or "senior".
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Junior => "junior",
            Level::Mid => "mid",
            Level::Senior => "senior",
        }
    }

    /// Position in `ALL`, used to pick the per-level entry of catalogue templates.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Accepts the wire form and the synonyms models use ("beginner", "intermediate",
    /// "advanced", …), in any case; `None` for anything else.
    pub fn parse(raw: &str) -> Option<Level> {
        match raw.trim().to_lowercase().as_str() {
            "junior" | "beginner" | "basic" | "easy" | "entry" | "novice" => Some(Level::Junior),
            "mid" | "middle" | "intermediate" | "medium" | "mid-level" | "mid level" => Some(Level::Mid),
            "senior" | "advanced" | "expert" | "hard" => Some(Level::Senior),
            _ => None,
        }
    }
}

/// The session summary part of a concepts answer (Appendix A.6).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub what_was_built: String,
    pub developer_intent: String,
    #[serde(default)]
    pub architecture_decisions: Vec<String>,
}

/// One concept as a provider reports it (Appendix A.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Concept {
    pub name: String,
    pub category: String,
    pub difficulty: String,
    pub source_file: String,
    pub snippet: String,
    pub why_it_matters: String,
    /// Models sometimes quote it ("0.8"); a numeric string is accepted as the number.
    #[serde(deserialize_with = "lenient_number")]
    pub confidence: f64,
}

fn lenient_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    use serde::de::Error;
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::Number(n) => n.as_f64().ok_or_else(|| D::Error::custom("bad number")),
        serde_json::Value::String(s) => {
            s.trim().parse().map_err(|_| D::Error::custom(format!("confidence {s:?} is not a number")))
        }
        other => Err(D::Error::custom(format!("confidence {other} is not a number"))),
    }
}

/// The whole concepts answer (Appendix A.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConceptsAnswer {
    pub summary: SessionSummary,
    pub concepts: Vec<Concept>,
}

/// Parses a provider's concepts answer: bare JSON, fenced in Markdown, or surrounded by prose.
pub fn parse_concepts_json(text: &str) -> Result<ConceptsAnswer, ParseError> {
    parse_json_answer(text)
}

/// Why one concept was left out; recorded so the job result (and a repair prompt) can say so.
#[derive(Debug, Clone, PartialEq)]
pub enum DropReason {
    /// The name was blank.
    EmptyName,
    /// The difficulty was not junior, mid or senior (nor a known synonym).
    BadDifficulty(String),
    /// Confidence outside [0,1] or not a number.
    BadConfidence(f64),
    /// Confidence below `MIN_CONFIDENCE`.
    LowConfidence(f64),
    /// No captured file has this path (exactly or as a suffix).
    UnknownFile(String),
    /// The snippet was blank.
    EmptySnippet,
    /// The file exists but the snippet does not occur in it.
    SnippetNotFound(String),
    /// Another concept with the same normalised name came first.
    Duplicate,
    /// More than `MAX_CONCEPTS` survived; the lowest-confidence ones go.
    OverLimit,
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DropReason::EmptyName => write!(f, "empty name"),
            DropReason::BadDifficulty(d) => write!(f, "difficulty {d:?} is not junior|mid|senior"),
            DropReason::BadConfidence(c) => write!(f, "confidence {c} is outside [0,1]"),
            DropReason::LowConfidence(c) => write!(f, "confidence {c} is below {MIN_CONFIDENCE}"),
            DropReason::UnknownFile(p) => write!(f, "source_file {p:?} is not a captured file"),
            DropReason::EmptySnippet => write!(f, "empty snippet"),
            DropReason::SnippetNotFound(p) => write!(f, "snippet does not occur in {p}"),
            DropReason::Duplicate => write!(f, "duplicate of an earlier concept"),
            DropReason::OverLimit => write!(f, "more than {MAX_CONCEPTS} concepts"),
        }
    }
}

/// A concept that validation left out, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct DroppedConcept {
    pub name: String,
    pub reason: DropReason,
}

/// What survives validation: categories and difficulties canonical, `source_file` rewritten to
/// the captured file's own path, in the provider's order.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidatedConcepts {
    pub summary: SessionSummary,
    pub concepts: Vec<Concept>,
    pub dropped: Vec<DroppedConcept>,
}

/// Why a concepts answer as a whole is unusable.
#[derive(Debug, Clone, PartialEq)]
pub enum ConceptsError {
    /// `summary.what_was_built` is blank: a summary that does not say what was built says
    /// nothing (developer_intent and decisions may legitimately be thin).
    EmptySummary,
    /// Fewer than `MIN_CONCEPTS` survived; `dropped` says what went wrong with the rest.
    TooFewConcepts { kept: usize, dropped: Vec<DroppedConcept> },
}

impl fmt::Display for ConceptsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConceptsError::EmptySummary => write!(f, "the summary's what_was_built is empty"),
            ConceptsError::TooFewConcepts { kept, dropped } => {
                write!(f, "only {kept} concept(s) passed validation, {MIN_CONCEPTS} needed")?;
                for (i, d) in dropped.iter().enumerate() {
                    let sep = if i == 0 { "; dropped: " } else { ", " };
                    write!(f, "{sep}{:?} ({})", d.name, d.reason)?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ConceptsError {}

/// Checks a concepts answer against the session's captured files (SPEC §6.3).
///
/// Per concept, in order: a name, a known difficulty, a confidence in [0,1] and at least
/// `MIN_CONFIDENCE`, a `source_file` naming a captured file, a snippet that occurs in that
/// file (whitespace-insensitively), and a name not seen before. The category is normalised,
/// never a reason to drop. If more than `MAX_CONCEPTS` pass, the highest-confidence ones are
/// kept (ties: earlier first) in their original order.
pub fn validate_concepts(answer: ConceptsAnswer, files: &[SourceFile]) -> Result<ValidatedConcepts, ConceptsError> {
    let summary = SessionSummary {
        what_was_built: answer.summary.what_was_built.trim().to_string(),
        developer_intent: answer.summary.developer_intent.trim().to_string(),
        architecture_decisions: answer
            .summary
            .architecture_decisions
            .iter()
            .map(|d| d.trim().to_string())
            .filter(|d| !d.is_empty())
            .collect(),
    };
    if summary.what_was_built.is_empty() {
        return Err(ConceptsError::EmptySummary);
    }
    // The files a concept cites found by an index, not a scan (issue 43 §4); each collapsed
    // when a concept first cites it, at most once: contents can be large, and most files of a
    // large session are cited by no concept.
    let paths = crate::analysis::path_index::PathIndex::new(files.iter().map(|f| f.path.as_str()));
    let collapsed: Vec<std::cell::OnceCell<String>> = files.iter().map(|_| std::cell::OnceCell::new()).collect();
    let cited = Cited { files, paths: &paths, collapsed: &collapsed };
    let mut seen = HashSet::new();
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for concept in answer.concepts {
        let name = concept.name.clone();
        match check_concept(concept, &cited) {
            Ok(c) if !seen.insert(normalize_name(&c.name)) => {
                dropped.push(DroppedConcept { name: c.name, reason: DropReason::Duplicate })
            }
            Ok(c) => kept.push(c),
            Err(reason) => dropped.push(DroppedConcept { name, reason }),
        }
    }
    if kept.len() > MAX_CONCEPTS {
        let mut by_confidence: Vec<usize> = (0..kept.len()).collect();
        // Stable sort: equal confidences keep the provider's order.
        by_confidence.sort_by(|&a, &b| kept[b].confidence.total_cmp(&kept[a].confidence));
        let keep: HashSet<usize> = by_confidence.into_iter().take(MAX_CONCEPTS).collect();
        let mut limited = Vec::new();
        for (i, c) in kept.into_iter().enumerate() {
            if keep.contains(&i) {
                limited.push(c);
            } else {
                dropped.push(DroppedConcept { name: c.name, reason: DropReason::OverLimit });
            }
        }
        kept = limited;
    }
    if kept.len() < MIN_CONCEPTS {
        return Err(ConceptsError::TooFewConcepts { kept: kept.len(), dropped });
    }
    Ok(ValidatedConcepts { summary, concepts: kept, dropped })
}

/// The files concepts may cite, by path, each collapsed when first needed.
struct Cited<'a> {
    files: &'a [SourceFile],
    paths: &'a crate::analysis::path_index::PathIndex<'a>,
    collapsed: &'a [std::cell::OnceCell<String>],
}

/// One concept's checks; returns it cleaned up (trimmed, canonical category and difficulty,
/// `source_file` set to the captured path).
fn check_concept(mut c: Concept, cited: &Cited<'_>) -> Result<Concept, DropReason> {
    let files = cited.files;
    c.name = c.name.trim().to_string();
    if c.name.is_empty() {
        return Err(DropReason::EmptyName);
    }
    let level = Level::parse(&c.difficulty).ok_or_else(|| DropReason::BadDifficulty(c.difficulty.clone()))?;
    c.difficulty = level.as_str().to_string();
    if !(0.0..=1.0).contains(&c.confidence) {
        return Err(DropReason::BadConfidence(c.confidence));
    }
    if c.confidence < MIN_CONFIDENCE {
        return Err(DropReason::LowConfidence(c.confidence));
    }
    c.category = normalize_category(&c.category).to_string();
    let needle = collapse_whitespace(&c.snippet);
    if needle.is_empty() {
        return Err(DropReason::EmptySnippet);
    }
    let candidates = cited.paths.matching(&c.source_file);
    if candidates.is_empty() {
        return Err(DropReason::UnknownFile(c.source_file));
    }
    // A bare "index.ts" can match several files; the one that holds the snippet wins.
    let collapsed = |i: usize| cited.collapsed[i].get_or_init(|| collapse_whitespace(&files[i].content));
    match candidates.iter().find(|&&i| collapsed(i).contains(&needle)) {
        Some(&i) => {
            c.source_file = files[i].path.clone();
            Ok(c)
        }
        None => Err(DropReason::SnippetNotFound(c.source_file)),
    }
}

/// Whether a path a provider cited names a captured file: equal, or one is a suffix of the
/// other at a `/` boundary ("src/a.ts" names "/home/x/proj/src/a.ts" and vice versa).
/// Backslashes count as `/` and a leading "./" is ignored.
pub fn path_matches(captured: &str, cited: &str) -> bool {
    let captured = clean_path(captured);
    let cited = clean_path(cited);
    if captured.is_empty() || cited.is_empty() {
        return false;
    }
    captured == cited || is_suffix_path(&captured, &cited) || is_suffix_path(&cited, &captured)
}

fn clean_path(path: &str) -> String {
    let path = path.trim().replace('\\', "/");
    path.trim_start_matches("./").to_string()
}

fn is_suffix_path(long: &str, short: &str) -> bool {
    let short = short.trim_start_matches('/');
    !short.is_empty() && long.ends_with(short) && long[..long.len() - short.len()].ends_with('/')
}

/// Every run of whitespace becomes one space, ends trimmed: how snippets and file contents are
/// compared, so re-indented or re-wrapped snippets still match.
pub fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;
