//! Turning a catalogue entry into a question: `render` fills the entry's templates for one
//! question type at one level, using the developer's own snippet wherever the type allows
//! (fill_in_blank blanks a real token of it, spot_the_bug edits it, code_reading asks about
//! it) and the entry's canonical example where the developer's code does not fit.
//!
//! Everything is deterministic: option positions and step shuffles come from an FNV hash of
//! the entry, type and level, never from a random source, so the same session always yields
//! the same quiz. Open-ended questions are senior-only (SPEC §6.4); asked for one at junior or
//! mid level, `render` writes a code_reading question instead, the closest free-text type.

use super::Entry;
use super::tokens::{blank_in, find_token};
use crate::analysis::concepts::{Level, normalize_name};
use crate::analysis::model::FailedCall;
use crate::analysis::questions::{GeneratedQuestion, QuestionType, RUBRIC_DIMENSIONS, fnv1a64, rubric_tag};

/// Where a question's code comes from.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// The concept name written into `GeneratedQuestion::concept` (the name the concept was
    /// stored under, which may differ in case or spelling from the entry's).
    pub concept: &'a str,
    /// The captured file the snippet comes from.
    pub file: &'a str,
    /// The developer's snippet; blank means "use the entry's example".
    pub snippet: &'a str,
}

/// A question of type `qtype` at `level` about `entry`, over the evidence's code.
pub fn render(entry: &Entry, qtype: QuestionType, level: Level, ev: &Evidence<'_>) -> GeneratedQuestion {
    let from_developer = !ev.snippet.trim().is_empty();
    let code = if from_developer { ev.snippet } else { entry.example };
    let place = if from_developer && !ev.file.is_empty() { ev.file } else { "an example" };
    // A concept grounded in an error the developer met quotes the error, not code.
    let noun = if from_developer && FailedCall::is_label(ev.file) { "error output" } else { "code" };
    let seed = seed(entry, qtype, level);
    let ctx = Ctx { entry, level, code, from_developer, place, noun, seed };
    let mut q = match qtype {
        QuestionType::MultipleChoice => multiple_choice(&ctx),
        QuestionType::TrueFalse => true_false(&ctx),
        QuestionType::FillInBlank => fill_in_blank(&ctx),
        QuestionType::Ordering => ordering(&ctx),
        QuestionType::CodeReading => code_reading(&ctx),
        QuestionType::SpotTheBug => spot_the_bug(&ctx),
        QuestionType::OpenEnded if level == Level::Senior => open_ended(&ctx),
        QuestionType::OpenEnded => code_reading(&ctx),
    };
    q.concept = ev.concept.to_string();
    q.difficulty = level.as_str().to_string();
    if level == Level::Junior {
        q.follow_up = Some(entry.follow_up.to_string());
    }
    let mut tags =
        vec![entry.category.to_string(), normalize_name(entry.name).replace(' ', "-"), q.question_type.clone()];
    tags.append(&mut q.tags);
    q.tags = tags;
    q
}

/// What every template needs.
struct Ctx<'a> {
    entry: &'a Entry,
    level: Level,
    code: &'a str,
    /// Whether `code` is the developer's snippet rather than the entry's example.
    from_developer: bool,
    place: &'a str,
    /// What `code` is: "code", or "error output" when it is an error the developer met.
    noun: &'static str,
    seed: u64,
}

fn seed(entry: &Entry, qtype: QuestionType, level: Level) -> u64 {
    fnv1a64(format!("{}|{}|{}", entry.name, qtype.as_str(), level.as_str()).as_bytes())
}

/// A question with the common fields set; `render` fills concept, difficulty and follow-up.
fn blank_question(qtype: QuestionType, question: String, explanation: String) -> GeneratedQuestion {
    GeneratedQuestion {
        concept: String::new(),
        question_type: qtype.as_str().to_string(),
        difficulty: String::new(),
        snippet: None,
        question,
        options: None,
        correct: None,
        explanation,
        follow_up: None,
        tags: Vec::new(),
        grounding: None,
    }
}

fn multiple_choice(c: &Ctx<'_>) -> GeneratedQuestion {
    let name = c.entry.name;
    let question = match c.level {
        Level::Junior => format!("Which statement about {name} is true?"),
        Level::Mid => format!("Looking at this {} from {}, which statement about {name} holds?", c.noun, c.place),
        Level::Senior => {
            format!("Which statement about {name} would an experienced reviewer agree with?")
        }
    };
    let (options, letter, explanation) = fact_among_myths(c.entry, c.level, c.seed);
    let mut q = blank_question(QuestionType::MultipleChoice, question, explanation);
    if c.level == Level::Mid {
        q.snippet = Some(c.code.to_string());
    }
    q.options = Some(options);
    q.correct = Some(letter);
    q
}

/// The entry's fact for `level` hidden among its three myths at a position chosen by `seed`:
/// the options, the right letter and the explanation of a multiple-choice question.
pub(crate) fn fact_among_myths(entry: &Entry, level: Level, seed: u64) -> (Vec<String>, String, String) {
    let fact = entry.facts[level.index()];
    let mut options: Vec<String> = entry.myths.iter().map(|m| m.to_string()).collect();
    let position = (seed % 4) as usize;
    options.insert(position, fact.to_string());
    let explanation = format!("{fact} The other options are common misconceptions about {}.", entry.name);
    (options, ["A", "B", "C", "D"][position].to_string(), explanation)
}

/// The entry's fact or myth for `level` (chosen by `seed`), whether it is true, and the
/// explanation of a true/false question about it.
pub(crate) fn fact_or_myth(entry: &Entry, level: Level, seed: u64) -> (&'static str, bool, String) {
    let truth = (seed >> 8).is_multiple_of(2);
    let statement = if truth { entry.facts[level.index()] } else { entry.myths[level.index()] };
    let explanation = if truth {
        format!("True. {}", entry.description)
    } else {
        let fact = closest_fact(entry, statement);
        format!("False: this is a common misconception. What holds instead: {fact}")
    };
    (statement, truth, explanation)
}

fn true_false(c: &Ctx<'_>) -> GeneratedQuestion {
    let (statement, truth, explanation) = fact_or_myth(c.entry, c.level, c.seed);
    let question = format!("True or false: {statement}");
    let mut q = blank_question(QuestionType::TrueFalse, question, explanation);
    q.correct = Some(truth.to_string());
    q
}

/// The fact sharing the most words (of four letters or more) with `myth`: myths are written
/// as twisted facts, so this is usually the correction. Ties go to the earlier fact.
fn closest_fact(entry: &Entry, myth: &str) -> &'static str {
    let words = |s: &str| -> Vec<String> {
        normalize_name(s).split(' ').filter(|w| w.len() >= 4).map(str::to_string).collect()
    };
    let myth_words = words(myth);
    let shared = |fact: &str| words(fact).iter().filter(|w| myth_words.contains(w)).count();
    let mut best = entry.facts[0];
    for fact in entry.facts {
        if shared(fact) > shared(best) {
            best = fact;
        }
    }
    best
}

fn fill_in_blank(c: &Ctx<'_>) -> GeneratedQuestion {
    let name = c.entry.name;
    let (place, noun, blanked, token) = match blank_in(c.code, c.entry.tokens) {
        Some((blanked, token)) => (c.place, c.noun, blanked, token),
        // The developer's snippet has none of the tokens: blank the example instead.
        None => match blank_in(c.entry.example, c.entry.tokens) {
            Some((blanked, token)) => ("an example", "code", blanked, token),
            // Unreachable for catalogue entries (their tests check the example has a token),
            // but a code_reading question is still better than a panic.
            None => return code_reading(c),
        },
    };
    let question = match c.level {
        Level::Junior => format!(
            "Fill in the blank in this {noun} from {place}: which keyword, symbol or name related to {name} is missing?"
        ),
        Level::Mid if noun == "code" => {
            format!("Fill in the blank so this code from {place} does what it did before.")
        }
        Level::Mid => format!("Fill in the blank so this {noun} from {place} reads as it did."),
        Level::Senior => {
            format!("Fill in the blank in this {noun} from {place}, and think about what it tells you.")
        }
    };
    let explanation = format!("`{token}` belongs in the blank. {}", c.entry.description);
    let mut q = blank_question(QuestionType::FillInBlank, question, explanation);
    q.snippet = Some(blanked);
    q.correct = Some(token.to_string());
    q
}

fn ordering(c: &Ctx<'_>) -> GeneratedQuestion {
    let steps = c.entry.steps;
    // No example true in the session's language (`Entry::in_lang`): nothing to order.
    if c.entry.example.is_empty() || steps.is_empty() {
        return code_reading(c);
    }
    let (options, correct) = shuffled_steps(steps, c.seed);
    let question = format!(
        "{} (The code is an example of {}; answer with the option numbers in order, e.g. 2,1,3,4.)",
        c.entry.order_prompt, c.entry.name
    );
    let explanation = format!("The order is: {}.", steps.join(" → "));
    let mut q = blank_question(QuestionType::Ordering, question, explanation);
    q.snippet = Some(c.entry.example.to_string());
    q.options = Some(options);
    q.correct = Some(correct);
    q
}

/// The steps as ordering options in a shuffled order, and the answer: for each step in its
/// true order, the number of the option showing it ("3,1,4,2").
pub(crate) fn shuffled_steps<S: AsRef<str>>(steps: &[S], seed: u64) -> (Vec<String>, String) {
    let perm = shuffled(steps.len(), seed);
    let options: Vec<String> = perm.iter().map(|&s| steps[s].as_ref().to_string()).collect();
    let correct: Vec<String> = (0..steps.len())
        .filter_map(|step| perm.iter().position(|&s| s == step))
        .map(|option| (option + 1).to_string())
        .collect();
    (options, correct.join(","))
}

/// A deterministic permutation of 0..n from `seed` (Fisher–Yates driven by xorshift64),
/// never the identity for n > 1, since an ordering shown already in order gives itself away.
fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..n).collect();
    let mut state = seed | 1;
    for i in (1..n).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        perm.swap(i, (state % (i as u64 + 1)) as usize);
    }
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        perm.rotate_left(1);
    }
    perm
}

fn code_reading(c: &Ctx<'_>) -> GeneratedQuestion {
    let (question, answer) = if c.code == c.entry.example {
        // The catalogue's own question was written for its example.
        (c.entry.reading[0].to_string(), c.entry.reading[1].to_string())
    } else {
        let question = match c.level {
            Level::Junior if c.noun != "code" => {
                format!(
                    "Read this {} you met ({}). What does it tell you went wrong, and where would you look first?",
                    c.noun, c.place
                )
            }
            Level::Mid | Level::Senior if c.noun != "code" => format!(
                "Read this {} you met ({}). What is its cause likely to be, how would you confirm it, and how would you fix it?",
                c.noun, c.place
            ),
            _ => reading_question(c.entry, c.level, c.place),
        };
        let pointer = c
            .entry
            .tokens
            .iter()
            .find(|t| find_token(c.code, t).is_some())
            .map(|t| format!(" (look at `{t}`)"))
            .unwrap_or_default();
        (question, reading_answer(c.entry, c.level, &pointer))
    };
    let mut q = blank_question(QuestionType::CodeReading, question, c.entry.description.to_string());
    q.snippet = Some(c.code.to_string());
    q.correct = Some(answer);
    q
}

/// A code_reading question about the developer's code at `place`, for `level`.
pub(crate) fn reading_question(entry: &Entry, level: Level, place: &str) -> String {
    let name = entry.name;
    match level {
        Level::Junior => format!("Read this code from {place}. What does it do, and where does it use {name}?"),
        Level::Mid => format!(
            "Read this code from {place}. How does it use {name}, and what would go wrong if that part were removed or done naively?"
        ),
        Level::Senior => format!(
            "Read this code from {place}. How does it use {name}, and which failure modes or trade-offs does that bring in production?"
        ),
    }
}

/// The model answer of a code_reading question; `pointer` is " (look at `token`)" or empty.
pub(crate) fn reading_answer(entry: &Entry, level: Level, pointer: &str) -> String {
    let facts = entry.facts;
    let answer =
        format!("It relies on {}{pointer}. A good answer makes these points: {} {}", entry.name, facts[0], facts[1]);
    if level == Level::Senior { format!("{answer} {}", facts[2]) } else { answer }
}

fn spot_the_bug(c: &Ctx<'_>) -> GeneratedQuestion {
    let applied = c.entry.bugs.iter().find(|b| c.code.contains(b.from)).map(|b| (c.code, b));
    let (base, bug) = match applied.or_else(|| c.entry.bugs.first().map(|b| (c.entry.example, b))) {
        Some(found) => found,
        // Unreachable for catalogue entries (each has a bug that applies to its example),
        // but a code_reading question is still better than a panic.
        None => return code_reading(c),
    };
    let buggy = base.replacen(bug.from, bug.to, 1);
    let mut question = if c.from_developer && base == c.code {
        format!(
            "This is your code from {} with one small change that introduces a bug. What is the bug, and what happens at runtime?",
            c.place
        )
    } else {
        format!("This example of {} contains a bug. What is it, and what happens at runtime?", c.entry.name)
    };
    if c.level == Level::Junior {
        question.push_str(&format!(" Hint: look at how {} is used.", c.entry.name));
    }
    let change = if bug.to.is_empty() {
        format!("`{}` was removed.", bug.from.trim())
    } else {
        format!("`{}` became `{}`.", bug.from.trim(), bug.to.trim())
    };
    let mut q = blank_question(QuestionType::SpotTheBug, question, format!("{change} {}", c.entry.description));
    q.snippet = Some(buggy);
    q.correct = Some(bug.answer.to_string());
    q
}

fn open_ended(c: &Ctx<'_>) -> GeneratedQuestion {
    let mut q = blank_question(QuestionType::OpenEnded, c.entry.open[0].to_string(), open_explanation(c.entry));
    q.snippet = Some(c.code.to_string());
    q.correct = Some(c.entry.open[1].to_string());
    q.tags = RUBRIC_DIMENSIONS.iter().map(|d| rubric_tag(d)).collect();
    q
}

/// The explanation of an open-ended question: the rubric and one point a strong answer makes.
pub(crate) fn open_explanation(entry: &Entry) -> String {
    format!(
        "Graded on correctness, depth (why, not only what), trade-offs, real-world application and clarity. One point a strong answer includes: {}",
        entry.facts[2]
    )
}

#[cfg(test)]
mod tests {
    use super::super::all;
    use super::*;
    use crate::analysis::questions::validate_question;

    #[test]
    fn every_entry_type_and_level_renders_a_valid_question() {
        for entry in all() {
            let names = vec![entry.name.to_string()];
            for evidence in [
                Evidence { concept: entry.name, file: "src/x.ts", snippet: "" },
                Evidence { concept: entry.name, file: "src/x.ts", snippet: entry.example },
                Evidence { concept: entry.name, file: "src/x.ts", snippet: "let x = compute(1);" },
            ] {
                for qtype in QuestionType::ALL {
                    for level in Level::ALL {
                        let q = render(entry, qtype, level, &evidence);
                        let label = format!("{} {qtype:?} {level:?}", entry.name);
                        assert_eq!(validate_question(&q, &names), Ok(()), "{label}: {q:#?}");
                        // A blank needs a token that is no trivia answer: where neither the
                        // developer's code nor the example has one, the question reads the code.
                        let none_in = |code: &str| blank_in(code, entry.tokens).is_none();
                        let no_blank =
                            qtype == QuestionType::FillInBlank && none_in(evidence.snippet) && none_in(entry.example);
                        let want = if no_blank || (qtype == QuestionType::OpenEnded && level != Level::Senior) {
                            QuestionType::CodeReading
                        } else {
                            qtype
                        };
                        assert_eq!(q.question_type, want.as_str(), "{label}");
                    }
                }
            }
        }
    }

    #[test]
    fn fill_in_blank_uses_the_developers_token() {
        let entry = super::super::find("Async/await").expect("catalogue entry");
        let code = "const user = await api.get(id);";
        let ev = Evidence { concept: "Async/await", file: "src/a.ts", snippet: code };
        let q = render(entry, QuestionType::FillInBlank, Level::Mid, &ev);
        assert_eq!(q.snippet.as_deref(), Some("const user = ___ api.get(id);"));
        assert_eq!(q.correct.as_deref(), Some("await"));
    }

    #[test]
    fn spot_the_bug_edits_the_developers_code_when_it_can() {
        let entry = super::super::find("Explicit error returns in Go").expect("catalogue entry");
        let code = "u, err := load()\nif err != nil {\n    return err\n}";
        let ev = Evidence { concept: entry.name, file: "main.go", snippet: code };
        let q = render(entry, QuestionType::SpotTheBug, Level::Junior, &ev);
        assert!(q.snippet.as_deref().is_some_and(|s| s.contains("err == nil")));
        assert!(q.question.contains("main.go"));
    }

    #[test]
    fn an_error_the_developer_met_is_quoted_as_error_output() {
        let entry = super::super::find("Reading compiler type errors").expect("catalogue entry");
        let error = "src/cart.ts(12,9): error TS2322: Type 'string' is not assignable to type 'number'.";
        let ev = Evidence { concept: entry.name, file: "failed Bash: npx tsc --noEmit", snippet: error };
        let q = render(entry, QuestionType::CodeReading, Level::Mid, &ev);
        assert!(q.question.contains("error output you met (failed Bash: npx tsc --noEmit)"), "{}", q.question);
        assert_eq!(q.snippet.as_deref(), Some(error));
        let blank = render(entry, QuestionType::FillInBlank, Level::Junior, &ev);
        assert!(blank.question.contains("this error output from failed Bash"), "{}", blank.question);
        let bug = render(entry, QuestionType::SpotTheBug, Level::Junior, &ev);
        assert!(bug.snippet.as_deref().is_some_and(|s| s.contains("const label: string = cartTotal")), "{bug:?}");
    }

    #[test]
    fn shuffles_are_permutations_and_never_identity() {
        for n in 4..=6 {
            for seed in 0..200u64 {
                let p = shuffled(n, seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
                let mut sorted = p.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..n).collect::<Vec<_>>());
                assert_ne!(p, sorted);
            }
        }
    }
}
