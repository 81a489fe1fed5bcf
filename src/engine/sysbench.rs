//! The `fileio` worker in sysbench mode (seed 001 "Btrfs: improve fsync/osync write
//! performance" measured with `sysbench --test=fileio --file-test-mode=rndwr`).
//!
//! sysbench 1.0 draws every request from one generator under a mutex: `sync_every` writes
//! at uniformly random blocks, then one fsync of each file in turn, then again. An fsync
//! is an event like a write, and the request limit counts events. Here the generator is a
//! shared atomic ticket instead of a mutex: event `k` is a write when
//! `k % (sync_every + files) < sync_every`, else an fsync of file
//! `k % (sync_every + files) - sync_every` — the same sequence, without a lock on the hot
//! path. Offsets are uniform with replacement over all blocks of all files (as sysbench's
//! `sb_rand_uniform`), drawn from a hash of (seed, ticket), so one seed gives one sequence.

use std::sync::atomic::Ordering;

use super::file::{AlignedBuf, Backend, Clock, SyncFile};
use super::gate::StartGate;
use super::offsets::mix;
use super::scratch::describe_io_error;
use super::worker::{Live, Shared, WorkerOutput, WorkerPlan, open_plan_files, record_sync};
use crate::metrics::{END_SYNC_PREFIX, OpStats, ThreadStats, bump};
use crate::spec::{StopRule, SyncMethod, WorkloadSpec};

/// What event `ticket` of the shared sequence is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Event {
    /// A write at a random block.
    Write,
    /// A sync of file `index`.
    Sync(usize),
}

/// Event `ticket` of the sequence with `sync_every` writes (0: never sync) between rounds
/// of one sync per file over `files` files.
#[inline(always)]
pub(super) fn event_of(ticket: u64, sync_every: u64, files: u64) -> Event {
    if sync_every == 0 {
        return Event::Write;
    }
    let pos = ticket % (sync_every + files);
    if pos < sync_every {
        Event::Write
    } else {
        Event::Sync((pos - sync_every) as usize)
    }
}

/// Writes among the first `events` events of the sequence (for the progress bar).
pub(super) fn writes_in(events: u64, sync_every: u64, files: u64) -> u64 {
    if sync_every == 0 {
        return events;
    }
    let round = sync_every + files;
    events / round * sync_every + (events % round).min(sync_every)
}

/// The seed of the offsets of a run seeded `seed` (one hash, done before timing).
pub(super) fn offset_seed(seed: u64) -> u64 {
    mix(seed ^ 0x5b5b_5b5b_5b5b_5b5b)
}

/// The block written by event `ticket`: uniform with replacement over `total_blocks`
/// (sysbench draws `sb_rand_uniform` per request; a block may repeat, others wait).
#[inline(always)]
pub(super) fn random_block(offset_seed: u64, ticket: u64, total_blocks: u64) -> u64 {
    mix(offset_seed ^ ticket) % total_blocks
}

/// Runs one sysbench-mode worker to its stop condition. Event writes and syncs go to the
/// thread's `writes`/`syncs`/`busy_ns` (sysbench's per-thread events and execution time);
/// the end syncs go to `out.extra_syncs` and the `end <method>` operation only.
pub(super) fn run_sysbench_worker<B: Backend>(
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
    let method = spec.sync;
    // sysbench's end fsync uses the periodic sync call (fsync unless fdatasync is chosen).
    let end_method = match method {
        SyncMethod::Fdatasync => SyncMethod::Fdatasync,
        _ => SyncMethod::Fsync,
    };
    let mut end_op = OpStats::new(&format!("{END_SYNC_PREFIX}{}", end_method.as_str()));
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
    let file_count = files.len() as u64;
    let total_blocks = blocks_per_file * file_count;
    let sync_every = if method == SyncMethod::None {
        0
    } else {
        u64::from(spec.sync_every)
    };
    let stop_rule = spec.stop_rule();
    let limit = match stop_rule {
        StopRule::TotalRequests(n) => n,
        _ => u64::MAX,
    };
    let offsets = offset_seed(spec.seed);
    let stamp = (u64::from(plan.thread) << 48) ^ mix(spec.seed);

    let start = clock.now_ns();
    out.started = true;
    let deadline = shared.deadline_ns(stop_rule, start);
    let (mut writes, mut syncs, mut busy) = (0u64, 0u64, 0u64);
    let mut now = start;
    loop {
        if shared.stop.0.load(Ordering::Relaxed) || now >= deadline {
            break;
        }
        let ticket = shared.ticket.0.fetch_add(1, Ordering::Relaxed);
        if ticket >= limit {
            break;
        }
        match event_of(ticket, sync_every, file_count) {
            Event::Write => {
                let block = random_block(offsets, ticket, total_blocks);
                let file_index = (block / blocks_per_file) as usize;
                let offset = (block % blocks_per_file) * block_size;
                buf.stamp(offset ^ stamp, ticket);
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
                let write_ns = t1.saturating_sub(t0);
                out.write_lat.record(write_ns);
                live.write_buckets.record(write_ns);
                writes += 1;
                busy += write_ns;
                bump(&live.writes, 1);
                now = t1;
            }
            Event::Sync(file_index) => {
                let file = &mut files[file_index];
                let t0 = clock.now_ns();
                let synced = file.sync(method);
                let t1 = clock.now_ns();
                if let Err(e) = synced {
                    out.error = Some(describe_io_error(
                        plan.site(spec, &plan.files[file_index]),
                        method.as_str(),
                        None,
                        &e,
                    ));
                    break;
                }
                let sync_ns = t1.saturating_sub(t0);
                record_sync(&mut out.sync_lat, live, sync_ns);
                syncs += 1;
                busy += sync_ns;
                now = t1;
            }
        }
    }

    // The event operations are the event histograms (recorded once, in the loop); taken
    // before the end syncs join `sync_lat`.
    let write_op = OpStats {
        op: "write".into(),
        count: writes,
        bytes: writes * block_size,
        lat: out.write_lat.clone(),
    };
    let sync_op = OpStats {
        op: method.as_str().into(),
        count: syncs,
        bytes: 0,
        lat: out.sync_lat.clone(),
    };

    // sysbench --file-fsync-end: every thread syncs every file once when it finishes,
    // outside the events (not in the event count, latency or execution time).
    if spec.final_sync && out.error.is_none() {
        for (file, name) in files.iter_mut().zip(&plan.files) {
            let t0 = clock.now_ns();
            let synced = file.sync(end_method);
            let t1 = clock.now_ns();
            if let Err(e) = synced {
                out.error = Some(describe_io_error(
                    plan.site(spec, name),
                    "end fsync",
                    None,
                    &e,
                ));
                break;
            }
            let sync_ns = t1.saturating_sub(t0);
            record_sync(&mut out.sync_lat, live, sync_ns);
            end_op.record(sync_ns, 0);
            out.extra_syncs += 1;
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
        bytes: writes * block_size,
        busy_ns: busy,
        wall_ns: out.end_ns.saturating_sub(start),
    };
    out.ops = vec![write_op];
    if method != SyncMethod::None {
        out.ops.push(sync_op);
    }
    if spec.final_sync {
        out.ops.push(end_op);
    }
    out
}

#[cfg(test)]
#[path = "sysbench_tests.rs"]
mod tests;
