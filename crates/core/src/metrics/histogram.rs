//! Latency histograms: full-precision HDR histograms owned by one worker, and the
//! lock-free bucket counters the interval sampler reads while a run is going.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{
    Deserializer as HdrDeserializer, Serializer as _, V2DeflateSerializer,
};
use serde::{Deserialize, Serialize};

use super::MetricsError;
pub use super::sparse::MAX_LATENCY_NS;
use super::sparse::{SIGNIFICANT_DIGITS, SparseCounts, empty_dense};

/// A latency histogram in nanoseconds (hdrhistogram, 1 ns .. 1 h, 3 significant digits).
///
/// A new histogram keeps only the buckets it has counts in, as a sorted list (a worker's
/// histograms hold only the latencies it saw: 512 fileserver clients stay under 256 MiB);
/// past a few thousand distinct buckets, merging or decoding it is the dense HDR histogram.
/// Both hold exactly the same counts, so every figure is the same as recording into the
/// dense histogram directly.
///
/// Serialized (serde) as base64 of the HdrHistogram V2 + deflate encoding, so any
/// percentile can be computed again from a stored run.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    counts: Counts,
}

/// Where a histogram's counts are.
#[derive(Clone, Debug)]
enum Counts {
    /// Recording in a worker: the buckets hit, up to `SPARSE_MAX`.
    Sparse(SparseCounts),
    /// Many distinct latencies, merged or decoded: the dense HDR histogram.
    Dense(Box<Histogram<u64>>),
}

/// The percentiles reported for one latency distribution, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Number of recorded operations.
    pub count: u64,
    /// Smallest value.
    pub min_ns: u64,
    /// Arithmetic mean.
    pub mean_ns: f64,
    /// Median.
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// Largest value.
    pub max_ns: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for LatencyHistogram {
    fn eq(&self, other: &Self) -> bool {
        *self.dense() == *other.dense()
    }
}

impl LatencyHistogram {
    /// An empty histogram covering 1 ns to one hour (no count allocated yet).
    pub fn new() -> Self {
        Self {
            counts: Counts::Sparse(SparseCounts::default()),
        }
    }

    /// An empty histogram with its dense counts allocated now (270 KiB), so recording never
    /// allocates: for a worker's hot loop that records millions of latencies (fileio,
    /// sysbench, grouplog), made before the start gate.
    pub fn preallocated() -> Self {
        Self {
            counts: Counts::Dense(Box::new(empty_dense())),
        }
    }

    /// Records one latency; values beyond one hour are clamped, zero counts as 1 ns.
    #[inline(always)]
    pub fn record(&mut self, latency_ns: u64) {
        let sparse = match &mut self.counts {
            Counts::Dense(dense) => return dense.saturating_record(latency_ns.max(1)),
            Counts::Sparse(sparse) => sparse,
        };
        if !sparse.record(latency_ns) {
            self.dense_mut().saturating_record(latency_ns.max(1));
        }
    }

    /// Records `count` occurrences of one latency at once (a bin of another tool's
    /// histogram, fio's JSON+ `bins`); same clamping as [`LatencyHistogram::record`].
    /// Stays a sparse list while the bins fit in one (an imported run holds a few hundred
    /// bins, not 270 KiB of dense counts).
    pub fn record_n(&mut self, latency_ns: u64, count: u64) {
        if count == 0 {
            return;
        }
        let latency_ns = latency_ns.clamp(1, MAX_LATENCY_NS);
        if let Counts::Sparse(sparse) = &mut self.counts
            && sparse.record_n(latency_ns, count)
        {
            return;
        }
        self.dense_mut().saturating_record_n(latency_ns, count);
    }

    /// The dense histogram: borrowed when it is one, built from the list otherwise.
    fn dense(&self) -> Cow<'_, Histogram<u64>> {
        match &self.counts {
            Counts::Sparse(sparse) => Cow::Owned(sparse.to_dense()),
            Counts::Dense(dense) => Cow::Borrowed(dense),
        }
    }

    /// Turns the counts into the dense histogram (merges add into it).
    fn dense_mut(&mut self) -> &mut Histogram<u64> {
        if let Counts::Sparse(sparse) = &self.counts {
            self.counts = Counts::Dense(Box::new(sparse.to_dense()));
        }
        match &mut self.counts {
            Counts::Dense(dense) => dense,
            Counts::Sparse(_) => unreachable!("made dense above"),
        }
    }

    /// Forgets every count, keeping the memory (no allocation: the end of a worker's
    /// warm-up, in its hot loop).
    pub fn clear(&mut self) {
        match &mut self.counts {
            Counts::Dense(dense) => dense.reset(),
            Counts::Sparse(sparse) => sparse.clear(),
        }
    }

    /// Heap bytes this histogram holds (the list, or the dense counts).
    pub fn heap_bytes(&self) -> usize {
        match &self.counts {
            Counts::Sparse(sparse) => sparse.heap_bytes(),
            Counts::Dense(dense) => dense.distinct_values() * std::mem::size_of::<u64>(),
        }
    }

    /// Adds every count of `other` into this histogram (exact merge, no averaging).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        let dense = self.dense_mut();
        match &other.counts {
            Counts::Sparse(sparse) => sparse.add_into(dense),
            // Both histograms share the same bounds, so `add` cannot fail on range.
            Counts::Dense(other) => {
                let _ = dense.add(&**other);
            }
        }
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        match &self.counts {
            Counts::Sparse(sparse) => sparse.total(),
            Counts::Dense(dense) => dense.len(),
        }
    }

    /// Value at a percentile in 0..=100, in ns; 0 when empty.
    pub fn percentile_ns(&self, percentile: f64) -> u64 {
        match &self.counts {
            // The list answers as the dense histogram would, without building it.
            Counts::Sparse(sparse) => sparse.percentile(percentile),
            Counts::Dense(dense) => percentile_of(dense, percentile),
        }
    }

    /// Fraction (0..=1) of recorded values at or below `latency_ns`.
    pub fn cdf_at(&self, latency_ns: u64) -> f64 {
        let inner = self.dense();
        if inner.is_empty() {
            return 0.0;
        }
        inner.count_between(0, latency_ns) as f64 / inner.len() as f64
    }

    /// Points of the cumulative distribution, `(latency_ns, fraction at or below)`, at
    /// `steps` evenly spaced quantiles plus the 99.9th, 99.99th and the maximum; empty when
    /// the histogram is empty.
    pub fn cdf_points(&self, steps: usize) -> Vec<(u64, f64)> {
        let inner = self.dense();
        if inner.is_empty() {
            return Vec::new();
        }
        let steps = steps.max(2);
        let mut quantiles: Vec<f64> = (0..=steps).map(|i| i as f64 / steps as f64).collect();
        quantiles.extend([0.999, 0.9999]);
        quantiles.sort_by(f64::total_cmp);
        quantiles
            .into_iter()
            .map(|q| (inner.value_at_quantile(q).max(1), q))
            .collect()
    }

    /// Summary with the standard percentiles.
    pub fn summary(&self) -> LatencySummary {
        if let Counts::Sparse(sparse) = &self.counts {
            // The list answers as the dense histogram would, without building it.
            let Some((min_ns, mean_ns, max_ns)) = sparse.min_mean_max() else {
                return LatencySummary::default();
            };
            return LatencySummary {
                count: sparse.total(),
                min_ns,
                mean_ns,
                p50_ns: sparse.percentile(50.0),
                p90_ns: sparse.percentile(90.0),
                p99_ns: sparse.percentile(99.0),
                p999_ns: sparse.percentile(99.9),
                max_ns,
            };
        }
        let inner = self.dense();
        if inner.is_empty() {
            return LatencySummary::default();
        }
        LatencySummary {
            count: inner.len(),
            min_ns: inner.min(),
            mean_ns: inner.mean(),
            p50_ns: percentile_of(&inner, 50.0),
            p90_ns: percentile_of(&inner, 90.0),
            p99_ns: percentile_of(&inner, 99.0),
            p999_ns: percentile_of(&inner, 99.9),
            max_ns: inner.max(),
        }
    }

    /// Encodes as HdrHistogram V2 + deflate.
    pub fn to_bytes(&self) -> Result<Vec<u8>, MetricsError> {
        let mut out = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.dense(), &mut out)
            .map_err(|e| MetricsError::Histogram(format!("cannot encode histogram: {e:?}")))?;
        Ok(out)
    }

    /// Decodes a histogram written by [`LatencyHistogram::to_bytes`] (or any V2 encoder).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, MetricsError> {
        let decoded: Histogram<u64> = HdrDeserializer::new()
            .deserialize(&mut std::io::Cursor::new(bytes))
            .map_err(|e| MetricsError::Histogram(format!("cannot decode histogram: {e:?}")))?;
        // A stored run's histogram usually hits a few hundred buckets: keep it as the sparse
        // list (kilobytes) unless it has too many for one, instead of 270 KiB of dense
        // counts per histogram (a comparison of 1000 runs a side held 1 GiB of them). Each
        // bucket's count goes to the bucket of its highest equivalent value: the same
        // bucket, since every histogram here has the same bounds and precision.
        if decoded.low() == 1
            && decoded.sigfig() == SIGNIFICANT_DIGITS
            && decoded.max() <= MAX_LATENCY_NS
        {
            let mut sparse = LatencyHistogram::new();
            for v in decoded.iter_recorded() {
                sparse.record_n(v.value_iterated_to(), v.count_at_value());
            }
            return Ok(sparse);
        }
        let mut inner = empty_dense();
        inner
            .add(&decoded)
            .map_err(|e| MetricsError::Histogram(format!("histogram out of range: {e:?}")))?;
        Ok(Self {
            counts: Counts::Dense(Box::new(inner)),
        })
    }
}

/// Value at a percentile of a dense histogram, in ns; 0 when empty.
fn percentile_of(inner: &Histogram<u64>, percentile: f64) -> u64 {
    if inner.is_empty() {
        return 0;
    }
    inner.value_at_percentile(percentile)
}

impl Serialize for LatencyHistogram {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use base64::Engine as _;
        let bytes = self.to_bytes().map_err(serde::ser::Error::custom)?;
        serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }
}

impl<'de> Deserialize<'de> for LatencyHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use base64::Engine as _;
        let text = String::deserialize(deserializer)?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.as_bytes())
            .map_err(serde::de::Error::custom)?;
        Self::from_bytes(&bytes).map_err(serde::de::Error::custom)
    }
}

/// Sub-buckets per power of two in a [`LiveBuckets`] histogram (6% wide buckets).
const SUB_BUCKET_BITS: u32 = 4;
const SUB_BUCKETS: usize = 1 << SUB_BUCKET_BITS;
/// Number of buckets in a [`LiveBuckets`] histogram: 64 powers of two × 16.
pub const LIVE_BUCKETS: usize = 64 * SUB_BUCKETS;

/// Bucket index of a latency in a log-linear histogram (16 sub-buckets per power of two).
#[inline(always)]
pub fn live_bucket_index(latency_ns: u64) -> usize {
    let v = latency_ns.max(1);
    let msb = 63 - v.leading_zeros();
    if msb < SUB_BUCKET_BITS {
        return v as usize;
    }
    let sub = (v >> (msb - SUB_BUCKET_BITS)) as usize & (SUB_BUCKETS - 1);
    msb as usize * SUB_BUCKETS + sub
}

/// Lower and upper bound (ns, upper exclusive) of a live bucket.
pub fn live_bucket_bounds(index: usize) -> (u64, u64) {
    let msb = (index / SUB_BUCKETS) as u32;
    if msb < SUB_BUCKET_BITS {
        return (index as u64, index as u64 + 1);
    }
    let sub = (index % SUB_BUCKETS) as u64;
    let width = 1u64 << (msb - SUB_BUCKET_BITS);
    let low = (1u64 << msb) + sub * width;
    (low, low.saturating_add(width))
}

/// Lock-free latency bucket counters with exactly one writer (the worker) and any number
/// of readers (the interval sampler). The writer uses plain load + store, which costs the
/// same as a non-atomic increment on x86 and ARM; readers see a value at most one
/// increment stale.
pub struct LiveBuckets {
    counts: Box<[AtomicU64]>,
}

impl Default for LiveBuckets {
    fn default() -> Self {
        Self::new()
    }
}

impl LiveBuckets {
    /// All buckets zero.
    pub fn new() -> Self {
        Self {
            counts: (0..LIVE_BUCKETS).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Counts one latency. Must only be called from the single owning writer thread.
    #[inline(always)]
    pub fn record(&self, latency_ns: u64) {
        bump(&self.counts[live_bucket_index(latency_ns)], 1);
    }

    /// Copies every bucket into `out` (length [`LIVE_BUCKETS`]).
    pub fn snapshot_into(&self, out: &mut [u64]) {
        for (slot, count) in out.iter_mut().zip(self.counts.iter()) {
            *slot = count.load(Ordering::Relaxed);
        }
    }
}

/// Adds `n` to a counter that has a single writer: a relaxed load and store, no lock prefix.
#[inline(always)]
pub fn bump(counter: &AtomicU64, n: u64) {
    counter.store(
        counter.load(Ordering::Relaxed).wrapping_add(n),
        Ordering::Relaxed,
    );
}

/// Percentile (0..=100) of a bucket-count distribution, as the midpoint of the bucket
/// holding it; `None` when the distribution is empty.
pub fn bucket_percentile_ns(counts: &[u64], percentile: f64) -> Option<u64> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let rank = ((percentile / 100.0) * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0u64;
    for (index, &count) in counts.iter().enumerate() {
        seen += count;
        if seen >= rank {
            let (low, high) = live_bucket_bounds(index);
            return Some(low + (high - low) / 2);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_known_values() {
        let mut h = LatencyHistogram::new();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        assert_eq!(s.min_ns, 1000);
        assert!((s.p50_ns as i64 - 500_000).abs() <= 500, "{}", s.p50_ns);
        assert!((s.p99_ns as i64 - 990_000).abs() <= 1000, "{}", s.p99_ns);
        assert!((s.max_ns as i64 - 1_000_000).abs() <= 1000, "{}", s.max_ns);
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        let mut all = LatencyHistogram::new();
        for v in 0..5000u64 {
            let lat = (v * 7919) % 100_000 + 1;
            if v % 3 == 0 {
                a.record(lat)
            } else {
                b.record(lat)
            }
            all.record(lat);
        }
        a.merge(&b);
        assert_eq!(a, all);
        assert_eq!(a.summary(), all.summary());
    }

    #[test]
    fn many_distinct_latencies_turn_dense_with_every_count() {
        let mut state = 7u64;
        let values: Vec<u64> = (0..40_000)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 20) % 50_000_000
            })
            .collect();
        let mut h = LatencyHistogram::new();
        let mut direct = empty_dense();
        for &v in &values {
            h.record(v);
            direct.saturating_record(v.max(1));
        }
        assert!(matches!(h.counts, Counts::Dense(_)));
        assert!(*h.dense() == direct);
        assert_eq!(h.count(), 40_000);
        assert_eq!(h.percentile_ns(99.0), direct.value_at_percentile(99.0));
    }

    #[test]
    fn record_n_equals_recording_one_by_one_and_stays_sparse() {
        let bins = [
            (2_832u64, 1u64),
            (2_864, 2),
            (1_744_896, 700),
            (0, 3),
            (u64::MAX, 2),
        ];
        let mut at_once = LatencyHistogram::new();
        let mut one_by_one = LatencyHistogram::new();
        for (ns, n) in bins {
            at_once.record_n(ns, n);
            for _ in 0..n {
                one_by_one.record(ns);
            }
        }
        at_once.record_n(5_000, 0);
        assert_eq!(at_once, one_by_one);
        assert_eq!(at_once.count(), 708);
        assert_eq!(at_once.summary(), one_by_one.summary());
        assert!(
            at_once.heap_bytes() < 4096,
            "{} bytes",
            at_once.heap_bytes()
        );
        // Past the sparse list's bucket bound it turns dense with every count.
        let mut many = LatencyHistogram::new();
        for ns in 0..10_000u64 {
            many.record_n(1_000_000 + ns * 1_000, 2);
        }
        assert_eq!(many.count(), 20_000);
    }

    #[test]
    fn a_decoded_histogram_is_sparse_when_it_can_be_and_equal_either_way() {
        // Few distinct latencies: the decoded histogram is the small list, and the same.
        let mut few = LatencyHistogram::new();
        for v in 0..2_000u64 {
            few.record(1_000 + (v * 7919) % 500_000);
        }
        let back = LatencyHistogram::from_bytes(&few.to_bytes().unwrap()).unwrap();
        assert_eq!(back, few);
        assert_eq!(back.summary(), few.summary());
        assert!(back.heap_bytes() < 64 << 10, "{} bytes", back.heap_bytes());
        // Many: dense, still equal.
        let mut many = LatencyHistogram::new();
        for v in 0..200_000u64 {
            many.record(1 + v * 9_973);
        }
        let back = LatencyHistogram::from_bytes(&many.to_bytes().unwrap()).unwrap();
        assert_eq!(back, many);
        assert_eq!(back.summary(), many.summary());
        // The top bucket (saturated values) keeps its counts.
        let mut top = LatencyHistogram::new();
        top.record(u64::MAX);
        top.record(MAX_LATENCY_NS);
        let back = LatencyHistogram::from_bytes(&top.to_bytes().unwrap()).unwrap();
        assert_eq!(back, top);
    }

    #[test]
    fn serialization_round_trip() {
        let mut h = LatencyHistogram::new();
        for v in [5u64, 50, 500, 5_000, 5_000_000, 4_000_000_000] {
            h.record(v);
        }
        let back = LatencyHistogram::from_bytes(&h.to_bytes().unwrap()).unwrap();
        assert_eq!(back, h);
        let json = serde_json::to_string(&h).unwrap();
        let back: LatencyHistogram = serde_json::from_str(&json).unwrap();
        assert_eq!(back.summary(), h.summary());
    }

    #[test]
    fn out_of_range_values_saturate() {
        let mut h = LatencyHistogram::new();
        h.record(0);
        h.record(u64::MAX);
        assert_eq!(h.count(), 2);
    }

    #[test]
    fn live_bucket_bounds_contain_their_values() {
        for v in [
            1u64,
            2,
            15,
            16,
            17,
            100,
            4095,
            4096,
            1_000_000,
            123_456_789,
            u64::MAX / 2,
        ] {
            let (low, high) = live_bucket_bounds(live_bucket_index(v));
            assert!(low <= v && v < high, "{v} not in [{low}, {high})");
            // Buckets are at most 1/16 of their value wide.
            assert!((high - low) as f64 <= (low as f64 / 16.0).max(1.0));
        }
    }

    #[test]
    fn bucket_percentiles_within_bucket_resolution() {
        let live = LiveBuckets::new();
        for v in 1..=1000u64 {
            live.record(v * 1000);
        }
        let mut counts = vec![0u64; LIVE_BUCKETS];
        live.snapshot_into(&mut counts);
        let p50 = bucket_percentile_ns(&counts, 50.0).unwrap() as f64;
        let p99 = bucket_percentile_ns(&counts, 99.0).unwrap() as f64;
        assert!((p50 / 500_000.0 - 1.0).abs() < 0.04, "{p50}");
        assert!((p99 / 990_000.0 - 1.0).abs() < 0.04, "{p99}");
        assert_eq!(bucket_percentile_ns(&vec![0; LIVE_BUCKETS], 50.0), None);
    }
}
