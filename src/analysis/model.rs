//! Data types shared by every analysis step: the inputs (captured source files, manifests)
//! and the outputs (stack profile, static patterns, concepts, questions). Plain data, serde
//! derives only; the rules that produce them live in the sibling modules.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One file as the session captured it: a path (as the IDE reported it) and its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFile {
    pub path: String,
    pub content: String,
    /// The whole file was never captured: `content` holds only the text of its edits, one
    /// after another. Serialised only when set, so input hashes of whole files stay as they were.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fragment: bool,
}

impl SourceFile {
    /// A whole captured file.
    pub fn new(path: impl Into<String>, content: impl Into<String>) -> SourceFile {
        SourceFile { path: path.into(), content: content.into(), fragment: false }
    }
}

/// A tool call of the session that failed, with its error (SPEC §6.4: an error the developer
/// met is a concept to learn).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedCall {
    pub tool_name: String,
    /// What was run: the command, the file, or the tool's input.
    pub subject: String,
    /// The error text as captured (privacy-stripped, at most 10 KiB).
    pub error: String,
}

impl FailedCall {
    /// How concepts cite it as their `source_file`: `failed Bash: npm run build`.
    pub fn label(&self) -> String {
        let subject: String = self.subject.lines().next().unwrap_or("").chars().take(120).collect();
        format!("failed {}: {}", self.tool_name, subject.trim())
    }

    /// Whether a concept's `source_file` names a failed call rather than a file.
    pub fn is_label(source: &str) -> bool {
        source.starts_with("failed ") && source.contains(": ")
    }

    /// The failure as a citable source: its label as the path, its error as the text, so that
    /// a concept grounded in it passes the same validation as one grounded in code.
    pub fn as_source(&self) -> SourceFile {
        SourceFile::new(self.label(), self.error.clone())
    }
}

/// What stack detection found (SPEC §6.1, Appendix A.4 `stack`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StackProfile {
    /// Languages, most evidence first (e.g. "typescript", "python").
    pub languages: Vec<String>,
    /// The primary framework (the one with the highest confidence), e.g. "Next.js".
    pub framework: Option<String>,
    /// Every framework detected, primary first (a monorepo may have several).
    pub frameworks: Vec<String>,
    pub orm: Option<String>,
    pub state_management: Option<String>,
    pub testing: Vec<String>,
    pub auth: Option<String>,
    pub styling: Vec<String>,
    /// Confidence in [0,1] per detected item, keyed by the item's name (e.g. "Next.js": 0.95).
    pub confidence: BTreeMap<String, f64>,
    /// The manifest paths that were parsed (relative to the project root).
    pub manifests: Vec<String>,
}

/// One code pattern found by static analysis (SPEC §6.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pattern {
    /// Machine name of the pattern kind, snake_case, e.g. "react_hook", "async_function",
    /// "api_route", "error_handling", "goroutine", "derive_macro", "test".
    pub pattern_type: String,
    /// What was matched, e.g. the hook or function name ("useState", "fetchUser").
    pub name: String,
    /// Path of the file, as in `SourceFile::path`.
    pub file: String,
    /// 1-based line of the match.
    pub line: u32,
    /// The matched line with a couple of lines of context around it.
    pub snippet: String,
    /// Language of the file ("typescript", "javascript", "python", "go", "rust", "ruby",
    /// "csharp", "java").
    pub language: String,
}
