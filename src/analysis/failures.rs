//! Errors the developer met: a failed tool call's error text classified into the kind of
//! problem it shows (a type error, a missing dependency, a failing test, anything else), and
//! the lines of it that say so. Pure; the offline provider turns each kind into a catalogue
//! concept grounded in those lines (SPEC §6.4: an error the developer met is a concept to learn).
//!
//! Classification is by marker substrings, case-insensitive, checked in a fixed order: a
//! missing module is reported by compilers as a type error too (TS2307), and a test run may
//! print either, so the more specific kinds come first.

use super::model::FailedCall;

/// What an error shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// An import or package that cannot be found or installed.
    MissingDependency,
    /// A compiler or type checker rejected a type.
    TypeError,
    /// A test ran and failed.
    FailingTest,
    /// Any other error output: a runtime exception, a syntax error, a command not found.
    Other,
}

impl ErrorKind {
    /// In classification order.
    const ORDER: [ErrorKind; 3] = [ErrorKind::MissingDependency, ErrorKind::TypeError, ErrorKind::FailingTest];

    /// The catalogue concept that teaches this kind of error.
    pub fn concept(self) -> &'static str {
        match self {
            ErrorKind::MissingDependency => "Missing modules and dependencies",
            ErrorKind::TypeError => "Reading compiler type errors",
            ErrorKind::FailingTest => "Reading a failing test",
            ErrorKind::Other => "Reading error messages and stack traces",
        }
    }

    /// Lowercase markers, any of which on a line shows the kind.
    fn markers(self) -> &'static [&'static str] {
        match self {
            ErrorKind::MissingDependency => &[
                "cannot find module",
                "module not found",
                "modulenotfounderror",
                "no module named",
                "err_module_not_found",
                "cannot find package",
                "failed to resolve import",
                "could not resolve",
                "unresolved import",
                "error[e0432]",
                "error[e0433]",
                "npm err! 404",
                "npm error 404",
                "no matching distribution found",
                "could not find a version that satisfies",
                "cannot load such file",
                "no required module provides package",
                "is not in std",
                "package does not exist",
            ],
            ErrorKind::TypeError => &[
                "is not assignable to",
                "does not exist on type",
                "argument of type",
                "mismatched types",
                "error[e0308]",
                "incompatible types",
                "has incompatible type",
                "cannot implicitly convert type",
                "(variable of type",
                "type mismatch",
                "error ts",
            ],
            ErrorKind::FailingTest => &[
                "assertionerror",
                "assertion failed",
                "assertion `left == right` failed",
                "expected:",
                "received:",
                "test result: failed",
                "--- fail:",
                "tests failed",
                "test failed",
                "failures:",
                "✕",
                "fail src/",
                "fail tests/",
                "failed tests/",
                " failed, ",
            ],
            ErrorKind::Other => &[],
        }
    }
}

/// The kind of an error text.
pub fn classify(error: &str) -> ErrorKind {
    let lower = error.to_lowercase();
    ErrorKind::ORDER
        .into_iter()
        .find(|kind| kind.markers().iter().any(|m| has_marker(&lower, m)))
        .unwrap_or(ErrorKind::Other)
}

/// `error ts` must be followed by a code digit (`error TS2322`); other markers are plain.
fn has_marker(lower: &str, marker: &str) -> bool {
    if marker != "error ts" {
        return lower.contains(marker);
    }
    lower.match_indices(marker).any(|(at, m)| lower[at + m.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

/// Longest excerpt cited, in bytes.
const MAX_EXCERPT_BYTES: usize = 600;

/// The lines of `error` that show its kind: the first line with a marker and one line around
/// it, verbatim (so a concept citing it passes validation), at most 600 bytes. For `Other`,
/// or when no line has a marker, the first non-empty lines.
pub fn excerpt(error: &str, kind: ErrorKind) -> Option<String> {
    let lines: Vec<&str> = error.lines().collect();
    let hit = lines.iter().position(|line| {
        let lower = line.to_lowercase();
        kind.markers().iter().any(|m| has_marker(&lower, m))
    });
    let (first, last) = match hit {
        Some(at) => (at.saturating_sub(1), (at + 1).min(lines.len().saturating_sub(1))),
        None => {
            let start = lines.iter().position(|l| !l.trim().is_empty())?;
            (start, (start + 2).min(lines.len() - 1))
        }
    };
    let mut text = lines[first..=last].join("\n").trim().to_owned();
    if text.len() > MAX_EXCERPT_BYTES {
        // The marked line alone, then a prefix of it.
        text = hit.map_or(text.clone(), |at| lines[at].trim().to_owned());
        let mut end = MAX_EXCERPT_BYTES.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text = text.trim().to_owned();
    }
    (!text.is_empty()).then_some(text)
}

/// One error worth a concept: the kind, the call it came from, the cited lines.
#[derive(Debug, Clone, PartialEq)]
pub struct MetError {
    pub kind: ErrorKind,
    pub label: String,
    pub excerpt: String,
}

/// The distinct kinds of error a session met, first occurrence first, at most `max`.
pub fn errors_met(failures: &[FailedCall], max: usize) -> Vec<MetError> {
    let mut met: Vec<MetError> = Vec::new();
    for failure in failures {
        if met.len() >= max {
            break;
        }
        let kind = classify(&failure.error);
        if met.iter().any(|m| m.kind == kind) {
            continue;
        }
        if let Some(excerpt) = excerpt(&failure.error, kind) {
            met.push(MetError { kind, label: failure.label(), excerpt });
        }
    }
    met
}

#[cfg(test)]
mod tests {
    use super::*;

    const TSC: &str = "src/cart.ts(12,9): error TS2322: Type 'string' is not assignable to type 'number'.\n\nFound 1 error in src/cart.ts:12";
    const VITEST: &str = " FAIL  tests/cart.test.ts > cartTotal\nAssertionError: expected 500 to be 600\n ❯ tests/cart.test.ts:5:42\n\n Test Files  1 failed (1)";
    const PY: &str = "Traceback (most recent call last):\n  File \"main.py\", line 1, in <module>\n    import fastapi\nModuleNotFoundError: No module named 'fastapi'";
    const RUST: &str = "error[E0308]: mismatched types\n --> src/main.rs:4:18\n  |\n4 |     let n: u32 = \"4\";\n  |            ---   ^^^ expected `u32`, found `&str`";
    const SH: &str = "bash: line 1: pnpx: command not found";

    fn call(error: &str) -> FailedCall {
        FailedCall { tool_name: "Bash".into(), subject: "npm test".into(), error: error.into() }
    }

    #[test]
    fn errors_are_classified_by_what_they_show() {
        assert_eq!(classify(TSC), ErrorKind::TypeError);
        assert_eq!(classify(RUST), ErrorKind::TypeError);
        assert_eq!(classify(VITEST), ErrorKind::FailingTest);
        assert_eq!(classify(PY), ErrorKind::MissingDependency);
        assert_eq!(
            classify("error TS2307: Cannot find module 'zod' or its type declarations."),
            ErrorKind::MissingDependency
        );
        assert_eq!(classify(SH), ErrorKind::Other);
        assert_eq!(classify("TypeError: Cannot read properties of undefined (reading 'id')"), ErrorKind::Other);
        assert_eq!(classify("error tsconfig.json not found"), ErrorKind::Other, "error ts needs a code");
    }

    #[test]
    fn excerpts_are_verbatim_lines_around_the_marker() {
        let cited = excerpt(TSC, ErrorKind::TypeError).unwrap();
        assert!(cited.starts_with("src/cart.ts(12,9): error TS2322"));
        assert!(TSC.contains(&cited));
        let test = excerpt(VITEST, ErrorKind::FailingTest).unwrap();
        assert!(test.contains("AssertionError: expected 500 to be 600") && VITEST.contains(&test));
        assert_eq!(excerpt(SH, ErrorKind::Other).as_deref(), Some(SH));
        let long = format!("{}\nerror TS2322: {}", "x".repeat(700), "y".repeat(700));
        assert!(excerpt(&long, ErrorKind::TypeError).unwrap().len() <= MAX_EXCERPT_BYTES);
        assert_eq!(excerpt("  \n ", ErrorKind::Other), None);
    }

    #[test]
    fn each_kind_is_met_once() {
        let met = errors_met(&[call(TSC), call(TSC), call(VITEST), call(PY)], 2);
        assert_eq!(met.iter().map(|m| m.kind).collect::<Vec<_>>(), [ErrorKind::TypeError, ErrorKind::FailingTest]);
        assert_eq!(met[0].label, "failed Bash: npm test");
    }
}
