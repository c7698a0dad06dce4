//! The real grammars (tree-sitter) behind snippets and concept detection: which grammar reads
//! a file, and one parse of it. Everything that needs to know where a statement, an item or a
//! comment begins and ends asks the tree this module gives, not a heuristic over lines.
//!
//! # Cost
//! A parser is made once per thread and grammar and reused (`PARSERS`); a parse is linear in
//! the file. Files larger than `MAX_PARSE_BYTES` are not parsed (a generated or minified file
//! teaches nothing), and a parse is abandoned after `PARSE_BUDGET` so one pathological file
//! cannot hold an analysis job. The hook never calls into this module.

use super::lang::Lang;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};
use tree_sitter::{Language, ParseOptions, Parser};
pub use tree_sitter::{Node, Tree};

/// Largest file parsed, in bytes.
pub const MAX_PARSE_BYTES: usize = 2 * 1024 * 1024;
/// Longest one parse may run before it is abandoned.
pub const PARSE_BUDGET: Duration = Duration::from_secs(2);

/// The grammars we ship. TypeScript has two: a `.tsx` file is read by the TSX grammar (JSX
/// inside TypeScript), every other TypeScript file by the plain one, where `<T>x` is a cast.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Grammar {
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Rust,
    Java,
    Ruby,
    CSharp,
}

impl Grammar {
    /// The grammar that reads a file of `lang` at `path`.
    pub fn for_file(lang: Lang, path: &str) -> Grammar {
        match lang {
            Lang::TypeScript if path.to_ascii_lowercase().ends_with(".tsx") => Grammar::Tsx,
            Lang::TypeScript => Grammar::TypeScript,
            Lang::JavaScript => Grammar::JavaScript,
            Lang::Python => Grammar::Python,
            Lang::Go => Grammar::Go,
            Lang::Rust => Grammar::Rust,
            Lang::Java => Grammar::Java,
            Lang::Ruby => Grammar::Ruby,
            Lang::CSharp => Grammar::CSharp,
        }
    }

    /// The tree-sitter language of this grammar.
    pub fn language(self) -> Language {
        match self {
            Grammar::Python => tree_sitter_python::LANGUAGE.into(),
            Grammar::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Grammar::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Grammar::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Grammar::Go => tree_sitter_go::LANGUAGE.into(),
            Grammar::Rust => tree_sitter_rust::LANGUAGE.into(),
            Grammar::Java => tree_sitter_java::LANGUAGE.into(),
            Grammar::Ruby => tree_sitter_ruby::LANGUAGE.into(),
            Grammar::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
        }
    }
}

thread_local! {
    /// One parser per grammar on this thread, made on first use.
    static PARSERS: RefCell<HashMap<Grammar, Parser>> = RefCell::new(HashMap::new());
}

/// The syntax tree of `src`, read by `grammar`; `None` when the file is over
/// `MAX_PARSE_BYTES` or its parse ran past `PARSE_BUDGET`. A file with syntax errors still
/// gets a tree (with `ERROR` nodes where the grammar could not follow).
pub fn parse(grammar: Grammar, src: &str) -> Option<Tree> {
    if src.len() > MAX_PARSE_BYTES {
        return None;
    }
    PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        let parser = match parsers.entry(grammar) {
            std::collections::hash_map::Entry::Occupied(slot) => slot.into_mut(),
            std::collections::hash_map::Entry::Vacant(slot) => {
                let mut parser = Parser::new();
                // A grammar's ABI is checked against the runtime's here; the versions are
                // pinned in Cargo.toml and a mismatch fails every test that parses.
                parser.set_language(&grammar.language()).ok()?;
                slot.insert(parser)
            }
        };
        let started = Instant::now();
        let mut past_budget = |_: &tree_sitter::ParseState| {
            if started.elapsed() > PARSE_BUDGET { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        };
        let options = ParseOptions::new().progress_callback(&mut past_budget);
        let tree =
            parser.parse_with_options(&mut |at, _| src.as_bytes().get(at..).unwrap_or_default(), None, Some(options));
        if tree.is_none() {
            // An abandoned parse leaves the parser mid-document; the next parse starts afresh.
            parser.reset();
        }
        tree
    })
}

/// The tree of a file at `path`, when its language is one we read.
pub fn parse_file(path: &str, src: &str) -> Option<(Grammar, Tree)> {
    let lang = super::lang::lang_for_path(path)?;
    let grammar = Grammar::for_file(lang, path);
    Some((grammar, parse(grammar, src)?))
}

/// Whether `node` is a comment (`comment`, `line_comment`, `block_comment`, every grammar's
/// spelling).
pub fn is_comment(node: Node<'_>) -> bool {
    node.kind().contains("comment")
}

/// Node kinds that are string (or character, regex, heredoc) literals, in every grammar:
/// masking blanks what is between their delimiters, interpolations included.
const STRING_KINDS: [&str; 17] = [
    "string",
    "template_string",
    "string_literal",
    "raw_string_literal",
    "interpreted_string_literal",
    "rune_literal",
    "char_literal",
    "character_literal",
    "verbatim_string_literal",
    "interpolated_string_expression",
    "text_block",
    "heredoc_body",
    "string_array",
    "symbol_array",
    "regex",
    "subshell",
    "delimited_symbol",
];

/// Whether `node` is a string literal (see `STRING_KINDS`).
pub fn is_string(node: Node<'_>) -> bool {
    STRING_KINDS.contains(&node.kind())
}

/// `src` with every comment blanked whole and every string literal's contents blanked (its
/// delimiters stay: `"`, `"""`, `r#"`, a backtick), as the tree reads them; same byte length
/// and the same line breaks, so an offset or a line found in the masked text holds in `src`.
pub fn mask_comments_and_strings(tree: &Tree, src: &str) -> String {
    mask(tree, src, true)
}

/// `src` with every comment blanked whole and string literals left as written (for a token
/// that lives in strings, such as a format verb): same byte length and line breaks.
pub fn mask_comments(tree: &Tree, src: &str) -> String {
    mask(tree, src, false)
}

/// Blanks comments, and string contents when `strings`; a string is not entered either way,
/// so a `//` inside one is no comment.
fn mask(tree: &Tree, src: &str, strings: bool) -> String {
    let mut ranges = Vec::new();
    let mut cursor = tree.walk();
    'walk: loop {
        let node = cursor.node();
        let masked = if is_comment(node) {
            ranges.push(node.byte_range());
            true
        } else if is_string(node) {
            if strings {
                ranges.push(string_contents(node, src));
            }
            true
        } else {
            false
        };
        if !masked && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    let mut bytes = src.as_bytes().to_vec();
    for range in ranges {
        // Widened to whole characters, so the result stays UTF-8 of the same length.
        let mut start = range.start.min(src.len());
        while !src.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = range.end.clamp(start, src.len());
        while !src.is_char_boundary(end) {
            end += 1;
        }
        for b in &mut bytes[start..end] {
            if *b != b'\n' && *b != b'\r' {
                *b = b' ';
            }
        }
    }
    String::from_utf8(bytes).unwrap_or_else(|_| src.to_string())
}

/// The byte range of a string literal's contents: between the runs of delimiter children at
/// its ends when it has them (`"` … `"`, Python's `string_start` … `string_end`), else
/// between its first quote and the last of the same quote (`'a'`, `@"x"`, Rust's `r#"…"#`,
/// whose delimiters the grammar keeps hidden); a heredoc's body up to its terminator; a
/// regex's pattern (its flags stay).
fn string_contents(node: Node<'_>, src: &str) -> std::ops::Range<usize> {
    let range = node.byte_range();
    let n = node.child_count();
    if let Some(pattern) = node.child_by_field_name("pattern").filter(|_| node.kind() == "regex") {
        // A JavaScript regex: its flags after the closing `/` are code.
        return pattern.byte_range();
    }
    if node.kind() == "heredoc_body" {
        let end = node.child(n.saturating_sub(1)).filter(|c| c.kind() == "heredoc_end");
        return range.start..end.map_or(range.end, |c| c.start_byte());
    }
    if n >= 2 {
        // The delimiters: the runs of anonymous tokens (or `string_start`/`string_end`) at
        // either end (`r`, `#`, `"` of a raw string may be three).
        let delimiter = |c: &Node<'_>| !c.is_named() || c.kind().ends_with("_start") || c.kind().ends_with("_end");
        let children: Vec<Node<'_>> = (0..n).filter_map(|i| node.child(i)).collect();
        let head = children.iter().take_while(|c| delimiter(c)).count().clamp(1, children.len() - 1);
        let tail = children[head..].iter().rev().take_while(|c| delimiter(c)).count().max(1);
        let first = children[head - 1].end_byte();
        let last = children[children.len() - tail].start_byte().max(first);
        return first..last;
    }
    let text = src.get(range.clone()).unwrap_or("");
    // Between the first quote and the last of the same quote (`r#"…"#`, `'a'`, `@"x"`).
    let Some(open) = text.find(['"', '\'', '`', '/', '[', '(', '{', '<']) else { return range.start..range.start };
    let quote = text[open..].chars().next().unwrap_or('"');
    let closer = match quote {
        '[' => ']',
        '(' => ')',
        '{' => '}',
        '<' => '>',
        q => q,
    };
    match text.rfind(closer) {
        Some(close) if close > open => range.start + open + 1..range.start + close,
        _ => range.start + open + 1..range.end.max(range.start + open + 1),
    }
}

/// The name stored in `Pattern::language` for a file read by `grammar` (both TypeScript
/// grammars are "typescript").
pub fn language_name(grammar: Grammar) -> &'static str {
    match grammar {
        Grammar::Python => "python",
        Grammar::JavaScript => "javascript",
        Grammar::TypeScript | Grammar::Tsx => "typescript",
        Grammar::Go => "go",
        Grammar::Rust => "rust",
        Grammar::Java => "java",
        Grammar::Ruby => "ruby",
        Grammar::CSharp => "csharp",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grammar_loads_and_reads_a_file_of_its_language() {
        let cases = [
            ("a.py", "def f(x):\n    return x\n", "function_definition"),
            ("a.js", "function f(x) { return x; }\n", "function_declaration"),
            ("a.ts", "function f<T>(x: T): T { return x; }\n", "function_declaration"),
            ("a.tsx", "const A = () => <div>{1}</div>;\n", "lexical_declaration"),
            ("a.go", "package a\nfunc F() {}\n", "function_declaration"),
            ("a.rs", "fn f() {}\n", "function_item"),
            ("A.java", "class A { void f() {} }\n", "class_declaration"),
            ("a.rb", "def f\nend\n", "method"),
            ("a.cs", "class A { void F() {} }\n", "class_declaration"),
        ];
        for (path, src, first_kind) in cases {
            let (_, tree) = parse_file(path, src).unwrap_or_else(|| panic!("{path} did not parse"));
            let root = tree.root_node();
            assert!(!root.has_error(), "{path}: {}", root.to_sexp());
            let kinds: Vec<_> =
                (0..root.named_child_count()).filter_map(|i| root.named_child(i as u32)).map(|n| n.kind()).collect();
            assert!(kinds.contains(&first_kind), "{path}: {kinds:?}");
        }
    }

    #[test]
    fn a_file_past_the_size_bound_is_not_parsed() {
        let big = "x = 1\n".repeat(MAX_PARSE_BYTES / 6 + 1);
        assert!(parse(Grammar::Python, &big).is_none());
        assert!(parse(Grammar::Python, "x = 1\n").is_some());
    }

    /// Comments go whole, strings keep their delimiters and lose their contents (an
    /// interpolation with them), in every grammar; lengths and line breaks are kept.
    #[test]
    fn masking_blanks_comments_and_string_contents_from_the_tree() {
        let cases = [
            (
                "a.py",
                "x = f\"a {b}\"  # await\ny = '''doc\nawait'''\n",
                "x = f\"     \"         \ny = '''   \n     '''\n",
            ),
            (
                "a.ts",
                "const q = `a ${b}`; // await\nconst r = \"await\";\n",
                "const q = `      `;         \nconst r = \"     \";\n",
            ),
            ("a.go", "s := `raw` /* await */\nr := 'x'\n", "s := `   `            \nr := ' '\n"),
            (
                "a.rs",
                "let s = r#\"await\"#; // await\nlet c = 'a';\n",
                "let s = r#\"     \"#;         \nlet c = ' ';\n",
            ),
            ("a.rb", "x = \"a #{b}\" # await\n", "x = \"      \"        \n"),
            (
                "A.cs",
                "var s = $\"a {b}\"; // await\nvar v = @\"await\";\n",
                "var s = $\"     \";         \nvar v = @\"     \";\n",
            ),
            ("A.java", "String s = \"await\"; /* await */\n", "String s = \"     \";            \n"),
        ];
        for (path, src, want) in cases {
            let (_, tree) = parse_file(path, src).unwrap_or_else(|| panic!("{path} did not parse"));
            let masked = mask_comments_and_strings(&tree, src);
            assert_eq!(masked.len(), src.len(), "{path}");
            assert_eq!(masked, want, "{path}");
        }
    }

    /// `path` masked both ways, checked to keep the byte length and every line break.
    fn masked(path: &str, src: &str) -> (String, String) {
        let (_, tree) = parse_file(path, src).unwrap_or_else(|| panic!("{path} did not parse"));
        let both = (mask_comments_and_strings(&tree, src), mask_comments(&tree, src));
        let breaks = |s: &str| s.match_indices(['\n', '\r']).map(|(i, _)| i).collect::<Vec<_>>();
        for out in [&both.0, &both.1] {
            assert_eq!(out.len(), src.len(), "byte length changed for {path}: {src:?}");
            assert_eq!(breaks(out), breaks(src), "line breaks moved for {path}: {src:?}");
        }
        both
    }

    #[test]
    fn masking_comments_alone_keeps_strings_as_written() {
        let src = "package a\n\n// wrap with %w\nvar e = fmt.Errorf(\"load: %w\", err) // done\n";
        let (all, comments) = masked("a.go", src);
        assert_eq!(comments, "package a\n\n               \nvar e = fmt.Errorf(\"load: %w\", err)        \n");
        assert!(!all.contains("%w"), "{all}");
    }

    /// What a hand-written lexer had to guess, the grammar knows: a regex from a division, a
    /// lifetime from a char, a nested block comment, a docstring.
    #[test]
    fn masking_reads_regexes_lifetimes_nested_comments_and_docstrings() {
        assert_eq!(masked("a.js", "x = a / b; y = c / d;\n").0, "x = a / b; y = c / d;\n");
        assert_eq!(masked("a.js", "s.replace(/'/g, '');\n").0, "s.replace(/ /g, '');\n");
        let rust = "fn f<'a>(x: &'a str) -> char { 'x' }\n/* a /* b */ c */ fn g() {}\n";
        assert_eq!(masked("a.rs", rust).0, "fn f<'a>(x: &'a str) -> char { ' ' }\n                  fn g() {}\n");
        let py = "def f():\n    \"\"\"Doc with 'quote'\n    await x\"\"\"\n    return '''a'''\n";
        let out = masked("a.py", py).0;
        assert!(!out.contains("await") && !out.contains("Doc"), "{out}");
        assert!(out.contains("\"\"\"") && out.contains("return '''") && out.contains("def f():"), "{out}");
    }

    #[test]
    fn masking_multibyte_text_and_broken_code_keeps_length_and_never_panics() {
        let (out, _) = masked("a.ts", "// héllo ✓\r\nlet s = \"日本\"; let c = 'é';\n");
        assert_eq!(out, format!("{}\r\nlet s = \"      \"; let c = '  ';\n", " ".repeat("// héllo ✓".len())));
        let broken = ["'", "\"", "`", "/*", "r#\"", "<<~X\n", "=begin", "%w[", "$\"{", "'\\", "b'", "'é", "\"\"\"é"];
        for src in broken {
            for path in ["a.ts", "a.js", "a.py", "a.go", "a.rs", "a.rb", "A.cs", "A.java", "a.tsx"] {
                masked(path, src);
            }
        }
    }
}
