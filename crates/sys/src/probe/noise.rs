//! Background load: CPU busy share (sysinfo, which reads `/proc/stat`) and pressure-stall
//! information from `/proc/pressure/{cpu,io}` (which sysinfo does not read: a pure parser
//! and a thin reader).

use std::path::Path;
use std::time::{Duration, Instant};

use super::ProbeError;

/// The "some" line of a `/proc/pressure/*` file.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pressure {
    /// % of the last 10 s in which some task stalled.
    pub some_avg10: f64,
    /// Total stall time, µs.
    pub some_total_us: u64,
}

impl Pressure {
    /// Parses `some avg10=0.00 avg60=0.62 avg300=0.44 total=2106301`.
    pub fn parse(text: &str) -> Result<Pressure, ProbeError> {
        let err = |detail: &str| ProbeError::Parse {
            what: "pressure file".into(),
            detail: detail.into(),
        };
        let line = text
            .lines()
            .find(|l| l.starts_with("some "))
            .ok_or_else(|| err("no 'some' line"))?;
        let mut avg10 = None;
        let mut total = None;
        for kv in line.split_whitespace().skip(1) {
            match kv.split_once('=') {
                Some(("avg10", v)) => avg10 = v.parse::<f64>().ok(),
                Some(("total", v)) => total = v.parse::<u64>().ok(),
                _ => {}
            }
        }
        Ok(Pressure {
            some_avg10: avg10.ok_or_else(|| err("no avg10"))?,
            some_total_us: total.ok_or_else(|| err("no total"))?,
        })
    }
}

/// Reads `/proc/pressure/<resource>` (`cpu`, `io`, `memory`); fails where PSI is off.
pub fn read_pressure(resource: &str) -> Result<Pressure, ProbeError> {
    let path = Path::new("/proc/pressure").join(resource);
    let text =
        std::fs::read_to_string(&path).map_err(|source| ProbeError::Read { path, source })?;
    Pressure::parse(&text)
}

/// Busy share of all CPUs over the next `window` (this thread sleeps meanwhile): user,
/// nice, system, irq, softirq and steal time over all time but guest (counted in user), as
/// sysinfo computes it from `/proc/stat`; `None` when the CPU times cannot be read.
pub fn measure_cpu_busy(window: Duration) -> Option<f64> {
    let mut system = sysinfo::System::new().ok()?;
    system.refresh_cpu_usage();
    if system.cpus().is_empty() {
        return None;
    }
    std::thread::sleep(window);
    system.refresh_cpu_usage();
    Some((f64::from(system.global_cpu_usage()) / 100.0).clamp(0.0, 1.0))
}

/// Outcome of waiting for a quiet machine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuietOutcome {
    /// Busy share of the last one-second window measured.
    pub last_busy: Option<f64>,
    /// Time spent waiting.
    pub waited: Duration,
    /// Whether the busy share dropped below the threshold.
    pub reached: bool,
}

/// Measures one-second windows until background CPU is below `threshold` (0..=1),
/// `max_wait` has passed or `stop()` says to give up (checked after each window, so a
/// cancelled run stops waiting within a second); always measures at least one window. A
/// threshold of 1 (100 %) accepts any load, a fully busy machine included.
pub fn wait_for_quiet(threshold: f64, max_wait: Duration, stop: impl Fn() -> bool) -> QuietOutcome {
    let start = Instant::now();
    loop {
        let busy = measure_cpu_busy(Duration::from_secs(1));
        let reached = busy.is_some_and(|b| b < threshold || threshold >= 1.0);
        if reached || busy.is_none() || start.elapsed() >= max_wait || stop() {
            return QuietOutcome {
                last_busy: busy,
                waited: start.elapsed(),
                reached,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spinning_thread_shows_as_busy() {
        // One thread spinning on one of the machine's CPUs: at least 1/cpus busy (minus a
        // little for the spinner's start), whatever else runs; a reading in percent or of an
        // empty window would fail.
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let spinner = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        };
        let busy = measure_cpu_busy(Duration::from_millis(500)).expect("/proc/stat readable");
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        spinner.join().unwrap();
        assert!(busy <= 1.0, "{busy}");
        assert!(busy >= 0.8 / cpus, "{busy} with {cpus} CPUs");
    }

    #[test]
    fn parses_pressure_lines() {
        let p = Pressure::parse("some avg10=1.25 avg60=0.62 avg300=0.44 total=2106301\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
            .unwrap();
        assert_eq!(
            p,
            Pressure {
                some_avg10: 1.25,
                some_total_us: 2106301
            }
        );
        assert!(Pressure::parse("full avg10=0.00 total=0").is_err());
        assert!(Pressure::parse("some avg60=1").is_err());
    }

    #[test]
    fn reads_this_machine() {
        let busy = measure_cpu_busy(Duration::from_millis(200)).expect("/proc/stat readable");
        assert!((0.0..=1.0).contains(&busy));
        // PSI may be disabled on some kernels; when present it must parse.
        if Path::new("/proc/pressure/cpu").exists() {
            read_pressure("cpu").unwrap();
        }
    }
}
