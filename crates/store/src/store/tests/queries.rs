//! Listing, filters, labels, tags, deletion, unknown ids, failed runs.

use super::super::*;
use super::{count, new_run, result_for};
use crate::metrics::RunStatus;

#[test]
fn list_filters_combine() {
    let store = Store::open_in_memory().unwrap();
    let experiment = store.create_experiment("barrier sweep").unwrap();
    let a = store
        .begin_run(&new_run(Some("base"), "ext4", "6.8.0-45-generic"))
        .unwrap();
    let mut tagged = new_run(Some("nobarrier_50%"), "xfs", "6.11.2");
    tagged.tags = vec!["risky".into(), "  barrier-off ".into()];
    tagged.experiment_id = Some(experiment);
    tagged.preset = None;
    let b = store.begin_run(&tagged).unwrap();
    store.finish_run(&result_for(b, &tagged)).unwrap();
    let c = store
        .begin_run(&new_run(Some("base"), "ext4", "6.8.1"))
        .unwrap();
    store
        .fail_run(
            c,
            &fsynclab_core::metrics::Recorded::Text("target is read-only".into()),
        )
        .unwrap();

    let ids = |filter: RunFilter| -> Vec<i64> {
        store
            .list_runs(&filter)
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect()
    };
    assert_eq!(ids(RunFilter::default()), vec![c, b, a]);
    let label = |l: &str| RunFilter {
        label: Some(l.into()),
        ..Default::default()
    };
    assert_eq!(ids(label("base")), vec![c, a]);
    assert_eq!(
        ids(RunFilter {
            status: Some(RunStatus::Failed),
            ..Default::default()
        }),
        vec![c]
    );
    let text = |t: &str| RunFilter {
        text: Some(t.into()),
        ..Default::default()
    };
    assert_eq!(ids(text("XFS")), vec![b]); // fs type, case-insensitive
    assert_eq!(ids(text("barrier-off")), vec![b]); // tag, trimmed when added
    assert_eq!(ids(text("50%")), vec![b]); // label, % taken literally
    assert_eq!(ids(text("5_%")), Vec::<i64>::new()); // _ taken literally
    assert_eq!(ids(text("log-commit")), vec![c, a]); // preset
    assert_eq!(ids(text("/mnt")), vec![c, b, a]); // target
    assert_eq!(ids(text("6.8.1")), vec![c]); // kernel
    assert_eq!(
        ids(RunFilter {
            experiment_id: Some(experiment),
            ..Default::default()
        }),
        vec![b]
    );
    assert_eq!(
        ids(RunFilter {
            kernel: Some("6.8".into()),
            fs_type: Some("ext4".into()),
            ..Default::default()
        }),
        vec![c, a]
    );
    assert_eq!(
        ids(RunFilter {
            preset: Some("btrfs-log-commit".into()),
            limit: Some(1),
            ..Default::default()
        }),
        vec![c]
    );
    assert_eq!(
        ids(RunFilter {
            text: Some("base".into()),
            status: Some(RunStatus::Running),
            ..Default::default()
        }),
        vec![a]
    );
    let row_b = store.list_runs(&label("nobarrier_50%")).unwrap().remove(0);
    assert_eq!(
        row_b.tags,
        vec!["barrier-off".to_string(), "risky".to_string()]
    );
    assert_eq!(row_b.experiment_id, Some(experiment));
    assert!(row_b.iops.is_some());

    assert_eq!(store.run_ids_with_label("base").unwrap(), vec![a, c]);
    assert_eq!(store.run_ids_in_experiment(experiment).unwrap(), vec![b]);
    assert!(matches!(
        store.run_ids_in_experiment(experiment + 100),
        Err(StoreError::ExperimentNotFound { .. })
    ));
    let experiments = store.list_experiments().unwrap();
    assert_eq!(experiments.len(), 1);
    assert_eq!(experiments[0].name, "barrier sweep");
}

#[test]
fn relabel_and_tags() {
    let store = Store::open_in_memory().unwrap();
    let id = store
        .begin_run(&new_run(Some("old"), "ext4", "6.8"))
        .unwrap();
    store.set_label(id, Some("new")).unwrap();
    assert_eq!(store.run_ids_with_label("new").unwrap(), vec![id]);
    assert!(store.run_ids_with_label("old").unwrap().is_empty());
    store.set_label(id, Some("  ")).unwrap();
    assert_eq!(store.load_run(id).unwrap().row.label, None);
    store.set_label(id, None).unwrap();

    store.add_tag(id, "ssd").unwrap();
    store.add_tag(id, "ssd").unwrap();
    assert_eq!(store.load_run(id).unwrap().row.tags, vec!["nvme", "ssd"]);
    store.remove_tag(id, "nvme").unwrap();
    store.remove_tag(id, "absent").unwrap();
    assert_eq!(store.load_run(id).unwrap().row.tags, vec!["ssd"]);
    let err = store.add_tag(id, " ").unwrap_err();
    assert!(matches!(err, StoreError::EmptyTag { .. }), "{err:?}");
}

#[test]
fn delete_cascades_to_child_rows() {
    let store = Store::open_in_memory().unwrap();
    let new = new_run(Some("x"), "ext4", "6.8");
    let keep = store.begin_run(&new).unwrap();
    store.finish_run(&result_for(keep, &new)).unwrap();
    let gone = store.begin_run(&new).unwrap();
    store.finish_run(&result_for(gone, &new)).unwrap();
    store.delete_run(gone).unwrap();
    for table in ["intervals", "thread_stats", "histograms", "run_tags"] {
        let orphans = count(
            &store,
            &format!("SELECT count(*) FROM {table} WHERE run_id = {gone}"),
        );
        assert_eq!(orphans, 0, "{table}");
        let kept = count(
            &store,
            &format!("SELECT count(*) FROM {table} WHERE run_id = {keep}"),
        );
        assert!(kept > 0, "{table}");
    }
    assert!(matches!(
        store.load_run(gone),
        Err(StoreError::NotFound { id }) if id == gone
    ));
    assert!(store.load_run(keep).unwrap().result.is_some());
}

#[test]
fn unknown_ids_are_not_found() {
    let store = Store::open_in_memory().unwrap();
    let new = new_run(None, "ext4", "6.8");
    let not_found = |r: Result<(), StoreError>| {
        let err = r.unwrap_err();
        assert!(matches!(err, StoreError::NotFound { id: 42 }), "{err:?}");
        assert_eq!(err.to_string(), "no run with id 42; see `fsynclab list`");
    };
    not_found(store.load_run(42).map(|_| ()));
    not_found(store.finish_run(&result_for(42, &new)));
    not_found(store.fail_run(42, &fsynclab_core::metrics::Recorded::Text("boom".into())));
    not_found(store.set_label(42, Some("x")));
    not_found(store.add_tag(42, "x"));
    not_found(store.remove_tag(42, "x"));
    not_found(store.delete_run(42));
    let mut with_experiment = new;
    with_experiment.experiment_id = Some(7);
    assert!(matches!(
        store.begin_run(&with_experiment),
        Err(StoreError::ExperimentNotFound { id: 7 })
    ));
    assert_eq!(count(&store, "SELECT count(*) FROM runs"), 0);
}

#[test]
fn fail_run_records_the_error_without_a_result() {
    let store = Store::open_in_memory().unwrap();
    let id = store.begin_run(&new_run(None, "ext4", "6.8")).unwrap();
    let e = std::io::Error::from_raw_os_error(28);
    let failure: crate::metrics::Failure =
        crate::metrics::RunFailure::Prepare(crate::metrics::IoFailure::new(
            crate::spec::WorkloadKind::Fileio,
            "fallocate",
            "/mnt/x/fsynclab-1/thread-0.dat".into(),
            None,
            &e,
            false,
        ))
        .into();
    store.fail_run(id, &failure).unwrap();
    let run = store.load_run(id).unwrap();
    assert_eq!(run.row.status, RunStatus::Failed);
    assert_eq!(run.row.error.as_ref(), Some(&failure));
    // Stored as code and parameters, the code again for SQL.
    let (error, code): (String, String) = store
        .conn
        .query_row(
            "SELECT error, error_code FROM runs WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(error.starts_with(r#"{"code":"prepare","#), "{error}");
    assert_eq!(code, "prepare");
    assert_eq!(run.result, None);
    assert_eq!(run.row.wall_ns, None);
}

#[test]
fn advice_is_stored_listed_and_read_back() {
    let store = Store::open_in_memory().unwrap();
    let experiment = store.create_experiment("advice /mnt/x").unwrap();
    let new = crate::store::NewAdvice {
        experiment_id: Some(experiment),
        target: "/mnt/x",
        fs_type: Some("ext4"),
        inputs_json: r#"{"quick":true}"#,
        advice_json: r#"{"writers":16}"#,
    };
    let first = store.save_advice(&new).unwrap();
    let second = store
        .save_advice(&crate::store::NewAdvice {
            fs_type: None,
            ..new.clone()
        })
        .unwrap();
    let got = store.advice(first).unwrap();
    assert_eq!(
        (got.target.as_str(), got.fs_type.as_deref()),
        ("/mnt/x", Some("ext4"))
    );
    assert_eq!(got.experiment_id, Some(experiment));
    assert_eq!(got.advice_json, r#"{"writers":16}"#);
    let ids: Vec<i64> = store.list_advice().unwrap().iter().map(|a| a.id).collect();
    assert_eq!(ids, vec![second, first], "newest first");
    assert!(matches!(
        store.advice(999),
        Err(StoreError::AdviceNotFound { id: 999 })
    ));
}

#[test]
fn crash_verdicts_are_read_per_strategy_and_filesystem_type() {
    use crate::crashlog::CrashReport;
    use crate::spec::{FlatSpec, Strategy, SyncMethod, WorkloadKind};
    let store = Store::open_in_memory().unwrap();
    let grouplog = |strategy: Strategy, fs: &str| {
        let mut new = new_run(None, fs, "6.18");
        new.spec = FlatSpec {
            kind: WorkloadKind::Grouplog,
            threads: 4,
            sync: SyncMethod::Fdatasync,
            requests: Some(200),
            ..FlatSpec::default()
        }
        .typed();
        new.spec.edit(|f| f.grouplog.strategy = strategy);
        store.begin_run(&new).unwrap()
    };
    let report = |acknowledged, lost, stale| CrashReport {
        cuts: 20,
        acknowledged,
        lost,
        stale,
        ..CrashReport::default()
    };
    let leader = grouplog(Strategy::Leader, "ext4");
    store.set_crash_test(leader, &report(200, 0, 0)).unwrap();
    let early = grouplog(Strategy::EarlyAck, "ext4");
    store.set_crash_test(early, &report(200, 70, 13)).unwrap();
    let on_xfs = grouplog(Strategy::Solo, "xfs");
    store.set_crash_test(on_xfs, &report(200, 0, 0)).unwrap();
    // Not crash-tested: no verdict.
    grouplog(Strategy::Jbd, "ext4");
    let rows = store.crash_verdicts("grouplog", "ext4").unwrap();
    let seen: Vec<(&str, u64, u64)> = rows
        .iter()
        .map(|r| (r.strategy.as_str(), r.acknowledged, r.lost))
        .collect();
    assert_eq!(seen, vec![("leader", 200, 0), ("early-ack", 200, 83)]);
    assert_eq!(store.crash_verdicts("grouplog", "xfs").unwrap().len(), 1);
    assert!(
        store
            .crash_verdicts("grouplog", "btrfs")
            .unwrap()
            .is_empty()
    );
}
