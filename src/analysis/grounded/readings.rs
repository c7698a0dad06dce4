//! Code readings whose key is read from the lines shown (issue 40 §4: "a code-reading rubric
//! holds at least one point taken from the lines shown"), where the catalogue's own model
//! answer would be its definition of the concept (refused as `generic key`).
//!
//! - A test: its name, what it sets up and the checks it makes, quoted, and that it fails at
//!   the first check that does not hold (once per row, for a table's test).
//!
//! Each reading is a pure function of the file's lines; `None` where the lines shown do not
//! hold what the reading needs (no check in sight), and the caller keeps the catalogue's.

use super::CodeFile;
use super::units::Span;
use crate::analysis::catalogue::tokens::find_token;

/// A code reading built from the lines: the question asked and its model answer.
pub struct Reading {
    pub question: String,
    pub answer: String,
}

/// The reading of lines `span` of `file` for a concept of `category`, quoted at `place`.
pub fn reading(category: &str, file: &CodeFile<'_>, span: Span, place: &str) -> Option<Reading> {
    match category {
        "testing" => test_reading(file, span, place),
        _ => None,
    }
}

/// How a test statement starts when it is a check, in the languages the grammars cover.
const CHECKS: &[&str] = &[
    "assert",
    "self.assert",
    "expect(",
    "expect {",
    "Assert.",
    "assertEquals(",
    "assertTrue(",
    "assertFalse(",
    "assertThat(",
    "assertThrows(",
    "require.",
    "t.Error",
    "t.Fatal",
    "debug_assert",
];

/// Lines that start or end a block and say nothing on their own.
fn is_punctuation(line: &str) -> bool {
    line.chars().all(|c| matches!(c, '{' | '}' | '(' | ')' | '[' | ']' | ';' | ',')) || line == "end"
}

/// What a test in `span` checks: its name, its first statement that is not a check, and its
/// first two checks. A Go check is the `if` whose body reports with `t.Errorf`/`t.Fatalf`.
fn test_reading(file: &CodeFile<'_>, (first, last): Span, place: &str) -> Option<Reading> {
    let lines = &file.lines[first..=last];
    let masked = &file.masked[first..=last];
    let header = (0..lines.len()).find_map(|i| test_name(lines, masked, i).map(|name| (i, name)));
    let (start, name) = header?;
    let is_check = |l: &str| CHECKS.iter().any(|c| l.starts_with(c));
    // Each check: its line, its text, and the line a failure is reported at (Go's `t.Errorf`
    // under the `if`, which is the line `go test` prints; the check's own elsewhere).
    let mut checks: Vec<(usize, String, usize)> = Vec::new();
    let mut statements: Vec<(usize, &str)> = Vec::new();
    // The test's own body: the lines after its header indented deeper than it (the next
    // `it`, `def test_` or closing `}`/`end` at its level ends it).
    let indent = |l: &str| l.len() - l.trim_start().len();
    let own = indent(masked[start].as_str());
    let end = (start + 1..lines.len())
        .find(|&i| !masked[i].trim().is_empty() && indent(masked[i].as_str()) <= own)
        .unwrap_or(lines.len());
    for i in start + 1..end {
        let code = masked[i].trim();
        let text = lines[i].trim();
        if code.is_empty() || is_punctuation(code) || code.starts_with("//") || code.starts_with('#') {
            continue;
        }
        if code.starts_with("t.Error") || code.starts_with("t.Fatal") {
            // Go: the condition above the report is the check.
            let above = (start + 1..i).rev().find(|&j| !masked[j].trim().is_empty());
            if let Some(j) = above.filter(|&j| masked[j].trim().starts_with("if ")) {
                statements.retain(|(at, _)| *at != j);
                checks.push((j, lines[j].trim().to_string(), i));
            }
            continue;
        }
        if is_check(code) {
            checks.push((i, statement(lines, masked, i), i));
        } else if !code.starts_with("for ") && !code.starts_with("} else") {
            statements.push((i, text));
        }
    }
    checks.sort_by_key(|(at, _, _)| *at);
    checks.dedup_by_key(|(at, _, _)| *at);
    // Go's `if err != nil { t.Fatal(err) }` guards the call; the test's behaviour is its other
    // checks, where it has some.
    let guard = |c: &str| trim_block(c) == "if err != nil";
    if checks.iter().any(|(_, c, _)| !guard(c)) {
        checks.retain(|(_, c, _)| !guard(c));
    }
    let (first_at, first_check, reported_at) = checks.first()?;
    // What it runs: the last statement before the first check that assigns a name the check
    // reads (`got := Sum(1, 2)` for `if got != 3`), not any declaration above it.
    let setup = statements
        .iter()
        .rev()
        .filter(|(at, _)| at < first_at)
        .find(|(_, s)| assigned(s).iter().any(|name| find_token(first_check, name).is_some()))
        .map(|(_, s)| *s);
    let mut distinct: Vec<&str> = Vec::new();
    for (_, check, _) in &checks {
        if !distinct.contains(&check.as_str()) && distinct.len() < 2 {
            distinct.push(check);
        }
    }
    let shown_checks: Vec<String> = distinct.iter().map(|c| format!("`{}`", trim_block(c))).collect();
    // A table's test: the rows above it (`@pytest.mark.parametrize`, `@ParameterizedTest`,
    // `[Theory]`, contiguous with its header) or a loop over them in its body (Go's `range tests`).
    let above = lines[..start].iter().rev().take_while(|l| !l.trim().is_empty());
    let marked_rows = above.map(|l| l.trim()).any(|l| {
        l.starts_with("@pytest.mark.parametrize") || l.starts_with("@ParameterizedTest") || l.starts_with("[Theory]")
    });
    let loops_rows = masked[start + 1..end].iter().any(|l| l.contains("range tests") || l.contains("range cases"));
    let table = marked_rows || loops_rows;
    let sets_up = setup.map(|s| format!(" runs `{}` and", trim_block(s))).unwrap_or_default();
    let rows = if table { ", once for each row of its table" } else { "" };
    let question = format!(
        "Read this test from {place}. What behaviour does `{name}` check, and where does it fail when the code under test breaks that behaviour?"
    );
    let at = first + reported_at + 1;
    // A Go check is an `if` on the failure (its body reports it, at the line `go test` names);
    // the others assert what holds.
    let fails_when = if first_check.starts_with("if ") {
        format!("when its condition is true (the report under it, line {at}, is what the failure names)")
    } else {
        format!("at line {at} when it does not hold")
    };
    let fails = if checks.len() > 1 {
        format!(
            "it fails at the first check that finds the behaviour broken; the first is `{}`, which fails {fails_when}",
            trim_block(first_check)
        )
    } else {
        format!("it fails {fails_when}")
    };
    let answer = format!("`{name}`{sets_up} checks {}{rows}; {fails}.", shown_checks.join(" and "));
    Some(Reading { question, answer })
}

/// The statement starting on line `i`, on one line: a check written over several lines
/// (`assert_eq!(\n tokens,\n Ok(vec![…])\n);`) is joined until its brackets close, and one
/// longer than a line is cut after its first argument (`assert_eq!(tokens, …)`).
fn statement(lines: &[&str], masked: &[String], i: usize) -> String {
    let mut depth = 0i32;
    let mut parts = Vec::new();
    for j in i..lines.len().min(i + 12) {
        depth += masked[j]
            .chars()
            .map(|c| match c {
                '(' | '[' | '{' => 1,
                ')' | ']' | '}' => -1,
                _ => 0,
            })
            .sum::<i32>();
        parts.push(lines[j].trim());
        if depth <= 0 {
            break;
        }
    }
    let joined = parts.join(" ").replace("( ", "(").replace(" )", ")");
    if joined.len() <= 90 {
        return joined;
    }
    match (joined.find('('), joined.find(',')) {
        (Some(open), Some(comma)) if open < comma => format!("{}, …)", &joined[..comma]),
        _ => lines[i].trim().to_string(),
    }
}

/// The names a statement assigns: `got, err` of `got, err := f()`, `tokens` of `let tokens: T
/// = …`, `service` of `OrderService service = new …`, `order` of `order = Order.new`; none for
/// anything else (a call, a comparison, a declaration without a value).
fn assigned(statement: &str) -> Vec<&str> {
    let Some((left, right)) = statement.split_once('=') else { return Vec::new() };
    if right.starts_with('=') || left.ends_with(['!', '<', '>', '=']) {
        return Vec::new();
    }
    let left = left.trim_end_matches(':').trim();
    // `let tokens: Result<…>` names `tokens`; a Go `a, b :=` or Python `a, b =` names both.
    let left = if left.starts_with("let ") { left.split(':').next().unwrap_or(left) } else { left };
    left.split(',')
        .filter_map(|part| part.split_whitespace().next_back())
        .map(|name| name.trim_start_matches('&'))
        .filter(|name| !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .collect()
}

/// A check or statement without the block it opens (`if got != want {` → `if got != want`).
fn trim_block(line: &str) -> &str {
    line.trim().trim_end_matches('{').trim_end()
}

/// The name of the test line `i` of `lines` declares: `def test_x(`, `func TestX(`, `it("…"`,
/// `test("…"`, `it "…" do`, or a function marked a test on the line above (`#[test]`, `@Test`,
/// `[Fact]`). `masked` is the lines with strings blanked (a name in a string is read from
/// the line as written).
fn test_name(lines: &[&str], masked: &[String], i: usize) -> Option<String> {
    let code = masked[i].trim_start();
    let text = lines[i].trim_start();
    let ident = |rest: &str| {
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        (!name.is_empty()).then_some(name)
    };
    // The name starts at the prefix's last four letters, `test` or `Test`.
    for prefix in ["def test", "async def test", "func Test"] {
        if code.starts_with(prefix) {
            return ident(&text[prefix.len() - 4..]);
        }
    }
    for prefix in ["it(", "test(", "it \"", "it '"] {
        if code.starts_with(prefix) {
            let quoted = text.split(['"', '\'', '`']).nth(1)?;
            return (!quoted.is_empty()).then(|| quoted.to_string());
        }
    }
    let marked = i.checked_sub(1).map(|above| masked[above].trim()).is_some_and(|above| {
        ["#[test]", "#[tokio::test]", "@Test", "@ParameterizedTest", "[Fact]", "[Theory]"]
            .iter()
            .any(|m| above.starts_with(m))
    });
    if !marked {
        return None;
    }
    let after_fn = code.find("fn ").map(|at| &text[at + 3..]);
    let before_paren = || code.find('(').and_then(|paren| code[..paren].split_whitespace().last()).and_then(ident);
    after_fn.and_then(ident).or_else(before_paren)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::SourceFile;

    fn read(path: &str, src: &str) -> Option<String> {
        let file = SourceFile::new(path, src);
        let code = CodeFile::new(&file);
        reading("testing", &code, (0, code.lines.len() - 1), path).map(|r| r.answer)
    }

    #[test]
    fn a_tests_reading_quotes_its_own_checks_and_only_its_own() {
        let rspec = "describe Item do\n  it \"sums\" do\n    order = Order.new\n    expect(order.total).to eq(6)\n  end\n\n  it \"validates\" do\n    expect(Order.new).not_to be_valid\n  end\nend\n";
        let said = read("spec/item_spec.rb", rspec).expect("a reading");
        assert!(
            said.starts_with("`sums` runs `order = Order.new` and checks `expect(order.total).to eq(6)`"),
            "{said}"
        );
        assert!(
            !said.contains("be_valid") && said.contains("line 4"),
            "the next test's check is not this one's: {said}"
        );
        let pytest = "@pytest.mark.parametrize(\"n\", [1, 2])\ndef test_positive(n):\n    assert n > 0\n";
        let said = read("tests/test_n.py", pytest).expect("a reading");
        assert!(said.contains("`assert n > 0`") && said.contains("once for each row"), "{said}");
        // Go: the `if` above `t.Errorf` is the check, and it fails when it is true.
        let go = "func TestSum(t *testing.T) {\n\tgot := Sum(1, 2)\n\tif got != 3 {\n\t\tt.Errorf(\"got %d\", got)\n\t}\n}\n";
        let said = read("sum_test.go", go).expect("a reading");
        assert!(said.contains("runs `got := Sum(1, 2)` and checks `if got != 3`"), "{said}");
        assert!(said.contains("condition is true") && said.contains("line 4"), "the report's line: {said}");
        // An `err` guard is not the behaviour when the test checks something else.
        let guarded = "func TestLimit(t *testing.T) {\n\tpeak, err := Run()\n\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n\tif peak > 2 {\n\t\tt.Errorf(\"peak %d\", peak)\n\t}\n}\n";
        let said = read("limit_test.go", guarded).expect("a reading");
        assert!(said.contains("checks `if peak > 2`") && !said.contains("err != nil"), "{said}");
        assert!(said.contains("runs `peak, err := Run()`"), "{said}");
        // A check over several lines is one statement, cut after its first argument.
        let rust = format!(
            "#[test]\nfn lexes() {{\n    let tokens = lex(\"a\");\n    assert_eq!(\n        tokens,\n        vec![{}],\n    );\n}}\n",
            "Token::Ident(\"a\"), ".repeat(6)
        );
        let said = read("src/lexer.rs", &rust).expect("a reading");
        assert!(said.contains("`assert_eq!(tokens, …)`"), "{said}");
        // No check in the test: no reading (the caller keeps the catalogue's).
        assert!(read("tests/test_x.py", "def test_nothing():\n    run()\n").is_none());
        // Not a test.
        assert!(read("src/lib.rs", "fn helper() {\n    assert!(true);\n}\n").is_none());
    }
}
