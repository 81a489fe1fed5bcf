//! `--ioengine io_uring` end to end through the CLI: a real run on a temp directory
//! (writes, linked syncs, registered buffers), the mean depth in `show`, and bad input
//! refused with exit 2 naming the option.

use crate::common;

use crate::common::Lab;

fn run_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "--ioengine",
        "io_uring",
        "--bs",
        "4k",
        "--file-size",
        "1M",
        "--io-size",
        "512k",
        "--threads",
        "2",
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn an_io_uring_run_counts_like_fio_and_reports_its_depth() {
    let lab = Lab::new();
    let run = lab.run_json(&run_args(&["--iodepth", "8", "--link-sync", "--fixedbufs"]));
    assert_eq!(run["status"], "finished", "{run}");
    let w = &run["workload"];
    assert_eq!(
        (w["ioengine"].as_str(), w["iodepth"].as_u64()),
        (Some("io_uring"), Some(8))
    );
    assert_eq!(
        (w["link_sync"].as_bool(), w["fixedbufs"].as_bool()),
        (Some(true), Some(true))
    );
    // 128 writes per thread; as fio, no periodic sync after a thread's last write.
    assert_eq!(
        (run["writes"].as_u64(), run["syncs"].as_u64()),
        (Some(256), Some(254))
    );
    let depth = run["inflight_mean"].as_f64().expect("a depth");
    assert!(depth > 0.0 && depth <= 8.0, "{depth}");
    let id = run["id"].as_i64().unwrap().to_string();
    let show = lab.cmd().args(["show", &id]).output().unwrap();
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(
        text.contains("io_uring depth 8") && text.contains("requests in flight"),
        "{text}"
    );
    let json = lab.cmd().args(["show", &id, "--json"]).output().unwrap();
    let doc = common::json_of(&json.stdout);
    let intervals = doc["run"]["intervals"].as_array().expect("intervals");
    assert!(
        intervals.iter().all(|i| i["inflight"].as_f64().is_some()),
        "{doc}"
    );
    assert!(lab.target_entries().is_empty());
}

#[test]
fn every_sync_method_runs_on_the_ring() {
    let lab = Lab::new();
    for sync in ["fsync", "fdatasync", "sync_file_range"] {
        let run = lab.run_json(&run_args(&["--iodepth", "4", "--sync", sync]));
        assert_eq!(run["status"], "finished", "{sync}: {run}");
        assert_eq!(run["syncs"].as_u64(), Some(254), "{sync}");
    }
}

#[test]
fn an_unordered_run_is_recorded_and_shown() {
    let lab = Lab::new();
    let run = lab.run_json(&run_args(&["--iodepth", "8", "--sync-order", "unordered"]));
    assert_eq!(run["status"], "finished", "{run}");
    assert_eq!(run["workload"]["sync_order"].as_str(), Some("unordered"));
    // The same counts as ordered: only when each sync is issued changes.
    assert_eq!(
        (run["writes"].as_u64(), run["syncs"].as_u64()),
        (Some(256), Some(254))
    );
    let id = run["id"].as_i64().unwrap().to_string();
    let show = lab.cmd().args(["show", &id]).output().unwrap();
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(text.contains("unordered syncs"), "{text}");
    // --set reaches the same field.
    let run = lab.run_json(&run_args(&[
        "--iodepth",
        "2",
        "--set",
        "sync_order=unordered",
    ]));
    assert_eq!(run["workload"]["sync_order"].as_str(), Some("unordered"));
}

#[test]
fn a_synchronous_run_has_no_depth() {
    let lab = Lab::new();
    let run = lab.run_json(&["--file-size", "256k"]);
    assert!(run["inflight_mean"].is_null(), "{run}");
    assert!(
        run["workload"].get("ioengine").is_none(),
        "sync specs serialize as before"
    );
}

#[test]
fn bad_engine_input_exits_2_naming_the_option() {
    let lab = Lab::new();
    let cases: [(&[&str], &str); 9] = [
        (&["--ioengine", "libaio"], "--ioengine"),
        (&["--iodepth", "4"], "--ioengine io_uring"),
        (&["--link-sync"], "--ioengine io_uring"),
        (&["--ioengine", "io_uring", "--iodepth", "0"], "iodepth"),
        (&["--ioengine", "io_uring", "--link-sync"], "--iodepth 2"),
        // Unordered syncs: io_uring only, not linked, a sync to order, a known name.
        (&["--sync-order", "unordered"], "--sync-order"),
        (
            &[
                "--ioengine",
                "io_uring",
                "--iodepth",
                "4",
                "--link-sync",
                "--sync-order",
                "unordered",
            ],
            "--sync-order",
        ),
        (
            &[
                "--ioengine",
                "io_uring",
                "--sync",
                "none",
                "--sync-order",
                "unordered",
            ],
            "--sync-order",
        ),
        (
            &["--ioengine", "io_uring", "--sync-order", "loose"],
            "--sync-order",
        ),
    ];
    for (args, named) in cases {
        let out = lab
            .cmd()
            .args(["run", "--quiet", "--target"])
            .arg(&lab.target)
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(named), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    assert!(lab.target_entries().is_empty());
}
