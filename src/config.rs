//! Settings: the data directory, `settings.json`, environment overrides, and secret redaction.
//!
//! Resolution happens once, here: built-in default < `settings.json` < environment variable of
//! the same name (SPEC §2). Nothing else in the crate reads `std::env`; components receive
//! their own small config from the resolved [`Config`]. A missing settings file is created with
//! the defaults, silently (a hook's stdout must carry only its JSON line); a corrupt one is
//! ignored with a warning kept in [`Config::settings_warning`] for the log and `worker status`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::db::Synchronous;

/// Every setting with its default (SPEC §2). Keys without a default value are optional.
pub const DEFAULTS: &[(&str, &str)] = &[
    ("VIBELEARN_WORKER_HOST", "127.0.0.1"),
    ("VIBELEARN_WORKER_PORT", "37778"),
    ("VIBELEARN_LOG_LEVEL", "INFO"),
    ("VIBELEARN_SKIP_TOOLS", "ListMcpResourcesTool,SlashCommand,Skill,TodoWrite,AskUserQuestion"),
    ("VIBELEARN_EXCLUDED_PROJECTS", ""),
    ("VIBELEARN_PROVIDER", "auto"),
    ("VIBELEARN_ANTHROPIC_MODEL", "claude-sonnet-4-5"),
    ("VIBELEARN_OPENAI_MODEL", "gpt-4o-mini"),
    ("VIBELEARN_GEMINI_MODEL", "gemini-2.0-flash"),
    ("VIBELEARN_OPENROUTER_MODEL", "anthropic/claude-sonnet-4.5"),
    ("VIBELEARN_ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
    ("VIBELEARN_OPENAI_BASE_URL", "https://api.openai.com/v1"),
    ("VIBELEARN_OPENROUTER_BASE_URL", "https://openrouter.ai/api/v1"),
    ("VIBELEARN_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com/v1beta"),
    ("VIBELEARN_LLM_COMMAND", ""),
    ("VIBELEARN_LLM_TIMEOUT_SECS", "50"),
    ("VIBELEARN_RUNNER_THREADS", "4"),
    ("VIBELEARN_SYNCHRONOUS", "FULL"),
    ("VIBELEARN_RETENTION_SUCCEEDED_HOURS", "24"),
    ("VIBELEARN_RETENTION_DEAD_DAYS", "30"),
    // Days an analysed session keeps its raw captures after its last event (0 = forever); its
    // questions and what re-analysis reads are kept regardless (`crate::retention`).
    ("VIBELEARN_CAPTURE_RETENTION_DAYS", "30"),
    ("VIBELEARN_AUTO_SYNC", "true"),
    // The SessionStart hook's one-line "questions due" message (false turns it off).
    ("VIBELEARN_SESSION_START_MESSAGE", "true"),
    ("VIBELEARN_SYNC_SNIPPETS", "true"),
    ("VIBELEARN_API_URL", "https://vibelearn.dev"),
    // Keyless session events from the original plugin's hook client (SPEC §4). Off: with it on,
    // any process on this machine can add prompts and observations to your sessions (it still
    // cannot read anything back, and the worker opens no file for such an event).
    (ACCEPT_UNKEYED_EVENTS, "false"),
    // The worker's LLM tokens a day (input and output, all providers); 0 = no budget. When
    // spent, the provider pauses until the next day (UTC) or `vl jobs resume` (SPEC §6.5).
    // A working day of large sessions (`jobs::llm_usage::DEFAULT_DAILY_TOKENS`, issue 43 §5).
    ("VIBELEARN_LLM_DAILY_TOKENS", "1000000"),
    // The learning loop (SPEC §7).
    ("VIBELEARN_DESIRED_RETENTION", "0.9"),
    ("VIBELEARN_NEW_PER_DAY", "20"),
    ("VIBELEARN_LEECH_THRESHOLD", "8"),
    ("VIBELEARN_EASY_SECS", "8"),
    // The local hour the learner's day begins (Anki's rollover), in the system time zone.
    ("VIBELEARN_DAY_STARTS_AT", "4"),
];

/// Debug builds only: the quiz's clock (see [`Config::now_ms`]).
#[cfg(debug_assertions)]
pub const DEBUG_NOW: &str = "VIBELEARN_DEBUG_NOW_MS";

/// Settings only a debug build reads from the environment.
fn debug_keys() -> Vec<String> {
    #[cfg(debug_assertions)]
    return vec![DEBUG_NOW.to_owned()];
    #[cfg(not(debug_assertions))]
    return Vec::new();
}

/// The setting that lets keyless session events in (see [`DEFAULTS`]).
pub const ACCEPT_UNKEYED_EVENTS: &str = "VIBELEARN_ACCEPT_UNKEYED_EVENTS";

/// Keys read from the environment or settings but never written to the settings file.
pub const SECRET_KEYS: &[&str] = &["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY"];

/// The setting holding the API key of `provider` (`anthropic` → `ANTHROPIC_API_KEY`); `None`
/// for the providers without one (`command`, `offline`, `auto`).
pub fn key_setting_of(provider: &str) -> Option<&'static str> {
    match provider.trim().to_ascii_lowercase().as_str() {
        "anthropic" => Some("ANTHROPIC_API_KEY"),
        "openai" => Some("OPENAI_API_KEY"),
        "gemini" => Some("GEMINI_API_KEY"),
        "openrouter" => Some("OPENROUTER_API_KEY"),
        _ => None,
    }
}

/// What a worker started by this process may inherit of its environment (issue 42). An
/// allowlist, not a list of what to drop: the agent whose hook starts the worker (Claude Code,
/// Cursor, Gemini CLI, Codex, Copilot CLI) runs it with its own session variables and often
/// with API keys it loaded for itself (Gemini CLI reads `~/.gemini/.env`), and the list of
/// such variables grows with every agent release. What passes: what any program needs to run
/// (paths, locale, time zone, temp folder, the Windows system folders), what a network call
/// needs (proxies, extra CA certificates), the `claude` CLI's own config folder (its login),
/// and VibeLearn's settings. Not its own nesting marker: a worker is never inside an LLM call.
const WORKER_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "USERNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "CLAUDE_CONFIG_DIR",
    "RUST_BACKTRACE",
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "USERPROFILE",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
    "PROGRAMFILES",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
];

/// Name prefixes that pass the same way: VibeLearn's settings and the locale's categories.
const WORKER_ENV_PREFIXES: &[&str] = &["VIBELEARN_", "LC_"];

/// The environment a worker started by this process gets: [`WORKER_ENV`] and its prefixes
/// (names compared without case, as Windows does), plus the API key of the provider the user
/// named in `VIBELEARN_PROVIDER` (`provider`, after precedence): the one key the worker may
/// use. Every other key stays behind, so a worker is on the same provider whichever process
/// started it.
fn worker_env(env: &dyn Env, provider: &str) -> Vec<(String, String)> {
    let chosen_key = key_setting_of(provider);
    let keep = |name: &str| {
        let upper = name.to_ascii_uppercase();
        upper != crate::llm::CHILD_MARKER_ENV
            && (WORKER_ENV.contains(&upper.as_str())
                || crate::platform::ESSENTIAL_ENV.iter().any(|e| e.eq_ignore_ascii_case(name))
                || name.eq_ignore_ascii_case(crate::platform::HOME_ENV)
                || WORKER_ENV_PREFIXES.iter().any(|p| upper.starts_with(p))
                || chosen_key == Some(upper.as_str()))
    };
    env.vars_where(&keep)
}

/// Settings of the job kinds whose timeouts can be overridden (`VIBELEARN_TIMEOUT_<KIND>_SECS`).
pub const TIMEOUT_PREFIX: &str = "VIBELEARN_TIMEOUT_";

/// The resolved configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub data_dir: PathBuf,
    pub home: Option<PathBuf>,
    /// Every setting after precedence, keyed by its full name.
    values: BTreeMap<String, String>,
    /// Why settings.json was ignored, and which numbers were out of range and clamped, if any:
    /// logged by the worker and shown by `vl worker status` and `/api/health`.
    pub settings_warning: Option<String>,
    /// `PATH`, for finding the `claude` CLI when the provider is `auto`.
    pub path_var: Option<String>,
    /// Set when this process runs inside VibeLearn's own LLM call (`VIBELEARN_LLM_CHILD`).
    pub llm_child: bool,
    /// The terminal's width when the shell exports `COLUMNS`, for the CLI's tables.
    pub columns: Option<usize>,
    /// The user's login shell (`SHELL`), for the PATH line `vl install` prints.
    pub shell: Option<String>,
    /// `TZ` is set: the time zone is jiff's to read from it ([`Config::learner_day`]).
    tz_set: bool,
    /// Where each setting's value came from (SPEC §2's precedence): what the provider
    /// decision says it was chosen by (issue 42).
    origins: BTreeMap<String, Origin>,
    /// The user key and the admin token, each read from its file at most once per process and
    /// shared by every clone ([`Config::user_key`], [`Config::admin_token`]).
    key_files: std::sync::Arc<KeyFiles>,
}

/// The file names of the two secrets in the data dir (SPEC §4).
pub const USER_KEY_FILE: &str = "worker.key";
pub const ADMIN_TOKEN_FILE: &str = "admin.token";

/// The secrets' files, read lazily and kept once read: a hook that only posts reads the key
/// once and the admin token never; the worker fills both at start from what it just made. A
/// file that is missing (no worker has made it yet), loose or unreadable is not kept, so a
/// later ask reads it again (after `vl worker start` made it).
#[derive(Debug, Default)]
struct KeyFiles {
    user: std::sync::OnceLock<String>,
    admin: std::sync::OnceLock<String>,
}

/// Where a setting's value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Nothing set it: the built-in default.
    Default,
    /// `settings.json` in the data dir.
    SettingsFile,
    /// The environment of this process.
    Environment,
}

/// A source of environment variables: `std::env::var` in production, a map in tests.
pub trait Env {
    fn get(&self, key: &str) -> Option<String>;
    /// The names of the set variables that start with `prefix`.
    fn keys_starting_with(&self, prefix: &str) -> Vec<String>;
    /// Every set variable whose name `keep` accepts, with its value.
    fn vars_where(&self, keep: &dyn Fn(&str) -> bool) -> Vec<(String, String)>;
}

/// The process environment. The only reader of `std::env` in the crate.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn get(&self, key: &str) -> Option<String> {
        std::env::var(key).ok().filter(|v| !v.is_empty())
    }

    fn keys_starting_with(&self, prefix: &str) -> Vec<String> {
        std::env::vars_os().filter_map(|(k, _)| k.into_string().ok()).filter(|k| k.starts_with(prefix)).collect()
    }

    fn vars_where(&self, keep: &dyn Fn(&str) -> bool) -> Vec<(String, String)> {
        // A name or value that is not Unicode is left out: nothing VibeLearn passes on is.
        std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .filter(|(k, _)| keep(k))
            .collect()
    }
}

impl Env for BTreeMap<String, String> {
    fn keys_starting_with(&self, prefix: &str) -> Vec<String> {
        self.keys().filter(|k| k.starts_with(prefix)).cloned().collect()
    }

    fn get(&self, key: &str) -> Option<String> {
        BTreeMap::get(self, key).cloned()
    }

    fn vars_where(&self, keep: &dyn Fn(&str) -> bool) -> Vec<(String, String)> {
        self.iter().filter(|(k, _)| keep(k)).map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}

/// Expands a leading `~` (`~/…`, or `~\…` as Windows users write it) with the home directory.
pub fn expand_home(raw: &str, home: Option<&Path>) -> PathBuf {
    match (raw.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with(['/', '\\']) => {
            home.join(rest.trim_start_matches(['/', '\\']))
        }
        _ => PathBuf::from(raw),
    }
}

impl Config {
    /// Resolves the configuration from the process environment.
    pub fn load() -> Config {
        Config::resolve(&ProcessEnv)
    }

    /// Resolves the configuration from `env`; creates the data dir and settings file if needed.
    pub fn resolve(env: &dyn Env) -> Config {
        let home = crate::platform::home_dir(|name| env.get(name));
        let data_dir = match env.get("VIBELEARN_DATA_DIR") {
            Some(dir) => expand_home(&dir, home.as_deref()),
            None => home.clone().unwrap_or_else(|| PathBuf::from(".")).join(".vibelearn"),
        };
        let mut values: BTreeMap<String, String> =
            DEFAULTS.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let mut in_file: Vec<String> = Vec::new();
        let settings_warning = match read_settings_file(&data_dir.join("settings.json")) {
            Ok(Some(file)) => {
                in_file = file.keys().cloned().collect();
                values.extend(file);
                None
            }
            Ok(None) => None,
            Err(warning) => Some(warning),
        };
        let env_keys: Vec<String> = values
            .keys()
            .cloned()
            .chain(SECRET_KEYS.iter().map(|k| (*k).to_owned()))
            // Per-kind timeouts (`VIBELEARN_TIMEOUT_<KIND>_SECS`) by their prefix: the config
            // need not know the job kinds (they live in `jobs`, above it).
            .chain(env.keys_starting_with(TIMEOUT_PREFIX))
            .chain(debug_keys())
            .collect();
        let mut origins: BTreeMap<String, Origin> =
            in_file.into_iter().map(|key| (key, Origin::SettingsFile)).collect();
        for key in env_keys {
            if let Some(value) = env.get(&key) {
                values.insert(key.clone(), value);
                origins.insert(key, Origin::Environment);
            }
        }
        let clamped = clamp_numbers(&mut values);
        let settings_warning = match (settings_warning, clamped.is_empty()) {
            (warning, true) => warning,
            (None, false) => Some(clamped.join("; ")),
            (Some(warning), false) => Some(format!("{warning}; {}", clamped.join("; "))),
        };
        let llm_child = env.get(crate::llm::CHILD_MARKER_ENV).is_some();
        let columns = env.get("COLUMNS").and_then(|c| c.trim().parse().ok()).filter(|c: &usize| *c >= 40);
        Config {
            data_dir,
            home,
            values,
            settings_warning,
            path_var: env.get("PATH"),
            llm_child,
            columns,
            shell: env.get("SHELL"),
            tz_set: env.get("TZ").is_some(),
            origins,
            key_files: std::sync::Arc::default(),
        }
    }

    /// The user key (`<data>/worker.key`), read once per process; `None` when there is none
    /// yet, or it is loose or unreadable (logged once).
    pub fn user_key(&self) -> Option<&str> {
        self.key_file(&self.key_files.user, USER_KEY_FILE)
    }

    /// The admin token (`<data>/admin.token`), the same way.
    pub fn admin_token(&self) -> Option<&str> {
        self.key_file(&self.key_files.admin, ADMIN_TOKEN_FILE)
    }

    fn key_file<'a>(&'a self, cell: &'a std::sync::OnceLock<String>, name: &str) -> Option<&'a str> {
        if let Some(key) = cell.get() {
            return Some(key);
        }
        let path = self.data_dir.join(name);
        match crate::platform::read_private_file(&path) {
            Ok(Some(text)) if !text.trim().is_empty() => Some(cell.get_or_init(|| text.trim().to_owned())),
            Ok(_) => None,
            Err(e) => {
                log::warn!(target: "config", "{e}");
                None
            }
        }
    }

    /// The same config with both secrets known (the worker, which has just read or made the
    /// files): nothing reads them again.
    pub fn with_keys(mut self, user_key: String, admin_token: String) -> Config {
        let files = KeyFiles::default();
        let _ = files.user.set(user_key);
        let _ = files.admin.set(admin_token);
        self.key_files = std::sync::Arc::new(files);
        self
    }

    /// A setting's value after precedence ("" when unset).
    /// The environment a worker this process starts is given ([`worker_env`] of this
    /// process's own environment, with the provider after precedence): the user's, without the
    /// session variables of the agent whose hook runs us. Read when a worker is started, not
    /// at every resolve: a hook that only posts never needs it, and the pass over the
    /// environment was 5 % of such a hook (57,000 instructions, callgrind).
    pub fn worker_env(&self) -> Vec<(String, String)> {
        worker_env(&ProcessEnv, self.get("VIBELEARN_PROVIDER"))
    }

    pub fn get(&self, key: &str) -> &str {
        self.values.get(key).map(String::as_str).unwrap_or("")
    }

    /// Where a setting's value came from.
    pub fn origin(&self, key: &str) -> Origin {
        self.origins.get(key).copied().unwrap_or(Origin::Default)
    }

    /// An optional setting: `None` when unset or empty.
    pub fn optional(&self, key: &str) -> Option<&str> {
        Some(self.get(key)).filter(|v| !v.trim().is_empty())
    }

    fn number<T: std::str::FromStr>(&self, key: &str, default: T) -> T {
        self.get(key).trim().parse().unwrap_or(default)
    }

    pub fn flag(&self, key: &str) -> bool {
        !matches!(self.get(key).trim().to_ascii_lowercase().as_str(), "false" | "0" | "no" | "off")
    }

    pub fn db_path(&self) -> PathBuf {
        self.data_dir.join("vibelearn.db")
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.data_dir.join("logs")
    }

    pub fn worker_host(&self) -> &str {
        self.get("VIBELEARN_WORKER_HOST")
    }

    pub fn worker_port(&self) -> u16 {
        self.number("VIBELEARN_WORKER_PORT", 37778)
    }

    /// `http://host:port`, the base of every worker URL.
    pub fn worker_url(&self) -> String {
        format!("http://{}:{}", self.worker_host(), self.worker_port())
    }

    pub fn runner_threads(&self) -> usize {
        self.number("VIBELEARN_RUNNER_THREADS", 4).clamp(1, 64)
    }

    pub fn synchronous(&self) -> Synchronous {
        Synchronous::parse(self.get("VIBELEARN_SYNCHRONOUS")).unwrap_or(Synchronous::Full)
    }

    pub fn llm_timeout(&self) -> Duration {
        Duration::from_secs(self.number("VIBELEARN_LLM_TIMEOUT_SECS", 50).max(1))
    }

    /// A job kind's timeout: `VIBELEARN_TIMEOUT_<KIND>_SECS` or the kind's default.
    pub fn kind_timeout(&self, kind: &str, default: Duration) -> Duration {
        self.optional(&timeout_key(kind))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|secs| secs.is_finite() && *secs > 0.0)
            .map(Duration::from_secs_f64)
            .unwrap_or(default)
    }

    pub fn retention_succeeded(&self) -> Duration {
        Duration::from_secs(self.number("VIBELEARN_RETENTION_SUCCEEDED_HOURS", 24u64).saturating_mul(3600))
    }

    pub fn retention_dead(&self) -> Duration {
        Duration::from_secs(self.number("VIBELEARN_RETENTION_DEAD_DAYS", 30u64).saturating_mul(86_400))
    }

    /// `VIBELEARN_CAPTURE_RETENTION_DAYS`: how long an analysed session keeps its raw captures
    /// after its last event; 0 keeps them forever (`crate::retention`).
    pub fn capture_retention_days(&self) -> u64 {
        self.number("VIBELEARN_CAPTURE_RETENTION_DAYS", crate::retention::DEFAULT_WINDOW_DAYS)
    }

    /// `VIBELEARN_LLM_DAILY_TOKENS`: 0 means no budget.
    pub fn llm_daily_tokens(&self) -> u64 {
        self.number("VIBELEARN_LLM_DAILY_TOKENS", crate::jobs::llm_usage::DEFAULT_DAILY_TOKENS)
    }

    /// FSRS's target recall probability, clamped to Anki's 0.70–0.99.
    pub fn desired_retention(&self) -> f64 {
        let r: f64 = self.number("VIBELEARN_DESIRED_RETENTION", 0.9);
        if r.is_finite() { r.clamp(0.7, 0.99) } else { 0.9 }
    }

    /// New questions a day may introduce (0–9999).
    pub fn new_per_day(&self) -> u32 {
        self.number("VIBELEARN_NEW_PER_DAY", 20u32).min(9999)
    }

    /// Lapses that make a card a leech (1–99).
    pub fn leech_threshold(&self) -> u32 {
        self.number("VIBELEARN_LEECH_THRESHOLD", 8u32).clamp(1, 99)
    }

    /// An objective answer within this many seconds is suggested Easy (1–600).
    pub fn easy_secs(&self) -> u64 {
        self.number("VIBELEARN_EASY_SECS", 8u64).clamp(1, 600)
    }

    /// The local hour (0–23) the learner's day begins.
    pub fn day_starts_at(&self) -> u8 {
        self.number("VIBELEARN_DAY_STARTS_AT", crate::learn::day::DEFAULT_STARTS_AT).min(23)
    }

    /// The learner's days (SPEC §7) in the system time zone: with `TZ` set, `jiff` reads it
    /// itself (the one read of the environment outside this module); else the zone
    /// `/etc/localtime` names (`platform::local_time_zone`, the same zone without jiff's walk of
    /// every zone name), else jiff's own finding (macOS's and Windows' system zone).
    pub fn learner_day(&self) -> crate::learn::day::LearnerDay {
        let file = if self.tz_set { None } else { crate::platform::local_time_zone() };
        crate::learn::day::LearnerDay::new(file.unwrap_or_else(jiff::tz::TimeZone::system), self.day_starts_at())
    }

    /// The time the learning commands take as now (the quiz and its JSON API, `vl status`,
    /// `vl gaps`, the statusline and the SessionStart count). Debug builds only: `VIBELEARN_DEBUG_NOW_MS`
    /// (ms since the epoch) sets it, so `scripts/learn-sim.sh` and the learning simulation
    /// test can run weeks of days in seconds; a release build has no such setting and always
    /// reads the wall clock.
    pub fn now_ms(&self) -> crate::clock::Millis {
        use crate::clock::Clock;
        #[cfg(debug_assertions)]
        if let Some(now) = self.optional(DEBUG_NOW).and_then(|v| v.trim().parse::<i64>().ok()) {
            return now;
        }
        crate::clock::SystemClock.now_ms()
    }

    pub fn skip_tools(&self) -> Vec<String> {
        split_list(self.get("VIBELEARN_SKIP_TOOLS"))
    }

    pub fn excluded_projects(&self) -> &str {
        self.get("VIBELEARN_EXCLUDED_PROJECTS")
    }

    /// Every secret value currently configured, for [`redact`]: the API keys.
    pub fn secrets(&self) -> Vec<String> {
        SECRET_KEYS.iter().filter_map(|k| self.optional(k)).map(str::to_owned).collect()
    }

    /// The API keys with the user key and the admin token (each file read at most once per
    /// process), for intake's masking and the worker's log.
    pub fn all_secrets(&self) -> Vec<String> {
        let mut secrets = self.secrets();
        secrets.extend([self.user_key(), self.admin_token()].into_iter().flatten().map(str::to_owned));
        secrets
    }

    /// Writes settings.json with the defaults if it does not exist, and the worker's port as
    /// it runs (a port from the environment, not the default, so a later process without that
    /// variable finds the same worker). Errors are ignored: a read-only data dir still works
    /// with the defaults.
    pub fn ensure_settings_file(&self) {
        let path = self.data_dir.join("settings.json");
        if path.exists() {
            return;
        }
        let port = self.worker_port().to_string();
        let mut defaults: BTreeMap<&str, &str> = DEFAULTS.iter().copied().collect();
        defaults.insert("VIBELEARN_WORKER_PORT", &port);
        if let Ok(text) = serde_json::to_string_pretty(&defaults) {
            let _ = crate::platform::create_private_dir(&self.data_dir);
            let _ = std::fs::write(path, text + "\n");
        }
    }
}

/// The numeric settings and their sane ranges, as `(key, min, max, integer)`. A value outside
/// its range is clamped, one that is not a number falls back to the default; either way with a
/// warning, never a panic or a wrapped value (a retention of 1e20 days once turned negative in
/// milliseconds, and prune would have deleted every dead job).
const NUMERIC: &[(&str, f64, f64, bool)] = &[
    ("VIBELEARN_WORKER_PORT", 1.0, 65_535.0, true),
    ("VIBELEARN_LLM_TIMEOUT_SECS", 1.0, 3_600.0, true),
    ("VIBELEARN_RUNNER_THREADS", 1.0, 64.0, true),
    // Ten years either way: long enough for anyone, short enough for any arithmetic.
    ("VIBELEARN_RETENTION_SUCCEEDED_HOURS", 0.0, 87_600.0, true),
    ("VIBELEARN_RETENTION_DEAD_DAYS", 0.0, 3_650.0, true),
    ("VIBELEARN_CAPTURE_RETENTION_DAYS", 0.0, 3_650.0, true),
    ("VIBELEARN_LLM_DAILY_TOKENS", 0.0, 1e12, true),
    // The learning loop (SPEC §7): Anki's range for the retention.
    ("VIBELEARN_DESIRED_RETENTION", 0.7, 0.99, false),
    ("VIBELEARN_NEW_PER_DAY", 0.0, 9_999.0, true),
    ("VIBELEARN_LEECH_THRESHOLD", 1.0, 99.0, true),
    ("VIBELEARN_EASY_SECS", 1.0, 600.0, true),
    ("VIBELEARN_DAY_STARTS_AT", 0.0, 23.0, true),
];

/// The range of every `VIBELEARN_TIMEOUT_<KIND>_SECS`: a second to a day.
const KIND_TIMEOUT_RANGE: (f64, f64) = (1.0, 86_400.0);

/// Clamps the numeric settings in `values` into their ranges (see [`NUMERIC`]); returns one
/// warning per value it changed or dropped.
fn clamp_numbers(values: &mut BTreeMap<String, String>) -> Vec<String> {
    let kind_timeouts: Vec<(String, f64, f64, bool)> = values
        .keys()
        .filter(|k| k.starts_with(TIMEOUT_PREFIX) && k.ends_with("_SECS"))
        .map(|k| (k.clone(), KIND_TIMEOUT_RANGE.0, KIND_TIMEOUT_RANGE.1, false))
        .collect();
    let rows = NUMERIC.iter().map(|(k, lo, hi, int)| ((*k).to_owned(), *lo, *hi, *int)).chain(kind_timeouts);
    let mut warnings = Vec::new();
    for (key, lo, hi, integer) in rows {
        let Some(raw) = values.get(&key).map(|v| v.trim().to_owned()) else { continue };
        if raw.is_empty() {
            continue;
        }
        match raw.parse::<f64>() {
            Ok(n) if n.is_finite() && (lo..=hi).contains(&n) => {}
            Ok(n) if !n.is_nan() => {
                let clamped = n.clamp(lo, hi);
                let shown = if integer { format!("{}", clamped.trunc() as u64) } else { format!("{clamped}") };
                warnings.push(format!("{key}={raw} is outside {lo}–{hi}; using {shown}"));
                values.insert(key, shown);
            }
            _ => {
                warnings.push(format!("{key}={raw:?} is not a number; using the default"));
                match DEFAULTS.iter().find(|(k, _)| *k == key) {
                    Some((_, default)) => values.insert(key, (*default).to_owned()),
                    None => values.remove(&key),
                };
            }
        }
    }
    warnings
}

fn timeout_key(kind: &str) -> String {
    format!("{TIMEOUT_PREFIX}{}_SECS", kind.to_ascii_uppercase())
}

/// Splits a comma list, trimming entries and dropping empty ones.
pub fn split_list(raw: &str) -> Vec<String> {
    raw.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// Reads settings.json: `Ok(None)` when absent, `Err(warning)` when unreadable or corrupt.
fn read_settings_file(path: &Path) -> Result<Option<BTreeMap<String, String>>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}; using defaults", path.display())),
    };
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not valid JSON ({e}); using defaults and environment", path.display()))?;
    let object = value
        .as_object()
        .ok_or_else(|| format!("{} must hold a JSON object; using defaults and environment", path.display()))?;
    // Flat object of strings; numbers and booleans are accepted as their text.
    Ok(Some(
        object
            .iter()
            .filter_map(|(k, v)| match v {
                serde_json::Value::String(s) => Some((k.clone(), s.clone())),
                serde_json::Value::Number(n) => Some((k.clone(), n.to_string())),
                serde_json::Value::Bool(b) => Some((k.clone(), b.to_string())),
                _ => None,
            })
            .collect(),
    ))
}

/// Masks a secret for display: the first 4 and last 4 characters of long keys, nothing of
/// short ones.
pub fn mask_secret(secret: &str) -> String {
    let chars: Vec<char> = secret.chars().collect();
    if chars.len() <= 12 {
        return "****".to_owned();
    }
    let head: String = chars[..4].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

/// Replaces every occurrence of any secret in `text` by its mask.
pub fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_owned();
    for secret in secrets.iter().filter(|s| s.len() >= 8) {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), &mask_secret(secret));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn precedence_is_default_then_file_then_environment() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().to_str().unwrap();
        std::fs::write(
            dir.path().join("settings.json"),
            r#"{"VIBELEARN_WORKER_PORT":"40000","VIBELEARN_RUNNER_THREADS":"2"}"#,
        )
        .unwrap();
        let config = Config::resolve(&env(&[("VIBELEARN_DATA_DIR", data), ("VIBELEARN_RUNNER_THREADS", "8")]));
        assert_eq!(config.worker_port(), 40000);
        assert_eq!(config.runner_threads(), 8);
        assert_eq!(config.worker_host(), "127.0.0.1");
        assert!(config.settings_warning.is_none());
    }

    #[test]
    fn the_settings_file_written_for_a_worker_names_the_port_it_runs_on() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().to_str().unwrap();
        let config = Config::resolve(&env(&[("VIBELEARN_DATA_DIR", data), ("VIBELEARN_WORKER_PORT", "41234")]));
        config.ensure_settings_file();
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("settings.json")).unwrap()).unwrap();
        assert_eq!(written["VIBELEARN_WORKER_PORT"], "41234");
        assert_eq!(written["VIBELEARN_PROVIDER"], "auto", "the other defaults as before");
        // Without the variable, a later process reads the same port from the file.
        assert_eq!(Config::resolve(&env(&[("VIBELEARN_DATA_DIR", data)])).worker_port(), 41234);
    }

    #[test]
    fn a_corrupt_settings_file_falls_back_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("settings.json"), "{not json").unwrap();
        let config = Config::resolve(&env(&[("VIBELEARN_DATA_DIR", dir.path().to_str().unwrap())]));
        assert_eq!(config.worker_port(), 37778);
        assert!(config.settings_warning.unwrap().contains("not valid JSON"));
    }

    #[test]
    fn data_dir_expands_home() {
        let config = Config::resolve(&env(&[("HOME", "/home/dev"), ("VIBELEARN_DATA_DIR", "~/vl-data")]));
        assert_eq!(config.data_dir, PathBuf::from("/home/dev/vl-data"));
        let default = Config::resolve(&env(&[("HOME", "/nonexistent-home")]));
        assert_eq!(default.data_dir, PathBuf::from("/nonexistent-home/.vibelearn"));
    }

    #[test]
    fn kind_timeouts_can_be_overridden() {
        let config =
            Config::resolve(&env(&[("HOME", "/nonexistent-home"), ("VIBELEARN_TIMEOUT_ANALYZE_CONCEPTS_SECS", "7")]));
        assert_eq!(config.kind_timeout("analyze_concepts", Duration::from_secs(120)), Duration::from_secs(7));
        assert_eq!(config.kind_timeout("ingest", Duration::from_secs(10)), Duration::from_secs(10));
    }

    #[test]
    fn numbers_out_of_range_are_clamped_with_a_warning_and_never_panic() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::resolve(&env(&[
            ("VIBELEARN_DATA_DIR", dir.path().to_str().unwrap()),
            ("VIBELEARN_TIMEOUT_ANALYZE_CONCEPTS_SECS", "1e20"),
            ("VIBELEARN_RETENTION_DEAD_DAYS", "1e20"),
            ("VIBELEARN_RETENTION_SUCCEEDED_HOURS", "-5"),
            ("VIBELEARN_RUNNER_THREADS", "NaN"),
            ("VIBELEARN_WORKER_PORT", "99999999"),
        ]));
        assert_eq!(config.kind_timeout("analyze_concepts", Duration::from_secs(120)), Duration::from_secs(86_400));
        assert_eq!(config.retention_dead(), Duration::from_secs(3_650 * 86_400));
        assert_eq!(config.retention_succeeded(), Duration::ZERO);
        assert_eq!(config.runner_threads(), 4, "not a number: the default");
        assert_eq!(config.worker_port(), 65_535);
        let warning = config.settings_warning.unwrap();
        for key in ["ANALYZE_CONCEPTS_SECS=1e20", "RETENTION_DEAD_DAYS=1e20", "RUNNER_THREADS", "WORKER_PORT"] {
            assert!(warning.contains(key), "{key} in {warning}");
        }
        // Within range: no warning.
        let plain = Config::resolve(&env(&[("VIBELEARN_DATA_DIR", dir.path().to_str().unwrap())]));
        assert_eq!(plain.settings_warning, None);
    }

    #[test]
    fn a_worker_gets_the_users_environment_without_the_agents_and_only_the_chosen_key() {
        let agent = [
            ("PATH", "/usr/bin"),
            ("HOME", "/home/dev"),
            ("LC_ALL", "C.UTF-8"),
            ("HTTPS_PROXY", "http://proxy:3128"),
            ("VIBELEARN_WORKER_PORT", "40001"),
            ("VIBELEARN_LLM_CHILD", "1"),
            // Session variables and keys of the agents whose hooks start workers.
            ("CLAUDECODE", "1"),
            ("CLAUDE_PROJECT_DIR", "/p"),
            ("GEMINI_CLI", "1"),
            ("CODEX_SANDBOX", "seatbelt"),
            ("CURSOR_TRACE_ID", "t"),
            ("ANTHROPIC_API_KEY", "sk-ant-agent-0123456789"),
            ("OPENAI_API_KEY", "sk-openai-agent-0123456789"),
            ("GEMINI_API_KEY", "gemini-agent-0123456789"),
            ("GOOGLE_API_KEY", "google-agent-0123456789"),
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
        ];
        // What `Config::worker_env` gives: this environment, with the provider after precedence.
        let names = |pairs: &[(&str, &str)]| -> Vec<String> {
            let config = Config::resolve(&env(pairs));
            worker_env(&env(pairs), config.get("VIBELEARN_PROVIDER")).into_iter().map(|(k, _)| k).collect()
        };
        let auto = Config::resolve(&env(&agent));
        assert_eq!(names(&agent), ["HOME", "HTTPS_PROXY", "LC_ALL", "PATH", "VIBELEARN_WORKER_PORT"]);
        // The one key of the provider the user named passes: the worker may spend it.
        let mut named = agent.to_vec();
        named.push(("VIBELEARN_PROVIDER", "gemini"));
        let gemini = Config::resolve(&env(&named));
        let names_named = names(&named);
        assert!(names_named.contains(&"GEMINI_API_KEY".to_owned()), "{names_named:?}");
        assert!(!names_named.iter().any(|n| n == "GOOGLE_API_KEY" || n == "OPENAI_API_KEY"));
        assert_eq!(gemini.origin("VIBELEARN_PROVIDER"), Origin::Environment);
        assert_eq!(auto.origin("VIBELEARN_PROVIDER"), Origin::Default);
    }

    #[test]
    fn secrets_are_masked_and_redacted() {
        assert_eq!(mask_secret("sk-ant-0123456789abcdef"), "sk-a…cdef");
        assert_eq!(mask_secret("short"), "****");
        let secrets = vec!["sk-ant-0123456789abcdef".to_owned()];
        assert_eq!(redact("key=sk-ant-0123456789abcdef end", &secrets), "key=sk-a…cdef end");
    }
}
