//! A scripted fake [`Backend`]: files whose writes and syncs "take" scripted latencies on
//! a per-thread fake clock, so engine tests get exact, known percentiles and counts
//! without touching a disk or depending on timing.

use std::collections::HashMap;
use std::ffi::CStr;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::api::CancelToken;
use super::dirfd::DirHandle;
use super::file::{Backend, Clock, DirOps, FileLayout, OpenAt, PREPARE_THREAD, SyncFile};
use crate::spec::{OpenFlags, Prepare, SyncMethod};

/// A call of the fake other than write and sync, for scripted latencies and failures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FakeOp {
    /// openat (with or without `O_CREAT`).
    OpenAt,
    /// close.
    Close,
    /// pread.
    Read,
    /// fstat.
    Stat,
    /// futimens.
    Touch,
    /// fsetxattr.
    Xattr,
    /// renameat.
    Rename,
    /// unlinkat.
    Unlink,
    /// fstatat.
    StatAt,
    /// fstatvfs.
    Statfs,
    /// opendir + readdir + closedir.
    ListDir,
    /// fchownat.
    Chown,
    /// syncfs.
    Syncfs,
    /// fsync of a directory.
    SyncDir,
}

/// How many [`FakeOp`]s there are.
pub const FAKE_OPS: usize = 14;

/// Scripted latencies and failures of the [`FakeOp`]s, shared by a backend's files and
/// directory operations.
#[derive(Debug, Default)]
struct OpScript {
    /// Latency of each op, ns (index: `op as usize`).
    ns: [u64; FAKE_OPS],
    /// Fail op `.0` after this many successful ones in total (workers only), with errno `.2`.
    fail: Option<(FakeOp, u64, i32)>,
    /// Calls of each op so far (workers only).
    calls: [AtomicU64; FAKE_OPS],
}

impl OpScript {
    /// Runs `op` on `clock` (or fails it as scripted); preparation calls are neither
    /// counted nor failed.
    fn call(&self, op: FakeOp, clock: &AtomicU64, thread: u32) -> io::Result<()> {
        if thread != PREPARE_THREAD {
            let before = self.calls[op as usize].fetch_add(1, Ordering::Relaxed);
            if let Some((failing, after, errno)) = self.fail
                && failing == op
                && before >= after
            {
                return Err(io::Error::from_raw_os_error(errno));
            }
        }
        clock.fetch_add(self.ns[op as usize], Ordering::Relaxed);
        Ok(())
    }
}

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
    /// Where each worker's fake clock starts (index: thread; default 1000 ns): a later
    /// start is a worker that passed the start gate late.
    pub start_ns: Vec<u64>,
    /// Nanoseconds every clock read adds (catches work counted inside a timed interval).
    pub tick_per_read_ns: u64,
    /// Real time instead of per-thread fake clocks: clocks read CLOCK_MONOTONIC and a
    /// sync sleeps its scripted latency, so threads really overlap (group-commit tests:
    /// followers arrive while a leader's "flush" takes its time).
    pub real_time: bool,
    /// io_uring: request number (per worker ring, from 0) → the result it completes with
    /// instead of success (a short byte count, `-EAGAIN`, `-EIO`...).
    pub ring_results: Vec<(u64, i32)>,
    /// io_uring: building a worker's ring fails with this errno.
    pub ring_errno: Option<i32>,
    ring_log: Arc<Mutex<Vec<super::fake_ring::FakeRingEvent>>>,
    ops: Arc<OpScript>,
    clocks: Mutex<HashMap<u32, Arc<AtomicU64>>>,
    total_writes: Arc<AtomicU64>,
    total_syncs: Arc<AtomicU64>,
    created: Mutex<Vec<String>>,
    layouts: Mutex<Vec<FileLayout>>,
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

    /// Scripts the latency of `op` (default 0 ns).
    pub fn with_op_ns(mut self, op: FakeOp, ns: u64) -> Self {
        self.script().ns[op as usize] = ns;
        self
    }

    /// Makes every `op` of the workers after the first `after` (over all workers) fail
    /// with `errno`.
    pub fn with_op_failure(mut self, op: FakeOp, after: u64, errno: i32) -> Self {
        self.script().fail = Some((op, after, errno));
        self
    }

    fn script(&mut self) -> &mut OpScript {
        Arc::get_mut(&mut self.ops).expect("a fake is scripted before it is used")
    }

    /// Everything the workers' fake rings saw, in order.
    pub fn ring_log(&self) -> Vec<super::fake_ring::FakeRingEvent> {
        self.ring_log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// How many times the workers called `op` (failed calls included).
    pub fn op_calls(&self, op: FakeOp) -> u64 {
        self.ops.calls[op as usize].load(Ordering::Relaxed)
    }

    /// Names of the files created so far (in the run directory).
    pub fn created(&self) -> Vec<String> {
        self.created.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// The size and preparation each created file was asked for, in creation order (the
    /// only file work before the timed phase: a fake file is never truncated or allocated).
    pub fn preparations(&self) -> Vec<(u64, Prepare)> {
        self.layouts()
            .into_iter()
            .map(|l| (l.size_bytes, l.prepare))
            .collect()
    }

    /// The whole layout each created file was asked for (size, preparation, fill write
    /// length, seed), in creation order.
    pub fn layouts(&self) -> Vec<FileLayout> {
        self.layouts.lock().map(|c| c.clone()).unwrap_or_default()
    }

    fn clock_cell(&self, thread: u32) -> Arc<AtomicU64> {
        let mut clocks = self.clocks.lock().unwrap_or_else(|e| e.into_inner());
        clocks
            .entry(thread)
            .or_insert_with(|| {
                let start = self.start_ns.get(thread as usize).copied().unwrap_or(1_000);
                Arc::new(AtomicU64::new(start))
            })
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
    ops: Arc<OpScript>,
    thread: u32,
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

    fn read_at(&mut self, buf: &mut [u8], _offset: u64) -> io::Result<usize> {
        self.ops.call(FakeOp::Read, &self.clock, self.thread)?;
        Ok(buf.len())
    }

    fn stat(&mut self) -> io::Result<()> {
        self.ops.call(FakeOp::Stat, &self.clock, self.thread)
    }

    fn touch(&mut self) -> io::Result<()> {
        self.ops.call(FakeOp::Touch, &self.clock, self.thread)
    }

    fn set_xattr(&mut self, _name: &CStr, _value: &[u8]) -> io::Result<()> {
        self.ops.call(FakeOp::Xattr, &self.clock, self.thread)
    }

    fn close(self) -> io::Result<()> {
        self.ops.call(FakeOp::Close, &self.clock, self.thread)
    }
}

/// The fake's directory operations for one worker: each takes its scripted latency on
/// the worker's clock, or fails as scripted. No file is created, renamed or removed.
#[derive(Debug)]
pub struct FakeDirOps {
    backend_files: FakeFileTemplate,
    clock: Arc<AtomicU64>,
    ops: Arc<OpScript>,
    thread: u32,
}

/// What a [`FakeDirOps`] needs to hand out files like [`FakeBackend::open`] does.
#[derive(Debug, Clone)]
struct FakeFileTemplate {
    write_ns: Vec<u64>,
    sync_ns: Vec<u64>,
    total_writes: Arc<AtomicU64>,
    total_syncs: Arc<AtomicU64>,
    fail_after_writes: Option<(u64, i32)>,
    fail_after_syncs: Option<(u64, i32)>,
    panic_after_writes: Option<u64>,
    real_time: bool,
}

impl FakeFileTemplate {
    fn file(&self, clock: Arc<AtomicU64>, ops: Arc<OpScript>, thread: u32) -> FakeFile {
        // Preparation's writes neither count towards nor trip the scripted failures.
        let preparing = thread == PREPARE_THREAD;
        FakeFile {
            clock,
            write_ns: self.write_ns.clone(),
            sync_ns: self.sync_ns.clone(),
            writes: 0,
            syncs: 0,
            total_writes: if preparing {
                Arc::default()
            } else {
                self.total_writes.clone()
            },
            fail_after_writes: self.fail_after_writes.filter(|_| !preparing),
            panic_after_writes: self.panic_after_writes.filter(|_| !preparing),
            real_time: self.real_time,
            total_syncs: if preparing {
                Arc::default()
            } else {
                self.total_syncs.clone()
            },
            fail_after_syncs: self.fail_after_syncs.filter(|_| !preparing),
            ops,
            thread,
        }
    }
}

impl DirOps for FakeDirOps {
    type File = FakeFile;

    fn open_at(&mut self, _dir: &DirHandle, _name: &CStr, _how: OpenAt) -> io::Result<FakeFile> {
        self.call(FakeOp::OpenAt)?;
        Ok(self
            .backend_files
            .file(self.clock.clone(), self.ops.clone(), self.thread))
    }

    fn rename_at(&mut self, _dir: &DirHandle, _from: &CStr, _to: &CStr) -> io::Result<()> {
        self.call(FakeOp::Rename)
    }

    fn unlink_at(&mut self, _dir: &DirHandle, _name: &CStr) -> io::Result<()> {
        self.call(FakeOp::Unlink)
    }

    fn stat_at(&mut self, _dir: &DirHandle, _name: &CStr) -> io::Result<()> {
        self.call(FakeOp::StatAt)
    }

    fn statfs(&mut self, _dir: &DirHandle) -> io::Result<()> {
        self.call(FakeOp::Statfs)
    }

    fn list_dir(&mut self, _dir: &DirHandle, _name: &CStr) -> io::Result<()> {
        self.call(FakeOp::ListDir)
    }

    fn chown_at(&mut self, _dir: &DirHandle, _name: &CStr, _uid: u32, _gid: u32) -> io::Result<()> {
        self.call(FakeOp::Chown)
    }

    fn syncfs(&mut self, _dir: &DirHandle) -> io::Result<()> {
        self.call(FakeOp::Syncfs)
    }

    fn sync_dir(&mut self, _dir: &DirHandle) -> io::Result<()> {
        self.call(FakeOp::SyncDir)
    }
}

impl FakeDirOps {
    fn call(&self, op: FakeOp) -> io::Result<()> {
        self.ops.call(op, &self.clock, self.thread)
    }
}

impl FakeBackend {
    fn file_template(&self) -> FakeFileTemplate {
        FakeFileTemplate {
            write_ns: self.write_ns.clone(),
            sync_ns: self.sync_ns.clone(),
            total_writes: self.total_writes.clone(),
            total_syncs: self.total_syncs.clone(),
            fail_after_writes: self.fail_after_writes,
            fail_after_syncs: self.fail_after_syncs,
            panic_after_writes: self.panic_after_writes,
            real_time: self.real_time,
        }
    }
}

impl Backend for FakeBackend {
    type File = FakeFile;
    type Clock = FakeClock;
    type Dir = FakeDirOps;
    type Ring = super::fake_ring::FakeRing;

    fn create(
        &self,
        _dir: &DirHandle,
        name: &str,
        layout: &FileLayout,
        cancel: &CancelToken,
    ) -> io::Result<()> {
        if cancel.is_cancelled() {
            return Err(io::Error::from(io::ErrorKind::Interrupted));
        }
        self.layouts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(*layout);
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
        Ok(self
            .file_template()
            .file(self.clock_cell(thread), self.ops.clone(), thread))
    }

    fn clock(&self, thread: u32) -> FakeClock {
        FakeClock {
            now: self.clock_cell(thread),
            tick_ns: self.tick_per_read_ns,
            real_time: self.real_time,
        }
    }

    fn dir_ops(&self, thread: u32) -> FakeDirOps {
        FakeDirOps {
            backend_files: self.file_template(),
            clock: self.clock_cell(thread),
            ops: self.ops.clone(),
            thread,
        }
    }

    fn settle_sample(
        &self,
        stat_paths: &[&std::path::Path],
    ) -> Result<crate::probe::SettleSample, crate::probe::ProbeError> {
        Ok(crate::probe::SettleSample {
            in_flight: vec![0; stat_paths.len()],
            ..Default::default()
        })
    }

    fn settle_pause(&self, _ms: u64) {}
    fn ring(
        &self,
        _files: &[FakeFile],
        setup: super::ring::RingSetup,
        thread: u32,
    ) -> io::Result<super::fake_ring::FakeRing> {
        if let Some(errno) = self.ring_errno {
            return Err(io::Error::from_raw_os_error(errno));
        }
        Ok(super::fake_ring::FakeRing::new(
            thread,
            self.clock_cell(thread),
            setup,
            (self.write_ns.clone(), self.sync_ns.clone()),
            self.ring_results.clone(),
            self.ring_log.clone(),
        ))
    }
}
