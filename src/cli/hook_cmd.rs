//! `vl hook <platform> <event>`: the process shell around [`crate::hook::run`]. Whatever
//! happens, it prints exactly one JSON line, writes nothing to stderr and exits 0.

use std::process::ExitCode;

use crate::config::Config;
use crate::hook::adapters::{HookEvent, Platform};
use crate::hook::{self, stdin};

pub fn run(platform: &str, event: &str, config: Config) -> ExitCode {
    let level = config.get("VIBELEARN_LOG_LEVEL");
    crate::logging::init(&config.logs_dir(), level, config.secrets(), crate::logging::Rotation::AppendOnly);
    // A panic must not print to stderr (the IDE shows it); log it instead.
    std::panic::set_hook(Box::new(|info| log::error!(target: "hook", "hook panicked: {info}")));
    let line = match std::panic::catch_unwind(|| line_for(platform, event, &config)) {
        Ok(line) => line,
        Err(_) => hook::continue_line(),
    };
    println!("{line}");
    log::logger().flush();
    ExitCode::SUCCESS
}

fn line_for(platform: &str, event: &str, config: &Config) -> serde_json::Value {
    let (Some(platform), Some(event)) = (Platform::parse(platform), HookEvent::parse(event)) else {
        log::warn!(target: "hook", "unknown hook {platform} {event}");
        return hook::continue_line();
    };
    match stdin::read_json_value(std::io::stdin(), stdin::STDIN_TIMEOUT) {
        Ok(raw) => hook::run(platform, event, &raw, config),
        Err(e) => {
            log::warn!(target: "hook", "{} {:?}: {e}; nothing recorded", platform.as_str(), event);
            if event == HookEvent::SessionStart {
                crate::worker_spawn::start(config).hook_line()
            } else {
                hook::continue_line()
            }
        }
    }
}
