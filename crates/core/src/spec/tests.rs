//! Validation, stop rules, enum names and TOML of workload specs.

use super::*;
use crate::spec::FlatSpec;

#[test]
fn default_is_valid() {
    assert_eq!(WorkloadSpec::default().validate(), Ok(()));
}

#[test]
fn each_bad_field_is_named_with_a_fix() {
    let cases: Vec<(WorkloadSpec, &str)> = vec![
        (
            FlatSpec {
                threads: 0,
                ..FlatSpec::default()
            }
            .typed(),
            "threads",
        ),
        (
            // Buffered writes may be 1000 bytes; O_DIRECT ones may not.
            FlatSpec {
                block_size: 1000,
                open_flags: OpenFlags {
                    direct: true,
                    ..Default::default()
                },
                ..FlatSpec::default()
            }
            .typed(),
            "block_size",
        ),
        (
            FlatSpec {
                block_size: 0,
                ..FlatSpec::default()
            }
            .typed(),
            "block_size",
        ),
        (
            FlatSpec {
                file_size: 1024,
                ..FlatSpec::default()
            }
            .typed(),
            "file_size",
        ),
        (
            FlatSpec {
                io_size: Some(1),
                ..FlatSpec::default()
            }
            .typed(),
            "io_size",
        ),
        (
            FlatSpec {
                duration_s: Some(0.0),
                ..FlatSpec::default()
            }
            .typed(),
            "duration_s",
        ),
        (
            FlatSpec {
                duration_s: Some(f64::NAN),
                ..FlatSpec::default()
            }
            .typed(),
            "duration_s",
        ),
        (
            FlatSpec {
                requests: Some(0),
                ..FlatSpec::default()
            }
            .typed(),
            "requests",
        ),
        (
            FlatSpec {
                sync_every: 0,
                ..FlatSpec::default()
            }
            .typed(),
            "sync_every",
        ),
        (
            FlatSpec {
                shared_files: Some(0),
                ..FlatSpec::default()
            }
            .typed(),
            "shared_files",
        ),
        (
            FlatSpec {
                interval_ms: 1,
                ..FlatSpec::default()
            }
            .typed(),
            "interval_ms",
        ),
        (
            FlatSpec {
                threads: 1_000_000,
                ..FlatSpec::default()
            }
            .typed(),
            "threads",
        ),
        (
            FlatSpec {
                requests: Some(u64::MAX),
                ..FlatSpec::default()
            }
            .typed(),
            "requests",
        ),
        (
            FlatSpec {
                io_size: Some(u64::MAX),
                ..FlatSpec::default()
            }
            .typed(),
            "io_size",
        ),
        (
            FlatSpec {
                duration_s: Some(f64::INFINITY),
                ..FlatSpec::default()
            }
            .typed(),
            "duration_s",
        ),
    ];
    for (spec, field) in cases {
        let err = spec.validate().unwrap_err();
        assert_eq!(err.field.key(), field, "{err}");
        assert!(
            err.to_string().contains("use") || err.to_string().contains("make"),
            "{err}"
        );
    }
}

#[test]
fn sync_none_allows_zero_interval() {
    let spec = FlatSpec {
        sync: SyncMethod::None,
        sync_every: 0,
        ..FlatSpec::default()
    }
    .typed();
    assert_eq!(spec.validate(), Ok(()));
}

#[test]
fn stop_rule_precedence() {
    let mut spec = FlatSpec {
        io_size: Some(8192),
        ..FlatSpec::default()
    }
    .typed();
    assert_eq!(spec.stop_rule(), StopRule::BytesPerThread(8192));
    spec.common.requests = Some(10);
    assert_eq!(spec.stop_rule(), StopRule::TotalRequests(10));
    spec.common.duration_s = Some(1.5);
    assert_eq!(
        spec.stop_rule(),
        StopRule::Duration(std::time::Duration::from_millis(1500))
    );
    // Found by crates/fsynclab/tests/cli/fuzz_parsers.rs: describe() of an unvalidated spec panicked.
    for (secs, wanted) in [
        (f64::INFINITY, std::time::Duration::MAX),
        (1e300, std::time::Duration::MAX),
        (-1.0, std::time::Duration::ZERO),
        (f64::NAN, std::time::Duration::ZERO),
    ] {
        spec.common.duration_s = Some(secs);
        assert_eq!(spec.stop_rule(), StopRule::Duration(wanted), "{secs}");
        let _ = spec.describe();
    }
}

#[test]
fn enums_parse_by_their_preset_names() {
    assert_eq!(
        "sync_file_range".parse::<SyncMethod>(),
        Ok(SyncMethod::SyncFileRange)
    );
    assert_eq!("seq".parse::<Pattern>(), Ok(Pattern::Seq));
    assert_eq!("fill".parse::<Prepare>(), Ok(Prepare::Fill));
    assert_eq!("empty".parse::<Prepare>(), Ok(Prepare::Empty));
    assert!("none".parse::<Prepare>().unwrap_err().contains("empty"));
    assert!(
        "fsink"
            .parse::<SyncMethod>()
            .unwrap_err()
            .contains("fdatasync")
    );
}

#[test]
fn open_flags_parse() {
    let f = OpenFlags::parse("sync,direct").unwrap();
    assert!(f.sync && f.direct && !f.dsync);
    assert_eq!(OpenFlags::parse("O_DSYNC").unwrap().describe(), "O_DSYNC");
    assert_eq!(OpenFlags::parse("").unwrap(), OpenFlags::default());
    assert_eq!(OpenFlags::parse("none").unwrap(), OpenFlags::default());
    for empty in [",", "sync,", ",,dsync"] {
        assert!(
            OpenFlags::parse(empty)
                .unwrap_err()
                .contains("has an empty flag between commas"),
            "{empty}"
        );
    }
    assert!(
        OpenFlags::parse("fast")
            .unwrap_err()
            .contains("unknown open flag")
    );
}

#[test]
fn spec_toml_accepts_size_strings() {
    let spec: WorkloadSpec =
        toml::from_str("threads = 8\nblock_size = \"4k\"\nfile_size = \"64M\"\nio_size = \"64M\"")
            .unwrap();
    assert_eq!(spec.flat().block_size, 4096);
    assert_eq!(spec.flat().io_size, Some(64 << 20));
    let err = toml::from_str::<WorkloadSpec>("thread = 8").unwrap_err();
    assert!(err.to_string().contains("unknown field"), "{err}");
}

#[test]
fn sysbench_mode_needs_a_stop_rule_random_blocks_and_a_real_sync() {
    let base = FlatSpec {
        mode: FileioMode::Sysbench,
        requests: Some(100),
        ..FlatSpec::default()
    }
    .typed();
    assert_eq!(base.validate(), Ok(()));
    let io = base.fileio().unwrap();
    assert_eq!(io.file_count(base.common.threads), 1);
    assert!(io.shares_files());
    let no_stop = FlatSpec {
        requests: None,
        ..base.clone().flat()
    }
    .typed();
    let e = no_stop.validate().unwrap_err();
    assert_eq!(e.field, crate::spec::Setting::REQUESTS);
    assert!(
        e.fix
            .settings()
            .any(|s| s == crate::spec::Setting::DURATION),
        "{e}"
    );
    let timed = FlatSpec {
        requests: None,
        duration_s: Some(1.0),
        ..base.clone().flat()
    }
    .typed();
    assert_eq!(timed.validate(), Ok(()));
    let seq = FlatSpec {
        pattern: Pattern::Seq,
        ..base.clone().flat()
    }
    .typed();
    assert_eq!(seq.validate().unwrap_err().field.key(), "pattern");
    let sfr = FlatSpec {
        sync: SyncMethod::SyncFileRange,
        ..base.flat()
    }
    .typed();
    assert!(
        sfr.validate()
            .unwrap_err()
            .to_string()
            .contains("sync_file_range")
    );
}

#[test]
fn sysbench_mode_describes_its_sync_interval_in_requests() {
    let spec = FlatSpec {
        mode: FileioMode::Sysbench,
        threads: 4,
        requests: Some(12_000),
        sync_every: 5,
        final_sync: true,
        ..FlatSpec::default()
    }
    .typed();
    let line = spec.describe();
    assert!(line.starts_with("fileio (sysbench) 4 threads"), "{line}");
    assert!(
        line.contains("fsync every 5 requests + at the end"),
        "{line}"
    );
    assert!(
        line.contains("1 shared file(s)") && line.contains("12000 requests"),
        "{line}"
    );
}

#[test]
fn durations_too_short_to_measure_or_absurdly_long_are_refused_briefly() {
    for d in [5e-324, 0.0005, 1e308, f64::MAX] {
        let spec = FlatSpec {
            duration_s: Some(d),
            ..FlatSpec::default()
        }
        .typed();
        let e = spec.validate().unwrap_err().to_string();
        assert!(e.contains("duration_s") && e.contains("0.001 s"), "{e}");
        assert!(e.len() < 400, "a short message: {e}");
    }
    let spec = FlatSpec {
        duration_s: Some(0.001),
        ..FlatSpec::default()
    }
    .typed();
    assert!(spec.validate().is_ok());
}

#[test]
fn the_fio_kind_is_stored_never_run() {
    let spec = FlatSpec {
        kind: WorkloadKind::Fio,
        ..FlatSpec::default()
    }
    .typed();
    let err = spec.validate().unwrap_err();
    assert_eq!(err.field, Setting::Kind);
    assert!(
        err.to_string().contains("fsynclab does not run it"),
        "{err}"
    );
    assert!(err.to_string().contains("fio job file"), "{err}");
    assert!(!WorkloadKind::Fio.is_runnable());
    assert!(WorkloadKind::Fileio.is_runnable());
    // Not a kind to choose: the parser refuses it and says what to do instead.
    let refused = "fio".parse::<WorkloadKind>().unwrap_err();
    assert!(refused.contains("imported"), "{refused}");
    assert!(spec.describe().starts_with("fio (imported)"));
    // Stored and read back by its name.
    assert_eq!(
        serde_json::to_string(&WorkloadKind::Fio).unwrap(),
        "\"fio\""
    );
}

#[test]
fn empty_prepare_round_trips_and_is_described() {
    let mut spec = FlatSpec {
        prepare: Prepare::Empty,
        ..FlatSpec::default()
    }
    .typed();
    let text = toml::to_string(&spec).unwrap();
    assert!(text.contains("prepare = \"empty\""), "{text}");
    assert_eq!(
        toml::from_str::<WorkloadSpec>(&text)
            .unwrap()
            .flat()
            .prepare,
        Prepare::Empty
    );
    assert!(
        spec.describe().contains("files start empty"),
        "{}",
        spec.describe()
    );
    spec.edit(|f| f.prepare = Prepare::Sparse);
    assert!(!spec.describe().contains("empty"), "{}", spec.describe());
}

#[test]
fn buffered_writes_may_be_any_size_from_512_bytes_o_direct_ones_whole_sectors() {
    // etcd's disk check: fio --bs=2300 --fdatasync=1.
    let etcd = FlatSpec {
        block_size: 2300,
        file_size: 22 << 20,
        ..FlatSpec::default()
    }
    .typed();
    assert!(etcd.validate().is_ok());
    assert!(etcd.describe().contains("2300-byte"), "{}", etcd.describe());
    let direct = FlatSpec {
        open_flags: OpenFlags {
            direct: true,
            ..Default::default()
        },
        ..etcd.clone().flat()
    }
    .typed();
    let err = direct.validate().unwrap_err();
    assert!(err.to_string().contains("O_DIRECT"), "{err}");
    let tiny = FlatSpec {
        block_size: 100,
        ..etcd.flat()
    }
    .typed();
    assert!(tiny.validate().is_err());
}

#[test]
fn sync_only_and_sync_file_range_fdatasync_are_checked_where_they_cannot_run() {
    let sync_only = FlatSpec {
        sync_only: true,
        duration_s: Some(1.0),
        prepare: Prepare::Fill,
        ..FlatSpec::default()
    };
    assert_eq!(sync_only.clone().typed().validate(), Ok(()));
    assert!(
        sync_only
            .clone()
            .typed()
            .describe()
            .contains("fsync only, nothing written")
    );
    // Nothing written: no byte count ends it; and no sync call makes nothing to time.
    for (bad, field) in [
        (
            FlatSpec {
                duration_s: None,
                ..sync_only.clone()
            },
            "sync_only",
        ),
        (
            FlatSpec {
                sync: SyncMethod::None,
                ..sync_only.clone()
            },
            "sync_only",
        ),
        (
            FlatSpec {
                ioengine: crate::spec::IoEngine::IoUring,
                ..sync_only.clone()
            },
            "sync_only",
        ),
        // What shapes writes is refused, not ignored.
        (
            FlatSpec {
                sync_every: 4,
                ..sync_only.clone()
            },
            "sync_every",
        ),
        (
            FlatSpec {
                final_sync: true,
                ..sync_only.clone()
            },
            "final_sync",
        ),
        (
            FlatSpec {
                open_flags: OpenFlags {
                    direct: true,
                    ..OpenFlags::default()
                },
                ..sync_only.clone()
            },
            "open_flags",
        ),
    ] {
        let err = bad.typed().validate().unwrap_err();
        assert_eq!(err.field.key(), field, "{err}");
    }
    assert_eq!(
        "sync_file_range+fdatasync".parse::<SyncMethod>(),
        Ok(SyncMethod::SyncFileRangeFdatasync)
    );
    let sfr = FlatSpec {
        sync: SyncMethod::SyncFileRangeFdatasync,
        ..FlatSpec::default()
    };
    assert_eq!(sfr.clone().typed().validate(), Ok(()));
    // Not with io_uring (two calls), not in sysbench mode, not for a log.
    for bad in [
        FlatSpec {
            ioengine: crate::spec::IoEngine::IoUring,
            ..sfr.clone()
        },
        FlatSpec {
            mode: FileioMode::Sysbench,
            requests: Some(100),
            ..sfr.clone()
        },
        FlatSpec {
            kind: WorkloadKind::Grouplog,
            duration_s: Some(1.0),
            ..sfr.clone()
        },
        FlatSpec {
            kind: WorkloadKind::Append,
            duration_s: Some(1.0),
            ..sfr.clone()
        },
    ] {
        let err = bad.typed().validate().unwrap_err();
        assert_eq!(err.field.key(), "sync", "{err}");
        assert!(
            err.to_string().contains("sync_file_range+fdatasync"),
            "{err}"
        );
    }
    // The stored form round-trips, and a spec without sync_only leaves it out.
    let json = serde_json::to_string(&sync_only.clone().typed()).unwrap();
    assert!(json.contains("\"sync_only\":true"), "{json}");
    let back: crate::spec::WorkloadSpec = serde_json::from_str(&json).unwrap();
    assert_eq!(back, sync_only.typed());
    let plain = serde_json::to_string(&FlatSpec::default().typed()).unwrap();
    assert!(!plain.contains("sync_only"), "{plain}");
}
