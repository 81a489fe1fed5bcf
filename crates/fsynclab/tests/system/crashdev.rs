//! The crash test's recording device for real (issue 33): a loop device with direct I/O over
//! the FUSE file of fsynclab's daemon (a process of its own, its memory locked), an ext4
//! filesystem on it, and the log of what the
//! device received — its writes and cache flushes in order, the workload's acknowledgement in
//! its place — replaying to the image the daemon kept.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use fsynclab::crashdev::{CrashDevice, DaemonProgram};
use fsynclab::crashlog::{MemImage, Op, read_entries, replay};
use fsynclab::scratch::FsKind;

use crate::common::require_root;

/// The daemon serving the device in `base`: its pid, from its command line.
fn daemon_of(base: &Path) -> Option<u32> {
    let want = base.to_str()?;
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let words: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
        let ours = words.contains(&b"crash-device".as_slice()) && words.contains(&want.as_bytes());
        ours.then_some(pid)
    })
}

/// A line of `/proc/PID/status`, e.g. `VmLck:`.
fn status_line(pid: u32, key: &str) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(key))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn an_ext4_fsync_reaches_the_log_as_writes_then_a_flush_before_its_acknowledgement() {
    if !require_root(
        "an_ext4_fsync_reaches_the_log_as_writes_then_a_flush_before_its_acknowledgement",
        "mounts /dev/fuse and a loop device",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join(format!("crash-{}-2", std::process::id()));
    let size = 64 << 20;
    let device = CrashDevice::start(
        &DaemonProgram::fsynclab(env!("CARGO_BIN_EXE_fsynclab")),
        &base,
        FsKind::Ext4,
        size,
        "",
        "",
    )
    .unwrap();
    // The daemon is a process of its own, its memory locked.
    let daemon = daemon_of(&base).expect("the daemon's process");
    assert_ne!(daemon, std::process::id());
    let locked = status_line(daemon, "VmLck:");
    assert!(!locked.contains(" 0 kB"), "{locked}");
    let loops = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(loops.contains("fsynclab-crashdev"), "the FUSE mount");
    let dev = base.join("dev");
    let before_fsync = entries_so_far(&dev);
    let record = device.filesystem().join("record");
    std::fs::write(&record, [0x5a; 4096]).unwrap();
    std::fs::File::open(&record).unwrap().sync_all().unwrap();
    device
        .marks()
        .unwrap()
        .write_all(b"record 1 durable")
        .unwrap();
    let dev = device.finish().unwrap();
    // Finished, the daemon has exited.
    assert_eq!(daemon_of(&base), None);

    let log = std::fs::read(dev.join("log")).unwrap();
    let data = std::fs::read(dev.join("data")).unwrap();
    let entries = read_entries(&log).unwrap();
    let count = |f: fn(&Op) -> bool| entries.iter().filter(|e| f(&e.op)).count();
    assert!(
        count(|o| matches!(o, Op::Punch { .. })) > 0,
        "mkfs discards"
    );
    // The fsync: the record's writes and the journal's, then a flush, then the mark.
    let mark = entries
        .iter()
        .position(|e| matches!(e.op, Op::Mark { len: 16, .. }))
        .expect("the acknowledgement");
    let since: Vec<&Op> = entries[before_fsync..mark].iter().map(|e| &e.op).collect();
    let flush = since
        .iter()
        .rposition(|o| **o == Op::Flush)
        .expect("a flush");
    assert!(
        since[..flush].iter().any(|o| matches!(o, Op::Write { .. })),
        "writes before the fsync's flush: {since:?}"
    );
    assert_eq!(count(|o| matches!(o, Op::Mark { .. })), 1);
    // Every write is at most one FUSE write and inside the device.
    for e in &entries {
        if let Op::Write { offset, len, .. } = e.op {
            assert!(len <= u64::from(fsynclab::crashdev::MAX_WRITE) && offset + len <= size);
        }
    }
    // The log replays to the image the daemon kept.
    let mut img = MemImage(vec![0; size as usize]);
    replay(&entries, &data, 0..entries.len(), None, &mut img).unwrap();
    assert!(img.0 == std::fs::read(dev.join("image")).unwrap());
    eprintln!(
        "crashdev: {} entries, {} writes, {} flushes; the fsync: {since:?}",
        entries.len(),
        count(|o| matches!(o, Op::Write { .. })),
        count(|o| *o == Op::Flush)
    );
}

/// Entries in the log so far (the daemon appends each as it answers).
fn entries_so_far(dev: &Path) -> usize {
    let _ = Command::new("sync").status();
    read_entries(&std::fs::read(dev.join("log")).unwrap())
        .unwrap()
        .len()
}
