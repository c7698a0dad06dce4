//! Static pattern detection (SPEC §6.2): turns the latest content of each captured file into
//! `Pattern`s (a React hook, an API route, a goroutine …) for concept extraction to build on.
//!
//! # Shape
//! One engine, one query file per grammar. `analyze_file` parses the file with its real grammar
//! (`syntax::parse_file`) and runs that grammar's tree-sitter query (`queries/<grammar>.scm`,
//! compiled once per process, see `rules`; its nested node patterns are compiled as wildcards
//! whose kinds the engine checks, which keeps the compile cheap, see `nested`). Each query pattern says what it reports with
//! `#set!` properties:
//! - `type`: the `Pattern::pattern_type`;
//! - `name`: a template for `Pattern::name`, where `{capture}` is the text of a capture and
//!   `{capture|filter}` passes it through a filter (`upper`, `last`, `tail2`,
//!   `unquote`, `path`, `verb`, `sym`);
//!   without it the name is the text of the `@name` capture;
//! - `check`: a named function in `checks` for what a query cannot say (the return type of the
//!   function around a `?`, whether a ranged slice is a table of cases, the URL of a Next.js
//!   route file); it may rename or refuse the match.
//!
//! The `@node` capture is the syntax node that carries the pattern: its first line is the
//! pattern's line. The snippet is the statement or item holding that node (an expression climbs
//! to its statement; an item takes its attributes and decorators with it), cut to
//! `SNIPPET_MAX_LINES` lines of at most `SNIPPET_LINE_MAX` bytes. Because matching is on the
//! tree, a comment or a string never yields a pattern, except where a rule reads string
//! contents on purpose (raw SQL, route paths, test titles, JavaScript directives).
//!
//! JavaScript, TypeScript and TSX share `queries/ecmascript.scm`; JavaScript adds
//! `queries/javascript.scm`, the two TypeScript grammars `queries/typescript.scm` (interfaces,
//! generics, type-level code): a query naming a node kind its grammar lacks does not compile.
//!
//! # Output bounds
//! A file reports each (pattern_type, name) once, at its first occurrence: ten `useState`
//! calls teach one concept. At most `MAX_PER_TYPE` patterns of a type per file, so a generated
//! file cannot flood the session. Files larger than `syntax::MAX_PARSE_BYTES` are not parsed
//! and report nothing; a parse and a query run are linear in the file (measured in
//! docs/DECISIONS.md, "Static patterns from tree-sitter queries").

mod checks;
mod engine;
mod nested;

#[cfg(test)]
mod census;
#[cfg(test)]
mod tests;

use super::model::{Pattern, SourceFile};
use std::collections::{HashMap, HashSet};

/// Most patterns of one type reported for one file.
pub const MAX_PER_TYPE: usize = 20;
/// Longest snippet line kept, in bytes; a minified bundle is one huge line.
pub const SNIPPET_LINE_MAX: usize = 200;
/// Most lines of a snippet: the first lines of the node that carries the pattern.
pub const SNIPPET_MAX_LINES: usize = 8;

/// Patterns of every file whose language is supported, in file order, each file's patterns in
/// line order. Files of other languages are skipped.
pub fn analyze_files(files: &[SourceFile]) -> Vec<Pattern> {
    files.iter().flat_map(analyze_file).collect()
}

/// Patterns of one file (empty when the language is not supported or the file is not parsed).
pub fn analyze_file(file: &SourceFile) -> Vec<Pattern> {
    let Some((grammar, tree)) = super::syntax::parse_file(&file.path, &file.content) else {
        return Vec::new();
    };
    let found = engine::run(grammar, &tree, &file.path, &file.content);
    finish(found, tree.root_node(), &file.path, &file.content, super::syntax::language_name(grammar))
}

/// One match the engine kept: what it reports and the node that carries it (whose start orders
/// the file's patterns; its line and snippet are worked out only for the patterns reported).
#[derive(Debug, Clone)]
pub(crate) struct Found<'t> {
    pub pattern_type: &'static str,
    pub name: String,
    pub node: super::syntax::Node<'t>,
}

/// Orders the matches by position, keeps the first of each (type, name) and at most
/// `MAX_PER_TYPE` per type, and places them (line, snippet).
fn finish(mut found: Vec<Found>, root: super::syntax::Node, path: &str, src: &str, language: &str) -> Vec<Pattern> {
    found.sort_by_key(|f| f.node.start_byte());
    let mut seen: HashSet<(&'static str, String)> = HashSet::new();
    let mut per_type: HashMap<&'static str, usize> = HashMap::new();
    let mut out = Vec::new();
    for f in found {
        let name = truncate(f.name.trim(), 120).to_string();
        if name.is_empty() {
            continue;
        }
        let count = per_type.entry(f.pattern_type).or_insert(0);
        if *count >= MAX_PER_TYPE || !seen.insert((f.pattern_type, name.clone())) {
            continue;
        }
        *count += 1;
        out.push(Pattern {
            pattern_type: f.pattern_type.to_string(),
            name,
            file: path.to_string(),
            line: u32::try_from(engine::pattern_line(f.node) + 1).unwrap_or(u32::MAX),
            snippet: snippet(src, engine::snippet_range(root, f.node)),
            language: language.to_string(),
        });
    }
    out
}

/// The text of `range`, its first `SNIPPET_MAX_LINES` lines, each cut at `SNIPPET_LINE_MAX`.
fn snippet(src: &str, (start, end): (usize, usize)) -> String {
    let text = src.get(start..end).unwrap_or("");
    let lines: Vec<&str> =
        text.lines().take(SNIPPET_MAX_LINES).map(|l| truncate(l.trim_end_matches('\r'), SNIPPET_LINE_MAX)).collect();
    lines.join("\n")
}

/// `s` cut to at most `max` bytes on a char boundary.
pub(crate) fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}
