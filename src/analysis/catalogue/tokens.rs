//! Finding tokens in code: whole-token search (so `await` is not found inside `awaited`) and
//! the blanking used by fill_in_blank questions. Shared by the question templates and the
//! offline provider's fallback, which looks for a concept's tokens in captured files.

use crate::analysis::Lang;
use crate::analysis::questions::count_blanks;

/// Catalogue tokens written for one language that mean something else in another, so they
/// are no evidence of the concept there (issue 31: "Closures" was picked for Ruby code by its
/// `=>`, which in Ruby binds a rescued error or maps a hash key).
const NOT_EVIDENCE_IN: [(&str, Lang); 2] = [("=>", Lang::Ruby), ("=>", Lang::Python)];

/// Whether `token` found in `lang` code is evidence of the concept it is listed for (see
/// [`NOT_EVIDENCE_IN`]).
pub fn is_evidence_in(token: &str, lang: Option<Lang>) -> bool {
    !NOT_EVIDENCE_IN.iter().any(|(t, l)| *t == token && Some(*l) == lang)
}

/// Blank answers that teach nothing: a declaration keyword the next word gives away, or a
/// lone sigil.
pub const DECLARATION_KEYWORDS: &[&str] = &[
    "struct",
    "type",
    "trait",
    "impl",
    "enum",
    "fn",
    "func",
    "def",
    "class",
    "interface",
    "module",
    "let",
    "var",
    "const",
    "val",
    "pub",
    "package",
    "import",
    "use",
    "it",
    "describe",
    "test",
    "end",
    "do",
    "record",
    "namespace",
    "public",
    "private",
    "static",
    "void",
    "function",
    "mod",
];

/// Answers the line's own syntax gives away, in any language (the hand-graded sample of issue
/// 40 found `nil` in `err != ___`, `with` in `___ pytest.raises(…) as info:`, `return`, and
/// `assert_eq!` at the head of a test's statement): a literal, a keyword the grammar forces
/// there, an assertion every test line starts with.
const GIVEN_AWAY: &[&str] = &[
    "derive",
    // `___(())` closing a function that returns a `Result`; `___(x)` of an `Option`.
    "Ok",
    "Some",
    "return",
    "with",
    "nil",
    "None",
    "null",
    "undefined",
    "true",
    "false",
    "True",
    "False",
    "self",
    "this",
    "else",
    "in",
    "new",
    "assert",
    "assert!",
    "assert_eq!",
    "assert_ne!",
    "assertEquals",
    "assertTrue",
    "expect",
];

/// Whether `answer` is no fill-in-the-blank answer worth asking (SPEC §6.4, issue 40): a
/// literal or a keyword the line gives away ([`GIVEN_AWAY`]), a
/// declaration keyword the next word gives away (`struct`, `func`, `class`, `it`) or a lone
/// sigil or operator (`@`, `?`, `&`, `=>`), punctuation only. The builders never blank one;
/// the lint counts any that slips through.
pub fn is_trivia_answer(answer: &str) -> bool {
    let answer = answer.trim();
    let sigil = !answer.is_empty() && answer.chars().all(|c| c.is_ascii_punctuation());
    sigil || DECLARATION_KEYWORDS.contains(&answer) || GIVEN_AWAY.contains(&answer)
}

/// The blank marker written into fill_in_blank snippets.
const BLANK: &str = "___";

/// `code` with the preferred token replaced by the blank marker: the first token of `tokens`
/// that occurs exactly once (so the answer is not visible elsewhere), else the first that
/// occurs at all; never a trivia answer ([`is_trivia_answer`]). `None` when no token occurs
/// or the code already contains a blank.
pub(super) fn blank_in(code: &str, tokens: &[&'static str]) -> Option<(String, &'static str)> {
    if count_blanks(code) > 0 {
        return None;
    }
    let found: Vec<(&'static str, Vec<usize>)> = tokens
        .iter()
        .filter(|t| !is_trivia_answer(t))
        .map(|t| (*t, token_positions(code, t).collect::<Vec<_>>()))
        .filter(|(_, at)| !at.is_empty())
        .collect();
    let (token, at) = found.iter().find(|(_, at)| at.len() == 1).or(found.first())?;
    let blanked = format!("{}{BLANK}{}", &code[..at[0]], &code[at[0] + token.len()..]);
    (count_blanks(&blanked) == 1).then_some((blanked, *token))
}

/// Byte offset of the first occurrence of `token` in `text` that is a whole token: where
/// the token starts (ends) with an identifier character, the text before (after) it must not
/// be one, so `await` is not found inside `awaited`.
pub fn find_token(text: &str, token: &str) -> Option<usize> {
    token_positions(text, token).next()
}

/// Of `tokens`, the first that `prose` names as code when `shown` shows none of those it so
/// names; `None` when it names none, or `shown` shows one. A follow-up about `` `reduce` `` over
/// code of `.map` asks about code the learner is not shown; one about `Promise.allSettled` over
/// code of `Promise.all` names both, and holds. Only code counts, not a word of prose that a
/// token happens to spell ("what context would you add" names no `context`): see
/// [`names_as_code`].
pub fn named_but_not_shown(tokens: &[&'static str], prose: &str, shown: &str) -> Option<&'static str> {
    let mut named = tokens.iter().copied().filter(|t| is_word(t) && names_as_code(prose, t));
    let first = named.next()?;
    let shows = |t: &str| find_token(shown, t).is_some();
    (!shows(first) && !named.any(shows)).then_some(first)
}

/// Whether `prose` writes `token` as code somewhere: inside backticks, after `.` or `:`
/// (`xs.reduce`, `tokio::spawn`), called (`reduce(`), or in a shape only code has: dotted
/// (`Promise.all`), snake_case, or camelCase (`useEffect`).
fn names_as_code(prose: &str, token: &str) -> bool {
    let shaped = token.contains(['.', '_'])
        || token.chars().zip(token.chars().skip(1)).any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    token_positions(prose, token).any(|i| {
        let before = prose[..i].chars().next_back();
        let after = prose[i + token.len()..].chars().next();
        shaped || prose[..i].matches('`').count() % 2 == 1 || matches!(before, Some('.' | ':')) || after == Some('(')
    })
}

/// Tokens too general to ask a follow-up about (`Why does this code use `return``) unless they
/// are the concept's first, its own word (Async/await's `await`).
const STRUCTURAL: [&str; 7] = ["return", "def", "func", "function", "app", "where", "await"];

/// Of `tokens` (preferred first), the first that `shown` shows and a follow-up can ask about:
/// one prose can name, and not a structural word unless it is the first.
pub fn shown_word(tokens: &[&'static str], shown: &str) -> Option<&'static str> {
    tokens
        .iter()
        .enumerate()
        .find(|&(i, t)| is_word(t) && (i == 0 || !STRUCTURAL.contains(t)) && find_token(shown, t).is_some())
        .map(|(_, t)| *t)
}

/// A token prose can name: it starts with a letter, is at least three long, and holds only
/// identifier characters and dots.
fn is_word(token: &str) -> bool {
    token.len() >= 3
        && token.starts_with(char::is_alphabetic)
        && token.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.')
}

fn token_positions<'a>(text: &'a str, token: &'a str) -> impl Iterator<Item = usize> + 'a {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let starts_ident = token.chars().next().is_some_and(ident);
    let ends_ident = token.chars().next_back().is_some_and(ident);
    text.match_indices(token).map(|(i, _)| i).filter(move |&i| {
        let before = text[..i].chars().next_back();
        let after = text[i + token.len()..].chars().next();
        !(token.is_empty() || starts_ident && before.is_some_and(ident) || ends_ident && after.is_some_and(ident))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_names_a_token_the_code_does_not_show_only_when_it_shows_none_it_names() {
        let tokens = &["reduce", "filter", "map", "Promise.allSettled", "Promise.all", "spawn", "context", "?", "%w"];
        let map_chain = "const a = xs.map((x) => x.n);";
        let off = Some("reduce");
        assert_eq!(named_but_not_shown(tokens, "Why does `reduce` need an initial value?", map_chain), off);
        assert_eq!(named_but_not_shown(tokens, "What does `xs.reduce(f)` do on []?", map_chain), off);
        assert_eq!(named_but_not_shown(tokens, "What does reduce() do on []?", map_chain), off);
        assert_eq!(named_but_not_shown(tokens, "Why does `reduce` need an initial value?", "xs.reduce(f, 0)"), None);
        // Naming two, the code showing one of them: it holds.
        let all = "await Promise.all(jobs);";
        assert_eq!(named_but_not_shown(tokens, "When is Promise.allSettled better than Promise.all?", all), None);
        assert_eq!(named_but_not_shown(tokens, "Why does tokio::spawn need `move`?", "thread::spawn(f)"), None);
        // Prose is no code: an English word a token spells, a word inside another (`mapping`),
        // a token prose cannot name (`?`, `%w`).
        let prose = "What context would you add? Why reduce the mapping? Why %w?";
        assert_eq!(named_but_not_shown(tokens, prose, "let x = 1;"), None);
        // What a follow-up asks about instead: the first shown, never a structural word
        // unless it is the concept's own first one.
        assert_eq!(shown_word(tokens, map_chain), Some("map"));
        assert_eq!(shown_word(&["findMany", "where", "await"], "await db.q().where(x)"), None);
        assert_eq!(shown_word(&["await", "async"], "await db.q().where(x)"), Some("await"));
    }

    #[test]
    fn tokens_match_whole_words_only() {
        assert_eq!(find_token("awaited; await x", "await"), Some(9));
        assert_eq!(find_token("foo()?;", "?"), Some(5));
        assert_eq!(find_token("x_await", "await"), None);
        assert_eq!(find_token("\"use client\";", "use client"), Some(1));
    }

    #[test]
    fn trivia_answers_are_never_blanked() {
        for t in ["struct", "type", "trait", "fn", "func", "def", "class", "interface", "it", "@", "?", "&", "*", "=>"]
        {
            assert!(is_trivia_answer(t), "{t}");
        }
        for t in ["Mutex", "await", "defer", "?.", "yield", "%w"] {
            assert_eq!(is_trivia_answer(t), t.chars().all(|c| c.is_ascii_punctuation()), "{t}");
        }
        assert_eq!(blank_in("type Cache struct {}", &["struct", "type"]), None);
        let (blanked, token) = blank_in("fn parse() -> Result<u8, E> { x? }", &["?", "fn", "Result"]).expect("one");
        assert_eq!((blanked.as_str(), token), ("fn parse() -> ___<u8, E> { x? }", "Result"));
    }

    #[test]
    fn blanks_prefer_a_token_that_occurs_once() {
        let code = "const a = await f();\nasync function g() {}";
        let (blanked, token) = blank_in("await x; await y; async z", &["await", "async"]).expect("a token");
        assert_eq!((blanked.as_str(), token), ("await x; await y; ___ z", "async"));
        assert_eq!(blank_in(code, &["await"]).map(|b| b.1), Some("await"));
        assert_eq!(blank_in("let ___ = 1; await x", &["await"]), None);
        assert_eq!(blank_in("nothing here", &["await"]), None);
    }
}
