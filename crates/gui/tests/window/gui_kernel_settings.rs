//! The kernel settings in the window (issue 14): History details has a "Kernel settings"
//! section for a run that recorded them and none for an older run; the Compare tab's
//! "what differs" table names the one setting that differs.

use crate::common;
use crate::gui_common;

use std::path::Path;

use egui_kittest::kittest::Queryable;
use fsynclab::probe::{DirtySettings, KernelSettings, SystemInfo};
use fsynclab_gui::Tab;

/// Stores a finished fake run labelled `label` whose `vm.dirty_ratio` is `dirty_ratio`
/// (no kernel settings at all when `None`, as runs stored before they were recorded).
fn store_run(db: &Path, label: &str, dirty_ratio: Option<u64>) -> i64 {
    let system = SystemInfo {
        kernel_settings: dirty_ratio.map(|ratio| KernelSettings {
            hz: Some(250),
            hz_source: Some("/proc/config.gz".into()),
            vm: DirtySettings {
                dirty_ratio: Some(ratio),
                ..DirtySettings::default()
            },
            ..KernelSettings::default()
        }),
        ..SystemInfo::default()
    };
    common::store_fake_run(db, Path::new("/tmp"), label, system)
}

#[test]
fn history_details_show_them_and_older_runs_do_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("lab.sqlite");
    let tuned = store_run(&db, "tuned", Some(40));
    let old = store_run(&db, "old", None);
    let mut h = gui_common::harness_on(&db, Tab::History);
    gui_common::wait_for(&mut h, "two rows", |a| a.cache.runs.len() == 2);

    gui_common::open_details(&mut h, "tuned", tuned);
    assert!(
        h.query_by_label("Kernel settings").is_some(),
        "section shown"
    );
    assert!(h.query_by_label("vm.dirty_ratio").is_some());
    assert!(h.query_by_label("40").is_some(), "its value");
    assert!(
        h.query_by_label("250  (/proc/config.gz)").is_some(),
        "HZ and its source"
    );

    gui_common::open_details(&mut h, "old", old);
    assert!(
        h.query_by_label("Kernel settings").is_none(),
        "no section, no error"
    );
    assert!(h.query_by_label("vm.dirty_ratio").is_none());
}

#[test]
fn compare_tab_names_the_setting_that_differs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("lab.sqlite");
    for _ in 0..2 {
        store_run(&db, "before", Some(20));
        store_run(&db, "after", Some(40));
    }
    let mut h = gui_common::harness_on(&db, Tab::Compare);
    gui_common::wait_for(&mut h, "the run listing", |a| a.cache.runs.len() == 4);
    for (field, text) in [("Baseline", "before"), ("Candidate", "after")] {
        h.get_by_label(field).focus();
        h.run_steps(1);
        h.get_by_label(field).type_text(text);
        h.run_steps(2);
    }
    h.get_by_label("Compare sides").click();
    gui_common::wait_for(&mut h, "the comparison", |a| {
        a.cache.comparison.is_some() || a.cache.comparison_error.is_some()
    });
    assert_eq!(h.state().cache.comparison_error, None);
    assert!(
        h.query_by_label("≠ vm.dirty_ratio").is_some(),
        "differs row"
    );
    assert!(
        h.query_by_label("≠ HZ").is_none(),
        "HZ is the same on both sides"
    );
}
