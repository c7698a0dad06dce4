//! The one lock every `vl install` and `vl uninstall` holds while it changes anything: an
//! advisory lock on `<data>/install.lock` (std's `File::lock`: `flock` on Unix, `LockFileEx` on
//! Windows; the OS lets go of it when the process dies, so a killed install never wedges the
//! next one).
//!
//! What it protects: the stable copy of `vl` (`<data>/bin`), the ledger
//! (`installed-settings.json`) and the read-modify-write of each settings file between the
//! decision and the rename. Without it, installs started together deleted each other's
//! half-copied binary (hooks then exited 127) and lost each other's ledger entries.
//!
//! The lock is waited for, with a bound: installs are short (a copy and a few small files), so
//! one that still holds the lock after [`WAIT`] is stuck, and the waiter says which process
//! holds it instead of hanging an `npx` forever.

use std::io::{Seek, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::cli::backend::CliError;
use crate::config::Config;

/// How long an install waits for another one; a cold copy of the binary to a slow disk takes
/// well under a second, and Codex's trust step (an app-server round trip) a few seconds.
const WAIT: Duration = Duration::from_secs(60);

/// How often the waiter tries again.
const POLL: Duration = Duration::from_millis(25);

/// Held while it lives; dropping it (or the process ending) releases the lock.
#[derive(Debug)]
pub struct InstallLock {
    _file: std::fs::File,
}

fn lock_path(config: &Config) -> PathBuf {
    config.data_dir.join("install.lock")
}

impl InstallLock {
    /// Takes the lock, creating the data dir if need be; waits up to [`WAIT`] for another
    /// install, saying so once.
    pub fn acquire(config: &Config) -> Result<InstallLock, CliError> {
        Self::acquire_within(config, WAIT)
    }

    /// For uninstall: the lock when the data dir exists; `None` when it does not, since then
    /// there is no copy, ledger or install to race with, and creating the dir only to lock it
    /// would leave a folder behind on a machine VibeLearn was never installed on.
    pub fn acquire_if_installed(config: &Config) -> Result<Option<InstallLock>, CliError> {
        if !config.data_dir.is_dir() {
            return Ok(None);
        }
        Self::acquire(config).map(Some)
    }

    fn acquire_within(config: &Config, wait: Duration) -> Result<InstallLock, CliError> {
        let path = lock_path(config);
        crate::platform::create_private_dir(&config.data_dir)
            .map_err(|e| CliError::caused(format!("cannot create {}", config.data_dir.display()), e))?;
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| CliError::caused(format!("cannot open {}", path.display()), e))?;
        let deadline = Instant::now() + wait;
        let mut said = false;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    if !said {
                        println!("waiting for another vl install or uninstall{} to finish", holder(&path));
                        said = true;
                    }
                    std::thread::sleep(POLL);
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(CliError::Failed(format!(
                        "another vl install or uninstall{} has held {} for {} s; nothing changed — \
                         run the command again once it ends",
                        holder(&path),
                        path.display(),
                        wait.as_secs()
                    )));
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(CliError::caused(format!("cannot lock {}", path.display()), e));
                }
            }
        }
        // Who holds it, for a waiter's message; a failure to say so is no failure to lock.
        let _ = file.set_len(0).and_then(|()| file.rewind()).and_then(|()| writeln!(file, "{}", std::process::id()));
        Ok(InstallLock { _file: file })
    }
}

/// " (pid N)" for the process named in the lock file, if it says.
fn holder(path: &std::path::Path) -> String {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok())
        .map(|pid| format!(" (pid {pid})"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_waits_then_gives_up_with_the_holders_pid() {
        let dir = tempfile::tempdir().expect("temp dir");
        let env: std::collections::BTreeMap<String, String> =
            [("VIBELEARN_DATA_DIR".to_owned(), dir.path().to_string_lossy().into_owned())].into();
        let config = Config::resolve(&env);
        let held = InstallLock::acquire(&config).expect("first");
        // std's lock is per open file, so a second open in this process contends like another
        // process would.
        let Err(e) = InstallLock::acquire_within(&config, Duration::from_millis(100)) else {
            panic!("a second lock while the first is held")
        };
        assert!(e.to_string().contains(&format!("(pid {})", std::process::id())), "{e}");
        drop(held);
        InstallLock::acquire_within(&config, Duration::from_millis(100)).expect("free again");
    }
}
