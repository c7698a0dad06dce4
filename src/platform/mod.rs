//! Everything that differs between operating systems, behind one small API (DESIGN.md
//! "Platforms", SPEC §10). Callers never name `cfg(unix)`, `std::os::unix` or a Windows API:
//! they call these functions, and `unix.rs` / `windows.rs` hold the two implementations.
//!
//! What lives here:
//! - files only their owner may read: [`write_private_file`], [`check_private_file`],
//!   [`create_private_dir`] (the user key, the admin token, `config.json`), [`restrict_new_files`]
//!   (umask 077 for the whole process), [`secure_data_dir`] (a loose data dir tightened), and
//!   [`open_private_append`] (the log);
//! - ports: [`port_holder`] (who listens on the worker's port, when it is not our worker);
//! - the user's home: [`HOME_ENV`], [`home_dir`] (`HOME`; `USERPROFILE` on Windows);
//! - processes: [`command`] (every external program the product runs is built here, so it
//!   gets the user's own umask back, not our 077), [`spawn_detached`] (a worker that outlives
//!   the hook and holds none of its handles), [`spawn_tree`] / [`ProcessTree::kill_tree`] (a
//!   command and everything it starts, ended together), [`shell_command`] (`sh -c` /
//!   `cmd /c`), [`request_stop`] (SIGTERM), [`run_in_place`] (`exec`, or a child waited for);
//! - programs on `PATH`: [`find_executable`] (`:` or `;`, and `PATHEXT` on Windows);
//! - [`local_time_zone`]: the system's zone read from its file, without jiff's zone database.
//! - [`open_in_browser`]: the desktop's own way to open a URL (`vl dashboard`), and
//!   [`html_handler`]: which desktop entry opens an HTML file (a snap browser reads no
//!   hidden folder).
//!
//! The single-instance lock needs nothing here: std's `File::try_lock` is `flock` on Unix and
//! `LockFileEx` on Windows, released by the OS when the process dies (`worker::try_lock`).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

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

/// Writes a file readable only by its owner: a new file created that way and renamed over the
/// old one, so the secret is never in a file others may read, not even for a moment.
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
/// An existing directory is left as it is: the data dir itself goes through
/// [`secure_data_dir`], which tightens it.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    imp::create_private_dir_all(dir)
}

/// Makes every file this process creates from now on owner-only: umask 077 on Unix (so
/// SQLite's `-wal`/`-shm`, the logs, the pid and lock files are 0600 and folders 0700 without
/// a chmod after the fact); nothing on Windows, where files inherit their folder's ACL.
/// `main` calls it first, before any thread starts.
///
/// The umask it replaced is kept: it is the user's, and the programs we start (the browser
/// `vl dashboard` opens, the `claude` CLI, `codex app-server`, a worker started by a hook)
/// get it back in the child ([`command`]), so the files *they* make are as the user expects.
pub fn restrict_new_files() {
    imp::restrict_new_files()
}

/// The user's umask that [`restrict_new_files`] replaced (`None` before it ran, and on
/// Windows).
pub fn user_umask() -> Option<u32> {
    imp::user_umask()
}

/// A [`Command`] for an external program: every program the product runs is built here (or
/// by [`shell_command`], or passed to [`spawn_tree`] / [`spawn_detached`], which do the same),
/// so the child starts with the user's own umask instead of this process's 077.
///
/// Why in the child (between fork and exec on Unix) and not around the spawn: the umask is
/// per process, and a window with the user's mask in this process would let another thread's
/// new file (a WAL, a log) be made readable by others. Setting it in the child costs std's
/// `posix_spawn` fast path (it forks instead): measured here, +1.2 ms per spawn from a 1 MB
/// process, +4.5 ms at 50 MB, +10 ms at 200 MB (the page tables fork copies), on spawns that
/// are rare and precede seconds of work (an LLM call, a browser, an install step, a worker).
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut command = Command::new(program);
    imp::give_back_user_umask(&mut command);
    command
}

/// Opens `path` for appending, created owner-only (a log file).
pub fn open_private_append(path: &Path) -> std::io::Result<std::fs::File> {
    imp::open_private_append(path)
}

/// How much of the data dir [`secure_data_dir`] looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The dir and, recursively, everything in it (the worker's start, `vl install`).
    Everything,
    /// The dir's own mode, one `stat`; everything in it only when that is loose (a hook or a
    /// CLI command opening the data dir: the common case costs one system call).
    IfLoose,
}

/// What [`secure_data_dir`] changed: each path with its old and new mode.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tightened {
    pub changed: Vec<(PathBuf, u32, u32)>,
    /// An owner-only ACL was set (Windows, a data dir outside the profile).
    pub acl: bool,
    /// Where the data dir leads, when it is a symlink (what was tightened).
    pub target: Option<PathBuf>,
}

impl Tightened {
    /// The one log line that says what changed, or `None` when nothing did.
    pub fn log_line(&self, dir: &Path) -> Option<String> {
        if self.changed.is_empty() && !self.acl {
            return None;
        }
        let shown: Vec<String> = self
            .changed
            .iter()
            .take(8)
            .map(|(path, old, new)| {
                let name = path.strip_prefix(dir).ok().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
                format!("{} {old:o}->{new:o}", name.display())
            })
            .collect();
        let more = self.changed.len().saturating_sub(shown.len());
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        let acl = if self.acl { "; set an owner-only ACL on it" } else { "" };
        let target = self.target.as_ref().map(|t| format!(" (a link to {})", t.display())).unwrap_or_default();
        Some(format!(
            "made the data dir {}{target} owner-only: {} path(s) were readable by others ({}{more}){acl}",
            dir.display(),
            self.changed.len(),
            shown.join(", ")
        ))
    }
}

/// Creates the data dir owner-only, or tightens an existing one: the dir 0700 and every file
/// and folder in it without group or other bits (0600 / 0700). A data dir that is itself a
/// symlink (a dotfiles setup, a folder on another disk) is followed: its target is what
/// holds the files, so its target is tightened; symlinks *inside* it are not followed. On
/// Windows, a data dir outside the user's profile (`home`), wherever its link leads, gets an
/// owner-only ACL, inherited by what is in it; inside the profile its ACL already is.
///
/// Files named in `secrets` are left as they are: a secret others could read may have been
/// read, so it is refused where it is read ([`read_private_file`]), with the fix, not quietly
/// made private.
pub fn secure_data_dir(dir: &Path, home: Option<&Path>, scope: Scope, secrets: &[&str]) -> std::io::Result<Tightened> {
    let mut done = Tightened::default();
    // `metadata`, not `symlink_metadata`: the mode of a link is always 0777 and changes
    // nothing; the target's is the one that keeps others out.
    let meta = match std::fs::metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            imp::create_private_dir_all(dir)?;
            std::fs::metadata(dir)?
        }
        Err(e) => return Err(e),
    };
    // The common case of a hook or a CLI write: one `stat`, nothing to do.
    if scope == Scope::IfLoose && !imp::is_loose_dir(&meta) {
        return Ok(done);
    }
    let linked = std::fs::symlink_metadata(dir)?.file_type().is_symlink();
    let resolved = if linked { std::fs::canonicalize(dir)? } else { dir.to_owned() };
    if linked {
        done.target = Some(resolved.clone());
    }
    if scope == Scope::Everything && outside(&resolved, home) {
        done.acl = imp::restrict_dir_acl(&resolved)?;
    }
    let skip: Vec<PathBuf> = secrets.iter().map(|name| dir.join(name)).collect();
    tighten_tree(dir, &meta, &skip, &mut done.changed)?;
    Ok(done)
}

/// Whether the (resolved) data dir lies outside the user's profile, compared with the profile
/// resolved the same way (so a link on either side does not decide it).
fn outside(resolved: &Path, home: Option<&Path>) -> bool {
    let Some(home) = home else { return true };
    if resolved.starts_with(home) {
        return false;
    }
    std::fs::canonicalize(home).map_or(true, |home| !resolved.starts_with(home))
}

/// Takes group and other bits off one existing file (not following a symlink): its old and
/// new mode when it changed anything, `None` when it was already owner-only or is not there.
/// The database's opener calls it on the database and its `-wal`/`-shm` before SQLite opens
/// them: SQLite gives a new WAL and SHM the database's own mode whatever the umask, so a
/// 0644 database left by a restored backup would otherwise make its WAL 0644 too.
pub fn make_file_private(path: &Path) -> std::io::Result<Option<(u32, u32)>> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => imp::tighten(path, &meta),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// [`imp::tighten`] on `path` and, for a folder, on everything below it.
fn tighten_tree(
    path: &Path,
    meta: &std::fs::Metadata,
    skip: &[PathBuf],
    changed: &mut Vec<(PathBuf, u32, u32)>,
) -> std::io::Result<()> {
    if skip.iter().any(|s| s == path) {
        return Ok(());
    }
    if let Some((old, new)) = imp::tighten(path, meta)? {
        changed.push((path.to_owned(), old, new));
    }
    if meta.is_dir() {
        for entry in std::fs::read_dir(path)? {
            let entry = entry?;
            // A file removed meanwhile (a hook's stamp, a rotated log) is no longer ours to fix.
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else { continue };
            tighten_tree(&entry.path(), &meta, skip, changed)?;
        }
    }
    Ok(())
}

/// Which process listens on TCP `port`, where the OS tells it (Linux: `/proc`, for the
/// processes we may inspect): its pid and program name.
pub fn port_holder(port: u16) -> Option<(u32, Option<String>)> {
    let pid = imp::port_holder(port)?;
    let name = imp::process_name(pid)
        .and_then(|line| line.split_whitespace().next().map(str::to_owned))
        .map(|program| Path::new(&program).file_name().map_or(program.clone(), |n| n.to_string_lossy().into_owned()));
    Some((pid, name))
}

/// Opens `url` in the user's browser with the desktop's opener (`xdg-open`, `open`, or the
/// Windows URL handler), which takes the URL as one argument, never through a shell.
pub fn open_in_browser(url: &str) -> std::io::Result<()> {
    let (program, args) = imp::URL_OPENER;
    let status = command(program)
        .args(args)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot run {program}: {e}")))?;
    if status.success() { Ok(()) } else { Err(std::io::Error::other(format!("{program} failed ({status})"))) }
}

/// The desktop entry that opens HTML files for this user (`firefox_firefox.desktop`), where
/// the desktop keeps one the same way for every user: `xdg-mime query default text/html` on
/// Linux and the BSDs, given [`HANDLER_QUERY_TIMEOUT`]. `None` on macOS and Windows, and when
/// the query is missing, fails, or says nothing. `vl dashboard` asks, because a snap-packaged
/// browser cannot read a file in a hidden folder of the home dir.
pub fn html_handler() -> Option<String> {
    let (program, args) = imp::HTML_HANDLER_QUERY?;
    let mut query = command(program);
    query.args(args).stdin(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    let out = stdout_within(&mut query, HANDLER_QUERY_TIMEOUT)?;
    let entry = out.lines().next()?.trim();
    (!entry.is_empty()).then(|| entry.to_owned())
}

/// How long [`html_handler`]'s query may take (`xdg-mime` is a shell script reading a few
/// files: tens of milliseconds) before it is killed and the answer taken as unknown.
pub const HANDLER_QUERY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// A command's stdout (its first 4 KiB) when it succeeds within `timeout`; killed and `None`
/// past it, or when it cannot start or fails.
fn stdout_within(command: &mut Command, timeout: std::time::Duration) -> Option<String> {
    use std::io::Read;
    let mut child = command.stdout(std::process::Stdio::piped()).spawn().ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = (&mut stdout).take(4096).read_to_string(&mut text);
        text
    });
    let deadline = std::time::Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(std::time::Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let text = reader.join().ok()?;
    status.success().then_some(text)
}

/// The environment variable naming the user's home folder: `HOME`, or `USERPROFILE` on
/// Windows (where `HOME` is usually unset, and set by Git Bash only inside its own shells).
pub const HOME_ENV: &str = imp::HOME_ENV;

/// The user's home folder from an environment lookup: [`HOME_ENV`], then (on Windows) `HOME`.
/// `None` when neither is set or it is empty.
pub fn home_dir(get: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    imp::HOME_FALLBACKS.iter().find_map(|name| get(name).filter(|v| !v.is_empty())).map(PathBuf::from)
}

/// The system's time zone as its own file says it, where that can be read without jiff's
/// database of every zone name: on Unix the TZif file `/etc/localtime`, named by its link into a
/// zoneinfo directory, which is what `jiff::tz::TimeZone::system()` finds there when `TZ` is
/// unset; but jiff first builds that database by walking `/usr/share/zoneinfo` (~3.4 M
/// instructions, a fifth of a statusline at 1,000 sessions: docs/PERFORMANCE.md). `None` where
/// the file is not a link into a zoneinfo directory, or on Windows: the caller asks jiff.
pub fn local_time_zone() -> Option<jiff::tz::TimeZone> {
    imp::local_time_zone()
}

/// Starts `command` so that it outlives this process, its terminal or console, and an IDE
/// waiting for this process's output: its own process group (Unix), or a detached process in
/// a new process group that inherits none of our handles (Windows, where an inherited stdout
/// would keep the IDE's pipe open for as long as the worker lives). Set the child's stdio
/// before calling (null or a file).
pub fn spawn_detached(command: &mut Command) -> std::io::Result<Child> {
    imp::give_back_user_umask(command);
    imp::spawn_detached(command)
}

/// Runs `command` in this process's place, with its exit code ours, and returns only the error
/// that kept it from starting. Unix: `exec(2)`, so the program keeps our pid (a worker's pid
/// file, a supervisor's signals, the shell's job control see one process). Windows has no
/// exec: the program runs as a child with our console and handles, waited for, and we exit
/// with its code; Ctrl-C, which the console sends to both, is left to the child, which
/// decides how to stop, and we report how it ended.
pub fn run_in_place(command: &mut Command) -> std::io::Error {
    imp::run_in_place(command)
}

/// A child started with [`spawn_tree`], and with it every process it starts.
pub struct ProcessTree {
    pub child: Child,
    group: imp::Group,
}

/// Starts `command` in a group of its own (a process group on Unix, a Job Object on Windows,
/// assigned before the child runs a single instruction), so [`ProcessTree::kill_tree`] ends a
/// pipeline or a script's children too, not just the first process.
pub fn spawn_tree(command: &mut Command) -> std::io::Result<ProcessTree> {
    imp::give_back_user_umask(command);
    let (child, group) = imp::spawn_tree(command)?;
    Ok(ProcessTree { child, group })
}

impl ProcessTree {
    /// Kills the child and everything it started, then reaps the child.
    pub fn kill_tree(&mut self) {
        self.group.kill(&mut self.child);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A command that runs `line` through the system shell: `sh -c` on Unix; on Windows
/// `cmd.exe /d /s /c`, with the line passed verbatim (cmd has its own quoting rules, so the
/// line is the user's, unescaped).
pub fn shell_command(line: &str) -> Command {
    let mut command = imp::shell_command(line);
    imp::give_back_user_umask(&mut command);
    command
}

/// Whether a shell's exit code means "no such command" or "not executable" (126/127 from
/// `sh`, 9009 from `cmd`): no retry can fix that.
pub fn shell_could_not_run(code: i32) -> bool {
    imp::SHELL_NOT_FOUND.contains(&code)
}

/// A program's path as the first word of a command line that the shells an IDE may run hooks
/// through all read the same way (SPEC §10). Unix: as it is, single-quoted for `sh` when it
/// holds anything but safe characters. Windows (bash from Git, PowerShell, cmd): forward
/// slashes, which all three accept, and when the path has a space PowerShell's call operator
/// (`& 'C:/Users/Ann Lee/…/vl.exe'`), the form Claude Code and Cursor use there without Git
/// Bash.
pub fn shell_program(path: &Path) -> String {
    imp::shell_program(&path.to_string_lossy())
}

/// Asks a child to stop gracefully (SIGTERM). Windows has no such signal for a process
/// without a console: `Unsupported` there, and the caller uses the worker's admin route.
pub fn request_stop(child: &Child) -> std::io::Result<()> {
    imp::request_stop(child)
}

/// The first runnable file named `name` in a `PATH`-style list (`:`-separated, or `;` on
/// Windows, where each `PATHEXT` extension is tried too: `claude.exe`, `claude.cmd`). Empty
/// entries, which some shells read as the current directory, are skipped: the worker's cwd is
/// not a place to run programs from.
pub fn find_executable(path_var: &str, name: &str) -> Option<PathBuf> {
    let pathext = std::env::var("PATHEXT").ok();
    std::env::split_paths(path_var)
        .filter(|dir| !dir.as_os_str().is_empty())
        .flat_map(|dir| imp::executable_names(name, pathext.as_deref()).into_iter().map(move |n| dir.join(n)))
        .find(|candidate| candidate.metadata().is_ok_and(|m| imp::is_executable(&m)))
}

/// The variables a child process needs to work at all when its environment is otherwise
/// cleared (`env_clear`): `PATH`, and on Windows the system folder (without `SYSTEMROOT`,
/// Winsock cannot start), the temp folder and the shell.
pub const ESSENTIAL_ENV: &[&str] = imp::ESSENTIAL_ENV;

/// Sets a file's Unix permission bits, for tests that make a key file too open; Windows has no
/// such bits, so this does nothing there.
pub fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    imp::set_mode(path, mode)
}

/// Marks a file runnable (mode 0755) or not (0644), for tests that put a program on `PATH`.
/// On Windows the extension decides (`PATHEXT`), so this does nothing there.
pub fn set_executable(path: &Path, executable: bool) -> std::io::Result<()> {
    imp::set_executable(path, executable)
}

/// The command a user types to end process `pid` (`kill 123`, `taskkill /PID 123`), for a
/// message that cannot suggest a `vl` command.
pub fn stop_process_command(pid: u64) -> String {
    imp::stop_process_command(pid)
}

/// Whether this OS's file systems take `C:\Work` and `c:\work` for one directory: Windows
/// (NTFS) and macOS (APFS and HFS+ by default) do, Linux does not. Project directories and
/// excluded-project patterns are compared accordingly (`learning::in_project_dir!`,
/// `policy::exclude`). SQL text is built at compile time, so `learning::path_collation!` states
/// the same `cfg` again; `learning`'s tests keep the two in step.
pub const PATHS_IGNORE_CASE: bool = cfg!(any(windows, target_os = "macos"));

/// Whether the OS keeps a per-user PATH of its own (Windows: `HKCU\Environment\Path`), which
/// `vl install --add-to-path` edits instead of shell profile files.
pub const HAS_USER_PATH: bool = imp::HAS_USER_PATH;

/// Adds `dir` to (or with `add` false, removes it from) the user's PATH store where the OS
/// has one ([`HAS_USER_PATH`]); says whether it changed anything. New processes see it.
pub fn user_path(dir: &Path, add: bool) -> std::io::Result<bool> {
    imp::user_path(dir, add)
}

/// Makes `link` a symlink to the file `target` (tests of a settings file kept in a dotfiles
/// folder). Windows allows it only with Developer Mode or as an administrator; the error says so.
pub fn symlink_file(target: &Path, link: &Path) -> std::io::Result<()> {
    imp::symlink_file(target, link)
}

/// A command-line word that is not Unicode, as this OS spells one (bytes that are not UTF-8
/// on Unix, an unpaired surrogate on Windows): for tests of argument parsing.
#[cfg(test)]
pub fn non_unicode_arg() -> std::ffi::OsString {
    imp::non_unicode_arg()
}

#[cfg(test)]
mod tests {
    /// The zone read from `/etc/localtime`'s file is jiff's own finding, offset for offset, on
    /// a machine where it is a link into a zoneinfo directory (Debian's, macOS's) and `TZ` is
    /// unset; elsewhere (Windows, a copied file) there is nothing to compare.
    #[test]
    fn the_local_time_zone_from_its_file_is_jiffs_system_zone() {
        #[allow(clippy::disallowed_methods)]
        let tz_set = std::env::var_os("TZ").is_some();
        let Some(read) = super::local_time_zone() else { return };
        if tz_set {
            return;
        }
        let system = jiff::tz::TimeZone::system();
        assert_eq!(read.iana_name(), system.iana_name());
        for seconds in [0_i64, 1_000_000_000, 1_700_000_000, 1_720_000_000, 2_000_000_000] {
            let at = jiff::Timestamp::from_second(seconds).expect("a timestamp");
            assert_eq!(read.to_offset(at), system.to_offset(at), "{at}");
        }
    }

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

    #[cfg(unix)]
    #[test]
    fn a_loose_data_dir_is_tightened_except_its_secrets_which_are_refused_instead() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("data");
        std::fs::create_dir_all(data.join("logs")).unwrap();
        for (name, mode) in [("vibelearn.db", 0o644), ("logs/vibelearn.log.1", 0o644), ("worker.key", 0o644)] {
            std::fs::write(data.join(name), "x").unwrap();
            set_mode(&data.join(name), mode).unwrap();
        }
        set_mode(&data, 0o755).unwrap();
        let mode = |p: &str| std::fs::metadata(data.join(p)).unwrap().permissions().mode() & 0o777;
        // One stat, and nothing done, when the dir itself is tight.
        set_mode(&data, 0o700).unwrap();
        assert!(secure_data_dir(&data, None, Scope::IfLoose, &[]).unwrap().changed.is_empty());
        set_mode(&data, 0o755).unwrap();
        let done = secure_data_dir(&data, None, Scope::IfLoose, &["worker.key"]).unwrap();
        assert_eq!((mode(""), mode("vibelearn.db"), mode("logs/vibelearn.log.1")), (0o700, 0o600, 0o600));
        assert_eq!(mode("worker.key"), 0o644, "a loose secret is left to be refused");
        let line = done.log_line(&data).unwrap();
        assert!(line.contains("4 path(s)") && line.contains(". 755->700"), "{line}");
        assert!(secure_data_dir(&data, None, Scope::Everything, &["worker.key"]).unwrap().log_line(&data).is_none());
        let fresh = root.path().join("new");
        secure_data_dir(&fresh, None, Scope::IfLoose, &[]).unwrap();
        assert_eq!(std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777, 0o700);
    }

    #[cfg(unix)]
    #[test]
    fn a_data_dir_that_is_a_symlink_is_tightened_at_its_target_and_links_inside_are_not_followed() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let (target, link, outside) = (root.path().join("target"), root.path().join("link"), root.path().join("o"));
        std::fs::create_dir_all(&target).unwrap();
        std::fs::write(&outside, "not ours").unwrap();
        std::fs::write(target.join("vibelearn.db"), "x").unwrap();
        set_mode(&target.join("vibelearn.db"), 0o644).unwrap();
        set_mode(&outside, 0o644).unwrap();
        set_mode(&target, 0o755).unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        std::os::unix::fs::symlink(&outside, target.join("elsewhere")).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        // A hook's check: one stat of the target, which is loose, so it is tightened.
        let done = secure_data_dir(&link, None, Scope::IfLoose, &[]).unwrap();
        assert_eq!((mode(&target), mode(&target.join("vibelearn.db"))), (0o700, 0o600));
        assert_eq!(mode(&outside), 0o644, "a link inside the data dir is not followed");
        assert_eq!(done.target.as_deref(), Some(std::fs::canonicalize(&target).unwrap().as_path()));
        let line = done.log_line(&link).unwrap();
        assert!(line.contains("(a link to ") && line.contains(". 755->700") && line.contains("vibelearn.db 644->600"));
        assert!(secure_data_dir(&link, None, Scope::Everything, &[]).unwrap().log_line(&link).is_none());
    }

    #[cfg(unix)]
    #[test]
    fn a_loose_file_is_made_private_and_a_missing_one_or_a_link_is_left() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("vibelearn.db");
        std::fs::write(&file, "x").unwrap();
        set_mode(&file, 0o644).unwrap();
        assert_eq!(make_file_private(&file).unwrap(), Some((0o644, 0o600)));
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(make_file_private(&file).unwrap(), None);
        assert_eq!(make_file_private(&root.path().join("vibelearn.db-wal")).unwrap(), None);
        let other = root.path().join("other");
        std::fs::write(&other, "x").unwrap();
        set_mode(&other, 0o644).unwrap();
        std::os::unix::fs::symlink(&other, root.path().join("link")).unwrap();
        assert_eq!(make_file_private(&root.path().join("link")).unwrap(), None);
        assert_eq!(std::fs::metadata(&other).unwrap().permissions().mode() & 0o777, 0o644);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_holder_of_a_port_is_found_in_proc() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (pid, name) = port_holder(port).expect("this process holds it");
        assert_eq!(pid, std::process::id());
        assert!(name.is_some());
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:9392 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12345 1\n";
        assert_eq!(imp::listening_inodes(table, 0x9392), ["12345"]);
        assert!(imp::listening_inodes(table, 0x9393).is_empty());
    }

    /// A child that holds the listener too (as one forked and not yet exec'd does, or one
    /// given the socket on purpose) is not named: the parent that holds it is.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_holding_the_listener_too_does_not_hide_its_parent() {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let fd = listener.as_raw_fd();
        let mut command = std::process::Command::new("sleep");
        command.arg("30");
        // SAFETY: dup2(2) is async-signal-safe; the copy on fd 100 does not close on exec.
        unsafe {
            command.pre_exec(move || {
                if libc::dup2(fd, 100) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command.spawn().unwrap();
        let child_holds = || {
            std::fs::read_dir(format!("/proc/{}/fd", child.id()))
                .map(|fds| {
                    fds.flatten().any(|fd| {
                        std::fs::read_link(fd.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
                    })
                })
                .unwrap_or(false)
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !child_holds() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(child_holds(), "the child holds the socket");
        let holder = port_holder(port).map(|(pid, _)| pid);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(holder, Some(std::process::id()));
        // Listed child first, as /proc may: still the parent; a cycle (pids reused) names one.
        let parents = |pid| [(7, 1), (9, 7), (3, 9)].into_iter().find(|(child, _)| *child == pid).map(|(_, p)| p);
        assert_eq!(imp::outermost(&[9, 7], parents), Some(7));
        assert_eq!(imp::outermost(&[3, 9, 7], parents), Some(7));
        assert_eq!(imp::outermost(&[], parents), None);
        assert_eq!(imp::outermost(&[5, 6], |pid| Some(11 - pid)), Some(5));
    }

    /// A shell line that never ends by itself, and one that prints `hello` and its marker
    /// variable, in this OS's shell.
    #[cfg(unix)]
    const HANG: &str = "sleep 30";
    #[cfg(windows)]
    const HANG: &str = "for /l %i in (0,0,1) do rem";
    #[cfg(unix)]
    const ECHO: &str = "echo hello $VL_MARK";
    #[cfg(windows)]
    const ECHO: &str = "echo hello %VL_MARK%";

    #[test]
    fn the_shell_runs_a_line_and_reports_a_missing_command() {
        let out = shell_command(ECHO).env("VL_MARK", "there").output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "hello there");
        let missing = shell_command("vl-no-such-command-anywhere").output().unwrap();
        let code = missing.status.code().unwrap();
        assert!(shell_could_not_run(code), "exit {code}");
    }

    #[test]
    fn kill_tree_ends_a_hung_command_at_once() {
        let mut command = shell_command(HANG);
        command.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null());
        let mut tree = spawn_tree(&mut command).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(tree.child.try_wait().unwrap().is_none(), "still running before the kill");
        let started = std::time::Instant::now();
        tree.kill_tree();
        assert!(tree.child.try_wait().unwrap().is_some(), "reaped");
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "took {:?}", started.elapsed());
    }

    #[test]
    fn a_spawned_tree_runs_to_its_end_with_its_stdio() {
        let mut command = shell_command(ECHO);
        command.env("VL_MARK", "tree").stdout(std::process::Stdio::piped());
        let tree = spawn_tree(&mut command).unwrap();
        let out = tree.child.wait_with_output().unwrap();
        assert!(out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "hello tree");
    }

    #[test]
    fn find_executable_splits_path_and_tries_pathext() {
        let dir = tempfile::tempdir().unwrap();
        let name = if cfg!(windows) { "claude.cmd" } else { "claude" };
        let program = dir.path().join(name);
        std::fs::write(&program, "").unwrap();
        set_executable(&program, true).unwrap();
        let path_var = std::env::join_paths([Path::new("/nonexistent-vl-dir"), Path::new(""), dir.path()]).unwrap();
        let found = find_executable(path_var.to_str().unwrap(), "claude").expect("found on the third entry");
        assert_eq!(found.file_name().unwrap().to_string_lossy().to_lowercase(), name);
        assert_eq!(find_executable(path_var.to_str().unwrap(), "vl-not-there"), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_file_without_the_execute_bit_is_not_a_program() {
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("claude");
        std::fs::write(&program, "").unwrap();
        set_executable(&program, false).unwrap();
        assert_eq!(find_executable(dir.path().to_str().unwrap(), "claude"), None);
    }

    #[cfg(windows)]
    #[test]
    fn pathext_names_come_in_order_and_a_full_name_is_kept() {
        assert_eq!(imp::executable_names("claude", Some(".EXE;.CMD")), ["claude.exe", "claude.cmd"]);
        assert_eq!(imp::executable_names("claude.CMD", Some(".EXE;.CMD")), ["claude.CMD"]);
        assert_eq!(imp::executable_names("claude", None).len(), 4);
    }

    #[test]
    fn home_comes_from_the_os_variable() {
        let env = |name: &str| (name == HOME_ENV).then(|| "/the/home".to_owned());
        assert_eq!(home_dir(env), Some(PathBuf::from("/the/home")));
        assert_eq!(home_dir(|_| Some(String::new())), None);
    }
}
