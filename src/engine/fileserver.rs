//! The `fileserver` workload (seed 003, "xfs: drop async cache flushes from CIL commits",
//! which measured with dbench): N clients, each in its own directory tree, replay a
//! file-server operation mix (see [`super::fileserver_mix`]) for a set duration. Every
//! call is timed into its own per-operation histogram; writes and flushes also feed the
//! live counters and the run's write and sync histograms.
//!
//! The calls are made directly (openat, pwrite, pread, renameat, unlinkat, fstatat, fstat,
//! fstatvfs, futimens, readdir, fsync, close) relative to the client's directory
//! descriptor, with names written into fixed buffers before the clock is read: nothing is
//! allocated, locked or formatted between a call and its timing. They always use the real
//! clock, whatever the backend, since the backend's files are not involved.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;

use super::dirfd::DirHandle;
use super::file::{AlignedBuf, Clock, RealClock, check, fill_pattern};
use super::fileserver_mix::{
    DIRS, MAX_IO_BYTES, MAX_OPEN, Mix, NAME_LEN, OPS, Op, Step, dir_name, write_name,
};
use super::gate::StartGate;
use super::kinds::PrepareStop;
use super::offsets::mix;
use super::scratch::{IoSite, ScratchDir, describe_io_error};
use super::worker::{Live, Shared, WorkerOutput, record_sync};
use super::{CancelToken, EngineError, EngineEvent};
use crate::metrics::{OpStats, ThreadStats, bump};
use crate::spec::WorkloadSpec;

/// Descriptors one client may hold at once: its directory, its open files (at most 16, or
/// twice its files) and one directory being listed.
pub fn open_files_per_client(files_per_client: u32) -> u64 {
    2 + MAX_OPEN.min(2 * files_per_client.max(1) as usize) as u64
}

/// One client's directory and operation generator, made before timing.
#[derive(Clone)]
pub(super) struct ClientPlan {
    /// `fsynclab-<id>/client-N`, opened `O_DIRECTORY|O_NOFOLLOW` below the run directory.
    pub dir: Arc<DirHandle>,
    /// The generator, its working set already on disk.
    pub mix: Mix,
}

/// Creates every client's tree (`client-N/d00..d07`) and initial working set, then syncs
/// the filesystem once so the first timed flush does not pay for the preparation. Every
/// directory is made with mkdirat and opened by descriptor; every file with openat
/// (O_CREAT|O_EXCL|O_NOFOLLOW) in its subdirectory's descriptor.
pub(super) fn prepare(
    spec: &WorkloadSpec,
    scratch: &mut ScratchDir,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<Vec<ClientPlan>, PrepareStop> {
    let per_client = spec.fileserver.files_per_client;
    let plans: Vec<Mix> = (0..spec.threads)
        .map(|c| Mix::new(spec.seed, c, per_client))
        .collect();
    let total_bytes: u64 = plans.iter().flat_map(|m| m.files()).map(|f| f.size).sum();
    let files = spec.threads.saturating_mul(per_client);
    let _ = events.send(EngineEvent::Preparing {
        files,
        bytes_per_file: total_bytes / u64::from(files.max(1)),
    });
    let fill = fill_pattern(1 << 20, spec.seed);
    let fail = |op: &str, dir: &DirHandle, name: &str, e: &io::Error| {
        let site = IoSite {
            kind: spec.kind,
            dir,
            name,
        };
        PrepareStop::Error(EngineError::Prepare(describe_io_error(site, op, None, e)))
    };
    let mut out = Vec::with_capacity(plans.len());
    for (client, mix) in plans.into_iter().enumerate() {
        if cancel.is_cancelled() {
            return Err(PrepareStop::Cancelled);
        }
        let name = format!("client-{client}");
        let dir = scratch
            .subdir(&name)
            .map_err(|e| fail("mkdir", scratch.dir(), &name, &e))?;
        let mut subdirs = Vec::with_capacity(DIRS as usize);
        for d in 0..DIRS {
            let sub = dir_text(d);
            dir.mkdir(&sub).map_err(|e| fail("mkdir", &dir, &sub, &e))?;
            subdirs.push(
                dir.open_subdir(&sub)
                    .map_err(|e| fail("open", &dir, &sub, &e))?,
            );
        }
        for f in mix.files() {
            let full = name_text(f.dir, f.id);
            let sub = &subdirs[f.dir as usize];
            write_new_file(sub, leaf(&full), &fill, f.size)
                .map_err(|e| fail("prepare", &dir, &full, &e))?;
        }
        out.push(ClientPlan {
            dir: Arc::new(dir),
            mix,
        });
    }
    // SAFETY: plain syscall on a descriptor we hold; failure only costs the first sync.
    unsafe { libc::syncfs(scratch.dir().fd().as_raw_fd()) };
    Ok(out)
}

fn write_new_file(dir: &DirHandle, name: &str, fill: &[u8], size: u64) -> io::Result<()> {
    use std::io::Write;
    let mut file = dir.create_file(name, nix::fcntl::OFlag::empty())?;
    let mut left = size;
    while left > 0 {
        let n = left.min(fill.len() as u64) as usize;
        file.write_all(&fill[..n])?;
        left -= n as u64;
    }
    Ok(())
}

fn dir_text(dir: u16) -> String {
    let b = dir_name(dir);
    String::from_utf8_lossy(&b[..3]).into_owned()
}

fn name_text(dir: u16, id: u64) -> String {
    let mut b = [0u8; NAME_LEN];
    write_name(&mut b, dir, id, false);
    String::from_utf8_lossy(&b[..NAME_LEN - 1]).into_owned()
}

/// The file name of `dNN/fXXX` inside its subdirectory (the part after `dNN/`).
fn leaf(full: &str) -> &str {
    &full[DIR_PREFIX..]
}

/// Bytes of the `dNN/` prefix of every name [`write_name`] writes.
const DIR_PREFIX: usize = 4;

/// The client's directory, its subdirectories and its open files.
struct Tree<'a> {
    dir: &'a DirHandle,
    /// `d00..d07`, opened `O_DIRECTORY|O_NOFOLLOW`: names are resolved in them.
    subdirs: Vec<DirHandle>,
    fds: [RawFd; MAX_OPEN],
}

impl Drop for Tree<'_> {
    fn drop(&mut self) {
        for fd in self.fds.iter_mut().filter(|fd| **fd >= 0) {
            // SAFETY: an fd this tree opened and has not closed.
            unsafe { libc::close(*fd) };
            *fd = -1;
        }
    }
}

fn cstr(buf: &[u8]) -> &CStr {
    CStr::from_bytes_until_nul(buf).expect("names are NUL-terminated")
}

impl<'a> Tree<'a> {
    fn open(dir: &'a DirHandle) -> io::Result<Tree<'a>> {
        let subdirs = (0..DIRS)
            .map(|d| dir.open_subdir(&dir_text(d)))
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Tree {
            dir,
            subdirs,
            fds: [-1; MAX_OPEN],
        })
    }

    /// The descriptor of subdirectory `dir`.
    #[inline]
    fn sub(&self, dir: u16) -> RawFd {
        self.subdirs[dir as usize].fd().as_raw_fd()
    }

    /// Performs `step`; returns the bytes read or written. `a` and `b` hold the names it
    /// uses (written before the clock was read).
    #[inline]
    fn exec(
        &mut self,
        step: &Step,
        a: &[u8; NAME_LEN],
        b: &[u8; NAME_LEN],
        wbuf: &AlignedBuf,
        rbuf: &mut [u8],
    ) -> io::Result<u64> {
        let dirfd = self.dir.fd().as_raw_fd();
        let file_flags = libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_RDWR;
        // Names are `dNN/...`: each is resolved in its subdirectory's descriptor, so
        // no path component is ever looked up by name at run time.
        let (a_leaf, b_leaf) = (&a[DIR_PREFIX..], &b[DIR_PREFIX..]);
        // SAFETY (every call below): plain syscalls on descriptors this tree owns, with
        // NUL-terminated names and buffers valid for the lengths passed.
        match *step {
            Step::Create { slot, dir, .. } => {
                let flags = file_flags | libc::O_CREAT | libc::O_EXCL;
                let at = self.sub(dir);
                let fd = check(unsafe { libc::openat(at, cstr(a_leaf).as_ptr(), flags, 0o600) })?;
                self.fds[slot as usize] = fd;
                Ok(0)
            }
            Step::Open { slot, dir, .. } => {
                let at = self.sub(dir);
                let fd = check(unsafe { libc::openat(at, cstr(a_leaf).as_ptr(), file_flags) })?;
                self.fds[slot as usize] = fd;
                Ok(0)
            }
            Step::Close { slot } => {
                let fd = std::mem::replace(&mut self.fds[slot as usize], -1);
                check(unsafe { libc::close(fd) }).map(|_| 0)
            }
            Step::Write { slot, offset, len } => {
                let buf = &wbuf.as_slice()[..len as usize];
                let fd = self.fds[slot as usize];
                let n = unsafe { libc::pwrite(fd, buf.as_ptr().cast(), buf.len(), offset as i64) };
                if n < 0 {
                    return Err(io::Error::last_os_error());
                }
                if n as usize != buf.len() {
                    return Err(io::Error::new(io::ErrorKind::WriteZero, "short write"));
                }
                Ok(n as u64)
            }
            Step::Read { slot, offset, len } => {
                let buf = &mut rbuf[..len as usize];
                let fd = self.fds[slot as usize];
                let n =
                    unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), offset as i64) };
                if n < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(n as u64)
            }
            Step::Rename { dir, .. } => {
                let at = self.sub(dir);
                let (from, to) = (cstr(a_leaf).as_ptr(), cstr(b_leaf).as_ptr());
                check(unsafe { libc::renameat(at, from, at, to) }).map(|_| 0)
            }
            Step::Unlink { dir, .. } => {
                check(unsafe { libc::unlinkat(self.sub(dir), cstr(a_leaf).as_ptr(), 0) }).map(|_| 0)
            }
            Step::Stat { missing, dir, .. } => {
                let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
                let rc = unsafe {
                    libc::fstatat(
                        self.sub(dir),
                        cstr(a_leaf).as_ptr(),
                        st.as_mut_ptr(),
                        libc::AT_SYMLINK_NOFOLLOW,
                    )
                };
                match check(rc) {
                    Err(e) if missing && e.raw_os_error() == Some(libc::ENOENT) => Ok(0),
                    other => other.map(|_| 0),
                }
            }
            Step::Fstat { slot } => {
                let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
                check(unsafe { libc::fstat(self.fds[slot as usize], st.as_mut_ptr()) }).map(|_| 0)
            }
            Step::Statfs => {
                let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
                check(unsafe { libc::fstatvfs(dirfd, st.as_mut_ptr()) }).map(|_| 0)
            }
            Step::Setattr { slot } => {
                check(unsafe { libc::futimens(self.fds[slot as usize], std::ptr::null()) })
                    .map(|_| 0)
            }
            Step::Readdir { .. } => {
                let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
                let fd = check(unsafe { libc::openat(dirfd, cstr(a).as_ptr(), flags) })?;
                let dir = unsafe { libc::fdopendir(fd) };
                if dir.is_null() {
                    let e = io::Error::last_os_error();
                    unsafe { libc::close(fd) };
                    return Err(e);
                }
                let result = loop {
                    nix::errno::Errno::clear();
                    if unsafe { libc::readdir(dir) }.is_null() {
                        break match nix::errno::Errno::last_raw() {
                            0 => Ok(0),
                            errno => Err(io::Error::from_raw_os_error(errno)),
                        };
                    }
                };
                unsafe { libc::closedir(dir) };
                result
            }
            Step::Flush { slot } => {
                check(unsafe { libc::fsync(self.fds[slot as usize]) }).map(|_| 0)
            }
        }
    }
}

/// Writes the names `step` uses into `a` (and `b` for a rename's new name).
#[inline]
fn names_of(step: &Step, a: &mut [u8; NAME_LEN], b: &mut [u8; NAME_LEN]) {
    match *step {
        Step::Create { dir, id, .. } | Step::Open { dir, id, .. } | Step::Unlink { dir, id } => {
            write_name(a, dir, id, false)
        }
        Step::Stat { dir, id, missing } => write_name(a, dir, id, missing),
        Step::Rename { dir, from, to } => {
            write_name(a, dir, from, false);
            write_name(b, dir, to, false);
        }
        Step::Readdir { dir } => a[..4].copy_from_slice(&dir_name(dir)),
        _ => {}
    }
}

/// Which name (in the client's directory) an error message names: the step's file, or
/// `.` for the calls on an open file.
fn error_name(step: &Step, a: &[u8; NAME_LEN]) -> String {
    match step {
        Step::Create { .. }
        | Step::Open { .. }
        | Step::Rename { .. }
        | Step::Unlink { .. }
        | Step::Stat { .. }
        | Step::Readdir { .. } => CStr::from_bytes_until_nul(a)
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default(),
        _ => ".".into(),
    }
}

/// Runs client `thread` until the duration ends, the run is cancelled or a call fails.
pub(super) fn run_client(
    spec: &WorkloadSpec,
    thread: u32,
    plan: &ClientPlan,
    shared: &Shared,
    live: &Live,
    gate: &StartGate,
    arrived: &mut bool,
) -> WorkerOutput {
    let clock = RealClock::default();
    let mut out = WorkerOutput::new(thread);
    let mut generator = plan.mix.clone();
    let mut ops: Vec<OpStats> = OPS.iter().map(|op| OpStats::new(op.name())).collect();
    let mut wbuf = AlignedBuf::new(MAX_IO_BYTES, mix(spec.seed ^ u64::from(thread)));
    let mut rbuf = vec![0u8; MAX_IO_BYTES];
    let (mut a, mut b) = ([0u8; NAME_LEN], [0u8; NAME_LEN]);
    let tree = Tree::open(&plan.dir);
    if let Err(e) = &tree {
        let site = IoSite {
            kind: spec.kind,
            dir: &plan.dir,
            name: ".",
        };
        out.open_error = Some(describe_io_error(site, "open", None, e));
        shared.stop.0.store(true, Ordering::Relaxed);
    }
    *arrived = true;
    if !gate.arrive_and_wait() {
        return out;
    }
    let Ok(mut tree) = tree else { return out };

    let stamp = (u64::from(thread) << 48) ^ mix(spec.seed);
    let start = clock.now_ns();
    out.started = true;
    let deadline = shared.deadline_ns(spec.stop_rule(), start);
    let (mut writes, mut syncs, mut bytes, mut busy) = (0u64, 0u64, 0u64, 0u64);
    let mut now = start;
    while !shared.stop.0.load(Ordering::Relaxed) && now < deadline {
        let step = generator.next_step();
        names_of(&step, &mut a, &mut b);
        if let Step::Write { offset, len, .. } = step
            && len >= 16
        {
            // Every write carries different data (dedup/compression see real bytes).
            wbuf.stamp(offset ^ stamp, writes);
        }
        let t0 = clock.now_ns();
        let result = tree.exec(&step, &a, &b, &wbuf, &mut rbuf);
        let t1 = clock.now_ns();
        now = t1;
        let op = step.op();
        let moved = match result {
            Ok(n) => n,
            Err(e) => {
                let offset = match step {
                    Step::Write { offset, .. } | Step::Read { offset, .. } => Some(offset),
                    _ => None,
                };
                let name = error_name(&step, &a);
                let site = IoSite {
                    kind: spec.kind,
                    dir: &plan.dir,
                    name: &name,
                };
                out.error = Some(describe_io_error(site, op.name(), offset, &e));
                break;
            }
        };
        let ns = t1.saturating_sub(t0);
        busy += ns;
        ops[op as usize].record(ns, moved);
        match op {
            Op::Write => {
                out.write_lat.record(ns);
                live.write_buckets.record(ns);
                bump(&live.writes, 1);
                bump(&live.bytes, moved);
                writes += 1;
                bytes += moved;
            }
            Op::Flush => {
                record_sync(&mut out.sync_lat, live, ns);
                syncs += 1;
            }
            _ => {}
        }
    }
    if out.error.is_some() {
        shared.stop.0.store(true, Ordering::Relaxed);
    }
    out.start_ns = start;
    out.end_ns = clock.now_ns();
    drop(tree);
    out.ops = ops;
    out.stats = ThreadStats {
        thread,
        writes,
        syncs,
        bytes,
        busy_ns: busy,
        wall_ns: out.end_ns.saturating_sub(start),
    };
    out
}

#[cfg(test)]
mod tests {
    use super::super::{CancelToken, RunContext, run};
    use crate::metrics::RunStatus;
    use crate::probe::SystemInfo;
    use crate::spec::{WorkloadKind, WorkloadSpec};

    fn spec(clients: u32, secs: f64) -> WorkloadSpec {
        let mut s = WorkloadSpec {
            kind: WorkloadKind::Fileserver,
            threads: clients,
            duration_s: Some(secs),
            ..Default::default()
        };
        s.fileserver.files_per_client = 8;
        s
    }

    fn ctx(dir: &std::path::Path) -> RunContext {
        RunContext {
            run_id: 3,
            target: dir.to_path_buf(),
            keep_files: false,
            dir_name: None,
            allow_shared_target: false,
            system: SystemInfo::default(),
        }
    }

    #[test]
    fn descriptors_per_client() {
        assert_eq!(super::open_files_per_client(64), 18);
        assert_eq!(super::open_files_per_client(1), 4);
        assert_eq!(super::open_files_per_client(0), 4);
    }

    #[test]
    fn a_short_run_times_every_call_and_removes_its_tree() {
        let dir = tempfile::tempdir().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let r = run(&spec(2, 0.3), &ctx(dir.path()), &tx, &CancelToken::new()).unwrap();
        assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
        let total: u64 = r.ops.iter().map(|o| o.count).sum();
        let timed: u64 = r.ops.iter().map(|o| o.lat.count()).sum();
        assert!(total > 100, "{total} operations");
        assert_eq!(total, timed);
        let flush = r.ops.iter().find(|o| o.op == "flush").unwrap();
        assert_eq!((flush.count, r.sync_lat.count()), (r.syncs, r.syncs));
        let write = r.ops.iter().find(|o| o.op == "write").unwrap();
        assert_eq!((write.count, write.bytes), (r.writes, r.bytes));
        // Per-thread busy time is the sum of the timed calls, within the wall time.
        for t in &r.threads {
            assert!(t.busy_ns <= t.wall_ns + 1_000_000, "{t:?}");
        }
        assert!(
            rx.try_iter()
                .any(|e| matches!(e, super::EngineEvent::Preparing { files: 16, .. }))
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn cancel_stops_a_long_run_and_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        let (tx, _rx) = std::sync::mpsc::channel();
        let cancel = CancelToken::new();
        let c = cancel.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            c.cancel();
        });
        let started = std::time::Instant::now();
        let r = run(&spec(2, 60.0), &ctx(dir.path()), &tx, &cancel).unwrap();
        t.join().unwrap();
        assert_eq!(r.status, RunStatus::Cancelled);
        assert!(started.elapsed().as_secs() < 20);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
