//! `vl quiz` (SPEC §7): asks the due questions (reviews first, then new ones), judges each
//! answer with `learn::answer`, and records it at once (`store::record_answer`, one
//! transaction per answer). Answers come one per line from stdin, so the quiz works the same
//! from a keyboard and from a pipe; end of input ends the quiz cleanly.
//!
//! # Interruption
//! Nothing is buffered: an answer is committed before its feedback is printed, and the next
//! question is only shown after that. Ctrl-C therefore needs no handler — the default SIGINT
//! ends the process, SQLite rolls back at most the one transaction in flight, and every
//! answer that got feedback is kept. (A handler that finishes the current answer was
//! considered; it would only add a way to hang on a blocked stdin read.)
//!
//! # Timing
//! "Fast" (quality 5 instead of 4, SPEC §7) means answered within [`FAST_ANSWER_MS`] of the
//! question being shown, and is only measured when stdin is a terminal: answers fed by a pipe
//! arrive instantly and say nothing about recall, so they score the plain 4.
//!
//! # Grading free-text answers
//! `code_reading`, `spot_the_bug` and `open_ended` show the model answer after the
//! developer's. When an LLM provider is configured, the answer is graded with the rubric's
//! five weighted dimensions ([`crate::learn::rubric`]); otherwise — or when the provider
//! fails — the developer grades themself 0–5. The grade is the SM-2 quality; 3 or more counts
//! as correct (SM-2's own pass mark).

pub mod store;
pub mod term;

use std::collections::{HashSet, VecDeque};
use std::io::{self, BufRead, IsTerminal, Write};
use std::process::ExitCode;

use rusqlite::Connection;

use crate::cli::args::QuizArgs;
use crate::clock::{Clock, Millis, SystemClock};
use crate::config::Config;
use crate::db;
use crate::learn::answer::{AnswerError, Verdict, check_answer};
use crate::learn::sm2;
use store::{Answer, Question, Recorded, Streak};
use term::{Style, days, letter, parse_grade, read_line};

/// Tries for an answer (or a grade) that cannot be read before it counts as wrong.
pub const MAX_TRIES: u32 = 3;
/// An objective answer within this many ms of the question is "fast" (quality 5).
pub const FAST_ANSWER_MS: Millis = 10_000;
/// A self-grade at or above this counts as a correct answer.
pub const PASS_GRADE: u8 = 3;
/// Snippet lines shown before eliding the rest.
const SNIPPET_LINES: usize = 40;

/// What `vl status`, `vl gaps` and `vl quiz` print when there is nothing recorded yet.
pub const NO_SESSIONS: &str = "no sessions yet — run vl demo or install the hooks (vl install claude-code)";

/// How one quiz run behaves; resolved once by [`run`] from the arguments and the terminal.
#[derive(Debug, Clone)]
pub struct QuizOptions {
    /// Only this session's questions.
    pub session: Option<String>,
    /// Questions selected at the start; follow-ups earned on the way come on top.
    pub limit: usize,
    /// stdin is a terminal: measure answer time; otherwise echo each answer read.
    pub interactive: bool,
    pub style: Style,
    /// Grades free-text answers with the rubric; `None` = self-grading.
    pub grader: Option<Grader>,
}

/// The LLM provider that grades free-text answers, and its time budget per answer.
#[derive(Clone)]
pub struct Grader {
    pub provider: std::sync::Arc<dyn crate::llm::Provider>,
    pub timeout: std::time::Duration,
}

impl std::fmt::Debug for Grader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Grader({})", self.provider.name())
    }
}

impl Grader {
    /// The configured remote provider, if any (the offline provider cannot grade prose).
    pub fn from_config(config: &Config) -> Option<Grader> {
        match crate::llm::select(&crate::jobs::provider_settings(config)) {
            Ok(crate::llm::Selected::Remote(provider)) => {
                Some(Grader { provider: std::sync::Arc::from(provider), timeout: config.llm_timeout() })
            }
            _ => None,
        }
    }

    fn grade(&self, q: &Question, model: &str, answer: &str) -> Result<crate::learn::rubric::RubricGrade, String> {
        let request = crate::learn::rubric::request(&q.question, q.snippet.as_deref(), model, answer);
        let text = self.provider.complete(&request, self.timeout).map_err(|e| e.to_string())?;
        crate::learn::rubric::parse(&text).map_err(|e| e.to_string())
    }
}

/// What a quiz run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    pub answered: u32,
    pub correct: u32,
    pub streak: Streak,
}

#[derive(Debug)]
pub enum QuizError {
    /// Reading or recording failed; answers committed before it are kept.
    Db(rusqlite::Error),
    /// stdin or stdout failed (a closed pipe).
    Io(io::Error),
}

impl std::fmt::Display for QuizError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QuizError::Db(e) => write!(f, "database error (answers given so far are saved): {e}"),
            QuizError::Io(e) => write!(f, "terminal error: {e}"),
        }
    }
}

impl From<rusqlite::Error> for QuizError {
    fn from(e: rusqlite::Error) -> Self {
        QuizError::Db(e)
    }
}

impl From<io::Error> for QuizError {
    fn from(e: io::Error) -> Self {
        QuizError::Io(e)
    }
}

/// The command: opens the database, resolves `--session`, runs the quiz on stdin/stdout.
pub fn run(args: &QuizArgs, config: &Config) -> ExitCode {
    let path = config.db_path();
    if !path.exists() {
        println!("{NO_SESSIONS}");
        return ExitCode::SUCCESS;
    }
    let mut conn = match open(config) {
        Ok(conn) => conn,
        Err(e) => {
            eprintln!("vl quiz: {e}");
            return ExitCode::FAILURE;
        }
    };
    let session = match resolve_session(&conn, args.session.as_ref()) {
        Ok(Ok(session)) => session,
        Ok(Err(message)) => {
            eprintln!("vl quiz: {message}");
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("vl quiz: cannot read the sessions in {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    };
    let options = QuizOptions {
        session,
        limit: args.limit as usize,
        interactive: io::stdin().is_terminal(),
        style: Style { color: io::stdout().is_terminal() },
        grader: Grader::from_config(config),
    };
    let mut input = io::stdin().lock();
    let mut output = io::stdout().lock();
    match run_quiz(&mut conn, &mut input, &mut output, &SystemClock, &options) {
        Ok(_) => ExitCode::SUCCESS,
        // stdout closed (`vl quiz | head`): nobody is left to tell.
        Err(QuizError::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vl quiz: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A read-write connection on an up-to-date schema. Migrating is only attempted when the
/// file is behind, so a quiz next to a running worker takes no exclusive lock.
fn open(config: &Config) -> Result<Connection, db::DbError> {
    let path = config.db_path();
    let mut conn = db::open(&path, config.synchronous())?;
    let version: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version < db::latest_version() {
        db::migrate(&mut conn)?;
    }
    Ok(conn)
}

/// `--session` absent: every session; `--session` alone: the latest with questions;
/// `--session ID`: that one, which must exist. The inner `Err` is a message for the user.
pub fn resolve_session(
    conn: &Connection,
    arg: Option<&Option<String>>,
) -> rusqlite::Result<Result<Option<String>, String>> {
    Ok(match arg {
        None => Ok(None),
        Some(None) => match store::latest_session_with_questions(conn)? {
            Some(id) => Ok(Some(id)),
            None => Err("no session has questions yet — they are written when a session is analysed".to_owned()),
        },
        Some(Some(id)) if store::session_exists(conn, id)? => Ok(Some(id.clone())),
        Some(Some(id)) => Err(format!("no session {id:?} has been recorded")),
    })
}

/// The quiz loop, with its I/O and clock passed in (the tests drive it in-process).
pub fn run_quiz(
    conn: &mut Connection,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    clock: &dyn Clock,
    opts: &QuizOptions,
) -> Result<Summary, QuizError> {
    let s = opts.style;
    let now = clock.now_ms();
    let mut queue: VecDeque<Question> = store::due(conn, now, opts.session.as_deref(), opts.limit)?.into();
    if queue.is_empty() {
        match store::next_due(conn, now, opts.session.as_deref())? {
            Some(at) => writeln!(out, "Nothing to review right now — the next question is due in {}.", when(at - now))?,
            None => writeln!(out, "No questions yet — they are written when a session is analysed (try vl demo).")?,
        }
        return Ok(Summary { streak: store::streak(conn, now)?, ..Summary::default() });
    }
    let fresh = queue.iter().filter(|q| q.is_new()).count();
    writeln!(
        out,
        "{} — {} question{}: {} due for review, {fresh} new. Answers are saved as you go; Ctrl-C stops.",
        s.bold("VibeLearn quiz"),
        queue.len(),
        if queue.len() == 1 { "" } else { "s" },
        queue.len() - fresh,
    )?;
    let mut summary = Summary::default();
    let mut asked: HashSet<String> = HashSet::new();
    let mut total = queue.len();
    let mut number = 0;
    while let Some(q) = queue.pop_front() {
        if !asked.insert(q.id.clone()) {
            continue;
        }
        if let Some(why) = malformed(&q) {
            writeln!(out, "\n{}", s.yellow(&format!("Skipping question {} — it is malformed ({why}).", q.id)))?;
            total -= 1;
            continue;
        }
        number += 1;
        show_question(out, s, &q, number, total)?;
        let shown_at = clock.now_ms();
        let Some(judged) = ask(&q, input, out, clock, opts, shown_at)? else {
            writeln!(out, "{}", s.dim("End of input — stopping here."))?;
            break;
        };
        let answer =
            Answer { question_id: &q.id, text: &judged.text, correct: judged.correct, quality: judged.quality };
        let Some(recorded) = store::record_answer(conn, &answer, clock.now_ms())? else {
            writeln!(out, "{}", s.yellow("This question was deleted meanwhile; the answer was not recorded."))?;
            continue;
        };
        summary.answered += 1;
        summary.correct += u32::from(judged.correct);
        feedback(out, s, &q, &judged, &recorded)?;
        if let Some(id) = &recorded.follow_up
            && let Some(follow_up) = store::question(conn, id)?.filter(|f| !asked.contains(&f.id))
        {
            writeln!(out, "  {}", s.cyan("Follow-up question unlocked — it comes next."))?;
            queue.push_front(follow_up);
            total += 1;
        }
    }
    summary.streak = store::streak(conn, clock.now_ms())?;
    writeln!(
        out,
        "\n{} {} answered, {} correct · streak {} (longest {})",
        s.bold("Done:"),
        summary.answered,
        summary.correct,
        days(summary.streak.current),
        days(summary.streak.longest),
    )?;
    out.flush()?;
    Ok(summary)
}

/// Why a stored question cannot be asked, found before showing it: `check_answer` judges the
/// stored `correct` field before the given answer, so probing with an empty answer reports a
/// malformed question and nothing else.
fn malformed(q: &Question) -> Option<String> {
    match check_answer(&q.question_type, q.options.as_deref(), q.correct.as_deref().unwrap_or(""), "") {
        Err(AnswerError::BadQuestion(why)) => Some(why),
        _ => None,
    }
}

fn is_free_text(q: &Question) -> bool {
    matches!(check_answer(&q.question_type, None, "", ""), Ok(Verdict::NeedsSelfGrade))
}

fn show_question(out: &mut dyn Write, s: Style, q: &Question, number: usize, total: usize) -> io::Result<()> {
    let kind = if q.is_follow_up() {
        "follow-up"
    } else if q.is_new() {
        "new"
    } else {
        "review"
    };
    let heading =
        format!("Question {number} of {total} · {kind} · {} · {}", q.question_type.replace('_', " "), q.difficulty);
    writeln!(out, "\n{}", s.bold(&heading))?;
    writeln!(out, "{} {}", s.dim("Concept:"), q.concept)?;
    writeln!(out, "{}", q.question)?;
    if let Some(snippet) = q.snippet.as_deref().filter(|t| !t.trim().is_empty()) {
        writeln!(out)?;
        for line in snippet.lines().take(SNIPPET_LINES) {
            writeln!(out, "    {} {line}", s.dim("│"))?;
        }
        if snippet.lines().count() > SNIPPET_LINES {
            writeln!(out, "    {} …", s.dim("│"))?;
        }
    }
    let options = q.options.as_deref().unwrap_or_default();
    let hint = match q.question_type.as_str() {
        "multiple_choice" => {
            for (i, option) in options.iter().enumerate() {
                writeln!(out, "  {}) {option}", letter(i))?;
            }
            format!("a letter A–{} or the option's text", letter(options.len().saturating_sub(1)))
        }
        "ordering" => {
            for (i, step) in options.iter().enumerate() {
                writeln!(out, "  {}. {step}", i + 1)?;
            }
            "the step numbers in the right order, e.g. 2 4 1 3".to_owned()
        }
        "true_false" => "true or false (t/f, yes/no, y/n)".to_owned(),
        "fill_in_blank" => "the missing text".to_owned(),
        _ => "your answer on one line; the model answer follows".to_owned(),
    };
    writeln!(out, "{}", s.dim(&format!("({hint})")))
}

/// An answer judged: what was typed, right or wrong, SM-2 quality.
struct Judged {
    text: String,
    correct: bool,
    quality: u8,
    /// The grade given, for self-graded answers.
    grade: Option<u8>,
    /// Unreadable [`MAX_TRIES`] times and counted as wrong.
    gave_up: bool,
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

/// Asks until the answer can be judged; `None` at end of input (nothing is recorded).
fn ask(
    q: &Question,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    clock: &dyn Clock,
    opts: &QuizOptions,
    shown_at: Millis,
) -> io::Result<Option<Judged>> {
    let s = opts.style;
    let correct = q.correct.as_deref().unwrap_or("");
    let mut last = String::new();
    for attempt in 1..=MAX_TRIES {
        let Some(line) = prompt(out, input, s, ">", !opts.interactive)? else {
            return Ok(None);
        };
        match check_answer(&q.question_type, q.options.as_deref(), correct, &line) {
            Ok(Verdict::NeedsSelfGrade) => return self_grade(q, line, input, out, opts),
            Ok(verdict) => {
                let right = verdict == Verdict::Correct;
                let fast = opts.interactive && clock.now_ms() - shown_at < FAST_ANSWER_MS;
                let quality = sm2::objective_quality(right, fast);
                return Ok(Some(Judged { text: line, correct: right, quality, grade: None, gave_up: false }));
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
    Ok(Some(Judged {
        text: last,
        correct: false,
        quality: sm2::objective_quality(false, false),
        grade: None,
        gave_up: true,
    }))
}

/// Shows the model answer and reads a grade 0–5.
fn self_grade(
    q: &Question,
    answer: String,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    opts: &QuizOptions,
) -> io::Result<Option<Judged>> {
    let s = opts.style;
    match q.correct.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
        Some(model) => {
            writeln!(out, "{}", s.bold("Model answer:"))?;
            writeln!(out, "  {}", model.replace('\n', "\n  "))?;
            if !q.explanation.trim().is_empty() && q.explanation.trim() != model {
                writeln!(out, "  {}", s.dim(&q.explanation))?;
            }
        }
        None => {
            writeln!(out, "{}", s.bold("No model answer for this one; compare with:"))?;
            writeln!(out, "  {}", q.explanation)?;
        }
    }
    if let (Some(grader), Some(model)) = (&opts.grader, q.correct.as_deref().filter(|c| !c.trim().is_empty())) {
        match grader.grade(q, model, &answer) {
            Ok(grade) => {
                let quality = crate::learn::rubric::quality(&grade);
                let scores: Vec<String> = crate::learn::rubric::DIMENSIONS
                    .iter()
                    .map(|(name, _)| format!("{name} {}", grade.scores.get(*name).copied().unwrap_or(0.0)))
                    .collect();
                writeln!(
                    out,
                    "{} {} → {quality}/5",
                    s.bold(&format!("Rubric grade ({}):", grader.provider.name())),
                    scores.join(", ")
                )?;
                if !grade.feedback.trim().is_empty() {
                    writeln!(out, "  {}", grade.feedback.trim())?;
                }
                return Ok(Some(Judged {
                    text: answer,
                    correct: quality >= PASS_GRADE,
                    quality,
                    grade: Some(quality),
                    gave_up: false,
                }));
            }
            Err(why) => {
                writeln!(out, "{}", s.yellow(&format!("The rubric grader is unavailable ({why}); grade yourself.")))?
            }
        }
    }
    let label = "Grade yourself 0–5 (0 = no idea, 3 = right with gaps, 5 = perfect):";
    for attempt in 1..=MAX_TRIES {
        let Some(line) = prompt(out, input, s, label, !opts.interactive)? else {
            return Ok(None);
        };
        if let Some(grade) = parse_grade(&line) {
            return Ok(Some(Judged {
                text: answer,
                correct: grade >= PASS_GRADE,
                quality: grade,
                grade: Some(grade),
                gave_up: false,
            }));
        }
        let left = MAX_TRIES - attempt;
        let again = if left == 0 { String::new() } else { format!(" ({left} left)") };
        writeln!(out, "{}", s.yellow(&format!("Type a whole number from 0 to 5{again}.")))?;
    }
    Ok(Some(Judged {
        text: answer,
        correct: false,
        quality: sm2::objective_quality(false, false),
        grade: None,
        gave_up: true,
    }))
}

/// The expected answer in words: the option letter and text, the steps in order.
fn expected(q: &Question) -> String {
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

fn feedback(out: &mut dyn Write, s: Style, q: &Question, judged: &Judged, recorded: &Recorded) -> io::Result<()> {
    let next = format!("next review in {}", days(recorded.schedule.interval_days));
    if let Some(grade) = judged.grade {
        let line = format!("Graded {grade}/5 — {next}.");
        writeln!(out, "{}", if judged.correct { s.green(&line) } else { s.red(&line) })?;
    } else if judged.gave_up {
        writeln!(out, "{}", s.red(&format!("✗ Counted as wrong — {next}.")))?;
    } else if judged.correct {
        writeln!(out, "{}", s.green(&format!("✓ Correct — {next}.")))?;
    } else {
        writeln!(out, "{}", s.red(&format!("✗ Not quite — {next}.")))?;
    }
    if judged.grade.is_none() && !is_free_text(q) {
        if !judged.correct {
            writeln!(out, "  {} {}", s.bold("Answer:"), expected(q))?;
        }
        if !q.explanation.trim().is_empty() {
            writeln!(out, "  {}", s.dim(&q.explanation))?;
        }
    }
    if recorded.after.level != recorded.before.level {
        let arrow = if recorded.after.level > recorded.before.level { "up" } else { "down" };
        writeln!(
            out,
            "  {}",
            s.yellow(&format!("Level {arrow} for {}: {} → {}", q.concept, recorded.before.level, recorded.after.level))
        )?;
    }
    Ok(())
}

/// A duration in ms as "5 days", "3 hours" or "12 minutes", rounded to the nearest unit
/// (a review due in 11.99 days is "due in 12 days").
fn when(ms: Millis) -> String {
    const HOUR: Millis = 3_600_000;
    const MINUTE: Millis = 60_000;
    let round = |unit: Millis| (ms + unit / 2) / unit;
    let plural = |n: Millis, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    if ms >= sm2::DAY_MS - HOUR / 2 {
        days(u32::try_from(round(sm2::DAY_MS)).unwrap_or(u32::MAX))
    } else if ms >= HOUR - MINUTE / 2 {
        plural(round(HOUR), "hour")
    } else {
        plural(round(MINUTE).max(1), "minute")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(question_type: &str, options: &[&str], correct: &str) -> Question {
        Question {
            id: "q1".into(),
            concept: "Closures".into(),
            question_type: question_type.into(),
            difficulty: "junior".into(),
            snippet: None,
            question: "?".into(),
            options: (!options.is_empty()).then(|| options.iter().map(|o| o.to_string()).collect()),
            correct: Some(correct.into()),
            explanation: "because".into(),
            tags: Vec::new(),
            due_at: None,
        }
    }

    #[test]
    fn malformed_questions_are_found_before_asking() {
        assert!(malformed(&q("multiple_choice", &["a", "b", "c", "d"], "B")).is_none());
        assert!(malformed(&q("multiple_choice", &["a", "b"], "Q")).is_some());
        assert!(malformed(&q("true_false", &[], "perhaps")).is_some());
        assert!(malformed(&q("ordering", &["a", "b", "c"], "1,2")).is_some());
        assert!(malformed(&q("fill_in_blank", &[], " ")).is_some());
        assert!(malformed(&q("essay", &[], "x")).is_some());
        assert!(malformed(&q("open_ended", &[], "")).is_none());
    }

    #[test]
    fn expected_answer_reads_naturally() {
        assert_eq!(expected(&q("multiple_choice", &["Box", "Rc", "Arc", "Cell"], "C")), "C) Arc");
        assert_eq!(expected(&q("ordering", &["x", "y"], "2,1")), "2,1\n    2. y\n    1. x");
        assert_eq!(expected(&q("true_false", &[], "false")), "false");
    }

    #[test]
    fn durations_pick_a_unit() {
        assert_eq!(when(3 * sm2::DAY_MS + 5), "3 days");
        assert_eq!(when(12 * sm2::DAY_MS - 60_000), "12 days");
        assert_eq!(when(2 * 3_600_000), "2 hours");
        assert_eq!(when(3_600_000 - 1_000), "1 hour");
        assert_eq!(when(10), "1 minute");
    }
}
