//! Thin wrappers over the programs and kernel files scratch filesystems need (`losetup`,
//! `mkfs.*`, `mount`, `umount`, `dmesg`, `/sys/block/loop*`), and the pure decision of which
//! loops and mounts are fsynclab's own.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{ScratchError, ScratchRecipe};
use crate::probe::{MountInfo, ProbeError, parse_mountinfo};

/// Directories searched after `PATH`: root's tools live in sbin, which a `su` or `sudo`
/// environment does not always put on `PATH`.
const SBIN_DIRS: [&str; 4] = ["/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/local/bin"];

/// The package shipping `losetup`, `mount` and `umount` on Debian and Ubuntu.
pub(crate) const MOUNT_PACKAGE: &str = "mount";

/// The first executable `tool` on `PATH`, then in the sbin directories.
pub(crate) fn find_tool(tool: &str) -> Option<PathBuf> {
    let path_dirs = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default();
    path_dirs
        .into_iter()
        .chain(SBIN_DIRS.iter().map(PathBuf::from))
        .map(|dir| dir.join(tool))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

/// [`find_tool`], or [`ScratchError::MissingTool`] naming the package to install.
pub(crate) fn require_tool(tool: &str, package: &str) -> Result<PathBuf, ScratchError> {
    find_tool(tool).ok_or_else(|| ScratchError::MissingTool {
        tool: tool.to_string(),
        package: package.to_string(),
    })
}

/// A failed command: its line, exit status and stderr.
#[derive(Debug)]
pub(crate) struct CommandFailure {
    pub command: String,
    pub status: String,
    pub stderr: String,
}

impl From<CommandFailure> for ScratchError {
    fn from(failure: CommandFailure) -> Self {
        ScratchError::Command {
            command: failure.command,
            status: failure.status,
            stderr: failure.stderr,
        }
    }
}

fn command_line<S: AsRef<OsStr>>(program: &Path, args: &[S]) -> String {
    let name = program
        .file_name()
        .unwrap_or(program.as_os_str())
        .to_string_lossy()
        .into_owned();
    std::iter::once(name)
        .chain(args.iter().map(|arg| {
            let arg = arg.as_ref().to_string_lossy();
            if arg.is_empty() || arg.contains(char::is_whitespace) {
                format!("'{arg}'")
            } else {
                arg.into_owned()
            }
        }))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `program args...` (no shell) and returns its stdout; a spawn error or a non-zero exit
/// is a [`CommandFailure`] carrying the stderr.
pub(crate) fn run<S: AsRef<OsStr>>(program: &Path, args: &[S]) -> Result<String, CommandFailure> {
    let command = command_line(program, args);
    let output = Command::new(program)
        .args(args)
        .output()
        .map_err(|error| CommandFailure {
            command: command.clone(),
            status: "could not start".to_string(),
            stderr: error.to_string(),
        })?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
    let stdout = String::from_utf8_lossy(&output.stdout).trim().to_string();
    Err(CommandFailure {
        command,
        status: output.status.to_string(),
        // Some mkfs versions print their complaint on stdout.
        stderr: if stderr.is_empty() { stdout } else { stderr },
    })
}

/// `umount MOUNT_POINT`, mapping failure to [`ScratchError::UnmountFailed`].
pub(crate) fn unmount(umount: &Path, mount_point: &str) -> Result<(), ScratchError> {
    run(umount, &[mount_point])
        .map(|_| ())
        .map_err(|failure| ScratchError::UnmountFailed {
            mount_point: mount_point.to_string(),
            stderr: failure.stderr,
        })
}

fn loop_backing_file(device: &str) -> Option<String> {
    let name = device.strip_prefix("/dev/")?;
    std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()
}

/// `losetup -d DEVICE`, then waits (up to 5 s) until the kernel has really let go of the
/// backing file: while something (udev, blkid) still holds the device open, the kernel only
/// marks it for autoclear and detaches at the last close.
pub(crate) fn detach(losetup: &Path, device: &str) -> Result<(), ScratchError> {
    let backing = loop_backing_file(device);
    run(losetup, &["-d", device])?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while backing.is_some()
        && loop_backing_file(device) == backing
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(())
}

/// The kernel log as `dmesg` prints it, or `None` when it cannot be read (dmesg_restrict,
/// no dmesg): kernel lines are a bonus in error messages, never a requirement.
pub(crate) fn read_kernel_log() -> Option<String> {
    let output = Command::new("dmesg").output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The kernel lines that appeared after the line `marker` (the last line before the failing
/// command; all lines when it is `None` or gone from the ring buffer) and mention one of
/// `needles` (case-insensitive), last four at most, timestamps stripped, joined with ` / `.
pub fn kernel_lines_after(marker: Option<&str>, log: &str, needles: &[&str]) -> Option<String> {
    let lines: Vec<&str> = log.lines().collect();
    let start = marker
        .and_then(|marker| lines.iter().rposition(|line| *line == marker))
        .map_or(0, |index| index + 1);
    let needles: Vec<String> = needles
        .iter()
        .filter(|needle| !needle.is_empty())
        .map(|needle| needle.to_ascii_lowercase())
        .collect();
    let matching: Vec<&str> = lines[start..]
        .iter()
        .filter(|line| {
            let lower = line.to_ascii_lowercase();
            needles.iter().any(|needle| lower.contains(needle.as_str()))
        })
        .map(|line| strip_timestamp(line))
        .collect();
    let tail = &matching[matching.len().saturating_sub(4)..];
    (!tail.is_empty()).then(|| tail.join(" / "))
}

fn strip_timestamp(line: &str) -> &str {
    let trimmed = line.trim();
    if trimmed.starts_with('[')
        && let Some(end) = trimmed.find(']')
    {
        return trimmed[end + 1..].trim();
    }
    trimmed
}

/// An attached loop device as sysfs shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopDevice {
    /// Kernel name, e.g. `loop3` (the node is `/dev/loop3`).
    pub name: String,
    /// Its major:minor, when readable.
    pub dev: Option<(u32, u32)>,
    /// The backing file (`/sys/block/loop3/loop/backing_file`, ` (deleted)` removed).
    pub backing_file: PathBuf,
}

impl LoopDevice {
    /// The device node, e.g. `/dev/loop3`.
    pub fn node(&self) -> String {
        format!("/dev/{}", self.name)
    }
}

/// Parses a sysfs `dev` file (`7:3`).
pub(crate) fn parse_dev(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.trim().split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// Every attached loop device under `/sys/block`; unreadable or detached ones are left out.
pub fn list_loop_devices() -> Vec<LoopDevice> {
    list_loop_devices_in(Path::new("/sys/block"))
}

fn list_loop_devices_in(sys_block: &Path) -> Vec<LoopDevice> {
    let Ok(entries) = std::fs::read_dir(sys_block) else {
        return Vec::new();
    };
    let mut loops: Vec<LoopDevice> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.starts_with("loop") {
                return None;
            }
            let dir = entry.path();
            let backing = std::fs::read_to_string(dir.join("loop/backing_file")).ok()?;
            let backing = backing.trim_end_matches('\n');
            let backing = backing.strip_suffix(" (deleted)").unwrap_or(backing);
            let dev = std::fs::read_to_string(dir.join("dev"))
                .ok()
                .and_then(|text| parse_dev(&text));
            Some(LoopDevice {
                name,
                dev,
                backing_file: PathBuf::from(backing),
            })
        })
        .collect();
    loops.sort_by(|a, b| a.name.cmp(&b.name));
    loops
}

/// Reads `/sys/block/<loop>/loop/dio` (`1` when the loop device does direct I/O).
pub(crate) fn read_loop_dio(loop_node: &str) -> Option<bool> {
    let name = loop_node.strip_prefix("/dev/")?;
    let text = std::fs::read_to_string(format!("/sys/block/{name}/loop/dio")).ok()?;
    match text.trim() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

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
/// under an image root. Live mount points and images are kept. Pure.
pub(crate) fn select_owned(mounts: &[MountInfo], loops: &[LoopDevice], scope: &Scope) -> StalePlan {
    let detach: Vec<LoopDevice> = loops
        .iter()
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
    fn nothing_of_ours() {
        let text =
            "22 1 253:0 / / rw - ext4 /dev/vda rw\n44 22 7:4 / /mnt/f rw - ext4 /dev/loop4 rw\n";
        let loops = vec![loop_dev(4, "/srv/a.img")];
        let plan = find_stale(text, &loops, Path::new(STATE), Path::new(RAM), &[]).unwrap();
        assert!(plan.is_empty());
    }

    #[test]
    fn kernel_lines() {
        let log = "[  1.0] EXT4-fs (loop0): old complaint\n[  2.0] marker line\n[  3.0] audit: x\n[  4.0] EXT4-fs (loop0): Unrecognized mount option \"bogus\" or missing value\n";
        assert_eq!(
            kernel_lines_after(Some("[  2.0] marker line"), log, &["loop0", "ext4"]).as_deref(),
            Some("EXT4-fs (loop0): Unrecognized mount option \"bogus\" or missing value")
        );
        assert_eq!(
            kernel_lines_after(None, log, &["loop0"]).map(|s| s.matches("EXT4").count()),
            Some(2)
        );
        assert_eq!(
            kernel_lines_after(Some("[  2.0] marker line"), log, &["xfs"]),
            None
        );
    }

    #[test]
    fn dev_numbers_and_command_lines() {
        assert_eq!(parse_dev("7:3\n"), Some((7, 3)));
        assert_eq!(parse_dev("x"), None);
        assert_eq!(
            command_line(
                Path::new("/usr/sbin/mkfs.ext4"),
                &["-F", "-L", "a b", "/dev/loop0"]
            ),
            "mkfs.ext4 -F -L 'a b' /dev/loop0"
        );
    }
}
