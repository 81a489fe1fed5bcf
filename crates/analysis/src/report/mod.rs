//! Turning results into text, JSON, CSV, Markdown and images. Reporting never measures:
//! everything here is a pure function of stored data, and all display formatting of
//! numbers happens here.

mod advice;
mod advice_reason;
mod compare;
mod crash;
mod durable;
mod gate;
pub mod image;
mod imported;
mod kernel;
mod kinds;
mod listing;
mod output;
mod published;
mod rank;
pub mod raw;
mod series;
mod shapes;
mod sysbench;
mod text;
mod trend;
mod units;
mod verdict;

pub use crate::probe::merged_options;
pub use crate::words::failures::{
    failure_text, io_failure_text, run_failure_text, stored_failure_text,
};
pub use crate::words::notes::{device_note_text, no_device_text, system_note_text};
pub use crate::words::warnings::{run_warning_texts, warning_codes, warning_text};
pub use advice::{
    advice_json, advice_markdown, advice_text, busy_text, durability_text, implausible_text,
    reason as advice_reason, sync_class_text,
};
pub use advice_reason::progress_step_text;
pub use compare::{
    compare_csv, compare_json, compare_markdown, compare_table, crash_sides, num as fmt_num,
};
pub use crash::{crash_failed, crash_json, crash_text, shell_word};
pub use durable::{durable_unavailable, no_durable_op_text, not_durable_text, requirement_lines};
pub use gate::{compare_gate_json, gate_text};
pub use image::{
    ImageFormat, ImageOptions, ReportError, render_advice, render_comparison, render_ranking,
    render_trend,
};
pub use imported::{imported_line, imported_section, origin_lines};
pub use kernel::kernel_rows;
pub use kinds::{
    FileserverThroughput, batch_sizes, fileserver_throughput, group_text, kind_json, kind_line,
    kind_section, op_wall_secs, ops_table, phases_text,
};
pub use listing::{
    ListWidth, cut_middle, fmt_utc_ms, matrix_options_line, progress_line, run_header, runs_table,
};
pub use output::{
    OutputError, REPORT_FORMATS, advice_files, check_report_destination, rank_files, report_files,
    report_format, trend_files, write_report_files,
};
pub use published::{published_scaled_text, published_withheld_text};
pub use rank::{
    next_cell as rank_next_cell, ops_cell as rank_ops_cell, p99_cell as rank_p99_cell, pg_table,
    rank_csv, rank_json, rank_markdown, rank_table,
};
pub use series::{repeat_summary, series_summary};
pub use shapes::{
    ExperimentJson, JSON_SCHEMA_VERSION, row_json, run_shape, system_json, versioned,
};
pub use sysbench::{sysbench_json, sysbench_text};
pub use text::{
    kernel_settings_text, run_json, run_line, run_summary_text, summary_text, unfinished_run_json,
    where_line,
};
pub use trend::{
    change_ratio_text, segment_levels, trend_csv, trend_json, trend_markdown, trend_text,
};
pub use units::{fmt_bytes_per_sec, fmt_in_unit, fmt_left, fmt_metric, fmt_ns, fmt_plain};
pub use verdict::{
    change_text, fmt_p, fmt_ratio, power_text, ratio_ci_text, ratio_text, runs_needed_cell,
    verdict_brief, verdict_text,
};
