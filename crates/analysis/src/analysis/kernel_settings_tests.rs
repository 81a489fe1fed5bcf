//! The kernel-settings catalogue and the comparison rows it adds.

use super::*;
use crate::probe::{DirtySettings, SystemInfo, Virtualization};
use crate::spec::FlatSpec;

/// The settings recorded on the lab VM (tests/fixtures/probe/kernel), target on a loop
/// device over vda.
fn lab_vm() -> KernelSettings {
    let queue = |device: &str, wbt, nr, max_kb| QueueSettings {
        device: device.into(),
        wbt_lat_usec: Some(wbt),
        nr_requests: Some(nr),
        max_sectors_kb: Some(max_kb),
        rq_affinity: Some(1),
    };
    KernelSettings {
        hz: Some(250),
        hz_source: Some("/proc/config.gz".into()),
        preempt: Some("none".into()),
        preempt_source: Some("default of a dynamic kernel's config".into()),
        preempt_dynamic: Some(true),
        cmdline: Some("console=ttyS0 quiet".into()),
        vm: DirtySettings {
            dirty_ratio: Some(20),
            dirty_background_ratio: Some(10),
            dirty_bytes: Some(0),
            dirty_background_bytes: Some(0),
            dirty_expire_centisecs: Some(3000),
            dirty_writeback_centisecs: Some(500),
        },
        queue: Some(queue("loop0", 2000, 128, 1280)),
        backing_queue: Some(queue("vda", 75_000, 256, 4096)),
        cpufreq_governor: None,
        virtualization: Virtualization {
            is_virtual: Some(true),
            hypervisor: Some("KVM".into()),
            evidence: vec!["cpuinfo flag hypervisor".into(), "cpuid KVMKVMKVM".into()],
        },
        probe_us: Some(900),
    }
}

fn run(id: i64, settings: Option<KernelSettings>) -> RunResult {
    let system = SystemInfo {
        kernel_settings: settings,
        ..SystemInfo::default()
    };
    let spec = FlatSpec {
        threads: 1,
        file_size: 10 * 4096,
        final_sync: true,
        ..FlatSpec::default()
    }
    .typed();
    crate::engine::fake_run(id, vec![1_000], vec![9_000], &spec, system).unwrap()
}

fn meta<'a>(rows: &'a [MetaRow], field: &str) -> &'a MetaRow {
    rows.iter()
        .find(|r| r.field == field)
        .unwrap_or_else(|| panic!("no row {field}: {rows:?}"))
}

#[test]
fn catalogue_names_every_setting_once() {
    let rows = kernel_setting_rows(&lab_vm());
    let fields: Vec<&str> = rows.iter().map(|r| r.field).collect();
    assert_eq!(rows.len(), 19, "{fields:?}");
    let distinct: BTreeSet<&str> = fields.iter().copied().collect();
    assert_eq!(distinct.len(), rows.len(), "{fields:?}");
    let value = |field: &str| rows.iter().find(|r| r.field == field).unwrap();
    assert_eq!(value("HZ").value, "250");
    assert_eq!(value("HZ").source.as_deref(), Some("/proc/config.gz"));
    assert_eq!(value("preemption").value, "none");
    assert_eq!(value("virtual machine").value, "yes (KVM)");
    assert_eq!(value("CPU governor").value, "none (no cpufreq)");
    assert_eq!(value("vm.dirty_expire_centisecs").value, "3000");
    assert_eq!(value("queue wbt_lat_usec").value, "2000");
    assert_eq!(value("queue wbt_lat_usec").source.as_deref(), Some("loop0"));
    assert_eq!(value("backing queue max_sectors_kb").value, "4096");
    assert_eq!(value("kernel cmdline").value, "console=ttyS0 quiet");
    // Nothing readable: every value says so, and no queue rows without a device.
    let unknown = kernel_setting_rows(&KernelSettings::default());
    assert_eq!(unknown.len(), 11);
    assert_eq!(unknown[0].value, "unknown");
    assert!(unknown.iter().all(|r| !r.field.contains("queue")));
}

#[test]
fn one_changed_sysctl_is_the_one_difference() {
    let mut tuned = lab_vm();
    tuned.vm.dirty_ratio = Some(40);
    tuned.probe_us = Some(1500);
    let (a, b) = (run(1, Some(lab_vm())), run(2, Some(tuned)));
    let rows = kernel_meta_rows(&[&a], &[&b]);
    let differing: Vec<&MetaRow> = rows.iter().filter(|r| r.differs).collect();
    assert_eq!(differing.len(), 1, "{differing:?}");
    let dirty = meta(&rows, "vm.dirty_ratio");
    assert_eq!(
        (dirty.baseline.as_str(), dirty.candidate.as_str()),
        ("20", "40")
    );
    // Through compare(): the row is in the metadata, among the differing ones first.
    let side = |name: &str, run: RunResult| crate::analysis::SideInput {
        name: name.into(),
        runs: vec![run],
        unmeasured: vec![],
        crash: Vec::new(),
    };
    let c = crate::analysis::compare(&side("a", a), &side("b", b), &[]).unwrap();
    let first_same = c.metadata.iter().position(|m| !m.differs).unwrap();
    let at = c
        .metadata
        .iter()
        .position(|m| m.field == "vm.dirty_ratio")
        .unwrap();
    assert!(
        at < first_same && c.metadata[at].differs,
        "{:?}",
        c.metadata
    );
    assert!(c.metadata.iter().any(|m| m.field == "HZ" && !m.differs));
}

#[test]
fn hz_change_differs_and_its_source_does_not() {
    let mut other = lab_vm();
    other.hz = Some(1000);
    other.hz_source = Some("measured (jiffies over 50 ms)".into());
    let rows = kernel_meta_rows(&[&run(1, Some(lab_vm()))], &[&run(2, Some(other))]);
    let hz = meta(&rows, "HZ");
    assert!(hz.differs);
    assert_eq!(
        (hz.baseline.as_str(), hz.candidate.as_str()),
        ("250", "1000")
    );
    // Same HZ, one read from the config and one measured: the same setting.
    let mut measured = lab_vm();
    measured.hz_source = Some("measured (jiffies over 50 ms)".into());
    let rows = kernel_meta_rows(&[&run(1, Some(lab_vm()))], &[&run(2, Some(measured))]);
    assert!(rows.iter().all(|r| !r.differs), "{rows:?}");
}

#[test]
fn older_runs_show_nothing_and_are_not_a_difference() {
    // Neither side recorded settings: no rows at all.
    assert!(kernel_meta_rows(&[&run(1, None)], &[&run(2, None)]).is_empty());
    // One side did: its values, the other "not recorded", nothing differs.
    let rows = kernel_meta_rows(&[&run(1, None)], &[&run(2, Some(lab_vm()))]);
    let hz = meta(&rows, "HZ");
    assert_eq!(
        (hz.baseline.as_str(), hz.candidate.as_str()),
        ("not recorded", "250")
    );
    assert!(rows.iter().all(|r| !r.differs), "{rows:?}");
    // A side mixing old and new runs lists both.
    let mixed = kernel_meta_rows(
        &[&run(1, None), &run(3, Some(lab_vm()))],
        &[&run(2, Some(lab_vm()))],
    );
    assert_eq!(meta(&mixed, "HZ").baseline, "250 | not recorded");
    assert!(!meta(&mixed, "HZ").differs);
}

#[test]
fn a_tmpfs_side_has_no_queue_and_that_is_not_a_difference() {
    let tmpfs = KernelSettings {
        queue: None,
        backing_queue: None,
        ..lab_vm()
    };
    let rows = kernel_meta_rows(&[&run(1, Some(lab_vm()))], &[&run(2, Some(tmpfs))]);
    let wbt = meta(&rows, "queue wbt_lat_usec");
    assert_eq!(
        (wbt.baseline.as_str(), wbt.candidate.as_str()),
        ("2000", "-")
    );
    assert!(!wbt.differs);
}
