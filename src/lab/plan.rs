//! What one variant of a preset's suggested series did: each variant runs as its own
//! experiment (swept when the plan says so), labelled with the variant's name (see
//! [`super::Launch::Series`]).

use super::series::SeriesOutcome;

/// What one variant of a plan did.
#[derive(Debug)]
pub struct VariantOutcome {
    /// The variant's label.
    pub label: String,
    /// Its runs, in one experiment.
    pub series: SeriesOutcome,
}
