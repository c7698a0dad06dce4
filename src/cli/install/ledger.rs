//! What install remembers of what it changed, so uninstall takes out exactly that (SPEC §10):
//! `<data>/installed-settings.json`, read and written only under the install lock
//! ([`super::lock`]), and written atomically (a temp file, fsync, rename).
//!
//! For each settings file install wrote ([`Written`]):
//! - the SHA-256 of the bytes install last put in it;
//! - the user's own bytes from before the first install ([`Original`]), kept only while every
//!   change to the file since was one of ours: a later install checks that the file still
//!   hashes to what we last wrote, and forgets the original the moment it does not. So an
//!   exact give-back never puts old bytes over a newer edit (a permissions block added between
//!   two installs stays);
//! - the containers install created (`hooks`, `hooks/Stop`, …), so that uninstall, after taking
//!   out our hooks, removes an emptied list or `hooks` object only when it was ours;
//! - whether install created the file, which uninstall then removes only when nothing but our
//!   entries is left in it.
//!
//! For `--add-to-path` ([`PathAdded`]): the profile files it created, those it added its line
//! to, and whether it put the folder on Windows' user PATH, so uninstall takes out only those.
//!
//! `<file>.vibelearn.bak` beside the user's file is a safety copy of it as it was before the
//! first install, for the user's eyes; uninstall never restores it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::settings_file::write_atomically;
use crate::cli::backend::CliError;
use crate::config::Config;

const LEDGER_FILE: &str = "installed-settings.json";

/// The file as it was before VibeLearn first wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "was", rename_all = "snake_case")]
pub enum Original {
    /// There was no file: uninstall removes it.
    Missing,
    /// These bytes: uninstall puts them back.
    Bytes { text: String },
}

/// One settings file install wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Written {
    /// [`super::settings_file::sha256_hex`] of the bytes install last put in the file.
    pub sha256: String,
    /// The file did not exist before the first install.
    pub created: bool,
    /// The user's bytes before the first install, while the file changed only by our writes;
    /// `None` once anything else changed it (or for a record of an older version, which kept
    /// no such guarantee): uninstall then edits our entries out.
    #[serde(default)]
    pub original: Option<Original>,
    /// The containers install created, as `/`-joined key paths (`hooks`, `hooks/Stop`).
    #[serde(default)]
    pub added: Vec<String>,
}

/// What `--add-to-path` changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathAdded {
    /// Profile files that did not exist before install wrote its line into them.
    #[serde(default)]
    pub created: Vec<String>,
    /// Profile files install added its line to (created ones included).
    #[serde(default)]
    pub lines: Vec<String>,
    /// Install put the folder on the Windows user PATH (it was not there).
    #[serde(default)]
    pub user_path: bool,
}

/// Everything install remembers; load it, change it and save it while holding the lock.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Ledger {
    #[serde(default)]
    files: BTreeMap<String, Written>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<PathAdded>,
}

/// The safety copy of the user's own file, beside the path they know (not beside a symlink's
/// target, which may be a dotfiles repository).
pub fn backup_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".vibelearn.bak");
    PathBuf::from(name)
}

fn ledger_path(config: &Config) -> PathBuf {
    config.data_dir.join(LEDGER_FILE)
}

fn key(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

impl Ledger {
    /// A missing or unreadable ledger is an empty one: uninstall then edits only our entries
    /// out, which loses nothing of the user's.
    pub fn load(config: &Config) -> Ledger {
        std::fs::read_to_string(ledger_path(config))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    /// Writes the ledger in place atomically; an empty one is removed.
    pub fn save(&self, config: &Config) -> Result<(), CliError> {
        let path = ledger_path(config);
        if self.files.is_empty() && self.path.is_none() {
            return match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(CliError::caused(format!("cannot remove {}", path.display()), e))
                }
                _ => Ok(()),
            };
        }
        let text = serde_json::to_string_pretty(self).expect("the ledger always serialises") + "\n";
        write_atomically(&path, &text).map_err(CliError::from)
    }

    /// What install last wrote to `path`.
    pub fn get(&self, path: &Path) -> Option<&Written> {
        self.files.get(&key(path))
    }

    /// Records a write of `path`: `before` is the content install found (`None`: no file),
    /// `had_ours` whether it already held our entries, `written` the hash of the new bytes,
    /// `added` the containers this write created. The user's original is kept only while the
    /// file is exactly what we last wrote.
    pub fn record(&mut self, path: &Path, before: Option<&str>, had_ours: bool, written: String, added: Vec<String>) {
        let previous = self.files.remove(&key(path));
        let unchanged_since_ours =
            |w: &Written| before.is_some_and(|t| super::settings_file::sha256_hex(t.as_bytes()) == w.sha256);
        let original = match (&previous, before) {
            // A file with none of ours: the user's own, whatever came before.
            (_, None) if !had_ours => Some(Original::Missing),
            (_, Some(text)) if !had_ours => Some(Original::Bytes { text: text.to_owned() }),
            (Some(w), _) if unchanged_since_ours(w) => w.original.clone(),
            _ => None,
        };
        let created = match &previous {
            Some(w) if had_ours => w.created,
            _ => before.is_none(),
        };
        let mut all_added = match previous {
            Some(w) if had_ours => w.added,
            _ => Vec::new(),
        };
        for container in added {
            if !all_added.contains(&container) {
                all_added.push(container);
            }
        }
        self.files.insert(key(path), Written { sha256: written, created, original, added: all_added });
    }

    /// Makes sure `path` is listed (an install that found our hooks in place and wrote
    /// nothing), so uninstall and the binary's users know of it.
    pub fn note(&mut self, path: &Path, text: Option<&str>) {
        let sha256 = super::settings_file::sha256_hex(text.unwrap_or("").as_bytes());
        self.files.entry(key(path)).or_insert(Written { sha256, created: false, original: None, added: Vec::new() });
    }

    /// Forgets `path` (uninstall is done with it).
    pub fn forget(&mut self, path: &Path) {
        self.files.remove(&key(path));
    }

    /// The settings files install wrote, as recorded.
    pub fn files(&self) -> impl Iterator<Item = PathBuf> + '_ {
        self.files.keys().map(PathBuf::from)
    }

    /// What `--add-to-path` changed so far.
    pub fn path_added(&self) -> Option<&PathAdded> {
        self.path.as_ref()
    }

    /// Adds what one `--add-to-path` changed.
    pub fn add_path(&mut self, more: PathAdded) {
        let record = self.path.get_or_insert_with(PathAdded::default);
        for file in more.created {
            if !record.created.contains(&file) {
                record.created.push(file);
            }
        }
        for file in more.lines {
            if !record.lines.contains(&file) {
                record.lines.push(file);
            }
        }
        record.user_path |= more.user_path;
    }

    /// Forgets what `--add-to-path` changed (uninstall took it out).
    pub fn forget_path(&mut self) {
        self.path = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::install::settings_file::sha256_hex;

    #[test]
    fn the_original_survives_only_while_the_file_is_what_we_wrote() {
        let path = Path::new("/h/.claude/settings.json");
        let mut ledger = Ledger::default();
        let user = "{\"model\":\"opus\"}";
        let first = "{\"model\":\"opus\",\"hooks\":{}}";
        ledger.record(path, Some(user), false, sha256_hex(first.as_bytes()), vec!["hooks".into()]);
        assert_eq!(ledger.get(path).unwrap().original, Some(Original::Bytes { text: user.into() }));
        // A re-install over our own bytes (the status line added): the original stands.
        ledger.record(path, Some(first), true, sha256_hex(b"second"), vec![]);
        assert_eq!(ledger.get(path).unwrap().original, Some(Original::Bytes { text: user.into() }));
        assert_eq!(ledger.get(path).unwrap().added, vec!["hooks".to_owned()]);
        // The user edits, then installs again: the original is gone for good.
        ledger.record(path, Some("edited"), true, sha256_hex(b"third"), vec![]);
        assert_eq!(ledger.get(path).unwrap().original, None);
        ledger.record(path, Some("third"), true, sha256_hex(b"fourth"), vec![]);
        assert_eq!(ledger.get(path).unwrap().original, None, "never comes back");
    }

    #[test]
    fn a_created_file_stays_created_across_installs() {
        let path = Path::new("/h/.gemini/settings.json");
        let mut ledger = Ledger::default();
        ledger.record(path, None, false, sha256_hex(b"ours"), vec!["hooks".into()]);
        let w = ledger.get(path).unwrap();
        assert!(w.created && w.original == Some(Original::Missing));
        ledger.record(path, Some("ours + env"), true, sha256_hex(b"again"), vec!["hooks/X".into()]);
        let w = ledger.get(path).unwrap();
        assert!(w.created && w.original.is_none());
        assert_eq!(w.added, vec!["hooks".to_owned(), "hooks/X".to_owned()]);
    }

    #[test]
    fn a_record_of_an_older_version_reads_without_an_original() {
        let old: Ledger = serde_json::from_str(r#"{"files":{"/h/s.json":{"sha256":"ab","created":true}}}"#).unwrap();
        let w = old.get(Path::new("/h/s.json")).unwrap();
        assert!(w.created && w.original.is_none() && w.added.is_empty());
    }
}
