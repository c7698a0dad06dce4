//! What install remembers of each settings file it wrote, so uninstall can give the user's
//! bytes back (SPEC §10): `<file>.vibelearn.bak` beside the file the user names holds the
//! file as it was before the first install (written once: a later install never overwrites
//! it), and `<data>/installed-settings.json` the SHA-256 of the bytes install last wrote and
//! whether the file existed before. When the file still hashes to what we wrote, uninstall
//! restores the backup byte for byte (or removes a file install created); otherwise someone
//! edited it since, and uninstall removes only our entries.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cli::backend::CliError;
use crate::config::Config;

const LEDGER_FILE: &str = "installed-settings.json";

/// One settings file install wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Written {
    /// [`super::settings_file::sha256_hex`] of the bytes install last put in the file.
    pub sha256: String,
    /// The file did not exist before the first install.
    pub created: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Ledger {
    files: BTreeMap<String, Written>,
}

/// The backup of the user's own file, beside the path they know (not beside a symlink's
/// target, which may be a dotfiles repository).
pub fn backup_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".vibelearn.bak");
    PathBuf::from(name)
}

fn ledger_path(config: &Config) -> PathBuf {
    config.data_dir.join(LEDGER_FILE)
}

/// A missing or unreadable ledger is an empty one: uninstall then falls back to removing only
/// our entries, which loses nothing.
fn load(config: &Config) -> Ledger {
    std::fs::read_to_string(ledger_path(config))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

fn save(config: &Config, ledger: &Ledger) -> Result<(), CliError> {
    let path = ledger_path(config);
    if ledger.files.is_empty() {
        let _ = std::fs::remove_file(&path);
        return Ok(());
    }
    let text = serde_json::to_string_pretty(ledger).expect("the ledger always serialises") + "\n";
    std::fs::create_dir_all(&config.data_dir)
        .and_then(|()| std::fs::write(&path, text))
        .map_err(|e| CliError::caused(format!("cannot write {}", path.display()), e))
}

/// What install last wrote to `path`.
pub fn get(config: &Config, path: &Path) -> Option<Written> {
    load(config).files.get(&*path.to_string_lossy()).cloned()
}

/// Records the bytes install wrote to `path`; `created` counts only on the first install.
pub fn record(config: &Config, path: &Path, sha256: String, created: bool) -> Result<(), CliError> {
    let mut ledger = load(config);
    let key = path.to_string_lossy().into_owned();
    let created = ledger.files.get(&key).map_or(created, |w| w.created);
    ledger.files.insert(key, Written { sha256, created });
    save(config, &ledger)
}

/// Forgets `path` (uninstall is done with it).
pub fn forget(config: &Config, path: &Path) -> Result<(), CliError> {
    let mut ledger = load(config);
    if ledger.files.remove(&*path.to_string_lossy()).is_some() {
        save(config, &ledger)?;
    }
    Ok(())
}
