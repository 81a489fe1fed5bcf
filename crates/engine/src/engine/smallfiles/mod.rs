//! `smallfiles`: each thread creates files in its own directory, as fs_mark does (seed 003
//! "xfs: drop async cache flushes from CIL commits" timed fsmark's create, chown and unlink;
//! seed 004 "jbd: transaction batching for multi-threaded synchronous writers" measured
//! threads creating files with fsync before close).
//!
//! Per file of the create phase, every call through the [`Backend`]:
//! openat(O_CREAT|O_EXCL|O_WRONLY|O_NOFOLLOW|O_CLOEXEC [|O_SYNC]) timed as `create`, one pwrite of the whole file (`write`), the 64-byte xattr
//! (`xattr`), fsync/fdatasync (`sync`) and close (`close`). The xattr is set before the
//! sync so that an fsync-before-close file is durable with everything it was given. With
//! `syncfs`, each thread calls syncfs(2) once after its last file (a `sync`). Then, after
//! every thread has finished the phase before, the optional `chown` and `unlink` phases
//! walk the files each thread created. Names live in a fixed buffer rewritten in place, so
//! the timed loops do not allocate.

mod parts;

use std::ffi::CStr;
use std::io;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;

use super::api::{AckSink, EngineError, EngineEvent};
use super::dirfd::DirHandle;
use super::file::{Backend, Clock, DirOps, PREPARE_THREAD, SyncFile, fill_pattern};
use super::harness::{
    Counts, PhaseSpan, PrepareStop, Timed, Worker, WorkerOutput, record_sync, run_worker,
};
use super::kind::Kind;
use super::offsets::mix;
use super::scratch::{IoSite, ScratchDir, io_failure};
use super::target_error::TargetError;
use crate::crashlog::{Ack, RecordId, fill_record};
use crate::metrics::{OpStats, RunFailure, bump};
use crate::spec::{FileSync, SyncMethod, WorkloadKind, WorkloadSpec};
use parts::{FileName, PhaseBarrier, StopOnPanic, open_how};

/// Name of the extended attribute set on each file (`user.` namespace: settable by
/// anyone who may write the file).
pub(crate) const XATTR_NAME: &CStr = c"user.fsynclab";
/// Bytes of the extended attribute value (the size fsmark used in seed 003).
pub(crate) const XATTR_LEN: usize = 64;
/// What each file is renamed over with `rename_over` (the core's `smallfiles::CURRENT`).
pub(crate) const CURRENT: &CStr = c"current";
/// The uid/gid root chowns files to: `nobody`, so every inode really changes owner.
const NOBODY: u32 = 65534;

/// The `smallfiles` kind.
pub(crate) struct Smallfiles;

impl Kind for Smallfiles {
    type Spec = crate::spec::kinds::smallfiles::Spec;

    type Plan = SmallfilesPlan;

    fn prepare<B: Backend>(
        backend: &B,
        spec: &WorkloadSpec,
        k: &Self::Spec,
        scratch: &mut ScratchDir,
        events: &Sender<EngineEvent>,
        _cancel: &super::api::CancelToken,
    ) -> Result<SmallfilesPlan, PrepareStop> {
        prepare(backend, spec, k, scratch, events)
    }

    fn work<B: Backend>(
        plan: &SmallfilesPlan,
        backend: &B,
        spec: &WorkloadSpec,
        k: &Self::Spec,
        w: Worker<'_>,
    ) -> WorkerOutput {
        plan.work(backend, spec, k, w)
    }

    // Data rounded up to 4 KiB blocks, plus about 512 bytes of inode and directory entry
    // per file (an empty file still costs those).
    fn space_needed(spec: &WorkloadSpec, k: &Self::Spec) -> u64 {
        u64::from(spec.common.threads)
            .saturating_mul(k.files_per_thread)
            .saturating_mul(k.file_size.div_ceil(4096) * 4096 + 512)
    }

    fn bytes_per_write(_spec: &WorkloadSpec, k: &Self::Spec) -> u64 {
        k.file_size
    }

    // A smallfiles "write" is one file created (whatever its size, even 0).
    fn expected_writes(spec: &WorkloadSpec, k: &Self::Spec) -> Option<u64> {
        match spec.stop_rule() {
            crate::spec::StopRule::Duration(_) => None,
            _ => Some(
                k.files_per_thread
                    .saturating_mul(u64::from(spec.common.threads)),
            ),
        }
    }
}

/// What a smallfiles run prepared: one directory per worker and the phase barrier.
pub(crate) struct SmallfilesPlan {
    /// Each worker's directory, opened `O_DIRECTORY|O_NOFOLLOW` below the run directory.
    dirs: Vec<DirHandle>,
    barrier: PhaseBarrier,
    /// Owner the chown phase gives every file.
    owner: (u32, u32),
}

/// Creates one directory per worker (`thread-N`) and, when xattrs are asked for, checks
/// that the filesystem takes a `user.` xattr, so a refusal is a clear error before timing.
fn prepare<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    k: &crate::spec::kinds::smallfiles::Spec,
    scratch: &mut ScratchDir,
    events: &Sender<EngineEvent>,
) -> Result<SmallfilesPlan, PrepareStop> {
    let _ = events.send(EngineEvent::Preparing {
        files: 0,
        bytes_per_file: k.file_size,
    });
    let mut dirs = Vec::with_capacity(spec.common.threads as usize);
    for t in 0..spec.common.threads {
        let name = format!("thread-{t}");
        let dir = scratch.subdir(&name).map_err(|e| {
            let site = IoSite {
                kind: spec.kind(),
                dir: scratch.dir(),
                name: &name,
            };
            PrepareStop::Error(EngineError::Prepare(io_failure(site, "mkdir", None, &e)))
        })?;
        dirs.push(dir);
    }
    if k.xattr {
        check_xattr_support(backend, spec, scratch).map_err(PrepareStop::Error)?;
    }
    scratch.dir().sync();
    let owner = if nix::unistd::geteuid().is_root() {
        (NOBODY, NOBODY)
    } else {
        (
            nix::unistd::getuid().as_raw(),
            nix::unistd::getgid().as_raw(),
        )
    };
    Ok(SmallfilesPlan {
        barrier: PhaseBarrier::new(dirs.len()),
        dirs,
        owner,
    })
}

fn check_xattr_support<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    scratch: &mut ScratchDir,
) -> Result<(), EngineError> {
    let name = scratch.file("xattr-probe");
    let dir = scratch.dir();
    let site = IoSite {
        kind: spec.kind(),
        dir,
        name: &name,
    };
    let mut ops = backend.dir_ops(PREPARE_THREAD);
    let c_name = std::ffi::CString::new(name.as_str()).map_err(|_| {
        EngineError::Internal(crate::metrics::Bug::NulInFileName {
            name: name.to_string(),
        })
    })?;
    let how = open_how(FileSync::None);
    let mut file = ops
        .open_at(dir, &c_name, how)
        .map_err(|e| EngineError::Prepare(io_failure(site, "create", None, &e)))?;
    let result = match file.set_xattr(XATTR_NAME, &[0u8; XATTR_LEN]) {
        Ok(()) => Ok(()),
        Err(e) => Err(match e.raw_os_error() {
            Some(libc::EOPNOTSUPP) => no_xattr_error(scratch.path(), e).into(),
            _ => EngineError::Prepare(io_failure(site, "fsetxattr", None, &e)),
        }),
    };
    let _ = file.close();
    let _ = ops.unlink_at(dir, &c_name);
    result
}
/// The error for a filesystem that refuses `user.` extended attributes, naming the mount.
pub(crate) fn no_xattr_error(dir: &Path, source: io::Error) -> TargetError {
    let mount = std::fs::canonicalize(dir).ok().and_then(|canonical| {
        let mounts = crate::probe::list_mounts().ok()?;
        crate::probe::mount_for_path(&mounts, &canonical)
            .map(|m| format!("{} on {} ({})", m.fs_type, m.mount_point, m.super_options))
    });
    TargetError::NoXattr {
        dir: dir.to_path_buf(),
        mount,
        xattr: XATTR_NAME.to_string_lossy().into_owned(),
        cause: crate::metrics::IoCause::of(&source),
    }
}

/// Index of each operation in a worker's table.
#[derive(Clone, Copy)]
enum Op {
    Create = 0,
    Write,
    Xattr,
    Sync,
    Close,
    Rename,
    DirSync,
    Chown,
    Unlink,
}

const OP_NAMES: [&str; 9] = [
    "create", "write", "xattr", "sync", "close", "rename", "dir_sync", "chown", "unlink",
];

/// Which operations a spec performs (the others are left out of the table).
fn ops_used(s: &crate::spec::kinds::smallfiles::Spec) -> [bool; 9] {
    [
        true,
        s.file_size > 0,
        s.xattr,
        matches!(
            s.sync,
            FileSync::Fsync | FileSync::Fdatasync | FileSync::Syncfs
        ),
        true,
        s.rename_over,
        s.dir_sync,
        s.chown,
        s.unlink,
    ]
}

/// A worker's buffers, prepared before the gate.
struct Buffers {
    /// The file contents (the first 8 bytes are stamped per file).
    data: Vec<u8>,
    xattr: [u8; XATTR_LEN],
    name: FileName,
    ops: Vec<OpStats>,
}

/// Why a worker stopped early: the call and its error.
type Failure = (&'static str, io::Error);

impl SmallfilesPlan {
    /// Runs worker `w.thread`: the create phase, then chown and unlink if asked for.
    fn work<B: Backend>(&self, backend: &B, spec: &WorkloadSpec, k: &crate::spec::kinds::smallfiles::Spec, w: Worker<'_>) -> WorkerOutput {
        let thread = w.thread;
        let _guard = StopOnPanic(&w.shared.stop.0);
        let dir = &self.dirs[thread as usize];
        let open = || {
            let size = k.file_size as usize;
            let data = fill_pattern(size.max(16), mix(spec.common.seed ^ u64::from(thread)));
            let pattern = fill_pattern(XATTR_LEN, spec.common.seed.wrapping_add(u64::from(thread)));
            let mut xattr = [0u8; XATTR_LEN];
            xattr.copy_from_slice(&pattern);
            let ops = OP_NAMES.iter().map(|n| OpStats::new(n)).collect();
            let name = FileName::new();
            Ok((
                backend.dir_ops(thread),
                Buffers {
                    data,
                    xattr,
                    name,
                    ops,
                },
            ))
        };
        run_worker(backend, w, open, |(fs, bufs), t| {
            let (mut c, mut failed) = create_phase(spec, k, thread, dir, fs, bufs, t);
            if failed.is_some() {
                t.shared.stop.0.store(true, Ordering::Relaxed);
            }
            let files = c.writes;
            failed = failed.or_else(|| self.later_phases( k, dir, files, fs, bufs, t, &mut c));
            if let Some((op, e)) = failed {
                t.out.error = Some(worker_failure(dir, &bufs.name, files, op, &e));
            }
            let used = ops_used(k);
            t.out.ops = std::mem::take(&mut bufs.ops)
                .into_iter()
                .zip(used)
                .filter_map(|(op, used)| used.then_some(op))
                .collect();
            c
        })
    }

    /// The chown and unlink phases, each after every thread has finished the phase
    /// before; they walk the files this thread created, by the same names.
    #[allow(clippy::too_many_arguments)]
    fn later_phases<D: DirOps, C: Clock>(
        &self,
        k: &crate::spec::kinds::smallfiles::Spec,
        dir: &DirHandle,
        files: u64,
        fs: &mut D,
        bufs: &mut Buffers,
        t: &mut Timed<'_, C>,
        c: &mut Counts,
    ) -> Option<Failure> {
        let s = k;
        let later: [(bool, &'static str, Op); 2] = [
            (s.chown, "chown", Op::Chown),
            (s.unlink, "unlink", Op::Unlink),
        ];
        let stop = &t.shared.stop.0;
        for (wanted, phase, op) in later {
            if !wanted || !self.barrier.wait(stop) {
                continue;
            }
            let phase_start = t.clock.now_ns();
            let mut done = 0u64;
            let mut failed = None;
            while done < files && !stop.load(Ordering::Relaxed) {
                bufs.name.set(done);
                let name = bufs.name.as_cstr();
                let t0 = t.clock.now_ns();
                let r = match op {
                    Op::Chown => fs.chown_at(dir, name, self.owner.0, self.owner.1),
                    _ => fs.unlink_at(dir, name),
                };
                let t1 = t.clock.now_ns();
                if let Err(e) = r {
                    failed = Some((phase, e));
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
                bufs.ops[op as usize].record(t1 - t0, 0);
                c.busy_ns += t1 - t0;
                done += 1;
            }
            t.out.phases.push(PhaseSpan {
                phase,
                items: done,
                start_ns: phase_start,
                end_ns: t.clock.now_ns(),
            });
            if failed.is_some() {
                return failed;
            }
        }
        None
    }
}

/// The create phase: one file after another until `files_per_thread`, the deadline, a
/// stop or an error; then the thread's syncfs when asked for. Returns the counts (a
/// "write" is a file created) and the failure, if any.
fn create_phase<D: DirOps, C: Clock>(
    spec: &WorkloadSpec,
    k: &crate::spec::kinds::smallfiles::Spec,
    thread: u32,
    dir: &DirHandle,
    fs: &mut D,
    bufs: &mut Buffers,
    t: &mut Timed<'_, C>,
) -> (Counts, Option<Failure>) {
    let s = k;
    let how = open_how(s.sync);
    let durable_files = crate::spec::durable_op(spec) == Ok(crate::spec::DurableOp::File);
    let stamp = (u64::from(thread) << 48) ^ mix(spec.common.seed);
    let mut c = Counts::default();
    let mut failed = None;
    let (mut now, deadline) = (t.start_ns, t.deadline_ns);
    while c.writes < s.files_per_thread && now < deadline && !t.stopped() {
        bufs.name.set(c.writes);
        // A crash test's file is a whole record (its identity and a checksum).
        let record = t.acks.map(|sink| record_id(k, sink, thread, c.writes));
        match &record {
            Some(id) => {
                fill_record(&mut bufs.data[..s.file_size as usize], id);
            }
            None => bufs.data[..8].copy_from_slice(&(c.writes ^ stamp).to_le_bytes()),
        }
        let t0 = t.clock.now_ns();
        let opened = fs.open_at(dir, bufs.name.as_cstr(), how);
        let t1 = t.clock.now_ns();
        let mut file = match opened {
            Ok(f) => f,
            Err(e) => {
                failed = Some(("create", e));
                break;
            }
        };
        bufs.ops[Op::Create as usize].record(t1 - t0, 0);
        let stepped = fill_file( k, &mut file, bufs, t, &mut c, t1);
        let closed = file.close();
        let t3 = t.clock.now_ns();
        let last = match stepped {
            Ok(last) => last,
            Err(e) => {
                failed = Some(e);
                break;
            }
        };
        if let Err(e) = closed {
            failed = Some(("close", e));
            break;
        }
        bufs.ops[Op::Close as usize].record(t3 - last, 0);
        let (last, end) = match finish_file(k, dir, fs, bufs, &t.clock, t3) {
            Ok(Some(end)) => (end, end),
            Ok(None) => (last, t3),
            Err(e) => {
                failed = Some(e);
                break;
            }
        };
        if durable_files {
            // Created, written and synced (or written O_SYNC), renamed and its directory
            // synced as asked: durable since `last`.
            t.out.durable_lat.record(last - t0);
        }
        if let (Some(sink), Some(id), false) = (t.acks, record, s.sync == FileSync::Syncfs) {
            // Durable now (or never: `none`, the control that must lose files).
            if let Err(e) = sink.ack(&file_ack(k, thread, id)) {
                failed = Some(("acknowledge", e));
                break;
            }
        }
        c.busy_ns += end - t0;
        c.writes += 1;
        bump(&t.live.writes, 1);
        now = end;
    }
    if s.sync == FileSync::Syncfs && failed.is_none() && c.writes > 0 {
        let t0 = t.clock.now_ns();
        let r = fs.syncfs(dir);
        let t1 = t.clock.now_ns();
        match r {
            Ok(()) => {
                bufs.ops[Op::Sync as usize].record(t1 - t0, 0);
                record_sync(&mut t.out.sync_lat, t.live, t1 - t0);
                c.syncs += 1;
                c.busy_ns += t1 - t0;
                // Every file of the thread is durable now.
                if let Some(sink) = t.acks {
                    let acked = (0..c.writes).try_for_each(|i| {
                        sink.ack(&file_ack(k, thread, record_id(k, sink, thread, i)))
                    });
                    failed = acked.err().map(|e| ("acknowledge", e));
                }
            }
            Err(e) => failed = Some(("syncfs", e)),
        }
    }
    t.out.phases.push(PhaseSpan {
        phase: "create",
        items: c.writes,
        start_ns: t.start_ns,
        end_ns: t.clock.now_ns(),
    });
    c.bytes = c.writes * s.file_size;
    (c, failed)
}

/// After a file is closed: its rename over `current` and its directory's fsync, as the
/// spec asks, each timed from the end of the call before (`t`). Returns when the last one
/// ended (`None`: neither was asked for).
fn finish_file<D: DirOps, C: Clock>(
    k: &crate::spec::kinds::smallfiles::Spec,
    dir: &DirHandle,
    fs: &mut D,
    bufs: &mut Buffers,
    clock: &C,
    mut t: u64,
) -> Result<Option<u64>, Failure> {
    if k.rename_over {
        let r = fs.rename_at(dir, bufs.name.as_cstr(), CURRENT);
        let t2 = clock.now_ns();
        r.map_err(|e| ("rename", e))?;
        bufs.ops[Op::Rename as usize].record(t2 - t, 0);
        t = t2;
    }
    if k.dir_sync {
        let r = fs.sync_dir(dir);
        let t2 = clock.now_ns();
        r.map_err(|e| ("fsync (directory)", e))?;
        bufs.ops[Op::DirSync as usize].record(t2 - t, 0);
        t = t2;
    }
    Ok((k.rename_over || k.dir_sync).then_some(t))
}

/// A crash test's record of the thread's file `index`: renamed files are versions of the
/// thread's `current` file, the others each a place of its own.
fn record_id(
    k: &crate::spec::kinds::smallfiles::Spec,
    sink: &AckSink,
    thread: u32,
    index: u64,
) -> RecordId {
    RecordId {
        run: sink.run(),
        thread,
        seq: index,
        version: if k.rename_over { index } else { 0 },
    }
}

/// The acknowledgement of file record `id`: the whole file, in the thread's directory
/// (`crate::spec::kinds::smallfiles::Spec::acknowledged_files` names it).
fn file_ack(k: &crate::spec::kinds::smallfiles::Spec, thread: u32, id: RecordId) -> Ack {
    Ack {
        id,
        file: thread,
        offset: 0,
        len: k.file_size as u32,
    }
}

/// Writes the new file's data, sets its xattr and syncs it, as the spec asks; each call
/// is timed from the end of the one before (`t`, at first the end of the create).
/// Returns the time the last call ended.
fn fill_file<F: SyncFile, C: Clock>(
    k: &crate::spec::kinds::smallfiles::Spec,
    file: &mut F,
    bufs: &mut Buffers,
    timed: &mut Timed<'_, C>,
    c: &mut Counts,
    mut t: u64,
) -> Result<u64, Failure> {
    let s = k;
    let size = s.file_size as usize;
    let clock = &timed.clock;
    if size > 0 {
        let r = file.write_at(&bufs.data[..size], 0);
        let t2 = clock.now_ns();
        r.map_err(|e| ("write", e))?;
        let ns = t2 - t;
        bufs.ops[Op::Write as usize].record(ns, size as u64);
        timed.out.write_lat.record(ns);
        timed.live.write_buckets.record(ns);
        t = t2;
    }
    if s.xattr {
        let r = file.set_xattr(XATTR_NAME, &bufs.xattr);
        let t2 = clock.now_ns();
        r.map_err(|e| ("fsetxattr", e))?;
        bufs.ops[Op::Xattr as usize].record(t2 - t, 0);
        t = t2;
    }
    let sync_call = match s.sync {
        FileSync::Fsync => Some(("fsync", SyncMethod::Fsync)),
        FileSync::Fdatasync => Some(("fdatasync", SyncMethod::Fdatasync)),
        FileSync::OSync | FileSync::None | FileSync::Syncfs => None,
    };
    if let Some((call, method)) = sync_call {
        let r = file.sync(method);
        let t2 = clock.now_ns();
        r.map_err(|e| (call, e))?;
        let ns = t2 - t;
        bufs.ops[Op::Sync as usize].record(ns, 0);
        record_sync(&mut timed.out.sync_lat, timed.live, ns);
        c.syncs += 1;
        t = t2;
    }
    Ok(t)
}

/// A worker's failure: the call, the file, and (for ENOSPC) how many files this thread
/// had made.
fn worker_failure(
    dir: &DirHandle,
    name: &FileName,
    files: u64,
    op: &str,
    e: &io::Error,
) -> RunFailure {
    let site = IoSite {
        kind: WorkloadKind::Smallfiles,
        dir,
        name: name.as_str(),
    };
    let mut failure = io_failure(site, op, None, e);
    if e.raw_os_error() == Some(libc::ENOSPC) {
        failure.files_done = Some(files);
    }
    RunFailure::Io(failure)
}

#[cfg(test)]
mod tests;
