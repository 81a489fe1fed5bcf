//! The recorder: the image the device reads and writes, and the log of what it received —
//! its entries and, beside them, the bytes its writes and marks carried.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use fsynclab_core::crashlog::{Entry, Op};

/// A recorder's files failed.
#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    /// A file of the recorder could not be made, read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// The device's image (a sparse file) and its log, in one directory of the state dir.
#[derive(Debug)]
pub struct Recorder {
    dir: PathBuf,
    image: File,
    // Buffered (written out at each cache flush and at unmount): the service appends two
    // records per write; a log cut short by a killed daemon reads to its last whole entry.
    log: BufWriter<File>,
    data: BufWriter<File>,
    size: u64,
    next_seq: u64,
    data_len: u64,
}

/// The image, entries and data files' names.
pub const IMAGE_FILE: &str = "image";
/// The log's entries.
pub const LOG_FILE: &str = "log";
/// The bytes the log's writes and marks carried.
pub const DATA_FILE: &str = "data";

impl Recorder {
    /// A new recorder in `dir` (made, 0700; it must not exist) with an image of `size` bytes
    /// reading as zeroes.
    pub fn create(dir: &Path, size: u64) -> Result<Recorder, RecorderError> {
        let io = |action, path: &Path| {
            let path = path.to_path_buf();
            move |source| RecorderError::Io {
                action,
                path,
                source,
            }
        };
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(dir)
            .map_err(io("make the directory", dir))?;
        let open = |name: &str| {
            let path = dir.join(name);
            OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(io("create", &path))
        };
        let image = open(IMAGE_FILE)?;
        image
            .set_len(size)
            .map_err(io("size", &dir.join(IMAGE_FILE)))?;
        Ok(Recorder {
            dir: dir.to_path_buf(),
            image,
            log: BufWriter::with_capacity(1 << 20, open(LOG_FILE)?),
            data: BufWriter::with_capacity(1 << 20, open(DATA_FILE)?),
            size,
            next_seq: 0,
            data_len: 0,
        })
    }

    /// The image's size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The directory of its files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Entries recorded so far.
    pub fn entries(&self) -> u64 {
        self.next_seq
    }

    /// Writes the buffered entries and data out (the files then hold the whole log).
    pub fn flush_log(&mut self) -> Result<(), RecorderError> {
        let err = self.io("write", DATA_FILE);
        self.data.flush().map_err(err)?;
        let err = self.io("write", LOG_FILE);
        self.log.flush().map_err(err)
    }

    fn io(
        &self,
        action: &'static str,
        name: &str,
    ) -> impl FnOnce(std::io::Error) -> RecorderError + use<> {
        let path = self.dir.join(name);
        move |source| RecorderError::Io {
            action,
            path,
            source,
        }
    }

    fn append(&mut self, op: Op) -> Result<(), RecorderError> {
        let entry = Entry {
            seq: self.next_seq,
            op,
        };
        let err = self.io("append to", LOG_FILE);
        self.log.write_all(&entry.encode()).map_err(err)?;
        self.next_seq += 1;
        Ok(())
    }

    fn keep(&mut self, bytes: &[u8]) -> Result<u64, RecorderError> {
        let at = self.data_len;
        let err = self.io("append to", DATA_FILE);
        self.data.write_all(bytes).map_err(err)?;
        self.data_len += bytes.len() as u64;
        Ok(at)
    }

    /// Whether `len` bytes at `offset` lie inside the image.
    pub fn inside(&self, offset: u64, len: u64) -> bool {
        offset.checked_add(len).is_some_and(|end| end <= self.size)
    }

    /// A write to the image: applied, and recorded with its bytes.
    pub fn write(&mut self, offset: u64, bytes: &[u8]) -> Result<(), RecorderError> {
        let err = self.io("write", IMAGE_FILE);
        self.image.write_all_at(bytes, offset).map_err(err)?;
        let data_at = self.keep(bytes)?;
        self.append(Op::Write {
            offset,
            len: bytes.len() as u64,
            data_at,
        })
    }

    /// Reads the image.
    pub fn read(&self, offset: u64, len: u32) -> Result<Vec<u8>, RecorderError> {
        let end = offset.saturating_add(u64::from(len)).min(self.size);
        let mut buf = vec![0; end.saturating_sub(offset) as usize];
        let err = self.io("read", IMAGE_FILE);
        self.image.read_exact_at(&mut buf, offset).map_err(err)?;
        Ok(buf)
    }

    /// A cache flush of the device (the log's buffer is written out with it, so a reader
    /// sees every entry up to the last flush).
    pub fn flush(&mut self) -> Result<(), RecorderError> {
        self.append(Op::Flush)?;
        self.flush_log()
    }

    /// A discard (`zero`: a zeroing): the range reads as zeroes.
    pub fn clear(&mut self, offset: u64, len: u64, zero: bool) -> Result<(), RecorderError> {
        let mode = if zero {
            nix::fcntl::FallocateFlags::FALLOC_FL_ZERO_RANGE
        } else {
            nix::fcntl::FallocateFlags::FALLOC_FL_PUNCH_HOLE
                | nix::fcntl::FallocateFlags::FALLOC_FL_KEEP_SIZE
        };
        let err = self.io("clear", IMAGE_FILE);
        nix::fcntl::fallocate(&self.image, mode, offset as i64, len as i64)
            .map_err(|e| err(std::io::Error::from(e)))?;
        self.append(if zero {
            Op::Zero { offset, len }
        } else {
            Op::Punch { offset, len }
        })
    }

    /// The workload's acknowledgement mark.
    pub fn mark(&mut self, bytes: &[u8]) -> Result<(), RecorderError> {
        let data_at = self.keep(bytes)?;
        self.append(Op::Mark {
            len: bytes.len() as u64,
            data_at,
        })
    }
}

use std::os::unix::fs::DirBuilderExt;

#[cfg(test)]
mod tests {
    use super::*;
    use fsynclab_core::crashlog::{MemImage, read_entries, replay};

    #[test]
    fn what_it_records_replays_to_the_image_it_kept() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("dev");
        let mut r = Recorder::create(&at, 1 << 16).unwrap();
        r.write(4096, &[7; 512]).unwrap();
        r.flush().unwrap();
        r.mark(b"ack 1").unwrap();
        r.write(0, &[9; 4096]).unwrap();
        r.clear(4096, 4096, false).unwrap();
        r.clear(8192, 4096, true).unwrap();
        r.write(8192, &[1; 100]).unwrap();
        r.flush_log().unwrap();
        assert!(r.inside(0, 1 << 16) && !r.inside(1, 1 << 16) && !r.inside(u64::MAX, 2));
        assert_eq!(r.read(0, 8).unwrap(), [9; 8]);
        assert_eq!(
            r.read((1 << 16) - 4, 8).unwrap().len(),
            4,
            "short at the end"
        );
        let entries = read_entries(&std::fs::read(at.join(LOG_FILE)).unwrap()).unwrap();
        assert_eq!(entries.len(), 7);
        assert_eq!(
            entries[2].op,
            Op::Mark {
                len: 5,
                data_at: 512
            }
        );
        let data = std::fs::read(at.join(DATA_FILE)).unwrap();
        let mut img = MemImage(vec![0; 1 << 16]);
        replay(&entries, &data, 0..entries.len(), None, &mut img).unwrap();
        assert_eq!(img.0, std::fs::read(at.join(IMAGE_FILE)).unwrap());
        // The directory is root's alone, and a second recorder there is refused.
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&at).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(Recorder::create(&at, 4096).is_err());
    }
}
