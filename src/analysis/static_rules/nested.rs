//! The query text as it is compiled: a nested node pattern that has children of its own and a
//! field to hold it, `function: (member_expression object: … property: …)`
//! inside a `call_expression`, is written as a wildcard with a capture, `function: (_ object: …
//! property: …) @__nested3`, and the engine drops a match whose capture is not of the kind the
//! query file named (`Rules::kinds_hold`).
//!
//! # Why
//! `tree_sitter::Query::new` analyses every node pattern that has children, save a wildcard,
//! against the grammar's whole parse table (which steps can fail, whether the pattern can
//! match at all). In the expression grammars one such analysis costs 1–2 ms (a call, a member
//! access, an arrow function: docs/DECISIONS.md, "Compiling the static rules"), and the query
//! files have dozens: the TypeScript rules took ~95 ms to compile, paid by the first analysis
//! job of each worker process. A wildcard is not analysed; its kind checked against the match
//! afterwards selects exactly the matches the named pattern had (tree-sitter tests a wildcard
//! and a named step alike, save the kind; a wildcard never takes an `ERROR`).
//!
//! # Which
//! Only a nested pattern a field holds in place: its own (`function: (…)`, also for each
//! alternative of `value: [(…) (…)]`) or one on a child of its own (`(call_expression
//! function: …)` inside an `await_expression`). A wildcard held by nothing, `(base_list (_))`
//! inside a class, would take every child and grandchild of the class, each a match to throw
//! away: measured, the C# rules matched 78 % slower with those rewritten too, and an anchor
//! (`. (…)`, the first child) holds too little (TSX matched 10 % slower, against 6 % without).
//! Root patterns are left as written: a wildcard root would be tried at every node of the tree.
//!
//! What the rewrite loses, tree-sitter's check that a nested kind and its fields fit the
//! grammar, the tests keep: they compile the query files as written too.

use tree_sitter::Language;

/// Prefix of the captures the rewrite adds; no query file may name a capture so.
pub(super) const CAPTURE_PREFIX: &str = "__nested";

/// A query's text with its nested node patterns as wildcards, and the kind each stood for.
#[derive(Debug)]
pub(super) struct Rewritten {
    pub text: String,
    /// The added captures in order (`__nested0`, `__nested1`, …): the node kind each names.
    pub kinds: Vec<String>,
}

/// What an open bracket of the query text is.
#[derive(Debug, Clone, Copy)]
enum Open {
    /// A node pattern `(kind …)`; `Some(i)` when it was rewritten as the `i`th wildcard.
    Node(Option<usize>),
    /// An alternation `[…]`, and whether a field holds it (and so each of its alternatives).
    Alternation { held: bool },
    /// A group `((…) @c (#pred …))` or a predicate `(#eq? …)`.
    Other,
}

/// Rewrites every nested node pattern of `source` that has children, is held by a field and
/// names a visible kind of `language` (see the module doc). Comments and string literals are
/// copied as written.
pub(super) fn nested_as_wildcards(source: &str, language: &Language) -> Rewritten {
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len() + source.len() / 8);
    let mut kinds = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    // Whether the last token was a field label (`name:`).
    let mut held = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let end = string_end(bytes, i);
                out.push_str(&source[i..end]);
                i = end;
                held = false;
            }
            b';' => {
                let end = source[i..].find('\n').map_or(source.len(), |n| i + n);
                out.push_str(&source[i..end]);
                i = end;
            }
            b'(' => {
                let name = node_name(&source[i + 1..]);
                let nested = stack.iter().any(|o| matches!(o, Open::Node(_)));
                let held_here =
                    held || matches!(stack.last(), Some(Open::Alternation { held: true })) || child_has_field(bytes, i);
                held = false;
                match name {
                    Some(name)
                        if nested
                            && held_here
                            && name != "_"
                            && !source[i + 1 + name.len()..].starts_with('/')
                            && has_children(bytes, i)
                            && is_visible_named(language, name) =>
                    {
                        stack.push(Open::Node(Some(kinds.len())));
                        kinds.push(name.to_string());
                        out.push_str("(_");
                        i += 1 + name.len();
                    }
                    Some(_) => {
                        stack.push(Open::Node(None));
                        out.push('(');
                        i += 1;
                    }
                    None => {
                        stack.push(Open::Other);
                        out.push('(');
                        i += 1;
                    }
                }
            }
            b'[' => {
                stack.push(Open::Alternation { held });
                held = false;
                out.push('[');
                i += 1;
            }
            b')' | b']' => {
                out.push(bytes[i] as char);
                i += 1;
                held = false;
                if let Some(Open::Node(Some(n))) = stack.pop() {
                    // A quantifier belongs to the node; the capture follows it.
                    if let Some(&q @ (b'?' | b'*' | b'+')) = bytes.get(i) {
                        out.push(q as char);
                        i += 1;
                    }
                    out.push_str(&format!(" @{CAPTURE_PREFIX}{n}"));
                }
            }
            _ => {
                // Copy up to the next byte the scanner looks at (all of them are ASCII, so
                // the cut is on a character boundary).
                let end = bytes[i..]
                    .iter()
                    .position(|b| matches!(b, b'"' | b';' | b'(' | b'[' | b')' | b']'))
                    .map_or(bytes.len(), |n| i + n);
                let run = source[i..end].trim_end();
                if !run.trim_start().is_empty() {
                    held = run.ends_with(':');
                }
                out.push_str(&source[i..end]);
                i = end;
            }
        }
    }
    Rewritten { text: out, kinds }
}

/// The end (one past the closing quote) of the string literal opening at `start`.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The node kind a `(` opens (`rest` follows it), or `None` for a group or a predicate.
fn node_name(rest: &str) -> Option<&str> {
    let len = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
    (len > 0).then(|| &rest[..len])
}

/// Whether the node pattern opening at `open` has a child pattern directly inside: a node, an
/// anonymous node (`"async"`) or an alternation. Fields, negated fields and captures alone make
/// no child.
fn has_children(bytes: &[u8], open: usize) -> bool {
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'"' if depth == 1 => return true,
            b'"' => {
                i = string_end(bytes, i);
                continue;
            }
            b';' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'(' | b'[' if depth == 1 => return true,
            b'(' | b'[' => depth += 1,
            b')' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return false;
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// Whether the node pattern opening at `open` has a field label directly inside
/// (`(call_expression function: …)`).
fn child_has_field(bytes: &[u8], open: usize) -> bool {
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = string_end(bytes, i);
                continue;
            }
            b';' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'(' | b'[' => depth += 1,
            b')' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return false;
                }
            }
            b':' if depth == 1 => return true,
            _ => {}
        }
        i += 1;
    }
    false
}

/// Whether `kind` is a visible named node kind of `language` (a hidden supertype matches its
/// subtypes and is left to tree-sitter).
fn is_visible_named(language: &Language, kind: &str) -> bool {
    let id = language.id_for_node_kind(kind, true);
    id != 0 && language.node_kind_is_visible(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::syntax::Grammar;

    fn rewrite(source: &str) -> Rewritten {
        nested_as_wildcards(source, &Grammar::TypeScript.language())
    }

    #[test]
    fn nested_patterns_with_children_become_captured_wildcards() {
        let r = rewrite(
            "((call_expression function: (member_expression object: (identifier) @o property: (property_identifier) @p)) @node\n  (#eq? @o \"(x)\") (#set! type \"t\"))",
        );
        assert_eq!(
            r.text,
            "((call_expression function: (_ object: (identifier) @o property: (property_identifier) @p) @__nested0) @node\n  (#eq? @o \"(x)\") (#set! type \"t\"))"
        );
        assert_eq!(r.kinds, ["member_expression"]);
    }

    #[test]
    fn roots_leaves_alternations_and_anonymous_children() {
        // The root stays; a leaf stays; each alternative a field holds is rewritten when it
        // has a child; an anonymous child counts as a child.
        let r = rewrite(
            "((variable_declarator name: (identifier) @n value: [(arrow_function \"async\") (function_expression)]) @node)",
        );
        assert_eq!(
            r.text,
            "((variable_declarator name: (identifier) @n value: [(_ \"async\") @__nested0 (function_expression)]) @node)"
        );
        assert_eq!(r.kinds, ["arrow_function"]);
    }

    #[test]
    fn a_field_on_a_child_holds_a_pattern_too_and_nothing_else_does() {
        let r = rewrite("((await_expression (call_expression function: (identifier) @f)) @node)");
        assert_eq!(r.text, "((await_expression (_ function: (identifier) @f) @__nested0) @node)");
        // Two deep, the outer one not held, and a quantifier (the capture follows it).
        let r = rewrite("((_ (statement_block (expression_statement (call_expression function: (_)))*)) @x)");
        assert_eq!(r.text, "((_ (statement_block (expression_statement (_ function: (_)) @__nested0)*)) @x)");
        assert_eq!(r.kinds, ["call_expression"]);
        let r = rewrite("((call_expression arguments: (arguments (call_expression function: (_))*)) @x)");
        assert_eq!(r.text, "((call_expression arguments: (_ (_ function: (_))* @__nested1) @__nested0) @x)");
        assert_eq!(r.kinds, ["arguments", "call_expression"]);
        // Held by nothing, or by an anchor only, a wildcard would take (nearly) every child.
        for src in [
            "((class_declaration (class_body (method_definition) @m)) @node)",
            "((statement_block . (expression_statement (string)) @s) @node)",
        ] {
            assert_eq!(rewrite(src).text, src);
        }
    }

    #[test]
    fn comments_strings_and_unknown_kinds_are_left_as_written() {
        let src = "; (call_expression (x))\n((a (b \"(c (d))\")) @n (#match? @n \"^(a|b)$\"))";
        let r = rewrite(src);
        // `a`, `b` are no kinds of the grammar: left to tree-sitter, which reports them.
        assert_eq!(r.text, src);
        assert!(r.kinds.is_empty());
    }
}
