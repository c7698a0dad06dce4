//! The format-preserving editor for the settings files install and uninstall touch (SPEC §10):
//! the agents' JSON and JSONC, and the shell profiles `--add-to-path` appends a line to.
//!
//! A settings file is the user's: we change our entries and give back every other byte as it
//! was — key order, indentation, comments, number spellings (`1.10`, a 23-digit integer),
//! line endings. Three pieces:
//!
//! - [`SettingsFile::open`] follows a symlink chain to the file it names (stow, chezmoi and
//!   home-manager keep settings as links into a dotfiles folder) and reads the target.
//! - [`edit_json`] turns the text into new text. (No TOML file is edited here: Codex's
//!   `config.toml` is changed by Codex's own app-server, [`super::codex_trust`].) JSON is
//!   parsed into a concrete syntax tree
//!   (`jsonc-parser`'s CST, see docs/DECISIONS.md); the caller's change runs on a plain
//!   `serde_json::Value`, and only the difference between the value before and after is
//!   applied to the tree (a changed leaf replaced, a new key appended, an array element
//!   inserted or removed), so the nodes the change did not touch keep their bytes. One layout
//!   rule is the crate's: an object written on one line (`{"a": 1}`) that gets a new key is
//!   laid out over several lines, in the file's indentation; its values stay as they were.
//! - [`SettingsFile::commit`] writes beside the target and renames over it (never over the
//!   link), keeping its permissions. Right before the rename it re-reads the target: if someone
//!   wrote it since `open`, the edit is redone once on the new content; if it changed again,
//!   nothing is written and [`EditError::Busy`] says so. No update is lost.
//!
//! What uninstall needs to give the user's bytes back lives here too: [`sha256_hex`] of what
//! install wrote, so a caller can tell "the file is exactly what we left" from "someone edited
//! it since" and restore the saved original only in the first case.

use std::path::{Path, PathBuf};

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstRootNode};
use serde_json::Value;

/// How deep a chain of symlinks may go before it counts as a loop (Linux's own limit).
const MAX_LINKS: usize = 40;

/// The JSON dialect a file is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonSyntax {
    /// RFC 8259: no comments, no trailing commas (Claude Code's and Cursor's files: what they
    /// would refuse to read, we refuse to edit).
    Strict,
    /// JSON with `//` and `/* */` comments and trailing commas (Gemini CLI, VS Code style).
    Jsonc,
}

/// Why a settings file was not edited. Every variant means nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not valid {kind} ({detail}); fix it first, nothing changed", path.display())]
    Invalid { path: PathBuf, kind: &'static str, detail: String },
    #[error("{}: {detail}; nothing changed", path.display())]
    Shape { path: PathBuf, detail: String },
    #[error(
        "{} changed twice while vl was writing it (is the IDE saving it right now?); nothing \
         changed, run the command again",
        path.display()
    )]
    Busy { path: PathBuf },
    #[error("{} is a chain of more than {MAX_LINKS} symlinks; nothing changed", path.display())]
    LinkLoop { path: PathBuf },
}

/// What [`SettingsFile::commit`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Committed {
    /// The edit changed nothing; the file was not rewritten.
    Unchanged,
    /// The new bytes are in place (their [`sha256_hex`] in `sha256`); `redone` says the file
    /// changed under us once and the edit was applied again to the new content.
    Written { sha256: String, redone: bool },
}

/// One settings file, opened for an edit: where it is, and the bytes it held when read.
#[derive(Debug)]
pub struct SettingsFile {
    /// The path the user knows (`~/.claude/settings.json`), maybe a symlink.
    shown: PathBuf,
    /// The file that path resolves to: what is read, written and renamed over.
    target: PathBuf,
    /// Its content when last read; `None` when it does not exist.
    base: Option<String>,
}

impl SettingsFile {
    /// Follows `path`'s symlinks to the real file and reads it (a missing file is `None`
    /// content, and is created by [`commit`](Self::commit)).
    pub fn open(path: &Path) -> Result<SettingsFile, EditError> {
        let target = resolve_links(path)?;
        let base = read_text(&target)?;
        Ok(SettingsFile { shown: path.to_path_buf(), target, base })
    }

    /// The path as the user gave it.
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// The file written: the end of the symlink chain (the path itself when it is no link).
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The content as read (`None`: the file does not exist).
    pub fn text(&self) -> Option<&str> {
        self.base.as_deref()
    }

    /// Writes what `edit` makes of the current content: `edit` gets the text (`None` for a
    /// missing file) and returns the new text, or `None` for "no change". It runs on the
    /// content read by [`open`](Self::open), and once more if the file changed before the
    /// rename; a second change is refused with [`EditError::Busy`].
    pub fn commit(
        &mut self,
        mut edit: impl FnMut(Option<&str>) -> Result<Option<String>, EditError>,
    ) -> Result<Committed, EditError> {
        let mut redone = false;
        loop {
            let Some(new) = edit(self.base.as_deref())? else { return Ok(Committed::Unchanged) };
            let temp = self.write_temp(&new)?;
            let now = read_text(&self.target).inspect_err(|_| remove_quietly(&temp))?;
            if now == self.base {
                std::fs::rename(&temp, &self.target).map_err(|e| {
                    remove_quietly(&temp);
                    io("replace", &self.target, e)
                })?;
                if let Some(dir) = self.target.parent() {
                    sync_dir(dir);
                }
                self.base = Some(new.clone());
                return Ok(Committed::Written { sha256: sha256_hex(new.as_bytes()), redone });
            }
            remove_quietly(&temp);
            if redone {
                return Err(EditError::Busy { path: self.shown.clone() });
            }
            self.base = now;
            redone = true;
        }
    }

    /// Puts `bytes` in place as they are (uninstall giving back the user's original), with the
    /// same re-read check as [`commit`](Self::commit) but no redo: a file that changed since
    /// `open` is refused, since the caller decided on the content it read.
    pub fn restore(&mut self, bytes: &str) -> Result<(), EditError> {
        let shown = self.shown.clone();
        let mut calls = 0;
        self.commit(|_| {
            calls += 1;
            if calls > 1 {
                return Err(EditError::Busy { path: shown.clone() });
            }
            Ok(Some(bytes.to_owned()))
        })
        .map(|_| ())
    }

    /// Removes the target (uninstall of a file install created), if it still holds what was
    /// read; the symlink, if any, is the user's and stays.
    pub fn remove(&self) -> Result<(), EditError> {
        if read_text(&self.target)? != self.base {
            return Err(EditError::Busy { path: self.shown.clone() });
        }
        match std::fs::remove_file(&self.target) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("remove", &self.target, e)),
            _ => Ok(()),
        }
    }

    /// The new content beside the target, with the target's permissions.
    fn write_temp(&self, text: &str) -> Result<PathBuf, EditError> {
        let dir = self.target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
        let mut name = self.target.file_name().unwrap_or_default().to_owned();
        name.push(format!(".vibelearn-{}.tmp", std::process::id()));
        let temp = dir.join(name);
        write_synced(&temp, text)?;
        if let Ok(meta) = std::fs::metadata(&self.target) {
            let _ = std::fs::set_permissions(&temp, meta.permissions());
        }
        Ok(temp)
    }
}

/// Writes `text` to `path` as one step: a temp file beside it (named for this process, so two
/// processes never share one), flushed to disk, then renamed over `path`. A reader sees the old
/// bytes or the new ones, never a part; a crash leaves at most a stray temp file.
pub fn write_atomically(path: &Path, text: &str) -> Result<(), EditError> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(".{}.tmp", std::process::id()));
    let temp = dir.join(name);
    write_synced(&temp, text)?;
    std::fs::rename(&temp, path).map_err(|e| {
        remove_quietly(&temp);
        io("replace", path, e)
    })?;
    sync_dir(dir);
    Ok(())
}

/// Creates `path` with `text` and waits until it is on disk.
fn write_synced(path: &Path, text: &str) -> Result<(), EditError> {
    use std::io::Write;
    let mut file = std::fs::File::create(path).map_err(|e| io("write", path, e))?;
    file.write_all(text.as_bytes()).and_then(|()| file.sync_all()).map_err(|e| {
        remove_quietly(path);
        io("write", path, e)
    })
}

/// Flushes a folder's entries (a rename into it) to disk where the OS allows opening a folder;
/// Windows does not, and there the rename is already durable once it returns.
fn sync_dir(dir: &Path) {
    if let Ok(handle) = std::fs::File::open(dir) {
        let _ = handle.sync_all();
    }
}

/// The file `path` names after following every symlink in the chain (a relative link is
/// relative to the folder of the link). A dangling link resolves to the missing file it points
/// at, which a commit creates.
pub fn resolve_links(path: &Path) -> Result<PathBuf, EditError> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = std::fs::read_link(&current).map_err(|e| io("read the link", &current, e))?;
                current = match current.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(EditError::LinkLoop { path: path.to_path_buf() })
}

/// The lowercase hex SHA-256 of `bytes` (what install records of the file it wrote).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// Parses `text` (`None` or blank: `{}`) in `syntax` and checks it holds an object; the value,
/// for callers that only look.
pub fn parse_json(path: &Path, text: Option<&str>, syntax: JsonSyntax) -> Result<Value, EditError> {
    let (_, value) = parse_tree(path, text, syntax)?;
    Ok(value)
}

/// Applies `change` to the JSON object in `text` (`None` or blank: `{}`), keeping every byte
/// it did not change. Returns the new text, or `None` when `change` left the value as it was.
/// `change`'s error becomes [`EditError::Shape`].
pub fn edit_json(
    path: &Path,
    text: Option<&str>,
    syntax: JsonSyntax,
    change: impl FnOnce(&mut Value) -> Result<(), String>,
) -> Result<Option<String>, EditError> {
    let (root, before) = parse_tree(path, text, syntax)?;
    let mut after = before.clone();
    change(&mut after).map_err(|detail| EditError::Shape { path: path.to_path_buf(), detail })?;
    if after == before {
        return Ok(None);
    }
    match root.value() {
        Some(node) if !is_blank(text) => patch_node(&node, &before, &after),
        _ => root.set_value(to_input(&after)),
    }
    let mut out = root.to_string();
    if is_blank(text) && !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(Some(out))
}

fn is_blank(text: Option<&str>) -> bool {
    text.is_none_or(|t| t.trim().is_empty())
}

/// The tree and the value of a JSON object file.
fn parse_tree(path: &Path, text: Option<&str>, syntax: JsonSyntax) -> Result<(CstRootNode, Value), EditError> {
    let kind = match syntax {
        JsonSyntax::Strict => "JSON",
        JsonSyntax::Jsonc => "JSON with comments",
    };
    let invalid = |detail: String| EditError::Invalid { path: path.to_path_buf(), kind, detail };
    let text = if is_blank(text) { "" } else { text.unwrap_or("") };
    if syntax == JsonSyntax::Strict && !text.is_empty() {
        // serde_json is the reference for RFC 8259 (and says line and column plainly).
        serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(|e| invalid(e.to_string()))?;
    }
    let root = CstRootNode::parse(text, &options(syntax)).map_err(|e| invalid(e.to_string()))?;
    if text.is_empty() {
        return Ok((root, Value::Object(serde_json::Map::new())));
    }
    match root.to_serde_value() {
        Some(value @ Value::Object(_)) => Ok((root, value)),
        _ => Err(EditError::Shape { path: path.to_path_buf(), detail: "the file does not hold a JSON object".into() }),
    }
}

fn options(syntax: JsonSyntax) -> ParseOptions {
    let loose = syntax == JsonSyntax::Jsonc;
    ParseOptions {
        allow_comments: loose,
        allow_trailing_commas: loose,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// Makes `node` (which holds `before`) hold `after`: containers of the same kind are patched
/// member by member, anything else is replaced through its parent.
fn patch_node(node: &CstNode, before: &Value, after: &Value) {
    if before == after {
        return;
    }
    match (before, after) {
        (Value::Object(old), Value::Object(new)) if node.as_object().is_some() => {
            patch_object(&node.as_object().expect("checked"), old, new)
        }
        (Value::Array(old), Value::Array(new)) if node.as_array().is_some() => {
            patch_array(&node.as_array().expect("checked"), old, new)
        }
        _ => replace(node, after),
    }
}

/// Replaces a value node with `value`, in its property, array slot or root.
fn replace(node: &CstNode, value: &Value) {
    let Some(parent) = node.parent() else { return };
    if let Some(prop) = parent.as_object_prop() {
        prop.set_value(to_input(value));
    } else if let Some(array) = parent.as_array() {
        let index = node.element_index().unwrap_or(0);
        array.insert(index, to_input(value));
        node.clone().remove();
    } else if let Some(root) = parent.as_root() {
        root.set_value(to_input(value));
    }
}

fn patch_object(object: &CstObject, old: &serde_json::Map<String, Value>, new: &serde_json::Map<String, Value>) {
    for prop in object.properties() {
        let Some(name) = prop.decoded_name() else { continue };
        match (old.get(&name), new.get(&name)) {
            (Some(_), None) => prop.remove(),
            (Some(was), Some(is)) => match prop.value() {
                Some(value) => patch_node(&value, was, is),
                None => prop.set_value(to_input(is)),
            },
            _ => {}
        }
    }
    for (name, value) in new {
        if !old.contains_key(name) {
            object.append(name, to_input(value));
        }
    }
}

/// One step of turning an old array into a new one.
#[derive(Debug, PartialEq)]
enum Step {
    /// The next old element is the next new one, unchanged.
    Keep,
    /// Old element `.0` becomes new element `.1` (patched in place).
    Patch(usize, usize),
    /// Old element `.0` goes.
    Remove(usize),
    /// New element `.0` is inserted.
    Insert(usize),
}

fn patch_array(array: &CstArray, old: &[Value], new: &[Value]) {
    let nodes = array.elements();
    let mut at = 0;
    for step in align(old, new) {
        match step {
            Step::Keep => at += 1,
            Step::Patch(i, j) => {
                if let Some(node) = nodes.get(i) {
                    patch_node(node, &old[i], &new[j]);
                }
                at += 1;
            }
            Step::Remove(i) => {
                if let Some(node) = nodes.get(i) {
                    node.clone().remove();
                }
            }
            Step::Insert(j) => {
                array.insert(at, to_input(&new[j]));
                at += 1;
            }
        }
    }
}

/// The steps from `old` to `new`: the longest run of equal elements is kept, and between two
/// kept elements the unmatched old and new ones are paired in order (patched), the rest
/// removed or inserted. Arrays in settings files are short, so the quadratic table is fine.
fn align(old: &[Value], new: &[Value]) -> Vec<Step> {
    let (n, m) = (old.len(), new.len());
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut steps, mut gone, mut came) = (Vec::new(), Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            flush(&mut steps, &mut gone, &mut came);
            steps.push(Step::Keep);
            (i, j) = (i + 1, j + 1);
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            came.push(j);
            j += 1;
        } else {
            gone.push(i);
            i += 1;
        }
    }
    flush(&mut steps, &mut gone, &mut came);
    steps
}

/// Pairs the unmatched old and new elements of one gap.
fn flush(steps: &mut Vec<Step>, gone: &mut Vec<usize>, came: &mut Vec<usize>) {
    let pairs = gone.len().min(came.len());
    steps.extend(gone.iter().zip(came.iter()).map(|(&i, &j)| Step::Patch(i, j)));
    steps.extend(gone[pairs..].iter().map(|&i| Step::Remove(i)));
    steps.extend(came[pairs..].iter().map(|&j| Step::Insert(j)));
    gone.clear();
    came.clear();
}

/// A value as the tree's input (numbers keep serde_json's spelling of them).
fn to_input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(to_input).collect()),
        Value::Object(map) => CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), to_input(v))).collect()),
    }
}

/// The file's text; `None` when it does not exist.
fn read_text(path: &Path) -> Result<Option<String>, EditError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|e| EditError::Invalid {
            path: path.to_path_buf(),
            kind: "UTF-8 text",
            detail: e.utf8_error().to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io("read", path, e)),
    }
}

fn io(action: &'static str, path: &Path, source: std::io::Error) -> EditError {
    EditError::Io { action, path: path.to_path_buf(), source }
}

fn remove_quietly(path: &Path) {
    let _ = std::fs::remove_file(path);
}

#[cfg(test)]
mod tests;
