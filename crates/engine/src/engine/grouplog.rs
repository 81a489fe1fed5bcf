//! `grouplog`: N writers append fixed-size records to one shared log file, and each
//! record must be durable before its writer continues — the application-level group
//! commit that databases do, with the coordination strategies the seed threads put in
//! the kernel ("ext4: coordinate fsync requests", "jbd: transaction batching for
//! multi-threaded synchronous writers").
//!
//! Flush generations: a writer whose record is written registers for the next flush
//! that *starts* after its write completed (`need = started + 1`); it is durable once
//! `done >= need`, `done` being the newest generation completed (a later flush started
//! later still, so it covers the record too). Whoever finds fewer flushes in flight than
//! the strategy allows (one; N for `pipelined:N`) and none started since its record leads:
//! it (optionally) waits to gather followers, starts the flush — every record registered
//! until then is in its batch — and wakes everyone when it returns. Coordination takes a
//! mutex, as the kernel does; it is the workload being measured, not engine overhead.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// The `uring` strategy (a child module: it uses [`GroupLog`], and the dispatch here uses it).
#[path = "grouplog_uring.rs"]
mod uring;

use std::sync::mpsc::Sender;

use super::api::{AckSink, CancelToken, EngineEvent};
use super::file::{AlignedBuf, Backend, Clock, FileLayout, SyncFile};
use super::harness::{
    Counts, Padded, PrepareStop, Timed, Worker, WorkerOutput, record_sync, run_worker,
};
use super::kind::Kind;
use super::offsets::mix;
use super::scratch::{IoSite, ScratchDir, failed_io};
use super::worker::{WorkerPlan, open_plan_files};
use crate::metrics::{GroupCommitStats, OpStats, bump};
use crate::probe::SystemInfo;
use crate::crashlog::{Ack, RecordId, fill_record};
use crate::spec::{Prepare, StopRule, Strategy, WorkloadSpec};

/// The `grouplog` kind.
pub(crate) struct Grouplog;

impl Kind for Grouplog {
    type Spec = crate::spec::kinds::grouplog::Spec;

    type Plan = GroupLog;

    /// Creates the shared log: empty (the first pass appends and grows it; `sparse` and `empty`
    /// alike) unless `prepare`
    /// asks for a preallocated (`fallocate`) or written (`fill`) log of `log_size`.
    fn prepare<B: Backend>(
        backend: &B,
        spec: &WorkloadSpec,
        k: &Self::Spec,
        scratch: &mut ScratchDir,
        events: &Sender<EngineEvent>,
        cancel: &CancelToken,
    ) -> Result<GroupLog, PrepareStop> {
        let size = match k.prepare {
            Prepare::Sparse | Prepare::Empty => 0,
            Prepare::Fallocate | Prepare::Fill => k.log_size,
        };
        let _ = events.send(EngineEvent::Preparing {
            files: 1,
            bytes_per_file: size,
        });
        let name = scratch.file(crate::spec::kinds::grouplog::LOG_FILE);
        let dir = scratch.dir().clone();
        // The log keeps its 1 MiB fill writes (no reference tool to match; its figures in
        // docs/PERFORMANCE.md were taken so).
        let layout = FileLayout {
            size_bytes: size,
            prepare: k.prepare,
            fill_write_bytes: 1 << 20,
            seed: spec.common.seed,
        };
        match backend.create(&dir, &name, &layout, cancel) {
            Ok(()) => {}
            Err(e) => {
                let site = IoSite {
                    kind: spec.kind(),
                    dir: &dir,
                    name: &name,
                };
                return Err(PrepareStop::after_io(site, "create", &e, cancel));
            }
        }
        dir.sync();
        Ok(GroupLog::new(dir, name, k.strategy))
    }

    fn work<B: Backend>(
        log: &GroupLog,
        backend: &B,
        spec: &WorkloadSpec,
        k: &Self::Spec,
        w: Worker<'_>,
    ) -> WorkerOutput {
        run_writer(backend, spec, k, log, w)
    }

    fn space_needed(_spec: &WorkloadSpec, k: &Self::Spec) -> u64 {
        k.log_size
    }

    fn bytes_per_write(_spec: &WorkloadSpec, k: &Self::Spec) -> u64 {
        k.record_size
    }

    fn expected_writes(spec: &WorkloadSpec, _k: &Self::Spec) -> Option<u64> {
        match spec.stop_rule() {
            StopRule::TotalRequests(n) => Some(n),
            _ => None,
        }
    }

    fn warnings(
        _spec: &WorkloadSpec,
        _k: &Self::Spec,
        system: &SystemInfo,
    ) -> Vec<crate::metrics::RunWarning> {
        let memory_fs = system
            .mount
            .as_ref()
            .is_some_and(|m| matches!(m.fs_type.as_str(), "tmpfs" | "ramfs"));
        if memory_fs {
            vec![crate::metrics::RunWarning::GrouplogOnMemory]
        } else {
            Vec::new()
        }
    }

    fn group_stats(log: &GroupLog, _spec: &WorkloadSpec, k: &Self::Spec) -> Option<GroupCommitStats> {
        Some(log.stats(k.strategy))
    }
}

/// The shared log and its coordinator.
pub(crate) struct GroupLog {
    /// The run directory holding the log.
    pub dir: std::sync::Arc<super::dirfd::DirHandle>,
    /// The log's name in it.
    pub name: String,
    next_seq: Padded<AtomicU64>,
    state: Mutex<State>,
    flushed: Condvar,
}

#[derive(Default)]
struct State {
    /// Flushes started / completed (generations).
    started: u64,
    done: u64,
    /// Flushes in progress, and leaders gathering followers for the next one.
    in_flight: u64,
    /// Writers registered for the next flush (its batch so far).
    waiting_next: u64,
    /// When the first record of the next batch registered (jbd's transaction start).
    batch_start_ns: u64,
    /// Learned average flush time (adaptive, jbd), ns; 0 until the first flush.
    avg_flush_ns: u64,
    /// Most flushes in flight at once so far.
    peak_in_flight: u64,
    /// A flush failed: everyone stops.
    failed: bool,
    stats: GroupCommitStats,
}

impl GroupLog {
    /// Takes the next record for a writer's loop: its sequence number and its offset in
    /// a log of `records_in_log` records of `record_size` bytes (it wraps around).
    #[inline(always)]
    pub(super) fn next_record(&self, record_size: u64, records_in_log: u64) -> (u64, u64) {
        let seq = self.next_seq.0.fetch_add(1, Ordering::Relaxed);
        (seq, (seq % records_in_log) * record_size)
    }

    pub fn new(
        dir: std::sync::Arc<super::dirfd::DirHandle>,
        name: String,
        strategy: Strategy,
    ) -> Self {
        Self {
            dir,
            name,
            next_seq: Padded(AtomicU64::new(0)),
            state: Mutex::new(State {
                stats: GroupCommitStats {
                    strategy: strategy.name(),
                    ..Default::default()
                },
                ..Default::default()
            }),
            flushed: Condvar::new(),
        }
    }

    /// Adds the flushes of writers that flushed on their own (solo, uring): one flush per
    /// commit, batches of one.
    pub(super) fn add_own_flushes(&self, flushes: u64) {
        let mut s = self.lock();
        s.stats.flushes += flushes;
        s.stats.commits += flushes;
        s.stats.record_batches(1, flushes);
    }

    /// Marks the log failed and wakes every waiting writer.
    pub(super) fn fail(&self) {
        let mut s = self.lock();
        s.failed = true;
        self.flushed.notify_all();
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Poisoning only means a writer panicked holding the lock; the counters remain
        // meaningful and the panic itself is reported by the engine.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The accounting after the run.
    pub fn stats(&self, strategy: Strategy) -> GroupCommitStats {
        let s = self.lock();
        let mut stats = s.stats.clone();
        stats.learned_flush_ns = match strategy {
            Strategy::Adaptive { .. } | Strategy::Jbd => Some(s.avg_flush_ns),
            _ => None,
        };
        stats.peak_in_flight = match strategy {
            Strategy::Solo | Strategy::Uring => None,
            _ => Some(s.peak_in_flight),
        };
        stats
    }
}

/// How long a leader waits before flushing, given the learned flush time.
fn gather_delay_ns(strategy: Strategy, avg_flush_ns: u64, batch_start_ns: u64, now: u64) -> u64 {
    match strategy {
        Strategy::Solo
        | Strategy::Leader
        | Strategy::Uring
        | Strategy::EarlyAck
        | Strategy::Pipelined { .. } => 0,
        Strategy::Delay { us } => us * 1000,
        Strategy::Adaptive { cap_us } => match cap_us {
            Some(cap) => avg_flush_ns.min(cap * 1000),
            None => avg_flush_ns,
        },
        // jbd: wait while now < transaction start + average commit time.
        Strategy::Jbd => (batch_start_ns + avg_flush_ns).saturating_sub(now),
    }
}

/// The moving average each strategy learns flush time with: ext4's `(new + 15·old) / 16`,
/// jbd's `(new + old) / 2`; the first flush sets it.
pub(crate) fn update_average(strategy: Strategy, old_ns: u64, new_ns: u64) -> u64 {
    if old_ns == 0 {
        return new_ns;
    }
    match strategy {
        Strategy::Jbd => (new_ns + old_ns) / 2,
        _ => (new_ns + 15 * old_ns) / 16,
    }
}

/// Runs one writer of the shared log.
fn run_writer<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    k: &crate::spec::kinds::grouplog::Spec,
    log: &GroupLog,
    w: Worker<'_>,
) -> WorkerOutput {
    let plan = WorkerPlan {
        thread: w.thread,
        dir: log.dir.clone(),
        files: vec![log.name.clone()],
        start_block: 0,
        base: 0,
        device: None,
    };
    if k.strategy == Strategy::Uring {
        return uring::run_uring_writer(backend, spec, k, log, plan, w);
    }
    let open = || {
        let opened = open_plan_files(backend, spec, &plan).map(|mut files| files.remove(0));
        let record_size = k.record_size as usize;
        let buf = AlignedBuf::new(record_size, mix(spec.common.seed ^ u64::from(plan.thread)));
        // Whole histograms: a writer records one of each per record, millions in a run.
        let ops = [
            OpStats::preallocated("commit"),
            OpStats::preallocated("wait"),
        ];
        opened.map(|file| (file, buf, ops))
    };
    run_worker(backend, w, open, |(file, buf, [commit, wait]), t| {
        let counts = append_loop(spec, k, log, &plan, file, buf, [commit, wait], t);
        let own_flushes = k.strategy == Strategy::Solo;
        finish_writer(log, t, own_flushes.then_some(counts.syncs), [commit, wait]);
        counts
    })
}

/// The end of a writer, whatever its strategy: flushes it issued itself counted on the log
/// (`own_flushes`), the run stopped and the log failed on an error, the commit/wait stats
/// handed back.
pub(super) fn finish_writer<C: Clock>(
    log: &GroupLog,
    t: &mut Timed<'_, C>,
    own_flushes: Option<u64>,
    [commit, wait]: [&mut OpStats; 2],
) {
    if let Some(syncs) = own_flushes.filter(|&n| n > 0) {
        log.add_own_flushes(syncs);
    }
    if t.out.error.is_some() {
        t.shared.stop.0.store(true, Ordering::Relaxed);
        log.fail();
    }
    t.out.ops = vec![
        std::mem::replace(commit, OpStats::new("commit")),
        std::mem::replace(wait, OpStats::new("wait")),
    ];
}

/// Appends records, each made durable before the next, until the stop rule ends it.
#[allow(clippy::too_many_arguments)]
fn append_loop<F: SyncFile, C: Clock>(
    spec: &WorkloadSpec,
    k: &crate::spec::kinds::grouplog::Spec,
    log: &GroupLog,
    plan: &WorkerPlan,
    file: &mut F,
    buf: &mut AlignedBuf,
    [commit, wait]: [&mut OpStats; 2],
    t: &mut Timed<'_, C>,
) -> Counts {
    let strategy = k.strategy;
    let record_size = k.record_size;
    let records_in_log = (k.log_size / record_size).max(1);
    let counted = matches!(spec.stop_rule(), StopRule::TotalRequests(_));
    let mut c = Counts::default();
    let mut now = t.start_ns;
    loop {
        if t.request_denied(now, counted) {
            break;
        }
        let (seq, offset) = log.next_record(record_size, records_in_log);
        let ack = fill(buf, t.acks, plan.thread, (seq, offset), (record_size, records_in_log));

        let t0 = t.clock.now_ns();
        let written = file.write_at(buf.as_slice(), offset);
        let t1 = t.clock.now_ns();
        if let Err(e) = written {
            let site = plan.site(spec, &log.name);
            t.out.error = Some(failed_io(site, "write", Some(offset), &e));
            break;
        }
        // The unsafe control acknowledges before the flush.
        let early = strategy == Strategy::EarlyAck;
        if early && let Err(e) = acknowledge(t.acks, ack.as_ref()) {
            t.out.error = Some(failed_io(plan.site(spec, "marks"), "acknowledge", None, &e));
            break;
        }
        let write_ns = t1.saturating_sub(t0);
        t.out.write_lat.record(write_ns);
        t.live.write_buckets.record(write_ns);
        bump(&t.live.writes, 1);
        c.writes += 1;
        c.busy_ns += write_ns;

        let durable = if strategy == Strategy::Solo {
            let synced = file.sync(k.sync);
            let t2 = t.clock.now_ns();
            // Counted per thread and added to the shared stats once at the end: solo
            // writers share nothing, so no lock between their commits either.
            synced.map_err(Some).map(|()| {
                record_sync(&mut t.out.sync_lat, t.live, t2.saturating_sub(t1));
                c.syncs += 1;
                t2
            })
        } else {
            commit_grouped(log, strategy, file, k, t, &mut c.syncs)
        };
        match durable {
            Ok(t_durable) => {
                if !early && let Err(e) = acknowledge(t.acks, ack.as_ref()) {
                    let site = plan.site(spec, "marks");
                    t.out.error = Some(failed_io(site, "acknowledge", None, &e));
                    break;
                }
                let acknowledged = if early { t1 } else { t_durable };
                commit.record(acknowledged.saturating_sub(t0), record_size);
                wait.record(t_durable.saturating_sub(t1), 0);
                c.busy_ns += t_durable.saturating_sub(t1);
                now = t_durable;
            }
            Err(Some(e)) => {
                let site = plan.site(spec, &log.name);
                t.out.error = Some(failed_io(site, k.sync.as_str(), None, &e));
                break;
            }
            // Another writer's flush failed: it reports the error; this writer just stops.
            Err(None) => break,
        }
    }
    c.bytes = c.writes * record_size;
    c
}

/// Puts record `seq` (at `offset`) in `buf`: for a crash test, a whole record whose
/// acknowledgement is returned (the log wraps: each pass over a place is a new version);
/// otherwise the plain stamp (the sequence and offset in its first bytes).
#[inline(always)]
pub(super) fn fill(
    buf: &mut AlignedBuf,
    acks: Option<&AckSink>,
    thread: u32,
    (seq, offset): (u64, u64),
    (record_size, records_in_log): (u64, u64),
) -> Option<Ack> {
    let Some(sink) = acks else {
        buf.stamp(offset, seq);
        return None;
    };
    let id = RecordId {
        run: sink.run(),
        thread,
        seq,
        version: seq / records_in_log,
    };
    buf.fill_with(|bytes| {
        fill_record(bytes, &id);
    });
    Some(Ack {
        id,
        file: 0,
        offset,
        len: record_size as u32,
    })
}

/// Acknowledges `ack` (a crash test's; nothing otherwise).
pub(super) fn acknowledge(acks: Option<&AckSink>, ack: Option<&Ack>) -> std::io::Result<()> {
    match (acks, ack) {
        (Some(sink), Some(ack)) => sink.ack(ack),
        _ => Ok(()),
    }
}

/// Makes this writer's record durable through a shared flush; returns the time it
/// became durable. Leads a flush when none is in progress. `Err(Some(e))`: this writer's
/// flush failed; `Err(None)`: another writer's did, and the run is stopping.
fn commit_grouped<F: SyncFile, C: Clock>(
    log: &GroupLog,
    strategy: Strategy,
    file: &mut F,
    k: &crate::spec::kinds::grouplog::Spec,
    t: &mut Timed<'_, C>,
    syncs: &mut u64,
) -> Result<u64, Option<std::io::Error>> {
    let (clock, live) = (&t.clock, t.live);
    let limit = u64::from(strategy.flushes_in_flight());
    // A cancelled run still finishes the commit in hand: its record gets its flush.
    let mut s = log.lock();
    let need = s.started + 1;
    if s.waiting_next == 0 {
        s.batch_start_ns = clock.now_ns();
    }
    s.waiting_next += 1;
    loop {
        if s.done >= need {
            s.stats.commits += 1;
            drop(s);
            return Ok(clock.now_ns());
        }
        if s.failed {
            return Err(None);
        }
        if s.in_flight < limit && s.started < need {
            // Lead the next flush: gather, then flush everything registered by then.
            s.in_flight += 1;
            s.peak_in_flight = s.peak_in_flight.max(s.in_flight);
            let now = clock.now_ns();
            let delay = gather_delay_ns(strategy, s.avg_flush_ns, s.batch_start_ns, now);
            if delay > 0 {
                drop(s);
                sleep_until(clock, now + delay);
                s = log.lock();
                s.stats.gather_wait_ns += clock.now_ns().saturating_sub(now);
            }
            s.started += 1;
            let generation = s.started;
            let batch = s.waiting_next;
            s.waiting_next = 0;
            drop(s);
            let t0 = clock.now_ns();
            let synced = file.sync(k.sync);
            let t1 = clock.now_ns();
            let flush_ns = t1.saturating_sub(t0);
            s = log.lock();
            s.in_flight -= 1;
            match synced {
                Ok(()) => {
                    record_sync(&mut t.out.sync_lat, live, flush_ns);
                    *syncs += 1;
                    s.done = s.done.max(generation);
                    s.stats.flushes += 1;
                    s.stats.record_batch(batch);
                    s.avg_flush_ns = update_average(strategy, s.avg_flush_ns, flush_ns);
                    log.flushed.notify_all();
                }
                Err(e) => {
                    s.failed = true;
                    log.flushed.notify_all();
                    return Err(Some(e));
                }
            }
            continue;
        }
        // Follow: a flush that covers this record (or a leader's gathering) is under way,
        // or as many flushes as the strategy allows are.
        s = log
            .flushed
            .wait_timeout(s, Duration::from_millis(50))
            .map(|(g, _)| g)
            .unwrap_or_else(|e| e.into_inner().0);
    }
}

/// Sleeps until `deadline_ns` on `clock` (in slices, so a long delay still ends on time).
fn sleep_until<C: Clock>(clock: &C, deadline_ns: u64) {
    loop {
        let now = clock.now_ns();
        if now >= deadline_ns {
            return;
        }
        std::thread::sleep(Duration::from_nanos((deadline_ns - now).min(10_000_000)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averages_follow_the_patches() {
        let adaptive = Strategy::Adaptive { cap_us: None };
        assert_eq!(update_average(adaptive, 0, 1600), 1600);
        assert_eq!(
            update_average(adaptive, 1600, 3200),
            (3200 + 15 * 1600) / 16
        );
        assert_eq!(update_average(Strategy::Jbd, 1000, 3000), 2000);
    }

    #[test]
    fn averages_converge_to_a_steady_flush_time() {
        for strategy in [Strategy::Adaptive { cap_us: None }, Strategy::Jbd] {
            // From a wrong start (5× too slow), a steady 2 ms flush pulls the average in.
            let mut avg = 10_000_000;
            for _ in 0..128 {
                avg = update_average(strategy, avg, 2_000_000);
            }
            assert!((2_000_000..2_100_000).contains(&avg), "{strategy}: {avg}");
        }
    }

    #[test]
    fn delays_per_strategy() {
        assert_eq!(gather_delay_ns(Strategy::Leader, 5_000, 0, 0), 0);
        assert_eq!(
            gather_delay_ns(Strategy::Delay { us: 500 }, 5_000, 0, 0),
            500_000
        );
        let capped = Strategy::Adaptive { cap_us: Some(2) };
        assert_eq!(gather_delay_ns(capped, 5_000, 0, 0), 2_000);
        let free = Strategy::Adaptive { cap_us: None };
        assert_eq!(gather_delay_ns(free, 5_000, 0, 0), 5_000);
        // jbd: from the batch's start, not from the leader's arrival.
        assert_eq!(gather_delay_ns(Strategy::Jbd, 5_000, 1_000, 4_000), 2_000);
        assert_eq!(gather_delay_ns(Strategy::Jbd, 5_000, 1_000, 9_000), 0);
    }
}
