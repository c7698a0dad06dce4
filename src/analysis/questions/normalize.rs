//! `normalize_question`: the forgiving clean-up applied to a provider's question before
//! `validate_question`, so near-misses ("MCQ", "(b)", "Yes") are fixed instead of costing a
//! repair round-trip to the model.

use super::GeneratedQuestion;
use crate::analysis::concepts::{Level, normalize_name};

/// Cleans up what models commonly get almost right, before `validate_question`: trims text,
/// maps type and difficulty synonyms ("mcq", "intermediate"), reduces an MC answer like
/// "(b)" or the option's own text to its letter, true/false spellings to "true"/"false",
/// "2, 4 1,3" to "2,4,1,3", lowercases tags, and turns blank optional text into `None`.
pub fn normalize_question(q: &mut GeneratedQuestion) {
    q.concept = q.concept.trim().to_string();
    q.question = q.question.trim().to_string();
    q.explanation = q.explanation.trim().to_string();
    q.question_type = normalize_type(&q.question_type);
    if let Some(level) = Level::parse(&q.difficulty) {
        q.difficulty = level.as_str().to_string();
    }
    for field in [&mut q.snippet, &mut q.follow_up, &mut q.correct] {
        if field.as_deref().is_some_and(|s| s.trim().is_empty()) {
            *field = None;
        }
    }
    if let Some(options) = &mut q.options {
        options.iter_mut().for_each(|o| *o = o.trim().to_string());
    }
    q.tags = q.tags.iter().map(|t| t.trim().to_lowercase()).filter(|t| !t.is_empty()).collect();
    let Some(correct) = q.correct.as_deref().map(str::trim) else {
        return;
    };
    let fixed = match q.question_type.as_str() {
        "multiple_choice" => mc_letter(correct, q.options.as_deref()),
        "true_false" => match correct.to_lowercase().as_str() {
            "true" | "t" | "yes" | "y" => Some("true".to_string()),
            "false" | "f" | "no" | "n" => Some("false".to_string()),
            _ => None,
        },
        "ordering" => Some(
            correct
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(","),
        ),
        _ => None,
    };
    q.correct = Some(fixed.unwrap_or_else(|| correct.to_string()));
}

fn normalize_type(raw: &str) -> String {
    let key = normalize_name(raw).replace(' ', "_");
    let canonical = match key.as_str() {
        "mcq" | "multiple_choice_question" | "multiplechoice" | "choice" => "multiple_choice",
        "true_or_false" | "truefalse" | "boolean" => "true_false",
        "fill_in_the_blank" | "fill_blank" | "cloze" => "fill_in_blank",
        "order" | "sequence" | "sequencing" => "ordering",
        "read_the_code" | "code_comprehension" => "code_reading",
        "find_the_bug" | "bug_hunt" | "debugging" => "spot_the_bug",
        "open" | "open_question" | "essay" | "free_text" => "open_ended",
        other => other,
    };
    canonical.to_string()
}

fn mc_letter(correct: &str, options: Option<&[String]>) -> Option<String> {
    let letter = correct.trim_matches(|c: char| "()[].:) ".contains(c));
    if letter.len() == 1 {
        return Some(letter.to_uppercase());
    }
    let index = options?.iter().position(|o| o.eq_ignore_ascii_case(correct))?;
    Some(["A", "B", "C", "D"].get(index)?.to_string())
}
