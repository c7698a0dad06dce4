//! `vl provider [NAME]`: the one provider decision (`jobs::decide`), shown, and changed in
//! settings.json — the command the "key set but not used" note names (issue 42).
//!
//! Choosing a provider that needs a key whose value only this shell has copies the key into
//! settings.json (owner-only, as the data dir is): a worker is started by whichever agent's
//! hook runs first, and each agent has its own environment, so a key left in one shell's
//! environment would make the provider depend on who started the worker — the very defect
//! the rule removes. The file is edited in place (the JSON CST editor install uses), so the
//! user's other settings and formatting stay as they were.

use std::process::ExitCode;

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstRootNode};

use crate::config::{Config, Origin};

/// The names `VIBELEARN_PROVIDER` takes (SPEC §6.5).
pub const PROVIDERS: [&str; 7] = ["auto", "anthropic", "openai", "gemini", "openrouter", "command", "offline"];

/// `vl provider` (show) or `vl provider NAME` (choose).
pub fn run(name: Option<&str>, config: &Config) -> ExitCode {
    let Some(name) = name else {
        print_decision(config);
        return ExitCode::SUCCESS;
    };
    let name = name.trim().to_ascii_lowercase();
    if !PROVIDERS.contains(&name.as_str()) {
        eprintln!("vl provider: {name:?} is not one of {}", PROVIDERS.join(", "));
        return ExitCode::FAILURE;
    }
    match choose(&name, config) {
        Ok(lines) => {
            lines.iter().for_each(|line| println!("{line}"));
            print_decision(&Config::load());
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("vl provider: {why}; nothing changed");
            ExitCode::FAILURE
        }
    }
}

/// The decision for these settings, what made it, and the keys it leaves unused.
fn print_decision(config: &Config) {
    let choice = crate::jobs::decide(config);
    let source = crate::jobs::provider_source(config, &choice);
    println!(
        "LLM provider: {} — {} (chosen by {source})",
        crate::jobs::describe_provider(&choice),
        crate::jobs::provider_cost(&choice)
    );
    // What a session costs in tokens and what the budget fits (issue 43 §5).
    if let Ok(crate::llm::Selected::Remote(_)) = &choice {
        let usage = crate::jobs::llm_usage::Usage::default();
        println!("  {}", crate::jobs::llm_usage::session_cost(usage, config.llm_daily_tokens()));
    }
    if let Some(note) = crate::jobs::provider_note(config) {
        println!("  {note}");
    }
}

/// Writes `VIBELEARN_PROVIDER=name` (and the key from this environment, when only it has one)
/// into settings.json; returns what to tell the user.
fn choose(name: &str, config: &Config) -> Result<Vec<String>, String> {
    config.ensure_settings_file();
    let path = config.data_dir.join("settings.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut pairs = vec![("VIBELEARN_PROVIDER", name.to_owned())];
    let mut told = vec![format!("VIBELEARN_PROVIDER={name} written to {}", path.display())];
    // A key in the file already, or nowhere, stays as it is: the decision printed next says
    // which (a key is optional for an OpenAI-compatible server of your own).
    let from_env = crate::config::key_setting_of(name)
        .filter(|setting| config.origin(setting) == Origin::Environment)
        .and_then(|setting| Some((setting, config.optional(setting)?)));
    if let Some((setting, key)) = from_env {
        pairs.push((setting, key.to_owned()));
        told.push(format!(
            "{setting} copied from this environment into settings.json (readable only by you), so the \
             worker finds it whichever agent starts it"
        ));
    }
    if config.origin("VIBELEARN_PROVIDER") == Origin::Environment {
        told.push(format!(
            "note: VIBELEARN_PROVIDER={} in this environment overrides settings.json here",
            config.get("VIBELEARN_PROVIDER")
        ));
    }
    let edited = set_strings(&text, &pairs).map_err(|e| format!("{} is not valid JSON ({e})", path.display()))?;
    crate::platform::write_private_file(&path, &edited).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    told.push(
        "a running worker keeps the provider it started with: restart it (`vl worker stop`, then `vl worker start`)"
            .into(),
    );
    Ok(told)
}

/// `text` (a JSON object) with each `(name, value)` set as a string, everything else kept.
fn set_strings(text: &str, pairs: &[(&str, String)]) -> Result<String, String> {
    let root = CstRootNode::parse(text, &ParseOptions::default()).map_err(|e| e.to_string())?;
    let object = root.object_value_or_set();
    for (name, value) in pairs {
        match object.get(name) {
            Some(prop) => prop.set_value(CstInputValue::String(value.clone())),
            None => {
                object.append(name, CstInputValue::String(value.clone()));
            }
        }
    }
    Ok(root.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_choice_changes_only_its_own_lines() {
        let text = "{\n  \"VIBELEARN_WORKER_PORT\": \"40000\",\n  \"VIBELEARN_PROVIDER\": \"auto\"\n}\n";
        let edited = set_strings(text, &[("VIBELEARN_PROVIDER", "gemini".into())]).unwrap();
        assert_eq!(edited, text.replace("\"auto\"", "\"gemini\""));
        let added = set_strings(&edited, &[("GEMINI_API_KEY", "k-1".into())]).unwrap();
        let value: serde_json::Value = serde_json::from_str(&added).unwrap();
        assert_eq!(value["GEMINI_API_KEY"], "k-1");
        assert_eq!(value["VIBELEARN_WORKER_PORT"], "40000");
        assert!(set_strings("{not json", &[]).is_err());
    }
}
