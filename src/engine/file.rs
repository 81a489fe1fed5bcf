//! The only code that touches test files: the [`Backend`] trait with the real
//! implementation (pwrite, fsync, fdatasync, sync_file_range, O_SYNC/O_DSYNC/O_DIRECT) and
//! a scripted fake for deterministic tests (see [`super::fake`]).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

use nix::fcntl::OFlag;

use super::CancelToken;
pub use super::clock::RealClock;
use super::dirfd::DirHandle;
use crate::spec::{OpenFlags, Prepare, SyncMethod};

/// A file the engine writes and syncs. Implementations do no allocation per call.
pub trait SyncFile {
    /// Writes all of `buf` at `offset`.
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Makes written data durable with `method` (never called with `SyncMethod::None`).
    fn sync(&mut self, method: SyncMethod) -> io::Result<()>;
}

/// A monotonic clock in nanoseconds.
pub trait Clock {
    /// Current time, ns from an arbitrary fixed origin.
    fn now_ns(&self) -> u64;
}

/// Creates, prepares and opens test files, and hands each worker a clock.
pub trait Backend: Sync {
    /// The file type workers write.
    type File: SyncFile + Send;
    /// The clock workers time with.
    type Clock: Clock + Send;

    /// Creates a new file `name` in `dir` (openat O_CREAT | O_EXCL | O_NOFOLLOW, mode
    /// 0600), prepares it and fsyncs it, so preparation is not paid for by the first timed
    /// sync. `seed` picks the fill data; a cancel during a long fill returns
    /// `ErrorKind::Interrupted`.
    fn create(
        &self,
        dir: &DirHandle,
        name: &str,
        size: u64,
        prepare: Prepare,
        seed: u64,
        cancel: &CancelToken,
    ) -> io::Result<()>;
    /// Opens the existing test file `name` in `dir` for worker `thread` with the given
    /// flags (openat, O_NOFOLLOW always).
    fn open(
        &self,
        dir: &DirHandle,
        name: &str,
        flags: OpenFlags,
        thread: u32,
    ) -> io::Result<Self::File>;
    /// The clock of worker `thread`.
    fn clock(&self, thread: u32) -> Self::Clock;
}

/// Real files and CLOCK_MONOTONIC.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealBackend;

/// A real open test file.
#[derive(Debug)]
pub struct RealFile {
    file: File,
}

impl SyncFile for RealFile {
    #[inline]
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.file.write_all_at(buf, offset)
    }

    #[inline]
    fn sync(&mut self, method: SyncMethod) -> io::Result<()> {
        match method {
            SyncMethod::Fsync => self.file.sync_all(),
            SyncMethod::Fdatasync => self.file.sync_data(),
            SyncMethod::SyncFileRange => {
                let flags = libc::SYNC_FILE_RANGE_WAIT_BEFORE
                    | libc::SYNC_FILE_RANGE_WRITE
                    | libc::SYNC_FILE_RANGE_WAIT_AFTER;
                // SAFETY: plain syscall on an fd we own; offset 0 and length 0 mean the whole file.
                let rc = unsafe { libc::sync_file_range(self.file.as_raw_fd(), 0, 0, flags) };
                if rc == 0 {
                    Ok(())
                } else {
                    Err(io::Error::last_os_error())
                }
            }
            SyncMethod::None => Ok(()),
        }
    }
}

/// The result of a raw libc call returning an int: `Err(errno)` when it is negative.
pub(super) fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// open(2) flags for the given [`OpenFlags`], plus O_NOFOLLOW.
pub fn open_flag_bits(flags: OpenFlags) -> i32 {
    let mut bits = libc::O_NOFOLLOW;
    if flags.sync {
        bits |= libc::O_SYNC;
    }
    if flags.dsync {
        bits |= libc::O_DSYNC;
    }
    if flags.direct {
        bits |= libc::O_DIRECT;
    }
    bits
}

impl Backend for RealBackend {
    type File = RealFile;
    type Clock = RealClock;

    fn create(
        &self,
        dir: &DirHandle,
        name: &str,
        size: u64,
        prepare: Prepare,
        seed: u64,
        cancel: &CancelToken,
    ) -> io::Result<()> {
        let file = dir.create_file(name, OFlag::empty())?;
        match prepare {
            Prepare::Sparse => file.set_len(size)?,
            Prepare::Fallocate => {
                let len = i64::try_from(size)
                    .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
                // SAFETY: plain syscall on an fd we own.
                let rc = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len) };
                if rc != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Prepare::Fill => {
                let mut chunk = fill_pattern(1 << 20, seed);
                let mut offset = 0u64;
                while offset < size {
                    if cancel.is_cancelled() {
                        return Err(io::Error::from(io::ErrorKind::Interrupted));
                    }
                    let n = (size - offset).min(chunk.len() as u64) as usize;
                    chunk[..8].copy_from_slice(&offset.to_le_bytes());
                    file.write_all_at(&chunk[..n], offset)?;
                    offset += n as u64;
                }
            }
        }
        file.sync_all()
    }

    fn open(
        &self,
        dir: &DirHandle,
        name: &str,
        flags: OpenFlags,
        _thread: u32,
    ) -> io::Result<RealFile> {
        let bits = OFlag::O_WRONLY | OFlag::from_bits_retain(open_flag_bits(flags));
        let file = dir.open_file(name, bits)?;
        Ok(RealFile { file })
    }

    fn clock(&self, _thread: u32) -> RealClock {
        RealClock::default()
    }
}

/// Incompressible bytes (so compressing or deduplicating filesystems store what they are
/// given), derived from `seed`.
pub fn fill_pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    let mut state = seed ^ 0xF5C1_AB00_0000_0001;
    while out.len() < len {
        state = super::offsets::mix(state.wrapping_add(0x9E37_79B9_7F4A_7C15));
        out.extend_from_slice(&state.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// A heap buffer aligned for O_DIRECT (4096 bytes), filled once before timing.
pub struct AlignedBuf {
    ptr: std::ptr::NonNull<u8>,
    layout: std::alloc::Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Box<[u8]>.
unsafe impl Send for AlignedBuf {}

/// Alignment of write buffers: enough for O_DIRECT on every common device.
pub const BUFFER_ALIGN: usize = 4096;

impl AlignedBuf {
    /// A buffer of `len` bytes (len > 0) aligned to [`BUFFER_ALIGN`], holding `fill_pattern(len, seed)`.
    pub fn new(len: usize, seed: u64) -> Self {
        let layout = std::alloc::Layout::from_size_align(len.max(16), BUFFER_ALIGN)
            .expect("block size is validated to at most 64 MiB");
        // SAFETY: layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = std::ptr::NonNull::new(raw) else {
            std::alloc::handle_alloc_error(layout);
        };
        let mut buf = Self { ptr, layout };
        buf.as_mut_slice()
            .copy_from_slice(&fill_pattern(len.max(1), seed));
        buf
    }

    /// Writes two words into the first 16 bytes (blocks are at least 512 bytes), so each
    /// write carries different data.
    #[inline(always)]
    pub fn stamp(&mut self, a: u64, b: u64) {
        let bytes = self.as_mut_slice();
        bytes[..8].copy_from_slice(&a.to_le_bytes());
        bytes[8..16].copy_from_slice(&b.to_le_bytes());
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for layout.size() initialised bytes while self lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_buffer_is_aligned_and_filled() {
        let buf = AlignedBuf::new(8192, 3);
        assert_eq!(buf.as_slice().as_ptr() as usize % BUFFER_ALIGN, 0);
        assert_eq!(buf.as_slice(), fill_pattern(8192, 3).as_slice());
        assert_ne!(fill_pattern(64, 1), fill_pattern(64, 2));
    }

    #[test]
    fn real_file_round_trip_in_a_temp_dir() {
        let dir = tempfile::tempdir().unwrap();
        let handle = DirHandle::open(dir.path()).unwrap();
        let path = dir.path().join("f");
        let c = CancelToken::new();
        RealBackend
            .create(&handle, "f", 16384, Prepare::Sparse, 1, &c)
            .unwrap();
        assert!(
            RealBackend
                .create(&handle, "f", 16384, Prepare::Sparse, 1, &c)
                .is_err(),
            "O_EXCL"
        );
        let mut f = RealBackend
            .open(&handle, "f", OpenFlags::default(), 0)
            .unwrap();
        f.write_at(&[7u8; 4096], 4096).unwrap();
        for m in [
            SyncMethod::Fsync,
            SyncMethod::Fdatasync,
            SyncMethod::SyncFileRange,
        ] {
            f.sync(m).unwrap();
        }
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len(), 16384);
        assert!(data[4096..8192].iter().all(|&b| b == 7));
        let c = RealClock::default();
        let a = c.now_ns();
        assert!(c.now_ns() >= a);
    }

    #[test]
    fn refuses_to_follow_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let handle = DirHandle::open(dir.path()).unwrap();
        let real = dir.path().join("real");
        std::fs::write(&real, b"x").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(
            RealBackend
                .create(
                    &handle,
                    "link",
                    4096,
                    Prepare::Sparse,
                    1,
                    &CancelToken::new()
                )
                .is_err()
        );
        assert!(
            RealBackend
                .open(&handle, "link", OpenFlags::default(), 0)
                .is_err()
        );
        // A dangling link is not created through either.
        std::os::unix::fs::symlink(dir.path().join("absent"), dir.path().join("dangling")).unwrap();
        let c = CancelToken::new();
        assert!(
            RealBackend
                .create(&handle, "dangling", 4096, Prepare::Sparse, 1, &c)
                .is_err()
        );
        assert!(!dir.path().join("absent").exists());
        assert_eq!(std::fs::read(&real).unwrap(), b"x");
    }
}
