//! The run store: every run, its spec, system, measurements and histograms, in one SQLite
//! file (default `$XDG_DATA_HOME/fsynclab/fsynclab.sqlite`).
//!
//! A run is written as it goes, so nothing measured is lost to a kill (hyperfine's habit):
//! - [`Store::begin_run`] inserts it as `running` and, in the same transaction, takes an
//!   exclusive `flock` on its lock file `<db>.locks/run-<id>.lock` (created `O_NOFOLLOW`,
//!   mode 0600, in a directory owned by the user), held until the run has its final status;
//! - [`Store::plan_run_dir`] records the run's directory (`fsynclab-<id>[-<n>]`, the
//!   target's device and inode) before the engine creates it;
//! - [`Store::append_intervals`] appends interval samples and the counts so far, at most
//!   about once a second, from the run's persister thread (its own connection, see
//!   [`Store::reopen`]);
//! - [`Store::finish_run`] (or [`Store::fail_run`]) stores the outcome in one transaction,
//!   replacing the streamed intervals with the final list, and drops the lock.
//!
//! A run left `running` whose lock can be taken (its process is gone, in whatever PID
//! namespace it ran) is marked `interrupted` by the next open; its streamed samples and
//! progress stay ([`StoredRun::progress`], [`StoredRun::partial_intervals`]), and
//! [`Store::leftover_run_dirs`] names its directory for `fsynclab clean`.
//!
//! Opening: an existing file is checked first on a read-only connection (`PRAGMA
//! quick_check`; about 20 ms for 1000 runs): a damaged file, or one that is not a database,
//! is refused with [`StoreError::Damaged`] and never written to. [`OpenMode::ReadOnly`]
//! ([`Store::open_read_only`]) takes no write lock at all, so readers never wait for a run
//! in another process and a read-only file or filesystem can be read. Migrations and the
//! interrupted sweep take the write lock only when there is something to do. Writes that
//! meet another process's lock retry for up to [`WRITE_PATIENCE`], calling the notice set
//! with [`Store::set_lock_wait_notice`] once.
//!
//! Schema versions follow rusqlite_migration: `PRAGMA user_version`, SQL files in
//! `migrations/`, each applied atomically; a file from a newer fsynclab is refused untouched.
//!
//! A [`Store`] wraps one SQLite connection: it is `Send` but not `Sync`, so a thread that
//! needs the database (the GUI's worker, a run's persister) opens its own `Store` on the
//! same path; WAL mode and a 5 s busy timeout let them share it.

mod advice;
mod anchor;
mod bundle;
mod bundle_merge;
mod bundle_values;
mod db_path;
mod failure_column;
mod open;
mod origin;
mod progress;
mod query;
mod run_lock;
mod runs;
mod schema;
#[cfg(test)]
mod tests;

pub use advice::{CrashVerdictRow, NewAdvice, StoredAdvice};
pub use anchor::{AnchorError, anchor_dir, is_anchored, through_anchor};
pub use bundle::{Bundle, BundleError, MAX_BUNDLE_VALUE_BYTES, MergeCounts, SQLITE_HEADER};
pub use bundle_merge::AdviceCheck;
pub use db_path::{Invoker, anchor_database, anchor_existing_database, data_dir, user_data_dir};
#[cfg(any(test, feature = "test-support"))]
pub use open::race;
pub use open::{OpenMode, STREAM_BUSY_TIMEOUT};
pub use origin::{OriginKind, RunOrigin};
pub use progress::{CleanOutcome, ForeignDatabase, RunDir, RunProgress, WRITE_PATIENCE};
pub use query::{MAX_FILTER_BYTES, RunFilter, RunRow, StoredRun};
pub use runs::{Experiment, NewRun};

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

use crate::metrics::MetricsError;
pub(crate) use crate::owner::{current_owner, owner_alive};
use crate::spec::{Action, Neutral, Setting, SettingNames, Worded, shown_path};

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
    #[error("{}", self.worded(&Neutral))]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Something other than a regular file is at the database path (a block device, a
    /// directory, a FIFO...): SQLite would take a device for an empty database and write
    /// its header over the device's first blocks.
    #[error("{}", self.worded(&Neutral))]
    NotAFile {
        /// The path given.
        path: PathBuf,
        /// What is there (`a block device`...).
        kind: &'static str,
    },
    /// As root, an explicit database path runs through a directory another user could
    /// swap or write in (see `db_path.rs`): nothing was created in it.
    #[error("{}", self.worded(&Neutral))]
    UnsafeDirectory {
        /// The path given.
        path: PathBuf,
        /// The directory (or link) at fault.
        dir: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// As root, the default database's path (from `XDG_DATA_HOME` or `HOME`) runs through a
    /// directory another user could swap or write in: nothing was created in it.
    #[error("{}", self.worded(&Neutral))]
    UnsafeDefault {
        /// The default path.
        path: PathBuf,
        /// The directory (or link) at fault.
        dir: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// A command that stores runs was given a database this user may only read (a
    /// read-only file, directory or mount).
    #[error("{}", self.worded(&Neutral))]
    ReadOnly {
        /// The database file.
        path: PathBuf,
    },
    /// The file could not be opened as an SQLite database.
    #[error("{}", self.worded(&Neutral))]
    Open {
        /// The database file.
        path: PathBuf,
        /// Why.
        source: rusqlite::Error,
    },
    /// The file's schema is newer than this build understands; it was left untouched.
    #[error("{}", self.worded(&Neutral))]
    Newer {
        /// The database file.
        path: PathBuf,
        /// Schema version found in the file.
        found: i64,
        /// Newest schema version this build knows.
        supported: i64,
    },
    /// The schema could not be brought up to date; the file keeps its previous version.
    #[error("{}", self.worded(&Neutral))]
    Migrate {
        /// The database file.
        path: PathBuf,
        /// The migration that failed (or `reading the schema version`).
        step: String,
        /// Why.
        source: rusqlite::Error,
    },
    /// The file is damaged or is not an SQLite database; it was not written to.
    #[error("{}", self.worded(&Neutral))]
    Damaged {
        /// The database file.
        path: PathBuf,
        /// What SQLite found (its error, or what `quick_check` listed).
        problem: String,
        /// The SQLite error that said so (none when `quick_check` listed problems).
        source: Option<Box<rusqlite::Error>>,
    },
    /// A run's lock file (which tells later opens that the run is alive) could not be made.
    #[error("{}", self.worded(&Neutral))]
    RunLock {
        /// The lock file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The run's target directory could not be inspected to record the run's directory.
    #[error("cannot inspect target {path} to record the run's directory: {source}")]
    RunDir {
        /// The target.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Another process held the database's write lock for longer than fsynclab waits.
    #[error(
        "the database {path} stayed locked by another process for {waited_s} s; \
         stop the other fsynclab (or sqlite3) using it and try again"
    )]
    LockedTooLong {
        /// The database file.
        path: PathBuf,
        /// How long fsynclab waited.
        waited_s: u64,
    },
    /// No run has this id.
    #[error("{}", self.worded(&Neutral))]
    NotFound {
        /// The id asked for.
        id: i64,
    },
    /// No stored advice has this id.
    #[error("no advice with id {id}; list them with the advice list")]
    AdviceNotFound {
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
    #[error("{}", self.worded(&Neutral))]
    NoDataDir,
}

impl Worded for StoreError {
    fn worded(&self, names: &dyn SettingNames) -> String {
        let db = names.name(Setting::Database, None);
        match self {
            StoreError::CreateDir { path, source } => {
                let shown = path.display();
                format!(
                    "cannot create directory {shown} for the database: {source}; check the permissions or choose another file with {db}"
                )
            }
            StoreError::NotAFile { path, kind } => {
                let shown = path.display();
                format!(
                    "database path {shown} is {kind}, not a regular file; nothing was written to it: \
         give a database file path with {db} (or FSYNCLAB_DB)"
                )
            }
            StoreError::UnsafeDirectory { path, dir, why } => {
                let (shown, at) = (shown_path(path), shown_path(dir));
                format!(
                    "database path {shown} is not safe for root: {at}: {why}; another user could swap it \
         between fsynclab's checks and SQLite's open. Give {db} a directory only root can change \
         (under sudo: one of your own that nobody else can write), or leave {db} out for the default"
                )
            }
            StoreError::UnsafeDefault { path, dir, why } => {
                let (shown, at) = (shown_path(path), shown_path(dir));
                format!(
                    "the default database path {shown} (from XDG_DATA_HOME or HOME) is not safe for \
         root: {at}: {why}; another user could swap it. Set XDG_DATA_HOME to a directory only root \
         can change (under sudo: one of your own), or give {db}"
                )
            }
            StoreError::ReadOnly { path } => {
                let shown = shown_path(path);
                format!(
                    "the database {shown} can only be read here (a read-only file, directory or \
                     mount): reading commands work, storing runs does not; give {db} a database \
                     you can write, or make this one writable"
                )
            }
            StoreError::Open { path, source } => {
                let shown = path.display();
                format!(
                    "cannot open database {shown}: {source}; check the path and permissions or choose another with {db}"
                )
            }
            StoreError::Newer {
                path,
                found,
                supported,
            } => {
                let shown = path.display();
                format!(
                    "database {shown} was written by a newer fsynclab (schema {found}; this build knows up to {supported}); upgrade fsynclab or choose another file with {db}"
                )
            }
            StoreError::Migrate { path, step, source } => {
                let shown = path.display();
                format!(
                    "cannot update the schema of database {shown} ({step}): {source}; check that the disk is writable or choose another file with {db}"
                )
            }
            StoreError::Damaged { path, problem, .. } => {
                let shown = path.display();
                format!(
                    "database {shown} is damaged ({problem}); it was left untouched: restore it from a backup, \
         salvage it with `sqlite3 {shown} .recover`, or choose another file with {db}"
                )
            }
            StoreError::RunLock { path, source } => {
                let shown = path.display();
                format!(
                    "cannot create the run lock file {shown}: {source}; the directory beside the database must be \
         writable by this user (or choose another database with {db})"
                )
            }
            StoreError::NotFound { id } => {
                format!(
                    "no run with id {id}; see {}",
                    names.action(Action::ListRuns)
                )
            }
            StoreError::NoDataDir => format!(
                "cannot find a data directory (set HOME or XDG_DATA_HOME); choose a database file with {db}"
            ),
            other => other.to_string(),
        }
    }
}

/// The run database. See the module documentation.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: Option<PathBuf>,
    read_only: bool,
    interrupted: Vec<i64>,
    /// Lock files of the runs this store began and has not finished (see `open.rs`).
    run_locks: RefCell<HashMap<i64, run_lock::RunLock>>,
    lock_wait: Option<LockWaitNotice>,
}

/// The front end's "waiting for the lock" callback.
struct LockWaitNotice(Box<dyn Fn() + Send>);

impl std::fmt::Debug for LockWaitNotice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LockWaitNotice")
    }
}

impl Store {
    /// The default database file: `$XDG_DATA_HOME/fsynclab/fsynclab.sqlite`, falling back to
    /// `~/.local/share/fsynclab/fsynclab.sqlite` (the platform's data directory elsewhere);
    /// under `sudo`, in the invoking user's data directory ([`data_dir`]).
    pub fn default_path() -> Result<PathBuf, StoreError> {
        // Under `sudo`, the invoking user's (see `probe::sudo_user`).
        let dir = db_path::data_dir().ok_or(StoreError::NoDataDir)?;
        Ok(dir.join(DB_FILE_NAME))
    }

    /// The database to open: `explicit` (`--db`, `FSYNCLAB_DB`) or [`Store::default_path`].
    /// As root an explicit path is anchored ([`anchor_database`]): its directories are
    /// checked, the database's directory is held open, and the path returned is the one
    /// to hand to [`Store::open`] (absolute, without links). Under sudo it must be a
    /// directory of the invoking user's own. Other users' paths are returned as given.
    pub fn path_for(explicit: Option<&Path>) -> Result<PathBuf, StoreError> {
        Store::resolve(explicit, true).map(|found| found.expect("made when missing"))
    }

    /// [`Store::path_for`]; with `create` false nothing is made on the way and `None` says
    /// the database does not exist (as root the walk's checks still refuse an unsafe
    /// directory before that is said).
    pub(crate) fn resolve(
        explicit: Option<&Path>,
        create: bool,
    ) -> Result<Option<PathBuf>, StoreError> {
        let root = nix::unistd::geteuid().is_root();
        let anchor = |path: &Path| {
            let invoker = crate::probe::invoking_user_ids();
            if create {
                anchor_database(path, invoker).map(Some)
            } else {
                anchor_existing_database(path, invoker)
            }
        };
        let as_given = |path: PathBuf| {
            let missing = !create
                && std::fs::symlink_metadata(&path)
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
            (!missing).then_some(path)
        };
        match explicit {
            Some(path) if !root => Ok(as_given(path.to_path_buf())),
            Some(path) => anchor(path),
            None if !root => Ok(as_given(Store::default_path()?)),
            // The default path is anchored as a given one is: XDG_DATA_HOME is the
            // caller's environment, as much as --db is.
            None => anchor(&Store::default_path()?).map_err(|e| match e {
                StoreError::UnsafeDirectory { path, dir, why } => {
                    StoreError::UnsafeDefault { path, dir, why }
                }
                other => other,
            }),
        }
    }

    /// The database file, `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Calls `notice` once each time a write starts waiting for a lock held by another
    /// process (after the 5 s busy timeout), so a front end can say why it pauses.
    pub fn set_lock_wait_notice(&mut self, notice: impl Fn() + Send + 'static) {
        self.lock_wait = Some(LockWaitNotice(Box::new(notice)));
    }
}

/// The failure recorded on a run found `interrupted` ([`crate::metrics::RunFailure::Interrupted`]
/// as stored in `runs.error`).
pub const INTERRUPTED_MESSAGE: &str = r#"{"code":"interrupted"}"#;

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Converts a count for an INTEGER column, refusing values above `i64::MAX`.
pub fn to_int(what: &'static str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::TooLarge { what, value })
}

/// [`to_int`] for optional figures.
pub fn to_opt_int(what: &'static str, value: Option<u64>) -> Result<Option<i64>, StoreError> {
    value.map(|v| to_int(what, v)).transpose()
}
