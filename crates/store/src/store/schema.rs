//! Schema migrations, the rusqlite_migration way: the schema version lives in
//! `PRAGMA user_version`, each migration is an SQL file applied in one transaction together
//! with its version bump, and a database newer than this build is refused untouched.
//!
//! Hand-rolled because rusqlite_migration 2.6 (the newest release) depends on rusqlite 0.40.

use rusqlite::{Connection, TransactionBehavior};

/// The migrations, in order; migration `i` (0-based) brings the schema to version `i + 1`.
/// Append only: never edit a migration that has shipped.
pub(crate) const MIGRATIONS: &[Migration] = &[
    Migration {
        name: "0001_initial",
        sql: include_str!("migrations/0001_initial.sql"),
    },
    Migration {
        name: "0002_noise",
        sql: include_str!("migrations/0002_noise.sql"),
    },
    Migration {
        name: "0003_kinds",
        sql: include_str!("migrations/0003_kinds.sql"),
    },
    Migration {
        name: "0004_persist",
        sql: include_str!("migrations/0004_persist.sql"),
    },
    Migration {
        name: "0005_run_dir_ino",
        sql: include_str!("migrations/0005_run_dir_ino.sql"),
    },
    Migration {
        name: "0006_origin",
        sql: include_str!("migrations/0006_origin.sql"),
    },
    Migration {
        name: "0007_uuid",
        sql: include_str!("migrations/0007_uuid.sql"),
    },
    Migration {
        name: "0008_kernel",
        sql: include_str!("migrations/0008_kernel.sql"),
    },
    Migration {
        name: "0009_durable",
        sql: include_str!("migrations/0009_durable.sql"),
    },
    Migration {
        name: "0010_warning_codes",
        sql: include_str!("migrations/0010_warning_codes.sql"),
    },
    Migration {
        name: "0011_failure_codes",
        sql: include_str!("migrations/0011_failure_codes.sql"),
    },
    Migration {
        name: "0012_crash_test",
        sql: include_str!("migrations/0012_crash_test.sql"),
    },
    Migration {
        name: "0013_advice",
        sql: include_str!("migrations/0013_advice.sql"),
    },
];

/// One schema step.
pub(crate) struct Migration {
    /// File name without `.sql`, for messages.
    pub name: &'static str,
    /// The statements.
    pub sql: &'static str,
}

/// The schema version this build writes and understands.
pub(crate) fn supported_version() -> i64 {
    // A handful of migrations: the conversion cannot fail.
    i64::try_from(MIGRATIONS.len()).unwrap_or(i64::MAX)
}

/// The schema version stored in the database (0 for a new file).
pub(crate) fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// What [`migrate`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The schema is at the supported version (possibly after applying migrations).
    Current,
    /// The database has a newer schema than this build knows; nothing was changed.
    Newer {
        /// The version found.
        found: i64,
    },
}

/// A migration that could not be applied (the database keeps its previous version).
#[derive(Debug)]
pub(crate) struct MigrationFailed {
    /// The migration, `None` when reading or locking failed before one started.
    pub name: Option<&'static str>,
    /// Why.
    pub source: rusqlite::Error,
}

impl From<rusqlite::Error> for MigrationFailed {
    fn from(source: rusqlite::Error) -> Self {
        MigrationFailed { name: None, source }
    }
}

/// Applies every pending migration, each atomically with its `user_version`.
///
/// Each step takes the write lock first (`BEGIN IMMEDIATE`) and reads the version again, so
/// two processes opening a new file at once do not both apply the same migration.
pub(crate) fn migrate(conn: &mut Connection) -> Result<Outcome, MigrationFailed> {
    migrate_with(conn, MIGRATIONS)
}

/// [`migrate`] with the list of `migrations` to apply (tests give it a failing one).
fn migrate_with(
    conn: &mut Connection,
    migrations: &[Migration],
) -> Result<Outcome, MigrationFailed> {
    let supported_version = || i64::try_from(migrations.len()).unwrap_or(i64::MAX);
    let found = user_version(conn)?;
    if found > supported_version() {
        return Ok(Outcome::Newer { found });
    }
    // A plain read first: an up-to-date file takes no write lock (a reader never waits
    // behind another process's run).
    if found == supported_version() {
        return Ok(Outcome::Current);
    }
    for (index, migration) in migrations.iter().enumerate() {
        let version = i64::try_from(index + 1).unwrap_or(i64::MAX);
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current = user_version(&tx)?;
        if current > supported_version() {
            return Ok(Outcome::Newer { found: current });
        }
        if current >= version {
            continue; // dropping `tx` rolls back the empty transaction
        }
        let failed = |source| MigrationFailed {
            name: Some(migration.name),
            source,
        };
        tx.execute_batch(migration.sql).map_err(failed)?;
        tx.pragma_update(None, "user_version", version)
            .map_err(failed)?;
        tx.commit().map_err(failed)?;
    }
    Ok(Outcome::Current)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_named_in_order_and_valid_sql() {
        for (index, migration) in MIGRATIONS.iter().enumerate() {
            assert!(
                migration.name.starts_with(&format!("{:04}_", index + 1)),
                "migration {} is out of order",
                migration.name
            );
            // Each migration, applied on top of the previous ones, must be valid SQL.
            let conn = Connection::open_in_memory().unwrap();
            for earlier in &MIGRATIONS[..index] {
                conn.execute_batch(earlier.sql).unwrap();
            }
            conn.execute_batch(migration.sql)
                .unwrap_or_else(|e| panic!("migration {} is invalid: {e}", migration.name));
        }
    }

    #[test]
    fn migrate_applies_all_then_is_idempotent() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(user_version(&conn).unwrap(), 0);
        assert_eq!(migrate(&mut conn).unwrap(), Outcome::Current);
        assert_eq!(user_version(&conn).unwrap(), supported_version());
        assert_eq!(migrate(&mut conn).unwrap(), Outcome::Current);
        assert_eq!(user_version(&conn).unwrap(), supported_version());
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN \
                 ('experiments', 'runs', 'run_tags', 'intervals', 'thread_stats', 'histograms')",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(tables, 6);
    }

    #[test]
    fn migration_7_gives_existing_rows_distinct_v4_uuids() {
        let conn = Connection::open_in_memory().unwrap();
        for earlier in &MIGRATIONS[..6] {
            conn.execute_batch(earlier.sql).unwrap();
        }
        conn.execute_batch(
            "INSERT INTO experiments (name, created_at_ms) VALUES ('a', 1), ('b', 2);
             INSERT INTO runs (status, kind, target, created_at_ms, spec_json, system_json)
             VALUES ('finished', 'fileio', '/t', 1, '{}', '{}'),
                    ('finished', 'fileio', '/t', 2, '{}', '{}'),
                    ('failed', 'fileio', '/t', 3, '{}', '{}');",
        )
        .unwrap();
        conn.execute_batch(MIGRATIONS[6].sql).unwrap();
        let mut uuids = Vec::new();
        for table in ["runs", "experiments"] {
            let mut stmt = conn.prepare(&format!("SELECT uuid FROM {table}")).unwrap();
            let found: Vec<String> = stmt
                .query_map([], |row| row.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            uuids.extend(found);
        }
        assert_eq!(uuids.len(), 5);
        for text in &uuids {
            let parsed = uuid::Uuid::parse_str(text).unwrap();
            assert_eq!(parsed.get_version_num(), 4, "{text}");
            assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122, "{text}");
            assert_eq!(&parsed.hyphenated().to_string(), text);
        }
        let mut distinct = uuids.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), uuids.len());
    }

    #[test]
    fn migrate_reports_a_newer_schema_without_touching_it() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", supported_version() + 1)
            .unwrap();
        assert_eq!(
            migrate(&mut conn).unwrap(),
            Outcome::Newer {
                found: supported_version() + 1
            }
        );
        let tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))
            .unwrap();
        assert_eq!(tables, 0);
    }

    #[test]
    fn a_failing_migration_leaves_no_partial_schema() {
        // migrate() itself: the first step applies; the second fails on its second
        // statement, so neither its first table nor its version bump is kept.
        let steps = [
            Migration {
                name: "0001_good",
                sql: "CREATE TABLE good (x);",
            },
            Migration {
                name: "0002_bad",
                sql: "CREATE TABLE half (x); CREATE TABLE good (x);",
            },
        ];
        let mut conn = Connection::open_in_memory().unwrap();
        let err = migrate_with(&mut conn, &steps).unwrap_err();
        assert_eq!(err.name, Some("0002_bad"));
        assert!(
            err.source.to_string().contains("already exists"),
            "{}",
            err.source
        );
        let tables: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(tables, ["good"]);
        assert_eq!(user_version(&conn).unwrap(), 1);
        // Fixed, the same database goes on from version 1.
        let fixed = [
            Migration {
                name: "0001_good",
                sql: "CREATE TABLE good (x);",
            },
            Migration {
                name: "0002_fixed",
                sql: "CREATE TABLE half (x);",
            },
        ];
        assert_eq!(migrate_with(&mut conn, &fixed).unwrap(), Outcome::Current);
        assert_eq!(user_version(&conn).unwrap(), 2);
    }
}
