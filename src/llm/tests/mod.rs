//! Tests of the provider layer against local stand-ins: a fake HTTP server for the HTTP
//! providers (one shared suite), `sh` one-liners for the command provider, and `select` over
//! settings and a fake `PATH`.

mod command;
mod fake_server;
mod http_suite;
mod select;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh directory under the system temp dir, removed on drop (no `tempfile` dependency in
/// this scratch crate).
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new() -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("vl-llm-test-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `name`, runnable or not (a mode on Unix; the name's extension decides on Windows).
    pub fn file(&self, name: &str, content: &str, executable: bool) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, content).expect("write file");
        crate::platform::set_executable(&path, executable).expect("chmod");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
