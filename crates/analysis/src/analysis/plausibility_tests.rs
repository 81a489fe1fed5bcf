//! The implausibility check on runs made by the scripted fake, their device and counters
//! set as a real disk's would be.

use super::*;
use crate::metrics::{DeviceAccounting, DeviceCounters, FlushLatency, KernelTrace, RunResult};
use crate::probe::{BlockStat, DeviceInfo, SystemInfo};
use crate::spec::{FlatSpec, SyncMethod};

/// A run of 200 fdatasyncs of `sync_ns` each on `device`, its counters showing `flushes`
/// flushes in `flush_ms` ms.
fn run(device: DeviceInfo, sync_ns: u64, flushes: u64, flush_ms: u64) -> RunResult {
    run_of(200, device, sync_ns, flushes, flush_ms)
}

/// [`run`] with `requests` syncs.
fn run_of(
    requests: u64,
    device: DeviceInfo,
    sync_ns: u64,
    flushes: u64,
    flush_ms: u64,
) -> RunResult {
    let spec = FlatSpec {
        threads: 1,
        requests: Some(requests),
        duration_s: None,
        sync: SyncMethod::Fdatasync,
        ..FlatSpec::default()
    }
    .typed();
    let system = SystemInfo {
        device: Some(device),
        ..SystemInfo::default()
    };
    let mut r = crate::engine::fake_run(1, vec![2_000], vec![sync_ns], &spec, system).unwrap();
    let before = BlockStat {
        flush_ios: Some(1_000),
        flush_ticks_ms: Some(5_000),
        ..BlockStat::default()
    };
    let after = BlockStat {
        flush_ios: Some(1_000 + flushes),
        flush_ticks_ms: Some(5_000 + flush_ms),
        ..BlockStat::default()
    };
    r.device = DeviceAccounting::Measured {
        counters: DeviceCounters {
            device: "sdb".into(),
            before,
            after,
        },
        backing: None,
    };
    r
}

fn disk(rotational: bool, cache: &str) -> DeviceInfo {
    DeviceInfo {
        name: "sdb".into(),
        rotational: Some(rotational),
        write_cache: Some(cache.into()),
        ..DeviceInfo::default()
    }
}

#[test]
fn a_rotational_disk_flushing_in_microseconds_is_flagged_by_the_best_evidence() {
    // 200 syncs of 20 µs, 200 flushes in 2 ms: 10 µs each by the counters.
    let r = run(disk(true, "write back"), 20_000, 200, 2);
    let f = implausible_flush(&r).expect("flagged");
    assert_eq!(f.evidence, FlushEvidence::CountersMean);
    assert!((f.flush_us - 10.0).abs() < 1e-9, "{}", f.flush_us);
    assert!(f.text().contains("lying"), "{}", f.text());
    // The kernel trace's block-level median comes first.
    let mut traced = r.clone();
    traced.kernel_trace = Some(KernelTrace {
        enabled: true,
        flush_lat_us: Some(FlushLatency {
            p50: 12.5,
            p99: 30.0,
            max: 40.0,
        }),
        ..KernelTrace::default()
    });
    let f = implausible_flush(&traced).unwrap();
    assert_eq!((f.evidence, f.flush_us), (FlushEvidence::TraceMedian, 12.5));
    // Too few flushes for the counters' whole milliseconds: the sync median bounds it.
    let few = run_of(50, disk(true, "write back"), 20_000, 50, 0);
    let f = implausible_flush(&few).unwrap();
    assert_eq!(f.evidence, FlushEvidence::SyncMedian);
    assert!((f.flush_us - 20.0).abs() < 1.0, "{}", f.flush_us);
}

#[test]
fn honest_slow_flushes_and_other_classes_are_not_flagged() {
    // 8 ms per flush: what a platter does.
    assert!(implausible_flush(&run(disk(true, "write back"), 8_000_000, 200, 1_600)).is_none());
    // Write-through: the kernel sends no flush worth judging; non-rotational: fast flushes
    // can be honest (power-loss protection).
    assert!(implausible_flush(&run(disk(true, "write through"), 20_000, 200, 2)).is_none());
    assert!(implausible_flush(&run(disk(false, "write back"), 20_000, 200, 2)).is_none());
    // A loop device's flush is its backing file's fsync.
    let mut looped = disk(true, "write back");
    looped.loop_backing_file = Some("/tmp/img".into());
    assert!(implausible_flush(&run(looped, 20_000, 200, 2)).is_none());
    // No flushes counted: nothing to judge (the sync never reached the device).
    assert!(implausible_flush(&run(disk(true, "write back"), 20_000, 0, 0)).is_none());
}

#[test]
fn a_comparison_side_with_implausible_flushes_is_warned_about() {
    let lying = run(disk(true, "write back"), 20_000, 200, 2);
    let honest = run(disk(true, "write back"), 8_000_000, 200, 1_600);
    let w = side_warning("before", &[&lying, &honest]).unwrap();
    assert!(
        w.starts_with("before: 1 of 2 run(s) — IMPLAUSIBLE FLUSH"),
        "{w}"
    );
    assert!(side_warning("after", &[&honest]).is_none());
}

#[test]
fn a_run_under_a_second_is_called_short_and_so_is_its_comparison_side() {
    let mut short = run(disk(false, "write back"), 20_000, 0, 0);
    short.wall_ns = 9_800_000;
    let mut long = short.clone();
    long.wall_ns = 2_000_000_000;
    assert_eq!(short_run(&short), Some(0.0098));
    assert_eq!(short_run(&long), None);
    assert!(short_run_text(0.0098).starts_with("SHORT RUN: the timed part lasted 9.8 ms;"));
    let w = short_side_warning("base", &[&short, &long]).unwrap();
    assert!(w.starts_with("base: 1 of 2 run(s) — SHORT RUN"), "{w}");
    assert!(short_side_warning("b", &[&long]).is_none());
    // A run that was cancelled before measuring is not "short": it says so elsewhere.
    let mut empty = short.clone();
    empty.writes = 0;
    empty.syncs = 0;
    assert_eq!(short_run(&empty), None);
}

#[test]
fn a_run_after_a_busy_second_says_so_and_a_quiet_one_does_not() {
    let mut r = run(disk(false, "write back"), 20_000, 0, 0);
    let busy = |r: &mut RunResult, share: Option<f64>| {
        r.noise = Some(crate::metrics::NoiseInfo {
            background_cpu_busy: share,
            ..Default::default()
        });
    };
    busy(&mut r, Some(0.88));
    assert_eq!(busy_run(&r).map(f64::round), Some(88.0));
    assert!(busy_run_text(88.0).starts_with("BUSY MACHINE: other work used 88% of the CPUs"));
    // At the threshold as shown (25%) it is not called busy; nor without a sample.
    busy(&mut r, Some(0.2504));
    assert_eq!(busy_run(&r), None);
    busy(&mut r, None);
    assert_eq!(busy_run(&r), None);
}
