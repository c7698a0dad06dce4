//! Unit tests for the concept rules: aliases, name keys, path matching, and each validation
//! rule on its own small fixture.

use super::category::CATEGORY_ALIASES;
use super::*;

const API_TS: &str = "import { db } from \"./db\";\n\nexport async function GET() {\n    const users = await db.user.findMany();\n    return Response.json(users);\n}\n";

fn files() -> Vec<SourceFile> {
    vec![
        SourceFile::new("/home/x/proj/src/api.ts", API_TS),
        SourceFile::new("src/util.py", "def add(a, b):\n    return a + b\n"),
    ]
}

fn concept(name: &str, file: &str, snippet: &str) -> Concept {
    Concept {
        name: name.into(),
        category: "Async Patterns".into(),
        difficulty: "mid".into(),
        source_file: file.into(),
        snippet: snippet.into(),
        why_it_matters: "because".into(),
        confidence: 0.8,
    }
}

fn answer(concepts: Vec<Concept>) -> ConceptsAnswer {
    ConceptsAnswer {
        summary: SessionSummary {
            what_was_built: "a users endpoint".into(),
            developer_intent: "list users".into(),
            architecture_decisions: vec!["  ".into(), "Prisma for data".into()],
        },
        concepts,
    }
}

fn three_good() -> Vec<Concept> {
    vec![
        concept("Async/await", "src/api.ts", "const users = await db.user.findMany();"),
        concept("ORM queries", "api.ts", "db.user.findMany()"),
        concept("Pure functions", "./src/util.py", "def add(a, b):\n  return a + b"),
    ]
}

#[test]
fn categories_normalise_through_aliases() {
    for (raw, want) in [
        ("async_pattern", "async_pattern"),
        ("Async Patterns", "async_pattern"),
        ("asynchronous", "async_pattern"),
        ("async", "async_pattern"),
        ("db", "database_pattern"),
        ("ORM", "database_pattern"),
        ("sql", "database_pattern"),
        ("Database Patterns", "database_pattern"),
        ("hooks", "react_pattern"),
        ("React", "react_pattern"),
        ("types", "type_system"),
        ("Generics", "type_system"),
        ("auth", "security"),
        ("REST", "api_design"),
        ("http", "api_design"),
        ("error-handling", "error_handling"),
        ("Concurrency", "concurrency"),
        ("OOP", "oop_pattern"),
        ("astrology", "general"),
        ("", "general"),
    ] {
        assert_eq!(normalize_category(raw), want, "{raw:?}");
    }
}

#[test]
fn every_alias_targets_a_category() {
    for (alias, target) in CATEGORY_ALIASES {
        assert!(CATEGORIES.contains(target), "{alias} -> {target}");
        assert_eq!(normalize_category(alias), *target);
    }
}

#[test]
fn names_normalise_to_one_key() {
    assert_eq!(normalize_name("  Async/Await "), "async await");
    assert_eq!(normalize_name("async-await"), "async await");
    assert_eq!(normalize_name("ASYNC\t\n await!!"), "async await");
    assert_eq!(normalize_name("Result and the ? operator"), "result and the operator");
    assert_eq!(normalize_name("--"), "");
}

#[test]
fn levels_parse_with_synonyms() {
    assert_eq!(Level::parse(" Senior "), Some(Level::Senior));
    assert_eq!(Level::parse("beginner"), Some(Level::Junior));
    assert_eq!(Level::parse("intermediate"), Some(Level::Mid));
    assert_eq!(Level::parse("guru"), None);
    for l in Level::ALL {
        assert_eq!(Level::parse(l.as_str()), Some(l));
        assert_eq!(Level::ALL[l.index()], l);
    }
}

#[test]
fn paths_match_exactly_or_by_suffix_at_a_boundary() {
    assert!(path_matches("/home/x/proj/src/a.ts", "src/a.ts"));
    assert!(path_matches("src/a.ts", "/home/x/proj/src/a.ts"));
    assert!(path_matches("src\\a.ts", "./src/a.ts"));
    assert!(!path_matches("/home/x/proj/src/data.ts", "a.ts"));
    assert!(!path_matches("src/a.ts", ""));
}

#[test]
fn good_answer_validates_and_is_cleaned() {
    let v = validate_concepts(answer(three_good()), &files()).unwrap();
    assert_eq!(v.concepts.len(), 3);
    assert!(v.dropped.is_empty());
    assert_eq!(v.concepts[0].category, "async_pattern");
    assert_eq!(v.concepts[0].source_file, "/home/x/proj/src/api.ts");
    assert_eq!(v.concepts[2].source_file, "src/util.py");
    assert_eq!(v.summary.architecture_decisions, ["Prisma for data"]);
}

#[test]
fn multi_line_snippet_with_other_indentation_passes() {
    let mut cs = three_good();
    cs[0].snippet =
        "export async function GET() {\n  const users = await db.user.findMany();\n  return Response.json(users);"
            .into();
    assert!(validate_concepts(answer(cs), &files()).is_ok());
}

fn dropped_reasons(cs: Vec<Concept>) -> Vec<DropReason> {
    match validate_concepts(answer(cs), &files()) {
        Ok(v) => v.dropped.into_iter().map(|d| d.reason).collect(),
        Err(ConceptsError::TooFewConcepts { dropped, .. }) => dropped.into_iter().map(|d| d.reason).collect(),
        Err(e) => panic!("unexpected {e}"),
    }
}

/// A change that breaks exactly one rule.
type Breakage = fn(&mut Concept);

#[test]
fn each_rule_drops_with_its_reason() {
    let base = three_good();
    let cases: Vec<(Breakage, DropReason)> = vec![
        (|c| c.name = " ".into(), DropReason::EmptyName),
        (|c| c.difficulty = "guru".into(), DropReason::BadDifficulty("guru".into())),
        (|c| c.confidence = 1.5, DropReason::BadConfidence(1.5)),
        (|c| c.confidence = 0.39, DropReason::LowConfidence(0.39)),
        (|c| c.source_file = "src/nope.ts".into(), DropReason::UnknownFile("src/nope.ts".into())),
        (|c| c.snippet = " \n".into(), DropReason::EmptySnippet),
        (|c| c.snippet = "await db.post.findMany()".into(), DropReason::SnippetNotFound("src/api.ts".into())),
    ];
    for (mutate, want) in cases {
        let mut cs = base.clone();
        let mut extra = base[0].clone();
        mutate(&mut extra);
        cs.push(extra);
        // The three good ones still pass; the fourth is dropped with exactly this reason.
        assert_eq!(dropped_reasons(cs), vec![want]);
    }
}

#[test]
fn confidence_exactly_at_threshold_is_kept() {
    let mut cs = three_good();
    cs[0].confidence = MIN_CONFIDENCE;
    assert!(validate_concepts(answer(cs), &files()).is_ok());
}

#[test]
fn duplicates_by_normalised_name_are_dropped() {
    let mut cs = three_good();
    cs.push(concept("async-await", "src/api.ts", "await db.user.findMany()"));
    assert_eq!(dropped_reasons(cs), vec![DropReason::Duplicate]);
}

#[test]
fn more_than_eight_keeps_the_most_confident_in_order() {
    let mut cs = Vec::new();
    for i in 0..10 {
        let mut c = concept(&format!("concept {i}"), "src/api.ts", "return Response.json(users);");
        c.confidence = if i == 0 || i == 5 { 0.5 } else { 0.9 };
        cs.push(c);
    }
    let v = validate_concepts(answer(cs), &files()).unwrap();
    assert_eq!(v.concepts.len(), MAX_CONCEPTS);
    assert!(v.concepts.iter().all(|c| c.confidence == 0.9));
    assert_eq!(v.concepts[0].name, "concept 1");
    assert_eq!(v.dropped.len(), 2);
    assert!(v.dropped.iter().all(|d| d.reason == DropReason::OverLimit));
}

#[test]
fn fewer_than_three_is_an_error_that_says_why() {
    let mut cs = three_good();
    cs[2].source_file = "src/gone.py".into();
    let err = validate_concepts(answer(cs), &files()).unwrap_err();
    assert!(matches!(&err, ConceptsError::TooFewConcepts { kept: 2, dropped } if dropped.len() == 1));
    assert!(err.to_string().contains("src/gone.py"), "{err}");
    assert!(validate_concepts(answer(vec![]), &files()).is_err());
}

#[test]
fn empty_summary_is_an_error() {
    let mut a = answer(three_good());
    a.summary.what_was_built = "  ".into();
    assert_eq!(validate_concepts(a, &files()), Err(ConceptsError::EmptySummary));
}

#[test]
fn concepts_json_parses_fenced_and_rejects_truncated() {
    let json = serde_json::to_string(&answer(three_good())).unwrap();
    let fenced = format!("Sure! Here is the analysis.\n```json\n{json}\n```\n");
    assert_eq!(parse_concepts_json(&fenced).unwrap(), answer(three_good()));
    assert_eq!(parse_concepts_json(&json[..json.len() / 2]), Err(ParseError::Truncated));
    assert!(matches!(parse_concepts_json(r#"{"summary": {}}"#), Err(ParseError::Shape(_))));
}

#[test]
fn missing_architecture_decisions_default_to_empty() {
    let text = r#"{"summary":{"what_was_built":"x","developer_intent":"y"},"concepts":[]}"#;
    assert!(parse_concepts_json(text).unwrap().summary.architecture_decisions.is_empty());
}

#[test]
fn quoted_confidence_is_read_as_a_number() {
    let text = r#"{"summary":{"what_was_built":"x","developer_intent":"y"},"concepts":[
        {"name":"n","category":"c","difficulty":"mid","source_file":"f","snippet":"s",
         "why_it_matters":"w","confidence":"0.8"}]}"#;
    assert_eq!(parse_concepts_json(text).unwrap().concepts[0].confidence, 0.8);
    let bad = text.replace("\"0.8\"", "\"high\"");
    assert!(matches!(parse_concepts_json(&bad), Err(ParseError::Shape(_))));
}
