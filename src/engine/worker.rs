//! One worker thread: open its files, arrive at the start gate, then write and sync in a
//! loop that does no allocation, locking or formatting between a call and its timing.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

use super::dirfd::DirHandle;

use super::file::{AlignedBuf, Backend, Clock, SyncFile};
use super::gate::StartGate;
use super::offsets::{BlockOrder, mix};
use super::scratch::{IoSite, describe_io_error};
use crate::metrics::{LatencyHistogram, LiveBuckets, OpStats, ThreadStats, bump};
use crate::spec::{StopRule, SyncMethod, WorkloadSpec};

/// Counters a worker publishes for the interval sampler: one writer, relaxed atomics,
/// padded to its own cache lines so workers never share one.
#[repr(align(128))]
#[derive(Default)]
pub(super) struct Live {
    pub writes: AtomicU64,
    /// Bytes, for kinds whose writes vary in size (see `kinds::bytes_per_write`).
    pub bytes: AtomicU64,
    pub syncs: AtomicU64,
    pub write_buckets: LiveBuckets,
    pub sync_buckets: LiveBuckets,
}

/// A value alone on its cache lines (no false sharing with its neighbours).
#[repr(align(128))]
pub(super) struct Padded<T>(pub T);

/// State shared by all workers of a run.
pub(super) struct Shared {
    /// Set on cancel or when any worker fails: every worker stops after its current call.
    pub stop: Padded<AtomicBool>,
    /// Requests left under [`StopRule::TotalRequests`] (written by every worker).
    pub remaining: Padded<AtomicI64>,
    /// Next event of the shared sysbench-mode sequence (see `sysbench::event_of`).
    pub ticket: Padded<AtomicU64>,
    /// The run's one deadline under [`StopRule::Duration`], on the workers' clock; 0
    /// until the first worker through the start gate sets it (see [`Shared::deadline_ns`]).
    pub deadline: Padded<AtomicU64>,
}

impl Shared {
    /// State for a run under `rule`.
    pub fn new(rule: StopRule) -> Self {
        Shared {
            stop: Padded(AtomicBool::new(false)),
            remaining: Padded(AtomicI64::new(match rule {
                StopRule::TotalRequests(n) => i64::try_from(n).unwrap_or(i64::MAX),
                _ => 0,
            })),
            ticket: Padded(AtomicU64::new(0)),
            deadline: Padded(AtomicU64::new(0)),
        }
    }

    /// The deadline of a worker that starts at `start` (its clock, read as it passed the
    /// start gate): under a duration, one deadline for the whole run, set by the first
    /// worker through the gate and read by every other, so workers scheduled late (many
    /// threads on few cores) run shorter instead of each running the full duration.
    /// Called once per worker, before its loop. `u64::MAX` for the other stop rules.
    pub fn deadline_ns(&self, rule: StopRule, start: u64) -> u64 {
        let StopRule::Duration(d) = rule else {
            return u64::MAX;
        };
        let mine = start
            .saturating_add(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
            .max(1);
        match self
            .deadline
            .0
            .compare_exchange(0, mine, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => mine,
            Err(first) => first,
        }
    }
}

/// What one worker writes.
#[derive(Clone)]
pub(super) struct WorkerPlan {
    pub thread: u32,
    /// The run directory the files are in.
    pub dir: Arc<DirHandle>,
    /// File names in block-index order: block b lives in file b / blocks_per_file.
    pub files: Vec<String>,
    /// First block of a sequential pass.
    pub start_block: u64,
}

/// What one worker measured.
pub(super) struct WorkerOutput {
    pub stats: ThreadStats,
    pub write_lat: LatencyHistogram,
    pub sync_lat: LatencyHistogram,
    /// Whether it passed the start gate and ran (start/end are meaningful only then).
    pub started: bool,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Opening a file failed (the run never started): a usage-type error.
    pub open_error: Option<String>,
    /// An I/O error during the run.
    pub error: Option<String>,
    /// Per-operation latency (kinds beyond fileio).
    pub ops: Vec<OpStats>,
    /// Timed phases (smallfiles).
    pub phases: Vec<PhaseSpan>,
    /// Syncs counted in the run's total but not in `stats` (sysbench mode's end fsyncs,
    /// which are not events).
    pub extra_syncs: u64,
}

/// One worker's part of a timed phase.
pub(super) struct PhaseSpan {
    pub phase: &'static str,
    pub items: u64,
    pub start_ns: u64,
    pub end_ns: u64,
}

impl WorkerOutput {
    /// An output with nothing measured yet, for worker `thread`.
    pub fn new(thread: u32) -> Self {
        Self {
            stats: ThreadStats {
                thread,
                ..Default::default()
            },
            write_lat: LatencyHistogram::new(),
            sync_lat: LatencyHistogram::new(),
            started: false,
            start_ns: 0,
            end_ns: 0,
            open_error: None,
            error: None,
            ops: Vec::new(),
            phases: Vec::new(),
            extra_syncs: 0,
        }
    }
}

/// Opens the files of `plan` with the spec's flags (before the start gate); the error
/// names the file, the flags and the fix.
pub(super) fn open_plan_files<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    plan: &WorkerPlan,
) -> Result<Vec<B::File>, String> {
    let op = if spec.open_flags.direct {
        "open with O_DIRECT"
    } else {
        "open"
    };
    plan.files
        .iter()
        .map(|name| {
            backend
                .open(&plan.dir, name, spec.open_flags, plan.thread)
                .map_err(|e| describe_io_error(plan.site(spec, name), op, None, &e))
        })
        .collect()
}

impl WorkerPlan {
    /// Where an error on file `name` of this plan happened (for its message).
    pub fn site<'a>(&'a self, spec: &WorkloadSpec, name: &'a str) -> IoSite<'a> {
        IoSite {
            kind: spec.kind,
            dir: &self.dir,
            name,
        }
    }
}

/// Runs one worker to its stop condition. `arrived` is set once it has reached the gate,
/// so the caller's guard knows whether to count it.
pub(super) fn run_worker<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    plan: WorkerPlan,
    shared: &Shared,
    live: &Live,
    gate: &StartGate,
    arrived: &mut bool,
) -> WorkerOutput {
    let clock = backend.clock(plan.thread);
    let mut out = WorkerOutput::new(plan.thread);
    let opened = open_plan_files(backend, spec, &plan);
    let mut buf = AlignedBuf::new(
        spec.block_size as usize,
        mix(spec.seed ^ u64::from(plan.thread)),
    );
    let mut pending = vec![0u64; plan.files.len()];
    if let Err(message) = &opened {
        out.open_error = Some(message.clone());
        shared.stop.0.store(true, Ordering::Relaxed);
    }
    *arrived = true;
    if !gate.arrive_and_wait() {
        return out;
    }
    let Ok(mut files) = opened else { return out };

    let block_size = spec.block_size;
    let blocks_per_file = spec.blocks_per_file().max(1);
    let total_blocks = blocks_per_file * files.len() as u64;
    let mut order = BlockOrder::new(
        total_blocks,
        spec.pattern,
        mix(spec.seed.wrapping_add(u64::from(plan.thread))),
        plan.start_block,
    );
    let sync_every = if spec.sync == SyncMethod::None {
        0
    } else {
        u64::from(spec.sync_every)
    };
    let method = spec.sync;
    let stop_rule = spec.stop_rule();
    let counted = matches!(stop_rule, StopRule::TotalRequests(_));
    let byte_limit = match stop_rule {
        StopRule::BytesPerThread(b) => b,
        _ => u64::MAX,
    };
    let stamp = (u64::from(plan.thread) << 48) ^ mix(spec.seed);

    let start = clock.now_ns();
    out.started = true;
    let deadline = shared.deadline_ns(stop_rule, start);
    let (mut writes, mut syncs, mut bytes, mut busy) = (0u64, 0u64, 0u64, 0u64);
    let mut now = start;
    loop {
        if shared.stop.0.load(Ordering::Relaxed)
            || now >= deadline
            || bytes.saturating_add(block_size) > byte_limit
            || (counted && shared.remaining.0.fetch_sub(1, Ordering::Relaxed) <= 0)
        {
            break;
        }
        let block = order.next_block();
        let file_index = (block / blocks_per_file) as usize;
        let offset = (block % blocks_per_file) * block_size;
        // Every block written differs (offset and sequence stamped in), so deduplicating
        // storage stores what an application would make it store.
        buf.stamp(offset ^ stamp, writes);
        let due = sync_every != 0 && pending[file_index] + 1 == sync_every;
        let file = &mut files[file_index];

        let t0 = clock.now_ns();
        let written = file.write_at(buf.as_slice(), offset);
        let t1 = clock.now_ns();
        if let Err(e) = written {
            out.error = Some(describe_io_error(
                plan.site(spec, &plan.files[file_index]),
                "write",
                Some(offset),
                &e,
            ));
            break;
        }
        let synced = if due { Some(file.sync(method)) } else { None };
        let t2 = if due { clock.now_ns() } else { t1 };

        let write_ns = t1.saturating_sub(t0);
        out.write_lat.record(write_ns);
        live.write_buckets.record(write_ns);
        writes += 1;
        bytes += block_size;
        busy += write_ns;
        // Bytes are writes × block size: the sampler derives them, one counter less here.
        bump(&live.writes, 1);
        pending[file_index] += 1;
        now = t2;
        match synced {
            None => {}
            Some(Ok(())) => {
                pending[file_index] = 0;
                let sync_ns = t2.saturating_sub(t1);
                record_sync(&mut out.sync_lat, live, sync_ns);
                syncs += 1;
                busy += sync_ns;
            }
            Some(Err(e)) => {
                out.error = Some(describe_io_error(
                    plan.site(spec, &plan.files[file_index]),
                    method.as_str(),
                    None,
                    &e,
                ));
                break;
            }
        }
    }

    // fio's end_fsync: one fsync per file that has unsynced writes, whatever the per-write
    // sync method, so buffered and sync_file_range runs end durable too.
    if spec.final_sync && out.error.is_none() {
        for ((file, name), dirty) in files.iter_mut().zip(&plan.files).zip(&pending) {
            if *dirty == 0 {
                continue;
            }
            let t1 = clock.now_ns();
            let synced = file.sync(SyncMethod::Fsync);
            let t2 = clock.now_ns();
            if let Err(e) = synced {
                out.error = Some(describe_io_error(
                    plan.site(spec, name),
                    "final fsync",
                    None,
                    &e,
                ));
                break;
            }
            record_sync(&mut out.sync_lat, live, t2.saturating_sub(t1));
            syncs += 1;
            busy += t2.saturating_sub(t1);
        }
    }
    if out.error.is_some() {
        shared.stop.0.store(true, Ordering::Relaxed);
    }
    out.start_ns = start;
    out.end_ns = clock.now_ns();
    out.stats = ThreadStats {
        thread: plan.thread,
        writes,
        syncs,
        bytes,
        busy_ns: busy,
        wall_ns: out.end_ns.saturating_sub(start),
    };
    out
}

#[inline(always)]
pub(super) fn record_sync(hist: &mut LatencyHistogram, live: &Live, sync_ns: u64) {
    hist.record(sync_ns);
    live.sync_buckets.record(sync_ns);
    bump(&live.syncs, 1);
}
