//! What the advisor's runs measured, gathered run by run: each strategy's points, the
//! sync-parallelism samples, the traced flushes and the sync methods (issue 35).

use std::collections::HashMap;

use crate::analysis::{AdvicePoint, MethodRun, SyncSample, run_value};
use crate::metrics::RunResult;

use super::advise_plan::{AdvisePlan, AdviseStep, EMPTY_SYNC};

/// One strategy's runs so far.
#[derive(Default)]
struct PointRuns {
    cps: Vec<f64>,
    p50: Vec<f64>,
    p99: Vec<f64>,
    p999: Vec<f64>,
    run_ids: Vec<i64>,
    commits: u64,
    device_flushes: Option<u64>,
    counted_all: bool,
    cpu_ns: u64,
}

/// What the runs measured so far.
#[derive(Default)]
pub(super) struct Gathered {
    strategies: HashMap<(String, u32), PointRuns>,
    pub sync: Vec<SyncSample>,
    pub flushes: Vec<(i64, f64, f64)>,
    pub methods: Vec<MethodRun>,
    /// Background CPU measured before each run (0..=1).
    pub busy_before: Vec<f64>,
}

impl Gathered {
    pub fn add(&mut self, step: &AdviseStep, r: &RunResult, cpu_ns: u64) {
        if let Some(busy) = r.noise.as_ref().and_then(|n| n.background_cpu_busy) {
            self.busy_before.push(busy);
        }
        match step {
            AdviseStep::Strategy { strategy, writers } => {
                let p = self
                    .strategies
                    .entry((strategy.name(), *writers))
                    .or_insert_with(|| PointRuns {
                        counted_all: true,
                        ..PointRuns::default()
                    });
                let commit = r.ops.iter().find(|o| o.op == "commit");
                if let (Some(cps), Some(c)) = (run_value("commits_per_sec", r), commit) {
                    let s = c.lat.summary();
                    p.cps.push(cps);
                    p.p50.push(s.p50_ns as f64 / 1e3);
                    p.p99.push(s.p99_ns as f64 / 1e3);
                    p.p999.push(s.p999_ns as f64 / 1e3);
                }
                p.run_ids.push(r.id);
                p.commits += r.group.as_ref().map_or(0, |g| g.commits);
                p.cpu_ns += cpu_ns;
                match r.device.counters().and_then(|c| c.flushes()) {
                    Some(f) => *p.device_flushes.get_or_insert(0) += f,
                    None => p.counted_all = false,
                }
            }
            AdviseStep::Sync { k, shared } => {
                if let (Some(lat), Some(rate)) =
                    (run_value("sync_p50_us", r), run_value("syncs_per_sec", r))
                {
                    self.sync.push(SyncSample {
                        k: *k,
                        shared: *shared,
                        sync_p50_us: lat,
                        syncs_per_sec: rate,
                        run_id: r.id,
                    });
                }
                if *k == 1 {
                    self.flush(r);
                }
            }
            AdviseStep::Method(m) => {
                // An empty fsync has no durable write: its syncs are the figures.
                let [rate, p50, p99] = if *m == EMPTY_SYNC {
                    ["syncs_per_sec", "sync_p50_us", "sync_p99_us"]
                } else {
                    ["durable_ops_per_sec", "durable_p50_us", "durable_p99_us"]
                };
                if let Some(rate) = run_value(rate, r) {
                    self.methods.push(MethodRun {
                        method: (*m).to_string(),
                        per_sec: rate,
                        p50_us: run_value(p50, r),
                        p99_us: run_value(p99, r),
                        run_id: r.id,
                    });
                }
                if *m == "fdatasync" {
                    self.flush(r);
                }
            }
        }
    }

    /// The traced block-layer flush latency of a one-thread run.
    fn flush(&mut self, r: &RunResult) {
        if let Some(f) = r
            .kernel_trace
            .as_ref()
            .and_then(|k| k.flush_lat_us.as_ref())
        {
            self.flushes.push((r.id, f.p50, f.p99));
        }
    }

    /// The strategies' points in the plan's order, with their durability verdicts.
    pub fn points(&self, plan: &AdvisePlan, verdicts: &HashMap<String, bool>) -> Vec<AdvicePoint> {
        let mut out = Vec::new();
        for &writers in &plan.writers {
            for strategy in &plan.strategies {
                let name = strategy.name();
                let Some(p) = self.strategies.get(&(name.clone(), writers)) else {
                    continue;
                };
                let per_commit =
                    |total: u64| (p.commits > 0).then(|| total as f64 / p.commits as f64);
                // A strategy with no durable operation (early-ack acknowledges before its
                // flush) is not durable whatever a crash test found.
                let spec = plan.spec(&AdviseStep::Strategy {
                    strategy: *strategy,
                    writers,
                });
                let acks_early = crate::spec::durable_op(&spec).is_err();
                out.push(AdvicePoint {
                    durable: if acks_early {
                        Some(false)
                    } else {
                        verdicts.get(&name).copied()
                    },
                    acks_before_durable: acks_early,
                    strategy: name,
                    writers,
                    commits_per_sec: p.cps.clone(),
                    p99_us: p.p99.clone(),
                    p50_us: p.p50.clone(),
                    p999_us: p.p999.clone(),
                    cpu_us_per_commit: per_commit(p.cpu_ns).map(|ns| ns / 1e3),
                    flushes_per_commit: p
                        .device_flushes
                        .filter(|_| p.counted_all)
                        .and_then(per_commit),
                    run_ids: p.run_ids.clone(),
                });
            }
        }
        out
    }
}
