//! What an edit observation holds: the whole file after the edit, whoever the client is.
//!
//! An edit may arrive as a fragment only — Claude Code's `old_string`/`new_string`, Cursor's
//! `edits`, the original VibeLearn client's `content` (its `new_string`). Stored as if it were
//! the file, an 11-character fragment would replace the whole earlier Write of that file in
//! everything the analysis and the LLM see. So, in this order:
//! 1. the file as it is on this machine right after the edit ([`read_captured`]: size-capped,
//!    privacy-stripped, cut to 10 KiB) — the hook does this, running as the user; the worker
//!    never opens a path a request names (SPEC §4);
//! 2. else the session's last captured version of that file with the edits applied
//!    ([`apply_edits`], at ingest, where the session's earlier observations are);
//! 3. else the fragment, stored marked as one (`observations.fragment`), which the analysis
//!    never takes for the file.
//!
//! Pure apart from [`read_captured`]'s file read.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::event::{EditSource, truncate_capture};
use crate::policy::privacy;

/// Bytes of a file read at most. A captured file is cut to 10 KiB anyway, but private blocks
/// are removed before the cut, so more is read than kept; a multi-megabyte file (a lock file,
/// a bundle) must not cost a hook its latency budget. Beyond this the capture is `truncated`.
pub const MAX_FILE_READ: u64 = 1024 * 1024;

/// Tools whose input carries only the edit, not the file.
pub const FRAGMENT_TOOLS: [&str; 3] = ["Edit", "MultiEdit", "NotebookEdit"];

/// The edited file's text as it is on disk: at most [`MAX_FILE_READ`] bytes read, private
/// blocks removed, cut to 10 KiB; the flag says whether anything was cut. `None` when the path
/// is not an existing regular file readable here.
pub fn read_captured(path: &Path) -> Option<(String, bool)> {
    let file = std::fs::File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_READ).read_to_end(&mut bytes).ok()?;
    let cut_on_read = meta.len() > MAX_FILE_READ;
    let text = String::from_utf8_lossy(&bytes);
    let stripped = privacy::strip_private(&text);
    let (text, cut) = truncate_capture(&stripped);
    Some((text, cut || cut_on_read))
}

/// An edit's path as a file on this machine: absolute as given, or relative to the event's cwd.
pub fn local_path(path: &str, cwd: Option<&str>) -> Option<PathBuf> {
    let path = Path::new(path);
    if path.is_absolute() {
        return Some(path.to_owned());
    }
    let cwd = Path::new(cwd?);
    cwd.is_absolute().then(|| cwd.join(path))
}

/// One replacement of an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditOp {
    pub old: String,
    pub new: String,
    pub replace_all: bool,
}

/// The replacements an edit carries, from the first of `sources` that has any: a pair
/// (`old_string`/`new_string`; Edit) or a list (`edits`; MultiEdit, Cursor). Empty when none
/// is in a usable form (a replacement without its new text makes the whole list unusable).
pub fn edit_ops(sources: &[EditSource<'_>]) -> Vec<EditOp> {
    for source in sources {
        if let Some(new) = source.new_string {
            let old = source.old_string.unwrap_or("").to_owned();
            return vec![EditOp { old, new: new.to_owned(), replace_all: source.replace_all }];
        }
        if let Some(edits) = source.edits {
            let ops: Option<Vec<EditOp>> = edits
                .iter()
                .map(|e| {
                    let new = e.new_string.clone()?;
                    Some(EditOp { old: e.old_string.clone().unwrap_or_default(), new, replace_all: e.replace_all })
                })
                .collect();
            return ops.unwrap_or_default();
        }
    }
    Vec::new()
}

/// The edits' replacement texts joined: what a fragment observation stores.
pub fn fragment_text(ops: &[EditOp]) -> Option<String> {
    (!ops.is_empty()).then(|| ops.iter().map(|op| op.new.as_str()).collect::<Vec<_>>().join("\n"))
}

/// Whether the edits write a whole new file: a single replacement of nothing (Claude Code's
/// Edit on a new file, Cursor's edit that creates one).
pub fn creates_file(ops: &[EditOp]) -> bool {
    matches!(ops, [op] if op.old.is_empty())
}

/// `base` with the edits applied in order, or `None` when one of them does not apply (its old
/// text is not there, or is empty): then the result would not be the file.
pub fn apply_edits(base: &str, ops: &[EditOp]) -> Option<String> {
    let mut text = base.to_owned();
    for op in ops {
        if op.old.is_empty() || !text.contains(&op.old) {
            return None;
        }
        text = if op.replace_all { text.replace(&op.old, &op.new) } else { text.replacen(&op.old, &op.new, 1) };
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn edits_are_read_from_every_shape() {
        use crate::event::{EditInput, EventKind, WireEvent};
        let ops = |body: serde_json::Value| {
            let wire = WireEvent::parse(EventKind::Observation, body).unwrap();
            let input = EditInput::of(wire.tool_input.as_ref());
            edit_ops(&[input.source(), wire.edit_source()])
        };
        let edit =
            json!({"tool_input": {"file_path": "/a", "old_string": "a", "new_string": "b", "replace_all": true}});
        assert_eq!(ops(edit), vec![EditOp { old: "a".into(), new: "b".into(), replace_all: true }]);
        let multi = json!({"tool_input": {"edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]}});
        assert_eq!(ops(multi).len(), 2);
        let cursor = json!({"file_path": "/a", "edits": [{"old_string": "x", "new_string": "y"}]});
        assert_eq!(ops(cursor)[0].new, "y");
        assert!(ops(json!({"content": "only new text"})).is_empty());
        assert!(ops(json!({"edits": [{"old_string": "x"}]})).is_empty(), "an edit without new text");
    }

    #[test]
    fn edits_apply_in_order_or_not_at_all() {
        let ops = |pairs: &[(&str, &str)]| -> Vec<EditOp> {
            pairs.iter().map(|(o, n)| EditOp { old: (*o).into(), new: (*n).into(), replace_all: false }).collect()
        };
        assert_eq!(
            apply_edits("let a = 1;\nlet a2 = a;", &ops(&[("a", "b")])).as_deref(),
            Some("let b = 1;\nlet a2 = a;")
        );
        assert_eq!(apply_edits("one two", &ops(&[("one", "1"), ("two", "2")])).as_deref(), Some("1 2"));
        assert_eq!(apply_edits("one two", &ops(&[("one", "1"), ("three", "3")])), None);
        assert_eq!(apply_edits("x", &ops(&[("", "y")])), None);
        let all = [EditOp { old: "a".into(), new: "b".into(), replace_all: true }];
        assert_eq!(apply_edits("a a a", &all).as_deref(), Some("b b b"));
        assert!(creates_file(&ops(&[("", "new file")])) && !creates_file(&ops(&[("a", "b")])));
    }

    #[test]
    fn files_are_read_capped_stripped_and_missing_ones_are_none() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("a.ts");
        std::fs::write(&small, "const a = 1; <private>secret</private>\n").unwrap();
        assert_eq!(read_captured(&small), Some(("const a = 1; \n".to_owned(), false)));
        let big = dir.path().join("big.txt");
        std::fs::write(&big, "x".repeat(MAX_FILE_READ as usize + 10)).unwrap();
        let (text, cut) = read_captured(&big).unwrap();
        assert!(cut && text.len() == crate::event::MAX_CAPTURE_BYTES);
        assert_eq!(read_captured(&dir.path().join("missing.ts")), None);
        assert_eq!(read_captured(dir.path()), None, "a directory is not a file");
        assert_eq!(local_path("src/a.ts", Some("/p")), Some(PathBuf::from("/p/src/a.ts")));
        assert_eq!(local_path("src/a.ts", None), None);
        assert_eq!(local_path("/abs/a.ts", Some("rel")), Some(PathBuf::from("/abs/a.ts")));
    }
}
