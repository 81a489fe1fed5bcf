//! End-to-end probe tests on real loop-mounted filesystems (ext4, and btrfs whose mountinfo
//! device is anonymous). They need root and mkfs tools: without them they skip with a printed
//! reason, except under `CI=true`, where a skip would hide a regression and so fails.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{collect, read_blockstat};

/// Skips the test (prints why) unless `CI=true`, where it panics instead.
fn skip_or_fail(reason: &str) {
    crate::test_support::skip_or_fail("the loop-mount test", reason);
}

fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let output = Command::new(program)
        .args(args)
        .output()
        .map_err(|error| format!("cannot run {program}: {error}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{program} {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// A filesystem image mounted through a loop device; unmounted (and the loop device freed, as
/// `mount -o loop` sets autoclear) on drop.
struct LoopMount {
    _directory: tempfile::TempDir,
    image: PathBuf,
    mount_point: PathBuf,
}

impl LoopMount {
    fn new(fs_type: &str) -> Result<LoopMount, String> {
        let directory = tempfile::tempdir().map_err(|error| error.to_string())?;
        let image = directory.path().join("image.img");
        let mount_point = directory.path().join("mnt");
        std::fs::create_dir(&mount_point).map_err(|error| error.to_string())?;
        let file = std::fs::File::create(&image).map_err(|error| error.to_string())?;
        file.set_len(300 << 20).map_err(|error| error.to_string())?;
        let image_text = image.to_string_lossy().into_owned();
        let mount_text = mount_point.to_string_lossy().into_owned();
        let force = if fs_type == "ext4" { "-F" } else { "-f" };
        run(&format!("mkfs.{fs_type}"), &["-q", force, &image_text])?;
        run("mount", &["-o", "loop", &image_text, &mount_text])?;
        Ok(LoopMount {
            _directory: directory,
            image,
            mount_point,
        })
    }
}

impl Drop for LoopMount {
    fn drop(&mut self) {
        // A mount another process is reading at that moment (a concurrent test scanning
        // mounts, blkid) can refuse a plain umount: retry, then detach it lazily rather than
        // leave the mount and its image behind (one was left once in a parallel CI run).
        let target = self.mount_point.to_string_lossy().into_owned();
        for _ in 0..10 {
            if run("umount", &[&target]).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        if let Err(error) = run("umount", &["-l", &target]) {
            eprintln!("cleanup: {error}");
        }
    }
}

fn probe_loop_mount(fs_type: &str) {
    if !nix::unistd::geteuid().is_root() {
        skip_or_fail("not root (mounting a loop device needs CAP_SYS_ADMIN)");
        return;
    }
    let mounted = match LoopMount::new(fs_type) {
        Ok(mounted) => mounted,
        Err(reason) => {
            skip_or_fail(&reason);
            return;
        }
    };
    let info = collect(&mounted.mount_point);
    let mount = info.mount.as_ref().expect("mount found");
    assert_eq!(mount.fs_type, fs_type);
    assert_eq!(Path::new(&mount.mount_point), info.target);
    if fs_type == "btrfs" {
        assert_eq!(mount.major, 0, "btrfs reports an anonymous device");
    }
    let device = info.device.as_ref().unwrap_or_else(|| panic!("{info:?}"));
    assert!(device.name.starts_with("loop"), "{device:?}");
    assert_eq!(device.partition, None);
    let canonical_image = std::fs::canonicalize(&mounted.image).expect("image");
    assert_eq!(
        device.loop_backing_file.as_deref().map(Path::new),
        Some(canonical_image.as_path())
    );
    assert_eq!(device.size_bytes, Some(300 << 20));
    assert!(device.logical_block_size.is_some() && device.scheduler.is_some());

    // An fsync on the mounted filesystem must reach the loop device's counters.
    let before = read_blockstat(device).expect("stat before");
    let mut file = std::fs::File::create(mounted.mount_point.join("f")).expect("create");
    file.write_all(&[7u8; 4096]).expect("write");
    file.sync_all().expect("fsync");
    drop(file);
    let after = read_blockstat(device).expect("stat after");
    let delta = after.delta_since(&before);
    assert!(delta.write_ios > 0, "{delta:?}");
    if device.write_cache.as_deref() == Some("write back") {
        assert!(
            delta.flush_ios.is_none_or(|flushes| flushes > 0),
            "{delta:?}"
        );
    }
}

#[test]
fn probes_a_loop_mounted_ext4() {
    probe_loop_mount("ext4");
}

#[test]
fn probes_a_loop_mounted_btrfs_through_its_anonymous_device() {
    probe_loop_mount("btrfs");
}
