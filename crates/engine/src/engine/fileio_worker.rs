//! A plain `fileio` worker: pwrite a block, sync every `sync_every` writes per file, until
//! the stop rule ends it, in a loop that does no allocation, locking or formatting between
//! a call and its timing (the io_uring worker is `fileio_uring`, sysbench mode
//! `fileio_sysbench`).

use std::sync::atomic::Ordering;

use super::api::AckSink;
use super::durable::PendingStarts;
use super::file::{AlignedBuf, Backend, Clock, SyncFile};
use super::harness::{Counts, Timed, Worker, WorkerOutput, end_warmup, record_sync, run_worker};
use super::offsets::{BlockOrder, mix};
use super::scratch::failed_io;
use super::worker::{WorkerPlan, open_plan_files};
use crate::crashlog::{Ack, RecordId, fill_record};
use crate::spec::{DurableOp, StopRule, SyncMethod, WorkloadSpec, durable_op};

/// What a plain `fileio` worker holds from before the gate.
struct Opened<F> {
    files: Vec<F>,
    buf: AlignedBuf,
    /// Writes since each file's last sync.
    pending: Vec<u64>,
    /// Their start times, for the durable-operation latency.
    durable: PendingStarts,
    /// A crash test's records written since each file's last sync, acknowledged when it
    /// returns (capacity reserved before the gate; empty in a plain run).
    unacked: Vec<Vec<Ack>>,
    /// Records written so far (a crash test's sequence numbers; never reset by a warm-up).
    issued: u64,
}

/// Runs one plain `fileio` worker to its stop condition.
pub(crate) fn run_fileio<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    fk: &crate::spec::kinds::fileio::Spec,
    plan: &WorkerPlan,
    w: Worker<'_>,
) -> WorkerOutput {
    let acking = w.acks.is_some();
    let open = || {
        let files = open_plan_files(backend, spec, plan);
        let buf = AlignedBuf::new(
            fk.block_size as usize,
            mix(spec.common.seed ^ u64::from(plan.thread)),
        );
        let pending = vec![0u64; plan.files.len()];
        let durable = PendingStarts::new(spec, plan.files.len());
        let batch = if acking {
            fk.sync_every as usize + 1
        } else {
            0
        };
        let unacked = (0..plan.files.len())
            .map(|_| Vec::with_capacity(batch))
            .collect();
        files.map(|files| Opened {
            files,
            buf,
            pending,
            durable,
            unacked,
            issued: 0,
        })
    };
    run_worker(backend, w, open, |o, t| {
        if fk.sync_only {
            return sync_loop(spec, fk, plan, o, t);
        }
        let mut counts = write_loop(spec, fk, plan, o, t);
        if fk.final_sync && t.out.error.is_none() {
            final_syncs(spec, plan, o, t, &mut counts);
        }
        counts
    })
}

/// Writes (and syncs every `sync_every` writes per file) until the stop rule ends it.
fn write_loop<F: SyncFile, C: Clock>(
    spec: &WorkloadSpec,
    fk: &crate::spec::kinds::fileio::Spec,
    plan: &WorkerPlan,
    o: &mut Opened<F>,
    t: &mut Timed<'_, C>,
) -> Counts {
    let block_size = fk.block_size;
    let blocks_per_file = fk.blocks_per_file().max(1);
    let total_blocks = blocks_per_file * o.files.len() as u64;
    let mut order = BlockOrder::new(
        total_blocks,
        fk.pattern,
        mix(spec.common.seed.wrapping_add(u64::from(plan.thread))),
        plan.start_block,
    );
    let sync_every = if fk.sync == SyncMethod::None {
        0
    } else {
        u64::from(fk.sync_every)
    };
    let method = fk.sync;
    let stop_rule = spec.stop_rule();
    let counted = matches!(stop_rule, StopRule::TotalRequests(_));
    let byte_limit = match stop_rule {
        StopRule::BytesPerThread(b) => b,
        _ => u64::MAX,
    };
    let stamp = (u64::from(plan.thread) << 48) ^ mix(spec.common.seed);
    // A crash test's acknowledgement names the run's file: thread N's own is file N.
    let first_file = if fk.shares_files() { 0 } else { plan.thread };
    let durable_writes = durable_op(spec) == Ok(DurableOp::Write);
    let (clock, live, shared) = (&t.clock, t.live, t.shared);
    let mut c = Counts::default();
    let (mut now, deadline) = (t.start_ns, t.deadline_ns);
    let mut warming = t.warm_end_ns != 0;
    loop {
        if warming && now >= t.warm_end_ns {
            // The warm-up is over: the figures, the byte and request budgets start here.
            end_warmup(&mut t.out, &mut c);
            t.start_ns = now;
            warming = false;
        }
        if shared.stop.0.load(Ordering::Relaxed)
            || now >= deadline
            || c.bytes.saturating_add(block_size) > byte_limit
            || (counted && !warming && shared.remaining.0.fetch_sub(1, Ordering::Relaxed) <= 0)
        {
            break;
        }
        let block = order.next_block();
        let file_index = (block / blocks_per_file) as usize;
        let offset = plan.base + (block % blocks_per_file) * block_size;
        // Every block written differs (offset and sequence stamped in), so deduplicating
        // storage stores what an application would make it store; a crash test's block is
        // a whole record (its identity, its version of the place and a checksum).
        let record = t.acks.map(|sink| RecordId {
            run: sink.run(),
            thread: plan.thread,
            seq: o.issued,
            version: o.issued / total_blocks,
        });
        match &record {
            Some(id) => o.buf.fill_with(|bytes| {
                fill_record(bytes, id);
            }),
            None => o.buf.stamp(offset ^ stamp, c.writes),
        }
        // fio decides to sync when it fetches the *next* I/O (io_u.c `get_io_u`), so the
        // last write of a size-based job gets no periodic sync (fio: 2048 writes, fsync=1
        // → 2047 fsyncs per job); `end_fsync` (final_sync) still syncs it.
        let last_write = c.bytes.saturating_add(block_size.saturating_mul(2)) > byte_limit;
        let due = sync_every != 0 && o.pending[file_index] + 1 == sync_every && !last_write;
        let file = &mut o.files[file_index];

        let t0 = clock.now_ns();
        let written = file.write_at(o.buf.as_slice(), offset);
        let t1 = clock.now_ns();
        if let Err(e) = written {
            let site = plan.site(spec, &plan.files[file_index]);
            t.out.error = Some(failed_io(site, "write", Some(offset), &e));
            break;
        }
        let synced = if due { Some(file.sync(method)) } else { None };
        let t2 = if due { clock.now_ns() } else { t1 };

        let write_ns = t1.saturating_sub(t0);
        t.out.write_lat.record(write_ns);
        live.write_buckets.record(write_ns);
        if durable_writes {
            t.out.durable_lat.record(write_ns);
        } else {
            o.durable.push(file_index, t0);
        }
        c.writes += 1;
        c.bytes += block_size;
        c.busy_ns += write_ns;
        // Bytes are writes × block size: the sampler derives them, one counter less here.
        crate::metrics::bump(&live.writes, 1);
        o.pending[file_index] += 1;
        o.issued += 1;
        now = t2;
        if let (Some(sink), Some(id)) = (t.acks, record) {
            let ack = Ack {
                id,
                file: first_file + file_index as u32,
                offset,
                len: block_size as u32,
            };
            // Durable when written (O_SYNC, O_DSYNC), or nothing will sync it (acknowledged
            // anyway: the control that must lose records); else when its sync returns.
            if durable_writes || sync_every == 0 {
                if let Err(e) = sink.ack(&ack) {
                    t.out.error =
                        Some(failed_io(plan.site(spec, "marks"), "acknowledge", None, &e));
                    break;
                }
            } else {
                o.unacked[file_index].push(ack);
            }
        }
        match synced {
            None => {}
            Some(Ok(())) => {
                if let Err(e) = acknowledge(t.acks, &mut o.unacked[file_index]) {
                    t.out.error =
                        Some(failed_io(plan.site(spec, "marks"), "acknowledge", None, &e));
                    break;
                }
                o.pending[file_index] = 0;
                o.durable.settle_all(file_index, t2, &mut t.out.durable_lat);
                let sync_ns = t2.saturating_sub(t1);
                record_sync(&mut t.out.sync_lat, live, sync_ns);
                c.syncs += 1;
                c.busy_ns += sync_ns;
            }
            Some(Err(e)) => {
                let site = plan.site(spec, &plan.files[file_index]);
                t.out.error = Some(failed_io(site, method.as_str(), None, &e));
                break;
            }
        }
    }
    if warming {
        // Stopped inside the warm-up (cancel, error): nothing was measured.
        end_warmup(&mut t.out, &mut c);
    }
    c
}

/// `sync_only`: syncs the worker's files in turn with nothing written, until the stop rule
/// (a duration or a request count: each sync is a request) ends it.
fn sync_loop<F: SyncFile, C: Clock>(
    spec: &WorkloadSpec,
    fk: &crate::spec::kinds::fileio::Spec,
    plan: &WorkerPlan,
    o: &mut Opened<F>,
    t: &mut Timed<'_, C>,
) -> Counts {
    let method = fk.sync;
    let counted = matches!(spec.stop_rule(), StopRule::TotalRequests(_));
    let (clock, live, shared) = (&t.clock, t.live, t.shared);
    let mut c = Counts::default();
    let (mut now, deadline) = (t.start_ns, t.deadline_ns);
    let mut warming = t.warm_end_ns != 0;
    let mut file_index = 0;
    loop {
        if warming && now >= t.warm_end_ns {
            end_warmup(&mut t.out, &mut c);
            t.start_ns = now;
            warming = false;
        }
        if shared.stop.0.load(Ordering::Relaxed)
            || now >= deadline
            || (counted && !warming && shared.remaining.0.fetch_sub(1, Ordering::Relaxed) <= 0)
        {
            break;
        }
        let t1 = clock.now_ns();
        let synced = o.files[file_index].sync(method);
        let t2 = clock.now_ns();
        if let Err(e) = synced {
            let site = plan.site(spec, &plan.files[file_index]);
            t.out.error = Some(failed_io(site, method.as_str(), None, &e));
            break;
        }
        let sync_ns = t2.saturating_sub(t1);
        record_sync(&mut t.out.sync_lat, live, sync_ns);
        c.syncs += 1;
        c.busy_ns += sync_ns;
        file_index = (file_index + 1) % o.files.len();
        now = t2;
    }
    if warming {
        end_warmup(&mut t.out, &mut c);
    }
    c
}

/// Acknowledges the records a sync just made durable (a crash test's; nothing otherwise).
fn acknowledge(acks: Option<&AckSink>, unacked: &mut Vec<Ack>) -> std::io::Result<()> {
    if let Some(sink) = acks {
        for ack in unacked.drain(..) {
            sink.ack(&ack)?;
        }
    }
    Ok(())
}

/// fio's end_fsync: one fsync per file that has unsynced writes, whatever the per-write
/// sync method, so buffered and sync_file_range runs end durable too.
fn final_syncs<F: SyncFile, C: Clock>(
    spec: &WorkloadSpec,
    plan: &WorkerPlan,
    o: &mut Opened<F>,
    t: &mut Timed<'_, C>,
    c: &mut Counts,
) {
    for (i, ((file, name), dirty)) in o
        .files
        .iter_mut()
        .zip(&plan.files)
        .zip(&o.pending)
        .enumerate()
    {
        if *dirty == 0 {
            continue;
        }
        let t1 = t.clock.now_ns();
        let synced = file.sync(SyncMethod::Fsync);
        let t2 = t.clock.now_ns();
        if let Err(e) = synced {
            let site = plan.site(spec, name);
            t.out.error = Some(failed_io(site, "final fsync", None, &e));
            break;
        }
        o.durable.settle_all(i, t2, &mut t.out.durable_lat);
        if let Err(e) = acknowledge(t.acks, &mut o.unacked[i]) {
            t.out.error = Some(failed_io(plan.site(spec, "marks"), "acknowledge", None, &e));
            break;
        }
        record_sync(&mut t.out.sync_lat, t.live, t2.saturating_sub(t1));
        c.syncs += 1;
        c.busy_ns += t2.saturating_sub(t1);
    }
}
