//! Unit tests for what the quiz job keeps: drops counted by cause, and the repair judge's
//! choice between a first answer and its repair.

use super::*;
use crate::analysis::grounding::GroundingKind;

const FILE: &str = "export async function load(id: string) {\n  const row = await db.find(id);\n  return row;\n}\n";

fn files() -> Vec<SourceFile> {
    vec![SourceFile::new("src/load.ts", FILE)]
}

fn targets() -> Vec<QuestionTarget<'static>> {
    vec![QuestionTarget { id: "c1", name: "Async/await" }]
}

fn question(snippet: &str, correct: &str, qtype: &str) -> Value {
    json!({"concept": "Async/await", "question_type": qtype, "difficulty": "mid", "snippet": snippet,
           "question": "What does this line do?", "options": null, "correct": correct,
           "explanation": "It waits for the row.", "follow_up": null, "tags": []})
}

fn grounded() -> Value {
    question("const row = await db.find(id);", "It waits for the row.", "code_reading")
}

fn fabricated() -> Value {
    question("const row = await db.findOrThrow(id);", "It throws.", "code_reading")
}

fn wrong_blank() -> Value {
    question("const row = ___ db.find(id);", "async", "fill_in_blank")
}

fn answer(questions: &[Value]) -> String {
    json!({ "questions": questions }).to_string()
}

fn parse(text: &str) -> Vec<GeneratedQuestion> {
    parse_questions_json(text).unwrap().questions
}

#[test]
fn keep_valid_attaches_the_checked_grounding_and_counts_grounding_failures_apart() {
    let mut broken = grounded();
    broken["question_type"] = json!("no_such_type");
    let checked = keep_valid(
        parse(&answer(&[grounded(), fabricated(), wrong_blank(), broken])),
        &targets(),
        &files(),
        CannedCode::Refused,
    );
    assert_eq!(checked.kept.len(), 1);
    let grounding = checked.kept[0].1.grounding.clone().unwrap();
    assert_eq!(
        (grounding.file.as_str(), grounding.line_start, grounding.kind),
        ("src/load.ts", 2, GroundingKind::Quote)
    );
    assert_eq!((checked.dropped.len(), checked.grounding_failures), (3, 2));
    assert!(checked.dropped[1].contains("grounding: filling the blank with \"async\""), "{:?}", checked.dropped);
    let result = checked.result("anthropic", None);
    assert_eq!((result["grounded"].clone(), result["grounded_by_kind"].clone()), (json!(1), json!({"quote": 1})));
}

#[test]
fn offline_canned_snippets_stay_ungrounded_but_a_wrong_declared_grounding_is_dropped() {
    let mut declared = grounded();
    declared["grounding"] = json!({"file": "src/load.ts", "line_start": 3, "line_end": 3, "kind": "quote"});
    let checked = keep_valid(parse(&answer(&[fabricated(), declared])), &targets(), &files(), CannedCode::Allowed);
    assert_eq!((checked.kept.len(), checked.grounding_failures), (1, 1));
    assert_eq!(checked.kept[0].1.grounding, None);
}

#[test]
fn a_clean_first_answer_is_accepted_without_repair() {
    let (targets, files) = (targets(), files());
    let judge = RepairJudge::new(&targets, &files);
    let checked = judge.judge(&answer(&[grounded()])).unwrap();
    assert_eq!(checked.kept.len(), 1);
    assert_eq!(judge.rejected_before_repair(), 0);
}

#[test]
fn a_first_answer_with_failures_asks_for_repair_and_the_repair_is_kept() {
    let (targets, files) = (targets(), files());
    let judge = RepairJudge::new(&targets, &files);
    let reason = judge.judge(&answer(&[grounded(), fabricated()])).unwrap_err();
    assert!(reason.contains("these questions failed") && reason.contains("occurs in none of the session's files"));
    let fixed = question("const row = ___ db.find(id);", "await", "fill_in_blank");
    let checked = judge.judge(&answer(&[grounded(), fixed, wrong_blank()])).unwrap();
    assert_eq!((checked.kept.len(), checked.dropped.len(), judge.rejected_before_repair()), (2, 1, 1));
}

#[test]
fn a_worse_repair_keeps_the_first_answers_valid_questions_and_nothing_valid_is_refused() {
    let (targets, files) = (targets(), files());
    let judge = RepairJudge::new(&targets, &files);
    assert!(judge.judge(&answer(&[grounded(), fabricated()])).is_err());
    let checked = judge.judge(&answer(&[fabricated()])).unwrap();
    assert_eq!((checked.kept.len(), checked.dropped.len()), (1, 1));

    let nothing = RepairJudge::new(&targets, &files);
    assert!(nothing.judge(&answer(&[fabricated()])).unwrap_err().starts_with("no question was valid"));
    assert!(nothing.judge(&answer(&[wrong_blank()])).is_err());
}

#[test]
fn a_malformed_grounding_fails_only_its_question() {
    let mut capitalised = grounded();
    capitalised["grounding"] = json!({"file": "src/load.ts", "line_start": 2, "line_end": 2, "kind": "Quote"});
    let mut garbage = grounded();
    garbage["question"] = json!("Another question about the same line?");
    garbage["grounding"] = json!("line 2");
    let questions = parse(&answer(&[capitalised, garbage]));
    assert_eq!(questions[0].grounding.as_ref().map(|g| g.kind), Some(GroundingKind::Quote));
    assert_eq!(questions[1].grounding, None);
    let checked = keep_valid(questions, &targets(), &files(), CannedCode::Refused);
    // Both groundings verify (the garbage one is located from the snippet), to the same line:
    // the second is then the same type on the same lines, dropped as one question asked twice
    // (issue 25), not as a grounding failure.
    assert_eq!((checked.kept.len(), checked.grounding_failures), (1, 0), "{:?}", checked.dropped);
    assert_eq!(checked.dropped, ["Async/await: a second code_reading question on src/load.ts:2-2"]);
}

/// A code_reading question about `concept` quoting `snippet` of `path`.
fn reading(concept: &str, snippet: &str) -> Value {
    json!({"concept": concept, "question_type": "code_reading", "difficulty": "mid", "snippet": snippet,
           "question": "What does this code do?", "options": null, "correct": "It reads the input.",
           "explanation": "It reads the input.", "follow_up": null, "tags": []})
}

/// Issue 40's false concepts, each on the code that produced it: refused by the precision
/// rule "a concept is named only where its syntax is in the snippet", and counted under it.
#[test]
fn a_concept_whose_syntax_is_not_in_the_snippet_is_refused_and_counted() {
    let cases: [(&str, &str, &str); 5] = [
        // "Concurrent promises and joins" on Go goroutines.
        (
            "pool.go",
            "package pool\n\nfunc Run(jobs chan int) {\n\tgo worker(jobs)\n\tjobs <- 1\n}\n",
            "Concurrent promises and joins",
        ),
        // "Classes and encapsulation" on a Rust formatting newtype.
        (
            "quote.rs",
            "pub struct Quoted<C>(pub C);\n\nimpl<C: Display> Display for Quoted<C> {\n    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {\n        write!(f, \"'{}'\", self.0)\n    }\n}\n",
            "Classes and encapsulation",
        ),
        // "Table-driven tests" on a list of expect() calls.
        (
            "parse.test.ts",
            "it(\"parses\", () => {\n  expect(parse(\"1\")).toBe(1);\n  expect(parse(\"2\")).toBe(2);\n});\n",
            "Table-driven tests",
        ),
        // "Generics" on a function whose only `generic` is in a cfg name.
        (
            "width.rs",
            "#[cfg(feature = \"generic-simd\")]\npub fn width(n: usize) -> usize {\n    n * 2\n}\n",
            "Generics",
        ),
        // "Result and ?" on `?` applied to an Option inside Iterator::next.
        (
            "words.rs",
            "impl Iterator for Words {\n    type Item = String;\n\n    fn next(&mut self) -> Option<String> {\n        let word = self.rest.pop()?;\n        Some(word)\n    }\n}\n",
            "Result and the ? operator",
        ),
    ];
    for (path, code, concept) in cases {
        let files = vec![SourceFile::new(path, code)];
        let targets = vec![QuestionTarget { id: "c1", name: concept }];
        let checked =
            keep_valid(parse(&answer(&[reading(concept, code.trim_end())])), &targets, &files, CannedCode::Refused);
        assert!(checked.kept.is_empty(), "{concept} on {path} was kept");
        assert!(checked.dropped[0].contains(&format!("{concept} needs")), "{:?}", checked.dropped);
        let result = checked.result("anthropic", None);
        assert_eq!(result["refused"], json!({"precision: concept not in snippet": 1}), "{concept}: {result}");
    }
    // Where the syntax is there, the same question is kept.
    let generic = "pub fn first<T: Clone>(xs: &[T]) -> T {\n    xs[0].clone()\n}\n";
    let files = vec![SourceFile::new("first.rs", generic)];
    let targets = vec![QuestionTarget { id: "c1", name: "Generics" }];
    let checked =
        keep_valid(parse(&answer(&[reading("Generics", generic.trim_end())])), &targets, &files, CannedCode::Refused);
    assert_eq!(checked.kept.len(), 1, "{:?}", checked.dropped);
}

/// Two spot-the-bug questions making one edit (two rules can flip one `!=`) are one question.
#[test]
fn a_second_spot_the_bug_with_the_same_edit_is_refused() {
    let code = "package a\n\nfunc Load() error {\n\tif err := open(); err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n\nfunc Save() error {\n\tif err := write(); err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n";
    let lines: Vec<&str> = code.lines().collect();
    let files = vec![SourceFile::new("load.go", code)];
    let bug = |(first, line, last): (u32, u32, u32)| {
        let original = lines[line as usize - 1];
        let mutated = original.replace("!=", "==");
        let snippet = lines[first as usize - 1..last as usize].join("\n").replace(original, &mutated);
        json!({"concept": "Explicit error returns in Go", "question_type": "spot_the_bug", "difficulty": "mid",
               "snippet": snippet, "question": "Which line has the bug?",
               "options": null, "correct": format!("Line {line}: it should read `{}`.", original.trim()),
               "explanation": "The check is inverted.", "follow_up": null, "tags": [],
               "grounding": {"file": "load.go", "line_start": first, "line_end": last, "kind": "mutation",
                             "mutation": {"line": line, "original": original, "mutated": mutated}}})
    };
    let targets = vec![QuestionTarget { id: "c1", name: "Explicit error returns in Go" }];
    let both = [bug((3, 4, 8)), bug((10, 11, 15))];
    let checked = keep_valid(parse(&answer(&both)), &targets, &files, CannedCode::Refused);
    assert_eq!(checked.kept.len(), 1, "{:?}", checked.dropped);
    assert_eq!(checked.result("offline", None)["refused"], json!({REFUSED_SAME_MUTATION: 1}));
}
