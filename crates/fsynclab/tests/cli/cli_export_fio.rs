//! `fsynclab export-fio-job`: every built-in preset exported where its kind allows (each
//! job read back by real fio with `--parse-only`), refused by kind or field where not;
//! `--run` of a stored run; `--output` never replacing or following a link; and the round
//! trip: the exported seed-000 shape run by real fio does the writes and syncs fsynclab
//! does for the same spec.
//!
//! fio must be installed with CI=true; outside CI the tests that need it skip saying why.

use crate::common;

use std::path::Path;
use std::process::Command;

use crate::common::Lab;
use fsynclab::spec::{FileioMode, WorkloadKind, builtin_presets};
use serde_json::Value;

/// Whether `fio` can be run: with CI=true a missing fio fails the test.
fn fio_available(test: &str) -> bool {
    common::fio_server::fio_present(test)
}

/// `fio --parse-only FILE` succeeds, fio's complaint shown when it does not.
fn assert_fio_parses(job: &Path, what: &str) {
    let out = Command::new("fio")
        .arg("--parse-only")
        .arg(job)
        .output()
        .expect("run fio");
    assert!(
        out.status.success(),
        "fio --parse-only rejected {what}: {}{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(job).unwrap_or_default()
    );
}

/// `fsynclab export-fio-job ARGS`: (exit code, stdout, stderr).
fn export(lab: &Lab, args: &[&str]) -> (i32, String, String) {
    let out = lab
        .cmd()
        .arg("export-fio-job")
        .args(args)
        .output()
        .expect("run fsynclab");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The value of `key=` in a job file's text.
fn option<'a>(job: &'a str, key: &str) -> Option<&'a str> {
    job.lines()
        .find_map(|l| l.strip_prefix(key).and_then(|rest| rest.strip_prefix('=')))
}

#[test]
fn every_builtin_preset_exports_where_its_kind_allows_and_fio_parses_it() {
    let fio = fio_available("every_builtin_preset_exports_where_its_kind_allows");
    let lab = Lab::new();
    let (mut exported, mut refused) = (0, 0);
    for preset in builtin_presets() {
        let quick = preset.scale.quick.to_string();
        let mut variants: Vec<Option<String>> = vec![None];
        if let Some(plan) = &preset.series {
            variants.extend(plan.variants.iter().map(|v| Some(v.label.clone())));
        }
        for variant in variants {
            let mut args = vec!["--preset", &preset.name, "--scale", &quick, "--target"];
            let target = lab.target.to_str().unwrap();
            args.push(target);
            if let Some(v) = &variant {
                args.extend(["--variant", v.as_str()]);
            }
            let what = format!("{} {variant:?}", preset.name);
            let (code, stdout, stderr) = export(&lab, &args);
            let w = &preset.workload;
            // A linked-sync variant has no fio equivalent: refused naming link_sync.
            let linked = variant.as_ref().is_some_and(|v| {
                preset.series.as_ref().is_some_and(|plan| {
                    plan.variants
                        .iter()
                        .any(|x| &x.label == v && x.set.iter().any(|s| s == "link_sync=true"))
                })
            });
            if linked {
                assert_eq!(code, 2, "{what} must be refused: {stdout}");
                assert!(stderr.contains("link_sync"), "{what}: {stderr}");
                refused += 1;
                continue;
            }
            if w.kind() == WorkloadKind::Fileio && w.flat().mode == FileioMode::Fio {
                assert_eq!(code, 0, "{what}: {stderr}");
                assert_eq!(option(&stdout, "directory"), Some(target), "{what}");
                let section = match &variant {
                    Some(v) => format!("[{}-{v}]", preset.name),
                    None => format!("[{}]", preset.name),
                };
                assert!(stdout.contains(&section), "{what}: {stdout}");
                if fio {
                    let file = lab
                        .dir
                        .path()
                        .join(format!("{}.fio", section.trim_matches(['[', ']'])));
                    std::fs::write(&file, &stdout).unwrap();
                    assert_fio_parses(&file, &what);
                }
                exported += 1;
            } else {
                assert_eq!(code, 2, "{what} must be refused: {stdout}");
                assert!(stdout.is_empty(), "{what}: refused but printed {stdout}");
                let named = if w.kind() == WorkloadKind::Fileio {
                    "mode = sysbench has no fio equivalent".to_string()
                } else {
                    format!("kind {} has no fio equivalent", w.kind().as_str())
                };
                assert!(
                    stderr.contains(&format!("error: --preset {}: {named}", preset.name)),
                    "{what}: {stderr}"
                );
                refused += 1;
            }
        }
    }
    // btrfs-log-commit and fsync-methods (base + 5 variants) export; the rest are refused.
    assert!(
        exported >= 7 && refused >= 5,
        "{exported} exported, {refused} refused"
    );
    assert!(
        common::entries(&lab.target).is_empty(),
        "export wrote nothing"
    );
}

#[test]
fn refusals_name_the_kind_or_field_and_exit_2() {
    let lab = Lab::new();
    for (args, words) in [
        (
            vec!["--preset", "ext4-fsync-coordination"],
            "kind grouplog has no fio equivalent: grouplog's group commit",
        ),
        (
            vec!["--preset", "xfs-cil-dbench"],
            "kind fileserver has no fio equivalent",
        ),
        (
            vec!["--preset", "jbd-sync-writers"],
            "kind smallfiles has no fio equivalent",
        ),
        (
            vec!["--preset", "btrfs-fsync-unplug"],
            "mode = sysbench has no fio equivalent",
        ),
        (
            vec!["--preset", "btrfs-log-commit", "--set", "shared_files=2"],
            "shared_files = 2 has no fio equivalent",
        ),
        (
            vec!["--preset", "btrfs-log-commit", "--set", "requests=1001"],
            "use a multiple of the thread count (--set requests=1000)",
        ),
        (
            vec!["--preset", "btrfs-log-commit", "--target", "/mnt/a:b"],
            "--target: target '/mnt/a:b' cannot be written as fio's directory=",
        ),
        (
            vec!["--preset", "btrfs-log-commit", "--job", "global"],
            "--job: fio job name 'global'",
        ),
        (
            vec!["--preset", "fsync-methods", "--variant", "nope"],
            "--variant nope: preset fsync-methods has no such variant; use one of fdatasync",
        ),
        (
            vec!["--preset", "btrfs-log-commit", "--variant", "x"],
            "has no series of variants; drop --variant",
        ),
        (vec!["--preset", "no-such-preset"], "unknown preset"),
        (vec!["--run", "99"], "no run with id 99"),
    ] {
        let (code, stdout, stderr) = export(&lab, &args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert!(stderr.contains(words), "{args:?}: {stderr}");
    }
    // Neither or both sources: clap's usage error, also exit 2.
    assert_eq!(export(&lab, &[]).0, 2);
    assert_eq!(
        export(&lab, &["--preset", "fsync-methods", "--run", "1"]).0,
        2
    );
}

#[test]
fn a_series_preset_says_which_workload_was_exported() {
    let lab = Lab::new();
    let (code, stdout, stderr) = export(&lab, &["--preset", "fsync-methods"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("exported its base workload"), "{stderr}");
    assert!(stderr.contains("--variant NAME"), "{stderr}");
    assert_eq!(option(&stdout, "fdatasync"), Some("1"));
    let (code, stdout, stderr) =
        export(&lab, &["--preset", "fsync-methods", "--variant", "o_dsync"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("exported variant o_dsync"), "{stderr}");
    assert_eq!(option(&stdout, "sync"), Some("dsync"));
    assert_eq!(option(&stdout, "fdatasync"), None);
    assert!(stdout.contains("# From: preset fsync-methods at scale 1, variant o_dsync"));
    assert!(stdout.contains("# No directory= line"), "{stdout}");
}

#[test]
fn output_is_created_never_replaced_without_force_and_never_followed() {
    let lab = Lab::new();
    let out = lab.dir.path().join("job.fio");
    let out_text = out.to_str().unwrap();
    let args = ["--preset", "btrfs-log-commit", "--output", out_text];
    let (code, stdout, stderr) = export(&lab, &args);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.is_empty());
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(written.contains("[btrfs-log-commit]"));
    assert!(written.contains(&format!(
        "fio --directory=DIR --output-format=json --output=fio-result.json {out_text}"
    )));

    let (code, _, stderr) = export(&lab, &args);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("already exists") && stderr.contains("--force"),
        "{stderr}"
    );

    // A symlink planted at the path: refused, and with --force replaced, not written through.
    let victim = lab.dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let link = lab.dir.path().join("link.fio");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let link_args = [
        "--preset",
        "btrfs-log-commit",
        "--output",
        link.to_str().unwrap(),
    ];
    let (code, _, stderr) = export(&lab, &link_args);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");
    let mut forced = link_args.to_vec();
    forced.push("--force");
    let (code, _, stderr) = export(&lab, &forced);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(
        !std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&link)
            .unwrap()
            .contains("[btrfs-log-commit]")
    );
}

#[test]
fn a_stored_run_exports_its_workload_and_an_imported_one_is_refused() {
    let fio = fio_available("a_stored_run_exports_its_workload");
    let lab = Lab::new();
    let run = lab.run_json(&[
        "--threads",
        "2",
        "--bs",
        "4k",
        "--file-size",
        "64k",
        "--sync",
        "fdatasync",
        "--sync-every",
        "4",
        "--label",
        "before",
    ]);
    let id = run["id"].as_i64().unwrap().to_string();
    let (code, stdout, stderr) = export(&lab, &["--run", &id]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(&format!("[run-{id}]")), "{stdout}");
    assert!(
        stdout.contains(&format!("# From: run {id} (label before)")),
        "{stdout}"
    );
    assert_eq!(option(&stdout, "numjobs"), Some("2"));
    assert_eq!(option(&stdout, "fdatasync"), Some("4"));
    assert_eq!(option(&stdout, "size"), Some("64k"));
    if fio {
        let file = lab.dir.path().join("run.fio");
        std::fs::write(&file, &stdout).unwrap();
        assert_fio_parses(&file, "a stored run's job");
    }

    // A run imported from fio (the seed-000 fixture, stored as `fsynclab import` stores
    // it): its figures are fio's, and so are its options; exporting a guess is refused.
    let text = std::fs::read_to_string(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("tests/fixtures/fio/seed000-json.json"),
    )
    .unwrap();
    let output = fsynclab::fio::import::parse_fio_output(&text).unwrap();
    let store = fsynclab::store::Store::open(&lab.db).unwrap();
    let ids = fsynclab::lab::import::store_imported(&store, &output.runs, None, None).unwrap();
    drop(store);
    let imported = ids[0];
    let (code, stdout, stderr) = export(&lab, &["--run", &imported.to_string()]);
    assert_eq!(code, 2, "{stdout}");
    assert!(
        stderr.contains(&format!(
            "run {imported} was imported from fio; its job options are in `fsynclab show {imported}`"
        )),
        "{stderr}"
    );
}

/// fio's counts from its JSON output: (writes, periodic syncs) summed over the jobs.
fn fio_counts(json: &Value) -> (u64, u64) {
    let jobs = json["jobs"].as_array().expect("fio jobs");
    jobs.iter().fold((0, 0), |(w, s), job| {
        (
            w + job["write"]["total_ios"].as_u64().unwrap(),
            s + job["sync"]["lat_ns"]["N"].as_u64().unwrap_or(0),
        )
    })
}

/// Exports `settings` on top of btrfs-log-commit into `dir`, runs it with real fio, and
/// runs the same spec with fsynclab on `dir` too: (fio writes, fio syncs, fsynclab writes,
/// fsynclab syncs).
fn round_trip(lab: &Lab, settings: &[&str]) -> (u64, u64, u64, u64) {
    let fio_dir = lab.dir.path().join("fio-files");
    std::fs::create_dir_all(&fio_dir).unwrap();
    let job = lab.dir.path().join("round-trip.fio");
    let _ = std::fs::remove_file(&job);
    let mut args = vec![
        "--preset",
        "btrfs-log-commit",
        "--output",
        job.to_str().unwrap(),
    ];
    args.extend(["--target", fio_dir.to_str().unwrap()]);
    let mut run_args = vec!["--preset", "btrfs-log-commit"];
    for s in settings {
        args.extend(["--set", s]);
        run_args.extend(["--set", s]);
    }
    let (code, _, stderr) = export(lab, &args);
    assert_eq!(code, 0, "{stderr}");
    let result = lab.dir.path().join("fio-result.json");
    let out = Command::new("fio")
        .arg("--output-format=json")
        .arg(format!("--output={}", result.display()))
        .arg(&job)
        .output()
        .expect("run fio");
    assert!(
        out.status.success(),
        "fio failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fio_json: Value = serde_json::from_slice(&std::fs::read(&result).unwrap()).unwrap();
    std::fs::remove_dir_all(&fio_dir).unwrap();
    let (fio_writes, fio_syncs) = fio_counts(&fio_json);
    let run = lab.run_json(&run_args);
    assert_eq!(run["status"], "finished", "{run}");
    (
        fio_writes,
        fio_syncs,
        run["writes"].as_u64().unwrap(),
        run["syncs"].as_u64().unwrap(),
    )
}

#[test]
fn the_exported_seed000_shape_does_what_fsynclab_does() {
    if !fio_available("the_exported_seed000_shape_does_what_fsynclab_does") {
        return;
    }
    let lab = Lab::new();
    // The seed-000 job (the fixture's shape): 4 jobs, random 4k writes, fsync after each.
    let threads = 4;
    let (fio_w, fio_s, lab_w, lab_s) =
        round_trip(&lab, &["threads=4", "file_size=256k", "io_size=256k"]);
    eprintln!(
        "seed-000 shape: fio {fio_w} writes {fio_s} syncs, fsynclab {lab_w} writes {lab_s} syncs"
    );
    assert_eq!(fio_w, 4 * 64, "fio wrote each job's io_size");
    assert_eq!(lab_w, fio_w, "the same writes");
    // fio issues a job's periodic fsync before its next write, so the last write of each
    // job is never followed by one: writes - jobs (the fixtures: 4 x 2048 -> 8188).
    assert_eq!(fio_s, fio_w - threads);
    // The engine counts as fio does (no periodic sync after a size-based job's last write).
    assert_eq!(lab_s, fio_s, "fsynclab syncs vs fio's");

    // A request count splits into per-job io_size: the same total writes.
    let (fio_w, _, lab_w, _) = round_trip(
        &lab,
        &["threads=4", "file_size=64k", "requests=200", "sync_every=8"],
    );
    assert_eq!((fio_w, lab_w), (200, 200));
    assert!(
        common::entries(&lab.target).is_empty(),
        "{:?}",
        common::entries(&lab.target)
    );
}

/// Exports btrfs-log-commit with `settings` (one sequential job writing 64 KiB of a 256 KiB
/// file), runs it with real fio and with `fsynclab run --keep`: (the fallocate= line, fio's
/// file size, fsynclab's file size).
fn file_sizes_after(lab: &Lab, settings: &[&str]) -> (String, u64, u64) {
    let fio_dir = lab.dir.path().join("fio-sizes");
    std::fs::create_dir_all(&fio_dir).unwrap();
    let job = lab.dir.path().join("sizes.fio");
    let _ = std::fs::remove_file(&job);
    let mut args = vec!["--preset", "btrfs-log-commit", "--output"];
    args.push(job.to_str().unwrap());
    args.extend(["--target", fio_dir.to_str().unwrap()]);
    let mut run_args = vec!["--preset", "btrfs-log-commit", "--keep"];
    for s in settings {
        args.extend(["--set", s]);
        run_args.extend(["--set", s]);
    }
    let (code, _, stderr) = export(lab, &args);
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(&job).unwrap();
    let fallocate = option(&text, "fallocate").unwrap_or("").to_string();
    // Keep fio's file this once (the export says unlink=1) to measure its size.
    assert!(text.contains("\nunlink=1\n"), "{text}");
    std::fs::write(&job, text.replace("\nunlink=1\n", "\nunlink=0\n")).unwrap();
    let out = Command::new("fio")
        .arg("--output-format=json")
        .arg(&job)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let size_of_only_file = |dir: &Path| {
        let files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        std::fs::metadata(&files[0]).unwrap().len()
    };
    let fio_size = size_of_only_file(&fio_dir);
    std::fs::remove_dir_all(&fio_dir).unwrap();
    let run = lab.run_json(&run_args);
    assert_eq!(run["status"], "finished", "{run}");
    let kept = lab.target.join(format!("fsynclab-{}", run["id"]));
    let lab_size = size_of_only_file(&kept);
    std::fs::remove_dir_all(&kept).unwrap();
    (fallocate, fio_size, lab_size)
}

#[test]
fn empty_and_sparse_files_end_the_size_fio_leaves_them() {
    if !fio_available("empty_and_sparse_files_end_the_size_fio_leaves_them") {
        return;
    }
    let lab = Lab::new();
    // The preset follows its seed's job, which says fallocate=none.
    let target = lab.target.to_str().unwrap();
    let (code, job, _) = export(&lab, &["--preset", "btrfs-log-commit", "--target", target]);
    assert_eq!((code, option(&job, "fallocate")), (0, Some("none")));
    let part = ["threads=1", "pattern=seq", "file_size=256k", "io_size=64k"];
    // prepare = empty is fio's fallocate=none: the file starts empty and 64 KiB of
    // sequential writes leave it 64 KiB long, under both tools.
    let with = |prepare: &str| {
        let mut s = part.to_vec();
        s.push(prepare);
        file_sizes_after(&lab, &s)
    };
    assert_eq!(with("prepare=empty"), ("none".into(), 64 << 10, 64 << 10));
    // prepare = sparse is fallocate=truncate: the file has its full size from the start.
    assert_eq!(
        with("prepare=sparse"),
        ("truncate".into(), 256 << 10, 256 << 10)
    );
}
