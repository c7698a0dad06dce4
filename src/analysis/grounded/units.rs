//! Whole syntactic units of a file (SPEC §6.4's precision rules): the statement a line belongs
//! to, the blocks around it, and the function or class holding them with every decorator,
//! annotation or attribute above it (multi-line ones too: a `@pytest.mark.parametrize(...)`
//! table, a `#[cfg(test)]`, a C# `[Theory]`). A question quotes one of these, never a stretch
//! that cuts through a statement.
//!
//! A heuristic over the lexer's masked lines (comments and string contents blanked), as
//! `flow` is, not a parser: a statement runs while `(`/`[` stay open or its line ends in a
//! continuation (`\`, `,`, an operator) or the next line starts with one (`.`, `?`, `)`);
//! a block is its header statement plus its body — until its braces balance (C-like
//! languages), while lines are indented deeper (Python), to the `end` at its indentation
//! (Ruby) — with the branches that continue it (`else`, `catch`, `except`, `finally`).
//! Measured choice: tree-sitter grammars for the seven languages would be exact but cost a
//! long cold build on a 2-core CI (docs/DECISIONS.md, "Whole syntactic units").

use super::CodeFile;
use crate::analysis::catalogue::tokens::find_token;
use crate::analysis::lexer::Lang;

/// How far a unit's statement or block is followed before giving up (a runaway heuristic).
const MAX_UNIT_LINES: usize = 400;

/// Lines `start..=end` (0-based, inclusive).
pub type Span = (usize, usize);

/// The units holding `line`, innermost first: its statement (a decorator's is the whole
/// decorated definition), then each enclosing block up to the top level. Never empty.
pub fn units_around(file: &CodeFile<'_>, line: usize) -> Vec<Span> {
    // A line that closes a block belongs to the block it closes.
    let opener = starts_with_closer(file, line)
        .then(|| {
            let lowest = line.saturating_sub(MAX_UNIT_LINES);
            (lowest..line).rev().filter(|&k| !file.is_blank(k) && file.indent(k) == file.indent(line)).find_map(|k| {
                let s = statement_start(file, k);
                (!starts_with_closer(file, s) && unit_at(file, s).1 >= line).then_some(s)
            })
        })
        .flatten();
    let mut out = vec![unit_at(file, opener.unwrap_or_else(|| statement_start(file, line)))];
    loop {
        let inner = *out.last().unwrap_or(&(line, line));
        let Some(parent) = parent_unit(file, inner) else { break };
        out.push(parent);
    }
    out
}

/// The unit a question quotes around `line`: the innermost definition holding it (a
/// function, method, test or class, with its decorators) when it has at most `max_lines`
/// lines; inside a longer one, the largest unit within it that fits; outside any definition,
/// the largest fitting unit. Else the innermost unit (a long unit whole rather than a cut one).
pub fn unit_within(file: &CodeFile<'_>, line: usize, max_lines: usize) -> Span {
    let units = units_around(file, line);
    let fits = |&&(s, e): &&Span| e - s < max_lines;
    let inside = match units.iter().position(|&(s, _)| is_definition(file, s)) {
        Some(k) if fits(&&units[k]) => return units[k],
        Some(k) => &units[..k],
        None => &units[..],
    };
    inside.iter().rev().find(fits).copied().unwrap_or(units[0])
}

/// Whether the unit starting at `s` defines something: a function or method, a class, struct,
/// enum, trait, interface, module or impl, a test (`it "…" do`, `test(…)`), or is decorated.
fn is_definition(file: &CodeFile<'_>, s: usize) -> bool {
    if is_decorator(file, s) {
        return true;
    }
    let t = file.masked[s].trim_start();
    if super::flow::is_header_line(file, s) {
        return true;
    }
    const KINDS: [&str; 14] = [
        "class",
        "struct",
        "enum",
        "trait",
        "interface",
        "module",
        "impl",
        "record",
        "object",
        "describe",
        "context",
        "it",
        "test",
        "type",
    ];
    t.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .take(4)
        .take_while(|w| KINDS.contains(w) || MODIFIERS.contains(w))
        .any(|w| KINDS.contains(&w))
}

/// Words that may come before what a declaration declares.
const MODIFIERS: [&str; 12] = [
    "pub",
    "public",
    "private",
    "protected",
    "internal",
    "static",
    "abstract",
    "sealed",
    "export",
    "default",
    "final",
    "partial",
];

/// `unit` grown by whole sibling units (same indentation, before and after, nearer first)
/// while it stays within `max_lines`: context around a statement of a long function.
pub fn with_siblings(file: &CodeFile<'_>, unit: Span, max_lines: usize) -> Span {
    let (mut start, mut end) = unit;
    let indent = file.indent(unit.0);
    loop {
        let before = (0..start)
            .rev()
            .filter(|&k| !file.is_blank(k) && file.indent(k) <= indent)
            .find(|&k| file.indent(k) < indent || (statement_start(file, k) == k && !starts_with_closer(file, k)))
            .filter(|&k| file.indent(k) == indent)
            .map(|k| unit_at(file, k))
            .filter(|u| u.1 < start);
        let after = first_code_line(file, end + 1, file.lines.len().saturating_sub(1))
            .filter(|&n| file.indent(n) == indent && statement_start(file, n) == n)
            .filter(|&n| !is_branch(&file.masked[n]) && !starts_with_closer(file, n))
            .map(|n| unit_at(file, n));
        let grown = [after.map(|a| (start, a.1)), before.map(|b| (b.0, end))]
            .into_iter()
            .flatten()
            .filter(|(s, e)| e - s < max_lines)
            .min_by_key(|(s, e)| e - s);
        match grown {
            Some(span) => (start, end) = span,
            None => return (start, end),
        }
    }
}

/// Why `start..=end` is not a run of whole units at one level (a cut statement, a decorator
/// left out above it), or `Ok` when it is.
pub fn check_whole(file: &CodeFile<'_>, start: usize, end: usize) -> Result<(), String> {
    if end >= file.lines.len() || start > end {
        return Err(format!("lines {}-{} are not in the file", start + 1, end + 1));
    }
    let first = first_code_line(file, start, end).ok_or("the snippet has no code")?;
    if statement_start(file, first) != first {
        return Err(format!("line {} continues a statement that starts above the snippet", first + 1));
    }
    if let Some(above) = decorator_above(file, first) {
        return Err(format!("the decorator or attribute on line {} belongs to this code but is left out", above + 1));
    }
    let mut open = 0;
    for i in start..=end {
        open += bracket_change(&file.masked[i], true);
        if open < 0 {
            return Err(format!("line {} closes a bracket opened above the snippet", i + 1));
        }
    }
    if open != 0 {
        return Err(format!("{open} bracket(s) opened in the snippet are closed after it"));
    }
    let mut at = Some(first);
    while let Some(s) = at {
        if starts_with_closer(file, s) {
            return Err(format!("line {} closes a block that opens above the snippet", s + 1));
        }
        let (_, e) = unit_at(file, s);
        if e > end {
            return Err(format!("the statement on line {} runs past the snippet's end (to line {})", s + 1, e + 1));
        }
        at = first_code_line(file, e + 1, end);
    }
    Ok(())
}

/// A line that closes a block or a bracket (`}`, `)`, `]`, Ruby's `end`): no unit starts there.
pub fn starts_with_closer(file: &CodeFile<'_>, i: usize) -> bool {
    let t = file.masked[i].trim_start();
    t.starts_with(['}', ')', ']']) || (file.lang == Some(Lang::Ruby) && find_token(t, "end") == Some(0))
}

fn first_code_line(file: &CodeFile<'_>, from: usize, to: usize) -> Option<usize> {
    (from..=to.min(file.lines.len().saturating_sub(1))).find(|&i| !file.is_blank(i))
}

/// The unit starting at statement start `s` (see `unit_at`).
pub fn unit_of(file: &CodeFile<'_>, s: usize) -> Span {
    unit_at(file, s)
}

/// The unit that starts at statement start `s`: the statement, its block and branches; a
/// decorator's runs on to the definition it decorates; a definition's decorators are in it.
fn unit_at(file: &CodeFile<'_>, s: usize) -> Span {
    let mut start = s;
    while let Some(above) = decorator_above(file, start) {
        start = above;
    }
    let mut at = s;
    // Decorators, then what they decorate.
    while is_decorator(file, at) {
        let (_, e) = statement_span(file, at);
        match first_code_line(file, e + 1, file.lines.len().saturating_sub(1)) {
            Some(next) => at = next,
            None => return (start, e),
        }
    }
    (start, block_end(file, at))
}

/// The statement start whose statement (alone) holds line `i`.
pub fn statement_start(file: &CodeFile<'_>, i: usize) -> usize {
    let depth = open_at_line_starts(file, i);
    let lowest = i.saturating_sub(MAX_UNIT_LINES);
    let mut s = i;
    while s > lowest {
        let Some(prev) = (lowest..s).rev().find(|&k| !file.is_blank(k)) else { break };
        if depth[s] > 0 || continues(file, prev, s) {
            s = prev;
        } else {
            break;
        }
    }
    s
}

/// For each line `0..=upto`, the `(` and `[` open at its start — within the innermost `{`
/// block in C-like languages (a callback's body holds statements of its own), counting `{`
/// too in Python and Ruby (where braces are data).
fn open_at_line_starts(file: &CodeFile<'_>, upto: usize) -> Vec<i32> {
    let braces_are_data = matches!(file.lang, Some(Lang::Python | Lang::Ruby));
    let mut out = Vec::with_capacity(upto + 1);
    let mut depth = 0i32;
    let mut outer: Vec<i32> = Vec::new();
    for line in file.masked.iter().take(upto + 1) {
        out.push(depth.max(0));
        for b in line.bytes() {
            match b {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b'{' if braces_are_data => depth += 1,
                b'}' if braces_are_data => depth -= 1,
                b'{' => outer.push(std::mem::replace(&mut depth, 0)),
                b'}' => depth = outer.pop().unwrap_or(0),
                _ => {}
            }
        }
    }
    out
}

/// Whether the statement on line `prev` goes on to line `next` by its line ends.
fn continues(file: &CodeFile<'_>, prev: usize, next: usize) -> bool {
    let p = file.masked[prev].trim_end();
    let n = file.masked[next].trim_start();
    let lang = file.lang;
    let operator = ["+", "-", "*", "/", "&&", "||", "=", "=>", " and", " or", "->", "?"]
        .iter()
        .any(|op| p.ends_with(op) && !(*op == "?" && lang == Some(Lang::Rust)));
    let ends_open = p.ends_with('\\')
        || (p.ends_with(',') && matches!(lang, Some(Lang::Python | Lang::Ruby)))
        || (operator && !p.ends_with("++") && !p.ends_with("--"));
    let starts_cont = n.starts_with('.') && !n.starts_with("..")
        || n.starts_with("?.")
        || n.starts_with("&&")
        || n.starts_with("||")
        || (n.starts_with('?') && lang != Some(Lang::Rust))
        || (n == "{" && !matches!(lang, Some(Lang::Python | Lang::Ruby)));
    ends_open || starts_cont
}

fn bracket_change(masked: &str, braces: bool) -> i32 {
    masked
        .bytes()
        .map(|b| match b {
            b'(' | b'[' => 1,
            b')' | b']' => -1,
            b'{' if braces => 1,
            b'}' if braces => -1,
            _ => 0,
        })
        .sum()
}

/// The last line of the statement starting at `s` (its brackets closed, no continuation).
fn statement_span(file: &CodeFile<'_>, s: usize) -> Span {
    let last = (s + MAX_UNIT_LINES).min(file.lines.len() - 1);
    let mut depth = 0;
    let mut e = s;
    for i in s..=last {
        depth += bracket_change(&file.masked[i], matches!(file.lang, Some(Lang::Python | Lang::Ruby)));
        e = i;
        let next = first_code_line(file, i + 1, last);
        let goes_on = depth > 0 || next.is_some_and(|n| continues(file, i, n));
        if !goes_on {
            break;
        }
    }
    (s, e)
}

/// The last line of the block (or plain statement) starting at statement start `s`.
fn block_end(file: &CodeFile<'_>, s: usize) -> usize {
    let (_, e) = statement_span(file, s);
    let end = match file.lang {
        Some(Lang::Python) => python_block_end(file, s, e),
        Some(Lang::Ruby) => ruby_block_end(file, s, e),
        _ => brace_block_end(file, s, e),
    };
    // Branches that continue the block: `else`, `catch`, `except`, `finally`, `elif`, `rescue`.
    match first_code_line(file, end + 1, file.lines.len() - 1) {
        Some(next) if file.indent(next) == file.indent(s) && is_branch(&file.masked[next]) => block_end(file, next),
        _ => end,
    }
}

fn is_branch(masked: &str) -> bool {
    let t = masked.trim_start();
    ["else", "elif", "except", "finally", "catch", "rescue", "ensure", "elsif", "when"]
        .iter()
        .any(|kw| find_token(t, kw) == Some(0))
}

fn python_block_end(file: &CodeFile<'_>, s: usize, e: usize) -> usize {
    if !file.masked[e].trim_end().ends_with(':') {
        return e;
    }
    let base = file.indent(s);
    let last = (e + MAX_UNIT_LINES).min(file.lines.len() - 1);
    let mut end = e;
    for i in e + 1..=last {
        if file.is_blank(i) {
            continue;
        }
        if file.indent(i) <= base {
            break;
        }
        end = i;
    }
    end
}

fn ruby_block_end(file: &CodeFile<'_>, s: usize, e: usize) -> usize {
    let t = file.masked[s].trim();
    let opens = ["def", "class", "module", "if", "unless", "while", "until", "case", "begin", "for"]
        .iter()
        .any(|kw| find_token(t, kw) == Some(0))
        || find_token(t, "do").is_some_and(|_| t.ends_with("do") || t.contains("do |"));
    if !opens || t.ends_with(" end") {
        return e;
    }
    let base = file.indent(s);
    let last = (e + MAX_UNIT_LINES).min(file.lines.len() - 1);
    (e + 1..=last).find(|&i| file.indent(i) == base && find_token(file.masked[i].trim(), "end") == Some(0)).unwrap_or(e)
}

fn brace_block_end(file: &CodeFile<'_>, s: usize, e: usize) -> usize {
    let last = (s + MAX_UNIT_LINES).min(file.lines.len() - 1);
    let mut depth = 0i32;
    let mut opened = false;
    for i in s..=last {
        for b in file.masked[i].bytes() {
            match b {
                b'{' => {
                    depth += 1;
                    opened = true;
                }
                b'}' => depth -= 1,
                _ => {}
            }
        }
        if i >= e && (!opened || depth <= 0) {
            // `}` closing the block, unless the statement goes on (`} else {` was counted).
            return i;
        }
    }
    e
}

/// Whether the statement at statement start `i` is a decorator, annotation or attribute.
fn is_decorator(file: &CodeFile<'_>, i: usize) -> bool {
    let t = file.masked[i].trim_start();
    match file.lang {
        Some(Lang::Python | Lang::TypeScript | Lang::JavaScript) => t.starts_with('@'),
        Some(Lang::Java) => t.starts_with('@') && !t.starts_with("@interface"),
        Some(Lang::Rust) => t.starts_with("#[") || t.starts_with("#!["),
        Some(Lang::CSharp) => t.starts_with('[') && statement_span(file, i).1 >= i && !t.contains('='),
        _ => false,
    }
}

/// The start of a decorator statement right above line `i` (no blank line between), if any.
fn decorator_above(file: &CodeFile<'_>, i: usize) -> Option<usize> {
    let prev = i.checked_sub(1)?;
    if file.is_blank(prev) && !file.lines[prev].trim().is_empty() {
        // A comment line between: look past it (a doc comment under an attribute).
        return decorator_above(file, prev);
    }
    if file.is_blank(prev) {
        return None;
    }
    // Back to the line that opens what `prev` closes (a `})` ending `@CsvSource({ … })`).
    let mut k = prev;
    let mut balance = bracket_change(&file.masked[prev], true);
    while balance < 0 && k > 0 {
        k -= 1;
        balance += bracket_change(&file.masked[k], true);
    }
    let s = statement_start(file, k);
    is_decorator(file, s).then_some(s)
}

/// The smallest block that holds `inner` and starts above it, at a lower indentation.
fn parent_unit(file: &CodeFile<'_>, inner: Span) -> Option<Span> {
    let indent = file.indent(inner.0);
    if indent == 0 {
        return None;
    }
    let lowest = inner.0.saturating_sub(MAX_UNIT_LINES);
    (lowest..inner.0).rev().filter(|&k| !file.is_blank(k) && file.indent(k) < indent).find_map(|k| {
        let s = statement_start(file, k);
        let unit = unit_at(file, s);
        (unit.1 >= inner.1 && unit.0 <= inner.0 && unit != inner).then_some(unit)
    })
}
