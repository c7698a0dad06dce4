//! Questions grounded in the developer's own code (issue 16): where in the session's files a
//! concept occurs (its *sites*), the stretch of lines a question quotes around a site, and one
//! question of each type built from those lines, each carrying its [`Grounding`].
//!
//! # Shape
//! [`SessionCode`] holds every captured file split into lines and parsed once by its grammar
//! (`analysis::syntax`), next to the same lines with the tree's comments and strings masked,
//! so a search for `await` or `err != nil` never lands in a comment, and an edit found in the
//! masked text applies at the same byte offsets of the original; the tree gives the whole
//! units a question quotes (`units`) and the statements an ordering question orders (`flow`). [`sites`] ranks the places a concept occurs: the static patterns its
//! catalogue signals match (strongest first, the concept's own file first), then the line where
//! the concept's cited snippet starts; for a concept grounded in an error the developer met, the
//! lines of the session's files the error points at (`src/cart.ts(12,9)`, `main.rs:4:18`,
//! `File "main.py", line 3`). [`question`] builds one question of a requested type at
//! the first site that supports it:
//!
//! - spot_the_bug: a known bug for the concept applied to one real line (`mutations`);
//! - fill_in_blank: a token that matters to the concept blanked in a real line;
//! - ordering: the statements of the function around the site, shuffled (`flow`);
//! - multiple_choice, true_false, code_reading, open_ended: a verbatim quote of the lines
//!   around the site, the question anchored on it by file and line numbers (`builders`).
//!
//! Everything is a pure function of its inputs; the option and step shuffles come from FNV
//! seeds of (entry, type, level, file, line), as in `catalogue::render`.

mod builders;
mod flow;
mod mutations;
mod readings;
pub mod units;

pub use builders::BUG_TAG_PREFIX;

use crate::analysis::catalogue::tokens::find_token;
use crate::analysis::catalogue::{Entry, best_weight};
use crate::analysis::concepts::{Concept, Level};
use crate::analysis::grounding::{Grounding, GroundingKind};
use crate::analysis::lint::MAX_SNIPPET_LINES;
use crate::analysis::model::{FailedCall, Pattern, SourceFile};
use crate::analysis::path_index::PathIndex;
use crate::analysis::questions::{GeneratedQuestion, QuestionType};
use crate::analysis::syntax;
use crate::analysis::{Lang, lang_for_path};
use std::cmp::Reverse;
use std::collections::HashMap;

/// Most sites kept per concept: the questions of one concept use the first few.
const MAX_SITES: usize = 6;
/// A unit (function, class, block) this long or shorter is quoted whole; in a longer one, a
/// smaller unit around the site.
const MAX_QUOTE_LINES: usize = 18;
/// A unit quoted inside a long function is grown by neighbours to about twice this plus one.
const QUOTE_CONTEXT: usize = 3;

/// One captured file, line by line, as written and with comments and strings masked, and its
/// syntax tree when its grammar read it.
pub struct CodeFile<'a> {
    pub path: &'a str,
    pub lang: Option<Lang>,
    /// The file's text as captured.
    pub src: &'a str,
    /// The file's lines as `str::lines` splits them (no line breaks, no trailing `\r`).
    pub lines: Vec<&'a str>,
    /// The same lines with comment and string contents blanked (same byte offsets): the
    /// tree's comment and string nodes; without a tree, the lines as written.
    pub masked: Vec<String>,
    /// The file's syntax tree (`analysis::syntax`), parsed once here; `None` for a file with
    /// no grammar, past the size bound or whose parse was abandoned: its units are its lines.
    pub tree: Option<syntax::Tree>,
    /// Byte offset in `src` where each line starts.
    line_starts: Vec<usize>,
}

impl<'a> CodeFile<'a> {
    pub fn new(file: &'a SourceFile) -> CodeFile<'a> {
        let lang = lang_for_path(&file.path);
        let src = file.content.as_str();
        let tree = lang.and_then(|_| recent_tree(&file.path, src));
        let masked_text = match &tree {
            Some(tree) => syntax::mask_comments_and_strings(tree, src),
            None => src.to_string(),
        };
        let lines: Vec<&str> = src.lines().collect();
        let mut masked: Vec<String> = masked_text.lines().map(str::to_string).collect();
        // Masking keeps line breaks, so the counts agree; guard anyway rather than index past.
        masked.resize(lines.len(), String::new());
        let line_starts = std::iter::once(0)
            .chain(src.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1))
            .collect();
        CodeFile { path: &file.path, lang, src, lines, masked, tree, line_starts }
    }

    /// Lines `start..=end` (0-based) joined with `\n`.
    pub fn text(&self, start: usize, end: usize) -> String {
        self.lines[start..=end].join("\n")
    }

    fn is_blank(&self, line: usize) -> bool {
        self.masked[line].trim().is_empty()
    }

    /// Byte offset in `src` of the first character of line `line` that is not whitespace (the
    /// line's start when it has none).
    fn code_byte(&self, line: usize) -> usize {
        let start = self.line_starts.get(line).copied().unwrap_or(self.src.len());
        start + self.lines.get(line).map_or(0, |l| l.len() - l.trim_start().len())
    }

    /// Byte offset in `src` just past the last character of line `line` that is not
    /// whitespace in the masked text (a trailing comment is not code).
    fn code_end_byte(&self, line: usize) -> usize {
        let start = self.line_starts.get(line).copied().unwrap_or(self.src.len());
        start + self.masked.get(line).map_or(0, |l| l.trim_end().len())
    }

    /// The last line a node's text reaches, not counting the line break or blank lines some
    /// grammars end a node with (a Go statement list, a Rust doc comment).
    fn last_row(&self, node: syntax::Node<'_>) -> usize {
        let (start, end) = (node.start_position().row, node.end_position().row);
        let mut last = if node.end_position().column == 0 && end > start { end - 1 } else { end };
        last = last.min(self.lines.len().saturating_sub(1));
        while last > start && self.lines[last].trim().is_empty() {
            last -= 1;
        }
        last
    }
}

/// Files parsed lately on this thread, most recent last: precision checks every question of a
/// session against its files (`precision::precision_problems` builds a `CodeFile` per
/// question), so the same few files are read again and again. A tree is kept with the exact
/// path and text it was parsed from, and handed out again only for the same path and text:
/// a memo, invisible to callers (a tree clone shares the parse).
const RECENT_TREES: usize = 8;
/// Files larger than this are parsed each time rather than kept.
const MAX_KEPT_BYTES: usize = 256 * 1024;

thread_local! {
    static RECENT: std::cell::RefCell<std::collections::VecDeque<(String, String, syntax::Tree)>> =
        const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
}

/// The tree of the file at `path` with text `src` (`syntax::parse_file`), from `RECENT` when
/// it was parsed lately.
fn recent_tree(path: &str, src: &str) -> Option<syntax::Tree> {
    let hit = RECENT.with(|recent| {
        recent.borrow().iter().find(|(p, text, _)| p == path && text == src).map(|(_, _, tree)| tree.clone())
    });
    if hit.is_some() {
        return hit;
    }
    let (_, tree) = syntax::parse_file(path, src)?;
    if src.len() <= MAX_KEPT_BYTES {
        RECENT.with(|recent| {
            let mut recent = recent.borrow_mut();
            if recent.len() == RECENT_TREES {
                recent.pop_front();
            }
            recent.push_back((path.to_string(), src.to_string(), tree.clone()));
        });
    }
    Some(tree)
}

/// Every captured file of a session, ready for searching.
pub struct SessionCode<'a> {
    pub files: Vec<CodeFile<'a>>,
    /// The files by the paths that cite them: a lookup, not a scan of every file (issue 43 §4).
    paths: PathIndex<'a>,
    /// The session's patterns as [`sites`] reads them, prepared once for every concept.
    patterns: Option<PreparedPatterns<'a>>,
}

/// The static patterns of a session, read once per job rather than once per concept: each
/// one's name and snippet lowercased (what `best_weight` compares hints with) and the file of
/// the session it is in.
struct PreparedPatterns<'a> {
    patterns: &'a [Pattern],
    lowered: Vec<(String, String)>,
    files: Vec<Option<usize>>,
}

impl<'a> SessionCode<'a> {
    pub fn new(files: &'a [SourceFile]) -> SessionCode<'a> {
        let paths = PathIndex::new(files.iter().map(|f| f.path.as_str()));
        SessionCode { files: files.iter().map(CodeFile::new).collect(), paths, patterns: None }
    }

    /// As [`SessionCode::new`], with `patterns` prepared for [`sites`]: a job that asks for
    /// the sites of many concepts over the same patterns lowercases and places them once.
    pub fn with_patterns(files: &'a [SourceFile], patterns: &'a [Pattern]) -> SessionCode<'a> {
        let mut code = SessionCode::new(files);
        let mut placed: HashMap<&str, Option<usize>> = HashMap::new();
        let files = patterns.iter().map(|p| *placed.entry(&p.file).or_insert_with(|| code.paths.first(&p.file)));
        let files = files.collect();
        let lowered = patterns.iter().map(lowered).collect();
        code.patterns = Some(PreparedPatterns { patterns, lowered, files });
        code
    }

    /// The first file `cited` names (`path_matches`), from the index.
    fn file_named(&self, cited: &str) -> Option<usize> {
        self.paths.first(cited)
    }
}

/// A pattern's name and snippet lowercased, as `best_weight` takes them.
fn lowered(p: &Pattern) -> (String, String) {
    (p.name.to_lowercase(), p.snippet.to_lowercase())
}

/// A place a concept occurs: a file of the session and a 0-based line of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Site {
    pub file: usize,
    pub line: usize,
}

/// The places `concept` occurs in the session, best first (see the module doc); empty when
/// the session has none (a concept met only in an error, or named by an LLM for code that
/// was not captured).
pub fn sites(code: &SessionCode<'_>, entry: Option<&Entry>, concept: &Concept, patterns: &[Pattern]) -> Vec<Site> {
    let mut ranked: Vec<(u32, bool, Site)> = Vec::new();
    if let Some(entry) = entry {
        // The patterns as `SessionCode::with_patterns` prepared them, when these are those.
        let prepared = code.patterns.as_ref().filter(|prepared| std::ptr::eq(prepared.patterns, patterns));
        let own_files = code.paths.matching(&concept.source_file);
        for (i, p) in patterns.iter().enumerate() {
            let weight = match prepared {
                Some(prepared) => best_weight(entry.signals, p, &prepared.lowered[i]),
                None => best_weight(entry.signals, p, &lowered(p)),
            };
            let Some(weight) = weight else { continue };
            let file = match prepared {
                Some(prepared) => prepared.files[i],
                None => code.file_named(&p.file),
            };
            let Some(file) = file else { continue };
            let Some(line) = usize::try_from(p.line).ok().and_then(|l| l.checked_sub(1)) else { continue };
            if line < code.files[file].lines.len() {
                let own_file = own_files.contains(&file);
                ranked.push((weight, own_file, Site { file, line }));
            }
        }
    }
    // Strongest first, the concept's own file first among equals; stable, so line order stays.
    ranked.sort_by_key(|&(weight, own_file, _)| (Reverse(weight), !own_file));
    let mut out: Vec<Site> = Vec::new();
    let cited = snippet_site(code, concept).into_iter().chain(error_sites(code, concept));
    for site in ranked.into_iter().map(|r| r.2).chain(cited) {
        if !out.contains(&site) && out.len() < MAX_SITES {
            out.push(site);
        }
    }
    out
}

/// The line where the concept's cited snippet starts in its cited file: where its lines occur
/// in a row (a first line such as `item, ok := s.items[sku]` can occur in several functions,
/// and the first of them need not be the one cited: issue 25), else where its first line does.
fn snippet_site(code: &SessionCode<'_>, concept: &Concept) -> Option<Site> {
    let wanted: Vec<&str> = concept.snippet.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let first = *wanted.first()?;
    let file = code.file_named(&concept.source_file)?;
    let lines = &code.files[file].lines;
    let matches_at = |start: usize| {
        let mut rest = lines[start..].iter().map(|l| l.trim()).filter(|l| !l.is_empty());
        wanted.iter().all(|w| rest.next().is_some_and(|l| l == *w || l.contains(w)))
    };
    let line = (0..lines.len())
        .find(|&i| lines[i].trim() == first && matches_at(i))
        .or_else(|| lines.iter().position(|l| l.trim() == first || l.contains(first)))?;
    // A snippet that starts with a comment or a blank line is placed at its first line of
    // code: a site on a comment quotes the unit above it, which need not show the concept
    // (a Mutex question over the struct above the one holding the `sync.Mutex`).
    let span = wanted.len().max(1);
    let line = (line..(line + span).min(lines.len())).find(|&i| !code.files[file].is_blank(i)).unwrap_or(line);
    // A snippet that starts with the file's imports: quoted as a whole unit, those lines alone
    // would show nothing of the concept (issue 31); its own signals place it instead.
    let f = &code.files[file];
    let top = units::units_around(f, line).last().map_or(line, |u| u.0);
    let head = f.masked[top].trim_start();
    let import =
        ["using ", "import ", "use ", "from ", "package ", "namespace ", "require"].iter().any(|k| head.starts_with(k));
    // Nor does one that starts with the `}` closing the block above it.
    (!import && !units::starts_with_closer(f, line)).then_some(Site { file, line })
}

/// For a concept grounded in an error the developer met (its `source_file` is a failed call's
/// label, its snippet the error's lines): the lines of captured files the error points at.
fn error_sites(code: &SessionCode<'_>, concept: &Concept) -> Vec<Site> {
    if !FailedCall::is_label(&concept.source_file) {
        return Vec::new();
    }
    let error = &concept.snippet;
    let mut out = Vec::new();
    for (file, f) in code.files.iter().enumerate() {
        for (at, _) in error.match_indices(f.path) {
            let line = line_after(&error[at + f.path.len()..]).and_then(|l| l.checked_sub(1));
            if let Some(line) = line.filter(|&l| l < f.lines.len()) {
                out.push(Site { file, line });
            }
        }
    }
    out
}

/// The line number right after a path in an error: `(12,9)`, `:12:9` or `", line 12`.
fn line_after(rest: &str) -> Option<usize> {
    let digits = ["(", ":", "\", line "].iter().find_map(|p| rest.strip_prefix(p))?;
    let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    digits[..end].parse().ok()
}

/// Where a quoted snippet of lines `start..=end` (0-based) of `file` comes from.
fn quote_grounding(file: &CodeFile<'_>, start: usize, end: usize, kind: GroundingKind) -> Grounding {
    Grounding {
        file: file.path.to_string(),
        line_start: one_based(start),
        line_end: one_based(end),
        kind,
        mutation: None,
    }
}

fn one_based(line: usize) -> u32 {
    u32::try_from(line + 1).unwrap_or(u32::MAX)
}

/// The lines a question quotes around `line`: the largest whole unit holding it (the function
/// with its decorators, a block, the statement: `units`) of at most `MAX_QUOTE_LINES`, grown by
/// whole neighbouring statements when it is a small part of a long function.
fn quote_window(file: &CodeFile<'_>, line: usize, narrow: bool) -> (usize, usize) {
    let unit =
        if narrow { units::units_around(file, line)[0] } else { units::unit_within(file, line, MAX_QUOTE_LINES) };
    if unit.1 - unit.0 >= QUOTE_CONTEXT * 2 {
        return unit;
    }
    let grown = units::with_siblings(file, unit, QUOTE_CONTEXT * 2 + 1);
    // A statement whose neighbour is a long one (a `let` above a 16-line `match`), or the
    // only statements of a small block, would be quoted alone: a spot-the-bug of one line says
    // where its bug is. The neighbour, whole, as far as a quote may go; else the smallest
    // unit around them that shows a few lines and fits.
    let lines = |(s, e): units::Span| e - s + 1;
    if lines(grown) >= QUOTE_CONTEXT {
        return grown;
    }
    let wider = units::with_siblings(file, unit, MAX_QUOTE_LINES);
    if lines(wider) >= QUOTE_CONTEXT {
        return wider;
    }
    units::units_around(file, line)
        .into_iter()
        .find(|&u| lines(u) >= QUOTE_CONTEXT && lines(u) <= MAX_QUOTE_LINES)
        .unwrap_or(grown)
}

/// The first of the entry's tokens that occurs as code in `start..=end` of `file`, for
/// "look at `await`" pointers.
fn token_in(entry: &Entry, file: &CodeFile<'_>, start: usize, end: usize) -> Option<&'static str> {
    entry.tokens.iter().copied().find(|t| (start..=end).any(|i| find_token(&file.masked[i], t).is_some()))
}

/// What every builder needs to know about the question it writes.
pub struct Ask<'e> {
    pub entry: &'e Entry,
    /// The concept name written into the question (as the concept was stored).
    pub concept: &'e str,
    pub qtype: QuestionType,
    pub level: Level,
    /// The concept was met as an error pointing at this code, rather than seen in it.
    pub about_error: bool,
    /// The bugs (rule ids) the session's questions planted already; others are tried first.
    pub used_bugs: &'e [String],
    /// Quote the smallest whole unit around the site (its statement, grown by whole
    /// neighbours) instead of the whole function: for a second question of one type there.
    pub narrow: bool,
}

/// A question of `ask.qtype` grounded at the first of `sites` (tried from `first` on, wrapping
/// around) that supports it, or `None` when no site does (no known bug applies, no token to
/// blank, no function with enough statements). Open-ended is senior-only, as in `render`.
pub fn question(code: &SessionCode<'_>, sites: &[Site], first: usize, ask: &Ask<'_>) -> Option<GeneratedQuestion> {
    if ask.qtype == QuestionType::OpenEnded && ask.level != Level::Senior {
        return None;
    }
    let n = sites.len();
    (0..n).map(|k| sites[(first + k) % n]).find_map(|site| {
        let file = &code.files[site.file];
        let q = match ask.qtype {
            QuestionType::SpotTheBug => builders::spot_the_bug(ask, file, site.line),
            QuestionType::FillInBlank => builders::fill_in_blank(ask, file, site.line),
            QuestionType::Ordering => builders::ordering(ask, file, site.line),
            QuestionType::MultipleChoice
            | QuestionType::TrueFalse
            | QuestionType::CodeReading
            | QuestionType::OpenEnded => builders::quoted(ask, file, site.line),
        }?;
        // Issue 25: the concept is asked only where its signal is, so the lines the question
        // quotes must hold the site that showed the concept (a builder may have moved its
        // window to where a bug or a blank fits, away from it).
        let shows_site = q.grounding.as_ref().is_none_or(|g| {
            let line = u32::try_from(site.line + 1).unwrap_or(u32::MAX);
            g.line_start <= line && line <= g.line_end
        });
        // A snippet longer than a screen is not asked (issue 40: a 174-line snippet). The
        // builders quote the smallest whole unit around the site that fits; when even that is
        // longer (a long class whose header is the site), the next site is tried instead of a
        // cut through the unit.
        (shows_site && fits_screen(&q)).then(|| builders::fit_follow_up(ask, q))
    })
}

/// Whether `q`'s snippet fits on a screen ([`MAX_SNIPPET_LINES`]).
pub fn fits_screen(q: &GeneratedQuestion) -> bool {
    q.snippet.as_deref().is_none_or(|s| s.lines().count() <= MAX_SNIPPET_LINES)
}

/// The concept's cited snippet as whole units of its file (SPEC §6.4, rule 2): where it cuts
/// through a statement or leaves a decorator out, the whole unit around its first line
/// (`units::unit_within`) instead. `None` when the snippet is not found in a file of code, or
/// is whole already.
pub fn whole_snippet(code: &SessionCode<'_>, source_file: &str, snippet: &str) -> Option<String> {
    let g = locate_snippet(code, source_file, snippet)?;
    let file = code.files.iter().find(|f| f.path == g.file && f.lang.is_some())?;
    let (start, end) = (g.line_start.saturating_sub(1) as usize, g.line_end.saturating_sub(1) as usize);
    if units::check_whole(file, start, end).is_ok() {
        return None;
    }
    // The unit around its first line that fits; where that is longer (the snippet opens a
    // long class), the first fitting unit inside the snippet, with its neighbours.
    let fits = |(s, e): units::Span| e - s < MAX_QUOTE_LINES;
    let around = units::unit_within(file, start, MAX_QUOTE_LINES);
    let (s, e) = if fits(around) {
        around
    } else {
        (start..=end)
            .filter(|&i| !file.is_blank(i))
            .find_map(|i| units::units_around(file, i).into_iter().rev().find(|&u| fits(u)))
            .map(|u| units::with_siblings(file, u, MAX_QUOTE_LINES))?
    };
    Some(file.text(s, e))
}

/// A verbatim quote of the lines `snippet` occupies in the file `source_file` names, for a
/// question about a concept the catalogue does not know.
pub fn locate_snippet(code: &SessionCode<'_>, source_file: &str, snippet: &str) -> Option<Grounding> {
    let wanted: Vec<&str> = snippet.lines().map(str::trim).collect();
    let file = &code.files[code.file_named(source_file)?];
    let n = wanted.len();
    if n == 0 || n > file.lines.len() {
        return None;
    }
    let start = (0..=file.lines.len() - n)
        .find(|&s| file.lines[s..s + n].iter().map(|l| l.trim()).eq(wanted.iter().copied()))?;
    Some(quote_grounding(file, start, start + n - 1, GroundingKind::Quote))
}

#[cfg(test)]
mod tests;
