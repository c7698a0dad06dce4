//! The words of each ecosystem, as data: a phrase a question may only use where the session's
//! language is one of the languages listed with it (issue 40, rule "another ecosystem's
//! words"). Matched case-sensitively as a substring of the question's prose (never its
//! snippet, which is the session's own code).
//!
//! A phrase belongs here when a strict reviewer in any language *not* listed would call its
//! use a mistake: `asyncio` in a Go question, `Promise.all` explaining a `WaitGroup`. Words
//! several languages share (`async`, `interface`, `generic`) are not here; they say nothing
//! about which ecosystem a question speaks.

use crate::analysis::Lang;

use Lang::{CSharp, Go, Java, JavaScript, Python, Ruby, Rust, TypeScript};

/// JavaScript and TypeScript share their runtime's words.
const JS: &[Lang] = &[JavaScript, TypeScript];

/// Each phrase and the languages it is true in.
pub const ECOSYSTEM_WORDS: &[(&str, &[Lang])] = &[
    // Python
    ("asyncio", &[Python]),
    ("dataclass", &[Python]),
    ("parametrize", &[Python]),
    ("pytest", &[Python]),
    ("try/except", &[Python]),
    ("__init__", &[Python]),
    ("functools", &[Python]),
    ("contextmanager", &[Python]),
    ("list comprehension", &[Python]),
    // JavaScript / TypeScript
    ("Promise.all", JS),
    ("Promise.race", JS),
    ("console.log", JS),
    ("useState", JS),
    ("useEffect", JS),
    ("vitest", JS),
    ("npm ", JS),
    // What an async call hands back in JavaScript: other languages have coroutines, futures
    // and tasks (issue 40: a Python session was told about promises).
    ("Promise", JS),
    ("promises", JS),
    ("the promise", JS),
    ("pending promise", JS),
    ("rejected promise", JS),
    ("promise resolves", JS),
    ("promise rejects", JS),
    ("promise settles", JS),
    ("unhandled rejection", JS),
    ("interfaces are structural", &[TypeScript, Go]),
    ("conditional type", &[TypeScript]),
    // Go
    ("goroutine", &[Go]),
    ("WaitGroup", &[Go]),
    ("errors.Is", &[Go]),
    ("errors.As", &[Go]),
    ("err != nil", &[Go]),
    ("t.Run", &[Go]),
    ("go vet", &[Go]),
    ("go test", &[Go]),
    // Rust
    ("tokio::", &[Rust]),
    ("T: Trait", &[Rust]),
    ("trait bound", &[Rust]),
    ("unwrap()", &[Rust]),
    ("#[derive", &[Rust]),
    ("borrow checker", &[Rust]),
    ("cargo ", &[Rust]),
    // Java
    ("@Override", &[Java]),
    ("NullPointerException", &[Java]),
    ("System.out", &[Java]),
    ("Optional<", &[Java]),
    ("checked exception", &[Java]),
    ("JUnit", &[Java]),
    ("Maven", &[Java]),
    // Ruby
    ("begin/rescue", &[Ruby]),
    ("attr_accessor", &[Ruby]),
    ("RSpec", &[Ruby]),
    ("Gemfile", &[Ruby]),
    // C#
    ("LINQ", &[CSharp]),
    ("IEnumerable", &[CSharp]),
    ("IDisposable", &[CSharp]),
    ("yield return", &[CSharp]),
    ("xUnit", &[CSharp]),
    ("NuGet", &[CSharp]),
    // Several, but not all
    ("try/catch", &[JavaScript, TypeScript, Java, CSharp]),
];

/// Languages by name, matched as whole words (`Java` is not in `JavaScript`): a question that
/// names another language speaks of that language. `Go` is left out: it is an English verb.
/// A labelled aside ("Elsewhere: in Python, asyncio.gather.") is taken out before matching.
pub const LANGUAGE_NAMES: &[(&str, &[Lang])] = &[
    ("Python", &[Python]),
    ("JavaScript", JS),
    ("TypeScript", &[TypeScript]),
    ("Rust", &[Rust]),
    ("Java", &[Java]),
    ("Ruby", &[Ruby]),
    ("C#", &[CSharp]),
    ("Kotlin", &[]),
];

/// The first phrase of `text` that is not true in `lang`, if any.
pub fn foreign_word(text: &str, lang: Lang) -> Option<&'static str> {
    // A phrase starts a word (`go test`, not the tail of `cargo test`); it may end inside one
    // (`dataclass` in `dataclasses`).
    let phrase = ECOSYSTEM_WORDS.iter().find(|(word, langs)| !langs.contains(&lang) && starts_word(text, word));
    let name = || LANGUAGE_NAMES.iter().find(|(name, langs)| !langs.contains(&lang) && has_word(text, name));
    phrase.or_else(name).map(|(word, _)| *word)
}

/// Whether `phrase` occurs in `text` with no letter or digit right before it.
fn starts_word(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(at, _)| !text[..at].chars().next_back().is_some_and(char::is_alphanumeric))
}

/// Whether `word` occurs in `text` with no letter or digit right before or after it.
fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_language_is_named_as_a_whole_word() {
        assert_eq!(foreign_word("Unlike Java, this", Lang::Go), Some("Java"));
        assert_eq!(foreign_word("JavaScript arrays", Lang::TypeScript), None);
        assert_eq!(foreign_word("Python's dataclasses", Lang::Python), None);
        assert_eq!(foreign_word("Rustacean", Lang::Go), None);
        assert_eq!(foreign_word("`cargo test` failed", Lang::Rust), None);
        assert_eq!(foreign_word("`go test` failed", Lang::Rust), Some("go test"));
    }

    #[test]
    fn promises_are_javascripts_word() {
        assert_eq!(foreign_word("the call hands back a pending promise", Lang::Python), Some("pending promise"));
        assert_eq!(foreign_word("it returns a Promise of the row", Lang::Rust), Some("Promise"));
        assert_eq!(foreign_word("it returns a Promise of the row", Lang::TypeScript), None);
        // The English verb is no ecosystem's.
        assert_eq!(foreign_word("every public member is a promise to callers", Lang::Go), None);
    }
}
