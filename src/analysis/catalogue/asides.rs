//! Labelled asides (SPEC §6.4, issue 40 §2): what a concept is called in other languages,
//! said only as an aside with its label, never as the answer. A question in Python may end
//! its explanation with "Elsewhere: in JavaScript, Promise.all; in Rust, tokio::join!." and
//! nothing else in it may name those; the lint and the precision rules read a question with its
//! well-formed asides taken out ([`without_asides`]), and refuse one whose answer holds an aside.

use crate::analysis::Lang;

/// What starts an aside.
pub const LABEL: &str = "Elsewhere: ";

/// One language's name for a concept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aside {
    pub lang: Lang,
    pub name: &'static str,
}

const fn aside(lang: Lang, name: &'static str) -> Aside {
    Aside { lang, name }
}

/// Per catalogue entry (its own name), each language's name for the concept.
const ASIDES: &[(&str, &[Aside])] = &[
    (
        "Async/await",
        &[
            aside(Lang::JavaScript, "an async call hands back a Promise"),
            aside(Lang::TypeScript, "an async call hands back a Promise"),
            aside(Lang::Python, "an async call hands back a coroutine"),
            aside(Lang::Rust, "an async call hands back a Future"),
            aside(Lang::CSharp, "an async call hands back a Task"),
        ],
    ),
    (
        "Concurrent promises and joins",
        &[
            aside(Lang::JavaScript, "Promise.all"),
            aside(Lang::TypeScript, "Promise.all"),
            aside(Lang::Python, "asyncio.gather"),
            aside(Lang::Rust, "tokio::join!"),
        ],
    ),
    (
        "Table-driven tests",
        &[
            aside(Lang::Go, "a slice of cases run with t.Run"),
            aside(Lang::Python, "pytest.mark.parametrize"),
            aside(Lang::TypeScript, "it.each"),
            aside(Lang::JavaScript, "it.each"),
        ],
    ),
    (
        "Context managers and with",
        &[
            aside(Lang::CSharp, "a using statement"),
            aside(Lang::Java, "try-with-resources"),
            aside(Lang::Rust, "a value's Drop at the end of its scope"),
            aside(Lang::Go, "defer"),
        ],
    ),
];

/// Each language as a question names it.
const NAMES: [(Lang, &str); 8] = [
    (Lang::TypeScript, "TypeScript"),
    (Lang::JavaScript, "JavaScript"),
    (Lang::Python, "Python"),
    (Lang::Go, "Go"),
    (Lang::Rust, "Rust"),
    (Lang::Java, "Java"),
    (Lang::Ruby, "Ruby"),
    (Lang::CSharp, "C#"),
];

fn display_name(lang: Lang) -> &'static str {
    NAMES.iter().find(|(l, _)| *l == lang).map_or("another language", |(_, n)| n)
}

/// The asides of the entry named `entry` (its own name).
pub fn asides_of(entry: &str) -> &'static [Aside] {
    ASIDES.iter().find(|(name, _)| *name == entry).map_or(&[], |(_, asides)| *asides)
}

/// The labelled aside of `entry` for a question in `lang`: every other language's name, one
/// per name ("Elsewhere: in Python, asyncio.gather; in Rust, tokio::join!."); `None` when
/// there is none to say.
pub fn render(entry: &str, lang: Option<Lang>) -> Option<String> {
    let mut items: Vec<String> = Vec::new();
    let mut said: Vec<&str> = Vec::new();
    let own: Vec<&str> = asides_of(entry).iter().filter(|a| Some(a.lang) == lang).map(|a| a.name).collect();
    for a in asides_of(entry).iter().filter(|a| Some(a.lang) != lang) {
        if said.contains(&a.name) || own.contains(&a.name) {
            continue;
        }
        said.push(a.name);
        // JavaScript and TypeScript share their names: said once, under the first.
        items.push(format!("in {}, {}", display_name(a.lang), a.name));
    }
    (!items.is_empty()).then(|| format!("{LABEL}{}.", items.join("; ")))
}

/// `text` with each well-formed aside taken out: from [`LABEL`] to the end of its sentence,
/// where every item reads "in <Language>, <name>". A malformed one is left in (so its words
/// still count as the question's own).
pub fn without_asides(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(LABEL) {
        let body = &rest[at + LABEL.len()..];
        let end = sentence_end(body);
        let well_formed = body[..end].trim_end_matches('.').split("; ").all(|item| {
            item.strip_prefix("in ")
                .and_then(|i| i.split_once(", "))
                .is_some_and(|(lang, name)| NAMES.iter().any(|(_, n)| *n == lang) && !name.trim().is_empty())
        });
        out.push_str(&rest[..at]);
        if !well_formed {
            out.push_str(&rest[at..at + LABEL.len()]);
            rest = body;
            continue;
        }
        rest = &body[end..];
    }
    out.push_str(rest);
    out
}

/// Whether `text` holds an aside at all (an answer must not).
pub fn has_aside(text: &str) -> bool {
    text.contains(LABEL)
}

/// Byte length of the sentence at the start of `text`: up to a `.` followed by whitespace or
/// the end (so `asyncio.gather` is no end), a newline, or the end.
fn sentence_end(text: &str) -> usize {
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            return i;
        }
        if b == b'.' && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()) {
            return i + 1;
        }
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aside_names_the_other_languages_once_each_and_not_the_sessions() {
        let said = render("Concurrent promises and joins", Some(Lang::Python)).expect("an aside");
        assert_eq!(said, "Elsewhere: in JavaScript, Promise.all; in Rust, tokio::join!.");
        assert_eq!(
            render("Concurrent promises and joins", Some(Lang::TypeScript)).as_deref(),
            Some("Elsewhere: in Python, asyncio.gather; in Rust, tokio::join!.")
        );
        assert_eq!(render("Closures", Some(Lang::Python)), None);
    }

    #[test]
    fn a_well_formed_aside_is_taken_out_and_a_bare_mention_is_not() {
        let text =
            "gather waits for both. Elsewhere: in JavaScript, Promise.all; in Rust, tokio::join!. Then it returns.";
        assert_eq!(without_asides(text), "gather waits for both.  Then it returns.");
        let bare = "gather is like Promise.all. Elsewhere: Promise.all.";
        assert!(without_asides(bare).contains("Promise.all"));
        let unlabelled = "Elsewhere: Promise.all does this.";
        assert_eq!(without_asides(unlabelled), unlabelled);
    }
}
