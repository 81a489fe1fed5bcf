//! What callers of the engine hold: the run's context, its events, its cancel token and
//! its errors. The bottom of the engine's module graph: every other engine module may
//! import from here; this module imports only the typed errors it holds (`failure`,
//! `target_error`), which import no engine module.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::failure::IoFailure;
use super::target_error::TargetError;
use crate::metrics::{Bug, IoCause, RunFailure, RunStatus};
use crate::probe::SystemInfo;
use crate::spec::SpecError;

/// Why a run could not start (nothing was measured).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The spec is invalid.
    #[error("invalid workload: {0}")]
    Spec(#[from] SpecError),
    /// The target (or the run directory in it) cannot be used: which path, why (with the
    /// I/O error that showed it) and the settings to change.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// Creating or preparing the test files failed: the call, the file and its error.
    #[error(transparent)]
    Prepare(IoFailure),
    /// Worker threads could not be started.
    #[error("cannot start {threads} worker threads: {source}")]
    Spawn {
        /// Threads asked for.
        threads: u32,
        /// Why the spawn failed.
        source: std::io::Error,
    },
    /// A test file could not be opened with the requested flags (O_DIRECT unsupported,
    /// too many open files...); nothing was timed.
    #[error(transparent)]
    Open(IoFailure),
    /// A bug in fsynclab (a worker thread panicked...).
    #[error("a bug in fsynclab: {0:?}")]
    Internal(Bug),
}

impl EngineError {
    /// The failure as data, for a run's stored record.
    pub fn failure(&self) -> RunFailure {
        match self {
            EngineError::Target(e) => RunFailure::Target { target: e.clone() },
            EngineError::Spec(e) => RunFailure::InvalidSpec { field: e.field },
            EngineError::Internal(bug) => RunFailure::Internal { bug: bug.clone() },
            EngineError::Prepare(f) => RunFailure::Prepare(f.clone()),
            EngineError::Open(f) => RunFailure::Open(f.clone()),
            EngineError::Spawn { threads, source } => RunFailure::Spawn {
                threads: *threads,
                cause: IoCause::of(source),
            },
        }
    }

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
        /// Planned duration of a time-based run (after its warm-up).
        duration: Option<Duration>,
        /// The warm-up at the start (run, not in the figures), if any.
        warmup: Option<Duration>,
        /// When the start gate opened, CLOCK_MONOTONIC ns (the kernel tracer's clock): the
        /// intervals' `t_ms` count from here.
        at_ns: u64,
    },
    /// The device's counters were read where the run's figures start counting: before the
    /// start gate opens, or again at the end of a warm-up. Sent once per run (also when
    /// there is no device to read), before anything it counts; `at_ns` is CLOCK_MONOTONIC,
    /// the kernel tracer's clock, so the tracer counts what the counters count.
    CountingFrom {
        /// When the counters were read, CLOCK_MONOTONIC ns.
        at_ns: u64,
    },
    /// The device's counters were read where the run's figures stop counting (every worker
    /// joined): the end of the window [`EngineEvent::CountingFrom`] opened.
    CountingUntil {
        /// When the counters were read, CLOCK_MONOTONIC ns.
        at_ns: u64,
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
    /// The directory the scratch directory is created in (messages and records; see
    /// `target_dir`).
    pub target: PathBuf,
    /// The target as checked and held open by `engine::check_target`: when set, the run
    /// uses this descriptor and never resolves `target` again. `None`: the engine checks
    /// and opens `target` itself.
    pub target_dir: Option<std::sync::Arc<std::os::fd::OwnedFd>>,
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
    /// A crash test's acknowledgements (issue 33): the workload writes each record it
    /// treats as durable here, and stamps every write as a record. `None`: a plain run.
    pub acks: Option<std::sync::Arc<AckSink>>,
    /// A run on a bare block device (issue 34): the workers write the device's range and no
    /// directory is made (`target` is the device node, `target_dir` is `None`). `None`: a
    /// run in a directory.
    pub device: Option<DeviceRegion>,
}

/// Where a run on a bare block device writes: worker `t` writes its own part of the range,
/// `[offset + t × file_size, offset + (t + 1) × file_size)`, as a `fileio` worker writes
/// its own file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceRegion {
    /// The device node (links resolved), checked by the caller (`crate::rawdev`).
    pub node: PathBuf,
    /// Its device number (`st_rdev`): every worker's open is checked against it, so a node
    /// replaced since the check is never written.
    pub rdev: u64,
    /// The first byte of the range.
    pub offset: u64,
}

/// Where a crash-testing run acknowledges its records: the recording device's marks file
/// (`crashdev::MARKS_NAME`), each acknowledgement one write, so it takes its place among the
/// device's writes and flushes.
#[derive(Debug)]
pub struct AckSink {
    file: std::fs::File,
    run: u64,
}

impl AckSink {
    /// Acknowledgements of run `run` written to `file` (opened for writing).
    pub fn new(file: std::fs::File, run: u64) -> Self {
        Self { file, run }
    }

    /// The run's number, in every record and acknowledgement.
    pub fn run(&self) -> u64 {
        self.run
    }

    /// Marks where the workload begins: power cuts are planned from here.
    pub fn begin(&self) -> std::io::Result<()> {
        use crate::crashlog::{BEGIN_MARK, run_mark};
        use std::os::unix::fs::FileExt;
        self.file.write_all_at(&run_mark(BEGIN_MARK, self.run), 0)
    }

    /// Marks where the workload ended, and waits until the recording device's log holds
    /// every mark so far (an fsync of the marks file writes the log out): on a lasting
    /// device the power cuts are planned up to here.
    pub fn end(&self) -> std::io::Result<()> {
        use crate::crashlog::{END_MARK, run_mark};
        use std::os::unix::fs::FileExt;
        self.file.write_all_at(&run_mark(END_MARK, self.run), 0)?;
        self.file.sync_all()
    }

    /// Acknowledges `ack`: its record is durable as far as the workload knows.
    pub(crate) fn ack(&self, ack: &crate::crashlog::Ack) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        self.file.write_all_at(&ack.encode(), 0)
    }
}

impl RunContext {
    /// A run of `run_id` in `target` with the defaults: the engine names the run directory,
    /// a shared target is refused, the files are removed afterwards, and nothing was probed
    /// (no device counters are read).
    pub fn new(run_id: i64, target: PathBuf) -> Self {
        Self {
            run_id,
            target,
            target_dir: None,
            dir_name: None,
            allow_shared_target: false,
            keep_files: false,
            system: SystemInfo::default(),
            acks: None,
            device: None,
        }
    }
}
