//! `fsynclab list` on what a bundle import can store: a label far longer than `run --label`
//! accepts must list in full with `--wide`, not panic (issue 31).

use crate::common::Lab;
use assert_cmd::prelude::*;

#[test]
fn list_wide_prints_a_huge_label_in_full() {
    let lab = Lab::new();
    let id = lab.run_json(&["--file-size", "128k"])["id"]
        .as_i64()
        .unwrap();
    let huge = "x".repeat(70_000);
    let db = rusqlite::Connection::open(&lab.db).unwrap();
    db.execute(
        "UPDATE runs SET label = ?1 WHERE id = ?2",
        rusqlite::params![huge, id],
    )
    .unwrap();
    drop(db);
    let out = lab.cmd().args(["list", "--wide"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(&huge));
    lab.cmd().args(["list"]).assert().success();
}
