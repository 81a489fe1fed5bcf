//! The `fileserver` workload (seed 003, "xfs: drop async cache flushes from CIL commits",
//! which measured with dbench): N clients, each in its own directory tree, replay a
//! file-server operation mix (see [`super::fileserver_mix`]) for a set duration. Every
//! call is timed into its own per-operation histogram; writes and flushes also feed the
//! live counters and the run's write and sync histograms.
//!
//! Every call goes through the [`Backend`] (openat, pwrite, pread, renameat, unlinkat,
//! fstatat, fstat, fstatvfs, futimens, readdir, fsync, close), relative to the descriptor
//! of the client's subdirectory, with names written into fixed buffers before the clock
//! is read: nothing is allocated, locked or formatted between a call and its timing.

use std::ffi::CStr;
use std::io;
use std::sync::Arc;
use std::sync::mpsc::Sender;

use super::api::{CancelToken, EngineError, EngineEvent};
use super::dirfd::DirHandle;
use super::file::{
    AlignedBuf, Backend, Clock, DirOps, OpenAt, PREPARE_THREAD, SyncFile, fill_pattern,
};
use super::fileserver_mix::{
    DIRS, MAX_IO_BYTES, MAX_OPEN, Mix, NAME_LEN, OPS, Op, Step, dir_name, write_name,
};
use super::harness::{
    Counts, PrepareStop, Timed, Worker, WorkerOutput, end_warmup, record_sync, run_worker,
};
use super::kind::Kind;
use super::offsets::mix;
use super::scratch::{IoSite, ScratchDir, failed_io, io_failure};
use crate::metrics::{OpStats, bump};
use crate::spec::{SyncMethod, WorkloadSpec};

/// Descriptors one client may hold at once: its directory, its open files (at most 16, or
/// twice its files) and one directory being listed.
pub fn open_files_per_client(files_per_client: u32) -> u64 {
    2 + MAX_OPEN.min(2 * files_per_client.max(1) as usize) as u64
}

/// The `fileserver` kind.
pub(crate) struct Fileserver;

impl Kind for Fileserver {
    type Spec = crate::spec::kinds::fileserver::Spec;

    type Plan = Vec<ClientPlan>;

    const DENSE_LATENCY: bool = false;

    /// Creates every client's tree (`client-N/d00..d07`) and initial working set, then syncs
    /// the filesystem once so the first timed flush does not pay for the preparation. Every
    /// directory is made with mkdirat and opened by descriptor; every file is created through
    /// the backend (openat O_CREAT|O_EXCL|O_NOFOLLOW) in its subdirectory's descriptor.
    fn prepare<B: Backend>(
        backend: &B,
        spec: &WorkloadSpec,
        k: &Self::Spec,
        scratch: &mut ScratchDir,
        events: &Sender<EngineEvent>,
        cancel: &CancelToken,
    ) -> Result<Vec<ClientPlan>, PrepareStop> {
        let per_client = k.files_per_client;
        let plans: Vec<Mix> = (0..spec.common.threads)
            .map(|c| Mix::new(spec.common.seed, c, per_client))
            .collect();
        let total_bytes: u64 = plans.iter().flat_map(|m| m.files()).map(|f| f.size).sum();
        let files = spec.common.threads.saturating_mul(per_client);
        let _ = events.send(EngineEvent::Preparing {
            files,
            bytes_per_file: total_bytes / u64::from(files.max(1)),
        });
        let fill = fill_pattern(1 << 20, spec.common.seed);
        let fail = |op: &str, dir: &DirHandle, name: &str, e: &io::Error| {
            let site = IoSite {
                kind: spec.kind(),
                dir,
                name,
            };
            PrepareStop::Error(EngineError::Prepare(io_failure(site, op, None, e)))
        };
        let mut ops = backend.dir_ops(PREPARE_THREAD);
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
            let mut a = [0u8; NAME_LEN];
            for f in mix.files() {
                write_name(&mut a, f.dir, f.id, false);
                let sub = &subdirs[f.dir as usize];
                write_new_file(&mut ops, sub, cstr(&a[DIR_PREFIX..]), &fill, f.size)
                    .map_err(|e| fail("prepare", &dir, &name_text(&a), &e))?;
            }
            out.push(ClientPlan {
                dir: Arc::new(dir),
                mix,
            });
        }
        // Failure only costs the first timed sync.
        let _ = ops.syncfs(scratch.dir());
        Ok(out)
    }

    fn work<B: Backend>(
        plans: &Vec<ClientPlan>,
        backend: &B,
        spec: &WorkloadSpec,
        _k: &Self::Spec,
        w: Worker<'_>,
    ) -> WorkerOutput {
        let plan = &plans[w.thread as usize];
        run_client(backend, spec, plan, w)
    }

    // Initial files average 180 KiB; creates and writes can grow a client's set to
    // twice its files, each up to 1 MiB: 512 KiB a file is a generous typical bound.
    fn space_needed(spec: &WorkloadSpec, k: &Self::Spec) -> u64 {
        u64::from(spec.common.threads)
            .saturating_mul(u64::from(k.files_per_client))
            .saturating_mul(512 << 10)
    }

    fn bytes_per_write(_spec: &WorkloadSpec, _k: &Self::Spec) -> u64 {
        0
    }

    fn expected_writes(_spec: &WorkloadSpec, _k: &Self::Spec) -> Option<u64> {
        None
    }
}

/// One client's directory and operation generator, made before timing.
#[derive(Clone)]
pub(crate) struct ClientPlan {
    /// `fsynclab-<id>/client-N`, opened `O_DIRECTORY|O_NOFOLLOW` below the run directory.
    pub dir: Arc<DirHandle>,
    /// The generator, its working set already on disk.
    pub mix: Mix,
}

fn write_new_file<D: DirOps>(
    ops: &mut D,
    dir: &DirHandle,
    name: &CStr,
    fill: &[u8],
    size: u64,
) -> io::Result<()> {
    let how = OpenAt {
        write_only: true,
        create: true,
        o_sync: false,
    };
    let mut file = ops.open_at(dir, name, how)?;
    let mut offset = 0;
    while offset < size {
        let n = (size - offset).min(fill.len() as u64) as usize;
        if let Err(e) = file.write_at(&fill[..n], offset) {
            let _ = file.close();
            return Err(e);
        }
        offset += n as u64;
    }
    file.close()
}

fn dir_text(dir: u16) -> String {
    let b = dir_name(dir);
    String::from_utf8_lossy(&b[..3]).into_owned()
}

/// A NUL-terminated name buffer as text (messages only).
fn name_text(buf: &[u8]) -> String {
    cstr(buf).to_string_lossy().into_owned()
}

/// Bytes of the `dNN/` prefix of every name [`write_name`] writes.
const DIR_PREFIX: usize = 4;

/// The client's directory, its subdirectories and its open files.
struct Tree<'a, B: Backend> {
    dir: &'a DirHandle,
    /// `d00..d07`, opened `O_DIRECTORY|O_NOFOLLOW`: names are resolved in them.
    subdirs: Vec<DirHandle>,
    files: [Option<B::File>; MAX_OPEN],
    ops: B::Dir,
}

fn cstr(buf: &[u8]) -> &CStr {
    CStr::from_bytes_until_nul(buf).expect("names are NUL-terminated")
}

/// The error of a call on a slot that holds no open file (never happens: the generator
/// only uses open slots).
fn bad_slot() -> io::Error {
    io::Error::from_raw_os_error(libc::EBADF)
}

impl<'a, B: Backend> Tree<'a, B> {
    fn open(backend: &B, thread: u32, dir: &'a DirHandle) -> io::Result<Self> {
        let subdirs = (0..DIRS)
            .map(|d| dir.open_subdir(&dir_text(d)))
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Tree {
            dir,
            subdirs,
            files: std::array::from_fn(|_| None),
            ops: backend.dir_ops(thread),
        })
    }

    /// The open file in `slot`.
    #[inline]
    fn file(&mut self, slot: u8) -> io::Result<&mut B::File> {
        self.files[slot as usize].as_mut().ok_or_else(bad_slot)
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
        // Names are `dNN/...`: each is resolved in its subdirectory's descriptor, so
        // no path component is ever looked up by name at run time.
        let (a_leaf, b_leaf) = (&a[DIR_PREFIX..], &b[DIR_PREFIX..]);
        let rw = OpenAt {
            write_only: false,
            create: false,
            o_sync: false,
        };
        match *step {
            Step::Create { slot, dir, .. } => {
                let how = OpenAt { create: true, ..rw };
                let file = self
                    .ops
                    .open_at(&self.subdirs[dir as usize], cstr(a_leaf), how)?;
                self.files[slot as usize] = Some(file);
                Ok(0)
            }
            Step::Open { slot, dir, .. } => {
                let file = self
                    .ops
                    .open_at(&self.subdirs[dir as usize], cstr(a_leaf), rw)?;
                self.files[slot as usize] = Some(file);
                Ok(0)
            }
            Step::Close { slot } => {
                let file = self.files[slot as usize].take().ok_or_else(bad_slot)?;
                file.close().map(|()| 0)
            }
            Step::Write { slot, offset, len } => {
                let buf = &wbuf.as_slice()[..len as usize];
                self.file(slot)?
                    .write_at(buf, offset)
                    .map(|()| u64::from(len))
            }
            Step::Read { slot, offset, len } => {
                let buf = &mut rbuf[..len as usize];
                self.file(slot)?.read_at(buf, offset).map(|n| n as u64)
            }
            Step::Rename { dir, .. } => {
                let at = &self.subdirs[dir as usize];
                self.ops
                    .rename_at(at, cstr(a_leaf), cstr(b_leaf))
                    .map(|()| 0)
            }
            Step::Unlink { dir, .. } => {
                let at = &self.subdirs[dir as usize];
                self.ops.unlink_at(at, cstr(a_leaf)).map(|()| 0)
            }
            Step::Stat { missing, dir, .. } => {
                match self.ops.stat_at(&self.subdirs[dir as usize], cstr(a_leaf)) {
                    Err(e) if missing && e.raw_os_error() == Some(libc::ENOENT) => Ok(0),
                    other => other.map(|()| 0),
                }
            }
            Step::Fstat { slot } => self.file(slot)?.stat().map(|()| 0),
            Step::Statfs => self.ops.statfs(self.dir).map(|()| 0),
            Step::Setattr { slot } => self.file(slot)?.touch().map(|()| 0),
            Step::Readdir { .. } => self.ops.list_dir(self.dir, cstr(a)).map(|()| 0),
            Step::Flush { slot } => self.file(slot)?.sync(SyncMethod::Fsync).map(|()| 0),
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

/// What a client holds from before the gate.
struct Client<'a, B: Backend> {
    tree: Tree<'a, B>,
    generator: Mix,
    ops: Vec<OpStats>,
    wbuf: AlignedBuf,
    rbuf: Vec<u8>,
}

/// Runs client `w.thread` until the duration ends, the run is cancelled or a call fails.
fn run_client<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    plan: &ClientPlan,
    w: Worker<'_>,
) -> WorkerOutput {
    let thread = w.thread;
    let open = || {
        let tree = Tree::open(backend, thread, &plan.dir).map_err(|e| {
            let site = IoSite {
                kind: spec.kind(),
                dir: &plan.dir,
                name: ".",
            };
            io_failure(site, "open", None, &e)
        });
        let generator = plan.mix.clone();
        let ops = OPS.iter().map(|op| OpStats::new(op.name())).collect();
        let wbuf = AlignedBuf::new(MAX_IO_BYTES, mix(spec.common.seed ^ u64::from(thread)));
        let rbuf = vec![0u8; MAX_IO_BYTES];
        tree.map(|tree| Client {
            tree,
            generator,
            ops,
            wbuf,
            rbuf,
        })
    };
    run_worker(backend, w, open, |client, t| {
        let counts = step_loop(spec, plan, thread, client, t);
        t.out.ops = std::mem::take(&mut client.ops);
        counts
    })
}

/// Replays the client's operation mix, timing every call.
fn step_loop<B: Backend>(
    spec: &WorkloadSpec,
    plan: &ClientPlan,
    thread: u32,
    client: &mut Client<'_, B>,
    t: &mut Timed<'_, B::Clock>,
) -> Counts {
    let (mut a, mut b) = ([0u8; NAME_LEN], [0u8; NAME_LEN]);
    let stamp = (u64::from(thread) << 48) ^ mix(spec.common.seed);
    let (clock, live) = (&t.clock, t.live);
    let mut c = Counts::default();
    let (mut now, deadline) = (t.start_ns, t.deadline_ns);
    let mut warming = t.warm_end_ns != 0;
    while !t.stopped() && now < deadline {
        if warming && now >= t.warm_end_ns {
            // dbench leaves its warm-up out of its figures: so do the client's.
            end_warmup(&mut t.out, &mut c);
            client.ops.iter_mut().for_each(OpStats::clear);
            t.start_ns = now;
            warming = false;
        }
        let step = client.generator.next_step();
        names_of(&step, &mut a, &mut b);
        if let Step::Write { offset, len, .. } = step
            && len >= 16
        {
            // Every write carries different data (dedup/compression see real bytes).
            client.wbuf.stamp(offset ^ stamp, c.writes);
        }
        let t0 = clock.now_ns();
        let result = client
            .tree
            .exec(&step, &a, &b, &client.wbuf, &mut client.rbuf);
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
                    kind: spec.kind(),
                    dir: &plan.dir,
                    name: &name,
                };
                t.out.error = Some(failed_io(site, op.name(), offset, &e));
                break;
            }
        };
        let ns = t1.saturating_sub(t0);
        c.busy_ns += ns;
        client.ops[op as usize].record(ns, moved);
        match op {
            Op::Write => {
                t.out.write_lat.record(ns);
                live.write_buckets.record(ns);
                bump(&live.writes, 1);
                bump(&live.bytes, moved);
                c.writes += 1;
                c.bytes += moved;
            }
            Op::Flush => {
                record_sync(&mut t.out.sync_lat, live, ns);
                c.syncs += 1;
            }
            _ => {}
        }
    }
    if warming {
        end_warmup(&mut t.out, &mut c);
        client.ops.iter_mut().for_each(OpStats::clear);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::super::{CancelToken, RunContext, run};
    use crate::metrics::RunStatus;
    use crate::spec::{FlatSpec, WorkloadKind, WorkloadSpec};

    fn spec(clients: u32, secs: f64) -> WorkloadSpec {
        let mut s = FlatSpec {
            kind: WorkloadKind::Fileserver,
            threads: clients,
            duration_s: Some(secs),
            ..FlatSpec::default()
        }
        .typed();
        s.edit(|f| f.fileserver.files_per_client = 8);
        s
    }

    fn ctx(dir: &std::path::Path) -> RunContext {
        RunContext::new(3, dir.to_path_buf())
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

#[cfg(test)]
#[path = "fileserver_fake_tests.rs"]
mod fake_tests;
