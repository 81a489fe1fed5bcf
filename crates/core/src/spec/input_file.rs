//! Reading a small text file a user names (a preset) or fsynclab keeps (a scratch
//! recipe) without trusting what the path turns out to be.
//!
//! `--preset /dev/zero` once grew the process to 2.1 GB, and a FIFO would block forever.
//! The path is checked before it is opened (so a device or FIFO is never even opened),
//! opened non-blocking, checked again on the open descriptor (`fstat`: what is read is
//! what was checked, whatever the path points to by then), and read up to the bound plus
//! one byte. Symlinks are followed: reading a preset through a link is ordinary use, and
//! the checks apply to the file actually opened.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Largest preset (or other input) file read: 1 MiB.
pub const MAX_INPUT_FILE_BYTES: u64 = 1 << 20;

/// Why a file was not read. The message names no path: callers add it with the fix.
#[derive(Debug, thiserror::Error)]
pub enum InputFileError {
    /// A directory, device, FIFO or socket.
    #[error("it is a {kind}, not a regular file")]
    NotRegular {
        /// What it is (`directory`, `character device`...).
        kind: &'static str,
    },
    /// Larger than the bound.
    #[error("it is larger than {max} bytes")]
    TooLarge {
        /// The bound.
        max: u64,
    },
    /// Not UTF-8 text.
    #[error("it is not UTF-8 text")]
    NotText,
    /// Opening or reading failed.
    #[error("{0}{hint}", hint = permission_hint(.0))]
    Io(#[from] std::io::Error),
}

/// Under `sudo fsynclab`, a refused read says why root could not read the file: files a
/// user names are read with that user's rights (see [`read_small_bytes`]).
fn permission_hint(e: &std::io::Error) -> &'static str {
    if e.kind() == std::io::ErrorKind::PermissionDenied
        && crate::identity::invoking_user_ids().is_some()
    {
        " (under sudo, fsynclab reads the files you name with your own rights: make it \
         readable by you)"
    } else {
        ""
    }
}

/// What a non-regular file is, in words; `None` for a regular file.
fn non_regular_kind(file_type: std::fs::FileType) -> Option<&'static str> {
    if file_type.is_file() {
        None
    } else if file_type.is_dir() {
        Some("directory")
    } else if file_type.is_char_device() {
        Some("character device")
    } else if file_type.is_block_device() {
        Some("block device")
    } else if file_type.is_fifo() {
        Some("FIFO")
    } else if file_type.is_socket() {
        Some("socket")
    } else {
        Some("special file")
    }
}

fn check(meta: &std::fs::Metadata, max_bytes: u64) -> Result<(), InputFileError> {
    if let Some(kind) = non_regular_kind(meta.file_type()) {
        return Err(InputFileError::NotRegular { kind });
    }
    if meta.len() > max_bytes {
        return Err(InputFileError::TooLarge { max: max_bytes });
    }
    Ok(())
}

/// Reads `path` as UTF-8 text when it is a regular file of at most `max_bytes` (see the
/// module documentation). `nofollow` refuses a symlink as the last component (for files
/// in fsynclab's own state directories, which only fsynclab writes).
pub fn read_small_file(
    path: &Path,
    max_bytes: u64,
    nofollow: bool,
) -> Result<String, InputFileError> {
    let bytes = read_small_bytes(path, max_bytes, nofollow)?;
    String::from_utf8(bytes).map_err(|_| InputFileError::NotText)
}

/// [`read_small_file`] for binary content (a bundle): the same checks, the bytes as read.
/// A file a user named (`nofollow` false: a preset, a fio job or fio output) is read, under
/// `sudo fsynclab`, with the invoking user's rights
/// ([`crate::identity::with_invoking_user_files`]): a user allowed only `sudo fsynclab` must
/// not read root's files through it (parse errors quote keys, values and positions).
/// fsynclab's own state (`nofollow` true) is read with the process's rights.
pub fn read_small_bytes(
    path: &Path,
    max_bytes: u64,
    nofollow: bool,
) -> Result<Vec<u8>, InputFileError> {
    if nofollow {
        read_checked(path, max_bytes, true)
    } else {
        crate::identity::with_invoking_user_files(|| read_checked(path, max_bytes, false))
    }
}

/// [`read_small_bytes`] with this thread's filesystem identity as it is.
fn read_checked(path: &Path, max_bytes: u64, nofollow: bool) -> Result<Vec<u8>, InputFileError> {
    let meta = if nofollow {
        std::fs::symlink_metadata(path)?
    } else {
        std::fs::metadata(path)?
    };
    if meta.file_type().is_symlink() {
        return Err(InputFileError::NotRegular {
            kind: "symbolic link",
        });
    }
    check(&meta, max_bytes)?;
    let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
    if nofollow {
        flags |= libc::O_NOFOLLOW;
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)?;
    check(&file.metadata()?, max_bytes)?;
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    // A file that grew between fstat and read.
    if bytes.len() as u64 > max_bytes {
        return Err(InputFileError::TooLarge { max: max_bytes });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_within_the_bound_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(&path, "name = \"x\"\n").unwrap();
        assert_eq!(read_small_file(&path, 64, false).unwrap(), "name = \"x\"\n");
        // Exactly at the bound is fine; one byte more is not.
        std::fs::write(&path, "x".repeat(64)).unwrap();
        assert!(read_small_file(&path, 64, false).is_ok());
        std::fs::write(&path, "x".repeat(65)).unwrap();
        assert!(matches!(
            read_small_file(&path, 64, false),
            Err(InputFileError::TooLarge { max: 64 })
        ));
    }

    #[test]
    fn devices_directories_and_fifos_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_small_file(Path::new("/dev/zero"), MAX_INPUT_FILE_BYTES, false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "it is a character device, not a regular file"
        );
        let e = read_small_file(dir.path(), MAX_INPUT_FILE_BYTES, false).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = read_small_file(&fifo, MAX_INPUT_FILE_BYTES, false).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
    }

    #[test]
    fn symlinks_are_followed_unless_refused() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.toml");
        std::fs::write(&real, "ok").unwrap();
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(read_small_file(&link, 64, false).unwrap(), "ok");
        let e = read_small_file(&link, 64, true).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        // A link to a device is judged by what it points to.
        let dev = dir.path().join("dev.toml");
        std::os::unix::fs::symlink("/dev/zero", &dev).unwrap();
        assert!(matches!(
            read_small_file(&dev, 64, false),
            Err(InputFileError::NotRegular { .. })
        ));
    }

    #[test]
    fn binary_content_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.toml");
        std::fs::write(&path, [0xff, 0xfe, 0x00]).unwrap();
        assert!(matches!(
            read_small_file(&path, 64, false),
            Err(InputFileError::NotText)
        ));
    }
}
