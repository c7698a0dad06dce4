//! Unit tests for the question rules: one passing fixture per type, then each rule broken on
//! its own.

use super::*;

fn names() -> Vec<String> {
    vec!["Async/await".to_string(), "Goroutines".to_string()]
}

fn base(qtype: &str) -> GeneratedQuestion {
    GeneratedQuestion {
        concept: "Async/await".into(),
        question_type: qtype.into(),
        difficulty: "mid".into(),
        snippet: None,
        question: "What does await do here?".into(),
        options: None,
        correct: None,
        explanation: "It suspends the function.".into(),
        follow_up: None,
        tags: vec!["async_pattern".into()],
        grounding: None,
    }
}

fn strings(items: &[&str]) -> Option<Vec<String>> {
    Some(items.iter().map(|s| s.to_string()).collect())
}

fn good(qtype: QuestionType) -> GeneratedQuestion {
    let mut q = base(qtype.as_str());
    match qtype {
        QuestionType::MultipleChoice => {
            q.options = strings(&["a", "b", "c", "d"]);
            q.correct = Some("C".into());
        }
        QuestionType::TrueFalse => q.correct = Some("false".into()),
        QuestionType::FillInBlank => {
            q.snippet = Some("const r = ___ fetch(url);".into());
            q.correct = Some("await".into());
        }
        QuestionType::Ordering => {
            q.options = strings(&["s1", "s2", "s3", "s4", "s5"]);
            q.correct = Some("2,4,1,3,5".into());
        }
        QuestionType::CodeReading | QuestionType::SpotTheBug => {
            q.snippet = Some("const r = fetch(url);".into());
            q.correct = Some("r is a promise, not the response".into());
        }
        QuestionType::OpenEnded => {
            q.difficulty = "senior".into();
            q.correct = Some("Run them concurrently when independent.".into());
            q.tags.extend(RUBRIC_DIMENSIONS.iter().map(|d| rubric_tag(d)));
        }
    }
    q
}

fn check(q: &GeneratedQuestion) -> Result<(), QuestionError> {
    validate_question(q, &names())
}

#[test]
fn question_types_match_the_enum() {
    for (i, t) in QuestionType::ALL.iter().enumerate() {
        assert_eq!(t.as_str(), QUESTION_TYPES[i]);
        assert_eq!(QuestionType::parse(t.as_str()), Some(*t));
    }
}

#[test]
fn one_good_question_of_each_type_passes() {
    for t in QuestionType::ALL {
        assert_eq!(check(&good(t)), Ok(()), "{t:?}");
    }
}

#[test]
fn common_rules() {
    let ok = good(QuestionType::TrueFalse);
    let mut q = ok.clone();
    q.concept = "async await".into(); // same concept after normalize_name
    assert_eq!(check(&q), Ok(()));
    q.concept = "Channels".into();
    assert_eq!(check(&q), Err(QuestionError::UnknownConcept("Channels".into())));
    let mut q = ok.clone();
    q.question_type = "riddle".into();
    assert_eq!(check(&q), Err(QuestionError::UnknownType("riddle".into())));
    let mut q = ok.clone();
    q.difficulty = "guru".into();
    assert_eq!(check(&q), Err(QuestionError::BadDifficulty("guru".into())));
    let mut q = ok.clone();
    q.question = " ".into();
    assert_eq!(check(&q), Err(QuestionError::EmptyQuestion));
    let mut q = ok.clone();
    q.explanation = String::new();
    assert_eq!(check(&q), Err(QuestionError::EmptyExplanation));
    let mut q = ok.clone();
    q.difficulty = "junior".into();
    assert_eq!(check(&q), Err(QuestionError::MissingFollowUp));
    q.follow_up = Some("Why not block?".into());
    assert_eq!(check(&q), Ok(()));
}

#[test]
fn multiple_choice_rules() {
    let ok = good(QuestionType::MultipleChoice);
    let mut q = ok.clone();
    q.options = strings(&["a", "b", "c"]);
    assert!(matches!(check(&q), Err(QuestionError::OptionCount { got: 3, .. })));
    q.options = None;
    assert!(matches!(check(&q), Err(QuestionError::OptionCount { got: 0, .. })));
    q.options = strings(&["a", "b", " ", "d"]);
    assert_eq!(check(&q), Err(QuestionError::EmptyOption));
    q.options = strings(&["a", "b", "A ", "d"]);
    assert_eq!(check(&q), Err(QuestionError::DuplicateOption));
    for bad in ["E", "c", "", "AB"] {
        let mut q = ok.clone();
        q.correct = Some(bad.into());
        assert!(matches!(check(&q), Err(QuestionError::BadCorrect { .. })), "{bad}");
    }
}

#[test]
fn true_false_rules() {
    let mut q = good(QuestionType::TrueFalse);
    q.correct = Some("maybe".into());
    assert!(matches!(check(&q), Err(QuestionError::BadCorrect { .. })));
    q.correct = Some("true".into());
    q.options = strings(&["true", "false"]);
    assert_eq!(check(&q), Err(QuestionError::UnexpectedOptions));
    q.options = Some(vec![]);
    assert_eq!(check(&q), Ok(()));
}

#[test]
fn fill_in_blank_rules() {
    let ok = good(QuestionType::FillInBlank);
    let mut q = ok.clone();
    q.snippet = Some("const r = fetch(url);".into());
    assert_eq!(check(&q), Err(QuestionError::BlankCount(0)));
    q.snippet = Some("___ = ___ fetch(url);".into());
    assert_eq!(check(&q), Err(QuestionError::BlankCount(2)));
    let mut q = ok.clone();
    q.question = "Which keyword goes in ___?".into(); // a second blank, in the question
    assert_eq!(check(&q), Err(QuestionError::BlankCount(2)));
    let mut q = ok.clone();
    q.snippet = None;
    q.question = "An async function always returns a _____.".into();
    q.correct = Some("promise".into());
    assert_eq!(check(&q), Ok(()));
    q.correct = Some("___".into());
    assert!(matches!(check(&q), Err(QuestionError::BadCorrect { .. })));
    q.correct = None;
    assert!(matches!(check(&q), Err(QuestionError::BadCorrect { .. })));
    let mut q = ok.clone();
    q.snippet = Some("def __init__(self): x = ___".into()); // dunder is not a blank
    assert_eq!(check(&q), Ok(()));
    let mut q = ok;
    q.question = "const r = await fetch(url);".into(); // completing the snippet gives the question
    assert_eq!(check(&q), Err(QuestionError::BlankGivesNothingAway));
}

#[test]
fn ordering_rules() {
    let ok = good(QuestionType::Ordering);
    let mut q = ok.clone();
    q.options = strings(&["s1", "s2", "s3"]);
    assert!(matches!(check(&q), Err(QuestionError::OptionCount { got: 3, .. })));
    q.options = strings(&["1", "2", "3", "4", "5", "6", "7"]);
    assert!(matches!(check(&q), Err(QuestionError::OptionCount { got: 7, .. })));
    for bad in ["2,4,1,3", "2,4,1,3,3", "2,4,1,3,6", "a,b,c,d,e", "0,1,2,3,4", ""] {
        let mut q = ok.clone();
        q.correct = Some(bad.into());
        assert!(matches!(check(&q), Err(QuestionError::BadCorrect { .. })), "{bad}");
    }
    let mut q = ok.clone();
    q.correct = Some("1,2,3,4,5".into());
    assert_eq!(check(&q), Err(QuestionError::OrderAlreadySolved));
    let mut q = ok;
    q.options = strings(&["s1", "s2", "s1", "s4"]);
    q.correct = Some("2,1,3,4".into());
    assert_eq!(check(&q), Err(QuestionError::DuplicateOption));
}

#[test]
fn free_text_rules() {
    for t in [QuestionType::CodeReading, QuestionType::SpotTheBug] {
        let mut q = good(t);
        q.snippet = Some("  ".into());
        assert_eq!(check(&q), Err(QuestionError::MissingSnippet));
        let mut q = good(t);
        q.correct = None;
        assert!(matches!(check(&q), Err(QuestionError::BadCorrect { .. })));
    }
    let ok = good(QuestionType::OpenEnded);
    let mut q = ok.clone();
    q.difficulty = "mid".into();
    assert_eq!(check(&q), Err(QuestionError::OpenEndedNotSenior));
    let mut q = ok.clone();
    q.correct = Some(String::new());
    assert!(matches!(check(&q), Err(QuestionError::BadCorrect { .. })));
    let mut q = ok;
    q.tags.retain(|t| t != "rubric:depth" && t != "rubric:clarity");
    assert_eq!(check(&q), Err(QuestionError::MissingRubric(vec!["depth", "clarity"])));
}

#[test]
fn normalize_fixes_near_misses() {
    let mut q = good(QuestionType::MultipleChoice);
    q.question_type = "MCQ".into();
    q.difficulty = "Intermediate".into();
    q.correct = Some("(b)".into());
    q.tags = vec![" Async ".into(), "".into()];
    normalize_question(&mut q);
    assert_eq!((q.question_type.as_str(), q.difficulty.as_str()), ("multiple_choice", "mid"));
    assert_eq!(q.correct.as_deref(), Some("B"));
    assert_eq!(q.tags, ["async"]);
    q.correct = Some("d".into());
    normalize_question(&mut q);
    assert_eq!(q.correct.as_deref(), Some("D"));
    q.correct = Some("c".into());
    q.options = strings(&["alpha", "beta", "gamma", "delta"]);
    q.correct = Some("Gamma".into());
    normalize_question(&mut q);
    assert_eq!(q.correct.as_deref(), Some("C"));

    let mut q = good(QuestionType::TrueFalse);
    q.question_type = "True or False".into();
    q.correct = Some("Yes".into());
    q.follow_up = Some(" ".into());
    normalize_question(&mut q);
    assert_eq!((q.question_type.as_str(), q.correct.as_deref()), ("true_false", Some("true")));
    assert_eq!(q.follow_up, None);

    let mut q = good(QuestionType::Ordering);
    q.correct = Some(" 2, 4 1,3 ,5".into());
    normalize_question(&mut q);
    assert_eq!(q.correct.as_deref(), Some("2,4,1,3,5"));
    assert_eq!(check(&q), Ok(()));
}

#[test]
fn questions_json_is_lenient_about_correct() {
    let text = "```json\n{\"questions\":[\
        {\"concept\":\"Async/await\",\"question_type\":\"true_false\",\"difficulty\":\"mid\",\
         \"question\":\"q\",\"correct\":true,\"explanation\":\"e\"},\
        {\"concept\":\"Async/await\",\"question_type\":\"ordering\",\"difficulty\":\"mid\",\
         \"question\":\"q\",\"options\":[\"a\",\"b\",\"c\",\"d\"],\"correct\":[2,1,4,3],\
         \"explanation\":\"e\",\"snippet\":null,\"follow_up\":null,\"tags\":[]}]}\n```";
    let answer = parse_questions_json(text).unwrap();
    assert_eq!(answer.questions[0].correct.as_deref(), Some("true"));
    assert_eq!(answer.questions[1].correct.as_deref(), Some("2,1,4,3"));
    assert!(answer.questions.iter().all(|q| check(q).is_ok()));
    assert_eq!(parse_questions_json("{\"questions\": [{\"concept\": "), Err(ParseError::Truncated));
}

#[test]
fn text_hash_is_stable_and_normalised() {
    // FNV-1a 64 reference values.
    assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    let h = normalized_text_hash("What does  AWAIT do?\n");
    assert_eq!(h, normalized_text_hash(" what does await do? "));
    assert_eq!(h.len(), 16);
    assert_ne!(h, normalized_text_hash("What does async do?"));
}
