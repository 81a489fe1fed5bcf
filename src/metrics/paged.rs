//! The counts of a latency histogram while a worker records them: the same buckets as the
//! dense HDR histogram (1 ns .. 1 h, 3 significant digits), stored in small pages allocated
//! on first use. A worker's histograms touch only the pages around the latencies it saw, so
//! a fileserver client holds tens of KiB instead of 15 × 270 KiB (docs/PERFORMANCE.md,
//! "fileserver memory"). Converting to the dense histogram gives exactly the histogram that
//! recording every value into it directly would have given.

use hdrhistogram::Histogram;

use super::histogram::{MAX_LATENCY_NS, SIGNIFICANT_DIGITS};

/// log2 of the sub-buckets in half an HDR bucket at 3 significant digits (2048 sub-buckets,
/// the lower half of each bucket above the first is unused, as in hdrhistogram).
const HALF_MAGNITUDE: u32 = 10;
/// `leading_zero_count_base` of hdrhistogram for a lowest value of 1 (unit magnitude 0).
const LEADING_ZERO_BASE: u32 = 64 - (HALF_MAGNITUDE + 1);
/// Sub-bucket mask (2048 - 1).
const SUB_BUCKET_MASK: u64 = (1 << (HALF_MAGNITUDE + 1)) - 1;
/// Counts in the dense histogram of 1 ns .. 1 h: 33 buckets of 1024 counts (the first 2048).
pub(crate) const DENSE_COUNTS: usize = 33 << HALF_MAGNITUDE;
/// Counts per page: 64 (512 bytes). Measured against 32, 128 and 1024 in
/// docs/PERFORMANCE.md: small pages keep a client's sparse tail cheap.
pub(crate) const PAGE_COUNTS: usize = 64;

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

/// Latency counts in pages of [`PAGE_COUNTS`], allocated when a value first lands in one.
#[derive(Clone, Debug, Default)]
pub(crate) struct PagedCounts {
    /// Page `i` holds dense counts `i * PAGE_COUNTS ..`; the table grows to the highest page
    /// used.
    pages: Vec<Option<Box<[u64; PAGE_COUNTS]>>>,
    /// Values recorded.
    total: u64,
}

impl PagedCounts {
    /// Records one latency in ns (at least 1; larger than the histogram: clamped).
    #[inline(always)]
    pub fn record(&mut self, latency_ns: u64) {
        let index = index_of(latency_ns.max(1));
        let page = index / PAGE_COUNTS;
        if page >= self.pages.len() {
            self.pages.resize(page + 1, None);
        }
        let counts = self.pages[page].get_or_insert_with(|| Box::new([0; PAGE_COUNTS]));
        counts[index % PAGE_COUNTS] += 1;
        self.total += 1;
    }

    /// Values recorded.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Adds every count into `dense` (a histogram of 1 ns .. 1 h, 3 digits).
    pub fn add_into(&self, dense: &mut Histogram<u64>) {
        for (page, counts) in self.pages.iter().enumerate() {
            let Some(counts) = counts else { continue };
            for (offset, &count) in counts.iter().enumerate() {
                if count > 0 {
                    dense.saturating_record_n(value_of(page * PAGE_COUNTS + offset), count);
                }
            }
        }
    }

    /// The dense histogram of these counts.
    pub fn to_dense(&self) -> Histogram<u64> {
        let mut dense = empty_dense();
        self.add_into(&mut dense);
        dense
    }

    /// Heap bytes held: the page table and the pages.
    pub fn heap_bytes(&self) -> usize {
        let pages = self.pages.iter().filter(|p| p.is_some()).count();
        self.pages.capacity() * std::mem::size_of::<Option<Box<[u64; PAGE_COUNTS]>>>()
            + pages * PAGE_COUNTS * std::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn layout_matches_hdrhistogram() {
        let dense = empty_dense();
        assert_eq!(dense.distinct_values(), DENSE_COUNTS);
        assert_eq!(DENSE_COUNTS % PAGE_COUNTS, 0);
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
        let mut paged = PagedCounts::default();
        for v in values {
            paged.record(v);
        }
        let dense = paged.to_dense();
        let want = direct(&values);
        assert_eq!(dense, want);
        assert_eq!(dense.max(), want.max());
        assert_eq!(dense.min(), want.min());
        assert_eq!(paged.total(), values.len() as u64);
    }

    proptest! {
        #[test]
        fn any_values_give_the_same_histogram_as_recording_directly(
            values in proptest::collection::vec(
                prop_oneof![0u64..5000, 0u64..10_000_000, 0u64..(1u64 << 44), any::<u64>()],
                0..300,
            )
        ) {
            let mut paged = PagedCounts::default();
            for &v in &values {
                paged.record(v);
            }
            let dense = paged.to_dense();
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
