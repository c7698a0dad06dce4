//! What the platform layer promises, tested with real processes (issue 39 §4): a data dir that
//! is a symlink to a loose folder is made owner-only at its target by `vl worker run` and by
//! `vl install` (the database before SQLite opens it, so its WAL and SHM follow), and the
//! programs the product starts — the command provider's, a worker a `vl` process starts, the
//! browser opener of `vl dashboard` — run with the user's own umask, not `vl`'s 077.

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::util::{Http, TempDir, VL, WorkerProcess, free_port, make_executable, vl, wait_for};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap_or_else(|e| panic!("stat {}: {e}", path.display())).permissions().mode() & 0o777
}

/// `<root>/data` (0755) holding a 0644 database with a table in it, and the symlink
/// `<root>/link` to it: what a user whose data dir lives elsewhere has.
fn linked_loose_data_dir(root: &Path) -> (PathBuf, PathBuf) {
    let (target, link) = (root.join("data"), root.join("link"));
    std::fs::create_dir(&target).unwrap();
    let conn = rusqlite::Connection::open(target.join("vibelearn.db")).unwrap();
    conn.execute_batch("CREATE TABLE kept (x); INSERT INTO kept VALUES (1);").unwrap();
    drop(conn);
    crate::util::set_mode(&target.join("vibelearn.db"), 0o644);
    crate::util::set_mode(&target, 0o755);
    std::os::unix::fs::symlink(&target, &link).unwrap();
    (target, link)
}

fn assert_owner_only(target: &Path, files: &[&str]) {
    assert_eq!(mode(target), 0o700, "the link's target is the data dir");
    for name in files {
        assert_eq!(mode(&target.join(name)), 0o600, "{name}");
    }
    for entry in std::fs::read_dir(target).unwrap().flatten() {
        let meta = std::fs::symlink_metadata(entry.path()).unwrap();
        assert_eq!(
            meta.permissions().mode() & 0o077,
            0,
            "{} is {:o}",
            entry.path().display(),
            meta.permissions().mode()
        );
    }
}

#[test]
fn the_worker_makes_a_symlinked_data_dir_owner_only_at_its_target_and_its_wal_follows() {
    let root = TempDir::new();
    let (target, link) = linked_loose_data_dir(root.path());
    let worker = WorkerProcess::start(&link);
    // A write, so the WAL and the SHM exist while the worker holds the database open.
    let init = json!({"contentSessionId": "s-link", "cwd": "/tmp/p", "prompt": "hello"});
    assert_eq!(Http::new(worker.port).with_key(&link).post("/api/sessions/init", &init).unwrap().0, 202);
    wait_for("the WAL", Duration::from_secs(10), || target.join("vibelearn.db-wal").exists());
    assert_owner_only(&target, &["vibelearn.db", "vibelearn.db-wal", "vibelearn.db-shm", "worker.key", "admin.token"]);
    let log = std::fs::read_to_string(target.join("logs/vibelearn.log")).unwrap();
    let line = log.lines().find(|l| l.contains("owner-only")).expect("one line says what changed");
    assert!(
        line.contains("(a link to ") && line.contains(". 755->700") && line.contains("vibelearn.db 644->600"),
        "{line}"
    );
    let kept = crate::hooks::db_rows(&link, "SELECT x FROM kept");
    assert_eq!(kept, vec![vec![json!(1)]], "the database is the user's, opened in place");
}

#[test]
fn vl_install_makes_a_symlinked_data_dir_owner_only_at_its_target() {
    let root = TempDir::new();
    let home = TempDir::new();
    let (target, link) = linked_loose_data_dir(root.path());
    // The database open elsewhere in WAL mode, as with a running worker of an older version:
    // its WAL and SHM exist, and SQLite made them 0644 like the database.
    let conn = rusqlite::Connection::open(target.join("vibelearn.db")).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.execute("INSERT INTO kept VALUES (2)", []).unwrap();
    for name in ["vibelearn.db-wal", "vibelearn.db-shm"] {
        crate::util::set_mode(&target.join(name), 0o644);
    }
    let output = vl(home.path(), free_port())
        .env("VIBELEARN_DATA_DIR", &link)
        .args(["install", "claude-code"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{said}");
    assert_owner_only(&target, &["vibelearn.db", "vibelearn.db-wal", "vibelearn.db-shm"]);
    drop(conn);
}

/// `vl ARGS` (with the test's data dir and port) run through `sh` with umask `mask`: how a
/// user whose umask is not 022 starts it.
fn vl_with_umask(dir: &Path, port: u16, mask: &str, args: &[&str]) -> Command {
    let base = vl(dir, port);
    let mut command = Command::new("sh");
    command.env_clear();
    for (name, value) in base.get_envs() {
        if let Some(value) = value {
            command.env(name, value);
        }
    }
    command.arg("-c").arg(format!("umask {mask} && exec \"$0\" \"$@\"")).arg(VL).args(args);
    command
}

/// Stops the detached worker `vl worker start` left, however the test ends.
struct StopsWorker<'a>(&'a Path, u16);

impl Drop for StopsWorker<'_> {
    fn drop(&mut self) {
        let _ = vl(self.0, self.1).args(["worker", "stop"]).output();
    }
}

#[test]
fn programs_the_product_starts_run_with_the_users_umask_not_vls() {
    let dir = TempDir::new();
    let port = free_port();
    let seen = dir.path().join("seen");
    std::fs::create_dir(&seen).unwrap();
    // The command provider: records its umask, answers nothing useful (the job may fail; the
    // umask is what is looked at).
    let provider = format!("umask > '{}/provider'; cat > /dev/null; echo '{{}}'", seen.display());
    // `vl worker start` starts a detached `vl worker run`, which starts the provider: the
    // worker must have been given the user's umask, and must give it on.
    let start = vl_with_umask(dir.path(), port, "0027", &["worker", "start"])
        .env("VIBELEARN_PROVIDER", "command")
        .env("VIBELEARN_LLM_COMMAND", &provider)
        .output()
        .unwrap();
    let _stop = StopsWorker(dir.path(), port);
    assert!(start.status.success(), "{}", String::from_utf8_lossy(&start.stderr));
    let http = Http::new(port).with_key(dir.path());
    let project = TempDir::new();
    crate::pipeline::seed_session(&http, "s-umask", project.path());
    crate::pipeline::request_steps(&http, "s-umask", &crate::pipeline::STEPS);
    wait_for("the provider to run", Duration::from_secs(30), || seen.join("provider").exists());
    wait_for("its umask", Duration::from_secs(5), || {
        std::fs::read_to_string(seen.join("provider")).is_ok_and(|t| !t.trim().is_empty())
    });
    assert_eq!(std::fs::read_to_string(seen.join("provider")).unwrap().trim(), "0027");
    assert_eq!(mode(&seen.join("provider")), 0o640, "a file the provider makes is as the user's umask says");
    // The worker's own files are still owner-only.
    assert_eq!(mode(&dir.path().join("vibelearn.db-wal")), 0o600);

    // `vl dashboard`'s browser opener, a stand-in `xdg-open` on PATH.
    let bin = dir.path().join("fake-bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(bin.join("xdg-open"), format!("#!/bin/sh\numask > '{}/opener'\n", seen.display())).unwrap();
    make_executable(&bin.join("xdg-open"));
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let dashboard = vl_with_umask(dir.path(), port, "0002", &["dashboard"]).env("PATH", path).output().unwrap();
    assert!(dashboard.status.success(), "{}", String::from_utf8_lossy(&dashboard.stderr));
    assert_eq!(std::fs::read_to_string(seen.join("opener")).unwrap().trim(), "0002");
}

/// A stand-in desktop on PATH: `xdg-mime` says `handler` opens HTML, `xdg-open` records what
/// it was given in `<bin>/opened`. Returns the PATH to run with.
fn fake_desktop(bin: &Path, handler: &str) -> String {
    std::fs::create_dir_all(bin).unwrap();
    let mime = format!("#!/bin/sh\n[ \"$*\" = 'query default text/html' ] || exit 1\necho {handler}\n");
    std::fs::write(bin.join("xdg-mime"), mime).unwrap();
    std::fs::write(bin.join("xdg-open"), format!("#!/bin/sh\nprintf '%s' \"$*\" > '{}/opened'\n", bin.display()))
        .unwrap();
    make_executable(&bin.join("xdg-mime"));
    make_executable(&bin.join("xdg-open"));
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

#[test]
#[cfg_attr(target_os = "macos", ignore = "macOS has no snap browsers and no xdg-mime")]
fn vl_dashboard_puts_its_opener_where_a_snap_browser_can_read_it_or_says_what_to_do() {
    let home = TempDir::new();
    let data = home.path().join(".vibelearn");
    let port = free_port();
    let _worker = WorkerProcess::start_with(&data, port, &[]);
    let bin = home.path().join("fake-bin");
    let path = fake_desktop(&bin, "firefox_firefox.desktop");
    let snap_common = home.path().join("snap/firefox/common");
    std::fs::create_dir_all(&snap_common).unwrap();
    crate::util::set_mode(&snap_common, 0o755);
    let dashboard = || {
        let output = vl(&data, port).env("HOME", home.path()).env("PATH", &path).arg("dashboard").output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let said = dashboard();
    let key = crate::util::user_key(&data);
    assert!(said.contains("firefox snap") && !said.contains(&key), "{said}");
    let opened = std::fs::read_to_string(bin.join("opened")).expect("the opener ran");
    let file = snap_common.join("vibelearn-dashboard.html");
    assert_eq!(Path::new(&opened), file, "the file is opened from the snap's own folder, by path");
    assert_eq!(mode(&file), 0o600, "and it is the user's alone");
    let html = std::fs::read_to_string(&file).unwrap();
    assert!(!html.contains(&key), "{html}");
    let prefix = format!("http://127.0.0.1:{port}/#code=");
    let at = html.find(&prefix).expect("the page's address with its code") + prefix.len();
    let code: String = html[at..].chars().take_while(|c| c.is_ascii_hexdigit()).collect();
    assert!(code.len() >= 32 && !opened.contains(&code), "{code}");
    let exchange = |code: &str| Http::new(port).post("/api/dashboard/exchange", &json!({ "code": code })).unwrap();
    let (status, body) = exchange(&code);
    assert_eq!((status, body["key"].as_str()), (200, Some(key.as_str())), "the page trades the code for the key");
    assert_eq!(exchange(&code).0, 401, "once");

    // A snap that has never run has no folder: nothing is opened, and the user is told why.
    std::fs::remove_dir_all(home.path().join("snap")).unwrap();
    std::fs::remove_file(bin.join("opened")).unwrap();
    let said = dashboard();
    assert!(said.contains("firefox snap") && said.contains("cannot read") && said.contains("worker.key"), "{said}");
    assert!(!said.contains(&key), "{said}");
    assert!(!bin.join("opened").exists(), "no browser was sent to a file it cannot read");

    // A browser that is not a snap opens the file in the data dir, as before.
    let path = fake_desktop(&bin, "firefox.desktop");
    let output = vl(&data, port).env("HOME", home.path()).env("PATH", &path).arg("dashboard").output().unwrap();
    assert!(output.status.success());
    let opened = std::fs::read_to_string(bin.join("opened")).unwrap();
    assert_eq!(Path::new(&opened), data.join("dashboard.html"));
}
