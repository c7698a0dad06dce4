//! Which offline questions are not written because they would teach nothing about the
//! session's code (issue 40 §5, "fewer, truer"; the hand-graded sample in docs/QUESTIONS.md):
//! a rule per cause the strict reviewer found, each named, so the quiz job's result can say
//! what each refused. The builders (`analysis::grounded`, the catalogue) make a question from
//! the lines and the concept's entry; these rules then read the finished question against the
//! code it shows.
//!
//! - `generic key`: a multiple choice, true/false or code reading over the user's code (not
//!   an error the session met, whose key explains that error) whose
//!   key (the keyed option, the statement and its correction, the model answer) names nothing
//!   shown in the snippet: the catalogue's definition of the concept, true of any code with
//!   the keyword ("arrange, act, assert" on a parametrize table).
//! - `source order`: an ordering question whose order is the order the lines are written in,
//!   which reading the file answers; asked where the order differs (a `defer`, a `finally`, the
//!   code after a `yield`).
//! - `asked by the story`: a catalogue question with no snippet for a concept the session's
//!   story already asks about with the error's own lines (`offline::session_questions`).

use crate::analysis::catalogue::tokens::find_token;
use crate::analysis::grounded::SessionCode;
use crate::analysis::grounding::GroundingKind;
use crate::analysis::model::FailedCall;
use crate::analysis::questions::GeneratedQuestion;

/// The names of the rules, as the job result counts them.
pub const GENERIC_KEY: &str = "generic key";
pub const SOURCE_ORDER: &str = "source order";
pub const ASKED_BY_THE_STORY: &str = "asked by the story";
/// A question on a concept whose syntax its lines do not show (`analysis::concept_syntax`).
pub const CONCEPT_NOT_SHOWN: &str = "concept not in snippet";

/// The rule `q` breaks, if any. `concept_file` is the concept's `source_file` (a failed call's
/// label for a concept met as an error).
pub fn refusal(q: &GeneratedQuestion, code: &SessionCode<'_>, concept_file: &str) -> Option<&'static str> {
    let quoted = q.grounding.as_ref().is_some_and(|g| g.kind == GroundingKind::Quote);
    // A concept met as an error quotes the error, and its key explains that error in its
    // ecosystem's terms: what the developer met is the lesson, not a definition.
    let about_error = FailedCall::is_label(concept_file);
    match q.question_type.as_str() {
        "multiple_choice" | "true_false" | "code_reading" if quoted && !about_error => {
            let snippet = q.snippet.as_deref()?;
            (!names_shown_code(&key_text(q), snippet)).then_some(GENERIC_KEY)
        }
        "ordering" if quoted && in_source_order(q, code) => Some(SOURCE_ORDER),
        _ => None,
    }
}

/// What the question keys as true: the keyed option, the statement with the explanation
/// that corrects it, the model answer less its "(look at `x`)" pointer, which names a token
/// of the snippet whatever the answer says.
fn key_text(q: &GeneratedQuestion) -> String {
    let correct = q.correct.as_deref().unwrap_or_default();
    match q.question_type.as_str() {
        "multiple_choice" => {
            let index = correct.trim().bytes().next().map(|b| b.wrapping_sub(b'A') as usize);
            let options = q.options.as_deref().unwrap_or_default();
            index.and_then(|i| options.get(i)).cloned().unwrap_or_default()
        }
        "true_false" => {
            let statement = q.question.rsplit_once("True or false:").map_or(q.question.as_str(), |(_, s)| s);
            format!("{statement} {}", q.explanation)
        }
        _ => without_pointer(correct),
    }
}

/// `text` less each "(look at `…`)" aside.
fn without_pointer(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("(look at `") {
        out.push_str(&rest[..at]);
        rest = rest[at..].find(')').map_or("", |end| &rest[at + end + 1..]);
    }
    out.push_str(rest);
    out
}

/// Whether `key` quotes (between backticks) a piece of code the snippet shows, as a whole
/// token.
fn names_shown_code(key: &str, snippet: &str) -> bool {
    key.split('`').skip(1).step_by(2).map(str::trim).filter(|s| !s.is_empty()).any(|span| {
        // `@contextmanager`, `except ValueError:`: any span the snippet holds whole.
        find_token(snippet, span).is_some() || (span.contains(' ') && snippet.contains(span))
    })
}

/// Whether the keyed order of an ordering question is the order its steps are written in.
fn in_source_order(q: &GeneratedQuestion, code: &SessionCode<'_>) -> bool {
    let (Some(g), Some(options), Some(correct)) = (q.grounding.as_ref(), q.options.as_ref(), q.correct.as_deref())
    else {
        return false;
    };
    let Some(file) = code.files.iter().find(|f| f.path == g.file) else { return false };
    let first = (g.line_start as usize).saturating_sub(1);
    let last = (g.line_end as usize).min(file.lines.len());
    let line_of = |step: &str| (first..last).find(|&i| file.lines[i].trim() == step.trim());
    let keyed: Option<Vec<usize>> = correct
        .split(',')
        .map(|n| n.trim().parse::<usize>().ok().and_then(|n| options.get(n.checked_sub(1)?)).and_then(|s| line_of(s)))
        .collect();
    keyed.is_some_and(|lines| lines.windows(2).all(|w| w[0] < w[1]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::grounding::Grounding;
    use crate::analysis::model::SourceFile;

    fn question(qtype: &str, snippet: Option<&str>, correct: &str, options: Option<&[&str]>) -> GeneratedQuestion {
        GeneratedQuestion {
            concept: "Unit tests".into(),
            question_type: qtype.into(),
            difficulty: "junior".into(),
            snippet: snippet.map(str::to_owned),
            question: "Read this code. What does it do?".into(),
            options: options.map(|o| o.iter().map(|s| s.to_string()).collect()),
            correct: Some(correct.into()),
            explanation: String::new(),
            follow_up: None,
            tags: Vec::new(),
            grounding: Some(Grounding {
                file: "tests/test_retry.py".into(),
                line_start: 1,
                line_end: 4,
                kind: GroundingKind::Quote,
                mutation: None,
            }),
        }
    }

    const TEST: &str = "@pytest.mark.parametrize(\"n\", [1, 2])\ndef test_n(n):\n    assert n > 0\n    assert n < 3\n";

    #[test]
    fn a_key_that_is_the_catalogues_definition_is_refused_and_one_that_names_the_lines_is_kept() {
        let files = vec![SourceFile { path: "tests/test_retry.py".into(), content: TEST.into(), fragment: false }];
        let code = SessionCode::new(&files);
        let generic = question(
            "code_reading",
            Some(TEST),
            "It relies on Unit tests (look at `assert`). A unit test has an arrange, act, assert structure.",
            None,
        );
        assert_eq!(refusal(&generic, &code, "tests/test_retry.py"), Some(GENERIC_KEY));
        let specific = question(
            "code_reading",
            Some(TEST),
            "`@pytest.mark.parametrize` runs `test_n` once per value of `n`, each as its own test.",
            None,
        );
        assert_eq!(refusal(&specific, &code, "tests/test_retry.py"), None);
        let options: &[&str] = &["Tests are slow.", "A unit test checks one behaviour in isolation.", "x", "y"];
        let mc = question("multiple_choice", Some(TEST), "B", Some(options));
        assert_eq!(refusal(&mc, &code, "tests/test_retry.py"), Some(GENERIC_KEY));
    }

    #[test]
    fn an_ordering_in_the_order_the_lines_are_written_is_refused_and_a_reordered_one_kept() {
        let src = "def f():\n    a = 1\n    b = 2\n    return a + b\n";
        let files = vec![SourceFile { path: "tests/test_retry.py".into(), content: src.into(), fragment: false }];
        let code = SessionCode::new(&files);
        let steps: &[&str] = &["return a + b", "a = 1", "b = 2"];
        let written = question("ordering", None, "2,3,1", Some(steps));
        assert_eq!(refusal(&written, &code, "tests/test_retry.py"), Some(SOURCE_ORDER));
        // A keyed order that is not the written one (as a `defer` or a `finally` gives).
        let reordered = question("ordering", None, "3,2,1", Some(steps));
        assert_eq!(refusal(&reordered, &code, "tests/test_retry.py"), None);
    }
}
