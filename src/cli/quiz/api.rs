//! `vl quiz next --json` and `vl quiz answer ID ANSWER [--rating N] --json` (SPEC §7): the quiz
//! as a JSON API for IDE front ends, such as the Claude Code plugin's `/vibelearn:quiz`.
//!
//! - `next` prints the next due card without its answer: `{"question": {…}|null, "due":
//!   int, "next_due_at": int|null, "next_due_in": str|null}`.
//! - `answer` grades an objective answer (the suggested rating stands unless `--rating`
//!   overrides it), schedules the card, and prints `{"recorded": true, "correct", "rating",
//!   "suggested_rating", "expected", "explanation", "card_state", "next_due_at",
//!   "next_due_in", "leech", "due_now"}`. A free-text answer without `--rating` records
//!   nothing and prints `{"recorded": false, "needs_rating": true, "model_answer", "rubric"}`,
//!   so the front end (the model, in Claude Code) grades it by the rubric and answers again
//!   with `--rating`. An explicit don't-know ("no idea", "?", "skip", …:
//!   `learn::answer::is_dont_know`) on any card is recorded at once as a miss rated Again,
//!   whatever `--rating` says, with `"dont_know": true` and the answer in `expected`. An
//!   unreadable answer prints `{"error": "unreadable", "message"}` and exits 1, as does an
//!   unknown id (`"not_found"`).
//!
//! When nothing is due now, `next` still offers a learning card due within the learn-ahead
//! limit (20 min, `learning::cards`), so its steps finish in the same sitting; when nothing is
//! due even so, `next_due_at` says when the next card is.
//!
//! The same `learning` functions as the interactive quiz write the answer, in one transaction.
//! The clock is `Config::now_ms` (a debug build's `VIBELEARN_DEBUG_NOW_MS` sets it, for the
//! learning simulation).

use std::process::ExitCode;

use rusqlite::Connection;
use serde_json::{Value, json};

use super::{due_in, open, sitting_filter};
use crate::cli::args::{QuizAnswerArgs, QuizNextArgs};
use crate::clock::Millis;
use crate::config::Config;
use crate::learn::answer::{AnswerError, Verdict, check_answer_in};
use crate::learn::schedule::Scheduler;
use crate::learn::schedule::{Leech, Rating};
use crate::learning::cards::{self, DueFilter, Question};
use crate::learning::record::{self, Answer};

/// `vl quiz next --json`.
pub fn run_next(args: &QuizNextArgs, config: &Config) -> ExitCode {
    let filter = DueFilter { session: args.session.clone(), project: args.project.clone(), ..DueFilter::default() };
    respond(config, |conn| {
        let scheduler = cards::scheduler_for(conn, config)?;
        next(conn, &scheduler, config.now_ms(), &filter, config.new_per_day() as usize).map(Ok)
    })
}

/// `vl quiz answer ID ANSWER [--rating N] --json`.
pub fn run_answer(args: &QuizAnswerArgs, config: &Config) -> ExitCode {
    respond(config, |conn| {
        let scheduler = cards::scheduler_for(conn, config)?;
        let rating = args.rating.and_then(|n| Rating::from_number(i64::from(n)));
        answer(conn, &scheduler, &args.id, &args.answer, rating, config.now_ms(), config.new_per_day() as usize)
    })
}

/// Prints one JSON value; `Err` values are printed too, and exit 1.
fn respond(config: &Config, body: impl FnOnce(&mut Connection) -> rusqlite::Result<Result<Value, Value>>) -> ExitCode {
    if !config.db_path().exists() {
        println!(
            "{}",
            json!({"question": null, "due": 0, "next_due_at": null, "next_due_in": null,
                               "message": super::NO_SESSIONS})
        );
        return ExitCode::SUCCESS;
    }
    let result =
        open(config).map_err(|e| json!({"error": "database", "message": e.to_string()})).and_then(|mut conn| {
            body(&mut conn).unwrap_or_else(|e| Err(json!({"error": "database", "message": e.to_string()})))
        });
    match result {
        Ok(value) => {
            println!("{value}");
            ExitCode::SUCCESS
        }
        Err(value) => {
            println!("{value}");
            ExitCode::FAILURE
        }
    }
}

/// The next card, without its answer.
pub fn next(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
    filter: &DueFilter,
    new_per_day: usize,
) -> rusqlite::Result<Value> {
    let filter = sitting_filter(conn, scheduler.day(), now, filter, new_per_day)?;
    let first = cards::due(conn, now, &filter, 1)?;
    let next_due = cards::next_due(conn, now, filter.session.as_deref())?;
    Ok(json!({
        "question": first.first().map(public),
        // As `vl status` and the statusline count it (`cards::due_now`), not capped at a page.
        "due": cards::due_now(conn, now, &filter)?.total(),
        "next_due_at": next_due,
        "next_due_in": next_due.map(|at| due_in(scheduler.day(), now, at)),
    }))
}

/// A question as the learner may see it before answering.
fn public(q: &Question) -> Value {
    let free_text = matches!(check_answer_in(&q.question_type, None, "", "", None), Ok(Verdict::NeedsSelfGrade));
    json!({
        "id": q.id,
        "concept": q.concept,
        "question_type": q.question_type,
        "difficulty": q.difficulty,
        "snippet": q.snippet,
        "question": q.question,
        "options": q.options,
        "card_state": q.card_state.as_str(),
        "free_text": free_text,
        "reflection": q.is_reflection(),
        "how_to_answer": match q.question_type.as_str() {
            "multiple_choice" => "a letter, the option's number, or its text",
            "true_false" => "true or false",
            "ordering" => "the step numbers in order, e.g. 2,4,1,3",
            "fill_in_blank" => "the missing text",
            _ if q.is_reflection() => "free text; a reflection prompt: kept, not graded, and no model answer follows",
            _ => "free text; the reply gives the model answer and the rubric, then answer again with --rating 1-4",
        },
        "dont_know": "answer \"?\" or \"no idea\": recorded as a miss (Again) and the answer is shown",
    })
}

/// Grades, schedules and records one answer.
pub fn answer(
    conn: &mut Connection,
    scheduler: &Scheduler,
    id: &str,
    text: &str,
    rating: Option<Rating>,
    now: Millis,
    new_per_day: usize,
) -> rusqlite::Result<Result<Value, Value>> {
    let Some(q) = cards::question(conn, id)? else {
        return Ok(Err(not_found(id)));
    };
    let correct = q.correct.as_deref().unwrap_or("");
    let verdict = match check_answer_in(&q.question_type, q.options.as_deref(), correct, text, q.snippet.as_deref()) {
        Ok(v) => v,
        Err(AnswerError::Unreadable(hint)) => {
            return Ok(Err(json!({"error": "unreadable", "message": hint})));
        }
        Err(AnswerError::BadQuestion(why)) => {
            return Ok(Err(json!({"error": "malformed_question", "message": why})));
        }
    };
    let Some(graded) = Graded::of(&q, verdict, rating) else {
        return Ok(Ok(needs_rating(&q)));
    };
    let record = Answer { question_id: &q.id, text, correct: graded.correct, rating: graded.rating, duration_ms: None };
    let Some(recorded) = record::record_answer(conn, &record, scheduler, now)? else {
        return Ok(Err(not_found(id)));
    };
    let filter = sitting_filter(conn, scheduler.day(), now, &DueFilter::default(), new_per_day)?;
    let due_now = cards::due_now(conn, now, &filter)?.total();
    Ok(Ok(recorded_reply(&q, &graded, &recorded, scheduler, now, due_now)))
}

fn not_found(id: &str) -> Value {
    json!({"error": "not_found", "message": format!("no question {id:?}")})
}

/// An answer's verdict, the rating it suggests and the rating it gets.
struct Graded {
    verdict: Verdict,
    suggested: Option<Rating>,
    rating: Rating,
    /// The answer's, not the rating's: a wrong answer rated Hard is still wrong; rated Good or
    /// Easy it is the learner's "I was right". A don't-know is a miss whatever the rating.
    correct: bool,
}

impl Graded {
    /// `None`: a free-text answer without `--rating`, for the front end to grade.
    fn of(q: &Question, verdict: Verdict, given: Option<Rating>) -> Option<Graded> {
        // A reflection prompt is kept, not graded or scheduled: it needs no rating, and a
        // don't-know is kept like any other answer to it.
        if q.is_reflection() {
            return Some(Graded { verdict, suggested: None, rating: Rating::Good, correct: false });
        }
        let suggested = match verdict {
            Verdict::Correct => Some(Rating::Good),
            Verdict::Wrong | Verdict::DontKnow => Some(Rating::Again),
            Verdict::NeedsSelfGrade => None,
        };
        // "I don't know" is rated Again, even with another --rating (SPEC §7, issue 41).
        let rating = if verdict == Verdict::DontKnow { Rating::Again } else { given.or(suggested)? };
        let correct = match verdict {
            Verdict::Correct => true,
            Verdict::Wrong => rating >= Rating::Good,
            Verdict::NeedsSelfGrade => rating.passed(),
            Verdict::DontKnow => false,
        };
        Some(Graded { verdict, suggested, rating, correct })
    }
}

/// A free-text answer not yet rated: the model answer and the rubric to grade it by.
fn needs_rating(q: &Question) -> Value {
    json!({
        "recorded": false,
        "needs_rating": true,
        "question_id": q.id,
        "model_answer": q.model_answer(),
        "explanation": q.explanation(),
        "rubric": crate::learn::rubric::DIMENSIONS.iter()
            .map(|(name, weight)| json!({"dimension": name, "weight": weight})).collect::<Vec<_>>(),
        "message": "grade the answer against the model answer with the rubric (0-5 per dimension, \
                    correctness weighs most), then call again with --rating 1-4 \
                    (1 wrong, 2 right with gaps, 3 right, 4 right and complete)",
    })
}

/// What `vl quiz answer --json` prints once the answer is recorded.
fn recorded_reply(
    q: &Question,
    graded: &Graded,
    recorded: &record::Recorded,
    scheduler: &Scheduler,
    now: Millis,
    due_now: usize,
) -> Value {
    let card = recorded.reviewed.card;
    let dont_know = graded.verdict == Verdict::DontKnow && !recorded.reflection;
    json!({
        "recorded": true,
        "question_id": q.id,
        "correct": match graded.verdict {
            Verdict::Correct => Some(true),
            Verdict::Wrong | Verdict::DontKnow if !recorded.reflection => Some(false),
            _ => None,
        },
        "dont_know": dont_know,
        "reflection": recorded.reflection,
        "rating": graded.rating.number(),
        "rating_name": graded.rating.name(),
        "suggested_rating": graded.suggested.map(Rating::number),
        "expected": q.model_answer().map(|_| super::expected(q)),
        "explanation": q.explanation(),
        "card_state": card.state.as_str(),
        "next_due_at": card.due_at,
        "next_due_in": card.due_at.map(|at| due_in(scheduler.day(), now, at)),
        // The interval the rating offered, in days, when the load balancer moved the review to
        // a quieter day of its range (`next_due_in` is the day it got); null otherwise.
        "moved_from_days": recorded.balanced_from,
        "lapses": card.lapses,
        "leech": recorded.reviewed.leech.map(|l| match l { Leech::Reached => "reached", Leech::Again => "again" }),
        "follow_up": recorded.follow_up,
        "due_now": due_now,
    })
}
