//! The `analyze_static` job (SPEC §6.2): runs the static rules over the latest captured
//! content of every file the session wrote and replaces the session's stored patterns.
//! Skips with `unchanged` when the captured files hash as at the last success.

use serde_json::json;

use super::session_data::{self, hash_of};
use super::{missing_session, session_id_of};
use crate::analysis::analyze_files;
use crate::queue::{CancelToken, ClaimedJob, Effects, Handler, Outcome, Queue};

pub struct StaticHandler {
    pub queue: Queue,
}

impl Handler for StaticHandler {
    fn run(&self, job: &ClaimedJob, _cancel: &CancelToken) -> Outcome {
        let session_id = match session_id_of(job) {
            Ok(id) => id,
            Err(outcome) => return outcome,
        };
        let inputs = self.queue.read().and_then(|conn| {
            let exists = session_data::session(&conn, &session_id)?.is_some();
            let files = session_data::captured_files(&conn, &session_id)?;
            let last = session_data::last_input_hash(&conn, &session_id, super::ANALYZE_STATIC)?;
            Ok((exists, files, last))
        });
        let (exists, files, last_hash) = match inputs {
            Ok(inputs) => inputs,
            Err(e) => return Outcome::retry(e.to_string()),
        };
        if !exists {
            return missing_session(&session_id);
        }
        let hash = hash_of(&files);
        if last_hash.as_deref() == Some(hash.as_str()) {
            return Outcome::unchanged(json!({ "skipped": "unchanged" }));
        }
        let patterns = analyze_files(&files);
        let result = json!({ "files": files.len(), "patterns": patterns.len() });
        let effects: Effects = Box::new(move |conn, now| {
            // A re-run replaces: the patterns describe the latest content, not a history.
            conn.prepare_cached("DELETE FROM static_patterns WHERE session_id = ?1")?.execute([&session_id])?;
            let mut insert = conn.prepare_cached(
                "INSERT INTO static_patterns (session_id, pattern_type, name, file, line, snippet, language) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            for p in &patterns {
                insert.execute(rusqlite::params![
                    session_id,
                    p.pattern_type,
                    p.name,
                    p.file,
                    p.line,
                    p.snippet,
                    p.language
                ])?;
            }
            session_data::record_input_hash(conn, &session_id, super::ANALYZE_STATIC, &hash, now)?;
            Ok(())
        });
        Outcome::Succeeded { result: Some(result), effects: Some(effects) }
    }
}
