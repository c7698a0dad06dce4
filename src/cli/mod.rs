//! The command line: clap structs that only parse ([`args`]), and one module per command.
//!
//! - [`dispatch`]: the one dispatch of both executables; which of them runs `vl worker run` and
//!   `vl demo` (the [`dispatch::Engine`])
//! - `demo` — the whole pipeline on the embedded sample session.
//! - [`dashboard`]: `vl dashboard` — the worker's page in the browser, with the user key
//! - `hook_cmd` — `vl hook`: the IDE hook entry point.
//! - `quiz` — `vl quiz`: the spaced-repetition loop; `quiz::store` owns its SQL, `quiz::ask`
//!   one question (answer, verdict, rating), `quiz::term` its terminal styling and line input,
//!   `quiz::api` the JSON front-end API (`vl quiz next | answer --json`).
//! - `export` — `vl export anki | markdown`: cards out of VibeLearn.
//! - `status` — `vl status` and `vl gaps`: read-only learning summaries.
//! - `worker_cmd` — `vl worker run | start | stop | status`.
//! - [`backend`]: where admin commands run — the worker's HTTP API, or the database directly
//! - [`format`]: pure helpers for tables, ages, `--since` and URLs
//! - [`jobs`]: `vl jobs list | show | replay | cancel | stats | prune`
//! - [`sync`]: `vl sync [SESSION]` with live progress
//! - [`login`]: `vl login` — the upstream account key in `<data>/config.json`
//! - [`provider`]: `vl provider [NAME]` — the LLM provider decision, shown and chosen
//! - [`install`]: `vl install claude-code | cursor` and `vl uninstall` — hook registration, on a
//!   format-preserving settings editor (`install::settings_file`)
//! - [`statusline`]: `vl statusline` — one line for an IDE status bar, straight from SQLite

pub mod args;
pub mod backend;
pub mod dashboard;
pub mod demo;
pub mod dispatch;
pub mod export;
pub mod format;
pub mod hook_cmd;
pub mod install;
pub mod jobs;
pub mod login;
pub mod provider;
pub mod quiz;
pub mod status;
pub mod statusline;
pub mod sync;
pub mod worker_cmd;
