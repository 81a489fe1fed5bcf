//! The kernel settings of a run as named values (`HZ 250`, `vm.dirty_ratio 20`), and the
//! rows they add to a comparison's "what differs" table. One catalogue, so `show`, the
//! window's History details and every compare output name a setting the same way.

use std::collections::BTreeSet;

use super::rows::MetaRow;
use crate::metrics::RunResult;
use crate::probe::{KernelSettings, QueueSettings};

/// One recorded kernel setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSettingRow {
    /// The line it is shown on in `show` (`kernel`, `vm`, `queue`, `backing`, `cmdline`).
    pub group: &'static str,
    /// Its name inside that line (`dirty_ratio`).
    pub name: &'static str,
    /// Its name on its own, as a comparison lists it (`vm.dirty_ratio`).
    pub field: &'static str,
    /// The value (`20`; `unknown` when it could not be read).
    pub value: String,
    /// Where the value came from, when that matters for trusting it (`/proc/config.gz`,
    /// `measured (jiffies over 50 ms)`).
    pub source: Option<String>,
}

fn number(value: Option<u64>) -> String {
    value.map_or_else(|| "unknown".into(), |v| v.to_string())
}

fn row(
    group: &'static str,
    name: &'static str,
    field: &'static str,
    value: String,
) -> KernelSettingRow {
    KernelSettingRow {
        group,
        name,
        field,
        value,
        source: None,
    }
}

/// The queue's four limits; `fields` are the comparison names (plain or backing queue).
fn queue_rows(
    group: &'static str,
    fields: [&'static str; 4],
    queue: &QueueSettings,
) -> Vec<KernelSettingRow> {
    let values = [
        ("wbt_lat_usec", queue.wbt_lat_usec),
        ("nr_requests", queue.nr_requests),
        ("max_sectors_kb", queue.max_sectors_kb),
        ("rq_affinity", queue.rq_affinity),
    ];
    values
        .into_iter()
        .zip(fields)
        .map(|((name, value), field)| KernelSettingRow {
            source: Some(queue.device.clone()),
            ..row(group, name, field, number(value))
        })
        .collect()
}

/// Whether the machine is virtual, in words (`yes (KVM)`, `no`, `unknown`).
fn virtual_value(settings: &KernelSettings) -> String {
    let v = &settings.virtualization;
    match (v.is_virtual, &v.hypervisor) {
        (Some(true), Some(name)) => format!("yes ({name})"),
        (Some(true), None) => "yes (hypervisor not named)".into(),
        (Some(false), _) => "no".into(),
        (None, _) => "unknown".into(),
    }
}

/// The recorded settings in catalogue order. The queue rows are there when the target has
/// a block device, the backing rows when it is a loop device.
pub fn kernel_setting_rows(settings: &KernelSettings) -> Vec<KernelSettingRow> {
    let mut rows = vec![
        KernelSettingRow {
            source: settings.hz_source.clone(),
            ..row("kernel", "HZ", "HZ", number(settings.hz.map(u64::from)))
        },
        KernelSettingRow {
            source: settings.preempt_source.clone(),
            ..row(
                "kernel",
                "preemption",
                "preemption",
                settings.preempt.clone().unwrap_or_else(|| "unknown".into()),
            )
        },
        KernelSettingRow {
            source: Some(settings.virtualization.evidence.join(", ")).filter(|e| !e.is_empty()),
            ..row(
                "kernel",
                "virtual",
                "virtual machine",
                virtual_value(settings),
            )
        },
        row(
            "kernel",
            "governor",
            "CPU governor",
            settings
                .cpufreq_governor
                .clone()
                .unwrap_or_else(|| "none (no cpufreq)".into()),
        ),
    ];
    let vm = &settings.vm;
    for (name, field, value) in [
        ("dirty_ratio", "vm.dirty_ratio", vm.dirty_ratio),
        (
            "dirty_background_ratio",
            "vm.dirty_background_ratio",
            vm.dirty_background_ratio,
        ),
        ("dirty_bytes", "vm.dirty_bytes", vm.dirty_bytes),
        (
            "dirty_background_bytes",
            "vm.dirty_background_bytes",
            vm.dirty_background_bytes,
        ),
        (
            "dirty_expire_centisecs",
            "vm.dirty_expire_centisecs",
            vm.dirty_expire_centisecs,
        ),
        (
            "dirty_writeback_centisecs",
            "vm.dirty_writeback_centisecs",
            vm.dirty_writeback_centisecs,
        ),
    ] {
        rows.push(row("vm", name, field, number(value)));
    }
    if let Some(queue) = &settings.queue {
        rows.extend(queue_rows(
            "queue",
            [
                "queue wbt_lat_usec",
                "queue nr_requests",
                "queue max_sectors_kb",
                "queue rq_affinity",
            ],
            queue,
        ));
    }
    if let Some(queue) = &settings.backing_queue {
        rows.extend(queue_rows(
            "backing",
            [
                "backing queue wbt_lat_usec",
                "backing queue nr_requests",
                "backing queue max_sectors_kb",
                "backing queue rq_affinity",
            ],
            queue,
        ));
    }
    rows.push(row(
        "cmdline",
        "cmdline",
        "kernel cmdline",
        settings.cmdline.clone().unwrap_or_else(|| "unknown".into()),
    ));
    rows
}

/// What a side shows for `field`: its distinct recorded values, then `-` when a run has
/// no such row (no block device, no loop device) and `not recorded` when a run has no
/// kernel settings at all (stored before they were, or imported). Only the values count
/// as a difference.
fn side_values(runs: &[&RunResult], field: &str) -> (BTreeSet<String>, String) {
    let mut values = BTreeSet::new();
    let (mut absent, mut unrecorded) = (false, false);
    for run in runs {
        let Some(settings) = &run.system.kernel_settings else {
            unrecorded = true;
            continue;
        };
        match kernel_setting_rows(settings)
            .into_iter()
            .find(|r| r.field == field)
        {
            Some(row) => {
                values.insert(row.value);
            }
            None => absent = true,
        }
    }
    let mut parts: Vec<&str> = values.iter().map(String::as_str).collect();
    if absent {
        parts.push("-");
    }
    if unrecorded {
        parts.push("not recorded");
    }
    let shown = parts.join(" | ");
    (values, shown)
}

/// The comparison rows of the kernel settings: none when no run of either side recorded
/// them. A row differs when both sides have values for it and they differ; a side without
/// one (`-`, `not recorded`) is not counted as a difference.
pub(super) fn kernel_meta_rows(base: &[&RunResult], cand: &[&RunResult]) -> Vec<MetaRow> {
    let mut fields: Vec<&'static str> = Vec::new();
    for settings in base
        .iter()
        .chain(cand)
        .filter_map(|r| r.system.kernel_settings.as_ref())
    {
        for row in kernel_setting_rows(settings) {
            if !fields.contains(&row.field) {
                fields.push(row.field);
            }
        }
    }
    fields
        .into_iter()
        .map(|field| {
            let (b, baseline) = side_values(base, field);
            let (c, candidate) = side_values(cand, field);
            MetaRow {
                field: field.to_string(),
                differs: !b.is_empty() && !c.is_empty() && b != c,
                baseline,
                candidate,
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "kernel_settings_tests.rs"]
mod tests;
