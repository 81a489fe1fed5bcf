//! Tests of the raw exporters (`report::raw`) on runs stored and loaded back.

use super::*;
use crate::probe::SystemInfo;
use crate::spec::FlatSpec;
use crate::store::{NewRun, Store};
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

fn new_run(label: &str) -> NewRun {
    let spec = FlatSpec {
        requests: Some(200),
        duration_s: None,
        interval_ms: 10,
        ..FlatSpec::default()
    }
    .typed();
    NewRun {
        label: Some(label.into()),
        tags: vec!["nvme".into()],
        ..NewRun::new(spec, SystemInfo::default(), "/mnt/t")
    }
}

/// A finished fake run labelled `label` and a failed one, loaded back.
fn runs(label: &str) -> Vec<StoredRun> {
    let store = Store::open_in_memory().unwrap();
    let new = new_run(label);
    let id = store.begin_run(&new).unwrap();
    let r = crate::engine::fake_run(
        id,
        vec![4_000, 6_000],
        vec![150_000, 300_000, 900_000],
        &new.spec,
        new.system.clone(),
    )
    .unwrap();
    store.finish_run(&r).unwrap();
    let failed = store.begin_run(&new_run("broken")).unwrap();
    store
        .fail_run(
            failed,
            &crate::metrics::Recorded::Text("disk vanished".into()),
        )
        .unwrap();
    vec![store.load_run(id).unwrap(), store.load_run(failed).unwrap()]
}

#[test]
fn formats_parse_by_their_exact_names() {
    for name in RAW_FORMATS {
        assert!(RawFormat::parse(name).is_some(), "{name}");
    }
    assert_eq!(RawFormat::parse("JSON"), None);
    assert_eq!(RawFormat::parse("bundle"), None);
}

#[test]
fn json_keeps_everything_and_histograms_decode() {
    let runs = runs("base");
    let mut out = Vec::new();
    runs_json(&runs, &mut out).unwrap();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["fsynclab_version"], env!("CARGO_PKG_VERSION"));
    let [ok, failed] = doc["runs"].as_array().unwrap().as_slice() else {
        panic!("two runs expected: {doc}")
    };
    assert_eq!(ok["label"], "base");
    assert_eq!(ok["spec"]["requests"], 200);
    let r = runs[0].result.as_ref().unwrap();
    assert_eq!(ok["result"]["summary"]["syncs"], r.syncs);
    let sync = &ok["result"]["histograms"]["sync"];
    assert_eq!(sync["count"], r.syncs);
    let b64 = sync["hdr_v2_deflate_base64"].as_str().unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    assert_eq!(LatencyHistogram::from_bytes(&bytes).unwrap(), r.sync_lat);
    assert_eq!(sync["percentiles_ns"][1]["percentile"], 50.0);
    assert_eq!(
        sync["percentiles_ns"][1]["value_ns"],
        r.sync_lat.percentile_ns(50.0)
    );
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["error"], "disk vanished");
    assert!(failed["result"].is_null());
}

#[test]
fn csv_guards_formulas_and_leaves_failed_figures_empty() {
    assert_eq!(csv_text("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
    for bad in ["+1", "-1", "@SUM(A1)", "\tx"] {
        assert!(csv_text(bad).starts_with('\''), "{bad:?}");
    }
    // A carriage return is escaped (issue 31), which no spreadsheet reads as a formula.
    assert_eq!(csv_text("\rx"), "\\u000dx");
    assert_eq!(csv_text("base"), "base");
    let runs = runs("=cmd|' /C calc'!A0");
    let mut out = Vec::new();
    runs_csv(&runs, &mut out).unwrap();
    let mut rd = csv::Reader::from_reader(out.as_slice());
    let header: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header, RUNS_CSV_HEADER);
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2);
    let col = |name: &str| RUNS_CSV_HEADER.iter().position(|h| *h == name).unwrap();
    assert_eq!(&rows[0][col("label")], "'=cmd|' /C calc'!A0");
    let r = runs[0].result.as_ref().unwrap();
    assert_eq!(rows[0][col("syncs")].parse::<u64>().unwrap(), r.syncs);
    assert_eq!(&rows[1][col("status")], "failed");
    assert_eq!(&rows[1][col("syncs")], "");
    assert_eq!(&rows[1][col("sync_p99_us")], "");
}

#[test]
fn intervals_csv_has_a_row_per_sample() {
    let runs = runs("base");
    let mut out = Vec::new();
    intervals_csv(&runs, &mut out).unwrap();
    let mut rd = csv::Reader::from_reader(out.as_slice());
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    let r = runs[0].result.as_ref().unwrap();
    assert!(!r.intervals.is_empty());
    assert_eq!(rows.len(), r.intervals.len());
    let writes: u64 = rows.iter().map(|row| row[3].parse::<u64>().unwrap()).sum();
    assert_eq!(writes, r.intervals.iter().map(|s| s.writes).sum::<u64>());
    assert!(
        rows.iter()
            .all(|row| &row[0] == runs[0].row.id.to_string().as_str())
    );
}

#[test]
fn hlog_reads_back_with_equal_counts() {
    let runs = runs("base");
    let mut out = Vec::new();
    hlog(&runs, &mut out).unwrap();
    let text = String::from_utf8(out.clone()).unwrap();
    assert!(text.contains("no result (failed)"), "{text}");
    let r = runs[0].result.as_ref().unwrap();
    let id = runs[0].row.id;
    let mut seen = Vec::new();
    for entry in IntervalLogIterator::new(&out) {
        if let LogEntry::Interval(ilh) = entry.unwrap() {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(ilh.encoded_histogram())
                .unwrap();
            let h: Histogram<u64> = Deserializer::new()
                .deserialize(&mut io::Cursor::new(bytes))
                .unwrap();
            let tag = ilh.tag().unwrap().as_str().to_string();
            // The log keeps seconds to the millisecond.
            let want = Duration::from_nanos(r.wall_ns).as_secs_f64();
            assert!((ilh.duration().as_secs_f64() - want).abs() <= 0.001);
            seen.push((tag, h.len()));
        }
    }
    assert_eq!(
        seen,
        [
            (hlog_tag(id, "write"), r.write_lat.count()),
            (hlog_tag(id, "sync"), r.sync_lat.count()),
            (
                hlog_tag(id, "durable"),
                r.durable_lat.as_ref().map_or(0, |h| h.count())
            )
        ]
    );
    assert_eq!(hlog_tag(3, "op-open file"), "run3-op-open_file");
}

#[test]
fn csv_text_escapes_control_characters_and_defuses_formulas() {
    // Issue 31: a label with ESC/OSC/BEL (from an old bundle) went into CSV raw.
    assert_eq!(csv_text("a\u{1b}]0;x\u{7}"), "a\\u001b]0;x\\u0007");
    assert_eq!(csv_text("=1+1"), "'=1+1");
    assert_eq!(csv_text("nossd"), "nossd");
}

/// Typed outcomes keep the JSON shapes of the release before (issue 32): `list --json`'s
/// rows and the raw export say the failure in words with its code beside it, and a run's
/// `system` gives its device note and warnings as sentences.
#[test]
fn typed_outcomes_are_worded_in_rows_exports_and_system_objects() {
    use crate::metrics::{IoFailure, RunFailure, RunWarning};
    use crate::probe::NoDevice;
    let store = Store::open_in_memory().unwrap();
    let mut new = new_run("typed");
    new.system.device_note = Some(
        NoDevice::Anonymous {
            fs_type: "tmpfs".into(),
            source: "tmpfs".into(),
            minor: 1,
        }
        .into(),
    );
    new.system.warnings = vec![
        RunWarning::MemoryFilesystem {
            fs_type: "tmpfs".into(),
        }
        .into(),
    ];
    let id = store.begin_run(&new).unwrap();
    let e = std::io::Error::from_raw_os_error(libc::ENOSPC);
    let failure = RunFailure::Prepare(IoFailure::new(
        crate::spec::WorkloadKind::Fileio,
        "fallocate",
        "/mnt/t/fsynclab-1/thread-0.dat".into(),
        None,
        &e,
        false,
    ));
    store.fail_run(id, &failure.into()).unwrap();
    let stored = store.load_run(id).unwrap();
    let row = crate::report::row_json(&stored.row);
    let error = row["error"].as_str().unwrap();
    assert!(
        error.starts_with("no space left on device during fallocate"),
        "{row}"
    );
    assert_eq!(row["error_code"], "prepare");
    let system = crate::report::system_json(&stored.system);
    assert_eq!(
        system["device_note"],
        "tmpfs has no block device (memory filesystem)"
    );
    assert!(
        system["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("target is on tmpfs")
    );
    let mut out = Vec::new();
    runs_json(std::slice::from_ref(&stored), &mut out).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["runs"][0]["error"], error);
    assert_eq!(doc["runs"][0]["error_code"], "prepare");
    assert_eq!(doc["runs"][0]["system"], system);
}
