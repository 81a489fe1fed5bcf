//! The words for a run's durable operation: why a run has no durable-operation latency,
//! and whether what it committed was durable.

use std::fmt::Write as _;

use crate::metrics::RunResult;
use crate::spec::{NoDurableOp, durable_op};

/// Why `r` has no durable-operation latency (`None` when it has one).
pub fn durable_unavailable(r: &RunResult) -> Option<String> {
    if r.durable_lat.is_some() {
        return None;
    }
    Some(match durable_op(&r.spec) {
        Ok(_) => "not recorded: the run was stored before fsynclab recorded it".into(),
        Err(why) => no_durable_op_text(why).into(),
    })
}

/// What a workload without a durable operation lacks, in words.
pub fn no_durable_op_text(why: NoDurableOp) -> &'static str {
    match why {
        NoDurableOp::NoSync => "none: nothing syncs the writes before the run ends",
        NoDurableOp::SyncFileRange => {
            "none: sync_file_range does not make writes durable (no cache flush, no metadata)"
        }
        NoDurableOp::SysbenchShared => {
            "not available in sysbench mode: a write's sync is a shared event another thread \
             may run"
        }
        NoDurableOp::UnorderedSyncs => {
            "not available: an unordered io_uring sync need not cover the writes before it"
        }
        NoDurableOp::TooManyPending => {
            "not available: a sync every so many writes leaves too many writes waiting to track"
        }
        NoDurableOp::Syncfs => "not available: one syncfs per thread at its end",
        NoDurableOp::EarlyAck => {
            "none: early-ack acknowledges each record before the flush that makes it durable"
        }
        NoDurableOp::Mix => "not available: a mix of operations has no one durable operation",
        NoDurableOp::NothingWritten => "not available: syncs only, nothing written",
        NoDurableOp::Imported => {
            "not available: fio times a write and its sync apart, and a write p99 plus a \
             sync p99 is not the p99 of their sum"
        }
    }
}

/// `durable   not durable: …` when the committed writes of `r` were not durable.
pub fn not_durable_text(r: &RunResult) -> Option<String> {
    crate::analysis::not_durable(r).map(|n| n.explain())
}

/// One line per requirement: `check     sync p99 4.21 ms, required below 10.0 ms: PASS
/// (etcd docs ...)`; empty without requirements.
pub fn requirement_lines(checks: &[crate::analysis::RequirementCheck]) -> String {
    let mut out = String::new();
    for c in checks {
        let show = |v: f64| match c.unit.as_str() {
            "µs" => super::fmt_ns(v * 1e3),
            "" => format!("{v:.2}"),
            unit => format!("{v:.0} {unit}"),
        };
        let bound = match (c.below, c.above) {
            (Some(b), _) => format!("required below {}", show(b)),
            (None, Some(a)) => format!("required above {}", show(a)),
            (None, None) => String::new(),
        };
        let (value, verdict) = match (c.value, c.pass) {
            (None, _) => ("not measured".into(), "NOT CHECKED"),
            (Some(v), _) if !c.edits.is_empty() => (show(v), "NOT JUDGED"),
            (Some(v), Some(true)) => (show(v), "PASS"),
            (Some(v), _) => (show(v), "FAIL"),
        };
        let _ = writeln!(
            out,
            "check     {} {value}, {bound}: {verdict} ({})",
            c.label, c.source
        );
        if !c.edits.is_empty() {
            let edits: Vec<String> = c.edits.iter().map(|e| e.to_string()).collect();
            let _ = writeln!(
                out,
                "          the threshold is for the preset's workload, and this run changed it \
                 ({})",
                edits.join("; ")
            );
        }
        if let (Some(why), Some(true)) = (&c.not_durable, c.pass) {
            let _ = writeln!(out, "          a pass that means little here: {why}");
        }
    }
    out
}
