//! The importer on every fio 3.33 fixture in `tests/fixtures/fio/`: figures after import
//! equal fio's own.

use super::*;
use crate::metrics::RunResult;

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/fio/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const ALL: [&str; 9] = [
    "A-ext4.out",
    "A-btrfs.out",
    "QD1-ext4.out",
    "seed000-json.json",
    "seed000-jsonplus.json",
    "qd1-jsonplus.json",
    "client-json.txt",
    "client-jsonplus.txt",
    "client1-nogroup-json.txt",
];

/// The raw JSON of one fixture, parsed independently of the importer.
fn raw(name: &str) -> serde_json::Value {
    let text = fixture(name);
    let start = text.find('{').unwrap();
    serde_json::from_str(&text[start..]).unwrap()
}

/// The entries of a fixture that are runs, as `(path, raw entry)`.
fn raw_entries(name: &str) -> Vec<(String, serde_json::Value)> {
    let root = raw(name);
    let mut out = Vec::new();
    for list in ["jobs", "client_stats"] {
        if let Some(items) = root.get(list).and_then(|v| v.as_array()) {
            for (i, item) in items.iter().enumerate() {
                if item["jobname"] != "All clients" {
                    out.push((format!("{list}[{i}]"), item.clone()));
                }
            }
        }
    }
    out
}

#[test]
fn every_fixture_imports_with_fios_own_figures() {
    for name in ALL {
        let out = parse_fio_output(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(out.tool_version.as_deref(), Some("fio-3.33"), "{name}");
        let entries = raw_entries(name);
        assert_eq!(out.runs.len(), entries.len(), "{name}");
        for (run, (path, e)) in out.runs.iter().zip(&entries) {
            let r = &run.result;
            let w = &e["write"];
            assert_eq!(run.entry, *path);
            assert_eq!(run.job, e["jobname"].as_str().unwrap());
            assert_eq!(r.spec.kind(), crate::spec::WorkloadKind::Fio);
            assert_eq!(r.writes, w["total_ios"].as_u64().unwrap(), "{name} {path}");
            assert_eq!(r.bytes, w["io_bytes"].as_u64().unwrap());
            assert_eq!(r.wall_ns, w["runtime"].as_u64().unwrap() * 1_000_000);
            assert_eq!(r.syncs, e["sync"]["lat_ns"]["N"].as_u64().unwrap());
            // fsynclab's derived rates are fio's: IOPS to fio's 6 printed decimals,
            // bandwidth to fio's integer bytes/s.
            let s = r.summary();
            let fio_iops = w["iops"].as_f64().unwrap();
            assert!(
                (s.iops - fio_iops).abs() < 1e-5,
                "{name} {path}: {} vs {fio_iops}",
                s.iops
            );
            let bw = s.mib_per_sec * 1024.0 * 1024.0;
            let fio_bw = w["bw_bytes"].as_f64().unwrap();
            assert!(
                (bw - fio_bw).abs() <= 1.0,
                "{name} {path}: {bw} vs {fio_bw}"
            );
            let rep = r.reported.as_ref().unwrap();
            assert_eq!(rep.iops, fio_iops);
            assert_eq!(rep.bw_bytes_per_sec, fio_bw);
            assert_eq!(r.device.counters(), None);
            assert!(
                r.warnings
                    .iter()
                    .any(|w| w.code() == "fio_machine_facts_unknown")
            );
            check_latency(name, path, r, &w["clat_ns"], false);
            check_latency(name, path, r, &e["sync"]["lat_ns"], true);
        }
    }
}

/// The importer's latency figures against fio's: with bins (JSON+), the histogram's count
/// equals N and every percentile fio printed is within the histogram's precision (0.1%:
/// 3 significant digits); without, the summary is fio's printed percentiles exactly.
fn check_latency(name: &str, path: &str, r: &RunResult, fio: &serde_json::Value, sync: bool) {
    let n = fio["N"].as_u64().unwrap();
    let summary = r.latency_summary(sync);
    assert_eq!(summary.count, n, "{name} {path} sync={sync}");
    let pcts = fio["percentile"].as_object().unwrap();
    let hist = if sync { &r.sync_lat } else { &r.write_lat };
    if fio.get("bins").is_some() {
        assert!(r.has_histograms());
        assert_eq!(hist.count(), n);
        for (key, value) in pcts {
            let pct: f64 = key.parse().unwrap();
            let fio_ns = value.as_u64().unwrap() as f64;
            let ours = hist.percentile_ns(pct) as f64;
            assert!(
                (ours - fio_ns).abs() <= fio_ns * 0.001 + 1.0,
                "{name} {path} sync={sync} p{pct}: {ours} vs fio {fio_ns}"
            );
        }
    } else {
        assert!(!r.has_histograms());
        assert_eq!(hist.count(), 0, "no histogram is invented from percentiles");
        assert_eq!(summary.p50_ns, pcts["50.000000"].as_u64().unwrap());
        assert_eq!(summary.p99_ns, pcts["99.000000"].as_u64().unwrap());
        assert_eq!(summary.p999_ns, pcts["99.900000"].as_u64().unwrap());
        assert_eq!(summary.p90_ns, pcts["90.000000"].as_u64().unwrap());
        assert_eq!(summary.max_ns, fio["max"].as_u64().unwrap());
        assert!(r.warnings.iter().any(|w| w.code() == "fio_no_histogram"));
    }
}

#[test]
fn client_mode_has_hosts_and_skips_all_clients() {
    let out = parse_fio_output(&fixture("client-json.txt")).unwrap();
    let hosts: Vec<String> = out
        .runs
        .iter()
        .map(|r| r.host.as_ref().unwrap().label())
        .collect();
    assert_eq!(hosts, ["127.0.0.1:8766", "127.0.0.1:8765"]);
    assert_eq!(out.skipped.len(), 1);
    assert!(out.skipped[0].starts_with("client_stats[2] \"All clients\""));
    let r = &out.runs[0];
    assert_eq!(r.origin.hostname.as_deref(), Some("127.0.0.1:8766"));
    assert_eq!(r.result.system.hostname.as_deref(), Some("127.0.0.1"));
    // Global options repeated by fio's client: one value each; the job's own on top.
    assert_eq!(r.origin.job_options["rw"], "randwrite");
    assert_eq!(r.origin.job_options["numjobs"], "4");
    assert_eq!(r.origin.job_options["directory"], "/work/fiofix/mnt");
    assert_eq!(r.result.system.target, Path::new("/work/fiofix/mnt"));
    // Each run gets its own server's disk_util.
    let disks = &r.result.reported.as_ref().unwrap().disks;
    assert_eq!(disks.len(), 1);
    assert_eq!(disks[0].write_ios, 21850);
    let raw = raw("client-json.txt");
    // started_at: fio's report time (timestamp, s) minus the write runtime.
    let ts = raw["timestamp"].as_i64().unwrap() * 1000;
    let runtime = raw["client_stats"][0]["write"]["runtime"].as_i64().unwrap();
    assert_eq!(r.result.started_at_ms, ts - runtime);
}

#[test]
fn fdatasync_jobs_count_syncs_from_the_latency_n() {
    // fio 3.33 leaves sync.total_ios at 0 for fdatasync: the count is sync.lat_ns.N.
    let raw = raw("QD1-ext4.out");
    assert_eq!(raw["jobs"][0]["sync"]["total_ios"], 0);
    let out = parse_fio_output(&fixture("QD1-ext4.out")).unwrap();
    assert_eq!(out.runs[0].result.syncs, 2436);
}

#[test]
fn without_group_reporting_each_clone_is_a_run() {
    let out = parse_fio_output(&fixture("client1-nogroup-json.txt")).unwrap();
    assert_eq!(out.runs.len(), 4);
    assert!(out.runs.iter().all(|r| r.job == "writers"));
    // Each clone of numjobs=4 wrote its own 8 MiB, and is described as one job.
    assert!(out.runs.iter().all(|r| r.result.bytes == 8 << 20));
    assert!(out.runs.iter().all(|r| r.result.spec.common.threads == 1));
    let grouped = parse_fio_output(&fixture("client-json.txt")).unwrap();
    assert!(
        grouped
            .runs
            .iter()
            .all(|r| r.result.spec.common.threads == 4)
    );
}

#[test]
fn a_plain_run_has_no_host_and_all_disks() {
    let out = parse_fio_output(&fixture("A-ext4.out")).unwrap();
    let r = &out.runs[0];
    assert_eq!(r.host, None);
    assert_eq!(r.origin.hostname, None);
    assert_eq!(r.result.reported.as_ref().unwrap().disks[0].name, "loop0");
    assert_eq!(r.origin.job_options["directory"], "/mnt/anchor-a-ext4");
    assert_eq!(r.origin.job_options["numjobs"], "8");
    // The workload, through the job-file reader's mapping; runtime=55 was a cap not reached.
    let spec = &r.result.spec;
    assert_eq!(spec.kind(), crate::spec::WorkloadKind::Fio);
    assert_eq!(
        (
            spec.common.threads,
            spec.flat().block_size,
            spec.flat().sync_every
        ),
        (8, 4096, 1)
    );
    assert_eq!(spec.fileio().unwrap().io_size_per_thread(), 8 << 20);
    assert_eq!(spec.common.duration_s, None);
    assert!(
        crate::report::run_warning_texts(&r.result)
            .iter()
            .any(|w| w.contains("runtime=55"))
    );
    // QD1 reached its runtime=10 cap: time based.
    let qd1 = parse_fio_output(&fixture("QD1-ext4.out")).unwrap();
    assert_eq!(qd1.runs[0].result.spec.common.duration_s, Some(10.0));
}

#[test]
fn sniffing_tells_fio_output_from_other_text() {
    for name in ALL {
        assert!(looks_like_fio_output(&fixture(name)), "{name}");
    }
    assert!(!looks_like_fio_output(&fixture(
        "fio-jobA-tmpfs-normal.txt"
    )));
    assert!(!looks_like_fio_output("{\"runs\": []}"));
    assert!(!looks_like_fio_output(""));
}

fn err(text: &str) -> String {
    parse_fio_output(text).unwrap_err().to_string()
}

#[test]
fn hostile_input_is_refused_naming_the_field() {
    let good = fixture("client-json.txt");
    // Truncated.
    let e = err(&good[..good.len() / 2]);
    assert!(e.starts_with("invalid JSON at line"), "{e}");
    // Normal text output.
    assert!(err(&fixture("fio-jobA-tmpfs-normal.txt")).contains("no JSON object"));
    assert!(err("{\"a\": 1}").contains("not fio's output"));
    assert!(err("[1]").contains("no JSON object"));
    let cases = [
        (
            "\"total_ios\" : 8192",
            "\"total_ios\" : -1",
            "client_stats[0].write.total_ios is negative",
        ),
        (
            "\"total_ios\" : 8192",
            "\"total_ios\" : 1e400",
            "invalid JSON",
        ),
        (
            "\"total_ios\" : 8192",
            "\"total_ios\" : 99999999999999999999999",
            "client_stats[0].write.total_ios is 1e+23, not a whole number",
        ),
        (
            "\"total_ios\" : 8192",
            "\"total_ios\" : \"8192\"",
            "client_stats[0].write.total_ios is a string, expected a whole number",
        ),
        (
            "\"iops\" : 3655.510933",
            "\"iops\" : -3.5",
            "client_stats[0].write.iops is -3.5, outside",
        ),
        (
            "\"port\" : 8766",
            "\"port\" : 70000",
            "client_stats[0].port is 70000, not a TCP port",
        ),
        (
            "\"jobname\" : \"writers\"",
            "\"jobname\" : 7",
            "client_stats[0].jobname is a number",
        ),
        (
            "\"jobname\" : \"writers\"",
            "\"jobname\" : \"w\\u001b[2J\"",
            "client_stats[0].jobname",
        ),
    ];
    for (from, to, want) in cases {
        assert!(good.contains(from), "{from}");
        let e = err(&good.replacen(from, to, 1));
        assert!(e.contains(want), "{to}: {e}");
    }
    // The sync count: N is the field read.
    let text = good.replacen("\"N\" : 8188", "\"N\" : -8188", 1);
    if text != good {
        let e = err(&text);
        assert!(e.contains(".N is negative"), "{e}");
    }
    // A missing field names its path.
    let e = err(&good.replacen("\"io_bytes\" : 33554432,", "", 1));
    assert!(
        e.contains("client_stats[0].write.io_bytes is missing"),
        "{e}"
    );
}

#[test]
fn bins_that_disagree_with_n_are_refused() {
    let good = fixture("qd1-jsonplus.json");
    let text = good.replacen("\"2832\" : 1,", "\"2832\" : 2,", 1);
    assert_ne!(text, good);
    let e = err(&text);
    assert!(e.contains("jobs[0].write.clat_ns.bins sum to"), "{e}");
    let text = good.replacen("\"2832\" : 1,", "\"-5\" : 1,", 1);
    let e = err(&text);
    assert!(e.contains("is not a latency bin"), "{e}");
}

#[test]
fn a_file_over_the_cap_is_refused_before_parsing() {
    let big = " ".repeat(MAX_FIO_OUTPUT_BYTES as usize + 1);
    assert!(matches!(
        parse_fio_output(&big),
        Err(ImportError::TooLarge { .. })
    ));
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let text = format!(
        "{{\"jobs\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert!(err(&text).contains("invalid JSON"));
}

#[test]
fn a_repeated_key_keeps_its_last_value() {
    let text = r#"{"fio version": "fio-3.33", "global options": {"bs": "8k", "bs": "4k"},
      "jobs": [{"jobname": "j", "job options": {"fsync": "2", "fsync": "1"},
        "write": {"total_ios": 10, "io_bytes": 40960, "runtime": 5, "iops": 2000.0,
                  "bw_bytes": 8192000, "clat_ns": {"N": 10, "min": 1, "max": 9, "mean": 5.0}}}]}"#;
    let out = parse_fio_output(text).unwrap();
    let options = &out.runs[0].origin.job_options;
    assert_eq!(
        (options["bs"].as_str(), options["fsync"].as_str()),
        ("4k", "1")
    );
    assert_eq!(out.runs[0].result.spec.flat().block_size, 4096);
}

#[test]
fn fields_other_versions_omit_are_optional_and_the_ones_read_are_named() {
    // No sync section, no bw_bytes (fio before 3.0 printed bw in KiB/s), no percentiles,
    // no timestamp, no version.
    let text = r#"{"jobs": [{"jobname": "old", "write": {"total_ios": 4, "io_bytes": 16384,
        "runtime": 2, "iops": 2000.0, "bw": 8000, "clat_ns": {"N": 4, "min": 1, "max": 2,
        "mean": 1.5}}}]}"#;
    let out = parse_fio_output(text).unwrap();
    let r = &out.runs[0].result;
    assert_eq!((r.writes, r.syncs, r.started_at_ms), (4, 0, 0));
    assert_eq!(
        r.reported.as_ref().unwrap().bw_bytes_per_sec,
        8000.0 * 1024.0
    );
    assert_eq!(out.tool_version, None);
    // fio 2.x wrote clat in µs: its absence is named with the fix.
    let e = err(&text.replace("clat_ns", "clat"));
    assert!(e.contains("jobs[0].write.clat_ns is missing"), "{e}");
}

#[test]
fn a_bare_nan_fio_printed_is_null_ignored_where_unused_and_named_where_needed() {
    let good = fixture("A-ext4.out");
    // bw_dev is not read: the file imports with the same figures.
    let unused = good.replacen("\"bw_dev\" : ", "\"bw_dev\" : -nan, \"was\" : ", 2);
    assert_ne!(unused, good);
    let runs = parse_fio_output(&unused).unwrap().runs;
    assert_eq!(
        runs[0].result.writes,
        parse_fio_output(&good).unwrap().runs[0].result.writes
    );
    // A field the importer needs: refused naming its path.
    let needed = good.replacen("\"total_ios\" : 16384", "\"total_ios\" : nan", 1);
    assert_ne!(needed, good);
    let e = err(&needed);
    assert!(e.contains("jobs[0].write.total_ios"), "{e}");
}
