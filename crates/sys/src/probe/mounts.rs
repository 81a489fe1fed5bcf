//! Reading the mount table and a block device's counters: the I/O around the pure parsers
//! of `sysinfo`.

use std::path::Path;

use super::{BlockStat, MountInfo, ProbeError, parse_fields, parse_mountinfo};

/// Where the kernel publishes this process's mount table.
pub const MOUNTINFO_PATH: &str = "/proc/self/mountinfo";

/// Reads and parses `/proc/self/mountinfo`.
pub fn list_mounts() -> Result<Vec<MountInfo>, ProbeError> {
    let text = std::fs::read_to_string(MOUNTINFO_PATH).map_err(|source| ProbeError::Read {
        path: MOUNTINFO_PATH.into(),
        source,
    })?;
    Ok(parse_mountinfo(&text)?)
}

/// Reads and parses a stat file such as `/sys/block/loop0/stat`.
pub fn read_block_stat(path: &Path) -> Result<BlockStat, ProbeError> {
    let text = std::fs::read_to_string(path).map_err(|source| ProbeError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let fields: Vec<&str> = text.split_whitespace().collect();
    Ok(parse_fields(&path.display().to_string(), &fields)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::mount_for_path;

    #[test]
    fn list_mounts_reads_this_machine() {
        let mounts = list_mounts().expect("/proc/self/mountinfo is readable");
        assert!(mount_for_path(&mounts, Path::new("/")).is_some());
    }

    #[test]
    fn read_reports_the_path() {
        let missing = Path::new("/nonexistent/fsynclab/stat");
        let error = read_block_stat(missing).expect_err("missing");
        assert!(
            error.to_string().contains("/nonexistent/fsynclab/stat"),
            "{error}"
        );
        let directory = tempfile::tempdir().expect("tempdir");
        let path = directory.path().join("stat");
        std::fs::write(&path, "1 2 3").expect("write");
        let error = read_block_stat(&path).expect_err("short");
        assert!(
            error.to_string().contains(&path.display().to_string()),
            "{error}"
        );
        std::fs::write(&path, "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n").expect("write");
        assert_eq!(read_block_stat(&path).expect("ok").flush_ticks_ms, Some(17));
    }
}
