//! Thin wrappers over the programs and kernel files scratch filesystems need (`losetup`,
//! `mkfs.*`, `mount`, `umount`, `dmesg`, `/sys/block/loop*`).

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::ScratchError;

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
    // Its own process group: a Ctrl-C at the terminal reaches fsynclab (which cancels
    // between steps) but never kills a half-done mkfs, mount or umount.
    let output = Command::new(program)
        .args(args)
        .process_group(0)
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

/// The backing file of the loop `device` (`/dev/loopN`) as sysfs shows it (` (deleted)`
/// removed), `None` when it is not attached.
pub(crate) fn loop_backing_path(device: &str) -> Option<PathBuf> {
    let name = device.strip_prefix("/dev/")?;
    let text = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
    let text = text.trim_end_matches('\n');
    Some(PathBuf::from(
        text.strip_suffix(" (deleted)").unwrap_or(text),
    ))
}

/// `losetup -d DEVICE` when its backing file is still `expected` (refused otherwise: the
/// number may have been reused by someone else; nothing to do when it is detached), then
/// waits (up to 5 s) until the kernel has really let go of the backing file: while something
/// (udev, blkid) still holds the device open, the kernel only marks it for autoclear and
/// detaches at the last close.
pub(crate) fn detach(losetup: &Path, device: &str, expected: &Path) -> Result<(), ScratchError> {
    let Some(backing) = loop_backing_path(device) else {
        return Ok(());
    };
    if backing != expected {
        return Err(ScratchError::Unsafe {
            path: PathBuf::from(device),
            reason: format!(
                "its backing file is {}, not {}; left attached",
                backing.display(),
                expected.display()
            ),
        });
    }
    run(losetup, &["-d", device])?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while loop_backing_path(device).as_ref() == Some(&backing)
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

#[cfg(test)]
mod tests {
    use super::*;

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
