//! The `vl-worker` binary: the whole program, the worker's job runner and the analysis with its
//! grammars included; the same command line as `vl`, every command in this process
//! (`vibelearn::executables`).

fn main() -> std::process::ExitCode {
    vibelearn::cli::dispatch::main::<vibelearn::cli::dispatch::InProcess>()
}
