//! Statistics and comparisons: the verdict the seed threads argue about — did the change
//! make fsync faster, by how much, and is that more than noise?
//!
//! Pure functions of stored runs: nothing here measures, reads the database or formats
//! for display (see `report` for tables and images).

mod compare;
mod meta;
mod metrics;
mod published;
mod stats;

pub use compare::{
    ALPHA, AnalysisError, Comparison, MetaRow, MetricComparison, PERCENTILE_POINTS, PublishedRow,
    SideInput, SideSummary, Sweep, SweepPoint, TimelinePoint, Verdict, compare,
};
pub use metrics::{
    Direction, Headline, METRICS, MetricDef, is_kind_metric, merged_value, metric, run_value,
};
pub use stats::{Stats, Welch, describe, welch_t_test};

#[cfg(test)]
mod tests;
