//! fsynclab's system layer: probing the host (`probe`), scratch filesystems on loop images
//! (`scratch`), path walking that never follows another user's link (`pathwalk`), who owns a
//! lock (`owner`) and the kernel tracer (`ktrace`).

#![warn(missing_docs)]

// The layer below, under the paths its modules have always used (`crate::spec`, …).
#[cfg(test)]
use fsynclab_core::test_support;
use fsynclab_core::{clock, fsopts, identity, metrics, spec, sysinfo};

pub mod crashdev;
pub mod ktrace;
pub mod owner;
pub mod pathwalk;
pub mod probe;
pub mod rawdev;
pub mod scratch;
