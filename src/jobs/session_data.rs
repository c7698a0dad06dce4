//! Reading a session's inputs for the analysis steps (through the read pool), the input
//! hash behind the "unchanged" skip (SPEC §5.3), and which of a session's files an LLM prompt
//! shows first ([`story_order`]).

use std::collections::{BTreeMap, HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};

use crate::analysis::model::{FailedCall, Pattern, SourceFile, StackProfile};
use crate::queue::lane_active;

/// The session row fields the steps use.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    pub id: String,
    pub project: String,
    pub cwd: Option<String>,
    pub platform: Option<String>,
    pub started_at: i64,
    pub updated_at: i64,
    pub ended_at: Option<i64>,
}

pub fn session(conn: &Connection, id: &str) -> rusqlite::Result<Option<SessionInfo>> {
    conn.prepare_cached(
        "SELECT id, project, cwd, platform, started_at, updated_at, ended_at FROM sessions WHERE id = ?1",
    )?
    .query_row([id], |r| {
        Ok(SessionInfo {
            id: r.get(0)?,
            project: r.get(1)?,
            cwd: r.get(2)?,
            platform: r.get(3)?,
            started_at: r.get(4)?,
            updated_at: r.get(5)?,
            ended_at: r.get(6)?,
        })
    })
    .optional()
}

/// Most files an analysis job reads of one session (issue 43 §4, memory bounded): a session
/// that wrote more is analysed on the [`MAX_ANALYSED_FILES`] its story ranks first
/// ([`story_order`]: the files its failed calls name, then those edited last and most), and
/// the others' contents are never read.
pub const MAX_ANALYSED_FILES: usize = 1_000;

/// The latest captured content of every file the session wrote (at most
/// [`MAX_ANALYSED_FILES`] of them), in path order, with paths relative to the session's cwd
/// when they lie under it (what a developer recognises, and what questions quote).
///
/// Fragments (edits whose whole file was never captured, [`crate::capture`]) never replace a
/// whole version of their file; a file known only from fragments is their texts in order,
/// marked `fragment`. Failed calls wrote nothing and are left out.
///
/// Read in two passes, so memory follows the files kept: the rows that hold each file's
/// latest text first (no content), then the contents of the files kept, row by row.
pub fn captured_files(conn: &Connection, session_id: &str) -> rusqlite::Result<Vec<SourceFile>> {
    let mut plan = versions(conn, session_id)?;
    if plan.len() > MAX_ANALYSED_FILES {
        let failures = failures(conn, session_id)?;
        let activity = file_activity(conn, session_id)?;
        let stubs: Vec<SourceFile> = plan.keys().map(|path| SourceFile::new(path.clone(), String::new())).collect();
        let story = Story { activity: &activity, failures: &failures, sites: &[] };
        let kept: HashSet<String> =
            story_order(&stubs, &story).into_iter().take(MAX_ANALYSED_FILES).map(|f| f.path.clone()).collect();
        // The manifests too, whatever their rank: the stack is read from them.
        plan.retain(|path, _| kept.contains(path) || crate::analysis::is_manifest(path));
    }
    let mut content_of = conn.prepare_cached("SELECT content FROM observations WHERE id = ?1")?;
    let mut files = Vec::with_capacity(plan.len());
    for (path, version) in plan {
        let (ids, fragment) = match version {
            Version::Whole(id) => (vec![id], false),
            Version::Fragments(ids) => (ids, true),
        };
        let mut texts = Vec::with_capacity(ids.len());
        for id in ids {
            texts.push(content_of.query_row([id], |r| r.get::<_, String>(0))?);
        }
        files.push(SourceFile { path, content: texts.join("\n"), fragment });
    }
    Ok(files)
}

/// Every path the session wrote, as [`captured_files`] gives them (all of them, past
/// [`MAX_ANALYSED_FILES`] too: a path costs a few bytes).
pub fn captured_paths(conn: &Connection, session_id: &str) -> rusqlite::Result<Vec<String>> {
    Ok(versions(conn, session_id)?.into_keys().collect())
}

/// The rows that make a file's latest text: its last whole version, or (never captured whole)
/// its fragments in order.
enum Version {
    Whole(i64),
    Fragments(Vec<i64>),
}

/// Each written file's [`Version`], by its path as [`captured_files`] gives it.
fn versions(conn: &Connection, session_id: &str) -> rusqlite::Result<BTreeMap<String, Version>> {
    let cwd = session_cwd(conn, session_id)?;
    let mut latest: BTreeMap<String, Version> = BTreeMap::new();
    let mut stmt = conn.prepare_cached(
        "SELECT id, file_path, fragment FROM observations WHERE session_id = ?1 AND obs_type = 'file_edit' \
         AND file_path IS NOT NULL AND content IS NOT NULL AND outcome = 'succeeded' ORDER BY id",
    )?;
    let rows = stmt.query_map([session_id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get(2)?)))?;
    for row in rows {
        let (id, path, fragment): (i64, String, bool) = row?;
        let path = relative_path(&path, cwd.as_deref());
        match latest.get_mut(&path) {
            Some(Version::Fragments(ids)) if fragment => ids.push(id),
            Some(Version::Whole(_)) if fragment => {}
            _ if fragment => {
                latest.insert(path, Version::Fragments(vec![id]));
            }
            _ => {
                latest.insert(path, Version::Whole(id));
            }
        }
    }
    Ok(latest)
}

/// Most observations read to find a session's fix: the story is in its first hours, and a
/// long session's later edits add nothing to it.
pub const MAX_STORY_OBSERVATIONS: i64 = 5_000;

/// The edit that fixed the session's first failure ([`crate::analysis::story::first_fix`]):
/// the first whole-file edit after a failed call (one the user did not interrupt) of a file
/// written before it, with paths as [`captured_files`] gives them. `None` when there is none.
pub fn story_fix(conn: &Connection, session_id: &str) -> rusqlite::Result<Option<crate::analysis::story::Fix>> {
    use crate::analysis::story::{StoryEvent, first_fix};
    let cwd = session_cwd(conn, session_id)?;
    let mut stmt = conn.prepare_cached(
        "SELECT outcome = 'failed', file_path, content FROM observations WHERE session_id = ?1 \
         AND ((outcome = 'failed' AND error IS NOT NULL \
               AND COALESCE(json_extract(CASE WHEN json_valid(output) THEN output END, '$.is_interrupt'), 0) = 0) \
           OR (obs_type = 'file_edit' AND outcome = 'succeeded' AND fragment = 0 \
               AND file_path IS NOT NULL AND content IS NOT NULL)) \
         ORDER BY id LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![session_id, MAX_STORY_OBSERVATIONS], |r| {
        Ok((r.get::<_, bool>(0)?, r.get::<_, Option<String>>(1)?, r.get::<_, Option<String>>(2)?))
    })?;
    let mut steps: Vec<Option<(String, String)>> = Vec::new();
    for row in rows {
        let (failed, path, content) = row?;
        steps.push(match (failed, path, content) {
            (false, Some(path), Some(content)) => Some((relative_path(&path, cwd.as_deref()), content)),
            _ => None,
        });
    }
    let events = steps.iter().map(|step| match step {
        Some((path, content)) => StoryEvent::Wrote { path, content },
        None => StoryEvent::Failed,
    });
    Ok(first_fix(events))
}

/// Most shell commands stack detection reads: the test runs of a session are among its first
/// hundreds of commands, and a long session's later ones add nothing.
pub const MAX_COMMANDS: usize = 500;

/// The shell commands the session ran, oldest first, failed ones too (a failing test run
/// still names its framework).
pub fn commands(conn: &Connection, session_id: &str) -> rusqlite::Result<Vec<String>> {
    conn.prepare_cached(
        "SELECT command FROM observations WHERE session_id = ?1 AND obs_type = 'bash_command' \
         AND command IS NOT NULL ORDER BY id LIMIT ?2",
    )?
    .query_map(params![session_id, MAX_COMMANDS as i64], |r| r.get(0))?
    .collect()
}

/// What the session did to one of its files: the row id of its last successful edit (ids grow
/// with time) and how many successful edits it had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileActivity {
    pub path: String,
    pub last_edit: i64,
    pub edits: u32,
}

/// The session's working directory, against which its file paths are made relative.
fn session_cwd(conn: &Connection, session_id: &str) -> rusqlite::Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT cwd FROM sessions WHERE id = ?1")?
        .query_row([session_id], |r| r.get(0))
        .optional()?
        .flatten())
}

/// Every written file's [`FileActivity`], with paths as [`captured_files`] gives them.
pub fn file_activity(conn: &Connection, session_id: &str) -> rusqlite::Result<Vec<FileActivity>> {
    let cwd = session_cwd(conn, session_id)?;
    let mut stmt = conn.prepare_cached(
        "SELECT file_path, MAX(id), COUNT(*) FROM observations WHERE session_id = ?1 AND obs_type = 'file_edit' \
         AND file_path IS NOT NULL AND outcome = 'succeeded' GROUP BY file_path",
    )?;
    let rows =
        stmt.query_map([session_id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)))?;
    // Two spellings of one file (absolute and relative) are one file.
    let mut merged: BTreeMap<String, FileActivity> = BTreeMap::new();
    for row in rows {
        let (path, last_edit, edits) = row?;
        let path = relative_path(&path, cwd.as_deref());
        let edits = u32::try_from(edits).unwrap_or(u32::MAX);
        let entry = merged.entry(path.clone()).or_insert(FileActivity { path, last_edit, edits: 0 });
        entry.last_edit = entry.last_edit.max(last_edit);
        entry.edits = entry.edits.saturating_add(edits);
    }
    Ok(merged.into_values().collect())
}

/// What [`story_order`] weighs: what the session did to its files, its failed calls, and the
/// files the concepts cite (empty for the concepts prompt, which has none yet).
#[derive(Debug, Clone, Copy)]
pub struct Story<'a> {
    pub activity: &'a [FileActivity],
    pub failures: &'a [FailedCall],
    pub sites: &'a [&'a str],
}

/// The session's files in the order an LLM prompt should show them, all of them (a
/// permutation of `files`); the prompt keeps as many as its byte bound allows
/// (`prompts::MAX_FILES`, the lines cap of the questions prompt), so what comes first is what
/// the model sees of a large session:
/// 1. the files the concepts cite (questions are asked on them, and grounded in their lines);
/// 2. the files the failed calls name — the test that failed, the file a compiler error or a
///    traceback points at, the file an edit failed on;
/// 3. the rest by what the session did to them, alternating the file edited last with the
///    file edited most (the fix is usually the former, the file the work was about the latter);
/// 4. files without a recorded edit, in path order.
///
/// Ties keep path order, so the choice is stable. A pure function: data in, order out.
pub fn story_order<'a>(files: &'a [SourceFile], story: &Story<'_>) -> Vec<&'a SourceFile> {
    let mentioned = Mentions::of(story.failures);
    let names = basename_counts(files);
    let activity: HashMap<&str, &FileActivity> = story.activity.iter().map(|a| (a.path.as_str(), a)).collect();
    let tier = |f: &SourceFile| -> u8 {
        if story.sites.iter().any(|site| crate::analysis::concepts::path_matches(&f.path, site)) {
            0
        } else if mentioned.names(&f.path, &names) {
            1
        } else if activity.contains_key(f.path.as_str()) {
            2
        } else {
            3
        }
    };
    let mut tiers: [Vec<&SourceFile>; 4] = Default::default();
    for file in files {
        tiers[usize::from(tier(file))].push(file);
    }
    let [sites, failed, active, rest] = tiers;
    let mut ordered = sites;
    ordered.extend(failed);
    ordered.extend(last_and_most(active, &activity));
    ordered.extend(rest);
    ordered
}

/// The files a prompt shows, in [`story_order`], as many as its bound keeps
/// (`prompts::MAX_FILES`): copies of those only, not of a 1,000-file session.
pub fn prompt_files(files: &[SourceFile], story: &Story<'_>) -> Vec<SourceFile> {
    story_order(files, story).into_iter().take(super::prompts::MAX_FILES).cloned().collect()
}

/// `patterns` with those found in `shown` first (each side in its own order): the prompt
/// lists a bounded number of them, and a pattern in a file the model is not shown is a name
/// it cannot look at.
pub fn patterns_in_shown_first(patterns: &[Pattern], shown: &[SourceFile]) -> Vec<Pattern> {
    let shown: HashSet<&str> = shown.iter().map(|f| f.path.as_str()).collect();
    let (mut first, rest): (Vec<Pattern>, Vec<Pattern>) =
        patterns.iter().cloned().partition(|p| shown.contains(p.file.as_str()));
    first.extend(rest);
    first
}

/// `files` (each with an activity) alternating the latest-edited and the most-edited not yet
/// taken.
fn last_and_most<'a>(files: Vec<&'a SourceFile>, activity: &HashMap<&str, &FileActivity>) -> Vec<&'a SourceFile> {
    let of = |f: &SourceFile| activity.get(f.path.as_str()).map_or((0, 0), |a| (a.last_edit, a.edits));
    let mut latest = files.clone();
    latest.sort_by_key(|f| std::cmp::Reverse(of(f).0));
    let mut most = files;
    most.sort_by_key(|f| std::cmp::Reverse((of(f).1, of(f).0)));
    let mut taken: HashSet<&str> = HashSet::new();
    let mut ordered = Vec::with_capacity(latest.len());
    for (a, b) in latest.into_iter().zip(most) {
        for file in [a, b] {
            if taken.insert(file.path.as_str()) {
                ordered.push(file);
            }
        }
    }
    ordered
}

/// How many of the session's files share each base name (`cart.ts`): a bare name in an error
/// names a file only when one file has it.
fn basename_counts(files: &[SourceFile]) -> HashMap<&str, usize> {
    let mut counts = HashMap::new();
    for file in files {
        *counts.entry(basename(&file.path)).or_insert(0) += 1;
    }
    counts
}

fn basename(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// The paths the failed calls' commands and errors mention, read once: every path-like word
/// (one with a `/` or a `.`) and each of its tails after a `/`, so `/home/ann/shop/src/cart.ts`
/// names `src/cart.ts`; words without a `/` kept apart as bare names.
struct Mentions {
    paths: HashSet<String>,
    bare: HashSet<String>,
}

impl Mentions {
    fn of(failures: &[FailedCall]) -> Mentions {
        let mut mentions = Mentions { paths: HashSet::new(), bare: HashSet::new() };
        let texts = failures.iter().flat_map(|f| [f.subject.as_str(), f.error.as_str()]);
        // `src/cart.ts(9,7)`, `main.rs:4:18`, `File "/x/cart.py", line 3`, `FAILED t.py::test`:
        // a path is the letters, digits and `._-/\@+` between anything else.
        let is_path_char = |c: char| c.is_alphanumeric() || "._-/\\@+".contains(c);
        for word in texts.flat_map(|text| text.split(|c: char| !is_path_char(c))) {
            let word = word.replace('\\', "/");
            let word = word.trim_start_matches("./").trim_end_matches('.');
            if !word.contains('/') {
                if word.contains('.') {
                    mentions.bare.insert(word.to_owned());
                }
                continue;
            }
            let mut tail = word.trim_start_matches('/');
            loop {
                mentions.paths.insert(tail.to_owned());
                match tail.split_once('/') {
                    Some((_, rest)) if !rest.is_empty() => tail = rest,
                    _ => break,
                }
            }
        }
        mentions
    }

    /// Whether `path` (a captured file) is mentioned: it, or a tail of it with a folder in it,
    /// is a mentioned path, or its base name is mentioned bare and no other file has it.
    fn names(&self, path: &str, names: &HashMap<&str, usize>) -> bool {
        let clean = path.replace('\\', "/");
        let clean = clean.trim_start_matches("./");
        let mut tail = clean;
        loop {
            if self.paths.contains(tail) {
                return true;
            }
            match tail.split_once('/') {
                Some((_, rest)) if rest.contains('/') => tail = rest,
                _ => break,
            }
        }
        let name = basename(clean);
        self.bare.contains(name) && names.get(basename(path)) == Some(&1)
    }
}

/// What a concept or question may cite: the captured files, and the errors the developer met
/// (a failed call's label as the file, its error as the text).
pub fn citable(files: &[SourceFile], failures: &[FailedCall]) -> Vec<SourceFile> {
    files.iter().cloned().chain(failures.iter().map(FailedCall::as_source)).collect()
}

/// [`citable`] without copying the files: they are moved in, the failures after them.
pub fn into_citable(mut files: Vec<SourceFile>, failures: &[FailedCall]) -> Vec<SourceFile> {
    files.extend(failures.iter().map(FailedCall::as_source));
    files
}

/// The session's [`citable`] sources, read in one go.
pub fn citable_sources(conn: &Connection, session_id: &str) -> rusqlite::Result<Vec<SourceFile>> {
    Ok(into_citable(captured_files(conn, session_id)?, &failures(conn, session_id)?))
}

/// Most failed calls one analysis looks at: the first ones of a session are where the
/// developer met something new; dozens of retries of one build add nothing.
pub const MAX_FAILURES: usize = 12;

/// The session's failed tool calls, oldest first, without the ones the user interrupted.
pub fn failures(conn: &Connection, session_id: &str) -> rusqlite::Result<Vec<FailedCall>> {
    let mut stmt = conn.prepare_cached(
        "SELECT tool_name, command, file_path, input, error FROM observations \
         WHERE session_id = ?1 AND outcome = 'failed' AND error IS NOT NULL \
         AND COALESCE(json_extract(CASE WHEN json_valid(output) THEN output END, '$.is_interrupt'), 0) = 0 \
         ORDER BY id LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![session_id, MAX_FAILURES as i64], |r| {
        let tool_name: String = r.get(0)?;
        let command: Option<String> = r.get(1)?;
        let file_path: Option<String> = r.get(2)?;
        let input: Option<String> = r.get(3)?;
        let error: String = r.get(4)?;
        let subject = command.or(file_path).or(input).unwrap_or_else(|| tool_name.clone());
        Ok(FailedCall { tool_name, subject, error })
    })?;
    rows.collect()
}

/// For an init reply: the session's row id (if its row exists) and its prompt number — the
/// prompts stored plus the ones still waiting in its lane up to and including job `job_id`.
pub fn session_ref(conn: &Connection, session_id: &str, job_id: i64) -> rusqlite::Result<(Option<i64>, i64)> {
    let row_id = session_row_id(conn, session_id)?;
    let stored: i64 = conn
        .prepare_cached("SELECT COUNT(*) FROM prompts WHERE session_id = ?1")?
        .query_row([session_id], |r| r.get(0))?;
    let waiting: i64 = conn
        .prepare_cached(concat!(
            "SELECT COUNT(*) FROM jobs WHERE lane = ?1 AND ",
            lane_active!("state"),
            " AND id <= ?2 AND kind = 'ingest' AND json_extract(payload, '$.event') = 'init' \
             AND TRIM(COALESCE(json_extract(payload, '$.prompt'), '')) <> ''"
        ))?
        .query_row(params![super::lane(session_id), job_id], |r| r.get(0))?;
    Ok((row_id, stored + waiting))
}

/// The integer row id of a session (what the original VibeLearn client calls `sessionDbId`).
pub fn session_row_id(conn: &Connection, session_id: &str) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached("SELECT rowid FROM sessions WHERE id = ?1")?.query_row([session_id], |r| r.get(0)).optional()
}

/// `path` relative to `root` (`/`-separated) when it lies under it, else unchanged.
pub fn relative_path(path: &str, root: Option<&str>) -> String {
    let normalized = path.replace('\\', "/");
    let Some(root) = root.map(|r| r.replace('\\', "/")) else { return normalized };
    let root = root.trim_end_matches('/');
    match normalized.strip_prefix(root) {
        Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/').to_owned(),
        _ => normalized,
    }
}

/// Files created (first action `create`) and edited (any `modify`) by the session.
pub fn file_counts(conn: &Connection, session_id: &str) -> rusqlite::Result<(i64, i64)> {
    conn.prepare_cached(
        "SELECT COUNT(DISTINCT CASE WHEN action = 'create' THEN file_path END), \
                COUNT(DISTINCT CASE WHEN action = 'modify' THEN file_path END) \
         FROM observations WHERE session_id = ?1 AND obs_type = 'file_edit' AND outcome = 'succeeded'",
    )?
    .query_row([session_id], |r| Ok((r.get(0)?, r.get(1)?)))
}

pub fn prompts(conn: &Connection, session_id: &str) -> rusqlite::Result<Vec<String>> {
    conn.prepare_cached("SELECT text FROM prompts WHERE session_id = ?1 ORDER BY id")?
        .query_map([session_id], |r| r.get(0))?
        .collect()
}

pub fn stack_profile(conn: &Connection, session_id: &str) -> rusqlite::Result<Option<StackProfile>> {
    let text: Option<String> = conn
        .prepare_cached("SELECT profile FROM stack_profiles WHERE session_id = ?1")?
        .query_row([session_id], |r| r.get(0))
        .optional()?;
    let mut profile: Option<StackProfile> = text.and_then(|t| serde_json::from_str(&t).ok());
    if let Some(profile) = &mut profile {
        crate::analysis::stack::show_languages(profile);
    }
    Ok(profile)
}

pub fn patterns(conn: &Connection, session_id: &str) -> rusqlite::Result<Vec<Pattern>> {
    conn.prepare_cached(
        "SELECT pattern_type, name, file, line, snippet, language FROM static_patterns WHERE session_id = ?1 ORDER BY id",
    )?
    .query_map([session_id], |r| {
        Ok(Pattern {
            pattern_type: r.get(0)?,
            name: r.get(1)?,
            file: r.get(2)?,
            line: r.get(3)?,
            snippet: r.get(4)?,
            language: r.get(5)?,
        })
    })?
    .collect()
}

/// The input hash of a step's last successful run, if any.
pub fn last_input_hash(conn: &Connection, session_id: &str, step: &str) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached("SELECT input_hash FROM analysis_inputs WHERE session_id = ?1 AND step = ?2")?
        .query_row(params![session_id, step], |r| r.get(0))
        .optional()
}

/// Effect: records a step's input hash (in the same transaction as its outputs).
pub fn record_input_hash(
    conn: &Connection,
    session_id: &str,
    step: &str,
    hash: &str,
    now: i64,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO analysis_inputs (session_id, step, input_hash, updated_at) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (session_id, step) DO UPDATE SET input_hash = excluded.input_hash, updated_at = excluded.updated_at",
    )?
    .execute(params![session_id, step, hash, now])?;
    Ok(())
}

/// Hex SHA-256 of a serialisable input: of its JSON, streamed into the hash rather than
/// written out first (a large session's files and patterns are tens of megabytes of JSON:
/// issue 43 §4). The same digest as hashing `serde_json::to_vec(input)`.
pub fn hash_of(input: &impl serde::Serialize) -> String {
    // Buffered: the serializer writes a token at a time, and a hash update per token cost
    // more than writing the JSON out whole (measured: the static job 2.5x slower at 3,000 files).
    let mut hasher = std::io::BufWriter::with_capacity(64 * 1024, HashWriter(Sha256::new()));
    let written = serde_json::to_writer(&mut hasher, input).map_err(std::io::Error::from);
    match written.and_then(|()| hasher.into_inner().map_err(|e| e.into_error())) {
        Ok(hasher) => hex::encode(hasher.0.finalize()),
        Err(_) => sha256_hex(b""),
    }
}

/// An `io::Write` that feeds a SHA-256.
struct HashWriter(Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A stable row id: `prefix-` and the first 20 hex digits of the SHA-256 of `key`.
pub fn stable_id(prefix: &str, key: &str) -> String {
    format!("{prefix}-{}", &sha256_hex(key.as_bytes())[..20])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session in a fresh database: `writes` as (path, content, fragment, outcome) in order,
    /// then a failed test run naming `failing`.
    fn recorded(writes: &[(String, String, bool, &str)], failing: &str) -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::open_and_migrate(&dir.path().join("v.db"), crate::db::Synchronous::Normal).unwrap();
        conn.execute(
            "INSERT INTO sessions (id, project, cwd, started_at, updated_at) VALUES ('s', 'shop', '/w/shop', 1, 1)",
            [],
        )
        .unwrap();
        let mut add = conn
            .prepare(
                "INSERT INTO observations (session_id, event_key, obs_type, tool_name, file_path, action, content, \
                 fragment, command, output, outcome, error, created_at) VALUES ('s', ?1, ?2, ?3, ?4, 'modify', ?5, ?6, ?7, ?8, ?9, ?10, 1)",
            )
            .unwrap();
        for (i, (path, content, fragment, outcome)) in writes.iter().enumerate() {
            add.execute(rusqlite::params![
                format!("w{i}"),
                "file_edit",
                "Write",
                format!("/w/shop/{path}"),
                content,
                fragment,
                None::<String>,
                None::<String>,
                outcome,
                None::<String>
            ])
            .unwrap();
        }
        let error = format!("FAIL {failing}\nexpected 1, got 2");
        add.execute(rusqlite::params![
            "t1",
            "bash_command",
            "Bash",
            None::<String>,
            None::<String>,
            false,
            "npx vitest run",
            error,
            "failed",
            error
        ])
        .unwrap();
        drop(add);
        (dir, conn)
    }

    #[test]
    fn the_files_read_are_the_latest_versions_and_past_the_bound_the_storys_first() {
        let w =
            |path: &str, content: &str, fragment: bool| (path.to_string(), content.to_string(), fragment, "succeeded");
        let (_dir, conn) = recorded(
            &[
                w("a.ts", "one", false),
                w("a.ts", "two", false),
                w("b.ts", "part 1", true),
                w("b.ts", "part 2", true),
                w("c.ts", "whole", false),
                w("c.ts", "a fragment after", true),
                ("d.ts".into(), "failed write".into(), false, "failed"),
            ],
            "z.test.ts",
        );
        let files = captured_files(&conn, "s").unwrap();
        let got: Vec<(&str, &str, bool)> =
            files.iter().map(|f| (f.path.as_str(), f.content.as_str(), f.fragment)).collect();
        assert_eq!(got, [("a.ts", "two", false), ("b.ts", "part 1\npart 2", true), ("c.ts", "whole", false)]);

        // Past the bound: the failing test, the last edited and the manifest are read; the
        // others' contents are not, and every path is still known.
        let mut writes: Vec<_> =
            (0..MAX_ANALYSED_FILES + 50).map(|i| w(&format!("src/m{i:04}.ts"), "x", false)).collect();
        writes.insert(0, w("package.json", "{}", false));
        writes.insert(1, w("src/z.test.ts", "it()", false));
        let (_dir, conn) = recorded(&writes, "src/z.test.ts");
        let files = captured_files(&conn, "s").unwrap();
        let paths: HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert!(files.len() <= MAX_ANALYSED_FILES + 1, "{}", files.len());
        assert!(paths.contains("src/z.test.ts") && paths.contains("package.json"), "the failing test and the manifest");
        let last = format!("src/m{:04}.ts", MAX_ANALYSED_FILES + 49);
        assert!(paths.contains(last.as_str()), "the file edited last");
        assert!(!paths.contains("src/m0000.ts"), "an early file edited once is left out");
        assert_eq!(captured_paths(&conn, "s").unwrap().len(), MAX_ANALYSED_FILES + 52);
    }

    fn files(paths: &[&str]) -> Vec<SourceFile> {
        paths.iter().map(|p| SourceFile::new(*p, format!("// {p}"))).collect()
    }

    fn activity(rows: &[(&str, i64, u32)]) -> Vec<FileActivity> {
        rows.iter()
            .map(|(path, last_edit, edits)| FileActivity { path: (*path).into(), last_edit: *last_edit, edits: *edits })
            .collect()
    }

    fn failed(subject: &str, error: &str) -> FailedCall {
        FailedCall { tool_name: "Bash".into(), subject: subject.into(), error: error.into() }
    }

    fn order(files: &[SourceFile], story: &Story<'_>) -> Vec<String> {
        story_order(files, story).into_iter().map(|f| f.path.clone()).collect()
    }

    #[test]
    fn the_failing_test_and_the_last_and_most_edited_files_come_before_the_alphabet() {
        let all = files(&["app/a.py", "app/b.py", "app/c.py", "shop/cart.py", "tests/test_cart.py", "util/log.py"]);
        let act = activity(&[
            ("app/a.py", 1, 1),
            ("app/b.py", 2, 1),
            ("app/c.py", 3, 1),
            ("tests/test_cart.py", 4, 1),
            ("util/log.py", 5, 4),
            ("shop/cart.py", 9, 2),
        ]);
        let failures = [failed("pytest -q", "FAILED tests/test_cart.py::test_total - AssertionError: assert 3 == 4")];
        let story = Story { activity: &act, failures: &failures, sites: &[] };
        assert_eq!(
            order(&all, &story),
            ["tests/test_cart.py", "shop/cart.py", "util/log.py", "app/c.py", "app/b.py", "app/a.py"],
            "the failure's file, then the last edited, the most edited, and so on alternately"
        );
        // Without a story the order is the paths' own.
        let none = Story { activity: &[], failures: &[], sites: &[] };
        assert_eq!(order(&all, &none), all.iter().map(|f| f.path.clone()).collect::<Vec<_>>());
    }

    #[test]
    fn the_concepts_sites_come_first_then_the_failures() {
        let all = files(&["a.ts", "src/cart.ts", "src/db.ts", "z.ts"]);
        let act = activity(&[("a.ts", 1, 1), ("src/cart.ts", 2, 1), ("src/db.ts", 3, 1), ("z.ts", 4, 1)]);
        let failures = [failed("npx tsc --noEmit", "src/cart.ts(9,7): error TS2322: Type 'string' is not assignable")];
        let sites = ["./src/db.ts"];
        let story = Story { activity: &act, failures: &failures, sites: &sites };
        assert_eq!(order(&all, &story), ["src/db.ts", "src/cart.ts", "z.ts", "a.ts"]);
    }

    #[test]
    fn a_failure_names_a_file_by_any_spelling_of_its_path() {
        let all = files(&[
            "web/src/cart.ts",
            "pkg/main.rs",
            "lib/shop/api.py",
            "cmd/util.go",
            "index.js",
            "a/index.js",
            "x/y.py",
        ]);
        let named = |error: &str| {
            let failures = [failed("run", error)];
            let mentions = Mentions::of(&failures);
            let names = basename_counts(&all);
            all.iter().filter(|f| mentions.names(&f.path, &names)).map(|f| f.path.as_str()).collect::<Vec<_>>()
        };
        assert_eq!(named("src/cart.ts(9,7): error"), ["web/src/cart.ts"], "a tail with a folder");
        assert_eq!(named("error[E0308]: mismatched types\n --> pkg/main.rs:4:18"), ["pkg/main.rs"]);
        assert_eq!(named("  File \"/home/ann/proj/lib/shop/api.py\", line 3, in total"), ["lib/shop/api.py"]);
        assert_eq!(named(r"C:\Users\ann\proj\cmd\util.go:12:5: undefined: x"), ["cmd/util.go"], "Windows paths");
        assert_eq!(named("./util.go:12: undefined"), ["cmd/util.go"], "a bare name one file has");
        assert_eq!(named("index.js:3 ReferenceError"), Vec::<&str>::new(), "a bare name two files share names neither");
        assert_eq!(named("/usr/lib/python3/site-packages/requests/api.py, line 9"), Vec::<&str>::new());
        assert_eq!(named("all good."), Vec::<&str>::new());
    }

    #[test]
    fn every_file_is_kept_once_and_the_prompt_keeps_its_bound() {
        let paths: Vec<String> = (0..40).map(|i| format!("f{i:02}.rs")).collect();
        let all: Vec<SourceFile> = paths.iter().map(|p| SourceFile::new(p.as_str(), "x")).collect();
        let act: Vec<FileActivity> = paths
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 3 != 0)
            .map(|(i, p)| FileActivity { path: p.clone(), last_edit: (i * 7 % 40) as i64, edits: (i % 5) as u32 })
            .collect();
        let story = Story { activity: &act, failures: &[], sites: &[] };
        let mut seen = order(&all, &story);
        seen.sort();
        assert_eq!(seen, paths, "a permutation");
        assert_eq!(prompt_files(&all, &story).len(), super::super::prompts::MAX_FILES);
    }

    #[test]
    fn the_streamed_hash_is_the_hash_of_the_json() {
        let files = files(&["a.rs", "src/b.ts"]);
        let input = ("offline", &files, vec![1, 2, 3]);
        assert_eq!(hash_of(&input), sha256_hex(&serde_json::to_vec(&input).unwrap()));
        assert_ne!(hash_of(&input), hash_of(&("offline", &files, vec![1, 2])));
    }

    #[test]
    fn patterns_of_the_shown_files_are_listed_first() {
        let pattern = |file: &str| Pattern {
            pattern_type: "test".into(),
            name: file.into(),
            file: file.into(),
            line: 1,
            snippet: String::new(),
            language: "rust".into(),
        };
        let patterns = [pattern("a.rs"), pattern("b.rs"), pattern("c.rs"), pattern("b.rs")];
        let shown = files(&["b.rs"]);
        let names: Vec<String> = patterns_in_shown_first(&patterns, &shown).into_iter().map(|p| p.file).collect();
        assert_eq!(names, ["b.rs", "b.rs", "a.rs", "c.rs"]);
    }
}
