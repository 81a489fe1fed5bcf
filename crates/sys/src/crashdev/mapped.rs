//! A crash-test log's file read without copying it into memory: mapped read-only, so a log of
//! gigabytes costs page cache, not the process's memory. Only a regular file is mapped (a
//! link at the path is not followed; a FIFO or a device is refused, never read).

use std::num::NonZeroUsize;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::ptr::NonNull;

use nix::sys::mman::{MapFlags, ProtFlags, mmap, munmap};

use super::check_error::{CheckError, io};

/// A file mapped read-only (empty: nothing mapped).
pub(super) struct Mapped {
    map: Option<(NonNull<std::ffi::c_void>, usize)>,
}

/// Why a log's file is refused before it is read.
fn refused(path: &Path, why: &str) -> CheckError {
    CheckError::Damaged {
        path: path.to_path_buf(),
        why: why.to_string(),
    }
}

impl Mapped {
    /// Maps the regular file at `path`.
    pub(super) fn open(path: &Path) -> Result<Mapped, CheckError> {
        let file = open_regular(path)?;
        let len = file.metadata().map_err(io("read", path))?.len();
        let len = usize::try_from(len).map_err(|_| refused(path, "is too large to map"))?;
        let Some(length) = NonZeroUsize::new(len) else {
            return Ok(Mapped { map: None });
        };
        // SAFETY: a read-only private mapping of a regular file we opened; the slice it backs
        // lives as long as `Mapped`. The kept logs and the recorder's files are root's, in a
        // 0700 directory, and not written while mapped.
        let ptr = unsafe {
            mmap(
                None,
                length,
                ProtFlags::PROT_READ,
                MapFlags::MAP_PRIVATE,
                &file,
                0,
            )
        }
        .map_err(|e| io("map", path)(e.into()))?;
        Ok(Mapped {
            map: Some((ptr, len)),
        })
    }
}

impl std::ops::Deref for Mapped {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self.map {
            // SAFETY: `len` bytes mapped readable at `ptr` until drop.
            Some((ptr, len)) => unsafe { std::slice::from_raw_parts(ptr.as_ptr().cast(), len) },
            None => &[],
        }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        if let Some((ptr, len)) = self.map.take() {
            // SAFETY: the mapping made in `open`, unmapped once.
            let _ = unsafe { munmap(ptr, len) };
        }
    }
}

/// Opens `path` for reading: a regular file, reached through no link at its last component,
/// opened without blocking (a FIFO would otherwise wait for a writer).
pub(super) fn open_regular(path: &Path) -> Result<std::fs::File, CheckError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => refused(path, "is a symbolic link"),
            _ => io("open", path)(e),
        })?;
    let meta = file.metadata().map_err(io("read", path))?;
    if !meta.is_file() {
        return Err(refused(path, "is not a regular file"));
    }
    Ok(file)
}

/// The device size a kept log's `size` file says: a regular file of a few bytes holding a
/// number within `limit` (bytes).
pub(super) fn read_size(path: &Path, limit: u64) -> Result<u64, CheckError> {
    use std::io::Read;
    let mut text = String::new();
    open_regular(path)?
        .take(32)
        .read_to_string(&mut text)
        .map_err(io("read", path))?;
    let size: u64 = text
        .trim()
        .parse()
        .map_err(|_| refused(path, "does not hold a size in bytes"))?;
    if size == 0 || size > limit {
        return Err(refused(path, "holds a size no recording device has"));
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_is_mapped_and_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"hello").unwrap();
        assert_eq!(&*Mapped::open(&file).unwrap(), b"hello");
        let empty = dir.path().join("e");
        std::fs::write(&empty, b"").unwrap();
        assert!(Mapped::open(&empty).unwrap().is_empty());
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(Mapped::open(&link).is_err(), "a link is not followed");
        let fifo = dir.path().join("p");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(matches!(
            Mapped::open(&fifo),
            Err(CheckError::Damaged { .. })
        ));
        assert!(Mapped::open(Path::new("/dev/zero")).is_err());
        std::fs::write(&file, b"268435456\n").unwrap();
        assert_eq!(read_size(&file, 1 << 32).unwrap(), 256 << 20);
        for bad in ["", "x", "-1", "0", "18446744073709551615"] {
            std::fs::write(&file, bad).unwrap();
            assert!(read_size(&file, 1 << 32).is_err(), "{bad:?}");
        }
    }
}
