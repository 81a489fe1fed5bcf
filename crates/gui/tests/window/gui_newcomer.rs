//! What a storage engineer new to fsynclab hit walking through the window (README's first
//! steps: a preset's before/after from the Setup tab, then Run, History and Compare), each
//! driven headless with egui_kittest: the target line shows the filesystem's own mount
//! options, a label carried over a restart is still said to be the last run's, a preset's
//! notes wrap as one paragraph and a one-run side of a comparison says "run", not "runs".
//! (The run summary's "Throughput", once "MiB/s" beside a KiB/s figure: crates/gui/tests/window/gui_run.rs.)

use crate::gui_common;
use fsynclab::spec::FlatSpec;

use std::time::Duration;

use crate::gui_common::{harness_with, step_until, wait_for};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsynclab::store::Store;
use fsynclab_gui::{LabApp, Tab, UiState};

fn has_label_containing(h: &Harness<'static, LabApp>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

#[test]
fn the_target_line_shows_the_filesystems_own_mount_options() {
    // btrfs nossd/ssd, ext4 data=, xfs logbsize: the options a before/after turns on are
    // the superblock's, not the mount's.
    let db = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let path = target.path().canonicalize().unwrap();
    let mounts = fsynclab::probe::list_mounts().expect("the mount table");
    let mount = fsynclab::probe::mount_for_path(&mounts, &path).expect("the target's mount");
    assert!(!mount.super_options.is_empty(), "{mount:?}");
    let state = UiState {
        tab: Tab::Setup,
        target: path.display().to_string(),
        ..UiState::default()
    };
    let mut h = harness_with(&db.path().join("gui.sqlite"), state);
    step_until(&mut h, "the mount table", Duration::from_secs(20), |h| {
        has_label_containing(h, "Target is on")
    });
    let words = format!("{} options {}", mount.fs_type, mount.super_options);
    assert!(
        has_label_containing(&h, &words),
        "no \"{words}\" on the target line"
    );
    let words = format!("mount options {}", mount.mount_options);
    assert!(
        has_label_containing(&h, &words),
        "no \"{words}\" on the target line"
    );
}

#[test]
fn a_label_carried_over_a_restart_is_still_the_last_runs() {
    // The window persists its state (eframe storage, serde); the run started before the
    // restart was labelled "before" and the field still says so.
    let db = tempfile::tempdir().unwrap();
    let before = UiState {
        tab: Tab::Setup,
        label: "before".into(),
        last_label: Some("before".into()),
        ..UiState::default()
    };
    let saved = serde_json::to_string(&before).unwrap();
    let restored: UiState = serde_json::from_str(&saved).unwrap();
    let mut h = harness_with(&db.path().join("gui.sqlite"), restored);
    h.run_steps(3);
    assert!(has_label_containing(&h, "same as the last run"));
}

#[test]
fn a_presets_notes_wrap_as_one_paragraph() {
    // btrfs-log-commit's TOML breaks its description after "Watch fsync p50"; the window
    // used to keep that break, cutting the line short in the middle of a sentence.
    let db = tempfile::tempdir().unwrap();
    let preset = fsynclab::spec::load_preset("btrfs-log-commit").unwrap();
    assert!(
        preset.description.contains("p50\n(whole"),
        "the test's premise"
    );
    let state = UiState {
        tab: Tab::Setup,
        preset: Some("btrfs-log-commit".into()),
        ..UiState::default()
    };
    let mut h = harness_with(&db.path().join("gui.sqlite"), state);
    h.run_steps(3);
    assert!(has_label_containing(
        &h,
        "Watch fsync p50 (whole 4 ms ticks"
    ));
    assert!(!has_label_containing(&h, "p50\n(whole"));
}

#[test]
fn a_one_run_side_of_a_comparison_says_run() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    let store = Store::open(&db).unwrap();
    let spec = FlatSpec {
        threads: 1,
        file_size: 64 << 10,
        ..FlatSpec::default()
    }
    .typed();
    let one = gui_common::record_run(&store, target.path(), "one", spec.clone());
    let two: Vec<i64> = (0..2)
        .map(|_| gui_common::record_run(&store, target.path(), "two", spec.clone()))
        .collect();
    drop(store);
    let state = UiState {
        tab: Tab::Compare,
        compare_baseline: "one".into(),
        compare_candidate: "two".into(),
        ..UiState::default()
    };
    let mut h = harness_with(&db, state);
    h.run_steps(2);
    h.get_by_label("Compare sides").click();
    wait_for(&mut h, "the comparison", |app| {
        app.cache.comparison.is_some() || app.cache.comparison_error.is_some()
    });
    assert_eq!(h.state().cache.comparison_error, None);
    assert!(has_label_containing(&h, &format!("run {one} — solid line")));
    assert!(!has_label_containing(&h, &format!("runs {one} —")));
    assert!(has_label_containing(
        &h,
        &format!("runs {},{} — dashed line", two[0], two[1])
    ));
}
