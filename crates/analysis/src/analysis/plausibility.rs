//! The implausibility check (issue 34): a cache flush faster than the device's class can
//! make data durable. A rotational disk with a write-back cache must move its heads and wait
//! for the platter to write what its cache holds (milliseconds); a flush it acknowledges in
//! under [`ROTATIONAL_FLUSH_FLOOR_US`] was not honoured — the disk, a RAID controller or a
//! hypervisor's cache below it acknowledges flushes without making the data durable
//! (pg_test_fsync's "your drive may be lying"). Loop devices are not judged: their flush is
//! an fsync of their backing file, whose honesty is the backing filesystem's and disk's.

use serde::Serialize;

use crate::metrics::RunResult;

/// The fastest flush a rotational disk with a write-back cache can honour, µs.
pub const ROTATIONAL_FLUSH_FLOOR_US: f64 = 50.0;

/// Fewer flushes than this make the device counters' mean flush time (whole milliseconds of
/// flushing over the run) too coarse to judge; the sync latency is used instead.
const MIN_COUNTED_FLUSHES: u64 = 100;

/// Where a run's flush time came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlushEvidence {
    /// The kernel trace's block-level flush latency, issue → complete (median).
    TraceMedian,
    /// The device's counters: time spent flushing over flushes completed (mean).
    CountersMean,
    /// The median sync call, which includes the flush (an upper bound on it).
    SyncMedian,
}

impl FlushEvidence {
    /// In words.
    pub fn as_str(self) -> &'static str {
        match self {
            FlushEvidence::TraceMedian => "median block-level flush (kernel trace)",
            FlushEvidence::CountersMean => "mean flush time (device counters)",
            FlushEvidence::SyncMedian => "median sync call, flush included",
        }
    }
}

/// A flush faster than the device's class can honour.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ImplausibleFlush {
    /// The device (its kernel name).
    pub device: String,
    /// The device class, in words.
    pub class: &'static str,
    /// The flush time measured, µs.
    pub flush_us: f64,
    /// Where it came from.
    pub evidence: FlushEvidence,
    /// The fastest flush the class can honour, µs.
    pub floor_us: f64,
}

impl ImplausibleFlush {
    /// What it means, in one paragraph.
    pub fn text(&self) -> String {
        format!(
            "IMPLAUSIBLE FLUSH: {} took {:.1} µs ({}) on {}, a {}; such a disk cannot write \
             its cache out in under {:.0} µs (a platter's write takes milliseconds), so its flushes are \
             acknowledged without making the data durable — the disk, a RAID controller or a \
             hypervisor's cache below it is lying about durability (pg_test_fsync: \"your \
             drive may be lying\"); an fsync here survives no power cut, and these figures are \
             not what an honest disk would give",
            if self.evidence == FlushEvidence::SyncMedian {
                "a sync (its flush included)"
            } else {
                "a flush"
            },
            self.flush_us,
            self.evidence.as_str(),
            self.device,
            self.class,
            self.floor_us
        )
    }
}

/// The run's flush judged against its device's class: `Some` when a flush was faster than
/// the class can honour. Only a rotational disk (not a loop device) whose write cache is
/// write-back, with flushes counted during the run, is judged.
pub fn implausible_flush(r: &RunResult) -> Option<ImplausibleFlush> {
    let d = r.system.device.as_ref()?;
    let judged = d.loop_backing_file.is_none()
        && d.rotational == Some(true)
        && d.write_cache
            .as_deref()
            .is_some_and(|w| w.trim().starts_with("write back"));
    if !judged {
        return None;
    }
    let counters = r.device.counters()?;
    let flushes = counters.flushes().filter(|&f| f > 0)?;
    let traced = r
        .kernel_trace
        .as_ref()
        .and_then(|k| k.flush_lat_us.as_ref())
        .map(|f| (f.p50, FlushEvidence::TraceMedian));
    let counted = counters
        .flush_ms()
        .filter(|_| flushes >= MIN_COUNTED_FLUSHES)
        .map(|ms| {
            (
                ms as f64 * 1000.0 / flushes as f64,
                FlushEvidence::CountersMean,
            )
        });
    let synced =
        (r.syncs > 0 && flushes.saturating_mul(10) >= r.syncs.saturating_mul(9)).then(|| {
            let s = r.sync_lat.summary();
            (s.p50_ns as f64 / 1000.0, FlushEvidence::SyncMedian)
        });
    let (flush_us, evidence) = traced.or(counted).or(synced)?;
    (flush_us < ROTATIONAL_FLUSH_FLOOR_US).then(|| ImplausibleFlush {
        device: d.name.clone(),
        class: "rotational disk with a write-back cache",
        flush_us,
        evidence,
        floor_us: ROTATIONAL_FLUSH_FLOOR_US,
    })
}

/// A timed part shorter than this is too short to trust a rate or a percentile of: one
/// scheduler hiccup or writeback burst moves it, and the timeline has few whole intervals.
pub const SHORT_RUN_S: f64 = 1.0;

/// The timed seconds of a finished run that measured something in less than
/// [`SHORT_RUN_S`].
pub fn short_run(r: &RunResult) -> Option<f64> {
    let secs = r.wall_secs();
    let measured = r.writes > 0 || r.syncs > 0;
    (r.status == crate::metrics::RunStatus::Finished && measured && secs < SHORT_RUN_S)
        .then_some(secs)
}

/// What a short timed part means: `SHORT RUN: the timed part lasted 9.8 ms; …`.
pub fn short_run_text(secs: f64) -> String {
    format!(
        "SHORT RUN: the timed part lasted {}; rates and percentiles of a run under {SHORT_RUN_S:.0} s \
         move with one scheduler hiccup or writeback burst — run it longer (a larger scale or \
         a duration) before drawing a conclusion",
        if secs >= 1e-3 {
            format!("{:.1} ms", secs * 1e3)
        } else {
            format!("{:.0} µs", secs * 1e6)
        }
    )
}

/// Background CPU busy share (percent, as shown) above which a run's or a comparison side's
/// timings are noisy whatever the other side did.
pub const LOAD_HIGH_PCT: f64 = 25.0;

/// The background CPU busy share (percent) in the second before a run, when it was above
/// [`LOAD_HIGH_PCT`] (the share from which a comparison calls a side's timings noisy).
pub fn busy_run(r: &RunResult) -> Option<f64> {
    let pct = r.noise.as_ref()?.background_cpu_busy? * 100.0;
    (pct.is_finite() && pct.round() > LOAD_HIGH_PCT).then_some(pct)
}

/// What a busy machine means for one run: `BUSY MACHINE: other work used 88% of the CPUs …`.
pub fn busy_run_text(pct: f64) -> String {
    format!(
        "BUSY MACHINE: other work used {pct:.0}% of the CPUs in the second before the run; its \
         timings are noisy (flush counts are not) — run it again on a quiet machine, or wait \
         for one before each run"
    )
}

/// A comparison side's warning when any of its runs was short ([`short_run`]).
pub fn short_side_warning(side: &str, runs: &[&RunResult]) -> Option<String> {
    let short: Vec<f64> = runs.iter().filter_map(|r| short_run(r)).collect();
    let shortest = short.iter().copied().fold(f64::INFINITY, f64::min);
    (!short.is_empty()).then(|| {
        format!(
            "{side}: {} of {} run(s) — {}",
            short.len(),
            runs.len(),
            short_run_text(shortest)
        )
    })
}

/// A comparison side's warning when any of its runs flushed implausibly fast: how many,
/// and what the first one means.
pub fn side_warning(side: &str, runs: &[&RunResult]) -> Option<String> {
    let flagged: Vec<ImplausibleFlush> = runs.iter().filter_map(|r| implausible_flush(r)).collect();
    let first = flagged.first()?;
    Some(format!(
        "{side}: {} of {} run(s) — {}",
        flagged.len(),
        runs.len(),
        first.text()
    ))
}

#[cfg(test)]
#[path = "plausibility_tests.rs"]
mod tests;
