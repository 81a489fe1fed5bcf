//! The progress bar of `fsynclab run`, drawn on stderr from engine events.

use std::sync::mpsc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::engine::EngineEvent;
use crate::report;
use crate::spec;

/// Draws a progress bar per run on stderr from engine events until the channel closes.
pub fn show_progress(rx: mpsc::Receiver<EngineEvent>, quiet: bool) {
    let new_bar = || {
        let bar = if quiet {
            ProgressBar::hidden()
        } else {
            ProgressBar::new_spinner()
        };
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    };
    let mut bar = new_bar();
    let mut writes_total = 0u64;
    let mut time_based = false;
    for event in rx {
        match event {
            EngineEvent::Preparing {
                files,
                bytes_per_file,
            } => {
                bar = new_bar();
                writes_total = 0;
                time_based = false;
                bar.set_message(format!(
                    "preparing {files} file(s) of {}",
                    spec::format_size(bytes_per_file)
                ));
            }
            EngineEvent::Started {
                run_id,
                expected_writes,
                duration,
                warmup,
                ..
            } => {
                // The bar covers the warm-up too: the live counters count its writes.
                let duration = duration.map(|d| d + warmup.unwrap_or_default());
                if let Some(n) = expected_writes {
                    bar.set_length(n);
                    bar.set_style(style("run {prefix} {bar:30} {pos}/{len} writes {elapsed_precise} ETA {eta} {msg}"));
                } else if let Some(d) = duration {
                    time_based = true;
                    bar.set_length(d.as_millis() as u64);
                    bar.set_style(style(
                        "run {prefix} {bar:30} {elapsed_precise} ETA {eta} {msg}",
                    ));
                }
                bar.set_prefix(run_id.to_string());
                bar.set_message("starting");
            }
            EngineEvent::Interval(sample) => {
                writes_total += sample.writes;
                let secs = sample.dur_ms.max(1) as f64 / 1000.0;
                let p99 = sample
                    .sync_p99_ns
                    .map(|n| report::fmt_ns(n as f64))
                    .unwrap_or_else(|| "-".into());
                bar.set_message(format!(
                    "{:.0} IOPS, sync p99 {p99}",
                    sample.writes as f64 / secs
                ));
                bar.set_position(if time_based {
                    sample.t_ms
                } else {
                    writes_total
                });
            }
            EngineEvent::RunDirCreated { .. } => {}
            EngineEvent::Finished { .. } => bar.finish_and_clear(),
        }
    }
    bar.finish_and_clear();
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}
