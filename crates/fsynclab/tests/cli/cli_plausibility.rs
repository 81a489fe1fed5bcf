//! The implausibility check in the front ends (issue 34): stored runs whose device is a
//! rotational disk with a write-back cache that flushed in microseconds are flagged in
//! `show`, `show --json` and `compare`; honest ones are not.

use fsynclab::metrics::{DeviceAccounting, DeviceCounters};
use fsynclab::probe::{BlockStat, DeviceInfo, SystemInfo};
use fsynclab::spec::FlatSpec;
use fsynclab::store::{NewRun, Store};

use crate::common::Lab;

/// Stores a fake run of 300 fdatasyncs whose counters show 300 flushes in `flush_ms` ms on
/// a rotational write-back disk; its id.
fn store(lab: &Lab, label: &str, flush_ms: u64) -> i64 {
    let spec = FlatSpec {
        threads: 1,
        requests: Some(300),
        duration_s: None,
        sync: fsynclab::spec::SyncMethod::Fdatasync,
        ..FlatSpec::default()
    }
    .typed();
    let system = SystemInfo {
        device: Some(DeviceInfo {
            name: "sdb".into(),
            rotational: Some(true),
            write_cache: Some("write back".into()),
            ..DeviceInfo::default()
        }),
        ..SystemInfo::default()
    };
    let sync_ns = flush_ms * 1_000_000 / 300 + 5_000;
    let mut result =
        fsynclab::engine::fake_run(0, vec![2_000], vec![sync_ns], &spec, system.clone()).unwrap();
    let stat = |flushes, ms| BlockStat {
        flush_ios: Some(flushes),
        flush_ticks_ms: Some(ms),
        ..BlockStat::default()
    };
    result.device = DeviceAccounting::Measured {
        counters: DeviceCounters {
            device: "sdb".into(),
            before: stat(10, 100),
            after: stat(310, 100 + flush_ms),
        },
        backing: None,
    };
    let new = NewRun {
        label: Some(label.into()),
        ..NewRun::new(spec, system, &lab.target)
    };
    Store::open(&lab.db)
        .unwrap()
        .insert_finished(&new, &result)
        .unwrap()
}

#[test]
fn implausible_flushes_are_flagged_in_show_and_compare() {
    let lab = Lab::new();
    let lying: Vec<i64> = (0..3).map(|_| store(&lab, "lying", 3)).collect();
    let honest: Vec<i64> = (0..3).map(|_| store(&lab, "honest", 2_400)).collect();
    let show = |id: i64, json: bool| {
        let mut cmd = lab.cmd();
        cmd.args(["show", &id.to_string()]);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = show(lying[0], false);
    assert!(text.contains("flush     IMPLAUSIBLE FLUSH"), "{text}");
    assert!(text.contains("your drive may be lying"), "{text}");
    assert!(!show(honest[0], false).contains("IMPLAUSIBLE"));
    let doc: serde_json::Value = serde_json::from_str(&show(lying[0], true)).unwrap();
    let run = &doc["run"];
    assert_eq!(
        run["implausible_flush"]["evidence"], "counters_mean",
        "{run}"
    );
    assert_eq!(run["implausible_flush"]["floor_us"], 50.0);
    assert!(run["implausible_flush"]["flush_us"].as_f64().unwrap() < 50.0);
    let doc: serde_json::Value = serde_json::from_str(&show(honest[0], true)).unwrap();
    assert!(doc["run"]["implausible_flush"].is_null(), "{doc}");
    let out = lab
        .cmd()
        .args(["compare", "honest", "lying"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("lying: 3 of 3 run(s) — IMPLAUSIBLE FLUSH"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("honest: "), "{text}");
}
