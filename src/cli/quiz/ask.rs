//! Asking one question: reading the answer (an empty line re-asks without using a try),
//! judging it with `learn::answer`, showing the result or the model answer, and reading the
//! rating (Again, Hard, Good, Easy) with what each would schedule. Used by [`super::run_quiz`].

use std::io::{self, BufRead, Write};

use rusqlite::Connection;

use super::term::{Style, letter, read_line};
use super::{MAX_TRIES, QuizError, QuizOptions, is_free_text, when};
use crate::clock::{Clock, Millis};
use crate::learn::answer::{AnswerError, Verdict, check_answer_in};
use crate::learn::schedule::Rating;
use crate::learning::cards::{self, Question};

/// An answer judged and rated.
pub(super) struct Judged {
    pub(super) text: String,
    pub(super) rating: Rating,
    /// The answer was right: judged right, or judged wrong and then rated Good or Easy ("I was
    /// right"); for a self-graded answer, any rating but Again. A wrong answer rated Hard is
    /// not right.
    pub(super) correct: bool,
    /// When the answer line arrived (its duration ends here, not at the rating).
    pub(super) answered_at: Millis,
}

/// Reads one line after a prompt; echoes it when input is not a terminal, so a transcript
/// of a piped quiz reads naturally. `None` at end of input.
fn prompt(
    out: &mut dyn Write,
    input: &mut dyn BufRead,
    s: Style,
    label: &str,
    echo: bool,
) -> io::Result<Option<String>> {
    write!(out, "{} ", s.cyan(label))?;
    out.flush()?;
    let line = read_line(input)?;
    match (&line, echo) {
        (Some(text), true) => writeln!(out, "{text}")?,
        (None, _) => writeln!(out)?,
        _ => {}
    }
    Ok(line)
}

/// Reads an answer line; an empty one re-asks and costs no try. At a terminal a second empty
/// line in a row is an answer too, the empty "I don't know" (`learn::answer`'s don't-know
/// words are the typed one); a pipe's empty lines only re-ask. `None` at end of input.
fn answer_line(out: &mut dyn Write, input: &mut dyn BufRead, opts: &QuizOptions) -> io::Result<Option<String>> {
    let mut empty_before = false;
    loop {
        let Some(line) = prompt(out, input, opts.style, ">", !opts.interactive)? else {
            return Ok(None);
        };
        if !line.trim().is_empty() || (opts.interactive && empty_before) {
            return Ok(Some(line));
        }
        empty_before = true;
        let hint = if opts.interactive {
            "(type your answer — or press Enter again if you don't know: the answer is shown, the card comes back)"
        } else {
            "(type your answer — an empty line does not count; ? if you don't know)"
        };
        writeln!(out, "{}", opts.style.dim(hint))?;
    }
}

/// Asks until the answer can be judged, then for the rating; `None` at end of input before an
/// answer (nothing is recorded).
pub(super) fn ask(
    conn: &Connection,
    q: &Question,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    clock: &dyn Clock,
    opts: &QuizOptions,
    shown_at: Millis,
) -> Result<Option<Judged>, QuizError> {
    let s = opts.style;
    let correct = q.correct.as_deref().unwrap_or("");
    let mut last = String::new();
    let mut verdict = None;
    for attempt in 1..=MAX_TRIES {
        let Some(line) = answer_line(out, input, opts)? else {
            return Ok(None);
        };
        let judged = if line.trim().is_empty() {
            Ok(Verdict::DontKnow) // the terminal's second empty line
        } else {
            check_answer_in(&q.question_type, q.options.as_deref(), correct, &line, q.snippet.as_deref())
        };
        match judged {
            // A reflection prompt is neither right nor wrong: "no idea" is kept like any answer.
            Ok(Verdict::NeedsSelfGrade | Verdict::DontKnow) if q.is_reflection() => {
                return self_grade(conn, q, line, input, out, clock, opts);
            }
            Ok(Verdict::NeedsSelfGrade) => return self_grade(conn, q, line, input, out, clock, opts),
            Ok(Verdict::DontKnow) => return Ok(Some(dont_know(q, line, out, clock, opts)?)),
            Ok(v) => {
                verdict = Some(v == Verdict::Correct);
                last = line;
                break;
            }
            Err(AnswerError::Unreadable(hint)) => {
                let left = MAX_TRIES - attempt;
                let again = if left == 0 { String::new() } else { format!(" — try again ({left} left)") };
                writeln!(out, "{}", s.yellow(&format!("Could not read that: {hint}{again}")))?;
            }
            // `malformed` screened this out before the question was shown.
            Err(AnswerError::BadQuestion(why)) => unreachable!("a malformed question was asked: {why}"),
        }
        last = line;
    }
    objective(conn, q, input, out, clock, opts, Objective { text: last, verdict, shown_at })
}

/// An objective answer, judged (`verdict`: right or wrong; `None` after three unreadable
/// tries).
struct Objective {
    text: String,
    verdict: Option<bool>,
    shown_at: Millis,
}

/// Shows the verdict, the answer when missed and the explanation, then reads the rating.
fn objective(
    conn: &Connection,
    q: &Question,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    clock: &dyn Clock,
    opts: &QuizOptions,
    answer: Objective,
) -> Result<Option<Judged>, QuizError> {
    let s = opts.style;
    let Objective { text, verdict, shown_at } = answer;
    let answered_at = clock.now_ms();
    let right = verdict.unwrap_or(false);
    match verdict {
        Some(true) => writeln!(out, "{}", s.green("✓ Correct."))?,
        Some(false) => writeln!(out, "{}", s.red("✗ Not quite."))?,
        None => writeln!(out, "{}", s.red("✗ Counted as wrong."))?,
    }
    if !right {
        writeln!(out, "  {} {}", s.bold("Answer:"), expected(q))?;
    }
    if let Some(explanation) = q.explanation() {
        writeln!(out, "  {}", s.dim(explanation))?;
    }
    let fast = opts.interactive && answered_at - shown_at < opts.easy_ms;
    let suggested = match (right, fast) {
        (false, _) => Rating::Again,
        (true, true) => Rating::Easy,
        (true, false) => Rating::Good,
    };
    let rating =
        rate(conn, q, input, out, clock, opts, Suggestion { rating: Some(suggested), offer_override: !right })?
            .unwrap_or(suggested);
    Ok(Some(Judged { text, rating, correct: right || rating >= Rating::Good, answered_at }))
}

/// "I don't know" (`learn::answer::is_dont_know`, or a second empty line at the terminal): a
/// miss, rated Again without asking (the card comes back through its learning steps), with
/// the answer and its explanation shown.
fn dont_know(
    q: &Question,
    text: String,
    out: &mut dyn Write,
    clock: &dyn Clock,
    opts: &QuizOptions,
) -> io::Result<Judged> {
    let s = opts.style;
    let answered_at = clock.now_ms();
    writeln!(out, "{}", s.red("✗ Not known — that counts as a miss, rated Again."))?;
    match q.model_answer() {
        Some(_) if is_free_text(q) => {
            writeln!(out, "{}", s.bold("Model answer:"))?;
            writeln!(out, "  {}", expected(q).replace('\n', "\n  "))?;
        }
        Some(_) => writeln!(out, "  {} {}", s.bold("Answer:"), expected(q))?,
        None => writeln!(out, "  {}", s.dim("There is no model answer for this one."))?,
    }
    if let Some(explanation) = q.explanation().filter(|e| Some(*e) != q.model_answer()) {
        writeln!(out, "  {}", s.dim(explanation))?;
    }
    Ok(Judged { text, rating: Rating::Again, correct: false, answered_at })
}

/// The rating prompt, with what each rating would schedule. `suggested`: Enter accepts it (and
/// end of input too); without one, Enter re-asks and end of input returns `None`.
fn rate(
    conn: &Connection,
    q: &Question,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    clock: &dyn Clock,
    opts: &QuizOptions,
    suggestion: Suggestion,
) -> io::Result<Option<Rating>> {
    let Suggestion { rating: suggested, offer_override } = suggestion;
    let s = opts.style;
    let now = clock.now_ms();
    let card = cards::card(conn, &q.id).ok().flatten().unwrap_or_default();
    let after = opts.scheduler.preview(&card, now);
    let buttons: Vec<String> =
        Rating::ALL.iter().zip(after).map(|(r, ms)| format!("{} {} ({})", r.number(), r.name(), when(ms))).collect();
    let mut label = format!("Rate: {}", buttons.join(" · "));
    if let Some(r) = suggested {
        label.push_str(&format!(" — Enter = {}", r.name()));
    }
    if offer_override {
        label.push_str(", o = I was right");
    }
    label.push(':');
    loop {
        let Some(line) = prompt(out, input, s, &label, !opts.interactive)? else {
            return Ok(suggested);
        };
        match parse_rating(&line, offer_override) {
            Some(r) => return Ok(Some(r)),
            None if line.trim().is_empty() && suggested.is_some() => return Ok(suggested),
            None => {
                let o = if offer_override { ", or o if you were right" } else { "" };
                writeln!(out, "{}", s.yellow(&format!("Type 1, 2, 3 or 4{o}.")))?;
            }
        }
    }
}

/// What the rating prompt offers: a suggested rating (Enter accepts it) and the `o` override.
#[derive(Debug, Clone, Copy)]
struct Suggestion {
    rating: Option<Rating>,
    offer_override: bool,
}

/// `1`–`4`, the rating's name, or `o` ("I was right" → Good) where offered.
pub fn parse_rating(text: &str, allow_override: bool) -> Option<Rating> {
    let t = text.trim().to_ascii_lowercase();
    match t.as_str() {
        "o" if allow_override => Some(Rating::Good),
        "again" | "a" => Some(Rating::Again),
        "hard" | "h" => Some(Rating::Hard),
        "good" | "g" => Some(Rating::Good),
        "easy" | "e" => Some(Rating::Easy),
        _ => t.parse::<i64>().ok().and_then(Rating::from_number),
    }
}

/// Shows the model answer (or says there is none) and reads the rating 1–4, suggested by the
/// rubric when an LLM grades.
fn self_grade(
    conn: &Connection,
    q: &Question,
    answer: String,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    clock: &dyn Clock,
    opts: &QuizOptions,
) -> Result<Option<Judged>, QuizError> {
    let s = opts.style;
    let answered_at = clock.now_ms();
    if q.is_reflection() {
        // Asked once, never scheduled, not graded (SPEC §7): no rating to ask for.
        writeln!(out, "{}", s.dim("A reflection prompt: your answer is kept; it is not scheduled."))?;
        return Ok(Some(Judged { text: answer, rating: Rating::Good, correct: false, answered_at }));
    }
    match q.model_answer() {
        Some(model) => {
            writeln!(out, "{}", s.bold("Model answer:"))?;
            writeln!(out, "  {}", model.replace('\n', "\n  "))?;
            if let Some(explanation) = q.explanation().filter(|e| *e != model) {
                writeln!(out, "  {}", s.dim(explanation))?;
            }
        }
        None => writeln!(out, "{}", s.bold("There is no model answer for this one; rate how well you answered."))?,
    }
    let mut suggested = None;
    if let (Some(grader), Some(model)) = (&opts.grader, q.model_answer()) {
        match grader.grade(q, model, &answer) {
            Ok(grade) => {
                let quality = crate::learn::rubric::quality(&grade);
                let rating = crate::learn::rubric::rating(quality);
                let scores: Vec<String> = crate::learn::rubric::DIMENSIONS
                    .iter()
                    .map(|(name, _)| format!("{name} {}", grade.scores.get(*name).copied().unwrap_or(0.0)))
                    .collect();
                writeln!(
                    out,
                    "{} {} → {quality}/5, suggests {}",
                    s.bold(&format!("Rubric grade ({}):", grader.provider.name())),
                    scores.join(", "),
                    rating.name()
                )?;
                if !grade.feedback.trim().is_empty() {
                    writeln!(out, "  {}", grade.feedback.trim())?;
                }
                suggested = Some(rating);
            }
            Err(why) => {
                writeln!(out, "{}", s.yellow(&format!("The rubric grader is unavailable ({why}); rate yourself.")))?
            }
        }
    }
    let Some(rating) = rate(conn, q, input, out, clock, opts, Suggestion { rating: suggested, offer_override: false })?
    else {
        return Ok(None);
    };
    Ok(Some(Judged { text: answer, rating, correct: rating.passed(), answered_at }))
}

/// The expected answer in words: the option letter and text, the steps in order.
pub(crate) fn expected(q: &Question) -> String {
    let correct = q.correct.as_deref().unwrap_or("").trim();
    let options = q.options.as_deref().unwrap_or_default();
    match q.question_type.as_str() {
        "multiple_choice" => {
            let index = correct
                .chars()
                .next()
                .filter(|c| correct.len() == 1 && c.is_ascii_alphabetic())
                .map(|c| usize::from(c.to_ascii_uppercase() as u8 - b'A'));
            match index.and_then(|i| options.get(i).map(|o| (i, o))) {
                Some((i, option)) => format!("{}) {option}", letter(i)),
                None => correct.to_owned(),
            }
        }
        "ordering" => {
            let steps: Vec<String> = correct
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter_map(|n| n.trim().parse::<usize>().ok())
                .filter_map(|n| options.get(n.wrapping_sub(1)).map(|step| format!("{n}. {step}")))
                .collect();
            if steps.is_empty() { correct.to_owned() } else { format!("{correct}\n    {}", steps.join("\n    ")) }
        }
        _ => correct.to_owned(),
    }
}
