//! The checks before fsynclab writes to a block device (issue 34), as root on loop devices
//! over temporary image files only (never a real disk): each refusal of `run --device`
//! exits 2 naming its reason and leaves the device byte-for-byte unchanged (the image's
//! checksum), a device that passes says what it is, and a confirmed run writes only inside
//! its range (`rawdev_run.rs`).

use std::path::{Path, PathBuf};

use fsynclab::rawdev::{RawDeviceError, check_raw_device};

use crate::scratch_common::{root_or_skip, sh};

/// Loop devices over images in a directory of their own; mounts, swaps and loops undone when
/// dropped.
pub(crate) struct Devices {
    pub dir: tempfile::TempDir,
    pub loops: Vec<String>,
    pub mounts: Vec<PathBuf>,
    swaps: Vec<String>,
}

impl Devices {
    pub fn new() -> Devices {
        Devices {
            dir: tempfile::tempdir().unwrap(),
            loops: Vec::new(),
            mounts: Vec::new(),
            swaps: Vec::new(),
        }
    }

    /// A 64 MiB image with a few non-zero blocks (so a write anywhere shows), attached:
    /// its node and image.
    pub fn attach(&mut self, name: &str, partitions: bool) -> (String, PathBuf) {
        self.attach_len(name, partitions, 64 << 20)
    }

    /// [`Devices::attach`] with an image of `len` bytes.
    pub fn attach_len(&mut self, name: &str, partitions: bool, len: u64) -> (String, PathBuf) {
        use std::os::unix::fs::FileExt;
        let image = self.dir.path().join(name);
        let file = std::fs::File::create(&image).unwrap();
        file.set_len(len).unwrap();
        for at in [1u64 << 20, 17 << 20, 60 << 20] {
            file.write_all_at(&[0xa5; 4096], at).unwrap();
        }
        let mut args = vec!["--find", "--show"];
        if partitions {
            args.push("--partscan");
        }
        args.push(image.to_str().unwrap());
        let node = sh("losetup", &args);
        self.loops.push(node.clone());
        (node, image)
    }

    pub fn mount(&mut self, source: &str, fs: &str) -> PathBuf {
        let at = self.dir.path().join(format!("mnt{}", self.mounts.len()));
        std::fs::create_dir(&at).unwrap();
        sh("mount", &["-t", fs, source, at.to_str().unwrap()]);
        self.mounts.push(at.clone());
        at
    }
}

impl Drop for Devices {
    fn drop(&mut self) {
        for swap in &self.swaps {
            let _ = std::process::Command::new("swapoff").arg(swap).status();
        }
        for at in self.mounts.iter().rev() {
            crate::common::unmount_or_detach(at);
        }
        for node in &self.loops {
            let _ = std::process::Command::new("losetup")
                .args(["-d", node])
                .status();
        }
    }
}

/// A checksum of the whole image file.
pub(crate) fn sum(image: &Path) -> u64 {
    let bytes = std::fs::read(image).unwrap();
    bytes
        .chunks(8)
        .enumerate()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, (i, c)| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            (h ^ u64::from_le_bytes(w) ^ i as u64).wrapping_mul(0x100_0000_01b3)
        })
}

/// `fsynclab run --device node --destroy-data-on confirm [extra]`: exits 2 with `words` in
/// its message and leaves the image unchanged.
pub(crate) fn refused(node: &str, confirm: &str, extra: &[&str], image: &Path, words: &str) {
    let lab = crate::common::Lab::new();
    let before = sum(image);
    let out = lab
        .cmd()
        .args([
            "run",
            "--quiet",
            "--device",
            node,
            "--destroy-data-on",
            confirm,
        ])
        .args(["--size", "1M", "--requests", "16", "--kernel-trace", "off"])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{node} {extra:?}: {stderr}");
    assert!(stderr.contains(words), "{node} {extra:?}: {stderr}");
    assert_eq!(sum(image), before, "{node} changed");
    if lab.db.exists() {
        let store = fsynclab::store::Store::open(&lab.db).unwrap();
        assert!(store.list_runs(&Default::default()).unwrap().is_empty());
    }
}

/// Checks `node` (confirmed) and asserts the device is unchanged; the outcome.
fn check(
    node: &str,
    image: &Path,
    overwrite: bool,
) -> Result<fsynclab::rawdev::RawTarget, RawDeviceError> {
    let before = sum(image);
    let path = Path::new(node);
    let got = check_raw_device(path, Some(path), overwrite, &[], 0);
    assert_eq!(sum(image), before, "{node} changed: {got:?}");
    got
}

#[test]
fn every_refusal_names_its_reason_and_leaves_the_device_unchanged() {
    if !root_or_skip("every_refusal_names_its_reason_and_leaves_the_device_unchanged") {
        return;
    }
    let mut d = Devices::new();
    // A blank device passes and says what it is.
    let (blank, blank_image) = d.attach("blank.img", false);
    let target = check(&blank, &blank_image, false).unwrap();
    assert_eq!(target.node, PathBuf::from(&blank));
    assert_eq!(target.size_bytes, 64 << 20);
    let device = target.device.as_ref().expect("a loop device is in sysfs");
    assert!(device.name.starts_with("loop") && device.logical_block_size.is_some());
    assert_eq!(target.signature, None);
    // A wrong confirmation, before anything is looked at.
    let before = sum(&blank_image);
    let e = check_raw_device(
        Path::new(&blank),
        Some(Path::new("/dev/sdz")),
        false,
        &[],
        0,
    )
    .unwrap_err();
    assert!(matches!(e, RawDeviceError::ConfirmMismatch { .. }), "{e}");
    assert_eq!(sum(&blank_image), before);
    refused(
        &blank,
        "/dev/sdz",
        &[],
        &blank_image,
        "does not match the device",
    );
    // Not a block device: the image file itself.
    let file = blank_image.to_str().unwrap();
    refused(
        file,
        file,
        &[],
        &blank_image,
        "is a regular file, not a block device",
    );

    // A filesystem signature: refused unless its overwriting is confirmed.
    let (sig, sig_image) = d.attach("sig.img", false);
    sh("mkfs.ext4", &["-F", "-q", &sig]);
    let e = check(&sig, &sig_image, false).unwrap_err();
    assert!(e.to_string().contains("carries an ext4 signature"), "{e}");
    refused(&sig, &sig, &[], &sig_image, "--overwrite-signature");
    let target = check(&sig, &sig_image, true).unwrap();
    assert_eq!(target.signature.as_deref(), Some("an ext4 signature"));
    // Held O_EXCL while the checked target lives: the kernel refuses to mount it.
    let mnt = d.dir.path().join("excl");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "ext4", &sig, mnt.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!mounted.status.success(), "mounted while held");
    drop(target);

    // Mounted.
    d.mount(&sig, "ext4");
    let e = check(&sig, &sig_image, true).unwrap_err();
    assert!(matches!(e, RawDeviceError::Mounted { .. }), "{e}");
    refused(
        &sig,
        &sig,
        &["--overwrite-signature"],
        &sig_image,
        "is mounted",
    );

    // (A partition of it mounted refuses the whole device too — `scratch`'s device family,
    // unit-tested on fixture text — but this machine's kernel reads no partition table, MSDOS
    // or EFI, so a loop device here has no partitions to mount.)

    // Active swap.
    let (swap, swap_image) = d.attach("swap.img", false);
    sh("mkswap", &[&swap]);
    let swapped = sum(&swap_image);
    sh("swapon", &[&swap]);
    d.swaps.push(swap.clone());
    let e = check(&swap, &swap_image, true).unwrap_err();
    assert!(matches!(e, RawDeviceError::Swap { .. }), "{e}");
    refused(
        &swap,
        &swap,
        &["--overwrite-signature"],
        &swap_image,
        "is active swap",
    );
    sh("swapoff", &[&swap]);
    d.swaps.clear();
    assert_eq!(sum(&swap_image), swapped);

    // A member of a mounted two-device btrfs, not the one its mount names.
    let (a, _) = d.attach("btrfs-a.img", false);
    let (b, b_image) = d.attach("btrfs-b.img", false);
    sh(
        "mkfs.btrfs",
        &["-f", "-q", "-d", "single", "-m", "single", &a, &b],
    );
    let _ = std::process::Command::new("btrfs")
        .args(["device", "scan"])
        .status();
    d.mount(&a, "btrfs");
    let e = check(&b, &b_image, true).unwrap_err();
    // mountinfo names the first member only (its major:minor is btrfs's anonymous one).
    assert!(matches!(e, RawDeviceError::BtrfsMember { .. }), "{e}");
    refused(
        &b,
        &b,
        &["--overwrite-signature"],
        &b_image,
        "is a member of btrfs",
    );
}

#[test]
fn a_link_another_user_made_is_not_followed() {
    if !root_or_skip("a_link_another_user_made_is_not_followed") {
        return;
    }
    let mut d = Devices::new();
    let (node, image) = d.attach("linked.img", false);
    let link = d.dir.path().join("disk");
    std::os::unix::fs::symlink(&node, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(65534), None).unwrap();
    let before = sum(&image);
    let e = check_raw_device(&link, Some(&link), false, &[], 0).unwrap_err();
    assert!(
        e.to_string().contains("symbolic link made by uid 65534"),
        "{e}"
    );
    let shown = link.to_str().unwrap();
    refused(shown, shown, &[], &image, "symbolic link made by uid 65534");
    // Trusted (the invoking user's own link under sudo), it is followed to the node.
    let target = check_raw_device(&link, Some(&link), false, &[], 65534).unwrap();
    assert_eq!(target.node, PathBuf::from(&node));
    assert_eq!(sum(&image), before);
}

#[test]
fn a_read_only_device_and_one_this_user_cannot_write_are_refused() {
    if !root_or_skip("a_read_only_device_and_one_this_user_cannot_write_are_refused") {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let mut d = Devices::new();
    let (node, image) = d.attach("ro.img", false);
    sh("blockdev", &["--setro", &node]);
    refused(&node, &node, &[], &image, "is read-only");
    sh("blockdev", &["--setrw", &node]);
    // A node of the same device nobody may read but not write (0644 in a directory of its
    // own): as uid 65534 the run is refused before anything is stored.
    let open = d.dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(d.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let rdev = nix::sys::stat::stat(node.as_str()).unwrap().st_rdev;
    let mine = open.join("disk");
    nix::sys::stat::mknod(
        &mine,
        nix::sys::stat::SFlag::S_IFBLK,
        nix::sys::stat::Mode::from_bits_truncate(0o644),
        rdev,
    )
    .unwrap();
    let before = sum(&image);
    let shown = mine.to_str().unwrap();
    let out = crate::common::bare_cmd()
        .uid(65534)
        .gid(65534)
        .env("XDG_DATA_HOME", &open)
        .arg("--db")
        .arg(open.join("db.sqlite"))
        .args([
            "run",
            "--quiet",
            "--device",
            shown,
            "--destroy-data-on",
            shown,
        ])
        .args(["--size", "1M", "--requests", "16", "--kernel-trace", "off"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot be written by this user"),
        "{stderr}"
    );
    assert_eq!(sum(&image), before);
}
