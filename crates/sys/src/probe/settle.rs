//! Settling after prepare: whether the device and the page cache have gone quiet. The
//! decision ([`Settler`]) is pure over counter samples, so fixture sequences test it; the
//! reader ([`read_settle_sample`]) is thin: the `in_flight` field of each device's stat
//! file and the `Dirty`/`Writeback` lines of `/proc/meminfo`.
//!
//! Why: sysbench prepares its file in a separate process, seconds before `run`; a replay
//! that fills and starts timing at once meets the fill's writeback and journal work in its
//! timed part (measured: docs/PERFORMANCE.md, "sysbench mode vs sysbench fileio").

use std::path::Path;

use super::ProbeError;

/// `/proc/meminfo`.
pub const MEMINFO_PATH: &str = "/proc/meminfo";

/// One reading of the counters settling waits on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SettleSample {
    /// Requests in flight on each device read (the target's, and a loop's backing disk).
    pub in_flight: Vec<u64>,
    /// `Dirty:` of /proc/meminfo, in KiB (machine-wide).
    pub dirty_kib: u64,
    /// `Writeback:` of /proc/meminfo, in KiB (machine-wide).
    pub writeback_kib: u64,
}

/// When the counters count as settled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SettleRule {
    /// Consecutive quiet samples needed (a sample of all zeros settles at once).
    pub quiet_samples: u32,
    /// Dirty and writeback KiB that count as steady: dirty may not rise by more than this
    /// between two samples and writeback may not exceed it (other processes keep a few
    /// dirty pages machine-wide; a draining fill shows as megabytes).
    pub steady_kib: u64,
    /// Time between samples, in ms.
    pub interval_ms: u64,
    /// Longest wait, in ms; the run then starts anyway, with a warning.
    pub timeout_ms: u64,
}

impl Default for SettleRule {
    fn default() -> Self {
        Self {
            quiet_samples: 3,
            steady_kib: 1024,
            interval_ms: 50,
            timeout_ms: 10_000,
        }
    }
}

/// What one more sample means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettleVerdict {
    /// Not yet quiet (or not quiet for long enough): sample again.
    Waiting,
    /// Quiet: start the timed part.
    Settled,
}

/// The settle decision over a sequence of samples.
#[derive(Clone, Debug)]
pub struct Settler {
    rule: SettleRule,
    quiet_run: u32,
    prev_dirty_kib: Option<u64>,
}

impl Settler {
    /// A decision under `rule`, with no sample seen yet.
    pub fn new(rule: SettleRule) -> Self {
        Self {
            rule,
            quiet_run: 0,
            prev_dirty_kib: None,
        }
    }

    /// Takes one sample. Quiet: nothing in flight on any device, writeback at most
    /// `steady_kib` and dirty not risen by more than that since the previous sample.
    pub fn observe(&mut self, s: &SettleSample) -> SettleVerdict {
        let idle = s.in_flight.iter().all(|&n| n == 0);
        if idle && s.dirty_kib == 0 && s.writeback_kib == 0 {
            return SettleVerdict::Settled;
        }
        let steady_dirty = match self.prev_dirty_kib {
            Some(prev) => s.dirty_kib <= prev.saturating_add(self.rule.steady_kib),
            None => s.dirty_kib <= self.rule.steady_kib,
        };
        self.prev_dirty_kib = Some(s.dirty_kib);
        if idle && steady_dirty && s.writeback_kib <= self.rule.steady_kib {
            self.quiet_run += 1;
        } else {
            self.quiet_run = 0;
        }
        if self.quiet_run >= self.rule.quiet_samples.max(1) {
            SettleVerdict::Settled
        } else {
            SettleVerdict::Waiting
        }
    }
}

/// The `Dirty` and `Writeback` KiB of a /proc/meminfo text (`None` when a line is missing
/// or not a number).
pub fn parse_meminfo_dirty(text: &str) -> Option<(u64, u64)> {
    let field = |name: &str| {
        text.lines().find_map(|line| {
            let rest = line.strip_prefix(name)?.strip_prefix(':')?;
            rest.split_whitespace().next()?.parse::<u64>().ok()
        })
    };
    Some((field("Dirty")?, field("Writeback")?))
}

/// Reads one sample: the in-flight count of each stat file in `stat_paths` and the dirty
/// and writeback lines of `meminfo`.
pub fn read_settle_sample(
    stat_paths: &[&Path],
    meminfo: &Path,
) -> Result<SettleSample, ProbeError> {
    let mut in_flight = Vec::with_capacity(stat_paths.len());
    for path in stat_paths {
        in_flight.push(crate::probe::read_block_stat(path)?.in_flight);
    }
    let text = std::fs::read_to_string(meminfo).map_err(|source| ProbeError::Read {
        path: meminfo.to_path_buf(),
        source,
    })?;
    let (dirty_kib, writeback_kib) =
        parse_meminfo_dirty(&text).ok_or_else(|| ProbeError::Parse {
            what: meminfo.display().to_string(),
            detail: "no Dirty: or Writeback: line".into(),
        })?;
    Ok(SettleSample {
        in_flight,
        dirty_kib,
        writeback_kib,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(in_flight: &[u64], dirty_kib: u64, writeback_kib: u64) -> SettleSample {
        SettleSample {
            in_flight: in_flight.to_vec(),
            dirty_kib,
            writeback_kib,
        }
    }

    /// The index of the sample that settles `seq`, if any.
    fn settles_at(seq: &[SettleSample]) -> Option<usize> {
        let mut s = Settler::new(SettleRule::default());
        seq.iter()
            .position(|x| s.observe(x) == SettleVerdict::Settled)
    }

    #[test]
    fn all_zero_settles_at_once() {
        assert_eq!(settles_at(&[sample(&[0, 0], 0, 0)]), Some(0));
    }

    #[test]
    fn a_draining_fill_waits_until_writeback_and_in_flight_end() {
        // Recorded shape after a 128 MiB fill on a loop ext4 (KiB): writeback drains, the
        // loop's requests finish, then the machine's usual few dirty pages stay.
        let seq = [
            sample(&[31, 12], 131_072, 65_536),
            sample(&[28, 30], 70_000, 60_000),
            sample(&[4, 2], 900, 3_000),
            sample(&[0, 1], 120, 0),
            sample(&[0, 0], 140, 0),
            sample(&[0, 0], 132, 0),
            sample(&[0, 0], 150, 0),
            sample(&[0, 0], 150, 0),
        ];
        assert_eq!(settles_at(&seq), Some(6));
    }

    #[test]
    fn a_request_in_flight_restarts_the_count() {
        let seq = [
            sample(&[0], 8, 0),
            sample(&[0], 8, 0),
            sample(&[1], 8, 0),
            sample(&[0], 8, 0),
            sample(&[0], 8, 0),
            sample(&[0], 8, 0),
        ];
        assert_eq!(settles_at(&seq), Some(5));
    }

    #[test]
    fn rising_dirty_pages_or_writeback_are_not_quiet() {
        let rising: Vec<_> = (1..10).map(|i| sample(&[0], 4096 * i, 0)).collect();
        assert_eq!(settles_at(&rising), None);
        let writing: Vec<_> = (0..10).map(|_| sample(&[0], 16, 8192)).collect();
        assert_eq!(settles_at(&writing), None);
        // Steady but large: another process's dirty pages that are not draining.
        let steady: Vec<_> = (0..4).map(|_| sample(&[0], 50_000, 0)).collect();
        assert_eq!(settles_at(&steady), Some(3));
    }

    #[test]
    fn meminfo_dirty_and_writeback_are_read_by_name() {
        let text = "MemTotal:       24542092 kB\nDirty:               716 kB\n\
                    Writeback:             4 kB\nWritebackTmp:          0 kB\n";
        assert_eq!(parse_meminfo_dirty(text), Some((716, 4)));
        assert_eq!(parse_meminfo_dirty("Dirty: 1 kB\n"), None);
        assert_eq!(parse_meminfo_dirty("Dirty: x kB\nWriteback: 0 kB\n"), None);
    }

    #[test]
    fn the_reader_reads_stat_files_and_meminfo() {
        let dir = std::env::temp_dir().join(format!("fsynclab-settle-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let stat = dir.join("stat");
        let meminfo = dir.join("meminfo");
        std::fs::write(&stat, "1 0 8 0 2 0 16 0 3 0 0 0 0 0 0 7 0\n").unwrap();
        std::fs::write(&meminfo, "Dirty: 12 kB\nWriteback: 0 kB\n").unwrap();
        let s = read_settle_sample(&[&stat], &meminfo).unwrap();
        assert_eq!(s, sample(&[3], 12, 0));
        assert!(read_settle_sample(&[&dir.join("none")], &meminfo).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
