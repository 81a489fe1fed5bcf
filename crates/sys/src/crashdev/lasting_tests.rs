//! Unit tests of lasting crash-test filesystems (`lasting.rs`): names, opening, finding,
//! listing, locking and the daemon's identity, on directories made by hand.

use super::DeviceError;
use super::lasting::*;
use super::lasting::{INFO_FILE, daemon_serves};
use crate::sysinfo::FsKind;
use std::path::Path;

#[test]
fn names_are_allow_listed() {
    for good in ["a", "ext4-1", "x_y", &"a".repeat(32)] {
        assert!(check_lasting_name(good).is_ok(), "{good}");
    }
    for bad in [
        "",
        "A",
        "a/b",
        "..",
        "a b",
        "é",
        "-x",
        "_x",
        &"a".repeat(33),
    ] {
        assert!(check_lasting_name(bad).is_err(), "{bad}");
    }
}

#[test]
fn a_missing_or_foreign_directory_is_not_opened_and_finds_nothing() {
    use std::os::unix::fs::DirBuilderExt;
    let state = tempfile::tempdir().unwrap();
    assert!(LastingDevice::open(state.path(), "x").is_err());
    let dir = state.path().join("crash-fs-x");
    let make = |d: &Path, mode: u32| {
        std::fs::DirBuilder::new().mode(mode).create(d).unwrap();
        std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
    };
    make(&dir, 0o755);
    make(&dir.join("mnt"), 0o700);
    make(&dir.join("fs"), 0o700);
    let info = LastingInfo {
        name: "x".into(),
        fs: FsKind::Ext4,
        size: 64 << 20,
        mkfs_options: String::new(),
        mount_options: String::new(),
        daemon_pid: 4_000_000,
    };
    let write = |i: &LastingInfo| {
        std::fs::write(dir.join(INFO_FILE), serde_json::to_string(i).unwrap()).unwrap()
    };
    write(&info);
    // A directory others may enter is not one fsynclab made; nor is a link at `fs`.
    let said = LastingDevice::open(state.path(), "x")
        .unwrap_err()
        .to_string();
    assert!(said.contains("mode 0700"), "{said}");
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    std::fs::remove_dir(dir.join("fs")).unwrap();
    std::os::unix::fs::symlink(state.path(), dir.join("fs")).unwrap();
    assert!(LastingDevice::open(state.path(), "x").is_err());
    std::fs::remove_file(dir.join("fs")).unwrap();
    make(&dir.join("fs"), 0o700);
    // An info that is not fsynclab's: damaged JSON, another name, a size the daemon does
    // not serve, options off the allow-list.
    std::fs::write(dir.join(INFO_FILE), "{}").unwrap();
    assert!(LastingDevice::open(state.path(), "x").is_err());
    for bad in [
        LastingInfo {
            name: "y".into(),
            ..info.clone()
        },
        LastingInfo {
            size: 1 << 50,
            ..info.clone()
        },
        // Outside what a crash test makes (64M to 4G, 4096-byte multiples).
        LastingInfo {
            size: 16 << 20,
            ..info.clone()
        },
        LastingInfo {
            size: (64 << 20) + 1,
            ..info.clone()
        },
        LastingInfo {
            size: 5 << 30,
            ..info.clone()
        },
        LastingInfo {
            mount_options: "loop=/dev/sda".into(),
            ..info.clone()
        },
    ] {
        write(&bad);
        assert!(LastingDevice::open(state.path(), "x").is_err(), "{bad:?}");
        let (listed, damaged) = LastingDevice::list(state.path()).unwrap();
        assert!(listed.is_empty() && damaged.len() == 1 && damaged[0].0 == "x");
    }
    write(&info);
    let device = LastingDevice::open(state.path(), "x").unwrap();
    assert!(!device.serving());
    assert!(LastingDevice::find(state.path(), &dir.join("fs")).is_some());
    // A directory not made yet in it (the filesystem unmounted) is found through its
    // nearest existing ancestor; a way out is not.
    assert!(LastingDevice::find(state.path(), &dir.join("fs/a/b")).is_some());
    assert!(LastingDevice::find(state.path(), &dir.join("fs/a/../../..")).is_none());
    assert!(LastingDevice::find(state.path(), &dir).is_none());
    assert!(LastingDevice::find(state.path(), state.path()).is_none());
    let (listed, damaged) = LastingDevice::list(state.path()).unwrap();
    assert_eq!((listed.len(), damaged.len()), (1, 0));
    assert!(!listed[0].serving && !listed[0].mounted);
    // A live process that is not this device's daemon does not serve it.
    assert!(!daemon_serves(std::process::id(), device.dir()));
    // Held once at a time.
    let held = device.lock().unwrap();
    assert!(matches!(device.lock(), Err(DeviceError::InUse { .. })));
    drop(held);
    assert!(device.lock().is_ok());
}
