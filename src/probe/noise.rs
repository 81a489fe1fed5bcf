//! Background load: CPU busy share from `/proc/stat` and pressure-stall information from
//! `/proc/pressure/{cpu,io}`. Parsers are pure; readers are thin.

use std::path::Path;
use std::time::{Duration, Instant};

use super::ProbeError;

/// Aggregate CPU jiffies from the first `cpu ` line of `/proc/stat`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// user + nice + system + irq + softirq + steal.
    pub busy: u64,
    /// busy + idle + iowait.
    pub total: u64,
}

impl CpuTimes {
    /// Parses the aggregate `cpu` line of `/proc/stat` text.
    pub fn parse(stat: &str) -> Result<CpuTimes, ProbeError> {
        let err = |detail: &str| ProbeError::Parse {
            what: "/proc/stat".into(),
            detail: detail.into(),
        };
        let line = stat
            .lines()
            .find(|l| l.starts_with("cpu "))
            .ok_or_else(|| err("no aggregate 'cpu' line"))?;
        let fields: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|f| f.parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|_| err("non-numeric cpu field"))?;
        if fields.len() < 4 {
            return Err(err("fewer than 4 cpu fields"));
        }
        let get = |i: usize| fields.get(i).copied().unwrap_or(0);
        // user nice system idle iowait irq softirq steal (guest is already in user).
        let busy = get(0) + get(1) + get(2) + get(5) + get(6) + get(7);
        let total = busy + get(3) + get(4);
        Ok(CpuTimes { busy, total })
    }

    /// Share of CPU time busy between two readings (0..=1); `None` if no time passed.
    pub fn busy_share(before: &CpuTimes, after: &CpuTimes) -> Option<f64> {
        let total = after.total.checked_sub(before.total)?;
        if total == 0 {
            return None;
        }
        let busy = after.busy.saturating_sub(before.busy);
        Some((busy as f64 / total as f64).clamp(0.0, 1.0))
    }
}

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

/// Reads `/proc/stat`.
pub fn read_cpu_times() -> Result<CpuTimes, ProbeError> {
    let path = Path::new("/proc/stat");
    let text = std::fs::read_to_string(path).map_err(|source| ProbeError::Read {
        path: path.into(),
        source,
    })?;
    CpuTimes::parse(&text)
}

/// Reads `/proc/pressure/<resource>` (`cpu`, `io`, `memory`); fails where PSI is off.
pub fn read_pressure(resource: &str) -> Result<Pressure, ProbeError> {
    let path = Path::new("/proc/pressure").join(resource);
    let text =
        std::fs::read_to_string(&path).map_err(|source| ProbeError::Read { path, source })?;
    Pressure::parse(&text)
}

/// Busy share of all CPUs over the next `window` (this thread sleeps meanwhile).
pub fn measure_cpu_busy(window: Duration) -> Option<f64> {
    let before = read_cpu_times().ok()?;
    std::thread::sleep(window);
    let after = read_cpu_times().ok()?;
    CpuTimes::busy_share(&before, &after)
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
    fn parses_proc_stat_and_computes_busy_share() {
        let a = CpuTimes::parse("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\n")
            .unwrap();
        assert_eq!(
            a,
            CpuTimes {
                busy: 150,
                total: 1000
            }
        );
        let b = CpuTimes::parse("cpu  200 10 90 1500 60 5 5 0 0 0\n").unwrap();
        // busy 310 - 150 = 160 of total 1870 - 1000 = 870
        assert!((CpuTimes::busy_share(&a, &b).unwrap() - 160.0 / 870.0).abs() < 1e-12);
        assert_eq!(CpuTimes::busy_share(&a, &a), None);
        assert!(CpuTimes::parse("intr 1 2 3").is_err());
        assert!(CpuTimes::parse("cpu  a b c d").is_err());
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
