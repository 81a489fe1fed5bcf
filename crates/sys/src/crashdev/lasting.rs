//! A lasting crash-test filesystem (`fsynclab crash-fs`, issue 33): a recording device with a
//! filesystem on it that outlives the command that made it, so runs can be made on it
//! (`run --crash-check`) and each checked for power cuts within its own part of the log.
//!
//! Layout, in root's state directory: `crash-fs-<name>/` (0700) holding `info.json` (what it
//! was made with and its daemon's process), `daemon.log`, the recorder (`dev/`), its FUSE
//! mount (`mnt/`), the filesystem's mount point (`fs/`), the checker's throwaway images
//! (`work/`) and `lock` (held while a run is checked, and while it is destroyed). The daemon
//! serves in a session of its own until its FUSE mount is unmounted.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::daemon::DaemonProgram;
use super::device::{CrashDevice, attach_loop, mount_fs, unmount_retrying, wait_released};
use super::fs::{IMAGE_NAME, MARKS_NAME};
use super::tool::{DaemonField, DeviceError, run};
use crate::sysinfo::FsKind;

/// Smallest and largest recording device a crash test makes.
pub const DEVICE_SIZES: (u64, u64) = (64 << 20, 4 << 30);
/// The smallest filesystem XFS makes.
pub const XFS_MIN: u64 = 300 << 20;

/// The sizes a recording device for `fs` may have (bytes, inclusive).
pub fn device_sizes(fs: FsKind) -> (u64, u64) {
    let (min, max) = DEVICE_SIZES;
    (if fs == FsKind::Xfs { XFS_MIN } else { min }, max)
}

/// Whether a recording device of `size` bytes for `fs` is one a crash test makes: within
/// [`device_sizes`], a multiple of 4096.
pub fn size_fits(fs: FsKind, size: u64) -> bool {
    let (min, max) = device_sizes(fs);
    (min..=max).contains(&size) && size.is_multiple_of(4096)
}

/// What a lasting crash-test filesystem's directory name starts with.
pub const LASTING_PREFIX: &str = "crash-fs-";
/// Longest name.
pub const MAX_LASTING_NAME: usize = 32;
pub(super) const INFO_FILE: &str = "info.json";
const LOCK_FILE: &str = "lock";

/// What a lasting crash-test filesystem was made with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastingInfo {
    /// Its name.
    pub name: String,
    /// The filesystem.
    pub fs: FsKind,
    /// The recording device's size in bytes.
    pub size: u64,
    /// mkfs options (allow-listed).
    pub mkfs_options: String,
    /// Mount options (allow-listed; checked again at each mount).
    pub mount_options: String,
    /// The daemon serving its device.
    pub daemon_pid: u32,
}

/// A lasting crash-test filesystem and whether it is usable.
#[derive(Clone, Debug)]
pub struct LastingStatus {
    /// What it was made with.
    pub info: LastingInfo,
    /// Where its filesystem is mounted (when it is).
    pub mount_point: PathBuf,
    /// Its filesystem is mounted.
    pub mounted: bool,
    /// Another filesystem mounted at its mount point (`<fs type> from <source>`), if any.
    pub other_mount: Option<String>,
    /// Its daemon is alive.
    pub serving: bool,
    /// Bytes of its log and the data it carries.
    pub log_bytes: u64,
}

/// A lasting crash-test filesystem, opened.
#[derive(Debug)]
pub struct LastingDevice {
    dir: PathBuf,
    info: LastingInfo,
}

/// Refuses a name that is not `[a-z0-9_-]{1,32}`.
pub fn check_lasting_name(name: &str) -> Result<(), DeviceError> {
    let fine = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && name.len() <= MAX_LASTING_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if fine {
        return Ok(());
    }
    Err(DeviceError::Refused {
        field: DaemonField::Name,
        value: name.to_string(),
        why: format!(
            "use 1 to {MAX_LASTING_NAME} of a-z, 0-9, _ and -, starting with a letter or digit"
        ),
    })
}

/// Whether process `pid` is alive and is the daemon serving the device in `dir`.
pub(super) fn daemon_serves(pid: u32, dir: &Path) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    if pid <= 0 || !super::teardown::alive(pid) {
        return false;
    }
    // Root's: a process another user started with the same command line is not it.
    use std::os::unix::fs::MetadataExt;
    if !std::fs::metadata(format!("/proc/{pid}")).is_ok_and(|m| m.uid() == 0) {
        return false;
    }
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    let base = dir.as_os_str().as_encoded_bytes();
    words.contains(&super::DAEMON_COMMAND.as_bytes()) && words.contains(&base)
}

/// The mount at exactly `at`, if any (the last one there: the one visible).
fn mount_at(at: &Path) -> Option<crate::probe::MountInfo> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    crate::probe::parse_mountinfo(&text)
        .unwrap_or_default()
        .into_iter()
        .rfind(|m| Path::new(&m.mount_point) == at)
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> DeviceError + use<> {
    let path = path.to_path_buf();
    move |source| DeviceError::Io {
        action,
        path,
        source,
    }
}

impl LastingDevice {
    /// Makes lasting crash-test filesystem `name` in `state_dir`: a recording device of
    /// `size` bytes served by `program`, filesystem `fs` made with `mkfs_options` and mounted
    /// with `mount_options` (both allow-listed). Refused when the name is taken.
    pub fn create(
        program: &DaemonProgram,
        state_dir: &Path,
        name: &str,
        fs: FsKind,
        size: u64,
        (mkfs_options, mount_options): (&str, &str),
    ) -> Result<LastingDevice, DeviceError> {
        check_lasting_name(name)?;
        let state_dir = &super::checked_state_dir(state_dir)?;
        if !size_fits(fs, size) {
            let (min, max) = device_sizes(fs);
            return Err(DeviceError::Refused {
                field: DaemonField::Size,
                value: size.to_string(),
                why: format!("use a multiple of 4096 from {min} to {max}"),
            });
        }
        let dir = state_dir.join(format!("{LASTING_PREFIX}{name}"));
        if std::fs::symlink_metadata(&dir).is_ok() {
            return Err(DeviceError::Refused {
                field: DaemonField::Name,
                value: name.to_string(),
                why: "a crash-test filesystem of that name exists".into(),
            });
        }
        let options = (mkfs_options, mount_options);
        let made =
            CrashDevice::start_with(program, &dir, fs, size, options, true).and_then(|device| {
                let info = LastingInfo {
                    name: name.to_string(),
                    fs,
                    size,
                    mkfs_options: mkfs_options.to_string(),
                    mount_options: mount_options.to_string(),
                    daemon_pid: device.daemon_pid().unwrap_or(0),
                };
                let path = dir.join(INFO_FILE);
                let text = serde_json::to_string_pretty(&info).unwrap_or_default();
                std::fs::write(&path, text).map_err(io("write", &path))?;
                device.keep();
                Ok(info)
            });
        match made {
            Ok(info) => Ok(LastingDevice {
                dir: std::fs::canonicalize(&dir).unwrap_or(dir),
                info,
            }),
            Err(e) => {
                // The device was torn down as its handle went; what is left goes too.
                if std::fs::symlink_metadata(&dir).is_ok()
                    && let Err(more) = super::teardown::clean_dir(&dir)
                {
                    log::warn!("{more}");
                }
                Err(e)
            }
        }
    }

    /// Lasting crash-test filesystem `name` of `state_dir`.
    /// Refused unless the state directory is one root can trust, the device's directory and
    /// its `mnt/` and `fs/` are real directories of this user's, closed to others (never a
    /// link), and its `info.json` is one fsynclab wrote (its name, a size the daemon serves,
    /// options within the allow-list).
    pub fn open(state_dir: &Path, name: &str) -> Result<LastingDevice, DeviceError> {
        check_lasting_name(name)?;
        let state_dir = &super::checked_state_dir(state_dir)?;
        let dir = state_dir.join(format!("{LASTING_PREFIX}{name}"));
        let refused = |why: String| DeviceError::Refused {
            field: DaemonField::Name,
            value: name.to_string(),
            why,
        };
        let meta = std::fs::symlink_metadata(&dir)
            .map_err(|_| refused("no crash-test filesystem of that name".into()))?;
        if !meta.is_dir() {
            return Err(refused("not a directory fsynclab made".into()));
        }
        // Its directory closes everything in it to others; `mnt/` and `fs/` are real
        // directories (what is mounted there shows its own owner and mode).
        let own = std::fs::symlink_metadata(&dir).is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            m.uid() == nix::unistd::geteuid().as_raw() && m.mode() & 0o077 == 0
        });
        if !own {
            return Err(refused(format!(
                "{} is not a directory fsynclab made (this user's, mode 0700)",
                dir.display()
            )));
        }
        for sub in [dir.join("mnt"), dir.join("fs")] {
            // A dead daemon's mount answers ENOTCONN (and what is on it, EIO).
            let dir_or_dead = match std::fs::symlink_metadata(&sub) {
                Ok(m) => m.is_dir(),
                Err(e) => matches!(e.raw_os_error(), Some(libc::ENOTCONN | libc::EIO)),
            };
            if !dir_or_dead {
                return Err(refused(format!("{} is not a directory", sub.display())));
            }
        }
        // As its daemon names it.
        let dir = std::fs::canonicalize(&dir).map_err(io("resolve", &dir))?;
        let path = dir.join(INFO_FILE);
        let text = std::fs::read_to_string(&path).map_err(io("read", &path))?;
        let info: LastingInfo = serde_json::from_str(&text)
            .ok()
            .filter(|i: &LastingInfo| {
                i.name == name
                    && size_fits(i.fs, i.size)
                    && crate::fsopts::check_mkfs_options(i.fs, &i.mkfs_options).is_ok()
                    && crate::fsopts::check_mount_options(i.fs, &i.mount_options).is_ok()
            })
            .ok_or_else(|| refused(format!("{} is not one fsynclab wrote", path.display())))?;
        Ok(LastingDevice { dir, info })
    }

    /// The lasting crash-test filesystem whose filesystem holds `path` (resolved through its
    /// nearest existing ancestor: while the filesystem is unmounted its directories are not
    /// there), if any.
    pub fn find(state_dir: &Path, path: &Path) -> Option<LastingDevice> {
        let existing = path.ancestors().find(|a| a.exists())?;
        let rest = path.strip_prefix(existing).ok()?;
        if rest
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return None;
        }
        let path = std::fs::canonicalize(existing).ok()?.join(rest);
        let state = std::fs::canonicalize(state_dir).ok()?;
        let rest = path.strip_prefix(&state).ok()?;
        let first = rest.components().next()?.as_os_str().to_str()?;
        let name = first.strip_prefix(LASTING_PREFIX)?;
        let device = LastingDevice::open(&state, name).ok()?;
        path.starts_with(device.mount_point()).then_some(device)
    }

    /// Every lasting crash-test filesystem of `state_dir`, by name, and (name, why) for each
    /// directory of one that cannot be opened (damaged: `destroy` removes it).
    #[allow(clippy::type_complexity)]
    pub fn list(
        state_dir: &Path,
    ) -> Result<(Vec<LastingStatus>, Vec<(String, String)>), DeviceError> {
        let state_dir = &super::checked_state_dir(state_dir)?;
        let Ok(entries) = std::fs::read_dir(state_dir) else {
            return Ok((Vec::new(), Vec::new()));
        };
        let mut damaged = Vec::new();
        let mut out: Vec<LastingStatus> = entries
            .flatten()
            .filter_map(|e| {
                let name = e
                    .file_name()
                    .to_str()?
                    .strip_prefix(LASTING_PREFIX)?
                    .to_owned();
                let device = match LastingDevice::open(state_dir, &name) {
                    Ok(device) => device,
                    Err(e) => {
                        damaged.push((name, e.to_string()));
                        return None;
                    }
                };
                let dev = device.dev_dir();
                let bytes = |f: &str| std::fs::metadata(dev.join(f)).map_or(0, |m| m.len());
                Some(LastingStatus {
                    mount_point: device.mount_point(),
                    mounted: device.is_mounted(),
                    other_mount: (!device.is_mounted())
                        .then(|| mount_at(&device.mount_point()))
                        .flatten()
                        .map(|m| format!("{} from {}", m.fs_type, m.source)),
                    serving: device.serving(),
                    log_bytes: bytes(super::LOG_FILE) + bytes(super::DATA_FILE),
                    info: device.info,
                })
            })
            .collect();
        out.sort_by(|a, b| a.info.name.cmp(&b.info.name));
        damaged.sort();
        Ok((out, damaged))
    }

    /// Removes lasting crash-test filesystem `name`: its filesystem, loop device, recording
    /// device (its connection ended) and directory. What was done, one line each.
    /// One that `create` left half-made (no `info.json`) is removed too.
    pub fn destroy(state_dir: &Path, name: &str) -> Result<Vec<String>, DeviceError> {
        check_lasting_name(name)?;
        let state_dir = &super::checked_state_dir(state_dir)?;
        let dir = state_dir.join(format!("{LASTING_PREFIX}{name}"));
        if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            return Err(DeviceError::Refused {
                field: DaemonField::Name,
                value: name.to_string(),
                why: "no crash-test filesystem of that name".into(),
            });
        }
        let device = LastingDevice {
            dir,
            info: LastingInfo {
                name: name.to_string(),
                fs: FsKind::Ext4,
                size: 0,
                mkfs_options: String::new(),
                mount_options: String::new(),
                daemon_pid: 0,
            },
        };
        let _lock = device.lock()?;
        let mut done = Vec::new();
        // A device still served is taken down in order (its filesystem written out, the
        // daemon ending as its mount goes); whatever that leaves, or a dead daemon's
        // leftovers, go the way a killed crash test's do (its connection aborted first).
        if let Ok(opened) = LastingDevice::open(state_dir, name)
            && opened.serving()
            && let Ok(lines) = opened.suspend()
        {
            done.extend(lines);
            // Only the FUSE mount fsynclab made there (mountinfo names it; a link at `mnt`
            // is never followed).
            let mnt = opened.dir.join("mnt");
            let ours = mount_at(&mnt).is_some_and(|m| m.fs_type == "fuse");
            if ours && run("umount", &[&mnt.to_string_lossy()]).is_ok() {
                done.push(format!("unmounted {}", mnt.display()));
                let pid = opened.info.daemon_pid as i32;
                for _ in 0..100 {
                    if !super::teardown::alive(pid) {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
            }
        }
        done.extend(super::teardown::clean_dir(&device.dir)?);
        Ok(done)
    }

    /// What it was made with.
    pub fn info(&self) -> &LastingInfo {
        &self.info
    }

    /// Its directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where its filesystem is mounted: runs' target.
    pub fn mount_point(&self) -> PathBuf {
        self.dir.join("fs")
    }

    /// The recorder's directory (its log).
    pub fn dev_dir(&self) -> PathBuf {
        self.dir.join("dev")
    }

    /// Where the checker builds its throwaway images.
    pub fn work_dir(&self) -> PathBuf {
        self.dir.join("work")
    }

    /// The marks file, opened for writing (a run's acknowledgements).
    pub fn marks(&self) -> std::io::Result<std::fs::File> {
        std::fs::OpenOptions::new()
            .write(true)
            .open(self.dir.join("mnt").join(MARKS_NAME))
    }

    /// Holds the device for one run and its check (or its destruction): refused while
    /// another holds it.
    pub fn lock(&self) -> Result<nix::fcntl::Flock<std::fs::File>, DeviceError> {
        use nix::fcntl::{Flock, FlockArg};
        let path = self.dir.join(LOCK_FILE);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io("open", &path))?;
        Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|_| DeviceError::InUse {
            name: self.info.name.clone(),
        })
    }

    /// Whether its daemon still serves the device: the process `info.json` names is alive
    /// and is this device's daemon (a process id can be reused, after a reboot say).
    pub fn serving(&self) -> bool {
        daemon_serves(self.info.daemon_pid, &self.dir)
    }

    /// Unmounts its filesystem and detaches its loop device (the recording device goes on
    /// serving): the log then holds everything the filesystem wrote, and a crash state — a
    /// copy of the same filesystem, its UUID the same — can be mounted beside nothing.
    /// What was done, one line each.
    pub fn suspend(&self) -> Result<Vec<String>, DeviceError> {
        let mut done = Vec::new();
        let at = self.mount_point();
        if mount_at(&at).is_some() {
            unmount_retrying(&at)?;
            done.push(format!("unmounted {}", at.display()));
        }
        let image = self.dir.join("mnt").join(IMAGE_NAME);
        for lo in crate::scratch::list_loop_devices() {
            if lo.backing_file == image {
                let node = lo.node();
                run("losetup", &["-d", &node])?;
                wait_released(&node);
                done.push(format!("detached {node}"));
            }
        }
        Ok(done)
    }

    /// Whether its filesystem is mounted at its mount point from a loop device over its
    /// recording device.
    pub fn is_mounted(&self) -> bool {
        let image = self.dir.join("mnt").join(IMAGE_NAME);
        mount_at(&self.mount_point()).is_some_and(|m| {
            crate::scratch::list_loop_devices().iter().any(|lo| {
                // btrfs shows an anonymous major:minor; its source names the loop device.
                lo.backing_file == image
                    && (lo.dev == Some((m.major, m.minor)) || m.source == lo.node())
            })
        })
    }

    /// Makes it ready for a run after whatever happened to it while it served: a check that
    /// was killed leaves its state's mount and loop device in `work/` (removed here) and the
    /// filesystem unmounted (mounted again). Refused when something else is mounted at its
    /// mount point. What was done, one line each.
    pub fn recover(&self) -> Result<Vec<String>, DeviceError> {
        let mut done = Vec::new();
        let work = self.work_dir();
        if std::fs::symlink_metadata(&work).is_ok() {
            done.extend(super::teardown::clear_dir(&work)?);
        }
        if self.is_mounted() {
            return Ok(done);
        }
        if let Some(other) = mount_at(&self.mount_point()) {
            return Err(DeviceError::Tool {
                command: format!("mount at {}", self.mount_point().display()),
                message: format!("{} from {} is mounted there", other.fs_type, other.source),
            });
        }
        // A loop device left over the recording device (a check killed between its detach
        // and its mount) goes first.
        done.extend(self.suspend()?);
        self.resume()?;
        done.push(format!("mounted {} again", self.mount_point().display()));
        Ok(done)
    }

    /// Attaches a loop device over the recording device again and mounts the filesystem
    /// (after [`LastingDevice::suspend`]).
    pub fn resume(&self) -> Result<(), DeviceError> {
        let node = attach_loop(&self.dir.join("mnt").join(IMAGE_NAME))?;
        let at = self.mount_point();
        mount_fs(self.info.fs, &node, &at, &self.info.mount_options).inspect_err(|_| {
            let _ = run("losetup", &["-d", &node]);
            wait_released(&node);
        })
    }
}
