//! Imported fio runs in the window (egui_kittest): they show in History with "fio
//! (imported)", their details say where they came from and what they lack, and two of
//! them compare (ext4 vs btrfs from the real fio 3.33 outputs) with the import rows.

use crate::gui_common;

use crate::gui_common::wait_for;
use std::path::Path;

use egui::{Modifiers, Role};
use egui_kittest::kittest::Queryable;
use egui_kittest::{Harness, Node};
use fsynclab::fio::import::read_fio_output;
use fsynclab::lab::import::store_imported;
use fsynclab::store::Store;
use fsynclab_gui::{LabApp, Tab};

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/fixtures/fio")
        .join(name)
}

/// ext4 (plain JSON) and btrfs (plain JSON) and one client-mode JSON+ host, imported.
fn seed(db: &Path) -> Vec<i64> {
    let store = Store::open(db).expect("open the test database");
    let mut ids = Vec::new();
    for (name, label) in [
        ("A-ext4.out", "ext4"),
        ("A-btrfs.out", "btrfs"),
        ("seed000-jsonplus.json", "jsonplus"),
    ] {
        let out = read_fio_output(&fixture(name)).expect("fixture imports");
        ids.extend(store_imported(&store, &out.runs, Some(label), None).expect("stored"));
    }
    ids
}

/// The window on `db`, opened on the History tab.
fn harness(db: &Path) -> Harness<'static, LabApp> {
    gui_common::harness_on(db, Tab::History)
}

/// The table cell showing `text` (leftmost: the details panel is on the right).
fn cell<'a>(h: &'a Harness<'static, LabApp>, text: &'a str) -> Node<'a> {
    h.get_all_by_role_and_label(Role::Label, text)
        .min_by(|a, b| a.rect().left().total_cmp(&b.rect().left()))
        .unwrap_or_else(|| panic!("no table cell {text:?}"))
}

#[test]
fn imported_runs_show_in_history_and_compare() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    let ids = seed(&db);
    assert_eq!(ids.len(), 3);
    let mut h = harness(&db);
    wait_for(&mut h, "three rows", |a| a.cache.runs.len() == 3);
    assert_eq!(h.query_all_by_label("fio (imported)").count(), 3);

    // Details of the ext4 import: origin, fio's figures, what an import lacks.
    cell(&h, "ext4").click();
    wait_for(&mut h, "details", |a| {
        a.cache
            .run_detail
            .as_ref()
            .is_some_and(|r| r.row.id == ids[0])
    });
    assert!(h.query_by_label("Origin: imported from fio").is_some());
    assert!(h.query_by_label("fio-3.33").is_some());
    assert!(
        h.query_all_by_label_contains("imported: machine facts unknown")
            .next()
            .is_some()
    );
    assert!(
        h.query_all_by_label_contains("as fio-3.33 reported it")
            .next()
            .is_some()
    );
    assert!(
        h.query_all_by_label_contains("fio's JSON has no interval samples")
            .next()
            .is_some()
    );
    assert!(
        h.query_by_label("busy s").is_none(),
        "no per-thread table for an import"
    );

    // Select ext4 and btrfs, compare them.
    cell(&h, "ext4").click();
    h.run_steps(2);
    cell(&h, "btrfs").click_modifiers(Modifiers::CTRL);
    h.run_steps(2);
    assert!(h.query_by_label("2 selected").is_some());
    h.get_by_label("Compare selected").click();
    h.run_steps(2);
    assert_eq!(h.state().state.tab, Tab::Compare);
    wait_for(&mut h, "the comparison", |a| {
        !a.cache.comparison_pending
            && (a.cache.comparison.is_some() || a.cache.comparison_error.is_some())
    });
    assert_eq!(h.state().cache.comparison_error, None);
    let c = h.state().cache.comparison.as_deref().unwrap().clone();
    let iops = c.metrics.iter().find(|m| m.key == "iops").unwrap();
    let ratio = iops.baseline_value.unwrap() / iops.candidate_value.unwrap();
    assert!((5.0..20.0).contains(&ratio), "ext4/btrfs IOPS {ratio}");
    assert!(h.query_by_label("iops").is_some(), "no iops row");
    assert!(
        h.query_all_by_label_contains("fio's printed percentiles")
            .next()
            .is_some()
    );
    assert!(
        h.query_all_by_label_contains("fio directory")
            .next()
            .is_some()
    );
}
