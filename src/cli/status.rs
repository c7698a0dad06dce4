//! `vl status` and `vl gaps` (SPEC §7): the learning summary on one screen, and the gaps with
//! a bar each. Both read the one definition in `learning::mastery`: a concept is mastered when
//! its cards (at least two) are all answered and mature with no leech; recall-now (FSRS
//! retrievability, the bar) is shown beside it and is never called mastery; a gap is a concept
//! under 70 % recall-now or with a leech, and leeches come first. The counts (concepts by
//! standing, questions, answers) and their words are `learning::counts`', which the quiz, the
//! statusline, the export and the dashboard print too. Both only read: the database is opened read-only (migrated first if this
//! binary's schema is newer), and the worker is asked for its health notices with a short
//! timeout (it may well be down).

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

use rusqlite::Connection;

use crate::cli::quiz::NO_SESSIONS;
use crate::cli::quiz::term::{Style, days};
use crate::clock::Millis;
use crate::config::Config;
use crate::db;
use crate::learn::mastery::Standing;
use crate::learn::schedule::Scheduler;
use crate::learning::cards;
use crate::learning::counts::{self, Answers, Questions, Standings};
use crate::learning::days::{self, Streak};
use crate::worker_client::WorkerClient;

/// `vl gaps` lists concepts whose mastery is below this (SPEC §7), and every leech.
pub const GAP_SCORE: f64 = crate::learn::mastery::GAP_RECALL;
/// Cells in a mastery bar: one per 10 %.
pub const BAR_CELLS: usize = 10;
/// How long `vl status` waits for the worker's health answer; on loopback it answers in a
/// few ms, and a status screen must not hang on a wedged worker.
const HEALTH_TIMEOUT: Duration = Duration::from_millis(500);
/// Categories shown by `vl status`.
const TOP_CATEGORIES: usize = 5;

/// Everything `vl status` shows that comes from the database.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StatusReport {
    pub sessions: i64,
    /// (platform, sessions), most first: which agents the sessions came from.
    pub by_platform: Vec<(String, i64)>,
    /// The agents whose hooks are installed (filled by `vl status` from their settings files).
    pub agents: Vec<String>,
    pub concepts: i64,
    /// What `vl quiz` asks now (`learning::cards::due_now`, the new-card cap applied): reviews
    /// due, cards in their learning steps, and new questions within today's cap.
    pub reviews_due: i64,
    pub learning_due: i64,
    pub new_questions: i64,
    /// The concepts by standing (`learning::counts`: mastered, reviewing, learning, gaps).
    pub standings: Standings,
    /// Questions written: cards and reflection prompts.
    pub questions: Questions,
    /// Suspended leech cards (`vl quiz --leeches` drills them).
    pub leeches: i64,
    /// Answers given: graded (correct or not) and reflections.
    pub answers: Answers,
    pub streak: Streak,
    /// (category, distinct concepts), most first.
    pub top_categories: Vec<(String, i64)>,
    /// (kind, dead jobs), most first.
    pub dead_jobs: Vec<(String, i64)>,
    /// Sessions whose raw captures the retention pass let go (`crate::retention`).
    pub sessions_pruned: i64,
    /// What the data directory holds (filled by `vl status`, which knows the directory).
    pub storage: Option<Storage>,
}

/// The data directory's size and how long captures are kept (issue 43 §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Storage {
    pub bytes: u64,
    /// `VIBELEARN_CAPTURE_RETENTION_DAYS`; 0 keeps them forever.
    pub retention_days: u64,
}

impl Storage {
    /// `12.3 MB · raw captures kept 30 days after a session's last event (4 sessions pruned)`.
    pub fn words(&self, pruned: i64) -> String {
        let size = match self.bytes {
            b if b < 1024 * 1024 => format!("{:.0} KB", b as f64 / 1024.0),
            b => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
        };
        let kept = match self.retention_days {
            0 => "raw captures kept forever (VIBELEARN_CAPTURE_RETENTION_DAYS=0)".to_owned(),
            1 => "raw captures kept 1 day after a session's last event".to_owned(),
            days => format!("raw captures kept {days} days after a session's last event"),
        };
        let pruned = match pruned {
            0 => String::new(),
            1 => " (1 session pruned)".to_owned(),
            n => format!(" ({n} sessions pruned)"),
        };
        format!("{size} · {kept}{pruned}")
    }
}

pub use crate::learning::mastery::{ConceptMastery as Gap, concept_mastery};

pub fn report(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
    new_per_day: usize,
) -> rusqlite::Result<StatusReport> {
    let one = |sql: &str| -> rusqlite::Result<i64> { conn.prepare_cached(sql)?.query_row([], |r| r.get(0)) };
    let sitting = days::sitting_filter(conn, scheduler.day(), now, &cards::DueFilter::default(), new_per_day)?;
    let due = cards::due_now(conn, now, &sitting)?;
    let keys = crate::learning::standings::all_keys(conn)?;
    let standings = crate::learning::standings::standings(conn, scheduler, now, &keys)?;
    let pairs = |sql: &str| -> rusqlite::Result<Vec<(String, i64)>> {
        conn.prepare_cached(sql)?.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect()
    };
    Ok(StatusReport {
        sessions: one("SELECT COUNT(*) FROM sessions")?,
        by_platform: pairs(
            "SELECT COALESCE(platform, 'unknown') AS p, COUNT(*) AS n FROM sessions GROUP BY p ORDER BY n DESC, p",
        )?,
        agents: Vec::new(),
        concepts: keys.len() as i64,
        reviews_due: due.reviews as i64,
        learning_due: due.learning as i64,
        new_questions: due.new as i64,
        standings,
        questions: counts::questions(conn, None)?,
        // A leech is a live card (`learning::standings`): counted from migration 0018's index.
        leeches: one(concat!(
            "SELECT COUNT(*) FROM questions q WHERE ",
            crate::learning::standings::live_card!(),
            " AND instr(q.tags, 'leech') > 0 AND EXISTS (SELECT 1 FROM json_each(q.tags) t WHERE t.value = 'leech')",
        ))?,
        answers: counts::answers(conn)?,
        streak: days::streak(conn, scheduler.day(), now)?,
        top_categories: pairs(&format!(
            "SELECT category, COUNT(DISTINCT normalized_name) AS n FROM concepts GROUP BY category \
             ORDER BY n DESC, category LIMIT {TOP_CATEGORIES}"
        ))?,
        dead_jobs: pairs(
            "SELECT kind, COUNT(*) AS n FROM jobs WHERE state = 'dead' GROUP BY kind ORDER BY n DESC, kind",
        )?,
        sessions_pruned: one("SELECT COUNT(*) FROM sessions WHERE captures_pruned_at IS NOT NULL")?,
        storage: None,
    })
}

/// The gaps (SPEC §7): leeches first (most lapses first), then concepts under [`GAP_SCORE`],
/// weakest first, the most answered first among equals (0 % over four cards is a surer gap
/// than never asked), then by name.
///
/// A gap is a concept with a live card (`learning::standings`): the standings come from those,
/// and only the gaps are read whole (`learning::mastery::concept_mastery_of`), not every
/// concept.
pub fn gaps(conn: &Connection, scheduler: &Scheduler, now: Millis) -> rusqlite::Result<Gaps> {
    let keys = crate::learning::standings::all_keys(conn)?;
    let live = crate::learning::standings::live_standings(conn, scheduler, now, &keys)?;
    let standings = crate::learning::standings::counted(&live, keys.len());
    let names: Vec<&str> = live.iter().filter(|(_, s)| **s == Standing::Gap).map(|(k, _)| k.as_str()).collect();
    let found = crate::learning::mastery::concept_mastery_of(conn, scheduler, now, &names)?;
    let mut list: Vec<Gap> = found.into_iter().filter(Gap::is_gap).collect();
    list.sort_by(|a, b| {
        (b.leeches > 0)
            .cmp(&(a.leeches > 0))
            .then(b.lapses.cmp(&a.lapses))
            .then(a.score.total_cmp(&b.score))
            .then(b.answered.cmp(&a.answered))
            .then(a.name.cmp(&b.name))
    });
    Ok(Gaps { standings, list })
}

/// What `vl gaps` shows: the gaps, and where every concept stands (`learning::counts`), so
/// the gaps are seen out of all the concepts in `vl status`'s words.
#[derive(Debug, Clone, PartialEq)]
pub struct Gaps {
    pub standings: Standings,
    pub list: Vec<Gap>,
}

/// `████░░░░░░` for 0.4: one cell per 10 %, rounded.
pub fn bar(score: f64) -> String {
    let filled = (score.clamp(0.0, 1.0) * BAR_CELLS as f64).round() as usize;
    format!("{}{}", "█".repeat(filled), "░".repeat(BAR_CELLS - filled))
}

fn percent(score: f64) -> i64 {
    (score.clamp(0.0, 1.0) * 100.0).round() as i64
}

/// Opens the database read-only; `Ok(None)` when it does not exist yet. A file behind this
/// binary's schema is migrated first (as the quiz would), or the reads would miss columns.
fn open(config: &Config) -> Result<Option<Connection>, String> {
    let path = config.db_path();
    if !path.exists() {
        return Ok(None);
    }
    let conn = db::open_read_only(&path).map_err(|e| e.to_string())?;
    let version: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| e.to_string())?;
    if version < db::latest_version() {
        drop(crate::cli::quiz::open(config).map_err(|e| e.to_string())?);
    }
    Ok(Some(conn))
}

fn scheduler(conn: &Connection, config: &Config) -> rusqlite::Result<Scheduler> {
    cards::scheduler_for(conn, config)
}

/// Runs `body` on the database, turning a missing database into the friendly first-run line.
fn with_db(
    command: &str,
    config: &Config,
    body: impl FnOnce(&Connection, &mut dyn Write) -> rusqlite::Result<()>,
) -> ExitCode {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match open(config) {
        Ok(None) => {
            let _ = writeln!(out, "{NO_SESSIONS}");
            ExitCode::SUCCESS
        }
        Ok(Some(conn)) => match body(&conn, &mut out) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("vl {command}: cannot read {}: {e}", config.db_path().display());
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("vl {command}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `vl status`.
pub fn run_status(config: &Config) -> ExitCode {
    let style = Style { color: std::io::stdout().is_terminal() };
    if !config.db_path().exists() {
        // No database yet: which provider would spend money is worth knowing already.
        let empty = StatusReport {
            agents: super::install::agents::installed(config).iter().map(|a| a.name().to_owned()).collect(),
            ..StatusReport::default()
        };
        let _ = print_status(&mut std::io::stdout().lock(), style, &empty, &provider_lines(config));
        return ExitCode::SUCCESS;
    }
    with_db("status", config, |conn, out| {
        let mut report = report(conn, &scheduler(conn, config)?, config.now_ms(), config.new_per_day() as usize)?;
        report.agents = super::install::agents::installed(config).iter().map(|a| a.name().to_owned()).collect();
        report.storage = Some(Storage {
            bytes: crate::retention::data_dir_bytes(&config.data_dir),
            retention_days: config.capture_retention_days(),
        });
        // A write error on stdout (a closed pipe) leaves nobody to tell.
        let _ = print_status(out, style, &report, &provider_lines(config));
        Ok(())
    })
}

/// `vl gaps`.
pub fn run_gaps(config: &Config) -> ExitCode {
    let style = Style { color: std::io::stdout().is_terminal() };
    with_db("gaps", config, |conn, out| {
        let sessions: i64 = conn.query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0))?;
        let found = gaps(conn, &scheduler(conn, config)?, config.now_ms())?;
        let _ = print_gaps(out, style, sessions, &found);
        Ok(())
    })
}

/// The provider the worker uses, as the worker says (its environment decides, not this
/// shell's), what chose it, with today's calls and tokens; the keys left unused (the worker's
/// and this shell's) with the command that turns one on; and the worker's notices, if it is
/// up. With no worker, the one decision for this shell's settings (`jobs::decide`), said as such.
fn provider_lines(config: &Config) -> Vec<String> {
    let client = WorkerClient::new(config, HEALTH_TIMEOUT);
    let health = client.get("/api/health");
    let held = match &health {
        Err(crate::worker_client::Unreachable::NotOurWorker(why)) => Some(why.clone()),
        _ => None,
    };
    let health = health.ok().filter(|r| r.body["llm"].is_object());
    let provider = match &health {
        Some(response) => {
            let llm = &response.body["llm"];
            let usage = crate::jobs::llm_usage::Usage {
                calls: llm["calls_today"].as_u64().unwrap_or(0),
                tokens: llm["tokens_today"].as_u64().unwrap_or(0),
            };
            let source = llm["source"].as_str().map(|s| format!("; chosen by {s}")).unwrap_or_default();
            format!(
                "{} (the worker's{source}) · today {}",
                llm["description"].as_str().unwrap_or("unknown"),
                usage_line(usage, llm["daily_tokens"].as_u64().unwrap_or(0))
            )
        }
        None => {
            let choice = crate::jobs::decide(config);
            format!(
                "{} (chosen by {}, from this shell's settings; the worker may differ)",
                crate::jobs::describe_provider(&choice),
                crate::jobs::provider_source(config, &choice)
            )
        }
    };
    // What a session costs in tokens and what the budget fits (issue 43 §5), for a provider
    // whose calls spend them.
    let cost = match &health {
        Some(response) if response.body["llm"]["uses_tokens"] == true => {
            let llm = &response.body["llm"];
            let usage = crate::jobs::llm_usage::Usage {
                calls: llm["calls_today"].as_u64().unwrap_or(0),
                tokens: llm["tokens_today"].as_u64().unwrap_or(0),
            };
            Some(crate::jobs::llm_usage::session_cost(usage, llm["daily_tokens"].as_u64().unwrap_or(0)))
        }
        Some(_) => None,
        None => matches!(crate::jobs::decide(config), Ok(crate::llm::Selected::Remote(_)))
            .then(|| crate::jobs::llm_usage::session_cost(Default::default(), config.llm_daily_tokens())),
    };
    let worker_note = health.as_ref().and_then(|r| r.body["llm"]["note"].as_str().map(str::to_owned));
    let mut notes: Vec<String> = worker_note.into_iter().chain(crate::jobs::provider_note(config)).collect();
    notes.dedup();
    let worker = match health {
        Some(response) => {
            let notices: Vec<String> = response.body["notices"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect();
            if notices.is_empty() {
                vec!["worker running, no notices".to_owned()]
            } else {
                notices.into_iter().map(|n| format!("notice: {n}")).collect()
            }
        }
        None => {
            // The pauses are in the database: say so even while no worker runs.
            let gates = super::backend::read(config, Vec::new(), crate::queue::gates::list).unwrap_or_default();
            // The worker the hooks start next probes the provider these settings choose.
            let choice = crate::jobs::decide(config);
            let down = match held {
                Some(why) => format!("worker not running: {why}"),
                None => format!("worker not running (expected at {})", config.worker_url()),
            };
            std::iter::once(down)
                .chain(
                    crate::jobs::notices_of(&gates, crate::jobs::probed_gate(&choice))
                        .into_iter()
                        .map(|n| format!("notice: {n}")),
                )
                .collect()
        }
    };
    std::iter::once(provider).chain(cost).chain(notes).chain(worker).collect()
}

/// Today's calls and tokens, against the budget when there is one.
pub fn usage_line(usage: crate::jobs::llm_usage::Usage, daily_tokens: u64) -> String {
    let calls = if usage.calls == 1 { "1 call".to_owned() } else { format!("{} calls", usage.calls) };
    match daily_tokens {
        0 => format!("{calls}, {} tokens (no daily budget)", usage.tokens),
        budget => format!("{calls}, {} of {budget} tokens", usage.tokens),
    }
}

pub fn print_status(out: &mut dyn Write, s: Style, r: &StatusReport, provider: &[String]) -> std::io::Result<()> {
    let row = |out: &mut dyn Write, label: &str, value: String| writeln!(out, "  {:<15} {value}", s.dim(label));
    if r.sessions == 0 {
        // Nothing to learn from yet, but which provider would spend money is worth knowing now.
        writeln!(out, "{NO_SESSIONS}")?;
        if !r.agents.is_empty() {
            row(out, "agents", format!("hooks installed for {}", r.agents.join(", ")))?;
        }
        for (i, line) in provider.iter().enumerate() {
            row(out, if i == 0 { "provider" } else { "" }, line.clone())?;
        }
        return Ok(());
    }
    writeln!(out, "{}", s.bold("VibeLearn status"))?;
    let platforms: Vec<String> = r.by_platform.iter().map(|(p, n)| format!("{p} {n}")).collect();
    let from = if platforms.is_empty() { String::new() } else { format!(" ({})", platforms.join(", ")) };
    row(out, "sessions", format!("{}{from}", r.sessions))?;
    let agents =
        if r.agents.is_empty() { "none installed — vl install <agent>".to_owned() } else { r.agents.join(", ") };
    row(out, "agents", agents)?;
    // Where the concepts stand, all four standings named (issue 41: "reviewing" was left out).
    let standings = if r.concepts > 0 { format!(" ({})", r.standings.words()) } else { String::new() };
    row(out, "concepts", format!("{}{standings}", r.concepts))?;
    let questions = r.questions.detail().map(|d| format!(" ({d})")).unwrap_or_default();
    row(out, "questions", format!("{}{questions}", r.questions.total()))?;
    row(out, "due now", {
        let steps = if r.learning_due > 0 { format!(", {} in learning steps", r.learning_due) } else { String::new() };
        let total = r.reviews_due + r.learning_due + r.new_questions;
        format!("{total} questions ({} reviews{steps}, {} new)", r.reviews_due, r.new_questions)
    })?;
    if r.leeches > 0 {
        let plural = if r.leeches == 1 { "" } else { "s" };
        row(out, "leeches", s.yellow(&format!("{} card{plural} suspended — vl quiz --leeches", r.leeches)))?;
    }
    // Reflections are neither right nor wrong: "correct of graded", as the quiz says it.
    let detail = if r.answers.answers > 0 { format!(" ({})", r.answers.detail()) } else { String::new() };
    row(out, "answers", format!("{}{detail}", r.answers.answers))?;
    row(out, "streak", format!("{} (longest {})", days(r.streak.current), days(r.streak.longest)))?;
    let categories: Vec<String> = r.top_categories.iter().map(|(c, n)| format!("{c} {n}")).collect();
    row(out, "top categories", if categories.is_empty() { "—".to_owned() } else { categories.join(", ") })?;
    for (i, line) in provider.iter().enumerate() {
        row(out, if i == 0 { "provider" } else { "" }, line.clone())?;
    }
    let dead: i64 = r.dead_jobs.iter().map(|(_, n)| n).sum();
    let dead_line = if dead == 0 {
        "0".to_owned()
    } else {
        let kinds: Vec<String> = r.dead_jobs.iter().map(|(k, n)| format!("{k} {n}")).collect();
        s.yellow(&format!("{dead} ({}) — vl jobs list --state dead", kinds.join(", ")))
    };
    row(out, "dead jobs", dead_line)?;
    if let Some(storage) = r.storage {
        row(out, "storage", storage.words(r.sessions_pruned))?;
    }
    if r.reviews_due + r.learning_due + r.new_questions > 0 {
        writeln!(out, "\nNext: vl quiz")?;
    }
    Ok(())
}

pub fn print_gaps(out: &mut dyn Write, s: Style, sessions: i64, found: &Gaps) -> std::io::Result<()> {
    let Gaps { standings, list: gaps } = found;
    let concepts = standings.concepts();
    // Every concept in `vl status`'s words, so the gaps are seen among the rest.
    let standing_line = |out: &mut dyn Write| {
        writeln!(out, "Of {concepts} concept{}: {}.", if concepts == 1 { "" } else { "s" }, standings.words())
    };
    if sessions == 0 {
        return writeln!(out, "{NO_SESSIONS}");
    }
    if concepts == 0 {
        return writeln!(
            out,
            "Nothing to judge yet: no concept has been extracted. Concepts come from analysed sessions (vl sync)."
        );
    }
    if gaps.is_empty() {
        writeln!(
            out,
            "No gaps: no concept answered is under {} % recall now, and none has a leech.",
            percent(GAP_SCORE)
        )?;
        return standing_line(out);
    }
    let plural = if gaps.len() == 1 { "" } else { "s" };
    let leeches = gaps.iter().filter(|g| g.leeches > 0).count();
    let heading = if leeches > 0 {
        format!(
            "{} gap{plural} of {concepts} concepts: {leeches} with leeches first, then under {} % recall",
            gaps.len(),
            percent(GAP_SCORE)
        )
    } else {
        format!(
            "{} gap{plural} of {concepts} concepts under {} % recall, weakest first",
            gaps.len(),
            percent(GAP_SCORE)
        )
    };
    writeln!(out, "{}", s.bold(&heading))?;
    let width = gaps.iter().map(|g| g.name.chars().count()).max().unwrap_or(0).min(40);
    for g in gaps {
        let record = format!("{}/{} cards answered, {} mature", g.answered, g.cards, g.mature);
        let leech = if g.leeches > 0 { format!(" · leech ({} lapses)", g.lapses) } else { String::new() };
        writeln!(
            out,
            "  {} {:>3}% recall now  {:<width$}  {}",
            s.red(&bar(g.score)),
            percent(g.score),
            g.name,
            s.dim(&format!("{} · {} · {record}{leech}", g.category, g.level)),
        )?;
    }
    writeln!(out)?;
    standing_line(out)?;
    if leeches > 0 {
        writeln!(out, "\nLeeches are suspended; drill them with: vl quiz --leeches")?;
    }
    writeln!(out, "\nPractise them with: vl quiz")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_have_one_cell_per_ten_percent() {
        assert_eq!(bar(0.4), "████░░░░░░");
        assert_eq!(bar(0.0), "░░░░░░░░░░");
        assert_eq!(bar(1.0), "██████████");
        assert_eq!(bar(0.333), "███░░░░░░░");
        assert_eq!(bar(f64::NAN).chars().count(), BAR_CELLS);
        assert_eq!(bar(7.0), "██████████");
    }

    #[test]
    fn empty_report_prints_the_first_run_hint() {
        let mut out = Vec::new();
        print_status(&mut out, Style { color: false }, &StatusReport::default(), &[]).unwrap();
        assert_eq!(String::from_utf8(out).unwrap().trim(), NO_SESSIONS);
    }
}
