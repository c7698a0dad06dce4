//! Test frameworks from what the session did (issue 41): the commands it ran (`python -m
//! unittest`, `npx vitest run`, `bundle exec rspec`, `go test ./...`) and the files it wrote
//! (their names and the imports in them), beside the packages a manifest declares
//! (`catalog::CATALOG`). A project with `test_backoff.py` run by `python -m unittest` and no
//! manifest declares nothing; what it ran says everything.
//!
//! # Evidence and confidence
//! - A command that runs the framework ([`COMMAND_CONFIDENCE`]): the strongest evidence short
//!   of a declared package. Build tools that run whatever framework is configured (`mvn test`,
//!   `gradle test`) say less ([`BUILD_TOOL_CONFIDENCE`]).
//! - An import or an attribute in a file the session wrote ([`CONTENT_CONFIDENCE`]):
//!   `import unittest`, `from 'vitest'`, `using Xunit;`, `#[test]`.
//! - A file name alone ([`NAME_CONFIDENCE`]): `*_test.go` (Go has one runner); `test_*.py` is
//!   read as pytest only when nothing shows the Python tests' framework, since unittest names
//!   its files the same way.
//!
//! Names are the frameworks' own (`unittest`, `pytest`, `Vitest`, `JUnit`, `xUnit`); where
//! the runner is the language's own tool, its command (`go test`, `cargo test`), and
//! `dotnet test` when the files do not say whether xUnit, NUnit or MSTest runs. Pure: data in,
//! data out.

use crate::analysis::model::SourceFile;

/// A command that runs the framework.
pub const COMMAND_CONFIDENCE: f64 = 0.9;
/// A build tool's test task: it runs the framework the build configures, JUnit most often.
pub const BUILD_TOOL_CONFIDENCE: f64 = 0.7;
/// An import or attribute in a written file.
pub const CONTENT_CONFIDENCE: f64 = 0.85;
/// A file's name alone.
pub const NAME_CONFIDENCE: f64 = 0.5;

/// The test frameworks the commands and files show, each with its strongest evidence, in
/// first-seen order (commands first).
pub fn test_frameworks(
    commands: &[String],
    touched_paths: &[String],
    files: &[SourceFile],
) -> Vec<(&'static str, f64)> {
    let mut found: Vec<(&'static str, f64)> = Vec::new();
    let mut add = |name: &'static str, confidence: f64| add_to(&mut found, name, confidence);
    for command in commands {
        for segment in command.split(['\n', ';', '&', '|']) {
            if let Some((name, confidence)) = runner_of(segment) {
                add(name, confidence);
            }
        }
    }
    for file in files {
        for (name, confidence) in in_file(file) {
            add(name, confidence);
        }
    }
    let mut python_tests_named = false;
    for path in touched_paths {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        if name.ends_with("_test.go") {
            add("go test", NAME_CONFIDENCE);
        }
        python_tests_named |= name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"));
    }
    let python_known = found.iter().any(|(n, _)| matches!(*n, "unittest" | "pytest"));
    if python_tests_named && !python_known {
        add_to(&mut found, "pytest", NAME_CONFIDENCE);
    }
    // `dotnet test` is only the runner's name: drop it once the files say which framework.
    if found.iter().any(|(n, _)| matches!(*n, "xUnit" | "NUnit" | "MSTest")) {
        found.retain(|(n, _)| *n != "dotnet test");
    }
    found
}

/// Adds `name`, keeping its strongest evidence.
fn add_to(found: &mut Vec<(&'static str, f64)>, name: &'static str, confidence: f64) {
    match found.iter_mut().find(|(n, _)| *n == name) {
        Some((_, c)) => *c = c.max(confidence),
        None => found.push((name, confidence)),
    }
}

/// The framework one shell command runs, if it runs one.
fn runner_of(segment: &str) -> Option<(&'static str, f64)> {
    let words: Vec<&str> = segment.split_whitespace().map(base_name).collect();
    let rest = &words[wrappers(&words)..];
    let (first, second) = (rest.first().copied()?, rest.get(1).copied().unwrap_or(""));
    let run = |name| Some((name, COMMAND_CONFIDENCE));
    match (first, second) {
        ("unittest", _) => run("unittest"),
        ("pytest" | "py.test", _) => run("pytest"),
        ("go", "test") => run("go test"),
        ("cargo", "test" | "nextest") => run("cargo test"),
        ("vitest", _) => run("Vitest"),
        ("jest", _) => run("Jest"),
        ("mocha", _) => run("Mocha"),
        ("rspec", _) => run("RSpec"),
        ("rails", "test") | ("rake", "test") => run("Minitest"),
        ("ruby", _) if rest.iter().any(|w| w.starts_with("-Itest") || w.ends_with("_test.rb")) => run("Minitest"),
        ("mvn" | "mvnw" | "gradle" | "gradlew", _) if rest.iter().any(|w| matches!(*w, "test" | "verify")) => {
            Some(("JUnit", BUILD_TOOL_CONFIDENCE))
        }
        ("dotnet", "test") => run("dotnet test"),
        _ => None,
    }
}

/// How many leading words only start the real command: environment assignments, `sudo`,
/// `npx`, `pnpm exec`, `uv run`, `bundle exec`, `python -m`.
fn wrappers(words: &[&str]) -> usize {
    let mut i = 0;
    while let Some(word) = words.get(i) {
        let next = words.get(i + 1).copied().unwrap_or("");
        i += match *word {
            w if w.contains('=') && !w.starts_with('-') => 1,
            "sudo" | "time" | "env" | "npx" | "bunx" | "exec" | "nice" | "command" => 1,
            "npm" | "pnpm" | "yarn" | "bun" if matches!(next, "exec" | "dlx" | "x") => 2,
            "pnpm" | "yarn" if !matches!(next, "" | "test" | "run") => 1,
            "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye" if next == "run" => 2,
            "bundle" if next == "exec" => 2,
            w if is_python(w) && next == "-m" => 2,
            _ => return i,
        };
    }
    i
}

fn is_python(word: &str) -> bool {
    word == "py" || word.strip_prefix("python").is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// `./node_modules/.bin/jest` → `jest`, `/usr/bin/python3` → `python3`, `./gradlew` → `gradlew`.
fn base_name(word: &str) -> &str {
    let word = word.trim_matches(['"', '\'', '(', ')']);
    word.rsplit('/').next().unwrap_or(word)
}

/// What a written file's imports and attributes show.
fn in_file(file: &SourceFile) -> Vec<(&'static str, f64)> {
    let text = file.content.as_str();
    let has = |needles: &[&str]| needles.iter().any(|n| text.contains(n));
    let extension = file.path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    let name = file.path.rsplit(['/', '\\']).next().unwrap_or(&file.path);
    let mut found = Vec::new();
    let mut seen = |name: &'static str, shown: bool| {
        if shown {
            found.push((name, CONTENT_CONFIDENCE));
        }
    };
    match extension.as_str() {
        "py" => {
            let unittest = has(&["import unittest", "from unittest", "unittest.TestCase"]);
            let pytest = has(&["import pytest", "from pytest", "@pytest."]);
            let test_file = name.starts_with("test_") || name.ends_with("_test.py");
            seen("unittest", unittest);
            seen("pytest", pytest);
            if test_file && text.contains("def test_") && !unittest && !pytest {
                // pytest collects bare `def test_…` functions; unittest needs a TestCase.
                found.push(("pytest", NAME_CONFIDENCE + 0.1));
            }
        }
        "go" => seen("go test", name.ends_with("_test.go") && text.contains("\"testing\"")),
        "rs" => seen("cargo test", has(&["#[test]", "#[cfg(test)]", "#[tokio::test]"])),
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => {
            seen("Vitest", has(&["from 'vitest'", "from \"vitest\"", "require('vitest')"]));
            seen("Jest", has(&["@jest/globals", "jest.fn(", "jest.mock(", "jest.spyOn("]));
            seen("Mocha", has(&["from 'mocha'", "from \"mocha\"", "require('mocha')", "require(\"mocha\")"]));
        }
        "rb" => {
            seen("Minitest", has(&["minitest/autorun", "Minitest::Test", "ActiveSupport::TestCase"]));
            seen("RSpec", has(&["RSpec.describe", "require 'rspec'", "require \"rspec\"", "require 'spec_helper'"]));
        }
        "java" | "kt" | "kts" | "groovy" => seen("JUnit", has(&["import org.junit", "import static org.junit"])),
        "cs" => {
            seen("xUnit", has(&["using Xunit;"]));
            seen("NUnit", has(&["using NUnit.Framework;"]));
            seen("MSTest", has(&["using Microsoft.VisualStudio.TestTools.UnitTesting;"]));
        }
        _ => {}
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(found: &[(&'static str, f64)]) -> Vec<&'static str> {
        found.iter().map(|(n, _)| *n).collect()
    }

    fn from_commands(commands: &[&str]) -> Vec<&'static str> {
        let commands: Vec<String> = commands.iter().map(|c| c.to_string()).collect();
        names(&test_frameworks(&commands, &[], &[]))
    }

    #[test]
    fn the_commands_run_name_the_framework() {
        let cases: [(&str, &str); 22] = [
            ("python -m unittest", "unittest"),
            ("python3 -m unittest discover -s tests", "unittest"),
            ("/usr/bin/python3.12 -m unittest test_backoff", "unittest"),
            ("pytest -q", "pytest"),
            ("uv run pytest tests/", "pytest"),
            ("poetry run python -m pytest", "pytest"),
            ("go test ./...", "go test"),
            ("cargo test --lib", "cargo test"),
            ("cargo nextest run", "cargo test"),
            ("npx vitest run", "Vitest"),
            ("pnpm exec vitest", "Vitest"),
            ("yarn jest --watch", "Jest"),
            ("CI=true ./node_modules/.bin/jest", "Jest"),
            ("npx mocha test/", "Mocha"),
            ("bundle exec rspec spec/models", "RSpec"),
            ("bin/rails test", "Minitest"),
            ("ruby -Itest test/user_test.rb", "Minitest"),
            ("mvn -q test", "JUnit"),
            ("./gradlew test", "JUnit"),
            ("dotnet test", "dotnet test"),
            ("cd api && python -m unittest -v", "unittest"),
            ("npm ci; npx vitest run | tee out.txt", "Vitest"),
        ];
        for (command, framework) in cases {
            assert_eq!(from_commands(&[command]), [framework], "{command}");
        }
        for command in ["npm test", "python test_backoff.py", "go build ./...", "cargo build", "ls tests", "git status"]
        {
            assert!(from_commands(&[command]).is_empty(), "{command}");
        }
        assert_eq!(test_frameworks(&["mvn test".into()], &[], &[]), [("JUnit", BUILD_TOOL_CONFIDENCE)]);
    }

    #[test]
    fn the_files_written_name_the_framework_by_their_imports() {
        let file = |path: &str, text: &str| SourceFile::new(path, text);
        let cases = [
            (file("test_backoff.py", "import unittest\n\nclass T(unittest.TestCase):\n    pass\n"), "unittest"),
            (file("tests/test_api.py", "import pytest\n\n@pytest.fixture\ndef c(): ...\n"), "pytest"),
            (file("test_math.py", "def test_add():\n    assert 1 + 1 == 2\n"), "pytest"),
            (file("cache_test.go", "package cache\n\nimport \"testing\"\n"), "go test"),
            (file("src/lib.rs", "#[cfg(test)]\nmod tests {}\n"), "cargo test"),
            (file("sum.test.ts", "import { it, expect } from 'vitest';\n"), "Vitest"),
            (file("sum.test.js", "const f = jest.fn();\n"), "Jest"),
            (file("test/app.mjs", "import { describe } from 'mocha';\n"), "Mocha"),
            (file("spec/user_spec.rb", "RSpec.describe User do\nend\n"), "RSpec"),
            (file("test/user_test.rb", "require 'minitest/autorun'\n"), "Minitest"),
            (file("src/test/java/AppTest.java", "import org.junit.jupiter.api.Test;\n"), "JUnit"),
            (file("Tests/CartTests.cs", "using Xunit;\n\npublic class CartTests {}\n"), "xUnit"),
            (file("Tests/OrderTests.cs", "using NUnit.Framework;\n"), "NUnit"),
        ];
        for (f, framework) in cases {
            let paths = vec![f.path.clone()];
            assert_eq!(names(&test_frameworks(&[], &paths, std::slice::from_ref(&f))), [framework], "{}", f.path);
        }
        // Code that is no test says nothing.
        let app = file("app.py", "import os\n");
        let paths = vec![app.path.clone()];
        assert!(test_frameworks(&[], &paths, &[app]).is_empty());
    }

    #[test]
    fn a_test_file_s_name_is_a_guess_that_better_evidence_replaces() {
        let paths = vec!["test_backoff.py".to_owned(), "cache_test.go".to_owned()];
        // Names alone: pytest is the guess for Python, `go test` the only runner for Go.
        assert_eq!(test_frameworks(&[], &paths, &[]), [("go test", NAME_CONFIDENCE), ("pytest", NAME_CONFIDENCE)]);
        // The project: run by `python -m unittest`, so unittest, and no pytest guess.
        let found = test_frameworks(&["python -m unittest".into()], &paths[..1], &[]);
        assert_eq!(found, [("unittest", COMMAND_CONFIDENCE)]);
        // `dotnet test` gives way to the framework its files use.
        let tests = SourceFile::new("CartTests.cs", "using Xunit;\n");
        assert_eq!(names(&test_frameworks(&["dotnet test".into()], &[], &[tests])), ["xUnit"]);
    }
}
