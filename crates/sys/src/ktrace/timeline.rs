//! When the counted flushes and commits happened, by the kernel's own timestamps, so each
//! interval of a run gets the events that fell in it rather than the ones the reader
//! happened to drain by then (the reader sleeps 50 ms between drains and runs in
//! `SCHED_IDLE`: on a busy machine an interval read 0 flushes and the next twice its share).
//! Pure: timestamps in, counts per interval out.

/// Buckets kept at most: past this the resolution halves (8 MiB; 1 ms buckets last 17 min).
const MAX_BUCKETS: usize = 1 << 20;
/// The finest resolution, ns.
const FIRST_BUCKET_NS: u64 = 1_000_000;

/// What a counted event was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    /// A cache flush completed on the target's device.
    Flush,
    /// A journal or log commit.
    Commit,
}

/// Counted events per time bucket from the start of the counted window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelTimeline {
    /// The counted window's start (CLOCK_MONOTONIC ns): bucket 0 begins here.
    start_ns: u64,
    /// Width of a bucket, ns (1 ms, doubled each time the run outgrows [`MAX_BUCKETS`]).
    bucket_ns: u64,
    /// Flushes and commits per bucket.
    buckets: Vec<[u32; 2]>,
}

impl Default for KernelTimeline {
    fn default() -> Self {
        KernelTimeline {
            start_ns: 0,
            bucket_ns: FIRST_BUCKET_NS,
            buckets: Vec::new(),
        }
    }
}

impl KernelTimeline {
    /// Counts one `what` at `ts_ns`, in a window that starts at `start_ns` (the first call
    /// fixes it; an event before it counts in bucket 0).
    pub fn count(&mut self, start_ns: u64, ts_ns: u64, what: Counted) {
        if self.buckets.is_empty() && self.start_ns == 0 {
            self.start_ns = start_ns;
        }
        let mut at = (ts_ns.saturating_sub(self.start_ns) / self.bucket_ns) as usize;
        while at >= MAX_BUCKETS {
            self.coarsen();
            at = (ts_ns.saturating_sub(self.start_ns) / self.bucket_ns) as usize;
        }
        if at >= self.buckets.len() {
            self.buckets.resize(at + 1, [0, 0]);
        }
        let slot = &mut self.buckets[at][what as usize];
        *slot = slot.saturating_add(1);
    }

    /// Halves the resolution: each pair of buckets becomes one.
    fn coarsen(&mut self) {
        self.bucket_ns *= 2;
        let merged = self
            .buckets
            .chunks(2)
            .map(|pair| {
                let b = pair.get(1).copied().unwrap_or([0, 0]);
                [
                    pair[0][0].saturating_add(b[0]),
                    pair[0][1].saturating_add(b[1]),
                ]
            })
            .collect();
        self.buckets = merged;
    }

    /// Events counted in all.
    pub fn total(&self, what: Counted) -> u64 {
        self.buckets
            .iter()
            .map(|b| u64::from(b[what as usize]))
            .sum()
    }

    /// Commits and flushes per interval: interval `i` ends `ends_ms[i]` ms after `origin_ns`
    /// (the run's `t_ms`, ascending) and holds the buckets whose middle falls after the
    /// previous end and at or before its own. What came before the first interval's start
    /// counts in the first, what came after the last one's end in the last (the counted
    /// window reaches a little past the sampled time at each end), so the intervals add up
    /// to the run's totals. Empty without intervals.
    pub fn per_interval(&self, origin_ns: u64, ends_ms: &[u64]) -> Vec<(u64, u64)> {
        let mut out = vec![(0u64, 0u64); ends_ms.len()];
        if ends_ms.is_empty() {
            return out;
        }
        let ends_ns: Vec<u64> = ends_ms
            .iter()
            .map(|ms| origin_ns.saturating_add(ms.saturating_mul(1_000_000)))
            .collect();
        for (b, counts) in self.buckets.iter().enumerate() {
            if *counts == [0, 0] {
                continue;
            }
            let middle = self.start_ns + b as u64 * self.bucket_ns + self.bucket_ns / 2;
            let i = ends_ns
                .partition_point(|&end| end < middle)
                .min(ends_ms.len() - 1);
            out[i].0 += u64::from(counts[Counted::Commit as usize]);
            out[i].1 += u64::from(counts[Counted::Flush as usize]);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn events_land_in_the_interval_of_their_timestamp() {
        let start = 5_000 * MS;
        let mut t = KernelTimeline::default();
        // The run's t = 0 is 2 ms after the window opened; intervals end at 100, 200, 300 ms.
        let origin = start + 2 * MS;
        for ms in [1, 50, 99] {
            t.count(start, origin + ms * MS, Counted::Flush);
        }
        for ms in [150, 250, 251] {
            t.count(start, origin + ms * MS, Counted::Commit);
        }
        t.count(start, origin + 250 * MS, Counted::Flush);
        // Before the first interval and after the last: the first and the last.
        t.count(start, start, Counted::Flush);
        t.count(start, origin + 301 * MS, Counted::Flush);
        assert_eq!(
            t.per_interval(origin, &[100, 200, 300]),
            vec![(0, 4), (1, 0), (2, 2)]
        );
        assert_eq!(t.total(Counted::Flush), 6);
        assert_eq!(t.total(Counted::Commit), 3);
        assert!(t.per_interval(origin, &[]).is_empty());
    }

    #[test]
    fn a_long_run_coarsens_and_keeps_every_event() {
        let mut t = KernelTimeline::default();
        let start = MS;
        // One flush a second for long enough to pass the bucket limit twice.
        let seconds = 3 * MAX_BUCKETS as u64 / 10_000 * 10;
        for s in 0..seconds {
            t.count(start, start + s * 1000 * MS, Counted::Flush);
        }
        assert!(t.buckets.len() <= MAX_BUCKETS);
        assert_eq!(t.bucket_ns, 4 * MS);
        assert_eq!(t.total(Counted::Flush), seconds);
        // Intervals of 10 s: ten flushes each.
        let ends: Vec<u64> = (1..=seconds / 10).map(|i| i * 10_000).collect();
        let per = t.per_interval(start, &ends);
        assert!(per.iter().all(|&(c, f)| c == 0 && f == 10), "{per:?}");
    }
}
