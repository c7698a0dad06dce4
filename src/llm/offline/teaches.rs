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
//! - `blank given away`: a fill-in-the-blank whose answer the snippet shows elsewhere, or a
//!   keyword of the grammar that the line around the blank forces.
//! - `blank has twins`: a blank another token fills as well (Ruby's `collect` for `map`,
//!   `toEqual` for `toBe` on a number); `blank undecided`: a blank that is a type in a
//!   declaration, which the lines shown do not decide.
//! - `asked by the story`: a catalogue question with no snippet for a concept the session's
//!   story already asks about with the error's own lines (`offline::session_questions`).

use crate::analysis::catalogue::{self, tokens::find_token};
use crate::analysis::failures::ErrorKind;
use crate::analysis::grounded::SessionCode;
use crate::analysis::grounding::GroundingKind;
use crate::analysis::model::FailedCall;
use crate::analysis::questions::GeneratedQuestion;
use crate::analysis::syntax::parse_file;
use crate::analysis::{Lang, lang_for_path};

/// The names of the rules, as the job result counts them.
pub const GENERIC_KEY: &str = "generic key";
pub const SOURCE_ORDER: &str = "source order";
pub const ASKED_BY_THE_STORY: &str = "asked by the story";
/// A blank whose answer the snippet shows elsewhere or the grammar forces.
pub const GIVEN_AWAY: &str = "blank given away";
/// A question on a concept whose syntax its lines do not show (`analysis::concept_syntax`).
pub const CONCEPT_NOT_SHOWN: &str = "concept not in snippet";
/// A blank another token fills as well (`collect` for Ruby's `map`).
pub const ANOTHER_FITS: &str = "blank has twins";
/// A blank whose answer the lines shown cannot decide (a field's type).
pub const UNDECIDED: &str = "blank undecided";

/// The rule `q` breaks, if any. `concept_file` is the concept's `source_file` (a failed call's
/// label for a concept met as an error).
pub fn refusal(q: &GeneratedQuestion, code: &SessionCode<'_>, concept_file: &str) -> Option<&'static str> {
    // A quote of the session's code, or a question showing code with no grounding recorded
    // (the fallback's, over the concept's own snippet or the catalogue's labelled example).
    let quoted = match &q.grounding {
        Some(g) => g.kind == GroundingKind::Quote,
        None => q.snippet.is_some(),
    };
    // A concept met as an error quotes the error, or the code it points at, and its key
    // explains that kind of error in its ecosystem's terms (a type error, a missing crate):
    // what the developer met is the lesson, not a definition. Not the entry for any other
    // error, whose facts are about stack traces: over the code (a compile error's line, with
    // no trace) they are a definition, and held to the rule like any other.
    let any_error = q.concept == ErrorKind::Other.concept_in(None);
    let about_error = FailedCall::is_label(concept_file)
        && (!any_error || q.grounding.as_ref().is_none_or(|g| FailedCall::is_label(&g.file)));
    match q.question_type.as_str() {
        // A concept the catalogue does not know (named by an LLM) has no catalogue definition
        // to repeat: its question is built from its own description of this code.
        "multiple_choice" | "true_false" | "code_reading"
            if quoted && !about_error && catalogue::find(&q.concept).is_some() =>
        {
            let snippet = q.snippet.as_deref()?;
            let own_words = catalogue::find(&q.concept).map_or(&[][..], |e| e.tokens);
            (!names_shown_code(&key_text(q), snippet, own_words)).then_some(GENERIC_KEY)
        }
        "ordering" if quoted && in_source_order(q, code) => Some(SOURCE_ORDER),
        "fill_in_blank" => blank_refusal(q, code),
        _ => None,
    }
}

/// The rule a fill-in-the-blank breaks: its answer is given away ([`GIVEN_AWAY`]), another
/// token fits the blank as well ([`ANOTHER_FITS`]), or the lines shown do not decide it (a
/// type, a declared name, a keyword argument's name, a derived trait: [`UNDECIDED`]).
fn blank_refusal(q: &GeneratedQuestion, code: &SessionCode<'_>) -> Option<&'static str> {
    if blank_given_away(q) {
        return Some(GIVEN_AWAY);
    }
    let answer = q.correct.as_deref()?.trim();
    let lang = q.grounding.as_ref().and_then(|g| lang_for_path(&g.file));
    if lang.is_some_and(|lang| EQUALLY_RIGHT.iter().any(|(l, words)| *l == lang && words.contains(&answer))) {
        return Some(ANOTHER_FITS);
    }
    // The ORM entry's `filter` on a Java stream (`repository.findAll().stream().filter(…)`)
    // filters in memory, after the query: the concept is not on that line.
    let snippet = q.snippet.as_deref()?;
    if q.concept == "ORM queries" && answer == "filter" && snippet.contains(".stream()") {
        return Some(CONCEPT_NOT_SHOWN);
    }
    // A trait in a derive list: any derivable trait fits the line (a struct of strings
    // derives `Clone` as well as `Debug`); what needs which is in lines not shown.
    let line = q.snippet.as_deref()?.lines().find(|l| l.contains("___"))?;
    if line.trim_start().starts_with("#[derive(") {
        return Some(UNDECIDED);
    }
    match node_in_file(q, code) {
        Some(Answer::Keyword) => Some(GIVEN_AWAY),
        Some(Answer::Undecided) => Some(UNDECIDED),
        _ => None,
    }
}

/// Answers with a twin that makes the line do the same (or the same for what the snippet
/// shows): the blank "does what it did before" with either, so keying one marks a right
/// answer wrong (the hand-graded sample, docs/QUESTIONS.md round 3, cause 4).
const EQUALLY_RIGHT: &[(Lang, &[&str])] = &[
    (
        Lang::Ruby,
        &["map", "collect", "select", "filter", "find", "detect", "reduce", "inject", "size", "length", "count"],
    ),
    // SQLAlchemy's `select(...).where(...)`, which `.filter(...)` also spells (Python's own
    // `filter` builtin has no twin, so only `where` is listed).
    (Lang::Python, &["where"]),
    // vitest's and Jest's `toBe`, `toEqual` and `toStrictEqual` agree on numbers and strings.
    (Lang::TypeScript, &["toBe", "toEqual", "toStrictEqual"]),
    (Lang::JavaScript, &["toBe", "toEqual", "toStrictEqual"]),
    // `sync.RWMutex` has `Lock`/`Unlock` too.
    (Lang::Go, &["Mutex", "RWMutex"]),
];

/// What the blank's answer is in the tree of the whole file it is cut from.
enum Answer {
    /// A token the grammar does not name (a keyword): the surrounding file forces it, even
    /// where the snippet alone parses otherwise (Ruby's `rescue` in a method body shown
    /// without its `def`).
    Keyword,
    /// A type in a declaration (`value string` in a struct, `id: int` in a dataclass), a name
    /// being declared (`ReentrantLock ___ = …`) or a keyword argument's name
    /// (`@dataclass(___=True)`): any of many fits the lines shown.
    Undecided,
    Other,
}

/// The answer's node in its file's tree, where the snippet's lines are the file's.
fn node_in_file(q: &GeneratedQuestion, code: &SessionCode<'_>) -> Option<Answer> {
    let (g, snippet, answer) = (q.grounding.as_ref()?, q.snippet.as_deref()?, q.correct.as_deref()?.trim());
    let file = code.files.iter().find(|f| f.path == g.file)?;
    let tree = file.tree.as_ref()?;
    let (row, line) = snippet.lines().enumerate().find(|(_, l)| l.contains("___"))?;
    let column = line.find("___")?;
    let text = *file.lines.get((g.line_start as usize).checked_sub(1)? + row)?;
    (text.get(column..column + answer.len()) == Some(answer)).then_some(())?;
    let start = text.as_ptr() as usize - file.src.as_ptr() as usize + column;
    let node = tree.root_node().descendant_for_byte_range(start, start + answer.len())?;
    let exact = node.start_byte() == start && node.end_byte() == start + answer.len();
    let parent = node.parent();
    let parent_kind = parent.map_or("", |p| p.kind());
    // The node as the named field of a declaration: the name it declares.
    let declared = parent.is_some_and(|p| {
        DECLARING.contains(&p.kind())
            && ["name", "left", "pattern"].iter().any(|f| p.child_by_field_name(f).is_some_and(|n| n.id() == node.id()))
    });
    Some(match node.kind() {
        _ if !exact => Answer::Other,
        _ if !node.is_named() => Answer::Keyword,
        "type_identifier"
        | "primitive_type"
        | "predefined_type"
        | "integral_type"
        | "floating_point_type"
        | "boolean_type" => Answer::Undecided,
        // Python's annotation `id: int` is an identifier in a `type`.
        _ if parent_kind == "type" => Answer::Undecided,
        _ if declared => Answer::Undecided,
        _ => Answer::Other,
    })
}

/// Nodes whose `name`, `left` or `pattern` field is a name they declare (a variable, a keyword
/// argument), in the grammars' spellings. A function's name is not among them: a trait's
/// method (`fn drop` in `impl Drop`) is decided by the trait.
const DECLARING: &[&str] = &[
    "variable_declarator",
    "keyword_argument",
    "let_declaration",
    "assignment",
    "short_var_declaration",
    "var_spec",
    "const_spec",
    "lexical_declaration",
];

/// Whether a blank's answer is in sight or forced by the syntax: the answer occurs elsewhere
/// in the snippet shown (`err` in `if ___ != nil` under `err := …`), or it is one of the
/// grammar's own tokens (a keyword: `select`, `match`, `try`, `rescue`), which the line
/// around the blank leaves no choice about. The second is read from the tree of the snippet
/// with the answer put back: a keyword is a node the grammar does not name.
fn blank_given_away(q: &GeneratedQuestion) -> bool {
    let (Some(snippet), Some(answer)) = (q.snippet.as_deref(), q.correct.as_deref().map(str::trim)) else {
        return false;
    };
    let Some(at) = snippet.find("___") else { return false };
    let restored = format!("{}{answer}{}", &snippet[..at], &snippet[at + 3..]);
    let elsewhere = format!("{}{}", &snippet[..at], &snippet[at + 3..]);
    // Elsewhere in any case: `fn ___(&mut self)` under `impl Drop for` is `drop`.
    if !answer.is_empty()
        && (find_token(&elsewhere, answer).is_some()
            || find_token(&elsewhere.to_lowercase(), &answer.to_lowercase()).is_some())
    {
        return true;
    }
    let Some(path) = q.grounding.as_ref().map(|g| g.file.as_str()) else { return false };
    let Some((_, tree)) = parse_file(path, &restored) else { return false };
    let end = at + answer.len();
    tree.root_node()
        .descendant_for_byte_range(at, end)
        .is_some_and(|node| !node.is_named() && node.start_byte() == at && node.end_byte() == end)
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

/// `text` less each "(look at `…`)" aside and the closing "It also points at line N (`…`)"
/// sentence: both quote a line of the snippet whatever the rest of the key says.
fn without_pointer(text: &str) -> String {
    let text = text.split("It also points at line ").next().unwrap_or(text);
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
/// token, other than the concept's own keywords.
fn names_shown_code(key: &str, snippet: &str, own_words: &[&str]) -> bool {
    // The concept's own keywords (`await` for Async/await, `with` for context managers) are in
    // every snippet of it and in every definition of it: they say nothing about this code.
    let spans = key.split('`').skip(1).step_by(2).map(str::trim);
    // `@contextmanager` is the keyword `contextmanager` as a decorator.
    let own = |s: &str| own_words.contains(&s) || own_words.contains(&s.trim_start_matches('@'));
    spans.filter(|s| !s.is_empty() && !own(s)).any(|span| {
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
    fn a_blank_the_snippet_shows_elsewhere_or_the_grammar_forces_is_refused_and_a_name_is_kept() {
        let files: Vec<SourceFile> = Vec::new();
        let code = SessionCode::new(&files);
        let blank = |snippet: &str, answer: &str, file: &str| {
            let mut q = question("fill_in_blank", Some(snippet), answer, None);
            if let Some(g) = q.grounding.as_mut() {
                g.file = file.into();
                g.kind = GroundingKind::Blank;
            }
            q
        };
        let go = "func f() error {\n\terr := run()\n\tif ___ != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n";
        assert_eq!(refusal(&blank(go, "err", "a.go"), &code, "a.go"), Some(GIVEN_AWAY));
        let rust = "fn f(x: Option<u8>) -> u8 {\n    ___ x {\n        Some(v) => v,\n        None => 0,\n    }\n}\n";
        assert_eq!(refusal(&blank(rust, "match", "a.rs"), &code, "a.rs"), Some(GIVEN_AWAY));
        let drop = "impl Drop for Scratch {\n    fn ___(&mut self) {\n        let _ = fs::remove_dir_all(&self.root);\n    }\n}\n";
        assert_eq!(refusal(&blank(drop, "drop", "a.rs"), &code, "a.rs"), Some(GIVEN_AWAY), "the trait names it");
        let named = "fn f(xs: &[u8]) -> usize {\n    xs.iter().___(|x| **x > 2).count()\n}\n";
        assert_eq!(refusal(&blank(named, "filter", "a.rs"), &code, "a.rs"), None);
    }

    /// A blank cut from a file, as the builders make one: `line` (1-based) of `src` with
    /// `answer` blanked, shown with the lines `first..=last`.
    fn blank_in(path: &str, src: &str, (first, last): (u32, u32), line: u32, answer: &str) -> GeneratedQuestion {
        let lines: Vec<&str> = src.lines().collect();
        let shown: Vec<String> = (first..=last)
            .map(|n| {
                let text = lines[n as usize - 1];
                if n == line { text.replacen(answer, "___", 1) } else { text.to_string() }
            })
            .collect();
        let mut q = question("fill_in_blank", Some(&shown.join("\n")), answer, None);
        q.grounding = Some(Grounding {
            file: path.into(),
            line_start: first,
            line_end: last,
            kind: GroundingKind::Blank,
            mutation: None,
        });
        q
    }

    #[test]
    fn a_blank_with_a_twin_a_type_or_a_keyword_of_the_whole_file_is_refused() {
        let ruby = "class Importer
  def row(r)
    Item.from_row(r.to_h)
  rescue KeyError => e
    nil
  end

  def names(xs)
    xs.compact.map(&:downcase)
  end
end
";
        let go = "package cache

type entry struct {
	value   string
	count   int
}

func (e entry) Size() int {
	return len(e.value)
}
";
        let files = vec![SourceFile::new("lib/importer.rb", ruby), SourceFile::new("cache.go", go)];
        let code = SessionCode::new(&files);
        // `collect` does what `map` does.
        let map = blank_in("lib/importer.rb", ruby, (8, 10), 9, "map");
        assert_eq!(refusal(&map, &code, "lib/importer.rb"), Some(ANOTHER_FITS));
        // The body shown without its `def`: the snippet alone reads `rescue` as a call, the file
        // as the keyword it is.
        let rescue = blank_in("lib/importer.rb", ruby, (3, 5), 4, "rescue");
        assert_eq!(refusal(&rescue, &code, "lib/importer.rb"), Some(GIVEN_AWAY));
        // A field's type that nothing shown decides.
        let field = blank_in("cache.go", go, (3, 6), 4, "string");
        assert_eq!(refusal(&field, &code, "cache.go"), Some(UNDECIDED));
        // A name the lines shown call for stays.
        let call = blank_in("cache.go", go, (8, 10), 9, "len");
        assert_eq!(refusal(&call, &code, "cache.go"), None);
    }

    #[test]
    fn a_blank_on_a_declared_name_an_annotation_a_keyword_argument_or_a_derive_is_undecided() {
        let py = "@dataclass(frozen=True)\nclass Todo:\n    id: int\n    title: str\n\ndef total(xs):\n    count = len(xs)\n    return sum(xs) / count\n";
        let java = "class S {\n    private final ReentrantLock lock = new ReentrantLock();\n    void f() { lock.lock(); }\n}\n";
        let rust = "#[derive(Debug, Clone)]\npub struct NewNote {\n    pub title: String,\n}\n\nfn close(s: &mut S) {\n    drop(s);\n}\n";
        let files = vec![
            SourceFile::new("models.py", py),
            SourceFile::new("S.java", java),
            SourceFile::new("src/notes.rs", rust),
        ];
        let code = SessionCode::new(&files);
        let cases = [
            (blank_in("models.py", py, (1, 4), 1, "frozen"), "a keyword argument's name"),
            (blank_in("models.py", py, (1, 4), 3, "int"), "an annotation"),
            (blank_in("S.java", java, (1, 2), 2, "lock"), "a field's name"),
            (blank_in("src/notes.rs", rust, (1, 4), 1, "Debug"), "a derived trait"),
        ];
        for (q, what) in &cases {
            let path = q.grounding.as_ref().map(|g| g.file.clone()).unwrap_or_default();
            assert_eq!(refusal(q, &code, &path), Some(UNDECIDED), "{what}");
        }
        // A call the lines decide stays (`len` of `xs`, `drop` of `s`).
        assert_eq!(refusal(&blank_in("models.py", py, (6, 8), 7, "len"), &code, "models.py"), None);
        assert_eq!(refusal(&blank_in("src/notes.rs", rust, (6, 8), 7, "drop"), &code, "src/notes.rs"), None);
    }

    #[test]
    fn a_rubrics_closing_pointer_to_a_line_does_not_make_a_definition_about_the_code() {
        let files = vec![SourceFile { path: "tests/test_retry.py".into(), content: TEST.into(), fragment: false }];
        let code = SessionCode::new(&files);
        let q = question(
            "code_reading",
            Some(TEST),
            "A unit test has an arrange, act, assert structure. It also points at line 3 (`assert n > 0`), where this code uses `assert`.",
            None,
        );
        assert_eq!(refusal(&q, &code, "tests/test_retry.py"), Some(GENERIC_KEY));
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
