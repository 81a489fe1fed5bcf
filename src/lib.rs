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
//!
//! Each layer is a crate (bottom first): `fsynclab-core` (spec, metrics, sysinfo, fsopts,
//! clock, identity), `fsynclab-sys` (probe, scratch, pathwalk, owner, ktrace, crashdev, rawdev),
//! `fsynclab-engine`, `fsynclab-store`, `fsynclab-analysis` (analysis, report), and this one
//! (lab, fio). Every layer's modules are re-exported here, so a front end names them all
//! `fsynclab::…`.

#![warn(missing_docs)]

pub use fsynclab_analysis::{analysis, report, words};
pub use fsynclab_core::{
    cleanup, clock, crashlog, failure, fsopts, hint, identity, metrics, spec, sysinfo, target,
    uring,
};
pub use fsynclab_engine::engine;
pub use fsynclab_store::store;
pub use fsynclab_sys::{crashdev, ktrace, owner, pathwalk, probe, rawdev, scratch};

pub mod fio;
pub mod lab;
#[cfg(any(test, feature = "test-support"))]
pub use fsynclab_core::{test_hooks, test_support};
