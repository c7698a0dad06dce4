//! An error read in its own tool's terms: the headline line each tool puts first (rustc's
//! `error[E…]`, `go test`'s `--- FAIL:`, pytest's `E ` lines, vitest's `AssertionError`,
//! JUnit's `AssertionFailedError`, RSpec's `Failure/Error:`, `dotnet test`'s `Failed …`), the
//! lines quoted with it, and a sentence saying what that tool means by it. One table: a tool
//! is one entry. An error no entry knows is read from its first marked line
//! (`failures::excerpt`) with a neutral gloss.

use crate::analysis::failures::{classify, excerpt};

/// What an error says, with the lines that say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// The line that says what failed, trimmed.
    pub headline: String,
    /// What the tool means by it, in its own terms.
    pub gloss: String,
    /// The error's lines quoted (verbatim), the headline first.
    pub excerpt: String,
    /// 1-based lines of the excerpt in the error text.
    pub first_line: u32,
    pub last_line: u32,
    /// Where the error points, when a quoted line says (`src/lexer.rs:148:76`).
    pub location: Option<String>,
    /// The last quoted line, when it says more than the headline (the message under it:
    /// `pool_test.go:47: Map()[0] = "1", want "5"`), trimmed.
    pub detail: Option<String>,
}

impl Reading {
    /// The model answer: the headline, the tool's meaning, the place.
    pub fn answer(&self) -> String {
        let place = self.location.as_ref().map(|l| format!(" It points at `{l}`.")).unwrap_or_default();
        let then = self.detail.as_ref().map(|d| format!(", then `{d}`")).unwrap_or_default();
        format!("It says `{}`{then}. {}{place}", self.headline, self.gloss)
    }
}

/// One tool's way of saying what failed.
struct Tool {
    /// Whether a trimmed line is this tool's headline.
    headline: fn(&str) -> bool,
    /// Lines quoted after the headline (the message under it).
    after: usize,
    /// What the headline means, from the headline and the whole error.
    gloss: fn(&str, &str) -> String,
}

const TOOLS: &[Tool] = &[
    Tool { headline: |l| l.starts_with("error[E"), after: 1, gloss: rustc_gloss },
    Tool {
        // `./main.go:9:2: fmt.Printf format %d has arg s of wrong type string`, as `go vet`
        // prints it and `go test` (which runs vet's printf check first) too.
        headline: |l| l.contains(" format %") && (l.contains(" has arg ") || l.contains(" reads arg ")),
        after: 0,
        gloss: |_, _| {
            "`go vet`'s printf check (which `go test` runs before the tests): a format verb does not match \
             its argument's type, or the call has fewer arguments than the format reads."
                .into()
        },
    },
    Tool {
        headline: |l| l.starts_with("--- FAIL: "),
        after: 2,
        gloss: |_, _| {
            "`go test` prints `--- FAIL:` for each failed test and subtest; the indented `file_test.go:line:` \
             lines under it are what the test reported with `t.Errorf` or `t.Fatalf` at that line."
                .into()
        },
    },
    Tool {
        headline: |l| l.starts_with("E ") && l.contains("assert"),
        after: 2,
        gloss: |_, _| {
            "pytest rewrites a failing `assert` to show its values: the lines marked `E` are the comparison \
             the test made, with both sides evaluated, and what differs between them."
                .into()
        },
    },
    Tool {
        headline: |l| l.starts_with("AssertionError: expected "),
        after: 0,
        gloss: |headline, _| {
            let how = if headline.contains("Object.is") { " (`toBe` compares with `Object.is`)" } else { "" };
            format!(
                "vitest's `expect(received)` assertion failed: `expected X to …` names the value the code \
                 returned first and the value the test wanted after it{how}."
            )
        },
    },
    Tool {
        headline: |l| l.starts_with("org.opentest4j.AssertionFailedError"),
        after: 0,
        gloss: |_, _| {
            "A JUnit 5 assertion failed: the text before `==>` is the message the test passed to the assertion, \
             and `expected: <…> but was: <…>` is what it wanted and what the code gave."
                .into()
        },
    },
    Tool {
        headline: |l| l.starts_with("Failure/Error:"),
        after: 3,
        gloss: |_, _| {
            "RSpec quotes the expectation that failed after `Failure/Error:`, then `expected:` (what the spec \
             wanted) and `got:` (what the code returned)."
                .into()
        },
    },
    Tool {
        headline: |l| l.starts_with("Failed ") && l.ends_with(" ms]"),
        after: 2,
        gloss: |_, _| {
            "`dotnet test` lists each failed xUnit test after `Failed`, then its `Error Message` (the exception \
             or assertion that ended it) and its `Stack Trace`."
                .into()
        },
    },
];

/// rustc's meaning of its error codes met most in the corpus (E0599 names `Iterator` only
/// where the error does); others point at `rustc --explain`.
fn rustc_gloss(headline: &str, error: &str) -> String {
    let code = headline.get(6..11).unwrap_or("");
    match code {
        "E0599" if error.contains("`Iterator`") || headline.contains("is not an iterator") => {
            "rustc's E0599: the method is not found for this type: it has no inherent method of that name, \
             and `Iterator`, the trait that provides it, is not implemented for the type (an \
             `impl Iterator for` the type gives it `collect`, `find_map` and the other adapters)."
                .into()
        }
        "E0599" => "rustc's E0599: the method is not found for this type: it has no inherent method of that name, \
                    and no trait providing one is implemented for the type and in scope."
            .into(),
        "E0308" => "rustc's E0308: mismatched types: the expression's type is not the type this place expects.".into(),
        "E0277" => {
            "rustc's E0277: a trait bound is not satisfied: the type does not implement a trait the call needs.".into()
        }
        _ => format!("rustc rejected the code with error {code}; `rustc --explain {code}` describes it."),
    }
}

/// The error read by the first tool whose headline it has, else from its first marked line.
pub fn reading_of(error: &str) -> Option<Reading> {
    let lines: Vec<&str> = error.lines().collect();
    for tool in TOOLS {
        let Some(at) = lines.iter().position(|l| (tool.headline)(l.trim())) else { continue };
        let last = (at + tool.after).min(lines.len() - 1);
        let last = (at..=last).rev().find(|&i| !lines[i].trim().is_empty()).unwrap_or(at);
        // Where the quoted lines name no place, the excerpt reaches down to the first line
        // that does (pytest's `tests/x.py:35:`, vitest's `❯ src/x.test.ts:11:34`, RSpec's
        // `# ./spec/x_spec.rb:19`, a JUnit or .NET frame of the project's own code), when it
        // is near: the key says "it points at" only what the learner reads.
        let quoted = lines[at..=last].iter().find_map(|l| location_in(l));
        let reached = quoted.is_none().then(|| place_below(&lines, last)).flatten();
        let location = quoted.or_else(|| reached.and_then(|i| location_in(lines[i])));
        // The message under the headline, from the tool's own lines (not the place reached).
        let detail = detail_of(&lines[at..=last]);
        let last = reached.unwrap_or(last);
        let headline = lines[at].trim().to_string();
        let excerpt = lines[at..=last].join("\n");
        let gloss = (tool.gloss)(&headline, error);
        return Some(Reading {
            headline,
            gloss,
            excerpt,
            first_line: at as u32 + 1,
            last_line: last as u32 + 1,
            location,
            detail,
        });
    }
    let cited = excerpt(error, classify(error))?;
    let first = cited.lines().next()?;
    let at = lines.iter().position(|l| l.trim() == first.trim())?;
    let count = cited.lines().count();
    Some(Reading {
        headline: first.trim().to_string(),
        gloss: "That line is where the tool says what it could not do; the lines around it say where.".into(),
        excerpt: cited.clone(),
        first_line: at as u32 + 1,
        last_line: (at + count) as u32,
        location: cited.lines().find_map(location_in),
        detail: None,
    })
}

/// Most lines an excerpt grows by to reach the place an error names.
const MAX_REACH: usize = 9;

/// The first line within `MAX_REACH` below `last` that names a place in the project's own code
/// (a frame of the test framework, the standard library or an installed package is skipped).
fn place_below(lines: &[&str], last: usize) -> Option<usize> {
    let own = |line: &str| {
        !["org.junit", "org.opentest4j", "java.base/", "/rustc/", "node_modules", "site-packages", "System.Runtime"]
            .iter()
            .any(|lib| line.contains(lib))
    };
    (last + 1..lines.len().min(last + 1 + MAX_REACH)).find(|&i| own(lines[i]) && location_in(lines[i]).is_some())
}

/// The last of `quoted` (the headline first) when it is a message of its own: not the
/// headline, not a bare `-->` pointer.
fn detail_of(quoted: &[&str]) -> Option<String> {
    let last = quoted.iter().skip(1).map(|l| l.trim()).rfind(|l| !l.is_empty())?;
    (!last.starts_with("-->") && !last.ends_with(':')).then(|| last.to_string())
}

/// A `path:line` (or `path:line:col`) a line points at: the first word with a dot before a
/// `:` and digits after it (`src/lexer.rs:148:76`, `(TokenBucketTest.java:36)`), or .NET's
/// `in /path/File.cs:line 57`; the path and its numbers only, not the words after them
/// (RSpec's frame ``./spec/x_spec.rb:19:in `block …'`` points at `./spec/x_spec.rb:19`).
fn location_in(line: &str) -> Option<String> {
    if let Some((before, after)) = line.split_once(":line ") {
        let path = before.rsplit(' ').next().filter(|p| p.contains('.'))?;
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        return (!digits.is_empty()).then(|| format!("{path}:line {digits}"));
    }
    line.split_whitespace().find_map(|word| {
        let word = word.trim_end_matches(':').trim_end_matches(')');
        let word = word.rsplit('(').next().unwrap_or(word);
        let (path, rest) = word.split_once(':')?;
        let numbers: Vec<&str> =
            rest.split(':').take_while(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())).collect();
        (path.contains('.') && !numbers.is_empty()).then(|| format!("{path}:{}", numbers.join(":")))
    })
}
