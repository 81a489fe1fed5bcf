//! Confirmed runs on a bare block device (issue 34), as root on loop devices over temporary
//! images: each writes only inside its range (every byte outside it unchanged), psync and
//! io_uring, buffered and O_DIRECT; the stored run says "raw device" with its range; and the
//! device stays held `O_EXCL` while a run is on it.

use std::path::Path;

use crate::rawdev::Devices;
use crate::scratch_common::root_or_skip;

const MIB: usize = 1 << 20;

/// Every byte of `image` outside `[start, end)` equals `before`'s; inside, some changed.
fn only_inside(image: &Path, before: &[u8], start: usize, end: usize) {
    let after = std::fs::read(image).unwrap();
    assert_eq!(after.len(), before.len());
    assert!(
        after[..start] == before[..start],
        "written before the range"
    );
    assert!(after[end..] == before[end..], "written after the range");
    assert!(
        after[start..end] != before[start..end],
        "nothing written in the range"
    );
}

#[test]
fn a_confirmed_run_writes_only_inside_its_range() {
    if !root_or_skip("a_confirmed_run_writes_only_inside_its_range") {
        return;
    }
    let mut d = Devices::new();
    let (node, image) = d.attach("range.img", false);
    let lab = crate::common::Lab::new();
    let cases: [&[&str]; 3] = [
        &["--threads", "2", "--sync", "fdatasync", "--pattern", "rand"],
        &[
            "--threads",
            "2",
            "--ioengine",
            "io_uring",
            "--iodepth",
            "4",
            "--open-flags",
            "direct",
        ],
        &[
            "--threads",
            "1",
            "--open-flags",
            "dsync",
            "--pattern",
            "seq",
        ],
    ];
    for (i, extra) in cases.iter().enumerate() {
        let before = std::fs::read(&image).unwrap();
        // The range [20M, 28M): 8M over the threads.
        let out = lab
            .cmd()
            .args(["run", "--quiet", "--json", "--kernel-trace", "off"])
            .args(["--device", &node, "--destroy-data-on", &node])
            .args([
                "--offset",
                "20M",
                "--size",
                "8M",
                "--bs",
                "4k",
                "--requests",
                "600",
            ])
            .args(*extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{extra:?}: {stderr}");
        let run = crate::common::one_run(&out.stdout);
        assert_eq!(run["status"], "finished", "{run}");
        assert_eq!(run["writes"], 600, "{extra:?}");
        assert_eq!(run["target"], node.as_str());
        assert_eq!(run["raw_device"]["node"], node.as_str());
        assert_eq!(run["raw_device"]["offset"], 20 * MIB);
        assert_eq!(run["raw_device"]["length"], 8 * MIB);
        assert_eq!(run["raw_device"]["size_bytes"], 64 * MIB);
        assert!(run["fs_type"].is_null(), "{run}");
        only_inside(&image, &before, 20 * MIB, 28 * MIB);
        // The report says what it ran on.
        let show = lab
            .cmd()
            .args(["show", &run["id"].to_string()])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&show.stdout);
        assert!(
            text.contains(&format!(
                "target    raw device {node} (no filesystem) · bytes 20M–28M of 64M"
            )),
            "case {i}: {text}"
        );
    }
    // Nothing for `clean`: no run directory was made.
    let out = {
        let _sweeps = crate::clean_lock();
        lab.cmd().arg("clean").output().unwrap()
    };
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    // Run directories only: a concurrent test's killed traced run or crash test may leave a
    // trace instance or crash-test state that this `clean` sweeps too (ktrace.rs kills one).
    let run_dirs: Vec<&str> = said
        .lines()
        .filter(|l| {
            (l.starts_with("removed ") && !l.starts_with("removed trace instance"))
                || l.starts_with("left ")
        })
        .collect();
    assert!(run_dirs.is_empty(), "{said}");
}

#[test]
fn a_device_in_use_by_a_run_is_refused_to_another() {
    if !root_or_skip("a_device_in_use_by_a_run_is_refused_to_another") {
        return;
    }
    let mut d = Devices::new();
    let (node, image) = d.attach("held.img", false);
    let lab = crate::common::Lab::new();
    // `run` on the device, confirmed, a 4M range.
    let device_run = || {
        let mut cmd = lab.cmd();
        cmd.args(["run", "--quiet", "--kernel-trace", "off", "--size", "4M"])
            .args(["--device", &node, "--destroy-data-on", &node]);
        cmd
    };
    let mut first = device_run()
        .args(["--duration", "4", "--sync", "fdatasync"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Until the first run holds the device (its run row exists).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let listed = lab.cmd().args(["list", "--json"]).output().unwrap();
        if String::from_utf8_lossy(&listed.stdout).contains("\"running\"") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the first run never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = device_run()
        .args(["--offset", "32M", "--requests", "16"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot be opened exclusively"), "{stderr}");
    assert!(first.wait().unwrap().success());
    // The second run wrote nothing past the first's range (32M on is untouched).
    let bytes = std::fs::read(&image).unwrap();
    assert!(bytes[32 * MIB..36 * MIB].iter().all(|&b| b == 0));
}

#[test]
fn a_fio_job_on_a_device_runs_there_once_confirmed() {
    if !root_or_skip("a_fio_job_on_a_device_runs_there_once_confirmed") {
        return;
    }
    let mut d = Devices::new();
    let (node, image) = d.attach("fio.img", false);
    let lab = crate::common::Lab::new();
    let job = lab.dir.path().join("device.fio");
    std::fs::write(
        &job,
        format!(
            "[dev]\nfilename={node}\nrw=randwrite\nbs=4k\nsize=2m\nnumjobs=2\n\
             offset=8m\noffset_increment=2m\nfdatasync=1\ndirect=1\n"
        ),
    )
    .unwrap();
    let before = std::fs::read(&image).unwrap();
    let run = |confirm: Option<&str>| {
        let mut cmd = lab.cmd();
        cmd.args([
            "run",
            "--quiet",
            "--json",
            "--kernel-trace",
            "off",
            "--fio-job",
        ])
        .arg(&job);
        if let Some(c) = confirm {
            cmd.args(["--destroy-data-on", c]);
        }
        cmd.output().unwrap()
    };
    let out = run(None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--destroy-data-on"), "{stderr}");
    assert_eq!(
        std::fs::read(&image).unwrap(),
        before,
        "written unconfirmed"
    );
    let out = run(Some(&node));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = crate::common::one_run(&out.stdout);
    // fio's size per job: each clone writes its own 2M once (512 writes of 4k).
    assert_eq!(r["writes"], 1024, "{r}");
    assert_eq!(r["raw_device"]["offset"], 8 * MIB);
    assert_eq!(r["raw_device"]["length"], 4 * MIB);
    only_inside(&image, &before, 8 * MIB, 12 * MIB);
}
