//! `fsynclab advise` refusals: every bad input exits 2 naming the flag and the fix, before
//! anything is stored; an empty database lists no advice.

use crate::common::Lab;
use assert_cmd::prelude::*;
use predicates::prelude::*;

#[test]
fn bad_advise_input_exits_2_naming_the_flag() {
    let lab = Lab::new();
    let target = lab.target.to_str().unwrap().to_string();
    let long_label = "L".repeat(300);
    let cases: [(Vec<&str>, &str); 17] = [
        (vec!["--repeat", "2"], "--repeat 2: use 3 to 10"),
        (vec!["--repeat", "11"], "--repeat 11"),
        (vec!["--label", "x\u{1b}[31m"], "--label"),
        (vec!["--label", &long_label], "--label"),
        (
            vec!["--strategies", "solo,delay:99999999"],
            "--strategies: 99999999 µs delay",
        ),
        (vec!["--p99", "5"], "--p99 '5' has no unit"),
        (vec!["--p99", "0ms"], "--p99"),
        (vec!["--p99=-1ms"], "--p99"),
        (vec!["--writers", "0"], "--writers 0: use 1 to 256"),
        (vec!["--writers", "100000"], "--writers 100000"),
        (
            vec!["--strategies", "solo,fastest"],
            "unknown strategy 'fastest'",
        ),
        (vec!["--strategies", "pipelined:0"], "pipelined:4"),
        (vec!["--log", "circular"], "preallocated"),
        (vec!["--p99", "-5ms"], "--p99 '-5ms' is negative"),
        (vec!["--repeat", "-3"], "'-3' is negative"),
        (
            vec!["--strategies", "leader,adaptive"],
            "--strategies: no solo among the strategies and no p99 budget",
        ),
        (vec!["--p99", "0.5us"], "use 1us to 60s"),
    ];
    for (args, said) in cases {
        lab.cmd()
            .arg("advise")
            .arg(&target)
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(said));
    }
    // A report file that is already there is refused before anything is measured.
    let existing = lab.dir.path().join("exists.png");
    std::fs::write(&existing, b"mine").unwrap();
    lab.cmd()
        .arg("advise")
        .arg(&target)
        .arg("--out")
        .arg(&existing)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    assert_eq!(std::fs::read(&existing).unwrap(), b"mine");
    // So is one in a directory that is not there (exit 2: the path is at fault).
    lab.cmd()
        .arg("advise")
        .arg(&target)
        .arg("--out")
        .arg(lab.dir.path().join("no-such-dir/advice.png"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does not exist; create it first"));
    // A target that is not there, and stored advice that is not there.
    lab.cmd()
        .args(["advise", "/nonexistent/fsynclab-advise"])
        .assert()
        .code(2);
    lab.cmd()
        .args(["advise", "--show", "7"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--show 7: no stored advice has this id",
        ));
    // The options of a measurement are refused beside --show and --list.
    for args in [
        &["advise", "--show", "1", "--writers", "4"][..],
        &["advise", "--list", "--strategies", "solo"],
        &["advise", "--list", "--md"],
    ] {
        lab.cmd().args(args).assert().code(2);
    }
    lab.cmd()
        .arg("advise")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("TARGET"));
    // A bare device: no directory, no strategies or log beside it, a confirmation that is
    // the device's exact name, and the device's options need --device.
    for (args, said) in [
        (
            &["advise", "--device", "/dev/loop63", &target][..],
            "cannot be used with",
        ),
        (
            &["advise", "--device", "/dev/loop63", "--strategies", "solo"],
            "cannot be used with",
        ),
        (
            &["advise", "--device", "/dev/loop63", "--log", "append"],
            "cannot be used with",
        ),
        (
            &["advise", "--device", "/dev/loop63", "--p99", "5ms"],
            "cannot be used with",
        ),
        (&["advise", &target, "--offset", "1M"], "--device"),
        (
            &["advise", &target, "--destroy-data-on", "/dev/loop63"],
            "--device",
        ),
        (
            &["advise", "--device", "/dev/loop63", "--show", "1"],
            "cannot be used with",
        ),
        (&["advise", "--device", "/dev/loop63"], "--destroy-data-on"),
        (
            &[
                "advise",
                "--device",
                "/dev/loop63",
                "--destroy-data-on",
                "/dev/loop62",
            ],
            "does not match",
        ),
    ] {
        lab.cmd()
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(said));
    }
    // Nothing was measured or stored.
    lab.cmd()
        .args(["advise", "--list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("No stored advice"));
    lab.cmd()
        .args(["list", "--json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"runs\": []"));
}
