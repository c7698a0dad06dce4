//! The `analyze_stack` job (SPEC §6.1): reads the manifests under the session's first cwd (and
//! those the session itself wrote), plus the paths it touched, and stores the stack profile.
//! Skips with `unchanged` when the manifests and paths hash as at the last success.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::session_data::{self, hash_of};
use super::{missing_session, session_id_of};
use crate::analysis::model::SourceFile;
use crate::analysis::{SessionEvidence, detect_stack_with, is_manifest};
use crate::queue::{CancelToken, ClaimedJob, Effects, Handler, Outcome, Queue};

/// Directories never searched for manifests: dependencies and build output.
const SKIP_DIRS: [&str; 12] = [
    "node_modules",
    ".git",
    "target",
    "vendor",
    "dist",
    "build",
    ".next",
    ".venv",
    "venv",
    "__pycache__",
    ".cache",
    "coverage",
];
/// How deep under the cwd manifests are looked for (monorepos: apps/web/package.json).
const MAX_DEPTH: usize = 3;
/// Manifests larger than this are skipped (a lock file named like a manifest, a generated file).
const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

pub struct StackHandler {
    pub queue: Queue,
    /// Whether the manifests under the session's cwd are read from disk. The cwd comes from
    /// the session's events; with the key required for every event, only the user's own
    /// processes name it. With `VIBELEARN_ACCEPT_UNKEYED_EVENTS` on, anyone on the machine
    /// could, so the worker then opens no path at all and the stack comes from what the
    /// session's own captured files and paths show (SPEC §4: no file opens for keyless events).
    pub read_manifests_from_disk: bool,
}

impl Handler for StackHandler {
    fn run(&self, job: &ClaimedJob, _cancel: &CancelToken) -> Outcome {
        let session_id = match session_id_of(job) {
            Ok(id) => id,
            Err(outcome) => return outcome,
        };
        let inputs = self.queue.read().and_then(|conn| {
            let session = session_data::session(&conn, &session_id)?;
            let files = session_data::captured_files(&conn, &session_id)?;
            let paths = session_data::captured_paths(&conn, &session_id)?;
            let commands = session_data::commands(&conn, &session_id)?;
            let last = session_data::last_input_hash(&conn, &session_id, super::ANALYZE_STACK)?;
            Ok((session, files, paths, commands, last))
        });
        let (session, captured, touched, commands, last_hash) = match inputs {
            Ok(inputs) => inputs,
            Err(e) => return Outcome::retry(e.to_string()),
        };
        let Some(session) = session else {
            return missing_session(&session_id);
        };
        let root = session.cwd.as_deref().map(PathBuf::from);
        let mut manifests =
            root.as_deref().filter(|_| self.read_manifests_from_disk).map(read_manifests).unwrap_or_default();
        // Captured paths are already relative to the cwd (session_data::captured_paths), and
        // all of them, where a large session's contents are read for its first files only.
        for file in &captured {
            if is_manifest(&file.path) && !manifests.iter().any(|m| m.path == file.path) {
                manifests.push(SourceFile::new(file.path.clone(), file.content.clone()));
            }
        }
        manifests.sort_by(|a, b| a.path.cmp(&b.path));
        // The commands and the files' contents name the test frameworks (`analysis::stack::testing`).
        let contents: Vec<&str> = captured.iter().map(|f| f.content.as_str()).collect();
        let hash = hash_of(&(&manifests, &touched, &commands, &contents));
        if last_hash.as_deref() == Some(hash.as_str()) {
            return Outcome::unchanged(json!({ "skipped": "unchanged" }));
        }
        let profile =
            detect_stack_with(&manifests, &touched, &SessionEvidence { commands: &commands, files: &captured });
        let result = json!({
            "languages": profile.languages, "framework": profile.framework, "orm": profile.orm,
            "manifests": profile.manifests.len(),
        });
        let text = serde_json::to_string(&profile).unwrap_or_default();
        let effects: Effects = Box::new(move |conn, now| {
            conn.prepare_cached(
                "INSERT INTO stack_profiles (session_id, profile, updated_at) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (session_id) DO UPDATE SET profile = excluded.profile, updated_at = excluded.updated_at",
            )?
            .execute(rusqlite::params![session_id, text, now])?;
            session_data::record_input_hash(conn, &session_id, super::ANALYZE_STACK, &hash, now)?;
            Ok(())
        });
        Outcome::Succeeded { result: Some(result), effects: Some(effects) }
    }
}

/// Manifests under `root`, at most [`MAX_DEPTH`] deep, paths relative to `root`. An unreadable
/// directory or file is skipped: the profile is built from what can be read.
fn read_manifests(root: &Path) -> Vec<SourceFile> {
    let mut found = Vec::new();
    let mut pending = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if depth < MAX_DEPTH && !SKIP_DIRS.contains(&name.as_str()) && !name.starts_with('.') {
                    pending.push((path, depth + 1));
                }
            } else if kind.is_file() && is_manifest(&name) {
                let small = entry.metadata().map(|m| m.len() <= MAX_MANIFEST_BYTES).unwrap_or(false);
                if let (true, Ok(content)) = (small, std::fs::read_to_string(&path)) {
                    let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
                    found.push(SourceFile::new(rel, content));
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_made_relative_to_the_root() {
        use crate::jobs::session_data::relative_path;
        assert_eq!(relative_path("/home/dev/shop/lib/a.ts", Some("/home/dev/shop")), "lib/a.ts");
        assert_eq!(relative_path("/home/dev/shopping/a.ts", Some("/home/dev/shop")), "/home/dev/shopping/a.ts");
        assert_eq!(relative_path("/elsewhere/a.ts", Some("/home/dev/shop/")), "/elsewhere/a.ts");
        assert_eq!(relative_path("C:\\p\\a.ts", None), "C:/p/a.ts");
    }

    #[test]
    fn manifests_are_found_in_a_monorepo_but_not_in_dependencies() {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in [
            ("package.json", "{}"),
            ("apps/web/package.json", "{}"),
            ("node_modules/x/package.json", "{}"),
            ("services/api/pyproject.toml", ""),
        ] {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        let mut paths: Vec<String> = read_manifests(dir.path()).into_iter().map(|m| m.path).collect();
        paths.sort();
        assert_eq!(paths, ["apps/web/package.json", "package.json", "services/api/pyproject.toml"]);
    }
}
