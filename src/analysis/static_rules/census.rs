//! The pattern census over the recorded sessions and the corpus (issue 40's before/after
//! measurement): every pattern the engine reports for each session's latest files, written as
//! tab-separated lines to the file `VL_PATTERN_CENSUS` names. Run by hand:
//! `VL_PATTERN_CENSUS=/tmp/after.tsv cargo test --lib static_rules::census -- --ignored`.

use crate::analysis::model::SourceFile;
use crate::sample::SampleSession;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

#[test]
#[ignore = "a measurement, run by hand"]
fn write_the_pattern_census() {
    let Ok(out) = std::env::var("VL_PATTERN_CENSUS") else { return };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut text = String::new();
    for dir in ["tests/fixtures/sessions", "tests/fixtures/corpus"] {
        let mut names: Vec<_> = std::fs::read_dir(root.join(dir))
            .expect("fixture dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json") && !n.contains("baseline"))
            .collect();
        names.sort();
        for name in names {
            let raw = std::fs::read_to_string(root.join(dir).join(&name)).expect("session file");
            let session = SampleSession::parse(&raw).expect("session parses");
            let mut latest: BTreeMap<String, String> = BTreeMap::new();
            for step in &session.steps {
                if let Some(w) = &step.write_file {
                    latest.insert(w.path.clone(), w.content.clone());
                }
            }
            let files: Vec<SourceFile> = latest.into_iter().map(|(p, c)| SourceFile::new(p, c)).collect();
            for p in super::analyze_files(&files) {
                let first = p.snippet.lines().next().unwrap_or("").trim();
                writeln!(text, "{name}\t{}\t{}\t{}:{}\t{first}", p.pattern_type, p.name, p.file, p.line)
                    .expect("write");
            }
        }
    }
    std::fs::write(out, text).expect("census written");
}

/// What the offline provider makes of one session (`VL_DEBUG_SESSION` = its path): the
/// concepts and the questions, to see what a change of the patterns changed downstream.
#[test]
#[ignore = "a measurement, run by hand"]
fn print_one_sessions_concepts_and_questions() {
    use crate::analysis::concepts::{Concept, Level, validate_concepts};
    use crate::analysis::detect_stack;
    let Ok(path) = std::env::var("VL_DEBUG_SESSION") else { return };
    let raw = std::fs::read_to_string(&path).expect("session file");
    let session = SampleSession::parse(&raw).expect("session parses");
    let mut latest: BTreeMap<String, String> = BTreeMap::new();
    for step in &session.steps {
        if let Some(w) = &step.write_file {
            latest.insert(w.path.clone(), w.content.clone());
        }
    }
    let files: Vec<SourceFile> = latest.into_iter().map(|(p, c)| SourceFile::new(p, c)).collect();
    let paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
    let stack = detect_stack(&[], &paths);
    let patterns = super::analyze_files(&files);
    let failures: Vec<crate::analysis::model::FailedCall> = std::env::var("VL_DEBUG_ERROR")
        .map(|error| {
            vec![crate::analysis::model::FailedCall {
                tool_name: "Bash".into(),
                subject: "run the tests".into(),
                error,
            }]
        })
        .unwrap_or_default();
    let answer = crate::llm::offline::offline_concepts(
        &stack,
        &patterns,
        &files,
        &failures,
        std::slice::from_ref(&session.description),
    );
    println!("PATTERNS {}", patterns.len());
    for e in crate::analysis::catalogue::all() {
        let hits: Vec<String> = patterns
            .iter()
            .filter(|p| {
                let lowered = (p.name.to_lowercase(), p.snippet.to_lowercase());
                crate::analysis::catalogue::best_weight(e.signals, p, &lowered).is_some()
            })
            .map(|p| format!("{}:{}", p.pattern_type, p.name))
            .collect();
        if !hits.is_empty() {
            let lang = crate::analysis::lexer::lang_for_path(&patterns[0].file);
            println!("ENTRY {} holds={} {:?}", e.name, e.in_lang(lang).is_some(), hits);
        }
    }
    for c in &answer.concepts {
        println!("PICK {} | {} | {:?}", c.name, c.source_file, c.snippet.lines().next());
    }
    let citable: Vec<SourceFile> =
        files.iter().cloned().chain(failures.iter().map(crate::analysis::model::FailedCall::as_source)).collect();
    let validated = validate_concepts(answer, &citable).expect("valid");
    println!("DROPPED {:?}", validated.dropped);
    let concepts = validated.concepts;
    for c in &concepts {
        println!("CONCEPT {} | {} | {:?}", c.name, c.source_file, c.snippet);
    }
    let level = |c: &Concept| if c.difficulty == "junior" { Level::Junior } else { Level::Mid };
    let pairs: Vec<(Concept, Level)> = concepts.iter().map(|c| (c.clone(), level(c))).collect();
    for q in crate::llm::offline::offline_questions(&pairs, &files, &patterns).questions {
        println!(
            "Q {} | {} | {:?} | {:?}",
            q.question_type,
            q.concept,
            q.snippet.as_deref().unwrap_or("").lines().next(),
            q.grounding.as_ref().map(|g| (g.line_start, g.line_end))
        );
    }
}
