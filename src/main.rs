//! The `vl` binary: parses the command line and calls into the library.

use std::process::ExitCode;

use clap::Parser;
use vibelearn::cli::args::{Cli, Command};
use vibelearn::config::Config;

fn main() -> ExitCode {
    // Before anything is created: every file of every `vl` process is owner-only (SPEC §4).
    vibelearn::platform::restrict_new_files();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // The hook runs once per tool call: its plain form skips building the whole parser.
    if let Some((platform, event)) = vibelearn::cli::args::plain_hook_args(&args) {
        return vibelearn::cli::hook_cmd::run(platform.as_deref(), event.as_deref(), Config::load());
    }
    let cli = Cli::parse_from(args);
    let config = Config::load();
    let Some(command) = cli.command else {
        return vibelearn::cli::hook_cmd::run_bare(config);
    };
    match command {
        Command::Worker { action } => vibelearn::cli::worker_cmd::run(action, config),
        Command::Demo { verbose, keep } => vibelearn::cli::demo::run(config.home.clone(), verbose, keep),
        Command::Hook { platform, event } => {
            vibelearn::cli::hook_cmd::run(platform.as_deref(), event.as_deref(), config)
        }
        Command::Quiz(args) => vibelearn::cli::quiz::run(&args, &config),
        Command::Status => vibelearn::cli::status::run_status(&config),
        Command::Gaps => vibelearn::cli::status::run_gaps(&config),
        Command::Export { target } => vibelearn::cli::export::run(target, &config),
        Command::Jobs { action } => vibelearn::cli::jobs::run(action, &config),
        Command::Sync { session } => vibelearn::cli::sync::run(session, &config),
        Command::Login(args) => vibelearn::cli::login::run(args, &config),
        Command::Provider { name } => vibelearn::cli::provider::run(name.as_deref(), &config),
        Command::Install { target, add_to_path } => vibelearn::cli::install::run(target, add_to_path, &config),
        Command::Uninstall { target } => vibelearn::cli::install::run_uninstall(target, &config),
        Command::Statusline => vibelearn::cli::statusline::run(&config),
        Command::Dashboard => vibelearn::cli::dashboard::run(&config),
    }
}
