//! The offline provider (SPEC §6.5): concepts and questions from the catalogue, with no
//! network and no randomness, so `vl demo` and the tests run anywhere and the same session
//! always gives the same answer.
//!
//! Concepts: first the errors the session met (failed tool calls, at most
//! [`select::MAX_ERROR_CONCEPTS`], one per kind of error), each citing the failed call and the
//! lines of its error that show the problem; then every catalogue entry is scored by the
//! static-analysis patterns its signals match; the best 3–8 are kept (at most two per category on the first pass, for variety),
//! each citing the file and a verbatim snippet of the pattern that matched best, so
//! `validate_concepts` accepts it. When the code yields fewer than three, entries that fit the
//! stack and whose tokens occur in a captured file are added, then generic entries (imports,
//! functions, early returns), so a session with any code yields at least three.
//!
//! Questions: one per concept at the requested level; the type rotates over the seven types
//! by a hash of the concept name plus its position, so a session gets a mix (open_ended only
//! at senior level).

mod select;
mod summary;

use crate::analysis::catalogue::{self, render::Evidence, render::render};
use crate::analysis::concepts::{Concept, ConceptsAnswer, Level, MAX_CONCEPTS, MIN_CONCEPTS, normalize_name};
use crate::analysis::model::{FailedCall, Pattern, SourceFile, StackProfile};
use crate::analysis::questions::{GeneratedQuestion, QuestionType, QuestionsAnswer, fnv1a64};
use select::{Pick, fill_from_stack, pick_from_failures, pick_from_patterns};

/// Concepts for a session from its static patterns, stack, files and the errors it met (see
/// the module doc).
pub fn offline_concepts(
    stack: &StackProfile,
    patterns: &[Pattern],
    files: &[SourceFile],
    failures: &[FailedCall],
    prompts: &[String],
) -> ConceptsAnswer {
    // Errors first: where the developer got stuck is what they most need to understand.
    let mut picked = pick_from_failures(failures);
    for pick in pick_from_patterns(patterns, files) {
        if picked.len() < MAX_CONCEPTS && !picked.iter().any(|p| p.is_entry(&pick)) {
            picked.push(pick);
        }
    }
    if picked.len() < MIN_CONCEPTS {
        fill_from_stack(&mut picked, stack, patterns, files);
    }
    let concepts: Vec<Concept> = picked.iter().map(Pick::to_concept).collect();
    ConceptsAnswer { summary: summary::summary(stack, patterns, files, prompts, &concepts), concepts }
}

/// One question per concept at its level (see the module doc). Concepts are expected to be
/// validated (non-empty snippet); a concept the catalogue does not know (named by an LLM)
/// gets a code_reading question built from its own `why_it_matters`.
pub fn offline_questions(concepts: &[(Concept, Level)]) -> QuestionsAnswer {
    let questions = concepts
        .iter()
        .enumerate()
        .map(|(i, (concept, level))| {
            let qtype = question_type_for(&concept.name, i, *level);
            let evidence = Evidence { concept: &concept.name, file: &concept.source_file, snippet: &concept.snippet };
            match catalogue::find(&concept.name) {
                Some(entry) => render(entry, qtype, *level, &evidence),
                None => unknown_concept_question(concept, *level),
            }
        })
        .collect();
    QuestionsAnswer { questions }
}

/// The type for the `index`-th concept of a session: a hash of its normalised name picks the
/// starting type and the index rotates from there, so neighbours differ. Open-ended (last in
/// `QuestionType::ALL`) is only in the rotation at senior level.
pub fn question_type_for(name: &str, index: usize, level: Level) -> QuestionType {
    let types = if level == Level::Senior { &QuestionType::ALL[..] } else { &QuestionType::ALL[..6] };
    let start = fnv1a64(normalize_name(name).as_bytes()) % types.len() as u64;
    types[(start as usize + index) % types.len()]
}

fn unknown_concept_question(concept: &Concept, level: Level) -> GeneratedQuestion {
    let name = concept.name.trim();
    let why = concept.why_it_matters.trim();
    let answer = if why.is_empty() { format!("The code relies on {name}.") } else { why.to_string() };
    GeneratedQuestion {
        concept: concept.name.clone(),
        question_type: QuestionType::CodeReading.as_str().to_string(),
        difficulty: level.as_str().to_string(),
        snippet: Some(concept.snippet.clone()),
        question: format!(
            "Read this code from {}. Where does it use {name}, and why does that matter here?",
            concept.source_file
        ),
        options: None,
        correct: Some(answer.clone()),
        explanation: answer,
        follow_up: (level == Level::Junior).then(|| format!("How would this code change without {name}?")),
        tags: vec![concept.category.clone(), normalize_name(name).replace(' ', "-")],
        grounding: None,
    }
}

#[cfg(test)]
mod tests;
