//! The accumulator: parsed events in, a [`KernelTrace`] out. Pure (no I/O): which threads
//! are the run's is a predicate the caller gives, so fixtures drive it exactly.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::parse::{Dev, Event, parse_event, parse_line};
use super::timeline::{Counted, KernelTimeline};
use crate::metrics::{FlushLatency, KernelTrace, LatencyHistogram};

/// What the run's events are about: its device and, on btrfs, its filesystem id. A loop
/// device's backing disk is not traced: its block-stat counter, read over the same window,
/// counts the same flushes (issue 31: a sixth of the events, a figure the counter has).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Targets {
    /// The target filesystem's block device (the loop device for a loop target).
    pub dev: Option<Dev>,
    /// btrfs's filesystem id (`/sys/fs/btrfs/<fsid>`), which btrfs events print instead of a
    /// device.
    pub btrfs_fsid: Option<String>,
}

/// Which figures apply: one per enabled event group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Groups {
    /// block_rq_issue/complete.
    pub block: bool,
    /// jbd2 commits and run stats.
    pub jbd2: bool,
    /// xfs log forces and iclog writes.
    pub xfs: bool,
    /// btrfs sync_file and transaction commits.
    pub btrfs: bool,
    /// sched_switch.
    pub sched: bool,
}

/// Totals the run's window reads while the run goes (commits/s, flushes/s); written by the
/// reader thread only.
#[derive(Debug, Default)]
pub struct LiveKernel {
    /// Journal or log commits so far.
    pub commits: AtomicU64,
    /// Flushes completed on the target's device so far.
    pub flushes: AtomicU64,
    /// Events before this CLOCK_MONOTONIC time (ns) are not counted: set when the engine
    /// reads the device's counters at the start of what it counts, so the figures cover
    /// what the block-stat counters cover. 0 = not known yet: events are held until it is
    /// (the reader may see the preparation's and the settle step's events before the
    /// engine says where counting starts).
    pub window_start_ns: AtomicU64,
    /// Events after this time (ns) are not counted; 0 = no end yet.
    pub window_end_ns: AtomicU64,
    /// The run's workers exist (the engine's `Started`): the reader then narrows the
    /// scheduler filter from their name to their thread ids.
    pub workers_started: AtomicBool,
    /// Where the run's intervals count their `t_ms` from (CLOCK_MONOTONIC ns, the
    /// engine's `Started`); 0 = not known.
    pub origin_ns: AtomicU64,
}

impl LiveKernel {
    /// Totals for a window that starts at `start_ns` (CLOCK_MONOTONIC) and has no end yet.
    pub fn counting_from(start_ns: u64) -> Self {
        let live = LiveKernel::default();
        live.window_start_ns.store(start_ns, Ordering::Relaxed);
        live
    }

    /// Whether the start of the counted window is known.
    fn window_known(&self) -> bool {
        self.window_start_ns.load(Ordering::Relaxed) != 0
    }

    /// Whether an event at `ts_ns` falls in the counted window (never before its start is
    /// known).
    fn counts(&self, ts_ns: u64) -> bool {
        let start = self.window_start_ns.load(Ordering::Relaxed);
        let end = self.window_end_ns.load(Ordering::Relaxed);
        start != 0 && ts_ns >= start && (end == 0 || ts_ns <= end)
    }
}

/// Events held while the window's start is not known, at most: the preparation and the
/// settle step make a few (flushes, commits); beyond this the oldest, surely before the
/// window, are let go.
const HELD_MAX: usize = 65_536;

/// Running totals of one traced run.
pub struct Accumulator {
    targets: Targets,
    /// `targets.btrfs_fsid` parsed, compared with each btrfs event's.
    fsid: Option<uuid::Uuid>,
    is_ours: Box<dyn FnMut(u32) -> bool + Send>,
    ours: HashMap<u32, bool>,
    live: Arc<LiveKernel>,
    /// Events fed before the window's start was known, in the order fed.
    held: VecDeque<(u64, Event)>,
    /// Issue times of flushes in flight on the target's device. The block layer's flush
    /// machinery keeps one flush in flight per queue, so completes pair with issues in order.
    flushes_in_flight: VecDeque<u64>,
    flush_lat: LatencyHistogram,
    block_flushes: u64,
    fua_writes: u64,
    commit_start: Option<(u32, u64)>,
    commit_lat: LatencyHistogram,
    journal_commits: u64,
    run_stats: u64,
    handles: u64,
    blocks_logged: u64,
    log_forces: u64,
    log_writes: u64,
    log_commits: u64,
    transaction_commits: u64,
    asleep: HashMap<u32, u64>,
    dstate_ns: u64,
    /// When the counted flushes and commits happened.
    timeline: KernelTimeline,
    /// Lines that were not trace events fsynclab asked for (counted as dropped).
    unparsed: u64,
    events_read: u64,
}

impl Accumulator {
    /// An accumulator for `targets`; `is_ours(tid)` says whether a thread belongs to the run
    /// (asked once per thread).
    pub fn new(
        targets: Targets,
        is_ours: Box<dyn FnMut(u32) -> bool + Send>,
        live: Arc<LiveKernel>,
    ) -> Self {
        Accumulator {
            fsid: targets
                .btrfs_fsid
                .as_deref()
                .and_then(|id| uuid::Uuid::try_parse(id).ok()),
            targets,
            is_ours,
            ours: HashMap::new(),
            live,
            held: VecDeque::new(),
            flushes_in_flight: VecDeque::new(),
            flush_lat: LatencyHistogram::new(),
            block_flushes: 0,
            fua_writes: 0,
            commit_start: None,
            commit_lat: LatencyHistogram::new(),
            journal_commits: 0,
            run_stats: 0,
            handles: 0,
            blocks_logged: 0,
            log_forces: 0,
            log_writes: 0,
            log_commits: 0,
            transaction_commits: 0,
            asleep: HashMap::new(),
            dstate_ns: 0,
            timeline: KernelTimeline::default(),
            unparsed: 0,
            events_read: 0,
        }
    }

    /// Feeds every line of `text` (a whole `trace_pipe` read, or a fixture).
    pub fn feed_text(&mut self, text: &str) {
        for line in text.lines() {
            self.feed_line(line);
        }
    }

    /// Feeds one line; a line that is no event of ours counts as lost (never silent).
    pub fn feed_line(&mut self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        match parse_line(line)
            .as_ref()
            .and_then(|l| Some((l, parse_event(l)?)))
        {
            Some((l, event)) => self.feed_event(l.ts_ns, event),
            None => self.unparsed += 1,
        }
    }

    /// Feeds one decoded event (the binary reader's way in); counted as read.
    pub fn feed_event(&mut self, ts_ns: u64, event: Event) {
        self.events_read += 1;
        self.feed(ts_ns, event);
    }

    /// Feeds the records of `pending` (read from several CPUs, in no order) that are at or
    /// before `watermark`, in timestamp order, and keeps the rest for a later call: events
    /// that pair across CPUs (a flush issued on one completes on another) meet in order.
    pub fn feed_merged(&mut self, pending: &mut Vec<(u64, Event)>, watermark: u64) {
        // Stable: records of one CPU with equal timestamps keep their order.
        pending.sort_by_key(|&(ts, _)| ts);
        let ready = pending.partition_point(|&(ts, _)| ts <= watermark);
        for (ts, event) in pending.drain(..ready) {
            self.feed_event(ts, event);
        }
    }

    /// Counts `n` records that were not events fsynclab asked for, or did not decode (counted
    /// as dropped, never silent).
    pub fn count_unparsed(&mut self, n: u64) {
        self.unparsed += n;
    }

    /// Whether the engine said its workers exist.
    pub fn workers_started(&self) -> bool {
        self.live.workers_started.load(Ordering::Relaxed)
    }

    fn ours(&mut self, tid: u32) -> bool {
        if let Some(&known) = self.ours.get(&tid) {
            return known;
        }
        let known = (self.is_ours)(tid);
        self.ours.insert(tid, known);
        known
    }

    fn on_target(&self, dev: Dev) -> bool {
        self.targets.dev == Some(dev)
    }

    fn on_fs(&self, fsid: uuid::Uuid) -> bool {
        self.fsid == Some(fsid)
    }

    /// When the counted flushes and commits happened (per interval of the run:
    /// [`KernelTimeline::per_interval`]).
    pub fn timeline(&self) -> &KernelTimeline {
        &self.timeline
    }

    fn commit(&mut self, ts_ns: u64) {
        self.live.commits.fetch_add(1, Ordering::Relaxed);
        self.count_at(ts_ns, Counted::Commit);
    }

    fn count_at(&mut self, ts_ns: u64, what: Counted) {
        let start = self.live.window_start_ns.load(Ordering::Relaxed);
        self.timeline.count(start, ts_ns, what);
    }

    /// Accounts one event at `ts_ns`, or holds it while the window's start is not known.
    pub fn feed(&mut self, ts_ns: u64, event: Event) {
        if !self.live.window_known() {
            if self.held.len() == HELD_MAX {
                self.held.pop_front();
            }
            self.held.push_back((ts_ns, event));
            return;
        }
        self.release_held();
        self.account(ts_ns, event);
    }

    /// Accounts the events held until the window's start was known (those in the window);
    /// nothing while it is still not known.
    pub fn release_held(&mut self) {
        if !self.live.window_known() {
            return;
        }
        while let Some((ts_ns, event)) = self.held.pop_front() {
            self.account(ts_ns, event);
        }
    }

    fn account(&mut self, ts_ns: u64, event: Event) {
        if !self.live.counts(ts_ns) {
            return;
        }
        match event {
            Event::RqIssue { dev, rwbs } if rwbs.flush && self.on_target(dev) => {
                self.flushes_in_flight.push_back(ts_ns);
            }
            Event::RqComplete { dev, rwbs } if self.on_target(dev) => {
                if rwbs.flush {
                    self.block_flushes += 1;
                    self.live.flushes.fetch_add(1, Ordering::Relaxed);
                    self.count_at(ts_ns, Counted::Flush);
                    if let Some(issued) = self.flushes_in_flight.pop_front() {
                        self.flush_lat.record(ts_ns.saturating_sub(issued));
                    }
                } else if rwbs.fua {
                    self.fua_writes += 1;
                }
            }
            Event::JbdStartCommit { dev, tid } if self.on_target(dev) => {
                self.commit_start = Some((tid, ts_ns));
            }
            Event::JbdEndCommit { dev, tid } if self.on_target(dev) => {
                self.journal_commits += 1;
                self.commit(ts_ns);
                if let Some((started, at)) = self.commit_start.take()
                    && started == tid
                {
                    self.commit_lat.record(ts_ns.saturating_sub(at));
                }
            }
            Event::JbdRunStats {
                dev,
                handles,
                blocks_logged,
            } if self.on_target(dev) => {
                self.run_stats += 1;
                self.handles += handles;
                self.blocks_logged += blocks_logged;
            }
            Event::XfsLogForce { dev } if self.on_target(dev) => self.log_forces += 1,
            Event::XfsIclogSync { dev } if self.on_target(dev) => {
                self.log_writes += 1;
                self.commit(ts_ns);
            }
            Event::BtrfsSyncFile { fsid } if self.on_fs(fsid) => self.log_commits += 1,
            Event::BtrfsTransactionCommit { fsid } if self.on_fs(fsid) => {
                self.transaction_commits += 1;
                self.commit(ts_ns);
            }
            Event::SchedSwitch {
                prev_pid,
                prev_d,
                next_pid,
            } => {
                if prev_d && self.ours(prev_pid) {
                    self.asleep.insert(prev_pid, ts_ns);
                }
                if let Some(slept) = self.asleep.remove(&next_pid) {
                    self.dstate_ns += ts_ns.saturating_sub(slept);
                }
            }
            _ => {}
        }
    }

    /// The run's figures: `groups` says which apply, `syncs` is the run's sync calls,
    /// `lost` the events the kernel reported lost.
    pub fn finish(&self, groups: Groups, syncs: u64, lost: u64) -> KernelTrace {
        let per_sync = |n: u64| (syncs > 0).then(|| n as f64 / syncs as f64);
        let mean = |sum: u64, n: u64| (n > 0).then(|| sum as f64 / n as f64);
        let only = |on: bool, n: u64| on.then_some(n);
        KernelTrace {
            enabled: true,
            reason: None,
            events: Vec::new(),
            dropped: Some(lost + self.unparsed),
            events_read: Some(self.events_read),
            reader: None,
            block_flushes: only(
                groups.block && self.targets.dev.is_some(),
                self.block_flushes,
            ),
            fua_writes: only(groups.block && self.targets.dev.is_some(), self.fua_writes),
            // Not traced (see `Targets`): the backing disk's counter has it.
            backing_flushes: None,
            flush_lat_us: (groups.block && self.flush_lat.count() > 0)
                .then(|| summary_us(&self.flush_lat)),
            journal_commits: only(groups.jbd2, self.journal_commits),
            commits_per_sync: groups
                .jbd2
                .then(|| per_sync(self.journal_commits))
                .flatten(),
            handles_per_commit: groups
                .jbd2
                .then(|| mean(self.handles, self.run_stats))
                .flatten(),
            blocks_per_commit: groups
                .jbd2
                .then(|| mean(self.blocks_logged, self.run_stats))
                .flatten(),
            commit_us: (groups.jbd2 && self.commit_lat.count() > 0)
                .then(|| summary_us(&self.commit_lat)),
            log_forces: only(groups.xfs, self.log_forces),
            log_forces_per_sync: groups.xfs.then(|| per_sync(self.log_forces)).flatten(),
            log_writes: only(groups.xfs, self.log_writes),
            log_commits: only(groups.btrfs, self.log_commits),
            transaction_commits: only(groups.btrfs, self.transaction_commits),
            dstate_us_per_sync: groups
                .sched
                .then(|| per_sync(self.dstate_ns / 1000))
                .flatten(),
            dstate_us: only(groups.sched, self.dstate_ns / 1000),
        }
    }
}

fn summary_us(hist: &LatencyHistogram) -> FlushLatency {
    let us = |ns: u64| ns as f64 / 1000.0;
    let summary = hist.summary();
    FlushLatency {
        p50: us(summary.p50_ns),
        p99: us(summary.p99_ns),
        max: us(summary.max_ns),
    }
}
