//! A crash-test device for a run: the recorder, its FUSE mount, a loop device with direct
//! I/O over the FUSE file (checked to have taken), its requests capped at FUSE's largest
//! write, and a filesystem made and mounted on it with allow-listed options. Everything is
//! undone in reverse when the device is finished or dropped.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::daemon::{Daemon, DaemonProgram};
use super::fs::{IMAGE_NAME, MARKS_NAME, MAX_WRITE};
use super::tool::{DeviceError, run};
use crate::fsopts::{check_mkfs_options, check_mount_options};
use crate::sysinfo::FsKind;

/// A recording device with a filesystem on it, mounted.
pub struct CrashDevice {
    base: PathBuf,
    daemon: Option<Daemon>,
    loop_device: Option<String>,
    mounted: Option<PathBuf>,
}

impl CrashDevice {
    /// In `base` (made, 0700; root's state directory, named `crash-…`): the recorder
    /// (`dev/`) with an image of `size` bytes and its FUSE mount (`mnt/`), served by
    /// `program` in a process of its own; a loop device over it, filesystem `fs` made with
    /// `mkfs_options` and mounted at `fs/` with `mount_options` (both checked against the
    /// allow-list).
    pub fn start(
        program: &DaemonProgram,
        base: &Path,
        fs: FsKind,
        size: u64,
        mkfs_options: &str,
        mount_options: &str,
    ) -> Result<CrashDevice, DeviceError> {
        let options = (mkfs_options, mount_options);
        CrashDevice::start_with(program, base, fs, size, options, false)
    }

    /// [`CrashDevice::start`], the daemon `lasting` or not (see `Daemon::start`).
    pub(super) fn start_with(
        program: &DaemonProgram,
        base: &Path,
        fs: FsKind,
        size: u64,
        (mkfs_options, mount_options): (&str, &str),
        lasting: bool,
    ) -> Result<CrashDevice, DeviceError> {
        let mkfs_words = check_mkfs_options(fs, mkfs_options)?;
        check_mount_options(fs, mount_options)?;
        make_dir(base)?;
        // The daemon refuses a path through a link: name the directory as it is.
        let base = &std::fs::canonicalize(base).map_err(|source| DeviceError::Io {
            action: "resolve",
            path: base.to_path_buf(),
            source,
        })?;
        let mut device = CrashDevice {
            base: base.to_path_buf(),
            daemon: None,
            loop_device: None,
            mounted: None,
        };
        make_dir(&base.join("mnt"))?;
        device.daemon = Some(Daemon::start(program, base, size, lasting)?);
        let node = attach_loop(&base.join("mnt").join(IMAGE_NAME))?;
        device.loop_device = Some(node.clone());
        let mut args: Vec<&str> = vec![match fs {
            FsKind::Ext4 => "-F",
            FsKind::Xfs | FsKind::Btrfs => "-f",
        }];
        args.push("-q");
        args.extend(mkfs_words.iter().map(String::as_str));
        args.push(&node);
        run_mkfs(fs.mkfs_tool(), &args)?;
        let at = base.join("fs");
        make_dir(&at)?;
        if lasting && let Err(e) = set_immutable(&at, true) {
            // Then a run while its filesystem is unmounted (a check) writes below it.
            log::warn!("{}: not made immutable: {e}", at.display());
        }
        mount_fs(fs, &node, &at, mount_options)?;
        device.mounted = Some(at);
        Ok(device)
    }

    /// Leaves the device as it is — mounted, its loop attached, its lasting daemon serving
    /// — for [`super::LastingDevice`] to manage from now on.
    pub(super) fn keep(mut self) {
        self.mounted = None;
        self.loop_device = None;
        if let Some(daemon) = self.daemon.take() {
            daemon.keep();
        }
    }

    /// The daemon's process id (while it serves).
    pub(super) fn daemon_pid(&self) -> Option<u32> {
        self.daemon.as_ref().map(Daemon::pid)
    }

    /// Where the filesystem is mounted (the run's target).
    pub fn filesystem(&self) -> &Path {
        self.mounted.as_deref().unwrap_or(&self.base)
    }

    /// The marks file, opened for writing (the workload's acknowledgements).
    pub fn marks(&self) -> std::io::Result<File> {
        std::fs::OpenOptions::new()
            .write(true)
            .open(self.base.join("mnt").join(MARKS_NAME))
    }

    /// Unmounts the filesystem, detaches the loop device and unmounts the recording device:
    /// the recorder's directory, its log complete.
    pub fn finish(mut self) -> Result<PathBuf, DeviceError> {
        self.teardown()?;
        Ok(self.base.join("dev"))
    }

    fn teardown(&mut self) -> Result<(), DeviceError> {
        // Each step is forgotten only once done: on an error, Drop still undoes the rest
        // (lazily), so a failed teardown leaves nothing mounted.
        if let Some(at) = &self.mounted {
            unmount_retrying(at)?;
            self.mounted = None;
        }
        if let Some(node) = &self.loop_device {
            run("losetup", &["-d", node])?;
            wait_released(node);
            self.loop_device = None;
        }
        if let Some(daemon) = self.daemon.take() {
            daemon.stop().map_err(|message| DeviceError::Tool {
                command: format!(
                    "the recording device at {}",
                    self.base.join("mnt").display()
                ),
                message,
            })?;
        }
        Ok(())
    }
}

/// `FS_IOC_GETFLAGS` and `FS_IOC_SETFLAGS` (linux/fs.h) and the immutable flag.
const FS_IOC_GETFLAGS: libc::c_ulong = 0x8008_6601;
const FS_IOC_SETFLAGS: libc::c_ulong = 0x4008_6602;
const FS_IMMUTABLE_FL: libc::c_int = 0x10;

/// Sets (or clears) the immutable flag of directory `path` — a lasting device's mount point,
/// so that while its filesystem is unmounted nothing (root included) creates files in the
/// directory below it.
pub(super) fn set_immutable(path: &Path, on: bool) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(path)?;
    let mut flags: libc::c_int = 0;
    // SAFETY: both ioctls take a pointer to an int the kernel reads or writes; `flags` lives
    // across the calls and `dir` is an open descriptor.
    if unsafe { libc::ioctl(dir.as_raw_fd(), FS_IOC_GETFLAGS as _, &mut flags) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    flags = if on {
        flags | FS_IMMUTABLE_FL
    } else {
        flags & !FS_IMMUTABLE_FL
    };
    // SAFETY: as above.
    if unsafe { libc::ioctl(dir.as_raw_fd(), FS_IOC_SETFLAGS as _, &flags) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Makes directory `path` (and its parents), mode 0700.
pub(super) fn make_dir(path: &Path) -> Result<(), DeviceError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .recursive(true)
        .create(path)
        .map_err(|source| DeviceError::Io {
            action: "make",
            path: path.to_path_buf(),
            source,
        })
}

/// Attaches a loop device with direct I/O over `image` (the recording device's file),
/// checks that direct I/O took and caps its requests at FUSE's largest write: its node.
pub(super) fn attach_loop(image: &Path) -> Result<String, DeviceError> {
    let image = image.to_string_lossy().into_owned();
    let node = run("losetup", &["--direct-io=on", "--find", "--show", &image])?;
    let name = node.trim_start_matches("/dev/");
    let detach = |e: DeviceError| {
        let _ = run("losetup", &["-d", &node]);
        wait_released(&node);
        e
    };
    let dio = std::fs::read_to_string(format!("/sys/block/{name}/loop/dio")).unwrap_or_default();
    if dio.trim() != "1" {
        return Err(detach(DeviceError::NoDirectIo {
            device: node.clone(),
        }));
    }
    let cap = format!("/sys/block/{name}/queue/max_sectors_kb");
    if let Err(source) = std::fs::write(&cap, (MAX_WRITE / 1024).to_string()) {
        return Err(detach(DeviceError::Io {
            action: "cap the requests of",
            path: PathBuf::from(cap),
            source,
        }));
    }
    Ok(node)
}

/// Mounts filesystem `fs` of loop device `node` at `at` with `mount_options` (checked
/// against the allow-list again).
pub(super) fn mount_fs(
    fs: FsKind,
    node: &str,
    at: &Path,
    mount_options: &str,
) -> Result<(), DeviceError> {
    let mount_options = check_mount_options(fs, mount_options)?;
    let target = at.to_string_lossy().into_owned();
    let mut mount_args = vec!["-t", fs.as_str()];
    if !mount_options.is_empty() {
        mount_args.extend(["-o", mount_options.as_str()]);
    }
    mount_args.extend([node, target.as_str()]);
    run("mount", &mount_args).map(drop)
}

/// Unmounts `at`, retrying a busy mount for up to 5 s.
pub(super) fn unmount_retrying(at: &Path) -> Result<(), DeviceError> {
    let target = at.to_string_lossy().into_owned();
    let mut done = run("umount", &[&target]);
    for _ in 0..50 {
        if done.is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        done = run("umount", &[&target]);
    }
    done.map(drop)
}

/// Waits (up to 5 s) until loop device `node` has let go of its backing file: `losetup -d`
/// only asks, and a reader still holding the device (udev's probe of a new one) delays the
/// detach — the FUSE file it holds would keep the recording device busy.
pub fn wait_released(node: &str) {
    let name = node.trim_start_matches("/dev/");
    let backing = format!("/sys/block/{name}/loop/backing_file");
    for _ in 0..100 {
        if !Path::new(&backing).exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    log::warn!("{node} still holds its backing file after 5 s");
}

impl Drop for CrashDevice {
    fn drop(&mut self) {
        // Best effort on an error path: a lazy unmount, the loop detached, the daemon told
        // to unmount the FUSE file system and exit.
        if let Some(at) = self.mounted.take() {
            let _ = run("umount", &["-l", &at.to_string_lossy()]);
        }
        if let Some(node) = self.loop_device.take() {
            let _ = run("losetup", &["-d", &node]);
            wait_released(&node);
        }
        self.daemon.take();
    }
}

/// Runs mkfs, again (up to 5 times, a second apart) when it failed only because it could not
/// stat another loop device's backing file on a FUSE mount whose daemon is gone
/// (mkfs.btrfs checks every loop device's backing file for its mount-status check: "cannot
/// check mount status of /dev/loopN: Transport endpoint is not connected"). Such a leftover
/// of a killed crash test is removed by `clean` (or by the crash test that killed it, moments
/// later); it says nothing about the device being made.
fn run_mkfs(program: &str, args: &[&str]) -> Result<String, DeviceError> {
    let mut tries = 0;
    loop {
        match run(program, args) {
            Err(DeviceError::Tool { message, .. })
                if tries < 5 && message.contains("Transport endpoint is not connected") =>
            {
                tries += 1;
                log::warn!("{program}: {message}; trying again in a second");
                std::thread::sleep(std::time::Duration::from_secs(1));
            }
            other => return other,
        }
    }
}
