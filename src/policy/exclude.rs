//! Excluded projects (SPEC §3.3): the glob matcher behind `VIBELEARN_EXCLUDED_PROJECTS`,
//! which decides whether a hook ignores the session of a working directory.
//!
//! # Glob rules
//! - `*` matches any run of characters without `/`; `?` matches one character other than `/`;
//!   `**` (or any longer run of `*`) matches anything, `/` included. Everything else is
//!   literal: there are no escapes and no `[...]` classes, because a path like
//!   `C:\work\[old]` must match itself.
//! - `\` is read as `/` in both the pattern and the path, so Windows paths work either way.
//! - The pattern must match the whole path. Case counts where the file systems make it count
//!   (Linux) and not where they do not (Windows, macOS: `platform::PATHS_IGNORE_CASE`), so
//!   excluding `C:\Work\Secret\**` also keeps out a session an agent reports in
//!   `c:\work\secret`.
//! - Two conveniences from `.gitignore`, where the spec is silent: a trailing `/**` also
//!   matches the directory itself (`~/work/**` excludes `~/work` and everything under it), and
//!   `**/` at the start or after a `/` may match no directory at all (`a/**/b` matches `a/b`).
//!
//! # Performance
//! Iterative matching with one backtrack point per star kind (the last `*` and the last
//! `**`), as in the classic wildcard algorithm: O(pattern × path) at worst, never
//! exponential, so `a*a*a*a*…b` against a long run of `a` stays fast. Why one point per kind
//! suffices: the text between two `**` is matched at its earliest position, which can only
//! leave more choices to the `**` after it; a `*` cannot cross `/`, so once the last `*`
//! reaches a `/` no earlier `*` in the same segment could do better either.

/// Whether `path` matches `pattern` as a whole (see the module doc for the rules).
pub fn glob_match(pattern: &str, path: &str) -> bool {
    let pat = tokenize(pattern);
    let text: Vec<char> = path.chars().map(slash).collect();
    matches(&pat, &text)
}

/// Whether `cwd` matches any pattern of the comma list `patterns_csv` (entries trimmed, empty
/// entries ignored). A leading `~` (alone or before `/`) is replaced by `home`; when `home` is
/// unknown such an entry is skipped, since it cannot name an absolute directory. Trailing
/// slashes of `cwd` are ignored (but `/` stays `/`).
pub fn is_excluded(cwd: &str, patterns_csv: &str, home: Option<&str>) -> bool {
    is_excluded_folding(cwd, patterns_csv, home, crate::platform::PATHS_IGNORE_CASE)
}

/// [`is_excluded`], with case folded (`ignore_case`) or not.
fn is_excluded_folding(cwd: &str, patterns_csv: &str, home: Option<&str>, ignore_case: bool) -> bool {
    let fold = |s: &str| if ignore_case { s.to_lowercase() } else { s.to_owned() };
    let cwd: String = fold(cwd).chars().map(slash).collect();
    let trimmed = cwd.trim_end_matches('/');
    let cwd = if trimmed.is_empty() && !cwd.is_empty() { "/" } else { trimmed };
    patterns_csv
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .filter_map(|p| expand_home(p, home))
        .any(|p| glob_match(&fold(&p), cwd))
}

/// `~` or `~/…` with `home` substituted; other patterns unchanged (`~user` is not expanded).
fn expand_home(pattern: &str, home: Option<&str>) -> Option<String> {
    let Some(rest) = pattern.strip_prefix('~') else {
        return Some(pattern.to_string());
    };
    if !(rest.is_empty() || rest.starts_with(['/', '\\'])) {
        return Some(pattern.to_string());
    }
    let home = home?;
    let home = home.trim_end_matches(['/', '\\']);
    Some(format!("{home}{rest}"))
}

fn slash(c: char) -> char {
    if c == '\\' { '/' } else { c }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Lit(char),
    /// `?`
    One,
    /// `*`
    Star,
    /// `**` not followed by `/`, or not after a `/`: anything.
    AnyPath,
    /// `**/` at the start or after `/`: nothing, or anything ending in `/`.
    Dirs,
    /// A trailing `/**`: nothing, or `/` followed by anything. Always the last token.
    SubTree,
}

fn tokenize(pattern: &str) -> Vec<Tok> {
    let chars: Vec<char> = pattern.chars().map(slash).collect();
    let mut toks = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '*' {
            toks.push(if c == '?' { Tok::One } else { Tok::Lit(c) });
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|&&c| c == '*').count();
        let (start, end) = (i, i + run);
        i = end;
        if run == 1 {
            toks.push(Tok::Star);
            continue;
        }
        let after_slash = start == 0 || chars[start - 1] == '/';
        if end == chars.len() && toks.last() == Some(&Tok::Lit('/')) {
            toks.pop(); // the `/` is part of the sub-tree token
            toks.push(Tok::SubTree);
        } else if after_slash && chars.get(end) == Some(&'/') {
            toks.push(Tok::Dirs);
            i += 1; // the `/` belongs to the token
        } else {
            toks.push(Tok::AnyPath);
        }
    }
    toks
}

fn matches(pat: &[Tok], text: &[char]) -> bool {
    let (mut p, mut t) = (0, 0);
    // (pattern index after the star, text index the star's match currently ends at)
    let mut star: Option<(usize, usize)> = None;
    let mut any: Option<(usize, usize, Tok)> = None;
    loop {
        match pat.get(p) {
            Some(Tok::Lit(c)) if text.get(t) == Some(c) => (p, t) = (p + 1, t + 1),
            Some(Tok::One) if text.get(t).is_some_and(|&c| c != '/') => (p, t) = (p + 1, t + 1),
            Some(Tok::Star) => {
                star = Some((p + 1, t));
                p += 1;
            }
            Some(&tok @ (Tok::AnyPath | Tok::Dirs)) => {
                any = Some((p + 1, t, tok));
                star = None;
                p += 1;
            }
            Some(Tok::SubTree) if t == text.len() || text[t] == '/' => return true,
            None if t == text.len() => return true,
            _ => {
                // Mismatch: let the last `*` take one more char, else the last `**`.
                if let Some((sp, st)) = star
                    && text.get(st).is_some_and(|&c| c != '/')
                {
                    star = Some((sp, st + 1));
                    (p, t) = (sp, st + 1);
                    continue;
                }
                let Some((ap, at, tok)) = any else {
                    return false;
                };
                let next = match tok {
                    Tok::Dirs => text[at..].iter().position(|&c| c == '/').map(|o| at + o + 1),
                    _ => (at < text.len()).then_some(at + 1),
                };
                let Some(nt) = next else { return false };
                any = Some((ap, nt, tok));
                star = None;
                (p, t) = (ap, nt);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_patterns_match_the_whole_path_only() {
        assert!(glob_match("/home/u/app", "/home/u/app"));
        assert!(!glob_match("/home/u/app", "/home/u/app2"));
        assert!(!glob_match("/home/u/app", "/home/u/ap"));
        assert!(!glob_match("home/u", "/home/u"));
        assert!(!glob_match("/home/U", "/home/u"));
        assert!(glob_match("", ""));
        assert!(!glob_match("", "a"));
        assert!(glob_match("/w/[old]{x}", "/w/[old]{x}"));
    }

    #[test]
    fn star_matches_within_one_segment() {
        assert!(glob_match("/home/*/app", "/home/u/app"));
        assert!(glob_match("/home/*/app", "/home//app"));
        assert!(!glob_match("/home/*/app", "/home/a/b/app"));
        assert!(glob_match("/w/*", "/w/x"));
        assert!(!glob_match("/w/*", "/w/x/y"));
        assert!(glob_match("/w/ab*cd", "/w/abXXcd"));
        assert!(glob_match("/w/*-secret*", "/w/client-secret-v2"));
        assert!(!glob_match("/w/*-secret", "/w/a/client-secret"));
    }

    #[test]
    fn double_star_matches_across_segments() {
        assert!(glob_match("**", "/any/thing/at/all"));
        assert!(glob_match("/home/**/app", "/home/a/b/c/app"));
        assert!(glob_match("**/secret", "/x/y/secret"));
        assert!(glob_match("/w/a**z", "/w/a/b/z"));
        assert!(!glob_match("/w/**/app", "/w/x/app2"));
        assert!(glob_match("/w/***", "/w/a/b"));
    }

    #[test]
    fn gitignore_style_zero_directory_forms() {
        assert!(glob_match("/w/**", "/w"));
        assert!(glob_match("/w/**", "/w/"));
        assert!(glob_match("/w/**", "/w/a/b"));
        assert!(!glob_match("/w/**", "/wx"));
        assert!(glob_match("/a/**/b", "/a/b"));
        assert!(glob_match("/a/**/b", "/a/x/y/b"));
        assert!(!glob_match("/a/**/b", "/a/xb"));
        assert!(glob_match("**/b", "b"));
        // A `/` already taken by a `**/` is not taken again by a trailing `**`.
        assert!(glob_match("**/**", "a/b"));
        assert!(glob_match("/w/**/**", "/w/a/b"));
        assert!(glob_match("/w/**/**", "/w/"));
        assert_eq!(tokenize("a/**"), [Tok::Lit('a'), Tok::SubTree]);
        assert_eq!(tokenize("**/**"), [Tok::Dirs, Tok::AnyPath]);
    }

    #[test]
    fn question_mark_is_one_char_but_not_a_slash() {
        assert!(glob_match("/w/app?", "/w/app1"));
        assert!(glob_match("/w/app?", "/w/appé"));
        assert!(!glob_match("/w/app?", "/w/app"));
        assert!(!glob_match("/w/app?", "/w/app12"));
        assert!(!glob_match("/w?x", "/w/x"));
    }

    #[test]
    fn backslash_reads_as_slash_on_both_sides() {
        assert!(glob_match(r"C:\work\*", "C:/work/app"));
        assert!(glob_match("C:/work/*", r"C:\work\app"));
        assert!(glob_match(r"C:\work\**", r"C:\work\a\b"));
        assert!(!glob_match(r"C:\work\*", r"C:\work\a\b"));
    }

    #[test]
    fn no_exponential_blowup() {
        let pattern = format!("{}b", "a*".repeat(30));
        let text = "a".repeat(5_000);
        let start = std::time::Instant::now();
        assert!(!glob_match(&pattern, &text));
        assert!(!glob_match(&format!("{}b", "a**".repeat(30)), &text));
        assert!(!glob_match(&format!("{}b", "**/a".repeat(30)), &"/a".repeat(2_000)));
        assert!(start.elapsed().as_secs() < 10, "took {:?}", start.elapsed());
    }

    /// Plain recursive definition of the same language, to check the iterative matcher.
    fn reference(p: &[Tok], t: &[char]) -> bool {
        match p.first() {
            None => t.is_empty(),
            Some(Tok::Lit(c)) => t.first() == Some(c) && reference(&p[1..], &t[1..]),
            Some(Tok::One) => t.first().is_some_and(|&c| c != '/') && reference(&p[1..], &t[1..]),
            Some(Tok::Star) => {
                (0..=t.len()).take_while(|&k| k == 0 || t[k - 1] != '/').any(|k| reference(&p[1..], &t[k..]))
            }
            Some(Tok::AnyPath) => (0..=t.len()).any(|k| reference(&p[1..], &t[k..])),
            Some(Tok::Dirs) => {
                (0..=t.len()).filter(|&k| k == 0 || t[k - 1] == '/').any(|k| reference(&p[1..], &t[k..]))
            }
            Some(Tok::SubTree) => t.is_empty() || t[0] == '/',
        }
    }

    #[test]
    fn property_iterative_matcher_agrees_with_recursive_definition() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut rnd = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let pat_parts = ["a", "b", "/", "*", "**", "?", "**/", "/**"];
        let text_parts = ["a", "b", "/", "ab"];
        for _ in 0..20_000 {
            let pattern: String = (0..rnd(7)).map(|_| pat_parts[rnd(pat_parts.len())]).collect();
            let text: String = (0..rnd(8)).map(|_| text_parts[rnd(text_parts.len())]).collect();
            let chars: Vec<char> = text.chars().collect();
            let expected = reference(&tokenize(&pattern), &chars);
            assert_eq!(glob_match(&pattern, &text), expected, "{pattern:?} vs {text:?}");
        }
    }

    #[test]
    fn excluded_by_comma_list_with_trimming_and_empty_entries() {
        let list = " /tmp/* , ,/home/u/secret/**,, ";
        assert!(is_excluded("/tmp/scratch", list, None));
        assert!(is_excluded("/home/u/secret", list, None));
        assert!(is_excluded("/home/u/secret/sub/dir", list, None));
        assert!(!is_excluded("/home/u/public", list, None));
        assert!(!is_excluded("/tmp/a/b", list, None));
        assert!(!is_excluded("/anything", "", None));
        assert!(!is_excluded("/anything", " , ,", None));
    }

    #[test]
    fn tilde_is_expanded_with_home() {
        assert!(is_excluded("/home/u/work/x", "~/work/*", Some("/home/u")));
        assert!(is_excluded("/home/u/work/x", "~/work/*", Some("/home/u/")));
        assert!(is_excluded("/home/u", "~", Some("/home/u")));
        assert!(is_excluded(r"C:\Users\u\work", r"~\work", Some(r"C:\Users\u")));
        // Without a home, `~` entries cannot match but the others still count.
        assert!(!is_excluded("/home/u/work/x", "~/work/*", None));
        assert!(is_excluded("/home/u/work/x", "~/work/*,/home/**", None));
        // `~user` and a `~` elsewhere are literal.
        assert!(!is_excluded("/home/u/x", "~u/x", Some("/home/u")));
        assert!(is_excluded("/a/~/b", "/a/~/b", Some("/home/u")));
    }

    #[test]
    fn case_counts_only_where_the_file_systems_make_it_count() {
        let list = r"C:\Work\Secret\**, /Users/u/Private";
        for (cwd, excluded_where_case_is_ignored) in [
            (r"C:\Work\Secret", true),
            (r"c:\work\secret\api", true),
            ("/users/u/private", true),
            (r"c:\work\public", false),
        ] {
            assert_eq!(is_excluded_folding(cwd, list, None, true), excluded_where_case_is_ignored, "{cwd}");
            assert_eq!(is_excluded_folding(cwd, list, None, false), cwd == r"C:\Work\Secret", "{cwd}");
        }
        // The product's own: folded on Windows and macOS, exact on Linux.
        assert_eq!(is_excluded(r"c:\work\secret", list, None), cfg!(any(windows, target_os = "macos")));
    }

    #[test]
    fn trailing_slash_of_cwd_is_ignored() {
        assert!(is_excluded("/home/u/app/", "/home/u/app", None));
        assert!(is_excluded("/home/u/app//", "/home/u/*", None));
        assert!(is_excluded(r"C:\work\app\", "C:/work/app", None));
        assert!(is_excluded("/", "/", None));
    }
}
