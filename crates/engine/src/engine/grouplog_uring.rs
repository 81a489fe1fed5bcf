//! grouplog's `uring` strategy: each writer has its own io_uring and submits its record
//! write with its flush linked behind it (`IOSQE_IO_LINK`) in one `io_uring_enter`, then
//! waits for both. The application does no group commit of its own: writers never wait
//! for each other, and the batching is the filesystem's (concurrent fdatasyncs joining
//! one journal commit), as with databases that give each backend its own ring
//! (PostgreSQL's AIO) rather than share one ring behind a lock. io_uring runs the
//! blocking flush in an io-wq kernel thread, not in the writer's thread.

use super::GroupLog;
use crate::engine::file::{Backend, Clock, Ring, RingOp, RingSetup};
use crate::engine::harness::{Counts, Timed, Worker, WorkerOutput, record_sync, run_worker};
use crate::engine::offsets::mix;
use crate::engine::scratch::{failed_io, io_failure};
use crate::engine::worker::{WorkerPlan, open_plan_files};
use crate::metrics::{OpStats, bump};
use crate::spec::{StopRule, WorkloadSpec};

const WRITE: u64 = 0;
const SYNC: u64 = 1;

/// Runs one `uring` writer of the shared log.
pub(super) fn run_uring_writer<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    k: &crate::spec::kinds::grouplog::Spec,
    log: &GroupLog,
    plan: WorkerPlan,
    w: Worker<'_>,
) -> WorkerOutput {
    let open = || {
        let files = open_plan_files(backend, spec, &plan)?;
        let setup = RingSetup {
            depth: 2,
            block_size: k.record_size as usize,
            fixed_buffers: false,
            seed: mix(spec.common.seed ^ u64::from(plan.thread)),
        };
        let ring = backend
            .ring(&files, setup, plan.thread)
            .map_err(|e| io_failure(plan.site(spec, &log.name), "set up io_uring for", None, &e))?;
        let ops = [
            OpStats::preallocated("commit"),
            OpStats::preallocated("wait"),
        ];
        Ok((ring, files, ops))
    };
    run_worker(backend, w, open, |(ring, _files, [commit, wait]), t| {
        let counts = append_loop(spec, k, log, &plan, ring, [commit, wait], t);
        super::finish_writer(log, t, Some(counts.syncs), [commit, wait]);
        counts
    })
}

/// Submits one record and its linked flush, waits for both; returns (write completed,
/// flush completed) on the worker's clock, or the failing call and its error.
fn commit_one<R: Ring, C: Clock>(
    ring: &mut R,
    k: &crate::spec::kinds::grouplog::Spec,
    offset: u64,
    clock: &C,
) -> Result<(u64, u64), (&'static str, std::io::Error)> {
    let len = k.record_size as u32;
    let sync = RingOp::Sync {
        file: 0,
        method: k.sync,
    };
    let (mut written, mut linked) = (0u32, true);
    let (mut t_write, mut t_sync) = (None, None);
    let write = |skip: u32| RingOp::Write {
        file: 0,
        slot: 0,
        offset: offset + u64::from(skip),
        skip,
        len: len - skip,
    };
    let io = |e: std::io::Error| ("io_uring_enter", e);
    ring.queue(write(0), WRITE, true).map_err(io)?;
    ring.queue(sync, SYNC, false).map_err(io)?;
    while t_sync.is_none() {
        ring.submit(1).map_err(io)?;
        let now = clock.now_ns();
        while let Some((user_data, result)) = ring.next_completion() {
            let retry = result == -libc::EAGAIN || result == -libc::EINTR;
            match (user_data, result) {
                (WRITE, r) if r > 0 && written + r as u32 == len => {
                    written = len;
                    t_write = Some(now);
                    if !linked {
                        ring.queue(sync, SYNC, false).map_err(io)?;
                    }
                }
                (WRITE, r) if retry || r > 0 => {
                    // Short or interrupted: write the rest, then flush unlinked (the
                    // linked flush was cancelled).
                    written += r.max(0) as u32;
                    linked = false;
                    ring.queue(write(written), WRITE, false).map_err(io)?;
                }
                (WRITE, r) => return Err(("write", errno(r))),
                (SYNC, r) if r == -libc::ECANCELED => linked = false,
                (SYNC, _) if retry => ring.queue(sync, SYNC, false).map_err(io)?,
                (SYNC, r) if r < 0 => return Err((k.sync.as_str(), errno(r))),
                (_, _) => t_sync = Some(now),
            }
        }
    }
    let t_sync = t_sync.unwrap_or_default();
    Ok((t_write.unwrap_or(t_sync), t_sync))
}

fn errno(result: i32) -> std::io::Error {
    if result == 0 {
        std::io::Error::from(std::io::ErrorKind::WriteZero)
    } else {
        std::io::Error::from_raw_os_error(-result)
    }
}

/// Appends records, each made durable before the next, until the stop rule ends it.
fn append_loop<R: Ring, C: Clock>(
    spec: &WorkloadSpec,
    k: &crate::spec::kinds::grouplog::Spec,
    log: &GroupLog,
    plan: &WorkerPlan,
    ring: &mut R,
    [commit, wait]: [&mut OpStats; 2],
    t: &mut Timed<'_, C>,
) -> Counts {
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
        let shape = (record_size, records_in_log);
        let ack = super::fill(ring.buffer(0), t.acks, plan.thread, (seq, offset), shape);
        let t0 = t.clock.now_ns();
        let (t1, t2) = match commit_one(ring, k, offset, &t.clock) {
            Ok(times) => times,
            Err((op, e)) => {
                let at = (op == "write").then_some(offset);
                t.out.error = Some(failed_io(plan.site(spec, &log.name), op, at, &e));
                break;
            }
        };
        let write_ns = t1.saturating_sub(t0);
        t.out.write_lat.record(write_ns);
        t.live.write_buckets.record(write_ns);
        bump(&t.live.writes, 1);
        record_sync(&mut t.out.sync_lat, t.live, t2.saturating_sub(t1));
        commit.record(t2.saturating_sub(t0), record_size);
        wait.record(t2.saturating_sub(t1), 0);
        c.writes += 1;
        c.syncs += 1;
        c.busy_ns += t2.saturating_sub(t0);
        now = t2;
        if let Err(e) = super::acknowledge(t.acks, ack.as_ref()) {
            t.out.error = Some(failed_io(plan.site(spec, "marks"), "acknowledge", None, &e));
            break;
        }
    }
    c.bytes = c.writes * record_size;
    c
}
