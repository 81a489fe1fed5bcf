//! The kernel settings that shape fsync latency, recorded with every run (root or not): the
//! tick rate (seed 000's sleep is one jiffy), the preemption model, the command line, the
//! dirty-page writeback sysctls, the target queue's limits, the CPU frequency governor and
//! whether the machine is virtual. Pure parsers here; the thin readers are in
//! `kernel_settings_read`.

use serde::{Deserialize, Serialize};

/// The kernel settings recorded with a run (`runs.system_json` → `kernel_settings`).
/// Every field is `None` when it could not be read; runs stored before these were recorded
/// have no `kernel_settings` at all.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct KernelSettings {
    /// Timer ticks per second (`CONFIG_HZ`): one jiffy is `1/hz` s.
    pub hz: Option<u32>,
    /// Where `hz` came from: `/proc/config.gz`, `/boot/config-<release>` or
    /// `measured (jiffies over N ms)`.
    pub hz_source: Option<String>,
    /// The preemption model in effect: `none`, `voluntary`, `full`, `lazy` or `rt`.
    pub preempt: Option<String>,
    /// Where `preempt` came from: `debugfs sched/preempt`, `preempt= on the command line`,
    /// `kernel config` (the build's default).
    pub preempt_source: Option<String>,
    /// Whether the kernel can switch models at boot or run time (`CONFIG_PREEMPT_DYNAMIC`).
    pub preempt_dynamic: Option<bool>,
    /// `/proc/cmdline`, trimmed.
    pub cmdline: Option<String>,
    /// The dirty-page writeback sysctls (`/proc/sys/vm/dirty_*`).
    pub vm: DirtySettings,
    /// The target device's request queue (the loop device for a loop-backed target).
    pub queue: Option<QueueSettings>,
    /// For a loop device: the queue of the disk holding its backing file.
    pub backing_queue: Option<QueueSettings>,
    /// The CPU frequency governor (`scaling_governor` of every cpufreq policy; distinct
    /// values joined with `, `); `None` when the kernel exposes no cpufreq (common in VMs).
    pub cpufreq_governor: Option<String>,
    /// Whether the machine is a virtual one, and which hypervisor.
    pub virtualization: Virtualization,
    /// How long reading all of this took, µs.
    pub probe_us: Option<u64>,
}

/// `/proc/sys/vm/dirty_*`: when dirty pages are written back (Documentation/admin-guide/
/// sysctl/vm.rst).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DirtySettings {
    /// `vm.dirty_ratio` (% of available memory; 0 when `dirty_bytes` is set).
    pub dirty_ratio: Option<u64>,
    /// `vm.dirty_background_ratio` (%).
    pub dirty_background_ratio: Option<u64>,
    /// `vm.dirty_bytes` (0 when the ratio applies).
    pub dirty_bytes: Option<u64>,
    /// `vm.dirty_background_bytes`.
    pub dirty_background_bytes: Option<u64>,
    /// `vm.dirty_expire_centisecs`: age at which dirty data is written out.
    pub dirty_expire_centisecs: Option<u64>,
    /// `vm.dirty_writeback_centisecs`: flusher wake-up period.
    pub dirty_writeback_centisecs: Option<u64>,
}

/// `/sys/block/<device>/queue/...` limits that change how syncs reach the device.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct QueueSettings {
    /// The device (`vda`, `loop3`).
    pub device: String,
    /// `wbt_lat_usec`: writeback throttling target latency, µs (0 = off).
    pub wbt_lat_usec: Option<u64>,
    /// `nr_requests`: requests the queue holds.
    pub nr_requests: Option<u64>,
    /// `max_sectors_kb`: largest request, KiB.
    pub max_sectors_kb: Option<u64>,
    /// `rq_affinity`: 0, 1 (complete on the submitting CPU's group) or 2 (on that CPU).
    pub rq_affinity: Option<u64>,
}

/// Whether the machine is a virtual one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Virtualization {
    /// `Some(true)` virtual, `Some(false)` no sign of a hypervisor, `None` unknown.
    pub is_virtual: Option<bool>,
    /// The hypervisor when one names itself (`KVM`, `Xen`, `VMware`, `Hyper-V`...).
    pub hypervisor: Option<String>,
    /// What said so: `cpuinfo flag hypervisor`, `cpuid KVMKVMKVM`, `/sys/hypervisor/type xen`,
    /// `DMI QEMU / Standard PC (Q35 + ICH9, 2009)`.
    pub evidence: Vec<String>,
}

/// What a kernel config says about the settings recorded here.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelConfig {
    /// `CONFIG_HZ`.
    pub hz: Option<u32>,
    /// The build's preemption model (`none`, `voluntary`, `full`, `lazy`, `rt`).
    pub preempt: Option<String>,
    /// `CONFIG_PREEMPT_DYNAMIC=y`.
    pub preempt_dynamic: bool,
}

/// The models `preempt=` and debugfs `sched/preempt` name (kernel/sched/core.c).
const PREEMPT_MODELS: &[&str] = &["none", "voluntary", "full", "lazy"];

/// Parses the text of a kernel config (`/proc/config.gz` decompressed, `/boot/config-*`).
pub fn parse_kernel_config(text: &str) -> KernelConfig {
    let mut config = KernelConfig::default();
    let mut chosen: Option<&str> = None;
    let mut rt = false;
    for line in text.lines() {
        let Some((key, value)) = line.trim().split_once('=') else {
            continue;
        };
        let yes = value == "y";
        match key {
            "CONFIG_HZ" => config.hz = value.parse().ok().filter(|hz| *hz > 0),
            "CONFIG_PREEMPT_RT" => rt = yes,
            "CONFIG_PREEMPT_DYNAMIC" => config.preempt_dynamic = yes,
            "CONFIG_PREEMPT_NONE" if yes => chosen = Some("none"),
            "CONFIG_PREEMPT_VOLUNTARY" if yes => chosen = Some("voluntary"),
            "CONFIG_PREEMPT" if yes => chosen = Some("full"),
            "CONFIG_PREEMPT_LAZY" if yes => chosen = Some("lazy"),
            _ => {}
        }
    }
    config.preempt = if rt {
        Some("rt".into())
    } else {
        chosen.map(str::to_string)
    };
    config
}

/// Whether a config line chooses the preemption model (`CONFIG_PREEMPT_NONE=y`...): the
/// reader stops at `CONFIG_HZ=` only after one, since the whole preemption block
/// (kernel/Kconfig.preempt: the model, `PREEMPT_RT`, `PREEMPT_DYNAMIC`) is written together.
pub fn is_preempt_model_line(line: &str) -> bool {
    let line = line.trim_end();
    [
        "CONFIG_PREEMPT_NONE=y",
        "CONFIG_PREEMPT_VOLUNTARY=y",
        "CONFIG_PREEMPT=y",
        "CONFIG_PREEMPT_LAZY=y",
        "CONFIG_PREEMPT_RT=y",
    ]
    .contains(&line)
}

/// The active model of debugfs `sched/preempt` (`none voluntary (full) lazy` → `full`).
pub fn parse_preempt_debugfs(text: &str) -> Option<String> {
    text.split_whitespace()
        .find_map(|entry| entry.strip_prefix('(')?.strip_suffix(')'))
        .filter(|model| PREEMPT_MODELS.contains(model))
        .map(str::to_string)
}

/// The `preempt=` model a command line asks for, when it is one the kernel knows.
pub fn cmdline_preempt(cmdline: &str) -> Option<String> {
    // Arguments after a lone `--` go to init, not the kernel.
    cmdline
        .split_whitespace()
        .take_while(|token| *token != "--")
        .filter_map(|token| token.strip_prefix("preempt="))
        .last()
        .filter(|model| PREEMPT_MODELS.contains(model))
        .map(str::to_string)
}

/// `now at N nsecs` and the first `jiffies: N` of a `/proc/timer_list` text.
pub fn parse_timer_list(text: &str) -> Option<(u64, u64)> {
    let mut now_ns = None;
    let mut jiffies = None;
    for line in text.lines() {
        if now_ns.is_none()
            && let Some(rest) = line.strip_prefix("now at ")
        {
            now_ns = rest.strip_suffix(" nsecs")?.trim().parse().ok();
        } else if jiffies.is_none()
            && let Some(rest) = line.strip_prefix("jiffies:")
        {
            jiffies = rest.trim().parse().ok();
        }
        if now_ns.is_some() && jiffies.is_some() {
            break;
        }
    }
    Some((now_ns?, jiffies?))
}

/// The tick rates to snap a measurement to: kernel/Kconfig.hz's 100/250/300/1000 (every
/// x86 kernel) and arm's 200 and 500. Rarer rates (mips' 256, alpha's 1024) sit within 3 %
/// of these and a 50 ms measurement cannot tell them apart; they come from the config.
const KNOWN_HZ: &[u32] = &[100, 200, 250, 300, 500, 1000];

/// The tick rate from two `(now_ns, jiffies)` readings of `/proc/timer_list`: jiffies per
/// second, snapped to the nearest rate of [`KNOWN_HZ`] when within 25 Hz or 8 % of it (one
/// tick missed at either end of a 50 ms interval is 20 Hz). `None` when the readings cannot
/// say (no time passed, or fewer than 4 ticks counted).
pub fn hz_from_ticks(first: (u64, u64), second: (u64, u64)) -> Option<u32> {
    let elapsed_ns = second.0.checked_sub(first.0).filter(|ns| *ns > 0)?;
    let ticks = second.1.checked_sub(first.1).filter(|t| *t >= 4)?;
    let rate = ticks as f64 * 1e9 / elapsed_ns as f64;
    let nearest = KNOWN_HZ.iter().copied().min_by(|a, b| {
        (f64::from(*a) - rate)
            .abs()
            .total_cmp(&(f64::from(*b) - rate).abs())
    })?;
    let tolerance = (f64::from(nearest) * 0.08).max(25.0);
    if (f64::from(nearest) - rate).abs() <= tolerance {
        Some(nearest)
    } else {
        Some(rate.round() as u32)
    }
}

/// A one-number sysfs or sysctl file (`20\n`).
pub fn parse_number_text(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// The governors of all cpufreq policies as one value: the distinct names, sorted, joined
/// with `, ` (`performance`, or `performance, powersave` when policies differ).
pub fn summarize_governors<'a>(governors: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let distinct: std::collections::BTreeSet<&str> = governors
        .into_iter()
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .collect();
    (!distinct.is_empty()).then(|| distinct.into_iter().collect::<Vec<_>>().join(", "))
}

// Tests: probe/kernel_settings_tests.rs (the parsers with their readers, on fixtures).
