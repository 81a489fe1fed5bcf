//! Opening, schema versions, round trips, interrupted runs, damaged data.

use std::path::{Path, PathBuf};

use super::super::*;
use super::{count, new_run, result_for, temp_db};
use crate::metrics::{DeviceAccounting, LatencyHistogram, RunStatus};

#[test]
fn full_round_trip_keeps_every_figure() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.path(), Some(path.as_path()));
    let new = new_run(Some("ext4-base"), "ext4", "6.8.0-45-generic");
    let id = store.begin_run(&new).unwrap();
    let running = store.load_run(id).unwrap();
    assert_eq!(running.row.status, RunStatus::Running);
    assert_eq!(running.result, None);
    assert_eq!(running.spec, new.spec);

    let original = result_for(id, &new);
    store.finish_run(&original).unwrap();
    drop(store);

    let store = Store::open(&path).unwrap();
    let loaded = store.load_run(id).unwrap();
    let summary = original.summary();
    let row = &loaded.row;
    assert_eq!(row.status, RunStatus::Finished);
    assert_eq!(row.label.as_deref(), Some("ext4-base"));
    assert_eq!(row.tags, vec!["nvme".to_string()]);
    assert_eq!(row.kind, "fileio");
    assert_eq!(row.preset.as_deref(), Some("btrfs-log-commit"));
    assert_eq!(row.preset_scale, Some(0.5));
    assert_eq!(row.target, "/mnt/test");
    assert_eq!(row.fs_type.as_deref(), Some("ext4"));
    assert_eq!(row.mount_options.as_deref(), Some("rw,noatime"));
    assert_eq!(row.device.as_deref(), Some("nvme0n1"));
    assert_eq!(row.kernel_release.as_deref(), Some("6.8.0-45-generic"));
    assert_eq!(row.wall_ns, Some(original.wall_ns));
    assert_eq!(row.writes, Some(original.writes));
    assert_eq!(row.syncs, Some(original.syncs));
    assert_eq!(row.iops, Some(summary.iops));
    assert_eq!(row.mib_per_sec, Some(summary.mib_per_sec));
    assert_eq!(row.write_p99_ns, Some(summary.write_lat.p99_ns));
    assert_eq!(row.sync_p50_ns, Some(summary.sync_lat.p50_ns));
    assert_eq!(row.sync_p99_ns, Some(summary.sync_lat.p99_ns));
    assert_eq!(row.flushes_per_sync, summary.flushes_per_sync);
    assert_eq!(summary.flushes_per_sync, Some(1.02));
    let durable = summary.durable_lat.as_ref().unwrap();
    assert_eq!(row.durable_p99_ns, Some(durable.p99_ns));
    assert_eq!(row.durable_ops_per_sec, summary.durable_ops_per_sec);
    assert!(row.durable_ops_per_sec.is_some());
    assert_eq!(loaded.result.unwrap(), original);

    // Finishing again replaces the child rows instead of duplicating them.
    store.finish_run(&original).unwrap();
    assert_eq!(count(&store, "SELECT count(*) FROM intervals"), 3);
    assert_eq!(count(&store, "SELECT count(*) FROM thread_stats"), 2);
    assert_eq!(count(&store, "SELECT count(*) FROM histograms"), 3);
}

#[test]
fn a_run_origin_round_trips_and_plain_runs_have_none() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    let plain = store.begin_run(&new_run(None, "ext4", "6.18")).unwrap();
    let origin = RunOrigin {
        kind: OriginKind::FioImport,
        file: Some("results/A-ext4.json".into()),
        job: Some("writers".into()),
        job_text: Some("[writers]\nrw=randwrite\n".into()),
        job_options: [("bs".to_string(), "4k".to_string())].into(),
        tool_version: Some("fio-3.33".into()),
        hostname: Some("testbox".into()),
    };
    let from_fio = store
        .begin_run(&NewRun {
            origin: Some(origin.clone()),
            ..new_run(None, "ext4", "6.18")
        })
        .unwrap();
    drop(store);
    let store = Store::open_read_only(&path).unwrap();
    assert_eq!(store.load_run(plain).unwrap().origin, None);
    assert_eq!(store.load_run(from_fio).unwrap().origin, Some(origin));
}

#[test]
fn cancelled_run_without_device_round_trips_in_memory() {
    let store = Store::open_in_memory().unwrap();
    assert_eq!(store.path(), None);
    let new = new_run(None, "tmpfs", "6.8.0");
    let id = store.begin_run(&new).unwrap();
    let mut original = result_for(id, &new);
    original.status = RunStatus::Cancelled;
    original.device = DeviceAccounting::Unavailable {
        reason: crate::metrics::Recorded::Text("tmpfs has no block device".into()),
    };
    original.intervals.clear();
    original.sync_lat = LatencyHistogram::new();
    // A workload without a durable operation stores none, and loads as none.
    original.durable_lat = None;
    store.finish_run(&original).unwrap();
    let loaded = store.load_run(id).unwrap();
    assert_eq!(loaded.row.flushes_per_sync, None);
    assert_eq!(loaded.row.durable_p99_ns, None);
    assert_eq!(loaded.row.status, RunStatus::Cancelled);
    assert_eq!(loaded.result.unwrap(), original);
}

#[test]
fn running_run_of_a_dead_process_becomes_interrupted_on_reopen() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    assert!(store.interrupted_on_open().is_empty());
    let dead = store.begin_run(&new_run(None, "ext4", "6.8")).unwrap();
    let alive = store.begin_run(&new_run(None, "ext4", "6.8")).unwrap();
    let lock_file = |id: i64| {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".locks/run-{id}.lock"));
        PathBuf::from(name)
    };
    assert!(lock_file(dead).exists() && lock_file(alive).exists());
    // `dead` loses its lock as if its process had been killed (the kernel drops a flock
    // with the process); the file stays behind, as after a kill.
    drop(store.run_locks.borrow_mut().remove(&dead));
    let reopened = Store::open(&path).unwrap();
    assert_eq!(reopened.interrupted_on_open(), &[dead]);
    let row = reopened.load_run(dead).unwrap().row;
    assert_eq!(row.status, RunStatus::Interrupted);
    assert_eq!(
        row.error,
        Some(crate::metrics::RunFailure::Interrupted.into())
    );
    assert!(!lock_file(dead).exists(), "the sweep removes the lock file");
    // `alive` holds its lock: another Store opening the file must not touch it, even with
    // a pid that says otherwise (another PID namespace records a pid we cannot see).
    store
        .conn
        .execute("UPDATE runs SET owner_pid = NULL WHERE id = ?1", [alive])
        .unwrap();
    let again = Store::open_read_only(&path).unwrap();
    assert!(again.interrupted_on_open().is_empty());
    assert_eq!(
        again.load_run(alive).unwrap().row.status,
        RunStatus::Running
    );
    // Finishing releases and removes the lock file.
    store
        .fail_run(
            alive,
            &fsynclab_core::metrics::Recorded::Text("stopped".into()),
        )
        .unwrap();
    assert!(!lock_file(alive).exists());
}

#[test]
fn a_lock_file_planted_by_another_user_does_not_make_a_live_run_dead() {
    if !crate::test_support::root_or_skip("a_lock_file_planted_by_another_user...", "chown") {
        return;
    }
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    let alive = store.begin_run(&new_run(None, "ext4", "6.8")).unwrap();
    let locks = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".locks{suffix}"));
        PathBuf::from(name)
    };
    // Whoever can rename entries beside the database swaps the lock directory for their
    // own, holding an unlocked file by the live run's name.
    std::fs::rename(locks(""), locks("-away")).unwrap();
    std::fs::create_dir(locks("")).unwrap();
    let planted = locks("").join(format!("run-{alive}.lock"));
    std::fs::write(&planted, b"").unwrap();
    for p in [locks(""), planted] {
        std::os::unix::fs::chown(&p, Some(65534), Some(65534)).unwrap();
    }
    let other = Store::open(&path).unwrap();
    assert!(other.interrupted_on_open().is_empty());
    assert_eq!(
        other.load_run(alive).unwrap().row.status,
        RunStatus::Running
    );
}

#[test]
fn a_path_that_is_not_a_regular_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.sqlite");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    for (path, kind) in [
        (Path::new("/dev/null"), "a character device"),
        (dir.path(), "a directory"),
        (fifo.as_path(), "a FIFO"),
    ] {
        for mode in [OpenMode::ReadWrite, OpenMode::ReadOnly] {
            match Store::open_with(path, mode) {
                Err(StoreError::NotAFile { kind: found, .. }) => assert_eq!(found, kind),
                other => panic!("{}: {:?}", path.display(), other.map(|_| ())),
            }
        }
    }
}

#[test]
fn a_database_link_made_by_another_user_is_refused() {
    if !crate::test_support::root_or_skip("a_database_link_made_by_another_user...", "lchown") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("root-only").join("created.db");
    std::fs::create_dir(target.parent().unwrap()).unwrap();
    let link = dir.path().join("fsynclab.sqlite");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
    for mode in [OpenMode::ReadWrite, OpenMode::ReadOnly] {
        match Store::open_with(&link, mode) {
            Err(StoreError::NotAFile { kind, .. }) => assert!(kind.contains("another user")),
            other => panic!("{:?}", other.map(|_| ())),
        }
    }
    assert!(!target.exists(), "nothing created where the link points");
    // The same link made by this user is followed as before.
    std::os::unix::fs::lchown(&link, Some(0), Some(0)).unwrap();
    Store::open(&link).unwrap();
    assert!(target.exists());
}

#[test]
fn a_run_without_a_lock_file_falls_back_to_its_pid() {
    // Rows from before lock files: pid and start time decide.
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    let old = store.begin_run(&new_run(None, "ext4", "6.8")).unwrap();
    let alive = store.begin_run(&new_run(None, "ext4", "6.8")).unwrap();
    for id in [old, alive] {
        store.run_locks.borrow_mut().remove(&id);
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".locks/run-{id}.lock"));
        std::fs::remove_file(PathBuf::from(name)).unwrap();
    }
    store
        .conn
        .execute(
            "UPDATE runs SET owner_start_ticks = -1 WHERE id = ?1",
            [old],
        )
        .unwrap();
    assert_eq!(Store::open(&path).unwrap().interrupted_on_open(), &[old]);
}

#[test]
fn newer_schema_is_refused_and_file_left_unchanged() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE future (x); PRAGMA user_version = 99;")
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path).unwrap_err();
    match &err {
        StoreError::Newer {
            path: p,
            found,
            supported,
        } => {
            assert_eq!(p, &path);
            assert_eq!(*found, 99);
            assert_eq!(*supported, schema::supported_version());
        }
        other => panic!("expected Newer, got {other:?}"),
    }
    assert!(err.to_string().contains("upgrade fsynclab"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert!(!wal_file(&path).exists());
}

fn wal_file(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

#[test]
fn migrations_apply_once_and_wal_is_on() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    let version = |s: &Store| schema::user_version(&s.conn).unwrap();
    assert_eq!(
        version(&store),
        i64::try_from(schema::MIGRATIONS.len()).unwrap()
    );
    let mode: String = store
        .conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let fk: bool = store
        .conn
        .pragma_query_value(None, "foreign_keys", |r| r.get(0))
        .unwrap();
    assert!(fk);
    let id = store.begin_run(&new_run(None, "ext4", "6.8")).unwrap();
    drop(store);
    let store = Store::open(&path).unwrap();
    assert_eq!(
        version(&store),
        i64::try_from(schema::MIGRATIONS.len()).unwrap()
    );
    assert!(store.load_run(id).is_ok());
}

#[test]
fn a_file_that_is_not_a_database_is_refused_untouched() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let bytes: Vec<u8> = (0..8192u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&path, &bytes).unwrap();
    for mode in [OpenMode::ReadWrite, OpenMode::ReadOnly] {
        let err = Store::open_with(&path, mode).unwrap_err();
        assert!(matches!(err, StoreError::Damaged { .. }), "{err:?}");
        let text = err.to_string();
        assert!(
            text.contains("damaged") && text.contains("another file with database"),
            "{text}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        assert!(!wal_file(&path).exists());
    }
}

#[test]
fn a_database_with_overwritten_pages_is_refused_untouched() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    let new = new_run(Some("x"), "ext4", "6.8");
    for _ in 0..40 {
        let id = store.begin_run(&new).unwrap();
        store.finish_run(&result_for(id, &new)).unwrap();
    }
    drop(store);
    let mut bytes = std::fs::read(&path).unwrap();
    let pages = bytes.len() / 4096;
    assert!(pages >= 8, "{pages} pages");
    // Garbage over two pages in the middle (neither the header nor the schema page).
    let middle = pages / 2 * 4096;
    for (i, b) in bytes[middle..middle + 8192].iter_mut().enumerate() {
        *b = (i * 13 % 256) as u8;
    }
    std::fs::write(&path, &bytes).unwrap();
    for mode in [OpenMode::ReadWrite, OpenMode::ReadOnly] {
        let err = Store::open_with(&path, mode).unwrap_err();
        assert!(matches!(err, StoreError::Damaged { .. }), "{err:?}");
        assert!(err.to_string().contains("is damaged"), "{err}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            bytes,
            "the file was written to"
        );
    }
}

#[test]
fn readers_open_behind_a_writer_and_writers_wait_for_it() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let new = new_run(None, "ext4", "6.8");
    let id = store.begin_run(&new).unwrap();
    let holder = rusqlite::Connection::open(&path).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    // A reader opens at once (no write lock is needed for an up-to-date file).
    let started = std::time::Instant::now();
    let reader = Store::open_read_only(&path).unwrap();
    assert_eq!(reader.list_runs(&RunFilter::default()).unwrap().len(), 1);
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    // A writer waits past the 5 s busy timeout, says so once, and gets through.
    let told = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = told.clone();
    store.set_lock_wait_notice(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    });
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(7));
        holder.execute_batch("COMMIT").unwrap();
    });
    store.finish_run(&result_for(id, &new)).unwrap();
    release.join().unwrap();
    assert!(started.elapsed() >= std::time::Duration::from_secs(6));
    assert_eq!(told.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(reader.load_run(id).unwrap().row.status, RunStatus::Finished);
}

#[test]
fn streamed_intervals_survive_and_finish_replaces_them() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    let new = new_run(None, "ext4", "6.8");
    let id = store.begin_run(&new).unwrap();
    let result = result_for(id, &new);
    let mut progress = RunProgress::default();
    for s in &result.intervals[..2] {
        progress.add(s);
    }
    progress.at_ms = 1;
    store
        .append_intervals(id, 0, &result.intervals[..2], &progress)
        .unwrap();
    // Appending the same batch again (a retry) does not duplicate.
    store
        .append_intervals(id, 0, &result.intervals[..2], &progress)
        .unwrap();
    let other = Store::open_read_only(&path).unwrap();
    assert_eq!(count(&other, "SELECT count(*) FROM intervals"), 2);
    let got = other.run_progress(id).unwrap().unwrap();
    assert_eq!(
        got.writes,
        result.intervals[0].writes + result.intervals[1].writes
    );
    assert_eq!(got.t_ms, result.intervals[1].t_ms);
    store.finish_run(&result).unwrap();
    assert_eq!(count(&other, "SELECT count(*) FROM intervals"), 3);
}

#[test]
fn default_path_is_in_the_data_directory() {
    let path = Store::default_path().unwrap();
    assert!(path.ends_with("fsynclab/fsynclab.sqlite"), "{path:?}");
}

#[test]
fn counts_above_i64_max_are_refused() {
    let store = Store::open_in_memory().unwrap();
    let new = new_run(None, "ext4", "6.8");
    let id = store.begin_run(&new).unwrap();
    let mut result = result_for(id, &new);
    result.bytes = u64::MAX;
    let err = store.finish_run(&result).unwrap_err();
    assert!(
        matches!(err, StoreError::TooLarge { what: "bytes", .. }),
        "{err:?}"
    );
    // Nothing of the failed finish was stored.
    assert_eq!(store.load_run(id).unwrap().row.status, RunStatus::Running);
    assert_eq!(count(&store, "SELECT count(*) FROM intervals"), 0);
}

#[test]
fn a_tampered_histogram_is_reported_as_corrupt() {
    let store = Store::open_in_memory().unwrap();
    let new = new_run(None, "ext4", "6.8");
    let id = store.begin_run(&new).unwrap();
    store.finish_run(&result_for(id, &new)).unwrap();
    store
        .conn
        .execute(
            "UPDATE histograms SET encoding = 'hdr-v3' WHERE name = 'sync'",
            [],
        )
        .unwrap();
    let err = store.load_run(id).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    store
        .conn
        .execute(
            "UPDATE histograms SET encoding = 'hdr-v2-deflate', data = x'00' WHERE name = 'sync'",
            [],
        )
        .unwrap();
    let err = store.load_run(id).unwrap_err();
    assert!(matches!(err, StoreError::Histogram(_)), "{err:?}");
}

#[test]
fn a_killed_but_unreaped_process_counts_as_gone() {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    let state = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim().to_string()))
            .and_then(|rest| rest.split_whitespace().next().map(str::to_string))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while state().as_deref() != Some("Z") {
        assert!(
            std::time::Instant::now() < deadline,
            "child never became a zombie"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(!owner_alive(Some(i64::from(pid)), None));
    child.wait().unwrap();
    let (me, my_ticks) = current_owner();
    assert!(owner_alive(Some(me), my_ticks));
}

#[test]
fn a_crash_tests_findings_round_trip_and_damage_is_refused() {
    use crate::crashlog::{Ack, CrashReport, Failure, FirstFailure, RecordId};
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    let plain = store.begin_run(&new_run(None, "ext4", "6.18")).unwrap();
    let tested = store.begin_run(&new_run(None, "ext4", "6.18")).unwrap();
    assert_eq!(store.crash_test(plain).unwrap(), None);
    let report = CrashReport {
        cuts: 20,
        states: 47,
        acknowledged: 120,
        lost: 3,
        seed: 11,
        first_failure: Some(FirstFailure {
            reordered: false,
            file: None,
            cut: 88,
            subset: 0,
            dropped: vec![87],
            failure: Failure::Lost(Ack {
                id: RecordId {
                    run: u64::MAX,
                    thread: 1,
                    seq: 9,
                    version: 0,
                },
                file: 0,
                offset: 8192,
                len: 4096,
            }),
        }),
        ..CrashReport::default()
    };
    store.set_crash_test(tested, &report).unwrap();
    assert_eq!(store.crash_test(tested).unwrap(), Some(report.clone()));
    assert_eq!(store.crash_test(plain).unwrap(), None);
    assert!(matches!(
        store.set_crash_test(9999, &report),
        Err(StoreError::NotFound { id: 9999 })
    ));
    assert!(matches!(
        store.crash_test(9999),
        Err(StoreError::NotFound { id: 9999 })
    ));
    // A damaged value (a hostile bundle's) is an error naming the run, never a panic.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "UPDATE runs SET crash_test_json = '{\"cuts\": -1}' WHERE id = ?1",
        [tested],
    )
    .unwrap();
    let said = store.crash_test(tested).unwrap_err().to_string();
    assert!(said.contains("crash test"), "{said}");
}
