//! `vl dashboard`: starts the worker if it is not running and opens its page in the browser
//! without the key on any command line (SPEC §4, "the dashboard").
//!
//! Over a connection whose listener proved it is the user's worker, it asks for a one-time
//! code (valid once, for a minute), writes a small owner-only HTML file whose script sends the
//! browser to `http://127.0.0.1:P/#code=…`, and opens that *file*: the opener's and the
//! browser's argv show a path, the file is readable by the user alone, the fragment is never
//! sent in a request line (so no log has it), and the page trades the code for the key and
//! drops it from the address bar, so the history keeps a spent code. The key is never
//! printed: a user without a desktop browser is told where the key file is, and the page
//! takes a pasted key.
//!
//! # Where the file goes
//! In the data dir, except for a browser packaged as a snap (Ubuntu's Firefox and Chromium):
//! its confinement lets it read the home dir's files but not its hidden folders, so it cannot
//! open `~/.vibelearn/dashboard.html`. The desktop's HTML handler says which browser opens
//! the file (`platform::html_handler`); for a snap, the file goes in that snap's own folder,
//! `~/snap/<snap>/common`, which the snap reads and which other users cannot enter through a
//! 0600 file. Considered: the code in the URL the browser is started with (any local user can
//! read a process's argv and trade the code first), or a file in `/tmp` (a snap has its own).
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;

use crate::config::Config;
use crate::worker_client::WorkerClient;

/// The page-opening file, in the data dir (rewritten by each `vl dashboard`).
pub const OPENER_FILE: &str = "dashboard.html";

/// Its name in a snap browser's folder, which is not ours alone: it says whose it is.
pub const SNAP_OPENER_FILE: &str = "vibelearn-dashboard.html";

/// Where the opener file goes ([module docs](self)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenerPlace {
    /// A folder the browser can read: the data dir, or a snap browser's own folder.
    Folder { dir: PathBuf, snap: Option<String> },
    /// A snap browser that has never run for this user, so it has no folder of its own yet,
    /// and cannot read the (hidden) data dir.
    SnapNotReady { snap: String },
}

/// The snap a desktop entry belongs to: snapd names the entries it installs
/// `<snap>_<app>.desktop` (`firefox_firefox.desktop`); a snap's name is lowercase letters,
/// digits and dashes, so a `_` says it is one.
pub fn snap_of(entry: &str) -> Option<&str> {
    let (snap, app) = entry.strip_suffix(".desktop")?.split_once('_')?;
    let valid = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    (!snap.is_empty() && !app.is_empty() && snap.chars().all(valid)).then_some(snap)
}

/// Whether a snap with the `home` interface may read files in `dir`: a folder under the home
/// dir with no hidden component.
fn snap_can_read(dir: &Path, home: Option<&Path>) -> bool {
    let Some(rest) = home.and_then(|home| dir.strip_prefix(home).ok()) else { return false };
    !rest.components().any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
}

/// Where the opener goes, from the data dir, the home dir and the HTML handler's desktop entry
/// (`handler`, asked only when the data dir is one a snap cannot read); `is_dir` looks at the
/// disk. Pure but for those two, so every case is a unit test.
pub fn opener_place(
    data_dir: &Path,
    home: Option<&Path>,
    handler: impl FnOnce() -> Option<String>,
    is_dir: impl Fn(&Path) -> bool,
) -> OpenerPlace {
    let in_data_dir = OpenerPlace::Folder { dir: data_dir.to_owned(), snap: None };
    if snap_can_read(data_dir, home) {
        return in_data_dir;
    }
    let (Some(home), Some(entry)) = (home, handler()) else { return in_data_dir };
    let Some(snap) = snap_of(&entry) else { return in_data_dir };
    let own = home.join("snap").join(snap);
    if is_dir(&own) {
        OpenerPlace::Folder { dir: own.join("common"), snap: Some(snap.to_owned()) }
    } else {
        OpenerPlace::SnapNotReady { snap: snap.to_owned() }
    }
}

pub fn run(config: &Config) -> ExitCode {
    let started = crate::worker_spawn::start(config);
    if !started.is_ready() {
        eprintln!("vl dashboard: {}", started.describe(&config.worker_url()));
        return ExitCode::FAILURE;
    }
    let page = format!("{}/", config.worker_url());
    let key_path = config.data_dir.join(crate::worker::USER_KEY_FILE);
    let (dir, snap) =
        match opener_place(&config.data_dir, config.home.as_deref(), crate::platform::html_handler, Path::is_dir) {
            OpenerPlace::Folder { dir, snap } => (dir, snap),
            OpenerPlace::SnapNotReady { snap } => {
                println!(
                    "Your browser is the {snap} snap, which cannot read the hidden folder {}. Start {snap} once and \
                     run `vl dashboard` again, or open {page} yourself and paste the key from {} into the page.",
                    config.data_dir.display(),
                    key_path.display()
                );
                return ExitCode::SUCCESS;
            }
        };
    let opener = match write_opener(config, &page, &dir, snap.is_some()) {
        Ok(path) => path,
        Err(e) => {
            eprintln!("vl dashboard: {e}");
            return ExitCode::FAILURE;
        }
    };
    let through = snap.map(|snap| format!(" through {}, which your {snap} snap can read", dir.display()));
    match crate::platform::open_in_browser(&opener.to_string_lossy()) {
        Ok(()) => {
            println!(
                "Opened the dashboard at {page} in your browser (with a one-time code{}; the key is not in any URL).",
                through.unwrap_or_default()
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
/// The file goes in `dir` (made owner-only if missing; a snap's folder is its own, as it is).
fn write_opener(config: &Config, page: &str, dir: &Path, in_snap: bool) -> Result<PathBuf, String> {
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
    crate::platform::create_private_dir(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join(if in_snap { SNAP_OPENER_FILE } else { OPENER_FILE });
    crate::platform::write_private_file(&path, &html).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snap_is_told_by_its_desktop_entry_name() {
        assert_eq!(snap_of("firefox_firefox.desktop"), Some("firefox"));
        assert_eq!(snap_of("chromium_chromium.desktop"), Some("chromium"));
        assert_eq!(snap_of("brave-browser_brave.desktop"), Some("brave-browser"));
        for not_a_snap in
            ["firefox.desktop", "org.mozilla.firefox.desktop", "google-chrome.desktop", "_x.desktop", "a_"]
        {
            assert_eq!(snap_of(not_a_snap), None, "{not_a_snap}");
        }
    }

    #[test]
    fn the_opener_goes_where_the_browser_can_read_it() {
        let home = Path::new("/home/ann");
        let hidden = home.join(".vibelearn");
        let snap_dirs = |p: &Path| p == home.join("snap/firefox");
        let firefox_snap = || Some("firefox_firefox.desktop".to_owned());
        let data = |dir: &Path| OpenerPlace::Folder { dir: dir.to_owned(), snap: None };
        // A browser that is not a snap reads the data dir.
        assert_eq!(opener_place(&hidden, Some(home), || Some("firefox.desktop".into()), snap_dirs), data(&hidden));
        assert_eq!(opener_place(&hidden, Some(home), || None, snap_dirs), data(&hidden));
        // A snap gets its own folder, or is told what to do when it has none yet.
        assert_eq!(
            opener_place(&hidden, Some(home), firefox_snap, snap_dirs),
            OpenerPlace::Folder { dir: home.join("snap/firefox/common"), snap: Some("firefox".into()) }
        );
        assert_eq!(
            opener_place(&hidden, Some(home), || Some("chromium_chromium.desktop".into()), snap_dirs),
            OpenerPlace::SnapNotReady { snap: "chromium".into() }
        );
        // A data dir a snap can read needs no question asked.
        let visible = home.join("vl-data");
        let asked = || -> Option<String> { panic!("no need to ask") };
        assert_eq!(opener_place(&visible, Some(home), asked, snap_dirs), data(&visible));
        let nested_hidden = home.join("work/.cache/vl");
        assert_eq!(
            opener_place(&nested_hidden, Some(home), firefox_snap, snap_dirs),
            OpenerPlace::Folder { dir: home.join("snap/firefox/common"), snap: Some("firefox".into()) }
        );
    }
}
