//! `smallfiles`: each thread creates files in its own directory, as fs_mark does (seed 003
//! "xfs: drop async cache flushes from CIL commits" timed fsmark's create, chown and unlink;
//! seed 004 "jbd: transaction batching for multi-threaded synchronous writers" measured
//! threads creating files with fsync before close).
//!
//! Per file of the create phase: openat(O_CREAT|O_EXCL|O_WRONLY|O_NOFOLLOW|O_CLOEXEC
//! [|O_SYNC]) timed as `create`, one pwrite of the whole file (`write`), the 64-byte xattr
//! (`xattr`), fsync/fdatasync (`sync`) and close (`close`). The xattr is set before the
//! sync so that an fsync-before-close file is durable with everything it was given. With
//! `syncfs`, each thread calls syncfs(2) once after its last file (a `sync`). Then, after
//! every thread has finished the phase before, the optional `chown` and `unlink` phases
//! walk the files each thread created. Names live in a fixed buffer rewritten in place, so
//! the timed loops do not allocate.

mod parts;

use std::ffi::CStr;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::Ordering;

use super::dirfd::DirHandle;
use super::file::{Backend, Clock, check, fill_pattern};
use super::kinds::{PrepareStop, Worker};
use super::offsets::mix;
use super::scratch::{IoSite, ScratchDir, describe_io_error, inodes_exhausted, io_error_text};
use super::worker::{PhaseSpan, WorkerOutput, record_sync};
use super::{EngineError, EngineEvent};
use crate::metrics::{OpStats, ThreadStats, bump};
use crate::spec::{FileSync, WorkloadSpec};
use parts::{FileName, PhaseBarrier, StopOnPanic, create_flags, write_all};

/// Name of the extended attribute set on each file (`user.` namespace: settable by
/// anyone who may write the file).
pub(super) const XATTR_NAME: &CStr = c"user.fsynclab";
/// Bytes of the extended attribute value (the size fsmark used in seed 003).
pub(super) const XATTR_LEN: usize = 64;
/// The uid/gid root chowns files to: `nobody`, so every inode really changes owner.
const NOBODY: u32 = 65534;

/// What a smallfiles run prepared: one directory per worker and the phase barrier.
pub(super) struct SmallfilesPlan {
    /// Each worker's directory, opened `O_DIRECTORY|O_NOFOLLOW` below the run directory.
    dirs: Vec<DirHandle>,
    barrier: PhaseBarrier,
    /// Owner the chown phase gives every file.
    owner: (u32, u32),
}

/// Creates one directory per worker (`thread-N`) and, when xattrs are asked for, checks
/// that the filesystem takes a `user.` xattr, so a refusal is a clear error before timing.
pub(super) fn prepare(
    spec: &WorkloadSpec,
    scratch: &mut ScratchDir,
    events: &std::sync::mpsc::Sender<EngineEvent>,
) -> Result<SmallfilesPlan, PrepareStop> {
    let _ = events.send(EngineEvent::Preparing {
        files: 0,
        bytes_per_file: spec.smallfiles.file_size,
    });
    let mut dirs = Vec::with_capacity(spec.threads as usize);
    for t in 0..spec.threads {
        let name = format!("thread-{t}");
        let dir = scratch.subdir(&name).map_err(|e| {
            let site = IoSite {
                kind: spec.kind,
                dir: scratch.dir(),
                name: &name,
            };
            PrepareStop::Error(EngineError::Prepare(describe_io_error(
                site, "mkdir", None, &e,
            )))
        })?;
        dirs.push(dir);
    }
    if spec.smallfiles.xattr {
        check_xattr_support(spec, scratch).map_err(PrepareStop::Error)?;
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

fn check_xattr_support(spec: &WorkloadSpec, scratch: &mut ScratchDir) -> Result<(), EngineError> {
    let name = scratch.file("xattr-probe");
    let dir = scratch.dir();
    let site = IoSite {
        kind: spec.kind,
        dir,
        name: &name,
    };
    let file = dir
        .create_file(&name, nix::fcntl::OFlag::empty())
        .map_err(|e| EngineError::Prepare(describe_io_error(site, "create", None, &e)))?;
    let value = [0u8; XATTR_LEN];
    let rc = {
        // SAFETY: valid fd, NUL-terminated name, value pointer and length of a live array.
        unsafe {
            libc::fsetxattr(
                file.as_raw_fd(),
                XATTR_NAME.as_ptr(),
                value.as_ptr().cast(),
                value.len(),
                0,
            )
        }
    };
    let result = if rc == 0 {
        Ok(())
    } else {
        let e = io::Error::last_os_error();
        Err(match e.raw_os_error() {
            Some(libc::EOPNOTSUPP) => EngineError::Target(no_xattr_message(scratch.path())),
            _ => EngineError::Prepare(describe_io_error(site, "fsetxattr", None, &e)),
        })
    };
    drop(file);
    let _ = dir.unlink(&name);
    result
}

/// The error for a filesystem that refuses `user.` extended attributes, naming the mount.
pub(super) fn no_xattr_message(dir: &Path) -> String {
    let mount = std::fs::canonicalize(dir).ok().and_then(|canonical| {
        let mounts = crate::probe::list_mounts().ok()?;
        crate::probe::mount_for_path(&mounts, &canonical)
            .map(|m| format!("{} on {} ({})", m.fs_type, m.mount_point, m.super_options))
    });
    format!(
        "the filesystem holding {} ({}) does not support user extended attributes \
         (fsetxattr {} failed with EOPNOTSUPP); run on a filesystem with user xattrs (ext4, \
         xfs, btrfs; tmpfs since Linux 6.6), or drop --xattr (smallfiles.xattr = false)",
        dir.display(),
        mount.unwrap_or_else(|| "filesystem type unknown".into()),
        XATTR_NAME.to_string_lossy()
    )
}

/// Index of each operation in a worker's table.
#[derive(Clone, Copy)]
enum Op {
    Create = 0,
    Write,
    Xattr,
    Sync,
    Close,
    Chown,
    Unlink,
}

const OP_NAMES: [&str; 7] = [
    "create", "write", "xattr", "sync", "close", "chown", "unlink",
];

/// Which operations a spec performs (the others are left out of the table).
fn ops_used(spec: &WorkloadSpec) -> [bool; 7] {
    let s = &spec.smallfiles;
    [
        true,
        s.file_size > 0,
        s.xattr,
        matches!(
            s.sync,
            FileSync::Fsync | FileSync::Fdatasync | FileSync::Syncfs
        ),
        true,
        s.chown,
        s.unlink,
    ]
}

impl SmallfilesPlan {
    /// Runs worker `w.thread`: the create phase, then chown and unlink if asked for.
    pub(super) fn work<B: Backend>(
        &self,
        backend: &B,
        spec: &WorkloadSpec,
        w: Worker<'_>,
        arrived: &mut bool,
    ) -> WorkerOutput {
        let thread = w.thread;
        let clock = backend.clock(thread);
        let mut out = WorkerOutput::new(thread);
        let _guard = StopOnPanic(&w.shared.stop.0);
        let dir = &self.dirs[thread as usize];
        let fd = dir.fd().as_raw_fd();
        let s = &spec.smallfiles;
        let size = s.file_size as usize;
        let mut buf = fill_pattern(size.max(16), mix(spec.seed ^ u64::from(thread)));
        let xattr_value: [u8; XATTR_LEN] = {
            let pattern = fill_pattern(XATTR_LEN, spec.seed.wrapping_add(u64::from(thread)));
            let mut v = [0u8; XATTR_LEN];
            v.copy_from_slice(&pattern);
            v
        };
        let mut ops: Vec<OpStats> = OP_NAMES.iter().map(|n| OpStats::new(n)).collect();
        let used = ops_used(spec);
        let mut name = FileName::new();
        *arrived = true;
        if !w.gate.arrive_and_wait() {
            return out;
        }

        let stop = &w.shared.stop.0;
        let live = w.live;
        let flags = create_flags(s.sync);
        let stamp = (u64::from(thread) << 48) ^ mix(spec.seed);
        let start = clock.now_ns();
        out.started = true;
        let deadline = w.shared.deadline_ns(spec.stop_rule(), start);
        let (mut files, mut syncs, mut busy) = (0u64, 0u64, 0u64);
        let mut failed: Option<(&'static str, io::Error)> = None;

        // Create phase.
        let phase_start = start;
        let mut now = start;
        while files < s.files_per_thread && now < deadline && !stop.load(Ordering::Relaxed) {
            name.set(files);
            buf[..8].copy_from_slice(&(files ^ stamp).to_le_bytes());
            let t0 = clock.now_ns();
            // SAFETY: valid directory fd and NUL-terminated name.
            let opened = check(unsafe { libc::openat(fd, name.as_cstr().as_ptr(), flags, 0o600) });
            let t1 = clock.now_ns();
            let file_fd = match opened {
                Ok(f) => f,
                Err(e) => {
                    failed = Some(("create", e));
                    break;
                }
            };
            ops[Op::Create as usize].record(t1 - t0, 0);
            let mut t = t1;
            let mut step = || -> Result<(), (&'static str, io::Error)> {
                if size > 0 {
                    let r = write_all(file_fd, &buf[..size]);
                    let t2 = clock.now_ns();
                    r.map_err(|e| ("write", e))?;
                    let ns = t2 - t;
                    ops[Op::Write as usize].record(ns, size as u64);
                    out.write_lat.record(ns);
                    live.write_buckets.record(ns);
                    t = t2;
                }
                if s.xattr {
                    // SAFETY: valid fd, NUL-terminated name, live value array.
                    let r = check(unsafe {
                        libc::fsetxattr(
                            file_fd,
                            XATTR_NAME.as_ptr(),
                            xattr_value.as_ptr().cast(),
                            XATTR_LEN,
                            0,
                        )
                    });
                    let t2 = clock.now_ns();
                    r.map_err(|e| ("fsetxattr", e))?;
                    ops[Op::Xattr as usize].record(t2 - t, 0);
                    t = t2;
                }
                let sync_call = match s.sync {
                    // SAFETY (both): plain syscalls on an fd we own.
                    FileSync::Fsync => Some(("fsync", unsafe { libc::fsync(file_fd) })),
                    FileSync::Fdatasync => Some(("fdatasync", unsafe { libc::fdatasync(file_fd) })),
                    FileSync::OSync | FileSync::None | FileSync::Syncfs => None,
                };
                if let Some((call, rc)) = sync_call {
                    let r = check(rc);
                    let t2 = clock.now_ns();
                    r.map_err(|e| (call, e))?;
                    let ns = t2 - t;
                    ops[Op::Sync as usize].record(ns, 0);
                    record_sync(&mut out.sync_lat, live, ns);
                    syncs += 1;
                    t = t2;
                }
                Ok(())
            };
            let stepped = step();
            // SAFETY: closing the fd opened above, exactly once.
            let closed = check(unsafe { libc::close(file_fd) });
            let t3 = clock.now_ns();
            if let Err(e) = stepped {
                failed = Some(e);
                break;
            }
            if let Err(e) = closed {
                failed = Some(("close", e));
                break;
            }
            ops[Op::Close as usize].record(t3 - t, 0);
            busy += t3 - t0;
            files += 1;
            bump(&live.writes, 1);
            now = t3;
        }
        if s.sync == FileSync::Syncfs && failed.is_none() && files > 0 {
            let t0 = clock.now_ns();
            // SAFETY: plain syscall on a valid directory fd.
            let r = check(unsafe { libc::syncfs(fd) });
            let t1 = clock.now_ns();
            match r {
                Ok(_) => {
                    ops[Op::Sync as usize].record(t1 - t0, 0);
                    record_sync(&mut out.sync_lat, live, t1 - t0);
                    syncs += 1;
                    busy += t1 - t0;
                }
                Err(e) => failed = Some(("syncfs", e)),
            }
        }
        out.phases.push(PhaseSpan {
            phase: "create",
            items: files,
            start_ns: phase_start,
            end_ns: clock.now_ns(),
        });
        if failed.is_some() {
            stop.store(true, Ordering::Relaxed);
        }

        // The later phases walk the files this thread created, by the same names.
        let later: [(bool, &'static str, Op); 2] = [
            (s.chown, "chown", Op::Chown),
            (s.unlink, "unlink", Op::Unlink),
        ];
        for (wanted, phase, op) in later {
            if !wanted || failed.is_some() || !self.barrier.wait(stop) {
                continue;
            }
            let phase_start = clock.now_ns();
            let mut done = 0u64;
            while done < files && !stop.load(Ordering::Relaxed) {
                name.set(done);
                let t0 = clock.now_ns();
                // SAFETY: valid directory fd and NUL-terminated name.
                let rc = unsafe {
                    match op {
                        Op::Chown => libc::fchownat(
                            fd,
                            name.as_cstr().as_ptr(),
                            self.owner.0,
                            self.owner.1,
                            libc::AT_SYMLINK_NOFOLLOW,
                        ),
                        _ => libc::unlinkat(fd, name.as_cstr().as_ptr(), 0),
                    }
                };
                let t1 = clock.now_ns();
                if let Err(e) = check(rc) {
                    failed = Some((phase, e));
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
                ops[op as usize].record(t1 - t0, 0);
                busy += t1 - t0;
                done += 1;
            }
            out.phases.push(PhaseSpan {
                phase,
                items: done,
                start_ns: phase_start,
                end_ns: clock.now_ns(),
            });
        }

        if let Some((op, e)) = failed {
            let path = dir.shown(name.as_str());
            out.error = Some(match e.raw_os_error() {
                Some(libc::EOPNOTSUPP) if op == "fsetxattr" => no_xattr_message(dir.path()),
                Some(libc::ENOSPC) => format!(
                    "{} (after {files} files in this thread)",
                    io_error_text(spec.kind, op, &path, None, &e, inodes_exhausted(dir))
                ),
                _ => describe_io_error(
                    IoSite {
                        kind: spec.kind,
                        dir,
                        name: name.as_str(),
                    },
                    op,
                    None,
                    &e,
                ),
            });
        }
        out.ops = ops
            .into_iter()
            .zip(used)
            .filter_map(|(op, used)| used.then_some(op))
            .collect();
        out.start_ns = start;
        out.end_ns = clock.now_ns();
        out.stats = ThreadStats {
            thread,
            writes: files,
            syncs,
            bytes: files * s.file_size,
            busy_ns: busy,
            wall_ns: out.end_ns.saturating_sub(start),
        };
        out
    }
}

#[cfg(test)]
mod tests;
