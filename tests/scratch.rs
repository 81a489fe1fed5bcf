//! Real scratch filesystems: loop images, mkfs, mount, cleanup and the device refusals.
//! Needs root; without it each test prints why it skips, except under `CI=true`, where it
//! fails. Every test has its own state directory (a tempdir) and RAM directory (under
//! /dev/shm) and removes what it made, also when it panics.

use std::fs::OpenOptions;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use fsynclab::probe::{MountInfo, list_mounts};
use fsynclab::scratch::{
    Backing, CreateRequest, FsKind, ScratchError, ScratchManager, list_loop_devices,
};

/// Whether the test may run: root, or else a printed skip (a failure under `CI=true`).
fn root_or_skip(test: &str) -> bool {
    if nix::unistd::geteuid().is_root() {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{test} needs root and CI=true forbids skipping: run the scratch tests as root"
    );
    eprintln!("skipping {test}: needs root (losetup, mkfs, mount)");
    false
}

fn sh(program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        output.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A test's own state and RAM directories; dropping it destroys whatever is left.
struct Lab {
    manager: ScratchManager,
    state: tempfile::TempDir,
    ram_dir: PathBuf,
    /// Mount points and loop devices the test made by hand, undone at drop.
    own_mounts: Vec<PathBuf>,
    own_loops: Vec<String>,
}

impl Lab {
    fn new(test: &str) -> Lab {
        let state = tempfile::tempdir().expect("tempdir");
        let ram_dir = PathBuf::from(format!(
            "/dev/shm/fsynclab-test-{}-{test}",
            std::process::id()
        ));
        let manager = ScratchManager::with_roots(state.path().to_path_buf(), ram_dir.clone());
        Lab {
            manager,
            state,
            ram_dir,
            own_mounts: Vec::new(),
            own_loops: Vec::new(),
        }
    }

    fn state_dir(&self) -> PathBuf {
        std::fs::canonicalize(self.state.path()).expect("canonical state dir")
    }

    /// Attaches a fresh ext4 image of `size_mb` outside the state dir, as a user would.
    fn foreign_loop(&mut self, dir: &Path, size_mb: u64) -> String {
        let image = dir.join("foreign.img");
        let file = std::fs::File::create(&image).expect("foreign image");
        file.set_len(size_mb << 20).expect("size");
        sh("mkfs.ext4", &["-F", "-q", image.to_str().expect("utf-8")]);
        let node = sh(
            "losetup",
            &["--find", "--show", image.to_str().expect("utf-8")],
        );
        self.own_loops.push(node.clone());
        node
    }

    fn mount_by_hand(&mut self, source: &str, fs: &str, at: &Path) {
        std::fs::create_dir_all(at).expect("mount point");
        sh("mount", &["-t", fs, source, at.to_str().expect("utf-8")]);
        self.own_mounts.push(at.to_path_buf());
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for mount in self.own_mounts.iter().rev() {
            let _ = Command::new("umount").arg(mount).status();
        }
        for node in &self.own_loops {
            let _ = Command::new("losetup").args(["-d", node]).status();
        }
        let _ = self.manager.destroy_all();
        let _ = std::fs::remove_dir_all(&self.ram_dir);
    }
}

fn mount_at(point: &Path) -> Option<MountInfo> {
    list_mounts()
        .expect("mountinfo")
        .into_iter()
        .rev()
        .find(|m| Path::new(&m.mount_point) == point)
}

/// Nothing of the lab's left: no mount under the state dir, no loop backed by a file under
/// the state or RAM dir (sysfs and `losetup -a`), no files.
fn assert_nothing_left(lab: &Lab) {
    let state = lab.state_dir();
    let leftover: Vec<String> = list_mounts()
        .expect("mountinfo")
        .into_iter()
        .filter(|m| Path::new(&m.mount_point).starts_with(&state))
        .map(|m| m.mount_point)
        .collect();
    assert!(leftover.is_empty(), "mounts left: {leftover:?}");
    let loops: Vec<_> = list_loop_devices()
        .into_iter()
        .filter(|lo| {
            lo.backing_file.starts_with(&state) || lo.backing_file.starts_with(&lab.ram_dir)
        })
        .collect();
    assert!(loops.is_empty(), "loops left: {loops:?}");
    let losetup = sh("losetup", &["-a"]);
    assert!(
        !losetup.contains(state.to_str().expect("utf-8")),
        "losetup -a still lists the state dir: {losetup}"
    );
    let entries: Vec<_> = std::fs::read_dir(&state)
        .expect("state dir")
        .filter_map(Result::ok)
        .filter(|e| e.file_name() != ".lock")
        .map(|e| e.path())
        .collect();
    assert!(
        entries.is_empty(),
        "files left in the state dir: {entries:?}"
    );
    if let Ok(entries) = std::fs::read_dir(&lab.ram_dir) {
        let entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        assert!(entries.is_empty(), "files left in the RAM dir: {entries:?}");
    }
}

fn request(fs: FsKind, size_mb: u64, name: &str) -> CreateRequest {
    CreateRequest {
        name: Some(name.to_string()),
        ..CreateRequest::new(fs, size_mb << 20)
    }
}

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
        mount_opts: "no_such_option_xyz".into(),
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
    assert_eq!(options, "no_such_option_xyz");
    let dmesg_readable = Command::new("dmesg")
        .output()
        .is_ok_and(|o| o.status.success());
    if let ScratchError::MountFailed { kernel_message, .. } = &err
        && dmesg_readable
    {
        let kernel = kernel_message.as_deref().unwrap_or_default();
        assert!(
            kernel.contains("no_such_option_xyz"),
            "kernel said: {kernel:?}"
        );
    }
    let message = err.to_string();
    assert!(
        message.starts_with("mount -o 'no_such_option_xyz' failed: "),
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

    // An orphan: image under the state dir, attached and mounted, but no recipe.
    let orphan_dir = lab.state_dir().join("orphan");
    std::fs::create_dir_all(orphan_dir.join("mnt")).expect("orphan dir");
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

fn device_request(device: &str, confirm: Option<&str>) -> CreateRequest {
    CreateRequest {
        backing: Backing::Device {
            path: device.into(),
        },
        destroy_data_on: confirm.map(PathBuf::from),
        // If a refusal ever failed, mkfs would stop at this option before opening anything.
        mkfs_opts: "--fsynclab-refusal-test-must-not-run".into(),
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
    assert!(
        err.to_string()
            .contains("--destroy-data-on must repeat the exact device name")
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
