//! The command line's one dispatch, shared by the two executables ([`crate::executables`]):
//! `vl` runs it with [`Forward`], `vl-worker` with [`InProcess`]. The two commands that need the
//! worker's job runner and the analysis — `vl worker run` and `vl demo` — are the [`Engine`]'s;
//! everything else runs here in both. Only [`InProcess`] names `worker::run` and `demo::run`,
//! so a `vl` built with [`Forward`] references neither and its link leaves out the runner, the
//! analysis and the grammars (checked by `tests/executables.rs`).

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

use crate::cli::args::{Cli, Command, WorkerAction};
use crate::config::Config;

/// How the commands that need the analysis run: in this process, or in `vl-worker`.
pub trait Engine {
    /// `vl worker run`: the worker in the foreground until stopped.
    fn worker_run(args: &[OsString], config: Config) -> ExitCode;
    /// `vl demo`: the whole pipeline on the embedded sample session.
    fn demo(args: &[OsString], config: Config, verbose: bool, keep: bool) -> ExitCode;
}

/// `vl-worker`: both run in this process.
pub struct InProcess;

impl Engine for InProcess {
    fn worker_run(_args: &[OsString], config: Config) -> ExitCode {
        crate::cli::worker_cmd::run_worker(config)
    }

    fn demo(_args: &[OsString], config: Config, verbose: bool, keep: bool) -> ExitCode {
        crate::cli::demo::run(config.home.clone(), verbose, keep)
    }
}

/// `vl`: both handed to `vl-worker` with the same arguments ([`forward`]).
pub struct Forward;

impl Engine for Forward {
    fn worker_run(args: &[OsString], _config: Config) -> ExitCode {
        forward(args)
    }

    fn demo(args: &[OsString], _config: Config, _verbose: bool, _keep: bool) -> ExitCode {
        forward(args)
    }
}

/// Runs `vl-worker` with this process's arguments in its place ([`crate::platform::run_in_place`]:
/// `exec` on Unix, so the pid — and with it the worker's pid file and the signals a supervisor
/// sends — stays the same; on Windows a child waited for, whose exit code is ours). Returns
/// only when it could not be started.
fn forward(args: &[OsString]) -> ExitCode {
    let worker = match crate::executables::worker() {
        Ok(worker) => worker,
        Err(e) => {
            eprintln!("vl: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut command = crate::platform::command(&worker);
    command.args(args.iter().skip(1));
    let e = crate::platform::run_in_place(&mut command);
    eprintln!("vl: cannot run {}: {e}; reinstall VibeLearn", worker.display());
    ExitCode::FAILURE
}

/// The whole program: parses the command line and runs the command, the engine's two by `E`.
pub fn main<E: Engine>() -> ExitCode {
    // Before anything is created: every file of every `vl` process is owner-only (SPEC §4).
    crate::platform::restrict_new_files();
    let args: Vec<OsString> = std::env::args_os().collect();
    // The hook runs once per tool call: its plain form skips building the whole parser.
    if let Some((platform, event)) = crate::cli::args::plain_hook_args(&args) {
        return crate::cli::hook_cmd::run(platform.as_deref(), event.as_deref(), Config::load());
    }
    let cli = Cli::parse_from(&args);
    let config = Config::load();
    let Some(command) = cli.command else {
        return crate::cli::hook_cmd::run_bare(config);
    };
    match command {
        Command::Worker { action: WorkerAction::Run } => E::worker_run(&args, config),
        Command::Worker { action: WorkerAction::Start } => crate::cli::worker_cmd::start(&config),
        Command::Worker { action: WorkerAction::Stop } => crate::cli::worker_cmd::stop(&config),
        Command::Worker { action: WorkerAction::Status } => crate::cli::worker_cmd::status(&config),
        Command::Demo { verbose, keep } => E::demo(&args, config, verbose, keep),
        Command::Hook { platform, event } => crate::cli::hook_cmd::run(platform.as_deref(), event.as_deref(), config),
        Command::Quiz(args) => crate::cli::quiz::run(&args, &config),
        Command::Status => crate::cli::status::run_status(&config),
        Command::Gaps => crate::cli::status::run_gaps(&config),
        Command::Export { target } => crate::cli::export::run(target, &config),
        Command::Jobs { action } => crate::cli::jobs::run(action, &config),
        Command::Sync { session } => crate::cli::sync::run(session, &config),
        Command::Login(args) => crate::cli::login::run(args, &config),
        Command::Provider { name } => crate::cli::provider::run(name.as_deref(), &config),
        Command::Install { target, add_to_path } => crate::cli::install::run(target, add_to_path, &config),
        Command::Uninstall { target } => crate::cli::install::run_uninstall(target, &config),
        Command::Statusline => crate::cli::statusline::run(&config),
        Command::Dashboard => crate::cli::dashboard::run(&config),
    }
}
