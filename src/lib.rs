//! fsynclab: a lab for running and comparing fsync experiments.
//!
//! ```text
//! presets/*.toml ─► spec::Preset ─► WorkloadSpec ─┐
//! probe::collect(target) ─► SystemInfo ───────────┤
//!                                                 ▼
//!               engine::run(spec, events, cancel) ──EngineEvent──► cli progress | gui live view
//!                         │
//!                         ▼
//!                     RunResult ─► store::finish_run ─► SQLite ─► store::load_run / list_runs
//!                                                                        │
//!                                                         report::{summary_text, run_json}
//! ```
//!
//! [`lab::execute`] ties probe, store and engine together for one run. The library does
//! the work; the CLI (and the GUI) parse input, call it and render.

pub mod analysis;
pub mod cli;
pub mod engine;
pub mod gui;
pub mod lab;
pub mod metrics;
pub mod probe;
pub mod report;
pub mod scratch;
pub mod spec;
pub mod store;
