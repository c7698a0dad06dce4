//! The lint's rules, one small function each: `Some(detail)` when the question breaks it.

use std::collections::{BTreeMap, BTreeSet};

use super::{LintSession, vocabulary};
use crate::analysis::Lang;
use crate::analysis::catalogue::asides;
use crate::analysis::catalogue::tokens::is_trivia_answer;
use crate::analysis::grounding::GroundingKind;
use crate::analysis::questions::GeneratedQuestion;
use crate::analysis::syntax::{self, Grammar};

/// Longest snippet a learner reads in one question (issue 40: a 174-line snippet was shown;
/// a screen holds about 40 lines).
pub const MAX_SNIPPET_LINES: usize = 40;

/// The question's prose: what it says, offers, keys and explains (the snippet is the
/// session's code and may say anything).
fn prose(q: &GeneratedQuestion) -> String {
    let options = q.options.as_deref().unwrap_or_default().join("\n");
    let parts = [q.question.as_str(), &options, q.correct.as_deref().unwrap_or(""), &q.explanation];
    let mut text = parts.join("\n");
    if let Some(follow_up) = &q.follow_up {
        text.push('\n');
        text.push_str(follow_up);
    }
    text
}

/// Rule (a): a phrase of another ecosystem in the prose, outside a labelled aside
/// (`catalogue::asides`: "Elsewhere: in Python, asyncio.gather."), or an aside in the answer
/// (another language's name is never the answer).
pub fn foreign_words(q: &GeneratedQuestion, lang: Lang) -> Option<String> {
    if let Some(correct) = q.correct.as_deref().filter(|c| asides::has_aside(c)) {
        return Some(format!("an aside in the answer: `{correct}`"));
    }
    let own = asides::without_asides(&prose(q));
    vocabulary::foreign_word(&own, lang).map(|w| format!("`{w}` in a {} question", lang.as_str()))
}

/// The snippet as the learner's code reads: a blank filled with its answer, a mutated line
/// put back.
fn completed_lines(q: &GeneratedQuestion) -> Vec<String> {
    let snippet = q.snippet.as_deref().unwrap_or_default();
    let mutation = q.grounding.as_ref().and_then(|g| g.mutation.as_ref());
    let answer = q.correct.as_deref().unwrap_or_default();
    let mut restored = false;
    snippet
        .lines()
        .map(|line| match (q.question_type.as_str(), mutation) {
            ("fill_in_blank", _) if line.contains("___") => line.replacen("___", answer, 1),
            ("spot_the_bug", Some(m)) if !restored && line.trim() == m.mutated.trim() => {
                restored = true;
                m.original.clone()
            }
            _ => line.to_string(),
        })
        .collect()
}

/// Every trimmed line of the session's files and failure texts.
pub struct KnownLines(BTreeSet<String>);

impl KnownLines {
    pub fn of(session: &LintSession<'_>) -> KnownLines {
        let files = session.files.iter().map(|f| f.content.as_str());
        let errors = session.failures.iter().map(|f| f.error.as_str());
        KnownLines(files.chain(errors).flat_map(str::lines).map(|l| l.trim().to_string()).collect())
    }
}

/// Rule (b): a non-blank snippet line that is no line of the session.
pub fn not_session_code(q: &GeneratedQuestion, known: &KnownLines) -> Option<String> {
    completed_lines(q)
        .iter()
        .map(|l| l.trim())
        .find(|l| !l.is_empty() && !known.0.contains(*l))
        .map(|l| format!("`{l}` is not in the session"))
}

/// Tokens a unit cannot end on: the rest of the unit is missing.
const DANGLING_ENDS: &[&str] = &["where", "?", "=", "=>", "->", ",", "&&", "||", "+", "|", "&", "extends", "."];

/// Rule (c): the snippet is cut: its brackets do not balance (over its masked text, so a
/// bracket in a string or comment is no bracket), or its last line dangles. The snippet is
/// parsed on its own by its language's grammar, not cut from its file's tree, so the rule
/// checks the units code rather than repeating it.
pub fn cut_unit(q: &GeneratedQuestion, lang: Option<Lang>) -> Option<String> {
    let text = completed_lines(q).join("\n");
    if text.trim().is_empty() {
        return None;
    }
    let masked = lang
        .and_then(|l| {
            let path = q.grounding.as_ref().map_or("", |g| g.file.as_str());
            syntax::parse(Grammar::for_file(l, path), &text)
        })
        .map_or_else(|| text.clone(), |tree| syntax::mask_comments_and_strings(&tree, &text));
    let mut depth: i64 = 0;
    for c in masked.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return Some("a bracket closes that the snippet never opened".into());
        }
    }
    if depth > 0 {
        return Some(format!("{depth} bracket(s) left open"));
    }
    let last = masked.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or_default();
    if let Some(end) = DANGLING_ENDS.iter().find(|e| last.ends_with(*e) && ends_on_token(last, e)) {
        return Some(format!("the last line ends at `{end}`"));
    }
    let headless_impl = last.starts_with("impl") && last.contains(" for ") && !last.ends_with(';');
    if headless_impl || (lang == Some(Lang::Python) && last.ends_with(':')) {
        return Some(format!("`{last}` has no body"));
    }
    None
}

/// Whether `line` ends on the whole token `end` (`where`, not `nowhere`; `?`, not `??`).
fn ends_on_token(line: &str, end: &str) -> bool {
    let before = line[..line.len() - end.len()].chars().next_back();
    let word = end.chars().all(char::is_alphanumeric);
    match before {
        None => true,
        Some(c) if word => !c.is_alphanumeric() && c != '_',
        Some(c) => c.is_whitespace() || c.is_alphanumeric() || c == ')' || c == '_' || end == ",",
    }
}

/// Rule (d): a blank whose answer is a declaration keyword or a lone sigil.
pub fn keyword_blank(q: &GeneratedQuestion) -> Option<String> {
    if q.question_type != "fill_in_blank" {
        return None;
    }
    let answer = q.correct.as_deref().unwrap_or_default().trim();
    is_trivia_answer(answer).then(|| format!("the blank's answer is `{answer}`"))
}

/// The spot-the-bug edits seen so far in a session, by what they remove and add.
#[derive(Default)]
pub struct Mutations(BTreeMap<(String, String), usize>);

impl Mutations {
    /// Rule (e): the question's edit (what it removes and adds, the common head and tail
    /// trimmed) is one an earlier spot-the-bug already made.
    pub fn repeated(&mut self, q: &GeneratedQuestion) -> Option<String> {
        let key = super::mutation_edit(q)?;
        let seen = self.0.entry(key.clone()).or_insert(0);
        *seen += 1;
        (*seen > 1).then(|| format!("`{}` → `{}` again", key.0, key.1))
    }
}

/// What turning `original` into `mutated` removes and adds.
pub(super) fn edit_of(original: &str, mutated: &str) -> (String, String) {
    let (a, b): (Vec<char>, Vec<char>) = (original.chars().collect(), mutated.chars().collect());
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..].iter().rev().zip(b[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    let removed: String = a[head..a.len() - tail].iter().collect();
    let added: String = b[head..b.len() - tail].iter().collect();
    (removed.trim().to_string(), added.trim().to_string())
}

/// Rule (f): the session failed and was fixed, and no question is on either: none cites the
/// failure, and none blanks or mutates a line the fix wrote. A quote that merely covers a
/// fixed line among others does not count: it is not about the change.
pub fn missed_story(session: &LintSession<'_>, questions: &[GeneratedQuestion]) -> Option<String> {
    let fix = session.fix?;
    if session.failures.is_empty() {
        return None;
    }
    let labels: Vec<String> = session.failures.iter().map(|f| f.label()).collect();
    let on_story = questions.iter().any(|q| {
        let Some(g) = &q.grounding else { return false };
        labels.contains(&g.file) || (g.file == fix.file && focus_line(q).is_some_and(|l| fix.lines.contains(&l)))
    });
    (!on_story).then(|| format!("no question on `{}` or the fix at {}:{:?}", labels[0], fix.file, fix.lines))
}

/// The one file line a blank or a mutation is about.
fn focus_line(q: &GeneratedQuestion) -> Option<u32> {
    let g = q.grounding.as_ref()?;
    match g.kind {
        GroundingKind::Mutation => g.mutation.as_ref().map(|m| m.line),
        GroundingKind::Blank => {
            let at = q.snippet.as_deref()?.lines().position(|l| l.contains("___"))?;
            Some(g.line_start + at as u32)
        }
        GroundingKind::Quote => None,
    }
}

/// Rule (g): the snippet is longer than a screen.
pub fn oversized(q: &GeneratedQuestion) -> Option<String> {
    let lines = q.snippet.as_deref().map_or(0, |s| s.lines().count());
    (lines > MAX_SNIPPET_LINES).then(|| format!("{lines} lines"))
}
