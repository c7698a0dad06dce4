//! `vl quiz` (SPEC §7): asks the due questions — learning cards due now, then reviews, then
//! new ones (at most `VIBELEARN_NEW_PER_DAY` a day) — judges each answer with
//! `learn::answer`, asks for a rating (Again, Hard, Good, Easy) and records it at once
//! (`learning::record::record_answer`, one transaction per answer). Answers come one per line from stdin,
//! so the quiz works the same from a keyboard and from a pipe; end of input ends the quiz.
//!
//! # Ratings
//! Objective types are graded by the answer: wrong → Again, right → Good, or Easy when
//! answered within `VIBELEARN_EASY_SECS` at a terminal (a pipe answers instantly, which says
//! nothing about recall). The rating prompt that follows shows what each rating would
//! schedule; Enter accepts the suggestion, `1`–`4` changes it, `o` ("I was right") turns a
//! strict miss into Good. Self-graded types (code_reading, spot_the_bug, open_ended) show the
//! model answer and ask for 1–4, suggested by the LLM rubric when a provider grades.
//! An empty line re-asks without using one of the [`MAX_TRIES`].
//!
//! # Saying "I don't know"
//! "no idea", "idk", "?", "skip", "I don't know" (`learn::answer::is_dont_know`) on any card,
//! and at a terminal a second empty line in a row, are a miss: recorded, rated Again without
//! a rating prompt, the answer shown, and the card comes back through its learning steps. A
//! reflection prompt keeps such an answer like any other. In a pipe empty lines only re-ask.
//!
//! # Asking the database again
//! The queue is selected at the start; when it runs out, the sitting asks `cards::due` again
//! (`Sitting::refill`, within `--limit`), so a card that fell due meanwhile — a learning step
//! now within the 20-minute learn-ahead limit — is asked here as `vl quiz next --json` offers
//! it, instead of the sitting ending with "the first in 8 minutes".
//!
//! # Learning steps within the sitting
//! A card answered Again (or still in its 1 min / 10 min steps) is queued again: it is asked
//! as soon as its step is due, and after the other cards even if its time has not come, so a
//! failed card comes back before the sitting ends (`learn::schedule`).
//!
//! # Interruption
//! Nothing is buffered: an answer is committed before its feedback is printed. Ctrl-C is
//! caught (a flag, watched by a small thread): it prints what was saved, what is left and when
//! the next cards fall due, then exits 130. SQLite rolls back at most the one transaction in
//! flight.

pub mod api;
mod ask;
pub mod term;

use std::collections::{HashSet, VecDeque};
use std::io::{self, BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::Connection;

use crate::cli::args::{QuizAction, QuizArgs};
use crate::clock::{Clock, Millis, SystemClock};
use crate::config::Config;
use crate::db;
use crate::learn::answer::{AnswerError, Verdict, check_answer_in};
use crate::learn::day::LearnerDay;
use crate::learn::schedule::{DAY_MS, Leech, Rating, Scheduler};
use crate::learning::cards::{self, DueFilter, Question};
use crate::learning::counts::Answers;
pub use crate::learning::days::sitting_filter;
use crate::learning::days::{self, Streak};
use crate::learning::record::{self, Answer, Recorded};
pub use ask::parse_rating;
use ask::{Judged, ask, expected};
use term::{Style, letter};

/// Tries for an answer that cannot be read before it counts as wrong.
pub const MAX_TRIES: u32 = 3;
/// Snippet lines shown before eliding the rest.
const SNIPPET_LINES: usize = 40;

/// What `vl status`, `vl gaps` and `vl quiz` print when there is nothing recorded yet.
pub const NO_SESSIONS: &str = "no sessions yet — run vl demo or install the hooks (vl install claude-code)";

/// How one quiz run behaves; resolved once by [`run`] from the arguments, settings and terminal.
#[derive(Debug, Clone)]
pub struct QuizOptions {
    pub filter: DueFilter,
    /// Questions selected at the start; re-asks and follow-ups earned on the way come on top.
    pub limit: usize,
    /// `VIBELEARN_NEW_PER_DAY`.
    pub new_per_day: usize,
    /// stdin is a terminal: measure answer time; otherwise echo each answer read.
    pub interactive: bool,
    pub style: Style,
    /// Grades free-text answers with the rubric; `None` = self-grading.
    pub grader: Option<Grader>,
    pub scheduler: Scheduler,
    /// `VIBELEARN_EASY_SECS` in ms.
    pub easy_ms: Millis,
}

/// The LLM provider that grades free-text answers, and its time budget per answer.
#[derive(Clone)]
pub struct Grader {
    pub provider: Arc<dyn crate::llm::Provider>,
    pub timeout: std::time::Duration,
}

impl std::fmt::Debug for Grader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Grader({})", self.provider.name())
    }
}

impl Grader {
    /// The remote provider of the one provider decision (`jobs::decide`, as the worker's), if
    /// any: the offline provider cannot grade prose. Checked before use as a job checks it, so
    /// a `claude` CLI that `auto` found but that is not logged in is tried once, not launched
    /// for every free-text answer (issue 41, point 11).
    pub fn from_config(config: &Config) -> Option<Grader> {
        let provider = crate::jobs::decide(config).ok()?.into_checked()?;
        Some(Grader { provider: Arc::from(provider), timeout: config.llm_timeout() })
    }

    fn grade(&self, q: &Question, model: &str, answer: &str) -> Result<crate::learn::rubric::RubricGrade, String> {
        let request = crate::learn::rubric::request(&q.question, q.snippet.as_deref(), model, answer);
        let text = self.provider.complete(&request, self.timeout).map_err(|e| e.to_string())?;
        crate::learn::rubric::parse(&text).map_err(|e| e.to_string())
    }
}

/// What a quiz run did; shared with the Ctrl-C watcher, which prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    pub answered: u32,
    /// Answers rated Again.
    pub again: u32,
    pub correct: u32,
    /// Answers to reflection prompts: kept, neither right nor wrong.
    pub reflections: u32,
    pub streak: Streak,
    /// Questions selected but not answered when the sitting ended.
    pub left: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum QuizError {
    /// Reading or recording failed; answers committed before it are kept.
    #[error("database error (answers given so far are saved): {0}")]
    Db(#[from] rusqlite::Error),
    /// stdin or stdout failed (a closed pipe).
    #[error("terminal error: {0}")]
    Io(#[from] io::Error),
}

/// The command: opens the database, resolves `--session`, runs the quiz on stdin/stdout.
pub fn run(args: &QuizArgs, config: &Config) -> ExitCode {
    if let Some(action) = &args.action {
        return match action {
            QuizAction::Next(next) => api::run_next(next, config),
            QuizAction::Answer(answer) => api::run_answer(answer, config),
        };
    }
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
    let scheduler = match cards::scheduler_for(&conn, config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("vl quiz: cannot read the scheduler's parameters: {e}");
            return ExitCode::FAILURE;
        }
    };
    let options = QuizOptions {
        filter: DueFilter { session, project: args.project.clone(), leeches: args.leeches, ..DueFilter::default() },
        limit: args.limit as usize,
        new_per_day: config.new_per_day() as usize,
        interactive: io::stdin().is_terminal(),
        style: Style { color: io::stdout().is_terminal() },
        grader: Grader::from_config(config),
        scheduler,
        easy_ms: (config.easy_secs() * 1000) as Millis,
    };
    let shared = Arc::new(Mutex::new(Summary::default()));
    watch_ctrl_c(config, &options, Arc::clone(&shared));
    let mut input = io::stdin().lock();
    // Not locked for the whole run: the Ctrl-C watcher writes to stdout too.
    let mut output = io::stdout();
    match run_quiz(&mut conn, &mut input, &mut output, &SystemClock, &options, &shared) {
        Ok(_) => ExitCode::SUCCESS,
        // stdout closed (`vl quiz | head`): nobody is left to tell.
        Err(QuizError::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vl quiz: {e}");
            ExitCode::FAILURE
        }
    }
}

/// On Ctrl-C: print what was saved, what is left and the forecast, then exit 130. A flag set
/// by the signal and a thread that watches it, because a blocking stdin read cannot be woken
/// portably; a 50 ms poll is invisible to a person and costs nothing measurable.
fn watch_ctrl_c(config: &Config, opts: &QuizOptions, shared: Arc<Mutex<Summary>>) {
    let flag = Arc::new(AtomicBool::new(false));
    if signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&flag)).is_err() {
        return; // The default action (end the process) still keeps every committed answer.
    }
    let path = config.db_path();
    let filter = opts.filter.clone();
    let style = opts.style;
    let day = opts.scheduler.day().clone();
    std::thread::spawn(move || {
        while !flag.load(Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let summary = shared.lock().map(|s| *s).unwrap_or_default();
        let mut out = io::stdout();
        let _ = writeln!(out, "\n{}", style.yellow("Interrupted."));
        if let Ok(conn) = db::open_read_only(&path) {
            let now = SystemClock.now_ms();
            let streak = days::streak(&conn, &day, now).unwrap_or_default();
            let _ = print_end(&mut out, style, &conn, &day, now, &filter, &Summary { streak, ..summary });
        }
        let _ = out.flush();
        std::process::exit(130);
    });
}

/// A read-write connection on an up-to-date schema. Migrating is only attempted when the
/// file is behind, so a quiz next to a running worker takes no exclusive lock.
pub fn open(config: &Config) -> Result<Connection, db::DbError> {
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
        Some(None) => match cards::latest_session_with_questions(conn)? {
            Some(id) => Ok(Some(id)),
            None => Err("no session has questions yet — they are written when a session is analysed".to_owned()),
        },
        Some(Some(id)) if cards::session_exists(conn, id)? => Ok(Some(id.clone())),
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
    shared: &Mutex<Summary>,
) -> Result<Summary, QuizError> {
    let now = clock.now_ms();
    let day = opts.scheduler.day();
    let filter = sitting_filter(conn, day, now, &opts.filter, opts.new_per_day)?;
    let queue: VecDeque<Question> = cards::due(conn, now, &filter, opts.limit)?.into();
    if queue.is_empty() {
        nothing_due(conn, out, now, opts)?;
        return Ok(Summary { streak: days::streak(conn, day, now)?, ..Summary::default() });
    }
    print_start(out, opts, &queue)?;
    let mut sitting = Sitting {
        summary: Summary { left: queue.len() as u32, ..Summary::default() },
        shared,
        selected: queue.len(),
        queue,
        learning: Vec::new(),
        asked: HashSet::new(),
        number: 0,
    };
    loop {
        let Some((q, reask)) = next_card(&mut sitting.queue, &mut sitting.learning, clock.now_ms()) else {
            // The queue was built at the start: what fell due since (a learning step within
            // the learn-ahead limit, as `vl quiz next --json` offers it) is asked too.
            if sitting.refill(conn, out, clock.now_ms(), opts)? {
                continue;
            }
            break;
        };
        if !sitting.ask_one(conn, input, out, clock, opts, q, reask)? {
            break;
        }
    }
    let mut summary = sitting.summary;
    summary.left += sitting.learning.len() as u32;
    let now = clock.now_ms();
    summary.streak = days::streak(conn, day, now)?;
    print_end(out, opts.style, conn, day, now, &opts.filter, &summary)?;
    out.flush()?;
    Ok(summary)
}

/// Why the sitting has nothing to ask, and when it will.
fn nothing_due(conn: &Connection, out: &mut dyn Write, now: Millis, opts: &QuizOptions) -> io::Result<()> {
    if opts.filter.leeches {
        return writeln!(out, "No leeches — no card has lapsed {} times.", opts.scheduler.leech_threshold());
    }
    let next = cards::next_due(conn, now, opts.filter.session.as_deref()).map_err(io::Error::other)?;
    match (next, &opts.filter.project) {
        (Some(at), _) => writeln!(
            out,
            "Nothing to review right now — the next question is due in {}.",
            due_in(opts.scheduler.day(), now, at)
        ),
        (None, Some(project)) => {
            writeln!(out, "No questions for project {project:?} — see vl status for what there is.")
        }
        (None, None) => writeln!(out, "No questions yet — they are written when a session is analysed (try vl demo)."),
    }
}

fn print_start(out: &mut dyn Write, opts: &QuizOptions, queue: &VecDeque<Question>) -> io::Result<()> {
    let fresh = queue.iter().filter(|q| q.is_new()).count();
    let relearn = queue.iter().filter(|q| q.card_state.in_steps()).count();
    writeln!(
        out,
        "{} — {} question{}: {relearn} to relearn, {} due for review, {fresh} new. Answers are saved as you go; Ctrl-C stops.",
        opts.style.bold(if opts.filter.leeches { "VibeLearn quiz (leeches)" } else { "VibeLearn quiz" }),
        queue.len(),
        if queue.len() == 1 { "" } else { "s" },
        queue.len() - fresh - relearn,
    )
}

/// One sitting's state: the cards still to ask, those in their learning steps (due at,
/// question), what was asked, and the running summary (shared with the Ctrl-C watcher as
/// soon as an answer is saved).
struct Sitting<'a> {
    queue: VecDeque<Question>,
    /// Questions selected so far, at the start and by [`Sitting::refill`]: at most `--limit`.
    selected: usize,
    learning: Vec<(Millis, Question)>,
    asked: HashSet<String>,
    summary: Summary,
    shared: &'a Mutex<Summary>,
    number: usize,
}

impl Sitting<'_> {
    /// When the sitting has asked everything it selected, asks the database again (the same
    /// selection as at the start, `cards::due`, the day's new-card cap recounted): a card
    /// that fell due meanwhile, or a learning step now within the learn-ahead limit, is asked
    /// in this sitting. Cards already asked are not selected again (`--leeches` selects
    /// leeches whether due or not). `Ok(false)`: nothing more, or `--limit` reached.
    fn refill(
        &mut self,
        conn: &Connection,
        out: &mut dyn Write,
        now: Millis,
        opts: &QuizOptions,
    ) -> Result<bool, QuizError> {
        let room = opts.limit.saturating_sub(self.selected);
        if room == 0 {
            return Ok(false);
        }
        let filter = sitting_filter(conn, opts.scheduler.day(), now, &opts.filter, opts.new_per_day)?;
        let fresh: VecDeque<Question> = cards::due(conn, now, &filter, room + self.asked.len())?
            .into_iter()
            .filter(|q| !self.asked.contains(&q.id))
            .take(room)
            .collect();
        if fresh.is_empty() {
            return Ok(false);
        }
        let n = fresh.len();
        let what = if n == 1 { "1 more question is".to_owned() } else { format!("{n} more questions are") };
        writeln!(out, "\n{}", opts.style.cyan(&format!("{what} due now — asking on.")))?;
        self.selected += n;
        self.summary.left += n as u32;
        self.queue = fresh;
        Ok(true)
    }

    /// Asks `q`, records the answer and queues what it earned (a re-ask, a follow-up).
    /// `Ok(false)`: input ended, the sitting stops.
    #[allow(clippy::too_many_arguments)]
    fn ask_one(
        &mut self,
        conn: &mut Connection,
        input: &mut dyn BufRead,
        out: &mut dyn Write,
        clock: &dyn Clock,
        opts: &QuizOptions,
        q: Question,
        reask: bool,
    ) -> Result<bool, QuizError> {
        let s = opts.style;
        if !reask && !self.asked.insert(q.id.clone()) {
            return Ok(true);
        }
        if let Some(why) = malformed(&q) {
            writeln!(out, "\n{}", s.yellow(&format!("Skipping question {} — it is malformed ({why}).", q.id)))?;
            self.summary.left = self.summary.left.saturating_sub(1);
            return Ok(true);
        }
        self.number += 1;
        show_question(out, s, &q, self.number, reask)?;
        let shown_at = clock.now_ms();
        let Some(judged) = ask(conn, &q, input, out, clock, opts, shown_at)? else {
            writeln!(out, "{}", s.dim("End of input — stopping here."))?;
            // A re-ask left unanswered is still to do (a first ask is counted in `left` already).
            self.summary.left += u32::from(reask);
            return Ok(false);
        };
        let answer = Answer {
            question_id: &q.id,
            text: &judged.text,
            correct: judged.correct,
            rating: judged.rating,
            duration_ms: opts.interactive.then(|| judged.answered_at - shown_at),
        };
        let Some(recorded) = record::record_answer(conn, &answer, &opts.scheduler, clock.now_ms())? else {
            writeln!(out, "{}", s.yellow("This question was deleted meanwhile; the answer was not recorded."))?;
            return Ok(true);
        };
        self.summary.answered += 1;
        self.summary.again += u32::from(judged.rating == Rating::Again && !recorded.reflection);
        self.summary.correct += u32::from(answer.correct);
        self.summary.reflections += u32::from(recorded.reflection);
        if !reask {
            self.summary.left = self.summary.left.saturating_sub(1);
        }
        if let Ok(mut shared) = self.shared.lock() {
            *shared = self.summary;
        }
        if !recorded.reflection {
            feedback(out, s, &q, &judged, &recorded, clock.now_ms(), &opts.scheduler)?;
        }
        self.queue_earned(conn, out, opts, &q, &recorded, clock.now_ms())?;
        Ok(true)
    }

    /// A card still in its steps comes back in this sitting; an earned follow-up comes next.
    fn queue_earned(
        &mut self,
        conn: &Connection,
        out: &mut dyn Write,
        opts: &QuizOptions,
        q: &Question,
        recorded: &Recorded,
        now: Millis,
    ) -> Result<(), QuizError> {
        // A card that just became a leech is suspended: not re-asked, unless leeches are drilled.
        let suspended_now = recorded.reviewed.leech.is_some() && !opts.filter.leeches;
        if recorded.reviewed.card.state.in_steps()
            && !recorded.reflection
            && !suspended_now
            && let Some(again) = cards::question(conn, &q.id)?
        {
            self.learning.push((recorded.reviewed.card.due_at.unwrap_or(now), again));
        }
        if let Some(id) = &recorded.follow_up
            && let Some(follow_up) = cards::question(conn, id)?.filter(|f| !self.asked.contains(&f.id))
        {
            writeln!(out, "  {}", opts.style.cyan("Follow-up question unlocked — it comes next."))?;
            self.queue.push_front(follow_up);
            self.summary.left += 1;
        }
        Ok(())
    }
}

/// The next card: a learning card whose step is due; else the next selected card; else the
/// learning card due first even if its time has not come (it must come back before the
/// sitting ends). The flag says it is a re-ask.
fn next_card(
    queue: &mut VecDeque<Question>,
    learning: &mut Vec<(Millis, Question)>,
    now: Millis,
) -> Option<(Question, bool)> {
    let earliest = learning.iter().enumerate().min_by_key(|(_, (due, _))| *due).map(|(i, (due, _))| (i, *due));
    match earliest {
        Some((i, due)) if due <= now || queue.is_empty() => Some((learning.remove(i).1, true)),
        _ => queue.pop_front().map(|q| (q, false)),
    }
}

/// The end of a sitting (and of a Ctrl-C): what was saved, what is left, the streak and when
/// the next cards fall due.
fn print_end(
    out: &mut dyn Write,
    s: Style,
    conn: &Connection,
    day: &crate::learn::day::LearnerDay,
    now: Millis,
    filter: &DueFilter,
    summary: &Summary,
) -> io::Result<()> {
    let plural = |n: u32, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    // In the words `vl status` uses (`learning::counts`): reflections are neither right nor wrong.
    let answers = Answers {
        answers: i64::from(summary.answered),
        correct: i64::from(summary.correct),
        reflections: i64::from(summary.reflections),
        again: Some(i64::from(summary.again)),
    };
    writeln!(
        out,
        "\n{} {} saved ({}) · {} left · streak {} (longest {})",
        s.bold("Done:"),
        plural(summary.answered, "answer"),
        answers.detail(),
        summary.left,
        term::days(summary.streak.current),
        term::days(summary.streak.longest),
    )?;
    match days::forecast(conn, day, now, filter) {
        Ok(days::Forecast { first: None, .. }) => writeln!(out, "Nothing else is scheduled yet."),
        Ok(f) => {
            let first = f.first.unwrap_or(now);
            writeln!(
                out,
                "Next due: {} later today, {} tomorrow, {} this week — the first in {}.",
                f.today,
                f.tomorrow,
                f.week,
                due_in(day, now, first)
            )
        }
        Err(_) => Ok(()),
    }
}

/// Why a stored question cannot be asked, found before showing it: `check_answer` judges the
/// stored `correct` field before the given answer, so probing with an empty answer reports a
/// malformed question and nothing else.
fn malformed(q: &Question) -> Option<String> {
    match check_answer_in(&q.question_type, q.options.as_deref(), q.correct.as_deref().unwrap_or(""), "", None) {
        Err(AnswerError::BadQuestion(why)) => Some(why),
        _ => None,
    }
}

/// A code_reading, spot_the_bug or open_ended question: answered in prose, rated by the learner.
pub(crate) fn is_free_text(q: &Question) -> bool {
    matches!(check_answer_in(&q.question_type, None, "", "", None), Ok(Verdict::NeedsSelfGrade))
}

fn show_question(out: &mut dyn Write, s: Style, q: &Question, number: usize, reask: bool) -> io::Result<()> {
    let kind = if reask {
        "again (learning step)"
    } else if q.is_leech() {
        "leech"
    } else if q.is_follow_up() {
        "follow-up"
    } else if q.card_state.in_steps() {
        "relearn"
    } else if q.is_new() {
        "new"
    } else {
        "review"
    };
    let heading = format!("Question {number} · {kind} · {} · {}", q.question_type.replace('_', " "), q.difficulty);
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
    show_choices(out, q)?;
    writeln!(out, "{}", s.dim(&format!("({})", answer_hint(q))))
}

/// How to answer `q`, shown under it: the forms its type takes, what follows the answer, and
/// how to say "I don't know" (`learn::answer`), which a reflection prompt does not need.
fn answer_hint(q: &Question) -> String {
    let options = q.options.as_deref().unwrap_or_default();
    let how = match q.question_type.as_str() {
        "multiple_choice" => {
            format!("a letter A–{}, its number, or the option's text", letter(options.len().saturating_sub(1)))
        }
        "ordering" => "the step numbers in the right order, e.g. 2 4 1 3".to_owned(),
        "true_false" => "true or false (t/f, yes/no, y/n)".to_owned(),
        "fill_in_blank" => "the missing text".to_owned(),
        _ if q.is_reflection() => {
            return "your thoughts on one line — a reflection prompt: no model answer follows; it is kept, not graded"
                .to_owned();
        }
        _ if q.model_answer().is_some() => {
            "your answer on one line; the model answer is shown next, then you rate yourself 1–4".to_owned()
        }
        _ => "your answer on one line; there is no model answer, so you rate yourself 1–4".to_owned(),
    };
    format!("{how}; ? if you don't know")
}

/// The options or steps of `q`, numbered as its answer names them.
fn show_choices(out: &mut dyn Write, q: &Question) -> io::Result<()> {
    let options = q.options.as_deref().unwrap_or_default();
    match q.question_type.as_str() {
        "multiple_choice" => {
            for (i, option) in options.iter().enumerate() {
                writeln!(out, "  {}) {option}", letter(i))?;
            }
        }
        "ordering" => {
            for (i, step) in options.iter().enumerate() {
                writeln!(out, "  {}. {step}", i + 1)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn feedback(
    out: &mut dyn Write,
    s: Style,
    q: &Question,
    judged: &Judged,
    recorded: &Recorded,
    now: Millis,
    scheduler: &Scheduler,
) -> io::Result<()> {
    let card = recorded.reviewed.card;
    let due = due_in(scheduler.day(), now, card.due_at.unwrap_or(now));
    let line = if card.state.in_steps() {
        format!("{} — back in {due}, before this sitting ends.", judged.rating.name())
    } else if let Some(offered) = recorded.balanced_from {
        // The buttons said FSRS's interval; `learn::balance` chose a quieter day of its range.
        format!(
            "{} — next review in {due}, not {}: that day has more reviews due.",
            judged.rating.name(),
            term::days(offered)
        )
    } else {
        format!("{} — next review in {due}.", judged.rating.name())
    };
    writeln!(out, "{}", if judged.rating.passed() { s.green(&line) } else { s.red(&line) })?;
    match recorded.reviewed.leech {
        Some(Leech::Reached) => writeln!(
            out,
            "  {}",
            s.yellow(&format!(
                "Leech: {} lapses. The card is suspended and tagged leech; the next quiz job writes a new \
                 question on {} from another angle. Drill it with vl quiz --leeches.",
                card.lapses, q.concept
            ))
        )?,
        Some(Leech::Again) => writeln!(
            out,
            "  {}",
            s.yellow(&format!(
                "Still a leech: {} lapses (warned every {}). Consider rewriting or deleting this card.",
                card.lapses,
                (scheduler.leech_threshold() / 2).max(1)
            ))
        )?,
        None => {}
    }
    if is_free_text(q) {
        return Ok(());
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

/// How long until `at`, as the learner counts it (the terminal and the JSON API alike): a
/// review is due from the start of a learner day, so one due then is "in N days", the days
/// between as the rating buttons count them, not the "1.9 days" until that rollover; anything
/// else (a learning step) is its time from now, and so is anything under a day away: at 03:58
/// a card due at the 04:00 rollover is "in 2 minutes", not "in 1 day".
pub fn due_in(day: &LearnerDay, now: Millis, at: Millis) -> String {
    let days = day.day_of(at) - day.day_of(now);
    if days >= 1 && at == day.start_of(day.day_of(at)) && at.saturating_sub(now) >= DAY_MS {
        term::days(u32::try_from(days).unwrap_or(u32::MAX))
    } else {
        when(at.saturating_sub(now))
    }
}

/// A duration in ms as "2.3 days", "5 hours" or "10 minutes" (a review's fraction of a day
/// matters while it is short).
pub fn when(ms: Millis) -> String {
    const HOUR: Millis = 3_600_000;
    const MINUTE: Millis = 60_000;
    let round = |unit: Millis| (ms + unit / 2) / unit;
    let plural = |n: Millis, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    if ms >= 10 * DAY_MS - HOUR {
        plural(round(DAY_MS), "day")
    } else if ms >= DAY_MS - HOUR / 2 {
        let tenths = (ms * 10 + DAY_MS / 2) / DAY_MS;
        if tenths % 10 == 0 { plural(tenths / 10, "day") } else { format!("{}.{} days", tenths / 10, tenths % 10) }
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
            card_state: Default::default(),
            lapses: 0,
            parent_question_id: None,
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
        assert_eq!(when(3 * DAY_MS + 5), "3 days");
        assert_eq!(when(12 * DAY_MS - 60_000), "12 days");
        assert_eq!(when(2_306_500 * 100), "2.7 days");
        assert_eq!(when(199_281_600), "2.3 days");
        assert_eq!(when(2 * 3_600_000), "2 hours");
        assert_eq!(when(3_600_000 - 1_000), "1 hour");
        assert_eq!(when(10), "1 minute");
    }

    #[test]
    fn a_review_due_from_a_day_s_start_is_told_in_whole_days() {
        let day = LearnerDay::new(jiff::tz::TimeZone::UTC, 4);
        // 20:10 on a learner day; a review 2 days on is due from that day's 04:00 rollover.
        let now = day.start_of(20_000) + 16 * 3_600_000 + 10 * 60_000;
        let review = day.start_of(20_002);
        assert_eq!(when(review - now), "1.3 days", "the time until the rollover");
        assert_eq!(due_in(&day, now, review), "2 days", "as the buttons count it");
        // Under a day away, the hours or minutes, even at a rollover (7 h 50 min here).
        assert_eq!(due_in(&day, now, day.start_of(20_001)), "8 hours");
        let before_rollover = day.start_of(20_001) - 2 * 60_000;
        assert_eq!(due_in(&day, before_rollover, day.start_of(20_001)), "2 minutes");
        // A day and two minutes away, but two learner days on: as the buttons count it.
        assert_eq!(due_in(&day, before_rollover, day.start_of(20_002)), "2 days");
        // Anything else is its time from now: a learning step, or a due time past the rollover.
        assert_eq!(due_in(&day, now, now + 10 * 60_000), "10 minutes");
        assert_eq!(due_in(&day, now, review + 1), "1.3 days");
    }

    #[test]
    fn ratings_read_numbers_names_and_the_override_only_where_offered() {
        assert_eq!(parse_rating(" 3 ", false), Some(Rating::Good));
        assert_eq!(parse_rating("Easy", false), Some(Rating::Easy));
        assert_eq!(parse_rating("o", true), Some(Rating::Good));
        assert_eq!(parse_rating("o", false), None);
        assert_eq!(parse_rating("5", true), None);
        assert_eq!(parse_rating("", true), None);
    }

    #[test]
    fn a_follow_up_without_its_own_model_answer_shows_no_explanation() {
        let mut follow_up = q("open_ended", &[], "");
        follow_up.correct = None;
        follow_up.parent_question_id = Some("parent".into());
        follow_up.explanation = "the parent's explanation".into();
        assert_eq!(follow_up.explanation(), None);
        assert_eq!(q("true_false", &[], "true").explanation(), Some("because"));
    }

    #[test]
    fn a_failed_card_comes_back_before_the_sitting_ends() {
        let mut queue: VecDeque<Question> = [q("true_false", &[], "true")].into();
        queue[0].id = "second".into();
        let mut failed = q("true_false", &[], "true");
        failed.id = "failed".into();
        let mut learning = vec![(10 * 60_000, failed)];
        // Not due yet: the other card first, then the re-ask although its time has not come.
        assert_eq!(next_card(&mut queue, &mut learning, 0).map(|(q, r)| (q.id, r)), Some(("second".into(), false)));
        assert_eq!(next_card(&mut queue, &mut learning, 1).map(|(q, r)| (q.id, r)), Some(("failed".into(), true)));
        assert!(next_card(&mut queue, &mut learning, 2).is_none());
    }
}
