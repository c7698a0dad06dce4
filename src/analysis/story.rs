//! The session's own story (issue 40, point 3): a failed command, then the edit that fixed
//! it. Pure: [`Fix::between`] finds what an edit changed, [`first_fix`] the first edit after a
//! failure, and [`story_questions`] writes the offline questions built from the real error text
//! and the real change:
//! - what the error says (code_reading, the error's own lines as the snippet, read in its
//!   tool's terms: [`reading_of`]);
//! - which token the fix wrote (fill_in_blank on the fixed line, in the unit around it);
//! - where the bug was (spot_the_bug: the unit with the fixed line put back as it was before
//!   the fix, a declared mutation whose reversal is the session's own fix).
//!
//! Every key follows from the code: the blank's answer restores the fixed line, reverting the
//! spot-the-bug's mutation is the real fix, and the error is quoted as it was (grounded in the
//! failed call's label, as `FailedCall::as_source` makes it citable).
//!
//! # Why no "real fix among near-miss fixes" multiple choice
//! It was tried: options were the fixed line, the line as it was, and operator or number
//! edits of the fixed line. Its snippet can only be the error (the unit would show the
//! answer), so its options name code the snippet does not show, which the quiz job's
//! precision rules refuse (`precision`: "the right answer is about `self.attempts`, which the
//! snippet does not show"). The spot-the-bug asks the same thing with the code shown.

use crate::analysis::concepts::{Concept, Level};
use crate::analysis::grounded::{CodeFile, units};
use crate::analysis::grounding::{Grounding, GroundingKind, LineEdit};
use crate::analysis::model::{FailedCall, SourceFile};
use crate::analysis::questions::{GeneratedQuestion, QuestionType};

mod reading;
#[cfg(test)]
mod tests;

pub use reading::{Reading, reading_of};

/// Longest unit shown around a fixed line (the lint's screen, `lint::MAX_SNIPPET_LINES`).
const MAX_UNIT_LINES: usize = 30;
/// Longest blank answer: a longer change is asked as a multiple choice only.
const MAX_BLANK_CHARS: usize = 40;
/// How much of a line must survive an edit for the edit to be a rewrite of it (percent).
const SIMILAR_SHARE: usize = 60;
/// Lines a unit of fewer lines than this is widened to, with its siblings (a lone statement
/// does not show why it was wrong).
const MIN_CONTEXT_LINES: usize = 9;

/// One line the fix rewrote: its 1-based line in the new content, as it was and as it is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LineChange {
    pub line: u32,
    pub before: String,
    pub after: String,
}

/// The edit that fixed a failure: the file and the 1-based lines of its new content that the
/// edit wrote (for a pure deletion, the line where the removed text was), and the line it
/// rewrote when its first change is one line replaced by one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Fix {
    pub file: String,
    pub lines: Vec<u32>,
    pub change: Option<LineChange>,
    /// Which failed call the fix answered: the index, among the session's failed calls in
    /// order, of the last one before it ([`first_fix`] sets it; `None`: not known).
    pub after_failure: Option<usize>,
}

impl Fix {
    /// The fix that turned `before` into `after` in `file`: the lines of `after` that are not
    /// in a longest common subsequence of the two (so an edit in three places is three places,
    /// not everything between them). `None` when nothing changed.
    pub fn between(file: &str, before: &str, after: &str) -> Option<Fix> {
        let old: Vec<&str> = before.lines().collect();
        let new: Vec<&str> = after.lines().collect();
        if old == new {
            return None;
        }
        // The common head and tail first: the table below is then only as big as the change.
        let head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
        let tail = old[head..].iter().rev().zip(new[head..].iter().rev()).take_while(|(a, b)| a == b).count();
        let (old_mid, new_mid) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
        let kept = common_lines(old_mid, new_mid);
        let kept_new: std::collections::BTreeSet<usize> = kept.iter().map(|(_, j)| *j).collect();
        let written: Vec<u32> =
            (head..new.len() - tail).filter(|i| !kept_new.contains(&(i - head))).map(|i| i as u32 + 1).collect();
        let change = first_rewrite(old_mid, new_mid, &kept).map(|(i, j)| LineChange {
            line: (head + j) as u32 + 1,
            before: old_mid[i].to_string(),
            after: new_mid[j].to_string(),
        });
        // A pure deletion: the line where the removed text was.
        let lines = if written.is_empty() { vec![(head as u32 + 1).min(new.len().max(1) as u32)] } else { written };
        Some(Fix { file: file.to_string(), lines, change, after_failure: None })
    }
}

/// The (old, new) index pair of the line the fix rewrote: the first line out and the first
/// line in of its first change, when that change is one line for one or the two lines are
/// one edited ([`similar`]); a block written in place of another line is not a rewrite.
fn first_rewrite(old: &[&str], new: &[&str], kept: &[(usize, usize)]) -> Option<(usize, usize)> {
    let mut anchors = vec![(0usize, 0usize)];
    anchors.extend(kept.iter().map(|(i, j)| (i + 1, j + 1)));
    let ends = kept.iter().copied().chain([(old.len(), new.len())]);
    // The first gap with a change decides: one line out and one line in is a rewrite; an
    // insertion or a block replaced is not one line's story.
    let (i0, j0, i1, j1) = anchors
        .into_iter()
        .zip(ends)
        .map(|((i0, j0), (i1, j1))| (i0, j0, i1, j1))
        .find(|(i0, j0, i1, j1)| i1 > i0 || j1 > j0)?;
    let removed = (i0..i1).find(|&i| !old[i].trim().is_empty())?;
    let written = (j0..j1).find(|&j| !new[j].trim().is_empty())?;
    let one_for_one = i1 == i0 + 1 && j1 == j0 + 1;
    (one_for_one || similar(old[removed], new[written])).then_some((removed, written))
}

/// Whether `after` is `before` edited rather than another line: their common head and tail
/// cover at least [`SIMILAR_SHARE`] percent of the shorter one (trimmed).
fn similar(before: &str, after: &str) -> bool {
    let (a, b) = (before.trim().as_bytes(), after.trim().as_bytes());
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let rest = a.len().min(b.len()) - head;
    let tail = a.iter().rev().zip(b.iter().rev()).take(rest).take_while(|(x, y)| x == y).count();
    (head + tail) * 100 >= a.len().min(b.len()) * SIMILAR_SHARE
}

/// The (old, new) index pairs of a longest common subsequence of `old` and `new`.
fn common_lines(old: &[&str], new: &[&str]) -> Vec<(usize, usize)> {
    let (n, m) = (old.len(), new.len());
    // lcs[i][j]: the LCS length of old[i..] and new[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut kept) = (0, 0, Vec::new());
    while i < n && j < m {
        if old[i] == new[j] {
            kept.push((i, j));
            i += 1;
            j += 1;
        } else if lcs[i + 1][j] >= lcs[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    kept
}

/// One step of a session as far as its story goes, in the order it happened.
#[derive(Debug, Clone, Copy)]
pub enum StoryEvent<'a> {
    /// A tool call failed.
    Failed,
    /// A file was written whole: its path and its new content.
    Wrote { path: &'a str, content: &'a str },
}

/// The first edit after a failure of a file written before it: the fix. `None` when no
/// failure is followed by such an edit (or the edit changed nothing).
pub fn first_fix<'a>(events: impl IntoIterator<Item = StoryEvent<'a>>) -> Option<Fix> {
    let mut latest: std::collections::BTreeMap<&str, &str> = Default::default();
    let mut failed: Option<usize> = None;
    for event in events {
        match event {
            StoryEvent::Failed => failed = Some(failed.map_or(0, |n| n + 1)),
            StoryEvent::Wrote { path, content } => {
                if let (Some(index), Some(before)) = (failed, latest.get(path))
                    && let Some(fix) = Fix::between(path, before, content)
                {
                    return Some(Fix { after_failure: Some(index), ..fix });
                }
                latest.insert(path, content);
            }
        }
    }
    None
}

/// The story questions for the concept that teaches the session's failure (the one whose
/// `source_file` is a failed call's label; the failure the fix answered first), at its
/// level: what the error says, and, when the
/// session has `fix` and its file is among `files`, the blank and the bug on the line the
/// fix changed. Empty when no concept is about a failure.
pub fn story_questions(
    concepts: &[(Concept, Level)],
    failures: &[FailedCall],
    fix: Option<&Fix>,
    files: &[SourceFile],
) -> Vec<GeneratedQuestion> {
    let cited = |f: &'_ FailedCall| concepts.iter().find(|(c, _)| c.source_file == f.label());
    // The failure the fix answered, when a concept teaches it; else the first failure a
    // concept cites, asked without the fix (it would tie the change to another error).
    let answered = match fix.map(|f| f.after_failure) {
        Some(Some(index)) => failures.get(index),
        _ => failures.iter().find(|f| cited(f).is_some()),
    };
    let (failure, with_fix) = match answered.filter(|f| cited(f).is_some()) {
        Some(f) => (f, true),
        None => match failures.iter().find(|f| cited(f).is_some()) {
            Some(f) => (f, false),
            None => return Vec::new(),
        },
    };
    let Some((concept, level)) = cited(failure) else { return Vec::new() };
    let Some(reading) = reading_of(&failure.error) else { return Vec::new() };
    let story = Story { concept: &concept.name, level: *level, failure, reading: &reading };
    let mut out = vec![story.error_question()];
    let fix = fix.filter(|_| with_fix);
    let fixed = fix.and_then(|fix| Some((fix, files.iter().find(|f| f.path == fix.file && !f.fragment)?)));
    if let Some((fix, file)) = fixed
        && let Some(change) = &fix.change
    {
        let code = CodeFile::new(file);
        // One question on the fix: asked twice, the second gives the first away. Where the
        // bug was and what the fix made of it first; the blank where the unit shows another
        // line of the fix.
        out.extend(story.real_bug(&code, change, fix).or_else(|| story.fix_blank(&code, change)));
    }
    out
}

/// What every story question of one session shares.
struct Story<'a> {
    concept: &'a str,
    level: Level,
    failure: &'a FailedCall,
    reading: &'a Reading,
}

impl Story<'_> {
    /// A question with the fields every story question sets the same way.
    fn base(&self, qtype: QuestionType, question: String, explanation: String) -> GeneratedQuestion {
        GeneratedQuestion {
            concept: self.concept.to_string(),
            question_type: qtype.as_str().to_string(),
            difficulty: self.level.as_str().to_string(),
            snippet: None,
            question,
            options: None,
            correct: None,
            explanation,
            // No word of the command here: the precision rules would ask the snippet to show
            // `test` of `go test`. The output's question asks about the output; the fix's, which
            // show code, how the output led to it (round 6: B6).
            follow_up: (self.level == Level::Junior).then(|| {
                match qtype {
                    QuestionType::CodeReading => {
                        "Which line of this output would you read first the next time this run fails, and why?"
                    }
                    _ => "Which line of the failed run's output led to this line of code, and what did it say?",
                }
                .into()
            }),
            tags: vec!["error_handling".into(), "session-story".into(), qtype.as_str().to_string()],
            grounding: None,
        }
    }

    /// The command that failed, on one line.
    fn command(&self) -> String {
        self.failure.subject.lines().next().unwrap_or("").trim().to_string()
    }

    /// "What does this error say": the error's own lines, read in its tool's terms.
    fn error_question(&self) -> GeneratedQuestion {
        let r = self.reading;
        // "And where" only when the quoted lines name a place the key can point at.
        let where_ = if r.location.is_some() { ", and where" } else { "" };
        let question = format!(
            "`{}` failed with this output in this session. What does it say went wrong{where_}?",
            self.command()
        );
        let answer = r.answer();
        let mut q = self.base(QuestionType::CodeReading, question, answer.clone());
        q.snippet = Some(r.excerpt.clone());
        q.correct = Some(answer);
        q.grounding = Some(Grounding {
            file: self.failure.label(),
            line_start: r.first_line,
            line_end: r.last_line,
            kind: GroundingKind::Quote,
            mutation: None,
        });
        q
    }

    /// "Which token did the fix write": the fixed line blanked where it changed, in the
    /// unit around it.
    fn fix_blank(&self, code: &CodeFile<'_>, change: &LineChange) -> Option<GeneratedQuestion> {
        let at = (change.line as usize).checked_sub(1)?;
        let (start, end) = changed_span(&change.before, &change.after)?;
        let answer = change.after.get(start..end)?;
        if answer.len() > MAX_BLANK_CHARS
            || keeps_unchanged_text(&change.before, answer)
            || !answer.chars().any(char::is_alphanumeric)
            || crate::analysis::lint::is_keyword_blank(answer)
        {
            return None;
        }
        if code.lines.get(at)? != &change.after.as_str() {
            return None;
        }
        let (first, last) = unit_shown(code, at)?;
        let blanked = format!("{}___{}", change.after.get(..start)?, change.after.get(end..)?);
        let mut shown: Vec<&str> = code.lines[first..=last].to_vec();
        shown[at - first] = &blanked;
        let question = format!(
            "After `{}` failed with `{}`, the fix rewrote line {} of {}. Fill in the blank with what the fix wrote.",
            self.command(),
            self.reading.headline,
            change.line,
            code.path
        );
        let explanation = format!(
            "Before the fix, line {} read `{}`; the fix made it `{}`. {}",
            change.line,
            change.before.trim(),
            change.after.trim(),
            self.reading.gloss
        );
        let mut q = self.base(QuestionType::FillInBlank, question, explanation);
        q.snippet = Some(shown.join("\n"));
        q.correct = Some(answer.to_string());
        q.grounding = Some(Grounding {
            file: code.path.to_string(),
            line_start: first as u32 + 1,
            line_end: last as u32 + 1,
            kind: GroundingKind::Blank,
            mutation: None,
        });
        Some(q)
    }

    /// "Where was the bug": the unit as it was when the command failed (the fixed line put
    /// back as it was, a declared mutation of the file as it is now), keyed by the fix.
    /// The unit may hold no other line of the fix: it would show a state the file never had.
    fn real_bug(&self, code: &CodeFile<'_>, change: &LineChange, fix: &Fix) -> Option<GeneratedQuestion> {
        let at = (change.line as usize).checked_sub(1)?;
        if code.lines.get(at)? != &change.after.as_str() {
            return None;
        }
        let (first, last) = unit_shown(code, at)?;
        let shown = (first as u32 + 1)..=(last as u32 + 1);
        if fix.lines.iter().any(|l| *l != change.line && shown.contains(l)) {
            return None;
        }
        let mut shown: Vec<&str> = code.lines[first..=last].to_vec();
        shown[at - first] = &change.before;
        let question = format!(
            "This is {} as it was when `{}` failed with `{}`. Which line is the bug, and what did the fix change?",
            code.path,
            self.command(),
            self.reading.headline
        );
        // A fix that changed the file outside the unit too: the lines shown do not hold the
        // whole bug, and "which line is the bug" would have no answer in them.
        if fix.lines.iter().any(|l| !(first as u32 + 1..=last as u32 + 1).contains(l)) {
            return None;
        }
        let answer = format!(
            "Line {}: `{}`. The session's fix rewrote it to `{}`, and the run that had failed passed.",
            change.line,
            change.before.trim(),
            change.after.trim()
        );
        let explanation = format!("{answer} {}", self.reading.gloss);
        let mut q = self.base(QuestionType::SpotTheBug, question, explanation);
        q.snippet = Some(shown.join("\n"));
        q.correct = Some(answer);
        q.grounding = Some(Grounding {
            file: code.path.to_string(),
            line_start: first as u32 + 1,
            line_end: last as u32 + 1,
            kind: GroundingKind::Mutation,
            mutation: Some(LineEdit {
                line: change.line,
                original: change.after.clone(),
                mutated: change.before.clone(),
            }),
        });
        Some(q)
    }
}

/// The 0-based lines shown around line `at`: the unit holding it (within
/// [`MAX_UNIT_LINES`]), with its siblings when it is a lone statement. `None` when even the
/// innermost unit is longer than a screen.
fn unit_shown(code: &CodeFile<'_>, at: usize) -> Option<units::Span> {
    let unit = units::unit_within(code, at, MAX_UNIT_LINES);
    let unit = if unit.1 - unit.0 + 1 < MIN_CONTEXT_LINES {
        units::with_siblings(code, unit, MIN_CONTEXT_LINES)
    } else {
        unit
    };
    (unit.1 - unit.0 < MAX_UNIT_LINES).then_some(unit)
}

/// Whether a blank's answer holds a stretch of the line the fix left as it was: a change at
/// both ends of an expression (`x.to_f` → `BigDecimal(x)`) blanks the whole of it, and the
/// learner would have to retype the unchanged middle exactly.
fn keeps_unchanged_text(before: &str, answer: &str) -> bool {
    const KEPT_CHARS: usize = 12;
    let starts: Vec<usize> = answer.char_indices().map(|(at, _)| at).collect();
    starts.iter().enumerate().any(|(i, &at)| {
        let end = starts.get(i + KEPT_CHARS).copied().unwrap_or(answer.len());
        answer[at..end].chars().count() == KEPT_CHARS && before.contains(&answer[at..end])
    })
}

/// Byte range of `after` that differs from `before` (common head and tail trimmed), widened
/// to whole words so the blank is a token, not half of one. `None` for a pure deletion.
pub fn changed_span(before: &str, after: &str) -> Option<(usize, usize)> {
    let head = before.bytes().zip(after.bytes()).take_while(|(a, b)| a == b).count();
    let rest = before.len().min(after.len()) - head;
    let tail = before.bytes().rev().zip(after.bytes().rev()).take(rest).take_while(|(a, b)| a == b).count();
    if after.len() - tail <= head {
        return None;
    }
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut start = head;
    while start > 0 && !after.is_char_boundary(start) {
        start -= 1;
    }
    // Widened only where the change cuts a word (`attempts` → `attemptz`), not where it
    // starts at one (`Iterator for ` inserted before `Lexer`).
    let cuts =
        |at: usize| after[..at].chars().next_back().is_some_and(word) && after[at..].chars().next().is_some_and(word);
    while start > 0 && cuts(start) {
        start -= after[..start].chars().next_back().map_or(1, char::len_utf8);
    }
    let mut end = after.len() - tail;
    while end < after.len() && !after.is_char_boundary(end) {
        end += 1;
    }
    while end < after.len() && cuts(end) {
        end += after[end..].chars().next().map_or(1, char::len_utf8);
    }
    let span = after.get(start..end)?.trim();
    if span.is_empty() {
        return None;
    }
    // Leading or trailing spaces stay in the line, outside the blank.
    let start = start + after[start..end].len() - after[start..end].trim_start().len();
    Some((start, start + span.len()))
}
