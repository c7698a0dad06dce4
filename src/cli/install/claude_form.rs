//! Which form Claude Code's hooks take (SPEC §10): Claude Code ≥ 2.1.139 (asked with
//! `claude --version`) gets the exec form, `"command"` the binary's absolute path and `"args"`
//! the words, which no shell parses; an older or unknown one gets one shell command string.

use std::path::Path;

use crate::config::Config;

/// The first Claude Code release that runs a hook's `command` with its `args` and no shell.
pub(super) const EXEC_FORM_SINCE: Version = Version(2, 1, 139);
/// `claude --version` gets this long before the version counts as unknown.
const VERSION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How a Claude Code hook names what it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookForm {
    /// `"command"`: the binary's path, `"args"`: `["hook", platform, event]`; no shell.
    Exec,
    /// `"command"`: one shell string, `<program> hook <platform> <event>`.
    Shell,
}

/// A Claude Code version, `major.minor.patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u64, pub u64, pub u64);

impl Version {
    /// The first `X.Y.Z` word of `claude --version`'s output (`2.1.332 (Claude Code)`).
    pub fn parse(text: &str) -> Option<Version> {
        text.split_whitespace().find_map(|word| {
            let mut parts = word.trim_start_matches('v').splitn(3, '.').map(|p| p.parse::<u64>().ok());
            Some(Version(parts.next()??, parts.next()??, parts.next()??))
        })
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// The form for the Claude Code on `PATH`, and what to tell the user about it.
pub(super) fn claude_code_form(config: &Config) -> (HookForm, String) {
    let claude = config.path_var.as_deref().and_then(|p| crate::platform::find_executable(p, "claude"));
    let Some(claude) = claude else {
        return (HookForm::Shell, "no `claude` on PATH, so its version is unknown".into());
    };
    match claude_version(&claude) {
        Some(version) if version >= EXEC_FORM_SINCE => {
            (HookForm::Exec, format!("Claude Code {version} runs each hook as a program with its arguments, no shell"))
        }
        Some(version) => (HookForm::Shell, format!("Claude Code {version} is older than {EXEC_FORM_SINCE}")),
        None => (HookForm::Shell, format!("`{} --version` did not say its version", claude.display())),
    }
}

/// Runs `claude --version` (killed past [`VERSION_TIMEOUT`]); `None` if it says nothing usable.
fn claude_version(claude: &Path) -> Option<Version> {
    use std::io::Read;
    let mut child = crate::platform::command(claude)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + VERSION_TIMEOUT;
    while child.try_wait().ok()?.is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut text = String::new();
    child.stdout.take()?.take(4096).read_to_string(&mut text).ok()?;
    Version::parse(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_versions_are_read_and_compared() {
        assert_eq!(Version::parse("2.1.332 (Claude Code)\n"), Some(Version(2, 1, 332)));
        assert_eq!(Version::parse("claude v2.1.139"), Some(Version(2, 1, 139)));
        assert_eq!(Version::parse("Claude Code"), None);
        assert!(Version(2, 1, 139) >= EXEC_FORM_SINCE && Version(2, 1, 138) < EXEC_FORM_SINCE);
        assert!(Version(2, 2, 0) > EXEC_FORM_SINCE && Version(1, 9, 999) < EXEC_FORM_SINCE);
    }
}
