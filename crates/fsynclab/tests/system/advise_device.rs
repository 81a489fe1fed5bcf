//! `fsynclab advise --device` end to end (root, a loop device over a temporary image, never
//! a real disk): refused as `run --device` is (no confirmation, a range past the end; nothing
//! stored, the image unchanged); confirmed, the quick plan's sync figures of the bare device
//! — sync parallelism over own regions, the methods a device can do, no strategies — written
//! only inside [offset, offset + 64 MiB), stored and shown again.

use crate::rawdev::{Devices, sum};
use crate::scratch_common::root_or_skip;

const MIB: usize = 1 << 20;

#[test]
fn advise_on_a_bare_device_measures_its_syncs_inside_the_range_only() {
    if !root_or_skip("advise_on_a_bare_device_measures_its_syncs_inside_the_range_only") {
        return;
    }
    let mut d = Devices::new();
    let (node, image) = d.attach_len("advise.img", false, 96 << 20);
    let lab = crate::common::Lab::new();
    let advise = |extra: &[&str]| {
        lab.cmd()
            .args(["advise", "--quick", "--quiet", "--json", "--device", &node])
            .args(extra)
            .output()
            .unwrap()
    };
    // Refused before anything is written or stored.
    let before = sum(&image);
    for (extra, words) in [
        (vec![], "--destroy-data-on"),
        (
            vec!["--destroy-data-on", "/dev/loop-not-it"],
            "does not match",
        ),
        (
            vec!["--destroy-data-on", node.as_str(), "--offset", "40M"],
            "end past the end",
        ),
    ] {
        let out = advise(&extra);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(words), "{extra:?}: {stderr}");
    }
    assert_eq!(sum(&image), before, "a refused advice wrote");
    if lab.db.exists() {
        let store = fsynclab::store::Store::open(&lab.db).unwrap();
        assert!(store.list_runs(&Default::default()).unwrap().is_empty());
        assert!(store.list_advice().unwrap().is_empty());
    }

    // Confirmed, from 16 MiB: 16 threads × 4 MiB at most.
    let before = std::fs::read(&image).unwrap();
    let out = advise(&["--destroy-data-on", node.as_str(), "--offset", "16M"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "advise --device failed: {stderr}");
    let after = std::fs::read(&image).unwrap();
    let (start, end) = (16 * MIB, 80 * MIB);
    assert!(
        after[..start] == before[..start],
        "written before the range"
    );
    assert!(after[end..] == before[end..], "written after the range");
    assert!(after[start..end] != before[start..end], "nothing written");

    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let advice = &doc["advice"];
    assert_eq!(advice["raw_device"], true, "{advice}");
    assert_eq!(advice["target"], node.as_str());
    assert!(advice["fs_type"].is_null());
    assert_eq!(advice["points"], serde_json::json!([]));
    assert_eq!(advice["recommended"]["verdict"], "nothing");
    assert!(
        advice["recommended"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("bare block device")),
        "{advice}"
    );
    assert!(advice["sync_parallelism"].is_null(), "no shared file");
    let own = &advice["sync_parallelism_own_files"];
    assert!(
        ["serialized", "partial", "overlapping"].contains(&own["class"].as_str().unwrap()),
        "{own}"
    );
    let methods: Vec<&str> = advice["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["method"].as_str().unwrap())
        .collect();
    for m in [
        "fdatasync",
        "fsync",
        "o_dsync",
        "sync_file_range_fdatasync",
        "fsync_empty",
    ] {
        assert!(methods.contains(&m), "{m} not in {methods:?}");
    }
    assert!(!methods.contains(&"fdatasync_append"), "{methods:?}");

    // Stored: its runs record the device, the text says what it measured.
    let id = doc["advice_id"].as_i64().unwrap().to_string();
    let shown = lab.cmd().args(["advise", "--show", &id]).output().unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("(bare block device)"), "{text}");
    assert!(text.contains("own regions"), "{text}");
    assert!(
        text.contains("Group-commit strategies: not measured"),
        "{text}"
    );
    let experiment = doc["experiment_id"].as_i64().unwrap().to_string();
    let runs = lab
        .cmd()
        .args(["list", "--json", "--experiment", &experiment])
        .output()
        .unwrap();
    let runs: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    // k = 1, 4, 16 × own regions × 2, and 6 methods × 3 (io_uring's left out where the
    // kernel refuses it).
    let n = runs["runs"].as_array().map_or(0, Vec::len);
    assert!(n == 6 + 18 || n == 6 + 15, "{n} runs");
}
