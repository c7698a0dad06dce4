//! The `vl` binary: what a person and the agents' hooks run. `vl worker run` and `vl demo` go to
//! `vl-worker` beside it, so this executable links neither the job runner nor the grammars
//! (`vibelearn::executables`).

fn main() -> std::process::ExitCode {
    vibelearn::cli::dispatch::main::<vibelearn::cli::dispatch::Forward>()
}
