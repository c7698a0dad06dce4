//! The engine's own bounds: snippets, caps, dedupe, noise, size and time.

use super::super::{MAX_PER_TYPE, SNIPPET_LINE_MAX, SNIPPET_MAX_LINES, analyze_file, analyze_files};
use crate::analysis::model::SourceFile;

fn file(path: &str, content: &str) -> SourceFile {
    SourceFile::new(path, content)
}

#[test]
fn raw_sql_in_strings_only() {
    let f = analyze_file(&file("a.py", "q = \"SELECT * FROM users\"\n# SELECT * FROM admins\n"));
    assert!(f.iter().any(|p| p.pattern_type == "db_query" && p.name == "SELECT users"), "{f:?}");
    assert!(!f.iter().any(|p| p.name == "SELECT admins"));
}

#[test]
fn snippet_is_the_statement_holding_the_node_and_the_line_is_one_based() {
    // The old rules showed the match line ±2; the snippet is now the statement itself.
    let src = "a;\nb;\n// c\nconst x = await fetchUser(id); // note\nd;\ne;\nf;";
    let p = analyze_file(&file("a.ts", src));
    let aw = p.iter().find(|p| p.pattern_type == "await").expect("await found");
    assert_eq!(aw.line, 4);
    assert_eq!(aw.snippet, "const x = await fetchUser(id);");
    assert_eq!(aw.language, "typescript");
}

#[test]
fn an_item_snippet_keeps_its_attributes_and_is_cut_to_a_few_lines() {
    let fields: String = (0..30).map(|i| format!("    f{i}: u8,\n")).collect();
    let src = format!("#[derive(Debug)]\npub struct Wide {{\n{fields}}}\n");
    let p = analyze_file(&file("a.rs", &src));
    let s = p.iter().find(|p| p.pattern_type == "struct").expect("struct found");
    assert_eq!(s.line, 2);
    assert!(s.snippet.starts_with("#[derive(Debug)]\npub struct Wide {"), "{}", s.snippet);
    assert_eq!(s.snippet.lines().count(), SNIPPET_MAX_LINES);
}

#[test]
fn a_deep_node_in_a_long_statement_is_in_its_snippet() {
    let lines: String = (0..20).map(|i| format!("  a{i}: 1,\n")).collect();
    let src = format!("const config = {{\n{lines}  load: async () => await fetchConfig(),\n}};\n");
    let p = analyze_file(&file("a.js", &src));
    let aw = p.iter().find(|p| p.pattern_type == "await").expect("await found");
    assert!(aw.snippet.contains("await fetchConfig()"), "{}", aw.snippet);
}

#[test]
fn caps_and_dedupe_bound_output() {
    let mut src = String::new();
    for i in 0..500 {
        src.push_str(&format!("async function f{i}() {{ await g(); }}\n"));
    }
    let p = analyze_file(&file("big.js", &src));
    assert_eq!(p.iter().filter(|p| p.pattern_type == "async_function").count(), MAX_PER_TYPE);
    assert_eq!(p.iter().filter(|p| p.pattern_type == "await").count(), 1);
}

#[test]
fn patterns_are_in_line_order() {
    let p = analyze_file(&file("a.go", "package a\nfunc f() {\n\tgo work()\n\tdefer done()\n\tch <- 1\n}\n"));
    let lines: Vec<u32> = p.iter().map(|p| p.line).collect();
    let mut sorted = lines.clone();
    sorted.sort_unstable();
    assert_eq!(lines, sorted);
}

#[test]
fn random_input_never_panics() {
    // Deterministic noise over the bytes the grammars care about, plus multi-byte chars next to
    // them (a slice at a wrong offset would panic on those).
    const ALPHABET: &[&str] = &[
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        "<",
        ">",
        "'",
        "\"",
        "`",
        "/",
        "*",
        "#",
        "|",
        "?",
        "!",
        ":",
        ";",
        ",",
        ".",
        "=",
        "@",
        "$",
        "%",
        "\\",
        "\n",
        " ",
        "\t",
        "é",
        "日",
        "✓",
        "a",
        "Z",
        "_",
        "r",
        "b",
        "use",
        "async ",
        "await ",
        "fn ",
        "def ",
        "func ",
        "go ",
        "class ",
        "try",
        "<<~X",
        "=begin",
        "=end",
        "=>",
        "->",
        "::",
        "r#\"",
        "\"#",
        "'''",
        "${",
        "#{",
        "do |",
        "@app.get(",
        ".route(",
        "#[derive(",
        "impl ",
        " for ",
        "select {",
        "<-",
        "defer ",
        "with ",
        "yield ",
        "?",
        "SELECT * FROM t",
    ];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for round in 0..300 {
        let mut src = String::new();
        for _ in 0..(round % 60 + 1) {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            src.push_str(ALPHABET[(seed >> 33) as usize % ALPHABET.len()]);
        }
        for ext in ["ts", "tsx", "js", "py", "go", "rs", "rb", "cs", "java"] {
            for p in analyze_file(&file(&format!("x/a.{ext}"), &src)) {
                assert!(p.line >= 1 && p.snippet.lines().count() <= SNIPPET_MAX_LINES);
            }
        }
    }
}

#[test]
fn unknown_languages_and_empty_input() {
    assert!(analyze_files(&[]).is_empty());
    assert!(analyze_files(&[file("README.md", "useState(")]).is_empty());
    assert!(analyze_files(&[file("a.ts", "")]).is_empty());
}

#[test]
fn long_minified_line_is_fast_and_snippet_is_cut() {
    let line = "var a=function(){return x.map(y=>y+1)};".repeat(50_000);
    let start = std::time::Instant::now();
    let p = analyze_file(&file("min.js", &line));
    // In a debug build the parse of these 2 MB may run past `syntax::PARSE_BUDGET` and report
    // nothing; in a release build it reports patterns. Either way it is bounded.
    assert!(start.elapsed().as_secs() < 10);
    assert!(p.iter().all(|p| p.snippet.len() <= SNIPPET_LINE_MAX));
}

#[test]
fn large_input_is_linear() {
    // ~1.2 MB over three languages, each file well inside the parse budget of a debug build
    // (a debug tree-sitter parses ~0.5 MB/s on this machine); the bound is generous.
    let ts = "export async function GET(req: Request) {\n  try { const u = await prisma.user.findMany(); return Response.json(u.map((x) => x.id)); } catch (e) { return null; }\n}\n";
    let py = "@app.get(\"/x\")\nasync def x():\n    try:\n        return await db.fetch()\n    except Exception:\n        pass\n";
    let go = "func h() {\n\tgo work(ch)\n\tif err != nil {\n\t\treturn err\n\t}\n}\n";
    let files = vec![file("a.ts", &ts.repeat(2_500)), file("a.py", &py.repeat(3_500)), file("a.go", &go.repeat(7_000))];
    let total: usize = files.iter().map(|f| f.content.len()).sum();
    assert!(total > 1_000_000, "{total}");
    let start = std::time::Instant::now();
    let p = analyze_files(&files);
    for language in ["typescript", "python", "go"] {
        assert!(p.iter().any(|p| p.language == language), "{language}: {p:?}");
    }
    assert!(start.elapsed().as_secs() < 30, "took {:?}", start.elapsed());
}
