//! The crash test's controls (issue 33): per filesystem, crash tests whose outcome is known
//! in advance. A positive control makes its records durable the way an application should
//! (no acknowledged record may be lost); a negative control breaks the rule on purpose —
//! acknowledging without a sync, a group commit that acknowledges before its flush, ext4
//! without barriers — and must lose records. A negative control that loses nothing means the
//! crash test cannot see a loss there; a positive one that loses records means a bug (of the
//! filesystem, or of the test). `fsynclab crashtest --control NAME` runs one, `--controls`
//! all of a filesystem's, each judged against its expectation.

use crate::crashlog::CrashReport;
use crate::scratch::FsKind;
use crate::spec::{FlatSpec, SpecError, WorkloadSpec, apply_setting};

/// A crash test with a known outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrashControl {
    /// Its name (`ext4-barrier0`).
    pub name: &'static str,
    /// The filesystem made on the recording device.
    pub fs: FsKind,
    /// Mount options (allow-listed).
    pub mount_options: &'static str,
    /// Whether it must lose records (a negative control) or must not (a positive one).
    pub loses: bool,
    /// What it does, in a few words.
    pub what: &'static str,
    /// The workload, as `--set` assignments on the defaults.
    settings: &'static [&'static str],
}

/// Two writers, 4 KiB records over 256 KiB files, 200 requests, fdatasync each.
const FILEIO_FDATASYNC: &[&str] = &[
    "threads=2",
    "block_size=4k",
    "file_size=256k",
    "requests=200",
    "pattern=rand",
    "sync=fdatasync",
    "sync_every=1",
];
/// The same, acknowledged with no sync at all.
const FILEIO_NO_SYNC: &[&str] = &[
    "threads=2",
    "block_size=4k",
    "file_size=256k",
    "requests=200",
    "pattern=rand",
    "sync=none",
];
/// Four writers group-committing 200 4 KiB records (leader/follower).
const GROUPLOG_LEADER: &[&str] = &[
    "kind=grouplog",
    "threads=4",
    "requests=200",
    "sync=fdatasync",
    "grouplog.strategy=leader",
    "grouplog.record_size=4k",
    "grouplog.log_size=256k",
];
/// The same, acknowledging each record before its group's flush.
const GROUPLOG_EARLY_ACK: &[&str] = &[
    "kind=grouplog",
    "threads=4",
    "requests=200",
    "sync=fdatasync",
    "grouplog.strategy=early-ack",
    "grouplog.record_size=4k",
    "grouplog.log_size=256k",
];

/// Two writers replacing their `current` file 100 times each (write, fsync, rename over
/// it, fsync the directory: the atomic-replace idiom done right).
const SMALLFILES_RENAME_DIR_SYNC: &[&str] = &[
    "kind=smallfiles",
    "threads=2",
    "smallfiles.files_per_thread=100",
    "smallfiles.file_size=4k",
    "smallfiles.sync=fsync",
    "smallfiles.rename_over=true",
    "smallfiles.dir_sync=true",
];
/// The same without the directory's fsync: the rename is acknowledged before anything made
/// it durable.
const SMALLFILES_RENAME: &[&str] = &[
    "kind=smallfiles",
    "threads=2",
    "smallfiles.files_per_thread=100",
    "smallfiles.file_size=4k",
    "smallfiles.sync=fsync",
    "smallfiles.rename_over=true",
];

const fn control(
    name: &'static str,
    fs: FsKind,
    mount_options: &'static str,
    loses: bool,
    what: &'static str,
    settings: &'static [&'static str],
) -> CrashControl {
    CrashControl {
        name,
        fs,
        mount_options,
        loses,
        what,
        settings,
    }
}

/// Every control, by filesystem: fdatasync against no sync on each, ext4 default against
/// `barrier=0` (xfs has no `nobarrier` any more, btrfs ignores it for its own trees),
/// grouplog's leader against its unsafe early-ack strategy, and smallfiles' rename over a
/// file with and without the directory's fsync.
const CONTROLS: &[CrashControl] = &[
    control(
        "ext4-fdatasync",
        FsKind::Ext4,
        "",
        false,
        "fileio, fdatasync after each write",
        FILEIO_FDATASYNC,
    ),
    control(
        "ext4-nosync",
        FsKind::Ext4,
        "",
        true,
        "fileio, acknowledged without a sync",
        FILEIO_NO_SYNC,
    ),
    control(
        "ext4-barrier0",
        FsKind::Ext4,
        "barrier=0",
        true,
        "fileio, fdatasync, ext4 mounted barrier=0 (no cache flushes)",
        FILEIO_FDATASYNC,
    ),
    control(
        "ext4-grouplog-leader",
        FsKind::Ext4,
        "",
        false,
        "grouplog, leader/follower group commit",
        GROUPLOG_LEADER,
    ),
    control(
        "ext4-grouplog-early-ack",
        FsKind::Ext4,
        "",
        true,
        "grouplog, acknowledged before the group's flush",
        GROUPLOG_EARLY_ACK,
    ),
    control(
        "ext4-smallfiles-rename-dirsync",
        FsKind::Ext4,
        "",
        false,
        "smallfiles, fsync, rename over current, fsync the directory",
        SMALLFILES_RENAME_DIR_SYNC,
    ),
    control(
        "ext4-smallfiles-rename",
        FsKind::Ext4,
        "",
        true,
        "smallfiles, fsync, rename over current, no fsync of the directory",
        SMALLFILES_RENAME,
    ),
    control(
        "xfs-fdatasync",
        FsKind::Xfs,
        "",
        false,
        "fileio, fdatasync after each write",
        FILEIO_FDATASYNC,
    ),
    control(
        "xfs-nosync",
        FsKind::Xfs,
        "",
        true,
        "fileio, acknowledged without a sync",
        FILEIO_NO_SYNC,
    ),
    control(
        "xfs-grouplog-leader",
        FsKind::Xfs,
        "",
        false,
        "grouplog, leader/follower group commit",
        GROUPLOG_LEADER,
    ),
    control(
        "xfs-grouplog-early-ack",
        FsKind::Xfs,
        "",
        true,
        "grouplog, acknowledged before the group's flush",
        GROUPLOG_EARLY_ACK,
    ),
    control(
        "xfs-smallfiles-rename-dirsync",
        FsKind::Xfs,
        "",
        false,
        "smallfiles, fsync, rename over current, fsync the directory",
        SMALLFILES_RENAME_DIR_SYNC,
    ),
    control(
        "xfs-smallfiles-rename",
        FsKind::Xfs,
        "",
        true,
        "smallfiles, fsync, rename over current, no fsync of the directory",
        SMALLFILES_RENAME,
    ),
    control(
        "btrfs-fdatasync",
        FsKind::Btrfs,
        "",
        false,
        "fileio, fdatasync after each write",
        FILEIO_FDATASYNC,
    ),
    control(
        "btrfs-nosync",
        FsKind::Btrfs,
        "",
        true,
        "fileio, acknowledged without a sync",
        FILEIO_NO_SYNC,
    ),
    control(
        "btrfs-grouplog-leader",
        FsKind::Btrfs,
        "",
        false,
        "grouplog, leader/follower group commit",
        GROUPLOG_LEADER,
    ),
    control(
        "btrfs-grouplog-early-ack",
        FsKind::Btrfs,
        "",
        true,
        "grouplog, acknowledged before the group's flush",
        GROUPLOG_EARLY_ACK,
    ),
    control(
        "btrfs-smallfiles-rename-dirsync",
        FsKind::Btrfs,
        "",
        false,
        "smallfiles, fsync, rename over current, fsync the directory",
        SMALLFILES_RENAME_DIR_SYNC,
    ),
    control(
        "btrfs-smallfiles-rename",
        FsKind::Btrfs,
        "",
        true,
        "smallfiles, fsync, rename over current, no fsync of the directory",
        SMALLFILES_RENAME,
    ),
];

/// Every control.
pub fn crash_controls() -> &'static [CrashControl] {
    CONTROLS
}

/// The control named `name`.
pub fn crash_control(name: &str) -> Option<&'static CrashControl> {
    CONTROLS.iter().find(|c| c.name == name)
}

impl CrashControl {
    /// Its workload.
    pub fn spec(&self) -> Result<WorkloadSpec, SpecError> {
        let mut flat = FlatSpec::default();
        for assignment in self.settings {
            flat = apply_setting(&flat, assignment)?;
        }
        let spec = flat.typed();
        spec.validate()?;
        Ok(spec)
    }

    /// The recording device's size: 256 MiB, 320 MiB for xfs (its smallest is 300 MiB).
    pub fn size_bytes(&self) -> u64 {
        match self.fs {
            FsKind::Xfs => 320 << 20,
            FsKind::Ext4 | FsKind::Btrfs => 256 << 20,
        }
    }

    /// Whether `report` is what the control expects: records lost (negative), or nothing
    /// lost, torn or stale and every state mounted and checked clean (positive).
    pub fn as_expected(&self, report: &CrashReport) -> bool {
        if self.loses {
            report.lost + report.torn + report.stale > 0
        } else {
            report.lost + report.torn + report.stale + report.mount_failures + report.fsck_failures
                == 0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_is_a_valid_acknowledging_workload_with_a_twin() {
        for c in crash_controls() {
            let spec = c.spec().unwrap_or_else(|e| panic!("{}: {e:?}", c.name));
            assert!(
                spec.kind.params().acknowledged_files(&spec).is_ok(),
                "{} acknowledges",
                c.name
            );
            assert!(c.name.starts_with(c.fs.as_str()), "{}", c.name);
            crate::fsopts::check_mount_options(c.fs, c.mount_options).unwrap();
        }
        // Each filesystem has a positive and a negative control.
        for fs in [FsKind::Ext4, FsKind::Xfs, FsKind::Btrfs] {
            let of = |loses| {
                crash_controls()
                    .iter()
                    .any(|c| c.fs == fs && c.loses == loses)
            };
            assert!(of(true) && of(false), "{fs:?}");
        }
        assert_eq!(crash_control("ext4-barrier0").map(|c| c.loses), Some(true));
        assert_eq!(crash_control("nope"), None);
    }

    #[test]
    fn a_control_is_judged_against_its_expectation() {
        let negative = crash_control("ext4-nosync").unwrap();
        let positive = crash_control("ext4-fdatasync").unwrap();
        let clean = CrashReport {
            acknowledged: 200,
            ..CrashReport::default()
        };
        let lossy = CrashReport {
            lost: 3,
            ..clean.clone()
        };
        let unmountable = CrashReport {
            mount_failures: 1,
            ..clean.clone()
        };
        assert!(positive.as_expected(&clean) && !positive.as_expected(&lossy));
        assert!(!positive.as_expected(&unmountable));
        assert!(negative.as_expected(&lossy) && !negative.as_expected(&clean));
    }
}
