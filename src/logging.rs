//! The log file (SPEC §9): `<data>/logs/vibelearn.log`, one line per record
//! (`2026-11-29T13:25:34.123Z LEVEL target message`), rotated by size (10 MiB × 5), secrets
//! redacted. Hooks log here too and never to stdout/stderr.

use std::fs::{File, OpenOptions};
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
    /// Rotate past this size ([`MAX_LOG_BYTES`] outside tests).
    max_bytes: u64,
    secrets: Vec<String>,
    /// The open file and its size; a Mutex because any thread may log.
    file: Mutex<Option<(File, u64)>>,
}

/// Installs the file logger. Failing to open the log is not fatal: logging is then off.
pub fn init(logs_dir: &Path, level: &str, secrets: Vec<String>) {
    let level = match level.trim().to_ascii_uppercase().as_str() {
        "ERROR" => LevelFilter::Error,
        "WARN" | "WARNING" => LevelFilter::Warn,
        "DEBUG" => LevelFilter::Debug,
        "TRACE" => LevelFilter::Trace,
        "OFF" => LevelFilter::Off,
        _ => LevelFilter::Info,
    };
    let _ = std::fs::create_dir_all(logs_dir);
    let path = logs_dir.join("vibelearn.log");
    let file = open(&path);
    let logger = FileLogger { path, level, max_bytes: MAX_LOG_BYTES, secrets, file: Mutex::new(file) };
    if log::set_boxed_logger(Box::new(logger)).is_ok() {
        log::set_max_level(level);
    }
}

fn open(path: &Path) -> Option<(File, u64)> {
    let file = OpenOptions::new().create(true).append(true).open(path).ok()?;
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
            format_utc(crate::clock::Clock::now_ms(&crate::clock::SystemClock)),
            level_name(record.level()),
            record.target(),
            message.replace('\n', "\\n")
        );
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if guard.as_ref().is_some_and(|(_, size)| *size + line.len() as u64 > self.max_bytes) {
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

/// `2026-11-29T13:25:34.123Z` from ms since the epoch (civil-from-days, proleptic Gregorian).
pub fn format_utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Days since 1970-01-01 → (year, month, day). Howard Hinnant's algorithm.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
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
            max_bytes: 1000,
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
    fn formats_utc_timestamps() {
        assert_eq!(format_utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_utc(1_795_958_734_123), "2026-11-29T13:25:34.123Z");
        assert_eq!(format_utc(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }
}
