//! The workload engine: the only code that touches test files.
//!
//! [`run`] prepares the files in a private scratch directory, starts the workers together,
//! samples their lock-free counters every interval (with the device's flush counter), and
//! returns a [`RunResult`]. Errors during the timed part end the run with status `failed`
//! and keep what was measured; errors before it are an [`EngineError`].

mod fake;
mod file;
mod offsets;
mod sampler;
mod scratch;
mod worker;

pub use fake::{FakeBackend, FakeClock, FakeFile};
pub use file::{
    AlignedBuf, BUFFER_ALIGN, Backend, Clock, RealBackend, RealClock, RealFile, SyncFile,
    fill_pattern, open_flag_bits,
};
pub use offsets::BlockOrder;
pub use scratch::{ScratchDir, check_target, describe_io_error, free_bytes};

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::metrics::{DeviceAccounting, DeviceCounters, LatencyHistogram, RunResult, RunStatus};
use crate::probe::{BlockStat, SystemInfo};
use crate::spec::{SpecError, StopRule, WorkloadSpec, format_size};
use sampler::Sampler;
use worker::{Live, Shared, WorkerPlan, run_worker};

/// Why a run could not start (nothing was measured).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The spec is invalid.
    #[error("invalid workload: {0}")]
    Spec(#[from] SpecError),
    /// The target cannot be used; the message names the problem and the fix.
    #[error("{0}")]
    Target(String),
    /// Creating or preparing the test files failed.
    #[error("{0}")]
    Prepare(String),
    /// Cancelled before the timed part started.
    #[error("cancelled before the run started")]
    Cancelled,
}

impl EngineError {
    /// True when the user's input is at fault (exit code 2), not the run.
    pub fn is_usage(&self) -> bool {
        matches!(self, EngineError::Spec(_) | EngineError::Target(_))
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
    /// The run ended.
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
    let target = check_target(&ctx.target)?;
    let mut scratch = ScratchDir::create(&target, ctx.run_id)?;
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
    result.warnings.extend(cleanup);
    let _ = events.send(EngineEvent::Finished {
        run_id: ctx.run_id,
        status: result.status,
    });
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
    let file_count = spec.file_count();
    let needed = u64::from(file_count).saturating_mul(spec.file_size);
    if let Some(free) = free_bytes(scratch.path())
        && needed > free
    {
        warnings.push(format!(
                "the test files need up to {} but {} is free on the target; the run may stop with 'no space left'",
                format_size(needed),
                format_size(free)
            ));
    }
    let _ = events.send(EngineEvent::Preparing {
        files: file_count,
        bytes_per_file: spec.file_size,
    });
    let shared_mode = spec.shared_files.is_some();
    let mut paths = Vec::with_capacity(file_count as usize);
    for i in 0..file_count {
        if cancel.is_cancelled() {
            return Err(EngineError::Cancelled);
        }
        let name = if shared_mode {
            format!("shared-{i}.dat")
        } else {
            format!("thread-{i}.dat")
        };
        let path = scratch.file(&name);
        let op = match spec.prepare {
            crate::spec::Prepare::Fallocate => "fallocate",
            _ => "prepare",
        };
        backend
            .create(&path, spec.file_size, spec.prepare)
            .map_err(|e| EngineError::Prepare(describe_io_error(op, &path, None, &e)))?;
        paths.push(path);
    }

    let total_blocks = spec.blocks_per_file() * u64::from(file_count);
    let plans: Vec<WorkerPlan> = (0..spec.threads)
        .map(|t| {
            if shared_mode {
                WorkerPlan {
                    thread: t,
                    files: paths.clone(),
                    start_block: total_blocks * u64::from(t) / u64::from(spec.threads),
                }
            } else {
                WorkerPlan {
                    thread: t,
                    files: vec![paths[t as usize].clone()],
                    start_block: 0,
                }
            }
        })
        .collect();
    let stop_rule = spec.stop_rule();
    let shared = Shared {
        stop: AtomicBool::new(false),
        remaining: AtomicI64::new(match stop_rule {
            StopRule::TotalRequests(n) => i64::try_from(n).unwrap_or(i64::MAX),
            _ => 0,
        }),
    };
    let lives: Vec<Live> = (0..spec.threads).map(|_| Live::default()).collect();
    let barrier = Barrier::new(spec.threads as usize + 1);
    let device = ctx.system.device.as_ref();
    let before: Result<BlockStat, String> = match device {
        Some(d) => crate::probe::read_blockstat(d).map_err(|e| e.to_string()),
        None => Err(ctx
            .system
            .device_note
            .clone()
            .unwrap_or_else(|| "no block device found under the target".into())),
    };
    let mut sampler = Sampler::new(
        &lives,
        device
            .filter(|_| before.is_ok())
            .map(|d| d.stat_path.clone()),
    );
    let expected_writes = match stop_rule {
        StopRule::BytesPerThread(b) => Some(b / spec.block_size * u64::from(spec.threads)),
        StopRule::TotalRequests(n) => Some(n),
        StopRule::Duration(_) => None,
    };

    let (done_tx, done_rx) = mpsc::channel::<()>();
    let mut started_at_ms = 0i64;
    let mut cancelled = false;
    let outputs = std::thread::scope(|scope| {
        let handles: Vec<_> = plans
            .into_iter()
            .map(|plan| {
                let done = done_tx.clone();
                let (shared, lives, barrier) = (&shared, &lives, &barrier);
                let live = &lives[plan.thread as usize];
                scope.spawn(move || {
                    let out = run_worker(backend, spec, plan, shared, live, barrier);
                    let _ = done.send(());
                    out
                })
            })
            .collect();
        barrier.wait();
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
        let mut finished = 0usize;
        while finished < handles.len() {
            let wait = next_tick.saturating_duration_since(Instant::now());
            match done_rx.recv_timeout(wait) {
                Ok(()) => finished += 1,
                Err(RecvTimeoutError::Timeout) => {
                    let sample = sampler.sample(start.elapsed());
                    let _ = events.send(EngineEvent::Interval(sample));
                    next_tick += tick;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if !cancelled && cancel.is_cancelled() {
                cancelled = true;
                shared.stop.store(true, Ordering::Relaxed);
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

    let mut outs = Vec::with_capacity(outputs.len());
    for joined in outputs {
        match joined {
            Ok(out) => outs.push(out),
            Err(_) => {
                return Err(EngineError::Prepare(
                    "a worker thread panicked; this is a bug in fsynclab, please report it".into(),
                ));
            }
        }
    }
    let mut write_lat = LatencyHistogram::new();
    let mut sync_lat = LatencyHistogram::new();
    let (mut writes, mut syncs, mut bytes) = (0, 0, 0);
    let start_ns = outs.iter().map(|o| o.start_ns).min().unwrap_or(0);
    let end_ns = outs.iter().map(|o| o.end_ns).max().unwrap_or(0);
    let mut threads = Vec::with_capacity(outs.len());
    let mut error = None;
    for out in outs {
        write_lat.merge(&out.write_lat);
        sync_lat.merge(&out.sync_lat);
        writes += out.stats.writes;
        syncs += out.stats.syncs;
        bytes += out.stats.bytes;
        if error.is_none() {
            error = out.error;
        }
        let mut stats = out.stats;
        stats.wall_ns = out.end_ns.saturating_sub(start_ns);
        threads.push(stats);
    }
    let device_accounting = match (before, after, device) {
        (Ok(before), Some(Ok(after)), Some(d)) => DeviceAccounting::Measured {
            counters: DeviceCounters {
                device: d.name.clone(),
                before,
                after,
            },
        },
        (Err(reason), _, _) => DeviceAccounting::Unavailable { reason },
        (_, Some(Err(e)), _) => DeviceAccounting::Unavailable {
            reason: e.to_string(),
        },
        _ => DeviceAccounting::Unavailable {
            reason: "no block device found under the target".into(),
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
    })
}

#[cfg(test)]
mod tests;
