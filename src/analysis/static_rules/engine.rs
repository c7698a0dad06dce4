//! The query engine: one compiled tree-sitter query per grammar (made once per process, from
//! the query file with its nested node patterns as wildcards, see `nested`), run over a file's
//! tree; each match becomes a `Found` named by its pattern's `#set!` properties (see the parent
//! module's doc for the conventions of the query files).

use super::Found;
use super::checks::{self, Check, Hit};
use super::nested;
use crate::analysis::syntax::Grammar;
use std::sync::OnceLock;
use tree_sitter::{Node, Query, QueryCursor, QueryError, StreamingIterator, Tree};

const ECMASCRIPT: &str = include_str!("queries/ecmascript.scm");
const JS: &str = include_str!("queries/javascript.scm");
const TS: &str = include_str!("queries/typescript.scm");
const PYTHON: &str = include_str!("queries/python.scm");
const GO: &str = include_str!("queries/go.scm");
const RUST: &str = include_str!("queries/rust.scm");
const JAVA: &str = include_str!("queries/java.scm");
const RUBY: &str = include_str!("queries/ruby.scm");
const CSHARP: &str = include_str!("queries/c_sharp.scm");

/// What one query pattern reports.
#[derive(Debug)]
struct Spec {
    pattern_type: &'static str,
    /// The name template (`{capture}` / `{capture|filter}`); `None`: the `@name` capture.
    name: Option<&'static str>,
    check: Option<Check>,
}

/// A grammar's compiled query and the meaning of each of its patterns.
pub(super) struct Rules {
    query: Query,
    specs: Vec<Spec>,
    node: u32,
    name: Option<u32>,
    /// By capture index: the node kind (id) a capture the rewrite added must have.
    nested_kinds: Vec<Option<u16>>,
}

impl Rules {
    /// Whether every node a rewritten wildcard took is of the kind the query file named there.
    fn kinds_hold(&self, captures: &[tree_sitter::QueryCapture]) -> bool {
        captures.iter().all(|c| {
            self.nested_kinds.get(c.index as usize).copied().flatten().is_none_or(|kind| c.node.kind_id() == kind)
        })
    }
}

/// Why a query file does not make rules: a defect of the file, found by the tests.
#[derive(Debug, thiserror::Error)]
pub(super) enum RulesError {
    #[error("query does not compile: {0}")]
    Query(#[from] QueryError),
    #[error("pattern {0}: {1}")]
    Pattern(usize, String),
    #[error("capture @{0}: the prefix is the engine's")]
    ReservedCapture(String),
}

/// The query source of a grammar.
fn source(grammar: Grammar) -> String {
    match grammar {
        Grammar::JavaScript => format!("{ECMASCRIPT}\n{JS}"),
        Grammar::TypeScript | Grammar::Tsx => format!("{ECMASCRIPT}\n{TS}"),
        Grammar::Python => PYTHON.to_string(),
        Grammar::Go => GO.to_string(),
        Grammar::Rust => RUST.to_string(),
        Grammar::Java => JAVA.to_string(),
        Grammar::Ruby => RUBY.to_string(),
        Grammar::CSharp => CSHARP.to_string(),
    }
}

/// Compiles the query of `grammar` (nested node patterns as wildcards, see `nested`) and
/// reads its patterns' properties.
pub(super) fn compile(grammar: Grammar) -> Result<Rules, RulesError> {
    compile_source(&grammar.language(), &source(grammar))
}

/// Compiles the query `source` for `language` (see `compile`).
fn compile_source(language: &tree_sitter::Language, source: &str) -> Result<Rules, RulesError> {
    if let Some(reserved) = source.split('@').skip(1).find(|c| c.starts_with(nested::CAPTURE_PREFIX)) {
        return Err(RulesError::ReservedCapture(
            reserved.split(|c: char| c.is_whitespace() || c == ')').next().unwrap_or("").to_string(),
        ));
    }
    let rewritten = nested::nested_as_wildcards(source, language);
    let query = Query::new(language, &rewritten.text)?;
    let mut nested_kinds = vec![None; query.capture_names().len()];
    for (n, kind) in rewritten.kinds.iter().enumerate() {
        let capture = format!("{}{n}", nested::CAPTURE_PREFIX);
        if let Some(slot) = query.capture_index_for_name(&capture).and_then(|i| nested_kinds.get_mut(i as usize)) {
            *slot = Some(language.id_for_node_kind(kind, true));
        }
    }
    let node = query.capture_index_for_name("node").ok_or(RulesError::Pattern(0, "no @node capture".into()))?;
    let name = query.capture_index_for_name("name");
    let mut specs = Vec::with_capacity(query.pattern_count());
    for i in 0..query.pattern_count() {
        let mut pattern_type = None;
        let mut name_template = None;
        let mut check = None;
        for p in query.property_settings(i) {
            // Leaked once per process per property: the rules live as long as the process.
            let value: &'static str = p.value.as_deref().map_or("", |v| Box::leak(v.to_string().into_boxed_str()));
            match &*p.key {
                "type" => pattern_type = Some(value),
                "name" => name_template = Some(value),
                "check" => {
                    check =
                        Some(Check::from_name(value).ok_or_else(|| RulesError::Pattern(i, format!("check {value}")))?)
                }
                other => return Err(RulesError::Pattern(i, format!("unknown property {other}"))),
            }
        }
        let pattern_type = pattern_type.ok_or_else(|| RulesError::Pattern(i, "no type".into()))?;
        specs.push(Spec { pattern_type, name: name_template, check });
    }
    Ok(Rules { query, specs, node, name, nested_kinds })
}

/// The rules of `grammar`, compiled on first use; `None` (logged once) if its query file is
/// broken, which the tests rule out.
fn rules(grammar: Grammar) -> Option<&'static Rules> {
    static CELLS: [OnceLock<Option<Rules>>; 9] = [const { OnceLock::new() }; 9];
    let slot = match grammar {
        Grammar::Python => 0,
        Grammar::JavaScript => 1,
        Grammar::TypeScript => 2,
        Grammar::Tsx => 3,
        Grammar::Go => 4,
        Grammar::Rust => 5,
        Grammar::Java => 6,
        Grammar::Ruby => 7,
        Grammar::CSharp => 8,
    };
    CELLS[slot]
        .get_or_init(|| compile(grammar).map_err(|e| log::error!("static rules for {grammar:?}: {e}")).ok())
        .as_ref()
}

/// Every match of the grammar's query over `tree`, named, checked and placed.
pub(super) fn run<'t>(grammar: Grammar, tree: &'t Tree, path: &str, src: &str) -> Vec<Found<'t>> {
    rules(grammar).map_or_else(Vec::new, |rules| run_rules(rules, tree, path, src))
}

fn run_rules<'t>(rules: &Rules, tree: &'t Tree, path: &str, src: &str) -> Vec<Found<'t>> {
    let names = rules.query.capture_names();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&rules.query, tree.root_node(), src.as_bytes());
    let mut out = Vec::new();
    // One buffer for every match's captures, by name.
    let mut caps: Vec<(&str, Node)> = Vec::new();
    while let Some(m) = matches.next() {
        if !rules.kinds_hold(m.captures()) {
            continue;
        }
        let Some(spec) = rules.specs.get(m.pattern_index) else { continue };
        let Some(node) = m.captures().iter().find(|c| c.index == rules.node).map(|c| c.node) else { continue };
        caps.clear();
        caps.extend(m.captures().iter().map(|c| (names[c.index as usize], c.node)));
        let name = match spec.name {
            Some(template) => render(template, &caps, src),
            None => rules
                .name
                .and_then(|n| m.captures().iter().find(|c| c.index == n))
                .map_or(String::new(), |c| text(c.node, src).to_string()),
        };
        let hit = Hit { node, caps: &caps, name, path, src };
        let name = match spec.check {
            Some(check) => match checks::run(check, &hit) {
                Some(name) => name,
                None => continue,
            },
            None => hit.name,
        };
        out.push(Found { pattern_type: spec.pattern_type, name, node });
    }
    out
}

/// The 0-based line a pattern is reported at: its node's name when the node has one (a C#
/// method starts at its `[Fact]`, a decorated Python class at its decorator), else its start.
pub(super) fn pattern_line(node: Node) -> usize {
    let named = node.child_by_field_name("definition").unwrap_or(node);
    named.child_by_field_name("name").unwrap_or(node).start_position().row
}

/// The text of `node` in `src`.
pub(super) fn text<'s>(node: Node, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// `template` with each `{capture}` / `{capture|filter}` replaced (an absent capture is empty).
fn render(template: &str, caps: &[(&str, Node)], src: &str) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}').map(|c| open + c) else {
            out.push_str(&rest[open..]);
            return out;
        };
        let spec = &rest[open + 1..close];
        let (cap, filter) = spec.split_once('|').unwrap_or((spec, ""));
        let value = caps.iter().find(|(n, _)| *n == cap).map_or("", |(_, node)| text(*node, src));
        out.push_str(&filtered(value, filter));
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

fn filtered(value: &str, filter: &str) -> String {
    match filter {
        "upper" => value.to_ascii_uppercase(),
        "last" => value.rsplit(['.', ':']).next().unwrap_or(value).to_string(),
        "tail2" => {
            let segs: Vec<&str> = value.split("::").collect();
            segs[segs.len().saturating_sub(2)..].join("::")
        }
        "unquote" => checks::unquote(value).to_string(),
        // An HTTP verb from an annotation or attribute: `GetMapping`, `HttpGet` → `GET`.
        "verb" => {
            let v = value.strip_suffix("Mapping").unwrap_or(value);
            let v = v.strip_prefix("Http").unwrap_or(v);
            if v == "Request" { "ROUTE".to_string() } else { v.to_ascii_uppercase() }
        }
        // A Ruby symbol's name: `:users` → `users`.
        "sym" => value.trim_start_matches(':').to_string(),
        // A callee path without its calls' arguments: `fetch(u).then` → `fetch`.
        "path" => value.split('(').next().unwrap_or(value).split_whitespace().collect(),
        _ => value.to_string(),
    }
}

/// Kinds that hold statements or items: a snippet climbs from an expression up to the child of
/// the nearest one of these.
const CONTAINERS: [&str; 33] = [
    "source_file",
    "program",
    "module",
    "compilation_unit",
    "block",
    "statement_block",
    "statement_list",
    "declaration_list",
    "class_body",
    "interface_body",
    "enum_body",
    "enum_body_declarations",
    "constructor_body",
    "switch_case",
    "switch_default",
    "switch_block_statement_group",
    "switch_section",
    "expression_case",
    "default_case",
    "type_case",
    "communication_case",
    "match_block",
    "body_statement",
    "block_body",
    "do_block",
    "then",
    "else",
    "ensure",
    "begin",
    "when",
    "namespace_declaration",
    "file_scoped_namespace_declaration",
    "field_declaration_list",
];

/// Kinds that belong to the item after them (attributes, decorators).
const LEADING: [&str; 3] = ["attribute_item", "decorator", "attribute_list"];

/// The byte range of the statement or item that holds `node`, with its leading attributes.
/// It climbs no higher than a unit that starts within `SNIPPET_MAX_LINES` of the node, so the
/// cut snippet always shows the node's first line. `root` is the root of `node`'s tree.
pub(super) fn snippet_range(root: Node, node: Node) -> (usize, usize) {
    let row = node.start_position().row;
    // The nodes above `node`, root first: one walk down the tree, where climbing by
    // `Node::parent` walks down from the root at every step.
    let above = ancestors(root, node);
    // How many of `above` are above the unit (its parent is `above[depth - 1]`).
    let mut depth = above.len();
    while let Some(&parent) = depth.checked_sub(1).and_then(|d| above.get(d)) {
        if CONTAINERS.contains(&parent.kind()) || row - parent.start_position().row >= super::SNIPPET_MAX_LINES {
            break;
        }
        depth -= 1;
    }
    if depth == 0 {
        // The root itself (a file of one expression): keep the node.
        depth = above.len();
    }
    let unit = above.get(depth).copied().unwrap_or(node);
    let mut start = unit;
    if let Some(&parent) = depth.checked_sub(1).and_then(|d| above.get(d)) {
        let mut cursor = parent.walk();
        let siblings: Vec<Node> = parent.named_children(&mut cursor).collect();
        let before = siblings.iter().position(|s| *s == unit).map_or(&[][..], |at| &siblings[..at]);
        for prev in before.iter().rev() {
            if !LEADING.contains(&prev.kind()) {
                break;
            }
            start = *prev;
        }
    }
    (start.start_byte(), unit.end_byte())
}

/// The nodes from `root` down to the parent of `node` (empty when `node` is `root`): the
/// chain `Node::parent` climbs, found in one walk.
fn ancestors<'t>(root: Node<'t>, node: Node<'t>) -> Vec<Node<'t>> {
    let mut chain = Vec::new();
    let mut at = root;
    while at != node {
        chain.push(at);
        match at.child_with_descendant(node) {
            Some(next) => at = next,
            None => break,
        }
    }
    chain
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grammar_has_rules_that_compile() {
        for g in [
            Grammar::Python,
            Grammar::JavaScript,
            Grammar::TypeScript,
            Grammar::Tsx,
            Grammar::Go,
            Grammar::Rust,
            Grammar::Java,
            Grammar::Ruby,
            Grammar::CSharp,
        ] {
            let rules = compile(g).unwrap_or_else(|e| panic!("{g:?}: {e}"));
            assert!(rules.query.pattern_count() > 5, "{g:?}");
            // The rewrite skips tree-sitter's check of nested kinds and fields: the query
            // file as written must pass it too, pattern for pattern.
            let written = Query::new(&g.language(), &source(g)).unwrap_or_else(|e| panic!("{g:?} as written: {e}"));
            assert_eq!(written.pattern_count(), rules.query.pattern_count(), "{g:?}");
        }
    }

    /// A wildcard the rewrite made takes any node the rest of its pattern fits (here the
    /// subscript `a[0]`, which has an `object` too); the engine keeps the named kind only.
    #[test]
    fn a_rewritten_nested_pattern_keeps_only_its_kind() {
        let grammar = Grammar::TypeScript;
        let query = "((call_expression function: (member_expression object: (identifier) @name)) @node\n  (#set! type \"call_on\"))";
        let rules = compile_source(&grammar.language(), query).expect("rules");
        assert!(rules.nested_kinds.iter().flatten().count() == 1, "the member expression is rewritten");
        let src = "a[0]();\nb.c();\n";
        let tree = crate::analysis::syntax::parse(grammar, src).expect("tree");
        let names: Vec<String> = run_rules(&rules, &tree, "a.ts", src).into_iter().map(|f| f.name).collect();
        assert_eq!(names, ["b"]);
    }

    #[test]
    fn templates_fill_captures_and_filters() {
        assert_eq!(filtered("a.b.Run", "last"), "Run");
        assert_eq!(filtered("std::thread::spawn", "tail2"), "thread::spawn");
        assert_eq!(filtered("get", "upper"), "GET");
        assert_eq!(render("no captures", &[], ""), "no captures");
        assert_eq!(render("{absent} x", &[], ""), " x");
    }
}

#[cfg(test)]
mod profile {
    use super::*;

    /// Which query patterns cost most (`VL_PROFILE_QUERY` = a source file): the time of one
    /// run with each pattern disabled in turn, against all enabled. Run by hand.
    #[test]
    #[ignore = "a measurement, run by hand"]
    fn each_patterns_share_of_the_query_time() {
        let Ok(path) = std::env::var("VL_PROFILE_QUERY") else { return };
        let src = std::fs::read_to_string(&path).expect("source file");
        let (grammar, tree) = crate::analysis::syntax::parse_file(&path, &src).expect("parsed");
        let time = |rules: &Rules| {
            let t = std::time::Instant::now();
            let mut cursor = QueryCursor::new();
            let mut matches = cursor.matches(&rules.query, tree.root_node(), src.as_bytes());
            let mut n = 0;
            while matches.next().is_some() {
                n += 1;
            }
            (t.elapsed().as_secs_f64(), n)
        };
        let all = compile(grammar).expect("rules");
        let (base, n) = time(&all);
        println!("ALL {base:.3} s {n} matches");
        for i in 0..all.query.pattern_count() {
            let mut rules = compile(grammar).expect("rules");
            rules.query.disable_pattern(i);
            let (t, _) = time(&rules);
            let start = rules.query.start_byte_for_pattern(i);
            let text: String = source(grammar)[start..].lines().next().unwrap_or("").chars().take(90).collect();
            println!("SAVE {:.3} s  #{i} {text}", base - t);
        }
    }
}
