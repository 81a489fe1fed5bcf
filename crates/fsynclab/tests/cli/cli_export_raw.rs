//! Raw exports of a real database: fileio, grouplog, fileserver and smallfiles runs stored by
//! `fsynclab run`, and fio results stored by `fsynclab import` (plain JSON: percentiles
//! only; JSON+: histograms). Every format is read back by an independent reader: the JSON
//! by serde_json, the CSVs by the `csv` crate, the hlog by the hdrhistogram crate's
//! interval log iterator, with counts equal to the stored runs'.
//!
//! The exporters are driven through the library (`report::raw`) on the runs the store
//! loads; `fsynclab export --format ...` calls the same functions.

use std::path::PathBuf;

use crate::common::Lab;
use base64::Engine as _;
use fsynclab::report::raw::{self, RawFormat};
use fsynclab::store::{RunFilter, Store, StoredRun};
use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/fixtures/fio")
        .join(name)
}

/// A lab with one run of each kind and two fio imports; its runs, oldest first.
fn lab_with_every_kind() -> (Lab, Vec<StoredRun>) {
    let lab = Lab::new();
    lab.run_json(&["--file-size", "64k", "--label", "=fileio"]);
    lab.run_json(&[
        "--kind",
        "grouplog",
        "--threads",
        "2",
        "--strategy",
        "leader",
        "--sync",
        "fdatasync",
        "--requests",
        "40",
        "--label",
        "grouplog",
    ]);
    lab.run_json(&[
        "--preset",
        "xfs-cil-dbench",
        "--scale",
        "0.01",
        "--label",
        "fileserver",
    ]);
    lab.run_json(&[
        "--kind",
        "smallfiles",
        "--threads",
        "1",
        "--files",
        "20",
        "--file-size",
        "4k",
        "--label",
        "smallfiles",
    ]);
    for file in ["A-ext4.out", "qd1-jsonplus.json"] {
        let out = lab.cmd().arg("import").arg(fixture(file)).output().unwrap();
        assert!(
            out.status.success(),
            "import {file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let store = Store::open_read_only(&lab.db).unwrap();
    let mut rows = store.list_runs(&RunFilter::default()).unwrap();
    rows.sort_by_key(|r| r.id);
    let runs: Vec<StoredRun> = rows.iter().map(|r| store.load_run(r.id).unwrap()).collect();
    let kinds: Vec<&str> = runs.iter().map(|r| r.row.kind.as_str()).collect();
    for kind in ["fileio", "grouplog", "fileserver", "smallfiles", "fio"] {
        assert!(kinds.contains(&kind), "{kind} missing: {kinds:?}");
    }
    (lab, runs)
}

fn export(format: RawFormat, runs: &[StoredRun]) -> Vec<u8> {
    let mut out = Vec::new();
    format.write(runs, &mut out).unwrap();
    out
}

#[test]
fn every_format_reads_back_with_the_stored_figures() {
    let (_lab, runs) = lab_with_every_kind();

    // JSON: one document per run; histograms decode to the stored ones.
    let doc: Value = serde_json::from_slice(&export(RawFormat::Json, &runs)).unwrap();
    assert_eq!(doc["schema_version"], raw::RAW_JSON_SCHEMA_VERSION);
    let docs = doc["runs"].as_array().unwrap();
    assert_eq!(docs.len(), runs.len());
    for (d, run) in docs.iter().zip(&runs) {
        let r = run.result.as_ref().unwrap();
        assert_eq!(d["id"], run.row.id);
        assert_eq!(d["kind"], run.row.kind);
        assert_eq!(d["result"]["summary"]["writes"], r.writes);
        assert_eq!(
            d["result"]["intervals"].as_array().unwrap().len(),
            r.intervals.len()
        );
        let h = &d["result"]["histograms"];
        if r.has_histograms() {
            let b64 = h["sync"]["hdr_v2_deflate_base64"].as_str().unwrap();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap();
            let back: Histogram<u64> = Deserializer::new()
                .deserialize(&mut std::io::Cursor::new(bytes))
                .unwrap();
            assert_eq!(back.len(), r.sync_lat.count(), "run {}", run.row.id);
            assert_eq!(h["ops"].as_array().unwrap().len(), r.ops.len());
        } else {
            assert!(h.is_null(), "fio JSON import: percentiles only");
            assert_eq!(d["origin"]["kind"], "fio-import");
        }
    }

    // CSV: a row per run, parsed back by the csv crate; the formula label is guarded.
    let csv_bytes = export(RawFormat::Csv, &runs);
    let mut rd = csv::Reader::from_reader(csv_bytes.as_slice());
    assert_eq!(rd.headers().unwrap(), raw::RUNS_CSV_HEADER.as_slice());
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), runs.len());
    let col = |name: &str| {
        raw::RUNS_CSV_HEADER
            .iter()
            .position(|h| *h == name)
            .unwrap()
    };
    for (row, run) in rows.iter().zip(&runs) {
        let r = run.result.as_ref().unwrap();
        assert_eq!(row[col("id")].parse::<i64>().unwrap(), run.row.id);
        assert_eq!(&row[col("kind")], run.row.kind);
        assert_eq!(row[col("writes")].parse::<u64>().unwrap(), r.writes);
        assert_eq!(row[col("syncs")].parse::<u64>().unwrap(), r.syncs);
        assert!(row[col("sync_p99_us")].parse::<f64>().is_ok());
    }
    assert_eq!(&rows[0][col("label")], "'=fileio");

    // Intervals CSV: one row per sample, per run.
    let iv = export(RawFormat::IntervalsCsv, &runs);
    let mut rd = csv::Reader::from_reader(iv.as_slice());
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    for run in &runs {
        let r = run.result.as_ref().unwrap();
        let id = run.row.id.to_string();
        let mine: Vec<_> = rows.iter().filter(|row| &row[0] == id.as_str()).collect();
        assert_eq!(mine.len(), r.intervals.len(), "run {id}");
        let writes: u64 = mine.iter().map(|row| row[3].parse::<u64>().unwrap()).sum();
        assert_eq!(writes, r.intervals.iter().map(|s| s.writes).sum::<u64>());
    }

    // hlog: read back by the crate's iterator, equal counts per tag.
    let log = export(RawFormat::Hlog, &runs);
    let mut seen = std::collections::BTreeMap::new();
    for entry in IntervalLogIterator::new(&log) {
        if let LogEntry::Interval(ilh) = entry.unwrap() {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(ilh.encoded_histogram())
                .unwrap();
            let h: Histogram<u64> = Deserializer::new()
                .deserialize(&mut std::io::Cursor::new(bytes))
                .unwrap();
            seen.insert(ilh.tag().unwrap().as_str().to_string(), h.len());
        }
    }
    let text = String::from_utf8_lossy(&log);
    for run in &runs {
        let r = run.result.as_ref().unwrap();
        let id = run.row.id;
        if !r.has_histograms() {
            assert!(!seen.contains_key(&raw::hlog_tag(id, "write")));
            assert!(text.contains(&format!("#run {id}: imported without histograms")));
            continue;
        }
        assert_eq!(seen[&raw::hlog_tag(id, "write")], r.write_lat.count());
        assert_eq!(seen[&raw::hlog_tag(id, "sync")], r.sync_lat.count());
        for op in &r.ops {
            let tag = raw::hlog_tag(id, &format!("op-{}", op.op));
            assert_eq!(seen[&tag], op.lat.count(), "{tag}");
        }
    }
}

/// `fsynclab export --format F` (stdout, or --out).
fn export_cli(lab: &Lab, args: &[&str]) -> std::process::Output {
    lab.cmd().arg("export").args(args).output().unwrap()
}

#[test]
fn the_export_command_writes_every_raw_format() {
    let (lab, runs) = lab_with_every_kind();
    // Each format on stdout is what the library writes for the same runs.
    for (name, format) in [
        ("json", RawFormat::Json),
        ("csv", RawFormat::Csv),
        ("intervals-csv", RawFormat::IntervalsCsv),
        ("hlog", RawFormat::Hlog),
    ] {
        let out = export_cli(&lab, &["--all", "--format", name]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout, export(format, &runs), "{name}");
    }
    // A selection: one label's runs only; the uuid column is filled.
    let out = export_cli(&lab, &["--label", "grouplog", "--format", "csv"]);
    assert!(out.status.success());
    let mut rd = csv::Reader::from_reader(out.stdout.as_slice());
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(&rows[0][5], "grouplog");
    assert_eq!(rows[0][1].len(), 36, "a uuid: {:?}", &rows[0][1]);

    // --out: written once, refused without --force, replaced with it.
    let file = lab.dir.path().join("runs.csv");
    let out = export_cli(
        &lab,
        &["--all", "--format", "csv", "--out", file.to_str().unwrap()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&file).unwrap(), export(RawFormat::Csv, &runs));
    let again = export_cli(
        &lab,
        &["--all", "--format", "hlog", "--out", file.to_str().unwrap()],
    );
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    let forced = export_cli(
        &lab,
        &[
            "--all",
            "--format",
            "hlog",
            "--force",
            "--out",
            file.to_str().unwrap(),
        ],
    );
    assert!(forced.status.success());
    assert!(std::fs::read(&file).unwrap().starts_with(b"#fsynclab"));

    // An unknown format is a usage error naming the formats.
    let bad = export_cli(&lab, &["--all", "--format", "xml"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("intervals-csv"));
}
