//! The `append` kind on the scripted fake: exact write, sync and segment-switch counts,
//! durable latencies made of writes and the sync that covers them, an error mid-run.

use std::sync::mpsc;

use crate::engine::{CancelToken, FakeBackend, FakeOp, RunContext, run_with};
use crate::metrics::{RunResult, RunStatus};
use crate::spec::{FlatSpec, OpenFlags, SyncMethod, WorkloadKind, WorkloadSpec};

const WRITE_NS: u64 = 10_000;
const SYNC_NS: u64 = 1_000_000;

fn append(writers: u32, records: u64, sync_every: u32) -> WorkloadSpec {
    let mut spec = FlatSpec {
        kind: WorkloadKind::Append,
        threads: writers,
        sync: SyncMethod::Fdatasync,
        sync_every,
        requests: Some(records),
        ..FlatSpec::default()
    }
    .typed();
    spec.edit(|f| f.append.record_size = 512);
    spec.edit(|f| f.append.segment_size = 64 * 512);
    spec
}

fn run_fake(fake: &FakeBackend, spec: &WorkloadSpec) -> RunResult {
    spec.validate().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ctx = RunContext::new(7, dir.path().to_path_buf());
    let (tx, _rx) = mpsc::channel();
    run_with(fake, spec, &ctx, &tx, &CancelToken::new()).unwrap()
}

#[test]
fn one_writer_syncs_every_n_records_and_switches_segments_when_full() {
    let fake = FakeBackend::new(vec![WRITE_NS], vec![SYNC_NS]);
    // 200 records of 512 bytes, 64 per segment: switches after records 64, 128 and 192.
    let r = run_fake(&fake, &append(1, 200, 8));
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    assert_eq!(r.writes, 200);
    // A sync every 8 records (25), none after the last: nothing is left unsynced here.
    assert_eq!(r.syncs, 25);
    let rotate = r.ops.iter().find(|o| o.op == "rotate").expect("rotate op");
    assert_eq!(rotate.count, 3);
    assert_eq!(fake.op_calls(FakeOp::Unlink), 3, "each full segment removed");
    // Every record became durable with its batch's sync: write to sync end.
    let durable = r.durable_lat.as_ref().expect("durable latencies").summary();
    assert_eq!(durable.count, 200);
    // (The histogram keeps latencies to within 1 %.)
    let within = |ns: u64| ns * 99 / 100;
    assert!(durable.min_ns >= within(SYNC_NS + WRITE_NS), "{durable:?}");
    assert!(durable.max_ns >= within(SYNC_NS + 8 * WRITE_NS), "{durable:?}");
    assert!(durable.max_ns < SYNC_NS + 9 * WRITE_NS, "{durable:?}");
}

#[test]
fn records_not_yet_synced_at_the_end_are_written_but_not_durable() {
    let fake = FakeBackend::new(vec![WRITE_NS], vec![SYNC_NS]);
    let r = run_fake(&fake, &append(2, 100, 8));
    assert_eq!(r.writes, 100);
    // Each writer's last records past a multiple of 8 get no final sync.
    let durable = r.durable_lat.as_ref().unwrap().summary().count;
    assert!((100 - 2 * 7..100).contains(&durable), "{durable}");
    assert_eq!(r.syncs * 8, durable);
}

#[test]
fn dsync_records_are_durable_when_written_and_never_synced() {
    let fake = FakeBackend::new(vec![WRITE_NS], vec![SYNC_NS]);
    let mut spec = append(1, 50, 1);
    spec.edit(|f| {
        f.open_flags = OpenFlags {
            dsync: true,
            ..Default::default()
        }
    });
    spec.edit(|f| f.sync = SyncMethod::None);
    let r = run_fake(&fake, &spec);
    assert_eq!((r.writes, r.syncs), (50, 0));
    let durable = r.durable_lat.as_ref().unwrap().summary();
    assert_eq!(durable.count, 50);
    assert!(durable.max_ns < SYNC_NS, "no sync in a record's latency");
}

#[test]
fn a_failed_sync_ends_the_run_failed_keeping_what_was_measured() {
    let mut fake = FakeBackend::new(vec![WRITE_NS], vec![SYNC_NS]);
    fake.fail_after_syncs = Some((3, libc::EIO));
    let r = run_fake(&fake, &append(1, 200, 4));
    assert_eq!(r.status, RunStatus::Failed);
    assert!(r.writes >= 12 && r.writes < 200, "{}", r.writes);
    assert!(r.error.is_some());
}
