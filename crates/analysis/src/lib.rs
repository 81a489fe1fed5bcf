//! fsynclab's conclusions: metrics of runs, comparisons, gates and series (`analysis`), and
//! their text, Markdown, CSV, PNG and SVG forms (`report`), with the words of the typed
//! outcomes the measuring code hands over (`words`). Reporting never measures.

#![warn(missing_docs)]
#![recursion_limit = "256"]

// The layers below, under the paths these modules have always used (`crate::spec`, …).
use fsynclab_core::{cleanup, crashlog, metrics, spec, target, uring};
#[cfg(test)]
use fsynclab_engine::engine;
use fsynclab_store::store;
use fsynclab_sys::{crashdev, probe};

pub mod analysis;
pub mod report;
pub mod words;
