//! The command line and the library without root: one test binary (docs/TESTING.md).

// The helpers every test binary shares (the lab directory, the binary, the skip rule).
#[path = "../../../../tests/common/mod.rs"]
mod common;
mod fuzz_common;

mod bundle;
mod bundle_advice;
mod cli_advise;
mod cli_bad_input;
mod cli_compare;
mod cli_database;
mod cli_durable;
mod cli_export_fio;
mod cli_export_raw;
mod cli_failures;
mod cli_fio_job;
mod cli_gate;
mod cli_import;
mod cli_inputs;
mod cli_json_shapes;
mod cli_list;
mod cli_newcomer;
mod cli_not_durable;
mod cli_persist;
mod cli_plausibility;
mod cli_presets_quick;
mod cli_run;
mod cli_trend;
mod cli_warnings;
mod cli_words;
mod desktop_entry;
mod file_cycles;
mod fuzz_parsers;
mod kernel_settings;
mod kinds_stay_home;
mod kinds_wired;
mod library_words;
mod manifest;
mod module_layers;
mod presets_all;
mod report_image;
mod report_markdown;
mod report_sweep_ci;
mod run_control;
mod run_duration;
mod stored_specs;
mod uring;
mod verdict_words;
mod workload_fileserver;
mod workload_grouplog;
mod workload_smallfiles;
mod workload_sysbench;
