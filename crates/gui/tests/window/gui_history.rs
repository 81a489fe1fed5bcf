//! The History tab, driven headless with egui_kittest over a database filled with real
//! tiny runs: listing, text and menu filters, sorting, the columns menu, multi-select,
//! relabel, delete with confirmation, details, compare, and a frame with thousands of runs.

use crate::gui_common;
use fsynclab::spec::FlatSpec;

use crate::gui_common::wait_for;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use egui::{Modifiers, Role};
use egui_kittest::kittest::Queryable;
use egui_kittest::{Harness, Node};
use fsynclab::spec::WorkloadSpec;
use fsynclab::store::{NewRun, RunFilter, RunRow, Store};
use fsynclab_gui::{LabApp, Tab};

struct Lab {
    dir: tempfile::TempDir,
    db: PathBuf,
}

fn tiny_spec() -> WorkloadSpec {
    FlatSpec {
        threads: 2,
        file_size: 64 << 10,
        block_size: 4096,
        ..FlatSpec::default()
    }
    .typed()
}

/// A database with one real tiny run per label, executed through the library.
fn lab_with_runs(labels: &[&str]) -> Lab {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("lab.sqlite");
    let target = dir.path().join("target");
    std::fs::create_dir(&target).expect("target dir");
    let store = Store::open(&db).expect("open store");
    for label in labels {
        let mut request = gui_common::tiny_request(tiny_spec(), &target, label);
        request.tags = vec!["gui-test".into()];
        gui_common::record(&store, &request);
    }
    Lab { dir, db }
}

/// The window on `db`, opened on the History tab.
fn harness(db: &Path) -> Harness<'static, LabApp> {
    gui_common::harness_on(db, Tab::History)
}

fn rows_loaded(app: &LabApp) -> bool {
    !app.cache.runs_pending && !app.cache.runs_stale
}

fn db_rows(db: &Path) -> Vec<RunRow> {
    Store::open(db)
        .expect("open store")
        .list_runs(&RunFilter::default())
        .expect("list runs")
}

/// The table cell showing `text` (the leftmost node with that label: the details panel
/// is on the right).
fn cell<'a>(h: &'a Harness<'static, LabApp>, text: &'a str) -> Node<'a> {
    h.get_all_by_role_and_label(Role::Label, text)
        .min_by(|a, b| a.rect().left().total_cmp(&b.rect().left()))
        .unwrap_or_else(|| panic!("no table cell {text:?}"))
}

fn id_of(h: &Harness<'static, LabApp>, label: &str) -> i64 {
    h.state()
        .cache
        .runs
        .iter()
        .find(|r| r.label.as_deref() == Some(label))
        .map(|r| r.id)
        .unwrap_or_else(|| panic!("no run labelled {label}"))
}

#[test]
fn lists_filters_sorts_and_shows_details() {
    let lab = lab_with_runs(&["alpha", "beta", "gamma"]);
    let mut h = harness(&lab.db);
    wait_for(&mut h, "three rows", |a| a.cache.runs.len() == 3);
    for label in ["alpha", "beta", "gamma"] {
        assert!(h.query_by_label(label).is_some(), "{label} row shown");
    }
    assert!(h.query_by_label("3 of 3 runs shown").is_some());

    // Sorting by label: A to Z, then Z to A (rows are read top to bottom).
    h.get_by_label("label").click();
    h.run_steps(3);
    let y = |h: &Harness<'static, LabApp>, l: &str| cell(h, l).rect().top();
    assert!(y(&h, "alpha") < y(&h, "beta") && y(&h, "beta") < y(&h, "gamma"));
    h.get_by_label("label").click();
    h.run_steps(3);
    assert!(y(&h, "gamma") < y(&h, "beta") && y(&h, "beta") < y(&h, "alpha"));

    // The text filter goes to the database.
    h.get_by_label("Filter").click();
    h.run_steps(2);
    h.get_by_label("Filter").type_text("alp");
    wait_for(&mut h, "filtered rows", |a| {
        rows_loaded(a) && a.cache.runs.len() == 1
    });
    assert!(h.query_by_label("alpha").is_some());
    assert!(h.query_by_label("beta").is_none());
    h.state_mut().state.history_filter.clear();
    h.state_mut().cache.runs_stale = true;
    wait_for(&mut h, "all rows again", |a| {
        rows_loaded(a) && a.cache.runs.len() == 3
    });

    // The label menu filters in memory.
    h.get_by_label("Label").click();
    h.run_steps(2);
    h.get_by_role_and_label(Role::Button, "beta").click();
    h.run_steps(3);
    assert!(h.query_by_label("1 of 3 runs shown").is_some());
    assert!(h.query_by_label("alpha").is_none());
    h.get_by_label("Clear filters").click();
    h.run_steps(3);
    assert!(h.query_by_label("3 of 3 runs shown").is_some());

    // Hide the kernel column, so the kernel release shows only in the details.
    h.get_by_label("Columns").click();
    h.run_steps(2);
    h.get_by_role_and_label(Role::CheckBox, "kernel").click();
    h.run_steps(2);
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert!(
        !h.state()
            .state
            .history_columns
            .iter()
            .any(|c| c == "kernel")
    );
    assert!(h.query_by_label("kernel").is_none(), "kernel header hidden");

    // Details of the run clicked.
    let beta = id_of(&h, "beta");
    cell(&h, "beta").click();
    wait_for(&mut h, "details", |a| {
        a.cache
            .run_detail
            .as_ref()
            .is_some_and(|r| r.row.id == beta)
    });
    let kernel = h
        .state()
        .cache
        .run_detail
        .as_ref()
        .and_then(|r| r.system.kernel_release.clone())
        .expect("kernel release probed");
    let heading = h.get_by_label(&format!("Run {beta}")).rect();
    // Nothing of the toolbar or the actions overflows under the details panel (they span
    // the width above it, so opening it does not move the rows: crates/gui/tests/window/gui_history_items.rs).
    for widget in ["Label", "Refresh", "Clear selection", "Compare selected"] {
        let rect = h.get_by_label(widget).rect();
        assert!(
            rect.right() < heading.left() || rect.bottom() <= heading.top(),
            "{widget} at {rect:?} is under the details panel"
        );
    }
    assert!(h.query_by_label(&kernel).is_some(), "kernel {kernel} shown");
    for header in ["thread", "writes", "syncs", "bytes", "busy s", "wall s"] {
        assert!(
            h.query_by_label(header).is_some(),
            "fairness header {header}"
        );
    }
    assert!(h.query_by_label("1 selected").is_some());
    h.get_by_label("Close").click();
    h.run_steps(3);
    assert!(h.query_by_label(&format!("Run {beta}")).is_none());
    drop(lab.dir);
}

#[test]
fn relabels_deletes_and_compares_a_selection() {
    let lab = lab_with_runs(&["alpha", "beta", "gamma"]);
    let mut h = harness(&lab.db);
    wait_for(&mut h, "three rows", |a| a.cache.runs.len() == 3);
    let (alpha, beta, gamma) = (id_of(&h, "alpha"), id_of(&h, "beta"), id_of(&h, "gamma"));

    // Click one, ctrl-click another: two selected. Shift-click selects a range.
    cell(&h, "alpha").click();
    h.run_steps(2);
    cell(&h, "gamma").click_modifiers(Modifiers::CTRL);
    h.run_steps(2);
    assert!(h.query_by_label("2 selected").is_some());
    cell(&h, "alpha").click_modifiers(Modifiers::SHIFT);
    h.run_steps(2);
    assert!(
        h.query_by_label("3 selected").is_some(),
        "shift-click range"
    );
    cell(&h, "alpha").click();
    h.run_steps(2);
    cell(&h, "beta").click_modifiers(Modifiers::CTRL);
    h.run_steps(2);
    assert!(h.query_by_label("2 selected").is_some());

    // Relabel both.
    h.get_by_label("New label").click();
    h.run_steps(2);
    h.get_by_label("New label").type_text("renamed");
    h.run_steps(2);
    h.get_by_label("Relabel").click();
    wait_for(&mut h, "relabelled rows", |a| {
        rows_loaded(a)
            && a.cache
                .runs
                .iter()
                .filter(|r| r.label.as_deref() == Some("renamed"))
                .count()
                == 2
    });
    let in_db: Vec<i64> = db_rows(&lab.db)
        .iter()
        .filter(|r| r.label.as_deref() == Some("renamed"))
        .map(|r| r.id)
        .collect();
    assert_eq!(in_db.len(), 2);
    assert!(in_db.contains(&alpha) && in_db.contains(&beta));
    assert!(h.query_by_label("gamma").is_some());

    // A bidi override in the new label is refused, and nothing is relabelled.
    h.get_by_label("New label").click();
    h.run_steps(2);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.get_by_label("New label").type_text("abc\u{202e}fed");
    h.run_steps(2);
    h.get_by_label("Relabel").click();
    h.run_steps(3);
    let message = h.state().status.message.clone();
    assert!(
        message.starts_with("New label: ") && message.contains("U+202E"),
        "{message}"
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(
        db_rows(&lab.db)
            .iter()
            .filter(|r| r.label.as_deref() == Some("renamed"))
            .count(),
        2,
        "the refused label reached the database"
    );

    // Delete: Cancel and Esc keep the run, Delete removes it.
    cell(&h, "gamma").click();
    h.run_steps(2);
    h.get_by_label("Delete…").click();
    h.run_steps(2);
    assert!(
        h.query_by_label("Delete 1 run? This cannot be undone.")
            .is_some()
    );
    h.get_by_label("Cancel").click();
    h.run_steps(3);
    assert!(
        h.query_by_label("Delete 1 run? This cannot be undone.")
            .is_none()
    );
    h.get_by_label("Delete…").click();
    h.run_steps(2);
    h.key_press(egui::Key::Escape);
    h.run_steps(3);
    assert!(
        h.query_by_label("Delete 1 run? This cannot be undone.")
            .is_none()
    );
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(db_rows(&lab.db).len(), 3, "cancel keeps the run");
    h.get_by_label("Delete…").click();
    h.run_steps(2);
    h.get_by_label("Delete").click();
    wait_for(&mut h, "rows after delete", |a| {
        rows_loaded(a) && a.cache.runs.len() == 2
    });
    let left: Vec<i64> = db_rows(&lab.db).iter().map(|r| r.id).collect();
    assert!(!left.contains(&gamma) && left.len() == 2);
    assert!(h.query_by_label("gamma").is_none());

    // Compare the two remaining runs.
    let cells = h.get_all_by_role_and_label(Role::Label, "renamed").count();
    assert_eq!(cells, 2);
    let mut ids = left.clone();
    ids.sort_unstable();
    // The upper of the two rows, then ctrl-click the lower one (tree order need not be
    // screen order; once a row is selected, History details shows its label too).
    let mut rows: Vec<f32> = h
        .get_all_by_role_and_label(Role::Label, "renamed")
        .map(|n| n.rect().top())
        .collect();
    rows.sort_by(f32::total_cmp);
    h.get_all_by_role_and_label(Role::Label, "renamed")
        .find(|n| (n.rect().top() - rows[0]).abs() < 0.5)
        .expect("row")
        .click();
    h.run_steps(2);
    h.get_all_by_role_and_label(Role::Label, "renamed")
        .find(|n| (n.rect().top() - rows[1]).abs() < 0.5)
        .expect("row")
        .click_modifiers(Modifiers::CTRL);
    h.run_steps(2);
    let tops: Vec<f32> = h
        .get_all_by_role_and_label(Role::Label, "renamed")
        .map(|n| n.rect().top())
        .collect();
    assert!(
        h.query_by_label("2 selected").is_some(),
        "two rows selected; the rows' tops: {tops:?}"
    );
    h.get_by_label("Compare selected").click();
    h.run_steps(2);
    let app = h.state();
    assert_eq!(app.state.tab, Tab::Compare);
    assert_eq!(app.state.compare_baseline, ids[0].to_string());
    assert_eq!(app.state.compare_candidate, ids[1].to_string());
    wait_for(&mut h, "comparison", |a| !a.cache.comparison_pending);
    drop(lab.dir);
}

#[test]
fn thousands_of_runs_render_in_one_frame() {
    let lab = lab_with_runs(&["seed"]);
    let store = Store::open(&lab.db).expect("open");
    let seed = store.load_run(1).expect("seed run");
    let mut result = seed.result.expect("seed result");
    // 10 000 runs through begin_run + finish_run (one transaction each) took 68 s on the
    // shared 2-core build machine, so the default is 3 000; FSYNCLAB_GUI_HISTORY_RUNS=10000
    // runs the full-size check.
    let n: usize = std::env::var("FSYNCLAB_GUI_HISTORY_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3_000);
    let start = Instant::now();
    for i in 1..n {
        let id = store
            .begin_run(&NewRun {
                label: Some(format!("copy-{}", i % 50)),
                ..NewRun::new(
                    seed.spec.clone(),
                    seed.system.clone(),
                    seed.system.target.clone(),
                )
            })
            .expect("begin");
        result.id = id;
        store.finish_run(&result).expect("finish");
    }
    eprintln!(
        "inserted {n} runs in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    drop(store);

    let mut h = harness(&lab.db);
    wait_for(&mut h, "all rows", |a| a.cache.runs.len() == n);
    // The first frame after the rows arrive builds the sorted index; measure a steady one
    // and one with a new sort (the index is rebuilt).
    let start = Instant::now();
    h.run_ok();
    eprintln!(
        "frame with {n} runs: {:.1} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    assert!(
        h.query_by_label(&format!("{n} of {n} runs shown"))
            .is_some()
    );
    h.get_by_label("IOPS").click();
    let start = Instant::now();
    h.run_ok();
    let resorted = start.elapsed();
    eprintln!(
        "frames after a re-sort of {n} runs: {:.1} ms",
        resorted.as_secs_f64() * 1e3
    );
    assert!(
        resorted < Duration::from_secs(5),
        "rendering {n} runs took {resorted:?}"
    );
    drop(lab.dir);
}
