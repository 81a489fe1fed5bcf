//! fsynclab: a lab for running and comparing fsync experiments.
//!
//! ```text
//! presets/*.toml ─► spec::Preset ─► WorkloadSpec ─┐
//! probe::collect(target) ─► SystemInfo ───────────┤
//!                                                 ▼
//!               engine::run(spec, events, cancel) ──EngineEvent──► cli progress | gui live view
//!                         │
//!                         ▼
//!                     RunResult ─► store::save_run ─► SQLite ─► store::load_runs
//! ```
//!
//! The library does the work; the CLI (and the GUI) parse input, call it and render.

pub mod metrics;
pub mod probe;
pub mod spec;
pub mod store;
