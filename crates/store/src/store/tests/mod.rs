//! Store tests: round trips, interrupted runs, schema versions, filters, edits.
//! The fixtures here build a realistic run; the tests live in the submodules.

mod lifecycle;
mod queries;

use std::path::PathBuf;

use super::*;
use crate::metrics::{
    DeviceAccounting, DeviceCounters, IntervalSample, LatencyHistogram, RunResult, RunStatus,
    ThreadStats,
};
use crate::probe::{BlockStat, DeviceInfo, MountInfo, SystemInfo};
use crate::spec::FlatSpec;
use crate::spec::SyncMethod;

fn system(fs_type: &str, kernel: &str) -> SystemInfo {
    SystemInfo {
        tool_version: "0.1.0".into(),
        hostname: Some("lab1".into()),
        kernel_release: Some(kernel.into()),
        kernel_version: Some("#1 SMP PREEMPT_DYNAMIC".into()),
        os: Some("Linux (Debian GNU/Linux 12)".into()),
        cpu_model: Some("AMD EPYC 7763".into()),
        cpu_count: 16,
        memory_bytes: 64 << 30,
        target: PathBuf::from("/mnt/test"),
        mount: Some(MountInfo {
            mount_id: 36,
            parent_id: 1,
            major: 259,
            minor: 1,
            root: "/".into(),
            mount_point: "/mnt/test".into(),
            mount_options: "rw,noatime".into(),
            fs_type: fs_type.into(),
            source: "/dev/nvme0n1p1".into(),
            super_options: "rw,data=ordered".into(),
        }),
        device: Some(DeviceInfo {
            name: "nvme0n1".into(),
            partition: Some("nvme0n1p1".into()),
            stat_path: PathBuf::from("/sys/block/nvme0n1/stat"),
            model: Some("Samsung SSD 980".into()),
            rotational: Some(false),
            write_cache: Some("write back".into()),
            fua: Some(true),
            logical_block_size: Some(512),
            physical_block_size: Some(4096),
            size_bytes: Some(1 << 40),
            ..Default::default()
        }),
        device_note: None,
        warnings: vec![],
        clock_source: Some("tsc".into()),
        backing_device: None,
        scratch: None,
        // Stored inside system_json: the round trips below cover it.
        kernel_settings: Some(crate::probe::KernelSettings {
            hz: Some(250),
            hz_source: Some("/proc/config.gz".into()),
            vm: crate::probe::DirtySettings {
                dirty_ratio: Some(20),
                ..Default::default()
            },
            ..Default::default()
        }),
        raw_device: None,
    }
}

fn new_run(label: Option<&str>, fs_type: &str, kernel: &str) -> NewRun {
    NewRun {
        spec: FlatSpec {
            threads: 2,
            sync: SyncMethod::Fdatasync,
            duration_s: Some(1.0),
            ..FlatSpec::default()
        }
        .typed(),
        system: system(fs_type, kernel),
        target: PathBuf::from("/mnt/test"),
        label: label.map(Into::into),
        tags: vec!["nvme".into()],
        experiment_id: None,
        preset: Some("btrfs-log-commit".into()),
        preset_scale: Some(0.5),
        origin: None,
    }
}

/// A realistic result for run `id`: 2 threads, 3 intervals, measured device counters.
fn result_for(id: i64, new: &NewRun) -> RunResult {
    let mut write_lat = LatencyHistogram::new();
    let mut sync_lat = LatencyHistogram::new();
    let mut durable_lat = LatencyHistogram::new();
    durable_lat.record(250_000);
    durable_lat.record(1_250_000);
    for i in 0..2000u64 {
        write_lat.record(3_000 + (i * 37) % 9_000);
        if i % 2 == 0 {
            sync_lat.record(180_000 + (i * 7919) % 900_000);
        }
    }
    let before = BlockStat {
        write_ios: 10_000,
        write_sectors: 800_000,
        flush_ios: Some(500),
        flush_ticks_ms: Some(1_200),
        discard_ios: Some(0),
        ..Default::default()
    };
    let after = BlockStat {
        write_ios: 12_100,
        write_sectors: 820_000,
        flush_ios: Some(1_520),
        flush_ticks_ms: Some(1_900),
        discard_ios: Some(0),
        ..Default::default()
    };
    let interval = |k: u64| IntervalSample {
        t_ms: 100 * (k + 1),
        dur_ms: 100,
        writes: 600 + k,
        syncs: 300,
        bytes: (600 + k) * 4096,
        write_p50_ns: Some(5_000),
        write_p99_ns: Some(11_000),
        sync_p50_ns: if k == 2 { None } else { Some(400_000) },
        sync_p99_ns: if k == 2 { None } else { Some(1_000_000) },
        device_flushes: Some(340),
        kernel_commits: if k == 1 { None } else { Some(k + 2) },
        kernel_flushes: Some(k * 3),
        // One window with a mean depth, so the REAL column round-trips; NULL elsewhere.
        inflight: if k == 1 { Some(3.25) } else { None },
    };
    RunResult {
        id,
        status: RunStatus::Finished,
        error: None,
        spec: new.spec.clone(),
        system: new.system.clone(),
        started_at_ms: 1_750_000_000_123,
        wall_ns: 1_000_456_789,
        writes: 2000,
        syncs: 1000,
        bytes: 2000 * 4096,
        durable_lat: Some(durable_lat),
        write_lat,
        sync_lat,
        intervals: (0..3).map(interval).collect(),
        threads: vec![
            ThreadStats {
                thread: 0,
                writes: 1010,
                syncs: 505,
                bytes: 1010 * 4096,
                busy_ns: 950_000_000,
                wall_ns: 1_000_400_000,
            },
            ThreadStats {
                thread: 1,
                writes: 990,
                syncs: 495,
                bytes: 990 * 4096,
                busy_ns: 940_000_000,
                wall_ns: 1_000_456_789,
            },
        ],
        device: DeviceAccounting::Measured {
            counters: DeviceCounters {
                device: "nvme0n1".into(),
                before: before.clone(),
                after: after.clone(),
            },
            backing: Some(DeviceCounters {
                device: "vda".into(),
                before,
                after,
            }),
        },
        warnings: vec![
            crate::metrics::RunWarning::LowSpace {
                needed: 10 << 30,
                free: 1 << 30,
            }
            .into(),
            crate::metrics::Warning::Text("a sentence stored before issue 32".into()),
        ],
        noise: Some(crate::metrics::NoiseInfo {
            background_cpu_busy: Some(0.03),
            quiet_threshold: Some(0.1),
            quiet_waited_s: Some(1.5),
            quiet_reached: Some(true),
            cpu_pressure: Some(crate::metrics::PressureDelta {
                avg10_after: 0.5,
                stall_us: 1200,
            }),
            io_pressure: None,
        }),
        ops: vec![{
            let mut op = crate::metrics::OpStats::new("commit");
            op.record(1_500_000, 4096);
            op.record(2_500_000, 4096);
            op
        }],
        phases: vec![crate::metrics::PhaseStats {
            phase: "create".into(),
            items: 64,
            wall_ns: 12_345_678,
        }],
        group: Some(crate::metrics::GroupCommitStats {
            strategy: "delay:500".into(),
            commits: 2,
            flushes: 1,
            batch_sizes: vec![0, 0, 1],
            learned_flush_ns: Some(1_200_000),
            gather_wait_ns: 500_000,
            peak_in_flight: Some(1),
        }),
        reported: None,
        kernel_trace: None,
    }
}

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested").join("runs.sqlite");
    (dir, path)
}

fn count(store: &Store, sql: &str) -> i64 {
    store.conn.query_row(sql, [], |r| r.get(0)).unwrap()
}
