//! Opening the SQLite database: connection pragmas, their read-back check, and migrations.
//!
//! Every connection (the writer's, the read pool's, a hook's direct enqueue, the CLI's) is
//! opened by [`open`], so they all agree on WAL, foreign keys and the busy timeout. A pragma
//! that does not read back as requested (a read-only directory that cannot hold a WAL, an old
//! SQLite) is a startup error, not a silent downgrade of durability.

pub mod fsrs_migration;
pub mod migrate;
#[cfg(test)]
pub mod testing;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

pub use migrate::{latest_version, migrate};

/// How long a connection waits for another process's write lock before SQLITE_BUSY.
/// SPEC §5.3 asks for at least 5 s; hooks and the CLI may write while the worker runs.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Prepared statements kept per connection.
pub const STATEMENT_CACHE: usize = 128;

/// `PRAGMA synchronous` levels we accept from `VIBELEARN_SYNCHRONOUS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Synchronous {
    /// fsync the WAL at every commit: a 202 survives power loss. The default.
    Full,
    /// fsync only at checkpoints: faster, may lose the last commits on power loss
    /// (never on a process crash).
    Normal,
}

impl Synchronous {
    pub fn parse(raw: &str) -> Option<Synchronous> {
        match raw.trim().to_ascii_uppercase().as_str() {
            "FULL" | "2" => Some(Synchronous::Full),
            "NORMAL" | "1" => Some(Synchronous::Normal),
            _ => None,
        }
    }

    fn pragma_value(self) -> i64 {
        match self {
            Synchronous::Full => 2,
            Synchronous::Normal => 1,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Synchronous::Full => "FULL",
            Synchronous::Normal => "NORMAL",
        }
    }
}

/// Failures of the database layer, each with what the user can do about it.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("cannot open the database at {}: {source}", path.display())]
    Open { path: PathBuf, source: rusqlite::Error },
    #[error(
        "the database refused PRAGMA {pragma}={wanted} (it reads back {got}); \
         check that the data directory is on a local, writable file system"
    )]
    PragmaMismatch { pragma: &'static str, wanted: String, got: String },
    #[error(
        "the database has schema version {found} but this vl only knows up to {supported}; \
         it was written by a newer VibeLearn — upgrade vl"
    )]
    TooNew { found: u32, supported: u32 },
    #[error("migration {name} failed: {source}")]
    Migration { name: &'static str, source: rusqlite::Error },
    /// After migrating, a row of this table references a row that no longer exists.
    #[error("migrating left a row of {table} referencing a missing row; nothing was changed")]
    DanglingReference { table: String },
    #[error("database error: {0}")]
    Sqlite(#[source] rusqlite::Error),
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError::Sqlite(e)
    }
}

/// Opens (creating if needed) a read-write connection with the house pragmas, checked.
///
/// The database and its `-wal`/`-shm` are made owner-only first (three `lstat`s when they
/// are): SQLite gives a WAL and SHM it creates the database's own mode, whatever the umask,
/// so a 0644 database (a restored backup, a copy) would make its WAL 0644 too (SPEC §4).
pub fn open(path: &Path, synchronous: Synchronous) -> Result<Connection, DbError> {
    make_private(path);
    let conn = Connection::open(path).map_err(|source| DbError::Open { path: path.to_owned(), source })?;
    configure(&conn, synchronous)?;
    Ok(conn)
}

/// Takes others' bits off the database's files before SQLite opens them ([`open`]). A file
/// this user cannot chmod (another user's) is left to SQLite, which will say whether it can
/// use it; the log says it stayed loose.
fn make_private(path: &Path) {
    let mut files = vec![path.to_owned()];
    for suffix in ["-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        files.push(PathBuf::from(name));
    }
    for file in files {
        match crate::platform::make_file_private(&file) {
            Ok(Some((old, new))) => {
                log::warn!(target: "db", "made {} owner-only ({old:o}->{new:o})", file.display());
            }
            Ok(None) => {}
            Err(e) => {
                log::warn!(target: "db", "{} may be readable by others: cannot change its mode: {e}", file.display())
            }
        }
    }
}

/// Opens a read-only connection (CLI reads, the HTTP read pool uses [`configure`] directly).
pub fn open_read_only(path: &Path) -> Result<Connection, DbError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn =
        Connection::open_with_flags(path, flags).map_err(|source| DbError::Open { path: path.to_owned(), source })?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    conn.pragma_update(None, "foreign_keys", true)?;
    Ok(conn)
}

/// Applies and verifies the pragmas of SPEC §5.3 on a read-write connection.
pub fn configure(conn: &Connection, synchronous: Synchronous) -> Result<(), DbError> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // The queue alone has ~25 distinct statements; rusqlite's default cache of 16 would
    // re-prepare some of them on every job.
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // auto_vacuum only takes effect before the first table exists; on a fresh file this makes
    // the pruner's `PRAGMA incremental_vacuum` able to give pages back.
    let version: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version == 0 {
        conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
    }
    let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    expect_pragma("journal_mode", "wal", &mode.to_ascii_lowercase())?;
    conn.pragma_update(None, "synchronous", synchronous.pragma_value())?;
    conn.pragma_update(None, "foreign_keys", true)?;
    // The writer runs requests in SAVEPOINTs (all but a batch's first), and SQLite keeps the
    // pre-image of each page a savepoint changes in a statement journal, which past 64 KiB
    // spills to a temporary *file*: measured, that was ~9,000 pwrite calls per second under
    // HTTP load and most of the writer's kernel time. In memory it is a memcpy.
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    let sync: i64 = conn.query_row("PRAGMA synchronous", [], |r| r.get(0))?;
    expect_pragma("synchronous", synchronous.as_str(), &sync_name(sync))?;
    let fk: i64 = conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0))?;
    expect_pragma("foreign_keys", "1", &fk.to_string())?;
    let busy: i64 = conn.query_row("PRAGMA busy_timeout", [], |r| r.get(0))?;
    if busy < BUSY_TIMEOUT.as_millis() as i64 {
        return Err(DbError::PragmaMismatch {
            pragma: "busy_timeout",
            wanted: format!(">= {}", BUSY_TIMEOUT.as_millis()),
            got: busy.to_string(),
        });
    }
    Ok(())
}

fn sync_name(level: i64) -> String {
    match level {
        0 => "OFF".into(),
        1 => "NORMAL".into(),
        2 => "FULL".into(),
        3 => "EXTRA".into(),
        other => other.to_string(),
    }
}

fn expect_pragma(pragma: &'static str, wanted: &str, got: &str) -> Result<(), DbError> {
    if wanted == got { Ok(()) } else { Err(DbError::PragmaMismatch { pragma, wanted: wanted.into(), got: got.into() }) }
}

/// Opens the database read-write and migrates it: what every process that writes does first.
pub fn open_and_migrate(path: &Path, synchronous: Synchronous) -> Result<Connection, DbError> {
    let mut conn = open(path, synchronous)?;
    migrate(&mut conn)?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database left readable by others (a restored backup) is made owner-only before SQLite
    /// opens it, so the WAL and SHM it creates, which take the database's mode, are too.
    #[test]
    fn a_loose_database_is_made_private_before_its_wal_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vibelearn.db");
        rusqlite::Connection::open(&path).unwrap().execute_batch("CREATE TABLE t (x)").unwrap();
        crate::platform::set_mode(&path, 0o644).unwrap();
        let conn = open(&path, Synchronous::Normal).unwrap();
        conn.execute("INSERT INTO t VALUES (1)", []).unwrap();
        for name in ["vibelearn.db", "vibelearn.db-wal", "vibelearn.db-shm"] {
            let file = dir.path().join(name);
            let meta = std::fs::metadata(&file).unwrap();
            assert!(crate::platform::check_private_file(&file, &meta).is_ok(), "{name} is readable by others");
        }
    }
}
