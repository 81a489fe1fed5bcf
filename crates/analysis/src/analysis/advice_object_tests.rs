//! The advice object on made-up measurements: what it concludes, and that it reads back
//! whole from its JSON (stored advice is shown as it was made).

use super::*;
use crate::analysis::EMPTY_SYNC_METHOD;

fn point(strategy: &str, writers: u32, cps: &[f64], p99: &[f64]) -> AdvicePoint {
    AdvicePoint {
        strategy: strategy.into(),
        writers,
        commits_per_sec: cps.to_vec(),
        p99_us: p99.to_vec(),
        p50_us: p99.iter().map(|l| l / 2.0).collect(),
        durable: Some(true),
        ..AdvicePoint::default()
    }
}

fn sample(k: u32, shared: bool, p50: f64, run_id: i64) -> SyncSample {
    SyncSample {
        k,
        shared,
        sync_p50_us: p50,
        syncs_per_sec: 1e6 / p50,
        run_id,
    }
}

fn method(name: &str, per_sec: f64, p50: f64, p99: f64, run_id: i64) -> MethodRun {
    MethodRun {
        method: name.into(),
        per_sec,
        p50_us: Some(p50),
        p99_us: Some(p99),
        run_id,
    }
}

fn inputs() -> AdviceInputs {
    let mut sync_samples = Vec::new();
    for (i, k) in [1u32, 2, 4, 8, 16].into_iter().enumerate() {
        let i = i as i64;
        // Shared file: latency ∝ k (serialized); own files: flat (overlapping).
        sync_samples.push(sample(k, true, 100.0 * f64::from(k) * 1.02, 10 + i));
        sync_samples.push(sample(k, true, 100.0 * f64::from(k) * 0.98, 20 + i));
        sync_samples.push(sample(k, false, 100.0 + f64::from(k), 30 + i));
        sync_samples.push(sample(k, false, 99.0 - f64::from(k) / 4.0, 40 + i));
    }
    AdviceInputs {
        target: "/mnt/x".into(),
        fs_type: Some("ext4".into()),
        record_size: 4096,
        writers: 16,
        points: vec![
            point("solo", 1, &[900.0, 910.0, 905.0], &[1500.0, 1510.0, 1490.0]),
            point(
                "leader",
                1,
                &[890.0, 905.0, 900.0],
                &[1500.0, 1520.0, 1495.0],
            ),
            point(
                "solo",
                16,
                &[1000.0, 1050.0, 980.0],
                &[1400.0, 1450.0, 1380.0],
            ),
            point(
                "leader",
                16,
                &[3900.0, 3700.0, 4100.0],
                &[1900.0, 2000.0, 1850.0],
            ),
            point(
                "delay:1000",
                16,
                &[3000.0, 3100.0, 2900.0],
                &[3100.0, 3000.0, 3200.0],
            ),
        ],
        sync_samples,
        flushes: vec![(10, 80.0, 300.0), (11, 90.0, 500.0), (12, 85.0, 350.0)],
        methods: vec![
            method("fdatasync", 1000.0, 900.0, 2000.0, 50),
            method("fdatasync", 1040.0, 880.0, 2100.0, 51),
            method("fdatasync", 980.0, 910.0, 1900.0, 52),
            method("o_dsync", 2000.0, 450.0, 900.0, 53),
            method("o_dsync", 2100.0, 440.0, 950.0, 54),
            method("o_dsync", 1950.0, 460.0, 920.0, 55),
        ],
        ..AdviceInputs::default()
    }
}

#[test]
fn the_advice_names_the_batching_strategy_and_the_classes() {
    let a = Advice::build(inputs());
    assert_eq!(a.recommended.writers, 16);
    assert_eq!(a.recommended.strategy(), Some("leader"));
    assert_eq!(a.recommended.budget_p99_us, Some(2.0 * 1400.0));
    // At 1 writer solo and leader cannot be told apart.
    let one = &a.by_writers[0];
    assert_eq!(one.writers, 1);
    assert!(
        matches!(&one.verdict, Recommendation::Equivalent { strategies } if strategies.len() == 2),
        "{one:?}"
    );
    // delay:1000 is beaten by leader on both throughput and p99: off the frontier.
    let sixteen = a.frontier.iter().find(|f| f.writers == 16).unwrap();
    assert_eq!(sixteen.strategies, vec!["leader", "solo"]);
    let shared = a.sync_parallelism.as_ref().unwrap();
    assert_eq!(shared.class, SyncClass::Serialized);
    assert!((shared.factor - 1.0).abs() < 0.05, "{}", shared.factor);
    assert_eq!(shared.points.len(), 10);
    let own = a.sync_parallelism_own_files.as_ref().unwrap();
    assert_eq!(own.class, SyncClass::Overlapping);
    // ext4 is local and journaled: duckdb's rule says serialized, as measured.
    assert_eq!(a.duckdb_rule.guess, SyncClass::Serialized);
    assert_eq!(a.duckdb_rule.agrees, Some(true));
    let flush = a.flush_lat_us.as_ref().unwrap();
    assert_eq!((flush.p50, flush.p99), (85.0, 350.0));
    // O_DSYNC made twice fdatasync's rate: the ratio and an interval above 1.
    let dsync = a.methods.iter().find(|m| m.method == "o_dsync").unwrap();
    let r = dsync.vs_fdatasync.unwrap();
    assert!((r.ratio - 2.0).abs() < 0.05, "{r:?}");
    assert!(r.ci95.unwrap().0 > 1.5, "{r:?}");
    assert_eq!(a.methods[0].vs_fdatasync, None);
    let leader = a.point("leader", 16).unwrap();
    let vs = a.vs_solo(leader).unwrap();
    assert!((vs.ratio - 3.86).abs() < 0.05, "{vs:?}");
    assert!(a.not_crash_tested().is_empty());
    // delay:1000 waits and loses against leader: 0.78× with a higher p99.
    let waits = a.wait_notes();
    assert_eq!(waits.len(), 1);
    assert_eq!(waits[0].strategy, "delay:1000");
    assert!(!waits[0].buys_throughput && waits[0].costs_throughput);
    assert!(waits[0].vs_leader.ci95.unwrap().1 < 1.0, "{:?}", waits[0]);
    assert!(waits[0].p99_us > waits[0].leader_p99_us);
}

#[test]
fn a_network_filesystem_is_guessed_overlapping_and_the_advice_reads_back_whole() {
    let mut i = inputs();
    i.fs_type = Some("nfs4".into());
    i.points[3].durable = None;
    let a = Advice::build(i);
    assert_eq!(a.duckdb_rule.guess, SyncClass::Overlapping);
    assert!(a.duckdb_rule.network);
    assert_eq!(a.duckdb_rule.agrees, Some(false), "measured serialized");
    assert_eq!(a.not_crash_tested(), vec!["leader"]);
    let json = serde_json::to_string(&a).unwrap();
    let back: Advice = serde_json::from_str(&json).unwrap();
    assert_eq!(back, a);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    // The names.
    assert_eq!(value["recommended"]["strategy"], "leader");
    assert_eq!(value["recommended"]["writers"], 16);
    assert_eq!(value["recommended"]["verdict"], "one");
    assert_eq!(value["sync_parallelism"]["class"], "serialized");
    assert!(value["sync_parallelism"]["factor"].is_number());
    assert!(value["flush_lat_us"]["p99"].is_number());
    assert_eq!(value["points"][3]["strategy"], "leader");
    assert!(value["points"][3]["durable"].is_null());
    assert!(value["budget_p99_us"].is_null());
}

#[test]
fn nothing_measured_gives_no_fit_and_no_recommendation() {
    let a = Advice::build(AdviceInputs {
        writers: 16,
        ..AdviceInputs::default()
    });
    assert_eq!(a.sync_parallelism, None);
    assert_eq!(a.flush_lat_us, None);
    assert_eq!(a.duckdb_rule.agrees, None);
    assert!(matches!(
        a.recommended.verdict,
        Recommendation::Nothing { .. }
    ));
    assert!(a.by_writers.is_empty() && a.frontier.is_empty());
}

#[test]
fn stored_text_is_escaped_before_it_is_shown() {
    let mut a = Advice::build(inputs());
    a.target = "/mnt/\u{1b}[31mred\nfake line".into();
    a.points[0].strategy = "solo\u{202e}".into();
    a.stopped = Some("x\ry".into());
    let e = a.escaped();
    assert_eq!(e.target, "/mnt/\\u001b[31mred\\u000afake line");
    assert_eq!(e.points[0].strategy, "solo\\u202e");
    assert_eq!(e.stopped.as_deref(), Some("x\\u000dy"));
    // Plain text is left alone.
    let plain = Advice::build(inputs());
    assert_eq!(plain.clone().escaped(), plain);
}

#[test]
fn an_empty_fsync_is_set_against_fsync_after_a_one_block_change() {
    let mut i = inputs();
    i.methods.extend([
        method("fsync", 800.0, 1200.0, 2500.0, 60),
        method("fsync", 820.0, 1150.0, 2400.0, 61),
        method("fsync", 790.0, 1250.0, 2600.0, 62),
        method(EMPTY_SYNC_METHOD, 2400.0, 400.0, 900.0, 63),
        method(EMPTY_SYNC_METHOD, 2500.0, 390.0, 950.0, 64),
        method(EMPTY_SYNC_METHOD, 2450.0, 410.0, 920.0, 65),
    ]);
    let a = Advice::build(i);
    let empty = a
        .methods
        .iter()
        .find(|m| m.method == EMPTY_SYNC_METHOD)
        .unwrap();
    let vs = empty.vs_fsync.unwrap();
    // Geometric means 2449.5 / 803.2 = 3.05, the interval well above 1.
    assert!((vs.ratio - 3.05).abs() < 0.01, "{vs:?}");
    assert!(vs.ci95.unwrap().0 > 2.5, "{vs:?}");
    assert!(empty.vs_fdatasync.is_some());
    // Only the empty fsync is set against fsync.
    assert!(
        a.methods
            .iter()
            .filter(|m| m.method != EMPTY_SYNC_METHOD)
            .all(|m| m.vs_fsync.is_none())
    );
    let text = crate::report::advice_text(&a);
    assert!(text.contains("fsync after a one-block change"), "{text}");
    // Without fsync runs there is nothing to set it against.
    let mut lone = inputs();
    lone.methods
        .push(method(EMPTY_SYNC_METHOD, 2400.0, 400.0, 900.0, 63));
    let a = Advice::build(lone);
    assert!(a.methods.iter().all(|m| m.vs_fsync.is_none()));
}

#[test]
fn a_bare_devices_advice_recommends_no_strategy_and_says_why() {
    let mut i = inputs();
    i.points.clear();
    i.fs_type = None;
    i.target = "/dev/loop7".into();
    i.raw_device = true;
    i.sync_samples.retain(|s| !s.shared);
    let a = Advice::build(i);
    assert!(
        matches!(&a.recommended.verdict, Recommendation::Nothing { why } if why == RAW_DEVICE_NO_STRATEGIES),
        "{:?}",
        a.recommended
    );
    assert!(a.sync_parallelism.is_none());
    assert!(a.sync_parallelism_own_files.is_some());
    assert!(!a.duckdb_rule.applies && a.duckdb_rule.agrees.is_none());
    // Its CSV is the methods (it has no strategies).
    let files = crate::report::advice_files(&a, std::path::Path::new("x.csv")).unwrap();
    let csv = String::from_utf8(files[0].1.clone()).unwrap();
    assert!(
        csv.starts_with("method,per_sec,p50_us,p99_us,vs_fdatasync"),
        "{csv}"
    );
    assert!(csv.contains("\no_dsync,"), "{csv}");
    let text = crate::report::advice_text(&a);
    for words in [
        "/dev/loop7 (bare block device)",
        "own regions",
        "a bare block device has none",
        "Group-commit strategies: not measured",
    ] {
        assert!(text.contains(words), "no {words:?} in {text}");
    }
    assert!(!text.contains("Strategies on a shared"), "{text}");
    assert!(!text.contains("own files"), "{text}");
    let md = crate::report::advice_markdown(&a);
    assert!(
        md.contains("**Group-commit strategies:** not measured"),
        "{md}"
    );
    // Stored and read back whole; an advice stored before the field reads as a directory's.
    let back: Advice = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
    assert_eq!(back, a);
    let mut old = serde_json::to_value(Advice::build(inputs())).unwrap();
    old.as_object_mut().unwrap().remove("raw_device");
    let old: Advice = serde_json::from_value(old).unwrap();
    assert!(!old.raw_device);
}
