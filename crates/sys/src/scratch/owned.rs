//! The pure decision of which loops and mounts are fsynclab's own: [`select_owned`] and
//! [`find_stale`]. Only what fsynclab's state records *and* marks as its own counts: a
//! scratch name is owned when its directory carries fsynclab's marker or a recipe naming it
//! (decided by the manager), and only the exact paths fsynclab makes for an owned name
//! (`<state>/<name>/image.img`, `<ram>/<name>.img`, mounts at or under `<state>/<name>/mnt`)
//! are ever selected. A user's file, loop or mount that happens to sit in the state
//! directory is left alone.

use std::path::Path;

use super::ScratchRecipe;
use super::checks::validate_name;
use super::layout::{DISK_IMAGE, MOUNT_DIR};
use super::system::LoopDevice;
use crate::probe::{MountInfo, ProbeError, parse_mountinfo};

/// What to tear down: mount points to unmount (in this order: top-most first) and loop
/// devices to detach afterwards.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StalePlan {
    /// Mount points, in unmount order.
    pub unmount: Vec<String>,
    /// Loop devices to detach after the unmounts.
    pub detach: Vec<LoopDevice>,
}

impl StalePlan {
    /// Nothing to do.
    pub fn is_empty(&self) -> bool {
        self.unmount.is_empty() && self.detach.is_empty()
    }
}

/// Which mounts and loops are ours, for [`select_owned`].
pub(crate) struct Scope<'a> {
    /// The canonical state and RAM directories: no loop whose backing file is not strictly
    /// under one of them is ever ours, whatever `image_roots` says.
    pub owned_roots: Vec<&'a Path>,
    /// Mounts whose mount point is (or lies under) one of these are ours.
    pub mount_roots: Vec<&'a Path>,
    /// Loops whose backing file is (or lies under) one of these are ours.
    pub image_roots: Vec<&'a Path>,
    /// Mount points of live scratch filesystems: never touched.
    pub keep_mount_points: Vec<&'a Path>,
    /// Images of live scratch filesystems: their loops are never touched.
    pub keep_images: Vec<&'a Path>,
}

fn strictly_under(path: &Path, root: &Path) -> bool {
    path != root && path.starts_with(root)
}

/// The scratch name whose image `backing` is, when it has exactly the shape fsynclab makes:
/// `<state_dir>/<name>/image.img` or `<ram_dir>/<name>.img` with a valid name. Pure.
pub fn image_owner_name(backing: &Path, state_dir: &Path, ram_dir: &Path) -> Option<String> {
    let name = if let Ok(rest) = backing.strip_prefix(state_dir) {
        let mut parts = rest.iter();
        let (name, file) = (parts.next()?, parts.next()?);
        if file != DISK_IMAGE || parts.next().is_some() {
            return None;
        }
        name.to_str()?
    } else {
        let rest = backing.strip_prefix(ram_dir).ok()?;
        let mut parts = rest.iter();
        let file = parts.next()?;
        if parts.next().is_some() {
            return None;
        }
        file.to_str()?.strip_suffix(".img")?
    };
    validate_name(name).ok().map(|()| name.to_string())
}

/// The mounts and loops `scope` calls ours. A mount is ours when its mount point is (or is
/// under) a mount root or its source is one of our loops; a loop when its backing file is
/// under an image root and strictly under an owned root. Live mount points and images are
/// kept. Pure.
pub(crate) fn select_owned(mounts: &[MountInfo], loops: &[LoopDevice], scope: &Scope) -> StalePlan {
    let detach: Vec<LoopDevice> = loops
        .iter()
        .filter(|lo| {
            scope
                .owned_roots
                .iter()
                .any(|root| strictly_under(&lo.backing_file, root))
        })
        .filter(|lo| {
            scope
                .image_roots
                .iter()
                .any(|root| lo.backing_file.starts_with(root))
        })
        .filter(|lo| {
            !scope
                .keep_images
                .iter()
                .any(|keep| lo.backing_file == *keep)
        })
        .cloned()
        .collect();
    let from_our_loop = |mount: &MountInfo| {
        detach.iter().any(|lo| {
            mount.source == lo.node() || lo.dev.is_some_and(|dev| dev == (mount.major, mount.minor))
        })
    };
    // Later lines were mounted later, so unmounting in reverse takes the top-most first.
    let unmount = mounts
        .iter()
        .rev()
        .filter(|mount| {
            let point = Path::new(&mount.mount_point);
            !scope.keep_mount_points.contains(&point)
                && (scope.mount_roots.iter().any(|root| point.starts_with(root))
                    || from_our_loop(mount))
        })
        .map(|mount| mount.mount_point.clone())
        .collect();
    StalePlan { unmount, detach }
}

/// The stale pieces of fsynclab's scratch filesystems named `owned` (the names whose
/// directory carries fsynclab's marker or recipe, or whose directory is gone): mounts at or
/// under `<state_dir>/<name>/mnt`, loops backed by `<state_dir>/<name>/image.img` or
/// `<ram_dir>/<name>.img` (plus whatever is mounted from those loops), minus the mounts and
/// images of the `live` recipes. Anything else — foreign mounts and loops, and a user's
/// mount or image that merely sits in the state directory — is never selected. All paths
/// must be canonical.
pub fn find_stale(
    mountinfo_text: &str,
    loops: &[LoopDevice],
    state_dir: &Path,
    ram_dir: &Path,
    live: &[ScratchRecipe],
    owned: &[String],
) -> Result<StalePlan, ProbeError> {
    let mounts = parse_mountinfo(mountinfo_text)?;
    let mount_points: Vec<_> = owned
        .iter()
        .map(|name| state_dir.join(name).join(MOUNT_DIR))
        .collect();
    let scope = Scope {
        owned_roots: vec![state_dir, ram_dir],
        mount_roots: mount_points.iter().map(|p| p.as_path()).collect(),
        image_roots: vec![state_dir, ram_dir],
        keep_mount_points: live.iter().map(|r| r.mount_point.as_path()).collect(),
        keep_images: live.iter().filter_map(|r| r.image.as_deref()).collect(),
    };
    // A loop is ours only through the exact image path of an owned name.
    let loops: Vec<LoopDevice> = loops
        .iter()
        .filter(|lo| {
            image_owner_name(&lo.backing_file, state_dir, ram_dir)
                .is_some_and(|name| owned.contains(&name))
        })
        .cloned()
        .collect();
    Ok(select_owned(&mounts, &loops, &scope))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::{Backing, FsKind};

    const STATE: &str = "/home/u/.local/share/fsynclab/scratch";
    const RAM: &str = "/dev/shm/fsynclab-scratch";

    fn mountinfo() -> String {
        [
            "22 1 253:0 / / rw,relatime - ext4 /dev/vda rw",
            "30 22 0:26 / /dev/shm rw - tmpfs tmpfs rw",
            // The state dir itself is a mount point (user's choice): not ours.
            "40 22 0:40 / /home/u/.local/share/fsynclab/scratch rw - tmpfs tmpfs rw",
            // Live scratch fs.
            "41 40 7:1 / /home/u/.local/share/fsynclab/scratch/live/mnt rw - xfs /dev/loop1 rw",
            // Stale: mount point under the state dir, loop whose image was deleted.
            "42 40 7:2 / /home/u/.local/share/fsynclab/scratch/old/mnt rw - ext4 /dev/loop2 rw",
            // Stale loop (ram image) mounted somewhere else.
            "43 22 7:3 / /mnt/elsewhere rw - btrfs /dev/loop3 rw,ssd",
            // Foreign loop and mounts, including a prefix look-alike.
            "44 22 7:4 / /mnt/foreign rw - ext4 /dev/loop4 rw",
            "45 22 7:5 / /home/u/.local/share/fsynclab/scratch-other/mnt rw - ext4 /dev/loop5 rw",
            // Stacked mount on top of the stale one.
            "46 42 0:50 / /home/u/.local/share/fsynclab/scratch/old/mnt/sub rw - tmpfs tmpfs rw",
            // A user's mounts that sit in the state dir, in no owned name's mnt.
            "47 40 0:51 / /home/u/.local/share/fsynclab/scratch/usermnt rw - tmpfs tmpfs rw",
            "48 40 0:52 / /home/u/.local/share/fsynclab/scratch/user/mnt rw - tmpfs tmpfs rw",
            "49 40 0:53 / /home/u/.local/share/fsynclab/scratch/old/data rw - tmpfs tmpfs rw",
        ]
        .join("\n")
    }

    fn loop_dev(n: u32, backing: &str) -> LoopDevice {
        LoopDevice {
            name: format!("loop{n}"),
            dev: Some((7, n)),
            backing_file: backing.into(),
        }
    }

    fn live_recipe() -> ScratchRecipe {
        ScratchRecipe {
            name: "live".into(),
            fs: FsKind::Xfs,
            mkfs_opts: String::new(),
            mount_opts: String::new(),
            backing: Backing::Disk,
            size_bytes: 300 << 20,
            image: Some(format!("{STATE}/live/image.img").into()),
            loop_device: Some("/dev/loop1".into()),
            loop_direct_io: Some(false),
            device: "/dev/loop1".into(),
            mount_point: format!("{STATE}/live/mnt").into(),
            created_at_ms: 0,
        }
    }

    #[test]
    fn stale_selection_leaves_foreign_and_live_alone() {
        let loops = vec![
            loop_dev(1, &format!("{STATE}/live/image.img")),
            loop_dev(2, &format!("{STATE}/old/image.img")),
            loop_dev(3, &format!("{RAM}/gone.img")),
            loop_dev(4, "/var/lib/foreign.img"),
            loop_dev(5, &format!("{STATE}-other/image.img")),
            loop_dev(6, RAM),
            loop_dev(7, "/dev/shm/other-tool.img"),
            // A user's images in the state dir: not an owned name, or not our shape.
            loop_dev(8, &format!("{STATE}/user/image.img")),
            loop_dev(9, &format!("{STATE}/old/other.img")),
            loop_dev(10, &format!("{STATE}/notes.img")),
            loop_dev(11, &format!("{RAM}/sub/x.img")),
        ];
        let owned = ["live", "old", "gone"].map(String::from);
        let plan = find_stale(
            &mountinfo(),
            &loops,
            Path::new(STATE),
            Path::new(RAM),
            &[live_recipe()],
            &owned,
        )
        .unwrap();
        assert_eq!(
            plan.unmount,
            [
                format!("{STATE}/old/mnt/sub"),
                "/mnt/elsewhere".to_string(),
                format!("{STATE}/old/mnt"),
            ]
        );
        let detached: Vec<&str> = plan.detach.iter().map(|lo| lo.name.as_str()).collect();
        assert_eq!(detached, ["loop2", "loop3"]);
    }

    #[test]
    fn without_live_recipes_the_live_one_is_stale_too() {
        let loops = vec![loop_dev(1, &format!("{STATE}/live/image.img"))];
        let owned = ["live".to_string()];
        let plan = find_stale(
            &mountinfo(),
            &loops,
            Path::new(STATE),
            Path::new(RAM),
            &[],
            &owned,
        )
        .unwrap();
        assert!(plan.unmount.contains(&format!("{STATE}/live/mnt")));
        assert_eq!(plan.detach.len(), 1);
        // Not owned (no marker, no recipe): nothing of it is touched.
        let plan = find_stale(
            &mountinfo(),
            &loops,
            Path::new(STATE),
            Path::new(RAM),
            &[],
            &[],
        )
        .unwrap();
        assert!(plan.is_empty(), "{plan:?}");
    }

    #[test]
    fn an_image_root_outside_our_dirs_selects_nothing() {
        let mounts = parse_mountinfo(&mountinfo()).unwrap();
        let loops = vec![
            loop_dev(4, "/var/lib/foreign.img"),
            loop_dev(6, RAM),
            loop_dev(3, &format!("{RAM}/gone.img")),
        ];
        let plan = select_owned(
            &mounts,
            &loops,
            &Scope {
                owned_roots: vec![Path::new(STATE), Path::new(RAM)],
                mount_roots: Vec::new(),
                image_roots: vec![Path::new("/")],
                keep_mount_points: Vec::new(),
                keep_images: Vec::new(),
            },
        );
        let detached: Vec<&str> = plan.detach.iter().map(|lo| lo.name.as_str()).collect();
        assert_eq!(detached, ["loop3"]);
        assert_eq!(plan.unmount, ["/mnt/elsewhere"]);
    }

    #[test]
    fn nothing_of_ours() {
        let text =
            "22 1 253:0 / / rw - ext4 /dev/vda rw\n44 22 7:4 / /mnt/f rw - ext4 /dev/loop4 rw\n";
        let loops = vec![loop_dev(4, "/srv/a.img")];
        let owned = ["x".to_string()];
        let plan = find_stale(text, &loops, Path::new(STATE), Path::new(RAM), &[], &owned).unwrap();
        assert!(plan.is_empty());
    }

    #[test]
    fn image_owner_names_have_the_exact_shape() {
        let (state, ram) = (Path::new(STATE), Path::new(RAM));
        let owner = |p: &str| image_owner_name(Path::new(p), state, ram);
        assert_eq!(
            owner(&format!("{STATE}/ext4-1/image.img")).as_deref(),
            Some("ext4-1")
        );
        assert_eq!(owner(&format!("{RAM}/xfs-2.img")).as_deref(), Some("xfs-2"));
        for not_ours in [
            format!("{STATE}/ext4-1/other.img"),
            format!("{STATE}/ext4-1/mnt/image.img"),
            format!("{STATE}/image.img"),
            format!("{STATE}/Bad Name/image.img"),
            format!("{RAM}/a/b.img"),
            format!("{RAM}/x.iso"),
            format!("{RAM}/.img"),
            "/srv/ext4-1/image.img".to_string(),
        ] {
            assert_eq!(owner(&not_ours), None, "{not_ours}");
        }
    }
}
