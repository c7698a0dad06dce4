//! The masking pass that every static rule runs on: it finds the comments and string literals
//! of a source file (per language) and blanks their contents, so a rule that searches for
//! `useEffect(` or `try {` never fires on commented-out code or on text inside a string.
//!
//! # Invariants
//! The masked text has the same byte length as the input and the same line breaks (`\n` and
//! `\r` are kept), so a byte offset or a line number found in the masked text is valid in the
//! original. Comments are blanked whole (including `//`, `#`, `/* */`); strings keep their
//! delimiters (`"`, `'''`, `r#"`, backticks) and lose only their contents, so a rule can still
//! see that "a string starts here" and read its text from the original at the same offsets.
//!
//! # Approach
//! One forward scan per file, no backtracking beyond a few bytes, so a 10 MB file costs one
//! pass. The scanner is a heuristic lexer, not a parser: where a language is ambiguous
//! (a JavaScript `/` that may be a regex or a division, a Ruby `%w[...]`) it guesses from the
//! previous significant byte, and a wrong guess masks or leaves at most the rest of one line.
//! Unterminated literals run to the end of the line (single-line kinds) or of the file.

use std::path::Path;

/// Longest regex literal recognised; a `/` with no closing `/` within this many bytes is code.
const MAX_REGEX_LEN: usize = 1024;

/// The languages the static rules understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    TypeScript,
    JavaScript,
    Python,
    Go,
    Rust,
    Ruby,
    CSharp,
    Java,
}

impl Lang {
    /// The name stored in `Pattern::language`.
    pub fn as_str(self) -> &'static str {
        match self {
            Lang::TypeScript => "typescript",
            Lang::JavaScript => "javascript",
            Lang::Python => "python",
            Lang::Go => "go",
            Lang::Rust => "rust",
            Lang::Ruby => "ruby",
            Lang::CSharp => "csharp",
            Lang::Java => "java",
        }
    }

    fn is_js(self) -> bool {
        matches!(self, Lang::TypeScript | Lang::JavaScript)
    }
}

/// The language of a file, from its extension (Ruby also from a few well-known file names).
pub fn lang_for_path(path: &str) -> Option<Lang> {
    let p = Path::new(path);
    let file_name = p.file_name()?.to_str()?;
    if matches!(file_name, "Gemfile" | "Rakefile" | "Guardfile") {
        return Some(Lang::Ruby);
    }
    let ext = p.extension()?.to_str()?.to_ascii_lowercase();
    // Stubs and Rake files are not in the stack list, but the scanner reads them.
    let id = match ext.as_str() {
        "pyi" => "python",
        "rake" => "ruby",
        other => super::stack::language_of_extension(other)?,
    };
    Some(match id {
        "typescript" => Lang::TypeScript,
        "javascript" => Lang::JavaScript,
        "python" => Lang::Python,
        "go" => Lang::Go,
        "rust" => Lang::Rust,
        "ruby" => Lang::Ruby,
        "csharp" => Lang::CSharp,
        "java" => Lang::Java,
        _ => return None,
    })
}

/// What a masked byte range was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiteralKind {
    Comment,
    Str,
}

/// One masked range: `[start, end)` in bytes. For a comment this is the whole comment; for a
/// string only its contents (the delimiters stay visible).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Literal {
    pub kind: LiteralKind,
    pub start: usize,
    pub end: usize,
}

/// Returns `src` with comment and string-literal contents replaced by spaces; same byte length,
/// same line breaks.
pub fn mask_comments_and_strings(src: &str, lang: Lang) -> String {
    mask(src, &literals(src, lang))
}

/// Blanks the given ranges (sorted, non-overlapping, as `literals` returns them).
///
/// Works per char rather than per byte so that a range boundary that somehow fell inside a
/// multi-byte char still yields valid UTF-8 of the same length (the whole char is blanked).
pub fn mask(src: &str, lits: &[Literal]) -> String {
    let mut out = String::with_capacity(src.len());
    let mut k = 0;
    for (i, ch) in src.char_indices() {
        while k < lits.len() && lits[k].end <= i {
            k += 1;
        }
        let inside = k < lits.len() && lits[k].start <= i;
        if inside && ch != '\n' && ch != '\r' {
            out.extend(std::iter::repeat_n(' ', ch.len_utf8()));
        } else {
            out.push(ch);
        }
    }
    out
}

/// Finds every comment and string literal of `src`, in order.
pub fn literals(src: &str, lang: Lang) -> Vec<Literal> {
    let mut s = Scanner { b: src.as_bytes(), lang, out: Vec::new(), prev_sig: 0, prev_sig_at: 0 };
    s.run();
    s.out
}

struct Scanner<'a> {
    b: &'a [u8],
    lang: Lang,
    out: Vec<Literal>,
    /// The last non-whitespace code byte and its offset: JavaScript and Ruby use it to tell a
    /// regex `/` from a division.
    prev_sig: u8,
    prev_sig_at: usize,
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl Scanner<'_> {
    fn at(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(0)
    }

    fn starts(&self, i: usize, pat: &[u8]) -> bool {
        self.b.get(i..i + pat.len()) == Some(pat)
    }

    fn push(&mut self, kind: LiteralKind, start: usize, end: usize) {
        if end > start {
            self.out.push(Literal { kind, start, end });
        }
    }

    fn line_end(&self, i: usize) -> usize {
        self.b[i..].iter().position(|&c| c == b'\n').map_or(self.b.len(), |p| i + p)
    }

    fn at_line_start(&self, i: usize) -> bool {
        i == 0 || self.b[i - 1] == b'\n'
    }

    fn run(&mut self) {
        let mut i = 0;
        while i < self.b.len() {
            let next = match self.lang {
                Lang::Python => self.step_python(i),
                Lang::Ruby => self.step_ruby(i),
                _ => self.step_c_family(i),
            };
            match next {
                Some(n) => i = n.max(i + 1),
                None => {
                    let c = self.b[i];
                    if !c.is_ascii_whitespace() {
                        self.prev_sig = c;
                        self.prev_sig_at = i;
                    }
                    i += 1;
                }
            }
        }
    }

    /// Marks the literal that ends at `end` as the previous significant token, so a `/` after
    /// a string is read as a division.
    fn after_literal(&mut self, end: usize) -> Option<usize> {
        self.prev_sig = b'"';
        self.prev_sig_at = end.saturating_sub(1);
        Some(end)
    }

    // ---- shared literal shapes -------------------------------------------------------------

    /// `//` or `#` comment from `i` to the end of the line.
    fn line_comment(&mut self, i: usize) -> Option<usize> {
        let end = self.line_end(i);
        self.push(LiteralKind::Comment, i, end);
        Some(end)
    }

    /// `/* ... */`, nested when `nested` (Rust).
    fn block_comment(&mut self, i: usize, nested: bool) -> Option<usize> {
        let mut depth = 1;
        let mut j = i + 2;
        while j < self.b.len() {
            if self.starts(j, b"*/") {
                depth -= 1;
                j += 2;
                if depth == 0 {
                    break;
                }
            } else if nested && self.starts(j, b"/*") {
                depth += 1;
                j += 2;
            } else {
                j += 1;
            }
        }
        let end = j.min(self.b.len());
        self.push(LiteralKind::Comment, i, end);
        Some(end)
    }

    /// A string opened by the byte at `i` and closed by the same byte; backslash escapes when
    /// `escapes`; stops at a newline when `single_line` (an unterminated literal must not swallow
    /// the rest of the file). Returns the offset after the closing delimiter.
    fn quoted(&mut self, i: usize, escapes: bool, single_line: bool) -> Option<usize> {
        let q = self.b[i];
        let mut j = i + 1;
        while j < self.b.len() {
            let c = self.b[j];
            if escapes && c == b'\\' {
                j += 2;
                continue;
            }
            if c == q {
                self.push(LiteralKind::Str, i + 1, j);
                return self.after_literal(j + 1);
            }
            if c == b'\n' && single_line {
                break;
            }
            j += 1;
        }
        let end = j.min(self.b.len());
        self.push(LiteralKind::Str, i + 1, end);
        Some(end)
    }

    /// A string closed by `close` (e.g. `"""`), escapes optional; runs to EOF if unterminated.
    fn delimited(&mut self, content_start: usize, close: &[u8], escapes: bool) -> Option<usize> {
        let mut j = content_start;
        while j < self.b.len() {
            if escapes && self.b[j] == b'\\' {
                j += 2;
                continue;
            }
            if self.starts(j, close) {
                self.push(LiteralKind::Str, content_start, j);
                return self.after_literal(j + close.len());
            }
            j += 1;
        }
        self.push(LiteralKind::Str, content_start, self.b.len());
        Some(self.b.len())
    }

    /// Skips embedded code (`${...}`, `#{...}`, `{...}`) starting just after its `{`, counting
    /// braces and stepping over nested strings. Returns the offset after the matching `}`.
    fn skip_interpolation(&self, mut j: usize) -> usize {
        let mut depth = 1;
        while j < self.b.len() {
            match self.b[j] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return j + 1;
                    }
                }
                b'`' if self.lang.is_js() => {
                    j = self.template_end(j);
                    continue;
                }
                q @ (b'"' | b'\'') => {
                    j += 1;
                    while j < self.b.len() && self.b[j] != q && self.b[j] != b'\n' {
                        j += if self.b[j] == b'\\' { 2 } else { 1 };
                    }
                }
                _ => {}
            }
            j += 1;
        }
        self.b.len()
    }

    /// End (after the closing backtick) of a JavaScript template literal starting at `i`.
    fn template_end(&self, i: usize) -> usize {
        let mut j = i + 1;
        while j < self.b.len() {
            match self.b[j] {
                b'\\' => j += 2,
                b'`' => return j + 1,
                b'$' if self.at(j + 1) == b'{' => j = self.skip_interpolation(j + 2),
                _ => j += 1,
            }
        }
        self.b.len()
    }

    // ---- C family: JS/TS, Go, Rust, Java, C# ----------------------------------------------

    fn step_c_family(&mut self, i: usize) -> Option<usize> {
        let c = self.b[i];
        let lang = self.lang;
        match c {
            b'/' if self.at(i + 1) == b'/' => self.line_comment(i),
            b'/' if self.at(i + 1) == b'*' => self.block_comment(i, lang == Lang::Rust),
            b'/' if lang.is_js() && self.regex_allowed(i) => self.regex(i),
            b'#' if i == 0 && self.at(1) == b'!' && lang.is_js() => self.line_comment(i),
            b'`' if lang.is_js() => {
                let end = self.template_end(i);
                // `template_end` stops after the closing backtick, or at EOF if there is none.
                let terminated = end > i + 1 && end <= self.b.len() && self.b[end - 1] == b'`';
                self.push(LiteralKind::Str, i + 1, if terminated { end - 1 } else { end });
                self.after_literal(end)
            }
            b'`' if lang == Lang::Go => self.delimited(i + 1, b"`", false),
            b'"' => self.double_quote(i),
            b'\'' => self.single_quote(i),
            b'r' | b'b' | b'c' if lang == Lang::Rust && !is_ident(self.at(i.wrapping_sub(1))) => {
                self.rust_raw_string(i)
            }
            _ => None,
        }
    }

    fn double_quote(&mut self, i: usize) -> Option<usize> {
        match self.lang {
            Lang::Java if self.starts(i, b"\"\"\"") => self.delimited(i + 3, b"\"\"\"", true),
            Lang::CSharp => self.csharp_string(i),
            Lang::Rust => self.quoted(i, true, false),
            _ => self.quoted(i, true, true),
        }
    }

    fn single_quote(&mut self, i: usize) -> Option<usize> {
        if self.lang != Lang::Rust {
            // JS strings, and char literals in Go, Java and C#.
            return self.quoted(i, true, true);
        }
        // Rust: `'x'`, `'\n'`, `'\u{1F600}'` are chars; `'a` (no closing quote right after one
        // char) is a lifetime or a loop label and stays code.
        if self.at(i + 1) == b'\\' {
            return self.quoted(i, true, true);
        }
        let ch_len = utf8_len(self.at(i + 1));
        if self.at(i + 1 + ch_len) == b'\'' && self.at(i + 1) != b'\'' {
            self.push(LiteralKind::Str, i + 1, i + 1 + ch_len);
            return self.after_literal(i + 2 + ch_len);
        }
        None
    }

    /// C#: `"..."`, verbatim `@"..."` (`""` escapes a quote), interpolated `$"...{x}..."`
    /// (masked whole), raw `"""..."""` (closed by as many quotes as opened it).
    fn csharp_string(&mut self, i: usize) -> Option<usize> {
        let quotes = self.b[i..].iter().take_while(|&&c| c == b'"').count();
        if quotes >= 3 {
            let close = vec![b'"'; quotes];
            return self.delimited(i + quotes, &close, false);
        }
        let mut k = i;
        let (mut verbatim, mut interpolated) = (false, false);
        while k > 0 && matches!(self.b[k - 1], b'@' | b'$') {
            k -= 1;
            verbatim |= self.b[k] == b'@';
            interpolated |= self.b[k] == b'$';
        }
        let mut j = i + 1;
        while j < self.b.len() {
            let c = self.b[j];
            if c == b'\\' && !verbatim {
                j += 2;
                continue;
            }
            if c == b'"' {
                if verbatim && self.at(j + 1) == b'"' {
                    j += 2;
                    continue;
                }
                self.push(LiteralKind::Str, i + 1, j);
                return self.after_literal(j + 1);
            }
            if interpolated && c == b'{' {
                if self.at(j + 1) == b'{' {
                    j += 2;
                } else {
                    j = self.skip_interpolation(j + 1);
                }
                continue;
            }
            if c == b'\n' && !verbatim {
                break;
            }
            j += 1;
        }
        let end = j.min(self.b.len());
        self.push(LiteralKind::Str, i + 1, end);
        Some(end)
    }

    /// Rust `r"..."`, `r#"..."#`, `br"..."`, `cr#"..."#` (no escapes inside). `b"..."` and
    /// `c"..."` fall through to the ordinary string on the next byte.
    fn rust_raw_string(&mut self, i: usize) -> Option<usize> {
        let mut j = i;
        if matches!(self.b[j], b'b' | b'c') {
            j += 1;
        }
        if self.at(j) != b'r' {
            return None;
        }
        j += 1;
        let hashes = self.b[j..].iter().take_while(|&&c| c == b'#').count();
        if self.at(j + hashes) != b'"' {
            return None;
        }
        let mut close = vec![b'"'];
        close.extend(std::iter::repeat_n(b'#', hashes));
        self.delimited(j + hashes + 1, &close, false)
    }

    /// JavaScript: is a `/` at `i` the start of a regex literal rather than a division?
    fn regex_allowed(&self, i: usize) -> bool {
        let p = self.prev_sig;
        if p == 0 {
            return true;
        }
        if matches!(
            p,
            b'(' | b','
                | b'='
                | b':'
                | b'['
                | b'!'
                | b'&'
                | b'|'
                | b'?'
                | b'{'
                | b'}'
                | b';'
                | b'+'
                | b'-'
                | b'*'
                | b'%'
                | b'<'
                | b'>'
                | b'~'
                | b'^'
        ) {
            return true;
        }
        if is_ident(p) {
            // `return /x/` vs `a / b`: only a keyword before the slash allows a regex.
            let end = self.prev_sig_at + 1;
            let start = self.b[..end].iter().rposition(|&c| !is_ident(c)).map_or(0, |s| s + 1);
            let word = &self.b[start..end.min(i)];
            return matches!(
                word,
                b"return"
                    | b"typeof"
                    | b"case"
                    | b"in"
                    | b"of"
                    | b"yield"
                    | b"await"
                    | b"void"
                    | b"delete"
                    | b"throw"
                    | b"new"
                    | b"else"
                    | b"do"
            );
        }
        false
    }

    /// A regex literal from the `/` at `i`; if it does not close on this line it was a division
    /// after all and the `/` stays code.
    fn regex(&mut self, i: usize) -> Option<usize> {
        let mut j = i + 1;
        let mut in_class = false;
        // A regex literal is short; the bound keeps a long line of divisions linear.
        let limit = self.b.len().min(i + MAX_REGEX_LEN);
        while j < limit {
            match self.b[j] {
                b'\\' => j += 1,
                b'\n' => return None,
                b'[' => in_class = true,
                b']' => in_class = false,
                b'/' if !in_class => {
                    self.push(LiteralKind::Str, i + 1, j);
                    return self.after_literal(j + 1);
                }
                _ => {}
            }
            j += 1;
        }
        None
    }

    // ---- Python -----------------------------------------------------------------------------

    fn step_python(&mut self, i: usize) -> Option<usize> {
        match self.b[i] {
            b'#' => self.line_comment(i),
            q @ (b'"' | b'\'') => {
                let triple = [q, q, q];
                if self.starts(i, &triple) {
                    // Triple-quoted strings, docstrings included.
                    self.delimited(i + 3, &triple, true)
                } else {
                    self.quoted(i, true, true)
                }
            }
            _ => None,
        }
    }

    // ---- Ruby -------------------------------------------------------------------------------

    fn step_ruby(&mut self, i: usize) -> Option<usize> {
        let c = self.b[i];
        match c {
            b'=' if self.at_line_start(i) && self.starts(i, b"=begin") => {
                let mut j = i;
                loop {
                    let e = self.line_end(j);
                    if e >= self.b.len() {
                        j = e;
                        break;
                    }
                    j = e + 1;
                    if self.starts(j, b"=end") {
                        j = self.line_end(j);
                        break;
                    }
                }
                self.push(LiteralKind::Comment, i, j);
                Some(j)
            }
            b'#' => self.line_comment(i),
            b'"' | b'`' => self.ruby_interpolated(i, c),
            b'\'' => self.quoted(i, true, false),
            b'<' if self.starts(i, b"<<") => self.heredoc(i),
            b'%' => self.percent_literal(i),
            b'/' if self.ruby_regex_allowed() => self.regex(i),
            _ => None,
        }
    }

    fn ruby_regex_allowed(&self) -> bool {
        matches!(self.prev_sig, 0 | b'(' | b',' | b'=' | b'[' | b'!' | b'&' | b'|' | b'{' | b';' | b'~')
    }

    /// `"..."` and backticks with `#{...}` interpolation (masked whole); may span lines.
    fn ruby_interpolated(&mut self, i: usize, q: u8) -> Option<usize> {
        let mut j = i + 1;
        while j < self.b.len() {
            match self.b[j] {
                b'\\' => j += 2,
                b'#' if self.at(j + 1) == b'{' => j = self.skip_interpolation(j + 2),
                c if c == q => {
                    self.push(LiteralKind::Str, i + 1, j);
                    return self.after_literal(j + 1);
                }
                _ => j += 1,
            }
        }
        self.push(LiteralKind::Str, i + 1, self.b.len());
        Some(self.b.len())
    }

    /// `%w[...]`, `%i(...)`, `%q{...}`, `%Q<...>`: only with the letter, because a bare
    /// `%(` is too often a modulo.
    fn percent_literal(&mut self, i: usize) -> Option<usize> {
        if !matches!(self.at(i + 1), b'q' | b'Q' | b'w' | b'W' | b'i' | b'I' | b'r' | b's' | b'x') {
            return None;
        }
        let open = self.at(i + 2);
        let close = match open {
            b'(' => b')',
            b'[' => b']',
            b'{' => b'}',
            b'<' => b'>',
            b'|' | b'!' | b'/' => open,
            _ => return None,
        };
        let mut depth = 1;
        let mut j = i + 3;
        while j < self.b.len() {
            let c = self.b[j];
            if c == b'\\' {
                j += 2;
                continue;
            }
            if c == close {
                depth -= 1;
                if depth == 0 {
                    self.push(LiteralKind::Str, i + 3, j);
                    return self.after_literal(j + 1);
                }
            } else if c == open && open != close {
                depth += 1;
            }
            j += 1;
        }
        self.push(LiteralKind::Str, i + 3, self.b.len());
        Some(self.b.len())
    }

    /// `<<~SQL`, `<<-EOS`, `<<ID`, `<<~'ID'`: the body (next line up to the terminator line) is
    /// the string; the rest of the opening line stays code. `a << B` (with a space) is a shift.
    fn heredoc(&mut self, i: usize) -> Option<usize> {
        let mut j = i + 2;
        let squiggly = matches!(self.at(j), b'~' | b'-');
        if squiggly {
            j += 1;
        }
        let quote = matches!(self.at(j), b'\'' | b'"').then(|| self.at(j));
        if quote.is_some() {
            j += 1;
        }
        let id_start = j;
        while is_ident(self.at(j)) {
            j += 1;
        }
        let id = &self.b[id_start..j];
        let plausible =
            !id.is_empty() && (squiggly || quote.is_some() || id.iter().all(|c| c.is_ascii_uppercase() || *c == b'_'));
        if !plausible || id[0].is_ascii_digit() {
            return None;
        }
        let id = id.to_vec();
        let body_start = self.line_end(i) + 1;
        if body_start >= self.b.len() {
            return None;
        }
        // Find the terminator line.
        let mut k = body_start;
        let mut body_end = self.b.len();
        while k < self.b.len() {
            let e = self.line_end(k);
            let line = &self.b[k..e];
            let trimmed = trim_ascii(line);
            if trimmed == id.as_slice() {
                body_end = k;
                break;
            }
            k = e + 1;
        }
        // The opening line up to the newline is scanned as code by the main loop: mask the
        // body now and resume after the terminator line, which is the only way to skip it
        // from a forward scanner. Literals on the rest of the opening line are found first.
        let line_end = self.line_end(i);
        let mut p = j + usize::from(quote.is_some());
        while p < line_end {
            match self.step_ruby(p) {
                Some(n) => p = n.max(p + 1),
                None => p += 1,
            }
        }
        self.push(LiteralKind::Str, body_start, body_end);
        let resume = if body_end < self.b.len() { self.line_end(body_end) } else { body_end };
        Some(resume)
    }
}

/// Length of the UTF-8 sequence that starts with `lead` (1 for a stray continuation byte).
fn utf8_len(lead: u8) -> usize {
    match lead {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

fn trim_ascii(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|c| !c.is_ascii_whitespace()).unwrap_or(s.len());
    let end = s.iter().rposition(|c| !c.is_ascii_whitespace()).map_or(start, |e| e + 1);
    &s[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(src: &str, lang: Lang) -> String {
        let out = mask_comments_and_strings(src, lang);
        assert_eq!(out.len(), src.len(), "byte length changed for {src:?}");
        assert_eq!(
            out.match_indices('\n').map(|(i, _)| i).collect::<Vec<_>>(),
            src.match_indices('\n').map(|(i, _)| i).collect::<Vec<_>>(),
            "line breaks moved for {src:?}"
        );
        out
    }

    #[test]
    fn js_line_and_block_comments_are_blanked_whole() {
        assert_eq!(m("a(); // useEffect(x)\nb();", Lang::TypeScript), "a();                \nb();");
        assert_eq!(m("a /* x\ny */ b", Lang::JavaScript), "a     \n     b");
    }

    #[test]
    fn strings_keep_their_quotes() {
        assert_eq!(m(r#"f("a\"b", 'c')"#, Lang::JavaScript), r#"f("    ", ' ')"#);
        assert_eq!(m("s = \"x # y\" # c", Lang::Python), "s = \"     \"    ");
    }

    #[test]
    fn js_template_literal_is_masked_whole_including_nested_templates() {
        let src = "const q = `a ${b ? `c` : \"}\"} d`; x()";
        assert_eq!(m(src, Lang::TypeScript), format!("const q = `{}`; x()", " ".repeat(20)));
    }

    #[test]
    fn js_regex_vs_division() {
        assert_eq!(m("x = a / b; y = c / d", Lang::JavaScript), "x = a / b; y = c / d");
        assert_eq!(m("s.replace(/'/g, '')", Lang::JavaScript), "s.replace(/ /g, '')");
        assert_eq!(m("return /a\"b/.test(s)", Lang::JavaScript), "return /   /.test(s)");
    }

    #[test]
    fn unterminated_js_string_stops_at_line_end() {
        assert_eq!(m("<p>Don't</p>\nuseState(1)", Lang::TypeScript), "<p>Don'     \nuseState(1)");
    }

    #[test]
    fn python_triple_quotes_and_docstrings() {
        let src = "def f():\n    \"\"\"Doc with 'quote'\n    await x\"\"\"\n    return '''a'''\n";
        let out = m(src, Lang::Python);
        assert!(!out.contains("await") && !out.contains("Doc"), "{out}");
        assert!(out.contains("\"\"\"") && out.contains("return '''") && out.contains("def f():"));
    }

    #[test]
    fn ruby_begin_end_heredoc_and_interpolation() {
        let src =
            "=begin\nclass X\n=end\nsql = <<~SQL.strip\n  SELECT 1\nSQL\nputs \"#{a ? \"b\" : 'c'} d\" # rescue\nx = 1";
        let out = m(src, Lang::Ruby);
        assert!(!out.contains("class X") && !out.contains("SELECT") && !out.contains("rescue"), "{out}");
        assert!(out.contains("sql = <<~SQL.strip") && out.contains("\nSQL\n") && out.ends_with("x = 1"), "{out}");
        assert_eq!(m("a << b # c", Lang::Ruby), "a << b    ");
        assert_eq!(m("%w[a b] + x", Lang::Ruby), "%w[   ] + x");
    }

    #[test]
    fn rust_raw_strings_chars_and_lifetimes() {
        assert_eq!(m(r##"let s = r#"a "quoted" b"#; x"##, Lang::Rust), r##"let s = r#"            "#; x"##);
        assert_eq!(m("fn f<'a>(x: &'a str) -> char { 'x' }", Lang::Rust), "fn f<'a>(x: &'a str) -> char { ' ' }");
        assert_eq!(m(r"let c = '\''; let d = b'}';", Lang::Rust), r"let c = '  '; let d = b' ';");
        assert_eq!(m("let e = 'é'; 'outer: loop {}", Lang::Rust), "let e = '  '; 'outer: loop {}");
        assert_eq!(m("/* a /* b */ c */ d", Lang::Rust), "                  d");
    }

    #[test]
    fn go_backtick_and_rune_literals() {
        assert_eq!(
            m("q := `SELECT \"x\"\nFROM t` // c\nr := 'x'", Lang::Go),
            "q := `          \n      `     \nr := ' '"
        );
    }

    #[test]
    fn csharp_verbatim_interpolated_and_raw() {
        assert_eq!(m(r#"var a = @"c:\x""y"; b()"#, Lang::CSharp), r#"var a = @"       "; b()"#);
        assert_eq!(m(r#"var s = $"{d["k"]} x"; c()"#, Lang::CSharp), r#"var s = $"          "; c()"#);
        assert_eq!(m("var r = \"\"\"\n a \"q\" \n\"\"\";", Lang::CSharp), "var r = \"\"\"\n       \n\"\"\";");
    }

    #[test]
    fn java_text_block() {
        assert_eq!(m("String q = \"\"\"\n  try {\n  \"\"\";", Lang::Java), "String q = \"\"\"\n       \n  \"\"\";");
    }

    #[test]
    fn multibyte_text_keeps_length() {
        let src = "// héllo ✓\nlet s = \"日本\"; 'é'";
        let out = m(src, Lang::TypeScript);
        assert!(out.is_char_boundary(out.len()));
        assert!(out.starts_with("           "));
    }

    #[test]
    fn lang_for_path_by_extension() {
        assert_eq!(lang_for_path("app/page.tsx"), Some(Lang::TypeScript));
        assert_eq!(lang_for_path("x/y.cjs"), Some(Lang::JavaScript));
        assert_eq!(lang_for_path("Gemfile"), Some(Lang::Ruby));
        assert_eq!(lang_for_path("README.md"), None);
        assert_eq!(lang_for_path("noext"), None);
    }

    #[test]
    fn garbage_never_panics() {
        for src in ["'", "\"", "`", "/*", "r#\"", "<<~X", "=begin", "%w[", "$\"{", "'\\", "b'", "'é"] {
            for lang in [Lang::TypeScript, Lang::Python, Lang::Go, Lang::Rust, Lang::Ruby, Lang::CSharp, Lang::Java] {
                let _ = m(src, lang);
            }
        }
    }
}
