//! Window defects a newcomer hit, driven headless with egui_kittest at 1360x900 over real
//! tiny runs: the History preset column shows a scaled preset whole, and the Compare
//! tab's background-load note says "differed" only when the figures it shows differ.

use crate::gui_common;
use fsynclab::spec::FlatSpec;

use std::path::Path;
use std::time::Duration;

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use fsynclab::spec::WorkloadSpec;
use fsynclab::store::Store;
use fsynclab_gui::{LabApp, Tab};

fn tiny_spec() -> WorkloadSpec {
    FlatSpec {
        threads: 1,
        file_size: 64 << 10,
        block_size: 4096,
        ..FlatSpec::default()
    }
    .typed()
}

/// Records `count` real tiny runs labelled `label`, as if made from `preset` at `scale`.
fn record(db: &Path, target: &Path, label: &str, preset: Option<(&str, f64)>, count: usize) {
    let store = Store::open(db).expect("open the test database");
    for _ in 0..count {
        let mut request = gui_common::tiny_request(tiny_spec(), target, label);
        request.preset = preset.map(|(name, _)| name.to_string());
        request.preset_scale = preset.map(|(_, scale)| scale);
        gui_common::record(&store, &request);
    }
}

/// Width of `text` in the window's body font, as a label lays it out unclipped.
fn text_width(h: &Harness<'static, LabApp>, text: &str) -> f32 {
    let font = egui::TextStyle::Body.resolve(&h.ctx.global_style());
    h.ctx.fonts_mut(|f| {
        f.layout_no_wrap(text.to_string(), font, egui::Color32::WHITE)
            .size()
            .x
    })
}

#[test]
fn history_preset_column_shows_a_scaled_preset_whole() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let db = dir.path().join("lab.sqlite");
    record(
        &db,
        target.path(),
        "nossd",
        Some(("btrfs-log-commit", 0.01)),
        1,
    );
    record(
        &db,
        target.path(),
        "grouplog",
        Some(("ext4-fsync-coordination", 0.05)),
        1,
    );
    record(&db, target.path(), "plain", None, 1);

    let mut h = gui_common::harness_on(&db, Tab::History);
    gui_common::wait_for(&mut h, "the run listing", |app| {
        app.cache.runs.len() == 3 && !app.cache.runs_pending
    });
    for text in ["btrfs-log-commit ×0.01", "ext4-fsync-coordination ×0.05"] {
        let cell = h.get_by_label(text).rect();
        let needed = text_width(&h, text);
        // A truncated label ("btrfs-log-commit ×0…") is laid out narrower than its text.
        assert!(
            cell.width() + 0.5 >= needed,
            "{text}: cell {:.1} points wide, the text needs {needed:.1}",
            cell.width()
        );
    }
    // The columns after it are still in the window at 1360 points.
    let kernel = h.get_by_label("kernel").rect();
    assert!(
        kernel.right() < 1360.0,
        "kernel header off screen: {kernel:?}"
    );
}

/// Sets the background CPU busy share (0..1) recorded before each run labelled `label`.
fn set_busy(db: &Path, label: &str, busy: f64) {
    let conn = rusqlite::Connection::open(db).expect("open the database");
    let changed = conn
        .execute(
            "UPDATE runs SET noise_json = json_set(COALESCE(noise_json, '{}'), \
             '$.background_cpu_busy', ?1) WHERE label = ?2",
            rusqlite::params![busy, label],
        )
        .expect("set noise");
    assert!(changed > 0, "no run labelled {label}");
}

/// Compares label `a` with label `b` in a fresh window; every warning shown.
fn compare_warnings(db: &Path, a: &str, b: &str) -> Vec<String> {
    let state = fsynclab_gui::UiState {
        tab: Tab::Compare,
        compare_baseline: a.into(),
        compare_candidate: b.into(),
        ..Default::default()
    };
    let mut h = gui_common::harness_with(db, state);
    gui_common::wait_for(&mut h, "the run listing", |app| !app.cache.runs.is_empty());
    h.get_by_label("Compare sides").click();
    gui_common::wait_for(&mut h, "the comparison", |app| {
        app.cache.comparison.is_some() || app.cache.comparison_error.is_some()
    });
    assert_eq!(h.state().cache.comparison_error, None);
    no_vertical_grid_lines_in_the_bars(&h);
    let shown: Vec<String> = h
        .query_all_by_label_contains("WARNING: ")
        .filter_map(|n| {
            let ak = n.accesskit_node();
            ak.label().or_else(|| ak.value().map(|v| v.to_string()))
        })
        .collect();
    let computed = &h.state().cache.comparison.as_ref().unwrap().warnings;
    assert_eq!(
        shown.len(),
        computed.len(),
        "shown {shown:?}, computed {computed:?}"
    );
    shown
}

/// The IOPS bar plot has no vertical grid lines: one through each bar's centre read as
/// a whisker spanning the whole plot. (Its 95% CI whiskers are lines, not segments.)
fn no_vertical_grid_lines_in_the_bars(h: &Harness<'static, LabApp>) {
    let title = h
        .get_by_label("IOPS (writes/s, Hmean; whiskers: 95% CI)")
        .rect();
    let plot = egui::Rect::from_min_size(title.left_bottom(), egui::vec2(600.0, 230.0));
    let mut vertical = Vec::new();
    for clipped in &h.output().shapes {
        if let egui::Shape::LineSegment { points: [a, b], .. } = &clipped.shape
            && (a.x - b.x).abs() < 0.5
            && (a.y - b.y).abs() > 100.0
            && plot.contains(a.lerp(*b, 0.5))
        {
            vertical.push((a.x, a.y, b.y));
        }
    }
    assert!(
        vertical.is_empty(),
        "vertical lines in the bar plot: {vertical:?}"
    );
}

#[test]
fn compare_load_note_says_differed_only_when_the_shown_figures_differ() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let db = dir.path().join("lab.sqlite");
    record(&db, target.path(), "busy-a", None, 2);
    record(&db, target.path(), "busy-b", None, 2);
    record(&db, target.path(), "quiet", None, 2);
    set_busy(&db, "busy-a", 0.302);
    set_busy(&db, "busy-b", 0.298);
    set_busy(&db, "quiet", 0.04);

    // 30% and 30%: high on both sides, and not "differed".
    let notes = compare_warnings(&db, "busy-a", "busy-b");
    let load: Vec<&String> = notes.iter().filter(|w| w.contains("background")).collect();
    assert_eq!(load.len(), 1, "{notes:?}");
    assert!(!load[0].contains("differed"), "{}", load[0]);
    assert!(
        load[0].contains("30% busy before the baseline runs and 30% before the candidate"),
        "{}",
        load[0]
    );

    // 30% against 4%: differed, with both figures and the busier side.
    let notes = compare_warnings(&db, "busy-a", "quiet");
    let differed = notes
        .iter()
        .find(|w| w.contains("background load differed"))
        .unwrap_or_else(|| panic!("no load note in {notes:?}"));
    assert!(
        differed.contains("30%") && differed.contains("4%"),
        "{differed}"
    );
    assert!(differed.contains("(baseline)"), "{differed}");
}

#[test]
fn run_tab_time_axis_has_a_tick_every_half_second_with_its_unit() {
    let db = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let spec = FlatSpec {
        threads: 1,
        file_size: 1 << 20,
        duration_s: Some(2.5),
        ..FlatSpec::default()
    }
    .typed();
    let state = fsynclab_gui::UiState {
        tab: Tab::Run,
        target: target.path().display().to_string(),
        preset: None,
        spec: spec.flat(),
        kernel_trace: fsynclab::ktrace::KernelTraceMode::Off,
        ..Default::default()
    };
    let mut h = gui_common::harness_with(&db.path().join("gui.sqlite"), state);
    gui_common::start_run(&mut h);
    // The live plots, once two seconds are in: egui_plot's powers of ten labelled this
    // span "1" alone, with no unit.
    gui_common::step_until(
        &mut h,
        "2 s of live samples",
        Duration::from_secs(60),
        |h| {
            h.state()
                .runner
                .live
                .samples
                .last()
                .is_some_and(|s| s.t_ms >= 2000)
        },
    );
    h.run_steps(2);
    let live = gui_common::painted_texts(&h);
    for tick in ["0.0 s", "0.5 s", "1.0 s", "1.5 s", "2.0 s"] {
        assert!(
            live.iter().any(|t| t == tick),
            "no {tick:?} tick in {live:?}"
        );
    }
    // (A bare "1" may still be painted: the y axes' own labels, e.g. sync latency in ms.)
    // The kernel-trace plot is not drawn: this run is not traced.
    assert!(
        !live.iter().any(|t| t.starts_with("kernel trace")),
        "{live:?}"
    );
    assert!(live.iter().any(|t| t == "time since start"));
}
