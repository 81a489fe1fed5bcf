//! Issue 15's Compare defects: sides given by run ids are named by the runs' labels (with
//! the runs beside them) in the window, the text table and the report; the published
//! figures of a scaled run come with the published and measured ratios and a word that
//! the runs were scaled, and left out (with why) when a side was edited from the preset.

use fsynclab::spec::FlatSpec;
use std::path::PathBuf;

use crate::gui_common::{harness_on, record, tiny_request, wait_for};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsynclab::analysis::Comparison;
use fsynclab::lab::{self, SideSpec};
use fsynclab::spec::SyncMethod;
use fsynclab::store::Store;
use fsynclab_gui::{LabApp, Tab};

/// Two tiny finished runs `(label, sync)` recorded as coming from `preset` (name,
/// scale), each compared as one side (by its run id).
struct Pair {
    _dir: tempfile::TempDir,
    _target: tempfile::TempDir,
    db: PathBuf,
    ids: Vec<i64>,
    c: Comparison,
}

fn compare_pair(runs: [(&str, SyncMethod); 2], preset: Option<(&str, f64)>) -> Pair {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    let store = Store::open(&db).expect("open the test database");
    let ids: Vec<i64> = runs
        .iter()
        .map(|(label, sync)| {
            // A preset's run starts from the preset's workload, at its thread count (a tiny
            // one: its scale fields may change without leaving the preset).
            let from = preset.map_or_else(
                || FlatSpec {
                    threads: 1,
                    ..FlatSpec::default()
                },
                |(name, scale)| {
                    let p = fsynclab::spec::load_preset(name).unwrap();
                    p.scaled(scale).unwrap().flat()
                },
            );
            let spec = FlatSpec {
                file_size: 128 << 10,
                io_size: None,
                sync: *sync,
                ..from
            }
            .typed();
            let mut request = tiny_request(spec, target.path(), label);
            request.preset = preset.map(|p| p.0.to_string());
            request.preset_scale = preset.map(|p| p.1);
            record(&store, &request)
        })
        .collect();
    let c = lab::compare_sides(
        &store,
        &SideSpec::Runs(vec![ids[0]]),
        &SideSpec::Runs(vec![ids[1]]),
    )
    .unwrap();
    Pair {
        _dir: dir,
        _target: target,
        db,
        ids,
        c,
    }
}

/// The window on the Compare tab after comparing the pair's runs by their ids.
fn compared_in_window(pair: &Pair) -> Harness<'static, LabApp> {
    let mut h = harness_on(&pair.db, Tab::Compare);
    h.run_steps(3);
    h.state_mut().state.compare_baseline = pair.ids[0].to_string();
    h.state_mut().state.compare_candidate = pair.ids[1].to_string();
    h.get_by_label("Compare sides").click();
    wait_for(&mut h, "the comparison", |app| {
        app.cache.comparison.is_some() || app.cache.comparison_error.is_some()
    });
    h
}

#[test]
fn sides_given_by_run_ids_are_named_by_their_labels_everywhere() {
    let pair = compare_pair(
        [("nossd", SyncMethod::Fsync), ("ssd", SyncMethod::Fdatasync)],
        None,
    );
    let (ids, c) = (&pair.ids, &pair.c);
    assert_eq!(c.baseline.name, "nossd");
    assert_eq!(c.candidate.name, "ssd");
    assert_eq!(c.baseline.title(), format!("nossd (run {})", ids[0]));
    let table = fsynclab::report::compare_table(c);
    assert!(
        table.contains(&format!("baseline:  nossd (runs {})", ids[0])),
        "{table}"
    );
    let markdown = fsynclab::report::compare_markdown(c, "t", None);
    assert!(markdown.contains("Baseline **nossd**"), "{markdown}");

    let h = compared_in_window(&pair);
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
    let pair = compare_pair(
        [("demo", SyncMethod::Fsync), ("demo", SyncMethod::Fdatasync)],
        None,
    );
    let (ids, c) = (&pair.ids, &pair.c);
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
    let pair = compare_pair(
        [("before", SyncMethod::Fsync), ("after", SyncMethod::Fsync)],
        Some(("btrfs-log-commit", 0.05)),
    );
    assert_eq!(pair.c.published_withheld, None);
    assert_eq!(pair.c.preset_scales, vec![0.05]);
    let ratios = fsynclab::analysis::published_ratios(&pair.c);
    let mib = ratios
        .iter()
        .find(|r| r.metric == "mib_per_sec")
        .expect("btrfs-log-commit publishes MiB/s before and after");
    assert!(mib.published > 1.0 && mib.measured.is_some(), "{mib:?}");

    let h = compared_in_window(&pair);
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

#[test]
fn a_side_edited_from_its_preset_leaves_the_published_figures_out_and_says_why() {
    // btrfs-log-commit fsyncs after every write: a run of it with fdatasync is another
    // workload than the one the thread published.
    let pair = compare_pair(
        [
            ("before", SyncMethod::Fsync),
            ("after", SyncMethod::Fdatasync),
        ],
        Some(("btrfs-log-commit", 0.05)),
    );
    assert!(pair.c.published.is_empty());
    let withheld = pair.c.published_withheld.as_ref().expect("withheld");
    assert_eq!(withheld.run_id, pair.ids[1]);
    let h = compared_in_window(&pair);
    let said = format!(
        "The published figures of preset btrfs-log-commit are left out: run {} ran another \
         workload than the preset's (sync: fsync → fdatasync)",
        pair.ids[1]
    );
    assert!(
        h.query_all_by_label_contains(&said).next().is_some(),
        "the window does not say why the published figures are missing"
    );
    assert!(
        h.query_all_by_label("published after / before")
            .next()
            .is_none()
    );
}
