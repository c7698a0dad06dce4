//! Verifying a question against the session's files (issue 16, SPEC §6.4): that the code it
//! shows comes from them, and that its answer key re-applied to that code gives the file back.
//! Pure: a question and the session's `SourceFile`s in, the checked `Grounding` or a typed
//! error out. The error messages are written for a model: they become the repair prompt.
//!
//! # Rules
//! Code is compared *modulo whitespace*: every whitespace character (spaces, tabs, CR, line
//! breaks) is ignored on both sides, so a re-indented, re-wrapped or CRLF copy still matches.
//! - A declared grounding names a captured file (suffixes match, as for concepts) and a line
//!   range inside it, then by kind:
//!   - `quote`: the snippet occurs within the cited lines; the range is narrowed to the lines
//!     it really covers.
//!   - `blank`: the snippet has exactly one `___`; filled with `correct` it occurs within the
//!     cited lines, and where the blank is the snippet's first (last) text the match starts
//!     (ends) at a line boundary, so a partial answer (`fetc` for `fetch`) is refused.
//!   - `mutation`: the `LineEdit`'s line lies in the range and its `original` is the file's
//!     line; the snippet is the cited lines with that one line replaced by `mutated` (an empty
//!     `mutated` removes the line), so reverting the edit restores the file.
//! - An undeclared grounding is located: a fill_in_blank snippet by its filled-in text, any
//!   other snippet as a quote (the first occurrence, in file order). A snippet found nowhere is
//!   refused, or with `CannedCode::Allowed` leaves the question ungrounded (the offline
//!   catalogue's examples, where the session has no site for a concept).
//! - A question with no snippet is ungrounded unless its text quotes code: a fenced block or
//!   an inline `code` span that is one or more whole lines of a file.
//! - Kinds fit types: `blank` only for fill_in_blank (whose snippet holds the blank), `mutation`
//!   only for spot_the_bug. A spot_the_bug `quote` is the developer's own bug, allowed.
//!
//! - An ordering question showing no snippet quotes its steps: put in the answer's order, they
//!   must be whole lines of the cited range, top to bottom.
//!
//! The other answer-key checks (an ordering's permutation, a multiple-choice letter among four
//! distinct options) are structural and live in `questions::validate_question`.

use thiserror::Error;

use super::concepts::path_matches;
use super::grounding::{Grounding, GroundingKind, LineEdit};
use super::model::SourceFile;
use super::path_index::may_match;
use super::questions::{GeneratedQuestion, QuestionType, count_blanks, replace_blank};

/// What to do with a snippet that occurs in none of the session's files and declares no
/// grounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CannedCode {
    /// Keep the question, ungrounded: the offline catalogue's fallback examples.
    Allowed,
    /// Refuse it: an LLM was asked to quote the session's code, so this is fabricated.
    Refused,
}

/// Why a question's code or answer key does not check out against the session's files.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GroundingError {
    #[error("the grounding cites file {0:?}, which is not one of the session's files")]
    UnknownFile(String),
    #[error("the grounding cites lines {line_start}-{line_end} of {file}, which has {lines} lines")]
    LinesOutOfRange { file: String, line_start: u32, line_end: u32, lines: usize },
    #[error("the question declares a grounding but shows no code: put the cited lines in the snippet")]
    NoCode,
    #[error("the snippet is not found in lines {line_start}-{line_end} of {file} (whitespace aside){hint}")]
    QuoteMismatch { file: String, line_start: u32, line_end: u32, hint: String },
    #[error(
        "the snippet occurs in none of the session's files: quote their code exactly (whitespace aside), \
         or for spot_the_bug declare the one mutated line"
    )]
    NotInSession,
    #[error("a blank grounding needs exactly one ___ in the snippet, found {0}")]
    BlankCount(usize),
    #[error("filling the blank with {answer:?} does not give back lines {line_start}-{line_end} of {file}")]
    BlankDoesNotRestore { answer: String, file: String, line_start: u32, line_end: u32 },
    #[error("filling the blank with {answer:?} gives code that is in none of the session's files")]
    BlankNotInSession { answer: String },
    #[error("a mutation grounding needs the edited line: \"mutation\": {{\"line\", \"original\", \"mutated\"}}")]
    MissingMutation,
    #[error("the mutated line {line} is outside the cited lines {line_start}-{line_end}")]
    MutationOutsideRange { line: u32, line_start: u32, line_end: u32 },
    #[error("line {line} of {file} is {actual:?}, not the mutation's original {original:?}")]
    MutationOriginalMismatch { file: String, line: u32, actual: String, original: String },
    #[error("the mutation leaves line {line} as it is: mutated must differ from original")]
    MutationChangesNothing { line: u32 },
    #[error(
        "the snippet is not lines {line_start}-{line_end} of {file} with line {line} replaced by the mutated \
         line, so reverting the mutation does not restore the file"
    )]
    MutationNotReversible { file: String, line_start: u32, line_end: u32, line: u32 },
    #[error(
        "step {position} of the correct order is not the next whole line of lines {line_start}-{line_end} of {file}: \
         an ordering's steps are lines of the cited code, and the correct order gives them top to bottom"
    )]
    StepsOutOfOrder { file: String, line_start: u32, line_end: u32, position: usize },
    #[error("a {kind} grounding does not fit a {question_type} question ({rule})")]
    KindNotForType { kind: &'static str, question_type: String, rule: &'static str },
}

/// Checks `q`'s code and answer key against `files` and returns its grounding (`file` set to
/// the captured path), `None` for a question that shows no code of the session, or why not.
pub fn verify_grounding(
    q: &GeneratedQuestion,
    files: &[SourceFile],
    canned: CannedCode,
) -> Result<Option<Grounding>, GroundingError> {
    match &q.grounding {
        Some(declared) => check_declared(q, declared, files).map(Some),
        None => locate(q, files, canned),
    }
}

/// `text` without any whitespace: how code is compared.
fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// A file's text squeezed, with the 1-based line of every byte of it.
struct SqueezedFile {
    text: String,
    line_of: Vec<u32>,
}

impl SqueezedFile {
    fn of_lines<'a>(lines: impl Iterator<Item = (u32, &'a str)>) -> SqueezedFile {
        let mut text = String::new();
        let mut line_of = Vec::new();
        for (number, line) in lines {
            for c in line.chars().filter(|c| !c.is_whitespace()) {
                text.push(c);
                line_of.extend(std::iter::repeat_n(number, c.len_utf8()));
            }
        }
        SqueezedFile { text, line_of }
    }

    /// Every occurrence of `needle` (squeezed, non-empty) as (first line, last line, starts a
    /// line, ends a line).
    fn occurrences(&self, needle: &str) -> Vec<Occurrence> {
        if needle.is_empty() {
            return Vec::new();
        }
        self.text
            .match_indices(needle)
            .map(|(start, found)| {
                let end = start + found.len();
                Occurrence {
                    first_line: self.line_of[start],
                    last_line: self.line_of[end - 1],
                    starts_line: start == 0 || self.line_of[start - 1] != self.line_of[start],
                    ends_line: end == self.text.len() || self.line_of[end] != self.line_of[end - 1],
                }
            })
            .collect()
    }
}

#[derive(Debug, Clone, Copy)]
struct Occurrence {
    first_line: u32,
    last_line: u32,
    starts_line: bool,
    ends_line: bool,
}

impl Occurrence {
    fn whole_lines(self) -> bool {
        self.starts_line && self.ends_line
    }
}

/// The file's lines, numbered from 1 (`lines()` also drops a CR before each LF).
fn numbered_lines(content: &str) -> impl Iterator<Item = (u32, &str)> {
    content.lines().zip(1u32..).map(|(line, n)| (n, line))
}

fn grounding(file: &SourceFile, kind: GroundingKind, lines: (u32, u32), mutation: Option<LineEdit>) -> Grounding {
    Grounding { file: file.path.clone(), line_start: lines.0, line_end: lines.1, kind, mutation }
}

/// A fill_in_blank snippet holding its blank: the text before and after it, and the snippet
/// filled with the answer.
struct FilledBlank {
    answer: String,
    filled: String,
    blank_first: bool,
    blank_last: bool,
}

impl FilledBlank {
    fn of(q: &GeneratedQuestion, snippet: &str) -> FilledBlank {
        let answer = q.correct.as_deref().unwrap_or_default().trim().to_string();
        const MARK: &str = "\u{0}";
        let marked = squeeze(&replace_blank(snippet, MARK));
        FilledBlank {
            filled: squeeze(&replace_blank(snippet, &answer)),
            blank_first: marked.starts_with(MARK),
            blank_last: marked.ends_with(MARK),
            answer,
        }
    }

    /// Whether an occurrence of `filled` puts the answer exactly where the line has it.
    fn fits(&self, at: Occurrence) -> bool {
        !self.answer.is_empty() && (!self.blank_first || at.starts_line) && (!self.blank_last || at.ends_line)
    }
}

fn snippet_of(q: &GeneratedQuestion) -> Option<&str> {
    q.snippet.as_deref().filter(|s| !s.trim().is_empty())
}

fn is_type(q: &GeneratedQuestion, wanted: QuestionType) -> bool {
    QuestionType::parse(&q.question_type) == Some(wanted)
}

fn check_kind_fits_type(q: &GeneratedQuestion, kind: GroundingKind) -> Result<(), GroundingError> {
    let refuse = |rule| {
        Err(GroundingError::KindNotForType { kind: kind.as_str(), question_type: q.question_type.clone(), rule })
    };
    let blank_in_snippet = snippet_of(q).is_some_and(|s| count_blanks(s) > 0);
    match kind {
        GroundingKind::Blank if !is_type(q, QuestionType::FillInBlank) => {
            refuse("a blank grounds only fill_in_blank questions")
        }
        GroundingKind::Mutation if !is_type(q, QuestionType::SpotTheBug) => {
            refuse("a mutation grounds only spot_the_bug questions")
        }
        GroundingKind::Quote if blank_in_snippet && is_type(q, QuestionType::FillInBlank) => {
            refuse("a snippet with a ___ blank is grounded as a blank")
        }
        _ => Ok(()),
    }
}

fn check_declared(
    q: &GeneratedQuestion,
    declared: &Grounding,
    files: &[SourceFile],
) -> Result<Grounding, GroundingError> {
    check_kind_fits_type(q, declared.kind)?;
    let mut first_error = None;
    // A bare "index.ts" can name several files: the first one that checks out wins.
    // `may_match` first: no allocation for the files that end in another name (issue 43 §4).
    let named = |f: &&SourceFile| may_match(&f.path, &declared.file) && path_matches(&f.path, &declared.file);
    for file in files.iter().filter(named) {
        match check_in_file(q, declared, file) {
            Ok(grounding) => return Ok(grounding),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.unwrap_or_else(|| GroundingError::UnknownFile(declared.file.clone())))
}

fn check_in_file(q: &GeneratedQuestion, declared: &Grounding, file: &SourceFile) -> Result<Grounding, GroundingError> {
    let (start, end) = (declared.line_start, declared.line_end);
    let lines = file.content.lines().count();
    if start == 0 || start > end || end as usize > lines {
        return Err(GroundingError::LinesOutOfRange {
            file: file.path.clone(),
            line_start: start,
            line_end: end,
            lines,
        });
    }
    let cited = SqueezedFile::of_lines(numbered_lines(&file.content).filter(|(n, _)| (start..=end).contains(n)));
    match declared.kind {
        GroundingKind::Quote if snippet_of(q).is_none() && is_type(q, QuestionType::Ordering) => {
            check_ordering_steps(q, file, (start, end))
        }
        GroundingKind::Quote => {
            let code = quoted_code(q).ok_or(GroundingError::NoCode)?;
            // Code in the question's text counts only as whole lines, as when it is located.
            let in_text = snippet_of(q).is_none();
            code.iter()
                .find_map(|c| cited.occurrences(&squeeze(c)).into_iter().find(|at| !in_text || at.whole_lines()))
                .map(|at| grounding(file, GroundingKind::Quote, (at.first_line, at.last_line), None))
                .ok_or_else(|| GroundingError::QuoteMismatch {
                    file: file.path.clone(),
                    line_start: start,
                    line_end: end,
                    hint: where_else(file, &code),
                })
        }
        GroundingKind::Blank => {
            let snippet = snippet_of(q).ok_or(GroundingError::NoCode)?;
            let blanks = count_blanks(snippet);
            if blanks != 1 {
                return Err(GroundingError::BlankCount(blanks));
            }
            let blank = FilledBlank::of(q, snippet);
            cited
                .occurrences(&blank.filled)
                .into_iter()
                .find(|&at| blank.fits(at))
                .map(|at| grounding(file, GroundingKind::Blank, (at.first_line, at.last_line), None))
                .ok_or_else(|| GroundingError::BlankDoesNotRestore {
                    answer: blank.answer.clone(),
                    file: file.path.clone(),
                    line_start: start,
                    line_end: end,
                })
        }
        GroundingKind::Mutation => check_mutation(q, declared, file),
    }
}

/// An ordering question whose steps are lines of code (it shows no snippet: that would give
/// the order away): re-applying its answer key, the steps in the answer's order, must find
/// each step as a whole line of the cited range, top to bottom. The range narrows to the
/// steps' lines.
fn check_ordering_steps(
    q: &GeneratedQuestion,
    file: &SourceFile,
    (start, end): (u32, u32),
) -> Result<Grounding, GroundingError> {
    let steps = q.options.as_deref().unwrap_or_default();
    let order: Vec<usize> =
        q.correct.as_deref().unwrap_or_default().split(',').filter_map(|n| n.trim().parse().ok()).collect();
    let mut lines = numbered_lines(&file.content).filter(|(n, _)| (start..=end).contains(n));
    let mut found = Vec::with_capacity(order.len());
    for (position, &index) in order.iter().enumerate() {
        let step = index.checked_sub(1).and_then(|i| steps.get(i)).map(|s| squeeze(s));
        match step.and_then(|step| lines.find(|(_, line)| squeeze(line) == step)) {
            Some((n, _)) => found.push(n),
            None => {
                return Err(GroundingError::StepsOutOfOrder {
                    file: file.path.clone(),
                    line_start: start,
                    line_end: end,
                    position: position + 1,
                });
            }
        }
    }
    match (found.first(), found.last()) {
        (Some(&first), Some(&last)) => Ok(grounding(file, GroundingKind::Quote, (first, last), None)),
        _ => Err(GroundingError::NoCode),
    }
}

/// " (it occurs at lines a-b)" when the code is elsewhere in the file: the repair's best hint.
fn where_else(file: &SourceFile, code: &[&str]) -> String {
    let whole = SqueezedFile::of_lines(numbered_lines(&file.content));
    code.iter()
        .find_map(|c| whole.occurrences(&squeeze(c)).first().copied())
        .map(|at| format!(" (it occurs at lines {}-{})", at.first_line, at.last_line))
        .unwrap_or_default()
}

fn check_mutation(q: &GeneratedQuestion, declared: &Grounding, file: &SourceFile) -> Result<Grounding, GroundingError> {
    let (start, end) = (declared.line_start, declared.line_end);
    let edit = declared.mutation.as_ref().ok_or(GroundingError::MissingMutation)?;
    if !(start..=end).contains(&edit.line) {
        return Err(GroundingError::MutationOutsideRange { line: edit.line, line_start: start, line_end: end });
    }
    let actual = numbered_lines(&file.content).find(|(n, _)| *n == edit.line).map(|(_, l)| l).unwrap_or_default();
    if squeeze(actual) != squeeze(&edit.original) {
        return Err(GroundingError::MutationOriginalMismatch {
            file: file.path.clone(),
            line: edit.line,
            actual: actual.trim().to_string(),
            original: edit.original.clone(),
        });
    }
    if squeeze(&edit.original) == squeeze(&edit.mutated) {
        return Err(GroundingError::MutationChangesNothing { line: edit.line });
    }
    let snippet = snippet_of(q).ok_or(GroundingError::NoCode)?;
    // The cited lines with the edit applied; squeezing drops an emptied (removed) line.
    let mutated: String = numbered_lines(&file.content)
        .filter(|(n, _)| (start..=end).contains(n))
        .map(|(n, line)| squeeze(if n == edit.line { &edit.mutated } else { line }))
        .collect();
    if squeeze(snippet) != mutated {
        return Err(GroundingError::MutationNotReversible {
            file: file.path.clone(),
            line_start: start,
            line_end: end,
            line: edit.line,
        });
    }
    Ok(grounding(file, GroundingKind::Mutation, (start, end), Some(edit.clone())))
}

/// The code a question shows: its snippet, else the code spans of its text.
fn quoted_code(q: &GeneratedQuestion) -> Option<Vec<&str>> {
    match snippet_of(q) {
        Some(snippet) => Some(vec![snippet]),
        None => Some(code_spans(&q.question)).filter(|spans| !spans.is_empty()),
    }
}

/// Fenced blocks (```lang … ```) and inline `code` spans of a question's text, non-empty.
fn code_spans(text: &str) -> Vec<&str> {
    let mut spans = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let fence = rest[open..].starts_with("```");
        let delimiter = if fence { "```" } else { "`" };
        let body_start = open + delimiter.len();
        let Some(close) = rest[body_start..].find(delimiter) else { break };
        let mut body = &rest[body_start..body_start + close];
        if fence {
            // The info string ("ts") is the fence's first line.
            body = body.split_once('\n').map_or(body, |(_, code)| code);
        }
        if !body.trim().is_empty() {
            spans.push(body);
        }
        rest = &rest[body_start + close + delimiter.len()..];
    }
    spans
}

fn locate(
    q: &GeneratedQuestion,
    files: &[SourceFile],
    canned: CannedCode,
) -> Result<Option<Grounding>, GroundingError> {
    // Each file squeezed when it is first searched, at most once: the search stops at the
    // first file that has the code, usually long before a large session's last (issue 43 §4).
    let squeezed: Vec<std::cell::OnceCell<SqueezedFile>> = files.iter().map(|_| std::cell::OnceCell::new()).collect();
    let found = |needle: &str, fits: &dyn Fn(Occurrence) -> bool| {
        files.iter().zip(&squeezed).find_map(|(file, sq)| {
            let sq = sq.get_or_init(|| SqueezedFile::of_lines(numbered_lines(&file.content)));
            sq.occurrences(needle).into_iter().find(|&at| fits(at)).map(|at| (file, (at.first_line, at.last_line)))
        })
    };
    let Some(snippet) = snippet_of(q) else {
        // Prose with inline code (`useEffect`) is no quote; whole lines of a file are.
        let quoted =
            code_spans(&q.question).into_iter().find_map(|span| found(&squeeze(span), &Occurrence::whole_lines));
        return Ok(quoted.map(|(file, lines)| grounding(file, GroundingKind::Quote, lines, None)));
    };
    if is_type(q, QuestionType::FillInBlank) && count_blanks(snippet) == 1 {
        let blank = FilledBlank::of(q, snippet);
        return match found(&blank.filled, &|at| blank.fits(at)) {
            Some((file, lines)) => Ok(Some(grounding(file, GroundingKind::Blank, lines, None))),
            None if canned == CannedCode::Allowed => Ok(None),
            None => Err(GroundingError::BlankNotInSession { answer: blank.answer }),
        };
    }
    match found(&squeeze(snippet), &|_| true) {
        Some((file, lines)) => Ok(Some(grounding(file, GroundingKind::Quote, lines, None))),
        None if canned == CannedCode::Allowed => Ok(None),
        None => Err(GroundingError::NotInSession),
    }
}

#[cfg(test)]
mod tests;
