//! fsynclab: a lab for running and comparing fsync experiments.
//!
//! ```text
//! presets/*.toml ─► spec::Preset ─► WorkloadSpec ─┐        scratch::ScratchManager (loop images,
//! probe::collect(target) ─► SystemInfo ───────────┤         mkfs + mount options, recipes)
//!                                                 ▼                     │
//!  lab::Launch::validate ─► lab::launch ─► engine::run(spec, events, cancel) ──EngineEvent──► cli progress | gui live view
//!     (Single | Repeat (repeat/sweep) | Series (a preset's variants) | Matrix (one scratch fs per configuration))
//!                         │
//!                         ▼
//!                     RunResult ─► store::finish_run ─► SQLite ─► store::load_run / list_runs
//!                                                                        │
//!                                       lab::compare_sides ─► analysis::compare ─► Comparison
//!                                                                        │
//!                report::{summary_text, run_json, compare_table, markdown, csv, image} | gui::panels
//! ```
//!
//! The library does the work; the command line (the `fsynclab` crate, crates/fsynclab) and
//! the lab window (the `fsynclab-gui` crate, crates/gui) parse input, call it and render.
//! Measuring never formats, reporting never measures. The library links no GUI crate and no
//! command-line parser.

#![warn(missing_docs)]

pub mod analysis;
pub mod clock;
pub mod engine;
pub mod fio;
pub mod fsopts;
pub mod identity;
pub mod ktrace;
pub mod lab;
pub mod metrics;
pub mod owner;
pub mod pathwalk;
pub mod probe;
pub mod report;
pub mod scratch;
pub mod spec;
pub mod store;
pub mod sysinfo;
#[cfg(test)]
pub(crate) mod test_hooks;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
