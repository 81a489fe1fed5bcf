//! fsynclab's bottom layer: what every other layer shares — workload specs and presets
//! (`spec`), metrics and histograms (`metrics`), the facts about a system (`sysinfo`), the
//! mkfs/mount option allow-list (`fsopts`), the clock and the invoking user (`clock`,
//! `identity`). Data types and their parsing; the behaviour lives in the crates above
//! (docs/ARCHITECTURE.md).

#![warn(missing_docs)]

pub mod cleanup;
pub mod clock;
pub mod crashlog;
pub mod failure;
pub mod fsopts;
pub mod identity;
pub mod io_cause;
pub mod metrics;
pub mod recorded;
pub mod spec;
pub mod sysinfo;
pub mod target;
#[cfg(any(test, feature = "test-support"))]
pub mod test_hooks;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
pub mod trace_note;
pub mod uring;
pub mod warning;
