//! Where a question comes from in the developer's own code (issue 16): the file, the line
//! range its snippet quotes, and how the snippet relates to those lines — a verbatim quote,
//! a quote with one token blanked (fill_in_blank), or a quote with one declared line edit
//! (spot_the_bug's mutation). Plain data; generation lives in the offline question builder,
//! verification against the session's files next to it.

use serde::{Deserialize, Serialize};

/// How a question's snippet relates to the file lines it cites.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GroundingKind {
    /// The snippet is the file's lines (modulo whitespace), or the question quotes them.
    Quote,
    /// The snippet is the file's lines with one token replaced by a `___` blank; the
    /// question's `correct` answer restores the line.
    Blank,
    /// The snippet is the file's lines with one line replaced (`mutation`); reversing the
    /// edit restores the file.
    Mutation,
}

impl GroundingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            GroundingKind::Quote => "quote",
            GroundingKind::Blank => "blank",
            GroundingKind::Mutation => "mutation",
        }
    }
}

/// One line of the file as written and as the mutated snippet shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineEdit {
    /// 1-based line of the file.
    pub line: u32,
    /// The line as the file has it.
    pub original: String,
    /// The line as the snippet shows it (may be empty: a removed line).
    pub mutated: String,
}

/// Where a question is grounded in the session's files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grounding {
    /// The captured file's path, as in `SourceFile::path`.
    pub file: String,
    /// 1-based, inclusive line range of the file the snippet covers.
    pub line_start: u32,
    pub line_end: u32,
    pub kind: GroundingKind,
    /// For `Mutation`: the one edited line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutation: Option<LineEdit>,
}
