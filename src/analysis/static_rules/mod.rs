//! Static pattern detection (SPEC §6.2): turns the latest content of each captured file into
//! `Pattern`s (a React hook, an API route, a goroutine …) for concept extraction to build on.
//!
//! # Shape
//! `analyze_files` picks the language from the extension, masks comments and strings with
//! `lexer` (so commented-out code and text inside strings never match), and hands a `FileCtx`
//! to that language's rules (`typescript`, `python`, `go`, `rust`, `ruby`, `csharp`, `java`).
//! Rules search the masked text, one line at a time, with the small matchers in `text`; the
//! snippet (the match line ±2) always comes from the original text. Two detections read string
//! contents on purpose: JavaScript directives (`"use client"`) and raw SQL (`raw_sql` here,
//! shared by every language).
//!
//! # Output bounds
//! A file reports each (pattern_type, name) once, at its first occurrence: ten `useState`
//! calls teach one concept. At most `MAX_PER_TYPE` patterns of a type per file and snippet
//! lines cut at `SNIPPET_LINE_MAX` bytes, so a generated or minified file cannot flood the
//! session. Every rule is a bounded scan of one line (a few lines of look-ahead at most), so a
//! file costs O(size × number of rules). Measured (release build, this project's 2-core
//! machine, `examples/perf.rs` in the scratch crate): 0.3–0.5 s per 10 MB file in every language,
//! 0.75 s for a 10 MB single-line minified bundle.

mod csharp;
mod go;
mod java;
mod python;
mod ruby;
mod rust;
pub(crate) mod text;
mod typescript;

use super::lexer::{self, Lang, Literal, LiteralKind};
use super::model::{Pattern, SourceFile};
use std::collections::{HashMap, HashSet};

/// Most patterns of one type reported for one file.
pub const MAX_PER_TYPE: usize = 20;
/// Longest snippet line kept, in bytes; a minified bundle is one huge line.
pub const SNIPPET_LINE_MAX: usize = 200;
/// Lines of context on each side of the match in a snippet.
const SNIPPET_CONTEXT: usize = 2;

/// Patterns of every file whose language is supported, in file order, each file's patterns in
/// line order. Files of other languages are skipped.
pub fn analyze_files(files: &[SourceFile]) -> Vec<Pattern> {
    files.iter().flat_map(analyze_file).collect()
}

/// Patterns of one file (empty when the language is not supported).
pub fn analyze_file(file: &SourceFile) -> Vec<Pattern> {
    let Some(lang) = lexer::lang_for_path(&file.path) else {
        return Vec::new();
    };
    let ctx = FileCtx::new(&file.path, &file.content, lang);
    let mut sink = Sink::new(&ctx);
    match lang {
        Lang::TypeScript | Lang::JavaScript => typescript::scan(&ctx, &mut sink),
        Lang::Python => python::scan(&ctx, &mut sink),
        Lang::Go => go::scan(&ctx, &mut sink),
        Lang::Rust => rust::scan(&ctx, &mut sink),
        Lang::Ruby => ruby::scan(&ctx, &mut sink),
        Lang::CSharp => csharp::scan(&ctx, &mut sink),
        Lang::Java => java::scan(&ctx, &mut sink),
    }
    raw_sql(&ctx, &mut sink);
    sink.finish()
}

/// One file prepared for the rules: original and masked text with a shared line index.
pub(crate) struct FileCtx<'a> {
    pub path: &'a str,
    pub lang: Lang,
    pub original: &'a str,
    pub masked: String,
    pub literals: Vec<Literal>,
    /// Byte offset of the start of each line (valid in both texts: masking keeps offsets).
    line_starts: Vec<usize>,
}

impl<'a> FileCtx<'a> {
    pub fn new(path: &'a str, original: &'a str, lang: Lang) -> Self {
        let literals = lexer::literals(original, lang);
        let masked = lexer::mask(original, &literals);
        let mut line_starts = vec![0];
        line_starts.extend(original.match_indices('\n').map(|(i, _)| i + 1));
        FileCtx { path, lang, original, masked, literals, line_starts }
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    fn line_range(&self, i: usize) -> (usize, usize) {
        let start = self.line_starts.get(i).copied().unwrap_or(self.original.len());
        let mut end = self.line_starts.get(i + 1).map_or(self.original.len(), |e| e - 1);
        if end > start && self.original.as_bytes()[end - 1] == b'\r' {
            end -= 1;
        }
        (start, end.max(start))
    }

    /// Masked text of line `i` (0-based), without its line break.
    pub fn masked_line(&self, i: usize) -> &str {
        let (s, e) = self.line_range(i);
        self.masked.get(s..e).unwrap_or("")
    }

    /// Original text of line `i` (0-based), without its line break.
    pub fn original_line(&self, i: usize) -> &str {
        let (s, e) = self.line_range(i);
        self.original.get(s..e).unwrap_or("")
    }

    /// Masked lines with their 0-based index.
    pub fn lines(&self) -> impl Iterator<Item = (usize, &str)> {
        (0..self.line_count()).map(|i| (i, self.masked_line(i)))
    }

    /// 0-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= offset).saturating_sub(1)
    }

    /// The original contents of the string literal whose opening quote is at byte `col` of
    /// line `i` (after spaces), or `None` when no string starts there. A string that does not
    /// close on this line yields what is on this line.
    pub fn string_at(&self, i: usize, col: usize) -> Option<&str> {
        let m = self.masked_line(i);
        let col = text::skip_spaces(m, col);
        let q = *m.as_bytes().get(col)?;
        if !matches!(q, b'"' | b'\'' | b'`') {
            return None;
        }
        let close = m.as_bytes()[col + 1..].iter().position(|&c| c == q).map_or(m.len(), |p| col + 1 + p);
        self.original_line(i).get(col + 1..close)
    }
}

/// Collects one file's patterns, with the dedupe and caps described in the module doc.
pub(crate) struct Sink<'a> {
    ctx: &'a FileCtx<'a>,
    out: Vec<Pattern>,
    seen: HashSet<(&'static str, String)>,
    per_type: HashMap<&'static str, usize>,
}

impl<'a> Sink<'a> {
    pub fn new(ctx: &'a FileCtx<'a>) -> Self {
        Sink { ctx, out: Vec::new(), seen: HashSet::new(), per_type: HashMap::new() }
    }

    /// Records `pattern_type`/`name` at 0-based `line` unless it is a repeat or over the cap.
    pub fn emit(&mut self, pattern_type: &'static str, name: &str, line: usize) {
        let name = truncate(name.trim(), 120);
        if name.is_empty() {
            return;
        }
        let count = self.per_type.entry(pattern_type).or_insert(0);
        if *count >= MAX_PER_TYPE || !self.seen.insert((pattern_type, name.to_string())) {
            return;
        }
        *count += 1;
        self.out.push(Pattern {
            pattern_type: pattern_type.to_string(),
            name: name.to_string(),
            file: self.ctx.path.to_string(),
            line: u32::try_from(line + 1).unwrap_or(u32::MAX),
            snippet: self.snippet(line),
            language: self.ctx.lang.as_str().to_string(),
        });
    }

    fn snippet(&self, line: usize) -> String {
        let first = line.saturating_sub(SNIPPET_CONTEXT);
        let last = (line + SNIPPET_CONTEXT).min(self.ctx.line_count().saturating_sub(1));
        let lines: Vec<&str> = (first..=last).map(|i| truncate(self.ctx.original_line(i), SNIPPET_LINE_MAX)).collect();
        lines.join("\n")
    }

    pub fn finish(mut self) -> Vec<Pattern> {
        // Stable: patterns found on one line keep their rule order.
        self.out.sort_by_key(|p| p.line);
        self.out
    }
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

/// Raw SQL in string literals, in every language: this rule reads string contents on purpose.
fn raw_sql(ctx: &FileCtx, sink: &mut Sink) {
    for lit in ctx.literals.iter().filter(|l| l.kind == LiteralKind::Str) {
        let Some(body) = ctx.original.get(lit.start..lit.end) else {
            continue;
        };
        if let Some(name) = sql_statement(body) {
            sink.emit("db_query", &name, ctx.line_of(lit.start));
        }
    }
}

/// "SELECT users" for `select * from users where …`; `None` unless the text reads as SQL
/// (a leading verb and its companion keyword), so "Select an option" is not a query.
fn sql_statement(body: &str) -> Option<String> {
    // Bounded look: a query states its verb and table early; a huge string costs nothing more.
    let head = truncate(body.trim_start(), 2000);
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
pub(crate) mod testutil {
    //! Table-driven checks the language rule tests share.
    use super::*;

    pub fn found(path: &str, src: &str) -> Vec<(String, String)> {
        analyze_file(&SourceFile::new(path, src)).into_iter().map(|p| (p.pattern_type, p.name)).collect()
    }

    fn has(found: &[(String, String)], ty: &str, name: &str) -> bool {
        found.iter().any(|(t, n)| t == ty && (name == "*" || n == name))
    }

    /// Every positive `(source, pattern_type, name)` is found (name `*` = any); the same source
    /// turned into comments (prefix `comment` on each line) is not; every negative
    /// `(source, pattern_type)` yields no pattern of that type.
    pub fn check(path: &str, comment: &str, positives: &[(&str, &str, &str)], negatives: &[(&str, &str)]) {
        for (src, ty, name) in positives {
            let f = found(path, src);
            assert!(has(&f, ty, name), "expected {ty} {name:?} in {src:?}, found {f:?}");
            let commented: String = src.lines().map(|l| format!("{comment} {l}\n")).collect();
            let f = found(path, &commented);
            assert!(!has(&f, ty, name), "{ty} {name:?} reported inside a comment: {commented:?} → {f:?}");
        }
        for (src, ty) in negatives {
            let f = found(path, src);
            assert!(!has(&f, ty, "*"), "unexpected {ty} in {src:?}: {f:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, content: &str) -> SourceFile {
        SourceFile::new(path, content)
    }

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
    fn raw_sql_in_strings_only() {
        let f = analyze_file(&file("a.py", "q = \"SELECT * FROM users\"\n# SELECT * FROM admins\n"));
        assert!(f.iter().any(|p| p.pattern_type == "db_query" && p.name == "SELECT users"), "{f:?}");
        assert!(!f.iter().any(|p| p.name == "SELECT admins"));
    }

    #[test]
    fn snippet_is_original_text_with_context_and_one_based_line() {
        let src = "a\nb\n// c\nconst x = await fetchUser(id); // note\nd\ne\nf";
        let p = analyze_file(&file("a.ts", src));
        let aw = p.iter().find(|p| p.pattern_type == "await").expect("await found");
        assert_eq!(aw.line, 4);
        assert_eq!(aw.snippet, "b\n// c\nconst x = await fetchUser(id); // note\nd\ne");
        assert_eq!(aw.language, "typescript");
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
    fn random_input_never_panics() {
        // Deterministic noise over the bytes the rules and the lexer care about, plus multi-byte
        // chars next to them (a slice at a wrong offset would panic on those).
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
        ];
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        for round in 0..300 {
            let mut src = String::new();
            for _ in 0..(round % 60 + 1) {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                src.push_str(ALPHABET[(seed >> 33) as usize % ALPHABET.len()]);
            }
            for ext in ["ts", "js", "py", "go", "rs", "rb", "cs", "java"] {
                let lang = lexer::lang_for_path(&format!("a.{ext}")).expect("known extension");
                assert_eq!(lexer::mask_comments_and_strings(&src, lang).len(), src.len());
                let _ = analyze_file(&file(&format!("x/a.{ext}"), &src));
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
        assert!(start.elapsed().as_secs() < 10);
        assert!(p.iter().all(|p| p.snippet.len() <= SNIPPET_LINE_MAX));
    }

    #[test]
    fn large_input_is_linear() {
        // ~4 MB over all languages; debug builds are slow, so the bound is generous.
        let ts = "export async function GET(req: Request) {\n  try { const u = await prisma.user.findMany(); return Response.json(u.map((x) => x.id)); } catch (e) { return null; }\n}\n";
        let py = "@app.get(\"/x\")\nasync def x():\n    try:\n        return await db.fetch()\n    except Exception:\n        pass\n";
        let go = "func h() {\n\tgo work(ch)\n\tif err != nil {\n\t\treturn err\n\t}\n}\n";
        let files =
            vec![file("a.ts", &ts.repeat(12_000)), file("a.py", &py.repeat(12_000)), file("a.go", &go.repeat(20_000))];
        let total: usize = files.iter().map(|f| f.content.len()).sum();
        assert!(total > 3_000_000);
        let start = std::time::Instant::now();
        let p = analyze_files(&files);
        assert!(!p.is_empty());
        assert!(start.elapsed().as_secs() < 20, "took {:?}", start.elapsed());
    }
}
