//! Errors the developer met: a failed tool call's error text classified into the kind of
//! problem it shows (a type error, a missing dependency, a failing test, anything else), and
//! the lines of it that say so. Pure; the offline provider turns each kind into a catalogue
//! concept grounded in those lines (SPEC §6.4: an error the developer met is a concept to learn).
//!
//! Classification is by marker substrings, case-insensitive, checked in a fixed order: a
//! missing module is reported by compilers as a type error too (TS2307), and a test run may
//! print either, so the more specific kinds come first.
//!
//! A missing dependency is explained in its own ecosystem's terms (issue 31: a pytest
//! `ModuleNotFoundError` was explained with `package.json`): [`dependency_language`] reads the
//! language from the error's own words (`ModuleNotFoundError`, `no required module provides
//! package`, `error[E0432]`, `LoadError`, `package … does not exist`, `CS0246`, `Cannot find
//! module`), else from the command that failed (`pytest`, `go test`, `cargo`, …), else from the
//! session's one language; [`ErrorKind::concept_in`] names the catalogue entry for it.

use super::lang::Lang;
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

    /// The catalogue concept that teaches this kind of error; a missing dependency is taught
    /// in `lang`'s ecosystem (JavaScript's when none is known).
    pub fn concept_in(self, lang: Option<Lang>) -> &'static str {
        match self {
            ErrorKind::MissingDependency => missing_dependency_concept(lang),
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
                "cannot find module providing package",
                "is not in std",
                "package * does not exist",
                "can't find crate",
                "error[e0463]",
                "could not find gem",
                "could not resolve dependencies",
                "error cs0246",
                "unable to find package",
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

/// `error ts` must be followed by a code digit (`error TS2322`); a `*` stands for one word
/// (`package * does not exist`: javac's `package org.junit does not exist`, not "package.json
/// does not exist"); other markers are plain.
fn has_marker(lower: &str, marker: &str) -> bool {
    if let Some((before, after)) = marker.split_once(" * ") {
        return lower.match_indices(before).any(|(at, _)| {
            let rest = &lower[at + before.len()..];
            rest.strip_prefix(' ').and_then(|rest| rest.split_once(' ')).is_some_and(|(word, rest)| {
                !word.is_empty() && !word.contains(char::is_whitespace) && rest.starts_with(after)
            })
        });
    }
    if marker != "error ts" {
        return lower.contains(marker);
    }
    lower.match_indices(marker).any(|(at, m)| lower[at + m.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

/// Per language, lowercase words with which its tools report a missing module or package.
/// Checked in this order: Node's `cannot find package '…' imported from` is told from Go's
/// `cannot find package "…"` by its `imported from`, so JavaScript comes after Go's specific
/// words and before the rest.
const DEPENDENCY_WORDS: [(Lang, &[&str]); 7] = [
    (
        Lang::Python,
        &[
            "modulenotfounderror",
            "no module named",
            "importerror",
            "no matching distribution found",
            "could not find a version that satisfies",
        ],
    ),
    (
        Lang::Go,
        &[
            "no required module provides package",
            "cannot find module providing package",
            "is not in std",
            "go.mod",
            "go get ",
        ],
    ),
    (
        Lang::Rust,
        &["unresolved import", "error[e0432]", "error[e0433]", "can't find crate", "error[e0463]", "cargo.toml"],
    ),
    (Lang::Ruby, &["loaderror", "cannot load such file", "could not find gem", "bundler"]),
    (
        Lang::CSharp,
        &["error cs0246", "error cs0234", "the type or namespace name", "unable to find package", ".csproj"],
    ),
    (
        Lang::Java,
        &[
            "package * does not exist",
            "could not resolve dependencies",
            "could not find artifact",
            "pom.xml",
            "build.gradle",
        ],
    ),
    (
        Lang::JavaScript,
        &[
            "cannot find module",
            "err_module_not_found",
            "module not found",
            "failed to resolve import",
            "imported from",
            "error ts2307",
            "npm err!",
            "npm error",
            "package.json",
        ],
    ),
];

/// Programs whose failure shows the language, as the first word of a command (after
/// `python3 -m`, `npx`, `bundle exec` and the like, which name the runner).
const COMMAND_WORDS: [(Lang, &[&str]); 7] = [
    (Lang::Python, &["python", "python3", "pytest", "pip", "pip3", "uv", "poetry", "tox", "mypy"]),
    (Lang::Go, &["go"]),
    (Lang::Rust, &["cargo", "rustc"]),
    (Lang::Ruby, &["ruby", "bundle", "rspec", "rails", "rake", "gem"]),
    (Lang::CSharp, &["dotnet", "msbuild"]),
    (Lang::Java, &["mvn", "./mvnw", "gradle", "./gradlew", "javac", "java"]),
    (Lang::JavaScript, &["npm", "npx", "node", "pnpm", "yarn", "bun", "tsc", "vitest", "jest", "deno"]),
];

/// The language whose package system a missing-dependency `error` is about: from the
/// error's words, else from `command`, else the one language of `session` (see the module
/// doc). `None` when nothing tells.
pub fn dependency_language(error: &str, command: &str, session: &[Lang]) -> Option<Lang> {
    let lower = error.to_lowercase();
    let from_error = DEPENDENCY_WORDS.iter().find(|(_, words)| words.iter().any(|w| has_marker(&lower, w)));
    let first_word = command.split_whitespace().next().unwrap_or("").rsplit('/').next().unwrap_or("");
    let from_command =
        COMMAND_WORDS.iter().find(|(_, words)| words.iter().any(|w| w.trim_start_matches("./") == first_word));
    let family = |l: Lang| if l == Lang::TypeScript { Lang::JavaScript } else { l };
    let mut session_families: Vec<Lang> = session.iter().map(|l| family(*l)).collect();
    session_families.sort_by_key(|l| l.as_str());
    session_families.dedup();
    let only = (session_families.len() == 1).then(|| session_families[0]);
    from_error.or(from_command).map(|(lang, _)| *lang).or(only)
}

/// The catalogue entry for a missing dependency in `lang`'s ecosystem.
fn missing_dependency_concept(lang: Option<Lang>) -> &'static str {
    match lang {
        Some(Lang::Python) => "Missing Python packages and imports",
        Some(Lang::Go) => "Missing Go modules and packages",
        Some(Lang::Rust) => "Unresolved imports and missing crates",
        Some(Lang::Ruby) => "Missing gems and require paths",
        Some(Lang::Java) => "Missing Java packages and build dependencies",
        Some(Lang::CSharp) => "Missing NuGet packages and namespaces",
        Some(Lang::TypeScript | Lang::JavaScript) | None => "Missing modules and dependencies",
    }
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

/// One error worth a concept: the kind, the catalogue concept teaching it (in the error's
/// language), the call it came from, the cited lines.
#[derive(Debug, Clone, PartialEq)]
pub struct MetError {
    pub kind: ErrorKind,
    pub concept: &'static str,
    pub label: String,
    pub excerpt: String,
}

/// The distinct kinds of error a session met, first occurrence first, at most `max`;
/// `session` is the languages of the session's files (for a missing dependency whose error
/// and command do not say which ecosystem it is in).
pub fn errors_met(failures: &[FailedCall], max: usize, session: &[Lang]) -> Vec<MetError> {
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
            let lang = dependency_language(&failure.error, &failure.subject, session);
            met.push(MetError { kind, concept: kind.concept_in(lang), label: failure.label(), excerpt });
        }
    }
    met
}

/// A missing dependency as each ecosystem's tools report it: (language, command, error). For
/// the tests here and the recorded-session checks (`llm::offline::tests::sessions`).
#[cfg(test)]
pub(crate) const MISSING_DEPENDENCY_ERRORS: [(Lang, &str, &str); 7] = [
    (
        Lang::Python,
        "python3 -m pytest -q",
        "==================================== ERRORS ====================================\n\
         _________________ ERROR collecting tests/test_models.py _________________\n\
         ImportError while importing test module '/home/dev/app/tests/test_models.py'.\n\
         Traceback:\n\
         tests/test_models.py:5: in <module>\n    from ledger.models import Entry\n\
         E   ModuleNotFoundError: No module named 'ledger'\n\
         =========================== short test summary info ============================\n\
         ERROR tests/test_models.py\n1 error in 0.04s",
    ),
    (
        Lang::Go,
        "go build ./...",
        "main.go:6:2: no required module provides package github.com/google/uuid; to add it:\n\tgo get github.com/google/uuid",
    ),
    (
        Lang::Rust,
        "cargo build",
        "error[E0432]: unresolved import `serde`\n --> src/main.rs:1:5\n  |\n1 | use serde::Deserialize;\n  |     ^^^^^ use of undeclared crate or module `serde`",
    ),
    (
        Lang::Ruby,
        "bundle exec rspec",
        "An error occurred while loading ./spec/client_spec.rb.\nFailure/Error: require \"faraday\"\n\nLoadError:\n  cannot load such file -- faraday",
    ),
    (
        Lang::Java,
        "mvn -q compile",
        "[ERROR] /home/dev/app/src/main/java/com/shop/Rates.java:[3,36] package com.fasterxml.jackson.databind does not exist",
    ),
    (
        Lang::CSharp,
        "dotnet build",
        "Startup.cs(1,7): error CS0246: The type or namespace name 'Serilog' could not be found (are you missing a using directive or an assembly reference?)",
    ),
    (Lang::JavaScript, "npm test", "Error: Cannot find module 'zod'\nRequire stack:\n- /home/dev/app/lib/cart.js"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_dependency_is_told_in_its_own_language() {
        for (lang, command, error) in MISSING_DEPENDENCY_ERRORS {
            assert_eq!(classify(error), ErrorKind::MissingDependency, "{lang:?}: {error}");
            assert_eq!(dependency_language(error, command, &[]), Some(lang), "{error}");
            // The error's words decide, whatever ran it and whatever the session holds.
            assert_eq!(dependency_language(error, "make", &[Lang::TypeScript, Lang::Go]), Some(lang), "{error}");
            let concept = ErrorKind::MissingDependency.concept_in(Some(lang));
            assert_eq!(errors_met(&[call_with(command, error)], 2, &[])[0].concept, concept);
        }
        // Node's ESM wording is not Go's `cannot find package "…"`.
        let node = "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /app/lib/cart.js";
        assert_eq!(dependency_language(node, "", &[]), Some(Lang::JavaScript));
        // An error that does not say: the command, then the session's one language.
        let vague = "error: could not find a required dependency";
        assert_eq!(dependency_language(vague, "/usr/bin/python3 -m pip install -e .", &[]), Some(Lang::Python));
        assert_eq!(dependency_language(vague, "./gradlew build", &[]), Some(Lang::Java));
        assert_eq!(dependency_language(vague, "make", &[Lang::TypeScript, Lang::JavaScript]), Some(Lang::JavaScript));
        assert_eq!(dependency_language(vague, "make", &[Lang::Python, Lang::Go]), None);
        assert_eq!(ErrorKind::MissingDependency.concept_in(None), "Missing modules and dependencies");
        // javac's wording has the package's name inside it.
        assert!(has_marker("error: package org.junit does not exist", "package * does not exist"));
        assert!(!has_marker("the package\nfile does not exist", "package * does not exist"));
        assert!(!has_marker("error: package.json does not exist", "package * does not exist"));
        assert!(!has_marker("npm err! enoent: package.json does not exist here", "package * does not exist"));
        assert!(has_marker("x.java:3: error: package com.foo.bar does not exist", "package * does not exist"));
    }

    fn call_with(command: &str, error: &str) -> FailedCall {
        FailedCall { tool_name: "Bash".into(), subject: command.into(), error: error.into() }
    }

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
        let met = errors_met(&[call(TSC), call(TSC), call(VITEST), call(PY)], 2, &[]);
        assert_eq!(met.iter().map(|m| m.kind).collect::<Vec<_>>(), [ErrorKind::TypeError, ErrorKind::FailingTest]);
        assert_eq!(met[0].label, "failed Bash: npm test");
    }
}
