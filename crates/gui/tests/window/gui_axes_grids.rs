//! Window leftovers of the screenshot pass, driven headless with egui_kittest on stored
//! scripted runs (nothing is measured): the Compare tab's latency axes name what they
//! measure and their unit once latencies pass 20 ms (compare.png had bare "latency"), and
//! a grouplog run's group-commit figures sit in grid cells, labels in one column and
//! values in the next, in order (they were a block aligned with spaces).

use crate::gui_common;
use fsynclab::spec::FlatSpec;

use crate::gui_common::wait_for;
use std::path::Path;

use egui::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsynclab::metrics::{GroupCommitStats, LatencyHistogram, OpStats, RunResult};
use fsynclab::probe::SystemInfo;
use fsynclab::spec::WorkloadKind;
use fsynclab::store::{NewRun, Store};
use fsynclab_gui::{LabApp, Tab};

/// A scripted finished run whose writes take 20 µs and syncs cycle through `sync_ns`.
fn scripted(sync_ns: Vec<u64>) -> RunResult {
    let spec = FlatSpec {
        threads: 1,
        file_size: 64 * 4096,
        ..FlatSpec::default()
    }
    .typed();
    fsynclab::engine::fake_run(0, vec![20_000], sync_ns, &spec, SystemInfo::default()).unwrap()
}

/// Stores `result` labelled `label`; its id.
fn store(db: &Path, label: &str, result: &RunResult) -> i64 {
    let store = Store::open(db).unwrap();
    let new = NewRun {
        label: Some(label.into()),
        ..NewRun::new(result.spec.clone(), SystemInfo::default(), "/mnt/axes")
    };
    store.insert_finished(&new, result).unwrap()
}

#[test]
fn compare_latency_axes_name_the_unit_above_20_ms() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    // Sync latencies of 25 to 120 ms on one side, 5 ms on the other (compare.png's sync
    // plot lost its readable labels past 20 ms).
    for _ in 0..2 {
        store(
            &db,
            "slow",
            &scripted(vec![25_000_000, 60_000_000, 120_000_000]),
        );
        store(&db, "fast", &scripted(vec![5_000_000]));
    }
    // Tall enough to draw every plot without scrolling.
    let state = fsynclab_gui::UiState {
        tab: Tab::Compare,
        ..Default::default()
    };
    let mut h = gui_common::window(LabApp::new(db.clone(), state), (1360.0, 2600.0));
    wait_for(&mut h, "the run listing", |a| a.cache.runs.len() == 4);
    h.state_mut().state.compare_baseline = "slow".into();
    h.state_mut().state.compare_candidate = "fast".into();
    h.run_steps(2);
    h.get_by_label("Compare sides").click();
    wait_for(&mut h, "the comparison", |a| {
        a.cache.comparison.is_some() || a.cache.comparison_error.is_some()
    });
    assert_eq!(h.state().cache.comparison_error, None);
    let texts = gui_common::painted_texts(&h);
    // Each latency axis says what it measures and its unit (the writes stay in µs).
    for label in [
        "latency (µs)",
        "latency (ms)",
        "sync latency (ms)",
        "IOPS (writes/s)",
    ] {
        assert!(
            texts.iter().any(|t| t == label),
            "no axis labelled {label:?} in {texts:?}"
        );
    }
    // The p99 timeline's unit follows its points: a scripted run this short may have no
    // whole interval, and then no value asks for ms; it still names a unit.
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("sync p99 (") && t.ends_with("s)")),
        "the sync p99 axis names no unit: {texts:?}"
    );
    // Ticks past 20 ms are numbers in that unit, not "50.00 ms" squeezed into the axis.
    for tick in ["20", "50", "100"] {
        assert!(
            texts.iter().any(|t| t == tick),
            "no {tick:?} tick in {texts:?}"
        );
    }
    // (The statistics table shows values as "5.00 ms"; the ticks are the round numbers.)
    for tick in ["20.00 ms", "50.00 ms", "100.00 ms"] {
        assert!(
            !texts.iter().any(|t| t == tick),
            "a tick still carries its own unit: {texts:?}"
        );
    }
}

/// A grouplog-shaped scripted run: the commit and wait operations and the group-commit
/// accounting of an adaptive run (the figures of docs/screenshots/run-grouplog.png).
fn grouplog_result() -> RunResult {
    let mut r = scripted(vec![7_000_000]);
    r.spec.kind = fsynclab::spec::KindSpec::default_of(WorkloadKind::Grouplog);
    for (op, ns) in [("commit", 14_000_000), ("wait", 13_000_000)] {
        let mut lat = LatencyHistogram::new();
        lat.record_n(ns, 553);
        r.ops.push(OpStats {
            op: op.into(),
            count: 553,
            bytes: 0,
            lat,
        });
    }
    let mut g = GroupCommitStats {
        strategy: "adaptive".into(),
        commits: 553,
        flushes: 70,
        learned_flush_ns: Some(7_480_000),
        gather_wait_ns: 483_910_000,
        ..Default::default()
    };
    g.record_batches(8, 69);
    g.record_batch(1);
    r.group = Some(g);
    r
}

/// The rect of the label reading exactly `text` (the leftmost, should several match).
fn cell(h: &Harness<'static, LabApp>, text: &str) -> egui::Rect {
    h.get_all_by_role_and_label(Role::Label, text)
        .map(|n| n.rect())
        .min_by(|a, b| a.left().total_cmp(&b.left()))
        .unwrap_or_else(|| panic!("no cell {text:?}"))
}

#[test]
fn grouplog_figures_sit_in_grid_cells_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    let id = store(&db, "grouplog", &grouplog_result());
    let mut h = gui_common::harness_on(&db, Tab::History);
    wait_for(&mut h, "the run row", |a| a.cache.runs.len() == 1);
    h.state_mut().cache.show_details = Some(id);
    wait_for(&mut h, "the details", |a| {
        a.cache.run_detail.as_ref().is_some_and(|r| r.row.id == id)
    });
    h.run_steps(3);
    h.get_all_by_role_and_label(Role::Label, "Strategy")
        .next()
        .expect("no Strategy cell")
        .scroll_to_me();
    h.run_steps(3);

    // Label column, value column: each value on its label's row, right of it, and all
    // values starting at one x (a grid column, whatever the font's widths).
    let rows = [
        ("Strategy", "adaptive"),
        ("Commits", "553"),
        ("Engine flushes", "70 (0.127 per commit)"),
        ("Records per flush", "7.90"),
        ("Learned flush time", "7.48 ms"),
        ("Leaders' gather wait", "483.91 ms in total"),
        ("Batch sizes (records × flushes)", "1×1  8×69"),
    ];
    let mut last_y = f32::NEG_INFINITY;
    let mut value_x = None;
    for (name, value) in rows {
        let label = cell(&h, name);
        let value_rect = if name == "Commits" {
            // "553 (550.2/s)": the rate depends on the scripted run's wall time.
            h.query_all_by_label_contains("553 (")
                .map(|n| n.rect())
                .next()
                .expect("no commit count cell")
        } else {
            cell(&h, value)
        };
        assert!(label.center().y > last_y, "{name} is out of order");
        last_y = label.center().y;
        assert!(
            (label.center().y - value_rect.center().y).abs() < 3.0,
            "{value:?} is not on the {name:?} row: {label:?} {value_rect:?}"
        );
        assert!(
            value_rect.left() > label.right(),
            "{value:?} not right of {name:?}"
        );
        let x = *value_x.get_or_insert(value_rect.left());
        assert!(
            (value_rect.left() - x).abs() < 0.5,
            "{value:?} starts at {} not {x}: not one column",
            value_rect.left()
        );
    }

    // The operation table is a grid too: each figure under its heading.
    let per_sec = cell(&h, "per sec");
    let commit = cell(&h, "commit");
    let p50 = cell(&h, "p50");
    for heading in [per_sec, p50] {
        assert!(heading.center().y < commit.center().y);
    }
    assert!(
        h.query_by_label_contains("max latency of any operation")
            .is_some()
    );
}
