//! Runs whose writes are not durable say so (issue 31): sync_file_range, like the nobarrier
//! and tmpfs cases already did.

use crate::common::Lab;

#[test]
fn a_sync_file_range_run_says_its_writes_are_not_durable() {
    let lab = Lab::new();
    let run = lab.run_json(&["--file-size", "128k", "--sync", "sync_file_range"]);
    let warnings: Vec<&str> = run["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("not durable when it returns")),
        "{warnings:?}"
    );
    let shown = lab.cmd().args(["show", "1"]).output().unwrap();
    assert!(String::from_utf8_lossy(&shown.stdout).contains("not durable when it returns"));
    // A durable method says nothing of the kind.
    let run = lab.run_json(&["--file-size", "128k", "--sync", "fdatasync"]);
    assert!(
        !run["warnings"].to_string().contains("not durable"),
        "{run}"
    );
}
