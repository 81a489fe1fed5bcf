//! Whether an ext4 target has a jbd2 journal: without one (`mkfs.ext4 -O ^has_journal`)
//! the journal figures do not apply and are null, never 0 (issue 14's rule). Decided from
//! the filesystem itself: the superblock's `has_journal` feature, else the journal jbd2
//! lists under `/proc/fs/jbd2`. Pure parsers; [`ext4_has_journal`] is the thin reader.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Where the ext4 superblock starts on its device.
const SUPERBLOCK_OFFSET: u64 = 1024;
/// Bytes of the superblock fsynclab reads (the whole structure).
pub const SUPERBLOCK_LEN: usize = 1024;
/// `s_magic`: offset and value.
const MAGIC_AT: usize = 0x38;
const EXT4_MAGIC: u16 = 0xEF53;
/// `s_feature_compat` offset and its `has_journal` bit (`EXT4_FEATURE_COMPAT_HAS_JOURNAL`).
const COMPAT_AT: usize = 0x5C;
const COMPAT_HAS_JOURNAL: u32 = 0x0004;

/// The `has_journal` feature of an ext2/3/4 superblock (the 1024 bytes at offset 1024 of
/// the device); `None` when `superblock` is not one (short, or no ext magic).
pub fn superblock_has_journal(superblock: &[u8]) -> Option<bool> {
    let magic = u16::from_le_bytes(superblock.get(MAGIC_AT..MAGIC_AT + 2)?.try_into().ok()?);
    if magic != EXT4_MAGIC {
        return None;
    }
    let compat = u32::from_le_bytes(superblock.get(COMPAT_AT..COMPAT_AT + 4)?.try_into().ok()?);
    Some(compat & COMPAT_HAS_JOURNAL != 0)
}

/// Whether jbd2 runs a journal for block device `device` (`loop3`, `sda1`), from the
/// entries of `/proc/fs/jbd2`: `<device>-<journal inode>` for an internal journal.
pub fn jbd2_lists(entries: &[String], device: &str) -> bool {
    entries.iter().any(|e| {
        e.strip_prefix(device)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|inode| !inode.is_empty() && inode.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// Whether the ext4 filesystem on `device` has a journal: its superblock (read from
/// `/dev/<device>`) says; when that cannot be read, whether jbd2 lists a journal for it.
pub fn ext4_has_journal(device: &str) -> bool {
    if let Some(known) = read_superblock(&Path::new("/dev").join(device))
        .as_deref()
        .and_then(superblock_has_journal)
    {
        return known;
    }
    let entries: Vec<String> = std::fs::read_dir("/proc/fs/jbd2")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    jbd2_lists(&entries, device)
}

fn read_superblock(device: &Path) -> Option<Vec<u8>> {
    let mut file = std::fs::File::open(device).ok()?;
    file.seek(SeekFrom::Start(SUPERBLOCK_OFFSET)).ok()?;
    let mut buf = vec![0u8; SUPERBLOCK_LEN];
    file.read_exact(&mut buf).ok()?;
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Recorded on this machine: `mkfs.ext4 -q -F` and `mkfs.ext4 -q -F -O ^has_journal` on
    // 8 MiB images, then the 1024 bytes at offset 1024.
    const JOURNAL: &[u8] =
        include_bytes!("../../../../tests/fixtures/ktrace/ext4-superblock-journal.bin");
    const NO_JOURNAL: &[u8] =
        include_bytes!("../../../../tests/fixtures/ktrace/ext4-superblock-nojournal.bin");

    #[test]
    fn the_superblock_says_whether_there_is_a_journal() {
        assert_eq!(superblock_has_journal(JOURNAL), Some(true));
        assert_eq!(superblock_has_journal(NO_JOURNAL), Some(false));
    }

    #[test]
    fn anything_else_is_not_a_superblock() {
        assert_eq!(superblock_has_journal(&[]), None);
        assert_eq!(superblock_has_journal(&JOURNAL[..0x40]), None);
        let mut wrong = JOURNAL.to_vec();
        wrong[MAGIC_AT] = 0;
        assert_eq!(superblock_has_journal(&wrong), None);
    }

    #[test]
    fn jbd2_lists_internal_journals_by_device_and_inode() {
        let entries = vec!["loop3-8".to_string(), "sda1-8".to_string()];
        assert!(jbd2_lists(&entries, "loop3"));
        assert!(jbd2_lists(&entries, "sda1"));
        assert!(!jbd2_lists(&entries, "sda"));
        assert!(!jbd2_lists(&entries, "loop"));
        assert!(!jbd2_lists(&[], "vda"));
        assert!(!jbd2_lists(&["vda-x".to_string()], "vda"));
    }
}
