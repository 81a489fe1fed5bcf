//! Figures of the workload kinds beyond plain write + sync: per-operation latency
//! (smallfiles, fileserver, the grouplog commit), timed phases (smallfiles' create, chown,
//! unlink) and group-commit accounting (grouplog).

use serde::{Deserialize, Serialize};

use super::LatencyHistogram;

/// Every call of one operation (`create`, `write`, `rename`, `commit`...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpStats {
    /// Operation name as shown in tables.
    pub op: String,
    /// Calls completed.
    pub count: u64,
    /// Bytes moved by these calls (reads and writes; 0 for metadata operations).
    pub bytes: u64,
    /// Latency of each call.
    pub lat: LatencyHistogram,
}

impl OpStats {
    /// Forgets the calls recorded (the end of a warm-up), keeping the name and memory.
    pub fn clear(&mut self) {
        self.count = 0;
        self.bytes = 0;
        self.lat.clear();
    }

    /// An empty entry for `op`.
    pub fn new(op: &str) -> Self {
        Self {
            op: op.to_string(),
            count: 0,
            bytes: 0,
            lat: LatencyHistogram::new(),
        }
    }

    /// An empty entry for `op` whose histogram is allocated whole now, so recording never
    /// allocates (see [`LatencyHistogram::preallocated`]).
    pub fn preallocated(op: &str) -> Self {
        Self {
            lat: LatencyHistogram::preallocated(),
            ..Self::new(op)
        }
    }

    /// Records one call of `ns` that moved `bytes`.
    #[inline]
    pub fn record(&mut self, ns: u64, bytes: u64) {
        self.count += 1;
        self.bytes += bytes;
        self.lat.record(ns);
    }
}

/// Merges per-thread operation tables by name, keeping the order of first appearance.
pub fn merge_ops<'a>(tables: impl IntoIterator<Item = &'a [OpStats]>) -> Vec<OpStats> {
    let mut merged: Vec<OpStats> = Vec::new();
    for table in tables {
        for op in table {
            match merged.iter_mut().find(|m| m.op == op.op) {
                Some(m) => {
                    m.count += op.count;
                    m.bytes += op.bytes;
                    m.lat.merge(&op.lat);
                }
                None => merged.push(op.clone()),
            }
        }
    }
    merged
}

/// One timed phase of a run (smallfiles: `create`, then `chown`, then `unlink`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseStats {
    /// Phase name.
    pub phase: String,
    /// Files (or items) the phase completed, all threads together.
    pub items: u64,
    /// From the first thread's start of the phase to the last thread's end of it, ns.
    pub wall_ns: u64,
}

impl PhaseStats {
    /// Items per second over the phase's wall time.
    pub fn items_per_sec(&self) -> f64 {
        if self.wall_ns == 0 {
            0.0
        } else {
            self.items as f64 * 1e9 / self.wall_ns as f64
        }
    }
}

/// Group-commit accounting of a `grouplog` run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupCommitStats {
    /// The coordination strategy, as written in the spec (`leader`, `delay:500`...).
    pub strategy: String,
    /// Records made durable (each one a commit of its writer).
    pub commits: u64,
    /// Flush calls (fdatasync/fsync) the engine issued.
    pub flushes: u64,
    /// `batch_sizes[k]` = flushes that made k records durable (index 0 unused); the last
    /// entry also counts larger batches.
    pub batch_sizes: Vec<u64>,
    /// Average flush time the adaptive strategies had learned at the end, ns.
    pub learned_flush_ns: Option<u64>,
    /// Total time leaders spent waiting to gather followers, ns.
    pub gather_wait_ns: u64,
    /// Most flushes the coordinator had in flight at once (1 for the strategies that
    /// flush one at a time, up to N for `pipelined:N`); `None` where writers flush on
    /// their own (solo, uring) or in runs stored before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_in_flight: Option<u64>,
}

impl GroupCommitStats {
    /// Largest batch size tracked individually; larger batches count in the last slot.
    pub const MAX_TRACKED_BATCH: usize = 1024;

    /// Engine flushes per commit (1.0 without batching).
    pub fn flushes_per_commit(&self) -> Option<f64> {
        (self.commits > 0).then(|| self.flushes as f64 / self.commits as f64)
    }

    /// Mean records per flush.
    pub fn mean_batch(&self) -> Option<f64> {
        (self.flushes > 0).then(|| self.commits as f64 / self.flushes as f64)
    }

    /// Records one flush that made `records` records durable.
    pub fn record_batch(&mut self, records: u64) {
        self.record_batches(records, 1);
    }

    /// Records `flushes` flushes that each made `records` records durable.
    pub fn record_batches(&mut self, records: u64, flushes: u64) {
        let slot = (records as usize).min(Self::MAX_TRACKED_BATCH);
        if self.batch_sizes.len() <= slot {
            self.batch_sizes.resize(slot + 1, 0);
        }
        self.batch_sizes[slot] += flushes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_by_name_in_first_seen_order() {
        let mut a = OpStats::new("create");
        a.record(10, 0);
        let mut b = OpStats::new("write");
        b.record(20, 4096);
        let mut c = OpStats::new("create");
        c.record(30, 0);
        let merged = merge_ops([&[a, b][..], &[c][..]]);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].op, "create");
        assert_eq!(merged[0].count, 2);
        assert_eq!(merged[0].lat.summary().max_ns, 30);
        assert_eq!(merged[1].bytes, 4096);
    }

    #[test]
    fn batches_and_ratios() {
        let mut g = GroupCommitStats {
            commits: 10,
            flushes: 4,
            ..Default::default()
        };
        g.record_batch(1);
        g.record_batch(3);
        g.record_batch(3);
        g.record_batch(5000);
        assert_eq!(g.batch_sizes[3], 2);
        assert_eq!(g.batch_sizes[GroupCommitStats::MAX_TRACKED_BATCH], 1);
        assert_eq!(g.flushes_per_commit(), Some(0.4));
        assert_eq!(g.mean_batch(), Some(2.5));
        let p = PhaseStats {
            phase: "create".into(),
            items: 500,
            wall_ns: 250_000_000,
        };
        assert_eq!(p.items_per_sec(), 2000.0);
    }
}
