//! The package's two executables and how one finds the other.
//!
//! `vl` is what a person and the agents' hooks run; `vl-worker` is the whole program, the
//! worker's job runner and the analysis with its tree-sitter grammars included. `vl` never
//! references the runner or the analysis, so the linker leaves them (and the grammars' tables,
//! whose relocations the dynamic loader would apply at every start of every hook) out of it;
//! the commands that need them, `vl worker run` and `vl demo`, run in `vl-worker`
//! ([`crate::cli::dispatch`]). The two always sit side by side: the build's target folder,
//! `<data>/bin/` after `vl install`, a release archive, an npm platform package.
//!
//! The measured reason and the figures: docs/DECISIONS.md, "Two executables".

use std::path::{Path, PathBuf};

/// The worker executable's name without the platform's suffix.
pub const WORKER_STEM: &str = "vl-worker";

/// The user-facing executable's name without the platform's suffix.
pub const VL_STEM: &str = "vl";

/// `stem` as a file name on this OS (`vl-worker`, `vl-worker.exe`).
pub fn file_name(stem: &str) -> String {
    format!("{stem}{}", std::env::consts::EXE_SUFFIX)
}

/// `vl-worker` is not beside the running executable.
#[derive(Debug, thiserror::Error)]
pub enum MissingWorker {
    #[error("cannot find the running executable: {0}")]
    NoCurrentExe(std::io::Error),
    #[error(
        "{name}, which runs the worker and the demo, is not beside vl (looked for {looked}); \
         reinstall VibeLearn: the two files ship together",
        name = file_name(WORKER_STEM),
        looked = .looked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" and ")
    )]
    NotBeside { looked: Vec<PathBuf> },
}

/// The running executable's path.
pub fn current() -> Result<PathBuf, MissingWorker> {
    std::env::current_exe().map_err(MissingWorker::NoCurrentExe)
}

/// Whether `exe` is the worker executable (by its file name).
pub fn is_worker(exe: &Path) -> bool {
    exe.file_name().is_some_and(|name| name.eq_ignore_ascii_case(file_name(WORKER_STEM).as_str()))
}

/// The `vl-worker` beside `exe`: in `exe`'s folder as it was started, else beside the file it
/// resolves to (a `vl` reached through a symlink, which macOS reports unresolved).
pub fn worker_beside(exe: &Path) -> Result<PathBuf, MissingWorker> {
    let name = file_name(WORKER_STEM);
    let mut looked = Vec::new();
    let resolved = std::fs::canonicalize(exe).ok();
    for dir in [exe.parent(), resolved.as_deref().and_then(Path::parent)].into_iter().flatten() {
        let candidate = dir.join(&name);
        if candidate.is_file() {
            return Ok(candidate);
        }
        if !looked.contains(&candidate) {
            looked.push(candidate);
        }
    }
    Err(MissingWorker::NotBeside { looked })
}

/// The `vl-worker` beside the running executable (the running executable itself when it is
/// `vl-worker`).
pub fn worker() -> Result<PathBuf, MissingWorker> {
    let exe = current()?;
    if is_worker(&exe) {
        return Ok(exe);
    }
    worker_beside(&exe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worker_is_found_beside_the_executable_and_its_absence_says_where_it_looked() {
        let dir = tempfile::tempdir().expect("temp dir");
        let vl = dir.path().join(file_name(VL_STEM));
        std::fs::write(&vl, b"").expect("write vl");
        let err = worker_beside(&vl).expect_err("no worker yet");
        let message = err.to_string();
        let expected = dir.path().join(file_name(WORKER_STEM));
        assert!(message.contains(&expected.display().to_string()), "{message}");
        assert!(message.contains("reinstall"), "{message}");
        std::fs::write(&expected, b"").expect("write worker");
        let found = worker_beside(&vl).expect("worker beside vl");
        assert_eq!(found, expected);
    }

    #[test]
    fn the_worker_is_told_by_its_file_name() {
        assert!(is_worker(Path::new("/opt/vl/").join(file_name(WORKER_STEM)).as_path()));
        assert!(!is_worker(Path::new("/opt/vl/").join(file_name(VL_STEM)).as_path()));
        assert!(!is_worker(Path::new("/opt/vl-worker/vl")));
    }
}
