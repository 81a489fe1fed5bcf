//! The FUSE filesystem of the recording device: a root directory with `image` (the loop
//! device's backing file, its size fixed) and `marks` (each write one acknowledgement).

use std::ffi::OsStr;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use fuser::{
    BackgroundSession, Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags,
    Generation, INodeNo, KernelConfig, LockOwner, MountOption, OpenFlags, ReplyAttr, ReplyData,
    ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyWrite, ReplyXattr, Request, WriteFlags,
};

use super::recorder::Recorder;

/// The loop device's backing file.
pub const IMAGE_NAME: &str = "image";
/// The file the workload writes its acknowledgements into.
pub const MARKS_NAME: &str = "marks";

const IMAGE: INodeNo = INodeNo(2);
const MARKS: INodeNo = INodeNo(3);
/// Attributes never change behind the kernel's back: cache them.
const TTL: Duration = Duration::from_secs(3600);
/// FUSE's largest write here (`fs.fuse.max_pages_limit` pages of 4 KiB): a loop device's
/// requests are capped to it, so one block request is one WRITE.
pub const MAX_WRITE: u32 = 1 << 20;
/// The recording device's filesystem: its recorder, behind the one service thread's lock.
pub struct RecordingFs {
    recorder: Mutex<Recorder>,
}

impl RecordingFs {
    /// The filesystem of `recorder`.
    pub fn new(recorder: Recorder) -> Self {
        Self {
            recorder: Mutex::new(recorder),
        }
    }

    fn attr(&self, ino: INodeNo) -> Option<FileAttr> {
        let (kind, perm, size) = match ino {
            INodeNo::ROOT => (FileType::Directory, 0o700, 0),
            IMAGE => (FileType::RegularFile, 0o600, self.size()),
            MARKS => (FileType::RegularFile, 0o200, 0),
            _ => return None,
        };
        Some(FileAttr {
            ino,
            size,
            blocks: size.div_ceil(512),
            atime: SystemTime::UNIX_EPOCH,
            mtime: SystemTime::UNIX_EPOCH,
            ctime: SystemTime::UNIX_EPOCH,
            crtime: SystemTime::UNIX_EPOCH,
            kind,
            perm,
            nlink: if kind == FileType::Directory { 2 } else { 1 },
            uid: 0,
            gid: 0,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    fn size(&self) -> u64 {
        self.recorder.lock().map_or(0, |r| r.size())
    }

    /// Runs `f` on the recorder; an error is logged and answered EIO.
    fn with<T>(
        &self,
        f: impl FnOnce(&mut Recorder) -> Result<T, super::RecorderError>,
    ) -> Result<T, Errno> {
        let mut recorder = self.recorder.lock().map_err(|_| Errno::EIO)?;
        f(&mut recorder).map_err(|e| {
            log::error!("crash-test device: {e}");
            Errno::EIO
        })
    }
}

impl Filesystem for RecordingFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // The daemon's process made itself an I/O flusher before starting this thread.
        let _ = config.set_max_write(MAX_WRITE);
        Ok(())
    }

    // No extended attributes: the kernel stops asking after one ENOSYS.
    fn getxattr(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _name: &OsStr,
        _size: u32,
        reply: ReplyXattr,
    ) {
        reply.error(Errno::ENOSYS);
    }

    fn listxattr(&self, _req: &Request, _ino: INodeNo, _size: u32, reply: ReplyXattr) {
        reply.error(Errno::ENOSYS);
    }

    fn destroy(&mut self) {
        if let Err(e) = self.with(Recorder::flush_log) {
            log::error!("crash-test device: the log's last entries: {e:?}");
        }
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let ino = match name.to_str() {
            Some(IMAGE_NAME) if parent == INodeNo::ROOT => IMAGE,
            Some(MARKS_NAME) if parent == INodeNo::ROOT => MARKS,
            _ => return reply.error(Errno::ENOENT),
        };
        match self.attr(ino) {
            Some(attr) => reply.entry(&TTL, &attr, Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr(ino) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let Some(attr) = self.attr(ino) else {
            return reply.error(Errno::ENOENT);
        };
        // The device's size, owner and mode are fixed; times are not kept.
        let changes = size.is_some_and(|s| s != attr.size && ino == IMAGE)
            || mode.is_some()
            || uid.is_some_and(|u| u != 0)
            || gid.is_some_and(|g| g != 0);
        if changes {
            return reply.error(Errno::EPERM);
        }
        reply.attr(&TTL, &attr)
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match ino {
            // Write-through: every write reaches the service as the kernel sent it.
            IMAGE | MARKS => reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO),
            _ => reply.error(Errno::EISDIR),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        if ino != IMAGE {
            return reply.data(&[]);
        }
        match self.with(|r| r.read(offset, size)) {
            Ok(bytes) => reply.data(&bytes),
            Err(e) => reply.error(e),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let done = match ino {
            IMAGE => self.with(|r| {
                if !r.inside(offset, data.len() as u64) {
                    return Ok(Err(Errno::ENOSPC));
                }
                r.write(offset, data).map(Ok)
            }),
            MARKS => self.with(|r| r.mark(data).map(Ok)),
            _ => Ok(Err(Errno::EBADF)),
        };
        match done.and_then(|inner| inner) {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(e),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // A close: nothing to make durable.
        reply.ok()
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        // The loop driver turns a cache flush of the device into an fsync of its file; an
        // fsync of the marks file asks for the log to be written out (nothing is recorded).
        let done = match ino {
            IMAGE => self.with(Recorder::flush),
            MARKS => self.with(Recorder::flush_log),
            _ => Ok(()),
        };
        match done {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if ino != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let entries = [
            (INodeNo::ROOT, FileType::Directory, "."),
            (INodeNo::ROOT, FileType::Directory, ".."),
            (IMAGE, FileType::RegularFile, IMAGE_NAME),
            (MARKS, FileType::RegularFile, MARKS_NAME),
        ];
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(*ino, (i + 1) as u64, *kind, name) {
                break;
            }
        }
        reply.ok()
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        if ino != IMAGE {
            return reply.error(Errno::EBADF);
        }
        let punch = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        let done = match mode {
            // Allocating changes no byte of the device.
            0 | libc::FALLOC_FL_KEEP_SIZE => Ok(Ok(())),
            m if m == punch => self.with(|r| clear(r, offset, length, false)),
            m if m & !libc::FALLOC_FL_KEEP_SIZE == libc::FALLOC_FL_ZERO_RANGE => {
                self.with(|r| clear(r, offset, length, true))
            }
            _ => Ok(Err(Errno::EOPNOTSUPP)),
        };
        match done.and_then(|inner| inner) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }
}

/// A discard or zeroing inside the image, recorded; outside it, ENOSPC.
fn clear(
    r: &mut Recorder,
    offset: u64,
    length: u64,
    zero: bool,
) -> Result<Result<(), Errno>, super::RecorderError> {
    if !r.inside(offset, length) {
        return Ok(Err(Errno::ENOSPC));
    }
    r.clear(offset, length, zero).map(Ok)
}

/// Mounts `fs` at `mountpoint` (root only: `/dev/fuse` directly, only root may use it) and
/// serves it on one background thread until the returned session is dropped or unmounted.
pub fn mount(fs: RecordingFs, mountpoint: &Path) -> std::io::Result<BackgroundSession> {
    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName("fsynclab-crashdev".into()),
        MountOption::DefaultPermissions,
        MountOption::NoDev,
        MountOption::NoSuid,
        MountOption::NoExec,
    ];
    fuser::spawn_mount(fs, mountpoint, &config)
}
