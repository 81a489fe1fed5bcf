//! Bundles: runs moved between labs as a self-contained SQLite file with this store's
//! schema (issue 13).
//!
//! Writing ([`Store::write_bundle`]): a fresh in-memory database gets every migration, the
//! chosen runs are copied into it column by column (their experiments, tags, intervals,
//! per-thread rows and histograms too) and the result is serialized to bytes; the caller
//! places the bytes (see `lab::export`). Nothing touches the destination directory but
//! the caller's one temp file.
//!
//! Reading ([`Bundle::from_bytes`]): the file's bytes are deserialized into a private
//! in-memory database, so SQLite never opens, locks or journals the file someone handed
//! over, and the file is never changed. Before anything is read from it the bundle must:
//! start with the SQLite header; have a schema version this build knows (a newer one is
//! refused); have exactly the tables and indexes fsynclab's migrations make at that
//! version (a trigger, a view, a virtual table or an altered column is refused: nothing
//! the bundle defines is ever executed); pass `PRAGMA integrity_check`. An older bundle
//! is then migrated in the private copy.
//!
//! Merging ([`Store::merge_bundle`], `bundle_merge.rs`): one transaction of the destination. Runs are read
//! with plain SELECTs of named columns and every value is checked against the column's
//! declared type (and size) before it is inserted; runs whose uuid is already present are
//! skipped; experiments are matched by uuid (created once, so runs of one experiment stay
//! together); the columns that describe the exporting machine's process and directories
//! (owner pid, run directory, target inode) are cleared, so `fsynclab clean` never acts on
//! an imported path; a run still `running` in the bundle arrives `interrupted`. Each new
//! run is then loaded back with [`Store::load_run`] inside the transaction: a run the lab
//! cannot read (bad JSON, a missing histogram) rolls the whole import back.

use rusqlite::types::Value;
use rusqlite::{Connection, MAIN_DB};

use super::{Store, StoreError, schema};

/// The first 16 bytes of every SQLite database file.
pub const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// Largest single text or blob value read from a bundle (a stored histogram is a few KiB,
/// a spec or system JSON a few KiB): 16 MiB.
pub const MAX_BUNDLE_VALUE_BYTES: i32 = 16 << 20;

/// The tables a bundle carries, parents first; every table of the schema is one of them
/// (a test checks it, so a new migration's table cannot be left out silently).
pub(super) const BUNDLE_TABLES: &[&str] = &[
    "experiments",
    "runs",
    "run_tags",
    "intervals",
    "thread_stats",
    "histograms",
    "advice",
];

/// The child tables, each keyed by `run_id`.
pub(super) const CHILD_TABLES: &[&str] = BUNDLE_TABLES.split_at(2).1.split_at(4).0;

/// Run columns that describe the exporting machine's process and files: cleared on import.
pub(super) const LOCAL_RUN_COLUMNS: &[&str] = &[
    "owner_pid",
    "owner_start_ticks",
    "run_dir_name",
    "target_dev",
    "target_ino",
    "run_dir_dev",
    "run_dir_ino",
];

/// Why a bundle was not read or merged. Messages name no file: callers add it.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// Not an SQLite file, or an SQLite file without fsynclab's schema.
    #[error(
        "not an fsynclab bundle: {problem}; export one with fsynclab's export in bundle format"
    )]
    NotABundle {
        /// What is wrong.
        problem: String,
    },
    /// Written by a newer fsynclab; nothing was read from it.
    #[error(
        "the bundle was written by a newer fsynclab (schema {found}; this build knows up to \
         {supported}); upgrade fsynclab to import it"
    )]
    Newer {
        /// Its schema version.
        found: i64,
        /// The newest this build knows.
        supported: i64,
    },
    /// The file is damaged (SQLite refused it or `integrity_check` listed problems).
    #[error("the bundle is damaged ({problem}); export it again")]
    Damaged {
        /// What SQLite said.
        problem: String,
    },
    /// The schema holds something fsynclab never makes (a trigger, a view, a changed table).
    #[error(
        "the bundle's schema is not fsynclab's: {problem}; nothing from it was run or \
         imported (bundles hold only fsynclab's tables and indexes)"
    )]
    UnexpectedSchema {
        /// The object and what is wrong with it.
        problem: String,
    },
    /// A stored value has the wrong type, is missing or is too large.
    #[error(
        "the bundle's {table}.{column} ({}) {problem}; nothing was imported",
        bundle_row(table, *run)
    )]
    BadValue {
        /// Table.
        table: &'static str,
        /// Column.
        column: String,
        /// The run's id in the bundle.
        run: i64,
        /// What is wrong.
        problem: String,
    },
    /// A row holds a value larger than [`MAX_BUNDLE_VALUE_BYTES`].
    #[error(
        "the bundle's {table} row of run {run} holds a value larger than {} MiB; nothing was \
         imported",
        MAX_BUNDLE_VALUE_BYTES >> 20
    )]
    TooBig {
        /// Table.
        table: &'static str,
        /// The run's id in the bundle.
        run: i64,
    },
    /// A run was copied but cannot be read back as a run; nothing was imported.
    #[error("run {run} in the bundle cannot be read as a run ({source}); nothing was imported")]
    BadRun {
        /// The run's id in the bundle.
        run: i64,
        /// What loading it said.
        #[source]
        source: Box<StoreError>,
    },
    /// The destination database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<rusqlite::Error> for BundleError {
    fn from(e: rusqlite::Error) -> Self {
        BundleError::Store(StoreError::Sqlite(e))
    }
}

/// The bundle row a [`BundleError::BadValue`] is in, in words.
fn bundle_row(table: &str, id: i64) -> String {
    match table {
        "advice" => format!("advice {id} in the bundle"),
        "experiments" => format!("the experiment of run or advice {id} in the bundle"),
        _ => format!("run {id} in the bundle"),
    }
}

/// What [`Store::merge_bundle`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeCounts {
    /// Runs added, with their new local ids, in bundle order.
    pub new_ids: Vec<i64>,
    /// Runs skipped because a run with the same uuid is already stored.
    pub already_present: usize,
    /// Experiments created (others were matched by uuid).
    pub new_experiments: usize,
    /// Stored advice added (issue 35), with the new local ids; advice already here (same
    /// uuid) is skipped.
    pub new_advice: Vec<i64>,
    /// Text fields of new runs that `run --label`/`--tag` would have refused (control
    /// characters, a label or tag over 256 bytes): stored with control characters escaped
    /// and cut to the limit. (local run id, field: `label`, `tag`, `target`).
    pub sanitised: Vec<(i64, &'static str)>,
}

/// One column of this build's schema.
pub(super) struct Column {
    pub name: String,
    pub decl: String,
    pub not_null: bool,
}

/// The columns of `table` (one of [`BUNDLE_TABLES`]) in `conn`'s schema, in order.
pub(super) fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<Column>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT name, type, \"notnull\" FROM pragma_table_info('{table}')"
    ))?;
    let rows = stmt.query_map([], |row| {
        Ok(Column {
            name: row.get(0)?,
            decl: row.get::<_, String>(1)?.to_ascii_uppercase(),
            not_null: row.get(2)?,
        })
    })?;
    rows.collect()
}

pub(super) fn column_list(columns: &[Column]) -> String {
    columns
        .iter()
        .map(|c| format!("\"{}\"", c.name))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn placeholders(n: usize) -> String {
    (1..=n)
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Copies the rows of `table` matching `filter` (with `?1` = `key`) from `src` to `dst`,
/// naming every column; rows already there (by key) are left alone.
fn copy_rows(
    src: &Connection,
    dst: &Connection,
    table: &str,
    filter: &str,
    key: i64,
) -> rusqlite::Result<()> {
    let cols = columns(dst, table)?;
    let names = column_list(&cols);
    let mut select = src.prepare(&format!("SELECT {names} FROM {table} WHERE {filter}"))?;
    let mut insert = dst.prepare(&format!(
        "INSERT OR IGNORE INTO {table} ({names}) VALUES ({})",
        placeholders(cols.len())
    ))?;
    let mut rows = select.query([key])?;
    while let Some(row) = rows.next()? {
        let values = (0..cols.len())
            .map(|i| row.get::<_, Value>(i))
            .collect::<rusqlite::Result<Vec<_>>>()?;
        insert.execute(rusqlite::params_from_iter(values))?;
    }
    Ok(())
}

impl Store {
    /// A bundle holding runs `ids` whole (see the module documentation), as the bytes of an
    /// SQLite file with this build's schema. Unknown ids are [`StoreError::NotFound`].
    pub fn write_bundle(&self, ids: &[i64]) -> Result<Vec<u8>, StoreError> {
        let mut out = Connection::open_in_memory()?;
        schema::migrate(&mut out).map_err(|e| StoreError::Sqlite(e.source))?;
        let tx = out.transaction()?;
        for &id in ids {
            self.check_run(id)?;
            copy_rows(
                &self.conn,
                &tx,
                "experiments",
                "id = (SELECT experiment_id FROM runs WHERE id = ?1)",
                id,
            )?;
            copy_rows(&self.conn, &tx, "runs", "id = ?1", id)?;
            for table in CHILD_TABLES {
                copy_rows(&self.conn, &tx, table, "run_id = ?1", id)?;
            }
            // The advice judged from the run's experiment travels with it.
            copy_rows(
                &self.conn,
                &tx,
                "advice",
                "experiment_id = (SELECT experiment_id FROM runs WHERE id = ?1)",
                id,
            )?;
        }
        tx.commit()?;
        Ok(out.serialize(MAIN_DB)?.to_vec())
    }
}

/// A bundle read into private memory and checked (see the module documentation).
#[derive(Debug)]
pub struct Bundle {
    pub(super) conn: Connection,
    /// The schema version the file had (before migrating the private copy).
    pub schema_version: i64,
}

impl Bundle {
    /// Reads a bundle from the bytes of its file (the file itself is never opened by SQLite).
    pub fn from_bytes(mut bytes: Vec<u8>) -> Result<Bundle, BundleError> {
        if !bytes.starts_with(SQLITE_HEADER) {
            return Err(BundleError::NotABundle {
                problem: "it does not start with the SQLite header".into(),
            });
        }
        if bytes.len() < 100 {
            return Err(damaged("the file is shorter than an SQLite header"));
        }
        // A database left in WAL mode (a lab's own file) is read as a rollback-journal one
        // in this private copy: an in-memory database has no WAL.
        if bytes[18] == 2 && bytes[19] == 2 {
            bytes[18] = 1;
            bytes[19] = 1;
        }
        let mut conn = Connection::open_in_memory()?;
        conn.set_limit(
            rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH,
            MAX_BUNDLE_VALUE_BYTES,
        )?;
        conn.pragma_update(None, "trusted_schema", false)?;
        let len = bytes.len();
        conn.deserialize_read_exact(MAIN_DB, &bytes[..], len, false)
            .map_err(|e| damaged(&e.to_string()))?;
        drop(bytes);
        let found = schema::user_version(&conn).map_err(|e| damaged(&e.to_string()))?;
        let supported = schema::supported_version();
        if found > supported {
            return Err(BundleError::Newer { found, supported });
        }
        if found < 1 {
            return Err(BundleError::NotABundle {
                problem: "it is an SQLite file without fsynclab's schema (user_version 0)".into(),
            });
        }
        check_schema(&conn, found)?;
        let problems: Vec<String> = {
            let mut stmt = conn
                .prepare("PRAGMA integrity_check(20)")
                .map_err(|e| damaged(&e.to_string()))?;
            stmt.query_map([], |row| row.get::<_, String>(0))
                .and_then(|rows| rows.collect())
                .map_err(|e| damaged(&e.to_string()))?
        };
        if problems != ["ok"] {
            return Err(damaged(&problems.join("; ")));
        }
        match schema::migrate(&mut conn) {
            Ok(schema::Outcome::Current) => {}
            Ok(schema::Outcome::Newer { found }) => {
                return Err(BundleError::Newer { found, supported });
            }
            Err(e) => return Err(damaged(&format!("migrating a private copy: {}", e.source))),
        }
        Ok(Bundle {
            conn,
            schema_version: found,
        })
    }

    /// Ids (in the bundle) of the runs it holds, in order.
    pub fn run_ids(&self) -> Result<Vec<i64>, BundleError> {
        let mut stmt = self.conn.prepare("SELECT id FROM runs ORDER BY id")?;
        let rows = stmt.query_map([], |row| row.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

pub(super) fn damaged(problem: &str) -> BundleError {
    BundleError::Damaged {
        problem: problem.to_string(),
    }
}

/// One schema object: type, name, table, SQL.
type SchemaObject = (String, String, String, Option<String>);

fn schema_objects(conn: &Connection) -> rusqlite::Result<Vec<SchemaObject>> {
    let mut stmt = conn.prepare(
        "SELECT type, name, tbl_name, sql FROM sqlite_master \
         WHERE name NOT LIKE 'sqlite\\_stat%' ESCAPE '\\' ORDER BY type, name",
    )?;
    let rows = stmt.query_map([], |row| {
        Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
    })?;
    rows.collect()
}

/// Refuses a bundle whose schema is not exactly what this build's migrations make at
/// `version` (statistics tables of `ANALYZE` aside).
fn check_schema(conn: &Connection, version: i64) -> Result<(), BundleError> {
    let found = schema_objects(conn).map_err(|e| damaged(&e.to_string()))?;
    let reference = Connection::open_in_memory()?;
    let steps = usize::try_from(version).unwrap_or(usize::MAX);
    for migration in schema::MIGRATIONS.iter().take(steps) {
        reference.execute_batch(migration.sql)?;
    }
    let expected = schema_objects(&reference)?;
    if found == expected {
        return Ok(());
    }
    let unexpected = |problem: String| Err(BundleError::UnexpectedSchema { problem });
    for object in &found {
        match expected.iter().find(|e| e.0 == object.0 && e.1 == object.1) {
            None => return unexpected(format!("it has a {} named {:?}", object.0, object.1)),
            Some(e) if e != object => {
                return unexpected(format!(
                    "its {} {:?} is defined differently",
                    object.0, object.1
                ));
            }
            Some(_) => {}
        }
    }
    match expected.iter().find(|e| !found.contains(e)) {
        Some(missing) => unexpected(format!("its {} {:?} is missing", missing.0, missing.1)),
        None => unexpected("its objects differ".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_of_the_schema_travels_in_a_bundle() {
        let mut conn = Connection::open_in_memory().unwrap();
        schema::migrate(&mut conn).unwrap();
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .unwrap();
        let mut tables: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        tables.sort();
        let mut carried: Vec<String> = BUNDLE_TABLES.iter().map(|t| t.to_string()).collect();
        carried.sort();
        assert_eq!(tables, carried);
    }

    #[test]
    fn non_bundles_are_refused_by_name() {
        assert!(matches!(
            Bundle::from_bytes(b"{\"fio version\": 1}".to_vec()),
            Err(BundleError::NotABundle { .. })
        ));
        let mut short = SQLITE_HEADER.to_vec();
        short.extend([0u8; 20]);
        assert!(matches!(
            Bundle::from_bytes(short),
            Err(BundleError::Damaged { .. })
        ));
    }
}
