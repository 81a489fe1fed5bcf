//! The commit advisor's answer as one object (issue 35): what was measured (the points, the
//! sync-parallelism samples, the sync methods' costs, the flush latency) and what follows from
//! it (the frontier, the recommendation per writer count, the fitted class beside duckdb's
//! rule for the filesystem type). Built from numbers the lab gathered; stored as JSON and read
//! back whole, so stored advice is shown, exported and compared as it was made. Nothing here
//! measures or words.

use serde::{Deserialize, Serialize};

use super::advice::{
    AdvicePoint, Recommendation, SyncClass, SyncParallelism, frontier, median, recommend,
    sync_parallelism,
};
use super::advice_methods::{MethodCost, MethodRun, method_costs};
use super::ratio::{RatioCi, ratio_test};

/// A one-thread fsync of a changed 4 KiB block faster than this (µs, median) cannot have
/// reached a medium: it is below one device cache flush on any storage fsynclab has seen
/// (NVMe with power-loss protection: ~20 µs and up, with the journal commit on top).
pub const IMPLAUSIBLE_FSYNC_US: f64 = 10.0;

/// Why the measured syncs cannot be durable commits.
#[derive(Clone, Debug, PartialEq)]
pub enum ImplausibleSync {
    /// The target is a memory filesystem.
    MemoryFs {
        /// Its type.
        fs_type: String,
    },
    /// A one-thread fsync was faster than [`IMPLAUSIBLE_FSYNC_US`].
    TooFast {
        /// The median per-fsync latency, µs.
        p50_us: f64,
    },
}

/// A waiting strategy against `leader` at one writer count ([`Advice::wait_notes`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WaitNote {
    /// The waiting strategy.
    pub strategy: String,
    /// Writers.
    pub writers: u32,
    /// Its commits/s over leader's, with the 95 % interval.
    pub vs_leader: RatioCi,
    /// Whether the interval lies above 1: the wait bought throughput.
    pub buys_throughput: bool,
    /// Whether the interval lies below 1: the wait cost throughput.
    pub costs_throughput: bool,
    /// Its median p99, µs.
    pub p99_us: f64,
    /// Leader's median p99, µs.
    pub leader_p99_us: f64,
}

/// One per-fsync latency measurement of the sync-parallelism runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SyncSample {
    /// Concurrent threads, each writing one block and fsyncing it in a loop.
    pub k: u32,
    /// One file shared by every thread (`true`) or a file per thread.
    pub shared: bool,
    /// The run's per-fsync latency p50, µs.
    pub sync_p50_us: f64,
    /// The run's fsyncs per second, all threads together.
    pub syncs_per_sec: f64,
    /// The run.
    pub run_id: i64,
}

/// The sync-parallelism fit of one file layout, with the samples it was fitted on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SyncFit {
    /// The class of the fitted factor.
    pub class: SyncClass,
    /// Whether the factor's interval lies within the class's range.
    #[serde(default)]
    pub settled: bool,
    /// The fitted exponent of per-fsync latency in k (0 overlapping, 1 serialized).
    pub factor: f64,
    /// Its 95 % interval.
    pub factor_ci95: Option<(f64, f64)>,
    /// The samples.
    pub points: Vec<SyncSample>,
}

impl SyncFit {
    /// Fits the samples of one layout (`None` with fewer than two distinct k).
    pub fn of(samples: Vec<SyncSample>) -> Option<Self> {
        let pairs: Vec<(u32, f64)> = samples.iter().map(|s| (s.k, s.sync_p50_us)).collect();
        let SyncParallelism {
            class,
            settled,
            factor,
            factor_ci95,
        } = sync_parallelism(&pairs)?;
        Some(Self {
            class,
            settled,
            factor,
            factor_ci95,
            points: samples,
        })
    }
}

/// What duckdb's rule (pull request 23655: `FileSystem::SyncParallelism` declared from the
/// filesystem type) would have guessed here, beside the measurement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DuckdbRule {
    /// The guess: overlapping for network filesystems, serialized for local ones.
    pub guess: SyncClass,
    /// Whether the filesystem type is a network one.
    pub network: bool,
    /// Whether the measured class is the guess (`None` when nothing was measured, the
    /// measurement did not settle on a class, or the rule does not apply).
    pub agrees: Option<bool>,
    /// Whether the rule applies: it goes by the filesystem type, which a bare block device
    /// does not have (`false` there; `guess` is then what it says of an unknown local type).
    #[serde(default = "applies")]
    pub applies: bool,
}

fn applies() -> bool {
    true
}

/// Filesystem types whose sync is a round trip to a server (the rule's "network").
const NETWORK_FS: &[&str] = &[
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "ceph",
    "9p",
    "glusterfs",
    "fuse.glusterfs",
    "fuse.sshfs",
    "fuse.s3fs",
    "lustre",
    "gpfs",
    "afs",
    "virtiofs",
];

impl DuckdbRule {
    /// The rule's guess for `fs_type` beside the `measured` class.
    pub fn of(fs_type: Option<&str>, measured: Option<SyncClass>) -> Self {
        let network = fs_type.is_some_and(|t| NETWORK_FS.contains(&t));
        let guess = if network {
            SyncClass::Overlapping
        } else {
            SyncClass::Serialized
        };
        Self {
            guess,
            network,
            agrees: measured.map(|m| m == guess),
            applies: true,
        }
    }
}

/// Flush latency: the block layer's cache flushes, from the kernel tracer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlushLat {
    /// Median of the traced runs' flush p50, µs.
    pub p50: f64,
    /// Median of the traced runs' flush p99, µs.
    pub p99: f64,
    /// The traced runs.
    pub run_ids: Vec<i64>,
}

/// The recommendation at one writer count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecommendedAt {
    /// Writers.
    pub writers: u32,
    /// The p99 budget the strategies had to keep, µs (the user's, or 2× solo's p99 here).
    pub budget_p99_us: Option<f64>,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: Recommendation,
}

impl RecommendedAt {
    /// The one strategy recommended, if the intervals named one.
    pub fn strategy(&self) -> Option<&str> {
        match &self.verdict {
            Recommendation::One { strategy, .. } => Some(strategy),
            _ => None,
        }
    }
}

/// The frontier at one writer count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FrontierAt {
    /// Writers.
    pub writers: u32,
    /// The strategies no other one beats on both commits/s and p99, best throughput first.
    pub strategies: Vec<String>,
}

/// Everything the advisor measured and concluded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Advice {
    /// The directory measured.
    pub target: String,
    /// Its filesystem type.
    pub fs_type: Option<String>,
    /// The short (`--quick`) plan.
    pub quick: bool,
    /// Bytes per record of the group-commit runs.
    pub record_size: u64,
    /// How their log was laid out: `preallocated` (written first, overwritten) or `append`.
    #[serde(default)]
    pub log: String,
    /// The user's p99 budget, µs (`None`: 2× solo's p99 at each writer count).
    pub budget_p99_us: Option<f64>,
    /// The writer count the headline recommendation is for.
    pub writers: u32,
    /// Sync parallelism with one shared file (what a shared log's writers meet).
    pub sync_parallelism: Option<SyncFit>,
    /// Sync parallelism with a file per thread.
    pub sync_parallelism_own_files: Option<SyncFit>,
    /// duckdb's rule for this filesystem type beside the shared-file class.
    pub duckdb_rule: DuckdbRule,
    /// Block-level flush latency, when the kernel tracer ran.
    pub flush_lat_us: Option<FlushLat>,
    /// One writer's sync methods.
    pub methods: Vec<MethodCost>,
    /// Every strategy at every writer count.
    pub points: Vec<AdvicePoint>,
    /// The frontier per writer count.
    pub frontier: Vec<FrontierAt>,
    /// The recommendation at [`Advice::writers`].
    pub recommended: RecommendedAt,
    /// The recommendation at every writer count measured.
    pub by_writers: Vec<RecommendedAt>,
    /// Why the measurement stopped early, if it did.
    pub stopped: Option<String>,
    /// Runs before which the machine was busy with other work, if any.
    #[serde(default)]
    pub busy: Option<Busy>,
    /// The target is a bare block device (`advise --device`): no filesystem, so no
    /// group-commit strategies (they need a log file) and no shared-file layout.
    #[serde(default)]
    pub raw_device: bool,
}

/// Why a bare block device's advice recommends no strategy.
pub const RAW_DEVICE_NO_STRATEGIES: &str = "a bare block device has no filesystem for a log \
     file: the group-commit strategies are measured on a filesystem (advise DIR on one made \
     on this device); this advice has the device's sync figures";

/// Background CPU above [`BUSY_ABOVE`] measured before some of the advice's runs: another
/// benchmark or job ran beside it, and its figures are suspect.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Busy {
    /// Runs before which the machine was busy.
    pub runs: usize,
    /// Runs measured.
    pub of: usize,
    /// The busiest share of all CPUs seen (0..=1).
    pub max: f64,
}

/// Share of all CPUs busy with other work, before a run, above which the machine was busy.
pub const BUSY_ABOVE: f64 = 0.25;

/// What the lab measured, for [`Advice::build`].
#[derive(Clone, Debug, Default)]
pub struct AdviceInputs {
    /// The directory measured.
    pub target: String,
    /// Its filesystem type.
    pub fs_type: Option<String>,
    /// The short plan.
    pub quick: bool,
    /// Bytes per record.
    pub record_size: u64,
    /// The log's layout.
    pub log: String,
    /// The user's p99 budget, µs.
    pub budget_p99_us: Option<f64>,
    /// The headline writer count.
    pub writers: u32,
    /// The strategies' points (durability verdicts filled in).
    pub points: Vec<AdvicePoint>,
    /// The sync-parallelism samples.
    pub sync_samples: Vec<SyncSample>,
    /// Traced flush latency per run: (run, p50 µs, p99 µs).
    pub flushes: Vec<(i64, f64, f64)>,
    /// The methods' runs.
    pub methods: Vec<MethodRun>,
    /// Why the measurement stopped early.
    pub stopped: Option<String>,
    /// Background CPU measured before each run (0..=1).
    pub busy_before: Vec<f64>,
    /// The target is a bare block device.
    pub raw_device: bool,
}

impl Advice {
    /// Judges what was measured.
    pub fn build(inputs: AdviceInputs) -> Self {
        let layout = |shared: bool| {
            let samples: Vec<SyncSample> = inputs
                .sync_samples
                .iter()
                .filter(|s| s.shared == shared)
                .cloned()
                .collect();
            SyncFit::of(samples)
        };
        let shared = layout(true);
        let own = layout(false);
        let mut duckdb_rule = DuckdbRule::of(
            inputs.fs_type.as_deref(),
            shared.as_ref().filter(|f| f.settled).map(|f| f.class),
        );
        if inputs.raw_device {
            duckdb_rule.applies = false;
            duckdb_rule.agrees = None;
        }
        let mut writer_counts: Vec<u32> = inputs.points.iter().map(|p| p.writers).collect();
        writer_counts.sort_unstable();
        writer_counts.dedup();
        let at = |writers: u32| RecommendedAt {
            writers,
            budget_p99_us: inputs.budget_p99_us.or_else(|| {
                let solo = inputs
                    .points
                    .iter()
                    .find(|p| p.writers == writers && p.strategy == "solo");
                solo.and_then(AdvicePoint::p99).map(|l| 2.0 * l)
            }),
            verdict: if inputs.raw_device && inputs.points.is_empty() {
                Recommendation::Nothing {
                    why: RAW_DEVICE_NO_STRATEGIES.into(),
                }
            } else {
                recommend(&inputs.points, writers, inputs.budget_p99_us)
            },
        };
        let by_writers: Vec<RecommendedAt> = writer_counts.iter().map(|&w| at(w)).collect();
        let frontier = frontier(&inputs.points)
            .into_iter()
            .map(|(writers, strategies)| FrontierAt {
                writers,
                strategies,
            })
            .collect();
        Self {
            target: inputs.target,
            fs_type: inputs.fs_type,
            quick: inputs.quick,
            record_size: inputs.record_size,
            log: inputs.log,
            budget_p99_us: inputs.budget_p99_us,
            writers: inputs.writers,
            sync_parallelism: shared,
            sync_parallelism_own_files: own,
            duckdb_rule,
            flush_lat_us: flush_latency(&inputs.flushes),
            methods: method_costs(&inputs.methods),
            recommended: at(inputs.writers),
            by_writers,
            frontier,
            points: inputs.points,
            stopped: inputs.stopped,
            busy: busy(&inputs.busy_before),
            raw_device: inputs.raw_device,
        }
    }

    /// The advice with every control, bidi or invisible character of its text fields (a line
    /// break too) written as `\uXXXX`: stored advice comes from a database or a bundle that
    /// someone else may have written, and is shown on terminals and in Markdown.
    pub fn escaped(mut self) -> Self {
        fn esc(s: &mut String) {
            if s.chars()
                .any(|c| c.is_control() || crate::spec::is_unsafe_char(c))
            {
                *s = s
                    .chars()
                    .map(|c| {
                        if c.is_control() || crate::spec::is_unsafe_char(c) {
                            format!("\\u{:04x}", u32::from(c))
                        } else {
                            c.to_string()
                        }
                    })
                    .collect();
            }
        }
        esc(&mut self.target);
        esc(&mut self.log);
        self.fs_type.iter_mut().for_each(esc);
        self.stopped.iter_mut().for_each(esc);
        self.points.iter_mut().for_each(|p| esc(&mut p.strategy));
        self.methods.iter_mut().for_each(|m| esc(&mut m.method));
        for f in &mut self.frontier {
            f.strategies.iter_mut().for_each(esc);
        }
        for r in std::iter::once(&mut self.recommended).chain(self.by_writers.iter_mut()) {
            match &mut r.verdict {
                Recommendation::One { strategy, .. } => esc(strategy),
                Recommendation::Equivalent { strategies } => strategies.iter_mut().for_each(esc),
                Recommendation::Nothing { why } => esc(why),
            }
        }
        self
    }

    /// A point by strategy and writers.
    pub fn point(&self, strategy: &str, writers: u32) -> Option<&AdvicePoint> {
        self.points
            .iter()
            .find(|p| p.strategy == strategy && p.writers == writers)
    }

    /// At one writer count of the advice, every strategy that fits its budget against the
    /// best that does (see [`super::against_best`]); nothing without a budget.
    pub fn against_best(&self, at: &RecommendedAt) -> Vec<super::AgainstBest> {
        at.budget_p99_us
            .map(|b| super::against_best(&self.points, at.writers, b))
            .unwrap_or_default()
    }

    /// The points at one writer count left out of its recommendation: a p99 over the
    /// budget, or not durable. With no budget, none.
    pub fn left_out(&self, at: &RecommendedAt) -> Vec<&AdvicePoint> {
        let Some(budget) = at.budget_p99_us else {
            return Vec::new();
        };
        self.points
            .iter()
            .filter(|p| p.writers == at.writers && p.throughput().is_some())
            .filter(|p| p.durable == Some(false) || p.p99().is_none_or(|l| l > budget))
            .collect()
    }

    /// A point's commits/s over solo's at the same writer count, with the 95 % interval.
    pub fn vs_solo(&self, point: &AdvicePoint) -> Option<RatioCi> {
        let solo = self.point("solo", point.writers)?;
        let r = ratio_test(&solo.commits_per_sec, &point.commits_per_sec)?;
        Some(RatioCi {
            ratio: r.ratio,
            ci95: r.ci95,
        })
    }

    /// Why the measured syncs cannot be durable commits, if they cannot: a memory
    /// filesystem, or a one-thread fsync of a changed block faster than
    /// [`IMPLAUSIBLE_FSYNC_US`] at the median.
    pub fn implausible_sync(&self) -> Option<ImplausibleSync> {
        if let Some(fs) = self
            .fs_type
            .as_deref()
            .filter(|t| matches!(*t, "tmpfs" | "ramfs"))
        {
            return Some(ImplausibleSync::MemoryFs {
                fs_type: fs.to_string(),
            });
        }
        let single: Vec<f64> = [&self.sync_parallelism, &self.sync_parallelism_own_files]
            .into_iter()
            .flatten()
            .flat_map(|f| f.points.iter().filter(|p| p.k == 1).map(|p| p.sync_p50_us))
            .collect();
        let p50 = median(&single)?;
        (p50 < IMPLAUSIBLE_FSYNC_US).then_some(ImplausibleSync::TooFast { p50_us: p50 })
    }

    /// What each waiting strategy (`delay:N`, `adaptive`, `jbd`: the leader sleeps before
    /// its flush to gather followers) did against `leader` (no wait) at the headline writer
    /// count: its commits/s over leader's with the interval, and both p99s.
    pub fn wait_notes(&self) -> Vec<WaitNote> {
        let writers = self.writers;
        let Some(leader) = self.point("leader", writers) else {
            return Vec::new();
        };
        let waits = |s: &str| s.starts_with("delay:") || s.starts_with("adaptive") || s == "jbd";
        self.points
            .iter()
            .filter(|p| p.writers == writers && waits(&p.strategy))
            .filter_map(|p| {
                let r = ratio_test(&leader.commits_per_sec, &p.commits_per_sec)?;
                Some(WaitNote {
                    strategy: p.strategy.clone(),
                    writers,
                    vs_leader: RatioCi {
                        ratio: r.ratio,
                        ci95: r.ci95,
                    },
                    buys_throughput: r.ci95.is_some_and(|(lo, _)| lo > 1.0),
                    costs_throughput: r.ci95.is_some_and(|(_, hi)| hi < 1.0),
                    p99_us: p.p99()?,
                    leader_p99_us: leader.p99()?,
                })
            })
            .collect()
    }

    /// The strategies whose durability no stored crash test has judged on this filesystem
    /// type, in the order measured.
    pub fn not_crash_tested(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for p in &self.points {
            if p.durable.is_none() && !out.contains(&p.strategy.as_str()) {
                out.push(&p.strategy);
            }
        }
        out
    }
}

fn busy(before: &[f64]) -> Option<Busy> {
    let runs = before.iter().filter(|&&b| b > BUSY_ABOVE).count();
    (runs > 0).then(|| Busy {
        runs,
        of: before.len(),
        max: before.iter().copied().fold(0.0, f64::max),
    })
}

fn flush_latency(flushes: &[(i64, f64, f64)]) -> Option<FlushLat> {
    let p50: Vec<f64> = flushes.iter().map(|f| f.1).collect();
    let p99: Vec<f64> = flushes.iter().map(|f| f.2).collect();
    Some(FlushLat {
        p50: median(&p50)?,
        p99: median(&p99)?,
        run_ids: flushes.iter().map(|f| f.0).collect(),
    })
}

#[cfg(test)]
#[path = "advice_object_tests.rs"]
mod tests;
