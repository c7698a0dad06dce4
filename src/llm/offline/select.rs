//! Choosing catalogue entries for a session: scoring them by the patterns their signals
//! match, the stack and generic fallbacks, and cutting a verbatim snippet from a captured file
//! for each, so that the citation always passes `validate_concepts`.

use crate::analysis::catalogue::tokens::{find_token, is_evidence_in};
use crate::analysis::catalogue::{self, Entry, best_weight};
use crate::analysis::concepts::{Concept, MAX_CONCEPTS, MIN_CONCEPTS};
use crate::analysis::failures::{self, ErrorKind};
use crate::analysis::model::{FailedCall, Pattern, SourceFile, StackProfile};
use crate::analysis::path_index::PathIndex;
use crate::analysis::stack::language_id;
use crate::analysis::syntax::{self, Tree};
use crate::analysis::{Lang, lang_for_path};
use std::cell::OnceCell;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

/// Patterns counted per concept: beyond this, more of the same adds no evidence, and one
/// file full of awaits should not crowd every other concept out.
const MAX_HITS_PER_CONCEPT: usize = 5;
/// First-pass cap per category, so eight async concepts do not fill the session.
const MAX_PER_CATEGORY: usize = 2;
/// Longest snippet cited, in bytes; longer pattern snippets are cut to lines around the match.
const MAX_SNIPPET_BYTES: usize = 600;
/// Lines of context around a matched line when the snippet is cut from the file.
const CONTEXT_LINES: usize = 2;
/// Confidence of concepts found through the stack fallback and the generic fallback: above
/// the 0.4 cut-off, below anything a matched pattern gives (at least 0.55).
const STACK_CONFIDENCE: f64 = 0.5;
const GENERIC_CONFIDENCE: f64 = 0.45;

/// Language names as stack profiles and `Pattern::language` spell them.
const LANGUAGES: &[&str] =
    &["typescript", "javascript", "python", "go", "rust", "ruby", "java", "kotlin", "csharp", "php", "swift"];

/// One chosen entry and where it was seen.
pub(super) struct Pick {
    entry: &'static Entry,
    file: String,
    snippet: String,
    /// The pattern's name (e.g. "fetchUser"), when a pattern revealed it.
    seen_as: Option<String>,
    confidence: f64,
}

impl Pick {
    /// Whether two picks are the same catalogue entry.
    pub(super) fn is_entry(&self, other: &Pick) -> bool {
        self.entry.name == other.entry.name
    }

    /// The entry as it is true in the language of the pick's file (its own text for an
    /// error's label, which names no language).
    fn shown(&self) -> Entry {
        self.entry.in_lang(lang_for_path(&self.file)).unwrap_or(*self.entry)
    }

    pub(super) fn to_concept(&self) -> Concept {
        let shown = self.shown();
        let seen = match &self.seen_as {
            _ if FailedCall::is_label(&self.file) => format!(" You met it in this session ({}).", self.file),
            Some(name) if !name.trim().is_empty() => {
                format!(" Seen here as `{}` in {}.", name.trim(), self.file)
            }
            _ => format!(" Seen here in {}.", self.file),
        };
        Concept {
            name: shown.name.to_string(),
            category: self.entry.category.to_string(),
            difficulty: self.entry.difficulty.as_str().to_string(),
            source_file: self.file.clone(),
            snippet: self.snippet.clone(),
            why_it_matters: format!("{}{seen}", shown.description),
            confidence: self.confidence,
        }
    }
}

/// At most this many concepts come from errors: a session that met ten errors still wrote code
/// worth learning from.
pub const MAX_ERROR_CONCEPTS: usize = 2;
/// Confidence of a concept grounded in an error of a known kind, and in any other error.
const ERROR_CONFIDENCE: f64 = 0.8;
const OTHER_ERROR_CONFIDENCE: f64 = 0.6;

/// One concept per kind of error the session met, citing the failed call's label and the
/// error's telling lines (verbatim, so validation finds them in the failure's text).
/// A missing dependency is taught in its ecosystem's terms, told by the error, its command or
/// the languages of the session's `files`.
pub(super) fn pick_from_failures(failures: &[FailedCall], files: &[SourceFile]) -> Vec<Pick> {
    let langs: Vec<_> = files.iter().filter_map(|f| crate::analysis::lang_for_path(&f.path)).collect();
    failures::errors_met(failures, MAX_ERROR_CONCEPTS, &langs)
        .into_iter()
        .filter_map(|met| {
            let entry = catalogue::find(met.concept)?;
            let confidence = if met.kind == ErrorKind::Other { OTHER_ERROR_CONFIDENCE } else { ERROR_CONFIDENCE };
            Some(Pick { entry, file: met.label, snippet: met.excerpt, seen_as: None, confidence })
        })
        .collect()
}

pub(super) fn pick_from_patterns(patterns: &[Pattern], files: &[SourceFile]) -> Vec<Pick> {
    let lowered: Vec<(String, String)> =
        patterns.iter().map(|p| (p.name.to_lowercase(), p.snippet.to_lowercase())).collect();
    // The files by the paths the patterns cite: a lookup per hit, not a scan (issue 43 §4).
    let paths = PathIndex::new(files.iter().map(|f| f.path.as_str()));
    // (score, catalogue order, pick) for every entry some pattern reveals with usable evidence.
    let mut scored = Vec::new();
    for (order, entry) in catalogue::all().enumerate() {
        let mut hits: Vec<(u32, usize)> = patterns
            .iter()
            .enumerate()
            .filter_map(|(i, p)| best_weight(entry.signals, p, &lowered[i]).map(|w| (w, i)))
            .collect();
        // Strongest first; equal weights keep pattern order (stable sort).
        hits.sort_by_key(|h| Reverse(h.0));
        let score: u32 = hits.iter().take(MAX_HITS_PER_CONCEPT).map(|h| h.0).sum();
        let evidence = hits.iter().find_map(|&(_, i)| {
            let p = &patterns[i];
            let file = &files[paths.first(&p.file)?];
            // Only where the entry has text true in the file's language (issue 40).
            holds_at(entry, &file.path).then_some(())?;
            Some((file.path.clone(), pattern_snippet(file, p)?, p.name.clone()))
        });
        if let Some((file, snippet, name)) = evidence {
            let confidence = (0.5 + 0.05 * f64::from(score)).min(0.95);
            let pick = Pick { entry, file, snippet, seen_as: Some(name), confidence };
            scored.push((score, order, pick));
        }
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut per_category: BTreeMap<&str, usize> = BTreeMap::new();
    let mut first_pass = Vec::new();
    let mut rest = Vec::new();
    for (_, _, pick) in scored {
        let count = per_category.entry(pick.entry.category).or_default();
        if *count < MAX_PER_CATEGORY && first_pass.len() < MAX_CONCEPTS {
            *count += 1;
            first_pass.push(pick);
        } else {
            rest.push(pick);
        }
    }
    let room = MAX_CONCEPTS - first_pass.len();
    first_pass.extend(rest.into_iter().take(room));
    first_pass
}

/// A verbatim piece of `file` for the pattern: its own snippet when the file contains it and
/// it is not too long, else the lines around the pattern's line.
fn pattern_snippet(file: &SourceFile, p: &Pattern) -> Option<String> {
    let own = p.snippet.trim();
    if !own.is_empty() && own.len() <= MAX_SNIPPET_BYTES && file.content.contains(own) {
        return Some(own.to_string());
    }
    let line = usize::try_from(p.line).ok()?.checked_sub(1)?;
    lines_around(&file.content, line)
}

/// Lines `line - CONTEXT_LINES ..= line + CONTEXT_LINES` (0-based) of `content`, sliced from
/// it (so the result is verbatim, CRLF files included), trimmed; shrunk to the line itself,
/// then to a window inside it, when longer than `MAX_SNIPPET_BYTES`.
fn lines_around(content: &str, line: usize) -> Option<String> {
    let mut starts = vec![0];
    starts.extend(content.match_indices('\n').map(|(i, _)| i + 1));
    if line >= starts.len() {
        return None;
    }
    let end_of = |l: usize| starts.get(l + 1).copied().unwrap_or(content.len());
    let first = line.saturating_sub(CONTEXT_LINES);
    let last = (line + CONTEXT_LINES).min(starts.len() - 1);
    let wide = content[starts[first]..end_of(last)].trim();
    let text = if wide.len() <= MAX_SNIPPET_BYTES { wide } else { content[starts[line]..end_of(line)].trim() };
    let text = if text.len() <= MAX_SNIPPET_BYTES { text } else { prefix_at_char(text, MAX_SNIPPET_BYTES).trim() };
    (!text.is_empty()).then(|| text.to_string())
}

/// The longest prefix of `text` of at most `max` bytes that ends on a char boundary.
fn prefix_at_char(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Language of a file from its extension (SPEC §6.1's list).
pub(super) fn language_of(path: &str) -> Option<&'static str> {
    crate::analysis::stack::language_of_extension(&path.rsplit_once('.')?.1.to_lowercase())
}

/// Adds concepts until there are `MIN_CONCEPTS`: first entries that fit the stack and whose
/// tokens occur in a file of a fitting language, then generic entries by token, then generic
/// entries citing the top of the first non-empty file.
pub(super) fn fill_from_stack(
    picked: &mut Vec<Pick>,
    stack: &StackProfile,
    patterns: &[Pattern],
    files: &[SourceFile],
) {
    let terms = stack_terms(stack, patterns, files);
    let searched: Vec<SearchedFile<'_>> = files.iter().map(SearchedFile::new).collect();
    let fits = |e: &Entry| e.stack_hints.iter().any(|h| terms.iter().any(|t| t == h || t.contains(h)));
    // Two passes: stack-specific entries first, generic ones only if still short.
    for generic_pass in [false, true] {
        let confidence = if generic_pass { GENERIC_CONFIDENCE } else { STACK_CONFIDENCE };
        let eligible = |e: &Entry| {
            if generic_pass { e.generic } else { !e.generic && fits(e) }
        };
        for entry in catalogue::all().filter(|e| eligible(e)) {
            if picked.len() >= MIN_CONCEPTS {
                return;
            }
            if picked.iter().any(|p| p.entry.name == entry.name) {
                continue;
            }
            if let Some((file, snippet)) = token_evidence(entry, &searched).filter(|(f, _)| holds_at(entry, f)) {
                picked.push(Pick { entry, file, snippet, seen_as: None, confidence });
            }
        }
    }
    let Some(head) = files.iter().find_map(|f| Some((f.path.clone(), lines_around(&f.content, 0)?))) else {
        return;
    };
    for entry in catalogue::all().filter(|e| e.generic) {
        if picked.len() >= MIN_CONCEPTS {
            return;
        }
        if !picked.iter().any(|p| p.entry.name == entry.name) && holds_at(entry, &head.0) {
            let (file, snippet) = head.clone();
            picked.push(Pick { entry, file, snippet, seen_as: None, confidence: GENERIC_CONFIDENCE });
        }
    }
}

/// Whether `entry` has text true in the language of the file at `path` ([`Entry::in_lang`]).
fn holds_at(entry: &Entry, path: &str) -> bool {
    entry.in_lang(lang_for_path(path)).is_some()
}

/// Everything the session says about its stack, lowercase: detected items plus the languages
/// of its patterns and file extensions.
fn stack_terms(stack: &StackProfile, patterns: &[Pattern], files: &[SourceFile]) -> BTreeSet<String> {
    let singles = [&stack.framework, &stack.orm, &stack.state_management, &stack.auth];
    let lists = [&stack.languages, &stack.frameworks, &stack.testing, &stack.styling];
    let detected = singles.into_iter().flatten().chain(lists.into_iter().flatten());
    let from_code = patterns.iter().map(|p| p.language.clone());
    let from_files = files.iter().filter_map(|f| language_of(&f.path)).map(str::to_string);
    // Languages are display names in profiles ("C#"), ids in patterns and hints ("csharp").
    detected.map(|t| language_id(t)).chain(from_code).chain(from_files).map(|t| t.trim().to_lowercase()).collect()
}

/// A captured file as [`token_evidence`] searches it: its tree parsed, and each masking made,
/// on first use and once per [`fill_from_stack`], however many entries look.
struct SearchedFile<'a> {
    file: &'a SourceFile,
    lang: Option<Lang>,
    tree: OnceCell<Option<Tree>>,
    code: OnceCell<String>,
    code_and_strings: OnceCell<String>,
}

impl<'a> SearchedFile<'a> {
    fn new(file: &'a SourceFile) -> SearchedFile<'a> {
        let lang = lang_for_path(&file.path);
        SearchedFile { file, lang, tree: OnceCell::new(), code: OnceCell::new(), code_and_strings: OnceCell::new() }
    }

    /// The file's tree (`syntax::parse_file`); `None` with no grammar or past the parse bound,
    /// and the file is then searched as written.
    fn tree(&self) -> Option<&Tree> {
        self.tree.get_or_init(|| syntax::parse_file(&self.file.path, &self.file.content).map(|(_, t)| t)).as_ref()
    }

    /// Comments and string contents blanked: where code tokens are looked for.
    fn code(&self) -> &str {
        self.code.get_or_init(|| {
            self.tree()
                .map_or_else(|| self.file.content.clone(), |t| syntax::mask_comments_and_strings(t, &self.file.content))
        })
    }

    /// Comments alone blanked: where a token that lives in strings is looked for.
    fn code_and_strings(&self) -> &str {
        self.code_and_strings.get_or_init(|| {
            self.tree().map_or_else(|| self.file.content.clone(), |t| syntax::mask_comments(t, &self.file.content))
        })
    }
}

/// The first place a token of `entry` occurs in a file whose language fits the entry (when
/// the entry names languages at all), as (path, lines around it).
fn token_evidence(entry: &Entry, files: &[SearchedFile<'_>]) -> Option<(String, String)> {
    let langs: Vec<&str> = entry.stack_hints.iter().copied().filter(|h| LANGUAGES.contains(h)).collect();
    let fits =
        |f: &&SearchedFile<'_>| langs.is_empty() || language_of(&f.file.path).is_some_and(|l| langs.contains(&l));
    files.iter().filter(fits).find_map(|f| {
        // As code, not in a comment or string, and meaning there what the entry means; a
        // token that lives in a string (`%w`, `use client`) in code or strings, not comments.
        // Masking only blanks, so a token absent from the text as written is absent masked:
        // such a file is not parsed at all.
        let present = |t: &&&str| f.file.content.contains(**t) && is_evidence_in(t, f.lang);
        let at = entry.tokens.iter().filter(present).find_map(|t| {
            let text = if lives_in_strings(t) { f.code_and_strings() } else { f.code() };
            find_token(text, t)
        })?;
        let content = &f.file.content;
        let line = content[..at].matches('\n').count();
        Some((f.file.path.clone(), lines_around(content, line)?))
    })
}

/// A token written inside string literals, not as code: a format verb (`%w`) or a phrase such
/// as the `"use client"` directive.
fn lives_in_strings(token: &str) -> bool {
    token.starts_with('%') || token.trim().contains(' ')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_that_lives_in_strings_is_found_there_and_not_in_comments() {
        let entry = crate::analysis::catalogue::find("Adding context to errors").expect("in the catalogue");
        let go = |content: String| vec![SourceFile::new("store/load.go", content)];
        let searched =
            |files: &[SourceFile]| token_evidence(entry, &files.iter().map(SearchedFile::new).collect::<Vec<_>>());
        let filler = "\tstep()\n".repeat(10);
        let wrapped = format!(
            "package store\n\nfunc load(ctx context.Context, p string) error {{\n{filler}\tif err := read(p); err != nil {{\n\t\treturn fmt.Errorf(\"load %s: %w\", p, err)\n\t}}\n\treturn nil\n}}\n"
        );
        let (_, excerpt) = searched(&go(wrapped)).expect("evidence");
        assert!(excerpt.contains("%w") && !excerpt.contains("ctx context.Context"), "the Errorf line: {excerpt}");
        // In a comment it is no evidence: a token in code is taken instead.
        let commented = format!(
            "package store\n\n// wrap with %w some day\n{filler}func load(ctx context.Context) error {{\n\treturn nil\n}}\n"
        );
        let (_, excerpt) = searched(&go(commented)).expect("evidence");
        assert!(excerpt.contains("ctx context.Context") && !excerpt.contains("%w"), "{excerpt}");
    }

    #[test]
    fn excerpts_are_verbatim_even_with_crlf() {
        let content = "a\r\nb\r\nc\r\nd\r\ne\r\nf\r\n";
        let got = lines_around(content, 3).expect("in range");
        assert_eq!(got, "b\r\nc\r\nd\r\ne\r\nf");
        assert!(content.contains(&got));
        assert_eq!(lines_around(content, 40), None);
    }

    #[test]
    fn long_lines_are_cut_on_a_char_boundary() {
        let content = format!("short\n{}\nend", "é".repeat(1000));
        let got = lines_around(&content, 1).expect("in range");
        assert!(got.len() <= MAX_SNIPPET_BYTES && content.contains(&got));
    }

    #[test]
    fn languages_come_from_extensions() {
        assert_eq!(language_of("src/App.TSX"), Some("typescript"));
        assert_eq!(language_of("main.go"), Some("go"));
        assert_eq!(language_of("README"), None);
    }
}
