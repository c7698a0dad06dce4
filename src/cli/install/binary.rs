//! The stable copy of `vl` (SPEC §10): install copies the running binary to
//! `<data>/bin/vl[.exe]`, and the `vl-worker[.exe]` beside it to the same folder
//! ([`crate::executables`]: `vl` runs the worker and the demo through it), and registers that
//! copy, so hooks keep working when the `vl` that ran the install lives in a temporary or
//! versioned place (`npx`, a plugin cache, a download folder).
//!
//! Every change here happens under the install lock ([`super::lock`]). Each copy is made under
//! a name of this process's own (`vl.new-<pid>`, `vl-worker.new-<pid>`) and renamed over its
//! target, so a hook starting at that moment runs the old binary or the new one, never half a
//! file, and two installs never share (or delete) one half-made copy. The worker goes first:
//! a `vl` that is new finds a `vl-worker` at least as new.
//!
//! Whether the copy is still used is read from the settings files themselves — every agent's
//! user file, and every file the ledger (or an older version's `installs.txt`) names — not from
//! a list that could have lost an entry: uninstall removes the two copies only when no file
//! still runs `vl`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::agents::Agent;
use super::ledger::Ledger;
use crate::cli::backend::CliError;
use crate::config::Config;
use crate::executables::{self, VL_STEM, WORKER_STEM};

/// Where the stable copy of `vl` lives.
pub fn installed_binary(config: &Config) -> PathBuf {
    config.data_dir.join("bin").join(executables::file_name(VL_STEM))
}

/// Where the copy of `vl-worker` lives: beside [`installed_binary`].
pub fn installed_worker(config: &Config) -> PathBuf {
    config.data_dir.join("bin").join(executables::file_name(WORKER_STEM))
}

/// The list an older version kept of the settings files that use the copy: read for what it
/// names, never written, removed with the copy.
const LEGACY_INSTALLS_FILE: &str = "installs.txt";

/// Copies the running `vl` to [`installed_binary`] and its `vl-worker` to [`installed_worker`].
/// The caller holds the install lock.
pub(super) fn install_binary(config: &Config) -> Result<PathBuf, CliError> {
    let (vl, worker) = sources()?;
    let target = installed_binary(config);
    let dir = target.parent().unwrap_or(Path::new("."));
    crate::platform::create_private_dir(dir)
        .map_err(|e| CliError::caused(format!("cannot create {}", dir.display()), e))?;
    // Under the lock no other install is copying: anything half-made here is a crashed one's.
    remove_stale_copies(dir);
    put(&worker, &installed_worker(config), WORKER_STEM)?;
    put(&vl, &target, VL_STEM)?;
    Ok(target)
}

/// The two files an install copies: the running `vl` and the `vl-worker` beside it; run as
/// `vl-worker` (the whole program can install too), that one and the `vl` beside it.
fn sources() -> Result<(PathBuf, PathBuf), CliError> {
    let exe = std::env::current_exe().map_err(|e| CliError::caused("cannot find the vl executable", e))?;
    if executables::is_worker(&exe) {
        let vl = exe.with_file_name(executables::file_name(VL_STEM));
        if !vl.is_file() {
            return Err(CliError::Failed(format!(
                "cannot install: {} is not beside {}; reinstall VibeLearn: the two files ship together",
                vl.display(),
                exe.display()
            )));
        }
        return Ok((vl, exe));
    }
    let worker = executables::worker_beside(&exe).map_err(|e| CliError::Failed(format!("cannot install: {e}")))?;
    Ok((exe, worker))
}

/// Puts a copy of `from` at `target` (in the bin folder, named after `stem`): made under a
/// name of this process's own, then renamed over the old one.
fn put(from: &Path, target: &Path, stem: &str) -> Result<(), CliError> {
    let same = |a: &Path, b: &Path| {
        std::fs::canonicalize(a).ok().zip(std::fs::canonicalize(b).ok()).is_some_and(|(a, b)| a == b)
    };
    if same(from, target) {
        return Ok(());
    }
    let dir = target.parent().unwrap_or(Path::new("."));
    let fresh = dir.join(format!("{stem}.new-{}{}", std::process::id(), std::env::consts::EXE_SUFFIX));
    copy_synced(from, &fresh)
        .map_err(|e| CliError::caused(format!("cannot copy {} to {}", from.display(), fresh.display()), e))?;
    if std::fs::rename(&fresh, target).is_err() {
        // Windows will not replace a program that is running (a hook, the worker), but lets it
        // be renamed: move it aside, then put the new one in its place.
        let aside = dir.join(format!("{stem}.old-{}{}", std::process::id(), std::env::consts::EXE_SUFFIX));
        let _ = std::fs::rename(target, &aside);
        std::fs::rename(&fresh, target).map_err(|e| {
            let _ = std::fs::remove_file(&fresh);
            CliError::caused(format!("cannot put the new {stem} at {}", target.display()), e)
        })?;
    }
    Ok(())
}

/// `std::fs::copy` (which keeps the mode), then the copy flushed to disk before it is renamed
/// into place: a crash right after the rename must not leave an empty binary the hooks run.
fn copy_synced(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::copy(from, to)?;
    std::fs::OpenOptions::new().write(true).open(to)?.sync_all()
}

/// Whether a settings file still runs the copy: every agent's user file and every file the
/// ledger or the legacy list names, read now. A file that cannot be read or parsed counts as
/// using it (keeping a binary costs little; removing one a hook runs breaks the agent).
pub(super) fn still_used(config: &Config, ledger: &Ledger) -> bool {
    let copy = installed_binary(config);
    let mut files: Vec<PathBuf> = ledger.files().collect();
    if let Some(home) = &config.home {
        files.extend(Agent::ALL.iter().map(|agent| agent.file(home)));
    }
    files.extend(legacy_installs(&copy).into_iter().map(PathBuf::from));
    files.sort();
    files.dedup();
    files.iter().any(|file| runs(file, &copy))
}

/// Whether the file at `path` holds a command that runs `copy` (in any of the spellings
/// install writes: the path as is, with forward slashes, with backslashes).
fn runs(path: &Path, copy: &Path) -> bool {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
        Err(_) => return true,
    };
    let raw = copy.to_string_lossy();
    let spellings = [raw.to_string(), raw.replace('\\', "/"), raw.replace('/', "\\")];
    let Ok(document) = super::settings_file::parse_json(path, Some(&text), super::settings_file::JsonSyntax::Jsonc)
    else {
        return true;
    };
    mentions(&document, &spellings)
}

/// Whether any string in `value` contains one of `needles`.
fn mentions(value: &Value, needles: &[String]) -> bool {
    match value {
        Value::String(s) => needles.iter().any(|n| s.contains(n.as_str())),
        Value::Array(items) => items.iter().any(|v| mentions(v, needles)),
        Value::Object(map) => map.values().any(|v| mentions(v, needles)),
        _ => false,
    }
}

/// Removes the two copies (the caller checked that nothing runs `vl`, and holds the lock);
/// returns the paths of those there were, `vl` first.
pub(super) fn uninstall_binary(config: &Config) -> Result<Vec<PathBuf>, CliError> {
    let target = installed_binary(config);
    let dir = target.parent().unwrap_or(Path::new("."));
    let _ = std::fs::remove_file(dir.join(LEGACY_INSTALLS_FILE));
    let mut removed = Vec::new();
    for (copy, stem) in [(target.clone(), VL_STEM), (installed_worker(config), WORKER_STEM)] {
        if !copy.exists() {
            continue;
        }
        if std::fs::remove_file(&copy).is_err() {
            // Running (Windows): moved aside, and removed by the next install or uninstall.
            let aside = dir.join(format!("{stem}.old-{}{}", std::process::id(), std::env::consts::EXE_SUFFIX));
            std::fs::rename(&copy, &aside)
                .map_err(|e| CliError::caused(format!("cannot remove {}", copy.display()), e))?;
        }
        removed.push(copy);
    }
    remove_stale_copies(dir);
    let _ = std::fs::remove_dir(dir);
    Ok(removed)
}

/// The settings files an older version's `installs.txt` lists.
fn legacy_installs(copy: &Path) -> Vec<String> {
    let dir = copy.parent().unwrap_or(Path::new("."));
    std::fs::read_to_string(dir.join(LEGACY_INSTALLS_FILE))
        .map(|text| text.lines().filter(|l| !l.trim().is_empty()).map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Copies (of `vl` or `vl-worker`) moved aside while they ran, and copies a crashed install
/// left half-made: gone once nothing runs them.
fn remove_stale_copies(dir: &Path) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let stale = [VL_STEM, WORKER_STEM]
            .iter()
            .any(|stem| name.starts_with(&format!("{stem}.old-")) || name.starts_with(&format!("{stem}.new")));
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_runs_the_copy_in_any_spelling_install_writes() {
        let needles = |p: &str| [p.to_owned(), p.replace('\\', "/"), p.replace('/', "\\")];
        let copy = r"C:\Users\Ann\.vibelearn\bin\vl.exe";
        let exec = serde_json::json!({"hooks": {"Stop": [{"hooks": [{"command": copy, "args": ["hook"]}]}]}});
        assert!(mentions(&exec, &needles(copy)));
        let shell = serde_json::json!({"x": [{"bash": "C:/Users/Ann/.vibelearn/bin/vl.exe hook copilot x"}]});
        assert!(mentions(&shell, &needles(copy)));
        let other = serde_json::json!({"hooks": {"Stop": [{"command": "/usr/bin/vl hook claude-code summarize"}]}});
        assert!(!mentions(&other, &needles("/home/ann/.vibelearn/bin/vl")));
    }
}
