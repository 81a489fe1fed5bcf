//! fsynclab's store: runs, experiments and their series in SQLite, and bundles (`store`).

#![warn(missing_docs)]

// The layers below, under the paths the store has always used (`crate::spec`, …).
#[cfg(test)]
use fsynclab_core::test_support;
use fsynclab_core::{cleanup, crashlog, metrics, spec};
use fsynclab_sys::{owner, pathwalk, probe};

pub mod store;
