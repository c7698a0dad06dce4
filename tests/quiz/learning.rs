//! The learning loop over days (issue 34): the learner's days in their own time zone, and
//! learning steps that finish through `vl quiz next|answer --json`, each call at a clock set
//! by the debug build's `VIBELEARN_DEBUG_NOW_MS`.

use super::*;

/// 2026-12-02T07:00:00Z: 23:00 on 1 December in Los Angeles.
const LA_EVENING: i64 = 1_796_194_800_000;
const HOUR_MS: i64 = 3_600_000;

/// `vl quiz ARGS --json` at `now` in Los Angeles with Anki's rollover; the JSON printed.
fn json_at(dir: &TempDir, now: i64, new_per_day: u32, args: &[&str]) -> serde_json::Value {
    let output = vl(dir.path(), free_port())
        .args([&["quiz"], args, &["--json"]].concat())
        .env("TZ", "America/Los_Angeles")
        .env("VIBELEARN_DAY_STARTS_AT", "4")
        .env("VIBELEARN_DEBUG_NOW_MS", now.to_string())
        .env("VIBELEARN_NEW_PER_DAY", new_per_day.to_string())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{text}{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The answer that `q` accepts as right.
fn right_answer(q: &Q) -> String {
    if q.kind == "multiple_choice" { letters(q).0 } else { q.correct.clone() }
}

fn objective(dir: &TempDir) -> Vec<Q> {
    questions(dir).into_iter().filter(|q| matches!(q.kind.as_str(), "multiple_choice" | "true_false")).collect()
}

#[test]
fn an_evening_and_the_next_morning_in_los_angeles_are_two_learner_days() {
    let dir = analysed();
    let all = objective(&dir);
    let by_id = |id: &str| all.iter().find(|q| q.id == id).cloned().expect("an objective question");
    // Only objective questions are new; the rest wait far ahead.
    db(&dir)
        .execute(
            "UPDATE questions SET due_at = ?1 WHERE question_type NOT IN ('multiple_choice', 'true_false')",
            [FAR_FUTURE],
        )
        .unwrap();
    // 23:00: the day's one new card, answered; then nothing new is left today.
    let next = json_at(&dir, LA_EVENING, 1, &["next"]);
    let first = by_id(next["question"]["id"].as_str().expect("a new card in the evening"));
    json_at(&dir, LA_EVENING + 60_000, 1, &["answer", &first.id, &right_answer(&first)]);
    let later = json_at(&dir, LA_EVENING + 2 * 60_000, 1, &["next"]);
    assert!(later["question"].is_null(), "the cap is spent for the evening: {later}");
    // 09:00 the next morning is the same UTC day, but a new learner day: a new card again.
    let morning = LA_EVENING + 10 * HOUR_MS;
    assert_eq!(morning / DAY_MS, LA_EVENING / DAY_MS, "one UTC day");
    let next = json_at(&dir, morning, 1, &["next"]);
    let second = by_id(next["question"]["id"].as_str().expect("the morning's new card"));
    assert_ne!(second.id, first.id);
    json_at(&dir, morning + 60_000, 1, &["answer", &second.id, &right_answer(&second)]);
    // Two learner days with answers: a streak of 2, and FSRS counts a day elapsed.
    let days: Vec<i64> = db(&dir)
        .prepare("SELECT day FROM daily_streaks ORDER BY day")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(days.len(), 2, "{days:?}");
    assert_eq!(days[1], days[0] + 1);
    let la = vibelearn::learn::day::LearnerDay::new(jiff::tz::TimeZone::get("America/Los_Angeles").unwrap(), 4);
    let streak = vibelearn::learning::days::streak(&db(&dir), &la, morning + HOUR_MS).unwrap();
    assert_eq!((streak.current, streak.longest), (2, 2));
    // And the 03:59 / 04:00 boundary: before it the night still belongs to the evening's day.
    let night = LA_EVENING + 4 * HOUR_MS + 59 * 60_000; // 03:59
    assert_eq!(la.day_of(night), days[0]);
    assert_eq!(la.day_of(night + 60_000), days[0] + 1);
}

#[test]
fn learning_steps_finish_in_the_sitting_through_the_json_api() {
    let dir = analysed();
    let mc = of_kind(&dir, "multiple_choice").unwrap();
    let (right, wrong) = letters(&mc);
    // Only this card exists for the sitting; no new card may fill the gaps (cap 0 after it).
    db(&dir)
        .execute("UPDATE questions SET due_at = CASE WHEN id = ?1 THEN NULL ELSE ?2 END", params![mc.id, FAR_FUTURE])
        .unwrap();
    let t0 = LA_EVENING;
    let next = json_at(&dir, t0, 1, &["next"]);
    assert_eq!(next["question"]["id"], mc.id.as_str(), "{next}");
    let missed = json_at(&dir, t0, 1, &["answer", &mc.id, &wrong]);
    assert_eq!((missed["card_state"].as_str(), missed["next_due_in"].as_str()), (Some("learning"), Some("1 minute")));
    // Due in a minute, nothing else due: asked now (learn-ahead), not "come back later".
    let next = json_at(&dir, t0 + 5_000, 1, &["next"]);
    assert_eq!(next["question"]["id"], mc.id.as_str(), "learn-ahead: {next}");
    let step = json_at(&dir, t0 + 10_000, 1, &["answer", &mc.id, &right]);
    assert_eq!(step["card_state"], "learning", "Good moves to the 10-minute step: {step}");
    // A junior question answered right earns its follow-up: with no model answer of its own it
    // is a reflection, kept and never scheduled (issue 34, point 5).
    if let Some(follow_up) = step["follow_up"].as_str() {
        let next = json_at(&dir, t0 + 12_000, 1, &["next"]);
        assert_eq!(
            (next["question"]["id"].as_str(), next["question"]["reflection"].as_bool()),
            (Some(follow_up), Some(true))
        );
        let kept = json_at(&dir, t0 + 15_000, 1, &["answer", follow_up, "a test that cannot fail proves nothing"]);
        assert_eq!((kept["recorded"].as_bool(), kept["reflection"].as_bool()), (Some(true), Some(true)), "{kept}");
        assert!(kept["next_due_at"].is_null(), "never scheduled: {kept}");
    }
    // Ten minutes ahead is within the 20-minute limit: asked now too, and it graduates.
    let next = json_at(&dir, t0 + 20_000, 1, &["next"]);
    assert_eq!(next["question"]["id"], mc.id.as_str(), "learn-ahead: {next}");
    let done = json_at(&dir, t0 + 30_000, 1, &["answer", &mc.id, &right]);
    assert_eq!(done["card_state"], "review", "{done}");
    // Now nothing is due, and the JSON says when the next card is.
    let next = json_at(&dir, t0 + 40_000, 1, &["next"]);
    // Graduated at 23:00 with one day to wait: due from 04:00, when the next learner day begins.
    assert!(next["question"].is_null() && next["next_due_at"].as_i64() == Some(t0 + 5 * HOUR_MS), "{next}");
}

/// `vl status`'s "due now" line, e.g. `5 questions (0 reviews, 5 new)`.
fn status_due(dir: &TempDir, env: &[(&str, &str)]) -> String {
    let output = vl(dir.path(), free_port()).arg("status").envs(env.iter().copied()).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let line = text.lines().find_map(|l| l.trim().strip_prefix("due now")).unwrap_or_else(|| panic!("{text}"));
    line.trim().to_owned()
}

/// `vl statusline` with no status JSON: the totals of all projects.
fn statusline_line(dir: &TempDir, env: &[(&str, &str)]) -> String {
    let output =
        vl(dir.path(), free_port()).arg("statusline").envs(env.iter().copied()).stdin(Stdio::null()).output().unwrap();
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

#[test]
fn due_counts_say_what_the_quiz_will_ask_when_the_deck_is_larger_than_the_new_card_cap() {
    let dir = analysed();
    let deck = questions(&dir).len();
    let cap = 5;
    assert!(deck > cap, "the sample deck ({deck}) is larger than the cap");
    // The same clock, day and cap for every command (a debug build's VIBELEARN_DEBUG_NOW_MS),
    // so a run at the learner day's 04:00 rollover counts one day everywhere.
    let at_time = |now: i64| {
        [
            ("VIBELEARN_NEW_PER_DAY", "5".to_owned()),
            ("TZ", "America/Los_Angeles".to_owned()),
            ("VIBELEARN_DAY_STARTS_AT", "4".to_owned()),
            ("VIBELEARN_DEBUG_NOW_MS", now.to_string()),
        ]
    };
    let now = now_ms() - 60_000;
    let env_now = at_time(now);
    let env: Vec<(&str, &str)> = env_now.iter().map(|(k, v)| (*k, v.as_str())).collect();
    // What the quiz asks now: five new cards, whatever the deck holds.
    let next = json_at(&dir, now, 5, &["next"]);
    assert_eq!(next["due"], 5, "{next}");
    assert_eq!(status_due(&dir, &env), "5 questions (0 reviews, 5 new)");
    let line = statusline_line(&dir, &env);
    assert!(line.starts_with("📚 5 questions due · vl quiz · "), "{line}");
    // The SessionStart message counts the same.
    let worker = WorkerProcess::start(dir.path());
    let start = serde_json::json!({"session_id": "due-cap", "cwd": dir.path(), "hook_event_name": "SessionStart",
        "source": "startup"});
    let said =
        crate::hooks::hook(dir.path(), worker.port, "claude-code", "session-start", start.to_string().as_bytes(), &env);
    assert_eq!(said["systemMessage"], "VibeLearn: 5 questions due — run `vl quiz`", "{said}");
    // Two new cards answered today leave three for today, everywhere.
    let (mut introduced, mut at) = (0, now);
    while introduced < 2 {
        at += 1000;
        let next = json_at(&dir, at, 5, &["next"]);
        let id = next["question"]["id"].as_str().expect("a card").to_owned();
        // A reflection follow-up earned by a right junior answer: kept, not a new card.
        let text = match questions(&dir).into_iter().find(|q| q.id == id) {
            Some(q) => {
                introduced += 1;
                right_answer(&q)
            }
            None => "a reflection".to_owned(),
        };
        let answered = json_at(&dir, at + 500, 5, &["answer", &id, &text, "--rating", "3"]);
        assert_eq!(answered["recorded"], true, "{answered}");
    }
    let left = json_at(&dir, at + 1000, 5, &["next"]);
    let follow_ups = left["due"].as_i64().unwrap() - 3;
    assert!((0..=1).contains(&follow_ups), "three new cards and a follow-up just earned: {left}");
    let new = 3 + follow_ups;
    let env_later = at_time(at + 1000);
    let env: Vec<(&str, &str)> = env_later.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(status_due(&dir, &env), format!("{new} questions (0 reviews, {new} new)"));
    let line = statusline_line(&dir, &env);
    assert!(line.starts_with(&format!("📚 {new} questions due")), "{line}");
    drop(worker);
}
