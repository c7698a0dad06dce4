//! What the real-CLI tests share: each CLI (Claude Code's too, for `claude_cli` and
//! `npm_package`) installed from npm at the version its `tests/<agent>/package-lock.json` pins,
//! and run to its end within a bound; and for Gemini CLI, Codex and Copilot CLI (issue 32,
//! point 4) a project, the scripted session every fake model API plays, and the checks on what VibeLearn
//! recorded from the hooks `vl install <agent>` wrote.
//!
//! `npm install zod` and `npm run build` run through a stand-in `npm` (first on `PATH`, and
//! put there for login shells too by the test home's `.bash_profile`, since Codex runs commands
//! through `bash -lc`): the real one would reach the registry, which a test must not. It says
//! what npm says for an install and exits 0, and fails the build with a TypeScript error.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_models::Step;
use crate::hooks::db_rows;
use crate::util::{Http, TempDir, wait_for};

pub const MARKER: &str = "MARKER-agent-cli-9d2e-PRIVATE";
pub const CART: &str =
    "export function cartTotal(prices: number[]): number {\n  return prices.reduce((a, b) => a + b, 0);\n}\n";
pub const OLD_LINE: &str = "  return prices.reduce((a, b) => a + b, 0);";
pub const NEW_LINE: &str = "  return prices.reduce((sum, price) => sum + price, 0);";
pub const TSC: &str = "src/cart.ts(2,10): error TS2322: Type 'string' is not assignable to type 'number'.";
pub const DONE: &str = "Done: cartTotal is written; the build still fails.";
/// The longest one CLI run may take here (measured: 3–6 s each with the debug `vl` hooks).
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

pub fn prompt() -> String {
    format!("Add a cartTotal function to src/cart.ts and build it. <private>{MARKER}</private>")
}

/// The CLI `bin` of `tests/<dir>` (Claude Code's, Gemini CLI's, Codex's, Copilot CLI's),
/// installed with `npm ci` from the lock file that pins it when it is missing; `Err` says why it
/// cannot run here. One install at a time: two `npm ci` in one folder would race.
pub fn real_cli(dir: &str, bin: &str) -> Result<PathBuf, String> {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _one_at_a_time = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests").join(dir);
    let path = dir.join("node_modules/.bin").join(bin);
    if runs(&path) {
        return Ok(path);
    }
    if Command::new("npm").arg("--version").output().is_err() {
        return Err("npm is not on PATH (install Node.js and npm; .ci/run does)".into());
    }
    let output = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&dir)
        .output()
        .map_err(|e| format!("cannot run npm: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(4).collect();
        return Err(format!("`npm ci` in {} failed: {}", dir.display(), tail.join(" / ")));
    }
    if runs(&path) { Ok(path) } else { Err(format!("{} was installed but does not run here", path.display())) }
}

/// Whether `bin --version` succeeds with only `PATH` and a throwaway `HOME` (so a check never
/// writes into the user's own).
fn runs(bin: &Path) -> bool {
    let home = TempDir::new();
    Command::new(bin)
        .arg("--version")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A project with a package.json and an empty `src/`; the stand-in `npm` in `home`.
pub fn project(home: &Path) -> (TempDir, PathBuf) {
    let project = TempDir::new();
    std::fs::create_dir_all(project.path().join("src")).unwrap();
    std::fs::write(project.path().join("package.json"), r#"{"name":"shop","scripts":{"build":"tsc"}}"#).unwrap();
    let shims = home.join("shims");
    std::fs::create_dir_all(&shims).unwrap();
    let npm = shims.join("npm");
    std::fs::write(
        &npm,
        format!(
            "#!/bin/sh\ncase \"$1\" in\n  install|i|add) echo \"added 1 package in 0.1s\"; exit 0;;\n  \
             run) echo \"{TSC}\" >&2; echo '<private>{MARKER}</private>' >&2; exit 1;;\nesac\nexit 0\n"
        ),
    )
    .unwrap();
    crate::util::make_executable(&npm);
    std::fs::write(home.join(".bash_profile"), format!("export PATH=\"{}:$PATH\"\n", shims.display())).unwrap();
    (project, shims)
}

/// The scripted session: write src/cart.ts, edit its line, install zod, a failing build.
pub fn steps(project: &Path) -> Vec<Step> {
    let path = project.join("src/cart.ts").to_string_lossy().into_owned();
    vec![
        Step::Write { path: path.clone(), content: CART.into() },
        Step::Edit { path, old: OLD_LINE.into(), new: NEW_LINE.into() },
        Step::Shell("npm install zod".into()),
        Step::Shell("npm run build".into()),
        Step::Text(format!("{DONE} <private>{MARKER}</private>")),
    ]
}

/// `PATH` with `dirs` first.
pub fn path_with(dirs: &[&Path]) -> std::ffi::OsString {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(dirs.iter().map(|d| d.to_path_buf()).chain(std::env::split_paths(&rest))).unwrap()
}

/// Runs a command to its end within [`RUN_TIMEOUT`] (killed and failed past it).
pub fn finish(mut command: Command) -> Output {
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().expect("spawn the CLI");
    let started = Instant::now();
    while child.try_wait().expect("wait for the CLI").is_none() {
        if started.elapsed() > RUN_TIMEOUT {
            let _ = child.kill();
            let output = child.wait_with_output().expect("collect the output");
            panic!("the CLI ran past {RUN_TIMEOUT:?}; stderr: {}", String::from_utf8_lossy(&output.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("collect the output")
}

/// Waits for the one session's pipeline; checks everything the hooks recorded. Returns its id.
pub fn check_recorded(home: &Path, port: u16, platform: &str, project: &Path) -> String {
    let sessions = || db_rows(home, "SELECT id, platform, ended_at IS NOT NULL FROM sessions");
    wait_for("the session to end", Duration::from_secs(30), || sessions().first().is_some_and(|s| s[2] == 1));
    let session = sessions();
    assert_eq!(session.len(), 1, "{session:?}");
    assert_eq!(session[0][1], platform);
    let id = session[0][0].as_str().unwrap().to_owned();
    let http = Http::new(port).with_token(home);
    wait_for("the session's pipeline to finish", Duration::from_secs(30), || {
        let steps = http.get(&format!("/api/vibelearn/sessions/{id}/pipeline")).unwrap().1;
        steps["steps"].as_array().is_some_and(|s| !s.is_empty() && s.iter().all(|s| s["state"] == "succeeded"))
    });
    let prompts = db_rows(home, "SELECT text FROM prompts");
    assert_eq!(prompts.len(), 1, "{prompts:?}");
    assert_eq!(prompts[0][0].as_str().unwrap().trim(), "Add a cartTotal function to src/cart.ts and build it.");
    let rows = db_rows(
        home,
        "SELECT tool_name, action, outcome, error, content, command, packages, file_path FROM observations ORDER BY id",
    );
    let find = |tool: &str, what: &dyn Fn(&Vec<Value>) -> bool| -> Vec<Value> {
        rows.iter().find(|r| r[0] == tool && what(r)).cloned().unwrap_or_else(|| panic!("no {tool} in {rows:?}"))
    };
    assert_eq!(rows.len(), 4, "the write, the edit, two shell calls: {rows:?}");
    let on_disk = std::fs::read_to_string(project.join("src/cart.ts")).unwrap();
    assert!(on_disk.contains(NEW_LINE), "the CLI really edited the file: {on_disk}");
    let write = find("Write", &|_| true);
    assert_eq!(
        (write[1].as_str(), write[2].as_str(), write[4].as_str()),
        (Some("create"), Some("succeeded"), Some(CART))
    );
    assert!(write[7].as_str().unwrap().ends_with("src/cart.ts"));
    let edit = find("Edit", &|_| true);
    assert_eq!(
        (edit[1].as_str(), edit[4].as_str()),
        (Some("modify"), Some(on_disk.as_str())),
        "the whole file after the edit"
    );
    let install = find("Bash", &|r| r[5] == "npm install zod");
    assert_eq!((install[2].as_str(), install[6].clone()), (Some("succeeded"), json!("[\"zod\"]")));
    let build = find("Bash", &|r| r[5] == "npm run build");
    assert_eq!(build[2], "failed", "{build:?}");
    assert!(build[3].as_str().unwrap().contains(TSC), "{build:?}");
    let questions = db_rows(home, &format!("SELECT count(*) FROM questions WHERE session_id = '{id}'"));
    assert!(questions[0][0].as_i64().unwrap() > 0, "questions were made");
    let concepts = db_rows(home, "SELECT name FROM concepts");
    assert!(concepts.iter().any(|c| c[0] == "Reading compiler type errors"), "{concepts:?}");
    assert_no_private_bytes(home);
    id
}

/// No private byte in the database, its WAL, a queued payload or a log line.
pub fn assert_no_private_bytes(home: &Path) {
    let mut files = vec![home.join("vibelearn.db"), home.join("vibelearn.db-wal")];
    files.extend(std::fs::read_dir(home.join("logs")).into_iter().flatten().map(|e| e.unwrap().path()));
    for file in files {
        if let Ok(bytes) = std::fs::read(&file) {
            assert!(
                !bytes.windows(MARKER.len()).any(|w| w == MARKER.as_bytes()),
                "{} holds private bytes",
                file.display()
            );
        }
    }
}

/// `vl install <agent>` with `path` as PATH; what it said.
pub fn install(home: &Path, port: u16, agent: &str, path: &std::ffi::OsStr) -> String {
    let output = crate::util::vl(home, port).args(["install", agent]).env("PATH", path).output().unwrap();
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{said}{}", String::from_utf8_lossy(&output.stderr));
    said
}
