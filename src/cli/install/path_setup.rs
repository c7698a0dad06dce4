//! `vl` reachable after `npx vibelearn install …` (SPEC §10): the stable copy lives in
//! `<data>/bin`, which is on no one's PATH. When it is not on this process's PATH, install
//! prints the exact line for the user's shell; with `--add-to-path` it adds it the way rustup
//! does, and uninstall (with the copy) takes it out again.
//!
//! rustup's way, here: a small `<data>/env` script that puts the folder first on PATH only if
//! it is not there yet, sourced by one line (`. "<data>/env"`) appended to the POSIX shells'
//! profile files — `~/.profile` always, `~/.bashrc`, `~/.bash_profile` and `~/.zshenv` when
//! they exist or are the user's shell's — and for fish a `conf.d/vibelearn.fish`. On Windows
//! the folder goes into the user's PATH (the registry, [`crate::platform::user_path`]).
//! The profile files are edited through [`super::settings_file`] (a symlinked `~/.bashrc`
//! stays a link; a concurrent write is not lost). What was changed is recorded in the ledger
//! ([`PathAdded`]), and uninstall takes out only that: a profile file that existed before
//! (even empty) stays, and a folder the user had put on their Windows PATH stays there.

use std::path::{Path, PathBuf};

use super::ledger::{Ledger, PathAdded};
use super::settings_file::{EditError, SettingsFile};
use crate::config::Config;

/// The shells whose PATH line we know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    /// bash, zsh, dash, ksh: `export PATH=…`.
    Posix(&'static str),
    Fish,
    PowerShell,
}

/// The user's shell, from `SHELL` (Unix), else the platform's usual one.
pub fn user_shell(config: &Config) -> Shell {
    let name = config.shell.as_deref().map(|s| {
        let base = s.rsplit(['/', '\\']).next().unwrap_or(s);
        base.trim_end_matches(".exe").to_ascii_lowercase()
    });
    match name.as_deref() {
        Some("bash") => Shell::Posix("bash"),
        Some("zsh") => Shell::Posix("zsh"),
        Some("fish") => Shell::Fish,
        Some("pwsh" | "powershell") => Shell::PowerShell,
        Some(_) => Shell::Posix("sh"),
        None if crate::platform::HAS_USER_PATH => Shell::PowerShell,
        None => Shell::Posix("sh"),
    }
}

/// The line that puts `dir` first on PATH in `shell`, and the files it belongs in: those the
/// shell reads both as a login shell (macOS Terminal, `bash -l`, an agent running `bash -lc`)
/// and as an interactive one. bash reads `~/.bashrc` only when interactive and not a login
/// shell, and a login shell reads the first of `~/.bash_profile`, `~/.bash_login` and
/// `~/.profile`; every zsh reads `~/.zshenv`; sh and dash read `~/.profile` as login shells.
pub fn path_line(shell: Shell, dir: &Path, home: Option<&Path>) -> (String, Vec<&'static str>) {
    let dir = dir.display();
    match shell {
        Shell::Posix("zsh") => (format!("export PATH=\"{dir}:$PATH\""), vec!["~/.zshenv"]),
        Shell::Posix("bash") => {
            let login = [(".bash_profile", "~/.bash_profile"), (".bash_login", "~/.bash_login")]
                .into_iter()
                .find(|(name, _)| home.is_some_and(|h| h.join(name).exists()))
                .map_or("~/.profile", |(_, shown)| shown);
            (format!("export PATH=\"{dir}:$PATH\""), vec!["~/.bashrc", login])
        }
        Shell::Posix(_) => (format!("export PATH=\"{dir}:$PATH\""), vec!["~/.profile"]),
        Shell::Fish => (format!("fish_add_path \"{dir}\""), vec!["~/.config/fish/config.fish"]),
        Shell::PowerShell => (format!("$env:Path = \"{dir};$env:Path\""), vec!["$PROFILE"]),
    }
}

/// Whether `dir` is one of the folders of `PATH`.
pub fn on_path(config: &Config, dir: &Path) -> bool {
    let Some(path) = &config.path_var else { return false };
    let same = |a: &Path| {
        a == dir || std::fs::canonicalize(a).ok().zip(std::fs::canonicalize(dir).ok()).is_some_and(|(a, b)| a == b)
    };
    std::env::split_paths(path).any(|p| same(&p))
}

/// What install says about PATH, and does with `--add-to-path` (recording what it changed in
/// `ledger`).
pub fn after_install(config: &Config, dir: &Path, add: bool, ledger: &mut Ledger) -> Result<(), EditError> {
    if add {
        let (changed, record) = add_to_path(config, dir)?;
        ledger.add_path(record);
        if changed.is_empty() {
            println!("{} is already added to your PATH", dir.display());
        } else {
            println!("added {} to your PATH in: {}", dir.display(), changed.join(", "));
            println!("open a new terminal (or log in again) to run `vl`; `vl uninstall` takes it out again");
        }
        return Ok(());
    }
    if on_path(config, dir) {
        return Ok(());
    }
    let (line, files) = path_line(user_shell(config), dir, config.home.as_deref());
    println!("{} is not on your PATH, so `vl` alone will not run there yet.", dir.display());
    println!("Run the install again with --add-to-path to have it added (and taken out by `vl uninstall`),");
    println!("or add this line to {}:", files.join(" and "));
    println!("  {line}");
    Ok(())
}

/// The `<data>/env` script the profile lines source.
fn env_script(config: &Config) -> PathBuf {
    config.data_dir.join("env")
}

fn source_line(config: &Config) -> String {
    format!(". \"{}\"", env_script(config).display())
}

/// The POSIX profile files to add the line to, and the fish file.
fn profile_files(config: &Config) -> Vec<PathBuf> {
    let Some(home) = &config.home else { return Vec::new() };
    let shell = user_shell(config);
    let mut files = vec![home.join(".profile")];
    for (name, shell_name) in [(".bashrc", "bash"), (".bash_profile", "bash"), (".zshenv", "zsh")] {
        let path = home.join(name);
        // `.bash_profile` hides `.profile` from a bash login shell only if it exists.
        let wanted = path.exists() || (shell == Shell::Posix(shell_name) && name != ".bash_profile");
        if wanted {
            files.push(path);
        }
    }
    files
}

fn fish_file(config: &Config) -> Option<PathBuf> {
    let home = config.home.as_ref()?;
    let fish = home.join(".config").join("fish");
    (fish.exists() || user_shell(config) == Shell::Fish).then(|| fish.join("conf.d").join("vibelearn.fish"))
}

/// Adds `dir` to PATH for future shells; returns the files (or stores) it changed, and the
/// record of it for the ledger.
fn add_to_path(config: &Config, dir: &Path) -> Result<(Vec<String>, PathAdded), EditError> {
    let mut changed = Vec::new();
    let mut record = PathAdded::default();
    if crate::platform::HAS_USER_PATH {
        if crate::platform::user_path(dir, true).map_err(|e| io("add to the user PATH", dir, e))? {
            changed.push("your user PATH".to_owned());
            record.user_path = true;
        }
        return Ok((changed, record));
    }
    let script = env_script(config);
    let text = format!(
        "#!/bin/sh\n# Written by `vl install --add-to-path`; `vl uninstall` removes it.\ncase \":${{PATH}}:\" in\n    \
         *:\"{dir}\":*) ;;\n    *) export PATH=\"{dir}:$PATH\" ;;\nesac\n",
        dir = dir.display()
    );
    SettingsFile::open(&script)?.commit(|now| Ok((now != Some(text.as_str())).then(|| text.clone())))?;
    let line = source_line(config);
    for file in profile_files(config) {
        let mut profile = SettingsFile::open(&file)?;
        let existed = profile.text().is_some();
        let written = profile.commit(|now| Ok(with_line(now.unwrap_or(""), &line)))?;
        if written != super::settings_file::Committed::Unchanged {
            let shown = file.display().to_string();
            if !existed {
                record.created.push(shown.clone());
            }
            record.lines.push(shown.clone());
            changed.push(shown);
        }
    }
    if let Some(fish) = fish_file(config) {
        let text = format!(
            "# Written by `vl install --add-to-path`; `vl uninstall` removes it.\nif not contains \"{dir}\" $PATH\n    \
             set -gx PATH \"{dir}\" $PATH\nend\n",
            dir = dir.display()
        );
        let written =
            SettingsFile::open(&fish)?.commit(|now| Ok((now != Some(text.as_str())).then(|| text.clone())))?;
        if written != super::settings_file::Committed::Unchanged {
            changed.push(fish.display().to_string());
        }
    }
    Ok((changed, record))
}

/// Takes out what [`add_to_path`] added, as `added` records it; returns what it changed. With
/// no record (an install by an older version), our own line comes out of the profiles it is in
/// and no file is removed; a Windows user PATH entry stays, since it may be the user's.
pub fn remove_from_path(config: &Config, dir: &Path, added: Option<&PathAdded>) -> Result<Vec<String>, EditError> {
    let mut changed = Vec::new();
    if crate::platform::HAS_USER_PATH {
        if added.is_some_and(|a| a.user_path)
            && crate::platform::user_path(dir, false).map_err(|e| io("remove from the user PATH", dir, e))?
        {
            changed.push("your user PATH".to_owned());
        }
        return Ok(changed);
    }
    let line = source_line(config);
    let Some(home) = &config.home else { return Ok(changed) };
    for name in [".profile", ".bashrc", ".bash_profile", ".zshenv"] {
        let path = home.join(name);
        let shown = path.display().to_string();
        if added.is_some_and(|a| !a.lines.contains(&shown)) {
            continue;
        }
        let mut profile = SettingsFile::open(&path)?;
        if profile.text().is_some_and(|t| t.lines().any(|l| l == line)) {
            profile.commit(|now| Ok(now.and_then(|t| without_line(t, &line))))?;
            // A profile install created for its line alone goes; one the user had stays.
            if profile.text() == Some("") && added.is_some_and(|a| a.created.contains(&shown)) {
                profile.remove()?;
            }
            changed.push(shown);
        }
    }
    for path in [env_script(config), home.join(".config/fish/conf.d/vibelearn.fish")] {
        if path.exists() {
            std::fs::remove_file(&path).map_err(|e| io("remove", &path, e))?;
            changed.push(path.display().to_string());
        }
    }
    Ok(changed)
}

/// `text` with `line` appended (on a line of its own), or `None` if it is there already.
pub fn with_line(text: &str, line: &str) -> Option<String> {
    if text.lines().any(|l| l == line) {
        return None;
    }
    let sep = if text.is_empty() || text.ends_with('\n') { "" } else { "\n" };
    Some(format!("{text}{sep}{line}\n"))
}

/// `text` without the lines equal to `line`; `None` if there were none.
pub fn without_line(text: &str, line: &str) -> Option<String> {
    let kept: Vec<&str> = text.split_inclusive('\n').filter(|l| l.trim_end_matches(['\n', '\r']) != line).collect();
    let out = kept.concat();
    (out.len() != text.len()).then_some(out)
}

fn io(action: &'static str, path: &Path, source: std::io::Error) -> EditError {
    EditError::Io { action, path: path.to_path_buf(), source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_added_once_and_removed_to_the_byte() {
        let line = ". \"/h/.vibelearn/env\"";
        for text in ["", "alias ll='ls -l'\n", "no newline at the end"] {
            let added = with_line(text, line).unwrap();
            assert!(added.ends_with(&format!("{line}\n")), "{added:?}");
            assert_eq!(with_line(&added, line), None, "not twice");
            let back = without_line(&added, line).unwrap();
            let expected = if text.ends_with('\n') || text.is_empty() { text.to_owned() } else { format!("{text}\n") };
            assert_eq!(back, expected);
        }
        assert_eq!(without_line("a\nb\n", line), None);
    }

    #[test]
    fn bash_is_told_its_login_file_too() {
        let home = tempfile::tempdir().unwrap();
        let dir = Path::new("/h/.vibelearn/bin");
        assert_eq!(path_line(Shell::Posix("bash"), dir, Some(home.path())).1, vec!["~/.bashrc", "~/.profile"]);
        // A login bash reads ~/.bash_profile instead of ~/.profile when there is one.
        std::fs::write(home.path().join(".bash_profile"), "").unwrap();
        assert_eq!(path_line(Shell::Posix("bash"), dir, Some(home.path())).1, vec!["~/.bashrc", "~/.bash_profile"]);
    }

    #[test]
    fn each_shell_gets_its_own_line() {
        let dir = Path::new("/home/ann/.vibelearn/bin");
        assert_eq!(path_line(Shell::Posix("bash"), dir, None).0, "export PATH=\"/home/ann/.vibelearn/bin:$PATH\"");
        // zsh -lc reads no ~/.zshrc; every zsh reads ~/.zshenv.
        assert_eq!(path_line(Shell::Posix("zsh"), dir, None).1, vec!["~/.zshenv"]);
        assert_eq!(path_line(Shell::Posix("dash"), dir, None).1, vec!["~/.profile"]);
        assert_eq!(path_line(Shell::Fish, dir, None).0, "fish_add_path \"/home/ann/.vibelearn/bin\"");
        assert_eq!(
            path_line(Shell::PowerShell, Path::new(r"C:\Users\Ann\.vibelearn\bin"), None).0,
            r#"$env:Path = "C:\Users\Ann\.vibelearn\bin;$env:Path""#
        );
    }
}
