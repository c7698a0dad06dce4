//! `vl uninstall <agent>`: takes out exactly what install put in (SPEC §10), for every agent
//! the same way.
//!
//! The file as it is now is the starting point. When it is exactly what install last wrote
//! and every change since the user's own bytes was ours (the ledger keeps that original only
//! while this holds, [`super::ledger`]), the original goes back byte for byte, or a file
//! install created is removed. Otherwise our hooks (and status line) are edited out of the
//! current text, keeping every other byte, and then the containers install created that are
//! now empty; a file install created is removed only when nothing but our entries is left.
//!
//! Then the copy of `vl`: removed, with the worker running from it stopped first, only when no
//! settings file still runs it ([`super::binary::still_used`], which reads the files).

use std::cell::Cell;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::agents::{self, Agent};
use super::ledger::{Ledger, Original, Written};
use super::settings_file::{EditError, SettingsFile, edit_json, parse_json, sha256_hex};
use super::{binary, codex_trust, hooks, installed_binary, ledger, lock, path_setup, settings_path, sidecar};
use crate::cli::backend::CliError;
use crate::config::Config;

/// How uninstall gives the file back.
enum GiveBack {
    /// It changed only by our writes since the user's own bytes: those go back in.
    Original(String),
    /// Install created it, and nothing of anyone else's is in it: it goes.
    Remove,
    /// Our entries come out of the current text.
    Edit,
}

pub(super) fn uninstall(agent: Agent, project: Option<PathBuf>, config: &Config) -> Result<(), CliError> {
    let path = settings_path(agent, project.as_deref(), config)?;
    // Check first: the file reads and our entries come out of it; nothing changes before this.
    let file = SettingsFile::open(&path)?;
    edit_json(&path, file.text(), agent.syntax(), |doc| agents::remove(agent, doc, None).map(|_| ()))?;
    // Then change, under the lock, on the file as it is now.
    let _lock = lock::InstallLock::acquire_if_installed(config)?;
    let mut ledger = Ledger::load(config);
    let record = ledger.get(&path).cloned();
    let mut file = SettingsFile::open(&path)?;
    let kept: Option<Value> = std::fs::read_to_string(sidecar(&path)).ok().and_then(|t| serde_json::from_str(&t).ok());
    let removed = Cell::new(0);
    let statusline = Cell::new(false);
    let created = record.as_ref().map(|r| r.added.as_slice());
    let remove_edit = |text: Option<&str>| {
        edit_json(&path, text, agent.syntax(), |doc| {
            removed.set(agents::remove(agent, doc, created)?);
            statusline.set(agent == Agent::ClaudeCode && hooks::remove_statusline(doc, kept.clone()));
            Ok(())
        })
    };
    let edited = remove_edit(file.text())?;
    let back = give_back(record.as_ref(), &path, file.text(), edited.as_deref(), agent);
    // Codex's keys for our hooks, asked while the hooks are still there.
    let trust = match (agent, removed.get()) {
        (Agent::Codex, 1..) => codex_trust::our_keys(config, &path),
        _ => Ok(Vec::new()),
    };
    let found = removed.get() > 0 || statusline.get();
    if write_back(&mut file, back, found, agent.name(), &removed, remove_edit)? {
        match (statusline.get(), kept.is_some()) {
            (true, true) => println!("your previous status line is back"),
            (true, false) => println!("removed the VibeLearn status line"),
            _ => {}
        }
    }
    match trust {
        Ok(keys) if !keys.is_empty() => {
            codex_trust::forget(config, &keys)?;
            println!("removed their {} trust entries from Codex's config.toml", keys.len());
        }
        Ok(_) => {}
        Err(e) => println!("Codex's trust entries for them stay in its config.toml ({e})"),
    }
    if statusline.get() {
        let _ = std::fs::remove_file(sidecar(&path));
    }
    let _ = std::fs::remove_file(ledger::backup_of(&path));
    ledger.forget(&path);
    let copy_removed = remove_copy_if_unused(config, &mut ledger)?;
    ledger.save(config)?;
    print_what_stays(config, copy_removed);
    Ok(())
}

/// How the file goes back: the original only while the file is exactly what install last
/// wrote and the ledger still holds the original; the removal of a file install created when
/// nothing else is in it; else an edit.
fn give_back(
    record: Option<&Written>,
    path: &Path,
    text: Option<&str>,
    edited: Option<&str>,
    agent: Agent,
) -> GiveBack {
    let Some(text) = text else { return GiveBack::Edit };
    let Some(record) = record else { return GiveBack::Edit };
    let ours = record.sha256 == sha256_hex(text.as_bytes());
    let emptied = || {
        // `edited` is `None` when nothing came out: then the file is as it is.
        let left = edited.unwrap_or(text);
        parse_json(path, Some(left), agent.syntax()).is_ok_and(|v| v == Value::Object(Default::default()))
    };
    match &record.original {
        Some(Original::Bytes { text: original }) if ours => GiveBack::Original(original.clone()),
        Some(Original::Missing) if ours => GiveBack::Remove,
        _ if record.created && emptied() => GiveBack::Remove,
        _ => GiveBack::Edit,
    }
}

/// The change half of uninstalling one settings file: nothing when the file is missing or
/// holds nothing of ours (`found`), else the user's own bytes back, the file install created
/// removed, or our entries edited out (`remove_edit`, redone on the new content if the file
/// changed meanwhile; `hooks` counts what it took out). Says which, and whether it changed.
fn write_back(
    file: &mut SettingsFile,
    give_back: GiveBack,
    found: bool,
    ide: &str,
    hooks: &Cell<usize>,
    remove_edit: impl FnMut(Option<&str>) -> Result<Option<String>, EditError>,
) -> Result<bool, CliError> {
    let path = file.path().display().to_string();
    if file.text().is_none() {
        println!("there is no {path}; nothing to remove");
        return Ok(false);
    }
    if !found {
        println!("no VibeLearn hooks in {path}; nothing changed");
        return Ok(false);
    }
    match give_back {
        GiveBack::Original(bytes) => {
            file.restore(&bytes)?;
            println!("removed {} {ide} hooks: {path} is back to your own bytes", hooks.get());
        }
        GiveBack::Remove => {
            file.remove()?;
            println!("removed {} {ide} hooks, and {path} which install had created", hooks.get());
        }
        GiveBack::Edit => {
            file.commit(remove_edit)?;
            println!("removed {} {ide} hooks from {path}", hooks.get());
        }
    }
    Ok(true)
}

/// When no settings file runs the copy of `vl` any more: the worker running from it stopped,
/// the copy and its `vl-worker` removed, and what `--add-to-path` added taken out. Says whether
/// it removed them.
fn remove_copy_if_unused(config: &Config, ledger: &mut Ledger) -> Result<bool, CliError> {
    let installed = installed_binary(config).exists() || binary::installed_worker(config).exists();
    if binary::still_used(config, ledger) || !installed {
        return Ok(false);
    }
    stop_worker(config);
    let removed = binary::uninstall_binary(config)?;
    if removed.is_empty() {
        return Ok(false);
    }
    let removed: Vec<String> = removed.iter().map(|copy| copy.display().to_string()).collect();
    println!("removed {}", removed.join(" and "));
    let copy = installed_binary(config);
    let dir = copy.parent().unwrap_or(Path::new("."));
    let changed = path_setup::remove_from_path(config, dir, ledger.path_added())?;
    ledger.forget_path();
    if !changed.is_empty() {
        println!("took {} out of your PATH again: {}", dir.display(), changed.join(", "));
    }
    Ok(true)
}

/// Stops the worker of this data dir, which runs from the copy about to be removed (the hooks
/// start it from there); says whether one was running and stopped.
fn stop_worker(config: &Config) -> bool {
    use std::time::{Duration, Instant};
    let client = crate::worker_client::WorkerClient::admin(config, Duration::from_secs(2));
    let Ok(health) = client.get("/api/health") else { return false };
    let pid = health.body["pid"].as_u64();
    let asked = client.post("/api/admin/shutdown", &serde_json::json!({})).is_ok_and(|r| r.status == 202);
    let deadline = Instant::now() + Duration::from_secs(15);
    while asked && Instant::now() < deadline && client.get("/api/health").is_ok() {
        std::thread::sleep(Duration::from_millis(100));
    }
    let stopped = client.get("/api/health").is_err();
    if stopped {
        println!(
            "stopped the worker{} before removing the copy it runs from",
            pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
        );
    }
    stopped
}

/// What uninstall leaves, said: a worker still running, and the data. A command is suggested
/// only with a program that is still there.
fn print_what_stays(config: &Config, copy_removed: bool) {
    let client = crate::worker_client::WorkerClient::new(config, std::time::Duration::from_millis(500));
    if let Ok(health) = client.get("/api/health") {
        let pid = health.body["pid"].as_u64();
        let shown = pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
        if copy_removed {
            let how = match pid {
                Some(p) => format!("`{}` stops it", crate::platform::stop_process_command(p)),
                None => "end it from your task manager".into(),
            };
            println!("a worker is still running{shown}: {how}");
        } else {
            println!(
                "the worker is still running{shown}: `{} worker stop` stops it",
                crate::platform::shell_program(&installed_binary(config))
            );
        }
    }
    println!(
        "your sessions, questions and answers stay in {}; delete that folder to remove them",
        config.data_dir.display()
    );
}
