//! Issue 15 item 8 in the History tab: clicking a row opens its details without moving the
//! rows under the pointer (at the window's minimum size, where the table is narrowest), and
//! the table has threads, sync and mount-options columns, so sweep points and runs on
//! differently mounted filesystems are told apart.

use crate::gui_common;
use fsynclab::spec::FlatSpec;

use crate::gui_common::{record_run, wait_for};

use egui::Role;
use egui_kittest::kittest::Queryable;
use egui_kittest::{Harness, Node};
use fsynclab::spec::SyncMethod;
use fsynclab::store::Store;
use fsynclab_gui::{LabApp, Tab, UiState};

/// Real tiny runs: (label, threads, sync).
fn seed(db: &std::path::Path, target: &std::path::Path, runs: &[(&str, u32, SyncMethod)]) {
    let store = Store::open(db).expect("open store");
    for (label, threads, sync) in runs {
        let spec = FlatSpec {
            threads: *threads,
            sync: *sync,
            file_size: 64 << 10,
            ..FlatSpec::default()
        }
        .typed();
        record_run(&store, target, label, spec);
    }
}

fn harness(db: &std::path::Path, size: (f32, f32)) -> Harness<'static, LabApp> {
    let state = UiState {
        tab: Tab::History,
        ..Default::default()
    };
    gui_common::window(LabApp::new(db.to_path_buf(), state), size)
}

/// The table cell showing `text` (the leftmost node with that label).
fn cell<'a>(h: &'a Harness<'static, LabApp>, text: &'a str) -> Node<'a> {
    h.get_all_by_role_and_label(Role::Label, text)
        .min_by(|a, b| a.rect().left().total_cmp(&b.rect().left()))
        .unwrap_or_else(|| panic!("no table cell {text:?}"))
}

#[test]
fn opening_details_does_not_move_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lab.sqlite");
    let runs: Vec<(&str, u32, SyncMethod)> = ["row-a", "row-b", "row-c", "row-d"]
        .into_iter()
        .map(|l| (l, 1, SyncMethod::Fsync))
        .collect();
    seed(&db, dir.path(), &runs);
    let mut h = harness(&db, (900.0, 600.0));
    wait_for(&mut h, "four rows", |a| a.cache.runs.len() == 4);
    let before: Vec<f32> = ["row-a", "row-b", "row-c", "row-d"]
        .iter()
        .map(|l| cell(&h, l).rect().top())
        .collect();
    cell(&h, "row-c").click();
    wait_for(&mut h, "the details", |a| {
        a.cache
            .run_detail
            .as_ref()
            .is_some_and(|r| r.row.label.as_deref() == Some("row-c"))
    });
    let after: Vec<f32> = ["row-a", "row-b", "row-c", "row-d"]
        .iter()
        .map(|l| cell(&h, l).rect().top())
        .collect();
    assert_eq!(before, after, "the rows moved when the details opened");
    // The next click lands where the user aims: on row-b, not a neighbour.
    cell(&h, "row-b").click();
    wait_for(&mut h, "row-b's details", |a| {
        a.cache
            .run_detail
            .as_ref()
            .is_some_and(|r| r.row.label.as_deref() == Some("row-b"))
    });
}

#[test]
fn threads_sync_and_mount_options_have_columns() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lab.sqlite");
    seed(
        &db,
        dir.path(),
        &[
            ("t3", 3, SyncMethod::Fdatasync),
            ("t1", 1, SyncMethod::Fsync),
        ],
    );
    let mut h = harness(&db, (1360.0, 900.0));
    wait_for(&mut h, "two rows", |a| a.cache.runs.len() == 2);
    for header in ["threads", "sync", "mount options"] {
        assert!(
            h.query_all_by_label(header).next().is_some(),
            "no {header:?} column"
        );
    }
    let row = |label: &str| {
        h.state()
            .cache
            .runs
            .iter()
            .find(|r| r.label.as_deref() == Some(label))
            .cloned()
            .unwrap()
    };
    assert_eq!(row("t3").threads, Some(3));
    assert_eq!(row("t3").sync.as_deref(), Some("fdatasync"));
    assert_eq!(row("t1").threads, Some(1));
    assert!(
        h.query_all_by_label("fdatasync").next().is_some(),
        "the sync cell"
    );
    let t1 = row("t1");
    let options = fsynclab::report::merged_options(
        t1.mount_options.as_deref().expect("mount options probed"),
        t1.super_options
            .as_deref()
            .expect("superblock options probed"),
    );
    assert!(
        h.query_all_by_label(&options).next().is_some(),
        "the mount-options cell {options:?}"
    );
}
