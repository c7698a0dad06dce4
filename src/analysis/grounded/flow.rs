//! The functions of a file and the statements of one in the order they run: what ordering
//! questions are built from, read from the file's syntax tree. A function is a function,
//! method or constructor node with a block body (`def`, `fn`, `func`, a JavaScript function or
//! arrow function with a `{ … }` body, a Java or C# method, a Ruby `def`); an interface or
//! trait method without a body is none. Its statements are the direct statements of its body,
//! in order: a condition or loop keeps its header line but not its body (which runs maybe, or
//! many times); a `try` block's statements run on the normal path, and its `finally` or
//! `ensure` after them, but not its `catch`, `except`, `rescue` or `else` branches; a `with`
//! or `using` statement is a step and so are the statements under it. Docstrings, bare
//! strings and comments do nothing when they run and are no steps. A step is the first line
//! of its statement, and only when the statement starts that line.

use super::CodeFile;
use super::units::bare_string_statement;
use crate::analysis::syntax::{self, Node};

/// Longest line offered as an ordering step; longer ones make unreadable options.
const MAX_STEP_LEN: usize = 100;

/// Node kinds of functions (with a body: see `function_body`).
const FUNCTIONS: [&str; 14] = [
    "function_definition",
    "function_declaration",
    "function_expression",
    "function",
    "generator_function_declaration",
    "generator_function",
    "arrow_function",
    "method_definition",
    "method_declaration",
    "function_item",
    "constructor_declaration",
    "method",
    "singleton_method",
    "local_function_statement",
];

/// The block a function node's statements are in, when it is a function with one.
fn function_body(node: Node<'_>) -> Option<Node<'_>> {
    if !FUNCTIONS.contains(&node.kind()) {
        return None;
    }
    let body = node.child_by_field_name("body")?;
    matches!(body.kind(), "block" | "statement_block" | "body_statement" | "constructor_body").then_some(body)
}

/// The line a function's header is on: its name's, else its own first line (under any
/// attributes or annotations the node starts with).
fn header_row(node: Node<'_>) -> usize {
    node.child_by_field_name("name").map_or(node.start_position().row, |n| n.start_position().row)
}

/// The innermost function around `line`: its header line and last line (0-based, inclusive).
pub fn enclosing_function(file: &CodeFile<'_>, line: usize) -> Option<(usize, usize)> {
    let node = function_at_header(file, line).or_else(|| {
        let tree = file.tree.as_ref()?;
        let at = file.code_byte(line);
        let mut node = tree.root_node().descendant_for_byte_range(at, at)?;
        loop {
            if function_body(node).is_some() && header_row(node) <= line {
                return Some(node);
            }
            node = node.parent()?;
        }
    })?;
    let (header, end) = (header_row(node), file.last_row(node));
    (end > header).then_some((header, end))
}

/// The innermost function whose header is on line `header`.
fn function_at_header<'t>(file: &'t CodeFile<'_>, header: usize) -> Option<Node<'t>> {
    let tree = file.tree.as_ref()?;
    let mut found = None;
    let mut node = tree.root_node();
    // Down through the nodes that hold line `header`, keeping the deepest function there.
    'down: loop {
        if function_body(node).is_some() && header_row(node) == header {
            found = Some(node);
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if child.start_position().row <= header && header <= child.end_position().row {
                node = child;
                continue 'down;
            }
        }
        return found;
    }
}

/// The function's name from its header line, when one can be read: its name node, or the
/// variable a function value is bound to (`const loadUser = async (id) => {`).
pub fn function_name(file: &CodeFile<'_>, header: usize) -> Option<String> {
    let node = function_at_header(file, header)?;
    let name = node.child_by_field_name("name").or_else(|| {
        let parent = node.parent()?;
        parent.child_by_field_name("name").or_else(|| parent.child_by_field_name("left"))
    })?;
    let text = file.src.get(name.byte_range())?.trim();
    (!text.is_empty() && !text.contains('\n')).then(|| text.to_owned())
}

/// The lines of the function `header..=end` that start a statement on the normal path, in
/// order (see the module doc).
pub fn statements(file: &CodeFile<'_>, header: usize, end: usize) -> Vec<usize> {
    let Some(body) = function_at_header(file, header).filter(|f| file.last_row(*f) == end).and_then(function_body)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    collect(file, body, header, &mut out);
    out
}

/// The steps of the statements of `container`, appended to `out`.
fn collect(file: &CodeFile<'_>, container: Node<'_>, header: usize, out: &mut Vec<usize>) {
    let mut cursor = container.walk();
    let children: Vec<Node<'_>> = container.named_children(&mut cursor).collect();
    for child in children {
        match child.kind() {
            _ if syntax::is_comment(child) || bare_string_statement(child) => {}
            // Go's block holds a statement list; Ruby's `begin` its statements.
            "statement_list" | "body_statement" | "begin" => collect(file, child, header, out),
            // Branches that do not run on the normal path.
            "except_clause" | "catch_clause" | "rescue" | "else_clause" | "else" | "except_group_clause" => {}
            "finally_clause" | "ensure" => collect_clause(file, child, header, out),
            "try_statement" => {
                if let Some(body) = child.child_by_field_name("body") {
                    collect(file, body, header, out);
                }
                let mut c = child.walk();
                let finally: Vec<Node<'_>> =
                    child.named_children(&mut c).filter(|n| n.kind() == "finally_clause").collect();
                for f in finally {
                    collect_clause(file, f, header, out);
                }
            }
            "with_statement" | "using_statement" | "try_with_resources_statement" => {
                push_step(file, child, header, out);
                if let Some(body) = child.child_by_field_name("body") {
                    if matches!(body.kind(), "block" | "statement_block") {
                        collect(file, body, header, out);
                    } else {
                        push_step(file, body, header, out);
                    }
                }
            }
            _ => push_step(file, child, header, out),
        }
    }
}

/// The statements of a `finally` clause (in its block) or an `ensure` (which holds them).
fn collect_clause(file: &CodeFile<'_>, clause: Node<'_>, header: usize, out: &mut Vec<usize>) {
    let mut cursor = clause.walk();
    let block = clause.named_children(&mut cursor).find(|n| matches!(n.kind(), "block" | "statement_block"));
    collect(file, block.unwrap_or(clause), header, out);
}

/// The statement `node` as a step: its first line, when it starts that line, is below the
/// header, is not a step already and is short enough to read as an option.
fn push_step(file: &CodeFile<'_>, node: Node<'_>, header: usize, out: &mut Vec<usize>) {
    let row = node.start_position().row;
    let starts_line = file.code_byte(row) == node.start_byte();
    let readable = file.lines.get(row).is_some_and(|l| l.trim().len() <= MAX_STEP_LEN);
    if row > header && starts_line && readable && !out.contains(&row) && !file.is_blank(row) {
        out.push(row);
    }
}
