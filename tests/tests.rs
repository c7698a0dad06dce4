//! The one integration-test binary (linking once matters on a 2-core machine). Each module
//! under `tests/` covers one area; every test gets a fresh data directory.

mod budget;
mod claude_cli;
mod cli_snapshots;
mod cursor;
mod dashboard;
mod demo;
mod edits;
mod failures;
mod fake_http;
mod fake_messages;
mod first_run;
mod fuzz;
mod grounding;
mod hooks;
mod http_raw;
mod install_script;
mod jobs_cli;
mod npm_package;
mod pipeline;
mod precision;
mod queue;
mod queue_deps;
mod queue_stats;
mod quiz;
mod recovery;
mod security;
mod statusline;
mod util;
mod worker;
