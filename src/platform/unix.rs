//! The Unix side of [`super`]: file modes.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use super::PrivateFileError;

/// The program (and its leading arguments) that opens a URL in the desktop's browser.
#[cfg(target_os = "macos")]
pub const URL_OPENER: (&str, &[&str]) = ("open", &[]);
#[cfg(not(target_os = "macos"))]
pub const URL_OPENER: (&str, &[&str]) = ("xdg-open", &[]);

/// The query for the HTML handler's desktop entry (freedesktop desktops); macOS has none.
#[cfg(target_os = "macos")]
pub const HTML_HANDLER_QUERY: Option<(&str, &[&str])> = None;
#[cfg(not(target_os = "macos"))]
pub const HTML_HANDLER_QUERY: Option<(&str, &[&str])> = Some(("xdg-mime", &["query", "default", "text/html"]));

pub fn write_private_file(path: &Path, contents: &str) -> std::io::Result<()> {
    // A new file beside the old one, created 0600 (`create_new`: never an existing file, whose
    // mode `open` would keep), then renamed over it: the secret is never in a file others may
    // read, not even between a write and a chmod.
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let written = (|| {
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
        file.write_all(contents.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

pub fn open_private_append(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(path)
}

/// The umask this process had before [`restrict_new_files`] set 077, for its children:
/// [`NOT_RESTRICTED`] until then. Written once by `main`'s first call (before any thread that
/// spawns exists), read by every spawn; an atomic because spawns happen on many threads.
static USER_UMASK: AtomicU32 = AtomicU32::new(NOT_RESTRICTED);
const NOT_RESTRICTED: u32 = u32::MAX;

pub fn restrict_new_files() {
    // SAFETY: umask(2) only sets the process's file mode creation mask; it cannot fail.
    let before = unsafe { libc::umask(0o077) };
    // Only the first call records: a second one would read back our own 077. `from`: mode_t
    // is u32 on Linux, u16 on macOS.
    #[allow(clippy::useless_conversion)]
    let _ = USER_UMASK.compare_exchange(NOT_RESTRICTED, u32::from(before), Ordering::SeqCst, Ordering::SeqCst);
}

pub fn user_umask() -> Option<u32> {
    Some(USER_UMASK.load(Ordering::SeqCst)).filter(|m| *m != NOT_RESTRICTED)
}

/// Has the child set the user's own umask before it runs the program.
pub fn give_back_user_umask(command: &mut Command) {
    let Some(mask) = user_umask() else { return };
    // Lossless: the value came from a `mode_t` (u32 on Linux, u16 on macOS).
    #[allow(clippy::unnecessary_cast)]
    let mask = mask as libc::mode_t;
    // SAFETY: the closure runs in the child between fork and exec, where only async-signal-safe
    // calls are allowed: umask(2) is one, and the closure touches nothing but a copied integer.
    unsafe {
        command.pre_exec(move || {
            libc::umask(mask);
            Ok(())
        });
    }
}

/// Removes group and other bits from `path` (not following a symlink); the change, if any.
pub fn tighten(path: &Path, meta: &std::fs::Metadata) -> std::io::Result<Option<(u32, u32)>> {
    let mode = meta.mode() & 0o7777;
    if meta.file_type().is_symlink() || mode & 0o077 == 0 {
        return Ok(None);
    }
    let tight = mode & 0o700;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(tight))?;
    Ok(Some((mode & 0o777, tight)))
}

pub fn is_loose_dir(meta: &std::fs::Metadata) -> bool {
    meta.mode() & 0o077 != 0
}

/// Nothing more than the modes on Unix.
pub fn restrict_dir_acl(_dir: &Path) -> std::io::Result<bool> {
    Ok(false)
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

pub fn run_in_place(command: &mut Command) -> std::io::Error {
    command.exec()
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

// --- ports --------------------------------------------------------------------------------

/// The pid listening on TCP `port`, from `/proc/net/tcp{,6}` (the socket's inode) and the
/// `/proc/<pid>/fd` links that name it. Only processes whose fds we may read are seen: for
/// another user's process (without root) the answer is `None`.
#[cfg(target_os = "linux")]
pub fn port_holder(port: u16) -> Option<u32> {
    let inodes: Vec<String> = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(table).ok())
        .flat_map(|text| listening_inodes(&text, port))
        .collect();
    if inodes.is_empty() {
        return None;
    }
    let links: Vec<String> = inodes.iter().map(|inode| format!("socket:[{inode}]")).collect();
    let holders: Vec<u32> = std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let fds = std::fs::read_dir(entry.path().join("fd")).ok()?;
            fds.flatten()
                .any(|fd| {
                    std::fs::read_link(fd.path()).is_ok_and(|l| links.iter().any(|s| l.as_os_str() == s.as_str()))
                })
                .then_some(pid)
        })
        .collect();
    outermost(&holders, parent_pid)
}

/// Of the processes holding one socket, the one whose parent holds none. A process that
/// forks shares its sockets with the child until the child execs (for good, in a pre-forking
/// server), and `/proc` does not list them in any promised order.
#[cfg(target_os = "linux")]
pub fn outermost(holders: &[u32], parent_of: impl Fn(u32) -> Option<u32>) -> Option<u32> {
    let outer = |pid: &&u32| parent_of(**pid).is_none_or(|parent| !holders.contains(&parent));
    holders.iter().find(outer).or(holders.first()).copied()
}

/// The parent of `pid`, from the fourth field of `/proc/<pid>/stat` (after the command's
/// parenthesised name, which may itself hold spaces and parentheses).
#[cfg(target_os = "linux")]
fn parent_pid(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(not(target_os = "linux"))]
pub fn port_holder(_port: u16) -> Option<u32> {
    None
}

/// The inodes of the sockets in a `/proc/net/tcp` table listening (state 0A) on `port`.
#[cfg(target_os = "linux")]
pub fn listening_inodes(table: &str, port: u16) -> Vec<String> {
    let want = format!(":{port:04X}");
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (local, state, inode) = (fields.get(1)?, fields.get(3)?, fields.get(9)?);
            (local.ends_with(&want) && *state == "0A" && *inode != "0").then(|| (*inode).to_owned())
        })
        .collect()
}

/// The command line of `pid`, for a message (`None` where the OS does not tell).
pub fn process_name(pid: u32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let words: Vec<String> =
        raw.split(|b| *b == 0).filter(|w| !w.is_empty()).map(|w| String::from_utf8_lossy(w).into_owned()).collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// `/etc/localtime` as jiff reads it when it is a link into a zoneinfo directory (the zone's
/// name after `zoneinfo/`, the file's TZif bytes), without jiff's database (`super::
/// local_time_zone`). `None` otherwise.
pub fn local_time_zone() -> Option<jiff::tz::TimeZone> {
    zone_of_link(Path::new("/etc/localtime"))
}

/// The zone a link into a zoneinfo directory names, read from the file it leads to.
fn zone_of_link(link: &Path) -> Option<jiff::tz::TimeZone> {
    let target = std::fs::read_link(link).ok()?;
    let target = target.to_str()?;
    let name = &target[target.rfind("zoneinfo/")? + "zoneinfo/".len()..];
    jiff::tz::TimeZone::tzif(name, &std::fs::read(link).ok()?).ok()
}

#[cfg(test)]
pub fn non_unicode_arg() -> std::ffi::OsString {
    use std::os::unix::ffi::OsStringExt;
    std::ffi::OsString::from_vec(vec![0xff, 0xfe])
}

#[cfg(test)]
mod tests {
    /// A link to Los Angeles' zone file reads as jiff's Los Angeles, offset for offset (summer,
    /// winter, before and after the 2007 rule change); a plain file or a link elsewhere is none.
    #[test]
    fn a_link_into_zoneinfo_reads_as_jiffs_zone_of_that_name() {
        // The OS zone database, as the learner's-day tests need it (`.ci/run` installs tzdata).
        let zone = std::path::Path::new("/usr/share/zoneinfo/America/Los_Angeles");
        let dir = tempfile::tempdir().expect("a temp dir");
        let link = dir.path().join("localtime");
        std::os::unix::fs::symlink(zone, &link).expect("a link");
        let read = super::zone_of_link(&link).expect("the zone");
        let jiffs = jiff::tz::TimeZone::get("America/Los_Angeles").expect("jiff's zone");
        assert_eq!(read.iana_name(), Some("America/Los_Angeles"));
        for seconds in [0_i64, 1_100_000_000, 1_700_000_000, 1_720_000_000, 2_000_000_000] {
            let at = jiff::Timestamp::from_second(seconds).expect("a timestamp");
            assert_eq!(read.to_offset(at), jiffs.to_offset(at), "{at}");
        }
        let copy = dir.path().join("copy");
        std::fs::copy(zone, &copy).expect("a copy");
        assert!(super::zone_of_link(&copy).is_none(), "a plain file: jiff's to read");
    }
}
