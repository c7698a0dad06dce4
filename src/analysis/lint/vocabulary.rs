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

/// The first phrase of `text` that is not true in `lang`, if any.
pub fn foreign_word(text: &str, lang: Lang) -> Option<&'static str> {
    ECOSYSTEM_WORDS.iter().find(|(word, langs)| !langs.contains(&lang) && text.contains(word)).map(|(word, _)| *word)
}
