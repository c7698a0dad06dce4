//! "A concept is named only where its syntax is in the snippet" (SPEC §6.4, issue 40): for
//! the catalogue concepts whose syntax a grammar can see, the tree-sitter queries that find it,
//! per grammar, and the check that one of them matches in the lines a question shows. Generics
//! needs a type-parameter list (not the word `generic` in a `cfg` name); "Result and the ?
//! operator" needs a `?` inside a function that returns a `Result` (a `?` on an `Option` in
//! `Iterator::next` is not it); Goroutines needs a `go` statement; Table-driven tests needs a
//! table (a slice of cases, a `parametrize`, an `.each`), not a list of `expect()` calls.
//!
//! A concept the table does not hold is not checked here; a grammar the concept lists no query
//! for has no syntax for it (Go has no promises, Rust no classes). Pure: source in, verdict out.

use std::cell::RefCell;
use std::collections::HashMap;

use tree_sitter::{Node, Query, QueryCursor, StreamingIterator, Tree};

use super::syntax::{Grammar, parse};
use crate::analysis::catalogue;
use crate::analysis::lang_for_path;
use crate::analysis::model::SourceFile;
use crate::analysis::questions::GeneratedQuestion;

use Grammar::{CSharp, Go, Java, JavaScript, Python, Ruby, Rust, Tsx, TypeScript};

/// JavaScript and both TypeScript grammars, whose trees name these nodes alike.
const JS: &[Grammar] = &[JavaScript, TypeScript, Tsx];

/// One way a grammar shows a concept: a query (its first capture is the node that must start
/// or end in the lines shown) and, where a query cannot say it, a test on that node.
struct Shape {
    grammars: &'static [Grammar],
    query: &'static str,
    test: Option<fn(Node<'_>, &str) -> bool>,
}

const fn shape(grammars: &'static [Grammar], query: &'static str) -> Shape {
    Shape { grammars, query, test: None }
}

/// A catalogue concept (its entry's own name) and what its syntax is, for a refusal's reason.
struct ConceptSyntax {
    concept: &'static str,
    what: &'static str,
    shapes: &'static [Shape],
}

/// The table. Each query is compiled against each of its grammars by a test.
const TABLE: &[ConceptSyntax] = &[
    ConceptSyntax {
        concept: "Generics",
        what: "a type-parameter list",
        shapes: &[
            shape(&[Rust, TypeScript, Tsx, Java], "(type_parameters) @x"),
            shape(&[Go, CSharp], "(type_parameter_list) @x"),
            shape(&[Python], "(type_parameter) @x"),
            shape(&[Python], "(call function: (identifier) @x (#eq? @x \"TypeVar\"))"),
            shape(&[Python], "(subscript value: (identifier) @x (#eq? @x \"Generic\"))"),
        ],
    },
    ConceptSyntax {
        concept: "Result and the ? operator",
        what: "a `?` inside a function that returns a Result",
        shapes: &[Shape { grammars: &[Rust], query: "(try_expression) @x", test: Some(in_fn_returning_result) }],
    },
    ConceptSyntax { concept: "Goroutines", what: "a `go` statement", shapes: &[shape(&[Go], "(go_statement) @x")] },
    ConceptSyntax {
        concept: "Channels",
        what: "a channel send, receive or type",
        shapes: &[
            shape(&[Go], "(send_statement) @x"),
            shape(&[Go], "(unary_expression operator: \"<-\") @x"),
            shape(&[Go], "(channel_type) @x"),
        ],
    },
    ConceptSyntax {
        concept: "Concurrent promises and joins",
        what: "a combinator that awaits several operations at once",
        shapes: &[
            shape(
                JS,
                "(call_expression function: (member_expression object: (identifier) @o property: (property_identifier) @x) (#eq? @o \"Promise\") (#match? @x \"^(all|allSettled|race|any)$\"))",
            ),
            shape(
                &[Python],
                "(call function: (attribute attribute: (identifier) @x) (#match? @x \"^(gather|create_task|wait)$\"))",
            ),
            shape(&[Python], "(call function: (identifier) @x (#match? @x \"^(gather|TaskGroup)$\"))"),
            shape(&[Python], "(call function: (attribute attribute: (identifier) @x) (#eq? @x \"TaskGroup\"))"),
            shape(&[Rust], "(macro_invocation macro: (identifier) @x (#match? @x \"^(join|try_join|select)$\"))"),
            shape(
                &[Rust],
                "(macro_invocation macro: (scoped_identifier name: (identifier) @x) (#match? @x \"^(join|try_join|select)$\"))",
            ),
        ],
    },
    ConceptSyntax {
        concept: "Classes and encapsulation",
        what: "a class (in Rust an inherent `impl`, in Go a method)",
        shapes: &[
            shape(&[Python], "(class_definition) @x"),
            shape(&[JavaScript, TypeScript, Tsx, Java, CSharp], "(class_declaration) @x"),
            shape(&[Ruby], "(class) @x"),
            shape(&[Rust], "(impl_item !trait) @x"),
            shape(&[Go], "(method_declaration) @x"),
        ],
    },
    ConceptSyntax {
        concept: "Table-driven tests",
        what: "a table of test cases",
        shapes: &[
            shape(
                &[Go],
                "(composite_literal type: [(slice_type) (map_type)] body: (literal_value (_ (literal_value)))) @x",
            ),
            shape(
                &[Go],
                "(composite_literal type: [(slice_type) (map_type)] body: (literal_value (_ value: (literal_value)))) @x",
            ),
            shape(
                &[Python],
                "(decorator (call function: (attribute attribute: (identifier) @x) (#eq? @x \"parametrize\")))",
            ),
            shape(
                JS,
                "(member_expression object: (identifier) @o property: (property_identifier) @x (#match? @o \"^(it|test|describe)$\") (#eq? @x \"each\"))",
            ),
            shape(JS, "(for_in_statement right: (array (object))) @x"),
            shape(&[Rust], "(for_expression value: (array_expression (tuple_expression))) @x"),
            shape(&[Rust], "(for_expression value: (reference_expression (array_expression (tuple_expression)))) @x"),
            shape(&[Java], "(marker_annotation name: (identifier) @x (#eq? @x \"ParameterizedTest\"))"),
            shape(&[CSharp], "(attribute name: (identifier) @x (#match? @x \"^(Theory|InlineData|TestCase)$\"))"),
            shape(&[Ruby], "(call receiver: (array (_)) method: (identifier) @x (#eq? @x \"each\"))"),
        ],
    },
    ConceptSyntax {
        concept: "Context managers and with",
        what: "a `with` statement or a context manager",
        shapes: &[
            shape(&[Python], "(with_statement) @x"),
            shape(&[Python], "(decorator (identifier) @x (#eq? @x \"contextmanager\"))"),
            shape(&[Python], "(decorator (attribute attribute: (identifier) @x) (#match? @x \"contextmanager$\"))"),
            shape(&[Python], "(function_definition name: (identifier) @x (#match? @x \"^__(a)?(enter|exit)__$\"))"),
        ],
    },
    // The hand-graded sample (docs/QUESTIONS.md) found try/catch asked on a `try`/`finally`
    // with no `catch`, and on a status-code line inside a `try`: the handler is the concept.
    ConceptSyntax {
        concept: "Exception handling with try/catch",
        what: "a `catch` clause",
        shapes: &[shape(&[JavaScript, TypeScript, Tsx, Java, CSharp], "(catch_clause) @x")],
    },
    ConceptSyntax {
        concept: "Exception handling with try/except",
        what: "an `except` clause",
        shapes: &[shape(&[Python], "(except_clause) @x")],
    },
    ConceptSyntax {
        concept: "Decorators",
        what: "a decorator",
        shapes: &[shape(&[Python, JavaScript, TypeScript, Tsx], "(decorator) @x")],
    },
    ConceptSyntax {
        concept: "Async/await",
        what: "an `async` function or an `await`",
        shapes: &[
            shape(&[Python], "(await) @x"),
            shape(&[Python], "(function_definition \"async\" @x)"),
            shape(&[JavaScript, TypeScript, Tsx, Rust, CSharp], "(await_expression) @x"),
            shape(JS, "(function_declaration \"async\" @x)"),
            shape(JS, "(function_expression \"async\" @x)"),
            shape(JS, "(arrow_function \"async\" @x)"),
            shape(JS, "(method_definition \"async\" @x)"),
            shape(&[Rust], "(function_modifiers \"async\" @x)"),
            shape(&[Rust], "(async_block) @x"),
            shape(&[CSharp], "(modifier \"async\" @x)"),
        ],
    },
];

/// Whether the `?` at `node` sits in a function whose declared return type is a `Result`
/// (`Result<T, E>`, `io::Result<T>`, `anyhow::Result<()>`), the nearest function or closure
/// deciding.
fn in_fn_returning_result(node: Node<'_>, src: &str) -> bool {
    let mut at = node.parent();
    while let Some(n) = at {
        match n.kind() {
            "function_item" | "closure_expression" => {
                let returns = n.child_by_field_name("return_type").and_then(|t| t.utf8_text(src.as_bytes()).ok());
                return returns.is_some_and(|t| {
                    let head = t.split('<').next().unwrap_or(t).trim();
                    head == "Result" || head.ends_with("::Result")
                });
            }
            // A `?` in an async block belongs to the block, whose type no header says.
            "async_block" => return false,
            _ => at = n.parent(),
        }
    }
    false
}

thread_local! {
    /// Each compiled query, per (concept, shape index, grammar), made on first use.
    static QUERIES: RefCell<HashMap<(usize, usize, Grammar), Option<Query>>> = RefCell::new(HashMap::new());
}

fn entry_of(concept: &str) -> Option<(usize, &'static ConceptSyntax)> {
    let name = catalogue::find(concept)?.name;
    TABLE.iter().enumerate().find(|(_, s)| s.concept == name)
}

/// Whether one of `syntax`'s shapes for `grammar` matches a node of `tree` that starts or ends
/// on a row of `rows` (0-based, inclusive).
fn shown(
    (index, syntax): (usize, &ConceptSyntax),
    grammar: Grammar,
    tree: &Tree,
    src: &str,
    rows: (usize, usize),
) -> bool {
    syntax.shapes.iter().enumerate().filter(|(_, s)| s.grammars.contains(&grammar)).any(|(k, s)| {
        QUERIES.with(|queries| {
            let mut queries = queries.borrow_mut();
            let query =
                queries.entry((index, k, grammar)).or_insert_with(|| Query::new(&grammar.language(), s.query).ok());
            let Some(query) = query.as_ref() else { return false };
            let mut cursor = QueryCursor::new();
            let mut matches = cursor.matches(query, tree.root_node(), src.as_bytes());
            while let Some(m) = matches.next() {
                let Some(node) = m.captures().iter().map(|c| c.node).min_by_key(|n| n.start_byte()) else {
                    continue;
                };
                let (start, end) = (node.start_position().row, node.end_position().row);
                let in_rows = |r: usize| rows.0 <= r && r <= rows.1;
                if (in_rows(start) || in_rows(end)) && s.test.is_none_or(|t| t(node, src)) {
                    return true;
                }
            }
            false
        })
    })
}

/// Whether `concept`'s syntax starts or ends on a row of `rows` (0-based, inclusive) of `tree`,
/// parsed from `src` by `grammar`; `None` when the table does not know the concept.
pub fn shown_in(concept: &str, grammar: Grammar, tree: &Tree, src: &str, rows: (usize, usize)) -> Option<bool> {
    Some(shown(entry_of(concept)?, grammar, tree, src, rows))
}

/// Why `concept` may not be named over rows `rows` of `src` (read by `grammar`): its syntax
/// is not there. `None` when it is, or when the table does not know the concept.
pub fn missing_in(concept: &str, grammar: Grammar, src: &str, rows: (usize, usize)) -> Option<String> {
    let found = entry_of(concept)?;
    let syntax = found.1;
    if !syntax.shapes.iter().any(|s| s.grammars.contains(&grammar)) {
        return Some(format!("{concept} needs {}, which {grammar:?} code does not have", syntax.what));
    }
    let tree = parse(grammar, src)?;
    (!shown(found, grammar, &tree, src, rows)).then(|| format!("{concept} needs {} in the code shown", syntax.what))
}

/// The rule over a question: where it cites a code file, the concept's syntax is in the cited
/// lines; where it shows a snippet of no file (a catalogue example), in the snippet read as the
/// session's language; where it shows no code, the session's languages have that syntax.
pub fn question_problem(q: &GeneratedQuestion, files: &[SourceFile]) -> Option<String> {
    let found = entry_of(&q.concept)?;
    if let Some(g) = &q.grounding {
        // A failed command's output is cited like a file, but it is no code.
        let lang = lang_for_path(&g.file)?;
        let file = files.iter().find(|f| f.path == g.file)?;
        let grammar = Grammar::for_file(lang, &file.path);
        let rows = (g.line_start.saturating_sub(1) as usize, g.line_end.saturating_sub(1) as usize);
        return missing_in(&q.concept, grammar, &file.content, rows);
    }
    let grammars: Vec<Grammar> =
        files.iter().filter_map(|f| lang_for_path(&f.path).map(|l| Grammar::for_file(l, &f.path))).collect();
    let first = *grammars.first()?;
    match q.snippet.as_deref().filter(|s| !s.trim().is_empty()) {
        Some(snippet) => missing_in(&q.concept, first, snippet, (0, usize::MAX)),
        None => {
            let any = grammars.iter().any(|g| found.1.shapes.iter().any(|s| s.grammars.contains(g)));
            (!any).then(|| format!("{} needs {}, which this session's languages do not have", q.concept, found.1.what))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_compiles_for_each_of_its_grammars() {
        for syntax in TABLE {
            assert!(catalogue::find(syntax.concept).is_some_and(|e| e.name == syntax.concept), "{}", syntax.concept);
            for s in syntax.shapes {
                for &g in s.grammars {
                    Query::new(&g.language(), s.query).unwrap_or_else(|e| panic!("{} {g:?}: {e}", syntax.concept));
                }
            }
        }
    }

    fn missing(concept: &str, grammar: Grammar, src: &str) -> Option<String> {
        missing_in(concept, grammar, src, (0, usize::MAX))
    }

    #[test]
    fn generics_needs_a_type_parameter_not_the_word_generic() {
        // Issue 40: a function whose only `generic` is in a `cfg` name.
        let cfg = "#[cfg(feature = \"generic-array\")]\npub fn width(n: usize) -> usize {\n    n * 2\n}\n";
        assert!(missing("Generics", Rust, cfg).is_some());
        assert_eq!(missing("Generics", Rust, "fn first<T: Clone>(xs: &[T]) -> T {\n    xs[0].clone()\n}\n"), None);
        assert_eq!(missing("Generics", Go, "package a\nfunc Map[T any](xs []T) []T { return xs }\n"), None);
        assert_eq!(missing("Generics", TypeScript, "function id<T>(x: T): T { return x; }\n"), None);
        assert_eq!(missing("Generics", Python, "from typing import TypeVar\nT = TypeVar(\"T\")\n"), None);
        assert!(missing("Generics", TypeScript, "function id(x: string): string { return x; }\n").is_some());
    }

    #[test]
    fn result_and_question_mark_needs_a_question_mark_in_a_function_returning_result() {
        let result = "fn read(p: &str) -> io::Result<String> {\n    let s = fs::read_to_string(p)?;\n    Ok(s)\n}\n";
        assert_eq!(missing("Result and the ? operator", Rust, result), None);
        // Issue 40: `?` on an Option inside `Iterator::next`.
        let next = "impl Iterator for Words<'_> {\n    type Item = String;\n    fn next(&mut self) -> Option<String> {\n        let w = self.rest.pop()?;\n        Some(w)\n    }\n}\n";
        assert!(missing("Result and the ? operator", Rust, next).is_some());
    }

    #[test]
    fn goroutines_and_promises_need_their_own_statements() {
        let go = "package a\nfunc Run(jobs chan int) {\n\tgo worker(jobs)\n\tjobs <- 1\n}\n";
        assert_eq!(missing("Goroutines", Go, go), None);
        assert!(missing("Goroutines", Go, "package a\nfunc Run() {\n\tworker()\n}\n").is_some());
        // Issue 40: "Concurrent promises and joins" on Go goroutines: Go has no such syntax.
        let refused = missing("Concurrent promises and joins", Go, go).expect("refused");
        assert!(refused.contains("Go code does not have"), "{refused}");
        let all = "const [a, b] = await Promise.all([f(), g()]);\n";
        assert_eq!(missing("Concurrent promises and joins", TypeScript, all), None);
        assert_eq!(
            missing("Concurrent tasks with asyncio.gather", Python, "r = await asyncio.gather(a(), b())\n"),
            None
        );
    }

    #[test]
    fn classes_need_a_class_and_a_rust_trait_impl_is_none() {
        // Issue 40: "Classes and encapsulation" on a Rust formatting newtype.
        let newtype = "struct Quoted<C>(C);\n\nimpl<C: Display> Display for Quoted<C> {\n    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {\n        write!(f, \"'{}'\", self.0)\n    }\n}\n";
        assert!(missing("Classes and encapsulation", Rust, newtype).is_some());
        let inherent = "pub struct Account {\n    balance: u64,\n}\n\nimpl Account {\n    pub fn balance(&self) -> u64 {\n        self.balance\n    }\n}\n";
        assert_eq!(missing("Classes and encapsulation", Rust, inherent), None);
        assert_eq!(missing("Classes and encapsulation", Python, "class A:\n    pass\n"), None);
    }

    #[test]
    fn table_driven_tests_need_a_table() {
        // Issue 40: a list of `expect()` calls is no table.
        let expects = "it(\"parses\", () => {\n  expect(parse(\"1\")).toBe(1);\n  expect(parse(\"2\")).toBe(2);\n});\n";
        assert!(missing("Table-driven tests", TypeScript, expects).is_some());
        let each = "it.each([[\"1\", 1], [\"2\", 2]])(\"parses %s\", (s, n) => {\n  expect(parse(s)).toBe(n);\n});\n";
        assert_eq!(missing("Table-driven tests", TypeScript, each), None);
        let go = "package a\nfunc TestParse(t *testing.T) {\n\tcases := []struct {\n\t\tin   string\n\t\twant int\n\t}{\n\t\t{\"1\", 1},\n\t\t{\"2\", 2},\n\t}\n\tfor _, tc := range cases {\n\t\t_ = tc\n\t}\n}\n";
        assert_eq!(missing("Table-driven tests", Go, go), None);
        let py = "@pytest.mark.parametrize(\"s,n\", [(\"1\", 1)])\ndef test_parse(s, n):\n    assert parse(s) == n\n";
        assert_eq!(missing("Table-driven tests", Python, py), None);
    }

    #[test]
    fn async_await_is_seen_in_each_grammar() {
        assert_eq!(missing("Async/await", Python, "async def f():\n    return 1\n"), None);
        assert_eq!(missing("Async/await", Python, "def f():\n    return await g()\n"), None);
        assert_eq!(missing("Async/await", TypeScript, "const f = async () => 1;\n"), None);
        assert_eq!(missing("Async/await", Rust, "async fn f() -> u8 {\n    1\n}\n"), None);
        assert!(missing("Async/await", Python, "def f():\n    return 1\n").is_some());
    }

    #[test]
    fn only_the_rows_shown_count() {
        let src = "fn a<T>(x: T) -> T {\n    x\n}\n\nfn b(x: u8) -> u8 {\n    x\n}\n";
        assert_eq!(missing_in("Generics", Rust, src, (0, 2)), None);
        assert!(missing_in("Generics", Rust, src, (4, 6)).is_some());
    }
}
