//! The Unix side of [`super`]: file modes.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use super::PrivateFileError;

/// The program (and its leading arguments) that opens a URL in the desktop's browser.
#[cfg(target_os = "macos")]
pub const URL_OPENER: (&str, &[&str]) = ("open", &[]);
#[cfg(not(target_os = "macos"))]
pub const URL_OPENER: (&str, &[&str]) = ("xdg-open", &[]);

pub fn write_private_file(path: &Path, contents: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().create(true).write(true).truncate(true).mode(0o600).open(path)?;
    file.write_all(contents.as_bytes())?;
    // An existing file keeps its old mode through `open`; set it explicitly.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

pub fn check_private_file(path: &Path, meta: &std::fs::Metadata) -> Result<(), PrivateFileError> {
    let mode = meta.mode() & 0o777;
    if meta.is_file() && mode & 0o077 == 0 {
        Ok(())
    } else {
        Err(PrivateFileError::Loose { path: path.to_owned(), mode })
    }
}

pub fn create_private_dir_all(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}
