//! The engine's oracles: per language, every pattern positive and negative (and the positive
//! turned into a comment is no pattern), plus the engine's own bounds.

mod csharp;
mod engine;
mod go;
mod java;
mod python;
mod ruby;
mod rust;
mod typescript;

use super::analyze_file;
use crate::analysis::model::SourceFile;

pub fn found(path: &str, src: &str) -> Vec<(String, String)> {
    analyze_file(&SourceFile::new(path, src)).into_iter().map(|p| (p.pattern_type, p.name)).collect()
}

fn has(found: &[(String, String)], ty: &str, name: &str) -> bool {
    found.iter().any(|(t, n)| t == ty && (name == "*" || n == name))
}

/// Every positive `(source, pattern_type, name)` is found (name `*` = any); the same source
/// turned into comments (prefix `comment` on each line) is not; every negative
/// `(source, pattern_type)` yields no pattern of that type.
pub fn check(path: &str, comment: &str, positives: &[(&str, &str, &str)], negatives: &[(&str, &str)]) {
    let mut failures = Vec::new();
    for (src, ty, name) in positives {
        let f = found(path, src);
        if !has(&f, ty, name) {
            failures.push(format!("expected {ty} {name:?} in {src:?}, found {f:?}"));
        }
        let commented: String = src.lines().map(|l| format!("{comment} {l}\n")).collect();
        let f = found(path, &commented);
        if has(&f, ty, name) {
            failures.push(format!("{ty} {name:?} reported inside a comment: {commented:?} → {f:?}"));
        }
    }
    for (src, ty) in negatives {
        let f = found(path, src);
        if has(&f, ty, "*") {
            failures.push(format!("unexpected {ty} in {src:?}: {f:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
