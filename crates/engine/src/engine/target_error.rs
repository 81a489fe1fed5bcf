//! [`TargetError`]: why a target directory (or the run directory made in it) cannot be
//! used, kept as data in `fsynclab_core::target`, worded only by the front ends
//! (`fsynclab_analysis::words::target`).

pub use crate::target::TargetError;
