//! End-to-end checks of stack detection and static rules against the small sample projects in
//! `FIXTURES_DIR`: each project has an `expected.json` with a subset of its stack profile and a
//! sample of the patterns it must yield. Subsets, so that a new rule adding patterns does not
//! break the fixtures, while a rule that stops firing does.

use super::model::SourceFile;
use super::{analyze_files, detect_stack, is_manifest};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Where the fixture projects live, relative to the crate root (`tests/fixtures/projects` in
/// the main crate).
const FIXTURES_DIR: &str = "tests/fixtures/projects";

/// Every fixture project must be present; a renamed directory should fail loudly.
const FIXTURES: [&str; 6] =
    ["nextjs-prisma-tailwind", "fastapi-sqlalchemy", "go-gin", "rust-axum", "rails-app", "monorepo"];

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURES_DIR)
}

/// Every file under `dir` (sorted, paths relative to `root` with `/`), except `expected.json`.
fn load(root: &Path, dir: &Path, out: &mut Vec<SourceFile>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            load(root, &path, out);
            continue;
        }
        let rel = path.strip_prefix(root).expect("under root").to_string_lossy().replace('\\', "/");
        if rel == "expected.json" {
            continue;
        }
        let content = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {rel}: {e}"));
        out.push(SourceFile::new(rel, content));
    }
}

/// Arrays in `expected` must be contained in `actual`; other values must be equal.
fn check_stack(project: &str, expected: &Value, actual: &Value) {
    let Some(fields) = expected.as_object() else { panic!("{project}: stack must be an object") };
    for (key, want) in fields {
        let got = &actual[key];
        match want {
            Value::Array(items) => {
                let got_items = got.as_array().unwrap_or_else(|| panic!("{project}: stack.{key} is not a list: {got}"));
                for item in items {
                    assert!(got_items.contains(item), "{project}: stack.{key} lacks {item}; got {got}");
                }
            }
            _ => assert_eq!(got, want, "{project}: stack.{key}"),
        }
    }
}

#[test]
fn fixture_projects_match_expected() {
    let root = fixtures_root();
    for project in FIXTURES {
        let dir = root.join(project);
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("expected.json"))
                .unwrap_or_else(|e| panic!("{project}/expected.json: {e}")),
        )
        .unwrap_or_else(|e| panic!("{project}/expected.json: {e}"));
        let mut files = Vec::new();
        load(&dir, &dir, &mut files);
        let manifests: Vec<SourceFile> = files.iter().filter(|f| is_manifest(&f.path)).cloned().collect();
        let touched: Vec<String> = files.iter().map(|f| f.path.clone()).collect();

        let stack = serde_json::to_value(detect_stack(&manifests, &touched)).expect("profile serialises");
        check_stack(project, &expected["stack"], &stack);

        let patterns = analyze_files(&files);
        let want = expected["patterns"].as_array().unwrap_or_else(|| panic!("{project}: patterns must be a list"));
        assert!(want.len() >= 5, "{project}: expected.json should sample at least 5 patterns");
        for w in want {
            let found = patterns.iter().any(|p| {
                w["pattern_type"] == p.pattern_type.as_str()
                    && w["name"] == p.name.as_str()
                    && w["file"] == p.file.as_str()
            });
            assert!(found, "{project}: missing {w}");
        }
        // Every snippet is original text around a real line.
        for p in &patterns {
            assert!(p.line >= 1 && !p.snippet.is_empty(), "{project}: bad pattern {p:?}");
        }
    }
}

/// SPEC §6.5 / issue 6: over every fixture project, the offline provider yields at least 3
/// grounded concepts, and a structurally valid question for each, at every level.
#[test]
fn offline_provider_yields_grounded_concepts_and_valid_questions_for_every_fixture() {
    use crate::analysis::concepts::{Level, validate_concepts};
    use crate::analysis::questions::validate_question;
    use crate::llm::offline::{offline_concepts, offline_questions};
    for project in FIXTURES {
        let root = fixtures_root().join(project);
        let mut files = Vec::new();
        load(&root, &root, &mut files);
        let manifests: Vec<SourceFile> = files.iter().filter(|f| is_manifest(&f.path)).cloned().collect();
        let code: Vec<SourceFile> = files.iter().filter(|f| !is_manifest(&f.path)).cloned().collect();
        let paths: Vec<String> = code.iter().map(|f| f.path.clone()).collect();
        let stack = detect_stack(&manifests, &paths);
        let patterns = analyze_files(&code);
        let answer = offline_concepts(&stack, &patterns, &code, &[], &["build it".to_owned()]);
        let validated = validate_concepts(answer, &code).unwrap_or_else(|e| panic!("{project}: {e}"));
        assert!(validated.concepts.len() >= 3, "{project}: only {} concepts", validated.concepts.len());
        let names: Vec<String> = validated.concepts.iter().map(|c| c.name.clone()).collect();
        for level in [Level::Junior, Level::Mid, Level::Senior] {
            let pairs: Vec<_> = validated.concepts.iter().map(|c| (c.clone(), level)).collect();
            let answer = offline_questions(&pairs, &code, &patterns);
            let questions = &answer.questions;
            // A concept goes unasked only where its questions were refused as teaching nothing
            // about this code (`llm::offline`'s `teaches` rules), which the answer counts.
            let unasked = names.iter().filter(|name| !questions.iter().any(|q| &q.concept == *name)).count();
            let refused: usize = answer.not_written.values().sum();
            assert!(unasked <= refused, "{project} {level:?}: {unasked} concepts unasked, {refused} refused");
            for question in questions {
                validate_question(question, &names)
                    .unwrap_or_else(|e| panic!("{project} {level:?}: {e}: {question:?}"));
            }
        }
    }
}
