//! The interval sampler: reads the workers' lock-free counters and the device's flush
//! counter each interval and turns the differences into [`IntervalSample`]s.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::harness::Live;
use crate::metrics::{IntervalSample, LIVE_BUCKETS, bucket_percentile_ns};

pub(super) struct Sampler<'a> {
    lives: &'a [Live],
    block_size: u64,
    stat_path: Option<PathBuf>,
    last_t: Duration,
    prev: Totals,
    now: Totals,
    prev_flushes: Option<u64>,
    scratch: Vec<u64>,
    samples: Vec<IntervalSample>,
    /// Whether workers publish their in-flight depth (the io_uring engine), and the sum
    /// of their depth integrals at the last sample.
    depth: Option<u64>,
}

#[derive(Clone, Default)]
struct Totals {
    writes: u64,
    syncs: u64,
    bytes: u64,
    write_buckets: Vec<u64>,
    sync_buckets: Vec<u64>,
}

impl Totals {
    fn new() -> Self {
        Self {
            write_buckets: vec![0; LIVE_BUCKETS],
            sync_buckets: vec![0; LIVE_BUCKETS],
            ..Default::default()
        }
    }
}

impl<'a> Sampler<'a> {
    /// A sampler of `lives`; `measures_depth` for workers that publish their in-flight
    /// depth (the io_uring engine), so samples carry `inflight`.
    pub fn new(
        lives: &'a [Live],
        block_size: u64,
        stat_path: Option<PathBuf>,
        measures_depth: bool,
    ) -> Self {
        let prev_flushes = stat_path.as_deref().and_then(read_flushes);
        Self {
            lives,
            block_size,
            stat_path,
            last_t: Duration::ZERO,
            prev: Totals::new(),
            now: Totals::new(),
            prev_flushes,
            scratch: vec![0; LIVE_BUCKETS],
            samples: Vec::with_capacity(1024),
            depth: measures_depth.then_some(0),
        }
    }

    /// Closes the window ending at `elapsed` and returns its sample (also kept).
    pub fn sample(&mut self, elapsed: Duration) -> IntervalSample {
        let now = &mut self.now;
        now.writes = 0;
        now.syncs = 0;
        now.bytes = 0;
        now.write_buckets.iter_mut().for_each(|c| *c = 0);
        now.sync_buckets.iter_mut().for_each(|c| *c = 0);
        for live in self.lives {
            let writes = live.writes.load(Ordering::Relaxed);
            now.writes += writes;
            now.syncs += live.syncs.load(Ordering::Relaxed);
            now.bytes += if self.block_size == 0 {
                live.bytes.load(Ordering::Relaxed)
            } else {
                writes * self.block_size
            };
            live.write_buckets.snapshot_into(&mut self.scratch);
            add_into(&mut now.write_buckets, &self.scratch);
            live.sync_buckets.snapshot_into(&mut self.scratch);
            add_into(&mut now.sync_buckets, &self.scratch);
        }
        let window = |cur: &[u64], prev: &[u64], out: &mut Vec<u64>| {
            for ((o, c), p) in out.iter_mut().zip(cur).zip(prev) {
                *o = c.saturating_sub(*p);
            }
        };
        window(
            &now.write_buckets,
            &self.prev.write_buckets,
            &mut self.scratch,
        );
        let write_p50_ns = bucket_percentile_ns(&self.scratch, 50.0);
        let write_p99_ns = bucket_percentile_ns(&self.scratch, 99.0);
        window(
            &now.sync_buckets,
            &self.prev.sync_buckets,
            &mut self.scratch,
        );
        let sync_p50_ns = bucket_percentile_ns(&self.scratch, 50.0);
        let sync_p99_ns = bucket_percentile_ns(&self.scratch, 99.0);
        let flushes = self.stat_path.as_deref().and_then(read_flushes);
        let device_flushes = match (flushes, self.prev_flushes) {
            (Some(f), Some(p)) => Some(f.saturating_sub(p)),
            _ => None,
        };
        let sample = IntervalSample {
            t_ms: elapsed.as_millis() as u64,
            dur_ms: (elapsed.saturating_sub(self.last_t)).as_millis() as u64,
            writes: now.writes - self.prev.writes,
            syncs: now.syncs - self.prev.syncs,
            bytes: now.bytes - self.prev.bytes,
            write_p50_ns,
            write_p99_ns,
            sync_p50_ns,
            sync_p99_ns,
            device_flushes,
            kernel_commits: None,
            kernel_flushes: None,
            inflight: self.mean_depth(elapsed.saturating_sub(self.last_t)),
        };
        std::mem::swap(&mut self.prev, &mut self.now);
        self.prev_flushes = flushes.or(self.prev_flushes);
        self.last_t = elapsed;
        if sample.dur_ms > 0 || sample.writes > 0 || sample.syncs > 0 {
            self.samples.push(sample.clone());
        }
        sample
    }

    /// Mean requests in flight per worker over a window of `window` (None for workers that
    /// do not publish their depth, or an empty window).
    fn mean_depth(&mut self, window: Duration) -> Option<f64> {
        let prev = self.depth?;
        let area: u64 = self
            .lives
            .iter()
            .map(|l| l.inflight_area.load(Ordering::Relaxed))
            .sum();
        self.depth = Some(area);
        let window_ns = window.as_nanos() as f64 * self.lives.len().max(1) as f64;
        (window_ns > 0.0).then(|| area.saturating_sub(prev) as f64 / window_ns)
    }

    pub fn into_samples(self) -> Vec<IntervalSample> {
        self.samples
    }
}

fn add_into(total: &mut [u64], part: &[u64]) {
    for (t, p) in total.iter_mut().zip(part) {
        *t += p;
    }
}

fn read_flushes(path: &std::path::Path) -> Option<u64> {
    crate::probe::read_block_stat(path).ok()?.flush_ios
}
