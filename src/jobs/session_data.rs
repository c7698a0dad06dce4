//! Reading a session's inputs for the analysis steps (through the read pool), and the input
//! hash behind the "unchanged" skip (SPEC §5.3).

use std::collections::BTreeMap;

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

/// The latest captured content of every file the session wrote, in path order, with paths
/// relative to the session's cwd when they lie under it (what a developer recognises, and
/// what questions quote).
///
/// Fragments (edits whose whole file was never captured, [`crate::capture`]) never replace a
/// whole version of their file; a file known only from fragments is their texts in order,
/// marked `fragment`. Failed calls wrote nothing and are left out.
pub fn captured_files(conn: &Connection, session_id: &str) -> rusqlite::Result<Vec<SourceFile>> {
    let cwd: Option<String> = conn
        .prepare_cached("SELECT cwd FROM sessions WHERE id = ?1")?
        .query_row([session_id], |r| r.get(0))
        .optional()?
        .flatten();
    let mut latest: BTreeMap<String, SourceFile> = BTreeMap::new();
    let mut stmt = conn.prepare_cached(
        "SELECT file_path, content, fragment FROM observations WHERE session_id = ?1 AND obs_type = 'file_edit' \
         AND file_path IS NOT NULL AND content IS NOT NULL AND outcome = 'succeeded' ORDER BY id",
    )?;
    let rows = stmt.query_map([session_id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get(2)?)))?;
    for row in rows {
        let (path, content, fragment): (String, String, bool) = row?;
        let path = relative_path(&path, cwd.as_deref());
        match latest.get_mut(&path) {
            Some(known) if fragment && known.fragment => {
                known.content.push('\n');
                known.content.push_str(&content);
            }
            Some(_) if fragment => {}
            _ => {
                latest.insert(path.clone(), SourceFile { path, content, fragment });
            }
        }
    }
    Ok(latest.into_values().collect())
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

/// What a concept or question may cite: the captured files, and the errors the developer met
/// (a failed call's label as the file, its error as the text).
pub fn citable(files: &[SourceFile], failures: &[FailedCall]) -> Vec<SourceFile> {
    files.iter().cloned().chain(failures.iter().map(FailedCall::as_source)).collect()
}

/// The session's [`citable`] sources, read in one go.
pub fn citable_sources(conn: &Connection, session_id: &str) -> rusqlite::Result<Vec<SourceFile>> {
    Ok(citable(&captured_files(conn, session_id)?, &failures(conn, session_id)?))
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

/// Hex SHA-256 of a serialisable input.
pub fn hash_of(input: &impl serde::Serialize) -> String {
    sha256_hex(&serde_json::to_vec(input).unwrap_or_default())
}

/// Hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A stable row id: `prefix-` and the first 20 hex digits of the SHA-256 of `key`.
pub fn stable_id(prefix: &str, key: &str) -> String {
    format!("{prefix}-{}", &sha256_hex(key.as_bytes())[..20])
}
