//! The story builder over one failure and its fix per ecosystem: a Go `--- FAIL`, a Rust
//! E0599, a pytest assertion.

use super::*;
use crate::analysis::concepts::Concept;

const GO_FAIL: &str = "--- FAIL: TestMap (0.02s)\n    --- FAIL: TestMap/preserves_order (0.01s)\n        pool_test.go:47: Map()[0] = \"1\", want \"5\"\nFAIL\nFAIL\texample.com/pool\t0.034s";
const GO_BEFORE: &str = "package pool\n\nfunc Map(in []int) []int {\n\tout := make([]int, 0, len(in))\n\tfor i := 0; i < len(in)-1; i++ {\n\t\tout = append(out, in[i])\n\t}\n\treturn out\n}\n";
const GO_AFTER: &str = "package pool\n\nfunc Map(in []int) []int {\n\tout := make([]int, 0, len(in))\n\tfor i := 0; i < len(in); i++ {\n\t\tout = append(out, in[i])\n\t}\n\treturn out\n}\n";

const RUST_E0599: &str = "   Compiling calc v0.1.0 (/home/dev/calc)\nerror[E0599]: no method named `find_map` found for struct `Lexer<'a>` in the current scope\n   --> src/lexer.rs:165:39\n    |\n165 |         let err = Lexer::new(\"1 + $\").find_map(Result::err);";
const RUST_BEFORE: &str = "pub struct Lexer<'a> {\n    rest: &'a str,\n}\n\nimpl<'a> Lexer<'a> {\n    pub fn next_token(&mut self) -> Option<char> {\n        self.rest.chars().next()\n    }\n}\n";
const RUST_AFTER: &str = "pub struct Lexer<'a> {\n    rest: &'a str,\n}\n\nimpl<'a> Iterator for Lexer<'a> {\n    type Item = char;\n    fn next(&mut self) -> Option<char> {\n        self.rest.chars().next()\n    }\n}\n";

const PYTEST: &str = "    def test_delays(policy: Backoff, expected: list[float]) -> None:\n>       assert list(policy.delays()) == expected\nE       assert [0.1, 0.2, 0.4, 0.8] == [0.1, 0.2, 0.4]\nE         \nE         Left contains one more item: 0.8\n\ntests/test_retry.py:35: AssertionError";
const PY_BEFORE: &str = "class Backoff:\n    def delays(self):\n        for n in range(self.attempts):\n            yield self.base * self.factor ** n\n";
const PY_AFTER: &str = "class Backoff:\n    def delays(self):\n        for n in range(self.attempts - 1):\n            yield self.base * self.factor ** n\n";

fn concept(label: &str) -> Concept {
    Concept {
        name: "Reading a failing test".into(),
        category: "testing".into(),
        difficulty: "mid".into(),
        source_file: label.into(),
        snippet: String::new(),
        why_it_matters: String::new(),
        confidence: 0.9,
    }
}

/// The story questions of a session that ran `command`, failed with `error`, and fixed
/// `path` from `before` to `after`.
fn story(command: &str, error: &str, path: &str, before: &str, after: &str) -> Vec<GeneratedQuestion> {
    let failure = FailedCall { tool_name: "Bash".into(), subject: command.into(), error: error.into() };
    let fix = Fix::between(path, before, after).expect("the edit changes the file");
    let files = [SourceFile::new(path, after)];
    story_questions(&[(concept(&failure.label()), Level::Mid)], &[failure], Some(&fix), &files)
}

fn of_type<'a>(qs: &'a [GeneratedQuestion], t: &str) -> Option<&'a GeneratedQuestion> {
    qs.iter().find(|q| q.question_type == t)
}

#[test]
fn a_go_test_failure_is_read_as_go_test_reports_it_and_its_fix_is_asked() {
    let qs = story("go test ./...", GO_FAIL, "pool.go", GO_BEFORE, GO_AFTER);
    let reading = of_type(&qs, "code_reading").expect("the error question");
    assert!(reading.snippet.as_deref().is_some_and(|s| s.starts_with("--- FAIL: TestMap") && GO_FAIL.contains(s)));
    let answer = reading.correct.as_deref().unwrap_or_default();
    assert!(answer.contains("`--- FAIL: TestMap (0.02s)`") && answer.contains("t.Errorf"), "{answer}");
    assert!(answer.contains("pool_test.go:47"), "{answer}");
    assert!(answer.contains(", then `pool_test.go:47: Map()[0] = \"1\", want \"5\"`"), "{answer}");
    let g = reading.grounding.as_ref().expect("grounded");
    assert_eq!((g.file.as_str(), g.line_start, g.line_end), ("failed Bash: go test ./...", 1, 3));
    // The fix only deleted `-1`: there is no token to blank.
    assert!(of_type(&qs, "fill_in_blank").is_none());
    // The bug is the line as it was; reverting it is the session's fix.
    let bug = of_type(&qs, "spot_the_bug").expect("the bug the fix removed");
    let m = bug.grounding.as_ref().and_then(|g| g.mutation.as_ref()).expect("a declared mutation");
    assert_eq!(
        (m.line, m.mutated.as_str(), m.original.as_str()),
        (5, "\tfor i := 0; i < len(in)-1; i++ {", "\tfor i := 0; i < len(in); i++ {")
    );
    assert!(bug.snippet.as_deref().is_some_and(|s| s.contains("len(in)-1") && s.contains("return out")));
    assert!(bug.correct.as_deref().is_some_and(|c| c.starts_with("Line 5: `for i := 0; i < len(in)-1; i++ {`")));
    assert!(bug.correct.as_deref().is_some_and(|c| c.contains("the run that had failed passed")));

    // The same fix with a second change in another function: the unit shown is not the whole
    // bug, so it is not asked as one.
    let helper =
        "\nfunc Sum(in []int) int {\n\ttotal := 0\n\tfor _, v := range in {\n\t\ttotal += v\n\t}\n\treturn total\n}\n";
    let (before, after) =
        (format!("{GO_BEFORE}{helper}"), format!("{GO_AFTER}{}", helper.replace("total := 0", "total := 1")));
    let qs = story("go test ./...", GO_FAIL, "pool.go", &before, &after);
    assert!(of_type(&qs, "spot_the_bug").is_none(), "the lines shown are not the whole bug: {qs:#?}");
}

#[test]
fn a_rust_e0599_is_read_as_a_missing_trait_impl() {
    let qs = story("cargo test", RUST_E0599, "src/lexer.rs", RUST_BEFORE, RUST_AFTER);
    let reading = of_type(&qs, "code_reading").expect("the error question");
    let answer = reading.correct.as_deref().unwrap_or_default();
    assert!(answer.contains("E0599") && answer.contains("trait") && answer.contains("src/lexer.rs:165:39"), "{answer}");
    assert_eq!(reading.grounding.as_ref().map(|g| (g.line_start, g.line_end)), Some((2, 3)));
    // The fix wrote `Iterator for` into the impl header: that is the blank.
    let fix = Fix::between("src/lexer.rs", RUST_BEFORE, RUST_AFTER).expect("a fix");
    assert_eq!(fix.change.as_ref().map(|c| c.line), Some(5));
    let blank = of_type(&qs, "fill_in_blank").expect("the blank on the fix");
    assert_eq!(blank.correct.as_deref(), Some("Iterator for"));
}

/// A junior's follow-ups: the output's asks about the output, the fix's (which shows code) how
/// the output led to that code, never about an output it does not show (round 6, B6).
#[test]
fn a_junior_follow_up_asks_about_what_its_question_shows() {
    let failure = FailedCall { tool_name: "Bash".into(), subject: "cargo test".into(), error: RUST_E0599.into() };
    let fix = Fix::between("src/lexer.rs", RUST_BEFORE, RUST_AFTER).expect("a fix");
    let files = [SourceFile::new("src/lexer.rs", RUST_AFTER)];
    let qs = story_questions(&[(concept(&failure.label()), Level::Junior)], &[failure], Some(&fix), &files);
    let follow_up = |t: &str| of_type(&qs, t).and_then(|q| q.follow_up.clone()).unwrap_or_default();
    assert!(follow_up("code_reading").contains("this output"), "{qs:#?}");
    assert!(follow_up("fill_in_blank").contains("led to this line of code"), "{qs:#?}");
}

#[test]
fn a_pytest_assertion_is_read_from_its_e_lines() {
    let qs = story("python -m pytest -q", PYTEST, "retrykit/policy.py", PY_BEFORE, PY_AFTER);
    let reading = of_type(&qs, "code_reading").expect("the error question");
    let snippet = reading.snippet.as_deref().unwrap_or_default();
    assert!(snippet.starts_with("E       assert [0.1, 0.2, 0.4, 0.8]") && PYTEST.contains(snippet), "{snippet}");
    assert!(reading.correct.as_deref().unwrap_or_default().contains("pytest"));
    // The fix is asked once: where the bug was, not also a blank of what the fix wrote.
    assert!(of_type(&qs, "fill_in_blank").is_none(), "{qs:#?}");
    let bug = of_type(&qs, "spot_the_bug").expect("the bug the fix removed");
    let edit = bug.grounding.as_ref().and_then(|g| g.mutation.as_ref()).expect("the edit");
    assert_eq!(edit.original, "        for n in range(self.attempts - 1):");
    assert!(bug.snippet.as_deref().unwrap_or_default().contains("        for n in range(self.attempts):"));
}

#[test]
fn the_first_fix_is_the_first_edit_after_a_failure_of_a_file_written_before() {
    let events = [
        StoryEvent::Wrote { path: "a.go", content: "x\n" },
        StoryEvent::Wrote { path: "a.go", content: "y\n" },
        StoryEvent::Failed,
        StoryEvent::Wrote { path: "b.go", content: "new\n" },
        StoryEvent::Wrote { path: "a.go", content: "z\n" },
    ];
    let fix = first_fix(events).expect("a fix");
    assert_eq!((fix.file.as_str(), fix.lines.as_slice()), ("a.go", &[1][..]));
    assert_eq!(fix.change.map(|c| (c.before, c.after)), Some(("y".into(), "z".into())));
    assert_eq!(fix.after_failure, Some(0));
    // A block written in place of a line is no one-line rewrite.
    let block = Fix::between("a.java", "a\nx = 1;\nb\n", "a\nif (y) {\nx = 1;\n}\nb\n").expect("a fix");
    assert_eq!((block.lines.as_slice(), block.change), (&[2, 4][..], None));
    let replaced = Fix::between("a.java", "a\nlast = now;\nb\n", "a\nif (e <= 0) {\nreturn;\n}\nb\n");
    assert_eq!(replaced.and_then(|f| f.change), None);
    assert!(first_fix([StoryEvent::Wrote { path: "a.go", content: "x" }, StoryEvent::Failed]).is_none());
}

#[test]
fn the_blank_is_the_changed_word() {
    assert_eq!(changed_span("let n = total - 1;", "let n = total;"), None);
    assert_eq!(changed_span("a(1)", "a(2)"), Some((2, 3)));
    assert_eq!(changed_span("n = attempts", "n = attemptz"), Some((4, 12)));
    assert_eq!(changed_span("abc", "ab"), None);
}

#[test]
fn go_vets_printf_check_and_vitests_diff_are_read_in_their_own_terms() {
    let vet = "# example.com/report\n./report.go:14:2: fmt.Printf format %d has arg name of wrong type string\nFAIL\texample.com/report [build failed]";
    let r = reading_of(vet).expect("a reading");
    assert_eq!(r.headline, "./report.go:14:2: fmt.Printf format %d has arg name of wrong type string");
    assert!(r.gloss.contains("`go vet`'s printf check"), "{}", r.gloss);
    assert_eq!((r.first_line, r.last_line, r.location.as_deref()), (2, 2, Some("./report.go:14:2")));
    let vitest = " FAIL  src/d.test.ts > d\nAssertionError: expected 500 to be 600 // Object.is equality\n \u{276f} src/d.test.ts:5:42";
    let r = reading_of(vitest).expect("a reading");
    assert!(r.gloss.contains("vitest") && r.gloss.contains("Object.is"), "{}", r.gloss);
    let deep = "AssertionError: expected [ 1 ] to deeply equal [ 2 ]";
    assert!(!reading_of(deep).expect("a reading").gloss.contains("Object.is"));
    // E0599 names `Iterator` only where the error is about it.
    let other =
        "error[E0599]: no method named `area` found for struct `Square` in the current scope\n --> src/shape.rs:9:7";
    assert!(!reading_of(other).expect("a reading").gloss.contains("Iterator"));
    let named = format!("{RUST_E0599}\n    = note: candidate #1: `Iterator`");
    assert!(reading_of(&named).expect("a reading").gloss.contains("`Iterator`, the trait"));
}

#[test]
fn the_fix_is_asked_with_the_failure_it_answered_only() {
    let first = FailedCall {
        tool_name: "Bash".into(),
        subject: "go build ./...".into(),
        error: "main.go:6:2: no required module provides package x".into(),
    };
    let second = FailedCall { tool_name: "Bash".into(), subject: "go test ./...".into(), error: GO_FAIL.into() };
    let mut fix = Fix::between("pool.go", GO_BEFORE, GO_AFTER).expect("a fix");
    fix.after_failure = Some(1);
    let files = [SourceFile::new("pool.go", GO_AFTER)];
    // Only the build failure has a concept: its error is asked, the test's fix is not.
    let qs =
        story_questions(&[(concept(&first.label()), Level::Mid)], &[first.clone(), second.clone()], Some(&fix), &files);
    assert_eq!(qs.iter().map(|q| q.question_type.as_str()).collect::<Vec<_>>(), ["code_reading"]);
    // With a concept on the test failure, the fix comes with it.
    let both = [(concept(&first.label()), Level::Mid), (concept(&second.label()), Level::Mid)];
    let qs = story_questions(&both, &[first, second], Some(&fix), &files);
    assert!(qs.iter().any(|q| q.question_type == "spot_the_bug"));
    assert!(qs[0].snippet.as_deref().is_some_and(|s| s.starts_with("--- FAIL")));
}

/// The recorded error of a corpus session (each checked against its ecosystem's real run by
/// scripts/corpus-check.sh, C# aside).
fn corpus_error(name: &str) -> String {
    let path = format!("{}/tests/fixtures/corpus/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let session: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("corpus file")).expect("json");
    let steps = session["steps"].as_array().expect("steps");
    steps
        .iter()
        .find_map(|s| {
            let input = &s["input"];
            let input: serde_json::Value = match input.as_str() {
                Some(text) => serde_json::from_str(text).ok()?,
                None => input.clone(),
            };
            (input["hook_event_name"] == "PostToolUseFailure").then(|| input["error"].as_str().map(str::to_owned))?
        })
        .expect("a failed command")
}

#[test]
fn every_tools_reading_quotes_the_place_its_error_names_and_the_key_points_there() {
    // (session, the place the learner must be shown): where each tool names it, often
    // several lines under the headline.
    let cases = [
        ("python-retry", "tests/test_retry.py:35"),
        ("typescript-duration", "src/duration.test.ts:11:34"),
        ("ruby-importer", "./spec/importer_spec.rb:19"),
        ("java-ratelimit", "TokenBucketTest.java:36"),
        ("csharp-stock", "/home/dev/stock/src/Stock/Warehouse.cs:line 57"),
        ("go-workerpool", "pool_test.go:47"),
        ("rust-lexer", "src/lexer.rs:148:76"),
    ];
    for (name, place) in cases {
        let error = corpus_error(name);
        let reading = reading::reading_of(&error).unwrap_or_else(|| panic!("{name}: no reading"));
        assert!(reading.excerpt.contains(place), "{name}: the excerpt does not show {place}:\n{}", reading.excerpt);
        // The place itself, not the word it is written in (RSpec's `…_spec.rb:19:in`).
        assert_eq!(reading.location.as_deref(), Some(place), "{name}");
        assert!(reading.answer().contains(&format!("It points at `{place}`.")), "{name}: {}", reading.answer());
        assert!(reading.excerpt.lines().count() <= 12, "{name}: {} lines", reading.excerpt.lines().count());
    }
}

#[test]
fn an_error_that_names_no_place_is_not_asked_where() {
    let error = "AssertionError: expected 1800000 to be 5400000 // Object.is equality\n\n- Expected\n+ Received";
    let qs = story("npx vitest run", error, "src/duration.ts", "let a = 1;\n", "let a = 2;\n");
    let reading = of_type(&qs, "code_reading").expect("the error question");
    assert!(!reading.question.contains("where"), "{}", reading.question);
    assert!(!reading.correct.as_deref().unwrap_or_default().contains("points at"));
}

#[test]
fn the_key_names_the_message_under_the_headline_not_the_place_reached_for() {
    let reading = reading::reading_of(&corpus_error("ruby-importer")).expect("a reading");
    let detail = reading.detail.as_deref().unwrap_or_default();
    assert!(!detail.contains("importer_spec.rb"), "{detail}");
    assert_eq!(reading.answer().matches("importer_spec.rb:19").count(), 1, "{}", reading.answer());
}

const RUBY_BEFORE: &str = "module Catalog\n  Item = Data.define(:sku, :price_cents) do\n    def self.from_row(row)\n      new(sku: row.fetch(\"sku\"), price_cents: Catalog.cents(row.fetch(\"price\")))\n    end\n  end\n\n  def self.cents(text)\n    amount = text.to_s.delete(\",\").strip.to_f\n    raise ArgumentError, \"negative price #{text.inspect}\" if amount.negative?\n\n    (amount * 100).to_i\n  end\nend\n";
const RUBY_AFTER: &str = "module Catalog\n  Item = Data.define(:sku, :price_cents) do\n    def self.from_row(row)\n      new(sku: row.fetch(\"sku\"), price_cents: Catalog.cents(row.fetch(\"price\")))\n    end\n  end\n\n  def self.cents(text)\n    amount = BigDecimal(text.to_s.delete(\",\").strip)\n    raise ArgumentError, \"negative price #{text.inspect}\" if amount.negative?\n\n    (amount * 100).round.to_i\n  end\nend\n";
const RSPEC_FAIL: &str = "Failures:\n\n  1) Catalog::Importer reads prices\n     Failure/Error: expect(importer.map(&:price_cents)).to eq([1250, 102_435])\n\n       expected: [1250, 102435]\n            got: [1250, 102434]\n\n       (compared using ==)\n     # ./spec/importer_spec.rb:19:in `block (3 levels) in <top (required)>'\n";

/// A place is its path and numbers only: RSpec writes the frame as
/// ``./spec/x_spec.rb:19:in `block …'``, whose `:in` starts the words after the place.
#[test]
fn a_place_is_its_path_and_line_without_the_words_after_it() {
    let reading = reading::reading_of(RSPEC_FAIL).expect("a reading");
    assert_eq!(reading.location.as_deref(), Some("./spec/importer_spec.rb:19"));
    assert!(reading.answer().ends_with("It points at `./spec/importer_spec.rb:19`."), "{}", reading.answer());
    let rustc = reading::reading_of(RUST_E0599).expect("a reading");
    assert_eq!(rustc.location.as_deref(), Some("src/lexer.rs:165:39"));
}

/// A fix of `x.to_f` into `BigDecimal(x)` would blank the whole expression, its unchanged
/// middle included: not asked as a blank. Nor as the bug: the method shows a second line of
/// the fix, and one edit cannot show both as they were.
#[test]
fn a_blank_that_would_hold_the_unchanged_middle_of_the_line_is_not_written() {
    let qs = story("bundle exec rspec", RSPEC_FAIL, "lib/catalog/item.rb", RUBY_BEFORE, RUBY_AFTER);
    assert!(of_type(&qs, "code_reading").is_some(), "the error is still asked: {qs:#?}");
    assert!(of_type(&qs, "fill_in_blank").is_none() && of_type(&qs, "spot_the_bug").is_none(), "{qs:#?}");
    // The same change alone on its line is a blank no wider than what changed.
    let one_line = RUBY_AFTER.replace("(amount * 100).round.to_i", "(amount * 100).to_i");
    let qs = story("bundle exec rspec", RSPEC_FAIL, "lib/catalog/item.rb", RUBY_BEFORE, &one_line);
    assert!(of_type(&qs, "fill_in_blank").is_none(), "the real bug is asked, not the blank: {qs:#?}");
    assert!(of_type(&qs, "spot_the_bug").is_some(), "{qs:#?}");
    assert!(super::keeps_unchanged_text(
        "amount = text.to_s.delete(\",\").strip.to_f",
        "BigDecimal(text.to_s.delete(\",\").strip)"
    ));
    assert!(!super::keeps_unchanged_text("for n in range(self.attempts):", "- 1"));
    assert!(!super::keeps_unchanged_text("impl<'a> Lexer<'a> {", "Iterator for"));
}
