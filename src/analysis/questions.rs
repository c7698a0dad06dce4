//! Quiz questions (SPEC §6.4, Appendix A.5/A.6): the type a provider's answer parses into, the
//! seven question types, `normalize_question` (the forgiving clean-up of what models write),
//! `validate_question` (the structural rules every question must pass before it is stored),
//! and the text hash used to spot duplicate questions.
//!
//! # Rubric
//! Open-ended questions carry their five rubric dimensions as tags `rubric:<dimension>` (see
//! `RUBRIC_DIMENSIONS`), and the explanation says what a strong answer covers. Tags were
//! chosen over the explanation because they are machine-checkable and survive the A.5 shape
//! unchanged, so a grader (self-grade prompt or LLM) can list them without parsing prose.

mod normalize;

pub use normalize::normalize_question;

use crate::analysis::concepts::{Level, ParseError, normalize_name, parse_json_answer};
use crate::analysis::grounding::Grounding;
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

/// The seven question types, in wire form.
pub const QUESTION_TYPES: [&str; 7] =
    ["multiple_choice", "true_false", "fill_in_blank", "ordering", "code_reading", "spot_the_bug", "open_ended"];

/// The five dimensions an open-ended answer is graded on, each present as a `rubric:` tag:
/// correctness (is it right), depth (explains why, not only what), trade_offs (alternatives
/// and their costs), real_world (ties it to production or this codebase), clarity.
pub const RUBRIC_DIMENSIONS: [&str; 5] = ["correctness", "depth", "trade_offs", "real_world", "clarity"];

/// Prefix of the tags that carry the rubric.
pub const RUBRIC_TAG_PREFIX: &str = "rubric:";

/// Ordering questions have this many steps, inclusive.
const ORDERING_STEPS: std::ops::RangeInclusive<usize> = 4..=6;

/// A question type as a value; `as_str` is its wire form in `QUESTION_TYPES`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QuestionType {
    MultipleChoice,
    TrueFalse,
    FillInBlank,
    Ordering,
    CodeReading,
    SpotTheBug,
    OpenEnded,
}

impl QuestionType {
    pub const ALL: [QuestionType; 7] = [
        QuestionType::MultipleChoice,
        QuestionType::TrueFalse,
        QuestionType::FillInBlank,
        QuestionType::Ordering,
        QuestionType::CodeReading,
        QuestionType::SpotTheBug,
        QuestionType::OpenEnded,
    ];

    pub fn as_str(self) -> &'static str {
        QUESTION_TYPES[self as usize]
    }

    /// The wire form exactly; `normalize_question` maps synonyms to it first.
    pub fn parse(raw: &str) -> Option<QuestionType> {
        QuestionType::ALL.into_iter().find(|t| t.as_str() == raw)
    }
}

/// One question as a provider returns it (Appendix A.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneratedQuestion {
    pub concept: String,
    pub question_type: String,
    pub difficulty: String,
    #[serde(default)]
    pub snippet: Option<String>,
    pub question: String,
    #[serde(default)]
    pub options: Option<Vec<String>>,
    /// Models write `true`, `2` or `[2,4,1,3]` as often as strings; all become text.
    #[serde(default, deserialize_with = "lenient_text")]
    pub correct: Option<String>,
    pub explanation: String,
    #[serde(default)]
    pub follow_up: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    /// Where the question's code comes from in the session's files; `None` for a question
    /// that quotes no code of the session (a catalogue example, or an ungrounded LLM answer).
    /// A model's malformed grounding reads as none (the verifier then locates the snippet)
    /// rather than failing the whole answer.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_grounding")]
    pub grounding: Option<Grounding>,
}

impl GeneratedQuestion {
    /// The code the learner is shown with the question and its follow-up: the snippet, with a
    /// fill-in-blank's blanked token (its answer) and a bug's repaired line (the follow-up
    /// quotes the code repaired). Empty without a snippet.
    pub fn shown_code(&self) -> String {
        let Some(snippet) = self.snippet.as_deref().filter(|s| !s.trim().is_empty()) else { return String::new() };
        let completed = match self.question_type.as_str() {
            "fill_in_blank" => self.correct.as_deref(),
            "spot_the_bug" => self.grounding.as_ref().and_then(|g| g.mutation.as_ref()).map(|m| m.original.as_str()),
            _ => None,
        };
        format!("{snippet}\n{}", completed.unwrap_or(""))
    }
}

/// The whole questions answer (Appendix A.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionsAnswer {
    pub questions: Vec<GeneratedQuestion>,
    /// Questions a builder did not write, by the rule that refused them (the offline
    /// provider's `teaches` rules); never part of a provider's JSON.
    #[serde(default, skip)]
    pub not_written: std::collections::BTreeMap<&'static str, usize>,
}

/// Parses a provider's questions answer with the same leniency as concepts.
pub fn parse_questions_json(text: &str) -> Result<QuestionsAnswer, ParseError> {
    parse_json_answer(text)
}

fn lenient_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    use serde_json::Value;
    fn scalar(v: &Value) -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }
    Ok(match Value::deserialize(d)? {
        Value::Null => None,
        Value::Array(items) => Some(items.iter().filter_map(scalar).collect::<Vec<_>>().join(",")),
        other => scalar(&other),
    })
}

fn lenient_grounding<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Grounding>, D::Error> {
    let mut value = serde_json::Value::deserialize(d)?;
    // Models capitalise enum values ("Quote") as often as not.
    if let Some(kind) = value.get_mut("kind").and_then(|k| k.as_str().map(str::to_lowercase)) {
        value["kind"] = serde_json::Value::String(kind);
    }
    Ok(serde_json::from_value(value).ok())
}

/// One broken structural rule; the message is what a repair prompt tells the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuestionError {
    UnknownConcept(String),
    UnknownType(String),
    BadDifficulty(String),
    EmptyQuestion,
    EmptyExplanation,
    /// Junior questions need a mid-level follow-up (SPEC §6.4).
    MissingFollowUp,
    /// Wrong number of options/steps for the type.
    OptionCount {
        expected: &'static str,
        got: usize,
    },
    EmptyOption,
    DuplicateOption,
    /// Options given where the type has none (true_false).
    UnexpectedOptions,
    /// `correct` is missing or not of the form the type needs.
    BadCorrect {
        expected: &'static str,
        got: String,
    },
    /// fill_in_blank: the number of `___` blanks across snippet and question.
    BlankCount(usize),
    /// fill_in_blank: filling the blank gives back the question unchanged.
    BlankGivesNothingAway,
    /// ordering: the steps are already shown in the right order.
    OrderAlreadySolved,
    MissingSnippet,
    /// open_ended is a senior type.
    OpenEndedNotSenior,
    /// open_ended: these rubric dimensions have no `rubric:` tag.
    MissingRubric(Vec<&'static str>),
}

impl fmt::Display for QuestionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use QuestionError::*;
        match self {
            UnknownConcept(c) => write!(f, "concept {c:?} is not one of the given concepts"),
            UnknownType(t) => write!(f, "question_type {t:?} is not one of {QUESTION_TYPES:?}"),
            BadDifficulty(d) => write!(f, "difficulty {d:?} is not junior|mid|senior"),
            EmptyQuestion => write!(f, "the question text is empty"),
            EmptyExplanation => write!(f, "the explanation is empty"),
            MissingFollowUp => write!(f, "a junior question needs a follow_up"),
            OptionCount { expected, got } => write!(f, "expected {expected} options, got {got}"),
            EmptyOption => write!(f, "an option is empty"),
            DuplicateOption => write!(f, "two options are the same"),
            UnexpectedOptions => write!(f, "this question type takes no options"),
            BadCorrect { expected, got } => write!(f, "correct must be {expected}, got {got:?}"),
            BlankCount(n) => write!(f, "expected exactly one ___ blank, found {n}"),
            BlankGivesNothingAway => write!(f, "filling the blank gives back the question"),
            OrderAlreadySolved => write!(f, "the steps are already in the correct order"),
            MissingSnippet => write!(f, "this question type needs a snippet"),
            OpenEndedNotSenior => write!(f, "open_ended questions must be senior"),
            MissingRubric(dims) => write!(f, "missing rubric tags for {dims:?}"),
        }
    }
}

impl std::error::Error for QuestionError {}

/// Checks one question against the structural rules of SPEC §6.4. `concept_names` are the
/// names given to the provider; the question's concept must equal one after `normalize_name`.
pub fn validate_question(q: &GeneratedQuestion, concept_names: &[String]) -> Result<(), QuestionError> {
    let concept = normalize_name(&q.concept);
    if concept.is_empty() || !concept_names.iter().any(|n| normalize_name(n) == concept) {
        return Err(QuestionError::UnknownConcept(q.concept.clone()));
    }
    let qtype =
        QuestionType::parse(&q.question_type).ok_or_else(|| QuestionError::UnknownType(q.question_type.clone()))?;
    let level = match q.difficulty.as_str() {
        "junior" => Level::Junior,
        "mid" => Level::Mid,
        "senior" => Level::Senior,
        _ => return Err(QuestionError::BadDifficulty(q.difficulty.clone())),
    };
    if q.question.trim().is_empty() {
        return Err(QuestionError::EmptyQuestion);
    }
    if q.explanation.trim().is_empty() {
        return Err(QuestionError::EmptyExplanation);
    }
    if level == Level::Junior && blank(q.follow_up.as_deref()) {
        return Err(QuestionError::MissingFollowUp);
    }
    match qtype {
        QuestionType::MultipleChoice => check_multiple_choice(q),
        QuestionType::TrueFalse => check_true_false(q),
        QuestionType::FillInBlank => check_fill_in_blank(q),
        QuestionType::Ordering => check_ordering(q),
        QuestionType::CodeReading | QuestionType::SpotTheBug => {
            if blank(q.snippet.as_deref()) {
                return Err(QuestionError::MissingSnippet);
            }
            model_answer(q)
        }
        QuestionType::OpenEnded => check_open_ended(q, level),
    }
}

fn blank(text: Option<&str>) -> bool {
    text.is_none_or(|t| t.trim().is_empty())
}

fn model_answer(q: &GeneratedQuestion) -> Result<(), QuestionError> {
    if blank(q.correct.as_deref()) {
        return Err(bad_correct("a non-empty model answer", q));
    }
    Ok(())
}

fn bad_correct(expected: &'static str, q: &GeneratedQuestion) -> QuestionError {
    QuestionError::BadCorrect { expected, got: q.correct.clone().unwrap_or_default() }
}

/// Options must be non-empty and pairwise distinct (ignoring case and surrounding space).
fn check_options(options: &[String]) -> Result<(), QuestionError> {
    let keys: Vec<String> = options.iter().map(|o| o.trim().to_lowercase()).collect();
    if keys.iter().any(String::is_empty) {
        return Err(QuestionError::EmptyOption);
    }
    for (i, k) in keys.iter().enumerate() {
        if keys[..i].contains(k) {
            return Err(QuestionError::DuplicateOption);
        }
    }
    Ok(())
}

fn check_multiple_choice(q: &GeneratedQuestion) -> Result<(), QuestionError> {
    let options = q.options.as_deref().unwrap_or_default();
    if options.len() != 4 {
        return Err(QuestionError::OptionCount { expected: "exactly 4", got: options.len() });
    }
    check_options(options)?;
    match q.correct.as_deref() {
        Some("A" | "B" | "C" | "D") => Ok(()),
        _ => Err(bad_correct("a letter A-D", q)),
    }
}

fn check_true_false(q: &GeneratedQuestion) -> Result<(), QuestionError> {
    if q.options.as_ref().is_some_and(|o| !o.is_empty()) {
        return Err(QuestionError::UnexpectedOptions);
    }
    match q.correct.as_deref() {
        Some("true" | "false") => Ok(()),
        _ => Err(bad_correct("\"true\" or \"false\"", q)),
    }
}

fn check_fill_in_blank(q: &GeneratedQuestion) -> Result<(), QuestionError> {
    let snippet = q.snippet.as_deref().unwrap_or_default();
    let blanks = count_blanks(snippet) + count_blanks(&q.question);
    if blanks != 1 {
        return Err(QuestionError::BlankCount(blanks));
    }
    let answer = q.correct.as_deref().unwrap_or_default().trim();
    if answer.is_empty() || answer.chars().all(|c| c == '_') {
        return Err(bad_correct("the missing text", q));
    }
    let holder = if count_blanks(snippet) == 1 { snippet } else { q.question.as_str() };
    let completed = replace_blank(holder, answer);
    let same = |a: &str, b: &str| a.to_lowercase().split_whitespace().eq(b.to_lowercase().split_whitespace());
    if same(&completed, &q.question) {
        return Err(QuestionError::BlankGivesNothingAway);
    }
    Ok(())
}

fn check_ordering(q: &GeneratedQuestion) -> Result<(), QuestionError> {
    let steps = q.options.as_deref().unwrap_or_default();
    if !ORDERING_STEPS.contains(&steps.len()) {
        return Err(QuestionError::OptionCount { expected: "4 to 6", got: steps.len() });
    }
    check_options(steps)?;
    let order: Option<Vec<usize>> =
        q.correct.as_deref().unwrap_or_default().split(',').map(|s| s.trim().parse().ok()).collect();
    let expected = "a comma-separated 1-based permutation of the steps";
    let Some(order) = order else {
        return Err(bad_correct(expected, q));
    };
    let mut sorted = order.clone();
    sorted.sort_unstable();
    if sorted != (1..=steps.len()).collect::<Vec<_>>() {
        return Err(bad_correct(expected, q));
    }
    // Steps shown already in order make the question free; models do this surprisingly often.
    if order == sorted {
        return Err(QuestionError::OrderAlreadySolved);
    }
    Ok(())
}

fn check_open_ended(q: &GeneratedQuestion, level: Level) -> Result<(), QuestionError> {
    if level != Level::Senior {
        return Err(QuestionError::OpenEndedNotSenior);
    }
    model_answer(q)?;
    let missing: Vec<&'static str> =
        RUBRIC_DIMENSIONS.into_iter().filter(|d| !q.tags.iter().any(|t| *t == rubric_tag(d))).collect();
    if !missing.is_empty() {
        return Err(QuestionError::MissingRubric(missing));
    }
    Ok(())
}

/// The tag carrying one rubric dimension, e.g. "rubric:trade_offs".
pub fn rubric_tag(dimension: &str) -> String {
    format!("{RUBRIC_TAG_PREFIX}{dimension}")
}

/// How many blanks `text` has: each maximal run of three or more `_` is one blank, so a
/// Python `__init__` (runs of two) is not a blank and `_____` is a single one.
pub fn count_blanks(text: &str) -> usize {
    blank_runs(text).len()
}

/// Byte ranges of the blanks in `text`.
fn blank_runs(text: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut runs = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'_' {
            let start = i;
            while i < bytes.len() && bytes[i] == b'_' {
                i += 1;
            }
            if i - start >= 3 {
                runs.push(start..i);
            }
        } else {
            i += 1;
        }
    }
    runs
}

/// `text` with its first blank replaced by `answer`.
pub(crate) fn replace_blank(text: &str, answer: &str) -> String {
    match blank_runs(text).first() {
        Some(r) => format!("{}{answer}{}", &text[..r.start], &text[r.end..]),
        None => text.to_string(),
    }
}

/// 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3): tiny, stable across
/// platforms and releases (unlike `DefaultHasher`), and good enough to spot repeats among a
/// developer's questions; it is not a security hash.
pub fn fnv1a64(data: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// Stable key for "the same question": FNV-1a 64 of the lowercased text with whitespace
/// collapsed, as 16 lowercase hex digits.
pub fn normalized_text_hash(question: &str) -> String {
    let text = question.to_lowercase().split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{:016x}", fnv1a64(text.as_bytes()))
}

#[cfg(test)]
mod tests;
