//! Fileserver on the scripted fake: every call takes a known latency on the client's own
//! fake clock, so the operations a client performs before the deadline, their counts,
//! latencies, bytes and the per-thread totals are known exactly (replayed here from the
//! same seeded generator).

use std::collections::BTreeMap;
use std::sync::mpsc;

use super::super::fake::{FakeBackend, FakeOp};
use super::super::{CancelToken, RunContext, run_with};
use super::{Mix, Step};
use crate::metrics::{RunResult, RunStatus};
use crate::spec::{FlatSpec, WorkloadKind, WorkloadSpec};

const WRITE_NS: u64 = 1_000;
const FLUSH_NS: u64 = 50_000;

/// Latency of each scripted op (all different, so a mixed-up op shows).
const OP_NS: [(FakeOp, u64); 10] = [
    (FakeOp::OpenAt, 2_100),
    (FakeOp::Close, 1_300),
    (FakeOp::Read, 1_700),
    (FakeOp::Rename, 5_900),
    (FakeOp::Unlink, 4_300),
    (FakeOp::StatAt, 900),
    (FakeOp::Stat, 500),
    (FakeOp::Statfs, 700),
    (FakeOp::Touch, 1_100),
    (FakeOp::ListDir, 3_700),
];

fn fake() -> FakeBackend {
    OP_NS.iter().fold(
        FakeBackend::new(vec![WRITE_NS], vec![FLUSH_NS]),
        |fake, &(op, ns)| fake.with_op_ns(op, ns),
    )
}

fn latency(step: &Step) -> u64 {
    let op = match step {
        Step::Create { .. } | Step::Open { .. } => FakeOp::OpenAt,
        Step::Close { .. } => FakeOp::Close,
        Step::Write { .. } => return WRITE_NS,
        Step::Flush { .. } => return FLUSH_NS,
        Step::Read { .. } => FakeOp::Read,
        Step::Rename { .. } => FakeOp::Rename,
        Step::Unlink { .. } => FakeOp::Unlink,
        Step::Stat { .. } => FakeOp::StatAt,
        Step::Fstat { .. } => FakeOp::Stat,
        Step::Statfs => FakeOp::Statfs,
        Step::Setattr { .. } => FakeOp::Touch,
        Step::Readdir { .. } => FakeOp::ListDir,
    };
    OP_NS
        .iter()
        .find(|(o, _)| *o == op)
        .map(|(_, ns)| *ns)
        .unwrap()
}

/// What one client does on the fake clock: (op name → (count, bytes)), busy ns.
#[derive(Debug, Default, PartialEq)]
struct Replay {
    ops: BTreeMap<&'static str, (u64, u64)>,
    busy_ns: u64,
}

/// Replays client `client` from its start at 1000 ns until `deadline` (or until `limit`
/// steps of `stop_op` have been done: the next one is the one that fails).
fn replay(spec: &WorkloadSpec, client: u32, deadline: u64, stop_at: Option<(&str, u64)>) -> Replay {
    let mut mix = Mix::new(spec.common.seed, client, spec.flat().fileserver.files_per_client);
    let mut r = Replay::default();
    let mut now = 1_000;
    while now < deadline {
        let step = mix.next_step();
        let op = step.op().name();
        if let Some((stop_op, done)) = stop_at
            && op == stop_op
            && r.ops.get(op).map_or(0, |c| c.0) == done
        {
            break;
        }
        let ns = latency(&step);
        let bytes = match step {
            Step::Write { len, .. } | Step::Read { len, .. } => u64::from(len),
            _ => 0,
        };
        let entry = r.ops.entry(op).or_default();
        entry.0 += 1;
        entry.1 += bytes;
        r.busy_ns += ns;
        now += ns;
    }
    r
}

fn spec(clients: u32) -> WorkloadSpec {
    let mut s = FlatSpec {
        kind: WorkloadKind::Fileserver,
        threads: clients,
        duration_s: Some(0.002),
        ..FlatSpec::default()
    }
    .typed();
    s.edit(|f| f.fileserver.files_per_client = 8);
    s
}

fn run_fake(fake: &FakeBackend, spec: &WorkloadSpec) -> RunResult {
    let dir = tempfile::tempdir().unwrap();
    let ctx = RunContext::new(9, dir.path().to_path_buf());
    let (tx, _rx) = mpsc::channel();
    let r = run_with(fake, spec, &ctx, &tx, &CancelToken::new()).unwrap();
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "tree removed"
    );
    r
}

fn op_table(r: &RunResult) -> BTreeMap<&str, (u64, u64)> {
    r.ops
        .iter()
        .filter(|o| o.count > 0)
        .map(|o| (o.op.as_str(), (o.count, o.bytes)))
        .collect()
}

#[test]
fn every_call_is_counted_and_timed_exactly() {
    let spec = spec(2);
    let fake = fake();
    let r = run_fake(&fake, &spec);
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    // The deadline is 2 ms after the gate, on the fake clocks (which start at 1000 ns).
    let deadline = 1_000 + 2_000_000;
    let clients: Vec<Replay> = (0..2).map(|c| replay(&spec, c, deadline, None)).collect();
    let mut expected: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for c in &clients {
        for (op, (n, b)) in &c.ops {
            let e = expected.entry(op).or_default();
            e.0 += n;
            e.1 += b;
        }
    }
    assert_eq!(op_table(&r), expected);
    assert!(
        expected.len() >= 12,
        "the mix reached most ops: {expected:?}"
    );
    // Each op's latency is exactly its scripted one.
    for o in r.ops.iter().filter(|o| o.count > 0) {
        let ns = match o.op.as_str() {
            "write" => WRITE_NS,
            "flush" => FLUSH_NS,
            _ => {
                let fake_op = match o.op.as_str() {
                    "create" | "open" => FakeOp::OpenAt,
                    "close" => FakeOp::Close,
                    "read" => FakeOp::Read,
                    "rename" => FakeOp::Rename,
                    "unlink" => FakeOp::Unlink,
                    "stat" => FakeOp::StatAt,
                    "fstat" => FakeOp::Stat,
                    "statfs" => FakeOp::Statfs,
                    "setattr" => FakeOp::Touch,
                    "readdir" => FakeOp::ListDir,
                    other => panic!("unexpected op {other}"),
                };
                OP_NS.iter().find(|(op, _)| *op == fake_op).unwrap().1
            }
        };
        // Every call took the same time: min and max are its histogram bucket's bounds
        // (3 significant digits).
        let s = o.lat.summary();
        assert_eq!(s.count, o.count, "{}", o.op);
        assert!(
            s.min_ns.abs_diff(ns) <= ns / 1000 && s.max_ns.abs_diff(ns) <= ns / 1000,
            "{}: {s:?}",
            o.op
        );
    }
    let (writes, write_bytes) = expected["write"];
    assert_eq!((r.writes, r.bytes), (writes, write_bytes));
    assert_eq!(
        (r.syncs, r.sync_lat.count()),
        (expected["flush"].0, expected["flush"].0)
    );
    assert_eq!(r.write_lat.count(), writes);
    for (t, c) in r.threads.iter().zip(&clients) {
        assert_eq!(t.busy_ns, c.busy_ns, "thread {}", t.thread);
        assert_eq!(t.wall_ns, c.busy_ns, "one clock read per call boundary");
    }
    // The working set was created through the backend too, but before the gate: only
    // the clients' opens are counted as theirs.
    let opens = expected["create"].0 + expected.get("open").map_or(0, |o| o.0);
    assert_eq!(fake.op_calls(FakeOp::OpenAt), opens);
}

#[test]
fn an_error_mid_run_stops_the_client_and_keeps_what_it_measured() {
    let mut spec = spec(1);
    spec.common.duration_s = Some(0.01);
    let fake = fake().with_op_failure(FakeOp::Rename, 3, libc::EIO);
    let r = run_fake(&fake, &spec);
    assert_eq!(r.status, RunStatus::Failed);
    let error = format!("{:?}", r.error.clone().unwrap());
    assert!(
        error.contains("rename") && error.contains("client-0"),
        "{error}"
    );
    // Exactly the calls before the failing fourth rename were measured.
    let replayed = replay(&spec, 0, 1_000 + 10_000_000, Some(("rename", 3)));
    assert_eq!(
        replayed.ops["rename"].0, 3,
        "the run reached a fourth rename"
    );
    assert_eq!(op_table(&r), replayed.ops);
    assert_eq!(
        fake.op_calls(FakeOp::Rename),
        4,
        "three succeeded, the fourth failed"
    );
    assert_eq!(r.threads[0].busy_ns, replayed.busy_ns);
}
