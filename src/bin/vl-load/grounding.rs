//! `vl-load grounding <session.json>…`: each recorded session replayed through a fresh
//! in-process worker with the offline provider (as `vl demo` does), then the share of its
//! questions grounded in its files, by kind, as the summary route reports it, how many
//! question types it got, and how many questions the quiz job's validator dropped, with why. `vl-load coverage <session.json>…`: the share of each session's static
//! signals that map to a catalogue concept (issue 31), and over all of them.

use std::collections::BTreeSet;

use serde_json::{Value, json};

pub fn run(paths: &[String]) -> Value {
    let sessions: Vec<Value> = paths.iter().map(|path| one(path)).collect();
    json!({ "sessions": sessions })
}

fn one(path: &str) -> Value {
    let name = std::path::Path::new(path).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let replayed = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {path}: {e}"))
        .and_then(|text| vibelearn::cli::demo::replay(&text, None, false));
    match replayed {
        Ok(replayed) => {
            let types: BTreeSet<&str> = replayed.questions["questions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|q| q["question_type"].as_str())
                .collect();
            let mut figure = replayed.summary["grounding"].clone();
            figure["session"] = json!(name);
            figure["types"] = json!(types.len());
            let quiz = replayed.pipeline["steps"]
                .as_array()
                .and_then(|steps| steps.iter().find(|s| s["kind"] == "analyze_quiz"))
                .map(|s| s["result"].clone())
                .unwrap_or_default();
            figure["dropped"] = quiz["dropped"].clone();
            figure["drop_reasons"] = quiz["drop_reasons"].clone();
            figure
        }
        Err(error) => json!({ "session": name, "error": error }),
    }
}

/// `vl-load coverage`: per session and in total, the static signals found in its files and
/// how many map to a catalogue concept (`analysis::catalogue::coverage`).
pub fn coverage(paths: &[String]) -> Value {
    let mut total = vibelearn::analysis::catalogue::Coverage::default();
    let mut sessions = Vec::new();
    for path in paths {
        let name = std::path::Path::new(path).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let parsed = std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|text| vibelearn::sample::SampleSession::parse(&text).map_err(|e| e.to_string()));
        let session = match parsed {
            Ok(session) => session,
            Err(error) => {
                sessions.push(json!({ "session": name, "error": error }));
                continue;
            }
        };
        let mut latest = std::collections::BTreeMap::new();
        for step in &session.steps {
            if let Some(w) = &step.write_file {
                latest.insert(w.path.clone(), w.content.clone());
            }
        }
        let files: Vec<vibelearn::analysis::model::SourceFile> =
            latest.into_iter().map(|(p, c)| vibelearn::analysis::model::SourceFile::new(p, c)).collect();
        let figure = vibelearn::analysis::catalogue::coverage(&vibelearn::analysis::analyze_files(&files));
        total.add(&figure);
        sessions.push(json!({ "session": name, "signals": figure.signals, "mapped": figure.mapped,
            "share": figure.share(), "unmapped": figure.unmapped }));
    }
    json!({ "sessions": sessions, "total": { "signals": total.signals, "mapped": total.mapped,
        "share": total.share(), "unmapped": total.unmapped } })
}
