//! The crash test's findings in the window (issue 33), on stored runs built in the test:
//! History details' Durability (crash test) section shows what a run's power cuts found —
//! the verdict and the first failure — and a run that was not crash-tested has none; the
//! Compare tab says what each side's crash tests found.

use crate::gui_common::{self, wait_for};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsynclab::crashlog::{Ack, CrashReport, Failure, FirstFailure, RecordId};
use fsynclab::probe::SystemInfo;
use fsynclab::spec::FlatSpec;
use fsynclab::store::{NewRun, Store};
use fsynclab_gui::{LabApp, Tab};

fn has_label_containing(h: &Harness<'static, LabApp>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

/// Stores a finished run labelled `label`, with `crash` kept beside it when given.
fn store_run(db: &std::path::Path, label: &str, crash: Option<&CrashReport>) -> i64 {
    let store = Store::open(db).unwrap();
    let spec = FlatSpec {
        threads: 1,
        file_size: 8 * 4096,
        ..FlatSpec::default()
    }
    .typed();
    let result = fsynclab::engine::fake_run(
        0,
        vec![1_000; 100],
        vec![9_000; 100],
        &spec,
        SystemInfo::default(),
    )
    .unwrap();
    let new = NewRun {
        label: Some(label.into()),
        ..NewRun::new(spec, SystemInfo::default(), "/mnt/crash")
    };
    let id = store.insert_finished(&new, &result).unwrap();
    if let Some(crash) = crash {
        store.set_crash_test(id, crash).unwrap();
    }
    id
}

#[test]
fn history_details_show_a_crash_tests_losses_and_nothing_for_other_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    let lost = CrashReport {
        cuts: 20,
        states: 49,
        acknowledged: 200,
        lost: 65,
        seed: 1,
        first_failure: Some(FirstFailure {
            reordered: false,
            file: None,
            cut: 66,
            subset: 0,
            dropped: vec![65],
            failure: Failure::Lost(Ack {
                id: RecordId {
                    run: 7,
                    thread: 0,
                    seq: 9,
                    version: 0,
                },
                file: 0,
                offset: 36864,
                len: 4096,
            }),
        }),
        ..CrashReport::default()
    };
    let tested = store_run(&db, "unsafe", Some(&lost));
    let plain = store_run(&db, "plain", None);
    let mut h = gui_common::harness_on(&db, Tab::History);
    wait_for(&mut h, "two rows", |a| a.cache.runs.len() == 2);
    gui_common::open_details(&mut h, "unsafe", tested);
    assert!(has_label_containing(&h, "Durability (crash test)"));
    assert!(has_label_containing(
        &h,
        "65 of 200 acknowledged records lost over 20 power cuts (49 crash states)"
    ));
    assert!(has_label_containing(
        &h,
        "first failure: cut at log entry 66, state 0 (1 volatile writes dropped): lost record 9 of thread 0"
    ));
    gui_common::open_details(&mut h, "plain", plain);
    assert!(!has_label_containing(&h, "Durability (crash test)"));
    assert!(!has_label_containing(&h, "acknowledged records"));
}

#[test]
fn the_compare_tab_says_what_each_sides_crash_tests_found() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    let clean = CrashReport {
        cuts: 20,
        states: 40,
        acknowledged: 200,
        ..CrashReport::default()
    };
    let lossy = CrashReport {
        lost: 37,
        ..clean.clone()
    };
    store_run(&db, "safe", Some(&clean));
    store_run(&db, "fast", Some(&lossy));
    let mut h = gui_common::harness_on(&db, Tab::Compare);
    wait_for(&mut h, "two rows", |a| a.cache.runs.len() == 2);
    {
        let state = &mut h.state_mut().state;
        state.compare_baseline = "safe".into();
        state.compare_candidate = "fast".into();
    }
    h.run_steps(2);
    h.get_by_label("Compare sides").click();
    wait_for(&mut h, "the comparison", |a| {
        a.cache.comparison.is_some() || a.cache.comparison_error.is_some()
    });
    assert_eq!(h.state().cache.comparison_error, None);
    assert!(has_label_containing(&h, "Durability (crash tests)"));
    assert!(has_label_containing(
        &h,
        "baseline: 0 of 200 acknowledged records lost"
    ));
    assert!(has_label_containing(
        &h,
        "candidate: LOST: 37 of 200 acknowledged records lost"
    ));
}
