//! The question lint (issue 40, "How you measure it"): over one session's code (its captured
//! files, its failed calls and the edit that fixed one) and the questions written for it,
//! which questions break which rule. Pure: data in, findings out. It measures; it refuses
//! nothing (the quiz job's validator is `jobs::question_checks`).
//!
//! The rules, each in [`rules`] with its unit tests:
//! - [`Rule::ForeignWords`]: the prose names another ecosystem's construct ([`vocabulary`]).
//! - [`Rule::NotSessionCode`]: a snippet line occurs in no captured file and no failure text.
//! - [`Rule::CutUnit`]: the snippet ends inside an open bracket or at a dangling `where`,
//!   operator or body-less `impl … for …`. Bracket balance over the snippet masked by its own
//!   parse (`syntax::mask_comments_and_strings`), so a Python or Ruby block cut at a statement
//!   boundary (no bracket open) goes unseen.
//! - [`Rule::KeywordBlank`]: a blank whose answer is a declaration keyword or a lone sigil.
//! - [`Rule::RepeatedMutation`]: a spot-the-bug with the same edit as an earlier one.
//! - [`Rule::MissedStory`]: a session with a failure and a fix has no question on either.
//! - [`Rule::Oversized`]: a snippet longer than [`MAX_SNIPPET_LINES`].

mod rules;
pub mod vocabulary;

use serde::Serialize;

use crate::analysis::model::{FailedCall, SourceFile};
use crate::analysis::questions::GeneratedQuestion;
use crate::analysis::{Lang, lang_for_path};

pub use rules::MAX_SNIPPET_LINES;

/// One rule of the lint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Rule {
    ForeignWords,
    NotSessionCode,
    CutUnit,
    KeywordBlank,
    RepeatedMutation,
    MissedStory,
    Oversized,
}

impl Rule {
    pub const ALL: [Rule; 7] = [
        Rule::ForeignWords,
        Rule::NotSessionCode,
        Rule::CutUnit,
        Rule::KeywordBlank,
        Rule::RepeatedMutation,
        Rule::MissedStory,
        Rule::Oversized,
    ];

    /// The rule's name in the baseline file and the printed table.
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::ForeignWords => "foreign_words",
            Rule::NotSessionCode => "not_session_code",
            Rule::CutUnit => "cut_unit",
            Rule::KeywordBlank => "keyword_blank",
            Rule::RepeatedMutation => "repeated_mutation",
            Rule::MissedStory => "missed_story",
            Rule::Oversized => "oversized_snippet",
        }
    }
}

pub use crate::analysis::story::Fix;

/// What the lint knows of a session.
#[derive(Debug, Clone, Copy)]
pub struct LintSession<'a> {
    pub files: &'a [SourceFile],
    pub failures: &'a [FailedCall],
    pub fix: Option<&'a Fix>,
}

impl LintSession<'_> {
    /// The language most of the session's files are in.
    pub fn language(&self) -> Option<Lang> {
        let mut counts: Vec<(Lang, usize)> = Vec::new();
        for lang in self.files.iter().filter_map(|f| lang_for_path(&f.path)) {
            match counts.iter_mut().find(|(l, _)| *l == lang) {
                Some((_, n)) => *n += 1,
                None => counts.push((lang, 1)),
            }
        }
        // Most files first; on a tie, the first met.
        counts.iter().rev().max_by_key(|(_, n)| *n).map(|(l, _)| *l)
    }

    /// The language a question speaks to: its cited file's, else the session's.
    fn language_of(&self, q: &GeneratedQuestion) -> Option<Lang> {
        q.grounding.as_ref().and_then(|g| lang_for_path(&g.file)).or_else(|| self.language())
    }
}

/// One question (by its index in the list given) that breaks one rule; `question` is `None`
/// for a session-wide finding ([`Rule::MissedStory`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub rule: Rule,
    pub question: Option<usize>,
    pub detail: String,
}

/// Whether a blank whose answer is `answer` breaks [`Rule::KeywordBlank`]: for a builder that
/// refuses such a blank before writing it (`analysis::story`), so the two never disagree.
pub fn is_keyword_blank(answer: &str) -> bool {
    let q = GeneratedQuestion {
        concept: String::new(),
        question_type: "fill_in_blank".into(),
        difficulty: String::new(),
        snippet: None,
        question: String::new(),
        options: None,
        correct: Some(answer.to_string()),
        explanation: String::new(),
        follow_up: None,
        tags: Vec::new(),
        grounding: None,
    };
    rules::keyword_blank(&q).is_some()
}

/// What a spot-the-bug's edit removes and adds (the common head and tail trimmed), the key
/// two questions with one mutation share; `None` for other questions.
pub fn mutation_edit(q: &GeneratedQuestion) -> Option<(String, String)> {
    if q.question_type != "spot_the_bug" {
        return None;
    }
    let m = q.grounding.as_ref()?.mutation.as_ref()?;
    Some(rules::edit_of(m.original.trim(), m.mutated.trim()))
}

/// Every finding of every rule over `questions`, in question order, then session-wide.
pub fn lint(session: &LintSession<'_>, questions: &[GeneratedQuestion]) -> Vec<Finding> {
    let mut findings = Vec::new();
    let known = rules::KnownLines::of(session);
    let mut mutations = rules::Mutations::default();
    for (i, q) in questions.iter().enumerate() {
        let lang = session.language_of(q);
        let per_question = [
            (Rule::ForeignWords, lang.and_then(|l| rules::foreign_words(q, l))),
            (Rule::NotSessionCode, rules::not_session_code(q, &known)),
            (Rule::CutUnit, rules::cut_unit(q, lang)),
            (Rule::KeywordBlank, rules::keyword_blank(q)),
            (Rule::RepeatedMutation, mutations.repeated(q)),
            (Rule::Oversized, rules::oversized(q)),
        ];
        for (rule, detail) in per_question {
            if let Some(detail) = detail {
                findings.push(Finding { rule, question: Some(i), detail });
            }
        }
    }
    if let Some(detail) = rules::missed_story(session, questions) {
        findings.push(Finding { rule: Rule::MissedStory, question: None, detail });
    }
    findings
}

#[cfg(test)]
mod tests;
