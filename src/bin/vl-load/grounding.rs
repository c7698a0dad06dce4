//! `vl-load grounding <session.json>…`: each recorded session replayed through a fresh
//! in-process worker with the offline provider (as `vl demo` does), then the share of its
//! questions grounded in its files, by kind, as the summary route reports it, and how many
//! question types it got.

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
            figure
        }
        Err(error) => json!({ "session": name, "error": error }),
    }
}
