//! One worker thread: open its files, wait for the common start, then write and sync in
//! a loop that does no allocation, locking or formatting between a call and its timing.

use std::path::PathBuf;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

use super::file::{AlignedBuf, Backend, Clock, SyncFile};
use super::offsets::{BlockOrder, mix};
use super::scratch::describe_io_error;
use crate::metrics::{LatencyHistogram, LiveBuckets, ThreadStats, bump};
use crate::spec::{StopRule, SyncMethod, WorkloadSpec};

/// Counters a worker publishes for the interval sampler: one writer, relaxed atomics,
/// padded to its own cache lines so workers never share one.
#[repr(align(128))]
#[derive(Default)]
pub(super) struct Live {
    pub writes: AtomicU64,
    pub syncs: AtomicU64,
    pub bytes: AtomicU64,
    pub write_buckets: LiveBuckets,
    pub sync_buckets: LiveBuckets,
}

/// State shared by all workers of a run.
pub(super) struct Shared {
    /// Set on cancel or when any worker fails: every worker stops after its current call.
    pub stop: AtomicBool,
    /// Requests left under [`StopRule::TotalRequests`].
    pub remaining: AtomicI64,
}

/// What one worker writes.
pub(super) struct WorkerPlan {
    pub thread: u32,
    /// Files in block-index order: block b lives in file b / blocks_per_file.
    pub files: Vec<PathBuf>,
    /// First block of a sequential pass.
    pub start_block: u64,
}

/// What one worker measured.
pub(super) struct WorkerOutput {
    pub stats: ThreadStats,
    pub write_lat: LatencyHistogram,
    pub sync_lat: LatencyHistogram,
    pub start_ns: u64,
    pub end_ns: u64,
    pub error: Option<String>,
}

/// Runs one worker to its stop condition. Always waits at `barrier` exactly once, even
/// when opening its files fails, so the other workers and the coordinator never hang.
pub(super) fn run_worker<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    plan: WorkerPlan,
    shared: &Shared,
    live: &Live,
    barrier: &Barrier,
) -> WorkerOutput {
    let clock = backend.clock(plan.thread);
    let mut out = WorkerOutput {
        stats: ThreadStats {
            thread: plan.thread,
            ..Default::default()
        },
        write_lat: LatencyHistogram::new(),
        sync_lat: LatencyHistogram::new(),
        start_ns: 0,
        end_ns: 0,
        error: None,
    };
    let opened: Result<Vec<B::File>, String> = plan
        .files
        .iter()
        .map(|p| {
            backend
                .open(p, spec.open_flags, plan.thread)
                .map_err(|e| describe_io_error("open", p, None, &e))
        })
        .collect();
    let buf = AlignedBuf::new(
        spec.block_size as usize,
        mix(spec.seed ^ u64::from(plan.thread)),
    );
    let mut since_sync = vec![0u64; plan.files.len()];
    barrier.wait();
    let mut files = match opened {
        Ok(files) => files,
        Err(message) => {
            shared.stop.store(true, Ordering::Relaxed);
            out.error = Some(message);
            return out;
        }
    };

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
    let buf = buf.as_slice();

    let start = clock.now_ns();
    let deadline = match stop_rule {
        StopRule::Duration(d) => start.saturating_add(d.as_nanos() as u64),
        _ => u64::MAX,
    };
    let (mut writes, mut syncs, mut bytes, mut busy) = (0u64, 0u64, 0u64, 0u64);
    let mut now = start;
    loop {
        if shared.stop.load(Ordering::Relaxed)
            || now >= deadline
            || bytes.saturating_add(block_size) > byte_limit
            || (counted && shared.remaining.fetch_sub(1, Ordering::Relaxed) <= 0)
        {
            break;
        }
        let block = order.next_block();
        let file_index = (block / blocks_per_file) as usize;
        let offset = (block % blocks_per_file) * block_size;
        let file = &mut files[file_index];

        let t0 = clock.now_ns();
        let written = file.write_at(buf, offset);
        let t1 = clock.now_ns();
        if let Err(e) = written {
            out.error = Some(describe_io_error(
                "write",
                &plan.files[file_index],
                Some(offset),
                &e,
            ));
            break;
        }
        let write_ns = t1.saturating_sub(t0);
        out.write_lat.record(write_ns);
        live.write_buckets.record(write_ns);
        writes += 1;
        bytes += block_size;
        busy += write_ns;
        bump(&live.writes, 1);
        bump(&live.bytes, block_size);
        now = t1;

        if sync_every != 0 {
            let pending = &mut since_sync[file_index];
            *pending += 1;
            if *pending == sync_every {
                *pending = 0;
                let synced = file.sync(method);
                let t2 = clock.now_ns();
                if let Err(e) = synced {
                    out.error = Some(describe_io_error(
                        method.as_str(),
                        &plan.files[file_index],
                        None,
                        &e,
                    ));
                    break;
                }
                let sync_ns = t2.saturating_sub(t1);
                out.sync_lat.record(sync_ns);
                live.sync_buckets.record(sync_ns);
                syncs += 1;
                busy += sync_ns;
                bump(&live.syncs, 1);
                now = t2;
            }
        }
    }

    if spec.final_sync && out.error.is_none() && method != SyncMethod::None && writes > 0 {
        for (file, path) in files.iter_mut().zip(&plan.files) {
            let t1 = clock.now_ns();
            let synced = file.sync(method);
            let t2 = clock.now_ns();
            if let Err(e) = synced {
                out.error = Some(describe_io_error(method.as_str(), path, None, &e));
                break;
            }
            out.sync_lat.record(t2 - t1);
            live.sync_buckets.record(t2 - t1);
            syncs += 1;
            busy += t2 - t1;
            bump(&live.syncs, 1);
        }
    }
    if out.error.is_some() {
        shared.stop.store(true, Ordering::Relaxed);
    }
    out.start_ns = start;
    out.end_ns = clock.now_ns();
    out.stats = ThreadStats {
        thread: plan.thread,
        writes,
        syncs,
        bytes,
        busy_ns: busy,
        wall_ns: out.end_ns - start,
    };
    out
}
