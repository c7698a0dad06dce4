//! `vl-load history <data-dir> <sessions> [sessions-per-day] [answers-per-day]`: a learner's
//! history grown to `sessions` analysed sessions, for the reads half of the scale benchmark
//! (issue 43 §6, `scripts/scale-bench.sh`). `reads <data-dir> <runs>` then times the learning
//! reads in process (the dashboard's overview and profile routes are these functions behind a
//! thin handler).
//!
//! The history is written straight into a fresh database (no worker, no LLM): each session
//! meets [`CONCEPTS_PER_SESSION`] concepts from a pool of [`CONCEPT_POOL`] names, with
//! [`QUESTIONS_PER_CONCEPT`] questions each (~15 a session, as the pipeline writes), in one of
//! [`PROJECTS`] project directories. Sessions come `sessions-per-day` (5) a day; every
//! simulated day the learner answers what `vl quiz` would ask, up to `answers-per-day` (100),
//! through the real `learning::record::record_answer` (FSRS, the review log, the streak, the
//! new-card cap), in sittings that let learning steps come back. About one answer in seven is
//! Again. The last simulated day ends at the real clock, so a release build's `vl` (which has
//! no debug clock) reads the history as of today.

use std::path::Path;

use rusqlite::{Connection, params};
use serde_json::{Value, json};
use vibelearn::clock::Millis;
use vibelearn::db::{self, Synchronous};
use vibelearn::learn::schedule::{DAY_MS, MINUTE_MS, Rating, Scheduler};
use vibelearn::learning::cards::{DueFilter, due};
use vibelearn::learning::days::sitting_filter;
use vibelearn::learning::record::{Answer, record_answer};

/// Concepts met per session.
const CONCEPTS_PER_SESSION: usize = 5;
/// Questions written per concept and session.
const QUESTIONS_PER_CONCEPT: usize = 3;
/// Distinct concept names: sessions meet the same concepts again, as a developer does.
const CONCEPT_POOL: usize = 400;
/// Project directories the sessions are spread over.
pub const PROJECTS: usize = 8;
/// The new-card cap the simulated sittings use (the product's default).
const NEW_PER_DAY: usize = 20;

/// The project directory of project `n`.
pub fn project_dir(n: usize) -> String {
    format!("/home/dev/work/project-{n}")
}

/// Grows a fresh history in `data_dir` and says what it holds.
pub fn run(data_dir: &Path, sessions: usize, per_day: usize, answers_per_day: usize) -> Value {
    std::fs::create_dir_all(data_dir).expect("create the data dir");
    let path = data_dir.join("vibelearn.db");
    let _ = std::fs::remove_file(&path);
    let mut conn = db::open_and_migrate(&path, Synchronous::Normal).expect("open the database");
    let per_day = per_day.max(1);
    let days = sessions.div_ceil(per_day).max(1);
    let now = vibelearn::clock::Clock::now_ms(&vibelearn::clock::SystemClock);
    // Day `d` starts at `base + d days`; the last day's sittings end a little before now.
    let base = now - days as Millis * DAY_MS - 2 * 60 * MINUTE_MS;
    let scheduler = learner_scheduler(&conn);
    let mut rng = fastrand::Rng::with_seed(43);
    let mut answers = 0;
    for day in 0..days {
        let start = base + day as Millis * DAY_MS;
        let first = day * per_day;
        for s in first..(first + per_day).min(sessions) {
            write_session(&conn, s, start + s as Millis - first as Millis);
        }
        answers += sittings(&mut conn, &scheduler, &mut rng, start + 60 * MINUTE_MS, answers_per_day);
    }
    // The worker's maintenance keeps each concept's standing within a minute of its cards
    // changing (`learning::kept_standings`); a history read later than that reads them kept.
    while vibelearn::learning::kept_standings::refill(&conn, &scheduler, now).expect("keep the standings").1 {}
    let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap_or(0);
    json!({"mode": "history", "sessions": sessions, "days": days, "answers": answers,
           "questions": count("SELECT COUNT(*) FROM questions"),
           "answered_cards": count("SELECT COUNT(*) FROM questions WHERE due_at IS NOT NULL"),
           "concepts": count("SELECT COUNT(DISTINCT normalized_name) FROM concepts"),
           "kept_standings": count("SELECT COUNT(*) FROM concept_standings WHERE standing IS NOT NULL"),
           "db_bytes": std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0)})
}

/// The scheduler `vl` would use: the settings and the learner's days of the environment.
fn learner_scheduler(conn: &Connection) -> Scheduler {
    vibelearn::learning::cards::scheduler_for(conn, &vibelearn::config::Config::load()).expect("the scheduler")
}

/// One analysed session `n` started at `at`: its concepts and their questions.
fn write_session(conn: &Connection, n: usize, at: Millis) {
    let id = format!("session-{n:05}");
    let cwd = project_dir(n % PROJECTS);
    conn.execute(
        "INSERT INTO sessions (id, project, cwd, state, started_at, updated_at, ended_at) \
         VALUES (?1, ?2, ?3, 'analyzed', ?4, ?4, ?4)",
        params![id, format!("project-{}", n % PROJECTS), cwd, at],
    )
    .expect("insert a session");
    for c in 0..CONCEPTS_PER_SESSION {
        let name = (n * 7 + c * 13) % CONCEPT_POOL;
        let concept = format!("{id}-c{c}");
        conn.execute(
            "INSERT INTO concepts (id, session_id, name, normalized_name, category, difficulty, source_file, \
             snippet, why_it_matters, confidence, created_at, updated_at) \
             VALUES (?1, ?2, ?3, ?4, 'patterns', 'mid', 'src/lib.rs', 'fn x() {}', 'why', 0.9, ?5, ?5)",
            params![concept, id, format!("Concept {name}"), format!("concept {name}"), at],
        )
        .expect("insert a concept");
        for q in 0..QUESTIONS_PER_CONCEPT {
            let qid = format!("{concept}-q{q}");
            conn.execute(
                "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, snippet, question, \
                 options, correct, explanation, tags, text_hash, created_at) \
                 VALUES (?1, ?2, ?3, 'true_false', 'mid', 'fn x() {}', ?4, NULL, 'true', 'because', '[]', ?1, ?5)",
                params![qid, concept, id, format!("Is {qid} true?"), at],
            )
            .expect("insert a question");
        }
    }
}

/// One simulated day's sittings from `at`: what `vl quiz` asks, answered, until the day's
/// answers are spent or nothing is due; learning steps come back in the next sitting.
fn sittings(conn: &mut Connection, scheduler: &Scheduler, rng: &mut fastrand::Rng, at: Millis, budget: usize) -> usize {
    let mut now = at;
    let mut given = 0;
    for _ in 0..4 {
        let filter = sitting_filter(conn, scheduler.day(), now, &DueFilter::default(), NEW_PER_DAY)
            .expect("the sitting's filter");
        let asked = due(conn, now, &filter, budget - given).expect("the due questions");
        if asked.is_empty() {
            break;
        }
        for question in asked {
            let rating = match rng.u8(0..20) {
                0..=2 => Rating::Again,
                3 => Rating::Hard,
                4 => Rating::Easy,
                _ => Rating::Good,
            };
            let answer = Answer {
                question_id: &question.id,
                text: "true",
                correct: rating != Rating::Again,
                rating,
                duration_ms: Some(6_000),
            };
            record_answer(conn, &answer, scheduler, now).expect("record an answer");
            now += 20_000;
            given += 1;
        }
        if given >= budget {
            break;
        }
        now += 11 * MINUTE_MS;
    }
    given
}

/// The learning reads over the history in `data_dir`, in process, each the median of `runs`
/// (milliseconds, wall `…_ms` and this thread's CPU time `…_cpu_ms`): the dashboard's overview
/// and profile, and the statusline's counts scoped to a project and to none.
pub fn reads(data_dir: &Path, runs: usize) -> Value {
    use vibelearn::learning::{mastery, summary};
    let conn = db::open_read_only(&data_dir.join("vibelearn.db")).expect("open the database");
    let scheduler = learner_scheduler(&conn);
    let now = vibelearn::clock::Clock::now_ms(&vibelearn::clock::SystemClock);
    let here = project_dir(0);
    let mut out = json!({"mode": "reads"});
    let reads: [(&str, &dyn Fn()); 4] = [
        // The routes' replies as the routes send them: read, then serialised to text.
        ("overview", &|| {
            let overview = summary::overview(&conn, &scheduler, now, NEW_PER_DAY).expect("overview");
            std::hint::black_box(serde_json::to_string(&overview).expect("overview as text"));
        }),
        ("profile", &|| {
            let profile = mastery::profile_at(&conn, &scheduler, now).expect("profile");
            std::hint::black_box(serde_json::to_string(&profile).expect("profile as text"));
        }),
        ("due_counts_project", &|| {
            let counts =
                summary::due_counts(&conn, &scheduler, now, Some(&here), NEW_PER_DAY, summary::Standings::Count);
            std::hint::black_box(counts.expect("due counts"));
        }),
        ("due_counts_elsewhere", &|| {
            let elsewhere = Some("/elsewhere");
            let counts = summary::due_counts(&conn, &scheduler, now, elsewhere, NEW_PER_DAY, summary::Standings::Count);
            std::hint::black_box(counts.expect("due counts"));
        }),
    ];
    for (name, read) in reads {
        let (wall, cpu) = median_times(runs, read);
        out[format!("{name}_ms")] = json!(wall);
        out[format!("{name}_cpu_ms")] = json!(cpu);
    }
    out
}

/// The medians of `runs` runs of `f`: wall time and this thread's CPU time, in ms.
fn median_times(runs: usize, f: &dyn Fn()) -> (f64, f64) {
    let (mut wall, mut cpu): (Vec<f64>, Vec<f64>) = (0..runs.max(1))
        .map(|_| {
            let (t, c) = (std::time::Instant::now(), thread_cpu_ns());
            f();
            (t.elapsed().as_secs_f64() * 1000.0, (thread_cpu_ns().saturating_sub(c)) as f64 / 1e6)
        })
        .unzip();
    wall.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    (wall[wall.len() / 2], cpu[cpu.len() / 2])
}

/// This thread's time on a CPU in ns (Linux's `/proc/thread-self/schedstat`; 0 elsewhere): on
/// a loaded machine the wall time is mostly waiting for a core.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}
