//! Hostile input (issue 10, section 5): control characters in labels and tags, preset
//! paths that are not small regular files, absurd counts, report paths that are links or
//! existing files. Each refusal exits 2 with a message naming the field and the fix, and
//! leaves no run and no experiment in the database.

use crate::common;

use std::time::{Duration, Instant};

use crate::common::Lab;
use assert_cmd::prelude::*;
use predicates::prelude::*;

/// Runs and experiments in the lab's database (0 when the file was never created).
fn stored(lab: &Lab) -> (i64, i64) {
    if !lab.db.exists() {
        return (0, 0);
    }
    let conn = rusqlite::Connection::open(&lab.db).unwrap();
    let count = |table: &str| -> i64 {
        conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap_or(0)
    };
    (count("runs"), count("experiments"))
}

/// `fsynclab <args>` exits 2, says `message`, never panics, and stores nothing new.
fn refused(lab: &Lab, args: &[&str], message: &str) {
    let before = stored(lab);
    let started = Instant::now();
    lab.cmd()
        .args(args)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(message).and(predicate::str::contains("panicked").not()));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{args:?} took {:?}",
        started.elapsed()
    );
    assert_eq!(stored(lab), before, "{args:?} stored something");
}

fn run_args<'a>(lab: &'a Lab, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["run", "--quiet", "--target", lab.target.to_str().unwrap()];
    args.extend_from_slice(extra);
    args
}

#[test]
fn control_characters_in_labels_and_tags_are_refused() {
    let lab = Lab::new();
    for (extra, message) in [
        (["--label", "a\u{1b}]0;pwned\u{7}"], "--label: "),
        (["--label", "x\u{9b}31m"], "U+009B"),
        (["--label", "abc\u{202e}fed"], "U+202E"),
        (["--tag", "t\u{7f}"], "--tag: "),
        (["--tag", "two\nlines"], "use printable text only"),
    ] {
        refused(&lab, &run_args(&lab, &extra), message);
    }
    refused(
        &lab,
        &run_args(&lab, &["--repeat", "2", "--tag", " "]),
        "--tag: the tag ' ' is empty",
    );
    // Refused in a series too, before its experiment exists.
    refused(
        &lab,
        &run_args(&lab, &["--repeat", "2", "--label", "\u{1b}[2J"]),
        "--label",
    );
    let long = "x".repeat(257);
    refused(
        &lab,
        &run_args(&lab, &["--label", &long]),
        "at most 256 bytes",
    );
    // The message itself carries nothing raw to the terminal.
    let out = lab
        .cmd()
        .args(run_args(&lab, &["--label", "a\u{1b}]0;x\u{7}"]))
        .output()
        .unwrap();
    assert!(!out.stderr.contains(&0x1b), "{:?}", out.stderr);
}

#[test]
fn stored_control_characters_are_escaped_on_output() {
    let lab = Lab::new();
    let a = lab.run_json(&["--label", "a", "--file-size", "64k"])["id"].to_string();
    let b = lab.run_json(&["--label", "b", "--file-size", "64k"])["id"].to_string();
    // An old database may hold a label, tag or error written before the check existed.
    let conn = rusqlite::Connection::open(&lab.db).unwrap();
    conn.execute(
        "UPDATE runs SET label = 'evil\u{1b}]0;owned\u{7}\u{9b}2J\u{202e}' WHERE id = ?1",
        [a.parse::<i64>().unwrap()],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO run_tags (run_id, tag) VALUES (?1, 'tag\u{1b}[31m')",
        [a.parse::<i64>().unwrap()],
    )
    .unwrap();
    drop(conn);
    for args in [
        vec!["list"],
        vec!["list", "--json"],
        vec!["show", &a],
        vec!["show", &a, "--json"],
        vec!["compare", &a, &b],
        vec!["compare", &a, &b, "--markdown"],
        vec!["compare", &a, &b, "--json"],
    ] {
        let out = lab.cmd().args(&args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {:?}", out);
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            !text.contains(['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}']),
            "{args:?} printed a raw control character: {text:?}"
        );
        if args[0] != "compare" {
            assert!(text.contains("u001b"), "{args:?}: {text}");
        }
        if args.contains(&"--json") {
            // Still JSON, with the original characters inside.
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert!(v.to_string().contains('\u{202e}') || args[0] == "compare");
        }
    }
    // Report text files are escaped too.
    let md = lab.dir.path().join("r.md");
    lab.cmd()
        .args(["report", &a, &b, "--title", "t", "--out"])
        .arg(&md)
        .assert()
        .success();
    assert!(!std::fs::read_to_string(&md).unwrap().contains('\u{1b}'));
}

#[test]
fn preset_paths_that_are_not_small_regular_files_are_refused() {
    let lab = Lab::new();
    refused(
        &lab,
        &run_args(&lab, &["--preset", "/dev/zero"]),
        "it is a character device, not a regular file",
    );
    let dir = lab.dir.path().join("presets.toml");
    std::fs::create_dir(&dir).unwrap();
    refused(
        &lab,
        &run_args(&lab, &["--preset", dir.to_str().unwrap()]),
        "it is a directory",
    );
    // A FIFO would block a plain read forever.
    let fifo = lab.dir.path().join("fifo.toml");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    refused(
        &lab,
        &run_args(&lab, &["--preset", fifo.to_str().unwrap()]),
        "it is a FIFO",
    );
    let big = lab.dir.path().join("big.toml");
    std::fs::write(&big, vec![b'#'; (1 << 20) + 1]).unwrap();
    refused(
        &lab,
        &run_args(&lab, &["--preset", big.to_str().unwrap()]),
        "larger than 1048576 bytes",
    );
    // The same reader serves `presets FILE` and `matrix --preset FILE`.
    refused(&lab, &["presets", "/dev/zero"], "not a regular file");
    refused(
        &lab,
        &[
            "matrix",
            "--preset",
            "/dev/zero",
            "--fs",
            "ext4",
            "--fs",
            "xfs",
        ],
        "not a regular file",
    );
}

#[test]
fn counts_have_upper_bounds_and_never_overflow() {
    let lab = Lab::new();
    let sweep = format!("threads={}", vec!["1"; 65].join(","));
    for (extra, message) in [
        (
            vec!["--repeat", "1001"],
            "--repeat: 1001 repetitions; use 1 to 1000",
        ),
        (vec!["--repeat", "0"], "--repeat: 0 repetitions"),
        (vec!["--sweep", &sweep], "at most 64 values"),
        (vec!["--requests", "18446744073709551615"], "requests"),
        (vec!["--requests", "18446744073709551616"], "--requests"),
        (vec!["--threads", "4097"], "use 1 to 1024"),
        (vec!["--threads", "99999999999"], "--threads"),
        (vec!["--duration", "1e12"], "at most 7 days"),
        (vec!["--duration", "nan"], "duration_s"),
        (vec!["--quiet-wait", "1e300"], "use 0 to 3600 seconds"),
        (vec!["--bs", "99999999999T"], "--bs"),
        (vec!["--io-size", "16000000T"], "io_size"),
        (vec!["--file-size", "99999T"], "file_size"),
        (
            vec!["--preset", "fsync-methods", "--scale", "1e308"],
            "scale",
        ),
        (vec!["--set", "interval_ms=99999999999"], "interval_ms"),
        (
            vec!["--kind", "smallfiles", "--files", "18446744073709551615"],
            "--files",
        ),
        (
            vec![
                "--kind",
                "fileserver",
                "--clients",
                "5000",
                "--duration",
                "1",
            ],
            "--clients",
        ),
    ] {
        refused(&lab, &run_args(&lab, &extra), message);
    }
    refused(
        &lab,
        &[
            "matrix",
            "--preset",
            "fsync-methods",
            "--fs",
            "ext4",
            "--fs",
            "xfs",
            "--repeat",
            "5000",
        ],
        "--repeat: 5000 repetitions",
    );
    let mut many = vec!["matrix", "--preset", "fsync-methods", "--fs", "ext4"];
    let opts: Vec<String> = (0..65).map(|i| format!("commit={}", i + 1)).collect();
    for o in &opts {
        many.extend(["--mount-opts", o.as_str()]);
    }
    refused(&lab, &many, "65 configuration(s); give 2 to 64");
}

#[test]
fn usage_errors_store_nothing_in_any_subcommand() {
    let lab = Lab::new();
    // A database with one run, so "nothing new" is checked against a real file.
    lab.run_json(&["--file-size", "64k"]);
    let missing = lab.dir.path().join("nope");
    for args in [
        run_args(&lab, &["--scale", "0.5"]),
        run_args(
            &lab,
            &[
                "--series",
                "--preset",
                "fsync-methods",
                "--sweep",
                "threads=1,2",
            ],
        ),
        run_args(&lab, &["--series", "--preset", "btrfs-log-commit"]),
        // A series varies sync itself: --sync would relabel its fdatasync variant.
        run_args(
            &lab,
            &["--series", "--preset", "fsync-methods", "--sync", "fsync"],
        ),
        vec![
            "run",
            "--quiet",
            "--repeat",
            "3",
            "--target",
            missing.to_str().unwrap(),
        ],
        vec![
            "run",
            "--quiet",
            "--sweep",
            "threads=1,2",
            "--target",
            missing.to_str().unwrap(),
        ],
        vec!["list", "--status", "nope"],
        vec!["show", "999"],
        vec!["compare", "1", "999"],
        vec!["report", "1", "1", "--out", "r.pdf"],
    ] {
        let before = stored(&lab);
        lab.cmd()
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("panicked").not());
        assert_eq!(stored(&lab), before, "{args:?} stored something");
    }
}

#[test]
fn error_text_is_said_once() {
    let lab = Lab::new();
    let missing = lab.dir.path().join("missing.toml");
    let out = lab
        .cmd()
        .args(["run", "--preset"])
        .arg(&missing)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        text.matches("No such file or directory").count(),
        1,
        "{text}"
    );
    let garbage = lab.dir.path().join("garbage.sqlite");
    std::fs::write(&garbage, vec![b'x'; 4096]).unwrap();
    let out = common::bare_cmd()
        .arg("--db")
        .arg(&garbage)
        .arg("list")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stderr).unwrap();
    assert!(text.matches("not a database").count() <= 1, "{text}");
    let out = lab
        .cmd()
        .args(run_args(&lab, &["--sweep", "threads=1,x"]))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stderr).unwrap();
    assert!(text.starts_with("error: sweep: threads=x"), "{text}");
}

#[test]
fn report_out_never_follows_a_link_nor_replaces_a_file_unasked() {
    let lab = Lab::new();
    let a = lab.run_json(&["--label", "a", "--file-size", "64k"])["id"].to_string();
    let b = lab.run_json(&["--label", "b", "--file-size", "64k"])["id"].to_string();
    let victim = lab.dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    for ext in ["csv", "json", "svg", "png", "md"] {
        let out = lab.dir.path().join(format!("link-{ext}.{ext}"));
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        lab.cmd()
            .args(["report", &a, &b, "--out"])
            .arg(&out)
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains("symbolic link").and(predicate::str::contains("--force")),
            );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        // Forced, the link itself is replaced and its target left alone.
        lab.cmd()
            .args(["report", &a, &b, "--force", "--out"])
            .arg(&out)
            .assert()
            .success();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(!out.symlink_metadata().unwrap().file_type().is_symlink());
    }
    // An existing file, and the PNG a Markdown report writes beside itself.
    let md = lab.dir.path().join("r.md");
    let png = lab.dir.path().join("r.png");
    std::fs::write(&png, "mine").unwrap();
    lab.cmd()
        .args(["report", &a, &b, "--out"])
        .arg(&md)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "r.png (the image the .md report embeds) already exists",
        ));
    assert_eq!(std::fs::read_to_string(&png).unwrap(), "mine");
    assert!(!md.exists(), "nothing is written when one file is refused");
    // A planted link at the PNG's name is not followed either.
    std::fs::remove_file(&png).unwrap();
    std::os::unix::fs::symlink(&victim, &png).unwrap();
    lab.cmd()
        .args(["report", &a, &b, "--out"])
        .arg(&md)
        .assert()
        .code(2);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    lab.cmd()
        .args(["report", &a, &b, "--force", "--out"])
        .arg(&md)
        .assert()
        .success();
    assert_eq!(&std::fs::read(&png).unwrap()[..4], b"\x89PNG");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    // No temporary file is left behind.
    let leftovers: Vec<String> = common::entries(lab.dir.path())
        .into_iter()
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
