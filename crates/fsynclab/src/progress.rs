//! The progress bar of `fsynclab run`, drawn on stderr from engine events; where stderr
//! is no terminal (nohup, CI logs) a status line every `--status-interval` seconds instead.

use std::io::IsTerminal as _;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use fsynclab::engine::EngineEvent;
use fsynclab::report;
use fsynclab::spec;

use super::CliError;

/// The status lines' period when stderr is no terminal and none was asked for.
pub const DEFAULT_STATUS_INTERVAL: Duration = Duration::from_secs(10);

/// What `fsynclab run` shows while it runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// A progress bar (drawn only on a terminal).
    pub bar: bool,
    /// A status line on stderr this often (fio's `--status-interval`).
    pub status_every: Option<Duration>,
}

impl Progress {
    /// From `--quiet` and `--status-interval S` and whether stderr is a terminal: a bar
    /// on a terminal unless quiet; status lines every S seconds when asked (0: none),
    /// else every [`DEFAULT_STATUS_INTERVAL`] when stderr is no terminal and not quiet.
    pub fn choose(
        quiet: bool,
        status_interval: Option<f64>,
        terminal: bool,
    ) -> Result<Self, CliError> {
        let status_every = match status_interval {
            Some(s) if !(0.0..=86_400.0).contains(&s) => {
                return Err(CliError::usage(anyhow::anyhow!(
                    "--status-interval {s}: use 0 (no status lines) to 86400 seconds"
                )));
            }
            Some(0.0) => None,
            Some(s) => Some(Duration::from_secs_f64(s.max(0.1))),
            None if !terminal && !quiet => Some(DEFAULT_STATUS_INTERVAL),
            None => None,
        };
        Ok(Self {
            bar: !quiet,
            status_every,
        })
    }

    /// [`Progress::choose`] for this process's stderr.
    pub fn for_stderr(quiet: bool, status_interval: Option<f64>) -> Result<Self, CliError> {
        Self::choose(quiet, status_interval, std::io::stderr().is_terminal())
    }
}

/// Draws a progress bar per run on stderr from engine events until the channel closes,
/// and the status lines `progress` asks for.
pub fn show_progress(rx: mpsc::Receiver<EngineEvent>, progress: Progress) {
    let quiet = !progress.bar;
    let mut status = progress.status_every.map(StatusLines::new);
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
        if let Some(status) = &mut status {
            status.see(&event);
        }
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
            EngineEvent::RunDirCreated { .. }
            | EngineEvent::CountingFrom { .. }
            | EngineEvent::CountingUntil { .. } => {}
            EngineEvent::Finished { .. } => bar.finish_and_clear(),
        }
    }
    bar.finish_and_clear();
}

/// fio-style status lines: one per period while a run's intervals arrive.
struct StatusLines {
    every: Duration,
    run_id: i64,
    started: Instant,
    last: Instant,
    duration: Option<Duration>,
    expected_writes: Option<u64>,
    writes: u64,
    syncs: u64,
}

impl StatusLines {
    fn new(every: Duration) -> Self {
        let now = Instant::now();
        Self {
            every,
            run_id: 0,
            started: now,
            last: now,
            duration: None,
            expected_writes: None,
            writes: 0,
            syncs: 0,
        }
    }

    fn see(&mut self, event: &EngineEvent) {
        match event {
            EngineEvent::Started {
                run_id,
                expected_writes,
                duration,
                ..
            } => {
                *self = Self::new(self.every);
                self.run_id = *run_id;
                self.duration = *duration;
                self.expected_writes = *expected_writes;
            }
            EngineEvent::Interval(sample) => {
                self.writes += sample.writes;
                self.syncs += sample.syncs;
                if self.last.elapsed() >= self.every {
                    self.last = Instant::now();
                    let secs = sample.dur_ms.max(1) as f64 / 1000.0;
                    let p99 = sample
                        .sync_p99_ns
                        .map(|n| report::fmt_ns(n as f64))
                        .unwrap_or_else(|| "-".into());
                    errln!(
                        "status: run {} {:.0} s{} · {} writes{} · {} syncs · {:.0} IOPS, sync p99 {p99} (last {:.1} s)",
                        self.run_id,
                        sample.t_ms as f64 / 1000.0,
                        self.duration
                            .map(|d| format!(" of {:.0} s", d.as_secs_f64()))
                            .unwrap_or_default(),
                        self.writes,
                        self.expected_writes
                            .map(|n| format!(" of {n}"))
                            .unwrap_or_default(),
                        self.syncs,
                        sample.writes as f64 / secs,
                        secs,
                    );
                }
            }
            EngineEvent::Finished { run_id, status } => {
                errln!(
                    "status: run {run_id} {} after {:.1} s, {} writes",
                    status.as_str(),
                    self.started.elapsed().as_secs_f64(),
                    self.writes
                );
            }
            _ => {}
        }
    }
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_by_default_only_without_a_terminal() {
        let on_pipe = Progress::choose(false, None, false).unwrap();
        assert_eq!(on_pipe.status_every, Some(DEFAULT_STATUS_INTERVAL));
        let on_tty = Progress::choose(false, None, true).unwrap();
        assert_eq!(on_tty.status_every, None);
        assert!(on_tty.bar);
        let quiet = Progress::choose(true, None, false).unwrap();
        assert_eq!(quiet.status_every, None);
        let asked = Progress::choose(true, Some(2.5), true).unwrap();
        assert_eq!(asked.status_every, Some(Duration::from_millis(2500)));
        assert_eq!(
            Progress::choose(false, Some(0.0), false)
                .unwrap()
                .status_every,
            None
        );
        for bad in [-1.0, f64::NAN, 1e9] {
            let e = Progress::choose(false, Some(bad), false).unwrap_err();
            assert_eq!(e.code, crate::EXIT_USAGE);
            assert!(e.error.to_string().contains("--status-interval"));
        }
    }
}
