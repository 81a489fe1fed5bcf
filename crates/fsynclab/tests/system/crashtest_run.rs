//! A crash test of fsynclab's own workloads, end to end (issue 33): the engine's run on the
//! recording device acknowledges each record (fileio's blocks, grouplog's requests,
//! smallfiles' files) when its sync returns; every planned power cut keeps them.
//! Acknowledged without a sync (the controls), they are lost.

use fsynclab::crashdev::DaemonProgram;
use fsynclab::crashlog::PlanOptions;
use fsynclab::engine::CancelToken;
use fsynclab::lab::crashtest::{CrashTestRequest, crash_test};
use fsynclab::scratch::FsKind;
use fsynclab::spec::{
    FileSync, FlatSpec, GrouplogSpec, IoEngine, OpenFlags, Pattern, SmallfilesSpec, Strategy,
    SyncMethod, SyncOrder, WorkloadKind,
};
use fsynclab::store::Store;

use crate::common::require_root;

/// Nothing of a crash test's device is left in the state directory (a failing crash test's
/// kept log aside).
fn device_gone(state: &std::path::Path) -> bool {
    std::fs::read_dir(state)
        .unwrap()
        .filter_map(|e| e.ok())
        .all(|e| e.file_name() == fsynclab::crashdev::KEPT_LOGS)
}

fn request(dir: &std::path::Path, sync: SyncMethod, mount_options: &str) -> CrashTestRequest {
    CrashTestRequest {
        daemon: DaemonProgram::fsynclab(env!("CARGO_BIN_EXE_fsynclab")),
        fs: FsKind::Ext4,
        size_bytes: 64 << 20,
        mkfs_options: String::new(),
        mount_options: mount_options.into(),
        label: None,
        tags: Vec::new(),
        preset: None,
        preset_scale: None,
        spec: FlatSpec {
            threads: 2,
            block_size: 4096,
            file_size: 64 * 4096,
            requests: Some(120),
            pattern: Pattern::Rand,
            sync,
            sync_every: 1,
            ..FlatSpec::default()
        }
        .typed(),
        plan: PlanOptions {
            cuts: Some(20),
            subsets: 2,
            seed: 11,
            reorder: false,
        },
        state_dir: dir.to_path_buf(),
    }
}

#[test]
fn a_fileio_fdatasync_run_loses_nothing_and_its_unsynced_control_does() {
    if !require_root(
        "a_fileio_fdatasync_run_loses_nothing_and_its_unsynced_control_does",
        "mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("lab.sqlite")).unwrap();
    let state = dir.path().join("state");
    let cancel = CancelToken::new();
    let safe = crash_test(&store, &request(&state, SyncMethod::Fdatasync, ""), &cancel).unwrap();
    eprintln!("fdatasync: {:?}", safe.report);
    assert_eq!(safe.run.writes, 120);
    assert_eq!(safe.report.cuts, 20);
    assert_eq!(safe.report.acknowledged, 120);
    let r = &safe.report;
    assert_eq!(
        (r.lost, r.torn, r.stale),
        (0, 0, 0),
        "{:?}",
        r.first_failure
    );
    assert_eq!((r.mount_failures, r.fsck_failures), (0, 0));
    // Its files went with the device: no "kept" warning.
    assert!(
        !format!("{:?}", safe.run.warnings).contains("FilesKept"),
        "{:?}",
        safe.run.warnings
    );

    let unsafe_ = crash_test(&store, &request(&state, SyncMethod::None, ""), &cancel).unwrap();
    eprintln!("no sync: {:?}", unsafe_.report);
    assert_eq!(unsafe_.report.acknowledged, 120);
    assert!(unsafe_.report.lost > 0, "{:?}", unsafe_.report);
    // Nothing of the device is left: its directory, mounts and loop devices are gone.
    assert!(device_gone(&state));
    // Both runs are stored, each with its findings.
    assert_eq!(
        store.crash_test(safe.run.id).unwrap(),
        Some(safe.report.clone())
    );
    assert_eq!(
        store.crash_test(unsafe_.run.id).unwrap(),
        Some(unsafe_.report.clone())
    );
    assert_ne!(safe.run.id, unsafe_.run.id);
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(dir.path().to_str().unwrap()), "{mounts}");
}

fn grouplog(dir: &std::path::Path, strategy: Strategy) -> CrashTestRequest {
    CrashTestRequest {
        spec: FlatSpec {
            kind: WorkloadKind::Grouplog,
            threads: 4,
            requests: Some(120),
            sync: SyncMethod::Fdatasync,
            grouplog: GrouplogSpec {
                strategy,
                record_size: 4096,
                log_size: 64 * 4096,
            },
            ..FlatSpec::default()
        }
        .typed(),
        ..request(dir, SyncMethod::Fdatasync, "")
    }
}

#[test]
fn grouplog_strategies_lose_nothing_and_the_unsafe_one_loses_requests() {
    if !require_root(
        "grouplog_strategies_lose_nothing_and_the_unsafe_one_loses_requests",
        "mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("lab.sqlite")).unwrap();
    let state = dir.path().join("state");
    let cancel = CancelToken::new();
    for strategy in [
        Strategy::Solo,
        Strategy::Leader,
        Strategy::Uring,
        Strategy::Pipelined { depth: 4 },
    ] {
        let out = crash_test(&store, &grouplog(&state, strategy), &cancel).unwrap();
        let r = &out.report;
        eprintln!("grouplog {strategy}: {r:?}");
        assert_eq!(r.acknowledged, 120, "{strategy}");
        assert_eq!((r.lost, r.torn, r.stale), (0, 0, 0), "{strategy}: {r:?}");
        assert_eq!((r.mount_failures, r.fsck_failures), (0, 0), "{strategy}");
    }
    let out = crash_test(&store, &grouplog(&state, Strategy::EarlyAck), &cancel).unwrap();
    eprintln!("grouplog early-ack: {:?}", out.report);
    assert_eq!(out.report.acknowledged, 120);
    assert!(out.report.lost > 0, "{:?}", out.report);
}

fn uring_direct(dir: &std::path::Path, order: SyncOrder, seed: u64) -> CrashTestRequest {
    let base = request(dir, SyncMethod::Fdatasync, "");
    CrashTestRequest {
        spec: FlatSpec {
            ioengine: IoEngine::IoUring,
            iodepth: 16,
            sync_order: order,
            sync_every: 4,
            file_size: 256 * 4096,
            requests: Some(800),
            open_flags: OpenFlags {
                direct: true,
                ..OpenFlags::default()
            },
            seed,
            ..base.spec.flat()
        }
        .typed(),
        plan: PlanOptions {
            cuts: Some(60),
            subsets: 2,
            seed: 11,
            reorder: false,
        },
        ..base
    }
}

#[test]
fn io_uring_ordered_syncs_lose_nothing_and_unordered_ones_lose_what_they_did_not_cover() {
    if !require_root(
        "io_uring_ordered_syncs_lose_nothing_and_unordered_ones_lose_what_they_did_not_cover",
        "mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("lab.sqlite")).unwrap();
    let state = dir.path().join("state");
    let cancel = CancelToken::new();
    let ordered = crash_test(
        &store,
        &uring_direct(&state, SyncOrder::Ordered, 1),
        &cancel,
    )
    .unwrap()
    .report;
    eprintln!("io_uring ordered: {ordered:?}");
    assert!(ordered.acknowledged >= 790, "{ordered:?}");
    assert_eq!((ordered.lost, ordered.torn, ordered.stale), (0, 0, 0));
    assert_eq!((ordered.mount_failures, ordered.fsck_failures), (0, 0));
    // Unordered (fio's io_uring fsync=N): a sync may complete before an O_DIRECT write it
    // was issued after; acknowledging on its completion loses that write at a power cut.
    // Whether one does is timing: up to three runs (82 and 213 of ~800 lost here).
    let mut tries = Vec::new();
    for seed in 1..=3 {
        let r = crash_test(
            &store,
            &uring_direct(&state, SyncOrder::Unordered, seed),
            &cancel,
        )
        .unwrap()
        .report;
        eprintln!("io_uring unordered (seed {seed}): {r:?}");
        let lost = r.lost;
        tries.push(r);
        if lost > 0 {
            break;
        }
    }
    assert!(tries.iter().any(|r| r.lost > 0), "{tries:?}");
}

fn smallfiles(dir: &std::path::Path, sync: FileSync, dir_sync: bool) -> CrashTestRequest {
    CrashTestRequest {
        spec: FlatSpec {
            kind: WorkloadKind::Smallfiles,
            threads: 2,
            smallfiles: SmallfilesSpec {
                files_per_thread: 60,
                file_size: 4096,
                sync,
                dir_sync,
                ..SmallfilesSpec::default()
            },
            ..FlatSpec::default()
        }
        .typed(),
        ..request(dir, SyncMethod::Fdatasync, "")
    }
}

#[test]
fn small_files_synced_keep_their_names_and_unsynced_ones_are_lost() {
    if !require_root(
        "small_files_synced_keep_their_names_and_unsynced_ones_are_lost",
        "mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("lab.sqlite")).unwrap();
    let state = dir.path().join("state");
    let cancel = CancelToken::new();
    let run = |sync, dir_sync| {
        let out = crash_test(&store, &smallfiles(&state, sync, dir_sync), &cancel).unwrap();
        eprintln!("smallfiles {sync:?} dir_sync={dir_sync}: {:?}", out.report);
        assert_eq!(out.run.writes, 120);
        assert_eq!(out.report.acknowledged, 120, "every file acknowledged once");
        let r = &out.report;
        assert_eq!((r.mount_failures, r.fsck_failures), (0, 0), "{r:?}");
        out.report
    };
    // A file and its directory synced, or the whole filesystem after the last file: every
    // name and its data survive every cut.
    for (sync, dir_sync) in [(FileSync::Fsync, true), (FileSync::Syncfs, false)] {
        let r = run(sync, dir_sync);
        assert_eq!((r.lost, r.torn, r.stale), (0, 0, 0), "{r:?}");
    }
    // The file's fsync alone: whether its new name survives is the filesystem's choice
    // (ext4 commits it with the file: no loss here so far, a finding, not a rule).
    let probe = run(FileSync::Fsync, false);
    assert_eq!(probe.torn, 0, "{probe:?}");
    // No sync at all: acknowledged anyway, lost at the cuts before the journal commits.
    let control = run(FileSync::None, false);
    assert!(control.lost > 0, "{control:?}");
    // Its log was kept: its first failing state builds again; a cancelled build leaves no
    // image.
    use fsynclab::lab::crash_state::{CrashStateError, StateChoice, crash_state};
    let id = store.list_runs(&Default::default()).unwrap()[0].id;
    let image = dir.path().join("state.img");
    let cancelled = CancelToken::new();
    cancelled.cancel();
    let stopped = crash_state(
        &store,
        &state,
        id,
        StateChoice::FirstFailure,
        &image,
        &cancelled,
    );
    assert!(
        matches!(stopped, Err(CrashStateError::Cancelled)),
        "{stopped:?}"
    );
    assert!(!image.exists(), "a cancelled build removes its image");
    let built = crash_state(
        &store,
        &state,
        id,
        StateChoice::FirstFailure,
        &image,
        &cancel,
    )
    .expect("the first failing state");
    assert_eq!(built.state.cut, control.first_failure.as_ref().unwrap().cut);
    assert!(image.exists());
    assert!(device_gone(&state));
}

#[test]
fn an_append_log_synced_every_four_records_loses_none_of_them() {
    if !require_root(
        "an_append_log_synced_every_four_records_loses_none_of_them",
        "mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("lab.sqlite")).unwrap();
    let state = dir.path().join("state");
    let mut flat = FlatSpec {
        kind: WorkloadKind::Append,
        threads: 2,
        requests: Some(120),
        sync: SyncMethod::Fdatasync,
        sync_every: 4,
        ..FlatSpec::default()
    };
    flat.append.record_size = 4096;
    flat.append.segment_size = 1 << 20;
    let request = CrashTestRequest {
        spec: flat.typed(),
        ..request(&state, SyncMethod::Fdatasync, "")
    };
    let out = crash_test(&store, &request, &CancelToken::new()).unwrap();
    let r = &out.report;
    eprintln!("append: {r:?}");
    assert_eq!(out.run.writes, 120);
    // Every record but each writer's last unsynced few is acknowledged.
    assert!(r.acknowledged >= 112, "{r:?}");
    assert_eq!((r.lost, r.torn, r.stale), (0, 0, 0), "{r:?}");
    assert_eq!((r.mount_failures, r.fsck_failures), (0, 0), "{r:?}");
    assert!(device_gone(&state));
}
