//! One builder per question type, each over the lines of one file around a site: the bug
//! (a `mutations` rule applied to a real line), the blank (an entry token blanked in a real
//! line), the ordering (the function's statements, `flow`), and the quoted types (the lines
//! verbatim, the question anchored on their file and line numbers, distractors from the
//! entry's misconceptions). Each sets the question's [`Grounding`].

use super::flow::{enclosing_function, function_name, statements};
use super::mutations::{Rule, rules_for};
use super::{Ask, CodeFile, one_based, quote_grounding, quote_window, token_in};
use crate::analysis::Lang;
use crate::analysis::catalogue::render::{
    fact_among_myths, fact_or_myth, open_explanation, reading_answer, reading_question, shuffled_steps,
};
use crate::analysis::catalogue::tokens::{find_token, is_trivia_answer, named_but_not_shown, shown_word};
use crate::analysis::concepts::{Level, normalize_name};
use crate::analysis::grounding::{GroundingKind, LineEdit};
use crate::analysis::questions::{
    GeneratedQuestion, QuestionType, RUBRIC_DIMENSIONS, count_blanks, fnv1a64, rubric_tag,
};

/// Lines searched on each side of the site for a bug to plant when it is in no function.
const BUG_SEARCH_LINES: usize = 6;
/// Ordering questions show this many statements at most (`validate_question` allows 4–6).
const MAX_STEPS: usize = 6;
const MIN_STEPS: usize = 4;
/// Prefix of the tag naming a spot_the_bug question's planted bug (`bug:drop-await`).
pub const BUG_TAG_PREFIX: &str = "bug:";
/// The blank marker (as `catalogue::tokens` writes it).
const BLANK: &str = "___";

/// A question with the fields every builder sets the same way; the explanation ends with the
/// concept's labelled aside for a question in `lang` (its names in other languages), if any.
fn base(ask: &Ask<'_>, lang: Option<Lang>, question: String, explanation: String) -> GeneratedQuestion {
    let entry = ask.entry;
    let own_name = crate::analysis::catalogue::find(entry.name).map_or(entry.name, |e| e.name);
    let explanation = match crate::analysis::catalogue::asides::render(own_name, lang) {
        Some(aside) => format!("{explanation} {aside}"),
        None => explanation,
    };
    GeneratedQuestion {
        concept: ask.concept.to_string(),
        question_type: ask.qtype.as_str().to_string(),
        difficulty: ask.level.as_str().to_string(),
        snippet: None,
        question,
        options: None,
        correct: None,
        explanation,
        follow_up: (ask.level == Level::Junior).then(|| entry.follow_up.to_string()),
        tags: vec![
            entry.category.to_string(),
            normalize_name(entry.name).replace(' ', "-"),
            ask.qtype.as_str().to_string(),
        ],
        grounding: None,
    }
}

/// `q` with a follow-up true to the code it shows: the entry's own asks about a token the code
/// does not show (`tokens::named_but_not_shown`: about `reduce` over a chain of `.map`), so it
/// becomes one about a token the code shows (`map`), or about the concept where it shows none.
pub fn fit_follow_up(ask: &Ask<'_>, mut q: GeneratedQuestion) -> GeneratedQuestion {
    let shown = q.shown_code();
    let Some(follow_up) = q.follow_up.as_deref() else { return q };
    if shown.is_empty() || named_but_not_shown(ask.entry.tokens, follow_up, &shown).is_none() {
        return q;
    }
    q.follow_up = Some(match shown_word(ask.entry.tokens, &shown) {
        Some(token) => format!("Why does this code use `{token}` here, and what would change without it?"),
        // The quiz names the concept above the question.
        None => "When would you do without this concept here, and what would you write instead?".to_owned(),
    });
    q
}

fn seed(ask: &Ask<'_>, file: &CodeFile<'_>, line: usize) -> u64 {
    let key = format!("{}|{}|{}|{}|{line}", ask.entry.name, ask.qtype.as_str(), ask.level.as_str(), file.path);
    fnv1a64(key.as_bytes())
}

/// "`lib/cart.ts` (lines 9-12)", as questions name where their code is.
fn place(file: &CodeFile<'_>, start: usize, end: usize) -> String {
    if start == end {
        format!("`{}` (line {})", file.path, start + 1)
    } else {
        format!("`{}` (lines {}-{})", file.path, start + 1, end + 1)
    }
}

/// Lines of `start..=end` ordered by distance from `line` (the nearer first, earlier on ties).
fn nearest_first(start: usize, end: usize, line: usize) -> Vec<usize> {
    let mut lines: Vec<usize> = (start..=end).collect();
    lines.sort_by_key(|&i| (i.abs_diff(line), i));
    lines
}

/// A known bug of the concept planted in one real line near the site.
pub fn spot_the_bug(ask: &Ask<'_>, file: &CodeFile<'_>, line: usize) -> Option<GeneratedQuestion> {
    let lang = file.lang?;
    let (start, end) = enclosing_function(file, line)
        .unwrap_or((line.saturating_sub(BUG_SEARCH_LINES), (line + BUG_SEARCH_LINES).min(file.lines.len() - 1)));
    let candidates = nearest_first(start, end, line);
    // The concept's own bugs before generic ones, and among each, bugs the session has not
    // shown yet first (stable: otherwise in the rules' order).
    // A bug the session planted already is not planted again: the same edit twice is one
    // question asked twice (issue 40, "no two questions with one mutation").
    let mut rules: Vec<&Rule> =
        rules_for(lang, ask.entry).filter(|r| !ask.used_bugs.iter().any(|used| used == r.id)).collect();
    rules.sort_by_key(|r| r.topics.is_empty());
    // What goes wrong follows from the edit and where it sits (issue 40 §4); an edit whose
    // effect cannot be told there is not planted.
    let (at, mutated, rule, consequence) = rules.into_iter().find_map(|rule| {
        candidates.iter().find_map(|&i| {
            let mutated = (rule.apply)(&file.masked[i], file.lines[i])?;
            // After the edit applies: the check runs a query over the file's tree.
            if !tests_the_concept(rule, ask, file, i) {
                return None;
            }
            let consequence = rule.consequence_at(&file.masked, i)?;
            (mutated != file.lines[i]).then_some((i, mutated, rule, consequence))
        })
    })?;
    let (first, last) = quote_window(file, at, ask.narrow);
    let mut shown: Vec<&str> = file.lines[first..=last].to_vec();
    shown[at - first] = &mutated;
    // An edit the compiler refuses has no runtime to ask about.
    let goes_wrong = if rule.breaks_build { "what goes wrong" } else { "what goes wrong at runtime" };
    let mut question = format!(
        "This is your code from {} with one line changed so that it has a bug. Which line is it, and {goes_wrong}?",
        place(file, first, last)
    );
    // The hint names the concept only where the bug is one of the concept's own: a generic
    // bug (a status code, a comparison) planted in its code may sit elsewhere.
    if ask.level == Level::Junior && !rule.topics.is_empty() {
        question.push_str(&format!(" Hint: look at how {} is used.", ask.entry.name));
    }
    let original = file.lines[at];
    let answer = format!("Line {}: `{}` should read `{}`. {}", at + 1, mutated.trim(), original.trim(), consequence);
    let mut q = base(ask, file.lang, question, format!("{consequence} {}", ask.entry.description));
    q.snippet = Some(shown.join("\n"));
    q.correct = Some(answer);
    q.tags.push(format!("{BUG_TAG_PREFIX}{}", rule.id));
    let mut grounding = quote_grounding(file, first, last, GroundingKind::Mutation);
    grounding.mutation = Some(LineEdit { line: one_based(at), original: original.to_string(), mutated });
    q.grounding = Some(grounding);
    Some(q)
}

/// Whether a bug of `rule` planted on line `i` tests the concept it is filed under (round 6 of
/// the hand grading: an HTTP status filed under Decorators, a dropped `defer cancel()` under
/// Channels): one of the concept's own bugs by its name, or any bug on a line that holds the
/// concept's syntax where the grammar can see it (`concept_syntax`). A bug that only shares the
/// concept's category, or no topic at all, is not planted elsewhere: the learner's answer would
/// be counted for a concept the bug does not touch.
fn tests_the_concept(rule: &Rule, ask: &Ask<'_>, file: &CodeFile<'_>, i: usize) -> bool {
    rule.named_by(ask.entry)
        || file.lang.zip(file.tree.as_ref()).is_some_and(|(lang, tree)| {
            let grammar = crate::analysis::syntax::Grammar::for_file(lang, file.path);
            crate::analysis::concept_syntax::shown_in(ask.entry.name, grammar, tree, file.src, (i, i)) == Some(true)
        })
}

/// Byte offset of `token` as code on masked line `i`; a directive such as `use client` lives
/// in a string, so a token with a space is also looked for in the original text.
fn token_at(file: &CodeFile<'_>, i: usize, token: &str) -> Option<usize> {
    find_token(&file.masked[i], token)
        .or_else(|| token.contains(' ').then(|| find_token(file.lines[i], token)).flatten())
}

/// One of the concept's tokens blanked in a real line near the site; the answer restores it.
pub fn fill_in_blank(ask: &Ask<'_>, file: &CodeFile<'_>, line: usize) -> Option<GeneratedQuestion> {
    let (first, last) = quote_window(file, line, ask.narrow);
    let lines = nearest_first(first, last, line);
    let shown_times =
        |token: &str, first: usize, last: usize| (first..=last).filter(|&i| token_at(file, i, token).is_some()).count();
    // A token seen once in the quote first (else the answer is visible elsewhere in it), and
    // tokens of two characters or more before one-letter ones.
    // Never a declaration keyword or a lone sigil (SPEC §6.4): with none other, no question.
    let mut tokens: Vec<&'static str> = ask.entry.tokens.iter().copied().filter(|t| !is_trivia_answer(t)).collect();
    tokens.sort_by_key(|t| (shown_times(t, first, last) != 1, t.len() < 2));
    let (at, pos, token) =
        tokens.iter().find_map(|t| lines.iter().find_map(|&i| token_at(file, i, t).map(|pos| (i, pos, *t))))?;
    // Where the answer shows elsewhere in the quote, a smaller whole unit around the blank
    // where it does not (down to the blank's own statement): never a cut through one.
    let (first, last) = if shown_times(token, first, last) > 1 {
        let units = super::units::units_around(file, at);
        units
            .iter()
            .rev()
            .find(|&&(s, e)| s >= first && e <= last && shown_times(token, s, e) == 1)
            .copied()
            .unwrap_or(units[0])
    } else {
        (first, last)
    };
    let original = file.lines[at];
    let blanked = format!("{}{BLANK}{}", original.get(..pos)?, original.get(pos + token.len()..)?);
    let mut shown: Vec<&str> = file.lines[first..=last].to_vec();
    shown[at - first] = &blanked;
    let snippet = shown.join("\n");
    if count_blanks(&snippet) != 1 {
        return None;
    }
    let (name, where_) = (ask.entry.name, place(file, first, last));
    let question = match ask.level {
        Level::Junior => format!(
            "Fill in the blank on line {} of this code from {where_}: which keyword, symbol or name related to {name} is missing?",
            at + 1
        ),
        Level::Mid => {
            format!("Fill in the blank on line {} so this code from {where_} does what it did before.", at + 1)
        }
        Level::Senior => format!(
            "Fill in the blank on line {} of this code from {where_}, and think about what it does for {name} here.",
            at + 1
        ),
    };
    let explanation = format!("Line {} reads `{}`. {}", at + 1, original.trim(), ask.entry.description);
    let mut q = base(ask, file.lang, question, explanation);
    q.snippet = Some(snippet);
    q.correct = Some(token.to_string());
    q.grounding = Some(quote_grounding(file, first, last, GroundingKind::Blank));
    Some(q)
}

/// The statements of the function around the site, to be put back in the order they run.
/// The options are the quoted lines (trimmed); the grounding cites the first to the last.
pub fn ordering(ask: &Ask<'_>, file: &CodeFile<'_>, line: usize) -> Option<GeneratedQuestion> {
    let (header, end) = enclosing_function(file, line)?;
    let all = statements(file, header, end);
    if all.len() < MIN_STEPS {
        return None;
    }
    // Up to MAX_STEPS consecutive statements, the one nearest the site among them.
    let nearest = (0..all.len()).min_by_key(|&k| all[k].abs_diff(line)).unwrap_or(0);
    let from = nearest.saturating_sub(MAX_STEPS / 2).min(all.len().saturating_sub(MAX_STEPS));
    let chosen = &all[from..(from + MAX_STEPS).min(all.len())];
    // The statement that carries the concept is one of the steps (its block included: a
    // `with` or `if` step holds the lines under it), else this site makes no ordering question.
    let carries = |&step: &usize| {
        let (_, end) = super::units::unit_of(file, step);
        step <= line && line <= end
    };
    if !chosen.iter().any(carries) {
        return None;
    }
    let steps: Vec<&str> = chosen.iter().map(|&i| file.lines[i].trim()).collect();
    let keys: std::collections::BTreeSet<String> = steps.iter().map(|s| s.to_lowercase()).collect();
    if keys.len() != steps.len() {
        return None;
    }
    let (options, correct) = shuffled_steps(&steps, seed(ask, file, header));
    let function = function_name(file, header)
        .map_or_else(|| format!("the function at line {}", header + 1), |n| format!("`{n}`"));
    let context = if ask.about_error {
        format!("an error you met ({}) pointed into it", ask.entry.name)
    } else {
        format!("the code uses {}", ask.entry.name)
    };
    let question = format!(
        "Put these statements of {function} from `{}` in the order they run on a normal call, one that does not fail ({context}; answer with the option numbers in order, e.g. 2,1,3,4).",
        file.path
    );
    let explanation =
        format!("In `{}` they run in this order: {}. {}", file.path, steps.join(" → "), ask.entry.description);
    let mut q = base(ask, file.lang, question, explanation);
    q.options = Some(options);
    q.correct = Some(correct);
    let (first, last) = (chosen[0], chosen[chosen.len() - 1]);
    q.grounding = Some(quote_grounding(file, first, last, GroundingKind::Quote));
    Some(q)
}

/// multiple_choice, true_false, code_reading or open_ended over a verbatim quote of the lines
/// around the site. The premise holds in the quote (SPEC §6.4): "look at `X`" only when the
/// right answer is about `X`, and a right answer naming an API (`functools.wraps`) only when
/// the quote shows it — of the entry's facts, the level's first, else another that fits.
pub fn quoted(ask: &Ask<'_>, file: &CodeFile<'_>, line: usize) -> Option<GeneratedQuestion> {
    let (first, last) = quote_window(file, line, ask.narrow);
    let shown = file.text(first, last);
    let where_ = place(file, first, last);
    let token = token_in(ask.entry, file, first, last);
    let pointer = token.map(|t| format!(" (look at `{t}`)")).unwrap_or_default();
    let look_at =
        |right: &str| token.filter(|t| right.contains(*t)).map(|t| format!(" Look at `{t}`.")).unwrap_or_default();
    let seed = seed(ask, file, line);
    let (entry, name) = (ask.entry, ask.entry.name);
    let level = fitting_level(ask, &shown);
    // No fact of the entry holds in these lines (a JavaScript fact over Go code): no
    // multiple-choice or true/false question here.
    let stated = matches!(ask.qtype, QuestionType::MultipleChoice | QuestionType::TrueFalse);
    if stated && level.is_none() {
        return None;
    }
    let level = level.unwrap_or(ask.level);
    let intro = if ask.about_error {
        format!("An error you met in this session pointed at this code from {where_} ({name}).")
    } else {
        format!("This code from {where_} uses {name}.")
    };
    let mut q = match ask.qtype {
        QuestionType::MultipleChoice => {
            let (options, letter, explanation) = fact_among_myths(entry, level, seed);
            let look_at = look_at(entry.facts[level.index()]);
            let question = match ask.level {
                Level::Junior => format!("{intro}{look_at} Which statement about it is true?"),
                Level::Mid => format!("Looking at your code in {where_}, which statement about {name} holds?{look_at}"),
                Level::Senior => format!(
                    "Reviewing your code in {where_}, which statement about {name} would an experienced reviewer agree with?{look_at}"
                ),
            };
            let mut q = base(ask, file.lang, question, explanation);
            q.options = Some(options);
            q.correct = Some(letter);
            q
        }
        QuestionType::TrueFalse => {
            let (statement, truth, explanation) = fact_or_myth(entry, level, seed);
            let look_at = if truth { look_at(statement) } else { String::new() };
            let question = format!("{intro}{look_at} True or false: {statement}");
            let mut q = base(ask, file.lang, question, explanation);
            q.correct = Some(truth.to_string());
            q
        }
        QuestionType::OpenEnded => {
            let question = format!("Looking at your code in {where_}: {}", entry.open[0]);
            let mut q = base(ask, file.lang, question, open_explanation(entry));
            q.correct = Some(entry.open[1].to_string());
            q.tags.extend(RUBRIC_DIMENSIONS.iter().map(|d| rubric_tag(d)));
            q
        }
        // A reading whose key is the lines' own (a test's checks), where there is one.
        _ if !ask.about_error
            && let Some(reading) = super::readings::reading(entry.category, file, (first, last), &where_) =>
        {
            let mut q = base(ask, file.lang, reading.question, entry.description.to_string());
            q.question_type = QuestionType::CodeReading.as_str().to_string();
            q.correct = Some(reading.answer);
            q
        }
        _ => {
            let question = if ask.about_error {
                format!(
                    "{intro} What does the code do there, what was the error most likely about, and how would you fix it?"
                )
            } else {
                reading_question(entry, ask.level, &where_)
            };
            let mut q = base(ask, file.lang, question, entry.description.to_string());
            q.question_type = QuestionType::CodeReading.as_str().to_string();
            // At least one point of the rubric is taken from the lines shown (issue 40 §4).
            let shown_point = line_point(file, (first, last), line, token);
            q.correct = Some(format!("{} {shown_point}", reading_answer(entry, ask.level, &pointer)));
            q
        }
    };
    q.snippet = Some(shown);
    q.grounding = Some(quote_grounding(file, first, last, GroundingKind::Quote));
    Some(q)
}

/// A rubric point taken from the lines shown: the line among `first..=last` that shows
/// `token` (else the site's own line), quoted with its number.
fn line_point(file: &CodeFile<'_>, (first, last): (usize, usize), site: usize, token: Option<&str>) -> String {
    let with_token = token.and_then(|t| (first..=last).find(|&i| find_token(&file.masked[i], t).is_some()));
    let at = with_token.unwrap_or(site.clamp(first, last));
    let what = token.filter(|_| with_token.is_some()).map(|t| format!(" `{t}`")).unwrap_or_default();
    let uses =
        if what.is_empty() { "where this code does it".to_owned() } else { format!("where this code uses{what}") };
    format!("It also points at line {} (`{}`), {uses}.", at + 1, file.lines[at].trim())
}

/// The level whose fact the question states: the asked level's, unless that fact names an
/// API the quoted code does not show (`functools.wraps` over code with only `@classmethod`),
/// then the nearest level whose fact names none it lacks; `None` when no fact fits.
fn fitting_level(ask: &Ask<'_>, shown: &str) -> Option<Level> {
    let fits = |level: Level| {
        crate::analysis::precision::dotted_names(ask.entry.facts[level.index()]).iter().all(|api| shown.contains(api))
    };
    let mut order = Level::ALL.to_vec();
    order.sort_by_key(|l| l.index().abs_diff(ask.level.index()));
    order.into_iter().find(|&l| fits(l))
}
