//! `vl dashboard`: starts the worker if it is not running and opens its page in the browser
//! without the key on any command line (SPEC §4, "the dashboard").
//!
//! Over a connection whose listener proved it is the user's worker, it asks for a one-time
//! code (valid once, for a minute), writes a small owner-only HTML file in the data dir whose
//! script sends the browser to `http://127.0.0.1:P/#code=…`, and opens that *file*: the
//! opener's and the browser's argv show a path, the file is readable by the user alone, the
//! fragment is never sent in a request line (so no log has it), and the page trades the code
//! for the key and drops it from the address bar, so the history keeps a spent code. The key
//! is never printed: a user without a desktop browser is told where the key file is, and the
//! page takes a pasted key.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;

use crate::config::Config;
use crate::worker_client::WorkerClient;

/// The page-opening file, in the data dir (rewritten by each `vl dashboard`).
pub const OPENER_FILE: &str = "dashboard.html";

pub fn run(config: &Config) -> ExitCode {
    let started = crate::worker_spawn::start(config);
    if !started.is_ready() {
        eprintln!("vl dashboard: {}", started.describe(&config.worker_url()));
        return ExitCode::FAILURE;
    }
    let page = format!("{}/", config.worker_url());
    let key_path = config.data_dir.join(crate::worker::USER_KEY_FILE);
    let opener = match write_opener(config, &page) {
        Ok(path) => path,
        Err(e) => {
            eprintln!("vl dashboard: {e}");
            return ExitCode::FAILURE;
        }
    };
    match crate::platform::open_in_browser(&opener.to_string_lossy()) {
        Ok(()) => {
            println!(
                "Opened the dashboard at {page} in your browser (with a one-time code; the key is not in any URL)."
            );
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

/// Asks the (proved) worker for a one-time code and writes the file that hands it to the page.
fn write_opener(config: &Config, page: &str) -> Result<PathBuf, String> {
    let client = WorkerClient::new(config, Duration::from_secs(5));
    let reply = client.post("/api/dashboard/code", &json!({})).map_err(|e| e.to_string())?;
    let code = reply.body["code"].as_str().filter(|c| reply.status == 200 && c.bytes().all(|b| b.is_ascii_hexdigit()));
    let Some(code) = code else {
        return Err(format!("the worker gave no dashboard code ({}): {}", reply.status, reply.body));
    };
    let target = format!("{page}#code={code}");
    let html = format!(
        "<!doctype html><meta charset=\"utf-8\"><meta name=\"referrer\" content=\"no-referrer\">\
         <title>VibeLearn</title><script>location.replace({});</script>\
         <p>Opening the VibeLearn dashboard…</p>\n",
        serde_json::Value::String(target)
    );
    let path = config.data_dir.join(OPENER_FILE);
    crate::platform::write_private_file(&path, &html).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}
