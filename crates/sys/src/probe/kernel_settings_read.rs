//! Thin readers for [`KernelSettings`]: each opens one `/proc`, `/sys` or `/boot` file and
//! hands its text to a pure parser. The roots are passed in so tests feed fixture trees.

use std::io::{BufRead as _, Read as _};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::DeviceInfo;
use super::sysfs::read_attribute;
use super::virt::{VirtSigns, cpuid_hypervisor_signature, detect_virtualization};
use crate::sysinfo::kernel_settings::{
    DirtySettings, KernelConfig, KernelSettings, QueueSettings, cmdline_preempt, hz_from_ticks,
    is_preempt_model_line, parse_kernel_config, parse_number_text, parse_preempt_debugfs,
    parse_timer_list, summarize_governors,
};

/// A decompressed kernel config is ~150 KB; anything past this is not one.
const MAX_CONFIG_BYTES: u64 = 8 << 20;

/// How long HZ is measured for when no kernel config says it: long enough that one tick
/// missed at either end stays within the snapping tolerance of `hz_from_ticks` at 100 Hz.
pub const HZ_MEASURE_INTERVAL: Duration = Duration::from_millis(50);

/// Where the reader looks; `KernelRoots::system()` is the running machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelRoots {
    /// procfs (`/proc`).
    pub proc: PathBuf,
    /// sysfs (`/sys`).
    pub sysfs: PathBuf,
    /// Where `config-<release>` files live (`/boot`).
    pub boot: PathBuf,
    /// debugfs (`/sys/kernel/debug`); read only when already mounted, never mounted here.
    pub debugfs: PathBuf,
    /// Whether this is the running machine: only then is HZ measured from the tick when no
    /// config says it, and the CPU asked for its hypervisor signature.
    pub live: bool,
}

impl KernelRoots {
    /// The running machine's `/proc`, `/sys`, `/boot` and `/sys/kernel/debug`.
    pub fn system() -> Self {
        KernelRoots {
            proc: "/proc".into(),
            sysfs: "/sys".into(),
            boot: "/boot".into(),
            debugfs: "/sys/kernel/debug".into(),
            live: true,
        }
    }
}

/// Reads the kernel settings of the running machine for a target on `device` (and, for a
/// loop device, `backing`). Never fails: what cannot be read stays `None`.
pub fn read_kernel_settings(
    release: Option<&str>,
    device: Option<&DeviceInfo>,
    backing: Option<&DeviceInfo>,
) -> KernelSettings {
    read_kernel_settings_in(&KernelRoots::system(), release, device, backing)
}

/// [`read_kernel_settings`] under `roots` (fixture trees in tests).
pub fn read_kernel_settings_in(
    roots: &KernelRoots,
    release: Option<&str>,
    device: Option<&DeviceInfo>,
    backing: Option<&DeviceInfo>,
) -> KernelSettings {
    let started = Instant::now();
    let cmdline = read_attribute(&roots.proc, "cmdline");
    let (config, config_source) = read_config(roots, release).unwrap_or_default();
    let mut settings = KernelSettings {
        hz: config.hz,
        hz_source: config.hz.map(|_| config_source.clone()),
        preempt_dynamic: (!config_source.is_empty()).then_some(config.preempt_dynamic),
        vm: read_dirty(&roots.proc.join("sys/vm")),
        queue: device.map(read_queue),
        backing_queue: backing.map(read_queue),
        cpufreq_governor: read_governors(&roots.sysfs.join("devices/system/cpu/cpufreq")),
        virtualization: detect_virtualization(&read_virt_signs(roots)),
        ..KernelSettings::default()
    };
    if settings.hz.is_none() && roots.live {
        settings.hz = measure_hz(&roots.proc.join("timer_list"));
        settings.hz_source = settings.hz.map(|_| {
            format!(
                "measured (jiffies over {} ms)",
                HZ_MEASURE_INTERVAL.as_millis()
            )
        });
    }
    (settings.preempt, settings.preempt_source) = preempt_model(
        &config,
        cmdline.as_deref(),
        read_attribute(&roots.debugfs, "sched/preempt").as_deref(),
    );
    settings.cmdline = cmdline;
    settings.probe_us = Some(u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX));
    settings
}

/// The model in effect and where it came from: an RT build is `rt`; debugfs names the
/// running model; a dynamic kernel takes `preempt=` from its command line; otherwise the
/// build's choice.
pub fn preempt_model(
    config: &KernelConfig,
    cmdline: Option<&str>,
    debugfs: Option<&str>,
) -> (Option<String>, Option<String>) {
    if config.preempt.as_deref() == Some("rt") {
        return (
            config.preempt.clone(),
            Some("kernel config (PREEMPT_RT)".into()),
        );
    }
    if let Some(model) = debugfs.and_then(parse_preempt_debugfs) {
        return (Some(model), Some("debugfs sched/preempt".into()));
    }
    if config.preempt_dynamic
        && let Some(model) = cmdline.and_then(cmdline_preempt)
    {
        return (Some(model), Some("preempt= on the command line".into()));
    }
    let source = if config.preempt_dynamic {
        "default of a dynamic kernel's config"
    } else {
        "kernel config"
    };
    let model = config.preempt.clone();
    let source = model.as_ref().map(|_| source.to_string());
    (model, source)
}

/// The running kernel's config, read once per process: it cannot change without a reboot.
static LIVE_CONFIG: OnceLock<Option<(KernelConfig, String)>> = OnceLock::new();

/// The kernel config from `/proc/config.gz` or `/boot/config-<release>`, with its source.
fn read_config(roots: &KernelRoots, release: Option<&str>) -> Option<(KernelConfig, String)> {
    // Only the real /proc and /boot are the running kernel's (a test may point a live
    // reader at another tree).
    let system = KernelRoots::system();
    if roots.live && roots.proc == system.proc && roots.boot == system.boot {
        return LIVE_CONFIG
            .get_or_init(|| read_config_uncached(roots, release))
            .clone();
    }
    read_config_uncached(roots, release)
}

fn read_config_uncached(
    roots: &KernelRoots,
    release: Option<&str>,
) -> Option<(KernelConfig, String)> {
    let gz = roots.proc.join("config.gz");
    if let Some(text) = std::fs::File::open(&gz)
        .ok()
        .and_then(|f| inflate_config_prefix(f).ok())
    {
        return Some((parse_kernel_config(&text), "/proc/config.gz".into()));
    }
    // The release names a file: refuse one that could leave /boot.
    let release = release.filter(|r| !r.is_empty() && !r.contains('/') && *r != "..")?;
    let path = roots.boot.join(format!("config-{release}"));
    let mut text = Vec::new();
    std::fs::File::open(&path)
        .ok()?
        .take(MAX_CONFIG_BYTES)
        .read_to_end(&mut text)
        .ok()?;
    Some((
        parse_kernel_config(&String::from_utf8_lossy(&text)),
        format!("/boot/config-{release}"),
    ))
}

/// A gzip stream as text, at most [`MAX_CONFIG_BYTES`] of it.
pub fn inflate(reader: impl std::io::Read) -> std::io::Result<String> {
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(reader)
        .take(MAX_CONFIG_BYTES)
        .read_to_end(&mut text)?;
    Ok(String::from_utf8_lossy(&text).into_owned())
}

/// The start of a gzipped kernel config, up to its `CONFIG_HZ=` line once the preemption
/// model has been chosen (about an eighth of the file on x86; decompressing and parsing the
/// rest would cost several times more), or the whole of it (at most
/// [`MAX_CONFIG_BYTES`]) when it is not ordered that way.
pub fn inflate_config_prefix(reader: impl std::io::Read) -> std::io::Result<String> {
    let mut lines =
        std::io::BufReader::new(flate2::read::GzDecoder::new(reader).take(MAX_CONFIG_BYTES));
    let mut text = String::new();
    let mut model_seen = false;
    loop {
        let start = text.len();
        if lines.read_line(&mut text)? == 0 {
            return Ok(text);
        }
        let line = &text[start..];
        model_seen |= is_preempt_model_line(line);
        if model_seen && line.starts_with("CONFIG_HZ=") {
            return Ok(text);
        }
    }
}

/// Two readings of `/proc/timer_list` (root only) [`HZ_MEASURE_INTERVAL`] apart.
fn measure_hz(timer_list: &Path) -> Option<u32> {
    let read = || {
        std::fs::read_to_string(timer_list)
            .ok()
            .and_then(|t| parse_timer_list(&t))
    };
    let first = read()?;
    std::thread::sleep(HZ_MEASURE_INTERVAL);
    hz_from_ticks(first, read()?)
}

fn read_dirty(vm: &Path) -> DirtySettings {
    let number = |name: &str| read_attribute(vm, name).and_then(|t| parse_number_text(&t));
    DirtySettings {
        dirty_ratio: number("dirty_ratio"),
        dirty_background_ratio: number("dirty_background_ratio"),
        dirty_bytes: number("dirty_bytes"),
        dirty_background_bytes: number("dirty_background_bytes"),
        dirty_expire_centisecs: number("dirty_expire_centisecs"),
        dirty_writeback_centisecs: number("dirty_writeback_centisecs"),
    }
}

/// The queue beside the device's `stat` file (`/sys/block/<name>/queue`).
fn read_queue(device: &DeviceInfo) -> QueueSettings {
    let queue = device
        .stat_path
        .parent()
        .map(|disk| disk.join("queue"))
        .unwrap_or_default();
    let number = |name: &str| read_attribute(&queue, name).and_then(|t| parse_number_text(&t));
    QueueSettings {
        device: device.name.clone(),
        wbt_lat_usec: number("wbt_lat_usec"),
        nr_requests: number("nr_requests"),
        max_sectors_kb: number("max_sectors_kb"),
        rq_affinity: number("rq_affinity"),
    }
}

/// The governors of `cpufreq/policy*/scaling_governor`.
fn read_governors(cpufreq: &Path) -> Option<String> {
    let governors: Vec<String> = std::fs::read_dir(cpufreq)
        .ok()?
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("policy"))
        .filter_map(|entry| read_attribute(&entry.path(), "scaling_governor"))
        .collect();
    summarize_governors(governors.iter().map(String::as_str))
}

fn read_virt_signs(roots: &KernelRoots) -> VirtSigns {
    let dmi = roots.sysfs.join("class/dmi/id");
    VirtSigns {
        hypervisor_type: read_attribute(&roots.sysfs, "hypervisor/type"),
        cpuinfo: std::fs::read_to_string(roots.proc.join("cpuinfo")).ok(),
        cpuid_signature: roots.live.then(cpuid_hypervisor_signature).flatten(),
        dmi_sys_vendor: read_attribute(&dmi, "sys_vendor"),
        dmi_product_name: read_attribute(&dmi, "product_name"),
    }
}

#[cfg(test)]
#[path = "kernel_settings_tests.rs"]
mod tests;
