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
use super::harness::{Counts, Timed, Worker, WorkerOutput, end_warmup, record_sync, run_worker};
use super::offsets::mix;
use super::scratch::failed_io;
use super::worker::{WorkerPlan, open_plan_files};
use crate::metrics::{END_SYNC_PREFIX, OpStats, bump};
use crate::spec::{StopRule, SyncMethod, WorkloadSpec};

/// What event `ticket` of the shared sequence is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// A write at a random block.
    Write,
    /// A sync of file `index`.
    Sync(usize),
}

/// Event `ticket` of the sequence with `sync_every` writes (0: never sync) between rounds
/// of one sync per file over `files` files.
#[inline(always)]
pub(crate) fn event_of(ticket: u64, sync_every: u64, files: u64) -> Event {
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
pub(crate) fn writes_in(events: u64, sync_every: u64, files: u64) -> u64 {
    if sync_every == 0 {
        return events;
    }
    let round = sync_every + files;
    events / round * sync_every + (events % round).min(sync_every)
}

/// The seed of the offsets of a run seeded `seed` (one hash, done before timing).
pub(crate) fn offset_seed(seed: u64) -> u64 {
    mix(seed ^ 0x5b5b_5b5b_5b5b_5b5b)
}

/// The block written by event `ticket`: uniform with replacement over `total_blocks`
/// (sysbench draws `sb_rand_uniform` per request; a block may repeat, others wait).
#[inline(always)]
pub(crate) fn random_block(offset_seed: u64, ticket: u64, total_blocks: u64) -> u64 {
    mix(offset_seed ^ ticket) % total_blocks
}

/// Runs one sysbench-mode worker to its stop condition. Event writes and syncs go to the
/// thread's `writes`/`syncs`/`busy_ns` (sysbench's per-thread events and execution time);
/// the end syncs go to `out.extra_syncs` and the `end <method>` operation only.
pub(crate) fn run_sysbench_worker<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    fk: &crate::spec::kinds::fileio::Spec,
    plan: &WorkerPlan,
    w: Worker<'_>,
) -> WorkerOutput {
    let open = || {
        let files = open_plan_files(backend, spec, plan);
        let buf = AlignedBuf::new(
            fk.block_size as usize,
            mix(spec.common.seed ^ u64::from(plan.thread)),
        );
        files.map(|files| (files, buf))
    };
    run_worker(backend, w, open, |(files, buf), t| {
        let counts = event_loop(spec, fk, plan, files, buf, t);
        // The event operations are the event histograms (recorded once, in the loop);
        // taken before the end syncs join `sync_lat`.
        t.out.ops.push(OpStats {
            op: "write".into(),
            count: counts.writes,
            bytes: counts.bytes,
            lat: t.out.write_lat.clone(),
        });
        if fk.sync != SyncMethod::None {
            t.out.ops.push(OpStats {
                op: fk.sync.as_str().into(),
                count: counts.syncs,
                bytes: 0,
                lat: t.out.sync_lat.clone(),
            });
        }
        if fk.final_sync {
            let end_op = end_syncs(spec, fk, plan, files, t);
            t.out.ops.push(end_op);
        }
        counts
    })
}

/// Takes tickets of the shared event sequence and performs them until the request
/// limit, the deadline, a stop or an error.
fn event_loop<F: SyncFile, C: Clock>(
    spec: &WorkloadSpec,
    fk: &crate::spec::kinds::fileio::Spec,
    plan: &WorkerPlan,
    files: &mut [F],
    buf: &mut AlignedBuf,
    t: &mut Timed<'_, C>,
) -> Counts {
    let method = fk.sync;
    let block_size = fk.block_size;
    let blocks_per_file = fk.blocks_per_file().max(1);
    let file_count = files.len() as u64;
    let total_blocks = blocks_per_file * file_count;
    let sync_every = if method == SyncMethod::None {
        0
    } else {
        u64::from(fk.sync_every)
    };
    let limit = match spec.stop_rule() {
        StopRule::TotalRequests(n) => n,
        _ => u64::MAX,
    };
    let offsets = offset_seed(spec.common.seed);
    let stamp = (u64::from(plan.thread) << 48) ^ mix(spec.common.seed);
    // O_SYNC/O_DSYNC writes are durable when they return; a write's periodic sync is a
    // shared event (another thread's), so no other durable latency is kept here.
    let durable_writes = crate::spec::durable_op(spec) == Ok(crate::spec::DurableOp::Write);
    let (clock, live, shared) = (&t.clock, t.live, t.shared);
    let mut c = Counts::default();
    let (mut now, deadline) = (t.start_ns, t.deadline_ns);
    let mut warming = t.warm_end_ns != 0;
    loop {
        if warming && now >= t.warm_end_ns {
            end_warmup(&mut t.out, &mut c);
            t.start_ns = now;
            warming = false;
        }
        if shared.stop.0.load(Ordering::Relaxed) || now >= deadline {
            break;
        }
        // Warm-up events come from their own ticket: the measured events are the first
        // `limit` of the sequence, as without a warm-up.
        let ticket = if warming {
            shared.warm_ticket.0.fetch_add(1, Ordering::Relaxed)
        } else {
            shared.ticket.0.fetch_add(1, Ordering::Relaxed)
        };
        if !warming && ticket >= limit {
            break;
        }
        let (file_index, t0, done, t1) = match event_of(ticket, sync_every, file_count) {
            Event::Write => {
                let block = random_block(offsets, ticket, total_blocks);
                let file_index = (block / blocks_per_file) as usize;
                let offset = (block % blocks_per_file) * block_size;
                buf.stamp(offset ^ stamp, ticket);
                let t0 = clock.now_ns();
                let written = files[file_index].write_at(buf.as_slice(), offset);
                let t1 = clock.now_ns();
                let done = written.map_err(|e| ("write", Some(offset), e));
                (file_index, t0, done.map(|()| true), t1)
            }
            Event::Sync(file_index) => {
                let t0 = clock.now_ns();
                let synced = files[file_index].sync(method);
                let t1 = clock.now_ns();
                let done = synced.map_err(|e| (method.as_str(), None, e));
                (file_index, t0, done.map(|()| false), t1)
            }
        };
        let ns = t1.saturating_sub(t0);
        match done {
            Ok(true) => {
                t.out.write_lat.record(ns);
                if durable_writes {
                    t.out.durable_lat.record(ns);
                }
                live.write_buckets.record(ns);
                c.writes += 1;
                bump(&live.writes, 1);
            }
            Ok(false) => {
                record_sync(&mut t.out.sync_lat, live, ns);
                c.syncs += 1;
            }
            Err((op, offset, e)) => {
                let site = plan.site(spec, &plan.files[file_index]);
                t.out.error = Some(failed_io(site, op, offset, &e));
                break;
            }
        }
        c.busy_ns += ns;
        now = t1;
    }
    if warming {
        end_warmup(&mut t.out, &mut c);
    }
    c.bytes = c.writes * block_size;
    c
}

/// sysbench --file-fsync-end: every thread syncs every file once when it finishes,
/// outside the events (not in the event count, latency or execution time). Returns the
/// `end <method>` operation.
fn end_syncs<F: SyncFile, C: Clock>(
    spec: &WorkloadSpec,
    fk: &crate::spec::kinds::fileio::Spec,
    plan: &WorkerPlan,
    files: &mut [F],
    t: &mut Timed<'_, C>,
) -> OpStats {
    // sysbench's end fsync uses the periodic sync call (fsync unless fdatasync is chosen).
    let end_method = match fk.sync {
        SyncMethod::Fdatasync => SyncMethod::Fdatasync,
        _ => SyncMethod::Fsync,
    };
    let mut end_op = OpStats::new(&format!("{END_SYNC_PREFIX}{}", end_method.as_str()));
    if t.out.error.is_some() {
        return end_op;
    }
    for (file, name) in files.iter_mut().zip(&plan.files) {
        let t0 = t.clock.now_ns();
        let synced = file.sync(end_method);
        let t1 = t.clock.now_ns();
        if let Err(e) = synced {
            let site = plan.site(spec, name);
            t.out.error = Some(failed_io(site, "end fsync", None, &e));
            break;
        }
        let sync_ns = t1.saturating_sub(t0);
        record_sync(&mut t.out.sync_lat, t.live, sync_ns);
        end_op.record(sync_ns, 0);
        t.out.extra_syncs += 1;
    }
    end_op
}

#[cfg(test)]
#[path = "sysbench_tests.rs"]
mod tests;
