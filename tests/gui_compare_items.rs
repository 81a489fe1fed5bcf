//! Issue 15's Compare defects: sides given by run ids are named by the runs' labels (with
//! the runs beside them) in the window, the text table and the report; the published
//! figures of a scaled run come with the published and measured ratios and a word that
//! the runs were scaled.

mod gui_common;
use std::path::Path;
use std::sync::mpsc;

use egui_kittest::kittest::Queryable;
use fsynclab::engine::CancelToken;
use fsynclab::gui::Tab;
use fsynclab::lab::{self, RunRequest, SideSpec};
use fsynclab::spec::{SyncMethod, WorkloadSpec};
use fsynclab::store::Store;
use gui_common::{harness_on, wait_for};

/// One tiny finished run per `(label, sync)`; returns their ids in order.
fn seed(db: &Path, target: &Path, runs: &[(&str, SyncMethod)]) -> Vec<i64> {
    seed_preset(db, target, runs, None)
}

/// As [`seed`], the runs recorded as coming from `preset` (name, scale).
fn seed_preset(
    db: &Path,
    target: &Path,
    runs: &[(&str, SyncMethod)],
    preset: Option<(&str, f64)>,
) -> Vec<i64> {
    let store = Store::open(db).expect("open the test database");
    let (events, _keep) = mpsc::channel();
    runs.iter()
        .map(|(label, sync)| {
            let request = RunRequest {
                spec: WorkloadSpec {
                    threads: 1,
                    file_size: 128 << 10,
                    sync: *sync,
                    ..Default::default()
                },
                target: target.to_path_buf(),
                label: Some(label.to_string()),
                tags: Vec::new(),
                preset: preset.map(|p| p.0.to_string()),
                preset_scale: preset.map(|p| p.1),
                experiment_id: None,
                keep_files: false,
                allow_shared_target: false,
                kernel_trace: fsynclab::ktrace::KernelTraceMode::Off,
                quiet: None,
                origin: None,
                warnings: Vec::new(),
            };
            lab::execute(&store, &request, &events, &CancelToken::new())
                .expect("tiny run")
                .id
        })
        .collect()
}

#[test]
fn sides_given_by_run_ids_are_named_by_their_labels_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    let ids = seed(
        &db,
        target.path(),
        &[("nossd", SyncMethod::Fsync), ("ssd", SyncMethod::Fdatasync)],
    );
    let store = Store::open(&db).unwrap();
    let c = lab::compare_sides(
        &store,
        &SideSpec::Runs(vec![ids[0]]),
        &SideSpec::Runs(vec![ids[1]]),
    )
    .unwrap();
    assert_eq!(c.baseline.name, "nossd");
    assert_eq!(c.candidate.name, "ssd");
    assert_eq!(c.baseline.title(), format!("nossd (run {})", ids[0]));
    let table = fsynclab::report::compare_table(&c);
    assert!(
        table.contains(&format!("baseline:  nossd (runs {})", ids[0])),
        "{table}"
    );
    let markdown = fsynclab::report::compare_markdown(&c, "t", None);
    assert!(markdown.contains("Baseline **nossd**"), "{markdown}");

    let mut h = harness_on(&db, Tab::Compare);
    h.run_steps(3);
    h.state_mut().state.compare_baseline = ids[0].to_string();
    h.state_mut().state.compare_candidate = ids[1].to_string();
    h.get_by_label("Compare sides").click();
    wait_for(&mut h, "the comparison", |app| {
        app.cache.comparison.is_some() || app.cache.comparison_error.is_some()
    });
    assert_eq!(h.state().cache.comparison_error, None);
    let header = format!("baseline nossd (run {})", ids[0]);
    assert!(
        h.query_all_by_label(&header).next().is_some(),
        "no column named {header:?}"
    );
    assert!(
        h.query_all_by_label_contains("baseline run ")
            .next()
            .is_none(),
        "a side is still named by its run id"
    );
}

#[test]
fn two_sides_with_one_label_are_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    let ids = seed(
        &db,
        target.path(),
        &[("demo", SyncMethod::Fsync), ("demo", SyncMethod::Fdatasync)],
    );
    let store = Store::open(&db).unwrap();
    let c = lab::compare_sides(
        &store,
        &SideSpec::Runs(vec![ids[0]]),
        &SideSpec::Runs(vec![ids[1]]),
    )
    .unwrap();
    assert_eq!(c.baseline.name, format!("demo (run {})", ids[0]));
    assert_eq!(c.candidate.name, format!("demo (run {})", ids[1]));
    assert_eq!(
        c.baseline.title(),
        c.baseline.name,
        "the runs are said once"
    );
}

#[test]
fn scaled_runs_show_published_and_measured_ratios() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    let ids = seed_preset(
        &db,
        target.path(),
        &[
            ("before", SyncMethod::Fsync),
            ("after", SyncMethod::Fdatasync),
        ],
        Some(("btrfs-log-commit", 0.05)),
    );
    let store = Store::open(&db).unwrap();
    let c = lab::compare_sides(
        &store,
        &SideSpec::Runs(vec![ids[0]]),
        &SideSpec::Runs(vec![ids[1]]),
    )
    .unwrap();
    assert_eq!(c.preset_scales, vec![0.05]);
    let ratios = fsynclab::analysis::published_ratios(&c);
    let mib = ratios
        .iter()
        .find(|r| r.metric == "mib_per_sec")
        .expect("btrfs-log-commit publishes MiB/s before and after");
    assert!(mib.published > 1.0 && mib.measured.is_some(), "{mib:?}");

    let mut h = harness_on(&db, Tab::Compare);
    h.run_steps(3);
    h.state_mut().state.compare_baseline = ids[0].to_string();
    h.state_mut().state.compare_candidate = ids[1].to_string();
    h.get_by_label("Compare sides").click();
    wait_for(&mut h, "the comparison", |app| {
        app.cache.comparison.is_some() || app.cache.comparison_error.is_some()
    });
    assert!(
        h.query_all_by_label_contains("These runs were scaled (×0.05")
            .next()
            .is_some(),
        "no word that the runs were scaled"
    );
    assert!(
        h.query_all_by_label("published after / before")
            .next()
            .is_some()
    );
    let shown = format!("×{:.2}", mib.published);
    assert!(
        h.query_all_by_label(&shown).next().is_some(),
        "the published ratio {shown} is not shown"
    );
}
