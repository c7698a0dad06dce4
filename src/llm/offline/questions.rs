//! The offline provider's questions: [`QUESTIONS_PER_CONCEPT`] per concept, of different
//! types, grounded in the session's own files (`analysis::grounded`), with the catalogue's
//! canned example only for a concept the session's code does not show. A concept met as an
//! error is asked about at the lines of the session's files the error points at, when it
//! names one.
//!
//! # Why two per concept
//! One question per concept gives a 3-concept session at most three types, and a quiz that
//! asks each concept once from one angle. Two of different types per concept reach five or more
//! types on any session with three concepts and keep the quiz short: 6–16 questions for the
//! 3–8 concepts a session yields. A third would make an 8-concept session a 24-question quiz,
//! mostly quoting the same lines again.
//!
//! # Choosing the types
//! Types are picked session-wide: for each concept, the types (open_ended only at senior
//! level) are tried least-used-in-the-session first, ties broken by a rotation that starts at a
//! hash of the concept's name plus its position, so neighbours differ. A type that cannot be
//! grounded at the concept's sites (no known bug applies near them, no function with four
//! statements) is skipped for the next. A question whose text equals (modulo whitespace) one
//! already asked in the session is skipped too.

use super::teaches;
use crate::analysis::catalogue::{self, Entry, render::Evidence, render::render};
use crate::analysis::concept_syntax;
use crate::analysis::concepts::{Concept, Level, normalize_name};
use crate::analysis::grounded::{self, Ask, BUG_TAG_PREFIX, SessionCode, Site};
use crate::analysis::grounding::GroundingKind;
use crate::analysis::model::{FailedCall, Pattern, SourceFile};
use crate::analysis::questions::{GeneratedQuestion, QuestionType, QuestionsAnswer, fnv1a64};
use crate::analysis::{Lang, lang_for_path};
use std::collections::{BTreeMap, BTreeSet};

/// Questions asked per concept when its code is in the session (see the module doc).
pub const QUESTIONS_PER_CONCEPT: usize = 2;

/// Questions for the concepts at their levels, from the session's captured `files` and the
/// static `patterns` found in them (see the module doc). Concepts are expected to be validated
/// (non-empty snippet); a concept the catalogue does not know (named by an LLM) gets one
/// code_reading question built from its own `why_it_matters`, quoting its snippet.
pub fn offline_questions(concepts: &[(Concept, Level)], files: &[SourceFile], patterns: &[Pattern]) -> QuestionsAnswer {
    let code = SessionCode::with_patterns(files, patterns);
    let mut session = Asked::default();
    let session_lang = main_language(files);
    for (index, (concept, level)) in concepts.iter().enumerate() {
        // The entry as it is true in the concept's language (issue 40): a concept whose entry
        // has no text true there gets no catalogue question.
        let lang = lang_for_path(&concept.source_file).or(session_lang);
        let known = catalogue::find(&concept.name);
        // A concept met as an error was chosen for the error's ecosystem (`failures`), which
        // its entry is written for: its own text, where the session's main language differs.
        let about_error = FailedCall::is_label(&concept.source_file);
        let entry = known.and_then(|e| e.in_lang(lang).or_else(|| about_error.then_some(*e)));
        if known.is_some() && entry.is_none() {
            continue;
        }
        let sites = grounded::sites(&code, entry.as_ref(), concept, patterns);
        let before = session.questions.len();
        let refused_before: usize = session.not_written.values().sum();
        if let Some(entry) = entry.as_ref().filter(|_| !sites.is_empty()) {
            for qtype in session.type_order(&concept.name, index, *level) {
                if session.questions.len() - before == QUESTIONS_PER_CONCEPT {
                    break;
                }
                let about_error = FailedCall::is_label(&concept.source_file);
                let first_site = session.questions.len() - before;
                // Whole functions are quoted first; where another question of this type has
                // those lines already, the smaller unit around the site instead.
                // A question of this type refused by a `teaches` rule counts once, whichever
                // of the two quotes was tried.
                let mut refused = None;
                for narrow in [false, true] {
                    let used_bugs = &session.bugs;
                    let ask =
                        Ask { entry, concept: &concept.name, qtype, level: *level, about_error, used_bugs, narrow };
                    let Some(q) = grounded::question(&code, &sites, first_site, &ask) else { continue };
                    // A concept is named only where its syntax is in the lines shown (SPEC §6.4).
                    let rule = match concept_syntax::question_problem(&q, files) {
                        Some(_) => Some(teaches::CONCEPT_NOT_SHOWN),
                        None => teaches::refusal(&q, &code, &concept.source_file),
                    };
                    match rule {
                        Some(rule) => refused = Some(rule),
                        None if session.add(q) => {
                            refused = None;
                            break;
                        }
                        None => {}
                    }
                }
                if let Some(rule) = refused {
                    *session.not_written.entry(rule).or_default() += 1;
                }
            }
        }
        // The canned fallback is for a concept whose code the session does not show, not one
        // whose questions on its code were refused as teaching nothing: that concept goes
        // unasked (issue 40 §5).
        let refused_here = session.not_written.values().sum::<usize>() > refused_before;
        if session.questions.len() == before && !refused_here {
            let fallback =
                fallback_question(&code, (concept, entry.as_ref()), (*level, index), &sites, &session.placed);
            // Held to the site questions' rules: the concept's syntax in the lines shown, and
            // no snippet past a screen (a long class whose header is the only site quotes it
            // whole here).
            let fallback =
                fallback.filter(|q| concept_syntax::question_problem(q, files).is_none() && grounded::fits_screen(q));
            match fallback.as_ref().and_then(|q| teaches::refusal(q, &code, &concept.source_file)) {
                Some(rule) => *session.not_written.entry(rule).or_default() += 1,
                None => {
                    if let Some(q) = fallback {
                        session.add(q);
                    }
                }
            }
        }
    }
    QuestionsAnswer { questions: session.questions, not_written: session.not_written }
}

/// Tag of a question written to re-teach a leech's concept (SPEC §7).
pub const RETEACH_TAG: &str = "reteach";

/// A question that re-teaches a leech's concept from another angle (SPEC §7): the same code
/// (the concept's sites in the session's files, the leech's file first), a type in none of
/// `avoid` (the leech's type and every type the concept already has, so it is new), the
/// first such type that can be grounded there. `None` when no other type fits that code.
pub fn reteach_question(
    concept: &Concept,
    level: Level,
    files: &[SourceFile],
    patterns: &[Pattern],
    avoid: &[String],
    leech_file: Option<&str>,
) -> Option<GeneratedQuestion> {
    let code = SessionCode::new(files);
    let lang = lang_for_path(&concept.source_file).or_else(|| main_language(files));
    let entry = &catalogue::find_in(&concept.name, lang)?;
    let mut sites = grounded::sites(&code, Some(entry), concept, patterns);
    if let Some(file) = leech_file {
        // Stable: the leech's own file first, the ranking kept within each group.
        sites.sort_by_key(|site| files.get(site.file).is_none_or(|f| f.path != file));
    }
    if sites.is_empty() {
        return None;
    }
    let about_error = FailedCall::is_label(&concept.source_file);
    let order = (0..level_types(level).len()).map(|k| level_types(level)[k]);
    for qtype in order.filter(|t| !avoid.iter().any(|a| a == t.as_str())) {
        let ask = Ask { entry, concept: &concept.name, qtype, level, about_error, used_bugs: &[], narrow: false };
        if let Some(mut q) = grounded::question(&code, &sites, 0, &ask)
            && concept_syntax::question_problem(&q, files).is_none()
        {
            q.tags.push(RETEACH_TAG.to_owned());
            return Some(q);
        }
    }
    None
}

/// The questions of a session so far, with what type selection and de-duplication need.
#[derive(Default)]
struct Asked {
    questions: Vec<GeneratedQuestion>,
    per_type: BTreeMap<String, usize>,
    texts: BTreeSet<String>,
    /// Blanks and bugs already planted (file, first line, last line, edited line): two concepts
    /// at one site would otherwise get the same snippet twice.
    edits: BTreeSet<(String, u32, u32, u32)>,
    /// The bugs planted so far (rule ids), so the next spot_the_bug prefers another kind.
    bugs: Vec<String>,
    /// (type, file, first line, last line) of every grounded question: two questions of one
    /// type on the same lines are one question asked twice (issue 25).
    placed: BTreeSet<(String, String, u32, u32)>,
    /// Questions built and not written, by the `teaches` rule that refused them.
    not_written: BTreeMap<&'static str, usize>,
    /// What each spot_the_bug's edit removes and adds: two rules can make one edit
    /// (`err != nil` flipped by the error-check rule and by the comparison rule).
    mutations: BTreeSet<(String, String)>,
}

impl Asked {
    /// The types to try for the `index`-th concept, least used in the session first.
    fn type_order(&self, name: &str, index: usize, level: Level) -> Vec<QuestionType> {
        let types = level_types(level);
        let start = types.iter().position(|t| *t == question_type_for(name, index, level)).unwrap_or(0);
        let mut order: Vec<QuestionType> = (0..types.len()).map(|k| types[(start + k) % types.len()]).collect();
        // Stable: among equally used types the rotation decides.
        order.sort_by_key(|t| self.per_type.get(t.as_str()).copied().unwrap_or(0));
        order
    }

    /// Adds `q` unless a question with the same text (modulo whitespace), the same blank or
    /// bug in the same lines, or the same type on the same lines is already there.
    /// Whether it was added.
    fn add(&mut self, q: GeneratedQuestion) -> bool {
        let place = q.grounding.as_ref().map(|g| (q.question_type.clone(), g.file.clone(), g.line_start, g.line_end));
        if place.as_ref().is_some_and(|p| self.placed.contains(p)) {
            return false;
        }
        let text = q.question.split_whitespace().collect::<Vec<_>>().join(" ");
        // A bug planted on a line is one question whatever unit quotes it (two concepts'
        // spot-the-bugs on one `if err != nil` are the same mutation); so is a blank on a line
        // (two concepts' blanks on one `.filter(…)`, quoted with more or fewer lines around).
        let blank_line = |g: &crate::analysis::grounding::Grounding| {
            let row = q.snippet.as_deref()?.lines().position(|l| l.contains("___"))?;
            Some(g.line_start + row as u32)
        };
        let edit = q.grounding.as_ref().filter(|g| g.kind != GroundingKind::Quote).map(|g| match &g.mutation {
            Some(m) => (g.file.clone(), 0, 0, m.line),
            None => match blank_line(g) {
                Some(line) => (g.file.clone(), u32::MAX, 0, line),
                None => (g.file.clone(), g.line_start, g.line_end, 0),
            },
        });
        let mutation = crate::analysis::lint::mutation_edit(&q);
        if self.texts.contains(&text)
            || edit.as_ref().is_some_and(|e| self.edits.contains(e))
            || mutation.as_ref().is_some_and(|m| self.mutations.contains(m))
        {
            return false;
        }
        self.mutations.extend(mutation);
        self.edits.extend(edit);
        self.bugs.extend(q.tags.iter().filter_map(|t| t.strip_prefix(BUG_TAG_PREFIX)).map(str::to_string));
        if self.texts.insert(text) {
            *self.per_type.entry(q.question_type.clone()).or_default() += 1;
            self.placed.extend(place);
            self.questions.push(q);
            return true;
        }
        false
    }
}

/// The types asked at `level`: open_ended (last in `QuestionType::ALL`) only at senior level.
fn level_types(level: Level) -> &'static [QuestionType] {
    if level == Level::Senior { &QuestionType::ALL[..] } else { &QuestionType::ALL[..6] }
}

/// The type for the `index`-th concept of a session: a hash of its normalised name picks the
/// starting type and the index rotates from there, so neighbours differ.
pub fn question_type_for(name: &str, index: usize, level: Level) -> QuestionType {
    let types = level_types(level);
    let start = fnv1a64(normalize_name(name).as_bytes()) % types.len() as u64;
    types[(start as usize + index) % types.len()]
}

/// One question for a concept the session's code does not show: the catalogue's template over
/// the concept's own snippet (an error that names no captured file, say), or for a concept the catalogue
/// does not know, a code_reading question quoting the snippet. `None` where the template would
/// show the catalogue's example in place of the user's code (issue 40 §2), but for a concept
/// met as an error, whose entry is the error's ecosystem's.
/// `placed` holds the (type, file, lines) of the session's questions so far: a question
/// showing the concept's own code is not a second one of a type on the same lines.
fn fallback_question(
    code: &SessionCode<'_>,
    (concept, entry): (&Concept, Option<&Entry>),
    (level, index): (Level, usize),
    sites: &[Site],
    placed: &BTreeSet<(String, String, u32, u32)>,
) -> Option<GeneratedQuestion> {
    match entry {
        Some(entry) => {
            let qtype = question_type_for(&concept.name, index, level);
            // A cited snippet that cuts a statement is quoted as the whole unit around it.
            let whole = grounded::whole_snippet(code, &concept.source_file, &concept.snippet);
            let snippet = whole.as_deref().unwrap_or(&concept.snippet);
            let evidence = Evidence { concept: &concept.name, file: &concept.source_file, snippet };
            // Where the concept's own code is in the session, a type that shows it rather than
            // the catalogue's example, which may be in another language (issue 31: a TypeScript
            // interface in a Rust session); the rotation's type when none does.
            if let Some(at) = grounded::locate_snippet(code, &concept.source_file, snippet) {
                let types = level_types(level);
                let start = types.iter().position(|t| *t == qtype).unwrap_or(0);
                let free = |q: &GeneratedQuestion| {
                    !placed.contains(&(q.question_type.clone(), at.file.clone(), at.line_start, at.line_end))
                };
                let shown = (0..types.len())
                    .map(|k| render(entry, types[(start + k) % types.len()], level, &evidence))
                    .find(|q| shows_code(q, snippet) && free(q));
                if let Some(q) = shown {
                    return Some(q);
                }
                // Every type that shows this code is on those lines already: the rotation's
                // type, placed there, so that the session's `add` refuses it as a second of
                // its type on one place, as the quiz job's validator would.
                // A question that shows the catalogue's example instead is not written: an
                // example is never shown where the user's code is (issue 40 §2); nor is one
                // that shows no code where the concept's code is (it would be the only
                // ungrounded question of a session whose code is all there).
                let mut q = render(entry, qtype, level, &evidence);
                if !shows_code(&q, snippet) {
                    return None;
                }
                q.grounding = Some(at);
                return Some(q);
            }
            let q = render(entry, qtype, level, &evidence);
            // The concept's snippet is in no captured file: only a concept met as an error
            // (its entry in the error's ecosystem) is asked over code that is not the user's.
            let canned = q.snippet.as_deref().is_some_and(|_| !shows_code(&q, snippet));
            (!canned || FailedCall::is_label(&concept.source_file)).then_some(q)
        }
        None => {
            let mut q = unknown_concept_question(concept, level);
            if !sites.is_empty() {
                q.grounding = grounded::locate_snippet(code, &concept.source_file, &concept.snippet);
            }
            Some(q)
        }
    }
}

/// The language most of `files` are in (the first met on a tie), for a concept cited at an
/// error's label rather than a file.
fn main_language(files: &[SourceFile]) -> Option<Lang> {
    let langs: Vec<Lang> = files.iter().filter_map(|f| lang_for_path(&f.path)).collect();
    let count = |l: &Lang| langs.iter().filter(|x| *x == l).count();
    langs.iter().copied().rev().max_by_key(count)
}

/// Whether `q` shows `code` (with at most one line blanked or changed), not another snippet.
fn shows_code(q: &GeneratedQuestion, code: &str) -> bool {
    let Some(shown) = q.snippet.as_deref() else { return false };
    let (shown, code): (Vec<&str>, Vec<&str>) = (shown.lines().collect(), code.lines().collect());
    shown.len() == code.len() && shown.iter().zip(&code).filter(|(a, b)| a.trim() != b.trim()).count() <= 1
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
