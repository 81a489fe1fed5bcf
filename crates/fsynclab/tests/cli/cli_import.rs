//! `fsynclab import` end to end on the real fio 3.33 fixtures: figures after import equal
//! fio's own, imported runs compare (a real before/after: ext4 vs btrfs), re-import is
//! detected, hostile files exit 2 naming the file and the field.

use crate::common;

use std::path::PathBuf;

use crate::common::{Lab, json_of};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/fixtures/fio")
        .join(name)
}

/// fio's JSON object of a fixture (client mode's leading text skipped).
fn raw(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap()
}

/// `import FILE...` that must succeed: its stdout and stderr.
fn import_ok(lab: &Lab, args: &[&std::ffi::OsStr]) -> (String, String) {
    let out = lab.cmd().arg("import").args(args).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    );
    assert!(out.status.success(), "{stderr}");
    (stdout, stderr)
}

/// The run ids of `stored run N: ...` lines.
fn stored_ids(stdout: &str) -> Vec<i64> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("stored run "))
        .map(|l| l.split(':').next().unwrap().parse().unwrap())
        .collect()
}

fn show_json(lab: &Lab, id: i64) -> serde_json::Value {
    let out = lab
        .cmd()
        .args(["show", "--json", &id.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success());
    common::payload(&out.stdout, "run")
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= b.abs() * rel + 1e-9
}

#[test]
fn every_fixture_imports_and_shows_fios_figures() {
    let lab = Lab::new();
    let names = [
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
    for name in names {
        let (stdout, _) = import_ok(&lab, &[fixture(name).as_os_str()]);
        let ids = stored_ids(&stdout);
        let root = raw(name);
        let entries: Vec<&serde_json::Value> = ["jobs", "client_stats"]
            .iter()
            .filter_map(|k| root.get(*k).and_then(|v| v.as_array()))
            .flatten()
            .filter(|e| e["jobname"] != "All clients")
            .collect();
        assert_eq!(ids.len(), entries.len(), "{name}: {stdout}");
        for (id, e) in ids.iter().zip(entries) {
            let shown = show_json(&lab, *id);
            let w = &e["write"];
            assert_eq!(shown["kind"], "fio");
            assert_eq!(shown["status"], "finished");
            assert_eq!(shown["writes"], w["total_ios"]);
            assert_eq!(shown["bytes"], w["io_bytes"]);
            assert_eq!(shown["syncs"], e["sync"]["lat_ns"]["N"]);
            assert!(close(
                shown["iops"].as_f64().unwrap(),
                w["iops"].as_f64().unwrap(),
                1e-9
            ));
            let bw = shown["mib_per_sec"].as_f64().unwrap() * 1048576.0;
            assert!(
                (bw - w["bw_bytes"].as_f64().unwrap()).abs() <= 1.0,
                "{name}"
            );
            assert_eq!(shown["reported"]["iops"], w["iops"]);
            assert_eq!(shown["sync_lat_us"]["count"], e["sync"]["lat_ns"]["N"]);
            assert_eq!(shown["write_lat_us"]["count"], w["clat_ns"]["N"]);
            // Percentiles: fio's exactly (plain JSON) or within the histogram's 0.1%.
            let json_plus = w["clat_ns"].get("bins").is_some();
            assert_eq!(shown["has_histograms"], json_plus);
            let rel = if json_plus { 1e-3 } else { 0.0 };
            for (lat, fio) in [
                ("write_lat_us", &w["clat_ns"]),
                ("sync_lat_us", &e["sync"]["lat_ns"]),
            ] {
                for (key, pct) in [
                    ("p50", "50.000000"),
                    ("p99", "99.000000"),
                    ("p999", "99.900000"),
                ] {
                    let ours = shown[lat][key].as_f64().unwrap() * 1e3;
                    let theirs = fio["percentile"][pct].as_f64().unwrap();
                    assert!(
                        close(ours, theirs, rel),
                        "{name} {lat} {key}: {ours} vs {theirs}"
                    );
                }
            }
            assert_eq!(shown["origin"]["kind"], "fio-import");
            assert_eq!(shown["origin"]["tool_version"], "fio-3.33");
            assert!(shown["origin"]["file"].as_str().unwrap().ends_with(name));
            assert_eq!(shown["device_flushes"], serde_json::Value::Null);
            let warnings = shown["warnings"].to_string();
            assert!(warnings.contains("machine facts unknown"), "{warnings}");
        }
    }
    // One experiment per file and host: client-json has two servers.
    let rows = common::payload(
        &lab.cmd()
            .args(["list", "--json", "--limit", "100"])
            .output()
            .unwrap()
            .stdout,
        "runs",
    );
    let experiments: std::collections::BTreeSet<i64> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["experiment_id"].as_i64().unwrap())
        .collect();
    // 6 single-host files + client-json(+) 2 hosts each + nogroup 1 host.
    assert_eq!(experiments.len(), 6 + 2 + 2 + 1);
    // The text show says which figures are fio's and what is missing.
    let out = lab.cmd().args(["show", "1"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("origin    fio-import"), "{text}");
    assert!(text.contains("as fio-3.33 reported it"), "{text}");
    assert!(text.contains("latency histograms: not available"), "{text}");
    assert!(text.contains("machine facts unknown"), "{text}");
}

#[test]
fn ext4_vs_btrfs_compares_as_a_real_before_after() {
    let lab = Lab::new();
    let (out, _) = import_ok(
        &lab,
        &[
            fixture("A-ext4.out").as_os_str(),
            "--label".as_ref(),
            "ext4".as_ref(),
        ],
    );
    assert_eq!(stored_ids(&out).len(), 1);
    import_ok(
        &lab,
        &[
            fixture("A-btrfs.out").as_os_str(),
            "--label".as_ref(),
            "btrfs".as_ref(),
        ],
    );
    let out = lab
        .cmd()
        .args(["compare", "--json", "ext4", "btrfs"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cmp = json_of(&out.stdout);
    let metric = |key: &str| {
        cmp["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["key"] == key)
            .unwrap()
            .clone()
    };
    let iops = metric("iops");
    let (b, c) = (
        iops["baseline_value"].as_f64().unwrap(),
        iops["candidate_value"].as_f64().unwrap(),
    );
    let fio_iops = raw("A-ext4.out")["jobs"][0]["write"]["iops"]
        .as_f64()
        .unwrap();
    assert!(close(b, fio_iops, 1e-9), "{b} vs fio's {fio_iops}");
    // btrfs is about 10× slower on this job.
    assert!((5.0..20.0).contains(&(b / c)), "{b} / {c}");
    let p99 = metric("sync_p99_us");
    assert!(
        p99["candidate_value"].as_f64().unwrap() > 5.0 * p99["baseline_value"].as_f64().unwrap()
    );
    // No cross-tool flag between two fio imports; the missing histograms are said.
    let warnings = cmp["warnings"].to_string();
    assert!(!warnings.contains("CROSS-TOOL"), "{warnings}");
    assert!(warnings.contains("fio's printed percentiles"), "{warnings}");
    let meta = cmp["metadata"].to_string();
    assert!(meta.contains("fio-3.33 (imported)"), "{meta}");
    // The report image of imported runs.
    let png = lab.dir.path().join("r.png");
    let out = lab
        .cmd()
        .args(["report", "ext4", "btrfs", "--out"])
        .arg(&png)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::metadata(&png).unwrap().len() > 10_000);
}

#[test]
fn an_imported_run_compares_with_a_fsynclab_run_flagged_cross_tool() {
    let lab = Lab::new();
    import_ok(
        &lab,
        &[
            fixture("seed000-jsonplus.json").as_os_str(),
            "--label".as_ref(),
            "fio".as_ref(),
        ],
    );
    // The same work as the seed-000 job fio ran (4 jobs, 4k random writes of 8 MiB files
    // that start empty (fallocate=none), fsync after every write), by fsynclab's engine.
    lab.run_json(&[
        "--prepare",
        "empty",
        "--threads",
        "4",
        "--bs",
        "4k",
        "--file-size",
        "8m",
        "--io-size",
        "8m",
        "--sync-every",
        "1",
        "--label",
        "lab",
    ]);
    let out = lab
        .cmd()
        .args(["compare", "--json", "fio", "lab"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cmp = json_of(&out.stdout);
    let warnings = cmp["warnings"].to_string();
    assert!(warnings.contains("CROSS-TOOL"), "{warnings}");
    // The imported job's options map to the same workload: not flagged as different.
    assert!(!warnings.contains("DIFFERENT WORKLOADS"), "{warnings}");
    let by = cmp["metadata"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["field"] == "measured by")
        .unwrap()
        .clone();
    assert_eq!(by["differs"], true);
    // Both have histograms: every latency headline exists on both sides.
    for m in cmp["metrics"].as_array().unwrap() {
        if m["key"] == "sync_p99_us" || m["key"] == "write_p50_us" || m["key"] == "iops" {
            assert!(
                m["baseline_value"].is_number() && m["candidate_value"].is_number(),
                "{m}"
            );
        }
    }
}

#[test]
fn importing_the_same_output_twice_is_detected() {
    let lab = Lab::new();
    let file = fixture("client-json.txt");
    let (out, err) = import_ok(&lab, &[file.as_os_str()]);
    assert_eq!(stored_ids(&out).len(), 2);
    assert!(err.contains("\"All clients\""), "{err}");
    let (out, err) = import_ok(&lab, &[file.as_os_str()]);
    assert!(stored_ids(&out).is_empty(), "{out}");
    assert_eq!(
        err.matches("already imported as run(s)").count(),
        2,
        "{err}"
    );
    assert!(err.contains("--force"), "{err}");
    let (out, _) = import_ok(&lab, &[file.as_os_str(), "--force".as_ref()]);
    assert_eq!(stored_ids(&out).len(), 2);
}

#[test]
fn labels_default_to_job_or_host_and_job() {
    let lab = Lab::new();
    let (out, _) = import_ok(
        &lab,
        &[
            fixture("client-json.txt").as_os_str(),
            fixture("qd1-jsonplus.json").as_os_str(),
        ],
    );
    assert!(out.contains("label 127.0.0.1:8766/writers"), "{out}");
    assert!(out.contains("label 127.0.0.1:8765/writers"), "{out}");
    assert!(out.contains("label qd1"), "{out}");
    // --label with several hosts keeps them apart: L/host.
    let (out, _) = import_ok(
        &lab,
        &[
            fixture("client-jsonplus.txt").as_os_str(),
            "--label".as_ref(),
            "fleet".as_ref(),
            "--tag".as_ref(),
            "x".as_ref(),
        ],
    );
    assert!(out.contains("label fleet/127.0.0.1:8766"), "{out}");
}

/// `import` that must fail with exit 2 and a message containing every `want`.
fn refused(lab: &Lab, path: &std::path::Path, want: &[&str]) {
    let out = lab.cmd().arg("import").arg(path).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}: {err}", path.display());
    for w in want {
        assert!(err.contains(w), "{}: want {w:?} in {err}", path.display());
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn hostile_files_exit_2_naming_the_file_and_field() {
    let lab = Lab::new();
    let dir = lab.dir.path();
    let good = std::fs::read_to_string(fixture("client-json.txt")).unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let truncated = write("truncated.json", &good[..good.len() / 3]);
    refused(
        &lab,
        &truncated,
        &["truncated.json", "invalid JSON at line"],
    );
    let huge = write(
        "huge.json",
        &good.replacen("\"total_ios\" : 8192", "\"total_ios\" : 1e30", 1),
    );
    refused(
        &lab,
        &huge,
        &[
            "huge.json",
            "client_stats[0].write.total_ios",
            "not a whole number",
        ],
    );
    let negative = write(
        "neg.json",
        &good.replacen("\"io_bytes\" : 33554432", "\"io_bytes\" : -1", 1),
    );
    refused(
        &lab,
        &negative,
        &["client_stats[0].write.io_bytes is negative"],
    );
    let wrong = write(
        "wrong.json",
        &good.replacen("\"runtime\" : 2241", "\"runtime\" : \"2241\"", 1),
    );
    assert_ne!(std::fs::read_to_string(&wrong).unwrap(), good);
    refused(
        &lab,
        &wrong,
        &["client_stats[0].write.runtime is a string, expected a whole number"],
    );
    let text = write(
        "text.txt",
        &std::fs::read_to_string(fixture("fio-jobA-tmpfs-normal.txt")).unwrap(),
    );
    refused(&lab, &text, &["text.txt", "not fio's JSON output"]);
    let other = write("other.json", "{\"runs\": [1, 2]}\n");
    refused(&lab, &other, &["other.json", "not fio's JSON output"]);
    refused(&lab, dir, &["directory, not a regular file"]);
    let link = dir.join("link.json");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    refused(&lab, &link, &["link.json", "character device"]);
    refused(
        &lab,
        std::path::Path::new("/dev/zero"),
        &["/dev/zero", "character device"],
    );
    refused(&lab, &dir.join("missing.json"), &["missing.json"]);
    // A bad file among good ones stores nothing.
    let out = lab
        .cmd()
        .arg("import")
        .arg(fixture("A-ext4.out"))
        .arg(&truncated)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let rows = common::payload(
        &lab.cmd().args(["list", "--json"]).output().unwrap().stdout,
        "runs",
    );
    assert!(rows.as_array().is_none_or(|r| r.is_empty()), "{rows}");
}

#[test]
fn fio_is_not_a_kind_to_run() {
    let lab = Lab::new();
    let out = lab
        .cmd()
        .args(["run", "--kind", "fio", "--target"])
        .arg(&lab.target)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("imported from fio"), "{err}");
}
