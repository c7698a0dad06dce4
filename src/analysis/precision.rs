//! The precision rules of SPEC §6.4 as checks on one generated question, for the offline
//! catalogue's questions and an LLM's alike (the quiz job drops, or sends back for one repair,
//! a question that breaks one):
//!
//! 2. a snippet is a whole syntactic unit of its file, as its grammar reads it
//!    (`grounded::units::check_whole` over the file's syntax tree);
//! 3. an ordering question's steps are statements that run (no docstring, comment or bare
//!    string), lines of the cited stretch, and one of them — with the block under it — is the
//!    statement that carries the concept: it shows one of the catalogue entry's tokens or
//!    signal hints (a concept the catalogue does not know is not checked for this);
//! 4. every word fits the session's languages: nothing that only another language says
//!    (`try/catch` in a Python-only session, `package.json` where there is no JavaScript);
//! 5. the premise holds: "look at `X`" only where `X` is in the snippet and the right answer is
//!    about `X`; a right answer naming an API (`functools.wraps`) only where the snippet shows
//!    it; a follow-up that names the concept's tokens as code (`` `reduce` ``) only where the
//!    code shown holds one of them; no sentence twice in an answer or explanation;
//! 6. a concept is named only where its syntax is in the snippet (`concept_syntax`: a
//!    type-parameter list for Generics, a `go` statement for Goroutines, …).
//!
//! Pure: a question and the session's files in, the problems out.

use crate::analysis::catalogue::{self, tokens::find_token, tokens::is_evidence_in, tokens::named_but_not_shown};
use crate::analysis::grounded::{CodeFile, units::check_whole, units::is_bare_string, units::unit_of};
use crate::analysis::grounding::GroundingKind;
use crate::analysis::model::{Pattern, SourceFile};
use crate::analysis::questions::GeneratedQuestion;
use crate::analysis::{Lang, lang_for_path};

/// Phrases only one language family uses, lowercase: said in a session with no file of that
/// family, they talk about the wrong language.
const ONLY_IN: [(&[Lang], &[&str]); 7] = [
    (
        &[Lang::TypeScript, Lang::JavaScript],
        &["package.json", "node_modules", "npm install", "cannot find module", "console.log", "zod"],
    ),
    (&[Lang::Python], &["pyproject.toml", "pip install", "modulenotfounderror", "functools", "__init__"]),
    (&[Lang::Go], &["err != nil", "goroutine", "go.mod", "errors.is"]),
    (&[Lang::Rust], &["cargo.toml", ".unwrap()", "borrow checker"]),
    (&[Lang::Java], &["nullpointerexception", "system.out", "pom.xml"]),
    (&[Lang::CSharp], &["console.writeline", "ienumerable", ".csproj"]),
    (&[Lang::Ruby], &["attr_accessor", "bundle exec", "gemfile"]),
];

/// Languages whose exception syntax is `try`/`catch`.
const TRY_CATCH: [Lang; 4] = [Lang::TypeScript, Lang::JavaScript, Lang::Java, Lang::CSharp];

/// The precision rule a problem breaks, named in the quiz job's `refused` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PrecisionRule {
    /// Rule 2: the snippet is not a whole unit of its file.
    CutUnit,
    /// Rule 3: an ordering's steps do not run, or none carries the concept.
    Steps,
    /// Rule 4: another language's words.
    Language,
    /// Rule 5: the premise does not hold in the snippet, or a sentence is said twice.
    Premise,
    /// Rule 6 (issue 40): the concept is named where its syntax is not in the snippet.
    ConceptAbsent,
}

impl PrecisionRule {
    /// The rule's name in the job result (`"precision: cut unit"`).
    pub fn as_str(self) -> &'static str {
        match self {
            PrecisionRule::CutUnit => "precision: cut unit",
            PrecisionRule::Steps => "precision: steps",
            PrecisionRule::Language => "precision: language",
            PrecisionRule::Premise => "precision: premise",
            PrecisionRule::ConceptAbsent => "precision: concept not in snippet",
        }
    }
}

/// Every rule `q` breaks, as reasons a model can act on; empty when it holds to all.
pub fn precision_problems(q: &GeneratedQuestion, files: &[SourceFile]) -> Vec<String> {
    precision_findings(q, files).into_iter().map(|(_, why)| why).collect()
}

/// Every rule `q` breaks, each with its reason.
pub fn precision_findings(q: &GeneratedQuestion, files: &[SourceFile]) -> Vec<(PrecisionRule, String)> {
    let mut problems: Vec<(PrecisionRule, String)> = Vec::new();
    let langs: Vec<Lang> = files.iter().filter_map(|f| lang_for_path(&f.path)).collect();
    let grounded = q.grounding.as_ref().and_then(|g| Some((g, files.iter().find(|f| f.path == g.file)?)));
    // A failed command's output is cited like a file, but it is no code: rules 2 and 3 are
    // about code.
    if let Some((g, file)) = grounded.filter(|(g, _)| lang_for_path(&g.file).is_some()) {
        let code = CodeFile::new(file);
        let (start, end) = (g.line_start.saturating_sub(1) as usize, g.line_end.saturating_sub(1) as usize);
        if q.question_type == "ordering" {
            let findings = crate::analysis::analyze_files(std::slice::from_ref(file));
            problems.extend(
                step_problems(q, &code, (start, end), &findings).into_iter().map(|p| (PrecisionRule::Steps, p)),
            );
        } else if q.snippet.is_some()
            && matches!(g.kind, GroundingKind::Quote | GroundingKind::Blank | GroundingKind::Mutation)
            && let Err(why) = check_whole(&code, start, end)
        {
            problems.push((PrecisionRule::CutUnit, format!("the snippet is not a whole unit of {}: {why}", g.file)));
        }
    }
    if !langs.is_empty() {
        problems.extend(language_problems(q, &langs).into_iter().map(|p| (PrecisionRule::Language, p)));
    }
    problems.extend(premise_problems(q).into_iter().map(|p| (PrecisionRule::Premise, p)));
    if let Some(why) = crate::analysis::concept_syntax::question_problem(q, files) {
        problems.push((PrecisionRule::ConceptAbsent, why));
    }
    problems
}

/// Rule 3: each step is a line of the cited stretch that runs, and one carries the concept.
fn step_problems(
    q: &GeneratedQuestion,
    code: &CodeFile<'_>,
    (start, end): (usize, usize),
    findings: &[Pattern],
) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = Vec::new();
    for step in q.options.iter().flatten() {
        let at = (start..=end.min(code.lines.len().saturating_sub(1))).find(|&i| code.lines[i].trim() == step.trim());
        match at {
            None => out.push(format!("the step `{step}` is not a line of the cited code")),
            Some(i) if code.masked[i].trim().is_empty() || is_bare_string(code, i) => {
                out.push(format!("the step `{step}` is a comment or a bare string, which does not run"))
            }
            Some(i) => lines.push(i),
        }
    }
    if out.is_empty()
        && let Some(entry) = catalogue::find(&q.concept).map(|e| e.in_lang(code.lang).unwrap_or(*e))
        && !lines.iter().any(|&i| carries(code, i, &entry, findings))
    {
        // The entry's words for this language (a Python session is not asked for `=>`).
        let shown: Vec<String> =
            entry.tokens.iter().filter(|t| is_evidence_in(t, code.lang)).take(4).map(|t| format!("`{t}`")).collect();
        out.push(format!(
            "none of the steps is the statement that carries {} (a step showing {}, or the block holding one)",
            entry.name,
            shown.join(" or ")
        ));
    }
    out
}

/// Whether the statement on line `i`, with the block under it, shows the entry: one of its
/// tokens (in code or, like `%w` or `"use client"`, in a string), one of its signals' hints,
/// or a static finding there that one of its signals matches (what places the offline
/// provider's questions).
fn carries(code: &CodeFile<'_>, i: usize, entry: &catalogue::Entry, findings: &[Pattern]) -> bool {
    let (_, end) = unit_of(code, i);
    let end = end.min(code.lines.len() - 1);
    let text = code.lines[i..=end].join("\n");
    let lower = text.to_lowercase();
    entry.tokens.iter().filter(|t| is_evidence_in(t, code.lang)).any(|t| find_token(&text, t).is_some())
        || entry.signals.iter().flat_map(|s| s.hints.iter()).any(|h| lower.contains(h))
        || findings.iter().any(|p| {
            let line = usize::try_from(p.line).unwrap_or(0);
            let lowered = (p.name.to_lowercase(), p.snippet.to_lowercase());
            (i + 1..=end + 1).contains(&line) && catalogue::best_weight(entry.signals, p, &lowered).is_some()
        })
}

/// Rule 4: the words a question uses, against the session's languages.
fn language_problems(q: &GeneratedQuestion, langs: &[Lang]) -> Vec<String> {
    // Another language's name for the concept may be said only as a labelled aside, and
    // never as the answer (SPEC §6.4).
    let text = catalogue::asides::without_asides(&said(q)).to_lowercase();
    let mut out = Vec::new();
    if let Some(answer) = right_answer(q).or(q.correct.as_deref()).filter(|a| catalogue::asides::has_aside(a)) {
        out.push(format!("the answer is an aside about another language (`{answer}`): say it in this one"));
    }
    for (family, phrases) in ONLY_IN {
        if langs.iter().any(|l| family.contains(l)) {
            continue;
        }
        if let Some(phrase) = phrases.iter().find(|p| text.contains(*p)) {
            out.push(format!("it says `{phrase}`, which belongs to a language this session does not use"));
        }
    }
    if !langs.iter().any(|l| TRY_CATCH.contains(l)) && (text.contains("try/catch") || text.contains("catch block")) {
        out.push("it says try/catch, but this session's languages do not catch exceptions that way".to_owned());
    }
    out
}

/// Everything a question says to the learner but the code: concept, question, options,
/// answer, explanation, follow-up.
fn said(q: &GeneratedQuestion) -> String {
    let options = q.options.as_deref().unwrap_or_default().join("\n");
    let parts: [&str; 5] = [&q.concept, &q.question, &options, q.correct.as_deref().unwrap_or(""), &q.explanation];
    let mut text = parts.join("\n");
    if let Some(f) = &q.follow_up {
        text.push('\n');
        text.push_str(f);
    }
    text
}

/// Rule 5: "look at `X`" holds in the snippet and the answer; named APIs are shown; the
/// follow-up asks about code the snippet shows; no sentence is said twice.
fn premise_problems(q: &GeneratedQuestion) -> Vec<String> {
    let mut out = Vec::new();
    let snippet = q.snippet.as_deref().unwrap_or("");
    let right = right_answer(q);
    if let Some(token) = follow_up_off_snippet(q) {
        out.push(format!("the follow-up asks about `{token}`, which the snippet does not show"));
    }
    if let Some(x) = looked_at(&q.question) {
        if !snippet.contains(x) {
            out.push(format!("it says to look at `{x}`, which the snippet does not show"));
        } else if right.is_some_and(|r| !r.contains(x)) {
            out.push(format!("it says to look at `{x}`, but the right answer is not about `{x}`"));
        }
    }
    if !snippet.is_empty()
        && let Some(right) = right
    {
        for api in dotted_names(right) {
            if !snippet.contains(api) {
                out.push(format!("the right answer is about `{api}`, which the snippet does not show"));
            }
        }
    }
    for (what, text) in [("answer", q.correct.as_deref().unwrap_or("")), ("explanation", q.explanation.as_str())] {
        if let Some(twice) = repeated_sentence(text) {
            out.push(format!("the {what} says \"{twice}\" twice"));
        }
    }
    out
}

/// The token the follow-up asks about when the question's code shows none it names
/// (`tokens::named_but_not_shown`), for a concept the catalogue knows.
fn follow_up_off_snippet(q: &GeneratedQuestion) -> Option<&'static str> {
    let shown = q.shown_code();
    if shown.is_empty() {
        return None;
    }
    // The tokens of the entry as the question's language shows it (`Entry::in_lang`).
    let lang = q.grounding.as_ref().and_then(|g| crate::analysis::lang_for_path(&g.file));
    let entry = catalogue::find(&q.concept)?;
    named_but_not_shown(entry.in_lang(lang).unwrap_or(*entry).tokens, q.follow_up.as_deref()?, &shown)
}

/// The text the right answer states: the correct option of a multiple-choice question, the
/// statement of a true true/false question; `None` for the others.
fn right_answer(q: &GeneratedQuestion) -> Option<&str> {
    match q.question_type.as_str() {
        "multiple_choice" => {
            let letter = q.correct.as_deref()?.trim().chars().next()?;
            let index = (letter as usize).checked_sub('A' as usize)?;
            q.options.as_ref()?.get(index).map(String::as_str)
        }
        "true_false" if q.correct.as_deref() == Some("true") => {
            q.question.split_once("True or false:").map(|(_, statement)| statement.trim())
        }
        _ => None,
    }
}

/// `X` of a "look at `X`" in a question.
fn looked_at(question: &str) -> Option<&str> {
    let lower = question.to_lowercase();
    let at = lower.find("look at `")? + "look at `".len();
    let rest = question.get(at..)?;
    rest.split_once('`').map(|(x, _)| x).filter(|x| !x.is_empty())
}

/// Dotted API names in prose (`functools.wraps`, `Promise.all`, `errors.Is`): a lowercase or
/// capitalised identifier, a dot, an identifier; not file names (`package.json`) or numbers.
pub fn dotted_names(text: &str) -> Vec<&str> {
    let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_');
    text.split(|c: char| c.is_whitespace() || "(),;:`'\"".contains(c))
        .map(|w| w.trim_end_matches(['.', '?', '!']))
        .filter(|w| {
            let Some((left, right)) = w.split_once('.') else { return false };
            ident(left)
                && ident(right)
                && !left.chars().next().is_some_and(|c| c.is_ascii_digit())
                && ![
                    "json", "toml", "yaml", "md", "txt", "js", "ts", "py", "rs", "go", "rb", "cs", "java", "lock",
                    "mod", "g", "e",
                ]
                .contains(&right)
                && !["e", "i"].contains(&left)
        })
        .collect()
}

/// A sentence said twice in `text` (compared trimmed and case-folded). Sentences end at
/// `.`, `!` or `?` followed by whitespace, so `client.get` in code is no end.
pub fn repeated_sentence(text: &str) -> Option<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let ends = matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace());
        if !ends {
            continue;
        }
        let sentence = text[start..=i].trim();
        start = i + 1;
        if sentence.len() > 12 && !seen.insert(sentence.to_lowercase()) {
            return Some(sentence.to_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ordering question over `code` (in `path`) with `steps`, grounded as the job grounds it.
    fn ordering_over(path: &str, code: &str, snippet: &str, steps: &[&str]) -> (GeneratedQuestion, Vec<SourceFile>) {
        use crate::analysis::grounding_check::{CannedCode, verify_grounding};
        let files = vec![SourceFile::new(path, code)];
        let mut q: GeneratedQuestion = serde_json::from_value(serde_json::json!({
            "concept": "Closures", "question_type": "ordering", "difficulty": "mid", "snippet": snippet,
            "question": "Put these in the order they run.", "options": steps, "correct": "1,2,3",
            "explanation": "In the order of the code."
        }))
        .expect("a question");
        q.grounding = verify_grounding(&q, &files, CannedCode::Allowed).expect("grounded");
        (q, files)
    }

    #[test]
    fn a_python_closure_is_carried_by_its_nonlocal_and_a_refusal_names_python_words() {
        let counter = "def make_counter():\n    count = 0\n\n    def inc():\n        nonlocal count\n        count += 1\n        return count\n\n    return inc\n";
        let (q, files) =
            ordering_over("counter.py", counter, counter.trim_end(), &["count = 0", "def inc():", "return inc"]);
        assert_eq!(precision_problems(&q, &files), Vec::<String>::new());
        // Steps none of which carries it: refused, asking for this language's words only.
        let sum =
            "def total(rows):\n    values = [r.amount for r in rows]\n    result = sum(values)\n    return result\n";
        let (q, files) = ordering_over(
            "total.py",
            sum,
            sum.trim_end(),
            &["values = [r.amount for r in rows]", "result = sum(values)", "return result"],
        );
        let problems = precision_problems(&q, &files);
        assert!(problems.iter().any(|p| p.contains("carries Closures")), "{problems:?}");
        assert!(problems.iter().all(|p| !p.contains("`=>`")), "{problems:?}");
    }

    #[test]
    fn a_follow_up_about_code_the_snippet_does_not_show_is_refused() {
        let question = |follow_up: &str| -> GeneratedQuestion {
            serde_json::from_value(serde_json::json!({
                "concept": "Higher-order functions", "question_type": "true_false", "difficulty": "junior",
                "snippet": "const amounts = orders.map((o) => o.amount);",
                "question": "True or false: map returns a new array.", "correct": "true",
                "explanation": "map builds a new array and leaves orders as it was.", "follow_up": follow_up,
            }))
            .unwrap()
        };
        let off = question("Why does `reduce` need an initial value?");
        assert_eq!(
            precision_problems(&off, &[]),
            ["the follow-up asks about `reduce`, which the snippet does not show"]
        );
        assert_eq!(precision_problems(&question("Why does `map` not change orders?"), &[]), Vec::<String>::new());
        // An English word a token spells is no code: "Why reduce" asks about no `reduce`.
        let prose = question("Why reduce the orders to amounts before summing them?");
        assert_eq!(precision_problems(&prose, &[]), Vec::<String>::new());
    }

    #[test]
    fn another_languages_words_pass_only_as_a_labelled_aside_and_never_as_the_answer() {
        let files = vec![SourceFile::new("app.py", "import asyncio\n")];
        let question = |explanation: &str, correct: &str| -> GeneratedQuestion {
            serde_json::from_value(serde_json::json!({
                "concept": "Modules and imports", "question_type": "code_reading", "difficulty": "mid",
                "snippet": null, "question": "What does this import give the module?", "correct": correct,
                "explanation": explanation,
            }))
            .unwrap()
        };
        let aside =
            question("It names the event loop's module. Elsewhere: in JavaScript, package.json lists it.", "asyncio");
        assert_eq!(precision_problems(&aside, &files), Vec::<String>::new());
        let bare = question("It names the module, as package.json would.", "asyncio");
        assert!(precision_problems(&bare, &files).iter().any(|p| p.contains("package.json")));
        let as_answer = question("It names the module.", "Elsewhere: in JavaScript, Promise.all.");
        assert!(precision_problems(&as_answer, &files).iter().any(|p| p.contains("the answer is an aside")));
    }

    #[test]
    fn dotted_names_are_apis_not_files() {
        assert_eq!(
            dotted_names("functools.wraps copies the name; see package.json and e.g. this."),
            ["functools.wraps"]
        );
        assert_eq!(dotted_names("Use Promise.all, not 1.5 or v2."), ["Promise.all"]);
    }

    #[test]
    fn a_sentence_said_twice_is_found() {
        assert_eq!(
            repeated_sentence("It closes the file. Then it returns. It closes the file."),
            Some("It closes the file.".into())
        );
        assert_eq!(repeated_sentence("One thing. Another thing."), None);
    }
}
