//! Baseline vs candidate: per-metric statistics, the change as a ratio with its 95 %
//! interval (Welch's t-test on the logarithms, `ratio`), a verdict that never calls a wide
//! interval "unchanged", the runs a 5 % change would need, what differs between the sides,
//! sweeps, and the series the report plots. Everything the report and the GUI show
//! is computed here; they only draw it.

use std::collections::BTreeMap;

use super::metrics::{
    Direction, Headline, Latency, METRICS, MergedLatency, MetricDef, is_kind_metric, merged_value,
    run_value, run_value_in,
};
use super::ratio::{
    DEFAULT_MIN_CHANGE_PCT, MIN_RUNS, POWER_CHANGE, RatioTest, ratio_test, runs_needed,
};
use super::rows::{
    Comparison, MetricComparison, PERCENTILE_POINTS, SideSummary, Sweep, SweepPoint, TimelinePoint,
    Verdict,
};
use super::stats::{Stats, describe};
use crate::metrics::{LatencyHistogram, RunResult, RunStatus, RunSummary};
use crate::spec::PublishedFigure;

/// Significance level of the verdicts.
pub const ALPHA: f64 = 0.05;

/// Why a comparison cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// A side has no finished run.
    #[error("{}", crate::spec::Worded::worded(self, &crate::spec::Neutral))]
    EmptySide {
        /// Which side, by its name.
        side: String,
        /// Which runs were left out and why.
        detail: String,
    },
    /// Both sides are the same runs: a comparison of runs with themselves says nothing.
    #[error("{}", crate::spec::Worded::worded(self, &crate::spec::Neutral))]
    SameRuns {
        /// The runs, in id order.
        ids: Vec<i64>,
    },
}

impl crate::spec::Worded for AnalysisError {
    fn worded(&self, names: &dyn crate::spec::SettingNames) -> String {
        match self {
            AnalysisError::EmptySide { side, detail } => format!(
                "{side} has no finished runs{detail}; choose runs that finished (see {})",
                names.action(crate::spec::Action::ListRuns)
            ),
            AnalysisError::SameRuns { ids } => {
                let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
                format!(
                    "the baseline and the candidate are the same runs ({}); compare two \
                     different sets of runs",
                    ids.join(", ")
                )
            }
        }
    }
}

/// The runs of one side, as resolved from a run id, experiment or label.
#[derive(Clone, Debug)]
pub struct SideInput {
    /// How the user named it (`run 12`, `label nossd`, `experiment 3`).
    pub name: String,
    /// Every run the name resolved to (any status).
    pub runs: Vec<RunResult>,
    /// Runs that resolved but have no stored result (failed before measuring...).
    pub unmeasured: Vec<(i64, RunStatus)>,
    /// The crash tests' findings of the runs that were crash-tested (issue 33).
    pub crash: Vec<(i64, crate::crashlog::CrashReport)>,
}

fn usable(side: &SideInput) -> Result<Vec<&RunResult>, AnalysisError> {
    let runs: Vec<&RunResult> = side
        .runs
        .iter()
        .filter(|r| r.status == RunStatus::Finished)
        .collect();
    if runs.is_empty() {
        let mut left: Vec<String> = side
            .runs
            .iter()
            .map(|r| format!("{} {}", r.id, r.status.as_str()))
            .collect();
        left.extend(
            side.unmeasured
                .iter()
                .map(|(id, s)| format!("{id} {}", s.as_str())),
        );
        let detail = if left.is_empty() {
            " (it matched no runs)".into()
        } else {
            format!(" (runs: {})", left.join(", "))
        };
        return Err(AnalysisError::EmptySide {
            side: side.name.clone(),
            detail,
        });
    }
    Ok(runs)
}

/// A side's runs with each run's summary, computed once (every metric reads it).
type Summarised<'a> = [(&'a RunResult, RunSummary)];

fn summarise<'a>(runs: &[&'a RunResult]) -> Vec<(&'a RunResult, RunSummary)> {
    runs.iter().map(|r| (*r, r.summary())).collect()
}

/// Compares `metrics` (catalogue entries) of two run sets.
fn compare_metrics(base: &[&RunResult], cand: &[&RunResult]) -> Vec<MetricComparison> {
    let differs = |sync| super::durability::meaning_differs(base, cand, sync).is_some();
    let (write_differs, sync_differs) = (differs(false), differs(true));
    let (bm, cm) = (MergedLatency::of(base), MergedLatency::of(cand));
    let (base_s, cand_s) = (summarise(base), summarise(cand));
    METRICS
        .iter()
        .map(|def| compare_one(def, (base, &base_s), (cand, &cand_s), (&bm, &cm)))
        .filter(|m| !is_kind_metric(&m.key) || m.baseline.is_some() || m.candidate.is_some())
        .map(|mut m| {
            // The rate and the flushes of sync calls that do different work (an empty
            // fsync against one after a write, sync_file_range against fdatasync) are not
            // the same figure either.
            let call_differs = match super::metrics::latency_parts(&m.key) {
                Some((Latency::Write, _)) => write_differs,
                Some((Latency::Sync, _)) => sync_differs,
                _ => sync_differs && matches!(m.key.as_str(), "syncs_per_sec" | "flushes_per_sync"),
            };
            if call_differs {
                not_comparable(&mut m);
            }
            m
        })
        .collect()
}

/// Takes the change and the verdict off a metric whose calls do different work on the two
/// sides: each side's value stays (it is true), no ratio between them is shown.
fn not_comparable(m: &mut MetricComparison) {
    m.gain_pct = None;
    m.ratio = None;
    m.ratio_ci95 = None;
    m.p_value = None;
    m.runs_needed_for_5pct = None;
    m.welch = None;
    m.verdict = Verdict::NotComparable;
}

/// The latency a comparison leads with (see [`Comparison::headline_latency`]).
fn headline_latency(base: &[&RunResult], cand: &[&RunResult]) -> String {
    let differs = |sync| super::durability::meaning_differs(base, cand, sync).is_some();
    let durable = base.iter().chain(cand).all(|r| r.durable_lat.is_some());
    if durable && (differs(false) || differs(true)) {
        "durable_p99_us".into()
    } else {
        "sync_p99_us".into()
    }
}

/// A side's headline latency: the percentile of its merged histogram; for a side with a run
/// that has no histogram (an import of plain fio JSON), the run's own value when it is the
/// only run, else none (percentiles of different runs cannot be merged or averaged).
fn merged_headline(key: &str, runs: &[&RunResult], merged: &MergedLatency) -> Option<f64> {
    if runs.iter().all(|r| r.has_histograms()) {
        return merged_value(key, merged);
    }
    match runs {
        [only] => run_value(key, only),
        _ => None,
    }
}

fn compare_one(
    def: &MetricDef,
    (base, base_s): (&[&RunResult], &Summarised),
    (cand, cand_s): (&[&RunResult], &Summarised),
    (base_hist, cand_hist): (&MergedLatency, &MergedLatency),
) -> MetricComparison {
    let values = |runs: &Summarised| -> Vec<f64> {
        runs.iter()
            .filter_map(|(r, s)| run_value_in(def.key, r, s))
            .collect()
    };
    let (bv, cv) = (values(base_s), values(cand_s));
    let (bstats, cstats) = (describe(&bv), describe(&cv));
    let headline =
        |stats: &Option<Stats>, runs: &[&RunResult], hist: &MergedLatency| match def.headline {
            Headline::Amean => stats.as_ref().map(|s| s.amean),
            Headline::Hmean => stats.as_ref().map(|s| s.hmean.unwrap_or(s.amean)),
            Headline::Merged => merged_headline(def.key, runs, hist),
        };
    let baseline_value = headline(&bstats, base, base_hist);
    let candidate_value = headline(&cstats, cand, cand_hist);
    let gain_pct = match (baseline_value, candidate_value) {
        (Some(b), Some(c)) if b != 0.0 => Some(match def.direction {
            Direction::HigherIsBetter => (c - b) / b * 100.0,
            Direction::LowerIsBetter => (b - c) / b * 100.0,
        }),
        _ => None,
    };
    let test = ratio_test(&bv, &cv);
    // A side without a headline (several imports without histograms): nothing to judge.
    let measured = bstats.is_some() && cstats.is_some();
    let measured = measured && baseline_value.is_some() && candidate_value.is_some();
    let verdict = if measured {
        verdict_of(def.direction, test.as_ref(), bv.len().min(cv.len()))
    } else {
        Verdict::Missing
    };
    MetricComparison {
        key: def.key.into(),
        label: def.label.into(),
        unit: def.unit.into(),
        direction: def.direction,
        headline: def.headline,
        baseline: bstats,
        candidate: cstats,
        baseline_value,
        candidate_value,
        gain_pct,
        ratio: test.map(|t| t.ratio),
        ratio_ci95: test.and_then(|t| t.ci95),
        p_value: test.and_then(|t| t.welch).map(|w| w.p_value),
        runs_needed_for_5pct: runs_needed(&bv, &cv, POWER_CHANGE),
        welch: test.and_then(|t| t.welch),
        verdict,
    }
}

/// The verdict on a metric both sides measured: no ratio when a side is not positive, too
/// few runs below [`MIN_RUNS`] on a side, better or worse when the interval excludes 1 and
/// the change is at least [`DEFAULT_MIN_CHANGE_PCT`], below the minimum change when only the
/// first holds, no significant difference otherwise.
fn verdict_of(direction: Direction, test: Option<&RatioTest>, min_runs: usize) -> Verdict {
    let Some(test) = test else {
        return Verdict::NoRatio;
    };
    if min_runs < MIN_RUNS {
        return Verdict::TooFewRuns;
    }
    if !test.excludes_one() {
        return Verdict::NoSignificantDifference;
    }
    if (test.ratio - 1.0).abs() * 100.0 < DEFAULT_MIN_CHANGE_PCT {
        return Verdict::BelowMinChange;
    }
    if direction.better(test.ratio > 1.0) {
        Verdict::Better
    } else {
        Verdict::Worse
    }
}

/// Flattened spec fields of a run (`open_flags.direct`...) as JSON values.
pub(super) fn spec_fields(run: &RunResult) -> BTreeMap<String, serde_json::Value> {
    flatten_spec(&run.spec)
}

/// Flattened fields of a workload (`open_flags.direct`...) as JSON values.
pub(super) fn flatten_spec(
    spec: &crate::spec::WorkloadSpec,
) -> BTreeMap<String, serde_json::Value> {
    let mut out = BTreeMap::new();
    if let Ok(serde_json::Value::Object(map)) = serde_json::to_value(spec) {
        for (k, v) in map {
            match v {
                serde_json::Value::Object(inner) => {
                    for (ik, iv) in inner {
                        out.insert(format!("{k}.{ik}"), iv);
                    }
                }
                other => {
                    out.insert(k, other);
                }
            }
        }
    }
    out
}

/// The one numeric spec field that varies within a side, if exactly one does.
fn detect_sweep(base: &[&RunResult], cand: &[&RunResult]) -> Option<String> {
    let mut varying: Vec<String> = Vec::new();
    for side in [base, cand] {
        let fields: Vec<BTreeMap<String, serde_json::Value>> =
            side.iter().map(|r| spec_fields(r)).collect();
        let Some(first) = fields.first() else {
            continue;
        };
        for (key, value) in first {
            if fields.iter().any(|f| f.get(key) != Some(value)) && !varying.contains(key) {
                varying.push(key.clone());
            }
        }
    }
    // The seed changes nothing a user sweeps; ignore it.
    varying.retain(|k| k != "seed");
    if varying.len() != 1 {
        return None;
    }
    let field = varying.pop()?;
    let numeric = base
        .iter()
        .chain(cand)
        .all(|r| spec_fields(r).get(&field).is_some_and(|v| v.is_number()));
    numeric.then_some(field)
}

pub(super) fn field_value(run: &RunResult, field: &str) -> Option<f64> {
    spec_fields(run).get(field)?.as_f64()
}

/// The percentile series of a side whose runs lack histograms (imports of plain fio JSON):
/// a single run's printed percentiles, none for several (they cannot be merged); `None`
/// when every run has histograms (the merged histogram gives the series).
fn side_percentiles(runs: &[&RunResult], sync: bool) -> Option<Vec<(f64, f64)>> {
    if runs.iter().all(|r| r.has_histograms()) {
        return None;
    }
    let [only] = runs else {
        return Some(Vec::new());
    };
    let key = |p: f64| match p {
        50.0 => "p50",
        90.0 => "p90",
        99.0 => "p99",
        99.9 => "p999",
        100.0 => "max",
        _ => "",
    };
    let which = if sync { "sync" } else { "write" };
    Some(
        PERCENTILE_POINTS
            .iter()
            .filter_map(|&(p, _)| {
                let value = match key(p) {
                    "" => only.reported.as_ref().and_then(|rep| {
                        let lat = if sync { &rep.sync_lat } else { &rep.write_lat };
                        lat.at(p).map(|ns| ns as f64 / 1e3)
                    }),
                    k => run_value(&format!("{which}_{k}_us"), only),
                };
                Some((p, value?))
            })
            .collect(),
    )
}

fn side_summary(input: &SideInput, runs: &[&RunResult]) -> SideSummary {
    let MergedLatency { write, sync, .. } = MergedLatency::of(runs);
    let pcts = PERCENTILE_POINTS.map(|(p, _)| p);
    let pct_points = |h: &LatencyHistogram| -> Vec<(f64, f64)> {
        if h.count() == 0 {
            return Vec::new();
        }
        pcts.iter()
            .map(|&p| {
                (
                    p,
                    if p >= 100.0 {
                        h.summary().max_ns
                    } else {
                        h.percentile_ns(p)
                    } as f64
                        / 1e3,
                )
            })
            .collect()
    };
    // IOPS without the run's summary (which walks its histograms): writes over wall time.
    let iops = |r: &RunResult| {
        let secs = r.wall_secs();
        if secs > 0.0 {
            r.writes as f64 / secs
        } else {
            0.0
        }
    };
    let mut by_iops: Vec<(f64, &&RunResult)> = runs.iter().map(|r| (iops(r), r)).collect();
    by_iops.sort_by(|a, b| a.0.total_cmp(&b.0));
    let median_run = by_iops[by_iops.len() / 2].1;
    // Without the run's last, partial window: it is not a rate worth plotting.
    let timeline = crate::metrics::whole_windows(&median_run.intervals)
        .iter()
        .filter(|s| s.dur_ms > 0)
        .map(|s| TimelinePoint {
            t_s: s.t_ms as f64 / 1e3,
            iops: s.writes as f64 / (s.dur_ms as f64 / 1e3),
            sync_p99_us: s.sync_p99_ns.map(|n| n as f64 / 1e3),
        })
        .collect();
    let mut workloads: Vec<String> = runs.iter().map(|r| r.spec.describe()).collect();
    workloads.dedup();
    workloads.sort();
    workloads.dedup();
    let busy: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.noise.as_ref()?.background_cpu_busy)
        .collect();
    let mut left_out: Vec<(i64, RunStatus)> = input
        .runs
        .iter()
        .filter(|r| r.status != RunStatus::Finished)
        .map(|r| (r.id, r.status))
        .collect();
    left_out.extend(input.unmeasured.iter().copied());
    let run_ids: Vec<i64> = runs.iter().map(|r| r.id).collect();
    SideSummary {
        name: input.name.clone(),
        crash: super::CrashFindings::of(&input.crash, &run_ids),
        run_ids,
        left_out,
        background_cpu_busy: describe(&busy),
        workloads,
        timeline,
        timeline_run: median_run.id,
        timeline_warmup_s: median_run.spec.warmup_ns() as f64 / 1e9,
        write_percentiles: side_percentiles(runs, false).unwrap_or_else(|| pct_points(&write)),
        sync_percentiles: side_percentiles(runs, true).unwrap_or_else(|| pct_points(&sync)),
        sync_cdf: sync
            .cdf_points(200)
            .into_iter()
            .map(|(ns, q)| (ns as f64 / 1e3, q))
            .collect(),
    }
}

/// Compares two sides. `published` are the figures of the preset the runs replay (if any).
pub fn compare(
    baseline: &SideInput,
    candidate: &SideInput,
    published: &[PublishedFigure],
) -> Result<Comparison, AnalysisError> {
    let base = usable(baseline)?;
    let cand = usable(candidate)?;
    let mut warnings = Vec::new();
    let sweep = detect_sweep(&base, &cand).map(|field| {
        let mut values: Vec<f64> = base
            .iter()
            .chain(&cand)
            .filter_map(|r| field_value(r, &field))
            .collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        let points = values
            .into_iter()
            .map(|value| {
                fn pick<'r>(runs: &[&'r RunResult], field: &str, value: f64) -> Vec<&'r RunResult> {
                    runs.iter()
                        .copied()
                        .filter(|r| field_value(r, field) == Some(value))
                        .collect()
                }
                let (b, c) = (pick(&base, &field, value), pick(&cand, &field, value));
                let metrics = if b.is_empty() || c.is_empty() {
                    missing_metrics()
                } else {
                    compare_metrics(&b, &c)
                };
                SweepPoint { value, metrics }
            })
            .collect();
        Sweep { field, points }
    });
    let metrics = if sweep.is_some() {
        Vec::new()
    } else {
        compare_metrics(&base, &cand)
    };
    let baseline_summary = side_summary(baseline, &base);
    let candidate_summary = side_summary(candidate, &cand);

    let metadata =
        super::meta::metadata_rows(&base, &cand, sweep.as_ref().map(|s| s.field.as_str()));
    if metadata.iter().any(|m| m.field == "workload" && m.differs) {
        warnings.push(
            "the two sides ran DIFFERENT WORKLOADS: differences below mix the workload change with \
             any system change"
                .into(),
        );
    }
    if let (Some(b), Some(c)) = (
        &baseline_summary.background_cpu_busy,
        &candidate_summary.background_cpu_busy,
    ) {
        warnings.extend(load_note(b.amean * 100.0, c.amean * 100.0));
    }
    warnings.extend(super::meta::cross_tool_warnings(
        (&baseline_summary.name, &base),
        (&candidate_summary.name, &cand),
    ));
    for (side, summary) in [(&baseline_summary, &base), (&candidate_summary, &cand)] {
        warnings.extend(super::plausibility::side_warning(&side.name, summary));
        warnings.extend(super::plausibility::short_side_warning(&side.name, summary));
        if summary.len() == 1 {
            warnings.push(format!(
                "{} has a single run: no significance can be claimed; repeat it (3 runs or more)",
                side.name
            ));
        }
        if !side.left_out.is_empty() {
            let ids: Vec<String> = side
                .left_out
                .iter()
                .map(|(id, s)| format!("{id} ({})", s.as_str()))
                .collect();
            warnings.push(format!(
                "{}: left out runs that did not finish: {}",
                side.name,
                ids.join(", ")
            ));
        }
    }
    for sync in [false, true] {
        warnings.extend(super::durability::meaning_differs(&base, &cand, sync));
    }
    let published =
        super::published::published_rows(published, &metrics, sweep.as_ref(), &base, &cand);
    Ok(Comparison {
        baseline: baseline_summary,
        candidate: candidate_summary,
        metrics,
        sweep,
        metadata,
        published,
        warnings,
        preset_scales: Vec::new(),
        published_withheld: None,
        headline_latency: headline_latency(&base, &cand),
    })
}

/// Percentage points of background CPU between the sides, as shown, from which the
/// comparison says the load differed. The busy share is sampled over one second before
/// each run, so a few points come and go between back-to-back runs on an idle machine (a
/// cron job, the journal flushing); 10 points is a fifth of a CPU on the 2-CPU machines
/// this lab targets, a neighbour big enough to move fsync timings (docs/STATISTICS.md,
/// "Noise guard"). Below it, and between figures shown equal, "differed" would cry wolf.
pub const LOAD_DIFFERS_POINTS: f64 = 10.0;

pub use super::plausibility::LOAD_HIGH_PCT;

/// The load note of a comparison from the mean background CPU busy share of each side
/// (percent): a "differed" warning only when the figures as displayed (whole percent) are
/// [`LOAD_DIFFERS_POINTS`] or more apart, so the two figures it quotes never read equal;
/// a "high" warning, which claims no difference, when either side is above
/// [`LOAD_HIGH_PCT`]; nothing otherwise.
pub fn load_note(baseline_pct: f64, candidate_pct: f64) -> Option<String> {
    if !(baseline_pct.is_finite() && candidate_pct.is_finite()) {
        return None;
    }
    // Decide on the figures the reader sees, not on hidden decimals.
    let (b, c) = (baseline_pct.round(), candidate_pct.round());
    let figures = format!(
        "CPU was {b:.0}% busy before the baseline runs and {c:.0}% before the candidate runs"
    );
    if (b - c).abs() >= LOAD_DIFFERS_POINTS {
        let busier = if b > c { "baseline" } else { "candidate" };
        Some(format!(
            "background load differed: {figures}; timings of the busier side ({busier}) are \
             suspect (flush counts are not)"
        ))
    } else if b.max(c) > LOAD_HIGH_PCT {
        Some(format!(
            "background load was high: {figures} (above {LOAD_HIGH_PCT:.0}% on at least one \
             side); timings on both sides are noisy (flush counts are not)"
        ))
    } else {
        None
    }
}

fn missing_metrics() -> Vec<MetricComparison> {
    METRICS
        .iter()
        .filter(|def| !is_kind_metric(def.key))
        .map(|def| MetricComparison {
            key: def.key.into(),
            label: def.label.into(),
            unit: def.unit.into(),
            direction: def.direction,
            headline: def.headline,
            baseline: None,
            candidate: None,
            baseline_value: None,
            candidate_value: None,
            gain_pct: None,
            ratio: None,
            ratio_ci95: None,
            p_value: None,
            runs_needed_for_5pct: None,
            welch: None,
            verdict: Verdict::Missing,
        })
        .collect()
}

#[cfg(test)]
mod load_note_tests {
    use super::load_note;

    #[test]
    fn equal_figures_never_read_as_differed() {
        // Both sides busy and equal as shown: the old rule said "differed".
        let note = load_note(30.2, 29.8).expect("high load is still noted");
        assert!(!note.contains("differed"), "{note}");
        assert!(note.contains("high"), "{note}");
        assert!(note.contains("30%") && note.contains("before the candidate runs"));
        // 9.6 points apart, shown as 20% and 30%: the displayed gap decides.
        let shown = load_note(20.4, 30.0).expect("10 points apart as shown");
        assert!(shown.contains("differed") && shown.contains("20%") && shown.contains("30%"));
        assert!(shown.contains("busier side (candidate)"), "{shown}");
        // 10.4 points apart but shown 10 and 0: still differed; 9.4 apart shown 9: not.
        assert!(load_note(10.4, 0.0).unwrap().contains("differed"));
        assert_eq!(load_note(9.4, 0.0), None);
    }

    #[test]
    fn quiet_sides_and_small_gaps_say_nothing() {
        assert_eq!(load_note(2.0, 3.0), None);
        assert_eq!(load_note(25.0, 17.0), None);
        assert_eq!(load_note(f64::NAN, 50.0), None);
        let high = load_note(26.0, 20.0).unwrap();
        assert!(high.contains("26%") && high.contains("20%") && !high.contains("differed"));
        let baseline_busier = load_note(60.0, 5.0).unwrap();
        assert!(
            baseline_busier.contains("busier side (baseline)"),
            "{baseline_busier}"
        );
    }
}
