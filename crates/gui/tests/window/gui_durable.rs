//! Issue 31's method comparison in the window: fdatasync against O_DSYNC compares durable
//! operations (the write rows say why they are not compared), and "Rank variants" ranks
//! a selection by durable operations per second with the variants that keep nothing last.

use fsynclab::spec::FlatSpec;
use std::path::Path;

use crate::gui_common::{harness_on, record_run, wait_for};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsynclab::spec::{OpenFlags, SyncMethod, WorkloadSpec};
use fsynclab::store::Store;
use fsynclab_gui::{LabApp, Tab};

fn spec(sync: SyncMethod, dsync: bool) -> WorkloadSpec {
    FlatSpec {
        threads: 1,
        file_size: 128 << 10,
        sync,
        open_flags: OpenFlags {
            dsync,
            ..Default::default()
        },
        ..FlatSpec::default()
    }
    .typed()
}

/// Three tiny finished runs of each `(label, spec)`.
fn seed(db: &Path, target: &Path, sides: &[(&str, WorkloadSpec)]) {
    let store = Store::open(db).expect("open the test database");
    for (label, spec) in sides {
        for _ in 0..3 {
            record_run(&store, target, label, spec.clone());
        }
    }
}

fn type_into(h: &mut Harness<'static, LabApp>, label: &str, text: &str) {
    h.get_by_label(label).focus();
    h.run_steps(1);
    h.get_by_label(label).type_text(text);
    h.run_steps(2);
}

#[test]
fn fdatasync_against_o_dsync_compares_durable_operations_in_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    seed(
        &db,
        target.path(),
        &[
            ("fdatasync", spec(SyncMethod::Fdatasync, false)),
            ("odsync", spec(SyncMethod::None, true)),
        ],
    );
    let mut h = harness_on(&db, Tab::Compare);
    h.run_steps(3);
    type_into(&mut h, "Baseline", "fdatasync");
    type_into(&mut h, "Candidate", "odsync");
    h.get_by_label("Compare sides").click();
    wait_for(&mut h, "the comparison", |app| {
        app.cache.comparison.is_some()
    });
    let c = h.state().cache.comparison.clone().unwrap();
    assert_eq!(c.headline_latency, "durable_p99_us");
    // The write rows carry no verdict, and the window says why.
    assert!(
        h.query_all_by_label_contains("not comparable: the calls differ")
            .next()
            .is_some(),
        "write rows not marked"
    );
    assert!(
        h.query_all_by_label_contains("write latency is not compared")
            .next()
            .is_some(),
        "no warning saying why"
    );
    assert!(
        h.query_all_by_label_contains("durable_p99_us")
            .next()
            .is_some(),
        "no durable row"
    );
}

#[test]
fn rank_variants_lists_the_ones_that_keep_nothing_last() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    seed(
        &db,
        target.path(),
        &[
            ("fsync", spec(SyncMethod::Fsync, false)),
            ("srf", spec(SyncMethod::SyncFileRange, false)),
        ],
    );
    let mut h = harness_on(&db, Tab::Compare);
    h.run_steps(3);
    type_into(&mut h, "Baseline", "fsync");
    type_into(&mut h, "Candidate", "srf");
    h.get_by_label("Rank variants").click();
    wait_for(&mut h, "the ranking", |app| app.cache.ranking.is_some());
    let (ranking, name) = h.state().cache.ranking.as_deref().cloned().unwrap();
    assert_eq!(name, "fsync + srf");
    assert_eq!(ranking.variants.len(), 2);
    assert_eq!(ranking.variants[0].name, "fsync");
    assert_eq!(ranking.variants[0].rank, Some(1));
    assert_eq!(ranking.variants[1].rank, None);
    assert!(h.query_by_label("Ranking of fsync + srf").is_some());
    assert!(
        h.query_by_label("not durable: sync_file_range").is_some(),
        "the non-durable variant is not marked"
    );
    assert!(h.query_by_label("durable ops/s [95% CI]").is_some());
}
