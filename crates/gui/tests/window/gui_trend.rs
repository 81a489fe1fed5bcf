//! History → Trend (issue 30): a label's history with a known change (fsync, then no sync)
//! plotted with its one change point, the runs either side, the ratio and what differs.

use crate::gui_common;
use crate::gui_common::wait_for;
use fsynclab::spec::FlatSpec;

use egui::Role;
use egui_kittest::kittest::Queryable;
use fsynclab::spec::{SyncMethod, WorkloadSpec};
use fsynclab::store::Store;
use fsynclab_gui::Tab;

#[test]
fn a_labels_trend_shows_its_change_point_and_what_differs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trend.sqlite");
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let store = Store::open(&db).unwrap();
    let mut ids = Vec::new();
    for sync in [SyncMethod::Fsync, SyncMethod::None] {
        for _ in 0..4 {
            // 0.3 s a run: a run of a few milliseconds is one scheduler hiccup from any
            // IOPS figure when other tests load the machine.
            let spec = FlatSpec {
                threads: 1,
                file_size: 256 << 10,
                duration_s: Some(0.3),
                requests: None,
                sync,
                ..FlatSpec::default()
            }
            .typed();
            ids.push(gui_common::record_run(&store, &target, "nightly", spec));
        }
    }
    // Another workload the trend must not mix in.
    gui_common::record_run(&store, &target, "other", WorkloadSpec::default());
    drop(store);

    let mut h = gui_common::harness_on(&db, Tab::History);
    wait_for(&mut h, "nine rows", |a| a.cache.runs.len() == 9);
    h.get_by_label("Trend").click();
    h.run_steps(3);
    assert!(
        h.query_by_label_contains("choose a Label or a Preset")
            .is_some(),
        "the trend asks for one workload first"
    );
    h.get_by_label("Label").click();
    h.run_steps(2);
    h.get_by_role_and_label(Role::Button, "nightly").click();
    h.run_steps(4);
    assert!(
        h.query_by_label("IOPS over 8 finished runs, oldest first: 1 change point")
            .is_some(),
        "no trend summary"
    );
    let between = format!("{} → {}", ids[3], ids[4]);
    assert!(h.query_by_label(&between).is_some(), "no row for {between}");
    assert!(h.query_all_by_label_contains("better").next().is_some());
    assert!(
        h.query_by_label_contains("sync: fsync → none").is_some(),
        "what differs is not shown"
    );
    // Another metric: the throughput rises at the same point.
    h.get_by_label("Metric").click();
    h.run_steps(2);
    h.get_by_role_and_label(Role::Button, "throughput").click();
    h.run_steps(4);
    assert!(
        h.query_by_label("throughput over 8 finished runs, oldest first: 1 change point")
            .is_some()
    );
    // Back to the table.
    h.get_by_label("Table").click();
    h.run_steps(3);
    assert!(h.query_by_label("8 of 9 runs shown").is_some());
}

#[test]
fn history_shows_o_dsync_as_the_sync_and_no_sync_latency() {
    // Issue 31: History's sync column said "none" for O_DSYNC writes, sync p99 "0 ns".
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("dsync.sqlite");
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let store = Store::open(&db).unwrap();
    let spec = FlatSpec {
        threads: 1,
        file_size: 128 << 10,
        sync: SyncMethod::None,
        open_flags: fsynclab::spec::OpenFlags {
            dsync: true,
            ..Default::default()
        },
        ..FlatSpec::default()
    }
    .typed();
    gui_common::record_run(&store, &target, "dsync", spec);
    drop(store);
    let mut h = gui_common::harness_on(&db, Tab::History);
    wait_for(&mut h, "one row", |a| a.cache.runs.len() == 1);
    assert!(
        h.query_by_label("O_DSYNC").is_some(),
        "the sync column names O_DSYNC"
    );
    assert!(
        h.query_all_by_label("0 ns").next().is_none(),
        "no sync latency of 0 ns is shown"
    );
}

#[test]
fn historys_key_columns_are_in_view_at_the_default_size() {
    // Issue 31: at 1360×900 threads, sync, IOPS, sync p99 and flushes/sync sat off to the
    // right while an empty details panel took a third of the width.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cols.sqlite");
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let store = Store::open(&db).unwrap();
    gui_common::record_run(
        &store,
        &target,
        "a-long-label-for-the-column",
        FlatSpec {
            threads: 1,
            file_size: 64 << 10,
            ..FlatSpec::default()
        }
        .typed(),
    );
    drop(store);
    let mut h = gui_common::harness_on(&db, Tab::History);
    wait_for(&mut h, "one row", |a| a.cache.runs.len() == 1);
    let width = gui_common::WINDOW_SIZE.0;
    // The details panel's left edge: the table must end before it.
    let details = h
        .get_by_label("Click a run to see its details, plots and actions here.")
        .rect()
        .left();
    assert!(
        details > width * 0.6,
        "the details panel starts at {details}"
    );
    for header in ["threads", "sync", "IOPS", "sync p99", "fl/sync"] {
        let right = h
            .get_all_by_label(header)
            .map(|n| n.rect().right())
            .fold(f32::INFINITY, f32::min);
        assert!(
            right < details,
            "{header} ends at {right}, the details panel starts at {details}"
        );
    }
}
