//! Helpers shared by the integration tests: temp databases, waiting on conditions.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use vibelearn::clock::{self, SharedClock};
use vibelearn::db::{self, Synchronous};
use vibelearn::queue::{Queue, QueueThread, WriterConfig};

/// A fresh directory removed at the end of the test.
pub struct TempDir(tempfile::TempDir);

impl TempDir {
    pub fn new() -> TempDir {
        TempDir(tempfile::tempdir().expect("create a temp dir"))
    }

    #[allow(dead_code)] // used by the worker and hook tests
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    pub fn db_path(&self) -> PathBuf {
        self.0.path().join("vibelearn.db")
    }
}

/// Opens (and migrates) a database in `dir` and starts a queue on it.
pub fn start_queue(dir: &TempDir) -> (Queue, QueueThread) {
    start_queue_with_clock(dir, clock::system())
}

pub fn start_queue_with_clock(dir: &TempDir, clock: SharedClock) -> (Queue, QueueThread) {
    let path = dir.db_path();
    let conn = db::open_and_migrate(&path, Synchronous::Normal).expect("open the database");
    Queue::start(conn, &path, Synchronous::Normal, WriterConfig::default(), clock).expect("start the queue")
}

/// Polls `condition` until it holds or `timeout` passes; panics with `what` on timeout.
pub fn wait_for(what: &str, timeout: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Path of the `vl` binary built for these tests.
pub const VL: &str = env!("CARGO_BIN_EXE_vl");

/// A free loopback port (bound then released; the race with other tests is tolerable).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

/// The user key a worker made in `dir` (`worker.key`), which every route but health,
/// readiness and version needs.
pub fn user_key(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("worker.key")).expect("the worker's key file").trim().to_owned()
}

/// A test that cannot run here for want of a tool: says so on the process's stderr
/// (uncaptured, so a plain `cargo test` shows it), and fails under `CI=true`, where every tool
/// the suite needs must be installed.
pub fn skip_unless_ci(test: &str, reason: &str) {
    use std::io::Write;
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{test} cannot run under CI=true: {reason}");
    }
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {reason}");
}

/// Makes a stand-in program a test writes executable.
pub fn make_executable(path: &Path) {
    set_mode(path, 0o755);
}

/// Sets a file's permission bits (Unix; Windows has none to set).
pub fn set_mode(path: &Path, mode: u32) {
    vibelearn::platform::set_mode(path, mode).expect("chmod");
}

/// Whether a file is one only its owner may read ([`vibelearn::platform::check_private_file`]:
/// mode 0600 on Unix).
pub fn is_private(path: &Path) -> bool {
    let meta = std::fs::metadata(path).expect("stat");
    vibelearn::platform::check_private_file(path, &meta).is_ok()
}

/// A `vl` command with a test's data dir and port.
pub fn vl(dir: &Path, port: u16) -> std::process::Command {
    let mut command = std::process::Command::new(VL);
    command.env_clear();
    keep_essential_env(&mut command);
    command
        .env("HOME", dir)
        .env(vibelearn::platform::HOME_ENV, dir)
        .env("VIBELEARN_DATA_DIR", dir)
        .env("VIBELEARN_WORKER_PORT", port.to_string())
        .env("VIBELEARN_PROVIDER", "offline")
        .env("VIBELEARN_SYNCHRONOUS", "NORMAL")
        // UTC days from midnight, so a test that counts today as `now / DAY_MS` holds at any
        // hour; the time-zone tests set their own zone and rollover.
        .env("TZ", "UTC")
        .env("VIBELEARN_DAY_STARTS_AT", "0");
    command
}

/// Puts back what a cleared environment needs for a child to run at all (`PATH`; on Windows
/// the system folder too).
pub fn keep_essential_env(command: &mut std::process::Command) {
    for name in vibelearn::platform::ESSENTIAL_ENV {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
}

/// A real worker (`vl worker run`) as a child process; killed with SIGKILL on drop if alive.
pub struct WorkerProcess {
    pub child: std::process::Child,
    pub port: u16,
    pub dir: PathBuf,
}

impl WorkerProcess {
    pub fn start(dir: &Path) -> WorkerProcess {
        WorkerProcess::start_with(dir, free_port(), &[])
    }

    pub fn start_with(dir: &Path, port: u16, env: &[(&str, &str)]) -> WorkerProcess {
        let mut command = vl(dir, port);
        command.args(["worker", "run"]).envs(env.iter().copied());
        command.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
        let child = command.spawn().expect("spawn vl worker run");
        let worker = WorkerProcess { child, port, dir: dir.to_owned() };
        let client = Http::new(port);
        wait_for("worker readiness", Duration::from_secs(15), || {
            client.get("/api/readiness").map(|(s, _)| s == 200).unwrap_or(false)
        });
        worker
    }

    pub fn http(&self) -> Http {
        Http::new(self.port).with_token(&self.dir)
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, then wait for the exit status. Where there is no such signal (Windows), the
    /// admin route asks for the same graceful shutdown.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        if vibelearn::platform::request_stop(&self.child).is_err() {
            let (status, body) = self.http().post("/api/admin/shutdown", &serde_json::json!({})).expect("shutdown");
            assert_eq!(status, 202, "{body}");
        }
        self.child.wait().expect("wait for the worker")
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A minimal JSON HTTP client for tests: status and body.
pub struct Http {
    pub base: String,
    agent: ureq::Agent,
    token: Option<String>,
}

impl Http {
    pub fn new(port: u16) -> Http {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(10)))
            .http_status_as_error(false)
            .build()
            .into();
        Http { base: format!("http://127.0.0.1:{port}"), agent, token: None }
    }

    /// A client that waits up to `secs` for an answer instead of 10 s: for a request that
    /// the server answers only after its own waits (a write behind another process's lock
    /// answers 503 after two busy timeouts, ~10 s).
    pub fn waiting(mut self, secs: u64) -> Http {
        self.agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(secs)))
            .http_status_as_error(false)
            .build()
            .into();
        self
    }

    /// Sends the admin token of the worker in `dir` (which opens every route).
    pub fn with_token(mut self, dir: &Path) -> Http {
        self.token = std::fs::read_to_string(dir.join("admin.token")).ok().map(|t| t.trim().to_owned());
        self
    }

    /// Sends the user key of the worker in `dir`, as the hooks and the read commands do.
    pub fn with_key(mut self, dir: &Path) -> Http {
        self.token = Some(user_key(dir));
        self
    }

    pub fn get(&self, path: &str) -> Result<(u16, serde_json::Value), ureq::Error> {
        self.request("GET", path, None, &[])
    }

    pub fn post(&self, path: &str, body: &serde_json::Value) -> Result<(u16, serde_json::Value), ureq::Error> {
        self.request("POST", path, Some(body.to_string()), &[("Content-Type", "application/json")])
    }

    /// Any request; `headers` may override Host, Origin, Content-Type, Authorization.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<String>,
        headers: &[(&str, &str)],
    ) -> Result<(u16, serde_json::Value), ureq::Error> {
        let mut builder = ureq::http::Request::builder().method(method).uri(format!("{}{path}", self.base));
        if let Some(token) = &self.token
            && !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
        {
            builder = builder.header("Authorization", format!("Bearer {token}"));
        }
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        let request = builder.body(body.unwrap_or_default()).expect("build request");
        let mut response = self.agent.run(request)?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string()?;
        Ok((status, serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text))))
    }
}

/// The `questions` table's column names, in order: what a test copying a stored question
/// under another id or type lists in its `INSERT … SELECT`.
pub fn question_columns(conn: &rusqlite::Connection) -> Vec<String> {
    conn.prepare("SELECT name FROM pragma_table_info('questions')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}
