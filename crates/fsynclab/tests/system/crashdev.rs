//! The crash test's recording device for real (issue 33): a loop device with direct I/O over
//! the FUSE file of fsynclab's daemon, an ext4 filesystem on it, and the log of what the
//! device received — its writes and cache flushes in order, the workload's acknowledgement in
//! its place — replaying to the image the daemon kept.

use std::path::Path;
use std::process::Command;

use fsynclab::crashdev::{IMAGE_NAME, MARKS_NAME, Recorder, RecordingFs, mount};
use fsynclab::crashlog::{MemImage, Op, read_entries, replay};

use crate::common::{require_root, unmount_or_detach};

fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn sys(device: &str, file: &str) -> String {
    let name = device.trim_start_matches("/dev/");
    std::fs::read_to_string(format!("/sys/block/{name}/{file}"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The loop device's requests are capped at FUSE's largest write (one request, one WRITE).
fn cap_requests(device: &str) {
    let name = device.trim_start_matches("/dev/");
    let kb = fsynclab::crashdev::MAX_WRITE / 1024;
    std::fs::write(
        format!("/sys/block/{name}/queue/max_sectors_kb"),
        kb.to_string(),
    )
    .unwrap();
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
    let (dev, mnt, fs) = (
        dir.path().join("dev"),
        dir.path().join("mnt"),
        dir.path().join("fs"),
    );
    std::fs::create_dir(&mnt).unwrap();
    std::fs::create_dir(&fs).unwrap();
    let size = 64 << 20;
    let session = mount(
        RecordingFs::new(Recorder::create(&dev, size).unwrap()),
        &mnt,
    )
    .unwrap();
    let image = mnt.join(IMAGE_NAME);
    let device = run(
        "losetup",
        &[
            "--direct-io=on",
            "--find",
            "--show",
            image.to_str().unwrap(),
        ],
    );
    let detach = |device: &str| {
        let _ = Command::new("losetup").args(["-d", device]).status();
        fsynclab::crashdev::wait_released(device);
    };
    assert_eq!(sys(&device, "loop/dio"), "1", "direct I/O took on {device}");
    cap_requests(&device);
    run("mkfs.ext4", &["-q", "-F", &device]);
    run("mount", &[&device, fs.to_str().unwrap()]);
    let before_fsync = entries_so_far(&dev);
    let record = fs.join("record");
    std::fs::write(&record, [0x5a; 4096]).unwrap();
    std::fs::File::open(&record).unwrap().sync_all().unwrap();
    std::fs::write(mnt.join(MARKS_NAME), b"record 1 durable").unwrap();
    unmount_or_detach(&fs);
    detach(&device);
    session.umount_and_join().unwrap();

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
