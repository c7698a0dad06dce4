//! Whole syntactic units of a file (SPEC §6.4's precision rules), read from its syntax tree
//! (`analysis::syntax`): the statement a line belongs to, the blocks around it, and the item
//! holding them — a function, method, class, impl or test with every attribute, decorator or
//! annotation it carries (Rust `#[...]`, C# `[...]`, Java `@...`, a Python
//! `decorated_definition`), the doc comment right above it, its where-clause and its body. A
//! question quotes one of these, or a run of them at one level, never a stretch that cuts
//! through one.
//!
//! # What a unit is
//! A node whose parent holds a sequence of them (a file, a block, a class or impl body, a
//! case: `is_container`), with the attributes and comments right above it that belong to it
//! (`attached`). A table test's table and the loop over it are one more unit around each
//! (`table_with_loop`: `tests := []struct{…}{…}` then `for _, tc := range tests`). Lines are
//! 0-based; a unit is the inclusive span of its lines.
//!
//! A file without a tree (no grammar, past the size bound, a parse abandoned) has no units
//! but its lines: each line is its own, and every stretch is whole.

use super::CodeFile;
use crate::analysis::catalogue::tokens::find_token;
use crate::analysis::syntax::{self, Node};

/// Lines `start..=end` (0-based, inclusive).
pub type Span = (usize, usize);

/// One unit of a file: its lines, and what the rules below need to know of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Unit {
    /// From its first attached comment or attribute to its last line.
    span: Span,
    /// Its first line of code: its first attribute's, else its own (a doc comment above is
    /// not code: a snippet may leave it out).
    code_start: usize,
    /// The line the node itself starts on (under its attributes).
    node_row: usize,
    /// Byte offsets of the unit's code: from its first attribute (or the node) to the node's end.
    start_byte: usize,
    end_byte: usize,
    /// It defines something: a function, class, impl, type or test (`is_definition`).
    definition: bool,
}

/// One level of the units around a line: the units of one container, in order, and which of
/// them holds the line.
struct Level {
    units: Vec<Unit>,
    at: usize,
}

/// The units holding `line`, innermost first: its statement (a decorator's is the whole
/// decorated definition; a line that closes a block belongs to the block it closes), then each
/// enclosing unit up to the top level. Never empty.
pub fn units_around(file: &CodeFile<'_>, line: usize) -> Vec<Span> {
    let spans: Vec<Span> = chain(file, line).iter().map(|u| u.span).collect();
    if spans.is_empty() { vec![(line, line)] } else { spans }
}

/// The units holding `line` innermost first, table-with-loop groups included.
fn chain(file: &CodeFile<'_>, line: usize) -> Vec<Unit> {
    let mut out: Vec<Unit> = Vec::new();
    for level in levels(file, line) {
        let unit = level.units[level.at];
        if out.last() != Some(&unit) {
            out.push(unit);
        }
        if let Some(group) = table_with_loop(file, &level) {
            out.push(group);
        }
    }
    out
}

/// The unit a question quotes around `line`: the innermost definition holding it (a
/// function, method, test or class, with its decorators) when it has at most `max_lines`
/// lines; inside a longer one, the largest unit within it that fits; outside any definition,
/// the largest fitting unit. Else the innermost unit (a long unit whole rather than a cut one).
pub fn unit_within(file: &CodeFile<'_>, line: usize, max_lines: usize) -> Span {
    let units = chain(file, line);
    let Some(innermost) = units.first() else { return (line, line) };
    let fits = |u: &&Unit| u.span.1 - u.span.0 < max_lines;
    let inside = match units.iter().position(|u| u.definition) {
        Some(k) if fits(&&units[k]) => return units[k].span,
        Some(k) => &units[..k],
        None => &units[..],
    };
    inside.iter().rev().find(fits).map_or(innermost.span, |u| u.span)
}

/// `unit` grown by whole sibling units (the units before and after it at its level, nearer
/// first) while it stays within `max_lines`: context around a statement of a long function.
pub fn with_siblings(file: &CodeFile<'_>, unit: Span, max_lines: usize) -> Span {
    let Some(level) = levels(file, unit.0)
        .into_iter()
        .find(|l| l.units.iter().any(|u| u.span.0 == unit.0) && l.units.iter().any(|u| u.span.1 == unit.1))
    else {
        return unit;
    };
    let Some(mut first) = level.units.iter().position(|u| u.span.0 == unit.0) else { return unit };
    let Some(mut last) = level.units.iter().rposition(|u| u.span.1 == unit.1) else { return unit };
    if last < first {
        return unit;
    }
    let size = |a: usize, b: usize| level.units[b].span.1 - level.units[a].span.0;
    loop {
        let after = (last + 1 < level.units.len()).then(|| (first, last + 1));
        let before = first.checked_sub(1).map(|b| (b, last));
        let grown = [after, before]
            .into_iter()
            .flatten()
            .filter(|&(a, b)| size(a, b) < max_lines)
            .min_by_key(|&(a, b)| size(a, b));
        match grown {
            Some((a, b)) => (first, last) = (a, b),
            None => return (level.units[first].span.0, level.units[last].span.1),
        }
    }
}

/// Why `start..=end` is not a run of whole units at one level (a cut statement, an attribute
/// or decorator left out above it, a block closed that opens above it), or `Ok` when it is.
/// Blank and comment lines at either end do not count.
pub fn check_whole(file: &CodeFile<'_>, start: usize, end: usize) -> Result<(), String> {
    if end >= file.lines.len() || start > end {
        return Err(format!("lines {}-{} are not in the file", start + 1, end + 1));
    }
    let first = (start..=end).find(|&i| !file.is_blank(i)).ok_or("the snippet has no code")?;
    let last = (start..=end).rev().find(|&i| !file.is_blank(i)).unwrap_or(first);
    if file.tree.is_none() {
        return Ok(());
    }
    let levels = levels(file, first);
    let mut why = None;
    for level in &levels {
        let unit = level.units[level.at];
        if unit.code_start != first || unit.start_byte > file.code_byte(first) {
            continue;
        }
        // The last unit at this level that starts within the stretch: it must end on its
        // last line (two statements on one line are both in it).
        let mut k = level.at;
        while k + 1 < level.units.len() && level.units[k + 1].code_start <= last {
            k += 1;
        }
        let reached = level.units[k];
        // What follows the unit on its last line is at most the `,` or `;` its container
        // puts between units (a struct's fields, an interface's members).
        let rest = file.src.get(reached.end_byte..file.code_end_byte(last).max(reached.end_byte)).unwrap_or("");
        let ends_there = rest.chars().all(|c| c.is_whitespace() || c == ',' || c == ';');
        if reached.span.1 == last && ends_there {
            return Ok(());
        }
        why.get_or_insert_with(|| {
            if reached.span.1 > last {
                format!(
                    "the statement on line {} runs past the snippet's end (to line {})",
                    reached.code_start + 1,
                    reached.span.1 + 1
                )
            } else {
                format!("line {} closes a block that opens above the snippet", last + 1)
            }
        });
    }
    if let Some(why) = why {
        return Err(why);
    }
    if starts_with_closer(file, first) {
        return Err(format!("line {} closes a block that opens above the snippet", first + 1));
    }
    match levels.first().map(|l| l.units[l.at]) {
        Some(u) if u.node_row == first && u.code_start < first => {
            Err(format!("the decorator or attribute on line {} belongs to this code but is left out", u.code_start + 1))
        }
        Some(u) if u.code_start < first => Err(format!(
            "line {} continues a statement that starts above the snippet (on line {})",
            first + 1,
            u.code_start + 1
        )),
        _ => Err(format!("line {} does not start a statement", first + 1)),
    }
}

/// A line that starts with a token closing a block or a bracket (`}`, `)`, `]`, Ruby's
/// `end`): no unit starts there.
pub fn starts_with_closer(file: &CodeFile<'_>, i: usize) -> bool {
    let Some(tree) = &file.tree else {
        return file.masked.get(i).is_some_and(|m| m.trim_start().starts_with(['}', ')', ']']));
    };
    if file.is_blank(i) {
        return false;
    }
    let at = file.code_byte(i);
    tree.root_node()
        .descendant_for_byte_range(at, at + 1)
        .is_some_and(|leaf| !leaf.is_named() && matches!(leaf.kind(), "}" | ")" | "]" | "end" | "})" | "}}"))
}

/// The unit that starts on line `s` (a statement, with the block under it), or the innermost
/// unit holding `s` when none starts there.
pub fn unit_of(file: &CodeFile<'_>, s: usize) -> Span {
    units_around(file, s)[0]
}

/// Whether line `i` starts a statement that is only a string literal (a docstring, a
/// `"use strict"` directive): it does nothing when it runs.
pub fn is_bare_string(file: &CodeFile<'_>, i: usize) -> bool {
    let Some(tree) = &file.tree else { return false };
    let at = file.code_byte(i);
    let Some(mut node) = tree.root_node().descendant_for_byte_range(at, at + 1) else { return false };
    while let Some(parent) = node.parent() {
        if is_container(parent.kind()) {
            break;
        }
        node = parent;
    }
    bare_string_statement(node)
}

/// A statement whose only content is a string literal.
pub(super) fn bare_string_statement(node: Node<'_>) -> bool {
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.named_children(&mut cursor).filter(|c| !syntax::is_comment(*c)).collect();
    node.kind() == "expression_statement"
        && !children.is_empty()
        && children.iter().all(|c| syntax::is_string(*c) || c.kind() == "concatenated_string")
}

/// The levels of units around `line`, innermost first (empty without a tree).
fn levels(file: &CodeFile<'_>, line: usize) -> Vec<Level> {
    let Some(tree) = &file.tree else { return Vec::new() };
    if line >= file.lines.len() {
        return Vec::new();
    }
    let at = file.code_byte(line);
    let root = tree.root_node();
    let Some(mut node) = root.descendant_for_byte_range(at, at + usize::from(!file.is_blank(line))) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    while let Some(parent) = node.parent() {
        if is_container(parent.kind()) {
            let units = units_of(file, parent);
            // The unit this node is, or (a comment or attribute) the one it belongs to.
            let found = units.iter().position(|u| u.start_byte <= node.start_byte() && node.end_byte() <= u.end_byte);
            let found = found.or_else(|| units.iter().position(|u| u.span.0 <= line && line <= u.span.1));
            if let Some(at) = found {
                out.push(Level { units, at });
            }
        }
        node = parent;
    }
    out
}

/// The units of one container, in order: each named child that is not a comment or an
/// attribute, with the comments and attributes above it that belong to it.
fn units_of(file: &CodeFile<'_>, container: Node<'_>) -> Vec<Unit> {
    let mut out: Vec<Unit> = Vec::new();
    let mut pending: Vec<Node<'_>> = Vec::new();
    let mut cursor = container.walk();
    for child in container.named_children(&mut cursor) {
        if syntax::is_comment(child) || is_attribute(child.kind()) {
            pending.push(child);
            continue;
        }
        if SKIPPED.contains(&child.kind()) {
            pending.clear();
            continue;
        }
        let row = child.start_position().row;
        let previous_end = out.last().map(|u| u.span.1);
        let (mut start, mut code_start, mut start_byte) = (row, row, child.start_byte());
        for above in pending.drain(..).rev() {
            let comment = syntax::is_comment(above);
            let trailing = previous_end.is_some_and(|e| above.start_position().row <= e);
            let adjacent = file.last_row(above) + 1 >= start;
            if trailing || (comment && !adjacent) {
                break;
            }
            start = above.start_position().row;
            if !comment {
                code_start = start;
                start_byte = above.start_byte();
            }
        }
        pending.clear();
        out.push(Unit {
            span: (start, file.last_row(child)),
            code_start,
            node_row: row,
            start_byte,
            end_byte: child.end_byte(),
            definition: is_definition(file, child),
        });
    }
    out
}

/// Named children of a container that are no unit of their own: a block's parameters, the
/// statement list of a Go block (its statements are the units).
const SKIPPED: [&str; 4] = ["block_parameters", "exceptions", "exception_variable", "statement_list"];

/// Node kinds that hold a sequence of units, in every grammar: a file, a block or body, a
/// class, impl, trait or interface body, a struct's fields, a case of a switch.
fn is_container(kind: &str) -> bool {
    matches!(
        kind,
        // roots
        "module" | "program" | "source_file" | "compilation_unit"
            // blocks and bodies (Python, Rust, Java and C# `block`; Go's `statement_list`;
            // JavaScript's `statement_block`; Ruby's `body_statement`, `then`, `do`)
            | "block"
            | "statement_block"
            | "statement_list"
            | "body_statement"
            | "block_body"
            | "then"
            | "else"
            | "ensure"
            | "do"
            | "begin"
            | "constructor_body"
            // class, impl, trait and interface bodies, fields, variants
            | "class_body"
            | "interface_body"
            | "enum_body"
            | "object_type"
            | "declaration_list"
            | "field_declaration_list"
            | "enum_variant_list"
            | "annotation_type_body"
            // cases
            | "switch_case"
            | "switch_default"
            | "switch_block_statement_group"
            | "switch_section"
            | "match_block"
            | "ERROR"
    )
}

/// Attributes and decorators that stand before the item they belong to, as its siblings.
fn is_attribute(kind: &str) -> bool {
    matches!(kind, "attribute_item" | "decorator" | "attribute_list")
}

/// Node kinds that define something.
const DEFINITIONS: [&str; 36] = [
    // Python
    "function_definition",
    "decorated_definition",
    "class_definition",
    // JavaScript, TypeScript
    "function_declaration",
    "generator_function_declaration",
    "class_declaration",
    "abstract_class_declaration",
    "method_definition",
    "interface_declaration",
    "type_alias_declaration",
    "enum_declaration",
    "internal_module",
    // Go
    "method_declaration",
    "type_declaration",
    // Rust
    "function_item",
    "impl_item",
    "trait_item",
    "struct_item",
    "enum_item",
    "mod_item",
    "type_item",
    "union_item",
    "macro_definition",
    // Java, C#
    "record_declaration",
    "constructor_declaration",
    "annotation_type_declaration",
    "struct_declaration",
    "namespace_declaration",
    "local_function_statement",
    "record_struct_declaration",
    // Ruby
    "method",
    "singleton_method",
    "class",
    "module",
    "singleton_class",
    "function_signature_item",
];

/// Words a test or a test group is called with (`it "sums" do`, `describe("cart", …)`,
/// `test.each(…)`).
const TEST_CALLS: [&str; 7] = ["describe", "context", "it", "test", "specify", "suite", "feature"];

/// Whether `node` defines something: see `DEFINITIONS`; an `export` of one; a variable bound
/// to a function (`const load = async () => {`); a test (`it(…)`, `it "…" do`).
fn is_definition(file: &CodeFile<'_>, node: Node<'_>) -> bool {
    if DEFINITIONS.contains(&node.kind()) {
        return true;
    }
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    match node.kind() {
        "export_statement" => children.iter().any(|c| DEFINITIONS.contains(&c.kind()) || is_definition(file, *c)),
        "lexical_declaration" | "variable_declaration" => children.iter().any(|d| {
            d.child_by_field_name("value")
                .is_some_and(|v| matches!(v.kind(), "arrow_function" | "function_expression" | "function"))
        }),
        "expression_statement" | "call" => {
            let head = file.masked.get(node.start_position().row).map_or("", |l| l.trim_start());
            TEST_CALLS.iter().any(|w| find_token(head, w) == Some(0) && head[w.len()..].starts_with(['(', ' ', '.']))
        }
        _ => false,
    }
}

/// Loops that walk a table.
const LOOPS: [&str; 7] = [
    "for_statement",
    "for_in_statement",
    "for_expression",
    "for",
    "foreach_statement",
    "enhanced_for_statement",
    "for_range_loop",
];

/// At this level, a table and the loop over it as one unit, when the line's unit is one of
/// them: a declaration over two lines or more whose name the loop's first line walks
/// (`for _, tc := range tests`, `for (const c of cases)`, `cases.each do |c|`).
fn table_with_loop(file: &CodeFile<'_>, level: &Level) -> Option<Unit> {
    let units = &level.units;
    let name_of = |u: &Unit| -> Option<String> {
        if u.span.1 == u.code_start {
            return None;
        }
        let head = file.masked.get(u.code_start)?.trim();
        let (lhs, rhs) = head.split_once(":=").or_else(|| head.split_once('='))?;
        let control = ["for", "if", "while", "switch", "match", "return"].iter().any(|k| find_token(lhs, k) == Some(0));
        if control || lhs.contains('(') || !rhs.contains(['[', '{']) {
            return None;
        }
        let name: String = lhs.trim_end().chars().rev().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let name: String = name.chars().rev().collect();
        (!name.is_empty()).then_some(name)
    };
    let walks = |u: &Unit, name: &str| {
        let head = file.masked.get(u.code_start).map_or("", |l| l.trim());
        let is_loop = file
            .tree
            .as_ref()
            .and_then(|t| t.root_node().descendant_for_byte_range(u.start_byte, u.start_byte + 1))
            .is_some_and(|mut n| {
                let mut is_loop = LOOPS.contains(&n.kind());
                while let Some(p) = n.parent().filter(|p| p.start_byte() == u.start_byte) {
                    n = p;
                    is_loop |= LOOPS.contains(&n.kind());
                }
                is_loop
            });
        (is_loop && find_token(head, name).is_some())
            || head.strip_prefix(name).is_some_and(|rest| rest.starts_with('.'))
    };
    let at = level.at;
    let pair = |table: usize, lp: usize| {
        let (t, l) = (units[table], units[lp]);
        Some(Unit { span: (t.span.0, l.span.1), end_byte: l.end_byte, definition: false, ..t })
    };
    if let Some(name) = name_of(&units[at]) {
        let lp = (at + 1..units.len()).find(|&k| walks(&units[k], &name))?;
        return pair(at, lp);
    }
    (0..at).rev().find(|&k| name_of(&units[k]).is_some_and(|n| walks(&units[at], &n))).and_then(|k| pair(k, at))
}
