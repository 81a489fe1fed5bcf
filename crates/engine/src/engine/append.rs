//! The `append` kind: each writer appends fixed-size records to a log file of its own
//! (each write at the log's end, so the file grows and a sync commits its new size too),
//! syncs every `sync_every` records, and when the next record would pass the segment size
//! starts a new segment — creates the next file, opens it, removes the one before — as a
//! write-ahead log does. A segment switch is timed as its own operation (`rotate`). Records
//! written but not yet synced at the end were never acknowledged: no final sync.

use std::ffi::CString;
use std::sync::mpsc::Sender;

use crate::crashlog::{Ack, RecordId, fill_record};
use super::api::{CancelToken, EngineEvent};
use super::durable::PendingStarts;
use super::file::{AlignedBuf, Backend, Clock, DirOps, FileLayout, SyncFile};
use super::harness::{Counts, PrepareStop, Timed, Worker, WorkerOutput, record_sync, run_worker};
use super::kind::Kind;
use super::offsets::mix;
use super::scratch::{IoSite, ScratchDir, failed_io};
use super::worker::{WorkerPlan, open_plan_files};
use crate::metrics::{OpStats, bump};
use crate::spec::{DurableOp, Prepare, StopRule, SyncMethod, WorkloadSpec, durable_op};

/// The `append` kind.
pub(crate) struct Append;

/// The two names a writer's segments alternate between (the current one and the next),
/// made before the gate so a switch formats nothing.
fn segment_names(thread: u32) -> [String; 2] {
    use crate::spec::kinds::append::segment_name;
    [segment_name(thread, 0), segment_name(thread, 1)]
}

/// An empty segment, grown by the writes.
fn empty_layout(spec: &WorkloadSpec, thread: u32) -> FileLayout {
    FileLayout {
        size_bytes: 0,
        prepare: Prepare::Empty,
        fill_write_bytes: 0,
        seed: spec.common.seed ^ u64::from(thread),
    }
}

impl Kind for Append {
    type Spec = crate::spec::kinds::append::Spec;

    type Plan = Vec<WorkerPlan>;

    /// Creates each writer's first segment, empty.
    fn prepare<B: Backend>(
        backend: &B,
        spec: &WorkloadSpec,
        _k: &Self::Spec,
        scratch: &mut ScratchDir,
        events: &Sender<EngineEvent>,
        cancel: &CancelToken,
    ) -> Result<Vec<WorkerPlan>, PrepareStop> {
        let _ = events.send(EngineEvent::Preparing {
            files: spec.common.threads,
            bytes_per_file: 0,
        });
        let dir = scratch.dir().clone();
        let mut plans = Vec::with_capacity(spec.common.threads as usize);
        for thread in 0..spec.common.threads {
            let [first, second] = segment_names(thread);
            let first = scratch.file(&first);
            let second = scratch.file(&second);
            if let Err(e) = backend.create(&dir, &first, &empty_layout(spec, thread), cancel) {
                let site = IoSite {
                    kind: spec.kind(),
                    dir: &dir,
                    name: &first,
                };
                return Err(PrepareStop::after_io(site, "create", &e, cancel));
            }
            plans.push(WorkerPlan {
                thread,
                dir: dir.clone(),
                // The segment it writes first, then the name of the next one.
                files: vec![first, second],
                start_block: 0,
                base: 0,
                device: None,
            });
        }
        dir.sync();
        Ok(plans)
    }

    fn work<B: Backend>(
        plans: &Vec<WorkerPlan>,
        backend: &B,
        spec: &WorkloadSpec,
        k: &Self::Spec,
        w: Worker<'_>,
    ) -> WorkerOutput {
        run_appender(backend, spec, k, &plans[w.thread as usize], w)
    }

    fn space_needed(spec: &WorkloadSpec, k: &Self::Spec) -> u64 {
        // The segment being written, and the one being replaced while a switch runs.
        u64::from(spec.common.threads).saturating_mul(k.segment_size.saturating_mul(2))
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
}

/// What a writer holds from before the gate.
struct Log<F, D> {
    file: F,
    dirops: D,
    buf: AlignedBuf,
    durable: PendingStarts,
    /// The segments' names as C strings (for removing one), indexed as the plan's files.
    names: [CString; 2],
    rotate: OpStats,
    /// A crash test's records written and not yet synced.
    unacked: Vec<Ack>,
}

/// Runs one writer to its stop condition.
fn run_appender<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    k: &crate::spec::kinds::append::Spec,
    plan: &WorkerPlan,
    w: Worker<'_>,
) -> WorkerOutput {
    let acking = w.acks.is_some();
    let open = || {
        let first = WorkerPlan {
            files: vec![plan.files[0].clone()],
            ..plan.clone()
        };
        let file = open_plan_files(backend, spec, &first).map(|mut f| f.remove(0));
        let names = plan
            .files
            .iter()
            .map(|n| CString::new(n.as_bytes()).unwrap_or_default());
        let names: Vec<CString> = names.collect();
        let record = k.record_size as usize;
        file.map(|file| Log {
            file,
            dirops: backend.dir_ops(plan.thread),
            buf: AlignedBuf::new(record, mix(spec.common.seed ^ u64::from(plan.thread))),
            durable: PendingStarts::new(spec, 1),
            names: [names[0].clone(), names[1].clone()],
            rotate: OpStats::preallocated("rotate"),
            unacked: Vec::with_capacity(if acking {
                k.sync_every as usize + 1
            } else {
                0
            }),
        })
    };
    run_worker(backend, w, open, |log, t| {
        let counts = append_loop(backend, spec, k, plan, log, t);
        let rotate = std::mem::replace(&mut log.rotate, OpStats::new("rotate"));
        if rotate.count > 0 {
            t.out.ops = vec![rotate];
        }
        counts
    })
}

/// Appends records (a sync every `sync_every`) until the stop rule ends it.
fn append_loop<B: Backend, C: Clock>(
    backend: &B,
    spec: &WorkloadSpec,
    k: &crate::spec::kinds::append::Spec,
    plan: &WorkerPlan,
    log: &mut Log<B::File, B::Dir>,
    t: &mut Timed<'_, C>,
) -> Counts {
    let record = k.record_size;
    let segment = k.segment_size;
    let durable_writes = durable_op(spec) == Ok(DurableOp::Write);
    let sync_every = if durable_writes || k.sync == SyncMethod::None {
        0
    } else {
        u64::from(k.sync_every)
    };
    let counted = matches!(spec.stop_rule(), StopRule::TotalRequests(_));
    let stamp = (u64::from(plan.thread) << 48) ^ mix(spec.common.seed);
    let (mut c, mut now) = (Counts::default(), t.start_ns);
    let (mut offset, mut pending, mut current) = (0u64, 0u64, 0usize);
    loop {
        if t.request_denied(now, counted) {
            break;
        }
        if offset.saturating_add(record) > segment {
            // The segment is full: what it holds must be durable before it is replaced.
            if pending > 0 && !sync_now(spec, k, plan, log, t, &mut c, current, &mut pending) {
                break;
            }
            match switch_segment(backend, spec, k, plan, log, t, current) {
                Ok(next) => (current, offset) = (next, 0),
                Err(()) => break,
            }
        }
        // A crash test's record is whole: its identity and a checksum.
        let id = t.acks.map(|sink| RecordId {
            run: sink.run(),
            thread: plan.thread,
            seq: c.writes,
            version: 0,
        });
        match &id {
            Some(id) => log.buf.fill_with(|bytes| {
                fill_record(bytes, id);
            }),
            None => log.buf.stamp(offset ^ stamp, c.writes),
        }
        let t0 = t.clock.now_ns();
        let written = log.file.write_at(log.buf.as_slice(), offset);
        let t1 = t.clock.now_ns();
        if let Err(e) = written {
            fail(t, spec, plan, current, ("write", Some(offset)), &e);
            break;
        }
        let write_ns = t1.saturating_sub(t0);
        t.out.write_lat.record(write_ns);
        t.live.write_buckets.record(write_ns);
        if durable_writes {
            t.out.durable_lat.record(write_ns);
        } else {
            log.durable.push(0, t0);
        }
        bump(&t.live.writes, 1);
        if let (Some(sink), Some(id)) = (t.acks, id) {
            let ack = Ack {
                id,
                file: plan.thread,
                offset,
                len: record as u32,
            };
            // Durable when written (O_SYNC/O_DSYNC), else when its sync returns.
            if sync_every == 0 {
                if let Err(e) = sink.ack(&ack) {
                    fail(t, spec, plan, current, ("acknowledge", None), &e);
                    break;
                }
            } else {
                log.unacked.push(ack);
            }
        }
        (c.writes, c.bytes, c.busy_ns) = (c.writes + 1, c.bytes + record, c.busy_ns + write_ns);
        (offset, pending, now) = (offset + record, pending + 1, t1);
        if sync_every != 0 && pending >= sync_every {
            if !sync_now(spec, k, plan, log, t, &mut c, current, &mut pending) {
                break;
            }
            now = t.clock.now_ns();
        }
    }
    c
}

/// Syncs the current segment: its pending records become durable. False on an error (in
/// `t.out.error`).
#[allow(clippy::too_many_arguments)]
fn sync_now<F: SyncFile, D, C: Clock>(
    spec: &WorkloadSpec,
    k: &crate::spec::kinds::append::Spec,
    plan: &WorkerPlan,
    log: &mut Log<F, D>,
    t: &mut Timed<'_, C>,
    c: &mut Counts,
    current: usize,
    pending: &mut u64,
) -> bool {
    let t1 = t.clock.now_ns();
    let synced = log.file.sync(k.sync);
    let t2 = t.clock.now_ns();
    if let Err(e) = synced {
        fail(t, spec, plan, current, (k.sync.as_str(), None), &e);
        return false;
    }
    log.durable.settle_all(0, t2, &mut t.out.durable_lat);
    if let Some(sink) = t.acks {
        let acked = log.unacked.drain(..).try_for_each(|ack| sink.ack(&ack));
        if let Err(e) = acked {
            fail(t, spec, plan, current, ("acknowledge", None), &e);
            return false;
        }
    }
    record_sync(&mut t.out.sync_lat, t.live, t2.saturating_sub(t1));
    c.syncs += 1;
    c.busy_ns += t2.saturating_sub(t1);
    *pending = 0;
    true
}

/// Starts the next segment: creates it empty, opens it, removes the full one. Returns the
/// index of the new segment's name; `Err` with the error in `t.out.error`.
fn switch_segment<B: Backend, C: Clock>(
    backend: &B,
    spec: &WorkloadSpec,
    k: &crate::spec::kinds::append::Spec,
    plan: &WorkerPlan,
    log: &mut Log<B::File, B::Dir>,
    t: &mut Timed<'_, C>,
    current: usize,
) -> Result<usize, ()> {
    let next = 1 - current;
    let t0 = t.clock.now_ns();
    let layout = empty_layout(spec, plan.thread);
    let step = backend
        .create(&plan.dir, &plan.files[next], &layout, &CancelToken::new())
        .map_err(|e| ("create", e))
        .and_then(|()| {
            backend
                .open(&plan.dir, &plan.files[next], k.open_flags, plan.thread)
                .map_err(|e| ("open", e))
        })
        .and_then(|file| {
            log.file = file;
            let old = &log.names[current];
            log.dirops.unlink_at(&plan.dir, old).map_err(|e| ("unlink", e))
        });
    if let Err((op, e)) = step {
        let name = if op == "unlink" { current } else { next };
        fail(t, spec, plan, name, (op, None), &e);
        return Err(());
    }
    let t1 = t.clock.now_ns();
    log.rotate.record(t1.saturating_sub(t0), 0);
    Ok(next)
}

/// Ends the writer on `e`: `op` (at `offset`) failed on segment `file` of its plan.
fn fail<C: Clock>(
    t: &mut Timed<'_, C>,
    spec: &WorkloadSpec,
    plan: &WorkerPlan,
    file: usize,
    (op, offset): (&str, Option<u64>),
    e: &std::io::Error,
) {
    let site = plan.site(spec, &plan.files[file]);
    t.out.error = Some(failed_io(site, op, offset, e));
}

#[cfg(test)]
#[path = "append_tests.rs"]
mod tests;
