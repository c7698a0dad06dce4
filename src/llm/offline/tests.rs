//! Offline-provider tests over small sessions in five stacks: each must yield at least three
//! concepts that pass `validate_concepts` and, at every level, one or two valid questions per concept.

mod dump;
mod fixtures;
mod lint;
mod sessions;

use super::*;
use crate::analysis::catalogue::{self, render::Evidence, render::render};
use crate::analysis::concepts::Level;
use crate::analysis::concepts::MAX_CONCEPTS;
use crate::analysis::concepts::validate_concepts;
use crate::analysis::questions::QuestionType;
use crate::analysis::questions::validate_question;
use fixtures::{Session, fastapi, file, go, nextjs, prompts, ruby, rust};
use std::collections::BTreeSet;

/// Runs the provider end to end on a session and checks everything validates.
fn check_session(label: &str, s: &Session, expect: &[&str]) {
    let answer = offline_concepts(&s.stack, &s.patterns, &s.files, &[], &prompts());
    let validated = validate_concepts(answer.clone(), &s.files).unwrap_or_else(|e| panic!("{label}: {e}\n{answer:#?}"));
    assert!(validated.dropped.is_empty(), "{label}: {:?}", validated.dropped);
    assert!((MIN_CONCEPTS..=MAX_CONCEPTS).contains(&validated.concepts.len()), "{label}");
    let names: Vec<String> = validated.concepts.iter().map(|c| c.name.clone()).collect();
    for want in expect {
        assert!(names.iter().any(|n| n == want), "{label}: {want} not in {names:?}");
    }
    for level in Level::ALL {
        let asked: Vec<(Concept, Level)> = validated.concepts.iter().map(|c| (c.clone(), level)).collect();
        let answer = offline_questions(&asked, &s.files, &s.patterns);
        let questions = &answer.questions;
        // At most two per concept; a concept goes unasked only where its questions were
        // refused as teaching nothing about this code (`teaches`), which the answer counts.
        let mut unasked = 0;
        for (concept, _) in &asked {
            let asked_about = questions.iter().filter(|q| q.concept == concept.name).count();
            assert!(asked_about <= QUESTIONS_PER_CONCEPT, "{label}: {asked_about} about {}", concept.name);
            unasked += usize::from(asked_about == 0);
        }
        let refused: usize = answer.not_written.values().sum();
        assert!(unasked <= refused, "{label} {level:?}: {unasked} concepts unasked, {refused} refused");
        for q in questions {
            assert_eq!(validate_question(q, &names), Ok(()), "{label} {level:?}: {q:#?}");
        }
    }
}

#[test]
fn typescript_react_session() {
    check_session("nextjs", &nextjs(), &["Server and client boundary", "Local component state", "ORM queries"]);
}

#[test]
fn python_fastapi_session() {
    check_session("fastapi", &fastapi(), &["Async/await", "HTTP route handlers", "Unit tests"]);
}

#[test]
fn go_session() {
    check_session("go", &go(), &["Goroutines", "Channels", "Explicit error returns in Go"]);
}

#[test]
fn rust_session() {
    check_session("rust", &rust(), &["Result and the ? operator", "Lifetimes and borrowing", "Derive macros"]);
}

#[test]
fn ruby_session() {
    check_session("ruby", &ruby(), &["Layered architecture", "Exception handling with begin/rescue"]);
}

#[test]
fn code_without_patterns_falls_back_to_stack_then_generic() {
    let mut s = go();
    s.patterns.clear();
    check_session("go without patterns", &s, &[]);
    let answer = offline_concepts(&s.stack, &[], &s.files, &[], &[]);
    assert!(answer.concepts.iter().all(|c| c.confidence >= 0.4));

    let plain = Session {
        stack: StackProfile::default(),
        files: vec![file("notes.txt", "just some words\n")],
        patterns: vec![],
    };
    // Its concepts come from the generic fallback; a question over them would show the
    // catalogue's example as if it were the user's code (issue 40 §2), so none that does is
    // written: every snippet shown is the file's own words.
    let answer = offline_concepts(&plain.stack, &[], &plain.files, &[], &prompts());
    let concepts = validate_concepts(answer, &plain.files).expect("generic concepts").concepts;
    let asked: Vec<(Concept, Level)> = concepts.iter().map(|c| (c.clone(), Level::Mid)).collect();
    for q in offline_questions(&asked, &plain.files, &plain.patterns).questions {
        assert!(q.snippet.as_deref().is_none_or(|s| s.contains("just some words")), "{q:#?}");
    }
}

#[test]
fn no_code_means_no_concepts_and_an_honest_summary() {
    let answer = offline_concepts(&StackProfile::default(), &[], &[], &[], &[]);
    assert!(answer.concepts.is_empty());
    assert!(!answer.summary.what_was_built.is_empty());
    assert!(validate_concepts(answer, &[]).is_err());
}

#[test]
fn snippets_are_verbatim_and_cut_from_the_file_when_the_pattern_snippet_is_not() {
    let mut s = nextjs();
    for p in &mut s.patterns {
        p.snippet = format!("{} // reformatted by the analyser", p.snippet);
    }
    let answer = offline_concepts(&s.stack, &s.patterns, &s.files, &[], &[]);
    for c in &answer.concepts {
        let f = s.files.iter().find(|f| f.path == c.source_file).expect("cited file is captured");
        assert!(f.content.contains(&c.snippet), "{}", c.name);
    }
}

#[test]
fn summary_comes_from_stack_files_and_first_prompt() {
    let s = nextjs();
    let summary = offline_concepts(&s.stack, &s.patterns, &s.files, &[], &prompts()).summary;
    assert!(summary.what_was_built.contains("Next.js"), "{}", summary.what_was_built);
    // Files are named relative to the directory they share.
    assert!(summary.what_was_built.contains("(users/page.tsx, api/users/route.ts)"), "{}", summary.what_was_built);
    assert!(summary.what_was_built.contains("TypeScript"));
    assert_eq!(summary.developer_intent, "The developer asked: \"Add a users page that lists everyone\"");
    assert!(summary.architecture_decisions.contains(&"Data access through Prisma".to_string()));
    let long = vec!["x".repeat(500)];
    let intent = offline_concepts(&s.stack, &s.patterns, &s.files, &[], &long).summary.developer_intent;
    assert!(intent.chars().count() < 240 && intent.ends_with("…\""), "{intent}");
}

#[test]
fn output_is_deterministic() {
    for s in [nextjs(), fastapi(), go(), rust(), ruby()] {
        let a = offline_concepts(&s.stack, &s.patterns, &s.files, &[], &prompts());
        let b = offline_concepts(&s.stack, &s.patterns, &s.files, &[], &prompts());
        assert_eq!(a, b);
        let asked: Vec<(Concept, Level)> = a.concepts.iter().map(|c| (c.clone(), Level::Senior)).collect();
        assert_eq!(offline_questions(&asked, &s.files, &s.patterns), offline_questions(&asked, &s.files, &s.patterns));
    }
}

#[test]
fn question_types_rotate_and_open_ended_is_senior_only() {
    let mut seen = BTreeSet::new();
    for i in 0..7 {
        assert_ne!(question_type_for("Async/await", i, Level::Mid), QuestionType::OpenEnded);
        seen.insert(question_type_for("Async/await", i, Level::Senior).as_str());
    }
    assert_eq!(seen.len(), 7);
    assert_eq!(question_type_for("Async/await", 0, Level::Mid), question_type_for("async-await", 0, Level::Mid));
}

#[test]
fn unknown_concepts_get_a_valid_generic_question() {
    let concept = Concept {
        name: "Event sourcing".into(),
        category: "architecture_pattern".into(),
        difficulty: "senior".into(),
        source_file: "src/events.ts".into(),
        snippet: "store.append(event);".into(),
        why_it_matters: "State is rebuilt from events.".into(),
        confidence: 0.8,
    };
    for level in Level::ALL {
        let q = offline_questions(&[(concept.clone(), level)], &[], &[]).questions.remove(0);
        assert_eq!(validate_question(&q, &["Event sourcing".to_string()]), Ok(()), "{q:#?}");
    }
}

#[test]
fn errors_the_developer_met_come_first_and_are_grounded_in_the_error() {
    use crate::analysis::model::FailedCall;
    let s = nextjs();
    let failures = [
        FailedCall {
            tool_name: "Bash".into(),
            subject: "npx tsc --noEmit".into(),
            error: "lib/cart.ts(9,7): error TS2322: Type 'string' is not assignable to type 'number'.\nFound 1 error."
                .into(),
        },
        FailedCall {
            tool_name: "Bash".into(),
            subject: "npm test".into(),
            error: " FAIL  tests/cart.test.ts\nAssertionError: expected 500 to be 600\n".into(),
        },
        FailedCall { tool_name: "Bash".into(), subject: "npx tsc".into(), error: "error TS2322: again".into() },
    ];
    let answer = offline_concepts(&s.stack, &s.patterns, &s.files, &failures, &prompts());
    let names: Vec<&str> = answer.concepts.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names[..2], ["Reading compiler type errors", "Reading a failing test"], "{names:?}");
    assert_eq!(answer.concepts[0].source_file, "failed Bash: npx tsc --noEmit");
    assert!(answer.concepts[0].snippet.contains("error TS2322"));
    assert!(answer.concepts[0].why_it_matters.contains("You met it"));
    assert!(answer.concepts.len() <= MAX_CONCEPTS);
    // The failures are citable sources: every concept validates, none is dropped.
    let citable: Vec<SourceFile> = s.files.iter().cloned().chain(failures.iter().map(FailedCall::as_source)).collect();
    let validated = validate_concepts(answer, &citable).unwrap();
    assert!(validated.dropped.is_empty(), "{:?}", validated.dropped);
    // The quiz asks about the error itself, quoting it.
    let asked: Vec<(Concept, Level)> = validated.concepts[..1].iter().map(|c| (c.clone(), Level::Mid)).collect();
    for index in 0..6 {
        let qtype = question_type_for(&asked[0].0.name, index, Level::Mid);
        let entry = catalogue::find(&asked[0].0.name).unwrap();
        let ev = Evidence { concept: &asked[0].0.name, file: &asked[0].0.source_file, snippet: &asked[0].0.snippet };
        let q = render(entry, qtype, Level::Mid, &ev);
        assert_eq!(validate_question(&q, &[asked[0].0.name.clone()]), Ok(()), "{q:#?}");
    }
    let q = &offline_questions(&asked, &s.files, &s.patterns).questions[0];
    assert_eq!(q.concept, "Reading compiler type errors");
    // Without failures, nothing about errors is invented.
    let plain = offline_concepts(&s.stack, &s.patterns, &s.files, &[], &prompts());
    assert!(plain.concepts.iter().all(|c| !c.source_file.starts_with("failed ")));
}

#[test]
fn a_concept_is_named_and_asked_only_in_the_languages_its_entry_holds_in() {
    // The Rust fixture's struct is a "Structs" concept, never a dataclass.
    let s = rust();
    let answer = offline_concepts(&s.stack, &s.patterns, &s.files, &[], &prompts());
    let names: Vec<&str> = answer.concepts.iter().map(|c| c.name.as_str()).collect();
    assert!(names.iter().all(|n| !n.contains("dataclass")), "{names:?}");
    assert!(names.contains(&"Structs"), "{names:?}");
    // A concept whose entry holds in no language of its file gets no catalogue question:
    // promise combinators on Go code.
    let go = go();
    let joins = Concept {
        name: "Concurrent promises and joins".into(),
        category: "async_pattern".into(),
        difficulty: "mid".into(),
        source_file: "main.go".into(),
        snippet: go.files[0].content.lines().take(3).collect::<Vec<_>>().join("\n"),
        why_it_matters: String::new(),
        confidence: 0.9,
    };
    let questions = offline_questions(&[(joins, Level::Mid)], &go.files, &go.patterns).questions;
    assert!(questions.is_empty(), "{questions:#?}");
}
