//! `vl quiz`, `vl status` and `vl gaps` as child processes on a database the real pipeline
//! wrote: the recorded Next.js cart session replayed through `vl hook` processes into a worker
//! with the offline provider. The pipeline runs once per test binary; each test gets a copy
//! of the resulting database (`VACUUM INTO`) in a fresh directory.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use vibelearn::sample::SampleSession;

use crate::util::{TempDir, WorkerProcess, free_port, vl, wait_for};

const CLAUDE_SESSION: &str = include_str!("fixtures/sessions/nextjs-cart.json");
const DAY_MS: i64 = 86_400_000;
mod learning;
mod sim;
mod sitting;

/// A due date no test reaches: "not due".
const FAR_FUTURE: i64 = 4_000_000_000_000;

/// The analysed database and its session id, built once.
fn template() -> &'static (Vec<u8>, String) {
    static TEMPLATE: OnceLock<(Vec<u8>, String)> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let dir = TempDir::new();
        let data = dir.path().join("data");
        let project = dir.path().join("shop");
        std::fs::create_dir_all(&data).unwrap();
        let mut worker = WorkerProcess::start(&data);
        let session = SampleSession::parse(CLAUDE_SESSION).unwrap();
        session.materialize(&project).unwrap();
        let mut session_id = String::new();
        for step in &session.steps {
            let input = session.prepare_step(step, &project).unwrap();
            if let Some(id) = input["session_id"].as_str() {
                session_id = id.to_owned();
            }
            let mut child = vl(&data, worker.port)
                .args(["hook", "claude-code", &step.event])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
            assert!(child.wait().unwrap().success());
        }
        let http = worker.http();
        let path = format!("/api/vibelearn/sessions/{session_id}/pipeline");
        wait_for("the pipeline to succeed", Duration::from_secs(60), || {
            let (_, body) = http.get(&path).unwrap();
            let steps = body["steps"].as_array().cloned().unwrap_or_default();
            assert!(steps.iter().all(|s| !matches!(s["state"].as_str(), Some("dead" | "cancelled"))), "{body}");
            !steps.is_empty() && steps.iter().all(|s| s["state"] == "succeeded")
        });
        assert!(worker.terminate().success());
        add_provider_written_questions(&Connection::open(data.join("vibelearn.db")).unwrap());
        let copy = dir.path().join("template.db");
        Connection::open(data.join("vibelearn.db"))
            .unwrap()
            .execute("VACUUM INTO ?1", [copy.to_str().unwrap()])
            .unwrap();
        (std::fs::read(copy).unwrap(), session_id)
    })
}

/// Adds the types the quiz serves that the offline builder no longer writes on this session's
/// code where they would teach nothing about it (issue 40, `offline::teaches`), as an LLM
/// provider writes them: a mid-level multiple choice for every other concept, one junior multiple choice
/// with a follow-up, one true/false, one code reading and one ordering. Each is a copy of the concept's first
/// stored question with the type's own fields.
fn add_provider_written_questions(conn: &Connection) {
    let columns = crate::util::question_columns(conn);
    let concepts: Vec<String> = conn
        .prepare("SELECT DISTINCT concept_id FROM questions WHERE parent_question_id IS NULL ORDER BY concept_id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let choices = r#"["It runs once per render","It runs after every change of a listed dependency","It never runs on the server","It blocks the first paint"]"#;
    let steps =
        r#"["the handler reads the request body","the request arrives","the row is written","the response is sent"]"#;
    // (id prefix, type, difficulty, options, key, follow-up)
    type Kind = (&'static str, &'static str, &'static str, Option<&'static str>, &'static str, Option<&'static str>);
    // Every other concept: the deck keeps about the size the quiz's load figures are tuned to.
    let mut added: Vec<(Kind, &String)> =
        concepts.iter().step_by(2).map(|c| (("mc", "multiple_choice", "mid", Some(choices), "B", None), c)).collect();
    if let (Some(first), Some(last)) = (concepts.first(), concepts.last()) {
        added.push((("tf", "true_false", "mid", None, "true", None), first));
        added.push((("cr", "code_reading", "mid", None, "It adds the item, then saves the cart.", None), first));
        added.push((("or", "ordering", "mid", Some(steps), "2,1,3,4", None), first));
        // Last in id order, so it is not the first new card a test meets.
        let follow_up = Some("Which dependency would you add, and why?");
        added.push((("zz-mc", "multiple_choice", "junior", Some(choices), "B", follow_up), last));
    }
    for ((prefix, kind, difficulty, options, correct, follow_up), concept) in added {
        let quoted = |v: Option<&str>| v.map_or("NULL".to_owned(), |v| format!("'{v}'"));
        let value = |c: &str| match c {
            "id" | "text_hash" => format!("'{prefix}-{concept}'"),
            "question_type" => format!("'{kind}'"),
            "difficulty" => format!("'{difficulty}'"),
            "question" => format!("'A {kind} question about {concept}, as a provider writes it.'"),
            "options" => quoted(options),
            "correct" => format!("'{correct}'"),
            "follow_up" => quoted(follow_up),
            "snippet"
            | "grounding_kind"
            | "grounding_file"
            | "grounding_line_start"
            | "grounding_line_end"
            | "grounding_mutation" => "NULL".into(),
            other => other.to_owned(),
        };
        let select: Vec<String> = columns.iter().map(|c| value(c)).collect();
        let sql = format!(
            "INSERT INTO questions ({}) SELECT {} FROM questions WHERE concept_id = ?1 AND parent_question_id IS NULL \
             ORDER BY id LIMIT 1",
            columns.join(", "),
            select.join(", ")
        );
        conn.execute(&sql, [concept]).unwrap();
    }
}

/// A fresh data dir holding a copy of the analysed database.
fn analysed() -> TempDir {
    let dir = TempDir::new();
    std::fs::write(dir.db_path(), &template().0).unwrap();
    dir
}

fn session_id() -> &'static str {
    &template().1
}

fn db(dir: &TempDir) -> Connection {
    Connection::open(dir.db_path()).unwrap()
}

/// A stored question, as the tests craft answers from it.
#[derive(Debug, Clone)]
struct Q {
    id: String,
    kind: String,
    difficulty: String,
    options: Vec<String>,
    correct: String,
    follow_up: Option<String>,
    concept: String,
}

fn questions(dir: &TempDir) -> Vec<Q> {
    let conn = db(dir);
    let mut stmt = conn
        .prepare(
            "SELECT q.id, q.question_type, q.difficulty, q.options, q.correct, q.follow_up, c.normalized_name \
             FROM questions q JOIN concepts c ON c.id = q.concept_id WHERE q.parent_question_id IS NULL ORDER BY q.id",
        )
        .unwrap();
    stmt.query_map([], |r| {
        let options: Option<String> = r.get(3)?;
        Ok(Q {
            id: r.get(0)?,
            kind: r.get(1)?,
            difficulty: r.get(2)?,
            options: options.map(|o| serde_json::from_str(&o).unwrap()).unwrap_or_default(),
            correct: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
            follow_up: r.get(5)?,
            concept: r.get(6)?,
        })
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn of_kind(dir: &TempDir, kind: &str) -> Option<Q> {
    questions(dir).into_iter().find(|q| q.kind == kind)
}

/// The first junior question of `kind` (junior questions carry follow-ups).
fn junior_of_kind(dir: &TempDir, kind: &str) -> Option<Q> {
    questions(dir).into_iter().find(|q| q.kind == kind && q.difficulty == "junior")
}

/// A multiple-choice question's right letter and a wrong one, lowercase as a learner types them.
fn letters(mc: &Q) -> (String, String) {
    let right = mc.correct.to_lowercase();
    let wrong = ["a", "b", "c", "d"].into_iter().find(|l| *l != right).unwrap_or("a").to_owned();
    (right, wrong)
}

/// The display name of a concept stored under `normalized`.
fn concept_name(dir: &TempDir, normalized: &str) -> String {
    db(dir).query_row("SELECT name FROM concepts WHERE normalized_name = ?1", [normalized], |r| r.get(0)).unwrap()
}

/// A fill-in-the-blank answer no generated question has.
const WRONG_FILL_IN: &str = "not-the-missing-token";

/// Makes `id` the only question due (a card due long ago, out of any learning step, so one
/// answer settles it), every other one not due.
fn only_due(dir: &TempDir, id: &str) {
    db(dir)
        .execute(
            "UPDATE questions SET due_at = CASE WHEN id = ?1 THEN 1 ELSE ?2 END, \
             card_state = CASE WHEN id = ?1 THEN 'new' ELSE card_state END",
            params![id, FAR_FUTURE],
        )
        .unwrap();
}

/// Runs `vl quiz ARGS` with `stdin`; asserts exit 0 and an empty stderr; returns stdout.
fn quiz(dir: &TempDir, args: &[&str], stdin: &str) -> String {
    let (code, stdout, stderr) = run(dir.path(), &[&["quiz"], args].concat(), stdin);
    assert_eq!(code, 0, "vl quiz {args:?} failed: {stderr}\n{stdout}");
    assert!(stderr.is_empty(), "stderr: {stderr}");
    assert!(!stdout.contains('\x1b'), "no colours into a pipe: {stdout}");
    stdout
}

fn run(dir: &Path, args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = vl(dir, free_port())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// (answer, correct, quality) of a question's attempts, oldest first.
fn attempts(dir: &TempDir, id: &str) -> Vec<(String, bool, i64)> {
    let conn = db(dir);
    let mut stmt =
        conn.prepare("SELECT answer, correct, quality FROM quiz_attempts WHERE question_id = ?1 ORDER BY id").unwrap();
    stmt.query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
}

/// The concept a new test question hangs off: one the template has, at `level`.
fn concept_id(dir: &TempDir, normalized_name: &str) -> String {
    db(dir).query_row("SELECT id FROM concepts WHERE normalized_name = ?1", [normalized_name], |r| r.get(0)).unwrap()
}

/// Inserts a question directly. Used only for the types the offline pipeline does not write
/// for this session (true_false, open_ended), so every type is covered.
fn insert_question(dir: &TempDir, id: &str, kind: &str, difficulty: &str, correct: &str, concept: &str) {
    let concept_id = concept_id(dir, concept);
    db(dir)
        .execute(
            "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, question, correct, explanation, \
             tags, text_hash, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'Because.', '[]', ?1, 0)",
            params![id, concept_id, session_id(), kind, difficulty, format!("A {kind} question?"), correct],
        )
        .unwrap();
}

/// The right answer in its plainest form, and the lines a follow-up needs (none here).
fn right_answer(q: &Q) -> String {
    match q.kind.as_str() {
        "multiple_choice" | "true_false" | "ordering" | "fill_in_blank" => q.correct.clone(),
        _ => "my answer\n3".to_owned(),
    }
}

fn last_attempt(dir: &TempDir, id: &str) -> (String, bool, i64) {
    attempts(dir, id).pop().unwrap_or_else(|| panic!("no attempt recorded for {id}"))
}

#[test]
fn every_question_type_accepts_its_forgiving_forms() {
    let dir = analysed();
    insert_question(&dir, "t-tf", "true_false", "junior", "true", "closures");
    insert_question(&dir, "t-open", "open_ended", "senior", "Model answer: it depends.", "closures");
    let mut covered = Vec::new();
    for q in questions(&dir) {
        // (stdin, correct, quality): piped answers are untimed, so right is rated Good (the
        // attempt's legacy quality 4) and wrong Again (1); Enter or end of input accepts.
        let cases: Vec<(String, bool, i64)> = match q.kind.as_str() {
            "multiple_choice" => {
                let (right, wrong) = letters(&q);
                let index = usize::from(right.as_bytes()[0] - b'a');
                let option_text = q.options.get(index).cloned().unwrap_or_default();
                vec![(right, true, 4), (option_text.to_uppercase(), true, 4), (format!(" ({wrong}) "), false, 1)]
            }
            "true_false" if q.correct == "true" => {
                vec![("y".into(), true, 4), ("no".into(), false, 1), ("TRUE".into(), true, 4)]
            }
            "true_false" => vec![("n".into(), true, 4), ("yes".into(), false, 1), ("FALSE".into(), true, 4)],
            "ordering" => {
                let spaced = q.correct.replace(',', " ");
                let mut reversed: Vec<&str> = q.correct.split(',').collect();
                reversed.reverse();
                vec![(spaced, true, 4), (q.correct.clone(), true, 4), (reversed.join(","), false, 1)]
            }
            "fill_in_blank" => vec![
                (format!("`{}`", q.correct.to_uppercase()), true, 4),
                (format!("  \"{}\" ", q.correct), true, 4),
                (WRONG_FILL_IN.into(), false, 1),
            ],
            // Free text: the rating 1–4 after the model answer (an empty line first re-asks).
            _ => vec![
                ("it captures the variable\n3".into(), true, 4),
                ("\nsomething about the loop\n1".into(), false, 1),
                ("partly\n2".into(), true, 3),
                ("all of it\n4".into(), true, 5),
            ],
        };
        for (stdin, correct, quality) in cases {
            only_due(&dir, &q.id);
            let out = quiz(&dir, &[], &format!("{stdin}\n"));
            let typed = stdin.lines().find(|l| !l.is_empty()).unwrap_or_default().to_owned();
            assert_eq!(last_attempt(&dir, &q.id), (typed, correct, quality), "{} answered {stdin:?}:\n{out}", q.kind);
            let free_text = matches!(q.kind.as_str(), "code_reading" | "spot_the_bug" | "open_ended");
            assert!(out.contains("Rate: 1 Again (1 minute) · 2 Hard"), "{out}");
            if free_text {
                assert!(out.contains("Model answer:"), "{out}");
            } else if correct {
                assert!(out.contains("✓ Correct.") && out.contains("Good — next review in"), "{out}");
            } else {
                assert!(out.contains("✗ Not quite.") && out.contains("Answer:"), "{out}");
                assert!(out.contains("Again — back in 1 minute, before this sitting ends."), "{out}");
            }
        }
        covered.push(q.kind);
    }
    covered.sort();
    covered.dedup();
    assert_eq!(
        covered,
        ["code_reading", "fill_in_blank", "multiple_choice", "open_ended", "ordering", "spot_the_bug", "true_false"]
    );
}

#[test]
fn an_unreadable_answer_is_asked_again_with_a_hint_and_three_strikes_count_as_wrong() {
    let dir = analysed();
    let ordering = of_kind(&dir, "ordering").unwrap();
    only_due(&dir, &ordering.id);
    let out = quiz(&dir, &[], &format!("1 1 2 3 4\n{}\n", ordering.correct));
    assert!(out.contains("Could not read that: step 1 appears twice"), "{out}");
    assert!(out.contains("try again (2 left)"), "{out}");
    assert_eq!(attempts(&dir, &ordering.id), [(ordering.correct.clone(), true, 4)], "one attempt, the readable one");

    let mc = of_kind(&dir, "multiple_choice").unwrap();
    only_due(&dir, &mc.id);
    // Empty lines re-ask without using a try; three unreadable answers count as wrong.
    let out = quiz(&dir, &[], "\nzzz\n\nnone of these\nE\nd\n");
    assert_eq!(out.matches("Could not read that: answer with a letter A–D").count(), 3, "{out}");
    assert_eq!(out.matches("an empty line does not count").count(), 2, "{out}");
    assert!(out.contains("✗ Counted as wrong"), "{out}");
    assert_eq!(attempts(&dir, &mc.id), [("E".to_owned(), false, 1)]);
    // The fourth line was read by the rating prompt, which wants 1–4 or o, not an answer.
    assert!(out.contains("Type 1, 2, 3 or 4, or o if you were right."), "{out}");
    // The missed card's re-ask met the end of input: it is still to do.
    assert!(out.contains("Done: 1 answer saved (0 correct of 1 graded, 1 again) · 1 left"), "{out}");
}

/// (card_state, reps, lapses, due_at, suspended) of a question.
fn card(dir: &TempDir, id: &str) -> (String, i64, i64, i64, bool) {
    db(dir)
        .query_row("SELECT card_state, reps, lapses, due_at, suspended FROM questions WHERE id = ?1", [id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// Makes `id` the only question due, keeping its schedule: as if its due date had come.
fn time_passes(dir: &TempDir, id: &str) {
    db(dir)
        .execute(
            "UPDATE questions SET due_at = CASE WHEN id = ?1 THEN ?3 ELSE ?2 END, \
             last_review_at = CASE WHEN id = ?1 THEN last_review_at - (due_at - ?3) ELSE last_review_at END",
            params![id, FAR_FUTURE, now_ms() - 1000],
        )
        .unwrap();
}

#[test]
fn four_ratings_a_re_ask_in_the_sitting_and_the_override() {
    let dir = analysed();
    let q = of_kind(&dir, "multiple_choice").unwrap();
    let (right, wrong) = letters(&q);
    // New card, right, rated Easy (4): due in 8 days (FSRS-6's 8.3, whole days). No follow-up,
    // so that only this card is asked.
    db(&dir).execute("UPDATE questions SET due_at = ?2 WHERE id != ?1", params![q.id, FAR_FUTURE]).unwrap();
    db(&dir).execute("UPDATE questions SET follow_up = NULL WHERE id = ?1", [&q.id]).unwrap();
    let before = now_ms();
    let out = quiz(&dir, &["--limit", "1"], &format!("{right}\n4\n"));
    assert!(out.contains("Rate: 1 Again (1 minute) · 2 Hard (1 day) · 3 Good (2 days) · 4 Easy (8 days)"), "{out}");
    assert!(out.contains("Easy — next review in 8 days."), "{out}");
    let (state, reps, lapses, due, _) = card(&dir, &q.id);
    assert_eq!((state.as_str(), reps, lapses), ("review", 1, 0));
    // Due from the start of the learner day 8 days on: 7 to 8 days from now.
    assert!((7 * DAY_MS..=8 * DAY_MS).contains(&(due - before)), "due on day 8: {}", due - before);
    // A second card rated Easy: day 8 holds the first, so the balancer gives it the quieter
    // 7th, and says why the 8 days the buttons offered did not stand.
    let other = of_kind(&dir, "true_false").unwrap();
    db(&dir).execute("UPDATE questions SET due_at = 1, follow_up = NULL WHERE id = ?1", [&other.id]).unwrap();
    let out = quiz(&dir, &["--limit", "1"], &format!("{}\n4\n", right_answer(&other)));
    assert!(out.contains("4 Easy (8 days)"), "{out}");
    assert!(out.contains("Easy — next review in 7 days, not 8 days: that day has more reviews due."), "{out}");
    db(&dir).execute("UPDATE questions SET due_at = ?2 WHERE id = ?1", params![other.id, FAR_FUTURE]).unwrap();
    // The JSON API says the same of a third (day 8 still holds the first): the day it got,
    // and the interval it was offered.
    let third = of_kind(&dir, "fill_in_blank").unwrap();
    db(&dir).execute("UPDATE questions SET due_at = 1, follow_up = NULL WHERE id = ?1", [&third.id]).unwrap();
    let answered =
        run(dir.path(), &["quiz", "answer", &third.id, &right_answer(&third), "--rating", "4", "--json"], "");
    let answered: serde_json::Value = serde_json::from_str(answered.1.trim()).unwrap();
    assert_eq!((answered["next_due_in"].as_str(), answered["moved_from_days"].as_u64()), (Some("7 days"), Some(8)));
    db(&dir).execute("UPDATE questions SET due_at = ?2 WHERE id = ?1", params![third.id, FAR_FUTURE]).unwrap();
    // Due again; wrong: Again, a lapse, re-asked in the same sitting (after 1 minute, or at
    // once when nothing else is left), right twice through the 1 and 10 minute steps.
    time_passes(&dir, &q.id);
    let out = quiz(&dir, &["--limit", "1"], &format!("{wrong}\n\n{right}\n\n{right}\n\n"));
    assert!(out.contains("Again — back in 1 minute, before this sitting ends."), "{out}");
    assert_eq!(out.matches("again (learning step)").count(), 2, "re-asked twice: {out}");
    assert!(out.contains("Good — back in 10 minutes, before this sitting ends."), "{out}");
    assert!(out.contains("Done: 3 answers saved (2 correct of 3 graded, 1 again) · 0 left"), "{out}");
    // The forecast: the relearned card is due on a later day (FSRS after the steps), none today.
    assert!(out.contains("Next due: 0 later today, ") && out.contains(" this week — the first in "), "{out}");
    let (state, reps, lapses, ..) = card(&dir, &q.id);
    assert_eq!((state.as_str(), reps, lapses), ("review", 4, 1));
    // A strict miss overridden with `o` ("I was right") is Good, counted correct, no lapse.
    time_passes(&dir, &q.id);
    let out = quiz(&dir, &["--limit", "1"], &format!("{wrong}\no\n"));
    assert!(out.contains(", o = I was right:"), "{out}");
    assert!(out.contains("Good — next review in"), "{out}");
    assert_eq!(last_attempt(&dir, &q.id), (wrong.clone(), true, 4));
    assert_eq!(card(&dir, &q.id).2, 1, "no new lapse");
    // Hard (2) on a right answer.
    time_passes(&dir, &q.id);
    quiz(&dir, &["--limit", "1"], &format!("{right}\n2\n"));
    assert_eq!(last_attempt(&dir, &q.id), (right.clone(), true, 3));
    // Every answer is a review-log row: rating, state before, intervals, memory.
    let log: Vec<(i64, String)> = db(&dir)
        .prepare("SELECT rating, state_before FROM review_log WHERE question_id = ?1 ORDER BY id")
        .unwrap()
        .query_map([&q.id], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let states: Vec<(i64, &str)> = log.iter().map(|(r, s)| (*r, s.as_str())).collect();
    assert_eq!(states, [(4, "new"), (1, "review"), (3, "relearning"), (3, "relearning"), (3, "review"), (2, "review")]);
}

/// (level, correct, incorrect, streak, score) of a concept.
fn profile(dir: &TempDir, concept: &str) -> (String, i64, i64, i64, f64) {
    db(dir)
        .query_row(
            "SELECT level, correct_answers, incorrect_answers, correct_streak, mastery_score FROM concept_profiles \
             WHERE normalized_name = ?1",
            [concept],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap()
}

#[test]
fn three_right_answers_in_a_row_promote_and_a_wrong_one_demotes() {
    let dir = analysed();
    let q = junior_of_kind(&dir, "fill_in_blank").unwrap();
    let name = concept_name(&dir, &q.concept);
    assert_eq!(profile(&dir, &q.concept).0, "junior");
    let mut outputs = Vec::new();
    for answer in [q.correct.as_str(), q.correct.as_str()] {
        only_due(&dir, &q.id);
        outputs.push(quiz(&dir, &["--limit", "1"], &format!("{answer}\n")));
    }
    let without_score = |p: (String, i64, i64, i64, f64)| (p.0, p.1, p.2, p.3);
    assert_eq!(without_score(profile(&dir, &q.concept)), ("junior".to_owned(), 2, 0, 2));
    only_due(&dir, &q.id);
    let out = quiz(&dir, &[], &format!("{}\n", q.correct));
    assert_eq!(without_score(profile(&dir, &q.concept)), ("mid".to_owned(), 3, 0, 0), "promoted; the streak restarts");
    // No stored score stands in for mastery (issue 34): it is read live from the cards.
    assert_eq!(profile(&dir, &q.concept).4, 0.0);
    assert!(out.contains(&format!("Level up for {name}: junior → mid")), "{out}");
    assert!(!outputs.iter().any(|o| o.contains("Level")), "no level change before the third");
    only_due(&dir, &q.id);
    let out = quiz(&dir, &[], &format!("{WRONG_FILL_IN}\n"));
    assert_eq!(without_score(profile(&dir, &q.concept)), ("junior".to_owned(), 3, 1, 0), "demoted by a wrong answer");
    assert!(out.contains(&format!("Level down for {name}: mid → junior")), "{out}");
}

fn follow_ups_of(dir: &TempDir, parent: &str) -> Vec<(String, String, String, String, Option<String>, String)> {
    let conn = db(dir);
    let mut stmt = conn
        .prepare("SELECT id, question_type, difficulty, question, snippet, tags FROM questions WHERE parent_question_id = ?1")
        .unwrap();
    stmt.query_map([parent], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn a_right_junior_answer_inserts_its_follow_up_and_asks_it_next() {
    let dir = analysed();
    let q = junior_of_kind(&dir, "fill_in_blank").unwrap();
    let text = q.follow_up.clone().expect("junior questions carry a follow-up");
    only_due(&dir, &q.id);
    let out = quiz(&dir, &[], &format!("{}\n\nit proves the test can fail\n", q.correct));
    let follow_ups = follow_ups_of(&dir, &q.id);
    assert_eq!(follow_ups.len(), 1);
    let (id, kind, difficulty, question, snippet, tags) = &follow_ups[0];
    assert_eq!((kind.as_str(), difficulty.as_str(), question.as_str()), ("open_ended", "mid", text.as_str()));
    let filled = snippet.as_deref().unwrap();
    assert!(!filled.contains("___") && filled.contains(&q.correct), "the blank is filled in: {snippet:?}");
    assert!(tags.contains("\"follow-up\""), "{tags}");
    // A reflection prompt (no model answer of its own): kept, not graded, never scheduled.
    assert_eq!(attempts(&dir, id), [("it proves the test can fail".to_owned(), false, 4)]);
    let (due_at, state, reviews): (Option<i64>, String, i64) = db(&dir)
        .query_row(
            "SELECT due_at, card_state, (SELECT COUNT(*) FROM review_log l WHERE l.question_id = q.id) \
             FROM questions q WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((due_at, state.as_str(), reviews), (None, "new", 0), "never scheduled");
    let unlocked = out.find("Follow-up question unlocked").expect("announced");
    let asked = out.find("Question 2 · follow-up · open ended · mid").expect("asked in the same run");
    assert!(unlocked < asked && out[asked..].contains(&text), "{out}");
    // No model answer of its own, so none is shown, and not the parent's explanation either.
    assert!(out.contains("A reflection prompt: your answer is kept; it is not scheduled."), "{out}");
    let parent_explanation: String =
        db(&dir).query_row("SELECT explanation FROM questions WHERE id = ?1", [&q.id], |r| r.get(0)).unwrap();
    assert_eq!(out[asked..].matches(parent_explanation.trim()).count(), 0, "{out}");
    assert!(out.contains("Done: 2 answers saved (1 correct of 1 graded, 0 again, 1 reflection)"), "{out}");

    // Answered once, it is not asked again after the next right answer.
    only_due(&dir, &q.id);
    let out = quiz(&dir, &[], &format!("{}\n", q.correct));
    assert!(!out.contains("Follow-up"), "{out}");
    assert_eq!(follow_ups_of(&dir, &q.id).len(), 1);

    // A wrong junior answer earns nothing; a follow-up left unanswered (end of input) stays
    // due and comes first next time.
    let mc = junior_of_kind(&dir, "multiple_choice").unwrap();
    let (right, wrong) = letters(&mc);
    only_due(&dir, &mc.id);
    quiz(&dir, &[], &format!("{wrong}\n"));
    assert!(follow_ups_of(&dir, &mc.id).is_empty());
    only_due(&dir, &mc.id);
    let out = quiz(&dir, &[], &format!("{right}\n"));
    assert!(out.contains("Follow-up question unlocked") && out.contains("End of input"), "{out}");
    let (follow_up_id, ..) = follow_ups_of(&dir, &mc.id).pop().unwrap();
    assert!(attempts(&dir, &follow_up_id).is_empty());
    let out = quiz(&dir, &["--limit", "1"], "catching a specific error keeps bugs visible\n");
    assert!(out.contains("Question 1 · follow-up"), "{out}");
    assert_eq!(attempts(&dir, &follow_up_id).len(), 1);
}

fn streak_rows(dir: &TempDir) -> Vec<(i64, i64, i64)> {
    let conn = db(dir);
    let mut stmt = conn.prepare("SELECT day, answers, correct FROM daily_streaks ORDER BY day").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
}

#[test]
fn the_daily_streak_counts_consecutive_days() {
    let dir = analysed();
    let today = now_ms() / DAY_MS;
    for day in [today - 2, today - 1] {
        db(&dir).execute("INSERT INTO daily_streaks (day, answers, correct) VALUES (?1, 3, 2)", [day]).unwrap();
    }
    let mc = of_kind(&dir, "multiple_choice").unwrap();
    let (right, wrong) = letters(&mc);
    only_due(&dir, &mc.id);
    let out = quiz(&dir, &[], &format!("{right}\n"));
    assert!(out.contains("streak 3 days (longest 3 days)"), "{out}");
    only_due(&dir, &mc.id);
    quiz(&dir, &[], &format!("{wrong}\n"));
    assert_eq!(streak_rows(&dir), [(today - 2, 3, 2), (today - 1, 3, 2), (today, 2, 1)]);
    let (_, status, _) = run(dir.path(), &["status"], "");
    assert!(status.contains("streak          3 days (longest 3 days)"), "{status}");

    // A missed day restarts the streak; the longest one is remembered.
    let dir = analysed();
    for day in (today - 6)..=(today - 3) {
        db(&dir).execute("INSERT INTO daily_streaks (day, answers, correct) VALUES (?1, 1, 1)", [day]).unwrap();
    }
    let (_, status, _) = run(dir.path(), &["status"], "");
    assert!(status.contains("streak          0 days (longest 4 days)"), "{status}");
    only_due(&dir, &mc.id);
    let out = quiz(&dir, &[], &format!("{right}\n"));
    assert!(out.contains("streak 1 day (longest 4 days)"), "{out}");
}

/// What the quiz has moved so far, as the test models it: each concept's (level, correct
/// streak), where three right in a row promote and restart the streak; and the follow-ups
/// asked, by (concept, text), since a concept's follow-up of one text is asked once.
#[derive(Default)]
struct Progress {
    levels: std::collections::HashMap<String, (String, i64)>,
    follow_ups: std::collections::HashSet<(String, String)>,
}

fn answered_right(progress: &mut (String, i64)) {
    progress.1 += 1;
    if progress.1 >= 3 {
        let next = match progress.0.as_str() {
            "junior" => "mid",
            _ => "senior",
        };
        *progress = (next.to_owned(), 0);
    }
}

/// The lines that answer `q` right, given the run so far: a follow-up comes next for a junior
/// question of a concept that was junior when it was answered (the answer that promotes it
/// still earns one), unless that concept's follow-up of the same text was asked already. The
/// follow-up is a reflection: its answer moves no level.
fn script_for(dir: &TempDir, q: &Q, progress: &mut Progress) -> String {
    let concept = progress.levels.entry(q.concept.clone()).or_insert_with(|| {
        let (level, _, _, streak, _) = profile(dir, &q.concept);
        (level, streak)
    });
    let mut lines = right_answer(q);
    if !lines.contains('\n') {
        lines.push('\n'); // Enter accepts the suggested rating.
    }
    let was_junior = concept.0 == "junior";
    answered_right(concept);
    if let Some(follow_up) = q.follow_up.as_ref().filter(|_| q.difficulty == "junior" && was_junior)
        && progress.follow_ups.insert((q.concept.clone(), follow_up.clone()))
    {
        // A reflection prompt: the answer, and no rating (it is never scheduled).
        lines.push_str("\nmy follow-up answer");
    }
    lines + "\n"
}

#[test]
fn a_whole_quiz_runs_through_a_pipe_and_end_of_input_keeps_what_was_answered() {
    let dir = analysed();
    let conn = db(&dir);
    let order: Vec<String> = vibelearn::learning::cards::due_questions(&conn, now_ms(), None, 50).unwrap()["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["id"].as_str().unwrap().to_owned())
        .collect();
    let all = questions(&dir);
    let mut progress = Progress::default();
    let scripts: Vec<String> =
        order.iter().map(|id| script_for(&dir, all.iter().find(|q| &q.id == id).unwrap(), &mut progress)).collect();
    let follow_ups = scripts.iter().filter(|s| s.contains("my follow-up answer")).count();
    assert!(follow_ups >= 3, "the sample has junior questions with follow-ups");

    // End of input after the first question: that answer is kept, the run ends cleanly.
    let partial = analysed();
    let out = quiz(&partial, &["--limit", "50"], &scripts[0]);
    assert!(out.contains("End of input — stopping here.\n\nDone: "), "{out}");
    let kept: i64 = db(&partial).query_row("SELECT COUNT(*) FROM quiz_attempts", [], |r| r.get(0)).unwrap();
    assert_eq!(kept as usize, 1 + usize::from(scripts[0].contains("my follow-up answer")));

    let out = quiz(&dir, &["--limit", "50"], &scripts.concat());
    let total = order.len() + follow_ups;
    assert!(
        out.starts_with(&format!(
            "VibeLearn quiz — {} questions: 0 to relearn, 0 due for review, {} new.",
            order.len(),
            order.len()
        )),
        "{out}"
    );
    // The follow-ups earned are reflection prompts: kept, neither right nor wrong.
    let reflections = match follow_ups {
        0 => String::new(),
        1 => ", 1 reflection".to_owned(),
        n => format!(", {n} reflections"),
    };
    assert!(
        out.contains(&format!(
            "Done: {total} answers saved ({n} correct of {n} graded, 0 again{reflections}) · 0 left · streak 1 day",
            n = order.len()
        )),
        "{out}"
    );
    assert!(!out.contains("End of input"), "{out}");
    let (count, right): (i64, i64) = db(&dir)
        .query_row("SELECT COUNT(*), SUM(correct) FROM quiz_attempts", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert_eq!((count as usize, right as usize), (total, order.len()), "reflections are kept, not graded");
    // Nothing is due any more.
    let out = quiz(&dir, &[], "");
    assert!(out.starts_with("Nothing to review right now — the next question is due in"), "{out}");
}

#[test]
fn session_and_limit_choose_the_questions() {
    let dir = analysed();
    let out = quiz(&dir, &["--session", "--limit", "2"], "");
    assert!(out.starts_with("VibeLearn quiz — 2 questions: 0 to relearn, 0 due for review, 2 new."), "{out}");
    let out = quiz(&dir, &["--session", session_id(), "--limit", "1"], "");
    assert!(out.starts_with("VibeLearn quiz — 1 question:"), "{out}");
    let (code, _, stderr) = run(dir.path(), &["quiz", "--session", "no-such-session"], "");
    assert_eq!(code, 1);
    assert!(stderr.contains("no session \"no-such-session\" has been recorded"), "{stderr}");
    let (code, _, stderr) = run(dir.path(), &["quiz", "--limit", "0"], "");
    assert_eq!(code, 2, "{stderr}");
    let out = quiz(&dir, &["--project", "shop", "--limit", "3"], "");
    assert!(out.starts_with("VibeLearn quiz — 3 questions:"), "{out}");
    let out = quiz(&dir, &["--project", "elsewhere"], "");
    assert!(out.starts_with("No questions for project \"elsewhere\""), "{out}");
    // VIBELEARN_NEW_PER_DAY caps the new questions of a day.
    let mut capped = vl(dir.path(), free_port());
    let output =
        capped.args(["quiz", "--limit", "50"]).env("VIBELEARN_NEW_PER_DAY", "4").stdin(Stdio::null()).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with("VibeLearn quiz — 4 questions: 0 to relearn, 0 due for review, 4 new."), "{text}");
}

#[test]
#[cfg_attr(windows, ignore = "sends SIGINT with kill(1); Windows cannot signal a process that shares no console")]
fn ctrl_c_keeps_the_answers_already_given() {
    let dir = analysed();
    let mc = of_kind(&dir, "multiple_choice").unwrap();
    let fill = of_kind(&dir, "fill_in_blank").unwrap();
    db(&dir)
        .execute(
            "UPDATE questions SET due_at = CASE WHEN id IN (?1, ?2) THEN 1 ELSE ?3 END",
            params![mc.id, fill.id, FAR_FUTURE],
        )
        .unwrap();
    let mut child = vl(dir.path(), free_port())
        .args(["quiz"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Both questions are due; answer the first (right or wrong does not matter here), rate
    // it, and interrupt the quiz while it waits for the second.
    stdin.write_all(b"d\n3\n").unwrap();
    stdin.flush().unwrap();
    let answered = || db(&dir).query_row("SELECT COUNT(*) FROM quiz_attempts", [], |r| r.get::<_, i64>(0)).unwrap();
    wait_for("the first answer to be committed", Duration::from_secs(10), || answered() == 1);
    std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "SIGINT ends the quiz");
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("Interrupted.") && text.contains("Done: 1 answer saved"), "{text}");
    assert!(text.contains("· 1 left ·") && text.contains("Next due: "), "{text}");
    drop(stdin);
    assert_eq!(answered(), 1, "the committed answer survives");
    let check: String = db(&dir).query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    let streak: Option<i64> =
        db(&dir).query_row("SELECT answers FROM daily_streaks", [], |r| r.get(0)).optional().unwrap();
    assert_eq!(streak, Some(1), "the whole answer was committed, streak included");
}

/// Gives every card of a concept an FSRS memory: reviewed `days_ago` with `stability`.
fn set_memory(dir: &TempDir, concept: &str, days_ago: f64, stability: f64) {
    let last = now_ms() - (days_ago * DAY_MS as f64) as i64;
    db(dir)
        .execute(
            "UPDATE questions SET card_state = 'review', stability = ?2, fsrs_difficulty = 5, last_review_at = ?3, \
             reps = 1, due_at = ?4 WHERE concept_id IN (SELECT id FROM concepts WHERE normalized_name = ?1)",
            params![concept, stability, last, FAR_FUTURE],
        )
        .unwrap();
}

#[test]
fn status_and_gaps_judge_mastery_by_fsrs_recall_and_list_leeches_first() {
    let dir = analysed();
    set_memory(&dir, "orm queries", 0.01, 30.0); // every card mature (stability >= 21 days): mastered
    set_memory(&dir, "async await", 2.0, 2.3); // ~91 % recall now, not mature: neither mastered nor a gap
    set_memory(&dir, "higher order functions", 100.0, 1.0); // ~49 %: a gap
    // ~100 %, but one card is a leech (a concept the offline builder asks on this code).
    set_memory(&dir, "exception handling with try catch", 0.01, 5.0);
    let leech: String = db(&dir)
        .query_row(
            "SELECT q.id FROM questions q JOIN concepts c ON c.id = q.concept_id \
             WHERE c.normalized_name = 'exception handling with try catch' \
             ORDER BY q.id LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    db(&dir)
        .execute("UPDATE questions SET tags = '[\"leech\"]', suspended = 1, lapses = 8 WHERE id = ?1", [&leech])
        .unwrap();
    db(&dir).execute("UPDATE jobs SET state = 'dead' WHERE kind = 'sync'", []).unwrap();
    let (code, status, stderr) = run(dir.path(), &["status"], "");
    assert_eq!(code, 0, "{stderr}");
    for line in [
        "sessions        1",
        // All four standings named, summing to the concepts (issue 41: "reviewing" was left out).
        "concepts        8 (1 mastered, 1 reviewing, 4 learning, 2 gaps)",
        "leeches         1 card suspended — vl quiz --leeches",
        "streak          0 days",
        // The sample's concept mix as the tree-sitter patterns give it: "Handling async failures"
        // was picked over "Exception handling with try/catch" only because an await's old
        // snippet (its line ±2) held the `try` of the line above.
        "top categories  functional_pattern 2, architecture_pattern 1, async_pattern 1, database_pattern 1",
        "provider        offline",
        "worker not running",
        "dead jobs       1 (sync 1) — vl jobs list --state dead",
    ] {
        assert!(status.contains(line), "missing {line:?} in\n{status}");
    }
    assert!(!status.contains('\x1b'));

    let (code, gaps, _) = run(dir.path(), &["gaps"], "");
    assert_eq!(code, 0);
    let lines: Vec<&str> = gaps.lines().collect();
    // Only answered concepts under 70 % recall now, and leeches, are gaps: the four never
    // quizzed are still being learned, not gaps (issue 34).
    assert_eq!(lines[0], "2 gaps of 8 concepts: 1 with leeches first, then under 70 % recall", "{gaps}");
    let names: Vec<&str> =
        lines[1..3].iter().map(|l| l.split("% recall now  ").nth(1).unwrap().split("  ").next().unwrap()).collect();
    assert_eq!(names, ["Exception handling with try/catch", "Higher-order functions"], "{gaps}");
    assert!(lines[1].ends_with("leech (8 lapses)") && lines[1].contains("100% recall now"), "{gaps}");
    assert!(lines[2].starts_with("  █████░░░░░  49% recall now  Higher-order functions"), "{gaps}");
    assert!(gaps.contains("Of 8 concepts: 1 mastered, 1 reviewing, 4 learning, 2 gaps."), "{gaps}");
    assert!(gaps.contains("drill them with: vl quiz --leeches"), "{gaps}");
    assert!(!gaps.contains("ORM") && !gaps.contains("Async/await"), "{gaps}");

    // The leech is suspended: not due; `vl quiz --leeches` asks it anyway.
    let out = quiz(&dir, &["--leeches"], "");
    assert!(out.starts_with("VibeLearn quiz (leeches) — 1 question"), "{out}");
    assert!(out.contains("Question 1 · leech"), "{out}");

    // Sessions but no concept: nothing to judge, not "no gaps".
    let empty = TempDir::new();
    let conn = vibelearn::db::open_and_migrate(&empty.db_path(), vibelearn::db::Synchronous::Normal).unwrap();
    conn.execute("INSERT INTO sessions (id, project, started_at, updated_at) VALUES ('s', 'p', 1, 1)", []).unwrap();
    drop(conn);
    let (_, out, _) = run(empty.path(), &["gaps"], "");
    assert!(out.starts_with("Nothing to judge yet"), "{out}");
}

#[test]
fn quiz_and_status_work_next_to_a_running_worker() {
    let dir = analysed();
    let worker = WorkerProcess::start(dir.path());
    let mut status = vl(dir.path(), worker.port);
    let out = status.arg("status").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("worker running, no notices"), "{text}");
    let mc = of_kind(&dir, "multiple_choice").unwrap();
    only_due(&dir, &mc.id);
    let mut child =
        vl(dir.path(), worker.port).arg("quiz").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"d\n").unwrap();
    assert!(child.wait_with_output().unwrap().status.success());
    assert_eq!(attempts(&dir, &mc.id).len(), 1, "the quiz writes while the worker holds the database open");
}

#[test]
fn without_a_database_every_learning_command_says_how_to_start() {
    let dir = TempDir::new();
    for command in [&["status"][..], &["gaps"], &["quiz"], &["quiz", "--session"]] {
        let (code, out, err) = run(dir.path(), command, "");
        assert_eq!((code, err.as_str()), (0, ""), "{command:?}");
        // `vl status` also names the provider that would be used (SPEC §6.5).
        let first = if command == ["status"] { out.lines().next().unwrap_or("") } else { out.trim() };
        assert_eq!(first, "no sessions yet — run vl demo or install the hooks (vl install claude-code)", "{command:?}");
    }
    assert!(!dir.db_path().exists(), "reading must not create the database");
    // A database with the schema but no session yet.
    drop(vibelearn::db::open_and_migrate(&dir.db_path(), vibelearn::db::Synchronous::Normal).unwrap());
    for command in ["status", "gaps"] {
        let (code, out, _) = run(dir.path(), &[command], "");
        assert_eq!(code, 0);
        assert!(out.starts_with("no sessions yet"), "{command}: {out}");
    }
    assert!(quiz(&dir, &[], "").starts_with("No questions yet"));
}

#[test]
fn every_learning_command_has_help_with_an_example() {
    for (command, example) in [("quiz", "vl quiz --limit 5"), ("status", "vl status"), ("gaps", "vl gaps")] {
        let (code, out, _) = run(Path::new("/nonexistent"), &[command, "--help"], "");
        assert_eq!(code, 0);
        assert!(out.contains("Example") && out.contains(example), "{command}: {out}");
    }
}

#[test]
fn a_fast_answer_at_the_terminal_scores_five_and_a_slow_one_four() {
    use vibelearn::cli::quiz::{QuizOptions, run_quiz, term::Style};
    use vibelearn::clock::ManualClock;

    /// stdin that takes `delay` ms of the manual clock to deliver its text.
    struct Typist {
        text: std::io::Cursor<Vec<u8>>,
        clock: std::sync::Arc<ManualClock>,
        delay: i64,
    }
    impl std::io::Read for Typist {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.clock.advance(self.delay);
            self.text.read(buf)
        }
    }

    let dir = analysed();
    let mc = of_kind(&dir, "multiple_choice").unwrap();
    let (right, _) = letters(&mc);
    let options = QuizOptions {
        filter: Default::default(),
        limit: 1,
        new_per_day: 20,
        interactive: true,
        style: Style { color: true },
        grader: None,
        scheduler: Default::default(),
        easy_ms: 8_000,
    };
    // Within VIBELEARN_EASY_SECS (8) Easy is suggested, after it Good; Enter accepts.
    for (delay, quality) in [(2_000, 5), (12_000, 4)] {
        only_due(&dir, &mc.id);
        let clock = ManualClock::new(now_ms());
        let typist =
            Typist { text: std::io::Cursor::new(format!("{right}\n\n").into_bytes()), clock: clock.clone(), delay };
        let mut input = std::io::BufReader::new(typist);
        let mut out = Vec::new();
        let mut conn = vibelearn::db::open(&dir.db_path(), vibelearn::db::Synchronous::Normal).unwrap();
        let summary = run_quiz(&mut conn, &mut input, &mut out, clock.as_ref(), &options, &Default::default()).unwrap();
        assert_eq!((summary.answered, summary.correct), (1, 1));
        assert_eq!(last_attempt(&dir, &mc.id), (right.clone(), true, quality), "answered after {delay} ms");
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\x1b[32m✓ Correct"), "colours when asked for: {text}");
        let suggested = if quality == 5 { "Enter = Easy" } else { "Enter = Good" };
        assert!(text.contains(suggested), "{text}");
        assert!(!text.contains(&format!("> {right}")), "a terminal echoes the answer itself");
    }
}

/// Runs `vl quiz --limit 1` with an Anthropic-shaped fake provider behind `url`.
fn quiz_with_provider(dir: &TempDir, url: &str, stdin: &str) -> String {
    let mut child = vl(dir.path(), free_port())
        .args(["quiz", "--limit", "1"])
        .env("VIBELEARN_PROVIDER", "anthropic")
        .env("ANTHROPIC_API_KEY", "sk-test-rubric-0123456789")
        .env("VIBELEARN_ANTHROPIC_BASE_URL", url)
        .env("VIBELEARN_LLM_TIMEOUT_SECS", "2")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn free_text_answers_are_graded_by_the_llm_rubric_and_fall_back_to_a_self_grade() {
    use crate::fake_http::{FakeServer, Reply};
    let dir = analysed();
    insert_question(&dir, "t-rubric", "code_reading", "mid", "It awaits the fetch, then parses JSON.", "closures");
    only_due(&dir, "t-rubric");
    let grade = serde_json::json!({"scores": {"correctness": 4, "depth": 3, "trade_offs": 3, "real_world": 3, "clarity": 4},
                                   "feedback": "Right idea; say what happens on failure."});
    let fake = FakeServer::start(
        vec![Reply::json(200, &serde_json::json!({"content": [{"type": "text", "text": grade.to_string()}]}))],
        Reply::raw(500, "{}"),
    );
    let out = quiz_with_provider(&dir, &fake.url, "it waits for fetch and reads the body\n");
    assert!(out.contains("Rubric grade (anthropic):") && out.contains("→ 4/5, suggests Good"), "{out}");
    assert!(out.contains("say what happens on failure"), "{out}");
    // 0.40·4 + 0.20·3 + 0.15·3 + 0.10·3 + 0.15·4 = 3.55 → quality 4 → Good suggested, and
    // end of input accepts it.
    assert_eq!(last_attempt(&dir, "t-rubric"), ("it waits for fetch and reads the body".to_owned(), true, 4));
    let prompt = fake.requests()[0].json()["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(
        prompt.contains("It awaits the fetch, then parses JSON.") && prompt.contains("it waits for fetch"),
        "{prompt}"
    );

    // The provider fails: the developer grades themself instead; nothing is lost.
    only_due(&dir, "t-rubric");
    let out = quiz_with_provider(&dir, &fake.url, "it parses something\n1\n");
    assert!(out.contains("The rubric grader is unavailable"), "{out}");
    assert_eq!(last_attempt(&dir, "t-rubric"), ("it parses something".to_owned(), false, 1));
}

#[test]
fn the_json_api_gives_the_next_card_without_its_answer_and_records_an_answer() {
    let dir = analysed();
    let mc = of_kind(&dir, "multiple_choice").unwrap();
    let (right, wrong) = letters(&mc);
    only_due(&dir, &mc.id);
    let json = |args: &[&str]| -> (i32, serde_json::Value) {
        let (code, out, err) = run(dir.path(), &[&["quiz"], args].concat(), "");
        assert!(err.is_empty(), "{err}");
        (code, serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}")))
    };
    let (code, next) = json(&["next", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(next["question"]["id"], mc.id.as_str(), "{next}");
    assert_eq!(next["question"]["free_text"], false);
    assert!(next["question"].get("correct").is_none() && next["question"].get("explanation").is_none(), "{next}");
    // Unreadable: nothing recorded, exit 1 with the hint.
    let (code, bad) = json(&["answer", &mc.id, "zzz", "--json"]);
    assert_eq!((code, bad["error"].as_str()), (1, Some("unreadable")), "{bad}");
    assert!(attempts(&dir, &mc.id).is_empty());
    // Wrong, then overridden to Good by --rating: the rating given stands.
    let (code, graded) = json(&["answer", &mc.id, &wrong, "--rating", "3", "--json"]);
    assert_eq!(code, 0, "{graded}");
    assert_eq!(
        (graded["correct"].as_bool(), graded["rating"].as_i64(), graded["suggested_rating"].as_i64()),
        (Some(false), Some(3), Some(1))
    );
    assert_eq!(graded["card_state"], "review");
    assert_eq!(graded["moved_from_days"], serde_json::Value::Null, "no other review to balance against: {graded}");
    let option = &mc.options[usize::from(right.as_bytes()[0] - b'a')];
    assert_eq!(graded["expected"].as_str(), Some(format!("{}) {option}", right.to_uppercase()).as_str()));
    // A review's wait is its whole-day interval, as the terminal says it ("8 days", not the
    // "7.9 days" until that day's start).
    let next_due_in = graded["next_due_in"].as_str().unwrap_or_default();
    let whole_days = next_due_in.strip_suffix(" days").or_else(|| next_due_in.strip_suffix(" day"));
    assert!(whole_days.is_some_and(|n| n.parse::<u32>().is_ok()), "{graded}");
    assert_eq!(last_attempt(&dir, &mc.id), (wrong.clone(), true, 4));
    // Wrong and rated Hard: recalled with effort is still a wrong answer (issue 34, point 6).
    only_due(&dir, &mc.id);
    let (_, graded) = json(&["answer", &mc.id, &wrong, "--rating", "2", "--json"]);
    assert_eq!((graded["correct"].as_bool(), graded["rating"].as_i64()), (Some(false), Some(2)), "{graded}");
    assert_eq!(last_attempt(&dir, &mc.id), (wrong.clone(), false, 3), "a wrong answer rated Hard is not correct");
    // Right without --rating: Good suggested and recorded.
    only_due(&dir, &mc.id);
    let (_, graded) = json(&["answer", &mc.id, &right, "--json"]);
    assert_eq!((graded["correct"].as_bool(), graded["rating"].as_i64()), (Some(true), Some(3)), "{graded}");
    // Free text: the model answer and rubric come back, nothing recorded until --rating.
    insert_question(&dir, "t-free", "code_reading", "mid", "It awaits, then parses.", "closures");
    let (code, first) = json(&["answer", "t-free", "it waits", "--json"]);
    assert_eq!((code, first["recorded"].as_bool(), first["needs_rating"].as_bool()), (0, Some(false), Some(true)));
    assert_eq!(first["model_answer"], "It awaits, then parses.");
    assert_eq!(first["rubric"].as_array().unwrap().len(), 5);
    assert!(attempts(&dir, "t-free").is_empty());
    let (_, second) = json(&["answer", "t-free", "it waits", "--rating", "2", "--json"]);
    assert_eq!(second["recorded"], true);
    assert_eq!(attempts(&dir, "t-free"), [("it waits".to_owned(), true, 3)]);
    // An answer starting with '-' is an answer, not a flag; an unknown id is an error.
    let (code, missing) = json(&["answer", "no-such-id", "-1", "--json"]);
    assert_eq!((code, missing["error"].as_str()), (1, Some("not_found")));
}

/// Anki's text import, as its importer reads a file: `#key:value` header lines, then records
/// split on the separator, where a field in double quotes may hold separators, line breaks
/// and doubled quotes.
fn parse_anki(text: &str) -> (Vec<(String, String)>, Vec<Vec<String>>) {
    let mut headers = Vec::new();
    let mut rest = text;
    while let Some(line) = rest.strip_prefix('#') {
        let (header, after) = line.split_once('\n').unwrap_or((line, ""));
        let (key, value) = header.split_once(':').expect("a header is key:value");
        headers.push((key.to_owned(), value.to_owned()));
        rest = after;
    }
    let mut records = Vec::new();
    let (mut record, mut field, mut quoted, mut chars) = (Vec::new(), String::new(), false, rest.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', false) if field.is_empty() => quoted = true,
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            ('"', true) => quoted = false,
            ('\t', false) => record.push(std::mem::take(&mut field)),
            ('\n', false) => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (c, _) => field.push(c),
        }
    }
    assert!(!quoted && field.is_empty() && record.is_empty(), "the file ends with a whole record");
    (headers, records)
}

#[test]
fn anki_export_parses_as_anki_reads_it_with_stable_guids_and_markdown_has_one_file_per_project() {
    let dir = analysed();
    // A field with a tab, a line break and quotes in it.
    insert_question(&dir, "t-quoted", "true_false", "junior", "true", "closures");
    db(&dir)
        .execute(
            "UPDATE questions SET question = ?2, explanation = 'Say \"captured\".' WHERE id = ?1",
            params!["t-quoted", "Tab\there, a \"quote\",\nand a new line: true?"],
        )
        .unwrap();
    // Every stored question is exported; the deck's size follows what the builder writes.
    let total: i64 = db(&dir).query_row("SELECT COUNT(*) FROM questions", [], |r| r.get(0)).unwrap();
    let out = dir.path().join("cards.txt");
    let export = |path: &Path| {
        let (code, stdout, stderr) =
            run(dir.path(), &["export", "anki", "--out", path.to_str().unwrap(), "--deck", "Study"], "");
        assert_eq!(code, 0, "{stderr}");
        assert!(stdout.contains(&format!("Wrote {total} questions to")), "{stdout}");
        std::fs::read_to_string(path).unwrap()
    };
    let text = export(&out);
    let (headers, records) = parse_anki(&text);
    let header = |k: &str| headers.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    assert_eq!(
        (
            header("separator"),
            header("html"),
            header("notetype"),
            header("guid column"),
            header("deck column"),
            header("tags column")
        ),
        (Some("tab"), Some("true"), Some("Basic"), Some("1"), Some("2"), Some("5"))
    );
    assert_eq!(records.len() as i64, total);
    assert!(records.iter().all(|r| r.len() == 5), "five fields each");
    assert!(records.iter().all(|r| r[1] == "Study::shop"), "{:?}", records[0]);
    let quoted = records.iter().find(|r| r[2].contains("Tab")).expect("the quoted card");
    assert!(quoted[2].starts_with("Tab\there, a \"quote\",<br>and a new line: true?"), "{:?}", quoted[2]);
    assert!(quoted[3].contains("Say \"captured\"."), "{:?}", quoted[3]);
    assert!(quoted[4].split(' ').any(|t| t == "vibelearn") && quoted[4].contains("Closures"), "{:?}", quoted[4]);
    let grounded = records.iter().find(|r| r[2].contains("<pre><code>")).expect("code in <pre><code>");
    assert!(grounded[3].contains(".ts:"), "file:lines on the back: {:?}", grounded[3]);
    // Stable guids: a second export (after an answer changed a schedule) has the same ones.
    let guids: Vec<&String> = records.iter().map(|r| &r[0]).collect();
    let unique: std::collections::HashSet<_> = guids.iter().collect();
    assert_eq!(unique.len(), guids.len());
    only_due(&dir, "t-quoted");
    quiz(&dir, &[], "true\n");
    let again = export(&dir.path().join("again.txt"));
    let (_, records_again) = parse_anki(&again);
    assert_eq!(records_again.iter().map(|r| &r[0]).collect::<Vec<_>>(), guids);

    let md = dir.path().join("md");
    let (code, stdout, _) = run(dir.path(), &["export", "markdown", "--out", md.to_str().unwrap()], "");
    assert_eq!(code, 0);
    assert!(stdout.contains("in 1 file(s)"), "{stdout}");
    let shop = std::fs::read_to_string(md.join("shop.md")).unwrap();
    assert!(shop.starts_with(&format!("# shop — VibeLearn cards\n\n{total} questions.")), "{shop}");
    assert!(shop.contains("## Closures (") && shop.contains("```typescript") && shop.contains("**Answer:**"), "{shop}");
}

#[test]
fn eight_lapses_on_a_fake_clock_make_a_leech_that_is_suspended() {
    use vibelearn::cli::quiz::{QuizOptions, run_quiz, term::Style};
    use vibelearn::clock::{Clock, ManualClock};

    let dir = analysed();
    let q = of_kind(&dir, "true_false").map(|q| q.id).unwrap_or_else(|| {
        insert_question(&dir, "t-leech", "true_false", "mid", "true", "closures");
        "t-leech".to_owned()
    });
    db(&dir)
        .execute("UPDATE questions SET due_at = ?2, follow_up = NULL WHERE id != ?1", params![q, FAR_FUTURE])
        .unwrap();
    let correct: String =
        db(&dir).query_row("SELECT correct FROM questions WHERE id = ?1", [&q], |r| r.get(0)).unwrap();
    let wrong = if correct == "true" { "false" } else { "true" };
    let options = QuizOptions {
        filter: Default::default(),
        limit: 5,
        new_per_day: 20,
        interactive: false,
        style: Style { color: false },
        grader: None,
        scheduler: Default::default(),
        easy_ms: 8_000,
    };
    let clock = ManualClock::new(now_ms());
    let mut conn = vibelearn::db::open(&dir.db_path(), vibelearn::db::Synchronous::Normal).unwrap();
    let mut sitting = |input: String| -> String {
        let mut out = Vec::new();
        run_quiz(&mut conn, &mut input.as_bytes(), &mut out, clock.as_ref(), &options, &Default::default()).unwrap();
        String::from_utf8(out).unwrap()
    };
    // Learn it (new, right: graduates), then lapse it eight times, each lapse a sitting of its
    // own when the card falls due: wrong (Again), then right through both learning steps.
    sitting(format!("{correct}\n\n"));
    let mut last = String::new();
    for lapse in 1..=8 {
        let due: i64 = db(&dir).query_row("SELECT due_at FROM questions WHERE id = ?1", [&q], |r| r.get(0)).unwrap();
        clock.set(due + 1);
        last = sitting(format!("{wrong}\n\n{correct}\n\n{correct}\n\n"));
        let (state, _, lapses, _, suspended) = card(&dir, &q);
        assert_eq!(lapses, lapse, "{last}");
        assert_eq!(suspended, lapse == 8, "suspended at the eighth lapse only");
        if lapse < 8 {
            assert_eq!(state, "review", "relearned within the sitting: {last}");
            assert!(last.contains("again (learning step)"), "{last}");
        }
    }
    assert!(last.contains("Leech: 8 lapses. The card is suspended and tagged leech"), "{last}");
    assert!(!last.contains("again (learning step)"), "a suspended card is not re-asked: {last}");
    let tags: String = db(&dir).query_row("SELECT tags FROM questions WHERE id = ?1", [&q], |r| r.get(0)).unwrap();
    assert!(tags.contains("\"leech\""), "{tags}");
    // Never due again on its own; `--leeches` still drills it.
    clock.advance(400 * DAY_MS);
    let due = vibelearn::learning::cards::due_questions(&db(&dir), clock.now_ms(), None, 50).unwrap();
    assert!(!due.to_string().contains(&q), "a suspended card is never due");
    let out = quiz(&dir, &["--leeches"], "");
    assert!(out.contains("Question 1 · leech"), "{out}");
}

#[test]
fn the_weekly_optimize_scheduler_job_fits_parameters_once_there_are_64_reviews() {
    let dir = analysed();
    let jobs = || -> i64 {
        db(&dir).query_row("SELECT COUNT(*) FROM jobs WHERE kind = 'optimize_scheduler'", [], |r| r.get(0)).unwrap()
    };
    assert_eq!(jobs(), 0, "no fit without reviews: the defaults stand");
    // Every card × 5 reviews on different days (85 review-log rows with 17 cards).
    let start = now_ms() - 60 * DAY_MS;
    let ids: Vec<String> = questions(&dir).into_iter().map(|q| q.id).collect();
    for (i, id) in ids.iter().enumerate() {
        for (n, day) in [0, 2, 7, 16, 35].into_iter().enumerate() {
            let rating = if (i + n) % 6 == 0 { 1 } else { 3 };
            db(&dir)
                .execute(
                    "INSERT INTO review_log (question_id, rating, state_before, elapsed_days, scheduled_days, stability, \
                     difficulty, created_at) VALUES (?1, ?2, 'review', 1, 1, 1, 5, ?3)",
                    params![id, rating, start + day * DAY_MS + i as i64 * 60_000],
                )
                .unwrap();
        }
    }
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let quiz_step = |n: i64| {
        http.post("/api/vibelearn/analyze/quiz", &serde_json::json!({"contentSessionId": session_id()})).unwrap();
        wait_for("the quiz step", Duration::from_secs(30), || {
            db(&dir)
                .query_row("SELECT COUNT(*) FROM jobs WHERE kind = 'analyze_quiz' AND state = 'succeeded'", [], |r| {
                    r.get::<_, i64>(0)
                })
                .unwrap()
                >= n
        });
    };
    // The next quiz step asks for a fit; it runs and stores 21 parameters.
    quiz_step(2);
    wait_for("the fit", Duration::from_secs(60), || {
        db(&dir).query_row("SELECT COUNT(*) FROM scheduler_parameters", [], |r| r.get::<_, i64>(0)).unwrap() == 1
    });
    let (parameters, reviews): (String, i64) = db(&dir)
        .query_row("SELECT parameters, reviews FROM scheduler_parameters", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    let parameters: Vec<f64> = serde_json::from_str(&parameters).unwrap();
    assert_eq!((parameters.len(), reviews), (21, 5 * ids.len() as i64));
    let outcome: String = db(&dir).query_row("SELECT outcome FROM scheduler_fit_attempts", [], |r| r.get(0)).unwrap();
    assert_eq!(outcome, "fitted");
    // Within the week: no second fit. A week later: the next quiz step asks again.
    quiz_step(3);
    assert_eq!(jobs(), 1);
    db(&dir).execute("UPDATE scheduler_parameters SET fitted_at = fitted_at - 8 * 86400000", []).unwrap();
    db(&dir).execute("UPDATE scheduler_fit_attempts SET attempted_at = attempted_at - 8 * 86400000", []).unwrap();
    quiz_step(4);
    wait_for("the second fit", Duration::from_secs(30), || {
        db(&dir)
            .query_row("SELECT COUNT(*) FROM jobs WHERE kind = 'optimize_scheduler' AND state = 'succeeded'", [], |r| {
                r.get::<_, i64>(0)
            })
            .unwrap()
            == 2
    });
    // The quiz schedules with the stored parameters (the reviews fit close to the defaults, so
    // a stored set with another initial Good stability shows it): a new card's Good is w2 days.
    let mut custom: Vec<f64> = fsrs_defaults();
    custom[2] = 5.0;
    db(&dir)
        .execute("UPDATE scheduler_parameters SET parameters = ?1", [serde_json::to_string(&custom).unwrap()])
        .unwrap();
    let scheduler = vibelearn::learning::cards::scheduler(&db(&dir), 0.9, 8).unwrap();
    let [_, _, good, _] = scheduler.preview(&Default::default(), now_ms());
    assert!((good - 5 * DAY_MS).abs() < 60_000, "{good}");
}

/// FSRS-6's default parameters, as the `fsrs` crate has them.
fn fsrs_defaults() -> Vec<f64> {
    vec![
        0.212, 1.2931, 2.3065, 8.2956, 6.4133, 0.8334, 3.0194, 0.001, 1.8722, 0.1666, 0.796, 1.4835, 0.0614, 0.2629,
        1.6483, 0.6014, 1.8729, 0.5425, 0.0912, 0.0658, 0.1542,
    ]
}

#[test]
fn the_next_quiz_job_re_teaches_a_leech_with_another_type_on_the_same_code() {
    let dir = analysed();
    // A leech: a grounded question of the session, suspended after eight lapses.
    let (leech, concept, kind, file): (String, String, String, String) = db(&dir)
        .query_row(
            "SELECT q.id, q.concept_id, q.question_type, q.grounding_file FROM questions q \
             WHERE q.grounding_file IS NOT NULL AND q.parent_question_id IS NULL ORDER BY q.id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    db(&dir)
        .execute(
            "UPDATE questions SET tags = json_insert(tags, '$[#]', 'leech'), suspended = 1, lapses = 8, \
             card_state = 'relearning' WHERE id = ?1",
            [&leech],
        )
        .unwrap();
    let of_concept = || -> i64 {
        db(&dir).query_row("SELECT COUNT(*) FROM questions WHERE concept_id = ?1", [&concept], |r| r.get(0)).unwrap()
    };
    let before = of_concept();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    http.post("/api/vibelearn/analyze/quiz", &serde_json::json!({"contentSessionId": session_id()})).unwrap();
    let reteach = || -> Option<(String, String, Option<String>)> {
        db(&dir)
            .query_row(
                "SELECT question_type, tags, grounding_file FROM questions WHERE concept_id = ?1 \
                 AND EXISTS (SELECT 1 FROM json_each(tags) t WHERE t.value = 'reteach')",
                [&concept],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .unwrap()
    };
    wait_for("a re-teach question", Duration::from_secs(30), || reteach().is_some());
    let (new_kind, tags, grounded_in) = reteach().unwrap();
    assert_ne!(new_kind, kind, "another angle, not the same drill");
    assert_eq!(grounded_in.as_deref(), Some(file.as_str()), "the same code");
    assert!(tags.contains("reteach"), "{tags}");
    assert_eq!(of_concept(), before + 1, "a new question, not a re-tagged one");
    // Once re-taught, the next run writes no second one.
    http.post("/api/vibelearn/analyze/quiz", &serde_json::json!({"contentSessionId": session_id()})).unwrap();
    let count = || -> i64 {
        db(&dir)
            .query_row(
                "SELECT COUNT(*) FROM questions WHERE EXISTS (SELECT 1 FROM json_each(tags) t WHERE t.value = 'reteach')",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    wait_for("the second quiz job", Duration::from_secs(30), || {
        db(&dir)
            .query_row("SELECT COUNT(*) FROM jobs WHERE kind = 'analyze_quiz' AND state = 'succeeded'", [], |r| {
                r.get::<_, i64>(0)
            })
            .unwrap()
            >= 3
    });
    assert_eq!(count(), 1);
}

/// Issue 27, point 10: `vl quiz` writes with its own `BEGIN IMMEDIATE` beside the worker's
/// writer (the reasons it is safe are in `learning::record`'s module doc). Both at once, under
/// load: every event the worker accepted is committed, every answer the quiz printed feedback
/// for is recorded, and nothing failed on either side.
#[test]
fn quiz_answers_beside_a_busy_worker_lose_nothing() {
    let dir = analysed();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load = {
        let (http, stop) = (worker.http(), stop.clone());
        std::thread::spawn(move || {
            let mut accepted = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) || accepted < 50 {
                let body = serde_json::json!({"contentSessionId": format!("load-{accepted}"), "prompt": "p"});
                let (status, reply) = http.post("/api/sessions/init", &body).unwrap();
                assert_eq!(status, 202, "{reply}");
                accepted += 1;
            }
            accepted
        })
    };
    // Every question due, each answered right (Enter accepts Good): one transaction each.
    db(&dir).execute("UPDATE questions SET due_at = 1 WHERE parent_question_id IS NULL", []).unwrap();
    db(&dir).execute("UPDATE questions SET follow_up = NULL", []).unwrap();
    let all = questions(&dir);
    let conn = db(&dir);
    let order: Vec<String> = vibelearn::learning::cards::due_questions(&conn, now_ms(), None, 50).unwrap()["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["id"].as_str().unwrap().to_owned())
        .collect();
    let script: String = order
        .iter()
        .map(|id| {
            let q = all.iter().find(|q| &q.id == id).unwrap();
            let answer = right_answer(q);
            if answer.contains('\n') { format!("{answer}\n") } else { format!("{answer}\n\n") }
        })
        .collect();
    let out = quiz(&dir, &["--limit", "50"], &script);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let accepted = load.join().unwrap();
    assert!(
        out.contains(&format!("Done: {n} answers saved ({n} correct of {n} graded, 0 again)", n = order.len())),
        "{out}"
    );
    let recorded: i64 = db(&dir).query_row("SELECT COUNT(*) FROM review_log", [], |r| r.get(0)).unwrap();
    assert_eq!(recorded as usize, order.len());
    wait_for("every accepted event to be ingested", Duration::from_secs(30), || {
        let n: i64 =
            db(&dir).query_row("SELECT COUNT(*) FROM sessions WHERE id LIKE 'load-%'", [], |r| r.get(0)).unwrap();
        n as usize == accepted
    });
    let (_, health) = http.get("/api/health").unwrap();
    assert_eq!(health["queue"]["dead"], 0, "{health}");
}
