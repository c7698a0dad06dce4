//! The learning simulation (issue 34, point 7): a simulated learner takes the sample session's
//! deck through the real `vl quiz next --json` / `vl quiz answer --json`, once a day for N
//! days, each call at a clock set by the debug build's `VIBELEARN_DEBUG_NOW_MS`, in
//! America/Los_Angeles. `scripts/learn-sim.sh` runs the long version and prints its table
//! (docs/LEARNING.md); the test suite runs ten days and checks the goals that fit in them.
//!
//! # The simulated learner
//! - Its memory of a card follows FSRS's default model (the `fsrs` crate's default
//!   parameters): a card answered right or wrong steps its true memory as FSRS would, and the
//!   chance of answering right later is that memory's retrievability after the days elapsed.
//! - First sight: a new card is known with probability [`FIRST_SIGHT`]; the cards of
//!   [`MISSED_CONCEPTS`] concepts are always missed at first sight.
//! - Within one sitting, a card re-asked in its learning steps is answered right (the answer
//!   was just shown); the *nightly* card is forgotten by the next day, every day.
//! - Seeded, so two runs print the same table.

use super::*;

use fsrs::{FSRS, MemoryState};

/// Chance of knowing a new card at first sight.
const FIRST_SIGHT: f64 = 0.7;
/// Concepts whose cards are always missed at first sight.
const MISSED_CONCEPTS: usize = 3;
/// 2026-12-02T04:00:00Z: 20:00 on 1 December in Los Angeles, when each day's sitting starts.
const FIRST_SITTING: i64 = 1_796_184_000_000;
/// Time between two answers in a sitting.
const ANSWER_MS: i64 = 20_000;
/// A sitting never asks more than this (a loop in the product would otherwise never end).
const MAX_PER_SITTING: usize = 200;

/// The learner's true memory of one card.
#[derive(Debug, Clone, Copy, Default)]
struct Memory {
    state: Option<MemoryState>,
    last: i64,
    /// The learning-step re-asks of this sitting are answered right.
    seen_in_sitting: Option<i64>,
}

/// One day's answers, counted as Anki counts them (by the card's state when it was asked),
/// and all of them: nothing is left out by the definition.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct DayLoad {
    /// New cards introduced (follow-ups with their own model answer included).
    pub new: usize,
    /// Learning and relearning steps (a new card's re-asks, a lapsed card's).
    pub learning: usize,
    /// Reviews of review-state cards: what Anki calls reviews.
    pub reviews: usize,
    /// Reflection prompts (follow-ups without a model answer, asked once, never scheduled).
    pub reflections: usize,
}

impl DayLoad {
    pub fn answers(&self) -> usize {
        self.new + self.learning + self.reviews + self.reflections
    }

    fn count(&mut self, question: &serde_json::Value) {
        match question["card_state"].as_str().unwrap_or("new") {
            _ if question["reflection"] == true => self.reflections += 1,
            "learning" | "relearning" => self.learning += 1,
            "review" => self.reviews += 1,
            _ => self.new += 1,
        }
    }
}

/// What the run measured.
#[derive(Debug, Default)]
pub(super) struct Report {
    pub per_day: Vec<DayLoad>,
    /// Mean true retrievability over the cards met, at the end.
    pub true_recall: f64,
    /// Mean of the product's recall-now over the same cards, and the mean absolute gap.
    pub product_recall: f64,
    pub calibration_error: f64,
    /// (product recall-now bucket, cards, mean true recall).
    pub calibration: Vec<(String, usize, f64)>,
    /// Concepts mastered after the first sitting.
    pub mastered_after_first: usize,
    /// (concept, day it became mastered), for those that did.
    pub mastered_on: Vec<(String, Option<usize>)>,
    /// Concepts missed at first sight, and how many of them were asked again on a later day.
    pub missed: Vec<String>,
    pub missed_asked_again: usize,
    /// The day the nightly card became a leech, and its lapses at the end.
    pub leech_day: Option<usize>,
    pub nightly_lapses: i64,
    pub nightly_concept: String,
}

struct Learner {
    fsrs: FSRS,
    rng: fastrand::Rng,
    memory: std::collections::HashMap<String, Memory>,
    missed: Vec<String>,
    nightly: String,
}

impl Learner {
    /// Whether the learner recalls `q` at `now`, in the sitting that started at `sitting`.
    fn recalls(&mut self, q: &Q, now: i64, sitting: i64) -> bool {
        let m = self.memory.get(&q.id).copied().unwrap_or_default();
        if m.seen_in_sitting == Some(sitting) {
            return true; // re-asked in its steps, minutes after seeing the answer
        }
        if q.id == self.nightly {
            return false;
        }
        match m.state {
            None => !self.missed.contains(&q.concept) && self.rng.f64() < FIRST_SIGHT,
            Some(state) => self.rng.f64() < f64::from(retrievability(state, now - m.last)),
        }
    }

    /// The true memory after an answer at `now`.
    fn learn(&mut self, q: &Q, right: bool, now: i64, sitting: i64) {
        let m = self.memory.entry(q.id.clone()).or_default();
        let days = u32::try_from((now - m.last).max(0) / DAY_MS).unwrap_or(0);
        let days = if m.state.is_none() { 0 } else { days };
        if let Ok(next) = self.fsrs.next_states(m.state, 0.9, days) {
            m.state = Some(if right { next.good.memory } else { next.again.memory });
        }
        m.last = now;
        m.seen_in_sitting = Some(sitting);
    }
}

fn retrievability(state: MemoryState, elapsed_ms: i64) -> f32 {
    fsrs::current_retrievability(state, elapsed_ms.max(0) as f32 / DAY_MS as f32, fsrs::FSRS6_DEFAULT_DECAY)
}

/// `vl quiz ARGS --json` at `now`, with the product's new-card cap unless `new_per_day` sets one.
fn call(dir: &TempDir, now: i64, new_per_day: Option<u32>, args: &[&str]) -> serde_json::Value {
    let mut command = vl(dir.path(), free_port());
    command
        .args([&["quiz"], args, &["--json"]].concat())
        .env("TZ", "America/Los_Angeles")
        .env("VIBELEARN_DAY_STARTS_AT", "4")
        .env("VIBELEARN_DEBUG_NOW_MS", now.to_string())
        .stdin(Stdio::null());
    if let Some(cap) = new_per_day {
        command.env("VIBELEARN_NEW_PER_DAY", cap.to_string());
    }
    let output = command.output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{args:?}: {text}{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// An answer to `q` that is right or wrong, and the rating the learner gives it.
fn answer_text(q: Option<&Q>, right: bool) -> (String, &'static str) {
    let rating = if right { "3" } else { "1" };
    let Some(q) = q else { return ("a reflection".to_owned(), rating) };
    let text = match (q.kind.as_str(), right) {
        ("multiple_choice", _) => {
            let (yes, no) = letters(q);
            if right { yes } else { no }
        }
        ("true_false", true) | ("fill_in_blank", true) | ("ordering", true) => q.correct.clone(),
        ("true_false", false) => (if q.correct.trim().eq_ignore_ascii_case("true") { "false" } else { "true" }).into(),
        ("fill_in_blank", false) => WRONG_FILL_IN.to_owned(),
        ("ordering", false) => q.correct.split(',').rev().collect::<Vec<_>>().join(","),
        _ => "my answer in my own words".to_owned(),
    };
    (text, rating)
}

/// Runs `days` daily sittings on a copy of the analysed sample deck (`new_per_day`: the
/// new-card cap, the product's default when `None`).
pub(super) fn simulate(days: usize, seed: u64, new_per_day: Option<u32>) -> Report {
    let dir = analysed();
    let deck = questions(&dir);
    let mut concepts: Vec<String> = deck.iter().map(|q| q.concept.clone()).collect();
    concepts.sort();
    concepts.dedup();
    let missed: Vec<String> = concepts.iter().take(MISSED_CONCEPTS).cloned().collect();
    let nightly = deck
        .iter()
        .find(|q| q.kind == "multiple_choice" && !missed.contains(&q.concept))
        .map(|q| q.id.clone())
        .expect("the sample deck has a multiple-choice question");
    let mut learner = Learner {
        fsrs: FSRS::default(),
        rng: fastrand::Rng::with_seed(seed),
        memory: Default::default(),
        missed: missed.clone(),
        nightly: nightly.clone(),
    };
    let la = vibelearn::learn::day::LearnerDay::new(jiff::tz::TimeZone::get("America/Los_Angeles").unwrap(), 4);
    let scheduler = vibelearn::learn::schedule::Scheduler::default().with_day(la);
    let nightly_concept = deck.iter().find(|q| q.id == nightly).map(|q| q.concept.clone()).unwrap_or_default();
    let mut report = Report { missed: missed.clone(), nightly_concept, ..Report::default() };
    let mut mastered_on: std::collections::BTreeMap<String, Option<usize>> =
        concepts.iter().map(|c| (c.clone(), None)).collect();
    let mut missed_asked: std::collections::BTreeMap<String, usize> = Default::default();
    let mut now = FIRST_SITTING;
    for day in 1..=days {
        let sitting = FIRST_SITTING + (day as i64 - 1) * DAY_MS;
        now = now.max(sitting);
        let mut load = DayLoad::default();
        for _ in 0..MAX_PER_SITTING {
            let next = call(&dir, now, new_per_day, &["next"]);
            let Some(id) = next["question"]["id"].as_str().map(str::to_owned) else { break };
            load.count(&next["question"]);
            let q = deck.iter().find(|q| q.id == id);
            let right = match q {
                Some(q) => learner.recalls(q, now, sitting),
                None => true, // a reflection follow-up: any answer is kept
            };
            let (text, rating) = answer_text(q, right);
            let answered = call(&dir, now, new_per_day, &["answer", &id, &text, "--rating", rating]);
            assert_eq!(answered["recorded"], true, "{answered}");
            if let Some(q) = q {
                learner.learn(q, right, now, sitting);
                if day > 1 && missed.contains(&q.concept) {
                    *missed_asked.entry(q.concept.clone()).or_default() += 1;
                }
                if q.id == nightly && report.leech_day.is_none() && answered["leech"] == "reached" {
                    report.leech_day = Some(day);
                }
            }
            now += ANSWER_MS;
        }
        report.per_day.push(load);
        let standing = vibelearn::learning::mastery::concept_mastery(&db(&dir), &scheduler, now).unwrap();
        if day == 1 {
            report.mastered_after_first = standing.iter().filter(|c| c.is_mastered()).count();
        }
        for c in standing.iter().filter(|c| c.is_mastered()) {
            mastered_on.entry(c.key.clone()).or_default().get_or_insert(day);
        }
    }
    report.mastered_on = mastered_on.into_iter().collect();
    report.missed_asked_again = missed_asked.len();
    report.nightly_lapses =
        db(&dir).query_row("SELECT lapses FROM questions WHERE id = ?1", [&nightly], |r| r.get(0)).unwrap();
    measure_recall(&dir, &learner, &scheduler, now, &mut report);
    report
}

/// The learner's true recall over the cards met, and how well the product's recall-now tracks it.
fn measure_recall(
    dir: &TempDir,
    learner: &Learner,
    scheduler: &vibelearn::learn::schedule::Scheduler,
    now: i64,
    report: &mut Report,
) {
    let conn = db(dir);
    let mut pairs = Vec::new();
    for (id, m) in &learner.memory {
        let Some(state) = m.state else { continue };
        let card = conn
            .query_row(
                "SELECT card_state, learning_step, stability, fsrs_difficulty, due_at, last_review_at, reps, lapses \
                 FROM questions WHERE id = ?1",
                [id],
                vibelearn::learning::cards::card_from_row,
            )
            .unwrap();
        let product = scheduler.retrievability(&card, now).unwrap_or(0.0);
        pairs.push((product, f64::from(retrievability(state, now - m.last))));
    }
    let n = pairs.len().max(1) as f64;
    report.true_recall = pairs.iter().map(|p| p.1).sum::<f64>() / n;
    report.product_recall = pairs.iter().map(|p| p.0).sum::<f64>() / n;
    report.calibration_error = pairs.iter().map(|p| (p.0 - p.1).abs()).sum::<f64>() / n;
    for (low, high) in [(0.0, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, 1.01)] {
        let inside: Vec<f64> = pairs.iter().filter(|p| p.0 >= low && p.0 < high).map(|p| p.1).collect();
        let mean = if inside.is_empty() { 0.0 } else { inside.iter().sum::<f64>() / inside.len() as f64 };
        report.calibration.push((format!("{:.0}–{:.0} %", low * 100.0, high.min(1.0) * 100.0), inside.len(), mean));
    }
}

/// The report as the Markdown tables of docs/LEARNING.md.
pub(super) fn table(days: usize, r: &Report) -> String {
    let mut out = format!("Learning simulation: {days} days, Los Angeles, one sitting a day at 20:00\n\n");
    out.push_str("| measure | value |\n| --- | --- |\n");
    let worst = |f: fn(&DayLoad) -> usize| {
        r.per_day
            .iter()
            .enumerate()
            .max_by_key(|(i, d)| (f(d), std::cmp::Reverse(*i)))
            .map_or((0, 0), |(i, d)| (f(d), i + 1))
    };
    let (most_reviews, reviews_day) = worst(|d| d.reviews);
    let (most_answers, answers_day) = worst(DayLoad::answers);
    let later: Vec<usize> = r.per_day.iter().skip(1).map(DayLoad::answers).collect();
    let mean_later = later.iter().sum::<usize>() as f64 / later.len().max(1) as f64;
    let max_later = later.iter().max().copied().unwrap_or(0);
    let rows = [
        ("true recall over the cards met, at the end", format!("{:.3}", r.true_recall)),
        ("product's recall-now, same cards", format!("{:.3}", r.product_recall)),
        ("mean \\|recall-now − true recall\\|", format!("{:.3}", r.calibration_error)),
        ("most reviews (review-state cards) in a day", format!("{most_reviews} (day {reviews_day})")),
        ("most answers of any kind in a day", format!("{most_answers} (day {answers_day})")),
        ("answers a day after day 1: mean / max", format!("{mean_later:.1} / {max_later}")),
        ("concepts mastered after the first sitting", r.mastered_after_first.to_string()),
        ("concepts missed at first sight", r.missed.join(", ")),
        ("of them asked again on a later day", format!("{} of {}", r.missed_asked_again, r.missed.len())),
        ("concept of the nightly-forgotten card", r.nightly_concept.clone()),
        ("day the nightly-forgotten card became a leech", r.leech_day.map_or("never".into(), |d| d.to_string())),
        ("its lapses", r.nightly_lapses.to_string()),
    ];
    for (k, v) in rows {
        out.push_str(&format!("| {k} | {v} |\n"));
    }
    out.push_str("\n| concept | mastered on day |\n| --- | --- |\n");
    for (c, d) in &r.mastered_on {
        out.push_str(&format!("| {c} | {} |\n", d.map_or("—".into(), |d| d.to_string())));
    }
    out.push_str("\n| recall-now bucket | cards | mean true recall |\n| --- | --- | --- |\n");
    for (bucket, n, mean) in &r.calibration {
        out.push_str(&format!("| {bucket} | {n} | {mean:.3} |\n"));
    }
    out.push_str(
        "\n| day | new | learning steps | reviews | reflections | answers |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    for (i, d) in r.per_day.iter().enumerate() {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            i + 1,
            d.new,
            d.learning,
            d.reviews,
            d.reflections,
            d.answers()
        ));
    }
    let answers: Vec<usize> = r.per_day.iter().map(DayLoad::answers).collect();
    out.push_str(&format!("\nanswers per day: {answers:?}\n"));
    out
}

#[test]
fn ten_simulated_days_master_nothing_at_first_reteach_the_missed_and_lapse_the_nightly_card() {
    let r = simulate(10, 34, None);
    println!("{}", table(10, &r));
    assert_eq!(r.mastered_after_first, 0, "one sitting masters nothing");
    assert_eq!(r.missed_asked_again, r.missed.len(), "every concept missed at first sight is asked again");
    assert!(r.nightly_lapses >= 5, "the card forgotten nightly lapses (nearly) daily: {r:?}");
    // At most 10 reviews a day, counted as Anki counts them (review-state cards); and all the
    // answers in view: the first sitting (every new card, its steps, its reflections) is the
    // heaviest day, and the days after it ask fewer than 10 answers on average.
    assert!(r.per_day.iter().all(|d| d.reviews <= 10), "at most 10 reviews a day: {r:?}");
    let answers: Vec<usize> = r.per_day.iter().map(DayLoad::answers).collect();
    assert!(answers.iter().skip(1).all(|&n| n < answers[0]), "{answers:?}");
    assert!(answers.iter().skip(1).sum::<usize>() < 10 * (answers.len() - 1), "{answers:?}");
    assert!(r.true_recall > 0.7, "{r:?}");
}

/// The long run behind docs/LEARNING.md: `scripts/learn-sim.sh [DAYS] [NEW_PER_DAY]` (45 days
/// and the product's cap by default).
#[test]
#[ignore = "the benchmark: scripts/learn-sim.sh runs it"]
fn learning_simulation_benchmark() {
    let days: usize = std::env::var("LEARN_SIM_DAYS").ok().and_then(|d| d.parse().ok()).unwrap_or(45);
    let cap: Option<u32> = std::env::var("LEARN_SIM_NEW_PER_DAY").ok().and_then(|d| d.parse().ok());
    let r = simulate(days, 34, cap);
    println!("{}", table(days, &r));
}
