//! Tests of [`super::launch`]: what a launch validates, how often each check runs on the
//! way to the engine, and that `lab` alone sends `Finished`, once per stored run, on every
//! way a run ends.

use std::path::Path;
use std::sync::mpsc;

use super::*;
use crate::metrics::RunStatus;
use crate::spec::FlatSpec;
use crate::spec::SeriesPlan;
use crate::test_hooks::{TARGET_CHECKS, VALIDATIONS, take};

/// A run of a few milliseconds: 16 writes of 4 KiB, each synced.
fn tiny() -> WorkloadSpec {
    FlatSpec {
        file_size: 64 << 10,
        ..FlatSpec::default()
    }
    .typed()
}

fn request(target: &Path) -> RunRequest {
    RunRequest {
        spec: tiny(),
        target: target.to_path_buf(),
        label: Some("t".into()),
        tags: vec![],
        preset: None,
        preset_scale: None,
        experiment_id: None,
        keep_files: false,
        allow_shared_target: false,
        background_window: None,
        quiet: None,
        origin: None,
        warnings: Vec::new(),
        kernel_trace: crate::ktrace::KernelTraceMode::Off,
        device: None,
    }
}

/// A temporary directory holding a fresh store.
fn store_in_tempdir() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("runs.sqlite")).unwrap();
    (dir, store)
}

/// The run ended with one `Finished` of `status`, and the store says `status` too.
fn assert_ended_as(
    store: &Store,
    rx: &mpsc::Receiver<EngineEvent>,
    run_id: i64,
    status: RunStatus,
) {
    let events: Vec<EngineEvent> = rx.try_iter().collect();
    assert_eq!(finished(&events), vec![(run_id, status)]);
    assert_eq!(store.load_run(run_id).unwrap().row.status, status);
}

/// The `Finished` events among `events`, as (run id, status).
fn finished(events: &[EngineEvent]) -> Vec<(i64, RunStatus)> {
    events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::Finished { run_id, status } => Some((*run_id, *status)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_run_validates_once_checks_the_target_once_and_ends_with_one_finished() {
    let (dir, store) = store_in_tempdir();
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let (tx, rx) = mpsc::channel();
    take(&VALIDATIONS);
    take(&TARGET_CHECKS);
    let valid = Launch::Single(request(&target)).validate().unwrap();
    let outcome = launch(&store, &valid, &tx, &CancelToken::new(), |_, _| {}).unwrap();
    // Before this API: the CLI, lab::execute and the engine each validated (3), and lab
    // and the engine each canonicalised the target (2).
    assert_eq!(
        take(&VALIDATIONS),
        1,
        "spec validations on the way to the engine"
    );
    assert_eq!(
        take(&TARGET_CHECKS),
        1,
        "target checks on the way to the engine"
    );
    let LaunchOutcome::Single(result) = outcome else {
        panic!("a single run's outcome is Single");
    };
    assert_eq!(result.status, RunStatus::Finished, "{:?}", result.error);
    let events: Vec<EngineEvent> = rx.try_iter().collect();
    assert_eq!(finished(&events), vec![(result.id, RunStatus::Finished)]);
    // And it is the last event: the front end may stop listening there.
    assert!(matches!(events.last(), Some(EngineEvent::Finished { .. })));
}

#[test]
fn a_repeat_validates_and_checks_once_per_launch_and_finishes_every_run() {
    let (dir, store) = store_in_tempdir();
    let (tx, rx) = mpsc::channel();
    take(&VALIDATIONS);
    take(&TARGET_CHECKS);
    let valid = Launch::Repeat {
        request: request(dir.path()),
        repeat: 2,
        sweep: None,
    }
    .validate()
    .unwrap();
    assert_eq!(valid.planned_runs(), 2);
    let mut seen = Vec::new();
    let outcome = launch(&store, &valid, &tx, &CancelToken::new(), |_, r| {
        seen.push(r.id)
    });
    let Ok(LaunchOutcome::Repeat(series)) = outcome else {
        panic!("a repeat's outcome is Repeat: {outcome:?}");
    };
    assert_eq!((take(&VALIDATIONS), take(&TARGET_CHECKS)), (1, 1));
    let ids: Vec<i64> = series.results.iter().map(|r| r.id).collect();
    assert_eq!(seen, ids, "on_result sees each run as it is stored");
    let events: Vec<EngineEvent> = rx.try_iter().collect();
    let statuses: Vec<(i64, RunStatus)> = ids.iter().map(|id| (*id, RunStatus::Finished)).collect();
    assert_eq!(finished(&events), statuses);
}

#[test]
fn a_cancelled_run_is_stored_and_finishes_as_cancelled() {
    let (dir, store) = store_in_tempdir();
    let (tx, rx) = mpsc::channel();
    let cancel = CancelToken::new();
    cancel.cancel();
    let result = execute(&store, &request(dir.path()), &tx, &cancel).unwrap();
    assert_eq!(result.status, RunStatus::Cancelled);
    assert_ended_as(&store, &rx, result.id, RunStatus::Cancelled);
}

#[test]
fn an_engine_error_is_stored_as_failed_and_finishes_as_failed() {
    let (dir, store) = store_in_tempdir();
    let (tx, rx) = mpsc::channel();
    let e = run_one_with(
        &store,
        &request(dir.path()),
        &Place::Dir(crate::engine::check_target(dir.path(), false).unwrap()),
        &tx,
        &CancelToken::new(),
        |_, _, _, _| {
            Err(EngineError::Prepare(crate::engine::IoFailure::new(
                crate::spec::WorkloadKind::Fileio,
                "write",
                "/mnt/x/f".into(),
                None,
                &std::io::Error::from_raw_os_error(libc::EIO),
                false,
            )))
        },
    )
    .unwrap_err();
    let LabError::RunFailed { run_id, .. } = e else {
        panic!("an engine error after the run is stored is RunFailed: {e}");
    };
    assert_ended_as(&store, &rx, run_id, RunStatus::Failed);
}

#[test]
fn a_result_the_store_refuses_is_handed_back_and_finishes_as_failed() {
    let (dir, store) = store_in_tempdir();
    let (tx, rx) = mpsc::channel();
    let e = run_one_with(
        &store,
        &request(dir.path()),
        &Place::Dir(crate::engine::check_target(dir.path(), false).unwrap()),
        &tx,
        &CancelToken::new(),
        |spec, ctx, _, _| {
            let mut r = crate::engine::fake_run(
                ctx.run_id,
                vec![1_000],
                vec![1_000],
                spec,
                ctx.system.clone(),
            )?;
            // No SQLite integer holds it: storing the result fails.
            r.wall_ns = u64::MAX;
            Ok(r)
        },
    )
    .unwrap_err();
    let LabError::NotStored { result, .. } = e else {
        panic!("a result the store refuses is NotStored: {e}");
    };
    assert_ended_as(&store, &rx, result.id, RunStatus::Failed);
}

#[test]
fn input_refused_before_anything_is_stored_sends_no_finished() {
    let (dir, store) = store_in_tempdir();
    let (tx, rx) = mpsc::channel();
    let missing = dir.path().join("missing");
    let e = execute(&store, &request(&missing), &tx, &CancelToken::new()).unwrap_err();
    assert!(e.is_usage(), "{e}");
    // No run was recorded, so there is nothing to finish.
    assert!(rx.try_iter().next().is_none());
    assert!(store.list_runs(&Default::default()).unwrap().is_empty());
}

#[test]
fn validation_refuses_each_shape_s_bad_input_with_its_field() {
    let dir = tempfile::tempdir().unwrap();
    let field = |launch: Launch| match launch.validate() {
        Err(LabError::Engine(EngineError::Spec(e))) => e.field.key(),
        other => panic!("expected a spec error, got {other:?}"),
    };
    let mut bad = request(dir.path());
    bad.spec.common.threads = 0;
    assert_eq!(field(Launch::Single(bad.clone())), "threads");
    let repeat = |repeat, sweep: Option<&str>| Launch::Repeat {
        request: request(dir.path()),
        repeat,
        sweep: sweep.map(|s| SweepSpec::parse(s).unwrap()),
    };
    assert_eq!(field(repeat(0, None)), "repeat");
    assert_eq!(field(repeat(MAX_REPEAT + 1, None)), "repeat");
    assert_eq!(field(repeat(1, Some("threads=1,0"))), "threads");
    assert_eq!(field(repeat(1, Some("pattern=seq"))), "sweep");
    let sweep = repeat(3, Some("threads=1,2")).validate().unwrap();
    assert_eq!(sweep.planned_runs(), 6);
    let mut text = request(dir.path());
    text.label = Some("a\u{202e}b".into());
    assert!(matches!(
        Launch::Single(text).validate(),
        Err(LabError::Text(_))
    ));
}

#[test]
fn a_series_runs_every_variant_over_its_sweep() {
    let plan: SeriesPlan = toml::from_str(
        r#"
        sweep = "threads=1,2"
        [[variants]]
        label = "every"
        set = ["sync_every=1"]
        [[variants]]
        label = "tenth"
        set = ["sync_every=10"]
        "#,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let valid = Launch::Series {
        request: request(dir.path()),
        plan: plan.clone(),
        repeat: 2,
    }
    .validate()
    .unwrap();
    assert_eq!(valid.planned_runs(), 2 * 2 * 2);
    let labels: Vec<_> = valid.groups.iter().map(|(l, _)| l.clone()).collect();
    assert_eq!(labels, [Some("every".into()), Some("tenth".into())]);
    let threads: Vec<u32> = valid.groups[1].1.iter().map(|s| s.flat().threads).collect();
    assert_eq!(threads, [1, 2]);
    assert_eq!(valid.groups[1].1[0].flat().sync_every, 10);
    let mut bad = plan;
    bad.variants[1].set = vec!["sync_every=0".into()];
    let e = Launch::Series {
        request: request(dir.path()),
        plan: bad,
        repeat: 1,
    }
    .validate()
    .unwrap_err();
    assert!(e.is_usage() && e.to_string().contains("sync_every"), "{e}");
}

/// A device run is refused before anything is stored when the spec cannot run on a device,
/// `--keep` asks for files, or the path is no block device (every one a usage error).
#[test]
fn device_requests_are_refused_before_anything_is_stored() {
    let (dir, store) = store_in_tempdir();
    let image = dir.path().join("image");
    std::fs::write(&image, vec![0u8; 1 << 20]).unwrap();
    let device = |path: &Path| super::DeviceRequest {
        path: path.to_path_buf(),
        confirm: Some(path.to_path_buf()),
        overwrite_signature: false,
        offset: 0,
        range: None,
    };
    let run = |request: RunRequest| {
        let valid = Launch::Single(request).validate()?;
        let (tx, _rx) = std::sync::mpsc::channel();
        launch(&store, &valid, &tx, &CancelToken::new(), |_, _| {})
    };
    let mut plain = request(dir.path());
    plain.device = Some(device(&image));
    let e = run(plain.clone()).unwrap_err();
    assert!(
        e.is_usage() && e.to_string().contains("a regular file"),
        "{e}"
    );
    let mut grouplog = plain.clone();
    grouplog.spec = crate::spec::FlatSpec {
        kind: crate::spec::WorkloadKind::Grouplog,
        duration_s: Some(1.0),
        ..crate::spec::FlatSpec::default()
    }
    .typed();
    let e = run(grouplog).unwrap_err();
    assert!(e.is_usage(), "{e:?}");
    assert!(
        matches!(&e, LabError::Engine(EngineError::Spec(s)) if s.field == Setting::Kind),
        "{e:?}"
    );
    let mut keep = plain.clone();
    keep.keep_files = true;
    let e = run(keep).unwrap_err();
    assert!(matches!(&e, LabError::Engine(EngineError::Spec(s)) if s.field == Setting::Keep));
    assert!(store.list_runs(&Default::default()).unwrap().is_empty());
}

/// A device's range is shared out among each run's own threads: every sweep point writes
/// inside the one range confirmed; a sweep over the file size is refused with a range.
#[test]
fn every_point_of_a_sweep_splits_the_device_range_among_its_threads() {
    let mut request = request(Path::new("/nonexistent"));
    request.device = Some(super::DeviceRequest {
        path: "/dev/loop9".into(),
        confirm: Some("/dev/loop9".into()),
        overwrite_signature: false,
        offset: 1 << 20,
        range: Some(4 << 20),
    });
    let sweep = |field: &str| Launch::Repeat {
        request: request.clone(),
        repeat: 1,
        sweep: Some(SweepSpec::parse(field).unwrap()),
    };
    let valid = sweep("threads=1,2,3").validate().unwrap();
    let points = valid.planned_points();
    assert_eq!(points.len(), 3);
    for (_, spec) in points {
        let KindSpec::Fileio(f) = &spec.kind else {
            panic!("fileio")
        };
        let threads = u64::from(spec.common.threads);
        assert_eq!(f.file_size, (4 << 20) / threads / 4096 * 4096, "{threads}");
        assert!(f.file_size * threads <= 4 << 20);
    }
    let single = Launch::Single(request.clone()).validate().unwrap();
    let KindSpec::Fileio(f) = &single.launch().request().spec.kind else {
        panic!("fileio")
    };
    assert_eq!(f.file_size, 4 << 20);
    let e = sweep("file_size=1m,2m").validate().unwrap_err();
    assert!(
        matches!(&e, LabError::Engine(EngineError::Spec(s)) if s.field == Setting::DeviceSize),
        "{e:?}"
    );
}
