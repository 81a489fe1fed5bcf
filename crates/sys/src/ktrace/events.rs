//! Which tracepoints a run enables, picked from what the running kernel offers
//! (`available_events`), each with its kernel-side filter. Pure: the caller reads the file.

use super::accum::{Groups, Targets};

/// The filesystem family of the target, which decides the journal/log events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsFamily {
    /// ext4 (and ext3 on ext4) with a jbd2 journal.
    Ext4,
    /// ext4 without a journal (`mkfs.ext4 -O ^has_journal`): no jbd2 events, the journal
    /// figures do not apply (null).
    Ext4NoJournal,
    /// xfs: log forces and in-core log writes.
    Xfs,
    /// btrfs: fsync and transaction commits.
    Btrfs,
    /// Anything else (tmpfs...): block and scheduler events only.
    Other,
}

impl FsFamily {
    /// The family of a mount's filesystem type.
    pub fn of(fs_type: &str) -> FsFamily {
        match fs_type {
            "ext4" | "ext3" => FsFamily::Ext4,
            "xfs" => FsFamily::Xfs,
            "btrfs" => FsFamily::Btrfs,
            _ => FsFamily::Other,
        }
    }

    /// The family of a mount's filesystem type, with whether an ext4 has a journal
    /// (`has_journal` is asked only for ext4).
    pub fn of_mount(fs_type: &str, has_journal: impl FnOnce() -> bool) -> FsFamily {
        match FsFamily::of(fs_type) {
            FsFamily::Ext4 if !has_journal() => FsFamily::Ext4NoJournal,
            family => family,
        }
    }
}

/// One tracepoint to enable and the filter written to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventChoice {
    /// `block`, `jbd2`...
    pub system: &'static str,
    /// `block_rq_issue`...
    pub name: &'static str,
    /// The kernel-side filter (`events/<system>/<name>/filter`), when there is one.
    pub filter: Option<String>,
}

impl EventChoice {
    /// `system:name`, as `available_events` and the run's metadata name it.
    pub fn full_name(&self) -> String {
        format!("{}:{}", self.system, self.name)
    }
}

/// Prefix of the engine's worker thread names (`fsynclab-w0`...): the scheduler filter.
pub const WORKER_COMM_GLOB: &str = "fsynclab-w*";

/// `TASK_UNINTERRUPTIBLE` in `sched_switch`'s `prev_state` (the `D` state).
const TASK_UNINTERRUPTIBLE: u32 = 2;

/// The events to enable for a run on `fs` with `targets`, of those `available` lists, and
/// which figure groups they make available. A group is on only when all of its events exist.
pub fn select(available: &str, fs: FsFamily, targets: &Targets) -> (Vec<EventChoice>, Groups) {
    let has = |system: &str, name: &str| {
        available
            .lines()
            .any(|l| l.trim().split_once(':') == Some((system, name)))
    };
    let mut chosen = Vec::new();
    let mut groups = Groups::default();
    let mut group = |system: &'static str, names: &[&'static str], filter: Option<String>| {
        if !names.iter().all(|n| has(system, n)) {
            return false;
        }
        for &name in names {
            chosen.push(EventChoice {
                system,
                name,
                filter: filter.clone(),
            });
        }
        true
    };
    let fs_dev = targets.dev.map(|d| format!("dev == {}", d.kernel_dev_t()));
    if let Some(dev) = &fs_dev {
        // Only flushes, preflushes and FUA writes of the target's device: their rwbs holds
        // an F.
        let filter = format!("{dev} && rwbs ~ \"*F*\"");
        groups.block = group(
            "block",
            &["block_rq_issue", "block_rq_complete"],
            Some(filter),
        );
    }
    match fs {
        FsFamily::Ext4 if fs_dev.is_some() => {
            groups.jbd2 = group(
                "jbd2",
                &["jbd2_start_commit", "jbd2_end_commit", "jbd2_run_stats"],
                fs_dev,
            );
        }
        FsFamily::Xfs if fs_dev.is_some() => {
            groups.xfs = group("xfs", &["xfs_log_force", "xlog_iclog_sync"], fs_dev);
        }
        // btrfs events print a filesystem id, which filters cannot compare: the
        // accumulator keeps the target's own by its fsid.
        FsFamily::Btrfs if targets.btrfs_fsid.is_some() => {
            groups.btrfs = group(
                "btrfs",
                &["btrfs_sync_file", "btrfs_transaction_commit"],
                None,
            );
        }
        _ => {}
    }
    // Only switches that start a D-state sleep of a worker (preemptions and S sleeps are
    // dropped in the kernel) and switches back to a worker: the accumulator needs no more,
    // and a CPU-bound run under load switches mostly by preemption. By name until the run's
    // workers exist, then by their thread ids ([`sched_filter_for_threads`]).
    groups.sched = group(
        "sched",
        &["sched_switch"],
        Some(format!(
            "(prev_comm ~ \"{WORKER_COMM_GLOB}\" && prev_state & {TASK_UNINTERRUPTIBLE}) || \
             next_comm ~ \"{WORKER_COMM_GLOB}\""
        )),
    );
    (chosen, groups)
}

/// Longest sched_switch filter written: the kernel takes a filter shorter than a page.
const FILTER_MAX: usize = 3000;

/// The sched_switch filter that keeps the switches of the threads `tids` alone (the run's
/// workers, once they exist): the name filter also passes the workers of every other
/// fsynclab on the machine (another run, a test suite), whose events the reader then
/// decodes only to drop them. Consecutive ids are written as ranges; `None` when there is
/// no thread or the filter would be too long (the name filter stays).
pub fn sched_filter_for_threads(tids: &[u32]) -> Option<String> {
    let mut tids = tids.to_vec();
    tids.sort_unstable();
    tids.dedup();
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for tid in tids {
        match ranges.last_mut() {
            Some((_, hi)) if *hi + 1 == tid => *hi = tid,
            _ => ranges.push((tid, tid)),
        }
    }
    let field = |name: &str| {
        ranges
            .iter()
            .map(|&(lo, hi)| {
                if lo == hi {
                    format!("{name} == {lo}")
                } else {
                    format!("({name} >= {lo} && {name} <= {hi})")
                }
            })
            .collect::<Vec<_>>()
            .join(" || ")
    };
    let filter = format!(
        "(({}) && prev_state & {TASK_UNINTERRUPTIBLE}) || {}",
        field("prev_pid"),
        field("next_pid")
    );
    (!ranges.is_empty() && filter.len() <= FILTER_MAX).then_some(filter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ktrace::parse::Dev;

    const AVAILABLE: &str = "sched:sched_switch\njbd2:jbd2_run_stats\njbd2:jbd2_end_commit\n\
        jbd2:jbd2_start_commit\nxfs:xfs_log_force\nxfs:xlog_iclog_sync\nbtrfs:btrfs_sync_file\n\
        btrfs:btrfs_transaction_commit\nblock:block_rq_issue\nblock:block_rq_complete\n";

    fn loop_targets() -> Targets {
        Targets {
            dev: Some(Dev { major: 7, minor: 1 }),
            btrfs_fsid: None,
        }
    }

    #[test]
    fn ext4_on_a_loop_device_filters_its_device_alone() {
        let (events, groups) = select(AVAILABLE, FsFamily::Ext4, &loop_targets());
        assert!(groups.block && groups.jbd2 && groups.sched && !groups.xfs && !groups.btrfs);
        let issue = &events[0];
        assert_eq!(issue.full_name(), "block:block_rq_issue");
        assert_eq!(
            issue.filter.as_deref(),
            Some("dev == 7340033 && rwbs ~ \"*F*\""),
            "the backing disk's flushes are its counter's (issue 31)"
        );
        let jbd2: Vec<_> = events.iter().filter(|e| e.system == "jbd2").collect();
        assert_eq!(jbd2.len(), 3);
        assert_eq!(jbd2[0].filter.as_deref(), Some("dev == 7340033"));
        let sched = events.iter().find(|e| e.system == "sched").unwrap();
        assert_eq!(
            sched.filter.as_deref(),
            Some(
                "(prev_comm ~ \"fsynclab-w*\" && prev_state & 2) || \
                 next_comm ~ \"fsynclab-w*\""
            ),
            "switch-outs are kept only when the worker goes to sleep in D"
        );
    }

    #[test]
    fn only_what_the_kernel_offers() {
        let (events, groups) = select(
            "block:block_rq_issue\nxfs:xfs_log_force\n",
            FsFamily::Xfs,
            &loop_targets(),
        );
        assert!(events.is_empty(), "{events:?}");
        assert_eq!(groups, Groups::default());
        // btrfs needs its fsid; tmpfs gets the scheduler only.
        let (_, groups) = select(AVAILABLE, FsFamily::Btrfs, &loop_targets());
        assert!(!groups.btrfs);
        let (events, groups) = select(AVAILABLE, FsFamily::Other, &Targets::default());
        assert!(groups.sched && !groups.block);
        assert_eq!(events.len(), 1);
        assert_eq!(FsFamily::of("ext3"), FsFamily::Ext4);
        assert_eq!(FsFamily::of("tmpfs"), FsFamily::Other);
    }

    #[test]
    fn a_journal_less_ext4_enables_no_jbd2_event() {
        assert_eq!(
            FsFamily::of_mount("ext4", || false),
            FsFamily::Ext4NoJournal
        );
        assert_eq!(FsFamily::of_mount("ext4", || true), FsFamily::Ext4);
        assert_eq!(
            FsFamily::of_mount("xfs", || panic!("asked for xfs")),
            FsFamily::Xfs
        );
        let (events, groups) = select(AVAILABLE, FsFamily::Ext4NoJournal, &loop_targets());
        assert!(groups.block && groups.sched && !groups.jbd2, "{groups:?}");
        assert!(events.iter().all(|e| e.system != "jbd2"), "{events:?}");
    }

    #[test]
    fn the_workers_filter_names_their_ids_in_ranges() {
        assert_eq!(
            sched_filter_for_threads(&[12, 10, 11, 20]).as_deref(),
            Some(
                "(((prev_pid >= 10 && prev_pid <= 12) || prev_pid == 20) && prev_state & 2) || \
                 (next_pid >= 10 && next_pid <= 12) || next_pid == 20"
            )
        );
        assert_eq!(sched_filter_for_threads(&[]), None);
        // 512 fileserver clients with scattered ids: too long, the name filter stays.
        let scattered: Vec<u32> = (0..512).map(|i| 1000 + 2 * i).collect();
        assert_eq!(sched_filter_for_threads(&scattered), None);
        let consecutive: Vec<u32> = (1000..1512).collect();
        assert!(sched_filter_for_threads(&consecutive).is_some());
    }
}
