//! What a first-time user hit on the command line (issue 15): listings that say what
//! matched, `show --json` with one shape, `run --help` in groups, completions, the man
//! page, status lines without a terminal, the logger. Real `fsynclab` processes.

use crate::common;

use std::time::{Duration, Instant};

use crate::common::{Lab, stdout_of};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// One finished 0.2 s run labelled `label` on the lab's target.
fn quick_run(lab: &Lab, label: &str) {
    lab.run_json(&["--duration", "0.2", "--label", label, "--file-size", "1M"]);
}

/// Item 15: a filter that matches nothing says so, not "no runs stored yet".
#[test]
fn a_filter_without_matches_is_not_an_empty_database() {
    let lab = Lab::new();
    quick_run(&lab, "only");
    let text = stdout_of(lab.cmd().args(["list", "--status", "failed"]));
    assert!(!text.contains("no runs stored yet"), "{text}");
    assert!(
        text.contains("no stored run matches --status failed"),
        "{text}"
    );
    let text = stdout_of(lab.cmd().args(["list", "--label", "nope"]));
    assert!(
        text.contains("no stored run matches --label nope"),
        "{text}"
    );
    // An empty database still says how to start.
    let empty = Lab::new();
    let text = stdout_of(empty.cmd().args(["list", "--status", "failed"]));
    assert!(text.contains("no runs stored yet"), "{text}");
    // --limit 0 lists nothing by construction: refused, naming the flag and the fix.
    let out = lab.cmd().args(["list", "--limit", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--limit 0") && err.contains("1 or more"),
        "{err}"
    );
}

/// Item 16: what tells runs apart (a label's end) survives in `list`; `--wide` shows all.
#[test]
fn list_keeps_the_end_of_long_labels_and_wide_shows_them_whole() {
    let lab = Lab::new();
    let long = "jbd-sync-writers-series-variant-2threads";
    quick_run(&lab, long);
    quick_run(&lab, "jbd-sync-writers-series-variant-1thread");
    let text = stdout_of(lab.cmd().arg("list"));
    assert!(text.contains("2threads"), "{text}");
    assert!(text.contains("1thread "), "{text}");
    assert!(text.contains("jbd-sync"), "{text}");
    let wide = stdout_of(lab.cmd().args(["list", "--wide"]));
    assert!(wide.contains(long), "{wide}");
    // The kernel release in full when it fits the column (this machine's is < 24 chars).
    let release = nix::sys::utsname::uname().unwrap();
    let release = release.release().to_string_lossy().into_owned();
    if release.chars().count() <= 24 {
        assert!(text.contains(&release), "{text}");
    }
}

/// Item 14: `show --json` of a run killed mid-way has the run object's keys (`kernel`,
/// `wall_s`, `sync_lat_us`...), not the list row's (`kernel_release`, `*_ns`).
#[test]
fn show_json_of_an_interrupted_run_has_the_documented_keys() {
    let lab = Lab::new();
    quick_run(&lab, "done");
    let killed = [
        "--json",
        "--duration",
        "30",
        "--label",
        "killed",
        "--file-size",
        "1M",
    ];
    let mut child = lab.spawn_run(&lab.target, &killed);
    // Wait until run 2 streams its progress, then kill it without a chance to clean up.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = lab.cmd().args(["list", "--json"]).output().unwrap();
        let runs = common::payload(&out.stdout, "runs");
        let started = runs
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r["id"] == 2 && r["progress_writes"].as_u64().is_some_and(|w| w > 0));
        if started {
            break;
        }
        assert!(Instant::now() < deadline, "run 2 never started: {runs}");
        std::thread::sleep(Duration::from_millis(100));
    }
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();

    let finished = common::payload(
        &stdout_of(lab.cmd().args(["show", "1", "--json"])).into_bytes(),
        "run",
    );
    let killed = common::payload(
        &stdout_of(lab.cmd().args(["show", "2", "--json"])).into_bytes(),
        "run",
    );
    assert_eq!(killed["status"], "interrupted", "{killed}");
    let keys = |v: &serde_json::Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.retain(|k| !["progress", "run_dir"].contains(&k.as_str()));
        k.sort();
        k
    };
    assert_eq!(keys(&killed), keys(&finished));
    for list_only in ["kernel_release", "sync_p99_ns", "wall_ns", "created_at_ms"] {
        assert!(killed.get(list_only).is_none(), "{list_only} in {killed}");
    }
    assert_eq!(killed["kernel"], finished["kernel"]);
    assert_eq!(killed["label"], "killed");
    assert!(killed["sync_lat_us"].is_null() && killed["iops"].is_null());
    assert!(
        killed["progress"]["writes"].as_u64().unwrap() > 0,
        "{killed}"
    );
}

/// Item 18: `run --help` in groups with examples.
#[test]
fn run_help_is_grouped_by_kind_and_has_examples() {
    let help = stdout_of(common::bare_cmd().args(["run", "--help"]));
    let mut at = 0;
    // The workload's headings, then each kind's in the registry's order (the window's kind
    // chooser's), then the run's.
    let kinds = fsynclab::spec::KINDS
        .iter()
        .map(|k| format!("{}:", k.kind.as_str()))
        .filter(|k| k != "fileio:");
    let headings: Vec<String> = ["Workload:", "fileio:", "sysbench mode:"]
        .into_iter()
        .map(str::to_string)
        .chain(kinds)
        .chain(["Run control:".to_string(), "Output:".to_string()])
        .collect();
    assert!(headings.len() >= 8, "{headings:?}");
    for heading in headings {
        let found = help[at..]
            .find(&format!("\n{heading}\n"))
            .unwrap_or_else(|| panic!("no heading {heading} after byte {at}: {help}"));
        at += found + 1;
    }
    let section = |name: &str| {
        let start = help.find(&format!("\n{name}:\n")).unwrap();
        let rest = &help[start + name.len() + 3..];
        rest[..rest.find("\n\n").unwrap_or(rest.len())].to_string()
    };
    assert!(section("grouplog").contains("--strategy"), "{help}");
    assert!(section("smallfiles").contains("--file-sync"), "{help}");
    assert!(section("fileserver").contains("--clients"), "{help}");
    assert!(section("Output").contains("--status-interval"), "{help}");
    assert!(help.contains("Examples:"), "{help}");
    assert!(help.contains("fsynclab run --preset"), "{help}");
}

/// Item 18: shell completions and man pages.
#[test]
fn completions_and_man_pages_are_printed() {
    let bash = stdout_of(common::bare_cmd().args(["completions", "bash"]));
    assert!(
        bash.contains("_fsynclab()") && bash.contains("--status-interval"),
        "{bash}"
    );
    let zsh = stdout_of(common::bare_cmd().args(["completions", "zsh"]));
    assert!(zsh.starts_with("#compdef fsynclab"), "{zsh}");
    let fish = stdout_of(common::bare_cmd().args(["completions", "fish"]));
    assert!(fish.contains("complete -c fsynclab"), "{fish}");
    let out = common::bare_cmd()
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));

    let man = stdout_of(common::bare_cmd().arg("man"));
    assert!(man.contains(".TH fsynclab 1"), "{man}");
    assert!(
        man.contains("fsynclab\\-run(1)") || man.contains("run"),
        "{man}"
    );
    let run = stdout_of(common::bare_cmd().args(["man", "run"]));
    assert!(
        run.contains(".TH fsynclab\\-run 1") || run.contains(".TH fsynclab-run 1"),
        "{run}"
    );
    assert!(run.contains("status\\-interval"), "{run}");
    let out = common::bare_cmd().args(["man", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("man nope") && err.contains("run"), "{err}");
}

/// Item 17: without a terminal (here stderr is a pipe), status lines as fio's
/// --status-interval; none with 0.
#[test]
fn status_lines_when_stderr_is_not_a_terminal() {
    let lab = Lab::new();
    let out = lab
        .cmd()
        .args([
            "run",
            "--duration",
            "2.5",
            "--file-size",
            "1M",
            "--status-interval",
            "1",
        ])
        .arg("--target")
        .arg(&lab.target)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("status: run 1 "))
        .collect();
    assert!(lines.len() >= 3, "{err}");
    assert!(
        lines[0].contains(" of 2 s") || lines[0].contains(" of 3 s"),
        "{err}"
    );
    assert!(lines.last().unwrap().contains("finished after"), "{err}");

    let out = lab
        .cmd()
        .args([
            "run",
            "--duration",
            "0.3",
            "--file-size",
            "1M",
            "--status-interval",
            "0",
        ])
        .arg("--target")
        .arg(&lab.target)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("status: "), "{err}");

    let out = lab
        .cmd()
        .args(["run", "--status-interval", "-1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--status-interval"));
}

/// Items 22/23: RUST_LOG reaches a logger; the window's build has Wayland and X11.
#[test]
fn rust_log_reaches_the_logger_and_the_window_speaks_wayland() {
    let out = common::bare_cmd()
        .env("RUST_LOG", "fsynclab=debug")
        .args(["presets"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("DEBUG") && err.contains("presets"), "{err}");
    let out = common::bare_cmd()
        .env_remove("RUST_LOG")
        .arg("presets")
        .output()
        .unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let manifest =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../gui/Cargo.toml")).unwrap();
    let eframe = manifest
        .lines()
        .find(|l| l.starts_with("eframe ="))
        .unwrap();
    assert!(
        eframe.contains("\"wayland\"") && eframe.contains("\"x11\""),
        "{eframe}"
    );
}

/// Item 26: a sweep started from a preset repeats each point 3 times unless told, and its
/// summary lines give each point's 95 % CI and mark what cannot be told apart.
#[test]
fn a_preset_sweep_repeats_each_point_and_summarises_with_cis() {
    let lab = Lab::new();
    let sweep = [
        "--preset",
        "fsync-methods",
        "--sweep",
        "threads=1,2",
        "--duration",
        "0.15",
        "--file-size",
        "256k",
    ];
    let doc = lab.run_doc(&sweep);
    let experiments = doc["experiments"].as_array().unwrap();
    assert_eq!(
        experiments[0]["run_ids"].as_array().unwrap().len(),
        6,
        "{doc}"
    );
    let text = stdout_of(
        lab.cmd()
            .args(["run", "--quiet"])
            .args(sweep)
            .arg("--target")
            .arg(&lab.target),
    );
    assert!(
        text.contains("iops over threads (geometric mean and 95% CI per point):"),
        "{text}"
    );
    let point_lines: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("threads="))
        .collect();
    assert_eq!(point_lines.len(), 2, "{text}");
    assert!(
        point_lines
            .iter()
            .all(|l| l.contains("95% CI [") && l.contains("n=3")),
        "{text}"
    );
    assert!(
        point_lines[1].contains("≈ threads=1") || point_lines[1].contains("differs from threads=1"),
        "{text}"
    );
    // --repeat 1 is honoured, and says that one run gives no interval.
    let doc = lab.run_doc(&[&sweep[..], &["--repeat", "1"]].concat());
    assert_eq!(
        doc["experiments"][0]["run_ids"].as_array().unwrap().len(),
        2,
        "{doc}"
    );
}

/// Item 20: the README puts fsynclab on the PATH before its examples use it, names the
/// window's runtime libraries and what Browse… needs; the screenshot script points to a
/// list that exists; the two set-up commands are still there.
#[test]
fn readme_sets_up_a_newcomer_before_the_examples() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let install = readme
        .find("cargo install --path crates/fsynclab --locked")
        .expect("README says how to install fsynclab");
    let first_use = readme.find("fsynclab run ").expect("an example");
    assert!(
        install < first_use,
        "the install comes after the first example"
    );
    for needed in [
        "cargo run --release",
        "cargo test",
        "libxkbcommon-x11-0",
        "libgl1-mesa-dri",
        "xdg-desktop-portal",
        "zenity",
        "RUST_LOG",
        "fsynclab completions",
        "fsynclab man",
        "--status-interval",
        "Under `sudo`",
    ] {
        assert!(readme.contains(needed), "README lacks {needed}");
    }
    let script = std::fs::read_to_string(format!("{root}/scripts/screenshots.sh")).unwrap();
    assert!(
        !script.contains("see .ci/run for the list"),
        "a list that does not exist"
    );
}
