//! The command line: clap structs that only parse ([`args`]), and one module per command.
//!
//! - `demo` — the whole pipeline on the embedded sample session.
//! - `hook_cmd` — `vl hook`: the IDE hook entry point.
//! - `quiz` — `vl quiz`: the spaced-repetition loop; `quiz::store` owns its SQL, `quiz::term`
//!   its terminal styling and line input.
//! - `status` — `vl status` and `vl gaps`: read-only learning summaries.
//! - `worker_cmd` — `vl worker run | start | stop | status`.

pub mod args;
pub mod demo;
pub mod hook_cmd;
pub mod quiz;
pub mod status;
pub mod worker_cmd;
