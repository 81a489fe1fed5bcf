//! fio job files refused or warned about: unsupported and unknown options, malformed
//! files, a shared filename, options from fio's JSON, and io_uring jobs kept whole.

use super::*;

#[test]
fn unsupported_options_are_refused_by_name() {
    let cases = [
        ("rw=read", "reads"),
        ("rw=randread", "reads"),
        ("readwrite=randrw", "mixes"),
        ("rw=rw", "mixes"),
        ("rw=trim", "trims"),
        ("rw=write:4k", "offset"),
        ("rw=append", "not a fio I/O pattern"),
        ("ioengine=libaio", "libaio engine"),
        ("ioengine=posixaio", "posixaio engine"),
        ("bs=4k,8k", "list"),
        ("bs=4k-16k", "range"),
        ("nrfiles=4", "several files"),
        ("filename=/etc/passwd", "plain file name"),
        ("filename=a:b", "plain file name"),
        ("filename=/dev/../etc/passwd", "one device path"),
        ("filename=/dev/sda:/dev/sdb", "one device path"),
        ("filename=/dev/", "one device path"),
        ("offset=1m", "device job only"),
        ("directory=/a:/b", "several directories"),
        ("direct", "requires an argument"),
        ("end_fsync=yes", "not 0 or 1"),
        ("numjobs=many", "whole number"),
        ("numjobs=$ncpus", "reserved keywords"),
        ("numjobs=99999999999", "out of range"),
        ("fsync=(1+1)", "arithmetic"),
    ];
    for (line, words) in cases {
        let e = err_text(line);
        let key = line.split('=').next().unwrap();
        assert!(e.starts_with(&format!("fio option {key}")), "{line}: {e}");
        assert!(e.contains("(line 4)") && e.contains(words), "{line}: {e}");
    }
    let e = spec_of("[j]\nsize=1m\n").unwrap_err().to_string();
    assert!(e.contains("rw is not set") && e.contains("rw=read"), "{e}");
    let e = err_text("numjobs=0");
    assert!(e.starts_with("fio option numjobs"), "{e}");
}

#[test]
fn filename_shares_one_file_between_the_clones() {
    let job = job("filename=data\nnumjobs=4").unwrap();
    assert_eq!(job.spec.flat().shared_files, Some(1));
    assert!(
        texts(&job.warnings)[0].contains("filename=data"),
        "{:?}",
        job.warnings
    );
    assert_eq!(
        self::job("filename=data").unwrap().spec.flat().shared_files,
        None
    );
}

#[test]
fn a_device_filename_runs_on_the_device_in_its_own_parts() {
    let one = job("filename=/dev/sdb\noffset=16m").unwrap();
    assert_eq!(one.device, Some(std::path::PathBuf::from("/dev/sdb")));
    assert_eq!(one.offset, 16 << 20);
    assert_eq!(
        one.spec.flat().shared_files,
        None,
        "no shared file on a device"
    );
    let two = job("filename=/dev/sdb\nnumjobs=2\noffset_increment=1m").unwrap();
    assert_eq!((two.device.is_some(), two.offset), (true, 0));
    assert_eq!(two.spec.flat().threads, 2);
    // Clones writing the same part (fio's default) are not what the engine does.
    let e = err_text("filename=/dev/sdb\nnumjobs=2");
    assert!(
        e.contains("overlapping") && e.contains("offset_increment=1048576"),
        "{e}"
    );
    let e = err_text("filename=/dev/sdb\nnumjobs=2\noffset_increment=512k");
    assert!(e.contains("overlapping"), "{e}");
    let e = err_text("filename=/dev/sdb\nnumjobs=2\noffset_increment=2m");
    assert!(e.contains("leaves gaps"), "{e}");
    let e = err_text("filename=/dev/sdb\ndirectory=/mnt");
    assert!(e.contains("directory") && e.contains("device"), "{e}");
    // A file job's offset of 0 is fio's default: nothing to refuse.
    let file = job("offset=0\noffset_increment=0").unwrap();
    assert_eq!((file.device, file.offset), (None, 0));
}

#[test]
fn unknown_options_warn_once_and_strict_refuses_them() {
    let text = "[j]\nrw=write\nsize=1m\nloops=3\nbogus\niodepth_batch=2\n";
    let job = spec_of(text).unwrap();
    assert_eq!(job.unknown, ["loops", "bogus", "iodepth_batch"]);
    assert_eq!(job.warnings.len(), 1, "{:?}", job.warnings);
    assert!(
        texts(&job.warnings)[0].contains("loops (line 4), bogus (line 5), iodepth_batch (line 6)"),
        "{:?}",
        job.warnings
    );
    let file = parse_job_file(text, &no_env).unwrap();
    let e = options_to_spec(&file.jobs[0].options, true).unwrap_err();
    assert_eq!(
        e,
        JobError::Unknown {
            options: vec![
                "loops (line 4)".into(),
                "bogus (line 5)".into(),
                "iodepth_batch (line 6)".into()
            ]
        }
    );
    let warned = self::job("iodepth=8").unwrap();
    assert!(
        texts(&warned.warnings)[0].contains("iodepth=8"),
        "{:?}",
        warned.warnings
    );
}

#[test]
fn options_from_fio_json_have_no_line() {
    // The importer describes runs from fio's "job options" map (no lines).
    let map: BTreeMap<&str, &str> = [
        ("rw", "randwrite"),
        ("bs", "4k"),
        ("size", "8m"),
        ("rate", "1m"),
    ]
    .into_iter()
    .collect();
    let options: Vec<FioOption> = map
        .iter()
        .map(|(k, v)| FioOption {
            key: k.to_string(),
            value: Some(v.to_string()),
            line: 0,
        })
        .collect();
    let job = options_to_spec(&options, false).unwrap();
    assert_eq!(job.unknown, ["rate"]);
    assert!(
        texts(&job.warnings)[0].ends_with(": rate"),
        "{:?}",
        job.warnings
    );
    let bad = [FioOption {
        key: "rw".into(),
        value: Some("read".into()),
        line: 0,
    }];
    let e = options_to_spec(&bad, false).unwrap_err().to_string();
    assert!(e.starts_with("fio option rw=read: reads;"), "{e}");
}

#[test]
fn malformed_files_are_refused_naming_the_line() {
    let cases: [(&str, &str); 10] = [
        ("rw=write\n[j]\n", "line 1: option `rw=write` is outside"),
        ("[j\nrw=write\n", "line 1: section header `[j`"),
        ("[]\n", "empty name"),
        ("[a/b]\n", "'/'"),
        ("[j]\n=4k\n", "line 2: `=4k` has no option name"),
        ("[j]\ninclude other.fio\n", "line 2: `include`"),
        (
            "[j]\nrw=write\n[j]\n",
            "line 3: job [j] is already defined on line 1",
        ),
        ("[global]\nrw=write\n", "defines no job"),
        ("", "defines no job"),
        ("[j]\nname=a\u{202e}b\n", "line 2"),
    ];
    for (text, words) in cases {
        let e = parse_job_file(text, &no_env).unwrap_err().to_string();
        assert!(e.contains(words), "{text:?}: {e}");
    }
    let long = format!("[j]\nname={}\n", "x".repeat(MAX_LINE_BYTES));
    assert!(matches!(
        parse_job_file(&long, &no_env),
        Err(JobFileError::LineTooLong { line: 2, .. })
    ));
    let many = "[j]\n".to_string() + &"; c\n".repeat(MAX_JOB_LINES);
    assert!(matches!(
        parse_job_file(&many, &no_env),
        Err(JobFileError::TooManyLines { .. })
    ));
    let jobs: String = (0..=MAX_JOBS).map(|i| format!("[j{i}]\n")).collect();
    assert!(matches!(
        parse_job_file(&jobs, &no_env),
        Err(JobFileError::TooManyJobs { .. })
    ));
    let huge = " ".repeat(MAX_JOB_FILE_BYTES as usize + 1);
    assert!(matches!(
        parse_job_file(&huge, &no_env),
        Err(JobFileError::TooLarge { .. })
    ));
}

#[test]
fn a_long_variable_is_refused() {
    let env = |_: &str| Some("9".repeat(MAX_LINE_BYTES + 1));
    let e = parse_job_file("[j]\nsize=${BIG}\n", &env).unwrap_err();
    assert!(e.to_string().contains("after ${VAR} substitution"), "{e}");
}

#[test]
fn the_job_file_reader_refuses_what_is_not_a_small_regular_file() {
    let e = read_job_file(std::path::Path::new("/dev/zero"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/dev/zero") && e.contains("not a regular file"),
        "{e}"
    );
    let e = read_job_file(std::path::Path::new("/nonexistent/x.fio")).unwrap_err();
    assert!(e.to_string().contains("/nonexistent/x.fio"), "{e}");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/qd1.fio");
    assert!(read_job_file(&path).unwrap().contains("[qd1]"));
}

#[test]
fn io_uring_jobs_keep_their_engine_depth_and_fixed_buffers() {
    let job = self::job("ioengine=io_uring\niodepth=8\nfixedbufs\n").unwrap();
    assert_eq!(job.spec.flat().ioengine, crate::spec::IoEngine::IoUring);
    assert_eq!(
        (job.spec.flat().iodepth, job.spec.flat().fixedbufs),
        (8, true)
    );
    assert!(
        texts(&job.warnings).iter().all(|w| !w.contains("iodepth")),
        "{:?}",
        job.warnings
    );
    // Registered buffers without io_uring: refused with fio's option names.
    let e = self::job("ioengine=psync\nfixedbufs=1\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("fio option fixedbufs") && e.contains("ioengine=io_uring"),
        "{e}"
    );
    // fio's syncs at a depth above 1 are unordered: the import keeps that, and says so.
    let job = self::job("ioengine=io_uring\niodepth=8\nfdatasync=2\n").unwrap();
    assert_eq!(
        job.spec.flat().sync_order,
        crate::spec::SyncOrder::Unordered
    );
    assert!(
        texts(&job.warnings)
            .iter()
            .any(|w| w.contains("iodepth=8 with fdatasync") && w.contains("unordered")),
        "{:?}",
        job.warnings
    );
    for ordered in ["iodepth=1\nfsync=1", "iodepth=8", "iodepth=1"] {
        let job = self::job(&format!("ioengine=io_uring\n{ordered}\n")).unwrap();
        assert_eq!(
            job.spec.flat().sync_order,
            crate::spec::SyncOrder::Ordered,
            "{ordered}"
        );
    }
    // A depth no engine can have is refused naming iodepth.
    let e = self::job("ioengine=io_uring\niodepth=5000\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("fio option iodepth"), "{e}");
}
