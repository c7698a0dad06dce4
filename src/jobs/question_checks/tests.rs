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
    question("const row = db.findOrThrow(id);", "It throws.", "code_reading")
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
