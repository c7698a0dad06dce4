//! Private turns (SPEC §3.3): a session is private from a prompt that is entirely private until
//! the next prompt that is not, and nothing of it is recorded meanwhile — its tool calls, its
//! edits, and its last word (the Stop hook's `last_assistant_message`, the transcript's last
//! message, and the same fields of every agent). One marker file per session in the data dir,
//! so every hook process and the worker see it before they write anything.
//!
//! # Naming
//! A marker is named by the SHA-256 of the session id, as hex: 64 characters whatever the id
//! (the IDE chooses it; a name made of the whole id failed past ~127 bytes with ENAMETOOLONG,
//! and that private turn was recorded). Versions before that named it by the hex of the id's
//! bytes; such a marker, left by a private turn open across an upgrade, still counts, and the
//! next prompt that is not private removes it with the new one.
//!
//! # Failing closed
//! Every doubt counts as private. A marker that cannot be written leaves the prompt unrecorded
//! and is logged as an error; a marker dir that is not a dir, or that is read-only (so no
//! marker could have been written there), or whose entries cannot be checked, makes every turn
//! private ([`Privacy::Unknown`]); a marker that cannot be removed keeps its turn private.
//! Known limit: a marker that cannot be created in a dir that looks writable (a full disk).
//!
//! # Cost
//! A hook of a session with no private dir at all (most users) pays two `stat`s; with a private
//! dir, three (the legacy name only when the id is short enough to have had one).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::privacy::is_entirely_private;

/// Longest file name the old naming could have made (most file systems allow 255 bytes).
const MAX_NAME_BYTES: usize = 255;

/// Whether a session is in a private turn, as far as the markers tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Privacy {
    /// No marker, in a marker dir that could have held one (or no dir yet).
    Public,
    /// The session's marker is there.
    Private,
    /// The markers cannot be checked, or could not have been written: treated as private.
    /// The reason names the failure, never anything of the turn.
    Unknown(String),
}

/// The markers of one data dir (`<data>/private`).
pub struct PrivateTurns<'a> {
    dir: &'a Path,
}

impl<'a> PrivateTurns<'a> {
    pub fn new(dir: &'a Path) -> PrivateTurns<'a> {
        PrivateTurns { dir }
    }

    /// `<dir>/<sha256(session id) as hex>`.
    pub fn marker(&self, session_id: &str) -> PathBuf {
        use sha2::Digest;
        self.dir.join(hex::encode(sha2::Sha256::digest(session_id.as_bytes())))
    }

    /// The marker an older version wrote, `<dir>/<hex of the id's bytes>`, when the id is short
    /// enough for that name to exist.
    pub fn legacy_marker(&self, session_id: &str) -> Option<PathBuf> {
        (session_id.len() * 2 <= MAX_NAME_BYTES).then(|| self.dir.join(hex::encode(session_id.as_bytes())))
    }

    /// A prompt opens a turn: private (and marked so) when the prompt is entirely private,
    /// else the markers go. Returns whether the turn is private: also when the marker of a
    /// private turn could not be removed.
    pub fn open_turn(&self, session_id: &str, prompt: &str) -> bool {
        let private = is_entirely_private(prompt);
        self.set(session_id, private) || private
    }

    /// Whether the session is in a private turn, failing closed; an undecidable case is logged
    /// (without anything of the turn).
    pub fn is_private(&self, session_id: &str) -> bool {
        match self.privacy(session_id) {
            Privacy::Public => false,
            Privacy::Private => true,
            Privacy::Unknown(why) => {
                log::error!(target: "intake", "cannot tell whether a turn is private ({why}); recording nothing of it");
                true
            }
        }
    }

    /// What the markers say of the session's turn.
    pub fn privacy(&self, session_id: &str) -> Privacy {
        match present(&self.marker(session_id)) {
            Ok(true) => return Privacy::Private,
            Ok(false) => {}
            Err(e) => return Privacy::Unknown(e.to_string()),
        }
        // No marker: in a marker dir that is a usable dir (or none yet). Windows says "not
        // found" also when the dir is a file (Unix says ENOTDIR), so the dir is checked too.
        match std::fs::metadata(self.dir) {
            Err(e) if e.kind() == ErrorKind::NotFound => return Privacy::Public,
            Err(e) => return Privacy::Unknown(e.to_string()),
            Ok(meta) if !meta.is_dir() => return Privacy::Unknown("the marker dir is not a dir".into()),
            Ok(meta) if meta.permissions().readonly() => {
                return Privacy::Unknown("the marker dir is read-only, so no marker can be written".into());
            }
            Ok(_) => {}
        }
        match self.legacy_marker(session_id).map(|old| present(&old)) {
            Some(Ok(true)) => Privacy::Private,
            Some(Err(e)) => Privacy::Unknown(e.to_string()),
            Some(Ok(false)) | None => Privacy::Public,
        }
    }

    /// Marks the session's turn private, or ends a private turn (both namings). Returns whether
    /// the turn is still private afterwards because a marker could not be removed.
    pub fn set(&self, session_id: &str, private: bool) -> bool {
        let marker = self.marker(session_id);
        if private {
            let written = crate::platform::create_private_dir(self.dir)
                .and_then(|()| std::fs::OpenOptions::new().create(true).truncate(true).write(true).open(&marker));
            if let Err(e) = written {
                // The prompt itself is not recorded either way; the turn's tool calls are kept
                // out by `privacy` failing closed where the error persists (an unusable dir).
                log::error!(target: "intake", "cannot mark a private turn ({e}); this prompt is not recorded");
            }
            return false;
        }
        let mut stuck = false;
        for path in std::iter::once(marker).chain(self.legacy_marker(session_id)) {
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => {
                    log::error!(target: "intake", "cannot end a private turn ({e}); it stays private");
                    stuck = true;
                }
            }
        }
        stuck
    }
}

/// Whether a marker exists (a dangling symlink counts); an error when that cannot be told.
fn present(path: &Path) -> std::io::Result<bool> {
    match std::fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_prompt_marks_the_turn_and_the_next_public_one_ends_it() {
        let dir = tempfile::tempdir().unwrap();
        let markers = dir.path().join("private");
        let turns = PrivateTurns::new(&markers);
        assert_eq!(turns.privacy("s"), Privacy::Public, "no marker dir yet");
        assert!(turns.open_turn("s", "<private>my salary is 1</private>"));
        assert_eq!(turns.privacy("s"), Privacy::Private);
        assert_eq!(turns.privacy("other"), Privacy::Public);
        assert!(!turns.open_turn("s", "public"));
        assert_eq!(turns.privacy("s"), Privacy::Public);
    }

    #[test]
    fn a_marker_of_the_old_naming_is_honoured_and_removed_by_the_next_public_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let markers = dir.path().join("private");
        std::fs::create_dir(&markers).unwrap();
        // What a version before the digests left: the hex of the id's bytes.
        std::fs::write(markers.join("73657373696f6e2d31"), "").unwrap();
        let turns = PrivateTurns::new(&markers);
        assert_eq!(turns.legacy_marker("session-1"), Some(markers.join("73657373696f6e2d31")));
        assert_eq!(turns.privacy("session-1"), Privacy::Private);
        assert!(!turns.open_turn("session-1", "public again"));
        assert_eq!(turns.privacy("session-1"), Privacy::Public);
        assert!(std::fs::read_dir(&markers).unwrap().next().is_none(), "both names are gone");
        // An id too long for the old naming never had such a marker, and is not looked for
        // (the lookup would fail with ENAMETOOLONG and make every turn private).
        assert_eq!(turns.legacy_marker(&"x".repeat(200)), None);
        assert_eq!(turns.privacy(&"x".repeat(200)), Privacy::Public);
    }

    #[test]
    fn a_marker_dir_that_cannot_hold_a_marker_makes_every_turn_private() {
        let dir = tempfile::tempdir().unwrap();
        let markers = dir.path().join("private");
        std::fs::write(&markers, "").unwrap();
        let turns = PrivateTurns::new(&markers);
        assert!(matches!(turns.privacy("s"), Privacy::Unknown(_)), "a file where the dir goes");
        assert!(turns.is_private("s"));
        std::fs::remove_file(&markers).unwrap();
        if std::env::consts::OS == "windows" {
            // Windows keeps a folder's read-only attribute for Explorer and lets files be
            // created in it anyway: there is no read-only marker dir to detect.
            return;
        }
        std::fs::create_dir(&markers).unwrap();
        let mut read_only = std::fs::metadata(&markers).unwrap().permissions();
        read_only.set_readonly(true);
        std::fs::set_permissions(&markers, read_only).unwrap();
        let why = turns.privacy("s");
        let mut writable = std::fs::metadata(&markers).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)] // the test's own temp dir, given back
        writable.set_readonly(false);
        std::fs::set_permissions(&markers, writable).unwrap();
        assert!(matches!(why, Privacy::Unknown(ref w) if w.contains("read-only")), "{why:?}");
    }
}
