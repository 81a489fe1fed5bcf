//! Opening the database: the damage check, lazy migrations, the interrupted-run sweep and
//! the per-run lock files that tell a live run from a dead one.
//!
//! Nothing here takes the write lock unless it has to: an up-to-date schema is seen with a
//! plain read of `user_version`, and the sweep first looks for `running` rows whose lock
//! file it can take (plain reads and a non-blocking `flock`). A file that fails
//! `PRAGMA quick_check` is refused before anything could write to it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};

use super::anchor::through_anchor;
use super::run_lock::{DeadRun, LockProbe};
use super::{BUSY_TIMEOUT, INTERRUPTED_MESSAGE, Store, StoreError, schema};

/// How a [`Store`] is opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OpenMode {
    /// Read and write (runs, edits): migrations are applied when needed.
    #[default]
    ReadWrite,
    /// For `list`, `show`, `compare`, `report` and the window's history: no write lock is
    /// taken to open (a read-only file or directory works); a sweep of dead runs is tried
    /// only when one exists and never waited for.
    ReadOnly,
}

/// Busy timeout of a [`Store::reopen`]ed connection.
pub const STREAM_BUSY_TIMEOUT: Duration = Duration::from_millis(250);

/// How long a reader's best-effort sweep waits for the write lock before giving up.
const READER_SWEEP_TIMEOUT: Duration = Duration::from_millis(200);

/// Whether an SQLite error says the file is not a database or is damaged.
pub(super) fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt)
    )
}

/// Whether an SQLite error is another process holding the lock.
pub(crate) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// `file:` URI of `path` with `mode=ro` (plus `immutable=1` when asked), every byte outside
/// the URI's unreserved set percent-escaped.
fn read_only_uri(path: &Path, immutable: bool) -> String {
    let mut uri = String::from("file:");
    for b in path.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'~') {
            uri.push(char::from(*b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str(if immutable {
        "?mode=ro&immutable=1"
    } else {
        "?mode=ro"
    });
    uri
}

/// Opens `path` read-only. A WAL file beside which this user can make no `-shm` (a
/// read-only filesystem, or a directory only others may write) is opened `immutable`.
fn connect_read_only(path: &Path) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI;
    let open_err = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    let conn = Connection::open_with_flags(read_only_uri(path, false), flags).map_err(open_err)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
    match schema::user_version(&conn) {
        // No -shm can be made beside the file: CANTOPEN on a read-only filesystem,
        // READONLY (CANTINIT) in a directory this user may not write.
        Err(e)
            if matches!(
                e.sqlite_error_code(),
                Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly)
            ) =>
        {
            let conn =
                Connection::open_with_flags(read_only_uri(path, true), flags).map_err(open_err)?;
            Ok(conn)
        }
        _ => Ok(conn),
    }
}

/// Refuses a database path where something other than a regular file exists (followed
/// through symlinks): SQLite sees a block device's size as 0, takes it for a new database
/// and writes its header and schema over the device's first blocks.
fn refuse_non_file(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::FileTypeExt;
    let held = through_anchor(path);
    // A link another user made (in their directory, under `sudo -E`) would have root
    // create or write a database wherever it points (`/etc/sudoers.d/x`...).
    if let Ok(link) = std::fs::symlink_metadata(&held)
        && link.file_type().is_symlink()
    {
        let euid = nix::unistd::geteuid().as_raw();
        if link.uid() != euid && link.uid() != 0 {
            return Err(StoreError::NotAFile {
                path: path.to_path_buf(),
                kind: "a symbolic link made by another user",
            });
        }
    }
    let Ok(meta) = std::fs::metadata(&held) else {
        return Ok(());
    };
    let kind = meta.file_type();
    let what = if kind.is_file() {
        return Ok(());
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(StoreError::NotAFile {
        path: path.to_path_buf(),
        kind: what,
    })
}

/// Reads the version and runs `PRAGMA quick_check` on a read-only connection: a damaged
/// file or one that is not a database is refused here, before any connection could write.
fn check_existing(conn: &Connection, path: &Path) -> Result<i64, StoreError> {
    let damaged = |problem: String, source: Option<Box<rusqlite::Error>>| StoreError::Damaged {
        path: path.to_path_buf(),
        problem,
        source,
    };
    let found = schema::user_version(conn).map_err(|e| {
        if is_damage(&e) {
            damaged(e.to_string(), Some(Box::new(e)))
        } else {
            StoreError::Open {
                path: path.to_path_buf(),
                source: e,
            }
        }
    })?;
    if found > schema::supported_version() {
        return Err(StoreError::Newer {
            path: path.to_path_buf(),
            found,
            supported: schema::supported_version(),
        });
    }
    let mut problems: Vec<String> = Vec::new();
    let checked = conn.prepare("PRAGMA quick_check(5)").and_then(|mut stmt| {
        let rows = stmt.query_map([], |row| row.get::<_, String>(0))?;
        for row in rows {
            problems.push(row?);
        }
        Ok(())
    });
    match checked {
        Err(e) if is_damage(&e) => return Err(damaged(e.to_string(), Some(Box::new(e)))),
        Err(e) => {
            return Err(StoreError::Open {
                path: path.to_path_buf(),
                source: e,
            });
        }
        Ok(()) => {}
    }
    if problems.len() != 1 || problems[0] != "ok" {
        return Err(damaged(problems.join("; "), None));
    }
    Ok(found)
}

impl Store {
    /// Opens (or creates) the database at `path` for reading and writing.
    ///
    /// Creates missing parent directories. An existing file is first checked on a
    /// read-only connection (a file written by a newer fsynclab, one that is not a
    /// database, or one failing `PRAGMA quick_check` is refused untouched); then WAL mode,
    /// a 5 s busy timeout and foreign keys are turned on, pending migrations applied, and
    /// runs left `running` by a process that no longer holds their lock file are marked
    /// `interrupted` (their ids: [`Store::interrupted_on_open`]).
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::open_with(path, OpenMode::ReadWrite)
    }

    /// Opens the database at `path` for reading: see [`OpenMode::ReadOnly`]. A missing
    /// file, or one whose schema is older than this build, is opened as by
    /// [`Store::open`] (created or migrated) since there is nothing to read otherwise.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        Store::open_with(path, OpenMode::ReadOnly)
    }

    /// Opens the database named by `explicit` (`--db`), or the default one, in `mode`
    /// (through [`Store::path_for`]). A command that only reads changes nothing on disk: a
    /// database that does not exist yet reads as an empty one, and no directory or file is
    /// made for it (as root its path is still walked and checked: an unsafe directory on
    /// the way is refused as for a command that writes).
    pub fn open_for(explicit: Option<&Path>, mode: OpenMode) -> Result<Store, StoreError> {
        let reading = mode == OpenMode::ReadOnly;
        match Store::resolve(explicit, !reading)? {
            // An empty file (not a link to one) reads as an empty database: no schema
            // written into it.
            Some(path)
                if reading
                    && std::fs::symlink_metadata(through_anchor(&path))
                        .is_ok_and(|m| m.is_file() && m.len() == 0) =>
            {
                Store::empty_for_reading(&path)
            }
            Some(path) => Store::open_with(&path, mode),
            None => match explicit {
                Some(path) => Store::empty_for_reading(path),
                None => Store::empty_for_reading(&Store::default_path()?),
            },
        }
    }

    /// An empty database in memory that names `path`: what a reader sees where no
    /// database exists yet (nothing is made there).
    fn empty_for_reading(path: &Path) -> Result<Store, StoreError> {
        let mut store = Store::open_in_memory()?;
        store.path = Some(path.to_path_buf());
        store.read_only = true;
        Ok(store)
    }

    /// Opens the database at `path` in `mode`.
    pub fn open_with(path: &Path, mode: OpenMode) -> Result<Store, StoreError> {
        refuse_non_file(path)?;
        #[cfg(any(test, feature = "test-support"))]
        race::checked(path);
        let exists = std::fs::metadata(through_anchor(path)).is_ok_and(|m| m.len() > 0);
        if exists {
            let check = connect_read_only(path)?;
            let found = check_existing(&check, path)?;
            if mode == OpenMode::ReadOnly && found == schema::supported_version() {
                let mut store = Store::from_conn(check, Some(path.to_path_buf()), true);
                store.interrupted = store.sweep_as_reader()?;
                return Ok(store);
            }
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            // An anchored directory (the sudo user's) exists: never re-made by path.
            std::fs::create_dir_all(through_anchor(parent)).map_err(|source| {
                StoreError::CreateDir {
                    path: parent.to_path_buf(),
                    source,
                }
            })?;
        }
        let conn = Connection::open(path).map_err(|source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        // SQLite falls back to reading a file it may not write: said now, not at the first
        // stored run as "attempt to write a readonly database".
        if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
            return Err(StoreError::ReadOnly {
                path: path.to_path_buf(),
            });
        }
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

    /// A second connection on this store's file for another thread (the run's persister),
    /// without the checks [`Store::open`] already made. Its busy timeout is short
    /// ([`STREAM_BUSY_TIMEOUT`]): a streaming writer retries on its next save rather than
    /// hold up the events it forwards. `None` for an in-memory store.
    pub fn reopen(&self) -> Option<Result<Store, StoreError>> {
        let path = self.path.clone()?;
        // Never creates: the file exists (this store has it open).
        let opened = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_WRITE)
            .and_then(|conn| {
                conn.busy_timeout(STREAM_BUSY_TIMEOUT)?;
                conn.pragma_update(None, "foreign_keys", true)?;
                // The streaming writes happen while the run measures: with the default
                // synchronous=FULL every once-a-second commit fsyncs the WAL, a cache flush
                // counted on the target's device whenever the database shares it (12-14
                // flushes in a 5 s `--sync none` run). NORMAL keeps every commit through a
                // kill -9 (the WAL is in the page cache) and syncs only at checkpoints; a
                // power loss may take the last streamed seconds, and the end of the run is
                // stored on the main connection, synchronously.
                conn.pragma_update(None, "synchronous", "NORMAL")?;
                Ok(conn)
            })
            .map_err(|source| StoreError::Open {
                path: path.clone(),
                source,
            });
        Some(opened.map(|conn| Store::from_conn(conn, Some(path), false)))
    }

    fn from_conn(conn: Connection, path: Option<PathBuf>, read_only: bool) -> Store {
        Store {
            conn,
            path,
            read_only,
            interrupted: Vec::new(),
            run_locks: RefCell::new(HashMap::new()),
            lock_wait: None,
        }
    }

    fn init(mut conn: Connection, path: Option<PathBuf>) -> Result<Store, StoreError> {
        let shown = path.clone().unwrap_or_else(|| PathBuf::from(":memory:"));
        let open_err = |source: rusqlite::Error| {
            if is_damage(&source) {
                StoreError::Damaged {
                    path: shown.clone(),
                    problem: source.to_string(),
                    source: Some(Box::new(source)),
                }
            } else {
                StoreError::Open {
                    path: shown.clone(),
                    source,
                }
            }
        };
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
        // Read the version before anything writes: a newer file must stay untouched, and
        // switching to WAL already changes the file header.
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
        // Switching to WAL needs the write lock: only when the file is not in WAL yet.
        let journal: String = conn
            .pragma_query_value(None, "journal_mode", |row| row.get(0))
            .map_err(open_err)?;
        if !journal.eq_ignore_ascii_case("wal") && path.is_some() {
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| {
                row.get::<_, String>(0)
            })
            .map_err(open_err)?;
        }
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
        let mut store = Store::from_conn(conn, path, false);
        store.interrupted = store.mark_interrupted()?;
        Ok(store)
    }

    /// Runs found `running` at open whose process had died, now marked `interrupted`.
    pub fn interrupted_on_open(&self) -> &[i64] {
        &self.interrupted
    }

    /// Whether this store was opened with [`OpenMode::ReadOnly`].
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// `running` rows whose owner is gone, found with plain reads and non-blocking lock
    /// probes. Each comes with the lock it now holds (released after marking).
    fn dead_running(&self) -> Result<Vec<DeadRun>, StoreError> {
        let running: Vec<(i64, Option<i64>, Option<i64>)> = self
            .conn
            .prepare("SELECT id, owner_pid, owner_start_ticks FROM runs WHERE status = 'running'")?
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
            .collect::<Result<_, _>>()?;
        let mut dead = Vec::new();
        for (id, pid, start_ticks) in running {
            match self.probe_run_lock(id) {
                LockProbe::Held => {}
                LockProbe::Free(file) => dead.push((id, Some(file))),
                // No lock file: a run recorded before lock files (or by an in-memory
                // store): fall back to the owner's pid and start time.
                LockProbe::Missing => {
                    if !super::owner_alive(pid, start_ticks) {
                        dead.push((id, None));
                    }
                }
            }
        }
        Ok(dead)
    }

    /// Marks `running` rows whose owning process is gone as `interrupted` (a run being
    /// measured by another live fsynclab process, in any PID namespace, holds its lock file
    /// and is left alone). Takes the write lock only when there is something to mark.
    pub(super) fn mark_interrupted(&self) -> Result<Vec<i64>, StoreError> {
        let dead = self.dead_running()?;
        if dead.is_empty() {
            return Ok(Vec::new());
        }
        match self.mark_dead(&self.conn, &dead) {
            Ok(marked) => Ok(marked),
            // Another process holds the write lock: leave the rows for the next open
            // rather than make this one fail.
            Err(StoreError::Sqlite(e)) if is_busy(&e) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// The reader's sweep: only when a dead run exists, on a short-lived writable
    /// connection that waits at most [`READER_SWEEP_TIMEOUT`]; any failure (read-only
    /// file, lock held) leaves the rows for a later open.
    fn sweep_as_reader(&self) -> Result<Vec<i64>, StoreError> {
        let dead = self.dead_running()?;
        if dead.is_empty() {
            return Ok(Vec::new());
        }
        let Some(path) = &self.path else {
            return Ok(Vec::new());
        };
        let writer = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)
            .and_then(|c| c.busy_timeout(READER_SWEEP_TIMEOUT).map(|()| c));
        Ok(match writer {
            Ok(conn) => self.mark_dead(&conn, &dead).unwrap_or_default(),
            Err(_) => Vec::new(),
        })
    }

    fn mark_dead(&self, conn: &Connection, dead: &[DeadRun]) -> Result<Vec<i64>, StoreError> {
        let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        let mut marked = Vec::new();
        for (id, _) in dead {
            let changed = tx.execute(
                "UPDATE runs SET status = 'interrupted', error = coalesce(error, ?2), \
                 error_code = coalesce(error_code, CASE WHEN error IS NULL THEN 'interrupted' END) \
                 WHERE id = ?1 AND status = 'running'",
                (id, INTERRUPTED_MESSAGE),
            )?;
            if changed > 0 {
                marked.push(*id);
            }
        }
        tx.commit()?;
        // Marked: their lock files (taken by the probe, still held) go.
        for (id, lock) in dead {
            if let Some(lock) = lock {
                lock.remove(*id);
            }
        }
        Ok(marked)
    }
}

/// Test support: a race made deterministic. [`before_sqlite_open`] runs a closure once,
/// when [`Store::open_with`] has checked `path` and is about to hand it to SQLite: the
/// instant a user racing root's fsynclab would swap a directory on the path.
#[cfg(any(test, feature = "test-support"))]
pub mod race {
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    type Pending = Vec<(PathBuf, Box<dyn FnOnce() + Send>)>;
    static PENDING: Mutex<Pending> = Mutex::new(Vec::new());

    /// Runs `swap` once, right after the checks of the next open of `path`.
    pub fn before_sqlite_open(path: &Path, swap: impl FnOnce() + Send + 'static) {
        let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
        pending.push((path.to_path_buf(), Box::new(swap)));
    }

    /// Called by [`super::Store::open_with`] between its checks and SQLite's open.
    pub(super) fn checked(path: &Path) {
        let swap = {
            let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
            let at = pending.iter().position(|(p, _)| p == path);
            at.map(|i| pending.remove(i).1)
        };
        if let Some(swap) = swap {
            swap();
        }
    }
}
