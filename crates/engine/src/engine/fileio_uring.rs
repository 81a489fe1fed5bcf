//! The `fileio` worker of the `io_uring` engine: the same block order, sync cadence and
//! stop rules as the synchronous loop in `super::worker`, but writes and syncs are
//! submitted through the worker's [`Ring`] with up to `iodepth` requests in flight.
//!
//! Issue order is strict: a sync is queued after the write that makes it due and before
//! any later write. With `link_sync` the two go to the kernel together, the write carrying
//! `IOSQE_IO_LINK`, so the sync starts when the write completes — but only when no other
//! write the sync covers (queued to its file since the file's last sync) is still in
//! flight: a link waits for one write, not for the others, so then the sync is held as an
//! unlinked one is. Unlinked, the sync waits
//! in the worker until every write in flight to its file has completed (so it covers them,
//! as an application's fsync after its writes does) — unless `sync_order` is `unordered`:
//! then it is queued right behind its write without waiting, as fio's io_uring engine
//! does, and may complete before that write. Latency runs from the submission
//! (the clock read before `io_uring_enter`) to the completion being reaped (the clock read
//! after it), per request, writes and syncs apart. Nothing is allocated after the gate:
//! slots, buffers, per-file counters and the queue of deferred syncs are sized up front.

use std::sync::atomic::Ordering;

use super::durable::PendingStarts;
use super::file::{Backend, Clock, Ring, RingOp, RingSetup};
use super::harness::{Counts, Timed, Worker, WorkerOutput, record_sync, run_worker};
use super::offsets::{BlockOrder, mix};
use super::scratch::{failed_io, io_failure};
use super::uring_acks::UringAcks;
use super::uring_slots::{Slot, SlotState, Slots};
use super::worker::{WorkerPlan, open_plan_files};
use crate::spec::{DurableOp, StopRule, SyncMethod, SyncOrder, WorkloadSpec, durable_op};

/// What the worker holds from before the gate.
pub(crate) struct Opened<F, R> {
    // The ring first: it is dropped before the files it refers to.
    ring: R,
    files: Vec<F>,
    /// Start times of completed writes no completed sync covers yet.
    durable: Option<PendingStarts>,
    /// A crash test's acknowledgements.
    acks: Option<UringAcks>,
}

/// Runs one `fileio` worker on io_uring to its stop condition.
pub(crate) fn run_fileio_uring<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    fk: &crate::spec::kinds::fileio::Spec,
    plan: &WorkerPlan,
    w: Worker<'_>,
) -> WorkerOutput {
    let acking = w.acks.is_some();
    let open = || {
        let files = open_plan_files(backend, spec, plan)?;
        let setup = RingSetup {
            depth: fk.iodepth,
            block_size: fk.block_size as usize,
            fixed_buffers: fk.fixedbufs,
            seed: mix(spec.common.seed ^ u64::from(plan.thread)),
        };
        let ring = backend.ring(&files, setup, plan.thread).map_err(|e| {
            let name = plan.files.first().map_or("", String::as_str);
            io_failure(plan.site(spec, name), "set up io_uring for", None, &e)
        })?;
        let durable = Some(PendingStarts::new(spec, plan.files.len()));
        let acks = acking.then(|| {
            // Acknowledged when written: durable then, or nothing will sync it (the control).
            let at_write = durable_op(spec) == Ok(DurableOp::Write) || fk.sync == SyncMethod::None;
            let first_file = if fk.shares_files() { 0 } else { plan.thread };
            let window = (fk.sync_every as usize + fk.iodepth as usize).min(1 << 16);
            let shape = (files.len(), fk.blocks_per_file(), fk.block_size as u32);
            UringAcks::new((plan.thread, first_file), shape, at_write, window)
        });
        Ok(Opened {
            ring,
            files,
            durable,
            acks,
        })
    };
    run_worker(backend, w, open, |o, t| {
        let mut s = Slots::new(fk.iodepth, o.files.len(), t.start_ns);
        s.durable = o.durable.take();
        s.acks = o.acks.take();
        s.durable_writes = durable_op(spec) == Ok(DurableOp::Write);
        let mut c = Counts::default();
        submit_loop(spec, fk, plan, &mut o.ring, &mut s, t, &mut c);
        drain(&mut o.ring, &mut s, t, &mut c, spec, fk, plan);
        if fk.final_sync && t.out.error.is_none() {
            final_syncs(spec, fk, plan, &mut o.ring, &mut s, t, &mut c);
        }
        c
    })
}

/// What the next request of the strict issue order is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Next {
    Write,
    /// An unlinked sync of this file, waiting for its file's writes to complete.
    Sync(u32),
}

/// What the submit loop reads of the spec and the worker's plan, worked out once before it
/// starts.
struct LoopPlan {
    block_size: u64,
    blocks_per_file: u64,
    /// Writes per sync of a file (0: no syncs).
    sync_every: u64,
    /// The run stops after a total request count shared by the workers.
    counted: bool,
    /// Bytes this worker may write (`u64::MAX` when another rule stops it).
    byte_limit: u64,
    /// Mixed into every buffer so no two writes carry the same bytes.
    stamp: u64,
    /// A sync waits for its file's writes to complete.
    ordered: bool,
}

impl LoopPlan {
    fn new(spec: &WorkloadSpec, fk: &crate::spec::kinds::fileio::Spec, plan: &WorkerPlan) -> Self {
        let stop_rule = spec.stop_rule();
        LoopPlan {
            block_size: fk.block_size,
            blocks_per_file: fk.blocks_per_file().max(1),
            sync_every: if fk.sync == SyncMethod::None {
                0
            } else {
                u64::from(fk.sync_every)
            },
            counted: matches!(stop_rule, StopRule::TotalRequests(_)),
            byte_limit: match stop_rule {
                StopRule::BytesPerThread(b) => b,
                _ => u64::MAX,
            },
            stamp: (u64::from(plan.thread) << 48) ^ mix(spec.common.seed),
            ordered: fk.sync_order == SyncOrder::Ordered,
        }
    }
}

/// Issues, submits and reaps until the stop rule ends the run (or an error).
fn submit_loop<R: Ring, C: Clock>(
    spec: &WorkloadSpec,
    fk: &crate::spec::kinds::fileio::Spec,
    plan: &WorkerPlan,
    ring: &mut R,
    s: &mut Slots,
    t: &mut Timed<'_, C>,
    c: &mut Counts,
) {
    let LoopPlan {
        block_size,
        blocks_per_file,
        sync_every,
        counted,
        byte_limit,
        stamp,
        ordered,
    } = LoopPlan::new(spec, fk, plan);
    let files = s.pending.len() as u64;
    let mut order = BlockOrder::new(
        blocks_per_file * files,
        fk.pattern,
        mix(spec.common.seed.wrapping_add(u64::from(plan.thread))),
        plan.start_block,
    );
    let mut next = Next::Write;
    // The next block, drawn but not yet written (its file decides whether a sync is due).
    let mut held: Option<u64> = None;
    let mut issued_bytes = 0u64;
    let mut issued_writes = 0u64;
    let mut stopping = false;
    let mut now = t.start_ns;
    loop {
        // Issue as much of the sequence as the free slots allow.
        requeue_deferred(ring, s, t, spec, plan);
        while !stopping && t.out.error.is_none() {
            match next {
                Next::Sync(f) => {
                    if (ordered && s.writes_in_flight[f as usize] > 0) || s.free.is_empty() {
                        break;
                    }
                    let req = SyncRequest {
                        file: f,
                        method: fk.sync,
                        linked: false,
                    };
                    queue_sync(ring, s, req, t, spec, plan);
                    next = Next::Write;
                }
                Next::Write => {
                    if t.stopped()
                        || now >= t.deadline_ns
                        || issued_bytes.saturating_add(block_size) > byte_limit
                    {
                        stopping = true;
                        break;
                    }
                    let block = *held.get_or_insert_with(|| order.next_block());
                    let file = (block / blocks_per_file) as u32;
                    // fio decides to sync when it fetches the next I/O (see worker.rs).
                    let last_write =
                        issued_bytes.saturating_add(block_size.saturating_mul(2)) > byte_limit;
                    let due = sync_every != 0
                        && s.pending[file as usize] + 1 == sync_every
                        && !last_write;
                    // Linked only when every write the sync covers besides this one has
                    // completed; otherwise held like an unlinked ordered sync.
                    let linked = due && fk.link_sync && s.uncovered[file as usize] == 0;
                    if s.free.len() < if linked { 2 } else { 1 } {
                        break;
                    }
                    if counted && t.shared.remaining.0.fetch_sub(1, Ordering::Relaxed) <= 0 {
                        stopping = true;
                        break;
                    }
                    held = None;
                    let offset = plan.base + (block % blocks_per_file) * block_size;
                    let slot = s.take(SlotState::Write, file, offset);
                    match (&mut s.acks, t.acks) {
                        (Some(acks), Some(sink)) => {
                            let ack = acks.fill(sink, ring.buffer(slot), file, offset);
                            s.slots[slot as usize].ack = Some(ack);
                        }
                        _ => ring.buffer(slot).stamp(offset ^ stamp, issued_writes),
                    }
                    let op = write_op(file, slot, offset, 0, block_size as u32);
                    if let Err(e) = ring.queue(op, u64::from(slot), linked) {
                        fail(t, spec, plan, file, "write", Some(offset), &e);
                        break;
                    }
                    s.writes_in_flight[file as usize] += 1;
                    s.uncovered[file as usize] += 1;
                    s.pending[file as usize] += 1;
                    issued_bytes += block_size;
                    issued_writes += 1;
                    if linked {
                        let req = SyncRequest {
                            file,
                            method: fk.sync,
                            linked: true,
                        };
                        queue_sync(ring, s, req, t, spec, plan);
                    } else if due {
                        next = Next::Sync(file);
                    }
                }
            }
        }
        if s.in_flight == 0 {
            break;
        }
        now = submit_and_reap(ring, s, t, c, spec, fk, plan);
        if t.out.error.is_some() {
            break;
        }
    }
}

fn write_op(file: u32, slot: u32, offset: u64, skip: u32, len: u32) -> RingOp {
    RingOp::Write {
        file,
        slot,
        offset,
        skip,
        len,
    }
}

/// A sync to queue: of which file, with which call, and whether it goes linked behind the
/// write queued just before it.
#[derive(Clone, Copy, Debug)]
struct SyncRequest {
    file: u32,
    method: SyncMethod,
    linked: bool,
}

/// Queues the sync `req` in a free slot (the caller checked there is one).
fn queue_sync<R: Ring, C: Clock>(
    ring: &mut R,
    s: &mut Slots,
    req: SyncRequest,
    t: &mut Timed<'_, C>,
    spec: &WorkloadSpec,
    plan: &WorkerPlan,
) {
    let SyncRequest {
        file,
        method,
        linked,
    } = req;
    let slot = s.take(SlotState::Sync(method), file, 0);
    s.slots[slot as usize].covers = s.completed[file as usize] + u64::from(linked);
    s.slots[slot as usize].acks_upto = s.acks.as_ref().map_or(0, |a| a.issued(file));
    s.pending[file as usize] = 0;
    s.uncovered[file as usize] = 0;
    s.sync_gen[file as usize] += 1;
    if let Err(e) = ring.queue(RingOp::Sync { file, method }, u64::from(slot), false) {
        fail(t, spec, plan, file, method.as_str(), None, &e);
    }
}

/// Queues again the syncs a failed linked write cancelled, once their files are idle.
fn requeue_deferred<R: Ring, C: Clock>(
    ring: &mut R,
    s: &mut Slots,
    t: &mut Timed<'_, C>,
    spec: &WorkloadSpec,
    plan: &WorkerPlan,
) {
    for slot in 0..s.slots.len() {
        let Slot { state, file, .. } = s.slots[slot];
        if let SlotState::Deferred(method) = state
            && s.writes_in_flight[file as usize] == 0
        {
            // Its latency keeps running from its first submission.
            s.slots[slot].state = SlotState::Sync(method);
            if let Err(e) = ring.queue(RingOp::Sync { file, method }, slot as u64, false) {
                fail(t, spec, plan, file, method.as_str(), None, &e);
            }
        }
    }
}

/// Submits what was queued, waits for at least one completion and handles every ready
/// one; returns the clock after the wait.
fn submit_and_reap<R: Ring, C: Clock>(
    ring: &mut R,
    s: &mut Slots,
    t: &mut Timed<'_, C>,
    c: &mut Counts,
    spec: &WorkloadSpec,
    fk: &crate::spec::kinds::fileio::Spec,
    plan: &WorkerPlan,
) -> u64 {
    let t0 = t.clock.now_ns();
    for slot in s.slots.iter_mut().filter(|s| s.fresh) {
        slot.fresh = false;
        slot.submitted_ns = t0;
    }
    s.advance(t0);
    let waited = ring.submit(1);
    let t1 = t.clock.now_ns();
    s.advance(t1);
    t.live.inflight_area.store(s.area, Ordering::Relaxed);
    c.busy_ns += t1.saturating_sub(t0);
    if let Err(e) = waited {
        let file = s
            .slots
            .iter()
            .find(|x| x.state != SlotState::Free)
            .map_or(0, |x| x.file);
        fail(t, spec, plan, file, "io_uring_enter", None, &e);
        return t1;
    }
    while let Some((user_data, result)) = ring.next_completion() {
        complete(ring, s, t, c, user_data as u32, result, t1, spec, fk, plan);
    }
    t1
}

/// Handles one completion reaped at `now_ns`.
#[allow(clippy::too_many_arguments)]
fn complete<R: Ring, C: Clock>(
    ring: &mut R,
    s: &mut Slots,
    t: &mut Timed<'_, C>,
    c: &mut Counts,
    slot: u32,
    result: i32,
    now_ns: u64,
    spec: &WorkloadSpec,
    fk: &crate::spec::kinds::fileio::Spec,
    plan: &WorkerPlan,
) {
    let Some(&Slot {
        state,
        file,
        offset,
        done,
        submitted_ns,
        covers,
        sync_gen,
        ack,
        acks_upto,
        ..
    }) = s.slots.get(slot as usize)
    else {
        unknown_completion(t, spec, plan, 0);
        return;
    };
    let retry = result == -libc::EAGAIN || result == -libc::EINTR;
    let latency = now_ns.saturating_sub(submitted_ns);
    match state {
        SlotState::Write => {
            let remaining = fk.block_size as u32 - done;
            if retry || (result > 0 && (result as u32) < remaining) {
                // Short or interrupted: the rest of the block (its latency keeps running).
                let written = if retry { 0 } else { result as u32 };
                let x = &mut s.slots[slot as usize];
                x.done += written;
                let op = write_op(
                    file,
                    slot,
                    offset + u64::from(x.done),
                    x.done,
                    remaining - written,
                );
                if let Err(e) = ring.queue(op, u64::from(slot), false) {
                    fail(t, spec, plan, file, "write", Some(offset), &e);
                }
                return;
            }
            s.writes_in_flight[file as usize] -= 1;
            if sync_gen == s.sync_gen[file as usize] {
                s.uncovered[file as usize] -= 1;
            }
            s.release(slot);
            if result <= 0 {
                let e = if result == 0 {
                    std::io::Error::from(std::io::ErrorKind::WriteZero)
                } else {
                    std::io::Error::from_raw_os_error(-result)
                };
                fail(t, spec, plan, file, "write", Some(offset), &e);
                return;
            }
            t.out.write_lat.record(latency);
            t.live.write_buckets.record(latency);
            if s.durable_writes {
                t.out.durable_lat.record(latency);
            } else if let Some(d) = &mut s.durable {
                d.push(file as usize, submitted_ns);
            }
            crate::metrics::bump(&t.live.writes, 1);
            c.writes += 1;
            c.bytes += fk.block_size;
            s.completed[file as usize] += 1;
            if let (Some(acks), Some(sink), Some(ack)) = (&mut s.acks, t.acks, ack)
                && let Err(e) = acks.written(sink, &ack)
            {
                ack_failed(t, spec, plan, &e);
            }
        }
        SlotState::Sync(method) => {
            if retry {
                if let Err(e) = ring.queue(RingOp::Sync { file, method }, u64::from(slot), false) {
                    fail(t, spec, plan, file, method.as_str(), None, &e);
                }
                return;
            }
            if result == -libc::ECANCELED {
                s.slots[slot as usize].state = SlotState::Deferred(method);
                return;
            }
            s.release(slot);
            if result < 0 {
                let e = std::io::Error::from_raw_os_error(-result);
                fail(t, spec, plan, file, method.as_str(), None, &e);
                return;
            }
            record_sync(&mut t.out.sync_lat, t.live, latency);
            c.syncs += 1;
            if let (Some(acks), Some(sink)) = (&mut s.acks, t.acks)
                && let Err(e) = acks.synced(sink, file, acks_upto)
            {
                ack_failed(t, spec, plan, &e);
            }
            // An unordered sync may not cover even the write it follows, so it counts for
            // nothing: every file written keeps needing the final sync.
            if fk.sync_order == SyncOrder::Ordered {
                let synced = &mut s.synced[file as usize];
                // The writes it covers beyond the last sync's are durable now.
                if let Some(d) = &mut s.durable {
                    let newly = covers.saturating_sub(*synced);
                    d.settle(file as usize, newly, now_ns, &mut t.out.durable_lat);
                }
                *synced = (*synced).max(covers);
            }
        }
        SlotState::Free | SlotState::Deferred(_) => {
            unknown_completion(t, spec, plan, file);
        }
    }
}

/// Records the run's first error (later ones are consequences).
fn fail<C>(
    t: &mut Timed<'_, C>,
    spec: &WorkloadSpec,
    plan: &WorkerPlan,
    file: u32,
    op: &str,
    offset: Option<u64>,
    e: &std::io::Error,
) {
    if t.out.error.is_none() {
        let name = plan.files.get(file as usize).map_or("", String::as_str);
        t.out.error = Some(failed_io(plan.site(spec, name), op, offset, e));
    }
}

/// Records a failed acknowledgement (a crash test's marks file) as the run's error.
fn ack_failed<C>(t: &mut Timed<'_, C>, spec: &WorkloadSpec, plan: &WorkerPlan, e: &std::io::Error) {
    if t.out.error.is_none() {
        t.out.error = Some(failed_io(plan.site(spec, "marks"), "acknowledge", None, e));
    }
}

/// Records a completion for a request not in flight (a bug in fsynclab) as the run's
/// error.
fn unknown_completion<C>(t: &mut Timed<'_, C>, spec: &WorkloadSpec, plan: &WorkerPlan, file: u32) {
    if t.out.error.is_none() {
        let e = std::io::Error::other("io_uring completed a request not in flight");
        let name = plan.files.get(file as usize).map_or("", String::as_str);
        let mut failure = io_failure(plan.site(spec, name), "io_uring completion", None, &e);
        failure.cause = crate::metrics::IoCause::UnknownCompletion;
        t.out.error = Some(crate::metrics::RunFailure::Io(failure));
    }
}

/// Waits for every request still in flight (after the stop or an error), so no buffer
/// or file is released while the kernel uses it; completions after an error are not
/// counted. Deferred syncs are dropped.
fn drain<R: Ring, C: Clock>(
    ring: &mut R,
    s: &mut Slots,
    t: &mut Timed<'_, C>,
    c: &mut Counts,
    spec: &WorkloadSpec,
    fk: &crate::spec::kinds::fileio::Spec,
    plan: &WorkerPlan,
) {
    for slot in 0..s.slots.len() as u32 {
        if matches!(s.slots[slot as usize].state, SlotState::Deferred(_)) {
            s.release(slot);
        }
    }
    while s.in_flight > 0 {
        if t.out.error.is_some() {
            let waited = ring.submit(1);
            s.advance(t.clock.now_ns());
            if waited.is_err() {
                return;
            }
            while let Some((user_data, _)) = ring.next_completion() {
                if let Some(x) = s.slots.get(user_data as usize)
                    && x.state != SlotState::Free
                {
                    s.release(user_data as u32);
                }
            }
        } else {
            submit_and_reap(ring, s, t, c, spec, fk, plan);
            requeue_deferred(ring, s, t, spec, plan);
        }
    }
    t.live.inflight_area.store(s.area, Ordering::Relaxed);
}

/// fio's end_fsync: one fsync per file with completed writes not yet covered by a
/// completed sync (a write that completed while its file's last sync ran is not),
/// submitted together (up to the depth) and timed each.
fn final_syncs<R: Ring, C: Clock>(
    spec: &WorkloadSpec,
    fk: &crate::spec::kinds::fileio::Spec,
    plan: &WorkerPlan,
    ring: &mut R,
    s: &mut Slots,
    t: &mut Timed<'_, C>,
    c: &mut Counts,
) {
    for file in 0..s.completed.len() as u32 {
        if s.completed[file as usize] <= s.synced[file as usize] {
            continue;
        }
        if s.free.is_empty() {
            drain(ring, s, t, c, spec, fk, plan);
        }
        if t.out.error.is_some() {
            return;
        }
        let req = SyncRequest {
            file,
            method: SyncMethod::Fsync,
            linked: false,
        };
        queue_sync(ring, s, req, t, spec, plan);
    }
    drain(ring, s, t, c, spec, fk, plan);
}

#[cfg(test)]
#[path = "uring_tests.rs"]
mod tests;
