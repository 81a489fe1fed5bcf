//! Issue 15 item 26 in the window: a sweep compared on the Compare tab plots every point
//! with its 95 % CI and says which points cannot be told apart (egui_kittest, headless).

use crate::gui_common;
use fsynclab::spec::FlatSpec;

use std::path::Path;

use egui_kittest::kittest::Queryable;
use fsynclab::spec::SyncMethod;
use fsynclab::store::Store;
use fsynclab_gui::Tab;

/// Labels `a` and `b`, each two tiny runs at 1 and at 2 threads.
fn seed_sweep(db: &Path, target: &Path) {
    let store = Store::open(db).expect("open the test database");
    for label in ["a", "b"] {
        for threads in [1, 2] {
            for _ in 0..2 {
                let spec = FlatSpec {
                    threads,
                    file_size: 64 << 10,
                    sync: SyncMethod::None,
                    ..FlatSpec::default()
                }
                .typed();
                gui_common::record_run(&store, target, label, spec);
            }
        }
    }
}

#[test]
fn a_compared_sweep_plots_ci_whiskers_and_marks_overlaps() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    seed_sweep(&db, target.path());

    let mut h = gui_common::harness_on(&db, Tab::Compare);
    h.run_steps(3);
    gui_common::wait_for(&mut h, "the run listing", |app| app.cache.runs.len() == 8);
    gui_common::retype(&mut h, "Baseline", "a");
    gui_common::retype(&mut h, "Candidate", "b");
    h.get_by_label("Compare sides").click();
    h.run_steps(2);
    gui_common::wait_for(&mut h, "the comparison", |app| {
        app.cache.comparison.is_some() || app.cache.comparison_error.is_some()
    });
    assert_eq!(h.state().cache.comparison_error, None);
    let c = h.state().cache.comparison.as_deref().unwrap().clone();
    assert_eq!(
        c.sweep.as_ref().map(|s| s.points.len()),
        Some(2),
        "a sweep over threads"
    );
    for what in ["IOPS vs threads", "sync p99 vs threads"] {
        let title = format!(
            "{what} (headline per point; whiskers: 95% CI; ≈: CI overlaps the previous \
             point's, not distinguishable)"
        );
        assert!(
            h.query_by_label_contains(&title).is_some(),
            "no plot titled {title}"
        );
    }
}
