//! One run in its scratch directory, generic over the workload [`Kind`]: preflight
//! (warnings, free space), preparation, spawn-and-sample (the workers behind the start
//! gate, the interval sampler on this thread), device accounting (the flush counters
//! before and after) and aggregation (per-worker figures merged into a [`RunResult`]).

use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::api::{CancelToken, EngineError, EngineEvent, RunContext};
use super::clock::monotonic_ns;
use super::file::{Backend, Clock};
use super::gate::{ArrivalGuard, StartGate};
use super::harness::{Live, PrepareStop, Shared, Worker, WorkerOutput, merge_phases};
use super::kind::Kind;
use super::sampler::Sampler;
use super::scratch::{ScratchDir, free_bytes};
use crate::metrics::{
    DeviceAccounting, DeviceCounters, LatencyHistogram, RunResult, RunStatus, RunWarning, Warning,
};
use crate::probe::{BlockStat, DeviceInfo, NoDevice};
use crate::spec::DurableOp;
use crate::spec::{StopRule, WorkloadSpec};

/// Runs `spec` as kind `K` in `scratch` (already created).
pub(crate) fn run_in_scratch<K: Kind, B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    k: &K::Spec,
    ctx: &RunContext,
    scratch: &mut ScratchDir,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<RunResult, EngineError> {
    let warnings = preflight::<K>(spec, k, ctx, free_bytes(scratch.dir()));
    let plan = match K::prepare(backend, spec, k, scratch, events, cancel) {
        Ok(p) => p,
        Err(PrepareStop::Cancelled) => {
            return Ok(empty_result(spec, ctx, RunStatus::Cancelled, warnings));
        }
        Err(PrepareStop::Error(e)) => return Err(e),
    };
    let place = Place {
        dir: Some(scratch.dir()),
        warnings,
    };
    run_planned::<K, B>(backend, spec, k, ctx, &plan, place, events, cancel)
}

/// Runs `spec` as kind `K` with its workers planned by the caller on a bare block device
/// (nothing to prepare: no directory, no files).
pub(crate) fn run_on_device<K: Kind, B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    k: &K::Spec,
    ctx: &RunContext,
    plan: &K::Plan,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<RunResult, EngineError> {
    let place = Place {
        dir: None,
        warnings: preflight::<K>(spec, k, ctx, None),
    };
    run_planned::<K, B>(backend, spec, k, ctx, plan, place, events, cancel)
}

/// Where a prepared run happens: its directory (none on a bare device) and the warnings
/// known so far.
struct Place<'a> {
    dir: Option<&'a super::dirfd::DirHandle>,
    warnings: Vec<Warning>,
}

/// Settles (when the spec asks), then spawns, samples and aggregates a prepared run.
#[allow(clippy::too_many_arguments)]
fn run_planned<K: Kind, B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    k: &K::Spec,
    ctx: &RunContext,
    plan: &K::Plan,
    place: Place<'_>,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<RunResult, EngineError> {
    let mut warnings = place.warnings;
    if spec.common.settle {
        let settled = super::settle::settle(
            backend,
            ctx,
            place.dir,
            crate::probe::SettleRule::default(),
            cancel,
        );
        warnings.extend(settled.warning.map(Warning::from));
    }
    let lives: Vec<Live> = (0..spec.common.threads).map(|_| Live::default()).collect();
    let mut device = DeviceProbe::before(ctx);
    if spec.warmup_ns() == 0 {
        device.open_window(events);
    }
    let mut sampler = Sampler::new(
        &lives,
        K::bytes_per_write(spec, k),
        device.stat_path(),
        K::measures_depth(spec, k),
    );
    let spawned = spawn_and_sample::<K, B>(
        backend,
        spec,
        k,
        ctx,
        plan,
        &lives,
        &mut sampler,
        &mut device,
        events,
        cancel,
    );
    let device = device.after(&mut warnings, events);

    if let Some(e) = spawned.spawn_error {
        return Err(EngineError::Spawn {
            threads: spec.common.threads,
            source: e,
        });
    }
    let mut outs = Vec::with_capacity(spawned.joined.len());
    for j in spawned.joined {
        match j {
            Ok(out) => outs.push(out),
            Err(_) => {
                return Err(EngineError::Internal(crate::metrics::Bug::WorkerPanicked));
            }
        }
    }
    if let Some(message) = outs.iter().find_map(|o| o.open_error.clone()) {
        return Err(EngineError::Open(message));
    }
    if spawned.cancelled && !outs.iter().any(|o| o.started) {
        return Ok(empty_result(spec, ctx, RunStatus::Cancelled, warnings));
    }
    let mut result = aggregate(spec, ctx, &outs, spawned.cancelled, warnings);
    result.started_at_ms = spawned.started_at_ms;
    result.intervals = sampler.into_samples();
    result.device = device;
    result.group = K::group_stats(plan, spec, k);
    Ok(result)
}

/// The warnings known before anything is written: the probe's, the kind's, and low
/// free space on the target (`free` bytes, when it has a filesystem).
fn preflight<K: Kind>(
    spec: &WorkloadSpec,
    k: &K::Spec,
    ctx: &RunContext,
    free: Option<u64>,
) -> Vec<Warning> {
    let mut warnings = ctx.system.warnings.clone();
    warnings.extend(
        K::warnings(spec, k, &ctx.system)
            .into_iter()
            .map(Warning::from),
    );
    let needed = K::space_needed(spec, k);
    if let Some(free) = free
        && needed > free
    {
        warnings.push(RunWarning::LowSpace { needed, free }.into());
    }
    warnings
}

/// What spawn-and-sample leaves for aggregation.
struct Spawned {
    /// Every started worker's output (or its panic).
    joined: Vec<std::thread::Result<WorkerOutput>>,
    /// Wall-clock start of the timed part (ms since the epoch; 0 if it never started).
    started_at_ms: i64,
    /// The run was cancelled (before or during its timed part).
    cancelled: bool,
    /// A worker thread could not be spawned.
    spawn_error: Option<std::io::Error>,
}

/// Spawns one worker per thread, opens the start gate once all have arrived (or aborts
/// it), then samples the live counters every interval until every worker is done.
#[allow(clippy::too_many_arguments)]
fn spawn_and_sample<K: Kind, B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    k: &K::Spec,
    ctx: &RunContext,
    plan: &K::Plan,
    lives: &[Live],
    sampler: &mut Sampler<'_>,
    device: &mut DeviceProbe<'_>,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Spawned {
    let stop_rule = spec.stop_rule();
    let shared = Shared::new(stop_rule);
    let gate = StartGate::new();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let mut spawned = Spawned {
        joined: Vec::new(),
        started_at_ms: 0,
        cancelled: false,
        spawn_error: None,
    };
    let records_durable = matches!(
        crate::spec::durable_op(spec),
        Ok(DurableOp::Write | DurableOp::WriteThenSync | DurableOp::File)
    );
    spawned.joined = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(spec.common.threads as usize);
        for thread in 0..spec.common.threads {
            let done = done_tx.clone();
            let (shared, gate) = (&shared, &gate);
            let live = &lives[thread as usize];
            let worker = std::thread::Builder::new()
                .name(format!("fsynclab-w{thread}"))
                .spawn_scoped(scope, move || {
                    let mut guard = ArrivalGuard {
                        gate,
                        arrived: false,
                        done,
                    };
                    let w = Worker {
                        thread,
                        shared,
                        live,
                        gate,
                        arrived: &mut guard.arrived,
                        dense_latency: K::DENSE_LATENCY,
                        records_durable,
                        acks: ctx.acks.as_deref(),
                    };
                    K::work(plan, backend, spec, k, w)
                });
            match worker {
                Ok(h) => handles.push(h),
                Err(e) => {
                    spawned.spawn_error = Some(e);
                    break;
                }
            }
        }
        // Only the workers hold senders now: when they are all gone, recv reports it.
        drop(done_tx);
        gate.wait_for(handles.len());
        if spawned.spawn_error.is_some()
            || shared.stop.0.load(Ordering::Relaxed)
            || cancel.is_cancelled()
        {
            spawned.cancelled = cancel.is_cancelled();
            gate.abort();
            return handles.into_iter().map(|h| h.join()).collect::<Vec<_>>();
        }
        // One deadline for the whole run, from the gate opening, on the workers' clock.
        shared.set_deadline(
            stop_rule,
            backend.clock(spec.common.threads).now_ns(),
            spec.warmup_ns(),
        );
        gate.open();
        let start = Instant::now();
        let start_ns = monotonic_ns();
        spawned.started_at_ms = now_ms();
        let _ = events.send(EngineEvent::Started {
            run_id: ctx.run_id,
            threads: spec.common.threads,
            // A warm-up's writes come on top of the measured ones: no known total then.
            expected_writes: K::expected_writes(spec, k).filter(|_| spec.warmup_ns() == 0),
            duration: match stop_rule {
                StopRule::Duration(d) => Some(d),
                _ => None,
            },
            warmup: (spec.warmup_ns() > 0).then(|| Duration::from_nanos(spec.warmup_ns())),
            at_ns: start_ns,
        });
        let run = Sampling {
            spec,
            shared: &shared,
            start,
            done_rx: &done_rx,
            events,
            cancel,
        };
        spawned.cancelled = sample_until_done(&run, sampler, device);
        handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
    });
    spawned
}

/// What the coordinator samples while the workers run.
struct Sampling<'a> {
    spec: &'a WorkloadSpec,
    shared: &'a Shared,
    /// When the start gate opened.
    start: Instant,
    done_rx: &'a mpsc::Receiver<()>,
    events: &'a Sender<EngineEvent>,
    cancel: &'a CancelToken,
}

/// Samples every interval until every worker has reported done; a cancel sets the
/// workers' stop flag. At the end of a warm-up the device counters are read again, so
/// the run's flushes count from there like its syncs. Returns whether the run was
/// cancelled.
fn sample_until_done(
    run: &Sampling<'_>,
    sampler: &mut Sampler<'_>,
    device: &mut DeviceProbe<'_>,
) -> bool {
    let Sampling {
        spec,
        shared,
        start,
        done_rx,
        events,
        cancel,
    } = *run;
    let mut cancelled = false;
    let tick = Duration::from_millis(spec.common.interval_ms);
    let mut next_tick = start + tick;
    let mut warm_end =
        (spec.warmup_ns() > 0).then(|| start + Duration::from_nanos(spec.warmup_ns()));
    loop {
        let wake = warm_end.map_or(next_tick, |w| w.min(next_tick));
        let wait = wake.saturating_duration_since(Instant::now());
        match done_rx.recv_timeout(wait) {
            Ok(()) => {}
            Err(RecvTimeoutError::Timeout) => {
                if let Some(w) = warm_end
                    && Instant::now() >= w
                {
                    device.rebase();
                    device.open_window(events);
                    warm_end = None;
                }
                if Instant::now() >= next_tick {
                    let sample = sampler.sample(start.elapsed());
                    let _ = events.send(EngineEvent::Interval(sample));
                    next_tick += tick;
                }
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if !cancelled && cancel.is_cancelled() {
            cancelled = true;
            shared.stop.0.store(true, Ordering::Relaxed);
        }
    }
    let last = sampler.sample(start.elapsed());
    if last.dur_ms > 0 || last.writes > 0 || last.syncs > 0 {
        // The final, partial window (also kept by the sampler).
        let _ = events.send(EngineEvent::Interval(last));
    }
    cancelled
}

/// Merges the workers' outputs into a result (intervals, device, group stats and start
/// time are filled in by the caller).
fn aggregate(
    spec: &WorkloadSpec,
    ctx: &RunContext,
    outs: &[WorkerOutput],
    cancelled: bool,
    warnings: Vec<Warning>,
) -> RunResult {
    let mut result = empty_result(spec, ctx, RunStatus::Finished, warnings);
    let ran = || outs.iter().filter(|o| o.started);
    let start_ns = ran().map(|o| o.start_ns).min().unwrap_or(0);
    let end_ns = ran().map(|o| o.end_ns).max().unwrap_or(start_ns);
    result.ops = crate::metrics::merge_ops(outs.iter().map(|o| o.ops.as_slice()));
    result.phases = merge_phases(outs);
    let mut durable = LatencyHistogram::new();
    for out in outs {
        result.write_lat.merge(&out.write_lat);
        result.sync_lat.merge(&out.sync_lat);
        durable.merge(&out.durable_lat);
        result.writes += out.stats.writes;
        result.syncs += out.stats.syncs + out.extra_syncs;
        result.bytes += out.stats.bytes;
        if result.error.is_none() {
            result.error = out.error.clone().map(Into::into);
        }
        let mut stats = out.stats.clone();
        stats.wall_ns = if out.started {
            out.end_ns.saturating_sub(start_ns)
        } else {
            0
        };
        result.threads.push(stats);
    }
    result.durable_lat = match crate::spec::durable_op(spec) {
        // A record's commit latency runs from its append to its acknowledgement.
        Ok(DurableOp::Commit) => Some(
            result
                .ops
                .iter()
                .find(|o| o.op == "commit")
                .map(|o| o.lat.clone())
                .unwrap_or_default(),
        ),
        Ok(_) => Some(durable),
        Err(_) => None,
    };
    result.wall_ns = end_ns.saturating_sub(start_ns);
    result.status = if result.error.is_some() {
        RunStatus::Failed
    } else if cancelled {
        RunStatus::Cancelled
    } else {
        RunStatus::Finished
    };
    result
}

/// Why the counters of `device` are missing: reading them failed with `e`.
fn unreadable(device: &DeviceInfo, e: &crate::probe::ProbeError) -> NoDevice {
    NoDevice::CountersUnreadable {
        device: device.name.clone(),
        errno: crate::probe::probe_errno(e),
    }
}

/// The target's device (and the device under a loop image) with their counters read
/// before the run, and when: the window the kernel tracer is told to count in
/// ([`EngineEvent::CountingFrom`], [`EngineEvent::CountingUntil`]), so its flushes and the
/// counters' cover the same time (the settle step's syncfs and a warm-up left out of both).
struct DeviceProbe<'a> {
    device: Option<&'a DeviceInfo>,
    before: Result<BlockStat, NoDevice>,
    backing: Option<(&'a DeviceInfo, BlockStat)>,
    /// When the target's counters were last read, CLOCK_MONOTONIC ns.
    read_ns: u64,
    /// Whether `CountingFrom` was sent.
    window_open: bool,
}

impl<'a> DeviceProbe<'a> {
    /// Reads the counters before the run.
    fn before(ctx: &'a RunContext) -> Self {
        let device = ctx.system.device.as_ref();
        let before = match device {
            Some(d) => crate::probe::read_blockstat(d).map_err(|e| unreadable(d, &e)),
            None => Err(
                match ctx.system.device_note.as_ref().and_then(|n| n.typed()) {
                    Some(reason) => reason.clone(),
                    None => NoDevice::Unknown,
                },
            ),
        };
        let read_ns = monotonic_ns();
        let backing = ctx.system.backing_device.as_ref().and_then(|d| {
            crate::probe::read_blockstat(d)
                .ok()
                .map(|before| (d, before))
        });
        Self {
            device,
            before,
            backing,
            read_ns,
            window_open: false,
        }
    }

    /// Tells the tracer the figures count from the last reading (once: right after the
    /// first reading, or at the end of a warm-up, or at the end of a run that ended in its
    /// warm-up, whose counters were never read again).
    fn open_window(&mut self, events: &Sender<EngineEvent>) {
        if !self.window_open {
            self.window_open = true;
            let _ = events.send(EngineEvent::CountingFrom {
                at_ns: self.read_ns,
            });
        }
    }

    /// Reads the counters again: the run's device figures count from now (the end of a
    /// warm-up). A counter that cannot be read now keeps its earlier reading.
    fn rebase(&mut self) {
        if let (Some(d), Ok(before)) = (self.device, &mut self.before)
            && let Ok(now) = crate::probe::read_blockstat(d)
        {
            *before = now;
        }
        self.read_ns = monotonic_ns();
        if let Some((d, before)) = &mut self.backing
            && let Ok(now) = crate::probe::read_blockstat(d)
        {
            *before = now;
        }
    }

    /// The stat file the sampler reads flushes from, when the counters are readable.
    fn stat_path(&self) -> Option<std::path::PathBuf> {
        self.device
            .filter(|_| self.before.is_ok())
            .map(|d| d.stat_path.clone())
    }

    /// Reads the counters after the run and accounts for the difference (telling the
    /// tracer the window ends here); a device that does not count flushes adds a warning.
    fn after(
        mut self,
        warnings: &mut Vec<Warning>,
        events: &Sender<EngineEvent>,
    ) -> DeviceAccounting {
        self.open_window(events);
        let after = self.device.map(crate::probe::read_blockstat);
        let _ = events.send(EngineEvent::CountingUntil {
            at_ns: monotonic_ns(),
        });
        let backing = self.backing.and_then(|(d, before)| {
            crate::probe::read_blockstat(d)
                .ok()
                .map(|after| DeviceCounters {
                    device: d.name.clone(),
                    before,
                    after,
                })
        });
        match (self.before, after, self.device) {
            (Ok(mut before), Some(Ok(mut after)), Some(d)) => {
                if !counts_flushes(&d.name) {
                    // Bio-based stacking drivers pass flushes down without counting them: a
                    // 0 would look like perfect group commit. Say "not reported" instead.
                    before.flush_ios = None;
                    after.flush_ios = None;
                    warnings.push(
                        RunWarning::FlushesNotCounted {
                            device: d.name.clone(),
                        }
                        .into(),
                    );
                }
                DeviceAccounting::Measured {
                    counters: DeviceCounters {
                        device: d.name.clone(),
                        before,
                        after,
                    },
                    backing,
                }
            }
            (Err(reason), _, _) => DeviceAccounting::Unavailable {
                reason: reason.into(),
            },
            (_, Some(Err(e)), Some(d)) => DeviceAccounting::Unavailable {
                reason: unreadable(d, &e).into(),
            },
            _ => DeviceAccounting::Unavailable {
                reason: NoDevice::Unknown.into(),
            },
        }
    }
}

/// Whether the device's stat file counts flushes (request-based queues do; device-mapper
/// and md pass them to the disks below).
fn counts_flushes(name: &str) -> bool {
    !(name.starts_with("dm-") || name.starts_with("md"))
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

/// A result with nothing measured (a run cancelled before its timed part).
fn empty_result(
    spec: &WorkloadSpec,
    ctx: &RunContext,
    status: RunStatus,
    warnings: Vec<Warning>,
) -> RunResult {
    RunResult {
        id: ctx.run_id,
        status,
        error: None,
        spec: spec.clone(),
        system: ctx.system.clone(),
        started_at_ms: now_ms(),
        wall_ns: 0,
        writes: 0,
        syncs: 0,
        bytes: 0,
        write_lat: LatencyHistogram::new(),
        sync_lat: LatencyHistogram::new(),
        durable_lat: None,
        intervals: Vec::new(),
        threads: Vec::new(),
        device: DeviceAccounting::Unavailable {
            reason: NoDevice::CancelledBeforeStart.into(),
        },
        warnings,
        noise: None,
        ops: Vec::new(),
        phases: Vec::new(),
        group: None,
        reported: None,
        kernel_trace: None,
    }
}
