//! The stable copy of `vl` (SPEC §10): install copies the running binary to
//! `<data>/bin/vl[.exe]` and registers that copy, so hooks keep working when the `vl` that ran
//! the install lives in a temporary or versioned place (`npx`, a plugin cache, a download
//! folder). `<data>/bin/installs.txt` lists the settings files that point at it; uninstalling
//! the last one removes the copy.

use std::path::{Path, PathBuf};

use crate::cli::backend::CliError;
use crate::config::Config;

/// Where the stable copy of `vl` lives.
pub fn installed_binary(config: &Config) -> PathBuf {
    config.data_dir.join("bin").join(format!("vl{}", std::env::consts::EXE_SUFFIX))
}

/// Copies the running `vl` to [`installed_binary`] (beside it, then renamed over it, so a hook
/// starting at that moment runs the old or the new one, never half a file) and records that
/// `settings` uses it. Returns the copy's path.
pub(super) fn install_binary(config: &Config, settings: &Path) -> Result<PathBuf, CliError> {
    let exe = std::env::current_exe().map_err(|e| CliError::caused("cannot find the vl executable", e))?;
    let target = installed_binary(config);
    let dir = target.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| CliError::caused(format!("cannot create {}", dir.display()), e))?;
    remove_stale_copies(dir);
    let same = |a: &Path, b: &Path| {
        std::fs::canonicalize(a).ok().zip(std::fs::canonicalize(b).ok()).is_some_and(|(a, b)| a == b)
    };
    if !same(&exe, &target) {
        let fresh = dir.join(format!("vl.new{}", std::env::consts::EXE_SUFFIX));
        std::fs::copy(&exe, &fresh)
            .map_err(|e| CliError::caused(format!("cannot copy {} to {}", exe.display(), fresh.display()), e))?;
        if std::fs::rename(&fresh, &target).is_err() {
            // Windows will not replace a program that is running (a hook, the worker), but
            // lets it be renamed: move it aside, then put the new one in its place.
            let aside = dir.join(format!("vl.old-{}{}", std::process::id(), std::env::consts::EXE_SUFFIX));
            let _ = std::fs::rename(&target, &aside);
            std::fs::rename(&fresh, &target)
                .map_err(|e| CliError::caused(format!("cannot put the new vl at {}", target.display()), e))?;
        }
    }
    let mut users = read_installs(dir);
    let settings = settings.to_string_lossy().into_owned();
    if !users.contains(&settings) {
        users.push(settings);
        write_installs(dir, &users)?;
    }
    Ok(target)
}

/// Forgets that `settings` uses the copy; removes the copy when nothing uses it any more.
/// Returns the removed copy's path.
pub(super) fn uninstall_binary(config: &Config, settings: &Path) -> Result<Option<PathBuf>, CliError> {
    let target = installed_binary(config);
    let dir = target.parent().unwrap_or(Path::new("."));
    let mut users = read_installs(dir);
    let settings = settings.to_string_lossy();
    users.retain(|u| *u != settings);
    if !users.is_empty() {
        write_installs(dir, &users)?;
        return Ok(None);
    }
    let _ = std::fs::remove_file(dir.join(INSTALLS_FILE));
    if !target.exists() {
        return Ok(None);
    }
    if std::fs::remove_file(&target).is_err() {
        // Running (Windows): moved aside, and removed by the next install or uninstall.
        let aside = dir.join(format!("vl.old-{}{}", std::process::id(), std::env::consts::EXE_SUFFIX));
        std::fs::rename(&target, &aside)
            .map_err(|e| CliError::caused(format!("cannot remove {}", target.display()), e))?;
    }
    remove_stale_copies(dir);
    let _ = std::fs::remove_dir(dir);
    Ok(Some(target))
}

/// Whether uninstalling `settings` removes the copy (it is the last file using it, and the copy
/// is there): a worker running from it is stopped first.
pub(super) fn removes_copy(config: &Config, settings: &Path) -> bool {
    let target = installed_binary(config);
    let dir = target.parent().unwrap_or(Path::new("."));
    let settings = settings.to_string_lossy();
    target.exists() && read_installs(dir).iter().all(|u| *u == settings)
}

/// The settings files that use the copy, one per line.
const INSTALLS_FILE: &str = "installs.txt";

fn read_installs(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(INSTALLS_FILE))
        .map(|text| text.lines().filter(|l| !l.trim().is_empty()).map(str::to_owned).collect())
        .unwrap_or_default()
}

fn write_installs(dir: &Path, users: &[String]) -> Result<(), CliError> {
    let path = dir.join(INSTALLS_FILE);
    std::fs::write(&path, users.join("\n") + "\n")
        .map_err(|e| CliError::caused(format!("cannot write {}", path.display()), e))
}

/// Copies moved aside while they ran, and a copy left half-made: gone once nothing runs them.
fn remove_stale_copies(dir: &Path) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("vl.old-") || name.starts_with("vl.new") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
