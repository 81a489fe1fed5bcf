//! The [`Backend`] trait, through which every workload kind makes every call on a test
//! file (create, open, pwrite, pread, fsync, fdatasync, sync_file_range, fstat, futimens,
//! fsetxattr, close) and every name operation in a run directory (openat, renameat,
//! unlinkat, fstatat, fstatvfs, readdir, fchownat, syncfs), with the real implementation
//! here and a scripted fake for deterministic tests (`super::fake`). Directories of a
//! run are made and opened by descriptor in `super::dirfd` (mkdirat, `O_DIRECTORY|
//! O_NOFOLLOW`); names are always resolved relative to such a descriptor, with
//! `O_NOFOLLOW` / `AT_SYMLINK_NOFOLLOW`.

use std::ffi::CStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd};
use std::os::unix::fs::FileExt;

use nix::fcntl::OFlag;

use super::api::CancelToken;
pub use super::clock::{Clock, RealClock};
use super::dirfd::DirHandle;
pub use super::ring::{RealRing, Ring, RingOp, RingSetup};
use crate::spec::{OpenFlags, Prepare, SyncMethod};

/// The worker index the backend is given for calls made while preparing a run (before
/// any worker exists): the fake keeps a clock of its own for it.
pub const PREPARE_THREAD: u32 = u32::MAX;

/// The shortest write of a [`Prepare::Fill`]: one page (writes of less fill the same
/// one-page folios with more syscalls).
pub const FILL_WRITE_MIN: usize = 4096;

/// What [`Backend::create`] makes of a new test file: its size, how it is prepared and,
/// for a fill, how long each fill write is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileLayout {
    /// Size of the prepared file (0 for [`Prepare::Empty`]).
    pub size_bytes: u64,
    /// How the file is prepared.
    pub prepare: Prepare,
    /// Length of each write of a [`Prepare::Fill`]: the workload's block size (see
    /// [`fill_write_bytes`]), so the page cache holds the file in folios of the size the
    /// timed writes make, as after `sysbench prepare` and fio's layout.
    pub fill_write_bytes: usize,
    /// Picks the fill data.
    pub seed: u64,
}

/// The length of each fill write for a workload of `block_size` byte writes: the block size
/// itself, as `sysbench prepare` (`--file-block-size` writes) and fio's layout (writes of
/// the largest write `bs`) fill their files, at least [`FILL_WRITE_MIN`] (a page: smaller
/// writes land in the same one-page folios) and at most `MAX_BLOCK_SIZE`.
///
/// Why it matters: since Linux 6.16 ext4 caches a file written in large writes in large
/// folios (a 1 MiB write makes one order-8 folio). A 4 KiB write then dirties a block of a
/// 1 MiB folio, and an fsync that finds that folio still under writeback from another
/// thread's fsync waits for it, so concurrent fsyncs share fewer journal commits: on a loop
/// ext4 the seed-001 replay over a 1 MiB-filled file ran at 0.5–0.8 of sysbench's event
/// rate (docs/PERFORMANCE.md, "The fill's folio size").
pub fn fill_write_bytes(block_size: u64) -> usize {
    let capped = block_size.min(crate::spec::MAX_BLOCK_SIZE);
    usize::try_from(capped)
        .unwrap_or(FILL_WRITE_MIN)
        .max(FILL_WRITE_MIN)
}

/// A file the engine writes and syncs. Implementations do no allocation per call.
pub trait SyncFile {
    /// Writes all of `buf` at `offset`.
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Makes written data durable with `method` (never called with `SyncMethod::None`).
    fn sync(&mut self, method: SyncMethod) -> io::Result<()>;
    /// Reads up to `buf.len()` bytes at `offset` (pread); returns the bytes read.
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// Reads the file's status (fstat) and discards it.
    fn stat(&mut self) -> io::Result<()>;
    /// Sets the file's access and modification times to now (futimens).
    fn touch(&mut self) -> io::Result<()>;
    /// Sets extended attribute `name` to `value` (fsetxattr).
    fn set_xattr(&mut self, name: &CStr, value: &[u8]) -> io::Result<()>;
    /// Closes the file, reporting the error close(2) returns.
    fn close(self) -> io::Result<()>
    where
        Self: Sized;
}

/// How [`DirOps::open_at`] opens a name. `O_NOFOLLOW | O_CLOEXEC` are always added; a
/// created file gets `O_CREAT | O_EXCL` and mode 0600.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenAt {
    /// Write only (`O_WRONLY`); else read and write (`O_RDWR`).
    pub write_only: bool,
    /// Create a new file (`O_CREAT | O_EXCL`): an existing name is an error.
    pub create: bool,
    /// Open with `O_SYNC`.
    pub o_sync: bool,
}

impl OpenAt {
    /// open(2) flags.
    pub fn bits(self) -> libc::c_int {
        let mut bits = libc::O_NOFOLLOW | libc::O_CLOEXEC;
        bits |= if self.write_only {
            libc::O_WRONLY
        } else {
            libc::O_RDWR
        };
        if self.create {
            bits |= libc::O_CREAT | libc::O_EXCL;
        }
        if self.o_sync {
            bits |= libc::O_SYNC;
        }
        bits
    }
}

/// Name operations in a directory held by descriptor, for one worker. Every name is a
/// single component resolved relative to `dir`, never following a symlink.
pub trait DirOps {
    /// The files [`DirOps::open_at`] opens.
    type File: SyncFile + Send;
    /// Opens (or creates) `name` in `dir` (openat).
    fn open_at(&mut self, dir: &DirHandle, name: &CStr, how: OpenAt) -> io::Result<Self::File>;
    /// Renames `from` to `to`, both in `dir` (renameat).
    fn rename_at(&mut self, dir: &DirHandle, from: &CStr, to: &CStr) -> io::Result<()>;
    /// Removes the file `name` from `dir` (unlinkat).
    fn unlink_at(&mut self, dir: &DirHandle, name: &CStr) -> io::Result<()>;
    /// Reads the status of `name` in `dir` (fstatat, `AT_SYMLINK_NOFOLLOW`).
    fn stat_at(&mut self, dir: &DirHandle, name: &CStr) -> io::Result<()>;
    /// Reads the status of the filesystem holding `dir` (fstatvfs).
    fn statfs(&mut self, dir: &DirHandle) -> io::Result<()>;
    /// Lists subdirectory `name` of `dir` to its end (openat `O_DIRECTORY|O_NOFOLLOW`,
    /// readdir, closedir).
    fn list_dir(&mut self, dir: &DirHandle, name: &CStr) -> io::Result<()>;
    /// Gives `name` in `dir` to `uid`:`gid` (fchownat, `AT_SYMLINK_NOFOLLOW`).
    fn chown_at(&mut self, dir: &DirHandle, name: &CStr, uid: u32, gid: u32) -> io::Result<()>;
    /// Writes back the whole filesystem holding `dir` (syncfs).
    fn syncfs(&mut self, dir: &DirHandle) -> io::Result<()>;
    /// Makes `dir`'s own entries durable (fsync of the directory).
    fn sync_dir(&mut self, dir: &DirHandle) -> io::Result<()>;
}

/// Creates, prepares and opens test files, and hands each worker a clock.
pub trait Backend: Sync {
    /// The file type workers write.
    type File: SyncFile + Send;
    /// The clock workers time with.
    type Clock: Clock + Send;
    /// The name operations workers make in their directories.
    type Dir: DirOps<File = Self::File> + Send;
    /// The submission/completion ring of an `io_uring` worker.
    type Ring: Ring + Send;

    /// Creates a new file `name` in `dir` (openat O_CREAT | O_EXCL | O_NOFOLLOW, mode
    /// 0600), prepares it as `layout` says and fsyncs it, so preparation is not paid for by
    /// the first timed sync. A cancel during a long fill returns `ErrorKind::Interrupted`.
    fn create(
        &self,
        dir: &DirHandle,
        name: &str,
        layout: &FileLayout,
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
    /// Opens the block device `name` in `dir` for worker `thread` with the given flags,
    /// as [`Backend::open`] opens a test file (never creating it), and checks it is still
    /// the block device numbered `rdev`. The fake opens it as a test file.
    fn open_device(
        &self,
        dir: &DirHandle,
        name: &str,
        flags: OpenFlags,
        rdev: u64,
        thread: u32,
    ) -> io::Result<Self::File> {
        let _ = rdev;
        self.open(dir, name, flags, thread)
    }
    /// The clock of worker `thread`.
    fn clock(&self, thread: u32) -> Self::Clock;
    /// The directory operations of worker `thread` ([`PREPARE_THREAD`] while preparing).
    fn dir_ops(&self, thread: u32) -> Self::Dir;
    /// One reading of the counters the settle step waits on: the in-flight requests of the
    /// devices whose stat files are `stat_paths`, and the page cache's dirty and writeback
    /// pages. The real devices by default; the fake reports everything quiet.
    fn settle_sample(
        &self,
        stat_paths: &[&std::path::Path],
    ) -> Result<crate::probe::SettleSample, crate::probe::ProbeError> {
        crate::probe::read_settle_sample(
            stat_paths,
            std::path::Path::new(crate::probe::MEMINFO_PATH),
        )
    }
    /// Sleeps `ms` between two settle samples (the fake does not wait).
    fn settle_pause(&self, ms: u64) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    /// The io_uring of worker `thread` over its open `files` (the `io_uring` engine),
    /// with the slots and buffers `setup` asks for; built before the start gate.
    fn ring(&self, files: &[Self::File], setup: RingSetup, thread: u32) -> io::Result<Self::Ring>;
}

/// Real files and CLOCK_MONOTONIC.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealBackend;

/// sync_file_range(WAIT_BEFORE | WRITE | WAIT_AFTER) over the whole file: its dirty pages
/// written back and waited for, no metadata and no cache flush.
#[inline]
fn write_back(file: &File) -> io::Result<()> {
    let flags = libc::SYNC_FILE_RANGE_WAIT_BEFORE
        | libc::SYNC_FILE_RANGE_WRITE
        | libc::SYNC_FILE_RANGE_WAIT_AFTER;
    // SAFETY: plain syscall on an fd we own; offset 0 and length 0 mean the whole file.
    let rc = unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, flags) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

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
            SyncMethod::SyncFileRange => write_back(&self.file),
            SyncMethod::SyncFileRangeFdatasync => {
                write_back(&self.file)?;
                self.file.sync_data()
            }
            SyncMethod::None => Ok(()),
        }
    }

    #[inline]
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        FileExt::read_at(&self.file, buf, offset)
    }

    #[inline]
    fn stat(&mut self) -> io::Result<()> {
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: plain syscall on an fd we own, into a buffer of the right type.
        check(unsafe { libc::fstat(self.file.as_raw_fd(), st.as_mut_ptr()) }).map(|_| ())
    }

    #[inline]
    fn touch(&mut self) -> io::Result<()> {
        // SAFETY: plain syscall on an fd we own; a null `times` means "now".
        check(unsafe { libc::futimens(self.file.as_raw_fd(), std::ptr::null()) }).map(|_| ())
    }

    #[inline]
    fn set_xattr(&mut self, name: &CStr, value: &[u8]) -> io::Result<()> {
        // SAFETY: valid fd, NUL-terminated name, value pointer and length of a live slice.
        check(unsafe {
            libc::fsetxattr(
                self.file.as_raw_fd(),
                name.as_ptr(),
                value.as_ptr().cast(),
                value.len(),
                0,
            )
        })
        .map(|_| ())
    }

    #[inline]
    fn close(self) -> io::Result<()> {
        let fd = self.file.into_raw_fd();
        // SAFETY: the fd was just released by its owner and is closed exactly once.
        check(unsafe { libc::close(fd) }).map(|_| ())
    }
}

/// The real directory operations (raw libc calls: no allocation between a call and its
/// timing).
#[derive(Clone, Copy, Debug, Default)]
pub struct RealDirOps;

impl DirOps for RealDirOps {
    type File = RealFile;

    #[inline]
    fn open_at(&mut self, dir: &DirHandle, name: &CStr, how: OpenAt) -> io::Result<RealFile> {
        let at = dir.fd().as_raw_fd();
        // SAFETY: a directory fd the caller holds and a NUL-terminated name.
        let fd = check(unsafe { libc::openat(at, name.as_ptr(), how.bits(), 0o600) })?;
        // SAFETY: `fd` was just opened and is owned by nothing else.
        let file = unsafe { File::from_raw_fd(fd) };
        Ok(RealFile { file })
    }

    #[inline]
    fn rename_at(&mut self, dir: &DirHandle, from: &CStr, to: &CStr) -> io::Result<()> {
        let at = dir.fd().as_raw_fd();
        // SAFETY: a directory fd the caller holds and NUL-terminated names.
        check(unsafe { libc::renameat(at, from.as_ptr(), at, to.as_ptr()) }).map(|_| ())
    }

    #[inline]
    fn unlink_at(&mut self, dir: &DirHandle, name: &CStr) -> io::Result<()> {
        // SAFETY: a directory fd the caller holds and a NUL-terminated name.
        check(unsafe { libc::unlinkat(dir.fd().as_raw_fd(), name.as_ptr(), 0) }).map(|_| ())
    }

    #[inline]
    fn stat_at(&mut self, dir: &DirHandle, name: &CStr) -> io::Result<()> {
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        let (at, flags) = (dir.fd().as_raw_fd(), libc::AT_SYMLINK_NOFOLLOW);
        // SAFETY: a directory fd, a NUL-terminated name and a buffer of the right type.
        check(unsafe { libc::fstatat(at, name.as_ptr(), st.as_mut_ptr(), flags) }).map(|_| ())
    }

    #[inline]
    fn statfs(&mut self, dir: &DirHandle) -> io::Result<()> {
        let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
        // SAFETY: a directory fd the caller holds and a buffer of the right type.
        check(unsafe { libc::fstatvfs(dir.fd().as_raw_fd(), st.as_mut_ptr()) }).map(|_| ())
    }

    fn list_dir(&mut self, dir: &DirHandle, name: &CStr) -> io::Result<()> {
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY (all calls): a directory fd the caller holds, a NUL-terminated name, and
        // a DIR stream used only until the closedir that also closes `fd`.
        let fd = check(unsafe { libc::openat(dir.fd().as_raw_fd(), name.as_ptr(), flags) })?;
        let stream = unsafe { libc::fdopendir(fd) };
        if stream.is_null() {
            let e = io::Error::last_os_error();
            unsafe { libc::close(fd) };
            return Err(e);
        }
        let result = loop {
            nix::errno::Errno::clear();
            if unsafe { libc::readdir(stream) }.is_null() {
                break match nix::errno::Errno::last_raw() {
                    0 => Ok(()),
                    errno => Err(io::Error::from_raw_os_error(errno)),
                };
            }
        };
        unsafe { libc::closedir(stream) };
        result
    }

    #[inline]
    fn chown_at(&mut self, dir: &DirHandle, name: &CStr, uid: u32, gid: u32) -> io::Result<()> {
        let (at, flags) = (dir.fd().as_raw_fd(), libc::AT_SYMLINK_NOFOLLOW);
        // SAFETY: a directory fd the caller holds and a NUL-terminated name.
        check(unsafe { libc::fchownat(at, name.as_ptr(), uid, gid, flags) }).map(|_| ())
    }

    #[inline]
    fn syncfs(&mut self, dir: &DirHandle) -> io::Result<()> {
        // SAFETY: plain syscall on a directory fd the caller holds.
        check(unsafe { libc::syncfs(dir.fd().as_raw_fd()) }).map(|_| ())
    }

    #[inline]
    fn sync_dir(&mut self, dir: &DirHandle) -> io::Result<()> {
        // SAFETY: plain syscall on a directory fd the caller holds.
        check(unsafe { libc::fsync(dir.fd().as_raw_fd()) }).map(|_| ())
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
    type Dir = RealDirOps;
    type Ring = RealRing;

    fn create(
        &self,
        dir: &DirHandle,
        name: &str,
        layout: &FileLayout,
        cancel: &CancelToken,
    ) -> io::Result<()> {
        let file = dir.create_file(name, OFlag::empty())?;
        let size = layout.size_bytes;
        match layout.prepare {
            Prepare::Sparse => file.set_len(size)?,
            // Created with O_EXCL, so it is new and already of size 0: nothing to do; the
            // timed writes extend it (fio's fallocate=none).
            Prepare::Empty => {}
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
                // One write per block, as sysbench prepare does (see fill_write_bytes).
                let mut chunk = fill_pattern(layout.fill_write_bytes.max(8), layout.seed);
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

    fn open_device(
        &self,
        dir: &DirHandle,
        name: &str,
        flags: OpenFlags,
        rdev: u64,
        thread: u32,
    ) -> io::Result<RealFile> {
        let opened = self.open(dir, name, flags, thread)?;
        let st = nix::sys::stat::fstat(&opened.file)?;
        if st.st_mode & libc::S_IFMT != libc::S_IFBLK || st.st_rdev != rdev {
            // Replaced since it was checked: never written.
            return Err(io::Error::from_raw_os_error(libc::ENODEV));
        }
        Ok(opened)
    }

    fn clock(&self, _thread: u32) -> RealClock {
        RealClock::default()
    }

    fn dir_ops(&self, _thread: u32) -> RealDirOps {
        RealDirOps
    }

    fn ring(&self, files: &[RealFile], setup: RingSetup, _thread: u32) -> io::Result<RealRing> {
        RealRing::new(files.iter().map(|f| f.file.as_raw_fd()).collect(), setup)
    }
}

#[cfg(test)]
use super::buf::BUFFER_ALIGN;
pub use super::buf::{AlignedBuf, fill_pattern};

#[cfg(test)]
mod tests {
    use super::*;

    fn sparse(size_bytes: u64) -> FileLayout {
        FileLayout {
            size_bytes,
            prepare: Prepare::Sparse,
            fill_write_bytes: FILL_WRITE_MIN,
            seed: 1,
        }
    }

    #[test]
    fn fill_writes_are_the_block_size_within_a_page_and_the_largest_block() {
        assert_eq!(fill_write_bytes(4096), 4096);
        assert_eq!(fill_write_bytes(16 << 10), 16 << 10);
        assert_eq!(fill_write_bytes(1 << 20), 1 << 20);
        assert_eq!(fill_write_bytes(512), FILL_WRITE_MIN);
        assert_eq!(fill_write_bytes(0), FILL_WRITE_MIN);
        let max = usize::try_from(crate::spec::MAX_BLOCK_SIZE).unwrap();
        assert_eq!(fill_write_bytes(u64::MAX), max);
    }

    #[test]
    fn a_fill_is_written_in_writes_of_the_layouts_length() {
        // Each fill write stamps its own offset into its first 8 bytes, so the stamps show
        // where the writes began: every 4 KiB for 4 KiB fill writes (not every 1 MiB).
        let dir = tempfile::tempdir().unwrap();
        let handle = DirHandle::open(dir.path()).unwrap();
        let layout = FileLayout {
            size_bytes: 64 << 10,
            prepare: Prepare::Fill,
            fill_write_bytes: 4096,
            seed: 9,
        };
        RealBackend
            .create(&handle, "f", &layout, &CancelToken::new())
            .unwrap();
        let data = std::fs::read(dir.path().join("f")).unwrap();
        assert_eq!(data.len(), 64 << 10);
        for offset in (0..data.len()).step_by(4096) {
            let stamp = u64::from_le_bytes(data[offset..offset + 8].try_into().unwrap());
            assert_eq!(stamp, offset as u64, "fill write at {offset}");
        }
        assert_eq!(data[8..4096], fill_pattern(4096, 9)[8..]);
    }

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
            .create(&handle, "f", &sparse(16384), &c)
            .unwrap();
        assert!(
            RealBackend
                .create(&handle, "f", &sparse(16384), &c)
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
                .create(&handle, "link", &sparse(4096), &CancelToken::new())
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
                .create(&handle, "dangling", &sparse(4096), &c)
                .is_err()
        );
        assert!(!dir.path().join("absent").exists());
        assert_eq!(std::fs::read(&real).unwrap(), b"x");
    }
}
