//! `select`: turns the resolved provider settings into the provider to use (SPEC §6.5).
//!
//! A mistake in the settings is a [`SelectError`] naming the setting to fix: a missing key
//! (the provider's jobs pause until credentials appear: SPEC §5.3) or anything else (an unknown
//! name, a missing command line). `auto` never fails.
//!
//! # The rule (issue 42, SPEC §6.5)
//! An API key is used only for the provider the user named for VibeLearn
//! (`VIBELEARN_PROVIDER`, in the environment or settings.json). `auto` — the default — is the
//! `claude` CLI when one is on PATH and answers its try (the user's Claude plan), else
//! `offline`; it never spends a key, wherever the key came from: the environment of a hook,
//! of the agent that started the worker (Gemini CLI loads `GEMINI_API_KEY` for itself; Claude
//! Code passes its `ANTHROPIC_API_KEY` on), of the user's shell, or settings.json. Before, `auto`
//! took the first key it found, so the provider — and who was billed, and where the user's code
//! went — depended on which process happened to start the worker. A key present but unused is
//! named ([`ProviderSettings::unused_keys`]) with the command that turns it on.

use std::path::PathBuf;

use super::openai::is_openai_default;
use super::{Anthropic, CommandProvider, Gemini, OpenAiCompatible, Provider};

/// What `select` reads: the config module fills it once from defaults, `settings.json` and the
/// environment; nothing here reads the environment itself (STYLE #6).
#[derive(Clone, Default)]
pub struct ProviderSettings {
    /// `auto`, `anthropic`, `openai`, `openrouter`, `gemini`, `command` or `offline`.
    pub provider: String,
    pub anthropic_key: Option<String>,
    pub openai_key: Option<String>,
    pub gemini_key: Option<String>,
    pub openrouter_key: Option<String>,
    pub anthropic_model: String,
    pub openai_model: String,
    pub gemini_model: String,
    pub openrouter_model: String,
    pub anthropic_base_url: String,
    pub openai_base_url: String,
    pub openrouter_base_url: String,
    pub gemini_base_url: String,
    /// `VIBELEARN_LLM_COMMAND`; empty counts as unset.
    pub llm_command: Option<String>,
    /// The `PATH` searched for the `claude` CLI by `auto`.
    pub path_var: Option<String>,
    /// Where `provider` was named: [`CHOSEN_IN_ENV`], [`CHOSEN_IN_FILE`], or "" when it is
    /// the default (`auto`).
    pub chosen_in: &'static str,
}

/// [`ProviderSettings::chosen_in`] of a provider named in the environment.
pub const CHOSEN_IN_ENV: &str = "VIBELEARN_PROVIDER";
/// ... named in settings.json.
pub const CHOSEN_IN_FILE: &str = "settings.json";
/// What chose the `claude` CLI (`auto` found it, and it answered or its try is under way).
pub const CHOSEN_BY_CLI: &str = "claude CLI";
/// What chose offline when nothing was named and no `claude` CLI answered: `auto`'s default.
pub const CHOSEN_BY_DEFAULT: &str = "default";

/// The API key settings, in the order the notes name them.
const KEY_SETTINGS: [&str; 4] = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY"];

impl ProviderSettings {
    /// Whether no provider was named: `auto`, which spends no key.
    pub fn is_auto(&self) -> bool {
        matches!(self.provider.trim().to_ascii_lowercase().as_str(), "" | "auto")
    }

    /// The key settings that hold a key `select` leaves unused (under `auto`, every one that
    /// is set), with the provider each would choose.
    pub fn unused_keys(&self) -> Vec<(&'static str, &'static str)> {
        if !self.is_auto() {
            return Vec::new();
        }
        let keys = [&self.anthropic_key, &self.openai_key, &self.gemini_key, &self.openrouter_key];
        let providers = ["anthropic", "openai", "gemini", "openrouter"];
        KEY_SETTINGS
            .into_iter()
            .zip(providers)
            .zip(keys)
            .filter(|(_, key)| given(key).is_some())
            .map(|(named, _)| named)
            .collect()
    }

    /// What made `choice` (from [`select`] of these settings), for people and `/api/health`:
    /// where the provider was named, or what `auto` found.
    pub fn chosen_by(&self, choice: &Result<Selected, SelectError>) -> &'static str {
        match choice {
            _ if !self.is_auto() => self.chosen_in,
            // A CLI whose last try failed is not used: offline is, by default. Never waits.
            Ok(Selected::Remote(cli)) if cli.known_unavailable().is_none() => CHOSEN_BY_CLI,
            _ => CHOSEN_BY_DEFAULT,
        }
    }

    /// Everything that decides which remote is called and with which credentials, as one
    /// text to fingerprint (a hash of it tells new credentials from old; never shown).
    pub fn credentials_text(&self) -> String {
        let fields = [
            Some(&self.provider),
            self.anthropic_key.as_ref(),
            self.openai_key.as_ref(),
            self.gemini_key.as_ref(),
            self.openrouter_key.as_ref(),
            Some(&self.anthropic_base_url),
            Some(&self.openai_base_url),
            Some(&self.openrouter_base_url),
            Some(&self.gemini_base_url),
            self.llm_command.as_ref(),
        ];
        fields.iter().map(|f| f.map_or("", |v| v.as_str())).collect::<Vec<_>>().join("\n")
    }
}

/// Keys show only as set or unset: settings get logged, keys must not be (SPEC §2).
impl std::fmt::Debug for ProviderSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = |k: &Option<String>| if given(k).is_some() { "set" } else { "unset" };
        f.debug_struct("ProviderSettings")
            .field("provider", &self.provider)
            .field("anthropic_key", &key(&self.anthropic_key))
            .field("openai_key", &key(&self.openai_key))
            .field("gemini_key", &key(&self.gemini_key))
            .field("openrouter_key", &key(&self.openrouter_key))
            .field("anthropic_model", &self.anthropic_model)
            .field("openai_model", &self.openai_model)
            .field("gemini_model", &self.gemini_model)
            .field("openrouter_model", &self.openrouter_model)
            .field("anthropic_base_url", &self.anthropic_base_url)
            .field("openai_base_url", &self.openai_base_url)
            .field("openrouter_base_url", &self.openrouter_base_url)
            .field("gemini_base_url", &self.gemini_base_url)
            .field("llm_command", &self.llm_command.as_ref().map(|_| "set"))
            .field("path_var", &self.path_var)
            .field("chosen_in", &self.chosen_in)
            .finish()
    }
}

/// The outcome of `select`. The offline provider is not a `Provider` (it works from static
/// analysis signals, not a prompt), so it is its own variant.
pub enum Selected {
    Offline,
    Remote(Box<dyn Provider>),
}

/// What an unusable provider falls back to (see [`Selected::usable`]).
static OFFLINE: Selected = Selected::Offline;

impl Selected {
    /// The choice a job acts on: offline when the provider's check before use failed (the
    /// `claude` CLI that `auto` found but that is not logged in). Waits for that check.
    pub fn usable(&self) -> &Selected {
        match self {
            Selected::Remote(provider) if provider.unavailable().is_some() => &OFFLINE,
            chosen => chosen,
        }
    }

    /// The provider to ask directly, outside the job runner (the quiz's rubric grader): the
    /// remote one, made to check first as a job does ([`Selected::usable`]), so a `claude` CLI
    /// that `auto` found but that is not logged in is tried once, on the probe's back-off, and
    /// not launched for every answer. `None` for offline.
    pub fn into_checked(self) -> Option<Box<dyn Provider>> {
        match self {
            Selected::Remote(provider) => Some(Box::new(Checked(provider))),
            Selected::Offline => None,
        }
    }

    /// `offline` or the provider's name, for logs and `vl status`.
    pub fn name(&self) -> &'static str {
        match self {
            Selected::Offline => "offline",
            Selected::Remote(provider) => provider.name(),
        }
    }
}

/// A provider that answers only while its check before use passes ([`Selected::into_checked`]).
struct Checked(Box<dyn Provider>);

impl Provider for Checked {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn complete(&self, request: &super::LlmRequest, timeout: std::time::Duration) -> Result<String, super::LlmError> {
        match self.0.unavailable() {
            Some(why) => Err(super::LlmError::Auth(why)),
            None => self.0.complete(request, timeout),
        }
    }

    fn model(&self) -> &str {
        self.0.model()
    }

    fn description(&self) -> String {
        self.0.description()
    }

    fn unavailable(&self) -> Option<String> {
        self.0.unavailable()
    }

    fn known_unavailable(&self) -> Option<String> {
        self.0.known_unavailable()
    }

    fn start_check(&self) {
        self.0.start_check()
    }
}

/// Why `select` found no provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectError {
    /// The named provider needs a key and none is set: a credentials problem, like a 401.
    MissingKey { provider: &'static str, message: String },
    /// Any other mistake in the settings.
    Invalid(String),
}

impl SelectError {
    /// The provider whose key is missing, if that is the problem.
    pub fn provider_without_key(&self) -> Option<&'static str> {
        match self {
            SelectError::MissingKey { provider, .. } => Some(provider),
            SelectError::Invalid(_) => None,
        }
    }
}

impl std::fmt::Display for SelectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SelectError::MissingKey { message, .. } | SelectError::Invalid(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for SelectError {}

/// Picks the provider named by `settings.provider` (an empty name means `auto`).
pub fn select(settings: &ProviderSettings) -> Result<Selected, SelectError> {
    let s = settings;
    let remote = |p: Box<dyn Provider>| Ok(Selected::Remote(p));
    match s.provider.trim().to_ascii_lowercase().as_str() {
        "" | "auto" => Ok(auto(s)),
        "anthropic" => remote(Box::new(anthropic(s, need(&s.anthropic_key, "anthropic", "ANTHROPIC_API_KEY")?))),
        "openai" => remote(Box::new(openai(s)?)),
        "gemini" => remote(Box::new(gemini(s, need(&s.gemini_key, "gemini", "GEMINI_API_KEY")?))),
        "openrouter" => remote(Box::new(openrouter(s, need(&s.openrouter_key, "openrouter", "OPENROUTER_API_KEY")?))),
        "command" => match given(&s.llm_command) {
            Some(line) => remote(Box::new(CommandProvider::new(line))),
            None => Err(SelectError::Invalid("VIBELEARN_PROVIDER=command but VIBELEARN_LLM_COMMAND is not set".into())),
        },
        "offline" => Ok(Selected::Offline),
        other => Err(SelectError::Invalid(format!(
            "VIBELEARN_PROVIDER={other:?} is not one of auto, anthropic, openai, openrouter, \
             gemini, command, offline"
        ))),
    }
}

/// The `claude` CLI on PATH, else offline; never a key (see the module's rule).
fn auto(s: &ProviderSettings) -> Selected {
    match s.path_var.as_deref().and_then(|p| find_executable(p, "claude")) {
        // Tried once before it is relied on: a CLI that is not logged in must not leave the
        // user without questions (SPEC §6.5). It runs without any API key in its environment,
        // which it would otherwise bill instead of the user's Claude login.
        Some(claude) => {
            Selected::Remote(Box::new(CommandProvider::claude_cli(&claude).without_env(&KEY_SETTINGS).tried_first()))
        }
        None => Selected::Offline,
    }
}

fn anthropic(s: &ProviderSettings, key: &str) -> Anthropic {
    Anthropic::new(&s.anthropic_base_url, key, &s.anthropic_model)
}

fn gemini(s: &ProviderSettings, key: &str) -> Gemini {
    Gemini::new(&s.gemini_base_url, key, &s.gemini_model)
}

fn openrouter(s: &ProviderSettings, key: &str) -> OpenAiCompatible {
    OpenAiCompatible::openrouter(&s.openrouter_base_url, key, &s.openrouter_model)
}

/// `openai` needs a key only for OpenAI itself: a local server (Ollama, LM Studio, vLLM) at a
/// custom base URL usually has none.
fn openai(s: &ProviderSettings) -> Result<OpenAiCompatible, SelectError> {
    let key = match given(&s.openai_key) {
        Some(key) => key,
        None if !is_openai_default(&s.openai_base_url) => "",
        None => {
            return Err(SelectError::MissingKey {
                provider: "openai",
                message: "VIBELEARN_PROVIDER=openai but OPENAI_API_KEY is not set (a key is \
                          optional only with a custom VIBELEARN_OPENAI_BASE_URL)"
                    .to_string(),
            });
        }
    };
    Ok(OpenAiCompatible::openai(&s.openai_base_url, key, &s.openai_model))
}

/// A setting's value, with blank counting as unset (an empty `KEY=` in a shell profile).
fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

fn need<'a>(value: &'a Option<String>, provider: &'static str, setting: &str) -> Result<&'a str, SelectError> {
    given(value).ok_or_else(|| SelectError::MissingKey {
        provider,
        message: format!("VIBELEARN_PROVIDER={provider} but {setting} is not set"),
    })
}

/// The first executable file named `name` in a `PATH`-style list (see
/// [`crate::platform::find_executable`]: `;` and `PATHEXT` on Windows).
fn find_executable(path_var: &str, name: &str) -> Option<PathBuf> {
    crate::platform::find_executable(path_var, name)
}
