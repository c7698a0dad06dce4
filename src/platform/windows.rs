//! The Windows side of [`super`]. A file under the user's profile is readable only by that
//! user and the administrators through the profile's inherited ACL, so no ACL is set here
//! (SPEC §10: "ACL-free key files under the user profile").

use std::io::Write;
use std::path::Path;

use super::PrivateFileError;

/// The URL handler: takes the URL as one argument, with no `cmd` parsing `&` or `^` in it.
pub const URL_OPENER: (&str, &[&str]) = ("rundll32", &["url.dll,FileProtocolHandler"]);

pub fn write_private_file(path: &Path, contents: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().create(true).write(true).truncate(true).open(path)?;
    file.write_all(contents.as_bytes())
}

pub fn check_private_file(path: &Path, meta: &std::fs::Metadata) -> Result<(), PrivateFileError> {
    if meta.is_file() { Ok(()) } else { Err(PrivateFileError::Loose { path: path.to_owned(), mode: 0 }) }
}

pub fn create_private_dir_all(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}
