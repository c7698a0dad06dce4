//! Each rule on two tiny fixtures: one question that breaks it, one that does not.

use super::*;
use crate::analysis::grounding::{Grounding, GroundingKind, LineEdit};

const GO_FILE: &str = "package pool\n\nfunc Run(jobs []Job) {\n\tvar wg sync.WaitGroup\n\tfor _, j := range jobs {\n\t\twg.Add(1)\n\t\tgo func() {\n\t\t\tdefer wg.Done()\n\t\t\tj.Do()\n\t\t}()\n\t}\n\twg.Wait()\n}\n";

fn go_files() -> Vec<SourceFile> {
    vec![SourceFile::new("pool.go", GO_FILE)]
}

fn question(kind: &str, snippet: &str) -> GeneratedQuestion {
    GeneratedQuestion {
        concept: "WaitGroups".into(),
        question_type: kind.into(),
        difficulty: "mid".into(),
        snippet: Some(snippet.into()),
        question: "What does this code wait for?".into(),
        options: None,
        correct: None,
        explanation: "wg.Wait blocks until every Done.".into(),
        follow_up: None,
        tags: vec![],
        grounding: None,
    }
}

fn grounded(mut q: GeneratedQuestion, start: u32, end: u32) -> GeneratedQuestion {
    q.grounding = Some(Grounding {
        file: "pool.go".into(),
        line_start: start,
        line_end: end,
        kind: GroundingKind::Quote,
        mutation: None,
    });
    q
}

fn rules_broken(
    files: &[SourceFile],
    failures: &[FailedCall],
    fix: Option<&Fix>,
    qs: &[GeneratedQuestion],
) -> Vec<Rule> {
    lint(&LintSession { files, failures, fix }, qs).iter().map(|f| f.rule).collect()
}

fn one(q: GeneratedQuestion) -> Vec<Rule> {
    rules_broken(&go_files(), &[], None, &[q])
}

const WHOLE_FUNC: &str = "func Run(jobs []Job) {\n\tvar wg sync.WaitGroup\n\tfor _, j := range jobs {\n\t\twg.Add(1)\n\t\tgo func() {\n\t\t\tdefer wg.Done()\n\t\t\tj.Do()\n\t\t}()\n\t}\n\twg.Wait()\n}";

#[test]
fn a_clean_question_breaks_no_rule() {
    assert_eq!(one(grounded(question("code_reading", WHOLE_FUNC), 3, 13)), vec![]);
}

#[test]
fn another_ecosystems_words_are_found_in_the_prose_not_the_snippet() {
    let mut q = question("code_reading", WHOLE_FUNC);
    q.explanation = "Like Promise.all, wg.Wait joins the work.".into();
    assert_eq!(one(q), vec![Rule::ForeignWords]);
    // The same phrase is the language's own in TypeScript.
    assert_eq!(vocabulary::foreign_word("Promise.all joins", Lang::TypeScript), None);
    let mut own = question("code_reading", WHOLE_FUNC);
    own.explanation = "Each goroutine calls Done; the WaitGroup counts them.".into();
    assert_eq!(one(own), vec![]);
}

/// Issue 40 §2: another language's name only as a labelled aside, never as the answer.
#[test]
fn another_languages_name_is_accepted_as_a_labelled_aside_and_never_as_the_answer() {
    let mut aside = question("code_reading", WHOLE_FUNC);
    aside.explanation =
        "wg.Wait blocks until every Done. Elsewhere: in JavaScript, Promise.all; in Python, asyncio.gather.".into();
    assert_eq!(one(aside), vec![]);
    // The same names unlabelled are the question's own words, in a Go question.
    let mut bare = question("code_reading", WHOLE_FUNC);
    bare.explanation = "wg.Wait blocks until every Done, like Promise.all or asyncio.gather.".into();
    assert_eq!(one(bare), vec![Rule::ForeignWords]);
    // A label without the "in <language>, <name>" form is no aside.
    let mut loose = question("code_reading", WHOLE_FUNC);
    loose.explanation = "wg.Wait blocks until every Done. Elsewhere: Promise.all does this.".into();
    assert_eq!(one(loose), vec![Rule::ForeignWords]);
    // An aside as the answer is refused even when well formed.
    let mut answer = question("code_reading", WHOLE_FUNC);
    answer.correct = Some("Elsewhere: in JavaScript, Promise.all.".into());
    assert_eq!(one(answer), vec![Rule::ForeignWords]);
    // A promise is JavaScript's word: said in a Go question it is another ecosystem's.
    let mut promise = question("code_reading", WHOLE_FUNC);
    promise.explanation = "Run returns once the pending promise settles.".into();
    assert_eq!(one(promise), vec![Rule::ForeignWords]);
}

#[test]
fn a_snippet_line_from_elsewhere_is_not_the_sessions_code() {
    let canned = "function readPort(config) {\n  throw new Error(\"no port\");\n}";
    assert_eq!(one(question("code_reading", canned)), vec![Rule::NotSessionCode]);
    // A blank filled with its answer, and a declared mutation put back, are the session's.
    let mut blank = question("fill_in_blank", "\tvar wg sync.___\n\twg.Wait()");
    blank.correct = Some("WaitGroup".into());
    assert_eq!(one(blank), vec![]);
    assert_eq!(one(bug(6, "wg.Add(1)", "wg.Add(2)")), vec![]);
}

#[test]
fn a_snippet_cut_inside_a_bracket_or_at_a_dangling_token_is_a_cut_unit() {
    let open = "func Run(jobs []Job) {\n\tvar wg sync.WaitGroup\n\tfor _, j := range jobs {\n\t\twg.Add(1)";
    assert_eq!(one(question("code_reading", open)), vec![Rule::CutUnit]);
    let rust = vec![SourceFile::new("lib.rs", "impl<C> Display for Quoted<C>\nwhere\n    C: Display,\n{\n}\n")];
    let at = |snippet: &str| {
        let mut q = question("code_reading", snippet);
        q.grounding = Some(Grounding {
            file: "lib.rs".into(),
            line_start: 1,
            line_end: 2,
            kind: GroundingKind::Quote,
            mutation: None,
        });
        rules_broken(&rust, &[], None, &[q])
    };
    assert_eq!(at("impl<C> Display for Quoted<C>\nwhere"), vec![Rule::CutUnit]);
    assert_eq!(at("impl<C> Display for Quoted<C>"), vec![Rule::CutUnit]);
    assert_eq!(at("impl<C> Display for Quoted<C>\nwhere\n    C: Display,\n{\n}"), vec![]);
    // A bracket in a string is no bracket.
    let strings = vec![SourceFile::new("a.go", "func f() {\n\tprint(\"{\")\n}\n")];
    let mut q = question("code_reading", "func f() {\n\tprint(\"{\")\n}");
    q.grounding =
        Some(Grounding { file: "a.go".into(), line_start: 1, line_end: 3, kind: GroundingKind::Quote, mutation: None });
    assert_eq!(rules_broken(&strings, &[], None, &[q]), vec![]);
    // Nor is one in a comment, or in a regex: the snippet's own parse says which is which.
    let text = "def f(xs):\n    # (see below\n    return [x for x in xs]  # ]\n";
    let commented = vec![SourceFile::new("a.py", text)];
    let mut q = question("code_reading", text.trim_end());
    q.grounding =
        Some(Grounding { file: "a.py".into(), line_start: 1, line_end: 3, kind: GroundingKind::Quote, mutation: None });
    assert_eq!(rules_broken(&commented, &[], None, &[q.clone()]), vec![]);
    let regex = vec![SourceFile::new("a.js", "const open = /[(]/g;\n")];
    q.snippet = Some("const open = /[(]/g;".into());
    q.grounding.as_mut().expect("grounded").file = "a.js".into();
    assert_eq!(rules_broken(&regex, &[], None, &[q]), vec![]);
}

#[test]
fn a_conditional_type_cut_at_its_question_mark_is_a_cut_unit() {
    let ts = vec![SourceFile::new("t.ts", "type Unwrap<T> = T extends Promise<infer U> ?\n  U : T;\n")];
    let mut q = question("code_reading", "type Unwrap<T> = T extends Promise<infer U> ?");
    q.grounding =
        Some(Grounding { file: "t.ts".into(), line_start: 1, line_end: 1, kind: GroundingKind::Quote, mutation: None });
    q.explanation = "A conditional type.".into();
    assert_eq!(rules_broken(&ts, &[], None, &[q]), vec![Rule::CutUnit]);
}

#[test]
fn a_blank_on_a_keyword_or_sigil_is_trivia_and_one_on_a_name_is_not() {
    for answer in ["func", "struct", "@", "type"] {
        let mut q = question("fill_in_blank", "x");
        q.correct = Some(answer.into());
        assert!(rules::keyword_blank(&q).is_some(), "{answer}");
    }
    let mut q = question("fill_in_blank", "\tvar wg sync.___");
    q.correct = Some("WaitGroup".into());
    assert_eq!(one(q), vec![]);
}

fn bug(line: u32, original: &str, mutated: &str) -> GeneratedQuestion {
    let mut q = question(
        "spot_the_bug",
        &GO_FILE.lines().nth(line as usize - 1).unwrap_or_default().replace(original, mutated),
    );
    q.grounding = Some(Grounding {
        file: "pool.go".into(),
        line_start: line,
        line_end: line,
        kind: GroundingKind::Mutation,
        mutation: Some(LineEdit {
            line,
            original: GO_FILE.lines().nth(line as usize - 1).unwrap_or_default().into(),
            mutated: String::new(),
        }),
    });
    let Some(g) = q.grounding.as_mut() else { unreachable!() };
    let Some(m) = g.mutation.as_mut() else { unreachable!() };
    m.mutated = m.original.replace(original, mutated);
    q
}

#[test]
fn the_same_mutation_twice_is_repeated_once() {
    let qs = [bug(6, "wg.Add(1)", "wg.Add(2)"), bug(8, "defer wg.Done()", "wg.Done()"), bug(6, "1", "2")];
    let found = rules_broken(&go_files(), &[], None, &qs);
    assert_eq!(found, vec![Rule::RepeatedMutation]);
    let distinct = [bug(6, "wg.Add(1)", "wg.Add(2)"), bug(8, "defer wg.Done()", "wg.Done()")];
    assert_eq!(rules_broken(&go_files(), &[], None, &distinct), vec![]);
}

#[test]
fn a_fixed_failure_needs_a_question_on_the_error_or_the_fixed_lines() {
    let failure =
        FailedCall { tool_name: "Bash".into(), subject: "go test ./...".into(), error: "--- FAIL: TestRun".into() };
    let before = GO_FILE.replace("\twg.Wait()\n", "");
    let fix = Fix::between("pool.go", &before, GO_FILE).expect("the fix changed the file");
    assert_eq!(fix.lines, vec![12]);
    let elsewhere = grounded(question("code_reading", "\t\twg.Add(1)"), 6, 6);
    let failures = std::slice::from_ref(&failure);
    assert_eq!(
        rules_broken(&go_files(), failures, Some(&fix), std::slice::from_ref(&elsewhere)),
        vec![Rule::MissedStory]
    );
    // A quote that covers the fixed line among others is not about it; a blank on it is.
    let covering = grounded(question("code_reading", WHOLE_FUNC), 3, 13);
    assert_eq!(rules_broken(&go_files(), failures, Some(&fix), &[covering]), vec![Rule::MissedStory]);
    let mut on_fix = question("fill_in_blank", "\twg.___()");
    on_fix.correct = Some("Wait".into());
    on_fix.grounding = Some(Grounding {
        file: "pool.go".into(),
        line_start: 12,
        line_end: 12,
        kind: GroundingKind::Blank,
        mutation: None,
    });
    assert_eq!(rules_broken(&go_files(), failures, Some(&fix), &[elsewhere.clone(), on_fix]), vec![]);
    let mut on_error = question("code_reading", "--- FAIL: TestRun");
    on_error.grounding = Some(Grounding {
        file: failure.label(),
        line_start: 1,
        line_end: 1,
        kind: GroundingKind::Quote,
        mutation: None,
    });
    assert_eq!(rules_broken(&go_files(), failures, Some(&fix), &[elsewhere.clone(), on_error]), vec![]);
    // Without a failure there is no story to miss.
    assert_eq!(rules_broken(&go_files(), &[], Some(&fix), &[elsewhere]), vec![]);
}

#[test]
fn a_snippet_past_a_screen_is_oversized() {
    let long = (0..=MAX_SNIPPET_LINES).map(|_| "\twg.Wait()").collect::<Vec<_>>().join("\n");
    assert_eq!(one(question("code_reading", &long)), vec![Rule::Oversized]);
    let short = vec!["\twg.Wait()"; MAX_SNIPPET_LINES].join("\n");
    assert_eq!(one(question("code_reading", &short)), vec![]);
}

#[test]
fn the_fix_is_the_lines_between_the_common_head_and_tail() {
    assert_eq!(Fix::between("f", "a\nb\nc", "a\nB\nc").map(|f| f.lines), Some(vec![2]));
    assert_eq!(Fix::between("f", "a\nb\nc", "a\nc").map(|f| f.lines), Some(vec![2]));
    assert_eq!(Fix::between("f", "a\nb", "a\nb"), None);
    // Two edits far apart are two places, not the lines between them.
    assert_eq!(Fix::between("f", "a\nx\nb\nc\ny\nd", "a\nX\nb\nc\nY\nd").map(|f| f.lines), Some(vec![2, 5]));
}
