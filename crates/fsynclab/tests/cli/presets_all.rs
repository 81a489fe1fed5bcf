//! Every built-in preset runs at a tiny scale on a real directory, and its result has the
//! counts its kind promises: syncs = writes / N, events split across threads, files created
//! = files chowned = files unlinked, commits all in some flush's batch, flushes = syncs.
//! A new preset is covered here without a new test.

use crate::common::Lab;
use fsynclab::spec::builtin_presets;
use serde_json::Value;

/// A scale small enough for CI (a fraction of a second to a few seconds per preset).
fn tiny_scale(name: &str, quick: f64) -> f64 {
    match name {
        "btrfs-log-commit" => 0.002,
        "btrfs-fsync-unplug" => 0.01,
        "xfs-cil-fsmark" => 0.00002,
        "jbd-sync-writers" => 0.01,
        _ => quick * 0.1,
    }
}

/// A size as the spec serializes it: a number of bytes or a text like "64M".
fn size(v: &Value) -> u64 {
    match v {
        Value::Number(n) => n.as_u64().unwrap(),
        Value::String(s) => fsynclab::spec::parse_size(s).unwrap(),
        other => panic!("not a size: {other}"),
    }
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn op<'a>(run: &'a Value, name: &str) -> Option<&'a Value> {
    run["kind_detail"]["ops"]
        .as_array()?
        .iter()
        .find(|o| o["op"] == name)
}

fn phase_items(run: &Value, name: &str) -> Option<u64> {
    run["kind_detail"]["phases"]
        .as_array()?
        .iter()
        .find(|p| p["phase"] == name)
        .map(|p| u(&p["items"]))
}

fn check_fileio(run: &Value, w: &Value) {
    let threads = u(&w["threads"]);
    let (writes, syncs) = (u(&run["writes"]), u(&run["syncs"]));
    let thread_writes: u64 = run["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| u(&t["writes"]))
        .sum();
    assert_eq!(thread_writes, writes, "writes split across threads");
    if w["mode"] == "sysbench" {
        let sb = &run["kind_detail"]["sysbench"];
        let events = u(&sb["events"]);
        assert_eq!(events, u(&w["requests"]), "a request is an event");
        assert_eq!(u(&sb["event_writes"]) + u(&sb["event_syncs"]), events);
        assert_eq!(u(&sb["event_writes"]), writes);
        // freq writes, then one fsync per shared file.
        let freq = u(&w["sync_every"]);
        let files = w["shared_files"].as_u64().unwrap_or(1);
        assert_eq!(
            u(&sb["event_syncs"]),
            events / (freq + files) * files
                + (events % (freq + files)).saturating_sub(freq).min(files)
        );
        let end = u(&sb["end_syncs"]);
        assert_eq!(syncs, u(&sb["event_syncs"]) + end);
        assert_eq!(
            end,
            if w["final_sync"] == true {
                threads * files
            } else {
                0
            }
        );
        return;
    }
    if w["ioengine"] == "io_uring" {
        let depth = run["inflight_mean"]
            .as_f64()
            .expect("io_uring runs report their depth");
        assert!(
            depth > 0.0 && depth <= u(&w["iodepth"]) as f64 + 1e-9,
            "{depth}"
        );
    } else {
        assert!(
            run["inflight_mean"].is_null(),
            "synchronous runs have no depth"
        );
    }
    let every = u(&w["sync_every"]);
    let per_write_sync = w["sync"] != "none";
    let size_based = w["duration_s"].is_null() && w["requests"].is_null();
    if !per_write_sync {
        assert_eq!(syncs, 0);
    } else if size_based && w["shared_files"].is_null() {
        // fio's count: no periodic sync after a size-based thread's last write (fio decides
        // to sync when it fetches the next I/O); end_fsync (final_sync) then syncs it.
        let per_thread = writes / threads;
        let end = if w["final_sync"] == true { threads } else { 0 };
        assert_eq!(
            syncs,
            threads * (per_thread.saturating_sub(1) / every) + end,
            "fio's sync count"
        );
    } else if every == 1 {
        assert_eq!(syncs, writes, "one sync per write");
    } else {
        assert!(syncs >= writes / every && syncs <= writes / every + threads);
    }
    if w["duration_s"].is_null() && w["requests"].is_null() {
        let bs = size(&w["block_size"]);
        let io = if w["io_size"].is_null() {
            size(&w["file_size"])
        } else {
            size(&w["io_size"])
        };
        assert_eq!(
            writes,
            threads * (io / bs),
            "each thread writes its io_size"
        );
    }
}

fn check_smallfiles(run: &Value, w: &Value) {
    let s = &w["smallfiles"];
    let threads = u(&w["threads"]);
    let created = phase_items(run, "create").expect("a create phase");
    if w["duration_s"].is_null() {
        assert_eq!(created, threads * u(&s["files_per_thread"]));
    }
    assert_eq!(u(&run["writes"]), created, "writes count files created");
    for (flag, phase) in [("chown", "chown"), ("unlink", "unlink")] {
        match phase_items(run, phase) {
            Some(n) => {
                assert_eq!(s[flag], true);
                assert_eq!(n, created, "every created file is {phase}ed");
            }
            None => assert_ne!(s[flag], true, "{phase} phase missing"),
        }
    }
    let syncs = u(&run["syncs"]);
    match s["sync"].as_str().unwrap() {
        "fsync" | "fdatasync" => assert_eq!(syncs, created),
        "syncfs" => assert_eq!(syncs, threads),
        _ => assert_eq!(syncs, 0),
    }
    if s["xattr"] == true {
        assert_eq!(u(&op(run, "xattr").expect("xattr op")["count"]), created);
    }
}

fn check_fileserver(run: &Value) {
    let flush = op(run, "flush").expect("flush op");
    assert_eq!(
        u(&flush["count"]),
        u(&run["syncs"]),
        "Flush = fsync = a sync"
    );
    let write = op(run, "write").expect("write op");
    assert_eq!(u(&write["count"]), u(&run["writes"]));
    let ops = run["kind_detail"]["ops"].as_array().unwrap();
    assert!(ops.len() >= 10, "the mix uses every operation: {ops:?}");
    assert!(ops.iter().all(|o| u(&o["count"]) > 0), "{ops:?}");
}

fn check_grouplog(run: &Value) {
    let g = &run["kind_detail"]["group"];
    let (commits, flushes) = (u(&g["commits"]), u(&g["flushes"]));
    assert!(commits > 0);
    assert_eq!(u(&run["writes"]), commits);
    assert_eq!(u(&run["syncs"]), flushes);
    let batches = g["batch_sizes"].as_array().unwrap();
    let batched: u64 = batches
        .iter()
        .enumerate()
        .map(|(k, n)| k as u64 * u(n))
        .sum();
    assert_eq!(batched, commits, "every commit is in exactly one batch");
}

#[test]
fn every_preset_runs_tiny_with_the_counts_its_kind_promises() {
    for preset in builtin_presets() {
        let lab = Lab::new();
        let scale = tiny_scale(&preset.name, preset.scale.quick);
        let scale_text = scale.to_string();
        let run = lab.run_json(&["--preset", &preset.name, "--scale", &scale_text]);
        assert_eq!(run["status"], "finished", "{}: {run}", preset.name);
        let w = &run["workload"];
        match w["kind"].as_str().unwrap() {
            "fileio" => check_fileio(&run, w),
            "smallfiles" => check_smallfiles(&run, w),
            "fileserver" => check_fileserver(&run),
            "grouplog" => check_grouplog(&run),
            other => panic!("{}: unknown kind {other}", preset.name),
        }
        assert!(
            lab.target_entries().is_empty(),
            "{} left {:?}",
            preset.name,
            lab.target_entries()
        );
        eprintln!("{}: ok at scale {scale}", preset.name);
    }
}
