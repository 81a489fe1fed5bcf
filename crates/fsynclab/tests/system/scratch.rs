//! Real scratch filesystems: loop images, mkfs, mount and cleanup.
//! Needs root; without it each test prints why it skips, except under `CI=true`, where it
//! fails. Every test has its own state directory (a tempdir) and RAM directory (under
//! /dev/shm) and removes what it made, also when it panics.

use crate::scratch_common::*;

/// Creates, checks the mount, list and recipe_for_path, destroys and checks nothing is left.
fn roundtrip(lab: &Lab, req: &CreateRequest, expect_option: &str) {
    let recipe = lab.manager.create(req).expect("create");
    assert_eq!(recipe.fs, req.fs);
    let mount = mount_at(&recipe.mount_point).expect("mounted");
    assert_eq!(mount.fs_type, req.fs.as_str());
    assert_eq!(mount.source, recipe.device);
    assert!(
        mount.has_option(expect_option),
        "{expect_option} not in {} / {}",
        mount.mount_options,
        mount.super_options
    );
    let listed = lab.manager.list().expect("list");
    assert_eq!(listed.len(), 1);
    assert!(listed[0].mounted && listed[0].loop_attached, "{listed:?}");
    assert_eq!(listed[0].recipe, recipe);
    assert_eq!(lab.manager.get(&recipe.name).expect("get"), recipe);

    let file = recipe.mount_point.join("dir/data.bin");
    std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir in scratch fs");
    std::fs::write(&file, b"fsync me").expect("write in scratch fs");
    assert_eq!(
        lab.manager.recipe_for_path(&file).map(|r| r.name),
        Some(recipe.name.clone())
    );
    let not_yet = recipe.mount_point.join("later/file");
    assert_eq!(
        lab.manager.recipe_for_path(&not_yet).map(|r| r.name),
        Some(recipe.name.clone())
    );
    assert!(lab.manager.recipe_for_path(Path::new("/tmp")).is_none());

    lab.manager.destroy(&recipe.name).expect("destroy");
    assert!(mount_at(&recipe.mount_point).is_none());
    assert_nothing_left(lab);
    assert!(matches!(
        lab.manager.destroy(&recipe.name),
        Err(ScratchError::NotFound { .. })
    ));
}

#[test]
fn ext4_with_data_journal() {
    if !root_or_skip("ext4_with_data_journal") {
        return;
    }
    let lab = Lab::new("ext4");
    let req = CreateRequest {
        mkfs_opts: "-b 4096 -L 'fsync lab'".into(),
        mount_opts: "data=journal,noatime".into(),
        ..request(FsKind::Ext4, 320, "ext4-journal")
    };
    roundtrip(&lab, &req, "data=journal");
}

/// A scratch ext4 has every inode table zeroed at mkfs time, so no `ext4lazyinit` thread
/// writes beside the first runs (docs/SCRATCH.md, "Fresh ext4").
#[test]
fn fresh_ext4_needs_no_lazy_init() {
    if !root_or_skip("fresh_ext4_needs_no_lazy_init") {
        return;
    }
    let lab = Lab::new("ext4-eager");
    let recipe = lab
        .manager
        .create(&request(FsKind::Ext4, 512, "ext4-eager"))
        .expect("create");
    let out = std::process::Command::new("dumpe2fs")
        .arg(&recipe.device)
        .output()
        .expect("dumpe2fs (e2fsprogs, beside mkfs.ext4)");
    let text = String::from_utf8_lossy(&out.stdout);
    let groups = text
        .lines()
        .filter(|l| l.starts_with("Group ") && l.contains("(Blocks"))
        .count();
    let zeroed = text.matches("ITABLE_ZEROED").count();
    lab.manager.destroy("ext4-eager").expect("destroy");
    assert!(groups > 1, "{text}");
    assert_eq!(zeroed, groups, "groups with their inode table zeroed");
}

#[test]
fn xfs_with_direct_io_loop() {
    if !root_or_skip("xfs_with_direct_io_loop") {
        return;
    }
    let lab = Lab::new("xfs");
    let req = CreateRequest {
        loop_direct_io: true,
        mount_opts: "noatime".into(),
        ..request(FsKind::Xfs, 300, "xfs-dio")
    };
    let recipe = lab.manager.create(&req).expect("create xfs");
    assert_eq!(recipe.loop_direct_io, Some(true));
    let image = recipe.image.clone().expect("image");
    assert!(image.starts_with(lab.state_dir()), "{image:?}");
    assert!(lab.state_dir().join("xfs-dio/recipe.json").is_file());
    assert!(matches!(
        lab.manager.create(&req),
        Err(ScratchError::Exists { .. })
    ));
    lab.manager.destroy("xfs-dio").expect("destroy");
    assert_nothing_left(&lab);
    roundtrip(&lab, &req, "noatime");
}

#[test]
fn btrfs_in_ram_with_ssd() {
    if !root_or_skip("btrfs_in_ram_with_ssd") {
        return;
    }
    let lab = Lab::new("btrfs");
    let req = CreateRequest {
        name: None,
        backing: Backing::Ram,
        mount_opts: "ssd".into(),
        ..CreateRequest::new(FsKind::Btrfs, 320 << 20)
    };
    let recipe = lab.manager.create(&req).expect("create btrfs");
    assert_eq!(recipe.name, "btrfs-1");
    let image = recipe.image.clone().expect("image");
    assert_eq!(image, lab.ram_dir.join("btrfs-1.img"));
    assert!(
        mount_at(&recipe.mount_point)
            .expect("mounted")
            .has_option("ssd")
    );
    lab.manager.destroy(&recipe.name).expect("destroy");
    assert!(!image.exists());
    assert_nothing_left(&lab);
    roundtrip(
        &lab,
        &CreateRequest {
            name: Some("b".into()),
            ..req
        },
        "ssd",
    );
}

#[test]
fn bogus_mount_option_leaves_nothing() {
    if !root_or_skip("bogus_mount_option_leaves_nothing") {
        return;
    }
    let lab = Lab::new("bogus");
    let req = CreateRequest {
        mount_opts: "inode_readahead_blks=3".into(),
        backing: Backing::Ram,
        ..request(FsKind::Ext4, 300, "bogus")
    };
    let err = lab
        .manager
        .create(&req)
        .expect_err("bogus option must fail");
    let ScratchError::MountFailed { options, .. } = &err else {
        panic!("expected MountFailed, got {err:?}");
    };
    assert_eq!(options, "inode_readahead_blks=3");
    let dmesg_readable = Command::new("dmesg")
        .output()
        .is_ok_and(|o| o.status.success());
    if let ScratchError::MountFailed { kernel_message, .. } = &err
        && dmesg_readable
    {
        let kernel = kernel_message.as_deref().unwrap_or_default();
        assert!(
            kernel.contains("inode_readahead_blks"),
            "kernel said: {kernel:?}"
        );
    }
    let message = err.to_string();
    assert!(
        message.starts_with("mount -o 'inode_readahead_blks=3' failed: "),
        "{message}"
    );
    assert!(
        message.ends_with("the half-made filesystem was removed"),
        "{message}"
    );
    eprintln!("{message}");
    assert_nothing_left(&lab);
}

#[test]
fn no_space_creates_nothing() {
    if !root_or_skip("no_space_creates_nothing") {
        return;
    }
    let mut lab = Lab::new("nospace");
    let ram_dir = lab.ram_dir.clone();
    lab.mount_by_hand("tmpfs", "tmpfs", &ram_dir);
    sh(
        "mount",
        &["-o", "remount,size=64M", ram_dir.to_str().expect("utf-8")],
    );
    // A fresh tmpfs is 1777; the RAM dir must be private.
    std::fs::set_permissions(&ram_dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let req = CreateRequest {
        backing: Backing::Ram,
        ..request(FsKind::Ext4, 300, "too-big")
    };
    let err = lab.manager.create(&req).expect_err("300M in a 64M tmpfs");
    assert!(matches!(err, ScratchError::NoSpace { .. }), "{err:?}");
    assert!(err.to_string().contains("64M free"), "{err}");
    assert_eq!(std::fs::read_dir(&ram_dir).expect("ram dir").count(), 0);

    let err = lab
        .manager
        .create(&request(FsKind::Xfs, 1 << 30, "petabyte"))
        .expect_err("1 PiB on disk");
    assert!(matches!(err, ScratchError::NoSpace { .. }), "{err:?}");
    assert!(matches!(
        lab.manager.create(&request(FsKind::Xfs, 100, "small")),
        Err(ScratchError::TooSmall { .. })
    ));
    assert_nothing_left(&lab);
}

#[test]
fn cleanup_stale_takes_only_ours() {
    if !root_or_skip("cleanup_stale_takes_only_ours") {
        return;
    }
    // Declared before the lab: dropped after it has unmounted and detached the foreign loop.
    let foreign_dir = tempfile::tempdir().expect("foreign dir");
    let mut lab = Lab::new("stale");
    let live = lab
        .manager
        .create(&request(FsKind::Ext4, 300, "live"))
        .expect("live scratch fs");

    // An orphan: what a kill during create leaves (fsynclab's marker, image under the state
    // dir, attached and mounted) but no recipe.
    let orphan_dir = lab.state_dir().join("orphan");
    std::fs::create_dir_all(orphan_dir.join("mnt")).expect("orphan dir");
    std::fs::write(
        orphan_dir.join(".fsynclab-scratch"),
        b"fsynclab scratch filesystem orphan\n",
    )
    .expect("marker");
    let orphan_image = orphan_dir.join("image.img");
    std::fs::File::create(&orphan_image)
        .and_then(|f| f.set_len(32 << 20))
        .expect("orphan image");
    sh(
        "mkfs.ext4",
        &["-F", "-q", orphan_image.to_str().expect("utf-8")],
    );
    let orphan_loop = sh(
        "losetup",
        &["--find", "--show", orphan_image.to_str().expect("utf-8")],
    );
    sh(
        "mount",
        &[
            &orphan_loop,
            orphan_dir.join("mnt").to_str().expect("utf-8"),
        ],
    );

    // A foreign loop, mounted, outside our directories.
    let foreign_loop = lab.foreign_loop(foreign_dir.path(), 32);
    let foreign_mnt = foreign_dir.path().join("mnt");
    lab.mount_by_hand(&foreign_loop, "ext4", &foreign_mnt);

    let done = lab.manager.cleanup_stale().expect("cleanup_stale");
    eprintln!("{done:?}");
    assert_eq!(done.len(), 2, "{done:?}");
    let loops = list_loop_devices();
    assert!(
        !loops.iter().any(|lo| lo.node() == orphan_loop),
        "orphan still attached"
    );
    assert!(mount_at(&orphan_dir.join("mnt")).is_none());
    assert!(
        loops.iter().any(|lo| lo.node() == foreign_loop),
        "foreign loop detached"
    );
    assert!(mount_at(&std::fs::canonicalize(&foreign_mnt).expect("mnt")).is_some());
    assert!(
        mount_at(&live.mount_point).is_some(),
        "live scratch fs unmounted"
    );
    let status = lab.manager.list().expect("list");
    assert!(status[0].mounted && status[0].loop_attached);

    let done = lab.manager.destroy_all().expect("destroy_all");
    assert!(done.contains(&"destroyed live".to_string()), "{done:?}");
    assert!(done.contains(&"destroyed orphan".to_string()), "{done:?}");
    assert!(
        list_loop_devices()
            .iter()
            .any(|lo| lo.node() == foreign_loop)
    );
    assert_nothing_left(&lab);
}
