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
//! Questions (`questions`): two per concept, of different types, built from the session's own
//! files where the concept occurs (`analysis::grounded`); the catalogue's canned example only
//! for a concept the session's code does not show.

mod questions;
mod select;
mod summary;
mod teaches;

pub use questions::{QUESTIONS_PER_CONCEPT, RETEACH_TAG, offline_questions, question_type_for, reteach_question};

use crate::analysis::concepts::Level;
use crate::analysis::questions::{GeneratedQuestion, QuestionsAnswer};
use crate::analysis::story::{Fix, story_questions};

/// A session's offline questions as the quiz job asks them: the session's own story first
/// (`analysis::story`: its failure and the edit that fixed it), then two per concept from its
/// code. A catalogue question with no code for a concept the story already asks about is not
/// written (counted under `teaches::ASKED_BY_THE_STORY`): the story shows the error itself.
pub fn session_questions(
    concepts: &[(Concept, Level)],
    files: &[SourceFile],
    patterns: &[Pattern],
    failures: &[FailedCall],
    fix: Option<&Fix>,
) -> QuestionsAnswer {
    let mut questions: Vec<GeneratedQuestion> = story_questions(concepts, failures, fix, files);
    let mut answer = offline_questions(concepts, files, patterns);
    let before = answer.questions.len();
    let told: Vec<String> = questions.iter().map(|q| q.concept.clone()).collect();
    answer.questions.retain(|q| q.snippet.is_some() || !told.contains(&q.concept));
    let asked_by_story = before - answer.questions.len();
    if asked_by_story > 0 {
        *answer.not_written.entry(teaches::ASKED_BY_THE_STORY).or_default() += asked_by_story;
    }
    questions.append(&mut answer.questions);
    QuestionsAnswer { questions, not_written: answer.not_written }
}

use crate::analysis::concepts::{Concept, ConceptsAnswer, MAX_CONCEPTS, MIN_CONCEPTS};
use crate::analysis::model::{FailedCall, Pattern, SourceFile, StackProfile};
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
    let mut picked = pick_from_failures(failures, files);
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

#[cfg(test)]
mod tests;
