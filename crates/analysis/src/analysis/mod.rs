//! Statistics and comparisons: the verdict the seed threads argue about — did the change
//! make fsync faster, by how much, and is that more than noise?
//!
//! Pure functions of stored runs: nothing here measures, reads the database or formats
//! for display (see `report` for tables and images).

mod advice;
mod advice_methods;
mod advice_object;
mod compare;
mod crash;
mod durability;
mod gate;
mod kernel_settings;
mod meta;
mod metrics;
mod plausibility;
mod published;
mod rank;
mod ratio;
mod requirements;
mod rows;
mod series;
mod stats;
mod trend;

pub use advice::{
    AdvicePoint, AgainstBest, OVERLAPPING_BELOW, Recommendation, SERIALIZED_ABOVE, SyncClass,
    SyncParallelism, against_best, frontier, recommend, sync_parallelism, writer_count,
};
pub use advice_methods::{EMPTY_SYNC_METHOD, MethodCost, MethodRun};
pub use advice_object::{
    Advice, AdviceInputs, BUSY_ABOVE, Busy, DuckdbRule, FlushLat, FrontierAt, IMPLAUSIBLE_FSYNC_US,
    ImplausibleSync, RAW_DEVICE_NO_STRATEGIES, RecommendedAt, SyncFit, SyncSample, WaitNote,
};
pub use compare::{ALPHA, AnalysisError, SideInput, compare};
pub use crash::CrashFindings;
pub use durability::{
    NotDurable, meaning_differs, not_durable, not_durable_spec, sync_meaning, write_meaning,
};
pub use gate::{
    DEFAULT_GATE_METRICS, GateCheck, GateError, GateOutcome, GateRule, GateStatus, GateVerdict,
    MAX_MIN_CHANGE_PCT, gate, metric_names,
};
pub use kernel_settings::{KernelSettingRow, kernel_setting_rows};
pub use metrics::{
    Direction, Headline, Latency, METRICS, MergedLatency, MetricDef, is_kind_metric, latency_parts,
    merged_value, metric, run_value,
};
pub use plausibility::{
    FlushEvidence, ImplausibleFlush, ROTATIONAL_FLUSH_FLOOR_US, SHORT_RUN_S, busy_run,
    busy_run_text, implausible_flush, short_run, short_run_text,
};
pub use published::published_ratios;
pub use rank::{PgRow, RankedVariant, Ranking, VsNext, commit_method, pg_shape, rank};
pub use ratio::{
    DEFAULT_MIN_CHANGE_PCT, MAX_RUNS_NEEDED, MIN_RUNS, POWER, POWER_CHANGE, RatioCi, RatioTest,
    geometric_ci, ratio_test, runs_needed,
};
pub use requirements::{RequirementCheck, check_requirements, preset_checks, preset_requirements};
pub use rows::{
    Comparison, MetaRow, MetricComparison, PERCENTILE_POINTS, PublishedRatio, PublishedRow,
    PublishedWithheld, SideSummary, Sweep, SweepPoint, TimelinePoint, Verdict,
};
pub use series::{
    Neighbour, SeriesPoint, intervals_overlap, mark_neighbours, run_series_points, series_metric,
    sweep_points,
};
pub use stats::{Stats, Welch, describe, welch_t_test};
pub use trend::{
    CHANGE_ALPHA, ChangePoint, MIN_SEGMENT, TREND_METRICS, Trend, TrendPoint, change_points, trend,
    trend_value,
};

#[cfg(test)]
mod durable_tests;
#[cfg(test)]
mod gate_tests;
#[cfg(test)]
mod rank_tests;
#[cfg(test)]
mod tests;
