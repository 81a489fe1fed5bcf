//! The lab window (egui_kittest, headless): one test binary.

// The helpers every test binary shares (the lab directory, the binary, the skip rule).
#[path = "../../../../tests/common/mod.rs"]
mod common;
mod gui_common;

mod gui_advisor;
mod gui_advisor_device;
mod gui_axes_grids;
mod gui_bundle;
mod gui_close;
mod gui_compare;
mod gui_compare_items;
mod gui_crash;
mod gui_crash_run;
mod gui_device;
mod gui_durable;
mod gui_fio_job;
mod gui_fleet;
mod gui_flows;
mod gui_history;
mod gui_history_items;
mod gui_import;
mod gui_kernel;
mod gui_kernel_settings;
mod gui_kinds;
mod gui_layout;
mod gui_newcomer;
mod gui_run;
mod gui_scratch;
mod gui_setup;
mod gui_setup_items;
mod gui_sweep_ci;
mod gui_timeline_points;
mod gui_trend;
mod gui_uring;
mod gui_window_leftovers;
mod window_messages;
