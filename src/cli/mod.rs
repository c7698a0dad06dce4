//! The command line: clap structs that only parse ([`args`]), and one module per command.
//!
//! - [`backend`]: where admin commands run — the worker's HTTP API, or the database directly
//! - [`format`]: pure helpers for tables, ages, `--since` and URLs

pub mod args;
pub mod backend;
pub mod demo;
pub mod format;
pub mod hook_cmd;
pub mod worker_cmd;
