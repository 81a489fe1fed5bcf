//! The kernel settings recorded with every run (issue 14): a real run stores them, `show`
//! prints them and `show --json` has `kernel_settings`; `compare` names the one setting
//! that differs in its "what differs" table (text, JSON, Markdown); runs stored before
//! they were recorded show nothing and compare as before.

use crate::common;

use crate::common::{Lab, json_of};
use assert_cmd::prelude::*;
use fsynclab::probe::{DirtySettings, KernelSettings, QueueSettings, SystemInfo};

/// The settings recorded on the lab VM (tests/fixtures/probe/kernel), `dirty_ratio` given.
fn lab_vm(dirty_ratio: u64) -> KernelSettings {
    KernelSettings {
        hz: Some(250),
        hz_source: Some("/proc/config.gz".into()),
        preempt: Some("none".into()),
        preempt_source: Some("default of a dynamic kernel's config".into()),
        preempt_dynamic: Some(true),
        cmdline: Some("console=ttyS0 quiet".into()),
        vm: DirtySettings {
            dirty_ratio: Some(dirty_ratio),
            dirty_background_ratio: Some(10),
            dirty_bytes: Some(0),
            dirty_background_bytes: Some(0),
            dirty_expire_centisecs: Some(3000),
            dirty_writeback_centisecs: Some(500),
        },
        queue: Some(QueueSettings {
            device: "vda".into(),
            wbt_lat_usec: Some(75_000),
            nr_requests: Some(256),
            max_sectors_kb: Some(4096),
            rq_affinity: Some(1),
        }),
        ..KernelSettings::default()
    }
}

/// Stores a finished run of the scripted fake engine with `settings`, through the store API.
fn store_run(lab: &Lab, label: &str, settings: Option<KernelSettings>) -> i64 {
    let system = SystemInfo {
        kernel_release: Some("6.18.44".into()),
        kernel_settings: settings,
        ..SystemInfo::default()
    };
    common::store_fake_run(&lab.db, &lab.target, label, system)
}

fn stdout(lab: &Lab, args: &[&str]) -> String {
    let out = lab.cmd().args(args).output().expect("run fsynclab");
    assert!(
        out.status.success(),
        "fsynclab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The lines of the text comparison's `differs:` block.
fn differs_block(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| *l != "differs:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn a_run_stores_them_and_show_prints_them() {
    let lab = Lab::new();
    let run = lab.run_json(&["--file-size", "128k"]);
    let settings = &run["kernel_settings"];
    assert!(settings.is_object(), "run --json: {run}");
    let id = run["id"].to_string();
    let show = json_of(
        &lab.cmd()
            .args(["show", &id, "--json"])
            .output()
            .unwrap()
            .stdout,
    );
    let stored = &show["run"]["kernel_settings"];
    assert_eq!(stored, settings, "show --json has what run --json had");
    let sysctl = |name: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(format!("/proc/sys/vm/{name}")).expect("sysctl");
        serde_json::json!(text.trim().parse::<u64>().expect("number"))
    };
    for name in [
        "dirty_ratio",
        "dirty_expire_centisecs",
        "dirty_writeback_centisecs",
    ] {
        assert_eq!(stored["vm"][name], sysctl(name), "{name}");
    }
    let cmdline = std::fs::read_to_string("/proc/cmdline").expect("cmdline");
    assert_eq!(stored["cmdline"], cmdline.trim());
    match run["device"].as_str() {
        Some(device) => assert_eq!(stored["queue"]["device"], device),
        None => assert!(stored["queue"].is_null()),
    }
    // HZ from the config when the kernel publishes one (the lab VM does).
    if std::path::Path::new("/proc/config.gz").exists() {
        assert_eq!(stored["hz_source"], "/proc/config.gz");
        assert!(stored["hz"].as_u64().is_some_and(|hz| hz >= 24), "{stored}");
    } else {
        eprintln!(
            "no /proc/config.gz here: HZ source is {}",
            stored["hz_source"]
        );
    }
    let text = stdout(&lab, &["show", &id]);
    assert!(text.contains("\nkernel    HZ "), "{text}");
    assert!(text.contains("\nvm        dirty_ratio "), "{text}");
    assert!(text.contains("\ncmdline   "), "{text}");
}

#[test]
fn compare_names_the_one_setting_that_differs() {
    let lab = Lab::new();
    for _ in 0..2 {
        store_run(&lab, "before", Some(lab_vm(20)));
        store_run(&lab, "after", Some(lab_vm(40)));
    }
    let text = stdout(&lab, &["compare", "before", "after"]);
    let differs = differs_block(&text);
    let kernel_rows: Vec<&String> = differs
        .iter()
        .filter(|l| !l.starts_with("workload"))
        .collect();
    assert_eq!(kernel_rows, vec!["vm.dirty_ratio 20 → 40"], "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&lab, &["compare", "before", "after", "--json"])).unwrap();
    let rows = json["metadata"].as_array().expect("metadata rows");
    let row = |field: &str| rows.iter().find(|r| r["field"] == field).cloned();
    let dirty = row("vm.dirty_ratio").expect("a vm.dirty_ratio row");
    assert_eq!(
        (&dirty["baseline"], &dirty["candidate"], &dirty["differs"]),
        (&"20".into(), &"40".into(), &true.into())
    );
    let hz = row("HZ").expect("an HZ row");
    assert_eq!(
        (&hz["baseline"], &hz["differs"]),
        (&"250".into(), &false.into())
    );
    let md = stdout(&lab, &["compare", "before", "after", "--markdown"]);
    assert!(md.contains("| **vm.dirty_ratio** | 20 | 40 |"), "{md}");
}

#[test]
fn older_runs_show_nothing_and_compare_as_before() {
    let lab = Lab::new();
    let old = store_run(&lab, "old", None);
    let old2 = store_run(&lab, "old", None);
    for _ in 0..2 {
        store_run(&lab, "new", Some(lab_vm(20)));
    }
    let show = json_of(
        &lab.cmd()
            .args(["show", &old.to_string(), "--json"])
            .output()
            .unwrap()
            .stdout,
    );
    assert!(show["run"]["kernel_settings"].is_null(), "{show}");
    let text = stdout(&lab, &["show", &old.to_string()]);
    assert!(
        !text.contains("\nkernel    ") && !text.contains("\nvm  "),
        "{text}"
    );
    // Old against old (one run each: a side compared with itself is refused): no kernel
    // rows at all.
    let (a, b) = (old.to_string(), old2.to_string());
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&lab, &["compare", &a, &b, "--json"])).unwrap();
    assert!(
        json["metadata"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["field"] != "HZ"),
        "{json}"
    );
    // Old against new: the new side's values, "not recorded" beside them, no difference.
    let text = stdout(&lab, &["compare", "old", "new"]);
    assert!(
        differs_block(&text).is_empty(),
        "nothing differs but the settings' presence: {text}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&lab, &["compare", "old", "new", "--json"])).unwrap();
    let hz = json["metadata"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["field"] == "HZ")
        .cloned()
        .expect("HZ row");
    assert_eq!(hz["baseline"], "not recorded");
    assert_eq!(hz["candidate"], "250");
    lab.cmd().args(["compare", "old", "new"]).assert().success();
}
