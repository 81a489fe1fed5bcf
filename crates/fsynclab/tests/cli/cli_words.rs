//! A library error the window can show is worded by each front end: here the command
//! line's words (the window's are in crates/gui/tests/window/window_messages.rs).

use fsynclab::ktrace::TraceError;
use fsynclab::lab::{LabError, worded_error};
use fsynclab::metrics::TraceNote;
use fsynclab_cli::CliNames;

#[test]
fn the_kernel_trace_error_names_the_setting_in_the_command_lines_words() {
    let e = LabError::KernelTrace(TraceError::Unavailable(TraceNote::NoEvents));
    let cli = worded_error(&e, &CliNames);
    assert!(
        cli.starts_with("kernel_trace: ") && cli.ends_with("or use --kernel-trace off"),
        "{cli}"
    );
}
