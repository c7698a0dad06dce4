//! Everything that differs between operating systems, behind one small API (DESIGN.md
//! "Platforms", SPEC §10). Callers never name `cfg(unix)`, `std::os::unix` or a Windows API:
//! they call these functions, and `unix.rs` / `windows.rs` hold the two implementations.
//!
//! What lives here today:
//! - files only their owner may read: [`write_private_file`], [`check_private_file`],
//!   [`create_private_dir`] (the user key, the admin token, `config.json`, the data dir);
//! - [`open_in_browser`]: the desktop's own way to open a URL (`vl dashboard`).

use std::path::Path;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as imp;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as imp;

/// A key file others could read or change: refused, with what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum PrivateFileError {
    #[error("cannot read {}: {source}", path.display())]
    Io { path: std::path::PathBuf, source: std::io::Error },
    /// Group or other may read or write it (Unix mode bits), or it is not a regular file.
    #[error(
        "{} is readable by other users of this machine (mode {mode:o}); it holds a secret, so VibeLearn \
         refuses it: run `chmod 600 {}` (or delete it and a new one is made)",
        path.display(),
        path.display()
    )]
    Loose { path: std::path::PathBuf, mode: u32 },
}

/// Writes a file readable only by its owner: created that way (never briefly open to others),
/// and an existing file's permissions tightened too.
pub fn write_private_file(path: &Path, contents: &str) -> std::io::Result<()> {
    imp::write_private_file(path, contents)
}

/// Reads a secret file, refusing one that others may read ([`PrivateFileError::Loose`]).
/// `Ok(None)` when it does not exist.
pub fn read_private_file(path: &Path) -> Result<Option<String>, PrivateFileError> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(PrivateFileError::Io { path: path.to_owned(), source }),
    };
    let io = |source| PrivateFileError::Io { path: path.to_owned(), source };
    let meta = file.metadata().map_err(io)?;
    check_private_file(path, &meta)?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut &file, &mut text).map_err(io)?;
    Ok(Some(text))
}

/// Whether `meta` (of `path`) is a regular file only its owner may read or write.
pub fn check_private_file(path: &Path, meta: &std::fs::Metadata) -> Result<(), PrivateFileError> {
    imp::check_private_file(path, meta)
}

/// Creates `dir` and any missing parents, each owner-only (0700 on Unix) as it is created.
/// An existing directory keeps its mode: it may be a folder the user chose
/// (`VIBELEARN_DATA_DIR`), and the key files inside are owner-only anyway.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    imp::create_private_dir_all(dir)
}

/// Opens `url` in the user's browser with the desktop's opener (`xdg-open`, `open`, or the
/// Windows URL handler), which takes the URL as one argument, never through a shell.
pub fn open_in_browser(url: &str) -> std::io::Result<()> {
    let (program, args) = imp::URL_OPENER;
    let status = std::process::Command::new(program)
        .args(args)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot run {program}: {e}")))?;
    if status.success() { Ok(()) } else { Err(std::io::Error::other(format!("{program} failed ({status})"))) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_file_is_owner_only_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        write_private_file(&path, "secret").unwrap();
        assert_eq!(read_private_file(&path).unwrap().as_deref(), Some("secret"));
        assert!(read_private_file(&dir.path().join("missing")).unwrap().is_none());
    }

    #[cfg(unix)]
    #[test]
    fn a_loose_key_file_is_refused_with_the_fix() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        std::fs::write(&path, "secret").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = read_private_file(&path).unwrap_err().to_string();
        assert!(err.contains("chmod 600") && err.contains("644"), "{err}");
        // Writing it again tightens it.
        write_private_file(&path, "new").unwrap();
        assert_eq!(read_private_file(&path).unwrap().as_deref(), Some("new"));
    }

    #[cfg(unix)]
    #[test]
    fn a_new_data_dir_is_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("a").join("data");
        create_private_dir(&data).unwrap();
        assert_eq!(std::fs::metadata(&data).unwrap().permissions().mode() & 0o777, 0o700);
        create_private_dir(&data).unwrap();
    }
}
