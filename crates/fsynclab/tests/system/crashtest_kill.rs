//! A crash test killed with SIGKILL while its workload runs on the recording device (issue
//! 33): the process exits (its daemon, a process of its own, answers the waiting threads and
//! then exits too), and `fsynclab clean` removes everything it left — no mount, loop device,
//! daemon or directory of it remains.

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use crate::common::{Lab, require_root};

/// The `crash-<pid>-…` directories in `state`.
fn crash_dirs(state: &Path) -> Vec<String> {
    crate::common::entries(state)
        .into_iter()
        .filter(|n| n.starts_with("crash-"))
        .collect()
}

/// Mount points under `dir`.
fn mounts_under(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let dir = dir.to_str().unwrap();
    text.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .filter(|p| p.starts_with(dir))
        .map(str::to_string)
        .collect()
}

/// Loop devices whose backing file is under `dir`.
fn loops_under(dir: &Path) -> Vec<String> {
    let dir = dir.to_str().unwrap();
    std::fs::read_dir("/sys/block")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("loop/backing_file")).ok())
        .filter(|b| b.starts_with(dir))
        .collect()
}

/// Processes whose command line names `dir` (the daemon is started with `--base DIR/…`).
fn processes_naming(dir: &Path) -> Vec<u32> {
    let dir = dir.to_str().unwrap().as_bytes();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.windows(dir.len()).any(|w| w == dir))
        })
        .collect()
}

fn wait_exit(child: &mut Child, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn a_killed_crash_test_exits_and_leaves_nothing_after_clean() {
    if !require_root(
        "a_killed_crash_test_exits_and_leaves_nothing_after_clean",
        "mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let lab = Lab::new();
    let data = lab.dir.path().join("xdg");
    let state = data.join("fsynclab/scratch");
    let mut child = lab
        .cmd()
        .env("XDG_DATA_HOME", &data)
        .args([
            "crashtest",
            "--threads",
            "2",
            "--bs",
            "4k",
            "--file-size",
            "1M",
        ])
        .args(["--sync", "fsync", "--duration", "60"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the workload runs on the device's filesystem.
    let start = Instant::now();
    let running = loop {
        let busy = mounts_under(&state).iter().any(|m| m.ends_with("/fs"));
        // The run's directory (fsynclab-<run id>) holds the workload's files.
        let files = crash_dirs(&state).iter().any(|d| {
            let fs = state.join(d).join("fs");
            let runs = crate::common::entries(&fs);
            runs.iter()
                .any(|run| fs.join(run).join("thread-1.dat").exists())
        });
        if busy && files {
            break true;
        }
        if start.elapsed() > Duration::from_secs(60) || child.try_wait().unwrap().is_some() {
            break false;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap();
    let exited = wait_exit(&mut child, Duration::from_secs(60));
    let clean = {
        let _sweeps = crate::clean_lock();
        lab.cmd()
            .env("XDG_DATA_HOME", &data)
            .arg("clean")
            .output()
            .unwrap()
    };
    let said = String::from_utf8_lossy(&clean.stdout);
    eprintln!("clean: {said}{}", String::from_utf8_lossy(&clean.stderr));
    assert!(running, "the crash test's workload never ran");
    assert!(exited, "the killed crash test did not exit in 60 s");
    assert_eq!(clean.status.code(), Some(0));
    assert!(said.contains("detached /dev/loop"), "{said}");
    assert_eq!(mounts_under(&state), Vec::<String>::new());
    assert_eq!(loops_under(&state), Vec::<String>::new());
    assert_eq!(processes_naming(&state), Vec::<u32>::new());
    assert_eq!(crash_dirs(&state), Vec::<String>::new());
}
