//! Start times of writes waiting for the sync that makes them durable, per file, so the
//! sync's end gives each of them its durable-operation latency (`spec::durable_op`). The
//! queues are allocated whole before the start gate: pushing and settling in the timed
//! loop never allocates.

use std::collections::VecDeque;

use crate::metrics::LatencyHistogram;
use crate::spec::{DurableOp, WorkloadSpec, durable_op};

/// One worker's writes not yet durable, per file (empty when the spec's durable operation
/// is not a write followed by a sync).
pub(crate) struct PendingStarts {
    starts: Vec<VecDeque<u64>>,
}

impl PendingStarts {
    /// Queues for `files` files of a worker running `spec` (none unless its durable
    /// operation is [`DurableOp::WriteThenSync`]).
    pub fn new(spec: &WorkloadSpec, files: usize) -> Self {
        let per_file = match durable_op(spec) {
            Ok(DurableOp::WriteThenSync) => spec.kind.params().pending_starts() as usize,
            _ => 0,
        };
        let starts = if per_file == 0 {
            Vec::new()
        } else {
            (0..files)
                .map(|_| VecDeque::with_capacity(per_file))
                .collect()
        };
        Self { starts }
    }

    /// Whether writes are tracked at all.
    #[cfg(test)]
    pub fn tracking(&self) -> bool {
        !self.starts.is_empty()
    }

    /// A write of `file` that started at `start_ns` now waits for its sync. A queue that is
    /// full (never, within the capacity `durable_op` allows) drops the oldest start rather
    /// than allocate.
    #[inline(always)]
    pub fn push(&mut self, file: usize, start_ns: u64) {
        if let Some(q) = self.starts.get_mut(file) {
            if q.len() == q.capacity() {
                q.pop_front();
            }
            q.push_back(start_ns);
        }
    }

    /// The oldest `n` waiting writes of `file` became durable at `end_ns`: records each
    /// one's latency in `hist`.
    #[inline(always)]
    pub fn settle(&mut self, file: usize, n: u64, end_ns: u64, hist: &mut LatencyHistogram) {
        let Some(q) = self.starts.get_mut(file) else {
            return;
        };
        for _ in 0..n {
            match q.pop_front() {
                Some(start) => hist.record(end_ns.saturating_sub(start)),
                None => break,
            }
        }
    }

    /// Every waiting write of `file` became durable at `end_ns`.
    #[inline(always)]
    pub fn settle_all(&mut self, file: usize, end_ns: u64, hist: &mut LatencyHistogram) {
        self.settle(file, u64::MAX, end_ns, hist);
    }

    /// How many writes of `file` wait.
    #[cfg(test)]
    pub fn waiting(&self, file: usize) -> usize {
        self.starts.get(file).map_or(0, VecDeque::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::FlatSpec;
    use crate::spec::{OpenFlags, SyncMethod};

    #[test]
    fn a_batch_becomes_durable_when_its_sync_returns() {
        let spec = FlatSpec {
            sync: SyncMethod::Fdatasync,
            sync_every: 3,
            ..FlatSpec::default()
        }
        .typed();
        let mut p = PendingStarts::new(&spec, 2);
        assert!(p.tracking());
        let cap = p.starts[0].capacity();
        let mut hist = LatencyHistogram::new();
        p.push(0, 100);
        p.push(0, 200);
        p.push(1, 250);
        p.push(0, 300);
        p.settle_all(0, 1_000, &mut hist);
        // 900, 800 and 700 ns: the first write of the batch waited longest.
        assert_eq!(hist.count(), 3);
        assert_eq!(hist.summary().max_ns, 900);
        assert_eq!(p.waiting(1), 1);
        p.settle(1, 1, 1_250, &mut hist);
        assert_eq!((hist.count(), p.waiting(1)), (4, 0));
        assert_eq!(p.starts[0].capacity(), cap, "no allocation");
    }

    #[test]
    fn specs_whose_writes_are_durable_or_never_synced_track_nothing() {
        let dsync = FlatSpec {
            open_flags: OpenFlags {
                dsync: true,
                ..Default::default()
            },
            ..FlatSpec::default()
        }
        .typed();
        assert!(!PendingStarts::new(&dsync, 4).tracking());
        let buffered = FlatSpec {
            sync: SyncMethod::None,
            ..FlatSpec::default()
        }
        .typed();
        let mut p = PendingStarts::new(&buffered, 4);
        p.push(0, 1);
        assert!(!p.tracking() && p.waiting(0) == 0);
    }

    #[test]
    fn a_full_queue_drops_the_oldest_start_instead_of_growing() {
        let spec = FlatSpec {
            sync_every: 1,
            ..FlatSpec::default()
        }
        .typed();
        let mut p = PendingStarts::new(&spec, 1);
        let cap = p.starts[0].capacity();
        for i in 0..(cap as u64 + 5) {
            p.push(0, i);
        }
        assert_eq!((p.waiting(0), p.starts[0].capacity()), (cap, cap));
    }
}
