//! `vl login <api-key> | --status | --logout`: the upstream account key in `<data>/config.json`
//! (SPEC §8), a JSON object whose `api_key` the sync job reads at every run.
//!
//! The file is written with mode 0600 from its creation ([`write_private_file`]); other fields
//! in it are kept. The key is never printed whole, only masked. `-` reads the key from stdin,
//! which keeps it out of the shell's history. A `config.json` that is not a JSON object is left
//! alone with an error rather than overwritten: it may hold something the user wants.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use serde_json::{Map, Value};

use super::backend::CliError;
use crate::cli::args::LoginArgs;
use crate::config::{Config, mask_secret};
use crate::platform::write_private_file;

pub fn run(args: LoginArgs, config: &Config) -> ExitCode {
    let path = config.data_dir.join("config.json");
    let result = if args.status {
        status(&path)
    } else if args.logout {
        logout(&path)
    } else {
        match args.key.as_deref() {
            Some("-") => read_stdin_key().and_then(|key| login(&path, &key)),
            Some(key) => login(&path, key),
            None => Err(CliError::Usage("give an API key, --status or --logout".into())),
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vl login: {e}");
            e.exit_code()
        }
    }
}

fn read_stdin_key() -> Result<String, CliError> {
    let mut key = String::new();
    std::io::stdin().read_to_string(&mut key).map_err(|e| CliError::caused("cannot read the key from stdin", e))?;
    Ok(key)
}

/// Checks the shape of a key: non-empty, one token of printable ASCII.
pub fn validate_key(raw: &str) -> Result<&str, CliError> {
    let key = raw.trim();
    if key.is_empty() {
        return Err(CliError::Usage("the API key is empty".into()));
    }
    if !key.chars().all(|c| c.is_ascii_graphic()) {
        return Err(CliError::Usage("an API key is one word of printable ASCII; check what was pasted".into()));
    }
    Ok(key)
}

fn login(path: &Path, raw: &str) -> Result<(), CliError> {
    let key = validate_key(raw)?;
    let mut object = read_config(path)?.unwrap_or_default();
    object.insert("api_key".into(), Value::String(key.to_owned()));
    save(path, &object)?;
    println!("logged in: key {} stored in {} (readable only by you)", mask_secret(key), path.display());
    println!("the next sync uploads your sessions; `vl sync` runs one now");
    Ok(())
}

fn status(path: &Path) -> Result<(), CliError> {
    match crate::jobs::sync::api_key(path.parent().unwrap_or(Path::new("."))) {
        Some(key) => println!("logged in with key {} ({})", mask_secret(&key), path.display()),
        None => println!("not logged in; sessions are analysed locally and not synced (`vl login <api-key>`)"),
    }
    Ok(())
}

fn logout(path: &Path) -> Result<(), CliError> {
    let Some(mut object) = read_config(path)? else {
        println!("not logged in; nothing to remove");
        return Ok(());
    };
    if object.remove("api_key").is_none() {
        println!("not logged in; nothing to remove");
        return Ok(());
    }
    save(path, &object)?;
    println!("logged out: the key was removed from {}", path.display());
    Ok(())
}

/// The config object, `None` when the file does not exist.
fn read_config(path: &Path) -> Result<Option<Map<String, Value>>, CliError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(CliError::caused(format!("cannot read {}", path.display()), e)),
    };
    if text.trim().is_empty() {
        return Ok(Some(Map::new()));
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(object)) => Ok(Some(object)),
        _ => {
            Err(CliError::Failed(format!("{} is not a JSON object; fix or remove it, then try again", path.display())))
        }
    }
}

fn save(path: &Path, object: &Map<String, Value>) -> Result<(), CliError> {
    if let Some(dir) = path.parent() {
        crate::platform::create_private_dir(dir)
            .map_err(|e| CliError::caused(format!("cannot create {}", dir.display()), e))?;
    }
    let text = serde_json::to_string_pretty(object).unwrap_or_else(|_| "{}".into()) + "\n";
    write_private_file(path, &text).map_err(|e| CliError::caused(format!("cannot write {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_one_printable_word() {
        assert_eq!(validate_key("  vl_live_abc123\n").ok(), Some("vl_live_abc123"));
        assert!(matches!(validate_key(""), Err(CliError::Usage(_))));
        assert!(matches!(validate_key("two words"), Err(CliError::Usage(_))));
        assert!(matches!(validate_key("clé"), Err(CliError::Usage(_))));
    }
}
