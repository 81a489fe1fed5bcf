//! Tests of the fileserver mix: weights, determinism, validity against a model of the
//! client's tree, name encoding.

use std::collections::{HashMap, HashSet};

use super::*;

fn steps(seed: u64, client: u32, files: u32, n: usize) -> Vec<Step> {
    let mut m = Mix::new(seed, client, files);
    (0..n).map(|_| m.next_step()).collect()
}

#[test]
fn raw_draws_follow_the_weights() {
    let mut m = Mix::new(1, 0, 64);
    let n = 400_000;
    let mut counts = [0u64; 13];
    for _ in 0..n {
        counts[m.draw() as usize] += 1;
    }
    let total: u32 = WEIGHTS.iter().sum();
    for (i, op) in OPS.iter().enumerate() {
        let want = f64::from(WEIGHTS[i]) / f64::from(total);
        let got = counts[i] as f64 / n as f64;
        // 4 standard deviations of a binomial proportion.
        let tol = 4.0 * (want * (1.0 - want) / n as f64).sqrt();
        assert!(
            (got - want).abs() <= tol,
            "{}: drew {got:.4}, weight {want:.4}",
            op.name()
        );
    }
}

#[test]
fn realised_mix_stays_within_ten_percent_of_the_weights() {
    let n = 300_000;
    let mut counts = [0u64; 13];
    for s in steps(7, 3, 64, n) {
        counts[s.op() as usize] += 1;
    }
    let total: u32 = WEIGHTS.iter().sum();
    for (i, op) in OPS.iter().enumerate() {
        let want = f64::from(WEIGHTS[i]) / f64::from(total);
        let got = counts[i] as f64 / n as f64;
        assert!(
            (got / want - 1.0).abs() < 0.10,
            "{}: realised {got:.4}, weight {want:.4}",
            op.name()
        );
    }
    // Open and create balance close; create balances unlink.
    let opened = counts[Op::Open as usize] + counts[Op::Create as usize];
    assert!(opened.abs_diff(counts[Op::Close as usize]) <= MAX_OPEN as u64);
}

#[test]
fn the_same_seed_gives_the_same_sequence() {
    assert_eq!(steps(42, 5, 64, 5000), steps(42, 5, 64, 5000));
    assert_ne!(steps(42, 5, 64, 5000), steps(43, 5, 64, 5000));
    assert_ne!(steps(42, 5, 64, 5000), steps(42, 6, 64, 5000));
    let a = Mix::new(9, 0, 64);
    let b = Mix::new(9, 0, 64);
    assert_eq!(a.files(), b.files());
}

#[test]
fn initial_sizes_follow_the_documented_distribution() {
    let m = Mix::new(3, 0, 20_000);
    let files = m.files();
    assert_eq!(files.len(), 20_000);
    let share = |size: u64| files.iter().filter(|f| f.size == size).count() as f64 / 20_000.0;
    assert!((share(196608) - 0.49).abs() < 0.03, "{}", share(196608));
    assert!((share(4096) - 0.22).abs() < 0.03, "{}", share(4096));
    assert!((share(786432) - 0.10).abs() < 0.02, "{}", share(786432));
    assert!(files.iter().all(|f| f.dir < DIRS && f.handle.is_none()));
}

/// A model of one client's tree: names that exist, which are open, file sizes.
struct Model {
    names: HashSet<(u16, u64)>,
    sizes: HashMap<(u16, u64), u64>,
    slots: HashMap<u8, (u16, u64)>,
}

impl Model {
    fn check(&mut self, step: Step) {
        let open_names: HashSet<(u16, u64)> = self.slots.values().copied().collect();
        match step {
            Step::Create { dir, id, slot } => {
                assert!(
                    self.names.insert((dir, id)),
                    "create of existing {dir}/{id}"
                );
                assert!(self.slots.insert(slot, (dir, id)).is_none(), "slot in use");
                self.sizes.insert((dir, id), 0);
            }
            Step::Open { dir, id, slot } => {
                assert!(self.names.contains(&(dir, id)), "open of missing name");
                assert!(!open_names.contains(&(dir, id)), "open of an open file");
                assert!(self.slots.insert(slot, (dir, id)).is_none(), "slot in use");
            }
            Step::Close { slot } => {
                assert!(self.slots.remove(&slot).is_some(), "close of a free slot");
            }
            Step::Write { slot, offset, len } => {
                let name = self.slots[&slot];
                assert!(len >= 1 && len as usize <= MAX_IO_BYTES);
                assert!(offset + u64::from(len) <= MAX_FILE_BYTES);
                let size = self.sizes.get_mut(&name).unwrap();
                *size = (*size).max(offset + u64::from(len));
            }
            Step::Read { slot, offset, len } => {
                let name = self.slots[&slot];
                assert!(len >= 512 && len as usize <= MAX_IO_BYTES, "read of {len}");
                assert!(offset + u64::from(len) <= self.sizes[&name], "short read");
            }
            Step::Rename { dir, from, to } => {
                assert!(self.names.remove(&(dir, from)), "rename of missing name");
                assert!(!open_names.contains(&(dir, from)), "rename of an open file");
                assert!(self.names.insert((dir, to)), "rename onto an existing name");
                let size = self.sizes.remove(&(dir, from)).unwrap();
                self.sizes.insert((dir, to), size);
            }
            Step::Unlink { dir, id } => {
                assert!(!open_names.contains(&(dir, id)), "unlink of an open file");
                assert!(self.names.remove(&(dir, id)), "unlink of missing name");
            }
            Step::Stat { dir, id, missing } => {
                assert!(dir < DIRS);
                if !missing {
                    assert!(self.names.contains(&(dir, id)), "stat of missing name");
                }
            }
            Step::Fstat { slot } | Step::Setattr { slot } | Step::Flush { slot } => {
                assert!(self.slots.contains_key(&slot), "{step:?} on a free slot");
            }
            Step::Statfs => {}
            Step::Readdir { dir } => assert!(dir < DIRS),
        }
        assert!(self.slots.len() <= MAX_OPEN);
    }
}

#[test]
fn steps_are_always_valid_for_the_tree_they_act_on() {
    for (seed, files) in [(1u64, 64u32), (2, 1), (3, 2), (4, 5), (5, 300)] {
        let mut m = Mix::new(seed, 0, files);
        let mut model = Model {
            names: m.files().iter().map(|f| (f.dir, f.id)).collect(),
            sizes: m.files().iter().map(|f| ((f.dir, f.id), f.size)).collect(),
            slots: HashMap::new(),
        };
        for _ in 0..100_000 {
            let step = m.next_step();
            model.check(step);
        }
        let n = model.names.len();
        let initial = files as usize;
        assert!(
            n >= (initial / 2).max(1) && n <= initial * 2,
            "{n} files from {initial}"
        );
    }
}

#[test]
fn names_are_fixed_width_and_distinct() {
    let mut buf = [0u8; NAME_LEN];
    write_name(&mut buf, 7, 1234, false);
    assert_eq!(&buf[..17], b"d07/f000000001234");
    assert_eq!(buf[17], 0);
    write_name(&mut buf, 12, 999_999_999_999, true);
    assert_eq!(&buf[..17], b"d12/x999999999999");
    assert_eq!(&dir_name(3), b"d03\0");
}
