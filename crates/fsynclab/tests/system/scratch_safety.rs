//! Scratch-filesystem safety: real-device refusals, recipes and symlinks that must never
//! reach what fsynclab did not create, unsafe state directories. Root, as crates/fsynclab/tests/system/scratch.rs.

use crate::scratch_common::*;
fn device_request(device: &str, confirm: Option<&str>) -> CreateRequest {
    CreateRequest {
        backing: Backing::Device {
            path: device.into(),
        },
        destroy_data_on: confirm.map(PathBuf::from),
        // Passes the allow-list, but if a refusal ever failed mke2fs would stop at this
        // invalid block size before opening anything.
        mkfs_opts: "-b 1000".into(),
        ..request(FsKind::Ext4, 300, "dev")
    }
}

fn file_digest(path: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::fs::read(path).expect("image bytes").hash(&mut hasher);
    hasher.finish()
}

#[test]
fn device_refusals_write_nothing() {
    if !root_or_skip("device_refusals_write_nothing") {
        return;
    }
    // Declared before the lab: dropped after it has unmounted and detached the device.
    let dir = tempfile::tempdir().expect("device dir");
    let mut lab = Lab::new("device");
    let node = lab.foreign_loop(dir.path(), 32);
    let image = dir.path().join("foreign.img");
    let before = file_digest(&image);

    let err = lab
        .manager
        .create(&device_request(&node, None))
        .expect_err("no confirmation");
    assert!(
        matches!(err, ScratchError::ConfirmMissing { .. }),
        "{err:?}"
    );
    // The CLI names the confirmation by its flag, the library by its setting key.
    use fsynclab::spec::Worded;
    assert!(
        err.worded(&fsynclab_cli::CliNames)
            .contains("--destroy-data-on must repeat the exact device name")
    );
    assert!(
        err.to_string()
            .contains("destroy_data_on must repeat the exact device name")
    );
    let err = lab
        .manager
        .create(&device_request(&node, Some("/dev/loop999")))
        .expect_err("other confirmation");
    assert!(
        matches!(err, ScratchError::ConfirmMismatch { .. }),
        "{err:?}"
    );

    // Held open exclusively by someone else.
    let holder = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&node)
        .expect("exclusive open");
    let err = lab
        .manager
        .create(&device_request(&node, Some(&node)))
        .expect_err("in use");
    assert!(matches!(err, ScratchError::DeviceInUse { .. }), "{err:?}");
    drop(holder);
    assert!(
        file_digest(&image) == before,
        "a refusal wrote to the device"
    );

    // Mounted (mounting by hand changes the image, so the digest is taken again after).
    let mnt = dir.path().join("mnt");
    lab.mount_by_hand(&node, "ext4", &mnt);
    let err = lab
        .manager
        .create(&device_request(&node, Some(&node)))
        .expect_err("mounted");
    assert!(matches!(err, ScratchError::DeviceMounted { .. }), "{err:?}");
    assert!(err.to_string().contains("is mounted"), "{err}");

    // Holding a protected path (e.g. the database).
    let db = mnt.join("fsynclab.db");
    let guarded = lab.manager.clone().protect_paths([db.clone()]);
    let err = guarded
        .create(&device_request(&node, Some(&node)))
        .expect_err("holds db");
    match &err {
        ScratchError::DeviceHoldsProtected { protected, .. } => assert_eq!(protected, &db),
        other => panic!("expected DeviceHoldsProtected, got {other:?}"),
    }
    sh("umount", &[mnt.to_str().expect("utf-8")]);
    lab.own_mounts.clear();
    let before = file_digest(&image);

    // The device holding `/`.
    let root = list_mounts()
        .expect("mountinfo")
        .into_iter()
        .rev()
        .find(|m| m.mount_point == "/")
        .expect("a / mount");
    let root_devices: Vec<String> = std::iter::once(root.source.clone())
        .chain(
            // The whole disk too, when / is on a partition.
            std::fs::canonicalize(format!(
                "/sys/class/block/{}",
                root.source.trim_start_matches("/dev/")
            ))
            .ok()
            .filter(|p| p.join("partition").exists())
            .and_then(|p| {
                p.parent()
                    .and_then(|d| d.file_name())
                    .map(|n| n.to_string_lossy().into_owned())
            })
            .map(|disk| format!("/dev/{disk}")),
        )
        .filter(|d| d.starts_with("/dev/"))
        .collect();
    if root_devices.is_empty() {
        eprintln!(
            "/ is on {} (no block device): the root refusal is not exercised",
            root.source
        );
    }
    for device in &root_devices {
        let err = lab
            .manager
            .create(&device_request(device, Some(device)))
            .expect_err("the root device");
        match &err {
            ScratchError::DeviceHoldsProtected { protected, .. } => {
                assert_eq!(protected, Path::new("/"));
            }
            other => panic!("expected DeviceHoldsProtected for {device}, got {other:?}"),
        }
    }

    assert!(
        file_digest(&image) == before,
        "a refusal wrote to the device"
    );
    assert_nothing_left(&lab);

    // Confirmed, unmounted and unprotected: made, and destroy leaves the user's loop attached.
    let req = CreateRequest {
        mkfs_opts: String::new(),
        ..device_request(&node, Some(&node))
    };
    let recipe = lab.manager.create(&req).expect("create on device");
    assert_eq!(recipe.device, node);
    assert_eq!(recipe.size_bytes, 32 << 20);
    assert!(recipe.loop_device.is_none() && recipe.image.is_none());
    assert_eq!(mount_at(&recipe.mount_point).expect("mounted").source, node);
    lab.manager.destroy(&recipe.name).expect("destroy");
    assert!(list_loop_devices().iter().any(|lo| lo.node() == node));
    assert_nothing_left(&lab);
}

/// A recipe naming `image` (and `loop_device`) written by hand under the state dir.
fn write_edited_recipe(lab: &Lab, name: &str, image: &Path, loop_device: &str) {
    let dir = lab.state_dir().join(name);
    std::fs::create_dir_all(dir.join("mnt")).expect("recipe dir");
    let recipe = fsynclab::scratch::ScratchRecipe {
        name: name.to_string(),
        fs: FsKind::Ext4,
        mkfs_opts: String::new(),
        mount_opts: String::new(),
        backing: Backing::Disk,
        size_bytes: 32 << 20,
        image: Some(image.to_path_buf()),
        loop_device: Some(loop_device.to_string()),
        loop_direct_io: None,
        device: loop_device.to_string(),
        mount_point: dir.join("mnt"),
        created_at_ms: 0,
    };
    std::fs::write(
        dir.join("recipe.json"),
        serde_json::to_vec_pretty(&recipe).expect("json"),
    )
    .expect("recipe.json");
}

#[test]
fn edited_recipe_image_cannot_reach_a_foreign_loop() {
    if !root_or_skip("edited_recipe_image_cannot_reach_a_foreign_loop") {
        return;
    }
    let foreign_dir = tempfile::tempdir().expect("foreign dir");
    let mut lab = Lab::new("edited");
    let foreign_loop = lab.foreign_loop(foreign_dir.path(), 32);
    let foreign_image =
        std::fs::canonicalize(foreign_dir.path().join("foreign.img")).expect("image");
    let foreign_mnt = foreign_dir.path().join("mnt");
    lab.mount_by_hand(&foreign_loop, "ext4", &foreign_mnt);
    let attached = || {
        list_loop_devices()
            .iter()
            .any(|lo| lo.node() == foreign_loop && lo.backing_file == foreign_image)
    };

    write_edited_recipe(&lab, "edited", &foreign_image, &foreign_loop);
    lab.manager.destroy("edited").expect("destroy");
    assert!(attached(), "destroy detached a foreign loop");
    assert!(mount_at(&std::fs::canonicalize(&foreign_mnt).expect("mnt")).is_some());

    write_edited_recipe(&lab, "root", Path::new("/"), &foreign_loop);
    let done = lab.manager.destroy_all().expect("destroy_all");
    assert!(done.contains(&"destroyed root".to_string()), "{done:?}");
    assert!(
        done.iter()
            .any(|d| d.starts_with("ignored root's recipe image /")),
        "{done:?}"
    );
    assert!(attached(), "destroy_all detached a foreign loop");
    assert!(mount_at(&std::fs::canonicalize(&foreign_mnt).expect("mnt")).is_some());
    assert_nothing_left(&lab);
}

#[test]
fn symlinked_entries_are_refused() {
    if !root_or_skip("symlinked_entries_are_refused") {
        return;
    }
    let target = tempfile::tempdir().expect("target");
    let precious = target.path().join("precious.txt");
    std::fs::write(&precious, b"keep me").expect("precious");
    let lab = Lab::new("symlink");
    // The first refusal also creates the RAM dir (mode 0700).
    assert!(matches!(
        lab.manager.destroy("nothing"),
        Err(ScratchError::NotFound { .. })
    ));
    let dir_link = lab.state_dir().join("evil");
    std::os::unix::fs::symlink(target.path(), &dir_link).expect("symlink");
    let image_link = lab.ram_dir.join("evil2.img");
    std::os::unix::fs::symlink(&precious, &image_link).expect("symlink");

    for name in ["evil", "evil2"] {
        let err = lab.manager.destroy(name).expect_err("symlink refused");
        assert!(matches!(err, ScratchError::Unsafe { .. }), "{err:?}");
    }
    let err = lab.manager.destroy_all().expect_err("destroy_all refuses");
    assert!(matches!(err, ScratchError::Unsafe { .. }), "{err:?}");
    assert!(err.to_string().contains("symlink"), "{err}");
    assert_eq!(std::fs::read(&precious).expect("precious"), b"keep me");
    assert!(target.path().is_dir());
    assert!(dir_link.is_symlink() && image_link.is_symlink());

    std::fs::remove_file(&dir_link).expect("unlink");
    std::fs::remove_file(&image_link).expect("unlink");
    assert_nothing_left(&lab);
}

#[test]
fn unsafe_roots_are_refused() {
    if !root_or_skip("unsafe_roots_are_refused") {
        return;
    }
    let base = tempfile::tempdir().expect("base");
    let real = base.path().join("real");
    std::fs::create_dir(&real).expect("real");
    let link = base.path().join("link");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let ram = base.path().join("ram");
    let manager = ScratchManager::with_roots(link.clone(), ram.clone());
    let err = manager.destroy_all().expect_err("symlinked state dir");
    assert!(matches!(err, ScratchError::BadStateDir { .. }), "{err:?}");

    let manager = ScratchManager::with_roots(real.clone(), ram.clone());
    // cleanup_stale makes missing roots private (destroy_all would also remove the empty
    // RAM directory again at its end).
    manager.cleanup_stale().expect("safe roots");
    let mode = std::fs::metadata(&ram)
        .expect("ram dir made")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    std::fs::set_permissions(&ram, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let err = manager.destroy_all().expect_err("readable RAM dir");
    assert!(matches!(err, ScratchError::BadStateDir { .. }), "{err:?}");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let err = manager
        .cleanup_stale()
        .expect_err("world-writable state dir");
    assert!(matches!(err, ScratchError::BadStateDir { .. }), "{err:?}");
}

/// `destroy --all` (and the stale cleanup before every create) removes only what fsynclab
/// made: a user's directory, file or mount that sits in the state directory, and an edited
/// recipe naming a foreign mount point, are left alone and named; a file a user put into a
/// scratch directory stops its removal instead of being deleted.
#[test]
fn destroy_all_leaves_what_fsynclab_did_not_make() {
    if !root_or_skip("destroy_all_leaves_what_fsynclab_did_not_make") {
        return;
    }
    let mut lab = Lab::new("foreign-entries");
    let state = lab.state_dir();
    let ours = lab
        .manager
        .create(&CreateRequest {
            backing: Backing::Ram,
            ..request(FsKind::Ext4, 300, "ours")
        })
        .expect("scratch fs");
    assert!(state.join("ours/.fsynclab-scratch").is_file(), "no marker");
    // A user's directory with a file, a user's tmpfs mount, a user's file.
    std::fs::create_dir(state.join("userdir")).expect("userdir");
    std::fs::write(state.join("userdir/precious.txt"), b"keep me").expect("precious");
    lab.mount_by_hand("tmpfs", "tmpfs", &state.join("usermnt/mnt"));
    std::fs::write(state.join("usermnt/mnt/data.txt"), b"mounted data").expect("data");
    std::fs::write(state.join("notes"), b"my notes").expect("notes");
    // A recipe naming a foreign mount point (the user's tmpfs): not a recipe of its own dir.
    let edited = state.join("edited");
    std::fs::create_dir_all(edited.join("mnt")).expect("edited");
    let mut recipe = ours.clone();
    recipe.name = "edited".into();
    recipe.mount_point = state.join("usermnt/mnt");
    std::fs::write(
        edited.join("recipe.json"),
        serde_json::to_vec(&recipe).expect("json"),
    )
    .expect("recipe");
    // What a kill during create leaves: the marker only.
    std::fs::create_dir(state.join("half")).expect("half");
    std::fs::write(state.join("half/.fsynclab-scratch"), b"x").expect("marker");

    // The cleanup before every create must not unmount the user's mount either.
    lab.manager.cleanup_stale().expect("cleanup_stale");
    let user_mount = state.join("usermnt/mnt");
    assert!(
        mount_at(&user_mount).is_some(),
        "cleanup unmounted a user mount"
    );

    let err = lab.manager.destroy("userdir").expect_err("not ours");
    assert!(
        err.to_string().contains("fsynclab did not make it"),
        "{err}"
    );
    let done = lab.manager.destroy_all().expect("destroy_all");
    for name in ["userdir", "usermnt", "notes", "edited"] {
        let note = format!("left alone {}", state.join(name).display());
        assert!(
            done.iter().any(|d| d.starts_with(&note)),
            "{name}: {done:?}"
        );
    }
    assert!(done.contains(&"destroyed ours".to_string()), "{done:?}");
    assert!(done.contains(&"destroyed half".to_string()), "{done:?}");
    assert!(!state.join("ours").exists() && !state.join("half").exists());
    assert_eq!(
        std::fs::read(state.join("userdir/precious.txt")).expect("precious"),
        b"keep me"
    );
    assert_eq!(
        std::fs::read(state.join("notes")).expect("notes"),
        b"my notes"
    );
    assert!(
        mount_at(&user_mount).is_some(),
        "destroy_all unmounted a user mount"
    );
    assert_eq!(
        std::fs::read(user_mount.join("data.txt")).expect("data"),
        b"mounted data"
    );
    assert!(edited.join("recipe.json").is_file());
    assert!(
        lab.manager.list().expect("list").is_empty(),
        "the edited recipe is not live"
    );

    // A user's file inside a scratch directory is kept, and named.
    lab.manager
        .create(&CreateRequest {
            backing: Backing::Ram,
            ..request(FsKind::Ext4, 300, "ours2")
        })
        .expect("scratch fs");
    std::fs::write(state.join("ours2/mine.txt"), b"mine").expect("mine");
    let err = lab.manager.destroy("ours2").expect_err("kept file");
    assert!(err.to_string().contains("mine.txt"), "{err}");
    assert_eq!(
        std::fs::read(state.join("ours2/mine.txt")).expect("mine"),
        b"mine"
    );
    assert!(
        mount_at(&state.join("ours2/mnt")).is_none(),
        "unmounted all the same"
    );
    std::fs::remove_file(state.join("ours2/mine.txt")).expect("rm");
    lab.manager.destroy("ours2").expect("destroy");

    for user in ["userdir", "edited"] {
        std::fs::remove_dir_all(state.join(user)).expect("rm");
    }
    std::fs::remove_file(state.join("notes")).expect("rm");
    Command::new("umount")
        .arg(&user_mount)
        .status()
        .expect("umount");
    lab.own_mounts.clear();
    std::fs::remove_dir_all(state.join("usermnt")).expect("rm");
    assert_nothing_left(&lab);
}
