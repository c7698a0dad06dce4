//! The concept catalogue written for VibeLearn (SPEC §6.5): what the offline provider knows.
//! Each entry says what a concept is and why it matters, which static-analysis signals reveal
//! it, and holds the raw material for a question of every type at every level; `render` turns
//! that material plus the developer's own snippet into a `GeneratedQuestion`.
//!
//! The data lives in one file per group of categories (`async_errors`, `concurrency`,
//! `design`, `code_style`, `data`, `api_testing`, `types`, `react`) so each stays readable,
//! and `errors` holds the concepts reached through errors the developer met rather than
//! through static-analysis signals (`analysis::failures`), `dependencies` the missing module
//! or package of each ecosystem;
//! the tests below hold every entry to the invariants `render` relies on (an example that
//! contains a blankable token and the first bug edit, 4–6 distinct steps, distinct options).

mod api_testing;
pub mod asides;
mod async_errors;
mod code_style;
mod concurrency;
mod data;
mod dependencies;
mod design;
mod errors;
mod react;
pub mod render;
mod resources;
pub mod tokens;
mod types;

use crate::analysis::Lang;
use crate::analysis::concepts::{Level, normalize_name};
use crate::analysis::model::Pattern;

/// A static-analysis signal that reveals a concept.
#[derive(Debug, Clone, Copy)]
pub struct Signal {
    /// The `Pattern::pattern_type` it reacts to; `"*"` reacts to any pattern.
    pub pattern_type: &'static str,
    /// Lowercase substrings of which at least one must occur in the pattern's name or snippet
    /// (lowercased); empty means the pattern type alone is enough.
    pub hints: &'static [&'static str],
    /// Languages (`Pattern::language`) it applies to; empty means all.
    pub langs: &'static [&'static str],
    /// How strongly a match points at the concept, 1 (weak) to 5 (unambiguous).
    pub weight: u32,
    /// An extra test on the pattern's name, for what substrings cannot say (e.g. "a hook
    /// name that is not one of React's built-ins").
    pub name_test: Option<fn(&str) -> bool>,
}

/// Shorthand for the data files.
pub const fn sig(
    pattern_type: &'static str,
    hints: &'static [&'static str],
    langs: &'static [&'static str],
    weight: u32,
) -> Signal {
    Signal { pattern_type, hints, langs, weight, name_test: None }
}

/// A signal that fires when the pattern's name passes `test`.
pub const fn named(pattern_type: &'static str, test: fn(&str) -> bool, weight: u32) -> Signal {
    Signal { pattern_type, hints: &[], langs: &[], weight, name_test: Some(test) }
}

/// A small edit that turns correct code into plausibly buggy code, for spot_the_bug.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BugEdit {
    /// Text to find (first occurrence) …
    pub from: &'static str,
    /// … and what replaces it.
    pub to: &'static str,
    /// The model answer: what the bug is and what it causes.
    pub answer: &'static str,
}

/// One catalogue concept.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub name: &'static str,
    /// One of `concepts::CATEGORIES`.
    pub category: &'static str,
    /// The concept's own difficulty (a question may be asked at another level).
    pub difficulty: Level,
    /// Why it matters, one or two sentences; becomes `why_it_matters`.
    pub description: &'static str,
    pub signals: &'static [Signal],
    /// Lowercase stack terms (languages, frameworks, libraries) that make the concept a
    /// plausible fallback when the code gave too few signals.
    pub stack_hints: &'static [&'static str],
    /// Tokens worth blanking in fill_in_blank, preferred first; also the evidence searched for
    /// in files when falling back. At least one occurs in `example`.
    pub tokens: &'static [&'static str],
    /// A short canonical example, used when the developer's snippet lacks a token or an edit.
    pub example: &'static str,
    /// True statements, one per level (junior, mid, senior).
    pub facts: [&'static str; 3],
    /// Plausible misconceptions: the false statements and multiple-choice distractors.
    pub myths: [&'static str; 3],
    /// What the ordering question asks to put in order.
    pub order_prompt: &'static str,
    /// 4–6 steps in their correct order.
    pub steps: &'static [&'static str],
    /// A code-reading question and its model answer.
    pub reading: [&'static str; 2],
    /// Bug edits, tried in order on the developer's snippet; the first must apply to `example`.
    pub bugs: &'static [BugEdit],
    /// An open-ended (senior) question and its model answer.
    pub open: [&'static str; 2],
    /// The mid-level follow-up attached to junior questions.
    pub follow_up: &'static str,
    /// The languages the entry's own text (name, facts, myths, example, steps, reading,
    /// open question, follow-up, description) is true in; empty means every language. In
    /// another language the entry is shown only through a [`Variant`] for it.
    pub holds_in: &'static [Lang],
    /// Text for some languages in place of the entry's own: a Go struct is a "struct", not a
    /// "dataclass". The first variant listing a language wins.
    pub variants: &'static [Variant],
    /// A concept almost any code shows (imports, functions, early returns): the last resort
    /// when a session's code gives too few signals.
    pub generic: bool,
}

/// What an entry says in some languages instead of its own text (issue 40, point 2): each
/// field set replaces the entry's, the others are kept, and the entry's `holds_in` no longer
/// matters for the languages listed. Written as `Variant { langs, name: Some(…), ..Variant::NONE }`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Variant {
    /// The languages this text is true in.
    pub langs: &'static [Lang],
    pub name: Option<&'static str>,
    pub description: Option<&'static str>,
    pub tokens: Option<&'static [&'static str]>,
    pub example: Option<&'static str>,
    pub facts: Option<[&'static str; 3]>,
    pub myths: Option<[&'static str; 3]>,
    pub order_prompt: Option<&'static str>,
    pub steps: Option<&'static [&'static str]>,
    pub reading: Option<[&'static str; 2]>,
    pub bugs: Option<&'static [BugEdit]>,
    pub open: Option<[&'static str; 2]>,
    pub follow_up: Option<&'static str>,
}

impl Variant {
    /// A variant that replaces nothing, the base of the data's struct updates.
    pub const NONE: Variant = Variant {
        langs: &[],
        name: None,
        description: None,
        tokens: None,
        example: None,
        facts: None,
        myths: None,
        order_prompt: None,
        steps: None,
        reading: None,
        bugs: None,
        open: None,
        follow_up: None,
    };

    /// For an entry whose statements hold everywhere but whose example is one language's: in
    /// `langs`, the entry's text without the example and what is written for it.
    pub const fn statements_only(langs: &'static [Lang]) -> Variant {
        Variant { langs, ..Variant::NONE }
    }
}

/// Every language but Go: where a Go example's entry keeps only its statements.
pub const BUT_GO: &[Lang] =
    &[Lang::TypeScript, Lang::JavaScript, Lang::Python, Lang::Rust, Lang::Ruby, Lang::Java, Lang::CSharp];

/// Every language but TypeScript and JavaScript: where a TypeScript example's entry keeps only
/// its statements.
pub const BUT_TS_JS: &[Lang] = &[Lang::Python, Lang::Go, Lang::Rust, Lang::Ruby, Lang::Java, Lang::CSharp];

impl Variant {
    /// Whether the variant keeps all of the entry's text (it only drops the example there).
    fn replaces_nothing(&self) -> bool {
        Variant { langs: &[], ..*self } == Variant::NONE
    }
}

impl Entry {
    /// The entry as it is true in `lang`: its own text where that holds there, with the
    /// variant for `lang` laid over it; `None` where neither holds (the entry is then not
    /// shown at all). An unknown language (`None`) gets the entry's own text only when that
    /// holds everywhere.
    pub fn in_lang(&self, lang: Option<Lang>) -> Option<Entry> {
        let variant = match lang {
            Some(l) => self.variants.iter().find(|v| v.langs.contains(&l)),
            // In no known language, a variant that replaces no text ("the statements hold
            // elsewhere too, the example does not") is what holds.
            None => self.variants.iter().find(|v| v.replaces_nothing()),
        };
        let Some(v) = variant else {
            let holds = self.holds_in.is_empty() || lang.is_some_and(|l| self.holds_in.contains(&l));
            return holds.then_some(*self);
        };
        // The example and what is written for it (its steps and their prompt, its bugs, its
        // reading question) are in the
        // entry's languages: where those do not hold and the variant has none of its own, there
        // is no example (`render` then writes no question that needs one).
        let own = self.holds_in.is_empty() || lang.is_some_and(|l| self.holds_in.contains(&l));
        Some(Entry {
            name: v.name.unwrap_or(self.name),
            description: v.description.unwrap_or(self.description),
            tokens: v.tokens.unwrap_or(self.tokens),
            example: v.example.or(own.then_some(self.example)).unwrap_or(""),
            facts: v.facts.unwrap_or(self.facts),
            myths: v.myths.unwrap_or(self.myths),
            order_prompt: v.order_prompt.or(own.then_some(self.order_prompt)).unwrap_or(""),
            steps: v.steps.or(own.then_some(self.steps)).unwrap_or(&[]),
            reading: v.reading.or(own.then_some(self.reading)).unwrap_or(["", ""]),
            bugs: v.bugs.or(own.then_some(self.bugs)).unwrap_or(&[]),
            open: v.open.unwrap_or(self.open),
            follow_up: v.follow_up.unwrap_or(self.follow_up),
            ..*self
        })
    }

    /// Every name the entry is shown under: its own, then each variant's.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        std::iter::once(self.name).chain(self.variants.iter().filter_map(|v| v.name))
    }
}

/// The weight of the strongest signal of `signals` that `p` matches, if any. `lowered` is
/// the pattern's (name, snippet) in lowercase. A hint found only in the snippet's context
/// lines, not in the name, counts one less: a useState pattern whose context shows a
/// useEffect call is weaker evidence for effects than the useEffect pattern itself.
/// Whether the declaration of class `name` in `snippet` derives from an exception type
/// (`class X(Exception)`, `class X extends Error`, `class X < StandardError`, `class X :
/// Exception`, …): the base's name ends in Error or Exception.
pub fn derives_from_error(name: &str, snippet: &str) -> bool {
    let Some(line) = snippet.lines().find(|l| l.contains("class") && l.contains(name)) else { return false };
    let after = line.split_once(name).map_or("", |(_, rest)| rest);
    after
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .filter(|w| !w.is_empty() && !matches!(*w, "extends" | "implements"))
        .any(|w| {
            let base = w.rsplit('.').next().unwrap_or(w);
            base.ends_with("Error") || base.ends_with("Exception")
        })
}

pub fn best_weight(signals: &[Signal], p: &Pattern, lowered: &(String, String)) -> Option<u32> {
    let (name, snippet) = lowered;
    signals
        .iter()
        .filter(|s| s.pattern_type == "*" || s.pattern_type == p.pattern_type)
        // The signals' languages are lowercase ASCII: compared without lowercasing a copy of
        // the pattern's per call (entries × patterns calls in a job: issue 43 §4).
        .filter(|s| s.langs.is_empty() || s.langs.iter().any(|l| l.eq_ignore_ascii_case(&p.language)))
        .filter(|s| s.name_test.is_none_or(|test| test(&p.name)))
        // A class deriving from an exception type is the language's idiom for errors, not a
        // design choice: it is no evidence about inheritance vs composition (issue 25: such a
        // question was asked about `class OrderNotFound(Exception)`).
        .filter(|s| !(s.pattern_type == "class" && derives_from_error(&p.name, &p.snippet)))
        .filter_map(|s| {
            if s.hints.is_empty() {
                // A "*" signal without hints would match every pattern; it never counts.
                (s.pattern_type != "*").then_some(s.weight)
            } else if s.hints.iter().any(|h| name.contains(h)) {
                Some(s.weight)
            } else if s.hints.iter().any(|h| snippet.contains(h)) {
                Some(s.weight.saturating_sub(1).max(1))
            } else {
                None
            }
        })
        .max()
}

/// How much of what static analysis found the catalogue can teach (issue 31): of `signals`
/// patterns, `mapped` match a signal of some entry; the rest by pattern type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    pub signals: usize,
    pub mapped: usize,
    pub unmapped: std::collections::BTreeMap<String, usize>,
}

impl Coverage {
    /// `mapped / signals`, or `None` with no signals.
    pub fn share(&self) -> Option<f64> {
        (self.signals > 0).then(|| self.mapped as f64 / self.signals as f64)
    }

    /// Adds another session's figures.
    pub fn add(&mut self, other: &Coverage) {
        self.signals += other.signals;
        self.mapped += other.mapped;
        for (kind, n) in &other.unmapped {
            *self.unmapped.entry(kind.clone()).or_default() += n;
        }
    }
}

/// The catalogue's coverage of `patterns` (see [`Coverage`]).
pub fn coverage(patterns: &[Pattern]) -> Coverage {
    let mut out = Coverage { signals: patterns.len(), ..Coverage::default() };
    for p in patterns {
        let lowered = (p.name.to_lowercase(), p.snippet.to_lowercase());
        if all().any(|e| best_weight(e.signals, p, &lowered).is_some()) {
            out.mapped += 1;
        } else {
            *out.unmapped.entry(p.pattern_type.clone()).or_default() += 1;
        }
    }
    out
}

/// Every entry, in a fixed order (the tie-break when scores are equal).
pub fn all() -> impl Iterator<Item = &'static Entry> {
    [
        async_errors::ENTRIES,
        concurrency::ENTRIES,
        design::ENTRIES,
        code_style::ENTRIES,
        data::ENTRIES,
        api_testing::ENTRIES,
        types::ENTRIES,
        react::ENTRIES,
        resources::ENTRIES,
        errors::ENTRIES,
        dependencies::ENTRIES,
    ]
    .into_iter()
    .flatten()
}

/// The entry one of whose names ([`Entry::names`]) equals `name` after `normalize_name`.
pub fn find(name: &str) -> Option<&'static Entry> {
    let key = normalize_name(name);
    all().find(|e| e.names().any(|n| normalize_name(n) == key))
}

/// The entry named `name` as it is true in `lang` ([`Entry::in_lang`]).
pub fn find_in(name: &str, lang: Option<Lang>) -> Option<Entry> {
    find(name)?.in_lang(lang)
}

#[cfg(test)]
mod tests {
    use super::tokens::find_token;
    use super::*;
    use crate::analysis::concepts::CATEGORIES;
    use std::collections::{BTreeMap, HashSet};

    #[test]
    fn exception_subclasses_are_recognised_in_every_syntax() {
        for (name, line) in [
            ("OrderNotFound", "class OrderNotFound(Exception):"),
            ("NotFound", "export class NotFound extends Error {"),
            ("Missing", "class Missing < StandardError"),
            ("Gone", "public class Gone : Exception"),
            ("Bad", "public class Bad extends RuntimeException {"),
            ("Fail", "class Fail(errors.LookupError):"),
        ] {
            assert!(derives_from_error(name, &format!("# x\n{line}\n    pass")), "{line}");
        }
        for (name, line) in [
            ("AuditedRepository", "class AuditedRepository extends UserRepository {"),
            ("ErrorPage", "class ErrorPage(Component):"),
            ("Plain", "class Plain:"),
        ] {
            assert!(!derives_from_error(name, line), "{line}");
        }
        // So an exception subclass calling super() is no signal for composition over inheritance.
        let composition = find("Composition over inheritance").expect("in the catalogue");
        let class = |snippet: &str, name: &str| Pattern {
            pattern_type: "class".into(),
            name: name.into(),
            file: "app/errors.py".into(),
            line: 1,
            snippet: snippet.into(),
            language: "python".into(),
        };
        let exception = class(
            "class OrderNotFound(Exception):\n    def __init__(self):\n        super().__init__()",
            "OrderNotFound",
        );
        let lowered = (exception.name.to_lowercase(), exception.snippet.to_lowercase());
        assert_eq!(best_weight(composition.signals, &exception, &lowered), None);
        let subclass = class("class Audited(Repository):\n    def save(self):\n        super().save()", "Audited");
        let lowered = (subclass.name.to_lowercase(), subclass.snippet.to_lowercase());
        assert!(best_weight(composition.signals, &subclass, &lowered).is_some());
    }

    /// The pattern types the static analyser emits (SPEC §6.2).
    const PATTERN_TYPES: &[&str] = &[
        "context_manager",
        "react_hook",
        "server_action",
        "client_component",
        "api_route",
        "interface",
        "type_alias",
        "trait",
        "struct",
        "enum",
        "class",
        "layered_class",
        "singleton",
        "async_function",
        "await",
        "promise_combinator",
        "error_handling",
        "db_query",
        "goroutine",
        "channel",
        "spawned_task",
        "mutex",
        "closure",
        "higher_order_function",
        "decorator",
        "generator",
        "dataclass",
        "derive_macro",
        "lifetime",
        "test",
        "table_test",
        "generic",
        "trait_impl",
    ];

    #[test]
    fn at_least_forty_concepts_over_all_categories() {
        let entries: Vec<_> = all().collect();
        assert!(entries.len() >= 40, "{}", entries.len());
        let mut per_category = BTreeMap::new();
        for e in &entries {
            assert!(CATEGORIES.contains(&e.category), "{}: {}", e.name, e.category);
            *per_category.entry(e.category).or_insert(0) += 1;
        }
        for c in CATEGORIES {
            assert!(per_category.get(c).copied().unwrap_or(0) >= 2, "{c}: {per_category:?}");
        }
        assert!(entries.iter().filter(|e| e.generic).count() >= 3);
    }

    #[test]
    fn names_are_unique_and_findable() {
        let mut seen = HashSet::new();
        for e in all() {
            assert!(seen.insert(normalize_name(e.name)), "duplicate {}", e.name);
            assert_eq!(find(&e.name.to_uppercase()).map(|f| f.name), Some(e.name));
        }
        assert!(find("no such concept").is_none());
    }

    #[test]
    fn every_pattern_type_reveals_some_concept() {
        for e in all() {
            for s in e.signals {
                assert!(
                    s.pattern_type == "*" || PATTERN_TYPES.contains(&s.pattern_type),
                    "{}: {}",
                    e.name,
                    s.pattern_type
                );
                assert!((1..=5).contains(&s.weight), "{}", e.name);
                assert!(s.hints.iter().all(|h| *h == h.to_lowercase()), "{}", e.name);
            }
            let from_errors = errors::ENTRIES.iter().chain(dependencies::ENTRIES).any(|x| x.name == e.name);
            assert!(
                e.signals.len() + usize::from(e.generic) + usize::from(from_errors) > 0,
                "{} has no way in",
                e.name
            );
        }
        for t in PATTERN_TYPES {
            assert!(all().any(|e| e.signals.iter().any(|s| s.pattern_type == *t)), "{t}");
        }
    }

    #[test]
    fn every_error_kind_has_its_entry_in_every_language() {
        use crate::analysis::Lang;
        use crate::analysis::failures::ErrorKind;
        let kinds = [ErrorKind::MissingDependency, ErrorKind::TypeError, ErrorKind::FailingTest, ErrorKind::Other];
        let langs = [Lang::TypeScript, Lang::Python, Lang::Go, Lang::Rust, Lang::Ruby, Lang::Java, Lang::CSharp];
        let mut named = HashSet::new();
        for kind in kinds {
            for lang in langs.map(Some).into_iter().chain([None]) {
                let name = kind.concept_in(lang);
                let from = errors::ENTRIES.iter().chain(dependencies::ENTRIES);
                assert!(from.clone().any(|e| e.name == name), "{kind:?} {lang:?}");
                named.insert(name);
            }
        }
        assert_eq!(named.len(), errors::ENTRIES.len() + dependencies::ENTRIES.len(), "every entry is reachable");
        assert_eq!(dependencies::ENTRIES.len(), 7, "one per ecosystem");
    }

    /// Every piece of text an entry shows in `lang`, as `in_lang` resolves it.
    fn shown_text(e: &Entry) -> Vec<&'static str> {
        let mut out = vec![e.name, e.description, e.order_prompt, e.follow_up];
        out.extend(e.facts);
        out.extend(e.myths);
        out.extend(e.reading);
        out.extend(e.open);
        out.extend(e.steps.iter().copied());
        out.extend(e.bugs.iter().map(|b| b.answer));
        out
    }

    const LANGS: [Lang; 8] =
        [Lang::TypeScript, Lang::JavaScript, Lang::Python, Lang::Go, Lang::Rust, Lang::Ruby, Lang::Java, Lang::CSharp];

    #[test]
    fn no_entry_shows_another_ecosystems_words_in_a_language_it_is_shown_in() {
        use crate::analysis::lint::vocabulary::foreign_word;
        let mut faults = Vec::new();
        for e in all() {
            for lang in LANGS {
                let Some(shown) = e.in_lang(Some(lang)) else { continue };
                for text in shown_text(&shown) {
                    if let Some(word) = foreign_word(text, lang) {
                        faults.push(format!("{} in {}: `{word}` in {text:?}", e.name, lang.as_str()));
                    }
                }
            }
        }
        assert!(faults.is_empty(), "{} pieces:\n{}", faults.len(), faults.join("\n"));
    }

    #[test]
    fn an_entry_is_shown_only_in_its_languages_and_under_their_names() {
        let structs = find("Structs, records and dataclasses").expect("in the catalogue");
        assert_eq!(structs.in_lang(Some(Lang::Python)).map(|e| e.name), Some(structs.name));
        assert_eq!(structs.in_lang(Some(Lang::Go)).map(|e| e.name), Some("Structs"));
        // The variant's own example, not the Python dataclass.
        let go = structs.in_lang(Some(Lang::Go)).expect("a Go variant");
        assert!(go.example.contains("type Money struct") && !go.example.contains("@dataclass"));
        // Found under the name a language shows it by.
        assert_eq!(find("structs").map(|e| e.name), Some(structs.name));
        assert_eq!(find_in("Structs", Some(Lang::Rust)).map(|e| e.name), Some("Structs"));
        // Promise combinators are no Go concept: not shown there at all.
        let joins = find("Concurrent promises and joins").expect("in the catalogue");
        assert!(joins.in_lang(Some(Lang::Go)).is_none());
        assert!(joins.in_lang(None).is_none(), "an unknown language gets only text true everywhere");
        let modules = find("Modules and imports").expect("in the catalogue");
        let anywhere = modules.in_lang(None).expect("its statements hold everywhere");
        assert!(anywhere.example.is_empty() && anywhere.facts == modules.facts);
        // A variant without its own example gets none where the entry's is another language's.
        let interfaces = find("Interfaces and polymorphism").expect("in the catalogue");
        let java = interfaces.in_lang(Some(Lang::Java)).expect("a Java variant");
        assert!(java.example.is_empty() && java.bugs.is_empty() && java.steps.is_empty());
        assert!(!java.facts.iter().any(|f| f.contains("TypeScript")));
        // An entry with no tags holds everywhere.
        let untagged = all().find(|e| e.holds_in.is_empty() && e.variants.is_empty()).expect("one");
        assert!(LANGS.iter().all(|&l| untagged.in_lang(Some(l)).is_some()));
    }

    #[test]
    fn entries_hold_what_render_needs() {
        for e in all() {
            let n = e.name;
            assert!(!e.description.is_empty() && !e.follow_up.is_empty(), "{n}");
            assert!(e.tokens.iter().any(|t| find_token(e.example, t).is_some()), "{n}: no token");
            assert!(!e.bugs.is_empty() && e.example.contains(e.bugs[0].from), "{n}: bug edit");
            assert!(e.bugs.iter().all(|b| b.from != b.to && !b.answer.is_empty()), "{n}");
            assert!((4..=6).contains(&e.steps.len()), "{n}: steps");
            let distinct = |xs: &[&str]| xs.iter().collect::<HashSet<_>>().len() == xs.len();
            assert!(distinct(e.steps), "{n}: steps repeat");
            let options = [e.facts[0], e.facts[1], e.facts[2], e.myths[0], e.myths[1], e.myths[2]];
            assert!(distinct(&options) && options.iter().all(|o| !o.is_empty()), "{n}");
            assert!(e.stack_hints.iter().all(|h| *h == h.to_lowercase()), "{n}");
            assert!(!e.example.contains("___"), "{n}");
        }
    }
}
