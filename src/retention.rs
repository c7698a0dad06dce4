//! Captures let go after a window (issue 43 §2): what an analysed session keeps once its last
//! activity is older than `VIBELEARN_CAPTURE_RETENTION_DAYS`, and the pass of the maintenance
//! thread that prunes the rest and gives the pages back to the file system.
//!
//! Kept, always: the session row, its prompts, concepts, summary, stack profile, questions
//! (with their grounding, attempts, schedule and review log), the observation rows themselves
//! (paths, commands, packages, outcomes, errors, times: what stack detection, the file counts,
//! the files' activity and `jobs::session_needs_analysis` read), every field of the failed
//! calls (`session_data::failures` and the story read them), and the content of each file's
//! last whole version (what `session_data::captured_files` rebuilds the session's files from,
//! so a re-analysis and the quiz job's stale-question check read the same files; the ingest of
//! a resumed session edits on top of the same version).
//!
//! Let go: the tool calls' raw input and output of the calls that succeeded (a `Write`'s input
//! holds the file again), the contents of the superseded versions of a file, the session's
//! static patterns (derived data: `analyze_static` finds them again from the kept files, and
//! its input hash is forgotten with them so a re-analysis does), and the session's finished
//! jobs with their payloads (the queue's own pruner keeps dead ones 30 days otherwise).
//!
//! The superseded contents go only when the session's analysis inputs read the same after as
//! before (checked in the same transaction: [`Essentials`]); when they would not (the story's
//! fix quotes an earlier version), those contents stay and the rest goes.
//!
//! Never while a job of the session is waiting, held, retrying or running: the check and the
//! pruning run in one transaction of the writer, the only writer, so no job can be queued in
//! between. Each step prunes a few sessions and then gives back a bounded number of free pages
//! (`PRAGMA incremental_vacuum(N)`), so the writer serves the hooks between steps.

use rusqlite::{Connection, params};

use crate::analysis::model::{FailedCall, SourceFile};
use crate::analysis::story::Fix;
use crate::clock::Millis;
use crate::jobs::session_data::{self, FileActivity};

/// The window's default in days: a month of sessions keeps everything it captured.
pub const DEFAULT_WINDOW_DAYS: u64 = 30;
/// Sessions pruned per step (one writer transaction): one, since a large session's rewrite
/// (thousands of observation rows) holds the writer while it runs, and the hooks' events wait.
pub const SESSIONS_PER_STEP: usize = 1;
/// Free pages given back per step: 1,000 pages of 4 KiB, ~4 MB, a few milliseconds.
pub const VACUUM_PAGES_PER_STEP: u32 = 1_000;
/// How often the maintenance thread runs the pass.
pub const INTERVAL: std::time::Duration = std::time::Duration::from_secs(600);
/// Most steps per run (bounds a run after a long time off: 16 sessions and ~64 MB given back
/// every 10 minutes).
pub const MAX_STEPS: usize = 16;

/// The pass's settings; `window_ms` `None` keeps every capture forever.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureRetention {
    pub window_ms: Option<Millis>,
    pub sessions_per_step: usize,
    pub vacuum_pages: u32,
}

impl CaptureRetention {
    /// The pass for a window of `days` (0: keep forever).
    pub fn days(days: u64) -> CaptureRetention {
        let window_ms = (days > 0).then(|| Millis::try_from(days).unwrap_or(Millis::MAX / 86_400_000) * 86_400_000);
        CaptureRetention { window_ms, sessions_per_step: SESSIONS_PER_STEP, vacuum_pages: VACUUM_PAGES_PER_STEP }
    }

    /// One step at `now`: prunes up to `sessions_per_step` sessions past the window, then gives
    /// back up to `vacuum_pages` free pages. Run it inside one transaction (the writer's).
    pub fn step(&self, conn: &Connection, now: Millis) -> rusqlite::Result<Step> {
        let mut step = Step::default();
        if let Some(window) = self.window_ms {
            let due = due_sessions(conn, now.saturating_sub(window), self.sessions_per_step)?;
            step.more = due.len() == self.sessions_per_step;
            for session in due {
                if let Some(pruned) = prune_session(conn, &session, now)? {
                    step.sessions += 1;
                    step.kept_contents += usize::from(pruned.kept_contents);
                }
            }
        }
        step.pages_freed = incremental_vacuum(conn, self.vacuum_pages)?;
        step.more |= step.pages_freed > 0 && free_pages(conn)? > 0;
        Ok(step)
    }
}

/// What one [`CaptureRetention::step`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Step {
    pub sessions: usize,
    /// Sessions whose superseded contents stayed (their analysis inputs needed them).
    pub kept_contents: usize,
    pub pages_freed: usize,
    /// Whether there is more to do now.
    pub more: bool,
}

/// The analysed sessions idle since before `before`, not pruned since, and with no job to run:
/// oldest first, at most `limit`. Index searches only: migration 0019's `sessions_updated`, the
/// lanes' active jobs (`jobs_lane_active`) and the held ones (`jobs_held`), never every job.
pub(crate) const DUE_SESSIONS: &str = "SELECT s.id FROM sessions s WHERE (s.state = 'analyzed' OR s.state = 'synced') \
     AND s.updated_at < ?1 AND (s.captures_pruned_at IS NULL OR s.captures_pruned_at < s.updated_at) \
     AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.lane = 'session:' || s.id \
                     AND (j.state = 'available' OR j.state = 'running' OR j.state = 'retryable')) \
     AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.state = 'held' AND j.lane = 'session:' || s.id) \
     ORDER BY s.updated_at LIMIT ?2";

fn due_sessions(conn: &Connection, before: Millis, limit: usize) -> rusqlite::Result<Vec<String>> {
    conn.prepare_cached(DUE_SESSIONS)?.query_map(params![before, limit as i64], |r| r.get(0))?.collect()
}

/// What pruning one session did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pruned {
    /// The superseded contents stayed: without them the analysis inputs read differently.
    pub kept_contents: bool,
}

/// Prunes one session's captures (see the module doc), unless a job of it is pending. Returns
/// `None` when it was left alone for that reason.
pub fn prune_session(conn: &Connection, session_id: &str, now: Millis) -> rusqlite::Result<Option<Pruned>> {
    let lane = crate::jobs::lane(session_id);
    if crate::queue::store::lane_pending(conn, &lane)? {
        return Ok(None);
    }
    let before = Essentials::read(conn, session_id)?;
    conn.execute_batch("SAVEPOINT superseded_contents")?;
    rewrite_observations(conn, session_id, &superseded_contents(conn, session_id)?)?;
    let kept_contents = Essentials::read(conn, session_id)? != before;
    if kept_contents {
        conn.execute_batch("ROLLBACK TO superseded_contents")?;
        rewrite_observations(conn, session_id, &[])?;
    }
    conn.execute_batch("RELEASE superseded_contents")?;
    conn.prepare_cached("DELETE FROM static_patterns WHERE session_id = ?1")?.execute([session_id])?;
    conn.prepare_cached("DELETE FROM analysis_inputs WHERE session_id = ?1 AND step = ?2")?
        .execute([session_id, crate::jobs::ANALYZE_STATIC])?;
    crate::queue::store::prune_lane(conn, &lane, now)?;
    conn.prepare_cached("UPDATE sessions SET captures_pruned_at = ?2 WHERE id = ?1")?
        .execute(params![session_id, now])?;
    Ok(Some(Pruned { kept_contents }))
}

/// Rewrites the session's observations without the raw input and output of the calls that
/// succeeded and without the contents of the rows `clear`, same ids, same everything else.
///
/// Deleted and inserted again rather than updated: an update that shrinks a row leaves it
/// alone on its page (SQLite rebalances a page that an update made nearly empty only when a
/// row is deleted), so a session of large captures kept ~4 KiB per observation, a page each;
/// deleted, the pages merge and the small rows share them (measured in `the_file_shrinks`).
fn rewrite_observations(conn: &Connection, session_id: &str, clear: &[i64]) -> rusqlite::Result<()> {
    conn.execute_batch(
        "DROP TABLE IF EXISTS temp.retention_rows; \
         CREATE TEMP TABLE retention_rows AS SELECT * FROM main.observations WHERE 0;",
    )?;
    conn.execute(
        "INSERT INTO temp.retention_rows SELECT * FROM main.observations WHERE session_id = ?1",
        [session_id],
    )?;
    conn.execute("UPDATE temp.retention_rows SET input = NULL, output = NULL WHERE outcome = 'succeeded'", [])?;
    let mut clear_content = conn.prepare("UPDATE temp.retention_rows SET content = NULL WHERE id = ?1")?;
    for id in clear {
        clear_content.execute([id])?;
    }
    conn.execute("DELETE FROM main.observations WHERE session_id = ?1", [session_id])?;
    conn.execute_batch(
        // Dropped, not kept for the next session: a later migration may add a column.
        "INSERT INTO main.observations SELECT * FROM temp.retention_rows ORDER BY id; DROP TABLE temp.retention_rows;",
    )
}

/// The file-edit rows whose content no reader of the session's files takes: every successful
/// edit of a path but its last whole version, and a path's fragments when it has a whole
/// version (a path known only from fragments keeps them all: they are its text).
fn superseded_contents(conn: &Connection, session_id: &str) -> rusqlite::Result<Vec<i64>> {
    use std::collections::HashMap;
    let mut stmt = conn.prepare_cached(
        "SELECT id, file_path, fragment FROM observations WHERE session_id = ?1 AND obs_type = 'file_edit' \
         AND file_path IS NOT NULL AND content IS NOT NULL AND outcome = 'succeeded' ORDER BY id",
    )?;
    let rows: Vec<(i64, String, bool)> =
        stmt.query_map([session_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<Result<_, _>>()?;
    let mut last_whole: HashMap<&str, i64> = HashMap::new();
    for (id, path, fragment) in &rows {
        if !fragment {
            last_whole.insert(path, *id);
        }
    }
    Ok(rows
        .iter()
        .filter(|(id, path, _)| last_whole.get(path.as_str()).is_some_and(|last| last != id))
        .map(|(id, _, _)| *id)
        .collect())
}

/// Everything a session's analysis reads of its captures, read by the functions the analysis
/// steps read them with (`jobs::session_data`): equal before and after pruning, or the pruning
/// of contents is undone.
#[derive(Debug, PartialEq)]
pub struct Essentials {
    pub files: Vec<SourceFile>,
    pub fix: Option<Fix>,
    pub failures: Vec<FailedCall>,
    pub commands: Vec<String>,
    pub activity: Vec<FileActivity>,
    pub file_counts: (i64, i64),
}

impl Essentials {
    pub fn read(conn: &Connection, session_id: &str) -> rusqlite::Result<Essentials> {
        Ok(Essentials {
            files: session_data::captured_files(conn, session_id)?,
            fix: session_data::story_fix(conn, session_id)?,
            failures: session_data::failures(conn, session_id)?,
            commands: session_data::commands(conn, session_id)?,
            activity: session_data::file_activity(conn, session_id)?,
            file_counts: session_data::file_counts(conn, session_id)?,
        })
    }
}

/// Gives back up to `pages` free pages when the file was made with `auto_vacuum =
/// INCREMENTAL` (every database `db::configure` created; [`ensure_incremental`] converts an
/// older one). Returns how many went.
fn incremental_vacuum(conn: &Connection, pages: u32) -> rusqlite::Result<usize> {
    let mode: i64 = conn.query_row("PRAGMA auto_vacuum", [], |r| r.get(0))?;
    if mode != 2 || pages == 0 {
        return Ok(0);
    }
    let before = free_pages(conn)?;
    let mut stmt = conn.prepare(&format!("PRAGMA incremental_vacuum({pages})"))?;
    let mut rows = stmt.query([])?;
    while rows.next()?.is_some() {}
    Ok(before.saturating_sub(free_pages(conn)?) as usize)
}

fn free_pages(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA freelist_count", [], |r| r.get(0))
}

/// Makes a database whose `auto_vacuum` is off able to give pages back: sets it to
/// `INCREMENTAL` and rewrites the file once (`VACUUM`, which the setting needs on a file that
/// has tables). Outside any transaction, before the writer starts: the worker runs it at start
/// (docs/DECISIONS.md). Every database this project created has had the setting from its first
/// table on (`db::configure`), so this finds nothing to do there. Returns whether it rewrote.
pub fn ensure_incremental(conn: &Connection) -> rusqlite::Result<bool> {
    let mode: i64 = conn.query_row("PRAGMA auto_vacuum", [], |r| r.get(0))?;
    if mode == 2 {
        return Ok(false);
    }
    conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL; VACUUM;")?;
    Ok(true)
}

/// The data directory's size on disk in bytes: the database, its WAL and everything beside it
/// (logs, spool), for `vl status`.
pub fn data_dir_bytes(dir: &std::path::Path) -> u64 {
    fn walk(dir: &std::path::Path, depth: usize) -> u64 {
        let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
        entries
            .flatten()
            .map(|entry| match entry.file_type() {
                Ok(kind) if kind.is_dir() && depth < 4 => walk(&entry.path(), depth + 1),
                Ok(kind) if kind.is_file() => entry.metadata().map_or(0, |m| m.len()),
                _ => 0,
            })
            .sum()
    }
    walk(dir, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learning::cards::{DueFilter, due_now};

    const DAY: Millis = 86_400_000;
    /// The session's last event, and a `now` 31 days later (past the default window).
    const LAST_EVENT: Millis = 1_000 * DAY;
    const LATER: Millis = LAST_EVENT + 31 * DAY;

    /// Session `id`, analysed, last event at [`LAST_EVENT`]: `versions` whole versions of
    /// `src/cart.ts` (each ~`size` bytes, with a `Write` input and output as big), a command
    /// that succeeded and one that failed, 40 static patterns, a concept with two questions
    /// quoting the last version, and its finished pipeline jobs.
    fn session(conn: &Connection, id: &str, versions: usize, size: usize) {
        conn.execute(
            "INSERT INTO sessions (id, project, cwd, state, started_at, updated_at, ended_at) \
             VALUES (?1, 'shop', '/w/shop', 'analyzed', ?2, ?2, ?2)",
            params![id, LAST_EVENT],
        )
        .unwrap();
        let mut add = conn
            .prepare(
                "INSERT INTO observations (session_id, event_key, obs_type, tool_name, file_path, action, content, \
                 command, input, output, outcome, error, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )
            .unwrap();
        for v in 0..versions {
            let content =
                format!("export const version = {v};\n{}", "// padding line of the cart module\n".repeat(size / 36));
            let input = serde_json::json!({"file_path": "/w/shop/src/cart.ts", "content": content}).to_string();
            let action = if v == 0 { "create" } else { "modify" };
            add.execute(params![
                id,
                format!("w{v}"),
                "file_edit",
                "Write",
                "/w/shop/src/cart.ts",
                action,
                content,
                None::<String>,
                input,
                input,
                "succeeded",
                None::<String>,
                LAST_EVENT - 1_000 + v as i64
            ])
            .unwrap();
        }
        add.execute(params![
            id,
            "b1",
            "bash_command",
            "Bash",
            None::<String>,
            None::<String>,
            None::<String>,
            "npm test",
            r#"{"command":"npm test"}"#,
            "x".repeat(size),
            "succeeded",
            None::<String>,
            LAST_EVENT - 500
        ])
        .unwrap();
        add.execute(params![
            id,
            "b2",
            "bash_command",
            "Bash",
            None::<String>,
            None::<String>,
            None::<String>,
            "npm run build",
            r#"{"command":"npm run build"}"#,
            r#"{"stderr":"TS2304"}"#,
            "failed",
            "TS2304: Cannot find name 'Cart'",
            LAST_EVENT - 400
        ])
        .unwrap();
        for n in 0..40 {
            conn.execute(
                "INSERT INTO static_patterns (session_id, pattern_type, name, file, line, snippet, language) \
                 VALUES (?1, 'export', ?2, 'src/cart.ts', 1, ?3, 'typescript')",
                params![id, format!("p{n}"), "export const version = 1;".repeat(20)],
            )
            .unwrap();
        }
        let concept = format!("{id}-c");
        conn.execute(
            "INSERT INTO concepts (id, session_id, name, normalized_name, category, difficulty, source_file, snippet, \
             why_it_matters, confidence, created_at, updated_at) \
             VALUES (?1, ?2, 'Exports', 'exports', 'modules', 'mid', 'src/cart.ts', 'export const', 'y', 0.9, 1, 1)",
            params![concept, id],
        )
        .unwrap();
        for q in 0..2 {
            conn.execute(
                "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, snippet, question, \
                 explanation, tags, text_hash, created_at, grounding_kind) \
                 VALUES (?1, ?2, ?3, 'true_false', 'mid', 'export const version', ?1, 'e', '[]', ?1, 1, 'quote')",
                params![format!("{id}-q{q}"), concept, id],
            )
            .unwrap();
        }
        for (n, kind) in crate::jobs::PIPELINE.iter().enumerate() {
            conn.execute(
                "INSERT INTO jobs (kind, state, lane, payload, max_attempts, created_at, run_at, finished_at) \
                 VALUES (?1, 'succeeded', ?2, ?3, 3, ?4, ?4, ?4)",
                params![kind, crate::jobs::lane(id), format!(r#"{{"session_id":"{id}","n":{n}}}"#), LAST_EVENT],
            )
            .unwrap();
        }
    }

    fn count(conn: &Connection, sql: &str, id: &str) -> i64 {
        conn.query_row(sql, [id], |r| r.get(0)).unwrap()
    }

    fn captured(conn: &Connection, id: &str) -> (i64, i64, i64, i64) {
        (
            count(conn, "SELECT COUNT(content) FROM observations WHERE session_id = ?1", id),
            count(conn, "SELECT COUNT(input) + COUNT(output) FROM observations WHERE session_id = ?1", id),
            count(conn, "SELECT COUNT(*) FROM static_patterns WHERE session_id = ?1", id),
            count(conn, "SELECT COUNT(*) FROM jobs WHERE lane = 'session:' || ?1", id),
        )
    }

    fn due(conn: &Connection) -> usize {
        let filter = DueFilter { new_allowed: Some(20), ..DueFilter::default() };
        due_now(conn, LATER, &filter).unwrap().total()
    }

    /// Steps the pass until it has nothing left to do now; returns the sessions pruned.
    fn run(conn: &Connection, pass: CaptureRetention, now: Millis) -> usize {
        let mut pruned = 0;
        for _ in 0..100 {
            let step = pass.step(conn, now).unwrap();
            pruned += step.sessions;
            if !step.more {
                return pruned;
            }
        }
        panic!("the pass never ran out of work");
    }

    #[test]
    fn a_session_past_the_window_loses_its_captures_and_keeps_its_questions() {
        let (_dir, conn) = crate::db::testing::fresh();
        session(&conn, "old", 5, 2_000);
        let essentials = Essentials::read(&conn, "old").unwrap();
        let due_before = due(&conn);
        assert_eq!(due_before, 2);
        let pass = CaptureRetention::days(30);
        // Inside the window: nothing goes.
        assert_eq!(run(&conn, pass, LAST_EVENT + 29 * DAY), 0);
        assert_eq!(captured(&conn, "old"), (5, 14, 40, 5));
        assert_eq!(run(&conn, pass, LATER), 1);
        // The last version's content, the failed call's input and output; no pattern, no job.
        assert_eq!(captured(&conn, "old"), (1, 2, 0, 0));
        assert_eq!(count(&conn, "SELECT COUNT(*) FROM observations WHERE session_id = ?1", "old"), 7);
        assert_eq!(count(&conn, "SELECT COUNT(*) FROM questions WHERE session_id = ?1", "old"), 2);
        assert_eq!(
            count(&conn, "SELECT COUNT(*) FROM questions WHERE grounding_kind = 'quote' AND session_id = ?1", "old"),
            2
        );
        assert_eq!(due(&conn), due_before, "the quiz serves the questions still");
        // What re-analysis and the stale-question check read is what it was.
        assert_eq!(Essentials::read(&conn, "old").unwrap(), essentials);
        // Once pruned, it is not pruned again (until a new event moves its last activity on).
        assert_eq!(run(&conn, pass, LATER + DAY), 0);
        conn.execute("UPDATE sessions SET updated_at = ?1 WHERE id = 'old'", [LATER + 2 * DAY]).unwrap();
        assert_eq!(run(&conn, pass, LATER + 3 * DAY), 0, "the resumed session is inside its window again");
        assert_eq!(run(&conn, pass, LATER + 33 * DAY), 1);
    }

    #[test]
    fn a_session_with_a_pending_job_keeps_everything() {
        let (_dir, conn) = crate::db::testing::fresh();
        session(&conn, "busy", 3, 2_000);
        session(&conn, "idle", 3, 2_000);
        for state in ["available", "held", "retryable", "running"] {
            conn.execute(
                "INSERT INTO jobs (kind, state, lane, payload, max_attempts, created_at, run_at) \
                 VALUES ('sync', ?1, 'session:busy', '{}', 3, 1, 1)",
                [state],
            )
            .unwrap();
            let before = captured(&conn, "busy");
            assert_eq!(prune_session(&conn, "busy", LATER).unwrap(), None, "{state}");
            assert_eq!(run(&conn, CaptureRetention::days(30), LATER), usize::from(state == "available"));
            assert_eq!(captured(&conn, "busy"), before, "a {state} job's session keeps its captures");
            conn.execute("DELETE FROM jobs WHERE lane = 'session:busy' AND state = ?1", [state]).unwrap();
        }
        assert_eq!(captured(&conn, "idle"), (1, 2, 0, 0));
        // Its job done, the busy session goes too.
        assert_eq!(run(&conn, CaptureRetention::days(30), LATER), 1);
        assert_eq!(captured(&conn, "busy"), (1, 2, 0, 0));
    }

    #[test]
    fn a_window_of_zero_keeps_everything_forever() {
        let (_dir, conn) = crate::db::testing::fresh();
        session(&conn, "s1", 3, 2_000);
        assert_eq!(run(&conn, CaptureRetention::days(0), LATER + 3_000 * DAY), 0);
        assert_eq!(captured(&conn, "s1"), (3, 10, 40, 5));
    }

    #[test]
    fn the_versions_the_story_quotes_stay() {
        let (_dir, conn) = crate::db::testing::fresh();
        session(&conn, "story", 1, 500);
        // v1 (above), a failed build, v2 (the fix), v3: the fix reads v1 and v2.
        for (key, content, at) in
            [("fix", "export const version = 2;\n", 1), ("after", "export const version = 3;\n", 2)]
        {
            conn.execute(
                "INSERT INTO observations (session_id, event_key, obs_type, tool_name, file_path, action, content, \
                 outcome, created_at) VALUES ('story', ?1, 'file_edit', 'Write', '/w/shop/src/cart.ts', 'modify', ?2, \
                 'succeeded', ?3)",
                params![key, content, LAST_EVENT + at],
            )
            .unwrap();
        }
        let essentials = Essentials::read(&conn, "story").unwrap();
        assert!(essentials.fix.is_some());
        let pruned = prune_session(&conn, "story", LATER).unwrap().unwrap();
        assert!(pruned.kept_contents);
        assert_eq!(Essentials::read(&conn, "story").unwrap(), essentials);
        assert_eq!(count(&conn, "SELECT COUNT(content) FROM observations WHERE session_id = ?1", "story"), 3);
        // The rest went all the same.
        assert_eq!(captured(&conn, "story").2, 0);
    }

    #[test]
    fn the_file_shrinks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vibelearn.db");
        let conn = crate::db::open_and_migrate(&path, crate::db::Synchronous::Normal).unwrap();
        for n in 0..6 {
            session(&conn, &format!("s{n}"), 40, 8_000);
        }
        let size = |conn: &Connection| {
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
            std::fs::metadata(&path).unwrap().len()
        };
        let before = size(&conn);
        assert!(before > 5_000_000, "{before}");
        assert_eq!(run(&conn, CaptureRetention::days(30), LATER), 6);
        let after = size(&conn);
        // The observations' pages merge (rows deleted and inserted again): measured 6.4 MB ->
        // 0.36 MB, of which the observations 76 KB, ~13 KB a session keeping an 8 KB file.
        assert!(after * 10 < before, "the file went from {before} to {after} bytes only");
        assert_eq!(conn.query_row("PRAGMA freelist_count", [], |r| r.get::<_, i64>(0)).unwrap(), 0);
    }

    /// The pass finds its sessions from indexes: the analysed sessions by last activity, and
    /// the lanes' pending jobs, never a scan of every job or session.
    #[test]
    fn the_pass_searches_indexes() {
        let (_dir, conn) = crate::db::testing::fresh();
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {DUE_SESSIONS}"))
            .unwrap()
            .query_map(params![0, 8], |r| r.get(3))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(plan.iter().any(|s| s.contains("INDEX sessions_updated")), "{plan:?}");
        assert!(plan.iter().any(|s| s.contains("INDEX jobs_lane_active")), "{plan:?}");
        assert!(plan.iter().any(|s| s.contains("INDEX jobs_held")), "{plan:?}");
        assert!(!plan.iter().any(|s| s.ends_with("SCAN j") || s.ends_with("SCAN s")), "{plan:?}");
    }

    #[test]
    fn an_older_file_is_made_able_to_give_pages_back_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (randomblob(100000));").unwrap();
        let mode = |conn: &Connection| conn.query_row("PRAGMA auto_vacuum", [], |r| r.get::<_, i64>(0)).unwrap();
        assert_eq!(mode(&conn), 0);
        assert!(ensure_incremental(&conn).unwrap());
        assert_eq!(mode(&conn), 2);
        assert!(!ensure_incremental(&conn).unwrap());
        let (_fresh_dir, fresh) = crate::db::testing::fresh();
        assert!(!ensure_incremental(&fresh).unwrap(), "a database made by vl has it already");
    }
}
