//! The functions of a file and the statements of one in the order they run: what ordering
//! questions are built from. A heuristic over masked lines, not a parser: a function starts at
//! a header line (`function`, an arrow `=> {`, `def`, `fn`, `func`, a Java or C# method
//! declaration) and ends where its braces close (in Python where the indentation returns, in
//! Ruby at its `end`); its statements are the body lines that
//! start a statement (not inside an open `(`/`[`) at the body's own indentation or directly
//! inside a `try`/`with` block, leaving out block closers, `try` openers, the `catch`/`except`/`else` branches (which do not run on the normal path) and the
//! bodies of conditions and loops (which run maybe, or many times; their header line stays),
//! and bare string literals (docstrings, directives), which do nothing when they run.

use super::CodeFile;
use crate::analysis::catalogue::tokens::find_token;
use crate::analysis::lexer::Lang;

/// How far up from a line a function header is looked for.
const MAX_HEADER_DISTANCE: usize = 80;
/// Longest line offered as an ordering step; longer ones make unreadable options.
const MAX_STEP_LEN: usize = 100;

/// The innermost function around `line`: its header line and last line (0-based, inclusive).
pub fn enclosing_function(file: &CodeFile<'_>, line: usize) -> Option<(usize, usize)> {
    let lang = file.lang?;
    let lowest = line.saturating_sub(MAX_HEADER_DISTANCE);
    (lowest..=line).rev().filter(|&h| is_header(lang, &file.masked[h])).find_map(|h| {
        let end = function_end(file, lang, h)?;
        (end >= line && end > h).then_some((h, end))
    })
}

/// Whether line `i` of `file` starts a function (see `is_header`).
pub fn is_header_line(file: &CodeFile<'_>, i: usize) -> bool {
    file.lang.is_some_and(|lang| is_header(lang, &file.masked[i]))
}

fn is_header(lang: Lang, masked: &str) -> bool {
    let t = masked.trim_start();
    match lang {
        Lang::Python => t.starts_with("def ") || t.starts_with("async def "),
        Lang::Go => t.starts_with("func "),
        Lang::Rust => find_token(masked, "fn").is_some(),
        Lang::TypeScript | Lang::JavaScript => {
            find_token(masked, "function").is_some() || masked.trim_end().ends_with("=> {")
        }
        Lang::Ruby => t.starts_with("def "),
        Lang::CSharp | Lang::Java => is_method_header(t),
    }
}

/// A Java or C# method (or constructor) declaration: modifiers or a return type, a name, a
/// parameter list, and no `;` (an interface method has no body). Control statements, calls
/// and `new` expressions are not.
fn is_method_header(t: &str) -> bool {
    const NOT_HEADERS: [&str; 14] = [
        "if", "for", "foreach", "while", "switch", "catch", "using", "return", "new", "else", "try", "lock", "throw",
        "await",
    ];
    let Some(open) = t.find('(') else { return false };
    let before: Vec<&str> = t[..open].split_whitespace().collect();
    let t_end = t.trim_end();
    before.len() >= 2
        && !NOT_HEADERS.contains(&before[0])
        && !t[..open].contains(['=', '.'])
        && t.contains(')')
        && !t_end.ends_with(';')
        && before.last().is_some_and(|name| name.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// The last line of the function whose header is on line `header`: the end of its block as
/// `units` finds blocks (braces, Python's indentation, Ruby's `end`). `None` for a declaration
/// without a body (a trait or interface method ends in `;` before any `{`).
fn function_end(file: &CodeFile<'_>, lang: Lang, header: usize) -> Option<usize> {
    let end = super::units::unit_of(file, header).1;
    let bodiless =
        !matches!(lang, Lang::Python | Lang::Ruby) && !file.masked[header..=end].iter().any(|l| l.contains('{'));
    (end > header && !bodiless).then_some(end)
}

/// The function's name from its header line, when one can be read.
pub fn function_name(file: &CodeFile<'_>, header: usize) -> Option<String> {
    let m = &file.masked[header];
    let after = ["function", "def", "fn", "func"].iter().find_map(|kw| {
        let at = find_token(m, kw)?;
        Some(m[at + kw.len()..].trim_start())
    });
    // Java and C#: the word before the parameter list.
    if after.is_none() && matches!(file.lang, Some(Lang::Java | Lang::CSharp)) {
        let name = m.split('(').next()?.split_whitespace().last()?;
        return (!name.is_empty()).then(|| name.to_owned());
    }
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    // Go methods: `func (s *Store) Get(` — the name follows the receiver.
    let name = match after {
        Some(rest) if rest.starts_with('(') => rest.find(')').map(|p| ident(rest[p + 1..].trim_start())),
        Some(rest) => Some(ident(rest)),
        // `const loadUser = async (id) => {`
        None => m.split_once('=').map(|(lhs, _)| ident(lhs.split_whitespace().last().unwrap_or(""))),
    }?;
    (!name.is_empty()).then_some(name)
}

/// The body lines of the function `header..=end` that start a statement on the normal path,
/// in order (see the module doc).
pub fn statements(file: &CodeFile<'_>, header: usize, end: usize) -> Vec<usize> {
    // Python bodies run to the last line; brace bodies stop before the closing line.
    let last = if file.lang == Some(Lang::Python) { end } else { end.saturating_sub(1) };
    // A brace on a line of its own (C#'s usual style) opens the body; it is not the body.
    let Some(top) =
        (header + 1..=last).find(|&i| !file.is_blank(i) && file.masked[i].trim() != "{").map(|i| file.indent(i))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut open = 0i32;
    let mut skip_deeper_than: Option<usize> = None;
    // Inside a `try`/`with` block at this indentation, whose body (at the second value, once
    // seen) runs on the normal path like the function's own statements.
    let mut guarded: Option<(usize, Option<usize>)> = None;
    for i in header + 1..=last {
        let m = file.masked[i].trim();
        let indent = file.indent(i);
        let statement_start = open <= 0;
        open += nesting_change(m);
        // An opening brace on a line of its own (C#'s usual style) belongs to the line above.
        if m.is_empty() || m == "{" {
            continue;
        }
        if let Some(level) = skip_deeper_than {
            if indent > level {
                continue;
            }
            skip_deeper_than = None;
        }
        match guarded {
            Some((at, _)) if indent <= at => guarded = None,
            Some((at, None)) => guarded = Some((at, Some(indent))),
            _ => {}
        }
        if is_side_branch(m) {
            skip_deeper_than = Some(indent);
            continue;
        }
        if starts_with_keyword(m, &["try", "with", "async"]) && (m.ends_with('{') || m.ends_with(':') || m == "try") {
            guarded = Some((indent, None));
            if !m.starts_with("try") {
                out.extend((statement_start && indent == top).then_some(i));
            }
            continue;
        }
        // A condition or loop header runs; its body runs maybe, or many times.
        if starts_with_keyword(m, &["if", "for", "while", "switch", "match", "select", "loop"]) {
            skip_deeper_than = Some(indent);
        }
        // Deeper lines are the inside of a literal or a callback, not statements of their own.
        let at_level = indent == top || guarded.is_some_and(|(_, body)| body == Some(indent));
        let trivial =
            m.chars().all(|c| "{}()[];,".contains(c)) || m.starts_with('}') || m.starts_with(')') || is_bare_string(m);
        if statement_start && at_level && !trivial && file.lines[i].trim().len() <= MAX_STEP_LEN {
            out.push(i);
        }
    }
    out
}

/// A masked line that is only a string literal (a docstring, a `"use strict"` directive): its
/// contents are blanked, so what is left is quotes, a prefix such as `r` or `f`, and `;`.
pub fn is_bare_string(masked: &str) -> bool {
    let t = masked.trim().trim_end_matches(';').trim_end();
    let body = t.trim_start_matches(|c: char| "rRbBuUfF@$".contains(c));
    !body.is_empty() && body.starts_with(['"', '\'', '`']) && body.chars().all(|c| "\"'` ".contains(c))
}

/// Net change of open `(` and `[` on a masked line.
fn nesting_change(masked: &str) -> i32 {
    masked.bytes().map(|b| i32::from(matches!(b, b'(' | b'[')) - i32::from(matches!(b, b')' | b']'))).sum()
}

/// A `catch`/`except`/`else`/`elif` line: its block does not run on the normal path.
fn is_side_branch(m: &str) -> bool {
    starts_with_keyword(m.trim_start_matches('}').trim_start(), &["catch", "except", "else", "elif", "rescue"])
}

fn starts_with_keyword(m: &str, keywords: &[&str]) -> bool {
    keywords.iter().any(|kw| find_token(m, kw) == Some(0))
}
