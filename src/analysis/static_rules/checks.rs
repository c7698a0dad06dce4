//! What a query cannot say, in a few named functions over the tree (a query pattern names one
//! with `#set! check "<name>"`): each gets the match and its default name and returns the name
//! to report, or `None` to drop the match.

use super::engine::text;
use tree_sitter::Node;

/// One match handed to a check.
pub(super) struct Hit<'a, 't> {
    /// The `@node` capture.
    pub node: Node<'t>,
    /// Every capture of the match, by capture name.
    pub caps: &'a [(&'a str, Node<'t>)],
    /// The name the pattern's template (or `@name`) gave.
    pub name: String,
    pub path: &'a str,
    pub src: &'a str,
}

impl<'t> Hit<'_, 't> {
    fn cap(&self, name: &str) -> Option<Node<'t>> {
        self.caps.iter().find(|(n, _)| *n == name).map(|(_, node)| *node)
    }

    fn text_of(&self, node: Node) -> &str {
        text(node, self.src)
    }
}

/// The checks a query file may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// Raw SQL in a string: the name is "SELECT users"; prose is dropped.
    Sql,
    /// The name is the enclosing function's (a `yield` names its generator).
    EnclosingFn,
    /// Rust `?`: named by what the enclosing function returns ("? on Result", "? on Option").
    RustTry,
    /// A Rust function is a test when an attribute before it says so.
    RustTest,
    /// `#[derive(A, B)]` → "A, B".
    RustDerive,
    /// A type parameter without an inline bound: "bounded T: Clone" when the item's where
    /// clause bounds it, else "unbounded T".
    RustWhereBound,
    /// A Go function named TestX/BenchmarkX/… in a test file or taking a `*testing.T`.
    GoTest,
    /// A Go `for … range` over a table of cases (a slice or map literal of composite rows)
    /// whose body runs `t.Run`.
    GoTableTest,
    /// An exported HTTP-verb function of a Next.js App Router `route.ts`.
    NextRoute,
    /// The default export of a Next.js `pages/api/…` file.
    PagesApiRoute,
    /// `"use client"` in the directive prologue: named by the file's component.
    UseClient,
    /// An exported function of a file whose prologue says `"use server"`.
    UseServerFile,
    /// `"use server"` as the first statement of a function body.
    UseServerInline,
    /// A JavaScript string directive only in the prologue.
    Prologue,
    /// A TypeScript conditional type: "conditional type with infer" when it infers.
    TsConditional,
    /// Flask `@app.route(path, methods=[…])`: the first method, GET when none.
    FlaskRoute,
    /// Django `path(…)` only in a `urls.py`.
    DjangoUrls,
    /// A C# type parameter no `where T : …` clause of its declaration constrains.
    CsharpUnbounded,
    /// ASP.NET minimal API `app.MapGet("/x", …)` → "GET /x".
    CsharpMap,
    /// Ruby routes are not declared in a spec or test file (there `get "/x"` is a request).
    NotInSpec,
}

impl Check {
    pub(super) fn from_name(name: &str) -> Option<Check> {
        Some(match name {
            "sql" => Check::Sql,
            "enclosing_fn" => Check::EnclosingFn,
            "rust_try" => Check::RustTry,
            "rust_test" => Check::RustTest,
            "rust_derive" => Check::RustDerive,
            "rust_where_bound" => Check::RustWhereBound,
            "go_test" => Check::GoTest,
            "go_table_test" => Check::GoTableTest,
            "next_route" => Check::NextRoute,
            "pages_api_route" => Check::PagesApiRoute,
            "use_client" => Check::UseClient,
            "use_server_file" => Check::UseServerFile,
            "use_server_inline" => Check::UseServerInline,
            "prologue" => Check::Prologue,
            "ts_conditional" => Check::TsConditional,
            "flask_route" => Check::FlaskRoute,
            "django_urls" => Check::DjangoUrls,
            "not_in_spec" => Check::NotInSpec,
            "csharp_map" => Check::CsharpMap,
            "csharp_unbounded" => Check::CsharpUnbounded,
            _ => return None,
        })
    }
}

pub(super) fn run(check: Check, hit: &Hit) -> Option<String> {
    match check {
        // A string that is a statement by itself is a docstring or a directive, not a query.
        Check::Sql if hit.node.parent().is_some_and(|p| p.kind() == "expression_statement") => None,
        Check::Sql => sql_statement(unquote(hit.text_of(hit.cap("sql").unwrap_or(hit.node)))),
        Check::EnclosingFn => Some(enclosing_fn_name(hit.node, hit.src).unwrap_or_else(|| hit.name.clone())),
        Check::RustTry => Some(rust_try(hit.node, hit.src)),
        Check::RustTest => rust_test(hit.node, hit.src).then(|| hit.name.clone()),
        Check::RustDerive => {
            let list = hit.text_of(hit.cap("list")?).trim_start_matches('(').trim_end_matches(')');
            let names: Vec<&str> = list.split(',').map(str::trim).filter(|n| !n.is_empty()).collect();
            (!names.is_empty()).then(|| names.join(", "))
        }
        Check::RustWhereBound => Some(rust_where_bound(hit)),
        Check::GoTest => go_test(hit),
        Check::GoTableTest => go_table_test(hit),
        Check::NextRoute => {
            let route = app_router_path(hit.path)?;
            Some(format!("{} {route}", hit.name))
        }
        Check::PagesApiRoute => pages_api_route(hit.path).map(|r| format!("ANY {r}")),
        Check::UseClient => in_prologue(hit.node).then(|| component_name(hit).unwrap_or_else(|| "use client".into())),
        Check::UseServerFile => file_says(hit.node, hit.src, "use server").then(|| hit.name.clone()),
        Check::UseServerInline => {
            // The statement must be the first of a function body.
            let stmt = hit.node;
            let body = stmt.parent()?;
            (body.named_child(0)? == stmt).then_some(())?;
            let function = body.parent()?;
            let name = function.child_by_field_name("name").map_or("use server".to_string(), |n| hit.text_of(n).into());
            Some(name)
        }
        Check::Prologue => in_prologue(hit.node).then(|| hit.name.clone()),
        Check::TsConditional => Some(if has_descendant(hit.node, "infer_type") {
            "conditional type with infer".into()
        } else {
            "conditional type".into()
        }),
        Check::FlaskRoute => {
            let verb = hit.cap("args").and_then(|a| flask_methods(hit.text_of(a))).unwrap_or_else(|| "GET".into());
            Some(format!("{verb} {}", hit.name))
        }
        Check::DjangoUrls => hit.path.ends_with("urls.py").then(|| hit.name.clone()),
        Check::CsharpUnbounded => {
            let param = hit.node.child_by_field_name("name").map_or("", |n| hit.text_of(n));
            let decl = hit.node.parent().and_then(|list| list.parent())?;
            let mut cursor = decl.walk();
            let constrained = decl
                .named_children(&mut cursor)
                .filter(|c| c.kind() == "type_parameter_constraints_clause")
                .any(|c| c.named_child(0).is_some_and(|n| hit.text_of(n) == param));
            (!constrained).then(|| format!("unbounded {param}"))
        }
        Check::CsharpMap => {
            let verb = hit.cap("m").map_or("", |m| hit.text_of(m)).trim_start_matches("Map").to_ascii_uppercase();
            let path = hit.cap("path").map_or("", |p| hit.text_of(p));
            Some(format!("{verb} {path}"))
        }
        Check::NotInSpec => {
            let spec = hit.path.ends_with("_spec.rb") || hit.path.ends_with("_test.rb");
            (!spec).then(|| hit.name.clone())
        }
    }
}

/// The contents of a string literal's text: what follows its opening quote, up to its closing
/// one (prefixes such as `r#`, `@`, `$`, `f` are skipped with the quote).
pub(super) fn unquote(s: &str) -> &str {
    let Some(open) = s.find(['"', '\'', '`']) else { return s };
    let q = s.as_bytes()[open];
    let body = &s[open + 1..];
    // Triple quotes (Python, C# raw strings, Java text blocks).
    let body = body.trim_start_matches(q as char);
    body.trim_end_matches(['#']).trim_end_matches(q as char)
}

fn has_descendant(node: Node, kind: &str) -> bool {
    let mut cursor = node.walk();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == kind {
            return true;
        }
        stack.extend(n.named_children(&mut cursor));
    }
    false
}

/// Kinds of function-like nodes across the grammars.
const FUNCTIONS: [&str; 14] = [
    "function_item",
    "function_declaration",
    "method_declaration",
    "function_definition",
    "method_definition",
    "function_expression",
    "generator_function_declaration",
    "arrow_function",
    "func_literal",
    "closure_expression",
    "lambda",
    "method",
    "local_function_statement",
    "constructor_declaration",
];

fn enclosing_function(node: Node) -> Option<Node> {
    let mut at = node.parent();
    while let Some(n) = at {
        if FUNCTIONS.contains(&n.kind()) {
            return Some(n);
        }
        at = n.parent();
    }
    None
}

fn enclosing_fn_name(node: Node, src: &str) -> Option<String> {
    let f = enclosing_function(node)?;
    f.child_by_field_name("name").map(|n| text(n, src).to_string())
}

/// "? on Result", "? on Option", "? in closure", "? in async block" or "?" (another return type).
fn rust_try(node: Node, src: &str) -> String {
    let mut at = node.parent();
    while let Some(n) = at {
        match n.kind() {
            "closure_expression" => return "? in closure".into(),
            "async_block" => return "? in async block".into(),
            "function_item" => {
                let ret = n.child_by_field_name("return_type").map_or("", |r| text(r, src));
                let head = ret.split('<').next().unwrap_or("").trim();
                let last = head.rsplit("::").next().unwrap_or(head);
                return if last.ends_with("Result") {
                    "? on Result".into()
                } else if last == "Option" {
                    "? on Option".into()
                } else {
                    "?".into()
                };
            }
            _ => at = n.parent(),
        }
    }
    "?".into()
}

/// An attribute before the function (attributes and comments may sit between) names a test.
fn rust_test(function: Node, src: &str) -> bool {
    let mut prev = function.prev_named_sibling();
    while let Some(p) = prev {
        match p.kind() {
            "attribute_item" => {
                let attr = text(p, src).trim_start_matches("#[").trim_end_matches(']');
                let path = attr.split(['(', ' ']).next().unwrap_or("");
                let last = path.rsplit("::").next().unwrap_or("");
                if matches!(last, "test" | "rstest" | "test_case") {
                    return true;
                }
            }
            "line_comment" | "block_comment" => {}
            _ => return false,
        }
        prev = p.prev_named_sibling();
    }
    false
}

fn rust_where_bound(hit: &Hit) -> String {
    let param = hit.node.child_by_field_name("name").map_or("", |n| hit.text_of(n));
    let item = hit.node.parent().and_then(|list| list.parent());
    if let Some(item) = item {
        let mut walk = item.walk();
        for clause in item.named_children(&mut walk).filter(|c| c.kind() == "where_clause") {
            let mut w = clause.walk();
            for pred in clause.named_children(&mut w) {
                let left = pred.child_by_field_name("left").map_or("", |l| hit.text_of(l));
                if left == param
                    && let Some(bounds) = pred.child_by_field_name("bounds")
                {
                    return format!("bounded {param}{}", hit.text_of(bounds));
                }
            }
        }
    }
    format!("unbounded {param}")
}

fn go_test(hit: &Hit) -> Option<String> {
    let name = hit.name.as_str();
    let prefixed = ["Test", "Benchmark", "Fuzz", "Example"].iter().any(|p| name.starts_with(p));
    let params = hit.node.child_by_field_name("parameters").map_or("", |p| hit.text_of(p));
    (prefixed && (hit.path.ends_with("_test.go") || params.contains("testing."))).then(|| name.to_string())
}

/// `for _, tc := range tests { t.Run(…) }` where `tests` is a literal table in scope (or the
/// range expression is the table itself). Named "t.Run over <table>".
fn go_table_test(hit: &Hit) -> Option<String> {
    let table = hit.cap("table")?;
    let body = hit.node.child_by_field_name("body")?;
    if !calls_t_run(body, hit.src) {
        return None;
    }
    let is_table = match table.kind() {
        "composite_literal" => is_literal_table(table),
        "identifier" => {
            let name = hit.text_of(table);
            let scope = enclosing_function(hit.node).and_then(|f| f.child_by_field_name("body"));
            scope.is_some_and(|s| declares_table(s, name, hit.src))
        }
        _ => false,
    };
    is_table.then(|| format!("t.Run over {}", hit.text_of(table).lines().next().unwrap_or("").trim_end_matches('{')))
}

fn calls_t_run(node: Node, src: &str) -> bool {
    let mut cursor = node.walk();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == "call_expression"
            && let Some(f) = n.child_by_field_name("function")
            && f.kind() == "selector_expression"
            && f.child_by_field_name("field").is_some_and(|x| text(x, src) == "Run")
        {
            return true;
        }
        stack.extend(n.named_children(&mut cursor));
    }
    false
}

/// A slice or map literal whose elements are themselves composite rows (`{in: "a", want: 1}`).
fn is_literal_table(lit: Node) -> bool {
    let Some(ty) = lit.child_by_field_name("type") else { return false };
    if !matches!(ty.kind(), "slice_type" | "map_type" | "array_type" | "implicit_length_array_type") {
        return false;
    }
    let Some(body) = lit.child_by_field_name("body") else { return false };
    let mut cursor = body.walk();
    let rows = body
        .named_children(&mut cursor)
        .filter(|e| {
            let mut c = e.walk();
            e.named_children(&mut c).any(|v| v.kind() == "literal_value" || v.kind() == "composite_literal")
        })
        .count();
    rows >= 1
}

/// `name := <table literal>` or `var name = <table literal>` somewhere in `scope`.
fn declares_table(scope: Node, name: &str, src: &str) -> bool {
    let mut cursor = scope.walk();
    let mut stack = vec![scope];
    while let Some(n) = stack.pop() {
        let (left, right) = match n.kind() {
            "short_var_declaration" => (n.child_by_field_name("left"), n.child_by_field_name("right")),
            "var_spec" => (n.child_by_field_name("name"), n.child_by_field_name("value")),
            _ => (None, None),
        };
        if let (Some(l), Some(r)) = (left, right)
            && text(l, src).split(',').next().is_some_and(|first| first.trim() == name)
        {
            let value = if r.kind() == "expression_list" { r.named_child(0) } else { Some(r) };
            if value.is_some_and(|v| v.kind() == "composite_literal" && is_literal_table(v)) {
                return true;
            }
        }
        stack.extend(n.named_children(&mut cursor));
    }
    false
}

/// The URL path of a Next.js App Router `route.ts` (route groups `(x)` and slots dropped).
fn app_router_path(path: &str) -> Option<String> {
    let p = path.replace('\\', "/");
    let segs: Vec<&str> = p.split('/').collect();
    let file = segs.last()?;
    if !file.starts_with("route.") {
        return None;
    }
    let app = segs.iter().rposition(|s| *s == "app")?;
    let parts: Vec<&str> = segs[app + 1..segs.len() - 1]
        .iter()
        .copied()
        .filter(|s| !(s.starts_with('@') || (s.starts_with('(') && s.ends_with(')'))))
        .collect();
    Some(format!("/{}", parts.join("/")))
}

/// `pages/api/users/[id].ts` → "/api/users/[id]".
fn pages_api_route(path: &str) -> Option<String> {
    let p = path.replace('\\', "/");
    let at = p.find("pages/api/")?;
    let rest = &p[at + "pages/".len()..];
    let rest = rest.rsplit_once('.').map_or(rest, |(a, _)| a);
    Some(format!("/{}", rest.strip_suffix("/index").unwrap_or(rest)))
}

/// A statement of the program's directive prologue: only comments and string statements
/// before it.
fn in_prologue(stmt: Node) -> bool {
    if stmt.parent().is_none_or(|p| p.kind() != "program") {
        return false;
    }
    let mut prev = stmt.prev_named_sibling();
    while let Some(p) = prev {
        let directive = p.kind() == "expression_statement" && p.named_child(0).is_some_and(|c| c.kind() == "string");
        if !(directive || p.kind() == "comment" || p.kind() == "hash_bang_line") {
            return false;
        }
        prev = p.prev_named_sibling();
    }
    true
}

/// The program of `node` starts with the directive `directive`.
fn file_says(node: Node, src: &str, directive: &str) -> bool {
    let mut root = node;
    while let Some(p) = root.parent() {
        root = p;
    }
    let mut cursor = root.walk();
    for stmt in root.named_children(&mut cursor) {
        match stmt.kind() {
            "comment" | "hash_bang_line" => continue,
            "expression_statement" => match stmt.named_child(0) {
                Some(s) if s.kind() == "string" => {
                    if unquote(text(s, src)) == directive {
                        return true;
                    }
                }
                _ => return false,
            },
            _ => return false,
        }
    }
    false
}

/// The first capitalised exported function or const of the file.
fn component_name(hit: &Hit) -> Option<String> {
    let mut root = hit.node;
    while let Some(p) = root.parent() {
        root = p;
    }
    let mut cursor = root.walk();
    for stmt in root.named_children(&mut cursor).filter(|s| s.kind() == "export_statement") {
        let decl = stmt.child_by_field_name("declaration").or_else(|| stmt.child_by_field_name("value"));
        let Some(decl) = decl else { continue };
        let name = match decl.kind() {
            "lexical_declaration" => decl.named_child(0).and_then(|d| d.child_by_field_name("name")),
            _ => decl.child_by_field_name("name"),
        };
        if let Some(name) = name.map(|n| hit.text_of(n)).filter(|n| n.starts_with(|c: char| c.is_ascii_uppercase())) {
            return Some(name.to_string());
        }
    }
    None
}

/// The first method of `methods=["POST", …]` in a Flask route's arguments.
fn flask_methods(args: &str) -> Option<String> {
    let at = args.find("methods")?;
    let rest = &args[at..];
    let q = rest.find(['"', '\''])?;
    let word: String = rest[q + 1..].chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    (!word.is_empty()).then(|| word.to_ascii_uppercase())
}

/// "SELECT users" for `select * from users where …`; `None` unless the text reads as SQL
/// (a leading verb and its companion keyword), so "Select an option" is not a query.
pub(super) fn sql_statement(body: &str) -> Option<String> {
    // Bounded look: a query states its verb and table early; a huge string costs nothing more.
    let head = super::truncate(body.trim_start(), 2000);
    let words: Vec<String> = head
        .split(|c: char| c.is_whitespace() || c == '(' || c == ',' || c == ';')
        .filter(|w| !w.is_empty())
        .take(60)
        .map(str::to_ascii_uppercase)
        .collect();
    let verb = words.first()?.as_str();
    // Prose starts with "Select"/"Update" too: a lowercase or capitalised verb also needs a
    // clause only SQL has.
    let shouting = head.split_whitespace().next().is_some_and(|w| w.bytes().all(|c| !c.is_ascii_lowercase()));
    const MARKERS: [&str; 10] = ["*", "WHERE", "JOIN", "LIMIT", "ORDER", "GROUP", "VALUES", "SET", "RETURNING", "="];
    if !shouting && !words.iter().any(|w| MARKERS.contains(&w.as_str())) {
        return None;
    }
    let after = |kw: &str| words.iter().position(|w| w == kw).and_then(|p| words.get(p + 1));
    let table = match verb {
        "SELECT" => after("FROM")?,
        "INSERT" if words.get(1).map(String::as_str) == Some("INTO") => words.get(2)?,
        "UPDATE" if words.iter().any(|w| w == "SET") => words.get(1)?,
        "DELETE" if words.get(1).map(String::as_str) == Some("FROM") => words.get(2)?,
        "WITH" if words.iter().any(|w| w == "SELECT") => after("FROM")?,
        _ => return None,
    };
    let table: String = table.chars().filter(|c| c.is_alphanumeric() || *c == '_' || *c == '.').collect();
    let verb = if verb == "WITH" { "SELECT" } else { verb };
    Some(if table.is_empty() { verb.to_string() } else { format!("{verb} {}", table.to_ascii_lowercase()) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_statement_needs_verb_and_companion() {
        assert_eq!(sql_statement("SELECT id FROM users WHERE id = $1").as_deref(), Some("SELECT users"));
        assert_eq!(sql_statement("insert into orders (a) values (1)").as_deref(), Some("INSERT orders"));
        assert_eq!(sql_statement("UPDATE t SET a = 1").as_deref(), Some("UPDATE t"));
        assert_eq!(sql_statement("Select an option from the list"), None);
        assert_eq!(sql_statement("select * from t").as_deref(), Some("SELECT t"));
        assert_eq!(sql_statement("Select an option"), None);
        assert_eq!(sql_statement("delete me"), None);
    }

    #[test]
    fn unquote_strips_quotes_and_prefixes() {
        assert_eq!(unquote("\"a b\""), "a b");
        assert_eq!(unquote("r#\"x\"#"), "x");
        assert_eq!(unquote("'''doc'''"), "doc");
        assert_eq!(unquote("@\"v\""), "v");
        assert_eq!(unquote("`t`"), "t");
        assert_eq!(unquote("f\"{x} y\""), "{x} y");
    }

    #[test]
    fn next_js_paths() {
        assert_eq!(app_router_path("src/app/(admin)/api/users/route.ts").as_deref(), Some("/api/users"));
        assert_eq!(app_router_path("src/app/page.tsx"), None);
        assert_eq!(pages_api_route("pages/api/users/index.ts").as_deref(), Some("/api/users"));
    }
}
