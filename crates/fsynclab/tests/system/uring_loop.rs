//! The io_uring final sync (`--final-sync`, fio's end_fsync) on a real filesystem: a loop
//! ext4 of the test's own. docs/WORKLOADS.md "Sync order": an unordered sync covers nothing
//! for sure, so every file written gets the final sync, and when the run ends every write
//! is on the device; an ordered sync covers the writes completed before it started, so a
//! write completing while its file's last sync runs still gets the final sync. And with
//! `--link-sync` at `sync_every` > 1 and `iodepth` > 2, a sync goes linked behind its
//! write only when no earlier write it covers is in flight (else it is held), so the only
//! writes left unsynced are those after the last periodic sync.
//!
//! How "on the device" is checked: after the run (files kept), `sync_file_range(WRITE |
//! WAIT_AFTER)` of every file must write nothing to the loop device (its sectors-written
//! counter does not move), or no more than the writes no sync was due to cover; the same
//! call after one unsynced write must. The filesystem is
//! made without lazy inode-table init and mounted with `commit=300`, so nothing else
//! writes to the device during the check. Needs root (losetup, mkfs, mount); without it
//! the test prints why it skips, except under `CI=true`.

use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Lab, require_root, sh};

/// A 64 MiB ext4 image on a loop device, mounted; unmounted and detached on drop.
struct LoopExt4 {
    _dir: tempfile::TempDir,
    node: String,
    mnt: PathBuf,
    mounted: bool,
}

impl LoopExt4 {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let image = dir.path().join("ext4.img");
        std::fs::File::create(&image)
            .and_then(|f| f.set_len(64 << 20))
            .expect("image");
        let image = image.to_str().expect("utf-8");
        sh(
            "mkfs.ext4",
            &[
                "-F",
                "-q",
                "-E",
                "lazy_itable_init=0,lazy_journal_init=0",
                image,
            ],
        );
        let node = sh("losetup", &["--find", "--show", image]);
        let mut lo = Self {
            mnt: dir.path().join("mnt"),
            _dir: dir,
            node,
            mounted: false,
        };
        std::fs::create_dir(&lo.mnt).expect("mount point");
        let mnt = lo.mnt.to_str().expect("utf-8").to_string();
        sh("mount", &["-t", "ext4", "-o", "commit=300", &lo.node, &mnt]);
        lo.mounted = true;
        lo
    }

    /// Sectors written to the loop device so far (/sys/block/loopN/stat, field 7).
    fn sectors_written(&self) -> u64 {
        let name = self.node.trim_start_matches("/dev/");
        let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).expect("stat");
        stat.split_whitespace()
            .nth(6)
            .and_then(|f| f.parse().ok())
            .expect("sectors written")
    }
}

impl Drop for LoopExt4 {
    fn drop(&mut self) {
        if self.mounted {
            crate::common::unmount_or_detach(&self.mnt);
        }
        let _ = Command::new("losetup").args(["-d", &self.node]).status();
    }
}

/// Writes back whatever of `file` is dirty and waits for it (no flush, no journal).
fn write_back(file: &std::fs::File) {
    let flags = libc::SYNC_FILE_RANGE_WAIT_BEFORE
        | libc::SYNC_FILE_RANGE_WRITE
        | libc::SYNC_FILE_RANGE_WAIT_AFTER;
    // SAFETY: a valid descriptor; the call reads no memory of ours.
    let rc = unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, flags) };
    assert_eq!(
        rc,
        0,
        "sync_file_range: {}",
        std::io::Error::last_os_error()
    );
}

/// Every regular file under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)
        .expect("read_dir")
        .map(Result::unwrap)
    {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Runs `args` (two threads, 4 KiB blocks, 1 MiB files, kept) on a fresh loop ext4 and
/// checks at most `unsynced_sectors` of its writes are not on the device at the end
/// (what writing back the kept files writes); returns (writes, syncs).
fn run_and_check(what: &str, args: &[&str], unsynced_sectors: u64) -> (u64, u64) {
    let lab = Lab::new();
    let lo = LoopExt4::new();
    let mut all = vec![
        "--kernel-trace",
        "off",
        "--ioengine",
        "io_uring",
        "--threads",
        "2",
        "--bs",
        "4k",
        "--file-size",
        "1M",
        "--keep",
    ];
    all.extend_from_slice(args);
    let doc = lab.run_doc_on(&lo.mnt, &all);
    let run = &doc["runs"][0];
    assert_eq!(run["status"], "finished", "{what}: {run}");
    let files = files_under(&lo.mnt)
        .into_iter()
        .filter(|p| !p.starts_with(lo.mnt.join("lost+found")))
        .collect::<Vec<_>>();
    assert_eq!(files.len(), 2, "{what}: one file per thread: {files:?}");
    let opened: Vec<_> = files
        .iter()
        .map(|p| std::fs::OpenOptions::new().write(true).open(p).unwrap())
        .collect();
    let before = lo.sectors_written();
    opened.iter().for_each(write_back);
    let after = lo.sectors_written();
    eprintln!(
        "{what}: {} sectors left unsynced by the run",
        after - before
    );
    assert!(
        after - before <= unsynced_sectors,
        "{what}: the run left {} sectors of its writes unsynced (at most {unsynced_sectors} expected)",
        after - before
    );
    // The probe can see an unsynced write.
    opened[0].write_at(&[0x5a; 4096], 0).unwrap();
    write_back(&opened[0]);
    assert!(lo.sectors_written() >= after + 8, "{what}: probe blind");
    (
        run["writes"].as_u64().expect("writes"),
        run["syncs"].as_u64().expect("syncs"),
    )
}

/// An io_uring run with a sync after every write and the final sync, in `order`.
fn run_final_sync(order: &str) -> (u64, u64) {
    let args = [
        "--iodepth",
        "8",
        "--sync-order",
        order,
        "--sync-every",
        "1",
        "--final-sync",
    ];
    run_and_check(order, &args, 0)
}

#[test]
fn the_final_sync_leaves_every_write_on_a_loop_ext4_in_both_orders() {
    if !require_root("uring_loop", "it makes a loop ext4 (losetup, mkfs, mount)") {
        return;
    }
    // Unordered: 255 periodic syncs per thread (none after the last write, as fio) and
    // the final sync of each file, whatever the periodic syncs covered.
    assert_eq!(run_final_sync("unordered"), (512, 512));
    // Ordered: the same count (the last write always needs the final sync), and the
    // last write is covered even when it completes while the sync before it runs.
    for _ in 0..3 {
        assert_eq!(run_final_sync("ordered"), (512, 512));
    }
}

#[test]
fn linked_syncs_cover_every_write_before_them_on_a_loop_ext4() {
    if !require_root("uring_loop", "it makes a loop ext4 (losetup, mkfs, mount)") {
        return;
    }
    // docs/WORKLOADS.md "Sync order": a sync goes linked behind its write only when no
    // other write it covers is in flight, else it is held until they completed. Sequential
    // blocks, a sync every 4th write, 8 in flight, no final sync: 63 syncs per thread
    // (after writes 4 … 252; none after the last write, as fio), and the only writes no
    // sync covers are the 4 after the last one (253 … 256): 4 blocks of 8 sectors per
    // file. A sync linked behind write 252 while 249 … 251 were still in flight would
    // leave those dirty too.
    let args = [
        "--iodepth",
        "8",
        "--link-sync",
        "--sync-every",
        "4",
        "--pattern",
        "seq",
    ];
    for _ in 0..3 {
        assert_eq!(
            run_and_check("linked, every 4th write", &args, 2 * 4 * 8),
            (512, 126)
        );
    }
}
