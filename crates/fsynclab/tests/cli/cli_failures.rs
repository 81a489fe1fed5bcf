//! Typed failures (issue 32) against what the release before them wrote: a database of
//! schema version 10 and a bundle exported by that release (`tests/fixtures/pre32/`, made
//! with main 02b12cb: two runs that ran out of space while timed, one while preparing) keep
//! their failures' sentences, shown as they were, coded `text`.

use std::path::Path;

use crate::cli_warnings::{fixture, fsynclab, show, sql, user_version};
use crate::common::Lab;

const MIDRUN: &str = "no space left on device during write of /tmp/pre32f/fsynclab-1/thread-0.dat \
                      at offset 1216512; free space on the target or lower file_size / threads \
                      (or shared_files)";
const PREPARE: &str = "no space left on device during prepare of /tmp/pre32f/fsynclab-3/thread-0.dat; \
                       free space on the target or lower file_size / threads (or shared_files)";

/// Runs 1 (failed while timed, a stored result) and 3 (failed while preparing, no result)
/// show the sentences the earlier release stored, coded `text`, in JSON and in text.
fn assert_old_failures(db: &Path) {
    let run = show(db, "1");
    assert_eq!(
        (run["status"].as_str(), run["error"].as_str()),
        (Some("failed"), Some(MIDRUN))
    );
    assert_eq!(run["error_code"], "text");
    assert!(run["writes"].as_u64().is_some_and(|w| w > 0), "{run}");
    let run = show(db, "3");
    assert_eq!(run["error"].as_str(), Some(PREPARE), "{run}");
    assert_eq!(run["error_code"], "text");
    let text = fsynclab(db, &["show", "3"], None);
    assert!(String::from_utf8_lossy(&text).contains(&format!("error     {PREPARE}")));
    let text = fsynclab(db, &["show", "1"], None);
    assert!(String::from_utf8_lossy(&text).contains(&format!("error     {MIDRUN}")));
    let finished = show(db, "5");
    assert_eq!(
        (
            finished["error"].is_null(),
            finished["error_code"].is_null()
        ),
        (true, true)
    );
}

#[test]
fn a_database_of_the_release_before_keeps_its_failures_as_they_were() {
    let lab = Lab::new();
    let db = lab.dir.path().join("v10.sqlite");
    std::fs::copy(fixture("runs-v10-failed.sqlite"), &db).unwrap();
    assert_eq!(user_version(&db), "10");
    assert_old_failures(&db);
    // Opened for writing (a run), it migrates; the old rows keep their sentences, uncoded.
    let run = [
        "run",
        "--quiet",
        "--file-size",
        "64k",
        "--set",
        "requests=16",
        "--target",
    ];
    fsynclab(&db, &run, Some(&lab.target));
    assert_eq!(user_version(&db), "11");
    assert_eq!(sql(&db, "SELECT error_code FROM runs WHERE id = 1"), "NULL");
    assert_eq!(sql(&db, "SELECT error FROM runs WHERE id = 1"), MIDRUN);
    assert_eq!(sql(&db, "SELECT error_code FROM runs WHERE id = 6"), "NULL");
    assert_old_failures(&db);
}

#[test]
fn a_bundle_of_the_release_before_imports_with_its_failures_as_they_were() {
    let lab = Lab::new();
    fsynclab(
        &lab.db,
        &["import"],
        Some(&fixture("runs-v10-failed.fsynclab")),
    );
    assert_old_failures(&lab.db);
    assert_eq!(
        sql(&lab.db, "SELECT error_code FROM runs WHERE id = 3"),
        "NULL"
    );
}
