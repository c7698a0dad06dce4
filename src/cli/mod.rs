//! The command line: clap structs that only parse ([`args`]), and one module per command.
//!
//! - [`backend`]: where admin commands run — the worker's HTTP API, or the database directly
//! - [`format`]: pure helpers for tables, ages, `--since` and URLs
//! - [`jobs`]: `vl jobs list | show | replay | cancel | stats | prune`
//! - [`sync`]: `vl sync [SESSION]` with live progress
//! - [`login`]: `vl login` — the upstream account key in `<data>/config.json`
//! - [`install`]: `vl install claude-code | cursor` — hook registration

pub mod args;
pub mod backend;
pub mod demo;
pub mod format;
pub mod hook_cmd;
pub mod install;
pub mod jobs;
pub mod login;
pub mod sync;
pub mod worker_cmd;
