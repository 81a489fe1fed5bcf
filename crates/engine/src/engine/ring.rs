//! The io_uring side of the [`Backend`](super::Backend): the [`Ring`] trait a worker
//! submits its writes and syncs through, the real ring on the `io-uring` crate, and the
//! preflight probe that turns "io_uring unavailable" into an error naming `ioengine`.
//!
//! A ring owns the worker's write buffers (one per slot, so a write in flight is never
//! overwritten by the next one) and registers them with the kernel for `WRITE_FIXED`.
//! Requests carry their slot as `user_data`; nothing here allocates after the ring is
//! built.

use std::io;
use std::os::fd::RawFd;

use io_uring::{IoUring, opcode, squeue, types};

use super::buf::AlignedBuf;
use crate::spec::{Setting, SyncMethod, WorkloadSpec};
use crate::uring::UringUnavailable;

/// One request a worker puts on its ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingOp {
    /// Write `len` bytes from slot `slot`'s buffer, starting `skip` bytes into it, at
    /// `offset` of file `file` (`skip` > 0 only for the rest of a short write).
    Write {
        /// Index of the file in the worker's list.
        file: u32,
        /// Buffer slot.
        slot: u32,
        /// File offset.
        offset: u64,
        /// Bytes already written of the slot's buffer.
        skip: u32,
        /// Bytes to write.
        len: u32,
    },
    /// Make file `file` durable with `method` (`IORING_OP_FSYNC`, with
    /// `IORING_FSYNC_DATASYNC` for fdatasync; `IORING_OP_SYNC_FILE_RANGE`).
    Sync {
        /// Index of the file in the worker's list.
        file: u32,
        /// The sync call.
        method: SyncMethod,
    },
}

/// How a worker's ring is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingSetup {
    /// Requests in flight at most (the ring's slots and buffers).
    pub depth: u32,
    /// Bytes of each slot's buffer.
    pub block_size: usize,
    /// Register the buffers and write with `IORING_OP_WRITE_FIXED`.
    pub fixed_buffers: bool,
    /// Seed of the buffers' contents.
    pub seed: u64,
}

/// A submission/completion ring of one worker (io_uring, or the scripted fake).
pub trait Ring {
    /// Queues `op` with `user_data`; `link` makes the next queued request start only when
    /// this one completed (`IOSQE_IO_LINK`). The caller never queues more than the
    /// setup's depth at once.
    fn queue(&mut self, op: RingOp, user_data: u64, link: bool) -> io::Result<()>;
    /// Submits what was queued and waits until at least `wait_for` completions are ready
    /// (retrying io_uring_enter on EINTR).
    fn submit(&mut self, wait_for: u32) -> io::Result<()>;
    /// The next ready completion: `(user_data, result)`, the result being bytes written
    /// (or 0 for a sync) or a negative errno.
    fn next_completion(&mut self) -> Option<(u64, i32)>;
    /// The buffer of `slot`, to stamp before a write.
    fn buffer(&mut self, slot: u32) -> &mut AlignedBuf;
}

/// A real io_uring over the worker's open files.
pub struct RealRing {
    // Declared first so the ring (and what the kernel holds of the buffers) goes first.
    ring: IoUring,
    fds: Vec<RawFd>,
    bufs: Vec<AlignedBuf>,
    fixed: bool,
}

impl RealRing {
    /// A ring over `fds` (which outlive it: the worker holds the files) with the slots
    /// and buffers `setup` asks for.
    pub fn new(fds: Vec<RawFd>, setup: RingSetup) -> io::Result<Self> {
        let entries = setup.depth.max(2).next_power_of_two();
        let ring = build_ring(entries)?;
        let bufs: Vec<AlignedBuf> = (0..setup.depth)
            .map(|slot| AlignedBuf::new(setup.block_size, setup.seed ^ u64::from(slot)))
            .collect();
        if setup.fixed_buffers {
            let iovecs: Vec<libc::iovec> = bufs
                .iter()
                .map(|b| libc::iovec {
                    iov_base: b.as_slice().as_ptr() as *mut libc::c_void,
                    iov_len: b.as_slice().len(),
                })
                .collect();
            // SAFETY: the buffers live in `self` as long as the ring that registered them
            // (the ring is dropped first) and are never moved (heap allocations).
            unsafe { ring.submitter().register_buffers(&iovecs)? };
        }
        Ok(Self {
            ring,
            fds,
            bufs,
            fixed: setup.fixed_buffers,
        })
    }
}

impl Ring for RealRing {
    #[inline]
    fn queue(&mut self, op: RingOp, user_data: u64, link: bool) -> io::Result<()> {
        let entry = match op {
            RingOp::Write {
                file,
                slot,
                offset,
                skip,
                len,
            } => {
                let fd = types::Fd(self.fds[file as usize]);
                // SAFETY: `skip + len` is within the slot's buffer (the worker never asks
                // for more than the block it stamped).
                let ptr = unsafe {
                    self.bufs[slot as usize]
                        .as_slice()
                        .as_ptr()
                        .add(skip as usize)
                };
                if self.fixed {
                    opcode::WriteFixed::new(fd, ptr, len, slot as u16)
                        .offset(offset)
                        .build()
                } else {
                    opcode::Write::new(fd, ptr, len).offset(offset).build()
                }
            }
            RingOp::Sync { file, method } => {
                let fd = types::Fd(self.fds[file as usize]);
                match method {
                    // sync_file_range+fdatasync is two calls, refused with io_uring by the
                    // spec's checks; were it here, its durable half is the fdatasync.
                    SyncMethod::Fdatasync | SyncMethod::SyncFileRangeFdatasync => {
                        opcode::Fsync::new(fd)
                            .flags(types::FsyncFlags::DATASYNC)
                            .build()
                    }
                    SyncMethod::SyncFileRange => opcode::SyncFileRange::new(fd, 0)
                        .flags(
                            libc::SYNC_FILE_RANGE_WAIT_BEFORE
                                | libc::SYNC_FILE_RANGE_WRITE
                                | libc::SYNC_FILE_RANGE_WAIT_AFTER,
                        )
                        .build(),
                    SyncMethod::Fsync | SyncMethod::None => opcode::Fsync::new(fd).build(),
                }
            }
        };
        let flags = if link {
            squeue::Flags::IO_LINK
        } else {
            squeue::Flags::empty()
        };
        let entry = entry.user_data(user_data).flags(flags);
        // SAFETY: the entry's buffer and file outlive the request (see `RealRing::new`).
        unsafe { self.ring.submission().push(&entry) }
            .map_err(|_| io::Error::other("io_uring submission queue full (a bug in fsynclab)"))
    }

    #[inline]
    fn submit(&mut self, wait_for: u32) -> io::Result<()> {
        loop {
            match self.ring.submit_and_wait(wait_for as usize) {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                // The completion queue is momentarily full: reap, then submit again.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    #[inline]
    fn next_completion(&mut self) -> Option<(u64, i32)> {
        self.ring
            .completion()
            .next()
            .map(|c| (c.user_data(), c.result()))
    }

    #[inline]
    fn buffer(&mut self, slot: u32) -> &mut AlignedBuf {
        &mut self.bufs[slot as usize]
    }
}

/// A ring set up as fio's io_uring engine sets its own (fio 3.33: `IORING_SETUP_COOP_TASKRUN
/// | SINGLE_ISSUER | DEFER_TASKRUN`): completions of requests the kernel ran in io-wq
/// workers (every fsync) are handed to the worker when it next waits in `io_uring_enter`,
/// not by interrupting it. Without these flags each such completion interrupted the
/// submitting thread, and the engine ran at 0.74–0.86 of fio's IOPS at iodepth 8 on tmpfs;
/// with them 1.07–1.54 (docs/PERFORMANCE.md, "io_uring engine vs fio's"). A ring is only
/// ever used by the worker thread that made it, as SINGLE_ISSUER requires. Kernels before
/// 6.1 refuse the flags (EINVAL): a plain ring then.
fn build_ring(entries: u32) -> io::Result<IoUring> {
    let flagged = IoUring::builder()
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries);
    match flagged {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => IoUring::new(entries),
        other => other,
    }
}

/// Why io_uring cannot be used here, when it cannot: builds a small ring and submits a
/// no-op through it (seccomp filters that allow `io_uring_setup` may still refuse
/// `io_uring_enter`).
pub fn probe_io_uring() -> Result<(), io::Error> {
    let mut ring = IoUring::new(2)?;
    let nop = opcode::Nop::new().build().user_data(1);
    // SAFETY: a no-op references no memory.
    unsafe { ring.submission().push(&nop) }.map_err(|_| io::Error::other("ring full"))?;
    ring.submit_and_wait(1)?;
    match ring.completion().next().map(|c| c.result()) {
        Some(r) if r < 0 => Err(io::Error::from_raw_os_error(-r)),
        _ => Ok(()),
    }
}

/// Why io_uring failed with `e`, as data: the errno and `kernel.io_uring_disabled`.
pub fn uring_unavailable(e: &io::Error) -> UringUnavailable {
    UringUnavailable {
        errno: e.raw_os_error(),
        io_uring_disabled: std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
            .ok()
            .and_then(|s| s.trim().parse().ok()),
    }
}

/// Whether `spec` needs io_uring (the `io_uring` engine, or grouplog's `uring` strategy).
pub fn uses_io_uring(spec: &WorkloadSpec) -> bool {
    spec.kind.params().io_uring_setting().is_some()
}

/// The preflight of a spec that needs io_uring: `None` when the kernel lets this process
/// use it, else the setting that asks for it (`ioengine`, or grouplog's strategy) and why
/// it cannot be had (the front ends word the refusal).
pub fn io_uring_problem(spec: &WorkloadSpec) -> Option<(Setting, UringUnavailable)> {
    let field = spec.kind.params().io_uring_setting()?;
    let e = probe_io_uring().err()?;
    Some((field, uring_unavailable(&e)))
}
