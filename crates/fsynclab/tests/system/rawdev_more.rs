//! The cases an adversarial review of `run --device` found (session 23), as root on loop
//! devices over temporary images: a sweep's points each split the one confirmed range; two
//! signatures at once (blkid: ambivalent) are never taken for a blank device; a device under
//! a loop device, and a loop device over the database, are refused; a file of several fio
//! jobs is refused whole before its first job writes.

use std::path::Path;

use crate::rawdev::{Devices, refused, sum};
use crate::scratch_common::{root_or_skip, sh};

const MIB: usize = 1 << 20;

#[test]
fn every_point_of_a_sweep_stays_inside_the_confirmed_range() {
    if !root_or_skip("every_point_of_a_sweep_stays_inside_the_confirmed_range") {
        return;
    }
    let mut d = Devices::new();
    let (node, image) = d.attach("sweep.img", false);
    let before = std::fs::read(&image).unwrap();
    let lab = crate::common::Lab::new();
    let out = lab
        .cmd()
        .args(["run", "--quiet", "--kernel-trace", "off", "--device", &node])
        .args(["--destroy-data-on", &node, "--offset", "4M", "--size", "4M"])
        .args([
            "--bs",
            "4k",
            "--pattern",
            "seq",
            "--sync",
            "none",
            "--final-sync",
        ])
        .args(["--sweep", "threads=1,2,3", "--io-size", "8M"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = std::fs::read(&image).unwrap();
    assert!(
        after[..4 * MIB] == before[..4 * MIB],
        "written before the range"
    );
    assert!(
        after[8 * MIB..] == before[8 * MIB..],
        "written after the range"
    );
    // --size and --file-size both set the part: refused.
    let out = lab
        .cmd()
        .args(["run", "--device", &node, "--destroy-data-on", &node])
        .args(["--size", "4M", "--file-size", "8M", "--requests", "4"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("drop --file-size"));
}

#[test]
fn two_signatures_at_once_are_not_a_blank_device() {
    if !root_or_skip("two_signatures_at_once_are_not_a_blank_device") {
        return;
    }
    let mut d = Devices::new();
    // mkfs.xfs wants 300M or more.
    let image = d.dir.path().join("two.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(320 << 20)
        .unwrap();
    let node = sh("losetup", &["--find", "--show", image.to_str().unwrap()]);
    d.loops.push(node.clone());
    // ext4's superblock (bytes 1024..2048) kept through an mkfs.xfs, then put back.
    sh("mkfs.ext4", &["-F", "-q", &node]);
    use std::os::unix::fs::FileExt;
    let mut ext4 = vec![0u8; 1024];
    std::fs::File::open(&node)
        .unwrap()
        .read_exact_at(&mut ext4, 1024)
        .unwrap();
    sh("mkfs.xfs", &["-f", "-q", &node]);
    let dev = std::fs::OpenOptions::new().write(true).open(&node).unwrap();
    dev.write_all_at(&ext4, 1024).unwrap();
    dev.sync_all().unwrap();
    drop(dev);
    refused(&node, &node, &[], &image, "more than one signature");
}

#[test]
fn a_device_under_a_loop_device_and_a_loop_over_the_database_are_refused() {
    if !root_or_skip("a_device_under_a_loop_device_and_a_loop_over_the_database_are_refused") {
        return;
    }
    let mut d = Devices::new();
    let (lower, image) = d.attach("lower.img", false);
    let upper = sh("losetup", &["--find", "--show", &lower]);
    d.loops.insert(0, upper.clone());
    refused(&lower, &lower, &[], &image, "is the backing device of");
    // A loop device over the database (its file, not a device holding it).
    let lab = crate::common::Lab::new();
    crate::common::create_db(&lab);
    let db = lab.db.to_str().unwrap().to_string();
    let over_db = sh("losetup", &["--find", "--show", &db]);
    d.loops.insert(0, over_db.clone());
    let before = sum(&lab.db);
    let out = lab
        .cmd()
        .args(["run", "--device", &over_db, "--destroy-data-on", &over_db])
        .args(["--size", "64k", "--requests", "16", "--overwrite-signature"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("holds") && stderr.contains(&db), "{stderr}");
    assert_eq!(sum(&lab.db), before, "the database changed");
}

#[test]
fn a_file_of_fio_jobs_is_refused_whole_before_its_first_job_writes() {
    if !root_or_skip("a_file_of_fio_jobs_is_refused_whole_before_its_first_job_writes") {
        return;
    }
    let mut d = Devices::new();
    let (a, a_image) = d.attach("a.img", false);
    let (b, _) = d.attach("b.img", false);
    let lab = crate::common::Lab::new();
    let job = lab.dir.path().join("two.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nrw=randwrite\nbs=4k\nsize=1m\nfsync=1\n[a]\nfilename={a}\n[b]\nfilename={b}\n"
        ),
    )
    .unwrap();
    let before = sum(&a_image);
    let out = lab
        .cmd()
        .args(["run", "--quiet", "--kernel-trace", "off", "--fio-job"])
        .arg(&job)
        .args(["--destroy-data-on", &a])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("does not match the device"), "{stderr}");
    assert_eq!(
        sum(&a_image),
        before,
        "job [a] wrote before [b] was refused"
    );
    let store = fsynclab::store::Store::open(&lab.db).unwrap();
    assert!(store.list_runs(&Default::default()).unwrap().is_empty());
    let _ = Path::new(&b);
}

#[test]
fn loop_devices_are_followed_by_their_numbers_down_to_what_is_mounted() {
    if !root_or_skip("loop_devices_are_followed_by_their_numbers_down_to_what_is_mounted") {
        return;
    }
    let mut d = Devices::new();
    let (lower, lower_image) = d.attach("mounted.img", false);
    sh("mkfs.ext4", &["-F", "-q", &lower]);
    // Read-only: a mounted ext4 writes its image by itself (lazy init, commits), and the
    // image must stay byte-identical for the checks below.
    let at = d.dir.path().join("ro");
    std::fs::create_dir(&at).unwrap();
    sh(
        "mount",
        &["-t", "ext4", "-o", "ro", &lower, at.to_str().unwrap()],
    );
    d.mounts.push(at);
    // A loop device over the mounted one: writing it writes the mounted filesystem.
    let over = sh("losetup", &["--find", "--show", &lower]);
    d.loops.insert(0, over.clone());
    refused(
        &over,
        &over,
        &["--overwrite-signature"],
        &lower_image,
        "is mounted",
    );
    // A second loop device over the mounted one's image file.
    let twin = sh(
        "losetup",
        &["--find", "--show", lower_image.to_str().unwrap()],
    );
    d.loops.insert(0, twin.clone());
    refused(
        &twin,
        &twin,
        &["--overwrite-signature"],
        &lower_image,
        "over the same file",
    );
    // A loop device over a node of a blank device, the node then removed: sysfs's path no
    // longer resolves, the kernel's numbers still name the device.
    let (blank, blank_image) = d.attach("blank.img", false);
    let node = d.dir.path().join("node");
    let rdev = nix::sys::stat::stat(blank.as_str()).unwrap().st_rdev;
    nix::sys::stat::mknod(
        &node,
        nix::sys::stat::SFlag::S_IFBLK,
        nix::sys::stat::Mode::from_bits_truncate(0o600),
        rdev,
    )
    .unwrap();
    let hidden = sh("losetup", &["--find", "--show", node.to_str().unwrap()]);
    d.loops.insert(0, hidden);
    std::fs::remove_file(&node).unwrap();
    refused(
        &blank,
        &blank,
        &[],
        &blank_image,
        "is the backing device of",
    );
    // One spelling of a device path.
    let slash = format!("{blank}/");
    refused(&slash, &slash, &[], &blank_image, "not written plainly");
    let double = format!("/{blank}");
    refused(&double, &double, &[], &blank_image, "not written plainly");
    // `..` is not resolved for the user (through a link it is not the lexical parent).
    let dotdot = format!("/dev/..{blank}");
    refused(&dotdot, &dotdot, &[], &blank_image, "has `..` in it");
}
