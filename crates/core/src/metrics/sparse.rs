//! The counts of a latency histogram while a worker records its first few thousand distinct
//! latencies: the same buckets as the dense HDR histogram (1 ns .. 1 h, 3 significant
//! digits), but only the buckets that were hit, as a sorted list (10 bytes a bucket). A
//! fileserver client's 15 histograms hold tens of KiB instead of 15 × 270 KiB
//! (docs/PERFORMANCE.md, "fileserver memory"). Converting to the dense histogram gives
//! exactly the histogram that recording every value into it directly would have given.

use hdrhistogram::Histogram;

// The bounds of every latency histogram live here, below the dense histogram that
// re-exports them, so the two files do not import each other.
/// Largest latency a histogram can hold: one hour, in nanoseconds. Larger values saturate.
pub const MAX_LATENCY_NS: u64 = 3_600_000_000_000;
/// Significant decimal digits kept by every latency histogram (0.1% resolution).
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// log2 of the sub-buckets in half an HDR bucket at 3 significant digits (2048 sub-buckets,
/// the lower half of each bucket above the first is unused, as in hdrhistogram).
const HALF_MAGNITUDE: u32 = 10;
/// `leading_zero_count_base` of hdrhistogram for a lowest value of 1 (unit magnitude 0).
const LEADING_ZERO_BASE: u32 = 64 - (HALF_MAGNITUDE + 1);
/// Sub-bucket mask (2048 - 1).
const SUB_BUCKET_MASK: u64 = (1 << (HALF_MAGNITUDE + 1)) - 1;
/// Counts in the dense histogram of 1 ns .. 1 h: 33 buckets of 1024 counts (the first 2048).
pub(crate) const DENSE_COUNTS: usize = 33 << HALF_MAGNITUDE;

/// Index of the count of `value` in the dense histogram, as hdrhistogram computes it; values
/// past the last count are clamped to the histogram's highest value, as
/// `Histogram::saturating_record` does.
#[inline(always)]
fn index_of(value: u64) -> usize {
    let index = index_unclamped(value);
    if index < DENSE_COUNTS {
        index
    } else {
        index_unclamped(MAX_LATENCY_NS)
    }
}

#[inline(always)]
fn index_unclamped(value: u64) -> usize {
    let bucket = LEADING_ZERO_BASE - (value | SUB_BUCKET_MASK).leading_zeros();
    let sub_bucket = (value >> bucket) as usize;
    ((bucket as usize + 1) << HALF_MAGNITUDE) + sub_bucket - (1 << HALF_MAGNITUDE)
}

/// The lowest value counted at `index` (hdrhistogram's `value_for`).
fn value_of(index: usize) -> u64 {
    let half = 1usize << HALF_MAGNITUDE;
    let mut bucket = (index >> HALF_MAGNITUDE) as i64 - 1;
    let mut sub_bucket = (index & (half - 1)) + half;
    if bucket < 0 {
        sub_bucket -= half;
        bucket = 0;
    }
    (sub_bucket as u64) << bucket
}

/// An empty dense histogram of 1 ns .. 1 h at 3 significant digits.
pub(crate) fn empty_dense() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, SIGNIFICANT_DIGITS)
        .expect("constant histogram bounds are valid")
}

/// The counts of the buckets hit so far, in bucket order; at most [`SPARSE_MAX`] buckets
/// and [`SPARSE_VALUES`] values (then the histogram turns dense).
#[derive(Clone, Debug, Default)]
pub(crate) struct SparseCounts {
    /// Bucket indexes (all below 65536), increasing.
    index: Vec<u16>,
    /// The count of each bucket in `index`.
    count: Vec<u64>,
    /// Values recorded.
    total: u64,
}

/// Distinct buckets a [`SparseCounts`] keeps (40 KiB) before its histogram turns dense
/// (270 KiB).
pub(crate) const SPARSE_MAX: usize = 4096;
/// Values a [`SparseCounts`] records before its histogram turns dense anyway: a search in
/// the list costs ~10 ns more than the dense array's 3 ns (measured in docs/PERFORMANCE.md),
/// which a worker recording this many values fast (fileio on tmpfs) should not keep paying.
pub(crate) const SPARSE_VALUES: u64 = 1 << 16;

impl SparseCounts {
    /// Records one latency in ns (at least 1; larger than the histogram: clamped), unless it
    /// needs a bucket beyond the [`SPARSE_MAX`] held or [`SPARSE_VALUES`] are recorded: then
    /// `false`, nothing recorded.
    #[inline(always)]
    pub fn record(&mut self, latency_ns: u64) -> bool {
        const _: () = assert!(DENSE_COUNTS <= u16::MAX as usize + 1);
        if self.total >= SPARSE_VALUES {
            return false;
        }
        let bucket = index_of(latency_ns.max(1)) as u16;
        match self.index.binary_search(&bucket) {
            Ok(at) => self.count[at] += 1,
            Err(at) if self.index.len() < SPARSE_MAX => {
                self.index.insert(at, bucket);
                self.count.insert(at, 1);
            }
            Err(_) => return false,
        }
        self.total += 1;
        true
    }

    /// Records `n` of one latency at once (another tool's histogram bin), unless it needs a
    /// bucket beyond the [`SPARSE_MAX`] held: then `false`, nothing recorded. Not bounded
    /// by [`SPARSE_VALUES`] (that bound is for a hot loop's per-value cost; bins come once).
    pub fn record_n(&mut self, latency_ns: u64, n: u64) -> bool {
        let bucket = index_of(latency_ns.max(1)) as u16;
        match self.index.binary_search(&bucket) {
            Ok(at) => self.count[at] = self.count[at].saturating_add(n),
            Err(at) if self.index.len() < SPARSE_MAX => {
                self.index.insert(at, bucket);
                self.count.insert(at, n);
            }
            Err(_) => return false,
        }
        self.total = self.total.saturating_add(n);
        true
    }

    /// Forgets every value, keeping the memory.
    pub fn clear(&mut self) {
        self.index.clear();
        self.count.clear();
        self.total = 0;
    }

    /// Values recorded.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Adds every count into `dense` (a histogram of 1 ns .. 1 h, 3 digits).
    pub fn add_into(&self, dense: &mut Histogram<u64>) {
        for (&i, &n) in self.index.iter().zip(self.count.iter()) {
            dense.saturating_record_n(value_of(usize::from(i)), n);
        }
    }

    /// The lowest, median and highest value equivalent to the bucket at `index`, as
    /// hdrhistogram computes them for a 1 ns-unit histogram.
    fn equivalents(index: u16) -> (u64, u64, u64) {
        let low = value_of(usize::from(index));
        let bucket = (usize::from(index) >> HALF_MAGNITUDE).saturating_sub(1);
        let range = 1u64 << bucket;
        (low, low + (range >> 1), low + range - 1)
    }

    /// (min, mean, max) exactly as the dense histogram of these counts reports them
    /// (`min`, `mean`, `max`: the same buckets, summed in the same order); `None` when empty.
    pub fn min_mean_max(&self) -> Option<(u64, f64, u64)> {
        let (first, last) = (*self.index.first()?, *self.index.last()?);
        let total = self.total as f64;
        let mean = self
            .index
            .iter()
            .zip(&self.count)
            .fold(0.0_f64, |sum, (&i, &n)| {
                sum + Self::equivalents(i).1 as f64 * n as f64 / total
            });
        let min = if first == 0 {
            0
        } else {
            value_of(usize::from(first))
        };
        Some((min, mean, Self::equivalents(last).2))
    }

    /// The value at `percentile` (0..=100) exactly as the dense histogram's
    /// `value_at_percentile` gives it; 0 when empty.
    pub fn percentile(&self, percentile: f64) -> u64 {
        let quantile = (percentile / 100.0).min(1.0);
        let wanted = ((quantile * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (&i, &n) in self.index.iter().zip(&self.count) {
            seen += n;
            if seen >= wanted {
                let (low, _, high) = Self::equivalents(i);
                return if quantile == 0.0 { low } else { high };
            }
        }
        0
    }

    /// The dense histogram of these counts.
    pub fn to_dense(&self) -> Histogram<u64> {
        let mut dense = empty_dense();
        self.add_into(&mut dense);
        dense
    }

    /// Heap bytes held by the list.
    pub fn heap_bytes(&self) -> usize {
        self.index.capacity() * std::mem::size_of::<u16>()
            + self.count.capacity() * std::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sparse list's own min, mean, max and percentiles are the dense histogram's,
    /// bit for bit, over latencies from 1 ns to past an hour.
    #[test]
    fn sparse_statistics_equal_the_dense_ones() {
        let mut seed = 0x5EED_u64;
        for trial in 0..300 {
            let mut sparse = SparseCounts::default();
            let values = 1 + trial % 400;
            for _ in 0..values {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let magnitude = seed % 44;
                let v = (seed >> 8) % (1u64 << magnitude).max(1);
                let n = 1 + (seed >> 50) % 5;
                if !sparse.record_n(v, n) {
                    break;
                }
            }
            let dense = sparse.to_dense();
            let (min, mean, max) = sparse.min_mean_max().unwrap();
            assert_eq!((min, max), (dense.min(), dense.max()), "trial {trial}");
            assert_eq!(mean.to_bits(), dense.mean().to_bits(), "trial {trial}");
            for p in [0.0, 1.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0] {
                assert_eq!(
                    sparse.percentile(p),
                    dense.value_at_percentile(p),
                    "trial {trial} p{p}"
                );
            }
        }
        assert_eq!(SparseCounts::default().min_mean_max(), None);
    }
    use proptest::prelude::*;

    #[test]
    fn layout_matches_hdrhistogram() {
        let dense = empty_dense();
        assert_eq!(dense.distinct_values(), DENSE_COUNTS);
        for value in [1, 2, 2047, 2048, 2049, 4095, 4096, 1 << 30, MAX_LATENCY_NS] {
            let index = index_of(value);
            assert_eq!(dense.lowest_equivalent(value), value_of(index), "{value}");
        }
    }

    fn direct(values: &[u64]) -> Histogram<u64> {
        let mut dense = empty_dense();
        for &v in values {
            dense.saturating_record(v.max(1));
        }
        dense
    }

    #[test]
    fn edges_give_the_same_histogram_as_recording_directly() {
        let values = [
            0,
            1,
            2047,
            2048,
            MAX_LATENCY_NS - 1,
            MAX_LATENCY_NS,
            MAX_LATENCY_NS + 1,
            MAX_LATENCY_NS * 2,
            u64::MAX,
        ];
        let mut sparse = SparseCounts::default();
        for v in values {
            assert!(sparse.record(v));
        }
        let dense = sparse.to_dense();
        let want = direct(&values);
        assert_eq!(dense, want);
        assert_eq!(dense.max(), want.max());
        assert_eq!(dense.min(), want.min());
        assert_eq!(sparse.total(), values.len() as u64);
    }

    proptest! {
        #[test]
        fn any_values_give_the_same_histogram_as_recording_directly(
            values in proptest::collection::vec(
                prop_oneof![0u64..5000, 0u64..10_000_000, 0u64..(1u64 << 44), any::<u64>()],
                0..300,
            )
        ) {
            let mut sparse = SparseCounts::default();
            for &v in &values {
                assert!(sparse.record(v));
            }
            let dense = sparse.to_dense();
            let want = direct(&values);
            prop_assert_eq!(&dense, &want);
            prop_assert_eq!(dense.len(), want.len());
            if !values.is_empty() {
                prop_assert_eq!(dense.max(), want.max());
                prop_assert_eq!(dense.min(), want.min());
                prop_assert_eq!(dense.mean(), want.mean());
                for p in [0.0, 50.0, 90.0, 99.0, 99.9, 100.0] {
                    prop_assert_eq!(dense.value_at_percentile(p), want.value_at_percentile(p));
                }
            }
        }
    }
}

#[cfg(test)]
mod memory_tests {
    use super::*;
    use crate::metrics::LatencyHistogram;

    /// splitmix64: a deterministic stream of pseudo-random numbers.
    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A latency around `median_ns`: log-normal-ish body (σ ≈ 0.6), and 3 % of calls in a
    /// tail spread evenly in log between 1 ms and 2 s (a loaded 2-CPU machine, 512 clients).
    fn latency(state: &mut u64, median_ns: f64) -> u64 {
        let uniform = |s: &mut u64| (next(s) >> 11) as f64 / (1u64 << 53) as f64;
        if uniform(state) < 0.03 {
            return (1e6 * 2000f64.powf(uniform(state))) as u64;
        }
        let z: f64 = (0..12).map(|_| uniform(state)).sum::<f64>() - 6.0;
        (median_ns * (0.6 * z).exp()) as u64
    }

    /// The 15 histograms of one fileserver client (13 operations, write and sync) after
    /// `ops` calls, medians as measured with 512 clients (docs/PERFORMANCE.md).
    fn client_histograms(ops: usize, seed: u64) -> Vec<LatencyHistogram> {
        let medians_ns = [
            10_400.0,
            1_800.0,
            900.0,
            6_400.0,
            1_500.0,
            10_000.0,
            24_500.0,
            2_100.0,
            520.0,
            650.0,
            1_900.0,
            7_800.0,
            136_000_000.0,
            6_400.0,
            136_000_000.0,
        ];
        let mut state = seed;
        let mut histograms: Vec<LatencyHistogram> =
            medians_ns.iter().map(|_| LatencyHistogram::new()).collect();
        for call in 0..ops {
            let which = call % medians_ns.len();
            histograms[which].record(latency(&mut state, medians_ns[which]));
        }
        histograms
    }

    #[test]
    fn a_fileserver_client_holds_far_less_than_the_dense_histograms() {
        let dense_client = 15 * DENSE_COUNTS * std::mem::size_of::<u64>();
        for (ops, budget) in [(1_200, 32 << 10), (10_000, 192 << 10), (100_000, 1 << 20)] {
            let bytes: usize = client_histograms(ops, ops as u64)
                .iter()
                .map(LatencyHistogram::heap_bytes)
                .sum();
            eprintln!("{ops} calls: {bytes} bytes ({dense_client} dense)");
            assert!(bytes <= budget, "{ops} calls: {bytes} bytes > {budget}");
        }
    }

    #[test]
    fn a_histogram_holds_10_bytes_a_bucket_then_the_dense_array() {
        use std::mem::size_of;
        let entry = size_of::<u16>() + size_of::<u64>();
        assert_eq!(LatencyHistogram::new().heap_bytes(), 0);
        // The worst case for the list: every value in a bucket of its own.
        let mut sparse = SparseCounts::default();
        for distinct in 1..=SPARSE_MAX {
            assert!(sparse.record(value_of(distinct * 8)));
            assert!(
                sparse.record(value_of(distinct * 8)),
                "a bucket already held"
            );
            // 10 bytes a bucket, at most doubled by the vectors' growth (from 4).
            let bytes = sparse.heap_bytes();
            assert!(bytes <= entry * (2 * distinct + 4), "{distinct}: {bytes}");
        }
        assert!(!sparse.record(1), "one bucket more than it keeps");
        assert_eq!(sparse.total(), 2 * SPARSE_MAX as u64);
        // A bucket it holds, until SPARSE_VALUES values.
        while sparse.total() < SPARSE_VALUES {
            assert!(sparse.record(8));
        }
        assert!(!sparse.record(8), "one value more than it keeps");
        assert_eq!(sparse.total(), SPARSE_VALUES);
        // The histogram then turns dense, with every count.
        let mut histogram = LatencyHistogram::new();
        for distinct in 1..=SPARSE_MAX + 1 {
            histogram.record(value_of(distinct * 8));
        }
        assert_eq!(histogram.heap_bytes(), DENSE_COUNTS * size_of::<u64>());
        assert_eq!(histogram.count(), SPARSE_MAX as u64 + 1);
        assert_eq!(histogram.summary().min_ns, 8);
    }

    #[test]
    fn a_dense_histogram_is_whole_from_the_start_and_records_the_same_counts() {
        let mut dense = LatencyHistogram::preallocated();
        let mut sparse = LatencyHistogram::new();
        assert_eq!(dense.heap_bytes(), DENSE_COUNTS * size_of::<u64>());
        for i in 0..20_000u64 {
            let value = (i * 7919) % 5_000_000 + 1;
            dense.record(value);
            sparse.record(value);
        }
        assert_eq!(dense.heap_bytes(), DENSE_COUNTS * size_of::<u64>());
        assert_eq!(dense, sparse);
    }
}
