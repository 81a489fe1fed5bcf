use super::*;
use crate::spec::{FlatSpec, KeyNames, OpenFlags, Worded, WorkloadKind};
use std::path::PathBuf;

/// The seed-000 shape at the fixture's size: 4 threads, 8 MiB each, fsync every write.
fn seed000() -> WorkloadSpec {
    FlatSpec {
        threads: 4,
        block_size: 4096,
        file_size: 8 << 20,
        io_size: Some(8 << 20),
        prepare: Prepare::Empty,
        ..FlatSpec::default()
    }
    .typed()
}

fn export(spec: &WorkloadSpec) -> String {
    export_job(spec, "writers", Some(Path::new("/mnt/test"))).unwrap()
}

/// The `key=value` lines of the job section, in order (comments and the section skipped).
fn options(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('[') && !l.is_empty())
        .map(|l| {
            let (k, v) = l.split_once('=').expect("key=value");
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn value(text: &str, key: &str) -> Option<String> {
    let found: Vec<String> = options(text)
        .into_iter()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v)
        .collect();
    assert!(found.len() <= 1, "{key} written twice");
    found.into_iter().next()
}

fn refusal(spec: &WorkloadSpec) -> ExportError {
    export_job(spec, "j", None).unwrap_err()
}

fn refused_field(spec: &WorkloadSpec) -> Setting {
    match refusal(spec) {
        ExportError::Field { field, .. } => field,
        other => panic!("not a field refusal: {other}"),
    }
}

#[test]
fn the_seed000_shape_is_the_fixture_job() {
    let text = export(&seed000());
    assert!(text.contains("\n[writers]\n"), "{text}");
    assert_eq!(
        options(&text),
        [
            ("ioengine", "psync"),
            ("rw", "randwrite"),
            ("bs", "4k"),
            ("size", "8m"),
            ("io_size", "8m"),
            ("numjobs", "4"),
            ("fsync", "1"),
            ("fallocate", "none"),
            ("randseed", "1592653249"),
            ("group_reporting", "1"),
            ("unlink", "1"),
            ("directory", "/mnt/test"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
    );
}

#[test]
fn the_header_names_version_source_workload_and_commands() {
    let notes = ExportNotes {
        source: "preset btrfs-log-commit at scale 0.002".into(),
        commands: vec!["fio JOB".into(), "fsynclab import OUT".into()],
    };
    let text = export_job_noted(&seed000(), "w", None, &notes).unwrap();
    let comments: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
    assert!(comments[0].contains(env!("CARGO_PKG_VERSION")), "{text}");
    assert!(text.contains("# From: preset btrfs-log-commit at scale 0.002\n"));
    assert!(text.contains(&format!("# Workload: {}\n", seed000().describe())));
    assert!(
        text.contains("#   fio JOB\n#   fsynclab import OUT\n"),
        "{text}"
    );
    // Every line is a comment, the section or an option: nothing else for fio to misread.
    for line in text.lines() {
        assert!(
            line.starts_with('#') || line.starts_with('[') || line.contains('='),
            "{line:?}"
        );
    }
    let bare = export_job(&seed000(), "w", None).unwrap();
    assert!(bare.contains("# Run it: fio THIS_FILE\n"));
    assert!(!bare.contains("# From:"));
}

#[test]
fn without_a_directory_a_comment_says_how_to_add_one() {
    let text = export_job(&seed000(), "w", None).unwrap();
    assert_eq!(value(&text, "directory"), None);
    assert!(text.contains("# No directory= line"), "{text}");
}

#[test]
fn header_text_cannot_inject_a_line() {
    let notes = ExportNotes {
        source: "preset x\ndirectory=/etc\r[global]\u{1b}[2J".into(),
        commands: vec!["a\nfsync=0".into()],
    };
    let text = export_job_noted(&seed000(), "w", None, &notes).unwrap();
    for line in text.lines() {
        assert!(
            line.starts_with('#') || line == "[w]" || options(line).len() == 1,
            "{line:?}"
        );
    }
    assert_eq!(value(&text, "directory"), None);
    assert_eq!(value(&text, "fsync").as_deref(), Some("1"));
    assert!(!text.contains('\u{1b}'));
}

#[test]
fn pattern_maps_to_rw() {
    let mut spec = seed000();
    spec.edit(|f| f.pattern = Pattern::Seq);
    assert_eq!(value(&export(&spec), "rw").as_deref(), Some("write"));
    spec.edit(|f| f.pattern = Pattern::Rand);
    assert_eq!(value(&export(&spec), "rw").as_deref(), Some("randwrite"));
}

#[test]
fn sizes_use_fios_suffixes_or_bytes() {
    assert_eq!(fio_size(4096), "4k");
    assert_eq!(fio_size(512), "512");
    assert_eq!(fio_size(6 << 20), "6m");
    assert_eq!(fio_size(3 << 30), "3g");
    assert_eq!(fio_size(2 << 40), "2t");
    assert_eq!(fio_size((1 << 20) + 512), "1049088");
    assert_eq!(fio_size(1536), "1536");
    let mut spec = seed000();
    spec.edit(|f| f.block_size = 8192);
    spec.edit(|f| f.file_size = 10 * 8192 + 100); // a tail shorter than a block is never written
    spec.edit(|f| f.io_size = Some(3 * 8192 + 5));
    let text = export(&spec);
    assert_eq!(value(&text, "bs").as_deref(), Some("8k"));
    assert_eq!(value(&text, "size").as_deref(), Some("82020"));
    assert_eq!(value(&text, "io_size").as_deref(), Some("24k"));
}

#[test]
fn io_size_defaults_to_the_file_size() {
    let mut spec = seed000();
    spec.edit(|f| f.io_size = None);
    spec.edit(|f| f.file_size = 2 << 20);
    assert_eq!(value(&export(&spec), "io_size").as_deref(), Some("2m"));
    spec.edit(|f| f.io_size = Some(6 << 20)); // larger than the file: fio loops over the region
    assert_eq!(value(&export(&spec), "io_size").as_deref(), Some("6m"));
}

#[test]
fn requests_split_evenly_over_jobs() {
    let mut spec = seed000();
    spec.common.requests = Some(1000);
    let text = export(&spec);
    assert_eq!(value(&text, "io_size").as_deref(), Some("1000k"));
    assert!(text.contains("250 writes per job"), "{text}");
    spec.common.requests = Some(1001);
    let err = refusal(&spec);
    assert_eq!(
        err.worded(&KeyNames),
        "requests = 1001 has no fio equivalent: fio gives each of the 4 jobs its own \
         count (io_size), and 1001 writes do not split evenly over 4 threads; use a \
         multiple of the thread count (<requests 1000>)"
    );
    spec.common.requests = Some(3);
    assert!(refusal(&spec).worded(&KeyNames).contains("<requests 4>"));
    spec.common.requests = Some(crate::spec::MAX_REQUESTS);
    spec.common.threads = 1;
    spec.edit(|f| f.block_size = crate::spec::MAX_BLOCK_SIZE);
    spec.edit(|f| f.file_size = crate::spec::MAX_BLOCK_SIZE);
    spec.edit(|f| f.io_size = None);
    assert_eq!(refused_field(&spec), Setting::REQUESTS);
}

#[test]
fn warmup_is_ramp_time() {
    let mut spec = seed000();
    assert_eq!(value(&export(&spec), "ramp_time"), None);
    spec.common.warmup_s = Some(2.0);
    assert_eq!(value(&export(&spec), "ramp_time").as_deref(), Some("2s"));
    spec.common.warmup_s = Some(0.25);
    assert_eq!(value(&export(&spec), "ramp_time").as_deref(), Some("250ms"));
}

#[test]
fn duration_is_runtime_time_based() {
    let mut spec = seed000();
    spec.common.duration_s = Some(5.0);
    let text = export(&spec);
    assert_eq!(value(&text, "runtime").as_deref(), Some("5s"));
    assert_eq!(value(&text, "time_based").as_deref(), Some("1"));
    assert_eq!(
        value(&text, "io_size"),
        None,
        "a duration run ignores io_size"
    );
    spec.common.duration_s = Some(1.5);
    assert_eq!(value(&export(&spec), "runtime").as_deref(), Some("1500ms"));
    spec.common.duration_s = Some(0.0012345);
    assert_eq!(value(&export(&spec), "runtime").as_deref(), Some("1234us"));
}

#[test]
fn threads_are_numjobs() {
    let mut spec = seed000();
    spec.common.threads = 17;
    assert_eq!(value(&export(&spec), "numjobs").as_deref(), Some("17"));
}

#[test]
fn sync_methods_and_their_interval() {
    let mut spec = seed000();
    spec.edit(|f| f.sync_every = 8);
    let text = export(&spec);
    assert_eq!(value(&text, "fsync").as_deref(), Some("8"));
    assert!(text.contains("one sync fewer"), "{text}");
    spec.edit(|f| f.sync = SyncMethod::Fdatasync);
    let text = export(&spec);
    assert_eq!(value(&text, "fdatasync").as_deref(), Some("8"));
    assert_eq!(value(&text, "fsync"), None);
    spec.edit(|f| f.sync = SyncMethod::SyncFileRange);
    let text = export(&spec);
    assert_eq!(
        value(&text, "sync_file_range").as_deref(),
        Some("wait_before,write,wait_after:8")
    );
    spec.edit(|f| f.sync = SyncMethod::None);
    let text = export(&spec);
    for key in ["fsync", "fdatasync", "sync_file_range", "sync"] {
        assert_eq!(value(&text, key), None, "{key}");
    }
}

#[test]
fn open_flags_are_sync_and_direct() {
    let mut spec = seed000();
    spec.edit(|f| f.sync = SyncMethod::None);
    spec.edit(|f| {
        f.open_flags = OpenFlags {
            dsync: true,
            ..OpenFlags::default()
        }
    });
    assert_eq!(value(&export(&spec), "sync").as_deref(), Some("dsync"));
    spec.edit(|f| f.open_flags.sync = true); // O_SYNC includes O_DSYNC
    assert_eq!(value(&export(&spec), "sync").as_deref(), Some("sync"));
    spec.edit(|f| {
        f.open_flags = OpenFlags {
            direct: true,
            ..OpenFlags::default()
        }
    });
    let text = export(&spec);
    assert_eq!(value(&text, "direct").as_deref(), Some("1"));
    assert_eq!(value(&text, "sync"), None);
    assert_eq!(value(&export(&seed000()), "direct"), None);
}

#[test]
fn prepare_maps_to_fallocate_and_overwrite() {
    let mut spec = seed000();
    spec.edit(|f| f.prepare = Prepare::Sparse);
    let text = export(&spec);
    assert_eq!(value(&text, "fallocate").as_deref(), Some("truncate"));
    assert_eq!(value(&text, "overwrite"), None);
    spec.edit(|f| f.prepare = Prepare::Empty);
    let text = export(&spec);
    assert_eq!(value(&text, "fallocate").as_deref(), Some("none"));
    assert_eq!(value(&text, "overwrite"), None);
    spec.edit(|f| f.prepare = Prepare::Fallocate);
    assert_eq!(
        value(&export(&spec), "fallocate").as_deref(),
        Some("native")
    );
    spec.edit(|f| f.prepare = Prepare::Fill);
    let text = export(&spec);
    assert_eq!(value(&text, "fallocate").as_deref(), Some("none"));
    assert_eq!(value(&text, "overwrite").as_deref(), Some("1"));
}

#[test]
fn final_sync_is_end_fsync() {
    let mut spec = seed000();
    assert_eq!(value(&export(&spec), "end_fsync"), None);
    spec.edit(|f| f.final_sync = true);
    let text = export(&spec);
    assert_eq!(value(&text, "end_fsync").as_deref(), Some("1"));
    assert!(text.contains("does not count it in sync.lat_ns"));
}

#[test]
fn seed_is_randseed_within_fios_range() {
    let mut spec = seed000();
    spec.common.seed = 42;
    assert_eq!(value(&export(&spec), "randseed").as_deref(), Some("42"));
    spec.common.seed = u64::MAX;
    let text = export(&spec);
    assert_eq!(
        value(&text, "randseed").as_deref(),
        Some("9223372036854775807")
    );
    assert!(text.contains("modulo 2^63"), "{text}");
}

#[test]
fn one_shared_file_is_a_filename_every_job_opens() {
    let mut spec = seed000();
    spec.edit(|f| f.shared_files = Some(1));
    let text = export(&spec);
    assert_eq!(
        value(&text, "filename").as_deref(),
        Some("fsynclab-shared.0.dat")
    );
    spec.edit(|f| f.pattern = Pattern::Seq);
    assert_eq!(refused_field(&spec), Setting::PATTERN);
    spec.common.threads = 1;
    assert!(export_job(&spec, "j", None).is_ok());
}

#[test]
fn several_shared_files_are_refused() {
    let mut spec = seed000();
    spec.edit(|f| f.shared_files = Some(3));
    let err = refusal(&spec);
    let words = err.worded(&KeyNames);
    assert!(
        words.starts_with("shared_files = 3 has no fio equivalent"),
        "{words}"
    );
    assert!(words.contains("<shared_files 1>"), "{words}");
}

#[test]
fn sysbench_mode_is_refused_naming_the_mode() {
    let mut spec = seed000();
    spec.edit(|f| f.mode = FileioMode::Sysbench);
    spec.edit(|f| f.io_size = None);
    spec.common.requests = Some(600);
    spec.edit(|f| f.sync_every = 5);
    let words = refusal(&spec).worded(&KeyNames);
    assert!(
        words.starts_with("mode = sysbench has no fio equivalent"),
        "{words}"
    );
    assert!(words.contains("<mode fio>"), "{words}");
}

#[test]
fn other_kinds_are_refused_naming_the_kind_and_why() {
    let mut spec = WorkloadSpec::default();
    for (kind, why) in [
        (WorkloadKind::Smallfiles, "fs_mark"),
        (WorkloadKind::Fileserver, "dbench"),
        (WorkloadKind::Grouplog, "group commit"),
        (WorkloadKind::Fio, "imported"),
    ] {
        spec.edit(|f| f.kind = kind);
        spec.common.duration_s = Some(1.0);
        let err = refusal(&spec);
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("kind {} has no fio equivalent", kind.as_str())),
            "{text}"
        );
        assert!(text.contains(why) && text.contains("fsynclab"), "{text}");
    }
}

#[test]
fn an_invalid_spec_is_refused_with_its_field() {
    let mut spec = seed000();
    spec.edit(|f| f.block_size = 100);
    match refusal(&spec) {
        ExportError::Invalid { source } => assert_eq!(source.field, Setting::BLOCK_SIZE),
        other => panic!("{other}"),
    }
}

#[test]
fn hostile_directories_are_refused_naming_what_fio_would_misread() {
    for (dir, words) in [
        ("/mnt/a;b", "';'"),
        ("/mnt/a#b", "'#'"),
        ("/mnt/a:b", "':'"),
        ("/mnt/a\\b", "'\\'"),
        ("/mnt/${HOME}", "${VAR}"),
        ("/mnt/$ncpus", "$keywords"),
        ("/mnt/a\nfsync=0", "control"),
        ("/mnt/a\rb", "control"),
        ("/mnt/a\u{202e}b", "invisible"),
        ("/mnt/a ", "blanks"),
        (" /mnt/a", "blanks"),
        ("", "empty"),
    ] {
        let err = export_job(&seed000(), "j", Some(Path::new(dir))).unwrap_err();
        let text = err.worded(&KeyNames);
        assert!(
            matches!(err, ExportError::Directory { .. }) && text.contains(words),
            "{dir:?}: {text}"
        );
        assert!(text.starts_with("target '"), "{text}");
        assert!(!text.contains('\n'), "{text}");
    }
    use std::os::unix::ffi::OsStrExt;
    let invalid = PathBuf::from(std::ffi::OsStr::from_bytes(b"/mnt/\xff"));
    let text = export_job(&seed000(), "j", Some(&invalid))
        .unwrap_err()
        .to_string();
    assert!(text.contains("UTF-8"), "{text}");
    for fine in ["/mnt/test dir", "/mnt/a=b", "/mnt/é", "relative/dir"] {
        let text = export_job(&seed000(), "j", Some(Path::new(fine))).unwrap();
        assert_eq!(value(&text, "directory").as_deref(), Some(fine));
    }
}

#[test]
fn job_names_are_allow_listed() {
    for bad in [
        "", "global", "GLOBAL", "a]b", "a b", "a\nb", "a;b", "a#b", "a$b", "a/b", "é",
    ] {
        let err = export_job(&seed000(), bad, None).unwrap_err();
        assert!(matches!(err, ExportError::JobName { .. }), "{bad:?}: {err}");
        assert!(!err.to_string().contains('\n'), "{err}");
    }
    let long = "a".repeat(MAX_JOB_NAME_CHARS + 1);
    assert!(export_job(&seed000(), &long, None).is_err());
    for good in ["writers", "btrfs-log-commit", "a.b_c-1", &"a".repeat(64)] {
        let text = export_job(&seed000(), good, None).unwrap();
        assert!(text.contains(&format!("\n[{good}]\n")));
    }
}

#[test]
fn io_uring_specs_export_their_engine_and_read_back_the_same() {
    let mut spec = FlatSpec {
        ioengine: crate::spec::IoEngine::IoUring,
        iodepth: 16,
        fixedbufs: true,
        duration_s: Some(3.0),
        ..FlatSpec::default()
    }
    .typed();
    let text = export(&spec);
    assert_eq!(value(&text, "ioengine").as_deref(), Some("io_uring"));
    assert_eq!(value(&text, "iodepth").as_deref(), Some("16"));
    assert_eq!(value(&text, "fixedbufs").as_deref(), Some("1"));
    let file = crate::fio::job::parse_job_file(&text, &|_: &str| None).unwrap();
    let back = crate::fio::job::options_to_spec(&file.jobs[0].options, true).unwrap();
    assert_eq!(
        (
            back.spec.flat().ioengine,
            back.spec.flat().iodepth,
            back.spec.flat().fixedbufs
        ),
        (spec.flat().ioengine, 16, true)
    );
    spec.edit(|f| f.link_sync = true);
    assert_eq!(refused_field(&spec), Setting::LINK_SYNC);
}

#[test]
fn unordered_syncs_export_as_fios_plain_shape_and_ordered_ones_say_they_differ() {
    let ordered = FlatSpec {
        ioengine: crate::spec::IoEngine::IoUring,
        iodepth: 8,
        duration_s: Some(3.0),
        ..FlatSpec::default()
    }
    .typed();
    let unordered = FlatSpec {
        sync_order: crate::spec::SyncOrder::Unordered,
        ..ordered.clone().flat()
    }
    .typed();
    let text = export(&unordered);
    assert_eq!(value(&text, "fsync").as_deref(), Some("1"));
    assert!(!text.contains("sync_order"), "{text}");
    let file = crate::fio::job::parse_job_file(&text, &|_: &str| None).unwrap();
    let back = crate::fio::job::options_to_spec(&file.jobs[0].options, true).unwrap();
    assert_eq!(
        back.spec.flat().sync_order,
        crate::spec::SyncOrder::Unordered
    );
    let text = export(&ordered);
    assert!(
        text.contains("sync_order = ordered has no fio equivalent"),
        "{text}"
    );
    assert_eq!(options(&text), options(&export(&unordered)));
}

#[test]
fn a_device_run_exports_a_device_job_that_reads_back_the_same() {
    let spec = FlatSpec {
        threads: 2,
        block_size: 4096,
        file_size: 4 << 20,
        duration_s: Some(5.0),
        sync: SyncMethod::Fdatasync,
        ..FlatSpec::default()
    }
    .typed();
    let node = Path::new("/dev/loop7");
    let text =
        export_device_job_noted(&spec, "dev", node, 1 << 20, &ExportNotes::default()).unwrap();
    assert_eq!(value(&text, "filename").as_deref(), Some("/dev/loop7"));
    assert_eq!(value(&text, "offset").as_deref(), Some("1048576"));
    assert_eq!(value(&text, "offset_increment").as_deref(), Some("4194304"));
    for gone in ["fallocate", "overwrite", "unlink", "directory"] {
        assert_eq!(value(&text, gone), None, "{gone}: {text}");
    }
    let file = crate::fio::job::parse_job_file(&text, &|_: &str| None).unwrap();
    let back = crate::fio::job::options_to_spec(&file.jobs[0].options, true).unwrap();
    assert_eq!(back.device.as_deref(), Some(node));
    assert_eq!(back.offset, 1 << 20);
    let (a, b) = (back.spec.flat(), spec.flat());
    assert_eq!(
        (a.threads, a.file_size, a.sync, a.duration_s),
        (b.threads, b.file_size, b.sync, b.duration_s)
    );
}

#[test]
fn a_sync_only_run_and_sync_file_range_then_fdatasync_are_refused() {
    let sync_only = FlatSpec {
        sync_only: true,
        duration_s: Some(2.0),
        ..FlatSpec::default()
    }
    .typed();
    assert_eq!(refused_field(&sync_only), Setting::SYNC_ONLY);
    let both = FlatSpec {
        sync: SyncMethod::SyncFileRangeFdatasync,
        ..FlatSpec::default()
    }
    .typed();
    assert_eq!(refused_field(&both), Setting::SYNC);
}
