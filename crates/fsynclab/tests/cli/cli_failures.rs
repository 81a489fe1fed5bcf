//! Typed failures, device notes and trace reasons (issue 32) against what the release before
//! them wrote: a database of schema version 10 and a bundle exported by that release
//! (`tests/fixtures/pre32/`, made with main 02b12cb on a 1 MiB tmpfs: two runs that ran out
//! of space while timed, one while preparing, two that finished, one untraced) keep their
//! sentences, shown as they were, coded `text`.

use std::path::Path;

use crate::cli_warnings::{fixture, fsynclab, show, sql, user_version};
use crate::common::Lab;

const MIDRUN: &str = "no space left on device during write of /tmp/pre32f/fsynclab-1/thread-0.dat \
                      at offset 1216512; free space on the target or lower file_size / threads \
                      (or shared_files)";
const PREPARE: &str = "no space left on device during prepare of /tmp/pre32f/fsynclab-3/thread-0.dat; \
                       free space on the target or lower file_size / threads (or shared_files)";
const TMPFS: &str = "tmpfs has no block device (memory filesystem)";
const UNTRACED: &str = "turned off (kernel_trace = off)";

fn show_text(db: &Path, id: &str) -> String {
    String::from_utf8_lossy(&fsynclab(db, &["show", id], None)).into_owned()
}

/// Runs 1 (failed while timed, a stored result) and 3 (failed while preparing, no result)
/// show the sentences the earlier release stored, coded `text`, in JSON and in text; so do
/// the device notes and run 6's kernel trace reason.
fn assert_old_sentences(db: &Path) {
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
    assert_eq!(
        run["device_note"], TMPFS,
        "an unfinished run's, from its probe"
    );
    assert!(show_text(db, "3").contains(&format!("error     {PREPARE}")));
    assert!(show_text(db, "1").contains(&format!("error     {MIDRUN}")));
    let finished = show(db, "5");
    assert!(
        finished["error"].is_null() && finished["error_code"].is_null(),
        "{finished}"
    );
    assert_eq!(finished["device_note"], TMPFS);
    let untraced = show(db, "6");
    assert_eq!(untraced["kernel_trace"]["reason"], UNTRACED);
    let text = show_text(db, "6");
    assert!(
        text.contains(&format!("device    not measured: {TMPFS}")),
        "{text}"
    );
    assert!(
        text.contains(&format!("kernel trace off: {UNTRACED}")),
        "{text}"
    );
}

#[test]
fn a_database_of_the_release_before_keeps_its_sentences_as_they_were() {
    let lab = Lab::new();
    let db = lab.dir.path().join("v10.sqlite");
    std::fs::copy(fixture("runs-v10-failed.sqlite"), &db).unwrap();
    assert_eq!(user_version(&db), "10");
    assert_old_sentences(&db);
    // Opened for writing (a run), it migrates; the old rows keep their sentences, uncoded.
    let run = [
        "run",
        "--quiet",
        "--file-size",
        "64k",
        "--set",
        "requests=16",
        "--kernel-trace",
        "off",
        "--target",
    ];
    fsynclab(&db, &run, Some(&lab.target));
    assert_eq!(user_version(&db), "13");
    assert_eq!(sql(&db, "SELECT error_code FROM runs WHERE id = 1"), "NULL");
    assert_eq!(sql(&db, "SELECT error FROM runs WHERE id = 1"), MIDRUN);
    // The new run stores its notes as data, worded when shown.
    assert_eq!(sql(&db, "SELECT error_code FROM runs WHERE id = 7"), "NULL");
    let reason = "SELECT json_extract(kernel_trace_json, '$.reason[0].why') FROM runs WHERE id = 7";
    assert_eq!(sql(&db, reason), "turned_off");
    assert_eq!(show(&db, "7")["kernel_trace"]["reason"], UNTRACED);
    let note =
        "SELECT coalesce(json_type(device_json, '$.reason'), 'measured') FROM runs WHERE id = 7";
    assert!(matches!(sql(&db, note).as_str(), "object" | "measured"));
    assert_old_sentences(&db);
}

#[test]
fn a_bundle_of_the_release_before_imports_with_its_sentences_as_they_were() {
    let lab = Lab::new();
    fsynclab(
        &lab.db,
        &["import"],
        Some(&fixture("runs-v10-failed.fsynclab")),
    );
    assert_old_sentences(&lab.db);
    assert_eq!(
        sql(&lab.db, "SELECT error_code FROM runs WHERE id = 3"),
        "NULL"
    );
}
