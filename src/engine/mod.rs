//! The workload engine: the only code that touches test files.
//!
//! [`run`] prepares the files in a private scratch directory, starts the workers together,
//! samples their lock-free counters every interval (with the device's flush counter), and
//! returns a [`RunResult`]. Errors during the timed part end the run with status `failed`
//! and keep what was measured; errors before it are an [`EngineError`].

mod clock;
mod dirfd;
mod fake;
mod file;
mod fileio;
mod fileserver;
mod fileserver_mix;
mod gate;
mod grouplog;
mod kinds;
mod offsets;
mod sampler;
mod scratch;
mod smallfiles;
mod sysbench;
mod target;
mod worker;

pub use clock::{clock_source, monotonic_ns};
pub use dirfd::{DirHandle, RunDirIds, is_run_dir_name, remove_run_dir};
pub use fake::{FakeBackend, FakeClock, FakeFile, fake_run};
pub use file::{
    AlignedBuf, BUFFER_ALIGN, Backend, Clock, RealBackend, RealClock, RealFile, SyncFile,
    fill_pattern, open_flag_bits,
};
pub use fileserver::open_files_per_client;
pub use offsets::BlockOrder;
pub use scratch::{ScratchDir, check_target, describe_io_error, free_bytes};
pub use target::{PSEUDO_FILESYSTEMS, pseudo_fs};

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::metrics::{DeviceAccounting, DeviceCounters, LatencyHistogram, RunResult, RunStatus};
use crate::probe::{BlockStat, SystemInfo};
use crate::spec::{SpecError, StopRule, WorkloadSpec, format_size};
use gate::{ArrivalGuard, StartGate};
use sampler::Sampler;
use worker::{Live, Shared};

/// Why a run could not start (nothing was measured).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The spec is invalid.
    #[error("invalid workload: {0}")]
    Spec(#[from] SpecError),
    /// The target cannot be used; the message names the problem and the fix.
    #[error("{0}")]
    Target(String),
    /// Creating or preparing the test files failed, or threads could not be started.
    #[error("{0}")]
    Prepare(String),
    /// A test file could not be opened with the requested flags (O_DIRECT unsupported,
    /// too many open files...); nothing was timed.
    #[error("{0}")]
    Open(String),
    /// A bug: a worker thread panicked.
    #[error("{0}")]
    Internal(String),
    /// A run directory could not be removed (or was refused for removal: not fsynclab's,
    /// a symlink, replaced); the message names it and why.
    #[error("{0}")]
    Cleanup(String),
}

impl EngineError {
    /// True when the user's input is at fault (exit code 2), not the run.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            EngineError::Spec(_) | EngineError::Target(_) | EngineError::Open(_)
        )
    }
}

/// Progress of a run, sent over a channel to the CLI or the GUI.
#[derive(Clone, Debug, PartialEq)]
pub enum EngineEvent {
    /// Test files are being created and prepared.
    Preparing {
        /// Number of files.
        files: u32,
        /// Size of each.
        bytes_per_file: u64,
    },
    /// The run's private directory was made (sent before anything is written in it): its
    /// device and inode, from the descriptor the run holds, for `fsynclab clean`.
    RunDirCreated {
        /// Device of the run directory.
        dev: u64,
        /// Inode of the run directory.
        ino: u64,
    },
    /// The timed part started.
    Started {
        /// Store id of the run.
        run_id: i64,
        /// Worker threads.
        threads: u32,
        /// Writes the run will do, when known in advance.
        expected_writes: Option<u64>,
        /// Planned duration of a time-based run.
        duration: Option<Duration>,
    },
    /// One interval sample.
    Interval(crate::metrics::IntervalSample),
    /// The run ended and was stored (or marked failed): sent by [`crate::lab`] alone, once
    /// per run it recorded, on every path; never by the engine.
    Finished {
        /// Store id of the run.
        run_id: i64,
        /// How it ended.
        status: RunStatus,
    },
}

/// Cancels a run from another thread (the CLI's Ctrl-C handler, the GUI's Cancel button).
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token not yet cancelled.
    pub fn new() -> Self {
        Self::default()
    }
    /// Asks the run to stop after the calls in flight.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    /// Whether cancel was asked.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Where and as what a run happens.
#[derive(Clone, Debug)]
pub struct RunContext {
    /// Store id of the run (names the scratch directory).
    pub run_id: i64,
    /// The directory the scratch directory is created in.
    pub target: PathBuf,
    /// Name of the run directory to create in `target` (`fsynclab-<digits>[-<digits>]`),
    /// recorded by the caller before the run; an existing one is an error. `None`: the
    /// engine picks `fsynclab-<run_id>`, or `-2`, `-3`... if that exists.
    pub dir_name: Option<String>,
    /// Run even when the target is writable by other users and not sticky
    /// (`--allow-shared-target`): the run warns loudly.
    pub allow_shared_target: bool,
    /// Keep the test files after the run (`--keep`).
    pub keep_files: bool,
    /// What the probe found; its device is the one whose counters are read.
    pub system: SystemInfo,
}

/// Runs `spec` on real files.
pub fn run(
    spec: &WorkloadSpec,
    ctx: &RunContext,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<RunResult, EngineError> {
    run_with(&RealBackend, spec, ctx, events, cancel)
}

/// Runs `spec` with any [`Backend`] (the real one, or the scripted fake in tests).
pub fn run_with<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    ctx: &RunContext,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<RunResult, EngineError> {
    spec.validate()?;
    let canonical = check_target(&ctx.target, ctx.allow_shared_target)?;
    run_in_target(backend, spec, ctx, &canonical, events, cancel)
}

/// Runs `spec` on real files in `ctx.target` when the caller has validated the spec and
/// checked the target with [`check_target`] (`ctx.target` is its canonical path):
/// `crate::lab` does both once per run, before the run is stored. The target is still
/// opened once without following links and re-checked through its descriptor.
pub(crate) fn run_checked(
    spec: &WorkloadSpec,
    ctx: &RunContext,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<RunResult, EngineError> {
    run_in_target(&RealBackend, spec, ctx, &ctx.target, events, cancel)
}

/// The run in the checked target `canonical`. No `Finished` here: `crate::lab` sends it
/// once the result is stored.
fn run_in_target<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    ctx: &RunContext,
    canonical: &std::path::Path,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<RunResult, EngineError> {
    let (target, shared_warning) =
        target::open_target(&ctx.target, canonical, ctx.allow_shared_target)?;
    let mut scratch = ScratchDir::create(target, ctx.run_id, ctx.dir_name.as_deref())?;
    let (dev, ino) = scratch.dev_ino();
    let _ = events.send(EngineEvent::RunDirCreated { dev, ino });
    let outcome = run_in_scratch(backend, spec, ctx, &mut scratch, events, cancel);
    let cleanup = if ctx.keep_files {
        Some(format!(
            "test files kept in {} (--keep)",
            scratch.path().display()
        ))
    } else {
        scratch.remove()
    };
    let mut result = outcome?;
    result.warnings.extend(shared_warning);
    result.warnings.extend(cleanup);
    Ok(result)
}

fn run_in_scratch<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    ctx: &RunContext,
    scratch: &mut ScratchDir,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<RunResult, EngineError> {
    let mut warnings = ctx.system.warnings.clone();
    warnings.extend(kinds::kind_warnings(spec, &ctx.system));
    let needed = kinds::space_needed(spec);
    if let Some(free) = free_bytes(scratch.dir())
        && needed > free
    {
        warnings.push(format!(
            "the test files need up to {} but {} is free on the target; the run may stop with 'no space left'",
            format_size(needed),
            format_size(free)
        ));
    }
    let prepared = match kinds::prepare(backend, spec, scratch, events, cancel) {
        Ok(p) => p,
        Err(kinds::PrepareStop::Cancelled) => {
            return Ok(empty_result(spec, ctx, RunStatus::Cancelled, warnings));
        }
        Err(kinds::PrepareStop::Error(e)) => return Err(e),
    };
    let stop_rule = spec.stop_rule();
    let shared = Shared::new(stop_rule);
    let lives: Vec<Live> = (0..spec.threads).map(|_| Live::default()).collect();
    let gate = StartGate::new();
    let device = ctx.system.device.as_ref();
    let before: Result<BlockStat, String> = match device {
        Some(d) => crate::probe::read_blockstat(d).map_err(|e| e.to_string()),
        None => Err(ctx
            .system
            .device_note
            .clone()
            .unwrap_or_else(|| NO_DEVICE.into())),
    };
    let backing_device = ctx.system.backing_device.as_ref();
    let backing_before = backing_device.and_then(|d| crate::probe::read_blockstat(d).ok());
    let mut sampler = Sampler::new(
        &lives,
        kinds::bytes_per_write(spec),
        device
            .filter(|_| before.is_ok())
            .map(|d| d.stat_path.clone()),
    );
    let expected_writes = kinds::expected_writes(spec);

    let (done_tx, done_rx) = mpsc::channel::<()>();
    let mut started_at_ms = 0i64;
    let mut cancelled = false;
    let mut spawn_error = None;
    let joined = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(spec.threads as usize);
        for thread in 0..spec.threads {
            let done = done_tx.clone();
            let (shared, gate, prepared) = (&shared, &gate, &prepared);
            let live = &lives[thread as usize];
            let spawned = std::thread::Builder::new()
                .name(format!("fsynclab-w{thread}"))
                .spawn_scoped(scope, move || {
                    let mut guard = ArrivalGuard {
                        gate,
                        arrived: false,
                        done,
                    };
                    let worker = kinds::Worker {
                        thread,
                        shared,
                        live,
                        gate,
                    };
                    prepared.work(backend, spec, worker, &mut guard.arrived)
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    spawn_error = Some(e);
                    break;
                }
            }
        }
        // Only the workers hold senders now: when they are all gone, recv reports it.
        drop(done_tx);
        gate.wait_for(handles.len());
        if spawn_error.is_some() || shared.stop.0.load(Ordering::Relaxed) || cancel.is_cancelled() {
            cancelled = cancel.is_cancelled();
            gate.abort();
            return handles.into_iter().map(|h| h.join()).collect::<Vec<_>>();
        }
        // One deadline for the whole run, from the gate opening, on the workers' clock.
        let gate_ns = if prepared.uses_backend_clock() {
            backend.clock(spec.threads).now_ns()
        } else {
            monotonic_ns()
        };
        shared.set_deadline(stop_rule, gate_ns);
        gate.open();
        let start = Instant::now();
        started_at_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or_default();
        let _ = events.send(EngineEvent::Started {
            run_id: ctx.run_id,
            threads: spec.threads,
            expected_writes,
            duration: match stop_rule {
                StopRule::Duration(d) => Some(d),
                _ => None,
            },
        });
        let tick = Duration::from_millis(spec.interval_ms);
        let mut next_tick = start + tick;
        loop {
            let wait = next_tick.saturating_duration_since(Instant::now());
            match done_rx.recv_timeout(wait) {
                Ok(()) => {}
                Err(RecvTimeoutError::Timeout) => {
                    let sample = sampler.sample(start.elapsed());
                    let _ = events.send(EngineEvent::Interval(sample));
                    next_tick += tick;
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
        handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
    });
    let after = device.map(crate::probe::read_blockstat);
    let backing = match (backing_device, backing_before) {
        (Some(d), Some(before)) => {
            crate::probe::read_blockstat(d)
                .ok()
                .map(|after| DeviceCounters {
                    device: d.name.clone(),
                    before,
                    after,
                })
        }
        _ => None,
    };

    if let Some(e) = spawn_error {
        return Err(EngineError::Prepare(format!(
            "cannot start {} worker threads ({e}); lower --threads",
            spec.threads
        )));
    }
    let mut outs = Vec::with_capacity(joined.len());
    for j in joined {
        match j {
            Ok(out) => outs.push(out),
            Err(_) => {
                return Err(EngineError::Internal(
                    "a worker thread panicked; this is a bug in fsynclab, please report it".into(),
                ));
            }
        }
    }
    if let Some(message) = outs.iter().find_map(|o| o.open_error.clone()) {
        return Err(EngineError::Open(message));
    }
    if cancelled && !outs.iter().any(|o| o.started) {
        return Ok(empty_result(spec, ctx, RunStatus::Cancelled, warnings));
    }

    let mut write_lat = LatencyHistogram::new();
    let mut sync_lat = LatencyHistogram::new();
    let (mut writes, mut syncs, mut bytes) = (0, 0, 0);
    let ran = || outs.iter().filter(|o| o.started);
    let start_ns = ran().map(|o| o.start_ns).min().unwrap_or(0);
    let end_ns = ran().map(|o| o.end_ns).max().unwrap_or(start_ns);
    let mut threads = Vec::with_capacity(outs.len());
    let mut error = None;
    let ops = crate::metrics::merge_ops(outs.iter().map(|o| o.ops.as_slice()));
    let phases = kinds::merge_phases(&outs);
    let group = prepared.group_stats(spec);
    for out in &outs {
        write_lat.merge(&out.write_lat);
        sync_lat.merge(&out.sync_lat);
        writes += out.stats.writes;
        syncs += out.stats.syncs + out.extra_syncs;
        bytes += out.stats.bytes;
        if error.is_none() {
            error = out.error.clone();
        }
        let mut stats = out.stats.clone();
        stats.wall_ns = if out.started {
            out.end_ns.saturating_sub(start_ns)
        } else {
            0
        };
        threads.push(stats);
    }
    let device_accounting = match (before, after, device) {
        (Ok(mut before), Some(Ok(mut after)), Some(d)) => {
            if !counts_flushes(&d.name) {
                // Bio-based stacking drivers pass flushes down without counting them: a 0
                // would look like perfect group commit. Say "not reported" instead.
                before.flush_ios = None;
                after.flush_ios = None;
                warnings.push(format!(
                    "{} is a device-mapper/md device: its flush counter stays 0 (flushes are counted on \
                     the disks below it), so flushes per sync are not measured",
                    d.name
                ));
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
        (Err(reason), _, _) => DeviceAccounting::Unavailable { reason },
        (_, Some(Err(e)), _) => DeviceAccounting::Unavailable {
            reason: e.to_string(),
        },
        _ => DeviceAccounting::Unavailable {
            reason: NO_DEVICE.into(),
        },
    };
    let status = if error.is_some() {
        RunStatus::Failed
    } else if cancelled {
        RunStatus::Cancelled
    } else {
        RunStatus::Finished
    };
    Ok(RunResult {
        id: ctx.run_id,
        status,
        error,
        spec: spec.clone(),
        system: ctx.system.clone(),
        started_at_ms,
        wall_ns: end_ns.saturating_sub(start_ns),
        writes,
        syncs,
        bytes,
        write_lat,
        sync_lat,
        intervals: sampler.into_samples(),
        threads,
        device: device_accounting,
        warnings,
        noise: None,
        ops,
        phases,
        group,
    })
}

const NO_DEVICE: &str = "no block device found under the target";

/// Whether the device's stat file counts flushes (request-based queues do; device-mapper
/// and md pass them to the disks below).
fn counts_flushes(name: &str) -> bool {
    !(name.starts_with("dm-") || name.starts_with("md"))
}

/// A result with nothing measured (a run cancelled before its timed part).
fn empty_result(
    spec: &WorkloadSpec,
    ctx: &RunContext,
    status: RunStatus,
    warnings: Vec<String>,
) -> RunResult {
    RunResult {
        id: ctx.run_id,
        status,
        error: None,
        spec: spec.clone(),
        system: ctx.system.clone(),
        started_at_ms: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or_default(),
        wall_ns: 0,
        writes: 0,
        syncs: 0,
        bytes: 0,
        write_lat: LatencyHistogram::new(),
        sync_lat: LatencyHistogram::new(),
        intervals: Vec::new(),
        threads: Vec::new(),
        device: DeviceAccounting::Unavailable {
            reason: "cancelled before the run started".into(),
        },
        warnings,
        noise: None,
        ops: Vec::new(),
        phases: Vec::new(),
        group: None,
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tests_grouplog;
