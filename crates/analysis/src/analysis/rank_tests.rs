//! The ranking of a selection's variants, on runs made by the scripted fake engine.

use super::*;
use crate::metrics::RunResult;
use crate::probe::SystemInfo;
use crate::spec::FlatSpec;
use crate::spec::{OpenFlags, SyncMethod, WorkloadSpec};

fn spec(sync: SyncMethod, dsync: bool, threads: u32) -> WorkloadSpec {
    FlatSpec {
        threads,
        file_size: 100 * 4096,
        final_sync: true,
        sync,
        open_flags: OpenFlags {
            dsync,
            ..Default::default()
        },
        ..FlatSpec::default()
    }
    .typed()
}

/// Three runs of `spec` whose writes take `write_ns` (+ a little spread) and syncs `sync_ns`.
fn runs(ids: &mut i64, write_ns: u64, sync_ns: u64, spec: &WorkloadSpec) -> Vec<RunResult> {
    (0..3u64)
        .map(|i| {
            *ids += 1;
            crate::engine::fake_run(
                *ids,
                vec![write_ns + 150 * i],
                vec![sync_ns],
                spec,
                SystemInfo::default(),
            )
            .unwrap()
        })
        .collect()
}

#[test]
fn variants_are_ranked_by_durable_ops_and_the_non_durable_ones_come_last() {
    let mut id = 0;
    let mut all = Vec::new();
    for threads in [1, 2] {
        // fdatasync: 2 + 100 µs per durable write; O_DSYNC: 60 µs; sync_file_range: 2 + 5
        // µs, the fastest, but it keeps nothing.
        all.extend(runs(
            &mut id,
            2_000,
            100_000,
            &spec(SyncMethod::Fdatasync, false, threads),
        ));
        all.extend(runs(
            &mut id,
            60_000,
            1,
            &spec(SyncMethod::None, true, threads),
        ));
        all.extend(runs(
            &mut id,
            2_000,
            5_000,
            &spec(SyncMethod::SyncFileRange, false, threads),
        ));
    }
    let refs: Vec<&RunResult> = all.iter().collect();
    let r = rank("exp:1-6", &refs).unwrap();
    assert!(
        r.varying.contains(&"threads".to_string()),
        "{:?}",
        r.varying
    );
    assert_eq!(r.variants.len(), 6);
    let names: Vec<&str> = r.variants.iter().map(|v| v.name.as_str()).collect();
    // The fake clock is per thread: a 2-thread run does twice the ops per second.
    assert_eq!(
        names,
        [
            "O_DSYNC · threads=2",
            "fdatasync · threads=2",
            "O_DSYNC · threads=1",
            "fdatasync · threads=1",
            "sync_file_range · threads=2",
            "sync_file_range · threads=1",
        ]
    );
    let first = &r.variants[0];
    assert_eq!(first.rank, Some(1));
    assert_eq!(first.run_ids.len(), 3);
    let (low, high) = first.durable_ops_ci95.unwrap();
    let ops = first.durable_ops_per_sec.unwrap();
    assert!(low < ops && ops < high);
    // 60 µs writes: p99 about 60.3 µs (the spread), never a write p99 plus a sync p99.
    let p99 = first.durable_p99_us.unwrap();
    assert!((59.0..61.0).contains(&p99), "{p99}");
    // 2 threads × 1/60 µs against 2 × 1/102 µs: told apart.
    let vs = first.vs_next.as_ref().unwrap();
    assert!(vs.distinct && vs.ratio > 1.5, "{vs:?}");
    for v in &r.variants[4..] {
        assert_eq!(v.rank, None);
        assert!(v.durable_ops_per_sec.is_none());
        assert_eq!(
            v.not_durable.as_deref(),
            Some("not durable: sync_file_range")
        );
        assert!(v.writes_per_sec > ops, "the fastest, yet listed last");
    }
}

#[test]
fn one_variant_is_named_by_its_method_and_an_empty_selection_is_an_error() {
    let mut id = 0;
    let all = runs(&mut id, 2_000, 100_000, &spec(SyncMethod::Fsync, false, 1));
    let refs: Vec<&RunResult> = all.iter().collect();
    let r = rank("exp:1", &refs).unwrap();
    assert_eq!(r.variants.len(), 1);
    assert_eq!(r.variants[0].name, "fsync");
    assert!(r.variants[0].vs_next.is_none());
    assert!(rank("exp:9", &[]).is_err());
}

#[test]
fn the_pg_test_fsync_series_gives_its_table_rows() {
    use crate::spec::Pattern;
    let pg = |file_blocks: u64, sync: SyncMethod, dsync: bool, osync: bool| {
        FlatSpec {
            threads: 1,
            block_size: 8192,
            file_size: 8192 * file_blocks,
            pattern: Pattern::Seq,
            duration_s: Some(0.01),
            sync,
            sync_every: file_blocks as u32,
            open_flags: OpenFlags {
                dsync,
                sync: osync,
                direct: dsync || osync,
            },
            ..FlatSpec::default()
        }
        .typed()
    };
    let mut id = 0;
    let mut all = Vec::new();
    for k in [1, 2] {
        // open_datasync: 40 µs writes; fdatasync: 2 µs + 100 µs per pass.
        all.extend(runs(
            &mut id,
            40_000,
            1,
            &pg(k, SyncMethod::None, true, false),
        ));
        all.extend(runs(
            &mut id,
            2_000,
            100_000,
            &pg(k, SyncMethod::Fdatasync, false, false),
        ));
    }
    let refs: Vec<&RunResult> = all.iter().collect();
    let r = rank("pg", &refs).unwrap();
    let rows: Vec<(u64, &str)> = r
        .pg_test_fsync
        .iter()
        .map(|p| (p.writes_per_op, p.method.as_str()))
        .collect();
    assert_eq!(
        rows,
        [
            (1, "open_datasync"),
            (1, "fdatasync"),
            (2, "open_datasync"),
            (2, "fdatasync")
        ]
    );
    // Two writes per pass halve the passes per second: an operation is the pass.
    let (one, two) = (&r.pg_test_fsync[1], &r.pg_test_fsync[3]);
    assert!((one.usecs_per_op - 102.0).abs() < 2.0, "{one:?}");
    assert!((two.usecs_per_op - 104.0).abs() < 2.0, "{two:?}");
    assert!((one.ops_per_sec * one.usecs_per_op - 1e6).abs() < 1.0);
    // A selection of other shapes has no such table.
    let other = runs(&mut id, 2_000, 100_000, &spec(SyncMethod::Fsync, false, 1));
    let refs: Vec<&RunResult> = other.iter().collect();
    assert!(rank("x", &refs).unwrap().pg_test_fsync.is_empty());
}
