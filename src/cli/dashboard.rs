//! `vl dashboard`: starts the worker if it is not running and opens its page in the browser
//! with the user key in the URL fragment (`#key=…`). A fragment is never sent in a request
//! line, so the key reaches the page's JavaScript and no log; the page keeps it in the tab's
//! sessionStorage (SPEC §4). The key is never printed: a user without a desktop browser is told
//! where the key file is, and the page takes a pasted key.

use std::process::ExitCode;

use crate::config::Config;

pub fn run(config: &Config) -> ExitCode {
    let started = crate::worker_spawn::start(config);
    if !started.is_ready() {
        eprintln!("vl dashboard: {}", started.describe(&config.worker_url()));
        return ExitCode::FAILURE;
    }
    let key_path = config.data_dir.join(crate::worker::USER_KEY_FILE);
    let key = match crate::platform::read_private_file(&key_path) {
        Ok(Some(key)) if !key.trim().is_empty() => key.trim().to_owned(),
        Ok(_) => {
            eprintln!("vl dashboard: {} is missing; start the worker once (`vl worker start`)", key_path.display());
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("vl dashboard: {e}");
            return ExitCode::FAILURE;
        }
    };
    let page = format!("{}/", config.worker_url());
    match crate::platform::open_in_browser(&format!("{page}#key={key}")) {
        Ok(()) => {
            println!("Opened the dashboard at {page} in your browser (the key travels in the URL fragment).");
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!(
                "Could not open a browser ({e}). Open {page} yourself and paste the key from {} into the page.",
                key_path.display()
            );
            ExitCode::SUCCESS
        }
    }
}
