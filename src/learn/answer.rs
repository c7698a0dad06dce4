//! Forgiving answer checking (SPEC §7): turns what the developer typed into a verdict for
//! the objective question types, or says the free-text types need a self-grade. An answer
//! that cannot be read is an error carrying a hint, so the quiz can ask again instead of
//! counting a typo as a wrong answer.
//!
//! # Accepted forms
//! - `multiple_choice`: a letter (`b`, `B`, `b)`, `(c)`, `d.`), the option's number (`2`),
//!   an option's text, or an option's text with the letter prefix it is stored with (`A) `,
//!   `A. `, `(A) `), or a part of one option's text of at least three words that no other
//!   option contains. Text is compared after [`normalize`]. A lone letter is read as a letter first, even if some
//!   option's text happens to be that letter; a letter prefix whose text matches no option
//!   (`b) hashmap` for `B) HashMap<K, V>`) is read as the letter.
//! - `true_false`: t/f, true/false, yes/no, y/n, any case.
//! - `ordering`: the step numbers separated by commas, spaces, `;` or arrows (`2,4,1,3`,
//!   `2 4 1 3`, `2, 4, 1, 3`, `2 -> 4 -> 1 -> 3`); with at most 9 steps also run together
//!   (`2413`). It must be a permutation of 1..=n, n the number of steps.
//! - `fill_in_blank`: equal after [`normalize`], and after removing from both sides a leading
//!   `@`, `#`, `$`, `&` or `*` that the blank's line already shows just before the blank
//!   (`@___` with the key `@dataclass` takes `dataclass`, and `@dataclass` too).
//! - `code_reading`, `spot_the_bug`, `open_ended`: always [`Verdict::NeedsSelfGrade`].
//!
//! # Saying "I don't know"
//! On every type, an explicit don't-know ([`is_dont_know`]: "no idea", "idk", "?", "skip",
//! "I don't know", …) is [`Verdict::DontKnow`]: a miss, rated Again, with the answer shown,
//! rather than an unreadable answer asked again or a free-text answer to grade. The words only
//! count when they are not the right answer themselves: Rust's `?` operator may be a blank's
//! answer, and `skip` an iterator method's. (An empty line is not one of them here: the
//! terminal decides what an empty line means.)

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Correct,
    Wrong,
    /// A free-text type: show the model answer and ask for a self-grade 0–5.
    NeedsSelfGrade,
    /// The developer said they do not know (module doc): a miss, rated Again.
    DontKnow,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerError {
    /// The developer's answer could not be read; the message says what to type. Ask again.
    Unreadable(String),
    /// The stored question is malformed (unknown type, no options, a `correct` field that does
    /// not fit its type). Not the developer's fault: skip the question and log it.
    BadQuestion(String),
}

impl fmt::Display for AnswerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnswerError::Unreadable(hint) => write!(f, "could not read the answer: {hint}"),
            AnswerError::BadQuestion(why) => write!(f, "malformed question: {why}"),
        }
    }
}

impl std::error::Error for AnswerError {}

/// Judges `given` against the stored `correct` answer of a question of `question_type`.
pub fn check_answer(
    question_type: &str,
    options: Option<&[String]>,
    correct: &str,
    given: &str,
) -> Result<Verdict, AnswerError> {
    check_answer_in(question_type, options, correct, given, None)
}

/// [`check_answer`] with the question's snippet, whose blank line tells which sigil the
/// developer already sees. A don't-know (module doc) that is not the right answer itself is
/// [`Verdict::DontKnow`]; a malformed question is reported as such whatever the answer.
pub fn check_answer_in(
    question_type: &str,
    options: Option<&[String]>,
    correct: &str,
    given: &str,
    snippet: Option<&str>,
) -> Result<Verdict, AnswerError> {
    match judge_answer(question_type, options, correct, given, snippet) {
        Ok(Verdict::Correct) => Ok(Verdict::Correct),
        Err(AnswerError::BadQuestion(why)) => Err(AnswerError::BadQuestion(why)),
        _ if is_dont_know(given) => Ok(Verdict::DontKnow),
        other => other,
    }
}

/// What a learner types to say they do not know, after [`normalize`] (which drops the
/// apostrophe of "don't") and without a trailing `.` or `!`.
const DONT_KNOW: [&str; 15] = [
    "?",
    "??",
    "???",
    "idk",
    "no idea",
    "skip",
    "pass",
    "dunno",
    "no clue",
    "not sure",
    "dont know",
    "i dont know",
    "i do not know",
    "i have no idea",
    "no idea at all",
];

/// Whether `given` says "I don't know" (module doc). An empty answer does not.
pub fn is_dont_know(given: &str) -> bool {
    let text = normalize(given);
    let text = text.trim_end_matches(['.', '!']).trim_end();
    !text.is_empty() && DONT_KNOW.contains(&text)
}

/// The verdict by the answer alone (module doc's accepted forms).
fn judge_answer(
    question_type: &str,
    options: Option<&[String]>,
    correct: &str,
    given: &str,
    snippet: Option<&str>,
) -> Result<Verdict, AnswerError> {
    let verdict = |right: bool| {
        if right { Verdict::Correct } else { Verdict::Wrong }
    };
    match question_type.trim().to_ascii_lowercase().as_str() {
        "multiple_choice" => check_choice(options, correct, given).map(verdict),
        "true_false" => check_true_false(correct, given).map(verdict),
        "ordering" => check_ordering(options, correct, given).map(verdict),
        "fill_in_blank" => check_fill_in(correct, given, shown_sigil(snippet)).map(verdict),
        "code_reading" | "spot_the_bug" | "open_ended" => Ok(Verdict::NeedsSelfGrade),
        other => Err(AnswerError::BadQuestion(format!("unknown question type {other:?}"))),
    }
}

/// Lowercase, quotes and backticks removed (straight and typographic), whitespace runs
/// collapsed to one space, trimmed. Applied to both sides, so `don't` still equals `dont`.
pub fn normalize(s: &str) -> String {
    let lower = s.to_lowercase();
    let unquoted = lower.replace(['"', '\'', '`', '\u{201c}', '\u{201d}', '\u{2018}', '\u{2019}'], "");
    unquoted.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn unreadable(hint: impl Into<String>) -> AnswerError {
    AnswerError::Unreadable(hint.into())
}

fn bad(why: impl Into<String>) -> AnswerError {
    AnswerError::BadQuestion(why.into())
}

fn check_choice(options: Option<&[String]>, correct: &str, given: &str) -> Result<bool, AnswerError> {
    let options = options.filter(|o| !o.is_empty()).ok_or_else(|| bad("multiple-choice question without options"))?;
    if options.len() > 26 {
        return Err(bad(format!("{} options; letters only go up to Z", options.len())));
    }
    let right =
        option_index(options, correct).ok_or_else(|| bad(format!("correct answer {correct:?} names no option")))?;
    let last = char::from(b'A' + (options.len() - 1) as u8);
    let chosen = option_index(options, given)
        .or_else(|| option_number(options, given))
        .or_else(|| unique_part(options, given))
        .ok_or_else(|| {
            unreadable(format!(
                "answer with a letter A–{last}, a number 1–{}, or the text of one of the options",
                options.len()
            ))
        })?;
    Ok(chosen == right)
}

/// Which option `answer` names, by the rules in the module doc.
fn option_index(options: &[String], answer: &str) -> Option<usize> {
    let answer = answer.trim();
    if let Some(i) = bare_letter(answer).filter(|&i| i < options.len()) {
        return Some(i);
    }
    let given = normalize(answer);
    if given.is_empty() {
        return None;
    }
    let stripped = |s: &str| letter_prefix(s).map_or_else(|| normalize(s), |(_, rest)| normalize(rest));
    let find = |want: &str| {
        options.iter().position(|o| normalize(o) == want).or_else(|| options.iter().position(|o| stripped(o) == want))
    };
    find(&given).or_else(|| {
        let (letter, rest) = letter_prefix(answer)?;
        find(&normalize(rest)).or((letter < options.len()).then_some(letter))
    })
}

/// `2` → the second option, when there is one.
fn option_number(options: &[String], answer: &str) -> Option<usize> {
    let n: usize = answer.trim().trim_end_matches(['.', ')']).parse().ok()?;
    (1..=options.len()).contains(&n).then(|| n - 1)
}

/// Words an answer must have to be read as a part of an option's text.
pub const MIN_PART_WORDS: usize = 3;

/// A part of exactly one option's text, at least [`MIN_PART_WORDS`] words long.
fn unique_part(options: &[String], answer: &str) -> Option<usize> {
    let given = normalize(answer);
    if given.split(' ').count() < MIN_PART_WORDS {
        return None;
    }
    let mut found = options.iter().enumerate().filter(|(_, o)| normalize(o).contains(&given)).map(|(i, _)| i);
    match (found.next(), found.next()) {
        (Some(i), None) => Some(i),
        _ => None,
    }
}

/// The sigil right before the blank (`___`) in the snippet, if it is one the rules forgive.
fn shown_sigil(snippet: Option<&str>) -> Option<char> {
    let line = snippet?.lines().find(|l| l.contains("___"))?;
    let before = &line[..line.find("___")?];
    before.chars().last().filter(|c| SIGILS.contains(c))
}

/// Leading characters a blank's line may already show (decorators, preprocessor, variables,
/// references, pointers).
const SIGILS: [char; 5] = ['@', '#', '$', '&', '*'];

/// `b`, `B`, `b)`, `(c)`, `d.`, `e:` → the letter's index (a = 0).
fn bare_letter(s: &str) -> Option<usize> {
    let s = s.strip_prefix('(').unwrap_or(s);
    let s = s.strip_suffix([')', '.', ':']).unwrap_or(s);
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii_alphabetic() => Some(usize::from(c.to_ascii_lowercase() as u8 - b'a')),
        _ => None,
    }
}

/// `A) text`, `a. text`, `(B) text`, `C: text` → (index, text). Whitespace after the mark is
/// required, so `e.g. this` is not read as option E.
fn letter_prefix(s: &str) -> Option<(usize, &str)> {
    let s = s.trim_start();
    let s = s.strip_prefix('(').unwrap_or(s);
    let mut chars = s.char_indices();
    let (_, letter) = chars.next().filter(|(_, c)| c.is_ascii_alphabetic())?;
    chars.next().filter(|(_, c)| matches!(c, ')' | '.' | ':'))?;
    let (at, _) = chars.next().filter(|(_, c)| c.is_whitespace())?;
    let rest = s[at..].trim();
    (!rest.is_empty()).then(|| (usize::from(letter.to_ascii_lowercase() as u8 - b'a'), rest))
}

fn parse_bool(s: &str) -> Option<bool> {
    match normalize(s).trim_end_matches(['.', '!']) {
        "t" | "true" | "y" | "yes" => Some(true),
        "f" | "false" | "n" | "no" => Some(false),
        _ => None,
    }
}

fn check_true_false(correct: &str, given: &str) -> Result<bool, AnswerError> {
    let right = parse_bool(correct).ok_or_else(|| bad(format!("true/false answer {correct:?}")))?;
    let got = parse_bool(given).ok_or_else(|| unreadable("answer true or false (t/f, yes/no and y/n work too)"))?;
    Ok(got == right)
}

fn check_ordering(options: Option<&[String]>, correct: &str, given: &str) -> Result<bool, AnswerError> {
    let steps = options.map_or(0, <[String]>::len);
    let n = if steps > 0 { Some(steps) } else { None };
    let right = parse_order(correct, n).map_err(|e| bad(format!("ordering answer {correct:?}: {e}")))?;
    let got = parse_order(given, Some(right.len())).map_err(unreadable)?;
    Ok(got == right)
}

/// Parses a permutation of 1..=n (n = `expected_len`, or the count found when unknown).
/// The error is a hint for the developer.
fn parse_order(s: &str, expected_len: Option<usize>) -> Result<Vec<usize>, String> {
    let parts: Vec<&str> =
        s.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '>' | '-')).filter(|p| !p.is_empty()).collect();
    let n = expected_len.unwrap_or(parts.len());
    let example: Vec<String> = (2..=n).chain((n >= 1).then_some(1)).map(|i| i.to_string()).collect();
    let how = format!("type the {n} step numbers in your order, e.g. {}", example.join(","));
    // "2413": digits run together, unambiguous only while every step is one digit.
    let run_together = parts.len() == 1 && n > 1 && n <= 9 && parts[0].len() == n;
    let numbers: Vec<&str> = if run_together && parts[0].bytes().all(|b| b.is_ascii_digit()) {
        (0..n).map(|i| &parts[0][i..=i]).collect()
    } else {
        parts
    };
    let mut seen = vec![false; n + 1];
    let mut order = Vec::with_capacity(n);
    for p in &numbers {
        let k: usize = p.parse().map_err(|_| format!("{p:?} is not a step number; {how}"))?;
        if k == 0 || k > n {
            return Err(format!("there is no step {k} (steps are 1–{n}); {how}"));
        }
        if std::mem::replace(&mut seen[k], true) {
            return Err(format!("step {k} appears twice; {how}"));
        }
        order.push(k);
    }
    if order.len() != n || n == 0 {
        return Err(format!("got {} step numbers, expected {n}; {how}", order.len()));
    }
    Ok(order)
}

fn check_fill_in(correct: &str, given: &str, sigil: Option<char>) -> Result<bool, AnswerError> {
    let strip = |s: String| match sigil {
        Some(c) => s.strip_prefix(c).map(str::to_owned).unwrap_or(s),
        None => s,
    };
    let right = strip(normalize(correct));
    if right.is_empty() {
        return Err(bad("fill-in-the-blank question without an answer"));
    }
    let got = strip(normalize(given));
    if got.is_empty() {
        return Err(unreadable("type the missing text"));
    }
    Ok(got == right)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn mc(options: &[String], correct: &str, given: &str) -> Result<Verdict, AnswerError> {
        check_answer("multiple_choice", Some(options), correct, given)
    }

    fn is_unreadable(r: Result<Verdict, AnswerError>) -> bool {
        matches!(r, Err(AnswerError::Unreadable(hint)) if !hint.is_empty())
    }

    #[test]
    fn normalize_folds_case_quotes_and_whitespace() {
        assert_eq!(normalize("  `Arc<Mutex<T>>`  "), "arc<mutex<t>>");
        assert_eq!(normalize("\"tokio::spawn\"\n\t( fut )"), "tokio::spawn ( fut )");
        assert_eq!(normalize("‘Don’t’ “Panic”"), "dont panic");
        assert_eq!(normalize("ÉCOLE"), "école");
    }

    #[test]
    fn multiple_choice_accepts_letter_forms() {
        let o = opts(&["A) Box", "B) Rc", "C) Arc", "D) Cell"]);
        for given in ["c", "C", "c)", "C)", "(c)", "(C)", "c.", " C ", "c:"] {
            assert_eq!(mc(&o, "C", given), Ok(Verdict::Correct), "{given}");
        }
        assert_eq!(mc(&o, "C", "a"), Ok(Verdict::Wrong));
        assert_eq!(mc(&o, "c", "(d)"), Ok(Verdict::Wrong));
    }

    #[test]
    fn multiple_choice_accepts_option_text_with_or_without_prefix() {
        let o = opts(&["A) Box<T>", "B. Rc<T>", "(C) Arc<T>", "D) Cell<T>"]);
        for given in ["arc<t>", "  ARC<T> ", "`Arc<T>`", "(C) Arc<T>", "c) arc<t>", "C. Arc<T>"] {
            assert_eq!(mc(&o, "C", given), Ok(Verdict::Correct), "{given}");
        }
        assert_eq!(mc(&o, "C", "rc<t>"), Ok(Verdict::Wrong));
        // Options stored without prefixes work the same.
        let plain = opts(&["Box", "Rc", "Arc", "Cell"]);
        assert_eq!(mc(&plain, "B", "rc"), Ok(Verdict::Correct));
        assert_eq!(mc(&plain, "B", "b"), Ok(Verdict::Correct));
    }

    #[test]
    fn multiple_choice_letter_prefix_with_unmatched_text_reads_the_letter() {
        let o = opts(&["A) Box", "B) HashMap<K, V>", "C) Arc", "D) Cell"]);
        assert_eq!(mc(&o, "B", "b) hashmap"), Ok(Verdict::Correct));
        // `e.g.` is not a letter prefix.
        assert!(is_unreadable(mc(&o, "B", "e.g. a map")));
    }

    #[test]
    fn multiple_choice_correct_may_be_text_or_prefixed() {
        let o = opts(&["A) Box", "B) Rc", "C) Arc", "D) Cell"]);
        assert_eq!(mc(&o, "B) Rc", "b"), Ok(Verdict::Correct));
        assert_eq!(mc(&o, "Rc", "b"), Ok(Verdict::Correct));
    }

    #[test]
    fn multiple_choice_unreadable_answers() {
        let o = opts(&["A) Box", "B) Rc", "C) Arc", "D) Cell"]);
        for given in ["Z", "e", "(z)", "", "   ", "something else", "ab"] {
            let r = mc(&o, "B", given);
            assert!(is_unreadable(r.clone()), "{given}: {r:?}");
            if let Err(AnswerError::Unreadable(hint)) = r {
                assert!(hint.contains("A–D"), "{hint}");
            }
        }
    }

    #[test]
    fn multiple_choice_malformed_questions() {
        let o = opts(&["A) Box", "B) Rc"]);
        assert!(matches!(mc(&o, "Q", "a"), Err(AnswerError::BadQuestion(_))));
        assert!(matches!(mc(&[], "A", "a"), Err(AnswerError::BadQuestion(_))));
        assert!(matches!(check_answer("multiple_choice", None, "A", "a"), Err(AnswerError::BadQuestion(_))));
    }

    #[test]
    fn true_false_forms() {
        for given in ["t", "T", "true", "TRUE", "True", "yes", "Y", "y", " yes. "] {
            assert_eq!(check_answer("true_false", None, "true", given), Ok(Verdict::Correct), "{given}");
            assert_eq!(check_answer("true_false", None, "false", given), Ok(Verdict::Wrong), "{given}");
        }
        for given in ["f", "F", "false", "No", "n", "N"] {
            assert_eq!(check_answer("true_false", None, "false", given), Ok(Verdict::Correct), "{given}");
        }
        for given in ["maybe", "", "tru", "1"] {
            assert!(is_unreadable(check_answer("true_false", None, "true", given)), "{given}");
        }
        assert!(matches!(check_answer("true_false", None, "perhaps", "t"), Err(AnswerError::BadQuestion(_))));
    }

    #[test]
    fn ordering_forms() {
        let steps = opts(&["parse", "validate", "store", "reply"]);
        let ord = |given: &str| check_answer("ordering", Some(&steps), "2,4,1,3", given);
        for given in ["2,4,1,3", "2 4 1 3", "2, 4, 1, 3", " 2  4,1 ,3 ", "2413", "2 -> 4 -> 1 -> 3", "2;4;1;3"] {
            assert_eq!(ord(given), Ok(Verdict::Correct), "{given}");
        }
        assert_eq!(ord("1,2,3,4"), Ok(Verdict::Wrong));
        assert_eq!(ord("4 3 2 1"), Ok(Verdict::Wrong));
    }

    #[test]
    fn ordering_unreadable_answers_explain_what_is_wrong() {
        let steps = opts(&["a", "b", "c", "d"]);
        let ord = |given: &str| check_answer("ordering", Some(&steps), "2,4,1,3", given);
        let hint = |given: &str| match ord(given) {
            Err(AnswerError::Unreadable(h)) => h,
            other => panic!("{given}: {other:?}"),
        };
        assert!(hint("1,1,2,3").contains("appears twice"));
        assert!(hint("1,2,3").contains("expected 4"));
        assert!(hint("1,2,3,4,5").contains("no step 5"));
        assert!(hint("0,1,2,3").contains("no step 0"));
        assert!(hint("a,b,c,d").contains("not a step number"));
        assert!(hint("").contains("expected 4"));
        assert!(hint("24131").contains("no step 24131")); // too many digits to run together
    }

    #[test]
    fn ordering_without_options_uses_the_answer_length() {
        assert_eq!(check_answer("ordering", None, "3,1,2", "3 1 2"), Ok(Verdict::Correct));
        assert!(is_unreadable(check_answer("ordering", None, "3,1,2", "3 1 2 4")));
    }

    #[test]
    fn ordering_malformed_questions() {
        let steps = opts(&["a", "b", "c", "d", "e"]);
        assert!(matches!(
            check_answer("ordering", Some(&steps), "2,4,1,3", "2,4,1,3"),
            Err(AnswerError::BadQuestion(_))
        ));
        assert!(matches!(check_answer("ordering", None, "1,1", "1,2"), Err(AnswerError::BadQuestion(_))));
    }

    #[test]
    fn fill_in_blank_is_forgiving_about_case_quotes_and_spacing() {
        let fib = |correct: &str, given: &str| check_answer("fill_in_blank", None, correct, given);
        assert_eq!(fib("await", " Await "), Ok(Verdict::Correct));
        assert_eq!(fib("tokio::spawn", "`tokio::spawn`"), Ok(Verdict::Correct));
        assert_eq!(fib("\"use strict\"", "use   strict"), Ok(Verdict::Correct));
        assert_eq!(fib("impl Trait", "impl\tTRAIT"), Ok(Verdict::Correct));
        assert_eq!(fib("await", "async"), Ok(Verdict::Wrong));
        assert_eq!(fib("Box<dyn Error>", "Box<dynError>"), Ok(Verdict::Wrong));
        assert!(is_unreadable(fib("await", "  `` ")));
        assert!(matches!(fib("  ", "x"), Err(AnswerError::BadQuestion(_))));
    }

    #[test]
    fn multiple_choice_takes_the_number_and_a_unique_part_of_three_words() {
        let o = opts(&[
            "A) It copies the value into the closure",
            "B) It borrows the value for the closure's lifetime",
            "C) It moves the value into the closure",
            "D) Nothing",
        ]);
        assert_eq!(mc(&o, "C", "3"), Ok(Verdict::Correct));
        assert_eq!(mc(&o, "C", "2"), Ok(Verdict::Wrong));
        assert_eq!(mc(&o, "C", "moves the value"), Ok(Verdict::Correct));
        assert_eq!(mc(&o, "C", "It Moves the VALUE"), Ok(Verdict::Correct));
        // Two words are too few, and a part two options share names neither.
        assert!(is_unreadable(mc(&o, "C", "moves the")));
        assert!(is_unreadable(mc(&o, "C", "the value into")));
        assert!(is_unreadable(mc(&o, "C", "5")));
    }

    #[test]
    fn fill_in_blank_forgives_a_sigil_the_line_already_shows() {
        let fib = |correct: &str, given: &str, snippet: &str| {
            check_answer_in("fill_in_blank", None, correct, given, Some(snippet))
        };
        let code = "@___\nclass Point:\n    x: int";
        assert_eq!(fib("@dataclass", "dataclass", code), Ok(Verdict::Correct));
        assert_eq!(fib("@dataclass", "@dataclass", code), Ok(Verdict::Correct));
        assert_eq!(fib("dataclass", "`@dataclass`", code), Ok(Verdict::Correct));
        assert_eq!(fib("$count", "count", "echo $___"), Ok(Verdict::Correct));
        // A sigil the line does not show is part of the answer.
        assert_eq!(fib("@dataclass", "dataclass", "___\nclass Point:"), Ok(Verdict::Wrong));
        assert_eq!(fib("await", "\"Await\"", "x = ___ f()"), Ok(Verdict::Correct));
    }

    #[test]
    fn free_text_types_need_a_self_grade() {
        for t in ["code_reading", "spot_the_bug", "open_ended", " Open_Ended "] {
            assert_eq!(check_answer(t, None, "model answer", "anything"), Ok(Verdict::NeedsSelfGrade));
            assert_eq!(check_answer(t, None, "model answer", ""), Ok(Verdict::NeedsSelfGrade));
        }
    }

    #[test]
    fn saying_i_do_not_know_is_a_miss_on_every_type_unless_it_is_the_answer() {
        let o = opts(&["A) Box", "B) Rc", "C) Arc", "D) Cell"]);
        let steps = opts(&["a", "b", "c"]);
        for given in ["no idea", "IDK", "?", "skip", "I don't know", "i dont know.", "Not sure!", " pass "] {
            assert_eq!(mc(&o, "B", given), Ok(Verdict::DontKnow), "{given}");
            assert_eq!(check_answer("true_false", None, "true", given), Ok(Verdict::DontKnow), "{given}");
            assert_eq!(check_answer("ordering", Some(&steps), "2,1,3", given), Ok(Verdict::DontKnow), "{given}");
            assert_eq!(check_answer("fill_in_blank", None, "await", given), Ok(Verdict::DontKnow), "{given}");
            for free in ["code_reading", "spot_the_bug", "open_ended"] {
                assert_eq!(check_answer(free, None, "model", given), Ok(Verdict::DontKnow), "{free} {given}");
            }
        }
        // The words are an answer where they are the answer: Rust's `?`, an iterator's `skip`.
        assert_eq!(check_answer("fill_in_blank", None, "?", "?"), Ok(Verdict::Correct));
        assert_eq!(check_answer("fill_in_blank", None, "skip", "Skip"), Ok(Verdict::Correct));
        assert_eq!(mc(&opts(&["pass", "skip", "?", "idk"]), "C", "?"), Ok(Verdict::Correct));
        // Neither an empty answer nor "no" (false) is a don't-know; a malformed question stays one.
        assert!(is_unreadable(mc(&o, "B", "")));
        assert_eq!(check_answer("true_false", None, "true", "no"), Ok(Verdict::Wrong));
        assert!(matches!(mc(&o, "Q", "no idea"), Err(AnswerError::BadQuestion(_))));
        assert!(!is_dont_know("no idea how the closure captures it, but it moves the value"));
    }

    #[test]
    fn unknown_type_is_a_bad_question() {
        let r = check_answer("essay", None, "x", "y");
        assert!(matches!(&r, Err(AnswerError::BadQuestion(m)) if m.contains("essay")));
        let shown = r.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(shown.starts_with("malformed question"), "{shown}");
    }
}
