//! [`collect`]: everything recorded about where a run happens. Never fails: what cannot be
//! read stays `None` and, when it matters for reading the results, becomes a warning.

use std::os::fd::{AsFd, AsRawFd as _, BorrowedFd};
use std::path::{Path, PathBuf};

use crate::metrics::{RunWarning, Warning};

use super::{
    BlockStat, DeviceInfo, MountInfo, NoDevice, ProbeError, SystemInfo, device_for_mount,
    list_mounts, mount_for_device, mount_for_path,
};

/// The OS error number behind a probe error (none for a parse error).
pub fn probe_errno(error: &ProbeError) -> Option<i32> {
    match error {
        ProbeError::Read { source, .. } => source.raw_os_error(),
        ProbeError::Parse { .. } => None,
    }
}

/// Whether `fs_type` keeps its data in memory only, so fsync and fdatasync persist nothing.
pub fn is_memory_fs(fs_type: &str) -> bool {
    matches!(fs_type, "tmpfs" | "ramfs" | "hugetlbfs")
}

/// The machine facts sysinfo reads (CPU model and count, memory, operating system).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Machine {
    /// CPU model name (`model name` of /proc/cpuinfo on x86), when known.
    pub cpu_model: Option<String>,
    /// Logical CPUs online.
    pub cpu_count: u32,
    /// Total memory (`MemTotal`), bytes.
    pub memory_bytes: u64,
    /// Operating system name and version from os-release (`Linux (Debian GNU/Linux 13)`).
    pub os: Option<String>,
}

/// Reads the CPU model and count, total memory and operating system through sysinfo; what
/// cannot be read stays `None` (or 0).
pub fn machine() -> Machine {
    use sysinfo::{CpuRefreshKind, MemoryRefreshKind, System};
    let mut machine = Machine {
        os: System::long_os_version()
            .ok()
            .filter(|os| !os.trim().is_empty()),
        ..Machine::default()
    };
    let Ok(mut system) = System::new() else {
        return machine;
    };
    system.refresh_cpu_list(CpuRefreshKind::nothing());
    system.refresh_memory_specifics(MemoryRefreshKind::nothing().with_ram());
    machine.cpu_model = system
        .cpus()
        .iter()
        .map(|cpu| cpu.brand().trim())
        .find(|brand| !brand.is_empty())
        .map(str::to_string);
    machine.cpu_count = u32::try_from(system.cpus().len()).unwrap_or(u32::MAX);
    machine.memory_bytes = system.total_memory();
    machine
}

/// Reads the I/O counters of `device` (its `stat_path`).
pub fn read_blockstat(device: &DeviceInfo) -> Result<BlockStat, ProbeError> {
    crate::probe::read_block_stat(&device.stat_path)
}

/// The warning [`warnings_for`] gives a target on a memory filesystem (a front end that
/// shows its own, louder, notice leaves this one out).
pub fn memory_fs_warning(fs_type: &str) -> RunWarning {
    RunWarning::MemoryFilesystem {
        fs_type: fs_type.to_string(),
    }
}

/// Warnings that change how results on this mount and device read.
pub fn warnings_for(mount: &MountInfo, device: Option<&DeviceInfo>) -> Vec<RunWarning> {
    let mut warnings = Vec::new();
    if is_memory_fs(&mount.fs_type) {
        warnings.push(memory_fs_warning(&mount.fs_type));
    }
    if mount.has_option("nobarrier") || mount.has_option("barrier=0") {
        warnings.push(RunWarning::BarriersOff {
            mount_point: mount.mount_point.clone(),
        });
    }
    if let Some(device) = device
        && device.write_cache.as_deref() == Some("write through")
    {
        warnings.push(RunWarning::WriteThrough {
            device: device.name.clone(),
        });
    }
    warnings
}

/// Probes the machine, the mount and device under `target` and the kernel settings that
/// shape fsync. Never fails: unknown values stay `None`, and a missing mount or device is
/// explained in `device_note`.
pub fn collect(target: &Path) -> SystemInfo {
    with_kernel_settings(collect_where(target, None))
}

/// [`collect`] for a target directory held open (`dir`, reached as `target`): the mount
/// and device are found from the descriptor (`fstat`'s device; the path the kernel gives
/// the open directory), never by resolving `target` again, so a directory swapped on the
/// way after the target was opened cannot make the probe describe another device.
pub fn collect_held(dir: &impl AsFd, target: &Path) -> SystemInfo {
    with_kernel_settings(collect_where(target, Some(dir.as_fd())))
}

/// [`collect`] for a run on the bare block device `node` (no mount): the machine, the
/// device's [`DeviceInfo`] as the caller read it, the disk behind a loop device, and the
/// kernel settings.
pub fn collect_device(node: &Path, device: Option<DeviceInfo>) -> SystemInfo {
    let mut info = machine_part();
    info.target = node.to_path_buf();
    if device.is_none() {
        info.device_note = Some(NoDevice::Unknown.into());
    }
    info.device = device;
    add_backing(&mut info);
    with_kernel_settings(info)
}

fn with_kernel_settings(mut info: SystemInfo) -> SystemInfo {
    info.kernel_settings = Some(super::read_kernel_settings(
        info.kernel_release.as_deref(),
        info.device.as_ref(),
        info.backing_device.as_ref(),
    ));
    info
}

/// The path the kernel gives open directory `dir` now (its `/proc/self/fd` link).
fn held_path(dir: BorrowedFd<'_>) -> Option<PathBuf> {
    let link = format!("/proc/self/fd/{}", dir.as_raw_fd());
    let path = PathBuf::from(nix::fcntl::readlink(link.as_str()).ok()?);
    path.is_absolute().then_some(path)
}

/// The machine part of every probe: version, host, CPU, memory, OS, kernel.
fn machine_part() -> SystemInfo {
    let mut info = SystemInfo {
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        hostname: nix::unistd::gethostname()
            .ok()
            .map(|name| name.to_string_lossy().into_owned()),
        ..SystemInfo::default()
    };
    let machine = machine();
    info.cpu_model = machine.cpu_model;
    info.cpu_count = machine.cpu_count;
    info.memory_bytes = machine.memory_bytes;
    info.os = machine.os;
    if let Ok(uname) = nix::sys::utsname::uname() {
        info.kernel_release = Some(uname.release().to_string_lossy().into_owned());
        info.kernel_version = Some(uname.version().to_string_lossy().into_owned());
    }
    info
}

/// The machine, mount and device part of [`collect`] ([`collect_held`] with `held`).
fn collect_where(target: &Path, held: Option<BorrowedFd<'_>>) -> SystemInfo {
    let mut info = machine_part();
    let held_dev = held
        .and_then(|dir| nix::sys::stat::fstat(dir).ok())
        .map(|st| device_numbers(st.st_dev));
    let canonical = match held {
        Some(dir) => {
            held_path(dir).ok_or_else(|| std::io::Error::other("no path for the held directory"))
        }
        None => std::fs::canonicalize(target),
    };
    info.target = match canonical {
        Ok(canonical) => canonical,
        Err(error) => {
            info.warnings.push(
                RunWarning::TargetUnresolved {
                    target: target.to_path_buf(),
                    errno: error.raw_os_error(),
                }
                .into(),
            );
            absolute_or_given(target)
        }
    };
    let mounts = match list_mounts() {
        Ok(mounts) => mounts,
        Err(error) => {
            info.device_note = Some(
                NoDevice::NoMountTable {
                    errno: probe_errno(&error),
                }
                .into(),
            );
            return info;
        }
    };
    let mount = match held_dev {
        Some(dev) => mount_for_device(&mounts, dev, &info.target),
        None => mount_for_path(&mounts, &info.target),
    };
    let Some(mount) = mount.cloned() else {
        info.device_note = Some(
            NoDevice::NoMount {
                target: info.target.clone(),
            }
            .into(),
        );
        return info;
    };
    match device_for_mount(&mount) {
        Ok(device) => info.device = Some(device),
        Err(reason) => info.device_note = Some(reason.into()),
    }
    add_backing(&mut info);
    info.warnings.extend(
        warnings_for(&mount, info.device.as_ref())
            .into_iter()
            .map(Warning::from),
    );
    info.mount = Some(mount);
    info
}

/// A loop device's I/O ends on the disk holding its backing file: that disk is counted too.
fn add_backing(info: &mut SystemInfo) {
    if let Some(backing) = info
        .device
        .as_ref()
        .and_then(|d| d.loop_backing_file.clone())
    {
        match super::sysfs::device_holding_file(Path::new(backing.trim_end_matches(" (deleted)"))) {
            Ok(disk) => info.backing_device = Some(disk),
            Err(why) => info.warnings.push(
                RunWarning::BackingDiskNotCounted {
                    file: PathBuf::from(backing.trim_end_matches(" (deleted)")),
                    why: why.reason(),
                }
                .into(),
            ),
        }
    }
}

/// A `dev_t`'s major and minor numbers, as mountinfo shows them.
#[allow(clippy::useless_conversion)]
fn device_numbers(dev: libc::dev_t) -> (u32, u32) {
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    (u32::from(major), u32::from(minor))
}

fn absolute_or_given(target: &Path) -> PathBuf {
    std::path::absolute(target).unwrap_or_else(|_| target.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `key: value` of a /proc text whose key is `key`.
    fn proc_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
        text.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == key).then_some(v.trim())
        })
    }

    #[test]
    fn machine_facts_match_the_kernel_texts() {
        let m = machine();
        // The same facts the hand-written parsers read before sysinfo did: the first
        // `model name` of /proc/cpuinfo (x86), `MemTotal` of /proc/meminfo in bytes, the
        // number of `processor` entries.
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
        if let Some(model) = proc_value(&cpuinfo, "model name") {
            assert_eq!(m.cpu_model.as_deref(), Some(model));
        }
        let processors = cpuinfo
            .lines()
            .filter(|l| l.split(':').next().map(str::trim) == Some("processor"))
            .count();
        assert_eq!(m.cpu_count as usize, processors);
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
        let kib: u64 = proc_value(&meminfo, "MemTotal")
            .and_then(|v| v.strip_suffix(" kB"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap();
        assert_eq!(m.memory_bytes, kib * 1024);
        let os = m.os.expect("os-release names the system");
        assert!(os.starts_with("Linux"), "{os}");
    }

    #[test]
    fn memory_filesystems() {
        assert!(is_memory_fs("tmpfs") && is_memory_fs("ramfs") && is_memory_fs("hugetlbfs"));
        assert!(!is_memory_fs("ext4") && !is_memory_fs("btrfs") && !is_memory_fs("devtmpfs"));
    }

    #[test]
    fn warnings_cover_tmpfs_nobarrier_and_write_through() {
        let tmpfs = MountInfo {
            fs_type: "tmpfs".into(),
            mount_options: "rw,relatime".into(),
            ..MountInfo::default()
        };
        assert_eq!(
            warnings_for(&tmpfs, None),
            [RunWarning::MemoryFilesystem {
                fs_type: "tmpfs".into()
            }]
        );
        let ext4 = MountInfo {
            fs_type: "ext4".into(),
            mount_point: "/mnt/x".into(),
            super_options: "rw,nobarrier".into(),
            ..MountInfo::default()
        };
        let device = DeviceInfo {
            name: "loop0".into(),
            write_cache: Some("write through".into()),
            ..DeviceInfo::default()
        };
        let warnings = warnings_for(&ext4, Some(&device));
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert_eq!(
            warnings,
            [
                RunWarning::BarriersOff {
                    mount_point: "/mnt/x".into()
                },
                RunWarning::WriteThrough {
                    device: "loop0".into()
                }
            ]
        );
        let safe = MountInfo {
            fs_type: "xfs".into(),
            ..MountInfo::default()
        };
        let write_back = DeviceInfo {
            write_cache: Some("write back".into()),
            ..DeviceInfo::default()
        };
        assert!(warnings_for(&safe, Some(&write_back)).is_empty());
    }

    #[test]
    fn collect_on_this_machine() {
        let info = collect(Path::new("/tmp"));
        assert_eq!(info.tool_version, env!("CARGO_PKG_VERSION"));
        assert!(
            info.kernel_release
                .as_deref()
                .is_some_and(|r| !r.is_empty())
        );
        assert!(info.cpu_count >= 1);
        assert!(info.memory_bytes > 0);
        assert_eq!(info.os, machine().os);
        assert!(info.target.is_absolute());
        let mount = info.mount.as_ref().expect("/tmp is on some mount");
        assert!(info.target.starts_with(&mount.mount_point));
        // Either a device, or a reason why there is none.
        assert!(
            info.device.is_some() != info.device_note.is_some(),
            "{info:?}"
        );
        if is_memory_fs(&mount.fs_type) {
            assert!(
                info.warnings
                    .iter()
                    .any(|w| w.code() == "memory_filesystem")
            );
        }
        if let Some(device) = &info.device {
            let stat = read_blockstat(device).expect("device counters readable");
            assert!(stat.write_ios > 0 || stat.read_ios > 0);
        }
        // The info is what runs store: it must round-trip through JSON.
        let json = serde_json::to_string(&info).expect("serialize");
        let back: SystemInfo = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back, info);
    }

    #[test]
    fn collect_on_dev_shm_warns_about_tmpfs() {
        let shm = Path::new("/dev/shm");
        if !shm.is_dir() {
            eprintln!("skipped: /dev/shm does not exist here");
            return;
        }
        let info = collect(shm);
        let mount = info.mount.as_ref().expect("mount");
        if mount.fs_type != "tmpfs" {
            eprintln!("skipped: /dev/shm is {} here", mount.fs_type);
            return;
        }
        assert_eq!(info.device, None);
        assert!(
            matches!(
                info.device_note.as_ref().and_then(|n| n.typed()),
                Some(NoDevice::Anonymous { fs_type, .. }) if fs_type == "tmpfs"
            ),
            "{:?}",
            info.device_note
        );
        assert_eq!(
            info.warnings[0],
            Warning::from(RunWarning::MemoryFilesystem {
                fs_type: "tmpfs".into()
            })
        );
    }

    #[test]
    fn collect_never_fails_on_a_missing_target() {
        let info = collect(Path::new("/nonexistent/fsynclab/target"));
        assert_eq!(
            info.warnings[0],
            Warning::from(RunWarning::TargetUnresolved {
                target: "/nonexistent/fsynclab/target".into(),
                errno: Some(libc::ENOENT)
            }),
            "{info:?}"
        );
        assert_eq!(info.target, PathBuf::from("/nonexistent/fsynclab/target"));
        assert!(info.mount.is_some(), "falls back to the root mount");
    }
}
