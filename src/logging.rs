//! The log file (SPEC §9): `<data>/logs/vibelearn.log`, one line per record
//! (`2026-11-29T13:25:34.123Z LEVEL target message`), rotated by size (10 MiB × 5), secrets
//! redacted. Hooks log here too and never to stdout/stderr; they only append, and the worker
//! alone rotates ([`Rotation`]): two processes renaming the same files at once could lose one.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use log::{Level, LevelFilter, Log, Metadata, Record};

/// Rotate when the file passes this size.
pub const MAX_LOG_BYTES: u64 = 10 * 1024 * 1024;
/// Rotated files kept (`vibelearn.log.1` … `.5`).
pub const KEEP_FILES: u32 = 5;

struct FileLogger {
    path: PathBuf,
    level: LevelFilter,
    /// Rotate past this size ([`MAX_LOG_BYTES`] outside tests); `None`: append only.
    max_bytes: Option<u64>,
    secrets: Vec<String>,
    /// The open file and its size; a Mutex because any thread may log.
    file: Mutex<Option<(File, u64)>>,
}

/// Whether this process rotates the log file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rotation {
    /// The worker (and the demo's in-process worker): rotates by size.
    BySize,
    /// Hooks and other short-lived processes: append; the worker rotates.
    AppendOnly,
}

/// Installs the file logger. Failing to open the log is not fatal: logging is then off.
pub fn init(logs_dir: &Path, level: &str, secrets: Vec<String>, rotation: Rotation) {
    let level = match level.trim().to_ascii_uppercase().as_str() {
        "ERROR" => LevelFilter::Error,
        "WARN" | "WARNING" => LevelFilter::Warn,
        "DEBUG" => LevelFilter::Debug,
        "TRACE" => LevelFilter::Trace,
        "OFF" => LevelFilter::Off,
        _ => LevelFilter::Info,
    };
    let _ = crate::platform::create_private_dir(logs_dir);
    let path = logs_dir.join("vibelearn.log");
    let file = open(&path);
    let max_bytes = (rotation == Rotation::BySize).then_some(MAX_LOG_BYTES);
    let logger = FileLogger { path, level, max_bytes, secrets, file: Mutex::new(file) };
    if log::set_boxed_logger(Box::new(logger)).is_ok() {
        log::set_max_level(level);
    }
}

fn open(path: &Path) -> Option<(File, u64)> {
    // Owner-only from its creation (the umask does that too; this holds without it). A rotated
    // file keeps its mode through the rename, and a loose one left by an older version is
    // tightened with the rest of the data dir at the worker's start.
    let file = crate::platform::open_private_append(path).ok()?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    Some((file, size))
}

impl FileLogger {
    fn rotate(&self) {
        for n in (1..KEEP_FILES).rev() {
            let _ = std::fs::rename(
                self.path.with_extension(format!("log.{n}")),
                self.path.with_extension(format!("log.{}", n + 1)),
            );
        }
        let _ = std::fs::rename(&self.path, self.path.with_extension("log.1"));
    }
}

impl Log for FileLogger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.level() <= self.level
    }

    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let message = crate::config::redact(&record.args().to_string(), &self.secrets);
        let line = format!(
            "{} {:<5} {} {}\n",
            crate::clock::format_utc(crate::clock::Clock::now_ms(&crate::clock::SystemClock)),
            level_name(record.level()),
            record.target(),
            message.replace('\n', "\\n")
        );
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(max_bytes) = self.max_bytes
            && guard.as_ref().is_some_and(|(_, size)| *size + line.len() as u64 > max_bytes)
        {
            *guard = None;
            self.rotate();
            *guard = open(&self.path);
        }
        if let Some((file, size)) = guard.as_mut()
            && file.write_all(line.as_bytes()).is_ok()
        {
            *size += line.len() as u64;
        }
    }

    fn flush(&self) {
        if let Some((file, _)) = self.file.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            let _ = file.flush();
        }
    }
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Error => "ERROR",
        Level::Warn => "WARN",
        Level::Info => "INFO",
        Level::Debug => "DEBUG",
        Level::Trace => "TRACE",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_rotates_by_size_keeps_five_files_and_redacts_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vibelearn.log");
        let logger = FileLogger {
            path: path.clone(),
            level: LevelFilter::Info,
            max_bytes: Some(1000),
            secrets: vec!["sk-secret-0123456789".to_owned()],
            file: Mutex::new(open(&path)),
        };
        for n in 0..200 {
            logger.log(
                &Record::builder()
                    .args(format_args!("line {n} key=sk-secret-0123456789"))
                    .level(Level::Info)
                    .target("t")
                    .build(),
            );
        }
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "vibelearn.log",
                "vibelearn.log.1",
                "vibelearn.log.2",
                "vibelearn.log.3",
                "vibelearn.log.4",
                "vibelearn.log.5"
            ]
        );
        for name in names {
            let text = std::fs::read_to_string(dir.path().join(&name)).unwrap();
            assert!(text.len() <= 1000, "{name} is {} bytes", text.len());
            assert!(!text.contains("sk-secret-0123456789") && text.contains("sk-s…6789"), "{name}: {text}");
        }
        let newest = std::fs::read_to_string(&path).unwrap();
        assert!(newest.contains("line 199") && newest.contains(" INFO  t "), "{newest}");
    }

    #[test]
    fn an_append_only_logger_never_rotates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vibelearn.log");
        let logger = FileLogger {
            path: path.clone(),
            level: LevelFilter::Info,
            max_bytes: None,
            secrets: Vec::new(),
            file: Mutex::new(open(&path)),
        };
        for n in 0..200 {
            logger.log(&Record::builder().args(format_args!("line {n}")).level(Level::Info).target("t").build());
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "only the worker renames log files");
    }
}
