//! The pure decision of which loops and mounts are fsynclab's own: [`select_owned`] and
//! [`find_stale`].

use std::path::Path;

use super::ScratchRecipe;
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
    /// Mounts whose mount point lies strictly under one of these are ours.
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

/// The mounts and loops `scope` calls ours. A mount is ours when its mount point is strictly
/// under a mount root or its source is one of our loops; a loop when its backing file is
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
                && (scope
                    .mount_roots
                    .iter()
                    .any(|root| strictly_under(point, root))
                    || from_our_loop(mount))
        })
        .map(|mount| mount.mount_point.clone())
        .collect();
    StalePlan { unmount, detach }
}

/// The stale pieces of fsynclab scratch filesystems: mounts strictly under `state_dir` and
/// loops backed by a file under `state_dir` or `ram_dir` (plus whatever is mounted from those
/// loops), minus the mounts and images of the `live` recipes. Foreign mounts and loops are
/// never selected. All paths must be canonical.
pub fn find_stale(
    mountinfo_text: &str,
    loops: &[LoopDevice],
    state_dir: &Path,
    ram_dir: &Path,
    live: &[ScratchRecipe],
) -> Result<StalePlan, ProbeError> {
    let mounts = parse_mountinfo(mountinfo_text)?;
    let scope = Scope {
        owned_roots: vec![state_dir, ram_dir],
        mount_roots: vec![state_dir],
        image_roots: vec![state_dir, ram_dir],
        keep_mount_points: live.iter().map(|r| r.mount_point.as_path()).collect(),
        keep_images: live.iter().filter_map(|r| r.image.as_deref()).collect(),
    };
    // A loop is ours only through a file strictly under our directories.
    let loops: Vec<LoopDevice> = loops
        .iter()
        .filter(|lo| {
            strictly_under(&lo.backing_file, state_dir) || strictly_under(&lo.backing_file, ram_dir)
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
        ];
        let plan = find_stale(
            &mountinfo(),
            &loops,
            Path::new(STATE),
            Path::new(RAM),
            &[live_recipe()],
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
        let plan = find_stale(&mountinfo(), &loops, Path::new(STATE), Path::new(RAM), &[]).unwrap();
        assert!(plan.unmount.contains(&format!("{STATE}/live/mnt")));
        assert_eq!(plan.detach.len(), 1);
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
        let plan = find_stale(text, &loops, Path::new(STATE), Path::new(RAM), &[]).unwrap();
        assert!(plan.is_empty());
    }
}
