//! Trusting VibeLearn's hooks in Codex, the way Codex itself does it (SPEC §3.4): Codex runs a
//! hook only when `config.toml` holds `[hooks.state."<file>:<event>:<group>:<handler>"]` with
//! the hook's current `trusted_hash`, and skips others silently. Install asks Codex's own
//! app-server (`codex app-server`, JSON-RPC over stdio) for `hooks/list` — each hook's key and
//! `currentHash` — and writes the trust of ours with `config/batchWrite`, so Codex edits its
//! own `config.toml` (format-preserving, its hashing scheme, whatever version) and nothing here
//! computes or writes Codex's TOML. Uninstall drops the entries the same way.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::cli::backend::CliError;
use crate::config::Config;

/// How long the app-server gets to start and answer one request.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(20);

/// The `codex` on `PATH`, or an error saying why nothing can be trusted.
pub fn find_codex(config: &Config) -> Result<PathBuf, CliError> {
    config.path_var.as_deref().and_then(|p| crate::platform::find_executable(p, "codex")).ok_or_else(|| {
        CliError::NotFound(
            "no `codex` on PATH: Codex runs only hooks it trusts, and VibeLearn trusts its hooks through \
             Codex itself; install Codex (npm install -g @openai/codex) and run this again; nothing changed"
                .into(),
        )
    })
}

/// A running `codex app-server`, killed when dropped.
struct AppServer {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
}

impl AppServer {
    fn start(codex: &Path) -> Result<AppServer, String> {
        let mut child = crate::platform::command(codex)
            .arg("app-server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run {} app-server: {e}", codex.display()))?;
        let (stdin, stdout) = match (child.stdin.take(), child.stdout.take()) {
            (Some(stdin), Some(stdout)) => (stdin, stdout),
            _ => return Err("codex app-server gave no pipes".into()),
        };
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        let mut server = AppServer { child, stdin, lines, next_id: 1 };
        server
            .call("initialize", json!({"clientInfo": {"name": "vibelearn", "version": env!("CARGO_PKG_VERSION")}}))?;
        server.write(&json!({"jsonrpc": "2.0", "method": "initialized"}))?;
        Ok(server)
    }

    fn write(&mut self, message: &Value) -> Result<(), String> {
        writeln!(self.stdin, "{message}").and_then(|_| self.stdin.flush()).map_err(|e| format!("codex app-server: {e}"))
    }

    /// One request and its result (notifications in between are skipped).
    fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line =
                self.lines.recv_timeout(left).map_err(|_| format!("codex app-server did not answer {method}"))?;
            let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
            if message.get("id").and_then(Value::as_u64) != Some(id) {
                continue;
            }
            if let Some(error) = message.get("error") {
                return Err(format!("codex app-server refused {method}: {error}"));
            }
            return Ok(message.get("result").cloned().unwrap_or(Value::Null));
        }
    }
}

impl Drop for AppServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Our hooks of `file` as Codex lists them: `(key, currentHash, trusted)`.
fn list_ours(server: &mut AppServer, file: &Path) -> Result<Vec<(String, String, bool)>, String> {
    let cwd = file.parent().and_then(Path::parent).unwrap_or(file);
    let listed = server.call("hooks/list", json!({"cwds": [cwd]}))?;
    let hooks = listed["data"].as_array().into_iter().flatten().filter_map(|d| d["hooks"].as_array()).flatten();
    let mut ours: Vec<(String, String, bool)> = hooks
        .filter(|h| h["sourcePath"].as_str().is_some_and(|p| Path::new(p) == file))
        .filter(|h| {
            h["command"].as_str().is_some_and(|c| {
                let event = c.split_whitespace().last().unwrap_or("");
                crate::hook::is_ours(c, "codex", event)
            })
        })
        .filter_map(|h| {
            Some((h["key"].as_str()?.to_owned(), h["currentHash"].as_str()?.to_owned(), h["trustStatus"] == "trusted"))
        })
        .collect();
    ours.dedup();
    Ok(ours)
}

/// TOML's quoted key for a hook key (it holds `/`, `:` and maybe spaces).
fn state_path(key: &str) -> String {
    format!("hooks.state.{}", serde_json::to_string(key).unwrap_or_default())
}

/// Trusts each of our hooks in `file`; returns how many are trusted.
pub fn trust_ours(config: &Config, file: &Path) -> Result<usize, CliError> {
    let failed = |e: String| CliError::Failed(format!("the hooks are written, but Codex would skip them: {e}"));
    let codex = find_codex(config)?;
    let mut server = AppServer::start(&codex).map_err(failed)?;
    let ours = list_ours(&mut server, file).map_err(failed)?;
    if ours.is_empty() {
        return Err(failed(format!("Codex does not list VibeLearn's hooks of {}", file.display())));
    }
    let edits: Vec<Value> = ours
        .iter()
        .filter(|(_, _, trusted)| !trusted)
        .map(|(key, hash, _)| json!({"keyPath": format!("{}.trusted_hash", state_path(key)), "value": hash, "mergeStrategy": "replace"}))
        .collect();
    if !edits.is_empty() {
        server.call("config/batchWrite", json!({"edits": edits})).map_err(failed)?;
    }
    let now = list_ours(&mut server, file).map_err(failed)?;
    let trusted = now.iter().filter(|(_, _, t)| *t).count();
    if trusted < now.len() {
        return Err(failed(format!("{} of {} hooks are still untrusted", now.len() - trusted, now.len())));
    }
    Ok(trusted)
}

/// The keys of our hooks in `file` (asked before they are removed).
pub fn our_keys(config: &Config, file: &Path) -> Result<Vec<String>, String> {
    let codex = find_codex(config).map_err(|e| e.to_string())?;
    let mut server = AppServer::start(&codex)?;
    Ok(list_ours(&mut server, file)?.into_iter().map(|(key, _, _)| key).collect())
}

/// Drops the trust entries of `keys`.
pub fn forget(config: &Config, keys: &[String]) -> Result<(), CliError> {
    let failed = |e: String| CliError::Failed(format!("the hooks are removed; their trust entries stay: {e}"));
    let codex = find_codex(config)?;
    let mut server = AppServer::start(&codex).map_err(failed)?;
    let edits: Vec<Value> =
        keys.iter().map(|key| json!({"keyPath": state_path(key), "value": null, "mergeStrategy": "replace"})).collect();
    server.call("config/batchWrite", json!({"edits": edits})).map_err(failed)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_keys_are_quoted_as_toml_keys() {
        assert_eq!(
            state_path("/home/a b/.codex/hooks.json:stop:0:0"),
            r#"hooks.state."/home/a b/.codex/hooks.json:stop:0:0""#
        );
    }
}
