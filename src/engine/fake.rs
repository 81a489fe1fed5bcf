//! A scripted fake [`Backend`]: files whose writes and syncs "take" scripted latencies on
//! a per-thread fake clock, so engine tests get exact, known percentiles and counts
//! without touching a disk or depending on timing.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::CancelToken;
use super::dirfd::DirHandle;
use super::file::{Backend, Clock, SyncFile};
use crate::spec::{OpenFlags, Prepare, SyncMethod};

/// Scripted latencies and failures.
#[derive(Debug, Default)]
pub struct FakeBackend {
    /// Write latencies in ns, used in turn (cycled) per file.
    pub write_ns: Vec<u64>,
    /// Sync latencies in ns, used in turn (cycled) per file.
    pub sync_ns: Vec<u64>,
    /// Fail every write after this many successful writes in total, with this errno.
    pub fail_after_writes: Option<(u64, i32)>,
    /// Fail every sync after this many successful syncs in total, with this errno.
    pub fail_after_syncs: Option<(u64, i32)>,
    /// Fail every open with this errno (e.g. EINVAL for O_DIRECT unsupported).
    pub open_errno: Option<i32>,
    /// Fail only the opens of this worker thread (with `open_errno`, default EMFILE).
    pub open_fail_thread: Option<u32>,
    /// Panic in the write after this many writes in total (simulates a bug in a worker).
    pub panic_after_writes: Option<u64>,
    /// Nanoseconds every clock read adds (catches work counted inside a timed interval).
    pub tick_per_read_ns: u64,
    /// Real time instead of per-thread fake clocks: clocks read CLOCK_MONOTONIC and a
    /// sync sleeps its scripted latency, so threads really overlap (group-commit tests:
    /// followers arrive while a leader's "flush" takes its time).
    pub real_time: bool,
    clocks: Mutex<HashMap<u32, Arc<AtomicU64>>>,
    total_writes: Arc<AtomicU64>,
    total_syncs: Arc<AtomicU64>,
    created: Mutex<Vec<String>>,
}

impl FakeBackend {
    /// A fake whose writes take `write_ns` and syncs take `sync_ns` (cycled).
    pub fn new(write_ns: Vec<u64>, sync_ns: Vec<u64>) -> Self {
        Self {
            write_ns,
            sync_ns,
            ..Default::default()
        }
    }

    /// Names of the files created so far (in the run directory).
    pub fn created(&self) -> Vec<String> {
        self.created.lock().map(|c| c.clone()).unwrap_or_default()
    }

    fn clock_cell(&self, thread: u32) -> Arc<AtomicU64> {
        let mut clocks = self.clocks.lock().unwrap_or_else(|e| e.into_inner());
        clocks
            .entry(thread)
            .or_insert_with(|| Arc::new(AtomicU64::new(1_000)))
            .clone()
    }
}

/// A fake file: advances its thread's clock by the scripted latency per call.
#[derive(Debug)]
pub struct FakeFile {
    clock: Arc<AtomicU64>,
    write_ns: Vec<u64>,
    sync_ns: Vec<u64>,
    writes: usize,
    syncs: usize,
    total_writes: Arc<AtomicU64>,
    fail_after_writes: Option<(u64, i32)>,
    panic_after_writes: Option<u64>,
    real_time: bool,
    total_syncs: Arc<AtomicU64>,
    fail_after_syncs: Option<(u64, i32)>,
}

/// The per-thread fake clock (or the real monotonic clock in real-time mode).
#[derive(Debug, Clone)]
pub struct FakeClock {
    now: Arc<AtomicU64>,
    tick_ns: u64,
    real_time: bool,
}

impl Clock for FakeClock {
    fn now_ns(&self) -> u64 {
        if self.real_time {
            return super::clock::monotonic_ns();
        }
        self.now.fetch_add(self.tick_ns, Ordering::Relaxed)
    }
}

impl SyncFile for FakeFile {
    fn write_at(&mut self, _buf: &[u8], _offset: u64) -> io::Result<()> {
        if let Some(after) = self.panic_after_writes
            && self.total_writes.load(Ordering::Relaxed) >= after
        {
            panic!("scripted worker panic (test)");
        }
        if let Some((after, errno)) = self.fail_after_writes
            && self.total_writes.load(Ordering::Relaxed) >= after
        {
            return Err(io::Error::from_raw_os_error(errno));
        }
        let lat = self
            .write_ns
            .get(self.writes % self.write_ns.len().max(1))
            .copied()
            .unwrap_or(1);
        self.writes += 1;
        self.total_writes.fetch_add(1, Ordering::Relaxed);
        self.clock.fetch_add(lat, Ordering::Relaxed);
        Ok(())
    }

    fn sync(&mut self, _method: SyncMethod) -> io::Result<()> {
        if let Some((after, errno)) = self.fail_after_syncs
            && self.total_syncs.fetch_add(1, Ordering::Relaxed) >= after
        {
            return Err(io::Error::from_raw_os_error(errno));
        }
        let lat = self
            .sync_ns
            .get(self.syncs % self.sync_ns.len().max(1))
            .copied()
            .unwrap_or(1);
        self.syncs += 1;
        if self.real_time {
            std::thread::sleep(std::time::Duration::from_nanos(lat));
        } else {
            self.clock.fetch_add(lat, Ordering::Relaxed);
        }
        Ok(())
    }
}

impl Backend for FakeBackend {
    type File = FakeFile;
    type Clock = FakeClock;

    fn create(
        &self,
        _dir: &DirHandle,
        name: &str,
        _size: u64,
        _prepare: Prepare,
        _seed: u64,
        cancel: &CancelToken,
    ) -> io::Result<()> {
        if cancel.is_cancelled() {
            return Err(io::Error::from(io::ErrorKind::Interrupted));
        }
        self.created
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(name.to_string());
        Ok(())
    }

    fn open(
        &self,
        _dir: &DirHandle,
        _name: &str,
        _flags: OpenFlags,
        thread: u32,
    ) -> io::Result<FakeFile> {
        match (self.open_fail_thread, self.open_errno) {
            (Some(t), errno) if t == thread => {
                return Err(io::Error::from_raw_os_error(errno.unwrap_or(libc::EMFILE)));
            }
            (None, Some(errno)) => return Err(io::Error::from_raw_os_error(errno)),
            _ => {}
        }
        Ok(FakeFile {
            clock: self.clock_cell(thread),
            write_ns: self.write_ns.clone(),
            sync_ns: self.sync_ns.clone(),
            writes: 0,
            syncs: 0,
            total_writes: self.total_writes.clone(),
            fail_after_writes: self.fail_after_writes,
            panic_after_writes: self.panic_after_writes,
            real_time: self.real_time,
            total_syncs: self.total_syncs.clone(),
            fail_after_syncs: self.fail_after_syncs,
        })
    }

    fn clock(&self, thread: u32) -> FakeClock {
        FakeClock {
            now: self.clock_cell(thread),
            tick_ns: self.tick_per_read_ns,
            real_time: self.real_time,
        }
    }
}

/// A complete [`RunResult`] from the scripted fake (for tests and examples): a run with
/// id `id` of `spec` whose writes take `write_ns` and syncs `sync_ns` (cycled), run in a
/// fresh temporary directory under `system`, with a quiet background recorded.
pub fn fake_run(
    id: i64,
    write_ns: Vec<u64>,
    sync_ns: Vec<u64>,
    spec: &crate::spec::WorkloadSpec,
    system: crate::probe::SystemInfo,
) -> Result<crate::metrics::RunResult, super::EngineError> {
    let dir = std::env::temp_dir().join(format!(
        "fsynclab-fake-{}-{id}-{:x}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&dir)
        .map_err(|e| super::EngineError::Target(format!("cannot create {}: {e}", dir.display())))?;
    let ctx = super::RunContext {
        run_id: id,
        target: dir.clone(),
        keep_files: false,
        dir_name: None,
        allow_shared_target: false,
        system,
    };
    let (tx, _rx) = std::sync::mpsc::channel();
    let result = super::run_with(
        &FakeBackend::new(write_ns, sync_ns),
        spec,
        &ctx,
        &tx,
        &CancelToken::new(),
    );
    let _ = std::fs::remove_dir(&dir);
    let mut r = result?;
    r.noise = Some(crate::metrics::NoiseInfo {
        background_cpu_busy: Some(0.02),
        ..Default::default()
    });
    Ok(r)
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::AtomicU64;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed) ^ super::offsets::mix(std::process::id() as u64)
}
