//! Power cuts planned from a log: where each cut falls, what is on the medium there, and
//! which of the writes still in the volatile cache each crash state keeps.
//!
//! A cut just before a flush loses the most: every write since the flush before it was in
//! the device's volatile cache and may be lost — all of them, none, or any subset. So the
//! cut points are the flushes (and the log's end); each gets the "all lost" state and
//! `subsets` random ones, drawn from `seed` so a state can be built again.

use super::entry::{Entry, Op};

/// How many cuts and states to plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanOptions {
    /// At most this many cut points, spread evenly over the log (always its end); `None`:
    /// every flush and the end.
    pub cuts: Option<usize>,
    /// Random subsets of the volatile writes per cut, beyond the "all lost" state.
    pub subsets: usize,
    /// Seed of the subsets.
    pub seed: u64,
    /// Also, per cut whose volatile writes overlap, the state where every one of them reached
    /// the medium in the reverse order (the oldest version of each block wins).
    pub reorder: bool,
}

/// One crash state: the device as it would read after a power cut.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrashState {
    /// Entries before this index happened before the cut.
    pub cut: usize,
    /// Entries before this index are on the medium for certain: up to the last flush before
    /// the cut.
    pub durable: usize,
    /// The entries between `durable` and `cut` that change the medium but did not reach it
    /// (lost with the volatile cache).
    pub dropped: Vec<usize>,
    /// Which state of the cut: 0 is "all lost", 1.. a random subset (or the reordered one).
    pub subset: usize,
    /// The volatile writes it keeps reached the medium newest first (a reordered state).
    pub reversed: bool,
}

impl CrashState {
    /// Whether entry `index` is on the medium in this state.
    pub fn keeps(&self, index: usize) -> bool {
        index < self.cut && self.dropped.binary_search(&index).is_err()
    }
}

/// The cut points from entry `start` on: each flush's index (the cut falls just before it)
/// and the log's end, at most `limit` of them spread evenly (the last always kept).
fn cut_points(entries: &[Entry], start: usize, limit: Option<usize>) -> Vec<usize> {
    let mut cuts: Vec<usize> = entries
        .iter()
        .enumerate()
        .skip(start)
        .filter(|(_, e)| e.op == Op::Flush)
        .map(|(i, _)| i)
        .collect();
    if cuts.last() != Some(&entries.len()) {
        cuts.push(entries.len());
    }
    match limit {
        Some(n) if n > 0 && cuts.len() > n => (1..=n)
            .map(|k| cuts[(k * cuts.len()).div_ceil(n) - 1])
            .collect(),
        Some(0) => Vec::new(),
        _ => cuts,
    }
}

/// A seeded stream of 64-bit values (splitmix64).
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Every crash state of the plan, cut by cut from entry `start` (where the workload began:
/// a cut while the filesystem was being made is no state of it): first "all lost", then up
/// to `subsets` random subsets of the volatile writes, each kept write chosen with
/// probability 1/2. A subset that repeats one already planned for the cut is drawn again (a
/// few times), so a cut with few volatile writes plans fewer states rather than the same one
/// twice: at most `cuts × (1 + subsets)` in all.
pub fn plan_states(entries: &[Entry], start: usize, options: &PlanOptions) -> Vec<CrashState> {
    let mut states = Vec::new();
    let mut durable = 0;
    let mut last_cut = 0;
    for cut in cut_points(entries, start.min(entries.len()), options.cuts) {
        // The medium holds everything up to the last flush before the cut.
        if let Some(flush) = entries[last_cut..cut]
            .iter()
            .rposition(|e| e.op == Op::Flush)
        {
            durable = last_cut + flush + 1;
        }
        last_cut = cut;
        let volatile: Vec<usize> = (durable..cut)
            .filter(|&i| entries[i].op.changes_medium())
            .collect();
        let mut planned: Vec<Vec<usize>> = vec![volatile.clone()];
        let mut draw = 0u64;
        while planned.len() <= options.subsets && draw < 4 * options.subsets as u64 + 4 {
            let key = mix(options.seed ^ mix(cut as u64) ^ mix(draw));
            draw += 1;
            let dropped: Vec<usize> = volatile
                .iter()
                .enumerate()
                .filter(|(k, _)| mix(key ^ *k as u64) & 1 == 0)
                .map(|(_, i)| *i)
                .collect();
            if !planned.contains(&dropped) {
                planned.push(dropped);
            }
        }
        let count = planned.len();
        for (subset, dropped) in planned.into_iter().enumerate() {
            states.push(CrashState {
                cut,
                durable,
                dropped,
                subset,
                reversed: false,
            });
        }
        if options.reorder && overlap(entries, &volatile) {
            states.push(CrashState {
                cut,
                durable,
                dropped: Vec::new(),
                subset: count,
                reversed: true,
            });
        }
    }
    states
}

/// The bytes of the medium entry `op` changes, as (offset, length).
fn extent(op: &Op) -> Option<(u64, u64)> {
    match *op {
        Op::Write { offset, len, .. } | Op::Punch { offset, len } | Op::Zero { offset, len } => {
            Some((offset, len))
        }
        Op::Flush | Op::Mark { .. } => None,
    }
}

/// Whether two of the entries `indexes` change the same bytes (only then does their order
/// make a different medium).
fn overlap(entries: &[Entry], indexes: &[usize]) -> bool {
    let mut extents: Vec<(u64, u64)> = indexes
        .iter()
        .filter_map(|&i| extent(&entries[i].op))
        .collect();
    extents.sort_unstable();
    extents
        .windows(2)
        .any(|w| w[0].0.saturating_add(w[0].1) > w[1].0)
}

/// The "all lost" state of a cut before entry `cut` (clamped to the log): everything since
/// the last flush before it dropped. With `dropped` given (a stored failure's), exactly those
/// entries dropped instead; `reversed`: the kept ones reached the medium newest first.
pub fn state_at(
    entries: &[Entry],
    cut: usize,
    dropped: Option<&[usize]>,
    reversed: bool,
) -> CrashState {
    let cut = cut.min(entries.len());
    let durable = entries[..cut]
        .iter()
        .rposition(|e| e.op == Op::Flush)
        .map_or(0, |flush| flush + 1);
    let dropped = match dropped {
        Some(d) => {
            let mut d = d.to_vec();
            d.sort_unstable();
            d
        }
        None => (durable..cut)
            .filter(|&i| entries[i].op.changes_medium())
            .collect(),
    };
    CrashState {
        cut,
        durable,
        dropped,
        subset: 0,
        reversed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(ops: &[Op]) -> Vec<Entry> {
        ops.iter()
            .enumerate()
            .map(|(i, op)| Entry {
                seq: i as u64,
                op: *op,
            })
            .collect()
    }

    fn w(offset: u64) -> Op {
        Op::Write {
            offset,
            len: 512,
            data_at: 0,
        }
    }

    /// W W F W W W F W: flushes at 2 and 6, the end at 8.
    fn sample() -> Vec<Entry> {
        log(&[w(0), w(1), Op::Flush, w(2), w(3), w(4), Op::Flush, w(5)])
    }

    #[test]
    fn each_flush_and_the_end_is_a_cut_with_everything_since_the_flush_before_lost() {
        let states = plan_states(
            &sample(),
            0,
            &PlanOptions {
                cuts: None,
                subsets: 0,
                seed: 1,
                reorder: false,
            },
        );
        let got: Vec<(usize, usize, Vec<usize>)> = states
            .iter()
            .map(|s| (s.cut, s.durable, s.dropped.clone()))
            .collect();
        assert_eq!(
            got,
            [(2, 0, vec![0, 1]), (6, 3, vec![3, 4, 5]), (8, 7, vec![7])]
        );
        assert!(states[1].keeps(1) && !states[1].keeps(4) && !states[1].keeps(6));
        // From entry 3 on (the workload's start): the first flush is no cut, but it is
        // still what the medium holds.
        let from_three = plan_states(
            &sample(),
            3,
            &PlanOptions {
                cuts: None,
                subsets: 0,
                seed: 1,
                reorder: false,
            },
        );
        let got: Vec<(usize, usize)> = from_three.iter().map(|s| (s.cut, s.durable)).collect();
        assert_eq!(got, [(6, 3), (8, 7)]);
        assert_eq!(
            plan_states(
                &sample(),
                99,
                &PlanOptions {
                    cuts: None,
                    subsets: 0,
                    seed: 1,
                    reorder: false,
                }
            )
            .len(),
            1,
            "the end"
        );
    }

    #[test]
    fn subsets_are_seeded_distinct_and_only_of_volatile_writes() {
        let options = PlanOptions {
            cuts: None,
            subsets: 3,
            seed: 42,
            reorder: false,
        };
        let a = plan_states(&sample(), 0, &options);
        assert_eq!(
            a,
            plan_states(&sample(), 0, &options),
            "seeded: the same plan"
        );
        let other = plan_states(
            &sample(),
            0,
            &PlanOptions {
                seed: 43,
                ..options
            },
        );
        assert_ne!(a, other, "another seed, other subsets");
        for cut in [2, 6, 8] {
            let of_cut: Vec<&CrashState> = a.iter().filter(|s| s.cut == cut).collect();
            for (i, s) in of_cut.iter().enumerate() {
                assert!(s.dropped.iter().all(|d| (s.durable..cut).contains(d)));
                assert!(of_cut[..i].iter().all(|t| t.dropped != s.dropped), "{cut}");
            }
        }
        // Two volatile writes have 4 subsets: all lost + 3 others. One has 2.
        assert_eq!(a.iter().filter(|s| s.cut == 2).count(), 4);
        assert_eq!(a.iter().filter(|s| s.cut == 8).count(), 2);
    }

    #[test]
    fn a_cut_limit_spreads_the_cuts_and_keeps_the_end() {
        let mut ops = Vec::new();
        for i in 0..100 {
            ops.push(w(i));
            ops.push(Op::Flush);
        }
        let entries = log(&ops);
        let plan = |cuts| {
            plan_states(
                &entries,
                0,
                &PlanOptions {
                    cuts,
                    subsets: 0,
                    seed: 0,
                    reorder: false,
                },
            )
        };
        assert_eq!(plan(None).len(), 101);
        let ten: Vec<usize> = plan(Some(10)).iter().map(|s| s.cut).collect();
        assert_eq!(ten.len(), 10);
        assert_eq!(ten.last(), Some(&200));
        assert!(ten.windows(2).all(|p| p[1] - p[0] >= 18), "{ten:?}");
        assert!(plan(Some(0)).is_empty());
    }

    #[test]
    fn a_log_without_flushes_loses_everything_at_its_end() {
        let entries = log(&[
            w(0),
            w(1),
            Op::Punch {
                offset: 0,
                len: 4096,
            },
        ]);
        let states = plan_states(
            &entries,
            0,
            &PlanOptions {
                cuts: None,
                subsets: 0,
                seed: 0,
                reorder: false,
            },
        );
        assert_eq!(states.len(), 1);
        assert_eq!(
            (states[0].durable, states[0].dropped.clone()),
            (0, vec![0, 1, 2])
        );
    }

    #[test]
    fn a_state_is_built_again_from_its_cut_and_what_it_dropped() {
        let log = sample();
        // All lost at the end: the writes after the second flush.
        let end = state_at(&log, 8, None, false);
        assert_eq!((end.cut, end.durable, end.dropped.clone()), (8, 7, vec![7]));
        // Just before the second flush: the three writes after the first.
        let mid = state_at(&log, 6, None, false);
        assert_eq!((mid.durable, mid.dropped.clone()), (3, vec![3, 4, 5]));
        assert!(mid.keeps(0) && !mid.keeps(4) && !mid.keeps(6));
        // A stored failure's own subset, in any order.
        let own = state_at(&log, 6, Some(&[5, 3]), false);
        assert_eq!(own.dropped, vec![3, 5]);
        assert!(own.keeps(4));
        // Past the end: the end.
        assert_eq!(state_at(&log, 99, None, false).cut, 8);
        // The planner's states are these.
        let planned = plan_states(
            &log,
            0,
            &PlanOptions {
                cuts: None,
                subsets: 0,
                seed: 1,
                reorder: false,
            },
        );
        for p in planned {
            assert_eq!(state_at(&log, p.cut, None, false), p);
        }
    }

    #[test]
    fn a_reordered_state_is_planned_only_where_volatile_writes_overlap() {
        // Blocks 0 1 F 2 2 3 F 5 (512 bytes each): the second window rewrites block 2.
        let b = |block: u64| Op::Write {
            offset: block * 512,
            len: 512,
            data_at: 0,
        };
        let log = log(&[b(0), b(1), Op::Flush, b(2), b(2), b(3), Op::Flush, b(5)]);
        let options = PlanOptions {
            cuts: None,
            subsets: 0,
            seed: 1,
            reorder: true,
        };
        let states = plan_states(&log, 0, &options);
        let reversed: Vec<(usize, usize, bool)> = states
            .iter()
            .map(|s| (s.cut, s.subset, s.reversed))
            .collect();
        assert_eq!(
            reversed,
            [(2, 0, false), (6, 0, false), (6, 1, true), (8, 0, false)],
            "only the cut before the second flush has overlapping volatile writes"
        );
        let r = &states[2];
        assert!(r.dropped.is_empty() && r.keeps(3) && r.keeps(4));
        assert_eq!(
            state_at(&log, 6, Some(&[]), true),
            CrashState {
                subset: 0,
                ..r.clone()
            }
        );
        // Off: no reordered state.
        let plain = plan_states(
            &log,
            0,
            &PlanOptions {
                reorder: false,
                ..options
            },
        );
        assert!(plain.iter().all(|s| !s.reversed));
        // Overlap is about bytes: 512-byte writes at 0 and 512 do not overlap, at 0 and 511 do.
        let at = |offset| Op::Write {
            offset,
            len: 512,
            data_at: 0,
        };
        assert!(!overlap(&log_of(&[at(0), at(512)]), &[0, 1]));
        assert!(overlap(&log_of(&[at(0), at(511)]), &[0, 1]));
    }

    fn log_of(ops: &[Op]) -> Vec<Entry> {
        log(ops)
    }
}
