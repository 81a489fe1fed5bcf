//! The kernel's side of every fsync (issue 14): journal commits, log forces, cache flushes
//! and D-state sleeps, counted from tracepoints in a private tracefs instance while a run
//! goes.
//!
//! ```text
//! available_events ─► events::select ─► tracefs::create (under the control lock)
//!                                              │
//!   per_cpu/cpuN/trace_pipe_raw (O_NONBLOCK, drained every 50 ms) ─► reader ─► raw + decode
//!     (or trace_pipe, text, when the binary layout is not one fsynclab decodes) ─► parse
//!        ─► merged by timestamp ─► accum::Accumulator ─► KernelTrace
//!                                              │      └─► LiveKernel (commits/s, flushes/s)
//!                       stop: flag, join, per_cpu/*/stats (drops), tracefs::remove
//! ```
//! Parsing and accounting are pure and fixture-tested; the reader and the tracefs control
//! are thin. See docs/KERNEL-TRACE.md.

pub mod accum;
#[cfg(test)]
mod accum_tests;
pub mod decode;
pub mod events;
#[cfg(test)]
mod fixture_tests;
pub mod journal;
pub mod parse;
pub mod raw;
#[cfg(test)]
mod raw_fixture_tests;
mod reader;
pub mod timeline;
pub mod tracefs;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use accum::{Accumulator, Groups, LiveKernel, Targets};
pub use events::FsFamily;
pub use timeline::{Counted, KernelTimeline};

use crate::metrics::{KernelTrace, Recorded, TraceNote};
use crate::probe::SystemInfo;
use parse::Dev;
use reader::{Reader, Source};

/// The environment variable that makes the reader read text (`text`) instead of binary
/// pages (`raw`, the default): for measuring one against the other.
pub const READER_ENV: &str = "FSYNCLAB_KTRACE_READER";

/// Whether [`READER_ENV`] asks for the text reader; `Err` for a value that is neither.
fn force_text() -> Result<bool, TraceError> {
    match std::env::var_os(READER_ENV) {
        None => Ok(false),
        Some(v) if v == "raw" => Ok(false),
        Some(v) if v == "text" => Ok(true),
        Some(v) => Err(TraceError::Unavailable(TraceNote::BadReaderSetting {
            value: v.to_string_lossy().into_owned(),
        })),
    }
}

/// `--kernel-trace`: whether a run traces the kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KernelTraceMode {
    /// On when running as root with tracefs available, else off with the reason recorded.
    #[default]
    Auto,
    /// On, or the run is refused.
    On,
    /// Off.
    Off,
}

impl KernelTraceMode {
    /// The name users type.
    pub fn as_str(self) -> &'static str {
        match self {
            KernelTraceMode::Auto => "auto",
            KernelTraceMode::On => "on",
            KernelTraceMode::Off => "off",
        }
    }
}

/// Why tracing could not be done.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Not root, no tracefs, no usable event: why, as data (the front ends word it).
    #[error("kernel tracing is unavailable ({})", .0.code())]
    Unavailable(TraceNote),
    /// A tracefs file could not be used.
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The lock file is not a root-owned regular file only root can write.
    #[error(
        "{} is not a regular file owned by root and writable only by it; remove it",
        path.display()
    )]
    UnsafeLock {
        /// The lock file.
        path: PathBuf,
    },
}

impl TraceError {
    /// The error as data, for a run's stored kernel trace and for the front ends' words.
    pub fn note(&self) -> TraceNote {
        match self {
            TraceError::Unavailable(note) => note.clone(),
            TraceError::Io { what, path, source } => TraceNote::FileFailed {
                what: (*what).to_string(),
                path: path.clone(),
                errno: source.raw_os_error(),
            },
            TraceError::UnsafeLock { path } => TraceNote::UnsafeLock { path: path.clone() },
        }
    }
}

/// Whether tracing can be on for this process: root and tracefs (mounted now if needed).
pub fn available() -> Result<PathBuf, TraceError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(TraceError::Unavailable(TraceNote::NotRoot));
    }
    tracefs::ensure_mounted()
}

/// Removes the trace instances of fsynclab processes that are gone (the next start after a
/// kill, and `fsynclab clean`); returns their names. Nothing to do without root or tracefs.
pub fn sweep() -> Result<Vec<String>, TraceError> {
    if !nix::unistd::geteuid().is_root() || !Path::new(tracefs::TRACEFS).join("instances").is_dir()
    {
        return Ok(Vec::new());
    }
    tracefs::sweep(Path::new(tracefs::TRACEFS))
}

/// A run's tracing: on, or off and why.
pub enum Tracing {
    /// Tracing, until [`Session::finish`].
    On(Session),
    /// Not tracing.
    Off(Box<KernelTrace>),
}

/// Starts tracing run `run_id` on the target `system` describes. `Auto` falls back to
/// [`Tracing::Off`] with the reason; `On` returns the error.
pub fn start(
    mode: KernelTraceMode,
    run_id: i64,
    system: &SystemInfo,
) -> Result<Tracing, TraceError> {
    if mode == KernelTraceMode::Off {
        return Ok(Tracing::Off(Box::new(KernelTrace::off(
            TraceNote::TurnedOff,
        ))));
    }
    // A bad value is refused even in `auto`: a typo must not silently change the reader.
    let force_text = force_text()?;
    match Session::start(run_id, system, force_text) {
        Ok(session) => Ok(Tracing::On(session)),
        Err(e) if mode == KernelTraceMode::Auto => {
            Ok(Tracing::Off(Box::new(KernelTrace::off(e.note()))))
        }
        Err(e) => Err(e),
    }
}

/// One run's trace instance and reader.
pub struct Session {
    dir: PathBuf,
    /// The owner lock (see [`tracefs::hold_owner_lock`]), released after the instance is
    /// removed.
    owner: Option<(PathBuf, nix::fcntl::Flock<std::fs::File>)>,
    reader: Option<Reader>,
    /// `raw` or `text`.
    reader_kind: crate::metrics::TraceReader,
    groups: Groups,
    events: Vec<String>,
    live: Arc<LiveKernel>,
}

impl Session {
    fn start(run_id: i64, system: &SystemInfo, force_text: bool) -> Result<Session, TraceError> {
        let root = available()?;
        if let Err(e) = tracefs::sweep(&root) {
            log::warn!("sweeping old trace instances: {e}");
        }
        let available_path = root.join("available_events");
        let offered =
            std::fs::read_to_string(&available_path).map_err(|source| TraceError::Io {
                what: "read",
                path: available_path,
                source,
            })?;
        let targets = targets_of(system);
        let fs = FsFamily::of_mount(
            system.mount.as_ref().map_or("", |m| m.fs_type.as_str()),
            || fs_device(system).is_none_or(journal::ext4_has_journal),
        );
        let (chosen, groups) = events::select(&offered, fs, &targets);
        if chosen.is_empty() {
            return Err(TraceError::Unavailable(TraceNote::NoEvents));
        }
        let name = tracefs::instance_name(run_id);
        // Locked before the instance exists, so no sweep can take it for a dead run's.
        let owner = tracefs::hold_owner_lock(&name)?;
        let owner = (tracefs::owner_lock_path(&name), owner);
        let dir = match tracefs::create(&root, &name, &chosen) {
            Ok(dir) => dir,
            Err(e) => {
                let _ = std::fs::remove_file(&owner.0);
                return Err(e);
            }
        };
        let live = Arc::new(LiveKernel::default());
        let acc = Accumulator::new(
            targets,
            Box::new(|tid| Path::new(&format!("/proc/self/task/{tid}")).exists()),
            Arc::clone(&live),
        );
        // The pipe is opened in its own step, after the control lock is released.
        let source = Source {
            dir: &dir,
            root: &root,
            events: &chosen,
            force_text,
        };
        let reader = match Reader::start(&source, acc) {
            Ok(reader) => reader,
            Err(e) => {
                let _ = tracefs::remove(&dir);
                let _ = std::fs::remove_file(&owner.0);
                return Err(e);
            }
        };
        Ok(Session {
            dir,
            owner: Some(owner),
            reader_kind: reader.kind(),
            reader: Some(reader),
            groups,
            events: chosen.iter().map(|e| e.full_name()).collect(),
            live,
        })
    }

    /// The totals the window shows live (commits/s, flushes/s).
    pub fn live(&self) -> Arc<LiveKernel> {
        Arc::clone(&self.live)
    }

    /// Stops the reader (joined: its descriptor closed), reads the drop counters, removes
    /// the instance and returns the run's figures for `syncs` sync calls, with when its
    /// counted flushes and commits happened (empty when the reader failed).
    pub fn finish(mut self, syncs: u64) -> (KernelTrace, KernelTimeline) {
        let acc = self.reader.take().and_then(Reader::stop);
        let timeline = acc
            .as_ref()
            .map(|a| a.timeline().clone())
            .unwrap_or_default();
        let lost = lost_events(&self.dir);
        let removed = tracefs::remove(&self.dir);
        let mut trace = match &acc {
            Some(acc) => acc.finish(self.groups, syncs, lost.unwrap_or(0)),
            None => KernelTrace {
                enabled: true,
                reason: Some(Recorded::Typed(vec![TraceNote::ReaderFailed])),
                ..Default::default()
            },
        };
        trace.events = std::mem::take(&mut self.events);
        trace.reader = Some(self.reader_kind);
        let mut problems = match trace.reason.take() {
            Some(Recorded::Typed(notes)) => notes,
            _ => Vec::new(),
        };
        if lost.is_none() {
            problems.push(TraceNote::LossesUnread);
        }
        if let Err(e) = removed {
            problems.push(e.note());
        }
        trace.reason = (!problems.is_empty()).then_some(Recorded::Typed(problems));
        // Finished: nothing left for Drop.
        self.dir = PathBuf::new();
        self.release_owner();
        (trace, timeline)
    }
}

impl Session {
    /// Removes and unlocks the owner lock (after the instance is gone).
    fn release_owner(&mut self) {
        if let Some((path, _lock)) = self.owner.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // An early way out (a panic, an error before finish): the same order as finish.
        if let Some(reader) = self.reader.take() {
            let _ = reader.stop();
        }
        if !self.dir.as_os_str().is_empty() {
            let _ = tracefs::remove(&self.dir);
        }
        self.release_owner();
    }
}

/// Events the instance's CPUs lost (overrun + dropped), `None` when unreadable.
fn lost_events(dir: &Path) -> Option<u64> {
    let per_cpu = std::fs::read_dir(dir.join("per_cpu")).ok()?;
    let mut lost = 0;
    for cpu in per_cpu.flatten() {
        let text = std::fs::read_to_string(cpu.path().join("stats")).ok()?;
        lost += parse::parse_cpu_stats(&text)?;
    }
    Some(lost)
}

/// The run's devices and btrfs filesystem id, from the probe and sysfs.
fn targets_of(system: &SystemInfo) -> Targets {
    let dev_of = |name: &str| {
        std::fs::read_to_string(Path::new("/sys/class/block").join(name).join("dev"))
            .ok()
            .and_then(|text| Dev::parse(&text))
    };
    let Some(device) = &system.device else {
        return Targets::default();
    };
    let fs_device = fs_device(system).unwrap_or(&device.name);
    let btrfs_fsid = match system.mount.as_ref().map(|m| m.fs_type.as_str()) {
        Some("btrfs") => btrfs_fsid_of(Path::new("/sys/fs/btrfs"), fs_device),
        _ => None,
    };
    Targets {
        dev: dev_of(&device.name),
        btrfs_fsid,
    }
}

/// The block device the target's filesystem is on (`sda1`, `loop3`).
fn fs_device(system: &SystemInfo) -> Option<&str> {
    let device = system.device.as_ref()?;
    Some(device.partition.as_deref().unwrap_or(&device.name))
}

/// The btrfs filesystem (`/sys/fs/btrfs/<fsid>`) with `device` among its devices.
pub fn btrfs_fsid_of(sysfs_btrfs: &Path, device: &str) -> Option<String> {
    std::fs::read_dir(sysfs_btrfs)
        .ok()?
        .flatten()
        .find(|fs| fs.path().join("devices").join(device).exists())
        .map(|fs| fs.file_name().to_string_lossy().into_owned())
}
