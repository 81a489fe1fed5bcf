//! History details' Durability (crash test) section (issue 33), on stored runs built in the
//! test: a crash-tested run shows what its power cuts found — the verdict and the first
//! failure — and a run that was not crash-tested has no such section.

use crate::gui_common::{self, wait_for};

use egui::Role;
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
    let open = |h: &mut Harness<'static, LabApp>, label: &str, id: i64| {
        h.get_all_by_role_and_label(Role::Label, label)
            .min_by(|a, b| a.rect().left().total_cmp(&b.rect().left()))
            .unwrap()
            .click();
        wait_for(h, "details", |a| {
            a.cache.run_detail.as_ref().is_some_and(|r| r.row.id == id)
        });
    };
    open(&mut h, "unsafe", tested);
    assert!(has_label_containing(&h, "Durability (crash test)"));
    assert!(has_label_containing(
        &h,
        "65 of 200 acknowledged records lost over 20 power cuts (49 crash states)"
    ));
    assert!(has_label_containing(
        &h,
        "first failure: cut at log entry 66, state 0 (1 volatile writes dropped): lost record 9 of thread 0"
    ));
    open(&mut h, "plain", plain);
    assert!(!has_label_containing(&h, "Durability (crash test)"));
    assert!(!has_label_containing(&h, "acknowledged records"));
}
