//! Issue 14's rule over every figure: a figure that does not apply to the target's
//! filesystem (or to what was traced) is `None` (JSON null), never 0 — whichever events
//! reach the accumulator.

use std::sync::Arc;

use super::accum::{Accumulator, LiveKernel, Targets};
use super::events::{FsFamily, select};
use super::parse::{Dev, Event, Rwbs};
use crate::metrics::KernelTrace;

const AVAILABLE: &str = "sched:sched_switch\njbd2:jbd2_run_stats\njbd2:jbd2_end_commit\n\
    jbd2:jbd2_start_commit\nxfs:xfs_log_force\nxfs:xlog_iclog_sync\nbtrfs:btrfs_sync_file\n\
    btrfs:btrfs_transaction_commit\nblock:block_rq_issue\nblock:block_rq_complete\n";

const DEV: Dev = Dev { major: 7, minor: 3 };
const BACKING: Dev = Dev {
    major: 253,
    minor: 0,
};
const FSID: &str = "af55f504-0000-4000-8000-000000000001";

fn fsid() -> uuid::Uuid {
    uuid::Uuid::try_parse(FSID).unwrap()
}

/// Every figure by its `kernel_trace` name, `Some` when it has a value.
fn figures(kt: &KernelTrace) -> Vec<(&'static str, bool)> {
    vec![
        ("block_flushes", kt.block_flushes.is_some()),
        ("fua_writes", kt.fua_writes.is_some()),
        ("backing_flushes", kt.backing_flushes.is_some()),
        ("flush_lat_us", kt.flush_lat_us.is_some()),
        ("journal_commits", kt.journal_commits.is_some()),
        ("commits_per_sync", kt.commits_per_sync.is_some()),
        ("handles_per_commit", kt.handles_per_commit.is_some()),
        ("blocks_per_commit", kt.blocks_per_commit.is_some()),
        ("commit_us", kt.commit_us.is_some()),
        ("log_forces", kt.log_forces.is_some()),
        ("log_forces_per_sync", kt.log_forces_per_sync.is_some()),
        ("log_writes", kt.log_writes.is_some()),
        ("log_commits", kt.log_commits.is_some()),
        ("transaction_commits", kt.transaction_commits.is_some()),
        ("dstate_us_per_sync", kt.dstate_us_per_sync.is_some()),
        ("dstate_us", kt.dstate_us.is_some()),
    ]
}

/// `backing_flushes` is in no group: never traced (the backing disk's counter has it).
const BLOCK: &[&str] = &["block_flushes", "fua_writes", "flush_lat_us"];
const JBD2: &[&str] = &[
    "journal_commits",
    "commits_per_sync",
    "handles_per_commit",
    "blocks_per_commit",
    "commit_us",
];
const XFS: &[&str] = &["log_forces", "log_forces_per_sync", "log_writes"];
const BTRFS: &[&str] = &["log_commits", "transaction_commits"];
const SCHED: &[&str] = &["dstate_us_per_sync", "dstate_us"];

/// Feeds one of every event the tracer knows, on the target's device and filesystem, so
/// a figure that is null is null because it does not apply, not because nothing came.
fn feed_everything(acc: &mut Accumulator) {
    let flush = Rwbs {
        flush: true,
        fua: false,
    };
    let fua = Rwbs {
        flush: false,
        fua: true,
    };
    let events = [
        Event::RqIssue {
            dev: DEV,
            rwbs: flush,
        },
        Event::RqComplete {
            dev: DEV,
            rwbs: flush,
        },
        Event::RqComplete {
            dev: DEV,
            rwbs: fua,
        },
        Event::RqComplete {
            dev: BACKING,
            rwbs: flush,
        },
        Event::JbdStartCommit { dev: DEV, tid: 5 },
        Event::JbdRunStats {
            dev: DEV,
            handles: 3,
            blocks_logged: 4,
        },
        Event::JbdEndCommit { dev: DEV, tid: 5 },
        Event::XfsLogForce { dev: DEV },
        Event::XfsIclogSync { dev: DEV },
        Event::BtrfsSyncFile { fsid: fsid() },
        Event::BtrfsTransactionCommit { fsid: fsid() },
        Event::SchedSwitch {
            prev_pid: 42,
            prev_d: true,
            next_pid: 1,
        },
        Event::SchedSwitch {
            prev_pid: 1,
            prev_d: false,
            next_pid: 42,
        },
    ];
    for (i, event) in events.into_iter().enumerate() {
        acc.feed(1_000 + i as u64 * 1_000, event);
    }
}

fn traced(fs: FsFamily, syncs: u64) -> KernelTrace {
    let targets = Targets {
        dev: Some(DEV),
        btrfs_fsid: (fs == FsFamily::Btrfs).then(|| FSID.to_string()),
    };
    let (_, groups) = select(AVAILABLE, fs, &targets);
    let mut acc = Accumulator::new(
        targets,
        Box::new(|tid| tid == 42),
        Arc::new(LiveKernel::counting_from(1)),
    );
    feed_everything(&mut acc);
    acc.finish(groups, syncs, 0)
}

#[test]
fn every_figure_that_does_not_apply_is_null_never_zero() {
    let cases: [(FsFamily, &[&[&str]]); 5] = [
        (FsFamily::Ext4, &[BLOCK, JBD2, SCHED]),
        (FsFamily::Ext4NoJournal, &[BLOCK, SCHED]),
        (FsFamily::Xfs, &[BLOCK, XFS, SCHED]),
        (FsFamily::Btrfs, &[BLOCK, BTRFS, SCHED]),
        (FsFamily::Other, &[BLOCK, SCHED]),
    ];
    for (fs, applies) in cases {
        let kt = traced(fs, 10);
        for (name, present) in figures(&kt) {
            let expected = applies.iter().any(|group| group.contains(&name));
            assert_eq!(present, expected, "{fs:?}: {name} {kt:?}");
        }
    }
}

#[test]
fn journal_less_ext4_has_null_journal_figures() {
    let kt = traced(FsFamily::Ext4NoJournal, 10);
    let json = serde_json::to_value(&kt).unwrap();
    assert!(json["journal_commits"].is_null(), "{json}");
    assert!(json["handles_per_commit"].is_null(), "{json}");
    assert_eq!(kt.commits(), None);
    // The journalled ext4 counts the same events.
    let kt = traced(FsFamily::Ext4, 10);
    assert_eq!(kt.journal_commits, Some(1));
    assert_eq!(kt.handles_per_commit, Some(3.0));
}

#[test]
fn per_sync_figures_are_null_without_syncs_and_everything_is_null_untraced() {
    let kt = traced(FsFamily::Ext4, 0);
    assert_eq!(kt.journal_commits, Some(1));
    assert!(kt.commits_per_sync.is_none() && kt.dstate_us_per_sync.is_none());
    let off = KernelTrace::off(crate::metrics::TraceNote::TurnedOff);
    assert!(figures(&off).iter().all(|(_, present)| !present), "{off:?}");
    // Without a device (tmpfs) there are no block figures.
    let (_, groups) = select(AVAILABLE, FsFamily::Other, &Targets::default());
    let mut acc = Accumulator::new(
        Targets::default(),
        Box::new(|_| true),
        Arc::new(LiveKernel::counting_from(1)),
    );
    feed_everything(&mut acc);
    let kt = acc.finish(groups, 10, 0);
    for (name, present) in figures(&kt) {
        assert_eq!(present, SCHED.contains(&name), "{name}: {kt:?}");
    }
}
