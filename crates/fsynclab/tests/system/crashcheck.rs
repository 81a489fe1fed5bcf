//! The crash test's checker for real (issue 33): records written and acknowledged on ext4 over
//! the recording device, every planned power cut built, mounted and checked. Synced records
//! survive every cut; records acknowledged without a sync, or synced on ext4 mounted
//! `barrier=0`, are lost; and the checker proves it
//! can fail: a byte flipped in a logged record is torn, an older version logged in place of an
//! acknowledged one is stale.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use fsynclab::crashdev::{CheckOptions, CrashDevice, CrashReport, DaemonProgram, Failure, check};
use fsynclab::crashlog::{
    Ack, AckedFiles, BEGIN_MARK, Op, PlanOptions, RecordId, fill_record, read_entries,
};
use fsynclab::scratch::FsKind;

use crate::common::require_root;

const RECORD: usize = 4096;
const RUN: u64 = 0x00c0_ffee;

/// Writes `records` records to `records.dat` on an ext4 filesystem made on the recording
/// device in `dir` (record `i` at slot `i % slots`, each rewrite a new version), syncing each
/// with fdatasync when `sync`, and acknowledges each after; returns the device's directory.
fn record_run(dir: &Path, records: u64, slots: u64, sync: bool) -> PathBuf {
    record_run_on(dir, FsKind::Ext4, records, slots, sync, "defaults")
}

/// [`record_run`] on filesystem `fs` mounted with `options`.
fn record_run_on(
    dir: &Path,
    fs_kind: FsKind,
    records: u64,
    slots: u64,
    sync: bool,
    options: &str,
) -> PathBuf {
    // XFS needs 300 MiB; the image is sparse.
    let size = if fs_kind == FsKind::Ext4 {
        64 << 20
    } else {
        320 << 20
    };
    // The device is torn down even when an assertion below fails (its Drop).
    let device = CrashDevice::start(
        &DaemonProgram::fsynclab(env!("CARGO_BIN_EXE_fsynclab")),
        &dir.join(format!("crash-{}-1", std::process::id())),
        fs_kind,
        size,
        "",
        options,
    )
    .unwrap();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(device.filesystem().join("records.dat"))
        .unwrap();
    let mut marks = device.marks().unwrap();
    marks.write_all(&BEGIN_MARK).unwrap();
    let mut buf = vec![0u8; RECORD];
    for seq in 0..records {
        let id = RecordId {
            run: RUN,
            thread: 0,
            seq,
            version: seq / slots,
        };
        assert!(fill_record(&mut buf, &id));
        let offset = (seq % slots) * RECORD as u64;
        file.write_all_at(&buf, offset).unwrap();
        if sync {
            file.sync_data().unwrap();
        }
        let ack = Ack {
            id,
            file: 0,
            offset,
            len: RECORD as u32,
        };
        marks.write_all(&ack.encode()).unwrap();
    }
    drop((file, marks));
    device.finish().unwrap()
}

fn check_it(dir: &Path, dev: &Path, cuts: usize, subsets: usize) -> CrashReport {
    check_on(FsKind::Ext4, dir, dev, cuts, subsets)
}

fn check_on(fs: FsKind, dir: &Path, dev: &Path, cuts: usize, subsets: usize) -> CrashReport {
    let options = CheckOptions {
        fs,
        dir: PathBuf::new(),
        files: AckedFiles::Listed(vec!["records.dat".to_string()]),
        run: None,
        plan: PlanOptions {
            cuts: Some(cuts),
            subsets,
            seed: 7,
            reorder: false,
        },
    };
    let started = std::time::Instant::now();
    let report = check(dev, &dir.join("work"), &options).unwrap();
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "{}: {} states in {secs:.2} s ({:.0} per minute)",
        fs.as_str(),
        report.states,
        report.states as f64 * 60.0 / secs
    );
    report
}

#[test]
fn synced_records_survive_every_cut_and_unsynced_ones_are_lost() {
    if !require_root(
        "synced_records_survive_every_cut_and_unsynced_ones_are_lost",
        "mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dev = record_run(&dir.path().join("synced"), 120, 1000, true);
    let report = check_it(dir.path(), &dev, 20, 2);
    eprintln!("synced: {report:?}");
    assert_eq!(report.cuts, 20);
    // At most 20 cuts × (1 + 2 subsets): a cut with one volatile write has two states.
    assert!((40..=60).contains(&report.states), "{report:?}");
    assert_eq!(report.acknowledged, 120);
    assert_eq!(
        (report.lost, report.torn, report.stale),
        (0, 0, 0),
        "{:?}",
        report.first_failure
    );
    assert_eq!((report.mount_failures, report.fsck_failures), (0, 0));

    let dev = record_run(&dir.path().join("unsynced"), 60, 1000, false);
    let report = check_it(dir.path(), &dev, 10, 0);
    eprintln!("unsynced: {report:?}");
    assert!(report.lost > 0, "acknowledged without a sync: {report:?}");
    assert!(matches!(
        report.first_failure.map(|f| f.failure),
        Some(Failure::Lost(_))
    ));

    // ext4 without barriers sends no cache flush: fdatasync returns, the records stay in
    // the volatile cache.
    let dev = record_run_on(
        &dir.path().join("nobarrier"),
        FsKind::Ext4,
        60,
        1000,
        true,
        "barrier=0",
    );
    let report = check_it(dir.path(), &dev, 10, 1);
    eprintln!("barrier=0: {report:?}");
    assert!(report.lost > 0, "fsync under barrier=0: {report:?}");
}

#[test]
fn synced_records_survive_every_cut_on_xfs_and_btrfs() {
    if !require_root(
        "synced_records_survive_every_cut_on_xfs_and_btrfs",
        "mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    for fs in [FsKind::Xfs, FsKind::Btrfs] {
        let dir = tempfile::tempdir().unwrap();
        let dev = record_run_on(dir.path(), fs, 100, 1000, true, "defaults");
        let report = check_on(fs, dir.path(), &dev, 20, 1);
        eprintln!("{}: {report:?}", fs.as_str());
        assert_eq!(report.cuts, 20, "{}", fs.as_str());
        assert_eq!(report.acknowledged, 100);
        assert_eq!(
            (report.lost, report.torn, report.stale),
            (0, 0, 0),
            "{}: {:?}",
            fs.as_str(),
            report.first_failure
        );
        assert_eq!(
            (report.mount_failures, report.fsck_failures),
            (0, 0),
            "{report:?}"
        );
    }
}

/// Rewrites the data file's bytes of the log's writes that hold `record` (by its header).
fn tamper(dev: &Path, mut edit: impl FnMut(u64, &mut [u8]) -> bool) -> usize {
    let log = read_entries(&std::fs::read(dev.join("log")).unwrap()).unwrap();
    let data = File::options()
        .read(true)
        .write(true)
        .open(dev.join("data"))
        .unwrap();
    let mut changed = 0;
    for e in log {
        if let Op::Write { len, data_at, .. } = e.op {
            let mut bytes = vec![0u8; len as usize];
            data.read_exact_at(&mut bytes, data_at).unwrap();
            for (k, chunk) in bytes.chunks_mut(RECORD).enumerate() {
                if chunk.len() == RECORD && edit(data_at + (k * RECORD) as u64, chunk) {
                    changed += 1;
                }
            }
            data.write_all_at(&bytes, data_at).unwrap();
        }
    }
    changed
}

#[test]
fn the_checker_finds_a_torn_and_a_stale_record_it_is_shown() {
    if !require_root(
        "the_checker_finds_a_torn_and_a_stale_record_it_is_shown",
        "mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Record 5 flipped wherever the log wrote it: torn in every state after its write.
    let dev = record_run(&dir.path().join("torn"), 16, 1000, true);
    let flipped = tamper(&dev, |_, chunk| {
        let is_five = chunk[0..8] == *b"FSLREC01" && chunk[24..32] == 5u64.to_le_bytes();
        if is_five {
            chunk[2000] ^= 0x40;
        }
        is_five
    });
    assert!(flipped >= 1);
    let report = check_it(dir.path(), &dev, 6, 0);
    eprintln!("torn: {report:?}");
    assert!(report.torn >= 1, "{report:?}");
    // Four slots rewritten: every write of version 1 logged with version 0's bytes.
    let dev = record_run(&dir.path().join("stale"), 8, 4, true);
    let mut older: std::collections::HashMap<u64, Vec<u8>> = Default::default();
    tamper(&dev, |_, chunk| {
        if chunk[0..8] != *b"FSLREC01" {
            return false;
        }
        let seq = u64::from_le_bytes(chunk[24..32].try_into().unwrap());
        if seq < 4 {
            older.insert(seq, chunk.to_vec());
            false
        } else {
            chunk.copy_from_slice(&older[&(seq - 4)]);
            true
        }
    });
    let report = check_it(dir.path(), &dev, 6, 0);
    eprintln!("stale: {report:?}");
    assert!(report.stale >= 1, "{report:?}");
}
