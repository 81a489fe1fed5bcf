use std::collections::BTreeMap;
use std::path::PathBuf;

use super::*;
use crate::spec::FlatSpec;
use crate::spec::{OpenFlags, Pattern, Prepare, SyncMethod};

/// The translator's notes as the front ends word them.
fn texts(notes: &[crate::metrics::RunWarning]) -> Vec<String> {
    notes
        .iter()
        .map(|w| crate::report::warning_text(&w.clone().into(), None))
        .collect()
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fio")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// The spec of the only job of `text`.
fn spec_of(text: &str) -> Result<JobSpec, JobError> {
    let file = parse_job_file(text, &no_env).unwrap();
    assert_eq!(file.jobs.len(), 1, "{text}");
    options_to_spec(&file.jobs[0].options, false)
}

fn job(body: &str) -> Result<JobSpec, JobError> {
    spec_of(&format!("[j]\nrw=write\nsize=1m\n{body}\n"))
}

fn err_text(body: &str) -> String {
    job(body).unwrap_err().to_string()
}

#[test]
fn the_seed_000_script_job_is_its_workload() {
    let file = parse_job_file(&fixture("seed000-script.fio"), &no_env).unwrap();
    assert_eq!(file.names(), ["writers"]);
    let job = options_to_spec(&file.jobs[0].options, true).unwrap();
    let spec = &job.spec;
    assert_eq!(spec.common.threads, 8);
    assert_eq!(spec.flat().block_size, 4096);
    assert_eq!(spec.flat().file_size, 64 << 20);
    assert_eq!(spec.fileio().unwrap().io_size_per_thread(), 64 << 20);
    assert_eq!(spec.flat().pattern, Pattern::Rand);
    assert_eq!(
        (spec.flat().sync, spec.flat().sync_every),
        (SyncMethod::Fsync, 1)
    );
    // fallocate=none: fio starts from empty files the writes extend, as `empty` does.
    assert_eq!(spec.flat().prepare, Prepare::Empty);
    assert_eq!(spec.flat().open_flags, OpenFlags::default());
    assert_eq!(spec.flat().shared_files, None);
    assert_eq!(spec.common.duration_s, None);
    assert!(!spec.flat().final_sync);
    assert_eq!(job.directory, Some(PathBuf::from("/mnt/sdj")));
    assert!(job.warnings.is_empty(), "{:?}", job.warnings);
    assert!(job.unknown.is_empty());
}

#[test]
fn the_recorded_fixture_jobs_read_with_their_variable() {
    let env = |name: &str| (name == "FIODIR").then(|| "/work/fiofix/mnt".to_string());
    let file = parse_job_file(&fixture("seed000.fio"), &env).unwrap();
    let job = options_to_spec(&file.jobs[0].options, true).unwrap();
    assert_eq!(job.directory, Some(PathBuf::from("/work/fiofix/mnt")));
    assert_eq!(
        (
            job.spec.common.threads,
            job.spec.flat().file_size,
            job.spec.flat().block_size
        ),
        (4, 8 << 20, 4096)
    );
    let file = parse_job_file(&fixture("qd1.fio"), &env).unwrap();
    let job = options_to_spec(&file.jobs[0].options, true).unwrap();
    assert_eq!(job.spec.flat().pattern, Pattern::Seq);
    assert_eq!(job.spec.flat().sync, SyncMethod::Fdatasync);
    assert_eq!(job.spec.flat().file_size, 4 << 20);
    // No fallocate= in the file: fio's default, native, is fallocate(2).
    assert_eq!(job.spec.flat().prepare, Prepare::Fallocate);
}

#[test]
fn global_sections_apply_to_the_jobs_after_them() {
    let text = "; a comment\n# another\n[global]\nbs=8k\nrw=write\nsize=1m\n\n[a]\n\
                numjobs=2\n[global]\nbs=16k\n[b]\nrw=randwrite ; trailing comment\n[c]\nbs=32k # mine\n";
    let file = parse_job_file(text, &no_env).unwrap();
    assert_eq!(file.names(), ["a", "b", "c"]);
    let bs = |name: &str| {
        let job = file.job(name).unwrap();
        options_to_spec(&job.options, true).unwrap().spec
    };
    assert_eq!(
        (bs("a").flat().block_size, bs("a").flat().threads),
        (8192, 2)
    );
    assert_eq!(bs("b").flat().block_size, 16384);
    assert_eq!(bs("b").flat().pattern, Pattern::Rand);
    assert_eq!(bs("c").flat().block_size, 32768);
    assert_eq!(bs("c").flat().threads, 1);
    // Lines are kept: [global]'s bs on line 4 comes first in a's options.
    let a = &file.job("a").unwrap().options;
    assert_eq!((a[0].key.as_str(), a[0].line), ("bs", 4));
    assert_eq!(file.job("a").unwrap().line, 8);
}

#[test]
fn blanks_bare_flags_and_crlf_are_read_as_fio_reads_them() {
    let file = parse_job_file(
        "[j]\r\n  rw = write  \r\n\tsize=1m\r\ngroup_reporting\r\ntime_based=0\r\n",
        &no_env,
    )
    .unwrap();
    let opts = &file.jobs[0].options;
    assert_eq!(opts[0].key, "rw");
    assert_eq!(opts[0].value.as_deref(), Some("write"));
    assert_eq!(opts[2].value, None);
    assert!(options_to_spec(opts, true).is_ok());
}

#[test]
fn env_variables_are_substituted_and_unset_ones_are_empty() {
    let env = |name: &str| match name {
        "SIZE" => Some("64m".to_string()),
        "JOBS" => Some("4".to_string()),
        _ => None,
    };
    let text = "[j]\nrw=write\nsize=${SIZE}\nnumjobs=${JOBS}\ndirectory=/mnt${NOPE}/x\ndescription=${SIZE}${\n";
    let file = parse_job_file(text, &env).unwrap();
    let o = &file.jobs[0].options;
    assert_eq!(o[1].value.as_deref(), Some("64m"));
    assert_eq!(o[3].value.as_deref(), Some("/mnt/x"));
    // An unclosed ${ stays as written.
    assert_eq!(o[4].value.as_deref(), Some("64m${"));
    let job = options_to_spec(o, true).unwrap();
    assert_eq!(
        (job.spec.flat().file_size, job.spec.common.threads),
        (64 << 20, 4)
    );
    // An unset directory variable leaves no directory (the front end asks for a target).
    let job = spec_of("[j]\nrw=write\nsize=1m\ndirectory=${UNSET}\n").unwrap();
    assert_eq!(job.directory, None);
    assert!(
        texts(&job.warnings)[0].contains("directory= (line 4) is empty"),
        "{:?}",
        job.warnings
    );
    // An unset variable that leaves a value empty is named.
    let e = spec_of("[j]\nrw=write\nsize=${UNSET}\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("size=") && e.contains("empty"), "{e}");
    // A variable cannot smuggle a control character in.
    let evil = |_: &str| Some("a\u{1b}[2J".to_string());
    let e = parse_job_file("[j]\nname=${X}\n", &evil)
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 2") && e.contains("U+001B"), "{e}");
}

#[test]
fn sizes_follow_kb_base() {
    use super::value::{KbBase::*, parse_fio_size};
    let cases = [
        ("4096", Compat1024, 4096),
        ("4096b", Compat1024, 4096),
        ("4096B", Si1000, 4096),
        ("4k", Compat1024, 4096),
        ("4K", Compat1024, 4096),
        ("4kb", Compat1024, 4096),
        ("4KB", Compat1024, 4096),
        ("4KiB", Compat1024, 4000),
        ("4ki", Compat1024, 4000),
        ("1m", Compat1024, 1 << 20),
        ("1mi", Compat1024, 1_000_000),
        ("1g", Compat1024, 1 << 30),
        ("1t", Compat1024, 1 << 40),
        ("1p", Compat1024, 1 << 50),
        ("0x1000", Compat1024, 4096),
        ("4k", Si1000, 4000),
        ("4kb", Si1000, 4000),
        ("4KiB", Si1000, 4096),
        ("1mi", Si1000, 1 << 20),
        ("1m", Si1000, 1_000_000),
        ("1ti", Si1000, 1 << 40),
    ];
    for (text, base, bytes) in cases {
        assert_eq!(parse_fio_size(text, base), Ok(bytes), "{text} {base:?}");
    }
    for bad in [
        "",
        "k",
        "4x",
        "1.5g",
        "4 k",
        "$pagesize",
        "(4*1024)",
        "99999999999p",
    ] {
        assert!(parse_fio_size(bad, Compat1024).is_err(), "{bad}");
    }
}

#[test]
fn kb_base_applies_wherever_it_is_written() {
    // fio parses kb_base before the job's other options.
    let job = spec_of("[j]\nrw=write\nsize=64k\nbs=4KiB\nkb_base=1000\n").unwrap();
    assert_eq!(
        (job.spec.flat().file_size, job.spec.flat().block_size),
        (64_000, 4096)
    );
    // 4000-byte blocks are no multiple of 512, which O_DIRECT needs: refused naming bs.
    let e = spec_of("[j]\nrw=write\nsize=64k\nbs=4KiB\ndirect=1\n")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("fio option bs"), "{e}");
    let e = err_text("kb_base=1023");
    assert!(e.contains("kb_base=1023") && e.contains("line 4"), "{e}");
}

#[test]
fn times_have_fio_suffixes() {
    use super::value::parse_fio_time_us;
    let cases = [
        ("30", 30_000_000),
        ("30s", 30_000_000),
        ("30sec", 30_000_000),
        ("500ms", 500_000),
        ("500msec", 500_000),
        ("250us", 250),
        ("250usec", 250),
        ("2m", 120_000_000),
        ("1h", 3_600_000_000),
        ("1d", 86_400_000_000),
        ("1H", 3_600_000_000),
    ];
    for (text, us) in cases {
        assert_eq!(parse_fio_time_us(text), Ok(us), "{text}");
    }
    for bad in ["", "1.5", "3w", "10 s"] {
        assert!(parse_fio_time_us(bad).is_err(), "{bad}");
    }
    let job = job("time_based\nruntime=1500ms").unwrap();
    assert_eq!(job.spec.common.duration_s, Some(1.5));
}

#[test]
fn every_supported_option_maps() {
    let job = spec_of(
        "[global]\nioengine=pvsync\ngroup_reporting\nthread\nstonewall\nnew_group\nunlink=1\nkb_base=1024\n\
         [every]\nname=x\ndescription=all of them\nreadwrite=write\nblocksize=8k\nsize=2m\nfilesize=4m\n\
         io_limit=8m\nnumjobs=3\nnrfiles=1\nfdatasync=4\nsync=dsync\ndirect=1\nfallocate=posix\n\
         end_fsync=1\nrandseed=42\niodepth=1\ndirectory=/srv/t\nramp_time=0\nwait_for_previous\n",
    )
    .unwrap();
    let expected = FlatSpec {
        threads: 3,
        block_size: 8192,
        file_size: 4 << 20,
        io_size: Some(8 << 20),
        pattern: Pattern::Seq,
        sync: SyncMethod::Fdatasync,
        sync_every: 4,
        open_flags: OpenFlags {
            sync: false,
            dsync: true,
            direct: true,
        },
        final_sync: true,
        prepare: Prepare::Fallocate,
        seed: 42,
        ..FlatSpec::default()
    }
    .typed();
    assert_eq!(job.spec, expected);
    assert_eq!(job.directory, Some(PathBuf::from("/srv/t")));
    assert!(job.warnings.is_empty(), "{:?}", job.warnings);
}

#[test]
fn sync_options_map_to_one_sync_call() {
    let s = |body: &str| job(body).unwrap().spec;
    assert_eq!(
        (s("fsync=8").flat().sync, s("fsync=8").flat().sync_every),
        (SyncMethod::Fsync, 8)
    );
    assert_eq!(s("").flat().sync, SyncMethod::None);
    assert_eq!(s("fsync=0").flat().sync, SyncMethod::None);
    let sfr = s("sync_file_range=wait_before,write,wait_after:8");
    assert_eq!(
        (sfr.flat().sync, sfr.flat().sync_every),
        (SyncMethod::SyncFileRange, 8)
    );
    // fio's count defaults to 1.
    assert_eq!(
        s("sync_file_range=wait_before,write,wait_after")
            .flat()
            .sync_every,
        1
    );
    let e = err_text("sync_file_range=wait_before,write:8");
    assert!(
        e.contains("sync_file_range=wait_before,write:8") && e.contains("subset"),
        "{e}"
    );
    let e = err_text("sync_file_range=flush:8");
    assert!(e.contains("'flush'"), "{e}");
    let e = err_text("fsync=1\nfdatasync=1");
    assert!(
        e.contains("fdatasync=1 (line 5)") && e.contains("one kind"),
        "{e}"
    );
    assert!(s("sync=1").flat().open_flags.sync);
    assert!(s("sync=sync").flat().open_flags.sync);
    assert!(!s("sync=sync\nsync=none").flat().open_flags.sync);
    assert!(s("sync=dsync").flat().open_flags.dsync);
    assert!(err_text("sync=fsync").contains("sync=none, sync"));
    assert!(s("buffered=0").flat().open_flags.direct);
}

#[test]
fn fallocate_modes_map_to_prepare() {
    let p = |v: &str| job(&format!("fallocate={v}")).unwrap().spec.flat().prepare;
    // none (and its old spelling 0): fio's files start empty and the writes extend them.
    for v in ["none", "0"] {
        assert_eq!(p(v), Prepare::Empty, "{v}");
    }
    assert_eq!(p("truncate"), Prepare::Sparse);
    for v in ["native", "posix", "1", "keep"] {
        assert_eq!(p(v), Prepare::Fallocate, "{v}");
    }
    // Where fio's preparation is not the engine's, a warning says how.
    let notes = |v: &str| texts(&job(&format!("fallocate={v}")).unwrap().warnings);
    assert!(notes("keep")[0].contains("without changing the file size"));
    for v in ["none", "0", "truncate", "native", "posix", "1"] {
        assert!(notes(v).is_empty(), "{v}: {:?}", notes(v));
    }
    assert!(
        job("fallocate=none\noverwrite=1")
            .unwrap()
            .warnings
            .is_empty()
    );
    assert_eq!(job("").unwrap().spec.flat().prepare, Prepare::Fallocate);
    assert_eq!(
        job("overwrite=1").unwrap().spec.flat().prepare,
        Prepare::Fill
    );
    assert!(err_text("fallocate=2").contains("fallocate=none, truncate"));
}

#[test]
fn sizes_follow_fio_size_filesize_and_io_size() {
    let s = |text: &str| spec_of(&format!("[j]\nrw=write\n{text}\n")).unwrap().spec;
    let only_size = s("size=8m");
    assert_eq!(
        (only_size.flat().file_size, only_size.flat().io_size),
        (8 << 20, None)
    );
    // size above filesize is capped by fio at the file's size; below it is the I/O amount.
    assert_eq!(s("size=16m\nfilesize=8m").flat().io_size, None);
    assert_eq!(s("size=4m\nfilesize=8m").flat().io_size, Some(4 << 20));
    assert_eq!(s("filesize=8m\nio_size=32m").flat().io_size, Some(32 << 20));
    let e = spec_of("[j]\nrw=write\n").unwrap_err().to_string();
    assert!(e.contains("fio option size is not set"), "{e}");
    assert!(err_text("size=50%").contains("percentage"));
    assert!(err_text("filesize=1k-8k").contains("range"));
}

#[test]
fn time_based_and_runtime() {
    assert_eq!(
        job("time_based\nruntime=2").unwrap().spec.common.duration_s,
        Some(2.0)
    );
    assert_eq!(
        job("time_based=1\ntimeout=1m")
            .unwrap()
            .spec
            .common
            .duration_s,
        Some(60.0)
    );
    let e = err_text("runtime=10");
    assert!(
        e.contains("runtime=10 (line 4)") && e.contains("time_based"),
        "{e}"
    );
    let e = err_text("time_based");
    assert!(e.contains("runtime is not set"), "{e}");
    // runtime=0 is fio's "no limit".
    assert_eq!(job("runtime=0").unwrap().spec.common.duration_s, None);
    // ramp_time is the warm-up: run, left out of the figures.
    assert_eq!(job("ramp_time=5").unwrap().spec.common.warmup_s, Some(5.0));
    assert_eq!(
        job("ramp_time=500ms").unwrap().spec.common.warmup_s,
        Some(0.5)
    );
    assert_eq!(job("ramp_time=0").unwrap().spec.common.warmup_s, None);
    let e = err_text("ramp_time=soon");
    assert!(e.contains("ramp_time"), "{e}");
}

#[path = "tests_refusals.rs"]
mod refusals;
