//! Small hand-written matchers the language rules share: word search with identifier
//! boundaries, reading an identifier or a dotted path next to an offset, stripping leading
//! modifiers. No regex crate: every helper is a bounded forward or backward scan over one line,
//! which keeps a rule linear in the line length.
//!
//! # Bounded scans
//! Every helper that walks away from an offset (to a matching parenthesis, back over spaces or a
//! path) stops after `SCAN_WINDOW` bytes. Without the bound a minified bundle (one 2 MB line
//! with 50 000 arrow functions) makes each lookup cross the whole line: quadratic, minutes
//! instead of milliseconds. Real code closes its parentheses and names its callees well within
//! the window.

/// Farthest a helper scans from its starting offset, in bytes.
pub const SCAN_WINDOW: usize = 512;

/// `s[from..]`, cut to at most `SCAN_WINDOW` bytes (on a char boundary).
pub fn ahead(s: &str, from: usize) -> &str {
    let rest = s.get(from..).unwrap_or("");
    super::truncate(rest, SCAN_WINDOW)
}

/// An identifier byte in any of the supported languages (`$` for JavaScript).
pub fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// Offsets of `word` in `hay` where it is not glued to identifier bytes on either side (the
/// right side is only checked when `word` ends with an identifier byte, so `"foo("` works).
pub fn find_word<'a>(hay: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    let hb = hay.as_bytes();
    let wb = word.as_bytes();
    let check_left = wb.first().is_some_and(|&c| is_ident(c));
    let check_right = wb.last().is_some_and(|&c| is_ident(c));
    hay.match_indices(word).map(|(i, _)| i).filter(move |&i| {
        let left_ok = !check_left || i == 0 || !is_ident(hb[i - 1]);
        let right_ok = !check_right || hb.get(i + wb.len()).is_none_or(|&c| !is_ident(c));
        left_ok && right_ok
    })
}

/// Whether `word` occurs in `hay` as a word.
pub fn has_word(hay: &str, word: &str) -> bool {
    find_word(hay, word).next().is_some()
}

/// The identifier starting exactly at `pos` (empty if none).
pub fn ident_at(s: &str, pos: usize) -> &str {
    let b = s.as_bytes();
    let mut end = pos;
    while end < b.len() && is_ident(b[end]) {
        end += 1;
    }
    s.get(pos..end).unwrap_or("")
}

/// The identifier after `pos`, skipping spaces and tabs; `None` if there is none.
pub fn ident_after(s: &str, pos: usize) -> Option<&str> {
    let start = skip_spaces(s, pos);
    let id = ident_at(s, start);
    (!id.is_empty()).then_some(id)
}

/// First offset at or after `pos` that is not a space or tab.
pub fn skip_spaces(s: &str, pos: usize) -> usize {
    let b = s.as_bytes();
    let mut i = pos;
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    i
}

/// The dotted/`::` path that ends right before `end`, e.g. `prisma.user.findMany` before
/// `(`; trailing spaces are skipped first.
pub fn path_before(s: &str, end: usize) -> &str {
    let b = s.as_bytes();
    let mut e = end.min(b.len());
    let space_floor = e.saturating_sub(SCAN_WINDOW);
    while e > space_floor && b[e - 1] == b' ' {
        e -= 1;
    }
    let mut st = e;
    let floor = e.saturating_sub(SCAN_WINDOW);
    while st > floor && (is_ident(b[st - 1]) || b[st - 1] == b'.' || b[st - 1] == b':') {
        st -= 1;
    }
    s.get(st..e).unwrap_or("").trim_start_matches(['.', ':'])
}

/// The dotted/`::` path that starts at `pos` (after spaces), e.g. `prisma.user.findMany`.
pub fn path_after(s: &str, pos: usize) -> &str {
    let b = s.as_bytes();
    let st = skip_spaces(s, pos);
    let mut e = st;
    while e < b.len() && (is_ident(b[e]) || b[e] == b'.' || b[e] == b':') {
        e += 1;
    }
    s.get(st..e).unwrap_or("").trim_end_matches(['.', ':'])
}

/// If `s` starts with `word` followed by a non-identifier byte (or the end), the rest.
pub fn strip_word<'a>(s: &'a str, word: &str) -> Option<&'a str> {
    let rest = s.strip_prefix(word)?;
    match rest.as_bytes().first() {
        Some(&c) if is_ident(c) => None,
        _ => Some(rest),
    }
}

/// Trims the start and removes any number of the given leading keywords (`export`, `public`,
/// `async` …), each followed by whitespace.
pub fn strip_modifiers<'a>(s: &'a str, words: &[&str]) -> &'a str {
    let mut s = s.trim_start();
    'outer: loop {
        for w in words {
            if let Some(rest) = strip_word(s, w)
                && rest.starts_with([' ', '\t'])
            {
                s = rest.trim_start();
                continue 'outer;
            }
        }
        return s;
    }
}

/// `name` ends with one of the layered-architecture suffixes (…Service, …Repository …).
pub fn layered_suffix(name: &str) -> bool {
    const SUFFIXES: [&str; 5] = ["Service", "Repository", "Controller", "Handler", "Factory"];
    SUFFIXES.iter().any(|s| name.len() > s.len() && name.ends_with(s))
}

/// Offset of the `)` that closes the `(` at `open` on the same line, if any.
pub fn matching_paren(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &c) in s.as_bytes().iter().enumerate().skip(open).take(SCAN_WINDOW) {
        match c {
            b'(' => depth += 1,
            b')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Offset of the `(` that opens the `)` at `close`, scanning backwards on the same line.
pub fn matching_open_paren(s: &str, close: usize) -> Option<usize> {
    let mut depth = 0usize;
    let top = close.min(s.len().saturating_sub(1));
    for i in (top.saturating_sub(SCAN_WINDOW)..=top).rev() {
        match s.as_bytes()[i] {
            b')' => depth += 1,
            b'(' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The last non-space byte before `pos` and its offset.
pub fn prev_non_space(s: &str, pos: usize) -> Option<(usize, u8)> {
    let b = s.as_bytes();
    let top = pos.min(b.len());
    (top.saturating_sub(SCAN_WINDOW)..top).rev().find(|&i| !b[i].is_ascii_whitespace()).map(|i| (i, b[i]))
}

/// One call site on a line: `recv.name(` / `recv::name(` / `name<T>(` / `name!(`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call<'a> {
    /// The path before the name without its trailing separator (`prisma.user`), or "".
    pub recv: &'a str,
    /// The called name; a Rust macro keeps its `!` (`join!`).
    pub name: &'a str,
    /// Offset of the first byte of `name`.
    pub name_at: usize,
    /// Offset of the `(`.
    pub open: usize,
    /// Called as a method (`x.name(`, also on an expression like `f().name(`).
    pub method: bool,
}

impl Call<'_> {
    /// `recv.name` or `name` (the separator is normalised to `.` unless it was `::`).
    pub fn path(&self, line: &str) -> String {
        if self.recv.is_empty() {
            return self.name.to_string();
        }
        let sep = if line[..self.name_at].ends_with("::") { "::" } else { "." };
        format!("{}{sep}{}", self.recv, self.name)
    }
}

/// Every call site on a line, left to right. Generic arguments right before the parenthesis
/// (`useState<User[]>(`) are skipped when they close within a short distance.
pub fn calls(line: &str) -> Vec<Call<'_>> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    for open in line.match_indices('(').map(|(i, _)| i) {
        let mut e = open;
        if e > 0 && b[e - 1] == b'>' {
            // Walk back over `<...>`, bounded so a long line cannot make this quadratic.
            let mut depth = 0usize;
            let mut j = e;
            let floor = e.saturating_sub(80);
            while j > floor {
                j -= 1;
                match b[j] {
                    b'>' => depth += 1,
                    b'<' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
            if depth != 0 {
                continue;
            }
            e = j;
            if line[..e].ends_with("::") {
                e -= 2; // Rust turbofish: `query_as::<_, User>(`.
            }
        }
        let bang = e > 0 && b[e - 1] == b'!';
        let name_end = if bang { e - 1 } else { e };
        let mut st = name_end;
        while st > 0 && is_ident(b[st - 1]) {
            st -= 1;
        }
        if st == name_end {
            continue;
        }
        let name = if bang { &line[st..e] } else { &line[st..name_end] };
        let recv = if st >= 2 && b[st - 2..st] == *b"::" {
            path_before(line, st - 2)
        } else if st >= 1 && b[st - 1] == b'.' {
            path_before(line, st - 1)
        } else {
            ""
        };
        let method = st >= 1 && b[st - 1] == b'.';
        out.push(Call { recv, name, name_at: st, open, method });
    }
    out
}

/// For an arrow (`=>` in JS/C#, `->` in Java) at `arrow`, the name of the function the arrow
/// function is passed to (`map`, `useEffect`, `app.get` → `get`), "callback" when the callee
/// is not a plain name, or `None` when the arrow function is not an argument (e.g. assigned).
pub fn arrow_arg_callee(line: &str, arrow: usize) -> Option<String> {
    let b = line.as_bytes();
    let (pe, last) = prev_non_space(line, arrow)?;
    let mut ps = if last == b')' {
        matching_open_paren(line, pe)?
    } else if is_ident(last) {
        let mut st = pe;
        while st > 0 && is_ident(b[st - 1]) {
            st -= 1;
        }
        st
    } else {
        return None;
    };
    if line[..ps].trim_end().ends_with("async") {
        ps = line[..ps].trim_end().len() - "async".len();
    }
    let (at, c) = prev_non_space(line, ps)?;
    let open = match c {
        b'(' => at,
        b',' => enclosing_open_paren(line, at)?,
        _ => return None,
    };
    // `calls` also steps over generic arguments: `create<State>((set) => …)`.
    let mut from = open.saturating_sub(SCAN_WINDOW);
    while !line.is_char_boundary(from) {
        from += 1;
    }
    let callee = calls(&line[from..=open]).pop().filter(|c| c.open + from == open).map_or("", |c| c.name);
    Some(if callee.is_empty() { "callback".to_string() } else { callee.to_string() })
}

/// The unmatched `(` to the left of `pos` on the line.
pub fn enclosing_open_paren(line: &str, pos: usize) -> Option<usize> {
    let b = line.as_bytes();
    let mut depth = 0usize;
    let top = pos.min(b.len());
    for i in (top.saturating_sub(SCAN_WINDOW)..top).rev() {
        match b[i] {
            b')' | b']' | b'}' => depth += 1,
            b'(' | b'[' | b'{' => {
                if depth == 0 {
                    return (b[i] == b'(').then_some(i);
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_word_respects_boundaries() {
        assert_eq!(find_word("await x; awaited; a.await", "await").collect::<Vec<_>>(), vec![0, 20]);
        assert_eq!(find_word("xuseState( useState(", "useState(").collect::<Vec<_>>(), vec![11]);
    }

    #[test]
    fn paths_and_idents() {
        let s = "  const u = await prisma.user.findMany({";
        let p = s.find("({").unwrap_or(0);
        assert_eq!(path_before(s, p), "prisma.user.findMany");
        assert_eq!(path_after(s, s.find("prisma").unwrap_or(0)), "prisma.user.findMany");
        assert_eq!(ident_after("fn  foo(", 2), Some("foo"));
        assert_eq!(ident_after("fn (", 2), None);
    }

    #[test]
    fn modifiers_and_parens() {
        assert_eq!(strip_modifiers("  export default async function X", &["export", "default", "async"]), "function X");
        assert_eq!(strip_modifiers("exported x", &["export"]), "exported x");
        assert_eq!(matching_paren("f(a(b), c) d", 1), Some(9));
        assert_eq!(matching_open_paren("f(a(b), c) d", 9), Some(1));
        assert!(layered_suffix("UserService") && !layered_suffix("Service"));
    }

    #[test]
    fn arrow_callee() {
        let l = "xs.map((x) => x + 1); useEffect(() => {}, []); const f = (a) => a; g(1, async y => y); c<S>((s) => 1)";
        let arrows: Vec<usize> = l.match_indices("=>").map(|(i, _)| i).collect();
        let got: Vec<Option<String>> = arrows.iter().map(|&a| arrow_arg_callee(l, a)).collect();
        assert_eq!(got, vec![Some("map".into()), Some("useEffect".into()), None, Some("g".into()), Some("c".into())]);
    }

    #[test]
    fn calls_on_a_line() {
        let line = "const [a] = React.useState<User[]>([]); tokio::join!(x); prisma.user.findMany({});";
        let c = calls(line);
        let names: Vec<String> = c.iter().map(|c| c.path(line)).collect();
        assert_eq!(names, vec!["React.useState", "tokio::join!", "prisma.user.findMany"]);
    }
}
