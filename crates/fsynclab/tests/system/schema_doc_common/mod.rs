//! The checks of docs/SCHEMA.md's ten worked queries on the database `crates/fsynclab/tests/system/schema_doc.rs`
//! builds, and the row helpers they use.
#![allow(dead_code)]

use std::collections::BTreeMap;

use rusqlite::Connection;
use rusqlite::types::Value;

/// One result row: column name → value.
pub type Row = BTreeMap<String, Value>;

/// What the checks know about the database.
pub struct Lab<'a> {
    /// A read-only connection to it.
    pub conn: &'a Connection,
    /// Whether a failed run was made (root only).
    pub failed_run: bool,
}

pub fn int(row: &Row, column: &str) -> i64 {
    match row.get(column) {
        Some(Value::Integer(v)) => *v,
        other => panic!("{column}: expected an integer, got {other:?} in {row:?}"),
    }
}

pub fn real(row: &Row, column: &str) -> f64 {
    match row.get(column) {
        Some(Value::Real(v)) => *v,
        Some(Value::Integer(v)) => *v as f64,
        other => panic!("{column}: expected a number, got {other:?} in {row:?}"),
    }
}

pub fn text(row: &Row, column: &str) -> String {
    match row.get(column) {
        Some(Value::Text(v)) => v.clone(),
        other => panic!("{column}: expected text, got {other:?} in {row:?}"),
    }
}

pub fn query(conn: &Connection, sql: &str) -> (Vec<String>, Vec<Row>) {
    let mut stmt = conn.prepare(sql).unwrap_or_else(|e| panic!("{e}: {sql}"));
    let names: Vec<String> = stmt.column_names().map(String::from).collect();
    let rows = stmt
        .query_map([], |r| {
            (0..names.len())
                .map(|i| Ok((names[i].clone(), r.get::<_, Value>(i)?)))
                .collect::<Result<Row, _>>()
        })
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    (names, rows)
}

/// Ids of the finished runs with `label`, in order.
pub fn ids(conn: &Connection, label: &str) -> Vec<i64> {
    let sql =
        format!("SELECT id FROM runs WHERE label = '{label}' AND status = 'finished' ORDER BY id");
    query(conn, &sql).1.iter().map(|r| int(r, "id")).collect()
}

pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    (values[(n - 1) / 2] + values[n / 2]) / 2.0
}

/// What worked query `n` (from 1) must show.
pub fn check(n: usize, lab: &Lab<'_>, rows: &[Row]) {
    let checks: [fn(&Lab<'_>, &[Row]); 10] = [q1, q2, q3, q4, q5, q6, q7, q8, q9, q10];
    let check = checks
        .get(n - 1)
        .unwrap_or_else(|| panic!("docs/SCHEMA.md has more than ten worked queries"));
    check(lab, rows);
}

/// Every experiment with its runs: the sweep and the import are there, the `before` runs with both tags.
fn q1(lab: &Lab<'_>, rows: &[Row]) {
    let before = ids(lab.conn, "before");
    assert_eq!(before.len(), 3);
    let names: Vec<String> = rows.iter().map(|r| text(r, "name")).collect();
    assert!(
        names.iter().any(|n| n.contains("sweep threads=1,2,4")),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n.starts_with("import ")), "{names:?}");
    for row in rows.iter().filter(|r| before.contains(&int(r, "run"))) {
        assert_eq!(text(row, "label"), "before");
        let mut tags: Vec<String> = text(row, "tags").split(',').map(String::from).collect();
        tags.sort();
        assert_eq!(tags, ["baseline", "disk"]);
        assert!(text(row, "created_utc").starts_with("20"));
    }
}

/// Sync p99 by mount option: the disk directory (6 runs) and tmpfs (2 runs), min ≤ mean ≤ max.
fn q2(_lab: &Lab<'_>, rows: &[Row]) {
    assert_eq!(rows.len(), 2, "the disk directory and tmpfs");
    assert!(
        rows.iter()
            .any(|r| text(r, "fs_type") == "tmpfs" && int(r, "runs") == 2)
    );
    assert!(
        rows.iter()
            .any(|r| text(r, "fs_type") != "tmpfs" && int(r, "runs") == 6)
    );
    for row in rows {
        let (min, mean, max) = (
            real(row, "sync_p99_us_min"),
            real(row, "sync_p99_us_mean"),
            real(row, "sync_p99_us_max"),
        );
        assert!(
            0.0 < min && min <= mean + 0.1 && mean <= max + 0.1,
            "{row:?}"
        );
        assert!(real(row, "iops_mean") > 0.0);
    }
}

/// Flushes per fsync: the ratio is the sums' ratio; no tmpfs row (no device); every disk run counts.
fn q3(_lab: &Lab<'_>, rows: &[Row]) {
    for row in rows {
        let (syncs, flushes) = (int(row, "syncs"), int(row, "flushes"));
        assert!(syncs > 0 && flushes >= 0 && int(row, "runs") > 0);
        let ratio = flushes as f64 / syncs as f64;
        assert!(
            (real(row, "flushes_per_sync") - ratio).abs() < 1e-3,
            "{row:?}"
        );
        assert!(!text(row, "kernel_release").is_empty());
        assert_ne!(text(row, "fs_type"), "tmpfs", "tmpfs has no device flushes");
    }
    let runs: i64 = rows.iter().map(|r| int(r, "runs")).sum();
    assert!(
        runs >= 13,
        "every finished run on the disk directory counts: {runs}"
    );
}

/// IOPS by thread count: threads 1, 2, 4 of the sweep, 2 runs each.
fn q4(_lab: &Lab<'_>, rows: &[Row]) {
    let threads: Vec<i64> = rows.iter().map(|r| int(r, "threads")).collect();
    assert_eq!(threads, [1, 2, 4]);
    for row in rows {
        assert_eq!(int(row, "runs"), 2);
        let (min, mean, max) = (
            real(row, "iops_min"),
            real(row, "iops_mean"),
            real(row, "iops_max"),
        );
        assert!(
            0.0 < min && min <= mean + 0.5 && mean <= max + 0.5,
            "{row:?}"
        );
    }
}

/// Slowest intervals: five windows of the timed run, worst sync p99 first, the IOPS of each.
fn q5(lab: &Lab<'_>, rows: &[Row]) {
    let timed = ids(lab.conn, "timed");
    assert_eq!(rows.len(), 5, "a 1.2 s run has 12 windows");
    let mut previous = f64::INFINITY;
    for row in rows {
        assert_eq!(int(row, "run_id"), timed[0]);
        let p99 = real(row, "sync_p99_ms");
        assert!(
            p99 <= previous && real(row, "sync_p50_ms") <= p99,
            "{row:?}"
        );
        previous = p99;
        let (writes, dur) = (int(row, "writes"), int(row, "dur_ms"));
        // A window can hold a sync that ended but no write (every thread blocked in fsync);
        // the last one can be under 1 ms long (dur_ms 0: no IOPS).
        assert!(dur >= 0 && writes >= 0, "{row:?}");
        if dur == 0 {
            assert_eq!(row["iops"], Value::Null, "{row:?}");
        } else {
            let iops = (1000.0 * writes as f64 / dur as f64).round();
            assert!((real(row, "iops") - iops).abs() < 1.0, "{row:?}");
        }
    }
}

/// fio next to fsynclab: the import beside the runs of the same job (not the fdatasync ones).
fn q6(lab: &Lab<'_>, rows: &[Row]) {
    let before = ids(lab.conn, "before");
    assert_eq!(before.len(), 3);
    let tmpfs = ids(lab.conn, "tmpfs");
    let runs: Vec<i64> = rows.iter().map(|r| int(r, "run")).collect();
    assert_eq!(
        runs,
        [before, tmpfs].concat(),
        "same job: 8 threads, 4k rand, fsync 1"
    );
    for row in rows {
        assert_eq!(text(row, "fio"), "fio-3.33");
        assert_eq!(text(row, "job"), "writers");
        assert!(
            (real(row, "fio_iops") - 4331.0).abs() < 1.0,
            "fio's own figure"
        );
        assert!((real(row, "fio_sync_p99_us") - 4489.2).abs() < 0.01);
        assert!(real(row, "iops") > 0.0 && real(row, "sync_p99_us") > 0.0);
    }
}

/// Unfinished runs: the cancelled one kept its result, the interrupted one its progress and why.
fn q7(lab: &Lab<'_>, rows: &[Row]) {
    let by_label = |label: &str| {
        rows.iter()
            .find(|r| r.get("label") == Some(&Value::Text(label.into())))
            .unwrap_or_else(|| panic!("no {label} run in {rows:?}"))
    };
    let cancelled = by_label("cancel-me");
    assert_eq!(text(cancelled, "status"), "cancelled");
    assert_eq!(text(cancelled, "data"), "result");
    assert!(int(cancelled, "writes_measured") > 0);
    let killed = by_label("kill-me");
    assert_eq!(text(killed, "status"), "interrupted");
    assert_eq!(text(killed, "data"), "progress only");
    assert!(int(killed, "writes_measured") > 0);
    assert_eq!(text(killed, "code"), "interrupted", "says why");
    assert_eq!(text(cancelled, "code"), "");
    if lab.failed_run {
        let full = by_label("full");
        assert_eq!(text(full, "status"), "failed");
        assert_eq!(text(full, "code"), "io", "{full:?}");
        assert_eq!(text(full, "call"), "write", "{full:?}");
        assert_eq!(int(full, "errno"), 28, "ENOSPC: {full:?}");
    }
    assert_eq!(rows.len(), 2 + usize::from(lab.failed_run));
}

/// Fairness: the timed run's 3 threads, ratios ≥ 1, busy shares within (0, 1].
fn q8(lab: &Lab<'_>, rows: &[Row]) {
    let timed = ids(lab.conn, "timed")[0];
    assert!(
        rows.iter()
            .any(|r| int(r, "run") == timed && int(r, "threads") == 3)
    );
    for row in rows {
        assert!(int(row, "threads") > 1);
        assert!(int(row, "writes_min") <= int(row, "writes_max"));
        assert!(real(row, "max_over_min") >= 1.0, "{row:?}");
        let busy = real(row, "busy_share");
        assert!(busy > 0.0 && busy <= 1.01, "{row:?}");
    }
}

/// Tags: exactly the `before` runs (baseline, not sweep).
fn q9(lab: &Lab<'_>, rows: &[Row]) {
    let before = ids(lab.conn, "before");
    assert_eq!(before.len(), 3);
    let runs: Vec<i64> = rows.iter().map(|r| int(r, "run")).collect();
    assert_eq!(runs, before, "tagged baseline, not sweep");
    for row in rows {
        assert_eq!(text(row, "preset"), "btrfs-log-commit");
        assert!(text(row, "tags").contains("disk"));
    }
}

/// Medians: before then after, 3 runs each, equal to the medians computed here.
fn q10(lab: &Lab<'_>, rows: &[Row]) {
    let before = ids(lab.conn, "before");
    assert_eq!(before.len(), 3);
    let labels: Vec<String> = rows.iter().map(|r| text(r, "label")).collect();
    assert_eq!(labels, ["before", "after"]);
    for row in rows {
        let label = text(row, "label");
        assert_eq!(int(row, "runs"), 3);
        let sql = format!(
            "SELECT iops, sync_p99_ns, flushes_per_sync FROM runs WHERE label = '{label}' AND status = 'finished'"
        );
        let runs = query(lab.conn, &sql).1;
        let of = |c: &str| median(runs.iter().map(|r| real(r, c)).collect());
        assert!((real(row, "iops_median") - of("iops").round()).abs() < 1.0);
        assert!((real(row, "sync_p99_ms_median") - of("sync_p99_ns") / 1e6).abs() < 1e-3);
        assert!((real(row, "flushes_per_sync_median") - of("flushes_per_sync")).abs() < 1e-3);
    }
}
