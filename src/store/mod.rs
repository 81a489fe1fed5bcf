//! The run store: every run, its spec, system, measurements and histograms, in one SQLite
//! file (default `$XDG_DATA_HOME/fsynclab/fsynclab.sqlite`).
//!
//! A run is written twice: [`Store::begin_run`] inserts it as `running` before the engine
//! starts, [`Store::finish_run`] (or [`Store::fail_run`]) stores the outcome in one
//! transaction. A run whose process died stays `running` until the next [`Store::open`],
//! which marks it `interrupted`. Nothing measured is lost by a later failure (hyperfine's habit).
//!
//! Schema versions follow rusqlite_migration: `PRAGMA user_version`, SQL files in
//! `migrations/`, each applied atomically; a file from a newer fsynclab is refused untouched.
//!
//! A [`Store`] wraps one SQLite connection: it is `Send` but not `Sync`, so a thread that
//! needs the database (the GUI's worker, say) opens its own `Store` on the same path; WAL
//! mode and a 5 s busy timeout let them share it.

mod query;
mod runs;
mod schema;
#[cfg(test)]
mod tests;

pub use query::{RunFilter, RunRow, StoredRun};
pub use runs::{Experiment, NewRun};

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

use crate::metrics::MetricsError;

/// Name of the database file inside the data directory.
pub const DB_FILE_NAME: &str = "fsynclab.sqlite";

/// How long a statement waits for another process's write lock before failing.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The encoding recorded with each stored histogram.
pub const HISTOGRAM_ENCODING: &str = "hdr-v2-deflate";

/// Errors of the store; each names the thing and what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The directory for the database file could not be created.
    #[error(
        "cannot create directory {path} for the database: {source}; check the permissions or choose another file with --db"
    )]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file could not be opened as an SQLite database.
    #[error(
        "cannot open database {path}: {source}; check the path and permissions or choose another with --db"
    )]
    Open {
        /// The database file.
        path: PathBuf,
        /// Why.
        source: rusqlite::Error,
    },
    /// The file's schema is newer than this build understands; it was left untouched.
    #[error(
        "database {path} was written by a newer fsynclab (schema {found}; this build knows up to {supported}); upgrade fsynclab or choose another file with --db"
    )]
    Newer {
        /// The database file.
        path: PathBuf,
        /// Schema version found in the file.
        found: i64,
        /// Newest schema version this build knows.
        supported: i64,
    },
    /// The schema could not be brought up to date; the file keeps its previous version.
    #[error(
        "cannot update the schema of database {path} ({step}): {source}; check that the disk is writable or choose another file with --db"
    )]
    Migrate {
        /// The database file.
        path: PathBuf,
        /// The migration that failed (or `reading the schema version`).
        step: String,
        /// Why.
        source: rusqlite::Error,
    },
    /// No run has this id.
    #[error("no run with id {id}; see `fsynclab list`")]
    NotFound {
        /// The id asked for.
        id: i64,
    },
    /// No experiment has this id.
    #[error("no experiment with id {id}; create the experiment first or leave it out")]
    ExperimentNotFound {
        /// The id asked for.
        id: i64,
    },
    /// A tag was empty (or only white space).
    #[error("tag {tag:?} is empty; use a word such as `baseline` or `nobarrier`")]
    EmptyTag {
        /// The tag given.
        tag: String,
    },
    /// A count does not fit SQLite's signed 64-bit integer (a bug upstream of the store).
    #[error(
        "{what} = {value} is larger than the database can hold ({max}); this is a bug in fsynclab, please report it",
        max = i64::MAX
    )]
    TooLarge {
        /// Which figure.
        what: &'static str,
        /// Its value.
        value: u64,
    },
    /// A stored run cannot be read back.
    #[error(
        "run {id} cannot be read back: {problem}; the file may have been changed by another program"
    )]
    Corrupt {
        /// The run.
        id: i64,
        /// What is wrong.
        problem: String,
    },
    /// An SQLite error.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// Stored JSON could not be written or read.
    #[error("cannot encode or decode stored JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A stored histogram could not be written or read.
    #[error("stored latency histogram: {0}")]
    Histogram(#[from] MetricsError),
    /// Neither `XDG_DATA_HOME` nor a home directory is known.
    #[error(
        "cannot find a data directory (set HOME or XDG_DATA_HOME); choose a database file with --db"
    )]
    NoDataDir,
}

/// The run database. See the module documentation.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: Option<PathBuf>,
    interrupted: Vec<i64>,
}

impl Store {
    /// The default database file: `$XDG_DATA_HOME/fsynclab/fsynclab.sqlite`, falling back to
    /// `~/.local/share/fsynclab/fsynclab.sqlite` (the platform's data directory elsewhere).
    pub fn default_path() -> Result<PathBuf, StoreError> {
        let dirs =
            directories::ProjectDirs::from("", "", "fsynclab").ok_or(StoreError::NoDataDir)?;
        Ok(dirs.data_dir().join(DB_FILE_NAME))
    }

    /// Opens (or creates) the database at `path`.
    ///
    /// Creates missing parent directories, refuses a file written by a newer fsynclab
    /// without changing it, then turns on WAL mode, a 5 s busy timeout and foreign keys,
    /// applies pending migrations, and marks runs left `running` by a process that no longer
    /// exists as `interrupted` (their ids: [`Store::interrupted_on_open`]).
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::CreateDir {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let conn = Connection::open(path).map_err(open_err)?;
        Store::init(conn, Some(path.to_path_buf()))
    }

    /// A private database in memory, for tests and dry runs.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let conn = Connection::open_in_memory().map_err(|source| StoreError::Open {
            path: PathBuf::from(":memory:"),
            source,
        })?;
        Store::init(conn, None)
    }

    fn init(mut conn: Connection, path: Option<PathBuf>) -> Result<Store, StoreError> {
        let shown = path.clone().unwrap_or_else(|| PathBuf::from(":memory:"));
        let open_err = |source| StoreError::Open {
            path: shown.clone(),
            source,
        };
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
        // Read the version before anything writes: a newer file must stay untouched, and
        // switching to WAL already changes the file header. This first read is also where a
        // file that is not a database shows itself.
        let found = schema::user_version(&conn).map_err(open_err)?;
        let supported = schema::supported_version();
        let newer = |found| StoreError::Newer {
            path: shown.clone(),
            found,
            supported,
        };
        if found > supported {
            return Err(newer(found));
        }
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0))
            .map_err(open_err)?;
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(open_err)?;
        let outcome = schema::migrate(&mut conn).map_err(|e| StoreError::Migrate {
            path: shown.clone(),
            step: e.name.map_or_else(
                || "reading the schema version".to_string(),
                |name| format!("migration {name}"),
            ),
            source: e.source,
        })?;
        if let schema::Outcome::Newer { found } = outcome {
            return Err(newer(found));
        }
        let mut store = Store {
            conn,
            path,
            interrupted: Vec::new(),
        };
        store.interrupted = store.mark_interrupted()?;
        Ok(store)
    }

    /// The database file, `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Runs found `running` at open whose process had died, now marked `interrupted`.
    pub fn interrupted_on_open(&self) -> &[i64] {
        &self.interrupted
    }

    /// Marks `running` rows whose owning process is gone as `interrupted`.
    ///
    /// A run being measured by another live fsynclab process (the GUI while the CLI lists)
    /// is left alone: each run records its owner's pid and process start time.
    fn mark_interrupted(&self) -> Result<Vec<i64>, StoreError> {
        let tx = self.conn.unchecked_transaction()?;
        let running: Vec<(i64, Option<i64>, Option<i64>)> = tx
            .prepare("SELECT id, owner_pid, owner_start_ticks FROM runs WHERE status = 'running'")?
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
            .collect::<Result<_, _>>()?;
        let mut marked = Vec::new();
        for (id, pid, start_ticks) in running {
            if owner_alive(pid, start_ticks) {
                continue;
            }
            tx.execute(
                "UPDATE runs SET status = 'interrupted', error = coalesce(error, ?2) \
                 WHERE id = ?1 AND status = 'running'",
                (id, INTERRUPTED_MESSAGE),
            )?;
            marked.push(id);
        }
        tx.commit()?;
        Ok(marked)
    }
}

/// The error recorded on a run found `interrupted`.
pub const INTERRUPTED_MESSAGE: &str =
    "the fsynclab process measuring this run ended before the run did (crash, kill or power loss)";

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Converts a count for an INTEGER column, refusing values above `i64::MAX`.
pub(crate) fn to_int(what: &'static str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::TooLarge { what, value })
}

/// [`to_int`] for optional figures.
pub(crate) fn to_opt_int(
    what: &'static str,
    value: Option<u64>,
) -> Result<Option<i64>, StoreError> {
    value.map(|v| to_int(what, v)).transpose()
}

/// This process's id and start time (in clock ticks since boot, `/proc/self/stat` field 22).
pub(crate) fn current_owner() -> (i64, Option<i64>) {
    let pid = std::process::id();
    (i64::from(pid), process_start_ticks(pid))
}

/// Start time of a process, `None` when it does not exist (or `/proc` is unreadable).
fn process_start_ticks(pid: u32) -> Option<i64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may contain spaces and parentheses: skip past the last ')'.
    let after_name = stat.rsplit_once(')')?.1;
    // Fields from 3 (state) on; starttime is field 22.
    after_name.split_whitespace().nth(22 - 3)?.parse().ok()
}

/// Whether the process that began a run still runs (same pid and same start time, so a
/// recycled pid does not count).
fn owner_alive(pid: Option<i64>, start_ticks: Option<i64>) -> bool {
    let Some(pid) = pid.and_then(|p| u32::try_from(p).ok()) else {
        return false;
    };
    match process_start_ticks(pid) {
        None => false,
        Some(now) => start_ticks.is_none_or(|then| then == now),
    }
}
