//! The Windows side of [`super`]. A file under the user's profile is readable only by that
//! user and the administrators through the profile's inherited ACL, so no ACL is set here
//! (SPEC §10: "ACL-free key files under the user profile").

use std::io::Write;
use std::path::Path;

use super::PrivateFileError;

/// The URL handler: takes the URL as one argument, with no `cmd` parsing `&` or `^` in it.
pub const URL_OPENER: (&str, &[&str]) = ("rundll32", &["url.dll,FileProtocolHandler"]);

/// No freedesktop handler query on Windows (and no snap-confined browsers).
pub const HTML_HANDLER_QUERY: Option<(&str, &[&str])> = None;

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

pub fn open_private_append(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().create(true).append(true).open(path)
}

/// Windows has no umask: new files take the folder's inherited ACL (the profile's, or the
/// owner-only one [`restrict_dir_acl`] puts on a data dir outside it).
pub fn restrict_new_files() {}

/// No umask to give back (see [`restrict_new_files`]).
pub fn user_umask() -> Option<u32> {
    None
}

/// Nothing to do: a child inherits no creation mask on Windows.
pub fn give_back_user_umask(_command: &mut Command) {}

pub fn tighten(_path: &Path, _meta: &std::fs::Metadata) -> std::io::Result<Option<(u32, u32)>> {
    Ok(None)
}

pub fn is_loose_dir(_meta: &std::fs::Metadata) -> bool {
    false
}

/// Gives `dir` a protected DACL with one entry, full control for the current user, inherited
/// by every file and folder below it (which drops what they inherited before). Returns
/// whether it was set.
pub fn restrict_dir_acl(dir: &Path) -> std::io::Result<bool> {
    use std::os::windows::ffi::OsStrExt;
    use windows_sys::Win32::Foundation::GENERIC_ALL;
    use windows_sys::Win32::Security::Authorization::{SE_FILE_OBJECT, SetNamedSecurityInfoW};
    use windows_sys::Win32::Security::{
        ACL, ACL_REVISION, AddAccessAllowedAceEx, CONTAINER_INHERIT_ACE, DACL_SECURITY_INFORMATION, GetLengthSid,
        InitializeAcl, OBJECT_INHERIT_ACE, PROTECTED_DACL_SECURITY_INFORMATION,
    };
    let last = std::io::Error::last_os_error;
    let user = CurrentUser::query()?;
    let sid = user.sid();
    // SAFETY: `sid` points into `user`, which outlives every use below.
    let sid_len = unsafe { GetLengthSid(sid) };
    let acl_len = std::mem::size_of::<ACL>() as u32 + 16 + sid_len;
    let mut acl = vec![0u64; (acl_len as usize).div_ceil(8)];
    let acl_ptr = acl.as_mut_ptr().cast::<ACL>();
    // SAFETY: the buffer holds `acl_len` bytes, 8-aligned, for the ACL and its one entry.
    let built = unsafe {
        InitializeAcl(acl_ptr, acl_len, ACL_REVISION) != 0
            && AddAccessAllowedAceEx(
                acl_ptr,
                ACL_REVISION,
                OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE,
                GENERIC_ALL,
                sid,
            ) != 0
    };
    if !built {
        return Err(last());
    }
    let wide: Vec<u16> = dir.as_os_str().encode_wide().chain([0]).collect();
    // SAFETY: a NUL-terminated path and a valid ACL; owner, group and SACL are left alone.
    let status = unsafe {
        SetNamedSecurityInfoW(
            wide.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            acl_ptr,
            std::ptr::null(),
        )
    };
    if status != 0 {
        return Err(std::io::Error::from_raw_os_error(status as i32));
    }
    Ok(true)
}

/// The current user's `TOKEN_USER` (and the SID it points to), in one u64-aligned buffer.
struct CurrentUser(Vec<u64>);

impl CurrentUser {
    fn query() -> std::io::Result<CurrentUser> {
        use windows_sys::Win32::Security::{GetTokenInformation, TOKEN_QUERY, TokenUser};
        use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: the pseudo-handle of our own process; `token` receives a handle we close below.
        if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut user = vec![0u64; 64];
        let mut needed = 0u32;
        // SAFETY: the buffer is writable for the length passed; the token handle is valid.
        let got = unsafe {
            GetTokenInformation(token, TokenUser, user.as_mut_ptr().cast(), (user.len() * 8) as u32, &mut needed)
        };
        let error = std::io::Error::last_os_error();
        // SAFETY: `token` came from OpenProcessToken.
        unsafe { CloseHandle(token) };
        if got == 0 { Err(error) } else { Ok(CurrentUser(user)) }
    }

    /// The user's SID, valid while `self` lives.
    fn sid(&self) -> windows_sys::Win32::Security::PSID {
        // SAFETY: `query` had GetTokenInformation fill a TOKEN_USER at the buffer's start.
        unsafe { (*self.0.as_ptr().cast::<windows_sys::Win32::Security::TOKEN_USER>()).User.Sid }
    }
}

/// Which process holds a port: not looked up on Windows (`netstat -ano` tells the user).
pub fn port_holder(_port: u16) -> Option<u32> {
    None
}

pub fn process_name(_pid: u32) -> Option<String> {
    None
}

// --- home -------------------------------------------------------------------------------

pub const HOME_ENV: &str = "USERPROFILE";
/// `HOME` second: Git Bash and MSYS set it for their own shells, and a user may too.
pub const HOME_FALLBACKS: &[&str] = &["USERPROFILE", "HOME"];
pub const ESSENTIAL_ENV: &[&str] = &["PATH", "PATHEXT", "SYSTEMROOT", "WINDIR", "TEMP", "TMP", "COMSPEC"];

// --- processes ----------------------------------------------------------------------------

use std::os::windows::io::AsRawHandle;
use std::os::windows::process::CommandExt;
use std::process::{Child, Command};

use windows_sys::Win32::Foundation::{
    CloseHandle, HANDLE, HANDLE_FLAG_INHERIT, INVALID_HANDLE_VALUE, SetHandleInformation,
};
use windows_sys::Win32::System::Console::{
    GetStdHandle, STD_ERROR_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, SetConsoleCtrlHandler,
};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation, SetInformationJobObject,
    TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    CREATE_BREAKAWAY_FROM_JOB, CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW, CREATE_SUSPENDED, DETACHED_PROCESS,
    OpenThread, ResumeThread, THREAD_SUSPEND_RESUME,
};

/// `ERROR_ACCESS_DENIED`: what CreateProcess says when our job forbids breaking away.
const ERROR_ACCESS_DENIED: i32 = 5;

pub fn run_in_place(command: &mut Command) -> std::io::Error {
    // A handler of ours, not `SetConsoleCtrlHandler(NULL, TRUE)`: that one makes the process
    // ignore Ctrl-C and is inherited, so the child could not be stopped with it either.
    // SAFETY: registers a function that touches nothing and only answers "handled".
    unsafe { SetConsoleCtrlHandler(Some(leave_ctrl_c_to_the_child), 1) };
    // The child in a Job Object that dies with us (`KILL_ON_JOB_CLOSE`): a `vl` ended from
    // outside (Task Manager, a supervisor, a test's kill) takes the program it waits for with
    // it, as an exec'd process would be ended on Unix. Unlike [`spawn_tree`], the child keeps
    // our console: it is the program the user ran.
    let ran = (|| -> std::io::Result<i32> {
        let group = new_job()?;
        let mut child = command.creation_flags(CREATE_SUSPENDED).spawn()?;
        // SAFETY: both handles are valid: the job is ours, the process handle is the Child's.
        let assigned = unsafe { AssignProcessToJobObject(group.job, child.as_raw_handle() as HANDLE) } != 0;
        let started = if assigned { resume_threads(child.id()) } else { Err(std::io::Error::last_os_error()) };
        if let Err(e) = started {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
        // A code beyond i32's range (an NTSTATUS such as 0xC000013A) comes through bit for bit.
        Ok(child.wait()?.code().unwrap_or(1))
    })();
    match ran {
        Ok(code) => std::process::exit(code),
        Err(e) => e,
    }
}

/// Ctrl-C and Ctrl-Break reach every process of the console: the child handles them, and this
/// process stays to exit with the child's code (`BOOL` is an `i32`; 1 is TRUE, "handled").
unsafe extern "system" fn leave_ctrl_c_to_the_child(_ctrl_type: u32) -> i32 {
    1
}

pub fn spawn_detached(command: &mut Command) -> std::io::Result<Child> {
    // std creates every child with handle inheritance on, and our stdin/stdout/stderr came
    // from the IDE as inheritable handles: a worker holding the IDE's stdout pipe keeps the
    // IDE waiting for the hook's output until the worker exits. Our own use of them is
    // unaffected; files std opens are never inheritable, and the child's stdio is passed
    // explicitly.
    for which in [STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE] {
        // SAFETY: GetStdHandle returns a handle value or null/invalid; SetHandleInformation on
        // either of those fails harmlessly.
        unsafe {
            let handle = GetStdHandle(which);
            if !handle.is_null() && handle != INVALID_HANDLE_VALUE {
                SetHandleInformation(handle, HANDLE_FLAG_INHERIT, 0);
            }
        }
    }
    // No console (DETACHED_PROCESS), so closing the IDE's console or a Ctrl-C there passes it
    // by; out of the IDE's Job Object where that job allows it, else inside it.
    let flags = DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP;
    match command.creation_flags(flags | CREATE_BREAKAWAY_FROM_JOB).spawn() {
        Err(e) if e.raw_os_error() == Some(ERROR_ACCESS_DENIED) => command.creation_flags(flags).spawn(),
        other => other,
    }
}

/// The Job Object holding the child and everything it starts. Closing it kills what is left
/// in it (`KILL_ON_JOB_CLOSE`), so a worker that dies takes the command's tree with it.
pub struct Group {
    job: HANDLE,
}

// SAFETY: a job handle is a kernel object reference, usable from any thread.
unsafe impl Send for Group {}
unsafe impl Sync for Group {}

impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: `job` is a handle this struct owns, closed once.
        unsafe { CloseHandle(self.job) };
    }
}

impl Group {
    pub fn kill(&mut self, _child: &mut Child) {
        // SAFETY: `job` is a valid job handle owned by this struct.
        unsafe { TerminateJobObject(self.job, 1) };
    }
}

pub fn spawn_tree(command: &mut Command) -> std::io::Result<(Child, Group)> {
    let group = new_job()?;
    // Suspended until it is in the job, so not even its first grandchild can escape; no
    // console window of its own when the worker (detached) has none.
    let mut child = command.creation_flags(CREATE_SUSPENDED | CREATE_NO_WINDOW).spawn()?;
    let started = (|| {
        // SAFETY: both handles are valid: the job is ours, the process handle is the Child's.
        if unsafe { AssignProcessToJobObject(group.job, child.as_raw_handle() as HANDLE) } == 0 {
            return Err(std::io::Error::last_os_error());
        }
        resume_threads(child.id())
    })();
    if let Err(e) = started {
        let _ = child.kill();
        let _ = child.wait();
        return Err(e);
    }
    Ok((child, group))
}

fn new_job() -> std::io::Result<Group> {
    // SAFETY: null attributes and name are allowed; the handle is checked before use.
    let job = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if job.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    let group = Group { job };
    let mut limits = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    // SAFETY: `limits` is the structure this information class names, with its true size.
    let set = unsafe {
        SetInformationJobObject(
            group.job,
            JobObjectExtendedLimitInformation,
            (&raw const limits).cast(),
            std::mem::size_of_val(&limits) as u32,
        )
    };
    if set == 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(group)
}

/// Resumes every thread of process `pid` (one, for a process created suspended). std keeps
/// the main thread's handle to itself, so the threads are found through a snapshot.
fn resume_threads(pid: u32) -> std::io::Result<()> {
    // SAFETY: a snapshot handle is checked, used for enumeration only, and closed below.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snapshot == INVALID_HANDLE_VALUE {
        return Err(std::io::Error::last_os_error());
    }
    let mut entry = THREADENTRY32 { dwSize: std::mem::size_of::<THREADENTRY32>() as u32, ..Default::default() };
    let mut resumed = 0;
    // SAFETY: `entry` is a THREADENTRY32 with dwSize set, as Thread32First/Next require; each
    // thread handle is checked and closed.
    let mut more = unsafe { Thread32First(snapshot, &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            unsafe {
                let thread = OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID);
                if !thread.is_null() {
                    if ResumeThread(thread) != u32::MAX {
                        resumed += 1;
                    }
                    CloseHandle(thread);
                }
            }
        }
        more = unsafe { Thread32Next(snapshot, &mut entry) } != 0;
    }
    // SAFETY: the snapshot handle is ours, closed once.
    unsafe { CloseHandle(snapshot) };
    match resumed {
        0 => Err(std::io::Error::other(format!("could not resume process {pid} after adding it to its job"))),
        _ => Ok(()),
    }
}

pub fn shell_command(line: &str) -> Command {
    let mut command = Command::new("cmd.exe");
    // /d: no AutoRun commands from the registry; /s /c "…": run the line inside the quotes as
    // it is, whatever quotes it holds itself.
    command.raw_arg(format!("/d /s /c \"{line}\""));
    command
}

pub fn shell_program(raw: &str) -> String {
    let path = raw.replace('\\', "/");
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+@:,=~".contains(c);
    if path.chars().all(safe) { path } else { format!("& '{}'", path.replace('\'', "''")) }
}

/// cmd's exit code for "is not recognized as an internal or external command".
pub const SHELL_NOT_FOUND: &[i32] = &[9009];

pub fn request_stop(_child: &Child) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "Windows has no signal to ask a process without a console to stop",
    ))
}

// --- PATH ---------------------------------------------------------------------------------

/// `claude` → `claude.COM`, `claude.EXE`, … in `PATHEXT` order (its default when unset); a
/// name that already ends in one of them is tried as it is.
pub fn executable_names(name: &str, pathext: Option<&str>) -> Vec<String> {
    let pathext = pathext.filter(|p| !p.trim().is_empty()).unwrap_or(".COM;.EXE;.BAT;.CMD");
    let extensions: Vec<&str> = pathext.split(';').map(str::trim).filter(|e| e.starts_with('.')).collect();
    let lower = name.to_ascii_lowercase();
    if extensions.iter().any(|e| lower.ends_with(&e.to_ascii_lowercase())) {
        return vec![name.to_owned()];
    }
    extensions.iter().map(|e| format!("{name}{}", e.to_ascii_lowercase())).collect()
}

pub fn is_executable(meta: &std::fs::Metadata) -> bool {
    meta.is_file()
}

pub fn set_executable(_path: &Path, _executable: bool) -> std::io::Result<()> {
    Ok(())
}

pub fn set_mode(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

pub fn symlink_file(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::windows::fs::symlink_file(target, link)?;
    // Wine answers success but makes a file that is no link (seen under wine 8); a caller
    // promised a link must not go on with a copy, so that is an error here.
    if std::fs::symlink_metadata(link)?.file_type().is_symlink() {
        Ok(())
    } else {
        let _ = std::fs::remove_file(link);
        Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "the link made is not a symbolic link"))
    }
}

pub fn stop_process_command(pid: u64) -> String {
    format!("taskkill /PID {pid}")
}

pub const HAS_USER_PATH: bool = true;

/// `HKCU\Environment\Path`, read and written as `REG_EXPAND_SZ`; entries compared without case
/// and a trailing backslash, as Windows does.
pub fn user_path(dir: &Path, add: bool) -> std::io::Result<bool> {
    use windows_sys::Win32::System::Registry::{
        HKEY, HKEY_CURRENT_USER, KEY_READ, KEY_WRITE, REG_EXPAND_SZ, RegCloseKey, RegOpenKeyExW, RegQueryValueExW,
        RegSetValueExW,
    };
    let wide = |s: &str| s.encode_utf16().chain(Some(0)).collect::<Vec<u16>>();
    let check = |code: u32| if code == 0 { Ok(()) } else { Err(std::io::Error::from_raw_os_error(code as i32)) };
    let (key_name, value_name) = (wide("Environment"), wide("Path"));
    let mut key: HKEY = std::ptr::null_mut();
    // SAFETY: the names are NUL-terminated UTF-16; `key` is closed below on every path.
    check(unsafe { RegOpenKeyExW(HKEY_CURRENT_USER, key_name.as_ptr(), 0, KEY_READ | KEY_WRITE, &mut key) })?;
    let result = (|| {
        let mut size = 0u32;
        // SAFETY: a size query (null buffer); a missing value is an empty PATH.
        let found = unsafe {
            RegQueryValueExW(
                key,
                value_name.as_ptr(),
                std::ptr::null(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut size,
            )
        } == 0;
        let mut buffer = vec![0u16; (size as usize).div_ceil(2) + 1];
        if found && size > 0 {
            let mut bytes = (buffer.len() * 2) as u32;
            // SAFETY: `buffer` holds `bytes` bytes.
            check(unsafe {
                RegQueryValueExW(
                    key,
                    value_name.as_ptr(),
                    std::ptr::null(),
                    std::ptr::null_mut(),
                    buffer.as_mut_ptr().cast(),
                    &mut bytes,
                )
            })?;
        }
        let current = String::from_utf16_lossy(&buffer[..buffer.iter().position(|&c| c == 0).unwrap_or(buffer.len())]);
        let dir = dir.display().to_string();
        let norm = |s: &str| s.trim_end_matches('\\').to_lowercase();
        let entries: Vec<&str> = current.split(';').filter(|e| !e.is_empty()).collect();
        let present = entries.iter().any(|e| norm(e) == norm(&dir));
        let updated = match (add, present) {
            (true, false) => std::iter::once(dir.as_str()).chain(entries.iter().copied()).collect::<Vec<_>>().join(";"),
            (false, true) => entries.iter().copied().filter(|e| norm(e) != norm(&dir)).collect::<Vec<_>>().join(";"),
            _ => return Ok(false),
        };
        let data = wide(&updated);
        // SAFETY: `data` is NUL-terminated UTF-16 of the length given in bytes.
        check(unsafe {
            RegSetValueExW(key, value_name.as_ptr(), 0, REG_EXPAND_SZ, data.as_ptr().cast(), (data.len() * 2) as u32)
        })?;
        Ok(true)
    })();
    // SAFETY: `key` was opened above.
    unsafe { RegCloseKey(key) };
    if result.as_ref().is_ok_and(|changed| *changed) {
        announce_environment_change();
    }
    result
}

/// Tells running programs that the user's environment changed (`WM_SETTINGCHANGE` with
/// "Environment", as the system's own settings dialog and rustup send it), so a terminal
/// opened from Explorer afterwards sees the new PATH without a new log-in. Best effort: a
/// window that does not answer within a second is skipped.
fn announce_environment_change() {
    use windows_sys::Win32::UI::WindowsAndMessaging::{
        HWND_BROADCAST, SMTO_ABORTIFHUNG, SendMessageTimeoutW, WM_SETTINGCHANGE,
    };
    let area: Vec<u16> = "Environment".encode_utf16().chain(Some(0)).collect();
    let mut answer = 0usize;
    // SAFETY: a NUL-terminated string that outlives the call; the answer is written to a local.
    unsafe {
        SendMessageTimeoutW(
            HWND_BROADCAST,
            WM_SETTINGCHANGE,
            0,
            area.as_ptr() as isize,
            SMTO_ABORTIFHUNG,
            1000,
            &mut answer,
        );
    }
}

#[cfg(test)]
pub fn non_unicode_arg() -> std::ffi::OsString {
    use std::os::windows::ffi::OsStringExt;
    std::ffi::OsString::from_wide(&[0xD800])
}

/// Windows has no `/etc/localtime`: jiff asks the system (`super::local_time_zone`).
pub fn local_time_zone() -> Option<jiff::tz::TimeZone> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether this process runs under wine (its ntdll exports `wine_get_version`).
    fn under_wine() -> bool {
        use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleA, GetProcAddress};
        // SAFETY: NUL-terminated names; ntdll is loaded in every Windows process.
        unsafe {
            let ntdll = GetModuleHandleA(c"ntdll.dll".as_ptr().cast());
            !ntdll.is_null() && GetProcAddress(ntdll, c"wine_get_version".as_ptr().cast()).is_some()
        }
    }

    /// What Windows reports of a dir after [`restrict_dir_acl`]: a protected DACL of one entry
    /// that allows the current user, inherited by files and folders. Runs on the release
    /// workflow's Windows runner. Under wine (windows-check and the
    /// Windows release job run here) it says so and checks nothing: wine 8 accepts the DACL and
    /// keeps none on a directory, reading back its default three entries (docs/PLATFORMS.md).
    #[test]
    fn a_restricted_dir_has_one_protected_entry_for_the_current_user_only() {
        if under_wine() {
            eprintln!("not checked under wine: it keeps no DACL on a directory");
            return;
        }
        use std::os::windows::ffi::OsStrExt;
        use windows_sys::Win32::Foundation::LocalFree;
        use windows_sys::Win32::Security::Authorization::{GetNamedSecurityInfoW, SE_FILE_OBJECT};
        use windows_sys::Win32::Security::{
            ACCESS_ALLOWED_ACE, ACL, CONTAINER_INHERIT_ACE, DACL_SECURITY_INFORMATION, EqualSid, GetAce,
            GetSecurityDescriptorControl, OBJECT_INHERIT_ACE, PSECURITY_DESCRIPTOR, SE_DACL_PROTECTED,
        };
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("data");
        std::fs::create_dir(&dir).unwrap();
        assert!(restrict_dir_acl(&dir).unwrap());
        let wide: Vec<u16> = dir.as_os_str().encode_wide().chain([0]).collect();
        let mut dacl: *mut ACL = std::ptr::null_mut();
        let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: a NUL-terminated path; the descriptor is freed below with LocalFree.
        let status = unsafe {
            GetNamedSecurityInfoW(
                wide.as_ptr(),
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut dacl,
                std::ptr::null_mut(),
                &mut descriptor,
            )
        };
        assert_eq!(status, 0, "GetNamedSecurityInfoW");
        assert!(!dacl.is_null(), "a DACL is set");
        let (mut control, mut revision) = (0u16, 0u32);
        // SAFETY: `descriptor` came from GetNamedSecurityInfoW; `dacl` points into it.
        unsafe {
            assert_ne!(GetSecurityDescriptorControl(descriptor, &mut control, &mut revision), 0);
            assert_ne!(control & SE_DACL_PROTECTED, 0, "the DACL inherits nothing from the parent");
            assert_eq!((*dacl).AceCount, 1, "one entry only");
            let mut ace: *mut core::ffi::c_void = std::ptr::null_mut();
            assert_ne!(GetAce(dacl, 0, &mut ace), 0);
            let ace = ace.cast::<ACCESS_ALLOWED_ACE>();
            let flags = (*ace).Header.AceFlags as u32;
            assert_eq!(
                flags & (OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE),
                OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE
            );
            let user = CurrentUser::query().unwrap();
            let ace_sid = std::ptr::addr_of_mut!((*ace).SidStart).cast();
            assert_ne!(EqualSid(ace_sid, user.sid()), 0, "the entry is the current user's");
            LocalFree(descriptor.cast());
        }
    }
}
