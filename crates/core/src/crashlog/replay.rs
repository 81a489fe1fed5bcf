//! The image of a device after a crash state: the log's medium-changing entries applied in
//! order, up to the cut, but for those the state drops.

use std::ops::Range;

use super::entry::{Entry, Op};
use super::plan::CrashState;

/// A device image the replay writes into (a sparse file, a buffer).
pub trait Image {
    /// Writes `data` at `offset`.
    fn write_at(&mut self, offset: u64, data: &[u8]) -> std::io::Result<()>;
    /// Makes `len` bytes at `offset` read as zeroes (a discard or a zeroing).
    fn zero(&mut self, offset: u64, len: u64) -> std::io::Result<()>;
    /// Its size in bytes.
    fn size(&self) -> u64;
}

/// An image in memory (tests, small devices).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemImage(pub Vec<u8>);

impl Image for MemImage {
    fn write_at(&mut self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        let at = offset as usize;
        self.0[at..at + data.len()].copy_from_slice(data);
        Ok(())
    }

    fn zero(&mut self, offset: u64, len: u64) -> std::io::Result<()> {
        let at = offset as usize;
        self.0[at..at + len as usize].fill(0);
        Ok(())
    }

    fn size(&self) -> u64 {
        self.0.len() as u64
    }
}

/// Why a crash state's image cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// An entry reaches past the image's end.
    #[error("entry {index} reaches past the image's end ({size} bytes)")]
    OutOfRange {
        /// The entry's index.
        index: usize,
        /// The image's size.
        size: u64,
    },
    /// The data of a write is not in the data file.
    #[error("the data of entry {index} is missing from the data file")]
    MissingData {
        /// The entry's index.
        index: usize,
    },
    /// Writing the image failed.
    #[error("writing the image: {0}")]
    Io(#[from] std::io::Error),
}

/// Applies the medium-changing entries of `range` to `image` in order, but for those `state`
/// drops (`None`: every one), reading the writes' bytes from `data`. Replaying a state from
/// scratch is `0..state.cut`; from an image already at `state.durable` (a checkpoint), it is
/// `state.durable..state.cut`.
pub fn replay(
    entries: &[Entry],
    data: &[u8],
    range: Range<usize>,
    state: Option<&CrashState>,
    image: &mut impl Image,
) -> Result<(), ReplayError> {
    let size = image.size();
    // A reordered state's volatile writes (from its last flush on) reached the medium
    // newest first; what came before the flush, in order.
    let split = match state {
        Some(s) if s.reversed => s.durable.clamp(range.start, range.end),
        _ => range.end,
    };
    for index in (range.start..split).chain((split..range.end).rev()) {
        if state.is_some_and(|s| !s.keeps(index)) {
            continue;
        }
        let reach = |offset: u64, len: u64| {
            offset
                .checked_add(len)
                .filter(|end| *end <= size)
                .ok_or(ReplayError::OutOfRange { index, size })
        };
        match entries[index].op {
            Op::Write {
                offset,
                len,
                data_at,
            } => {
                reach(offset, len)?;
                let bytes = usize::try_from(data_at)
                    .ok()
                    .zip(usize::try_from(len).ok())
                    .and_then(|(at, n)| data.get(at..at.checked_add(n)?))
                    .ok_or(ReplayError::MissingData { index })?;
                image.write_at(offset, bytes)?;
            }
            Op::Punch { offset, len } | Op::Zero { offset, len } => {
                reach(offset, len)?;
                image.zero(offset, len)?;
            }
            Op::Flush | Op::Mark { .. } => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::plan::{PlanOptions, plan_states};
    use super::*;

    /// Writes "a" at 0, flush, "b" at 4, "c" at 0, zero 8..12, flush, "d" at 12.
    fn sample() -> (Vec<Entry>, Vec<u8>) {
        let ops = [
            Op::Write {
                offset: 0,
                len: 4,
                data_at: 0,
            },
            Op::Flush,
            Op::Write {
                offset: 4,
                len: 4,
                data_at: 4,
            },
            Op::Write {
                offset: 0,
                len: 4,
                data_at: 8,
            },
            Op::Zero { offset: 8, len: 4 },
            Op::Flush,
            Op::Write {
                offset: 12,
                len: 4,
                data_at: 12,
            },
        ];
        let entries = ops
            .iter()
            .enumerate()
            .map(|(i, op)| Entry {
                seq: i as u64,
                op: *op,
            })
            .collect();
        (entries, b"aaaabbbbccccdddd".to_vec())
    }

    fn image() -> MemImage {
        MemImage(vec![b'.'; 16])
    }

    #[test]
    fn a_state_keeps_the_durable_writes_and_its_subset_of_the_volatile_ones() {
        let (entries, data) = sample();
        let states = plan_states(
            &entries,
            0,
            &PlanOptions {
                cuts: None,
                subsets: 3,
                seed: 7,
                reorder: false,
            },
        );
        // The cut before the second flush, all lost: only "a" reached the medium.
        let lost = &states[states.iter().position(|s| s.cut == 5).unwrap()];
        assert_eq!(lost.subset, 0);
        let mut img = image();
        replay(&entries, &data, 0..lost.cut, Some(lost), &mut img).unwrap();
        assert_eq!(img.0, b"aaaa............");
        // Every subset of that cut is the durable image plus what it keeps, in log order.
        for s in states.iter().filter(|s| s.cut == 5) {
            let mut img = image();
            replay(&entries, &data, 0..s.cut, Some(s), &mut img).unwrap();
            let first = if s.keeps(3) { b"cccc" } else { b"aaaa" };
            assert_eq!(&img.0[0..4], first);
            assert_eq!(&img.0[4..8], if s.keeps(2) { b"bbbb" } else { b"...." });
            assert_eq!(&img.0[8..12], if s.keeps(4) { [0u8; 4] } else { *b"...." });
        }
        // From a checkpoint at the durable point, the same image.
        for s in &states {
            let mut whole = image();
            replay(&entries, &data, 0..s.cut, Some(s), &mut whole).unwrap();
            let mut checkpoint = image();
            replay(&entries, &data, 0..s.durable, None, &mut checkpoint).unwrap();
            replay(&entries, &data, s.durable..s.cut, Some(s), &mut checkpoint).unwrap();
            assert_eq!(whole, checkpoint, "{s:?}");
        }
    }

    #[test]
    fn a_reordered_state_applies_its_volatile_writes_newest_first_after_the_durable_ones() {
        // "a" at 0, flush, "b" at 0, "c" at 0: the window's two writes overlap.
        let w = |data_at| Op::Write {
            offset: 0,
            len: 4,
            data_at,
        };
        let entries: Vec<Entry> = [w(0), Op::Flush, w(4), w(8)]
            .iter()
            .enumerate()
            .map(|(i, op)| Entry {
                seq: i as u64,
                op: *op,
            })
            .collect();
        let data = b"aaaabbbbcccc".to_vec();
        let options = PlanOptions {
            cuts: None,
            subsets: 0,
            seed: 1,
            reorder: true,
        };
        let states = plan_states(&entries, 0, &options);
        let reordered = states
            .iter()
            .find(|s| s.reversed)
            .expect("a reordered state");
        assert_eq!((reordered.cut, reordered.durable), (4, 2));
        let mut whole = MemImage(vec![b'.'; 8]);
        replay(&entries, &data, 0..4, Some(reordered), &mut whole).unwrap();
        // "c" landed first, then "b": the older version won; "a" before the flush stays
        // underneath, applied first.
        assert_eq!(&whole.0[0..4], b"bbbb");
        let mut checkpoint = MemImage(vec![b'.'; 8]);
        replay(&entries, &data, 0..2, None, &mut checkpoint).unwrap();
        replay(&entries, &data, 2..4, Some(reordered), &mut checkpoint).unwrap();
        assert_eq!(whole, checkpoint);
        // In log order, the newest wins.
        let mut ordered = MemImage(vec![b'.'; 8]);
        replay(&entries, &data, 0..4, None, &mut ordered).unwrap();
        assert_eq!(&ordered.0[0..4], b"cccc");
    }

    #[test]
    fn writes_out_of_the_image_or_without_data_are_errors_not_panics() {
        let (mut entries, data) = sample();
        let mut small = MemImage(vec![0; 8]);
        assert!(matches!(
            replay(&entries, &data, 0..7, None, &mut small),
            Err(ReplayError::OutOfRange { index: 4, size: 8 })
        ));
        entries[0].op = Op::Write {
            offset: 0,
            len: 4,
            data_at: u64::MAX - 1,
        };
        assert!(matches!(
            replay(&entries, &data, 0..1, None, &mut image()),
            Err(ReplayError::MissingData { index: 0 })
        ));
        entries[0].op = Op::Zero {
            offset: u64::MAX,
            len: 2,
        };
        assert!(matches!(
            replay(&entries, &data, 0..1, None, &mut image()),
            Err(ReplayError::OutOfRange { index: 0, .. })
        ));
    }
}
