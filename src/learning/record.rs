//! Recording one answer (SPEC §7): the learning loop's one write, shared by `vl quiz`, `vl quiz
//! answer --json` and any other front end.
//!
//! # One answer, one transaction
//! [`record_answer`] writes everything an answer changes in a single `BEGIN IMMEDIATE`
//! transaction: the `quiz_attempts` row, its `review_log` row, the question's FSRS schedule
//! (a review on the least loaded day its fuzz range allows, `learn::balance`; at the leech
//! threshold, its `leech` tag and suspension), the concept's
//! `concept_profiles` row, the day's `daily_streaks` row and, when earned, the follow-up
//! question. It commits before the quiz prints the feedback, so an interrupted quiz (Ctrl-C,
//! EOF, a closed terminal) keeps every answer it showed feedback for and nothing half-written.
//! IMMEDIATE rather than DEFERRED: the transaction reads then writes, and a deferred read lock
//! upgraded while the worker writes fails with SQLITE_BUSY at once instead of waiting out the
//! busy timeout.
//!
//! # Beside the worker's writer (issue 27, point 10)
//! "Only the writer writes" is a rule inside the worker process: it keeps SQLITE_BUSY off the
//! hot path and makes group commit possible. The quiz is another process, and routing its
//! writes to the worker would need a worker (the quiz works without one) and an HTTP route.
//! It is safe to write here because both sides take SQLite's write lock the same way: the
//! writer's batches and this transaction both `BEGIN IMMEDIATE` (never a read lock upgraded
//! later, the one case where SQLite answers BUSY without waiting), both connections wait up to
//! `db::BUSY_TIMEOUT` (5 s) for the lock, and this transaction holds it for a few
//! milliseconds (one answer: about ten statements). So the writer at worst waits that long
//! once per answer, and no write of either side fails or is lost. The test
//! `quiz_answers_beside_a_busy_worker_lose_nothing` drives both at once.
//!
//! # Follow-ups
//! A follow-up (`questions.follow_up`, written for junior questions) becomes its own row:
//! `question_type = 'open_ended'` (free text, self-graded; the schema has no CHECK on the type
//! and every reader already treats `open_ended` as free text), `difficulty = 'mid'` (SPEC
//! §6.4 calls it a mid-level follow-up), `parent_question_id` set, `correct` NULL and an empty
//! `explanation` (there is no model answer, and the parent's explanation answers another
//! question, so the quiz shows none: SPEC §7), the parent's snippet (with its blank filled in
//! for a fill-in-the-blank parent) and the tag `follow-up`. It is inserted with `due_at = now`,
//! which is what makes `learning::cards::due_questions` pick it up if the quiz ends before it
//! is asked.
//!
//! A follow-up without its own model answer is a *reflection prompt*, not a card (SPEC §7):
//! its answer is kept (`quiz_attempts`, the day's streak) but it is never scheduled — no FSRS
//! state, no review-log row (the re-fit would learn from a grade with no key), `due_at` back
//! to NULL (a follow-up is never a new card), and no effect on the concept's level. One with a
//! model answer is scheduled like any card.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde_json::Value;

use crate::analysis::questions::normalized_text_hash;
use crate::clock::Millis;
use crate::db::fsrs_migration::save_card;
use crate::learn::balance::least_loaded;
use crate::learn::mastery::{self, Level, Mastery};
use crate::learn::schedule::{Card, Rating, Reviewed, Scheduler};
use crate::learning::cards::{FOLLOW_UP_TAG, card_from_row, stored_count};

/// What the developer answered, judged.
#[derive(Debug, Clone)]
pub struct Answer<'a> {
    pub question_id: &'a str,
    /// The text typed (for a self-graded answer, the answer, not the grade).
    pub text: &'a str,
    pub correct: bool,
    pub rating: Rating,
    /// From the question shown to the rating given, when measured.
    pub duration_ms: Option<Millis>,
}

/// What one answer changed.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub reviewed: Reviewed,
    pub before: Mastery,
    pub after: Mastery,
    /// The follow-up to ask next, when this answer earned one that was never answered.
    pub follow_up: Option<String>,
    /// The question was a reflection prompt (a follow-up without a model answer): kept, not
    /// scheduled (module doc).
    pub reflection: bool,
    /// The whole-day interval the rating offered (FSRS's), when `learn::balance` moved the
    /// review to a less loaded day of its range.
    pub balanced_from: Option<u32>,
}

/// The question's row, as recording needs it.
struct Row {
    card: Card,
    concept_id: String,
    session_id: String,
    normalized_name: String,
    concept_name: String,
    category: String,
    concept_difficulty: String,
    difficulty: String,
    question_type: String,
    correct: Option<String>,
    snippet: Option<String>,
    follow_up: Option<String>,
    tags: String,
    /// A spot_the_bug's planted edit (`{"line", "original", "mutated"}`), to show the
    /// follow-up the repaired code.
    mutation: Option<String>,
    parent_question_id: Option<String>,
}

impl Row {
    /// A follow-up without its own model answer (module doc).
    fn is_reflection(&self) -> bool {
        self.parent_question_id.is_some() && self.correct.as_deref().is_none_or(|c| c.trim().is_empty())
    }
}

/// Records one answer (module doc: one transaction). `Ok(None)`: the question no longer
/// exists (its session was deleted while the quiz ran); nothing was written.
pub fn record_answer(
    conn: &mut Connection,
    answer: &Answer<'_>,
    scheduler: &Scheduler,
    now: Millis,
) -> rusqlite::Result<Option<Recorded>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let Some(row) = load_row(&tx, answer.question_id)? else {
        return Ok(None);
    };
    let reflection = row.is_reflection();
    let mut reviewed = scheduler.review(&row.card, answer.rating, now);
    tx.prepare_cached(
        "INSERT INTO quiz_attempts (question_id, answer, correct, quality, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![answer.question_id, answer.text, answer.correct, legacy_quality(answer.rating), now])?;
    let attempt_id = tx.last_insert_rowid();
    let before = load_mastery(&tx, &row)?;
    let mut balanced_from = None;
    let after = if reflection {
        // Asked once, never scheduled (module doc).
        tx.prepare_cached("UPDATE questions SET due_at = NULL WHERE id = ?1")?.execute([answer.question_id])?;
        reviewed = Reviewed { card: Card { due_at: None, ..row.card }, lapse: false, leech: None, ..reviewed };
        before
    } else {
        let offered = reviewed.log.scheduled_days;
        reviewed = balanced(&tx, scheduler, reviewed, answer.question_id, now)?;
        balanced_from = (reviewed.log.scheduled_days != offered).then_some(offered as u32);
        save_card(&tx, answer.question_id, &reviewed.card, reviewed.leech.is_some())?;
        let log = &reviewed.log;
        crate::db::fsrs_migration::insert_review_log(
            &tx,
            answer.question_id,
            Some(attempt_id),
            log,
            answer.duration_ms,
            now,
        )?;
        let after = mastery::record(&before, answer.correct);
        save_mastery(&tx, &row, &after, now)?;
        after
    };
    tx.prepare_cached(
        "INSERT INTO daily_streaks (day, answers, correct) VALUES (?1, 1, ?2) \
         ON CONFLICT (day) DO UPDATE SET answers = answers + 1, correct = correct + excluded.correct",
    )?
    .execute(params![scheduler.day().day_of(now), i64::from(answer.correct)])?;
    // "Junior questions answered right while still junior": the level the concept had when
    // the question was answered, so the answer that promotes a concept still earns its follow-up.
    let earns_follow_up = answer.correct && row.difficulty == "junior" && before.level == Level::Junior;
    let follow_up = match row.follow_up.as_deref().map(str::trim).filter(|t| earns_follow_up && !t.is_empty()) {
        Some(text) => insert_follow_up(&tx, answer.question_id, &row, text, now)?,
        None => None,
    };
    // The card changed (and a follow-up may have joined it): the concept's kept standing was
    // forgotten by migration 0020's triggers; judged again here, the next read finds it.
    crate::learning::kept_standings::keep(&tx, scheduler, now, &[&row.normalized_name])?;
    tx.commit()?;
    Ok(Some(Recorded { reviewed, before, after, follow_up, reflection, balanced_from }))
}

/// A review moved to the least loaded day of its fuzz range (`learn::balance`, Anki's load
/// balancer): the reviews already due on each of those learner days, over every project and
/// this card aside. Learning steps and short intervals are left as they are.
fn balanced(
    conn: &Connection,
    scheduler: &Scheduler,
    reviewed: Reviewed,
    question_id: &str,
    now: Millis,
) -> rusqlite::Result<Reviewed> {
    let Some(range) = scheduler.balance_range(&reviewed) else { return Ok(reviewed) };
    let (from, to) = (scheduler.due_on(now, *range.start()), scheduler.due_on(now, range.end() + 1));
    let today = scheduler.day().day_of(now);
    let mut loads: HashMap<i64, usize> = HashMap::new();
    let mut stmt = conn.prepare_cached(
        "SELECT due_at FROM questions WHERE card_state = 'review' AND suspended = 0 \
         AND due_at >= ?1 AND due_at < ?2 AND id <> ?3",
    )?;
    for due in stmt.query_map(params![from, to, question_id], |r| r.get::<_, Millis>(0))? {
        *loads.entry(scheduler.day().day_of(due?) - today).or_default() += 1;
    }
    let day = least_loaded(range, reviewed.log.scheduled_days, |d| loads.get(&d).copied().unwrap_or(0));
    Ok(scheduler.on_day(reviewed, now, day))
}

/// The SM-2 quality column of `quiz_attempts`, kept filled for readers of the old shape
/// (the upstream's attempt records): Again 1, Hard 3, Good 4, Easy 5.
fn legacy_quality(rating: Rating) -> u8 {
    match rating {
        Rating::Again => 1,
        Rating::Hard => 3,
        Rating::Good => 4,
        Rating::Easy => 5,
    }
}

fn load_row(conn: &Connection, question_id: &str) -> rusqlite::Result<Option<Row>> {
    conn.prepare_cached(
        "SELECT q.card_state, q.learning_step, q.stability, q.fsrs_difficulty, q.due_at, q.last_review_at, q.reps, \
                q.lapses, q.concept_id, q.session_id, c.normalized_name, c.name, \
                c.category, c.difficulty, q.difficulty, q.snippet, q.follow_up, q.tags, q.question_type, q.correct, \
                q.grounding_mutation, q.parent_question_id \
         FROM questions q JOIN concepts c ON c.id = q.concept_id WHERE q.id = ?1",
    )?
    .query_row([question_id], |r| {
        Ok(Row {
            card: card_from_row(r)?,
            concept_id: r.get(8)?,
            session_id: r.get(9)?,
            normalized_name: r.get(10)?,
            concept_name: r.get(11)?,
            category: r.get(12)?,
            concept_difficulty: r.get(13)?,
            difficulty: r.get(14)?,
            snippet: r.get(15)?,
            follow_up: r.get(16)?,
            tags: r.get(17)?,
            question_type: r.get(18)?,
            correct: r.get(19)?,
            mutation: r.get(20)?,
            parent_question_id: r.get(21)?,
        })
    })
    .optional()
}

/// The concept's record before this answer; a concept without a profile row (created by an
/// older version, or removed) starts at its own difficulty, capped at mid by `Mastery::new`.
fn load_mastery(conn: &Connection, row: &Row) -> rusqlite::Result<Mastery> {
    let seed = row.concept_difficulty.parse::<Level>().unwrap_or_default();
    let stored = conn
        .prepare_cached(
            "SELECT level, correct_answers, incorrect_answers, correct_streak FROM concept_profiles WHERE normalized_name = ?1",
        )?
        .query_row([&row.normalized_name], |r| {
            let level: String = r.get(0)?;
            let correct = stored_count(r.get(1)?);
            Ok(Mastery {
                attempts: correct.saturating_add(stored_count(r.get(2)?)),
                correct,
                streak: stored_count(r.get(3)?),
                level: level.parse().unwrap_or(seed),
            })
        })
        .optional()?;
    Ok(stored.unwrap_or_else(|| Mastery::new(seed)))
}

/// Upserts the profile. `last_seen_at` keeps its meaning (when the concept was last met in a
/// session, written by `analyze_concepts`); a row created here starts it at the answer time.
/// `mastery_score` is no longer written (a new row gets 0): mastery is read live from the
/// cards (`learning::mastery`), never from a score stored at the last answer.
fn save_mastery(conn: &Connection, row: &Row, m: &Mastery, now: Millis) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO concept_profiles (normalized_name, concept_name, category, level, mastery_score, encounter_count, \
           correct_answers, incorrect_answers, correct_streak, last_seen_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, (SELECT COUNT(DISTINCT session_id) FROM concepts WHERE normalized_name = ?1), \
           ?6, ?7, ?8, ?9) \
         ON CONFLICT (normalized_name) DO UPDATE SET level = excluded.level, \
           correct_answers = excluded.correct_answers, incorrect_answers = excluded.incorrect_answers, \
           correct_streak = excluded.correct_streak",
    )?
    .execute(params![
        row.normalized_name,
        row.concept_name,
        row.category,
        m.level.as_str(),
        0.0,
        m.correct,
        m.attempts.saturating_sub(m.correct),
        m.streak,
        now
    ])?;
    Ok(())
}

/// `code` with a planted edit reverted; unchanged when the edit is unknown or not found.
fn repaired(code: &str, mutation: Option<&str>) -> String {
    let edit: Option<Value> = mutation.and_then(|m| serde_json::from_str(m).ok());
    let text = |key: &str| {
        edit.as_ref().and_then(|e| e.get(key)).and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty())
    };
    match (text("mutated"), text("original")) {
        (Some(mutated), Some(original)) if code.contains(mutated) => code.replacen(mutated, original, 1),
        _ => code.to_owned(),
    }
}

/// Tags that say what happened to one card, not what it is about: a follow-up is a new card
/// and starts without them (a leech's follow-up is no leech, and no re-teaching question).
const STATE_TAGS: [&str; 2] = [crate::db::fsrs_migration::LEECH_TAG, crate::llm::offline::RETEACH_TAG];

/// A follow-up's tags: its parent's topic tags, without [`STATE_TAGS`], and `follow-up`.
fn follow_up_tags(parent_tags: &str) -> Vec<String> {
    let mut tags: Vec<String> = serde_json::from_str::<Vec<String>>(parent_tags)
        .unwrap_or_default()
        .into_iter()
        .filter(|t| !STATE_TAGS.contains(&t.as_str()) && t != FOLLOW_UP_TAG)
        .collect();
    tags.push(FOLLOW_UP_TAG.to_owned());
    tags
}

/// The follow-up with this text, and whether it was ever answered: looked up inside the
/// answer's write transaction, so its attempts are found by migration 0017's index on
/// `quiz_attempts (question_id)`, not by reading every answer ever given.
const FOLLOW_UP_ANSWERED: &str = "SELECT q.id, EXISTS (SELECT 1 FROM quiz_attempts a WHERE a.question_id = q.id) FROM questions q \
     WHERE q.concept_id = ?1 AND q.question_type = 'open_ended' AND q.text_hash = ?2";

/// Inserts (or finds) the follow-up of `parent_id`; returns its id when it was never
/// answered, so it is asked now. A follow-up already answered keeps its own schedule.
fn insert_follow_up(
    conn: &Connection,
    parent_id: &str,
    row: &Row,
    text: &str,
    now: Millis,
) -> rusqlite::Result<Option<String>> {
    let text_hash = normalized_text_hash(text);
    let tags = follow_up_tags(&row.tags);
    // The parent's code gives the follow-up its context; a fill-in-the-blank snippet is shown
    // completed, since its blank was the parent's question, not this one's.
    // A spot_the_bug snippet is shown repaired: the bug was the parent's question, and a
    // follow-up about correct code must not quote the planted mistake as if it were the code.
    let snippet = match (row.question_type.as_str(), &row.snippet, &row.correct) {
        ("fill_in_blank", Some(code), Some(answer)) => Some(code.replacen("___", answer, 1)),
        ("spot_the_bug", Some(code), _) => Some(repaired(code, row.mutation.as_deref())),
        _ => row.snippet.clone(),
    };
    conn.prepare_cached(
        "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, snippet, question, options, correct, \
           explanation, follow_up, tags, text_hash, parent_question_id, due_at, created_at) \
         VALUES (?1, ?2, ?3, 'open_ended', 'mid', ?4, ?5, NULL, NULL, '', NULL, ?6, ?7, ?8, ?9, ?9) ON CONFLICT DO NOTHING",
    )?
    .execute(params![
        format!("{parent_id}-follow-up"),
        row.concept_id,
        row.session_id,
        snippet,
        text,
        serde_json::to_string(&tags).unwrap_or_else(|_| "[]".into()),
        text_hash,
        parent_id,
        now
    ])?;
    // The row may predate this answer (inserted by an earlier run, or the same text exists).
    let found: Option<(String, bool)> = conn
        .prepare_cached(FOLLOW_UP_ANSWERED)?
        .query_row(params![row.concept_id, text_hash], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    match found {
        Some((id, false)) => {
            conn.prepare_cached("UPDATE questions SET due_at = MIN(COALESCE(due_at, ?2), ?2) WHERE id = ?1")?
                .execute(params![id, now])?;
            Ok(Some(id))
        }
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_answered_alike_fall_due_on_different_days_of_their_range() {
        let (_dir, mut conn) = crate::db::testing::with(crate::db::testing::SESSION_AND_CONCEPT);
        let now: Millis = 1_780_000_000_000;
        let scheduler = Scheduler::default();
        let (mut days, mut moved_from) = (Vec::new(), Vec::new());
        for i in 0..6 {
            let id = format!("q{i}");
            conn.execute(
                "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, question, explanation, \
                 tags, text_hash, created_at) VALUES (?1, 'c', 's', 'true_false', 'mid', ?1, 'e', '[]', ?1, 1)",
                [&id],
            )
            .unwrap();
            // Easy on a new card: FSRS says 8 days, which Anki's fuzz lets move to 6..=10.
            let answer =
                Answer { question_id: &id, text: "true", correct: true, rating: Rating::Easy, duration_ms: None };
            let recorded = record_answer(&mut conn, &answer, &scheduler, now).unwrap().unwrap();
            let due = recorded.reviewed.card.due_at.unwrap();
            assert_eq!(due, scheduler.due_on(now, recorded.reviewed.log.scheduled_days as i64), "from the day's start");
            days.push(recorded.reviewed.log.scheduled_days as i64);
            moved_from.push(recorded.balanced_from);
        }
        // The first on FSRS's own 8, the next on the emptiest days nearest it; the sixth, all
        // days holding one, back on 8.
        assert_eq!(days, [8, 7, 9, 6, 10, 8], "{days:?}");
        // What the buttons offered is kept where the day moved, for the learner to be told.
        assert_eq!(moved_from, [None, Some(8), Some(8), Some(8), Some(8), None]);
        let logged: Vec<f64> = conn
            .prepare("SELECT scheduled_days FROM review_log ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(logged, [8.0, 7.0, 9.0, 6.0, 10.0, 8.0], "the review log keeps the day chosen");
    }

    #[test]
    fn a_leech_s_follow_up_starts_without_its_parent_s_state_tags() {
        let (_dir, mut conn) = crate::db::testing::with(crate::db::testing::SESSION_AND_CONCEPT);
        conn.execute_batch(
            "UPDATE concepts SET difficulty = 'junior';
             INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, question, correct, \
               explanation, follow_up, tags, text_hash, created_at, card_state, lapses) \
             VALUES ('p', 'c', 's', 'true_false', 'junior', 'p', 'true', 'e', 'Why does it hold?', \
               '[\"hooks\",\"leech\",\"reteach\"]', 'p', 1, 'review', 8);",
        )
        .unwrap();
        let answer = Answer { question_id: "p", text: "t", correct: true, rating: Rating::Good, duration_ms: None };
        let recorded = record_answer(&mut conn, &answer, &Scheduler::default(), 1_780_000_000_000).unwrap().unwrap();
        let id = recorded.follow_up.expect("a right junior answer earns the follow-up");
        let tags: String = conn.query_row("SELECT tags FROM questions WHERE id = ?1", [&id], |r| r.get(0)).unwrap();
        assert_eq!(tags, r#"["hooks","follow-up"]"#, "the topic stays, the parent's state does not");
    }

    #[test]
    fn migration_17_takes_the_copied_leech_tag_off_old_follow_ups() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("t.db")).unwrap();
        for (version, _, sql) in crate::db::migrate::MIGRATIONS.iter().filter(|(v, _, _)| *v <= 16) {
            conn.execute_batch(sql).unwrap();
            conn.pragma_update(None, "user_version", version).unwrap();
        }
        conn.execute_batch(crate::db::testing::SESSION_AND_CONCEPT).unwrap();
        let insert = |id: &str, parent: Option<&str>, lapses: i64| {
            conn.execute(
                "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, question, explanation, \
                 tags, text_hash, created_at, parent_question_id, lapses) \
                 VALUES (?1, 'c', 's', 'open_ended', 'mid', ?1, '', '[\"hooks\",\"leech\",\"follow-up\"]', ?1, 1, ?2, ?3)",
                params![id, parent, lapses],
            )
            .unwrap();
        };
        insert("leech", None, 8);
        insert("copied", Some("leech"), 0);
        insert("own-lapses", Some("leech"), 8);
        crate::db::migrate(&mut conn).unwrap();
        let tags = |id: &str| -> String {
            conn.query_row("SELECT tags FROM questions WHERE id = ?1", [id], |r| r.get(0)).unwrap()
        };
        assert_eq!(tags("copied"), r#"["hooks","follow-up"]"#);
        assert_eq!(tags("leech"), r#"["hooks","leech","follow-up"]"#, "a leech keeps its tag");
        assert_eq!(tags("own-lapses"), r#"["hooks","leech","follow-up"]"#, "a follow-up that lapsed itself too");
    }

    #[test]
    fn a_follow_up_s_answers_are_found_by_an_index() {
        let (_dir, conn) = crate::db::testing::fresh();
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {FOLLOW_UP_ANSWERED}"))
            .unwrap()
            .query_map(params!["c", "h"], |r| r.get(3))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(plan.iter().any(|step| step.contains("INDEX quiz_attempts_question")), "{plan:?}");
        assert!(!plan.iter().any(|step| step.starts_with("SCAN a")), "{plan:?}");
    }

    #[test]
    fn a_spot_the_bug_follow_up_quotes_the_repaired_code() {
        let code = "async function f() {\n  const items = getCart(id);\n}";
        let edit =
            r#"{"line":2,"original":"  const items = await getCart(id);","mutated":"  const items = getCart(id);"}"#;
        assert_eq!(repaired(code, Some(edit)), "async function f() {\n  const items = await getCart(id);\n}");
        assert_eq!(repaired(code, None), code);
        assert_eq!(repaired(code, Some("not json")), code);
    }
}
