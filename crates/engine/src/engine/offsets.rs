//! Block order of a worker: sequential, or a seeded random permutation in which every
//! block is visited exactly once per pass (what fio's random map guarantees), computed in
//! O(1) memory by a Feistel network with cycle walking.

use crate::spec::Pattern;

/// Yields block indices in `0..blocks`, pass after pass.
#[derive(Clone, Debug)]
pub struct BlockOrder {
    blocks: u64,
    pattern: Pattern,
    /// Position within the current pass.
    position: u64,
    /// Where a sequential pass starts (spreads threads over shared files).
    start: u64,
    pass: u64,
    seed: u64,
    permutation: Permutation,
}

impl BlockOrder {
    /// A block order over `blocks` blocks (at least 1). `start` offsets sequential passes;
    /// `seed` picks the random permutation (each pass uses a new one derived from it).
    pub fn new(blocks: u64, pattern: Pattern, seed: u64, start: u64) -> Self {
        let blocks = blocks.max(1);
        Self {
            blocks,
            pattern,
            position: 0,
            start: start % blocks,
            pass: 0,
            seed,
            permutation: Permutation::new(blocks, mix(seed)),
        }
    }

    /// The next block index.
    #[inline]
    pub fn next_block(&mut self) -> u64 {
        if self.position == self.blocks {
            self.position = 0;
            self.pass += 1;
            if self.pattern == Pattern::Rand {
                self.permutation = Permutation::new(self.blocks, mix(self.seed ^ mix(self.pass)));
            }
        }
        let i = self.position;
        self.position += 1;
        match self.pattern {
            Pattern::Seq => {
                let b = self.start + i;
                if b >= self.blocks { b - self.blocks } else { b }
            }
            Pattern::Rand => self.permutation.apply(i),
        }
    }
}

/// A bijection on `0..n`: a 4-round balanced Feistel network on the smallest even number
/// of bits covering `n`, iterated until the value falls below `n` (cycle walking). The
/// domain is at most 4x `n`, so on average fewer than 4 rounds of walking are needed.
#[derive(Clone, Debug)]
struct Permutation {
    n: u64,
    half_bits: u32,
    half_mask: u64,
    keys: [u64; 4],
}

impl Permutation {
    fn new(n: u64, seed: u64) -> Self {
        let bits = 64 - (n.max(2) - 1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut k = seed;
        let mut keys = [0u64; 4];
        for key in &mut keys {
            k = mix(k.wrapping_add(0x9E37_79B9_7F4A_7C15));
            *key = k;
        }
        Self {
            n,
            half_bits,
            half_mask: (1u64 << half_bits) - 1,
            keys,
        }
    }

    #[inline]
    fn apply(&self, index: u64) -> u64 {
        let mut x = index;
        loop {
            x = self.feistel(x);
            if x < self.n {
                return x;
            }
        }
    }

    #[inline]
    fn feistel(&self, x: u64) -> u64 {
        let mut left = x >> self.half_bits;
        let mut right = x & self.half_mask;
        for key in self.keys {
            // One multiply per round: the high bits of (right ^ key) * odd constant are a
            // good enough round function for shuffling block numbers, at ~1 ns.
            let f = ((right ^ key).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) & self.half_mask;
            let next = left ^ f;
            left = right;
            right = next;
        }
        (left << self.half_bits) | right
    }
}

/// SplitMix64 finalizer: a fast, well-distributed 64-bit mix.
#[inline]
pub(crate) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_pass(order: &mut BlockOrder, blocks: u64) -> Vec<u64> {
        (0..blocks).map(|_| order.next_block()).collect()
    }

    #[test]
    fn random_covers_every_block_once_per_pass() {
        for blocks in [1u64, 2, 3, 7, 64, 1000, 4097, 16384] {
            let mut order = BlockOrder::new(blocks, Pattern::Rand, 42, 0);
            for _pass in 0..3 {
                let mut seen = one_pass(&mut order, blocks);
                seen.sort_unstable();
                let expected: Vec<u64> = (0..blocks).collect();
                assert_eq!(seen, expected, "blocks={blocks}");
            }
        }
    }

    #[test]
    fn random_is_reproducible_and_seed_dependent() {
        let a: Vec<u64> = one_pass(&mut BlockOrder::new(1000, Pattern::Rand, 7, 0), 1000);
        let b: Vec<u64> = one_pass(&mut BlockOrder::new(1000, Pattern::Rand, 7, 0), 1000);
        let c: Vec<u64> = one_pass(&mut BlockOrder::new(1000, Pattern::Rand, 8, 0), 1000);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn random_order_is_not_sequential_and_passes_differ() {
        let mut order = BlockOrder::new(1000, Pattern::Rand, 1, 0);
        let first = one_pass(&mut order, 1000);
        let second = one_pass(&mut order, 1000);
        assert_ne!(first, second);
        let ascending = first.windows(2).filter(|w| w[1] == w[0] + 1).count();
        assert!(
            ascending < 50,
            "{ascending} consecutive pairs: not random enough"
        );
    }

    #[test]
    fn sequential_wraps_from_its_start() {
        let mut order = BlockOrder::new(4, Pattern::Seq, 0, 2);
        let got: Vec<u64> = (0..6).map(|_| order.next_block()).collect();
        assert_eq!(got, vec![2, 3, 0, 1, 2, 3]);
    }
}
