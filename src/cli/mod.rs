//! The command line: clap structs that only parse ([`args`]), and one module per command.

pub mod args;
pub mod demo;
pub mod hook_cmd;
pub mod worker_cmd;
