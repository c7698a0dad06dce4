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

// --- home -------------------------------------------------------------------------------

pub const HOME_ENV: &str = "HOME";
pub const HOME_FALLBACKS: &[&str] = &["HOME"];
pub const ESSENTIAL_ENV: &[&str] = &["PATH"];

// --- processes ----------------------------------------------------------------------------

use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

pub fn spawn_detached(command: &mut Command) -> std::io::Result<Child> {
    // A group of its own: the terminal's Ctrl-C and a hangup of the IDE's group pass it by.
    // std opens every descriptor close-on-exec, so the child holds only the stdio it is given.
    command.process_group(0).spawn()
}

/// The child's process group (its pgid is its pid, from `process_group(0)`).
pub struct Group;

pub fn spawn_tree(command: &mut Command) -> std::io::Result<(Child, Group)> {
    Ok((command.process_group(0).spawn()?, Group))
}

impl Group {
    /// SIGKILLs the whole group. The group id cannot have been reused: Linux and macOS do not
    /// recycle an id while a process group of that id has members (the unreaped child is one),
    /// and with no members the kill simply fails.
    pub fn kill(&mut self, child: &mut Child) {
        if let Ok(pid) = libc::pid_t::try_from(child.id()) {
            // SAFETY: kill(2) takes plain integers and touches no memory of ours.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
    }
}

pub fn shell_command(line: &str) -> Command {
    let mut command = Command::new("sh");
    command.arg("-c").arg(line);
    command
}

pub fn shell_program(raw: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+@%:,=".contains(c);
    if !raw.is_empty() && raw.chars().all(safe) { raw.to_owned() } else { format!("'{}'", raw.replace('\'', r"'\''")) }
}

pub const SHELL_NOT_FOUND: &[i32] = &[126, 127];

pub fn request_stop(child: &Child) -> std::io::Result<()> {
    let pid = libc::pid_t::try_from(child.id()).map_err(std::io::Error::other)?;
    // SAFETY: as above.
    match unsafe { libc::kill(pid, libc::SIGTERM) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

// --- PATH ---------------------------------------------------------------------------------

pub fn executable_names(name: &str, _pathext: Option<&str>) -> Vec<String> {
    vec![name.to_owned()]
}

pub fn is_executable(meta: &std::fs::Metadata) -> bool {
    meta.is_file() && meta.permissions().mode() & 0o111 != 0
}

pub fn set_executable(path: &Path, executable: bool) -> std::io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(if executable { 0o755 } else { 0o644 }))
}

pub fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

pub fn symlink_file(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

pub fn stop_process_command(pid: u64) -> String {
    format!("kill {pid}")
}

pub const HAS_USER_PATH: bool = false;

pub fn user_path(_dir: &Path, _add: bool) -> std::io::Result<bool> {
    Ok(false)
}
