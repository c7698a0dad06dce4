//! One sitting of `vl quiz` as a learner meets it (issue 41): saying "I don't know" on every
//! card type, in a pipe, at a terminal and through `vl quiz answer --json`; a sitting that asks
//! the database again when its queue runs out, so learn-ahead holds as in `vl quiz next --json`;
//! and prompts that say what follows the answer.

use super::*;

/// `vl quiz ARGS --json`: the exit code and the JSON printed.
fn json(dir: &TempDir, args: &[&str]) -> (i32, serde_json::Value) {
    let (code, out, err) = run(dir.path(), &[&["quiz"], args, &["--json"]].concat(), "");
    assert!(err.is_empty(), "{err}");
    (code, serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}")))
}

const MINUTE_MS: i64 = 60_000;

#[test]
fn saying_i_do_not_know_is_a_miss_on_every_card_type_with_the_answer_shown() {
    let dir = analysed();
    insert_question(&dir, "t-tf", "true_false", "junior", "true", "closures");
    insert_question(&dir, "t-open", "open_ended", "senior", "It depends on the lifetime.", "closures");
    let mut covered = Vec::new();
    for (q, said) in questions(&dir).into_iter().zip(["no idea", "idk", "?", "skip", "I don't know"].iter().cycle()) {
        only_due(&dir, &q.id);
        let out = quiz(&dir, &[], &format!("{said}\n"));
        assert_eq!(last_attempt(&dir, &q.id), (said.to_string(), false, 1), "{} answered {said:?}:\n{out}", q.kind);
        assert!(out.contains("✗ Not known — that counts as a miss, rated Again."), "{out}");
        let shown = if q.correct.contains('\n') { q.correct.lines().next().unwrap_or_default() } else { &q.correct };
        let answer_line = out.lines().position(|l| l.contains("Answer:") || l.contains("Model answer:"));
        assert!(answer_line.is_some() && out.contains(shown.trim()), "the answer is shown: {out}");
        // Rated Again without a rating prompt; the card comes back through its learning step.
        assert!(out.contains("Again — back in 1 minute, before this sitting ends."), "{out}");
        assert!(!out[..out.find("Again — back").unwrap()].contains("Rate:"), "{out}");
        assert_eq!(card(&dir, &q.id).0, "learning");
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
fn vl_quiz_answer_takes_no_idea_on_a_multiple_choice_card_with_or_without_rating_1() {
    let dir = analysed();
    let mc = of_kind(&dir, "multiple_choice").unwrap();
    let (right, _) = letters(&mc);
    let option = &mc.options[usize::from(right.as_bytes()[0] - b'a')];
    for extra in [&[][..], &["--rating", "1"], &["--rating", "3"]] {
        only_due(&dir, &mc.id);
        let (code, reply) = json(&dir, &[&["answer", &mc.id, "no idea"], extra].concat());
        assert_eq!(code, 0, "{extra:?}: {reply}");
        assert_eq!(
            (reply["recorded"].as_bool(), reply["correct"].as_bool(), reply["rating"].as_i64()),
            (Some(true), Some(false), Some(1)),
            "{extra:?}: {reply}"
        );
        assert_eq!(reply["dont_know"], true);
        assert_eq!(reply["expected"].as_str(), Some(format!("{}) {option}", right.to_uppercase()).as_str()));
        assert_eq!((reply["card_state"].as_str(), reply["next_due_in"].as_str()), (Some("learning"), Some("1 minute")));
        assert_eq!(last_attempt(&dir, &mc.id), ("no idea".to_owned(), false, 1));
    }
    // A free-text card: recorded at once (no rubric round trip), the model answer given.
    insert_question(&dir, "t-code", "code_reading", "mid", "It awaits, then parses.", "closures");
    let (code, reply) = json(&dir, &["answer", "t-code", "?"]);
    assert_eq!((code, reply["recorded"].as_bool(), reply["rating"].as_i64()), (0, Some(true), Some(1)), "{reply}");
    assert_eq!(reply["expected"], "It awaits, then parses.");
    // "?" that is the blank's answer is an answer: the Rust `?` operator.
    insert_question(&dir, "t-try", "fill_in_blank", "mid", "?", "closures");
    let (_, reply) = json(&dir, &["answer", "t-try", "?"]);
    assert_eq!((reply["correct"].as_bool(), reply["dont_know"].as_bool()), (Some(true), Some(false)), "{reply}");
}

#[test]
fn an_empty_answer_at_the_terminal_said_twice_is_a_don_t_know() {
    use vibelearn::cli::quiz::{QuizOptions, run_quiz, term::Style};
    let dir = analysed();
    let ordering = of_kind(&dir, "ordering").unwrap();
    only_due(&dir, &ordering.id);
    let options = QuizOptions {
        filter: Default::default(),
        limit: 1,
        new_per_day: 20,
        interactive: true,
        style: Style { color: false },
        grader: None,
        scheduler: Default::default(),
        easy_ms: 8_000,
    };
    let mut conn = vibelearn::db::open(&dir.db_path(), vibelearn::db::Synchronous::Normal).unwrap();
    let clock = vibelearn::clock::ManualClock::new(now_ms());
    let mut out = Vec::new();
    let summary =
        run_quiz(&mut conn, &mut "\n\n".as_bytes(), &mut out, clock.as_ref(), &options, &Default::default()).unwrap();
    let text = String::from_utf8(out).unwrap();
    // The first empty line re-asks and says what a second one does; the second is the miss.
    assert!(text.contains("or press Enter again if you don't know"), "{text}");
    assert!(text.contains("✗ Not known") && text.contains("Answer:"), "{text}");
    assert_eq!((summary.answered, summary.again, summary.correct), (1, 1, 0), "{text}");
    assert_eq!(last_attempt(&dir, &ordering.id), (String::new(), false, 1));
    // In a pipe an empty line only re-asks: blank lines in a script are not answers.
    only_due(&dir, &ordering.id);
    let out = quiz(&dir, &[], "\n\n\n");
    assert_eq!(out.matches("an empty line does not count").count(), 3, "{out}");
    assert_eq!(attempts(&dir, &ordering.id).len(), 1, "nothing more recorded: {out}");
}

#[test]
fn a_sitting_asks_the_database_again_when_its_queue_runs_out_so_learn_ahead_holds() {
    let dir = analysed();
    let review = of_kind(&dir, "multiple_choice").unwrap();
    let relearning = of_kind(&dir, "ordering").unwrap();
    let now = now_ms();
    // One review due now; a card relearning after a lapse, its step due in 8 minutes.
    db(&dir)
        .execute(
            "UPDATE questions SET due_at = CASE id WHEN ?1 THEN ?3 WHEN ?2 THEN ?4 ELSE ?5 END, \
             card_state = CASE id WHEN ?1 THEN 'review' WHEN ?2 THEN 'relearning' ELSE card_state END, \
             learning_step = CASE id WHEN ?2 THEN 0 ELSE learning_step END, \
             stability = CASE WHEN id IN (?1, ?2) THEN 3.0 ELSE stability END, \
             fsrs_difficulty = CASE WHEN id IN (?1, ?2) THEN 5.0 ELSE fsrs_difficulty END, \
             last_review_at = CASE id WHEN ?1 THEN ?3 - 3 * 86400000 WHEN ?2 THEN ?3 - 2 * 60000 ELSE last_review_at END, \
             reps = CASE WHEN id IN (?1, ?2) THEN 4 ELSE reps END, \
             lapses = CASE id WHEN ?2 THEN 1 ELSE lapses END",
            params![review.id, relearning.id, now - 1000, now + 8 * MINUTE_MS, FAR_FUTURE],
        )
        .unwrap();
    // What the JSON API offers once the review is done is what the sitting must ask.
    let (right, _) = letters(&review);
    let out = quiz(&dir, &[], &format!("{right}\n\n{}\n\n", relearning.correct));
    assert!(out.contains("VibeLearn quiz — 1 question: 0 to relearn, 1 due for review, 0 new"), "{out}");
    assert!(out.contains("1 more question is due now — asking on."), "{out}");
    assert!(out.contains("Question 2 · relearn · ordering"), "{out}");
    assert_eq!(attempts(&dir, &relearning.id), [(relearning.correct.clone(), true, 4)], "{out}");
    assert!(out.contains("Done: 2 answers saved"), "{out}");
    assert!(!out.contains("the first in 8 minutes"), "{out}");

    // `vl quiz next --json` at that moment offered the same card.
    let dir = analysed();
    db(&dir)
        .execute(
            "UPDATE questions SET due_at = CASE id WHEN ?1 THEN ?2 ELSE ?3 END, \
             card_state = CASE id WHEN ?1 THEN 'relearning' ELSE card_state END",
            params![relearning.id, now + 8 * MINUTE_MS, FAR_FUTURE],
        )
        .unwrap();
    let (_, next) = json(&dir, &["next"]);
    assert_eq!(next["question"]["id"].as_str(), Some(relearning.id.as_str()), "{next}");
}

#[test]
fn every_prompt_says_what_follows_the_answer() {
    let dir = analysed();
    // A follow-up without its own model answer: no model answer follows, and the prompt says so.
    let q = junior_of_kind(&dir, "fill_in_blank").unwrap();
    only_due(&dir, &q.id);
    let out = quiz(&dir, &[], &format!("{}\n\nit maps each item\n", q.correct));
    let asked = out.find("· follow-up · open ended").expect("the follow-up is asked");
    let follow_up = &out[asked..];
    assert!(follow_up.contains("(your thoughts on one line — a reflection prompt: no model answer follows"), "{out}");
    assert!(!follow_up.contains("Model answer") && !out.contains("the model answer follows"), "{out}");
    // A free-text card with a model answer: the prompt says it is shown next, and it is.
    let code = of_kind(&dir, "code_reading").unwrap();
    only_due(&dir, &code.id);
    let out = quiz(&dir, &[], "it loops\n3\n");
    let hint = out.find("the model answer is shown next, then you rate yourself 1–4").expect("said");
    assert!(out[hint..].contains("Model answer:"), "{out}");
    // Every card says how to say "I don't know".
    assert!(out.contains("; ? if you don't know)"), "{out}");
}

#[test]
fn every_surface_counts_answers_questions_and_concepts_alike() {
    let dir = analysed();
    // A sitting with a right junior answer and its follow-up (a reflection prompt), then a
    // wrong answer: 3 answers, 1 correct of 2 graded, 1 reflection.
    let q = junior_of_kind(&dir, "fill_in_blank").unwrap();
    only_due(&dir, &q.id);
    let out = quiz(&dir, &[], &format!("{}\n\nit maps each item\n", q.correct));
    assert!(out.contains("Done: 2 answers saved (1 correct of 1 graded, 0 again, 1 reflection)"), "{out}");
    let mc = of_kind(&dir, "multiple_choice").unwrap();
    only_due(&dir, &mc.id);
    quiz(&dir, &[], &format!("{}\n", letters(&mc).1));
    let questions: i64 = db(&dir).query_row("SELECT COUNT(*) FROM questions", [], |r| r.get(0)).unwrap();
    let answers = "3 answers: 1 correct of 2 graded, 1 reflection";
    let written = format!("{questions} questions ({} cards, 1 reflection prompt)", questions - 1);

    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let (_, overview) = http.get("/api/vibelearn/overview").unwrap();
    assert_eq!(overview["answers"]["words"], answers, "{overview}");
    assert_eq!(overview["questions"]["words"], written.as_str(), "{overview}");
    let standings = overview["standings"].as_str().unwrap().to_owned();
    let concepts = overview["concepts"].as_i64().unwrap();
    let named: i64 = ["mastered", "reviewing", "learning", "gaps"].iter().map(|k| overview[k].as_i64().unwrap()).sum();
    assert_eq!(named, concepts, "every concept has one standing: {overview}");
    // `vl status`: the same numbers in the same words, reflections neither right nor wrong.
    let (_, status, _) = run(dir.path(), &["status"], "");
    assert!(status.contains("answers         3 (1 correct of 2 graded, 1 reflection)"), "{status}");
    assert!(status.contains(&format!("questions       {questions} ({} cards, 1 reflection prompt)", questions - 1)));
    assert!(status.contains(&format!("concepts        {concepts} ({standings})")), "{status}");
    assert!(!status.contains("% correct"), "{status}");
    // The statusline and `vl gaps` name the standings as status does.
    let (_, line, _) = run(dir.path(), &["statusline"], "");
    assert!(line.contains(&format!("{concepts} concepts ({standings})")), "{line}");
    let (_, gaps, _) = run(dir.path(), &["gaps"], "");
    assert!(gaps.contains(&format!("Of {concepts} concepts: {standings}.")), "{gaps}");
    // The export counts what the dashboard's sessions list counts.
    let file = dir.path().join("cards.txt");
    let (_, exported, _) = run(dir.path(), &["export", "anki", "--out", file.to_str().unwrap()], "");
    assert!(exported.starts_with(&format!("Wrote {written} to ")), "{exported}");
    let (_, sessions) = http.get("/api/sessions").unwrap();
    let session = &sessions["sessions"][0];
    assert_eq!(
        (session["questions"].as_i64(), session["cards"].as_i64(), session["reflections"].as_i64()),
        (Some(questions), Some(questions - 1), Some(1)),
        "{session}"
    );
    // The dashboard's day: the reflection is no wrong answer.
    let (_, activity) = http.get("/api/vibelearn/activity?days=1").unwrap();
    let today = &activity["days"][0];
    assert_eq!((today["answers"].as_i64(), today["reflections"].as_i64()), (Some(3), Some(1)), "{activity}");
    assert_eq!(today["words"], answers);
}

#[test]
fn a_card_due_at_the_rollover_two_minutes_away_is_due_in_2_minutes_not_1_day() {
    const HOUR_MS: i64 = 3_600_000;
    // 04:00 on 2 December in Los Angeles, the learner day's start (2026-12-02T12:00:00Z).
    let rollover: i64 = 1_796_194_800_000 + 5 * HOUR_MS;
    let dir = analysed();
    let review = of_kind(&dir, "multiple_choice").unwrap();
    db(&dir)
        .execute(
            "UPDATE questions SET due_at = CASE id WHEN ?1 THEN ?2 ELSE ?3 END, \
             card_state = CASE id WHEN ?1 THEN 'review' ELSE card_state END, \
             suspended = CASE id WHEN ?1 THEN 0 ELSE 1 END",
            params![review.id, rollover, FAR_FUTURE],
        )
        .unwrap();
    let next_at = |now: i64| -> serde_json::Value {
        let output = vl(dir.path(), free_port())
            .args(["quiz", "next", "--json"])
            .env("TZ", "America/Los_Angeles")
            .env("VIBELEARN_DAY_STARTS_AT", "4")
            .env("VIBELEARN_DEBUG_NOW_MS", now.to_string())
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let at_0358 = next_at(rollover - 2 * MINUTE_MS);
    assert_eq!(
        (at_0358["question"].is_null(), at_0358["next_due_in"].as_str()),
        (true, Some("2 minutes")),
        "{at_0358}"
    );
    // The evening before, 5 hours away: hours, still not "1 day".
    assert_eq!(next_at(rollover - 5 * HOUR_MS)["next_due_in"], "5 hours");
    // 23:00 on 29 November: a day or more away, so whole learner days, as the rating buttons
    // count them (29 November to 2 December), not the 2.2 days until the rollover.
    assert_eq!(next_at(rollover - 2 * 24 * HOUR_MS - 5 * HOUR_MS)["next_due_in"], "3 days");
}
