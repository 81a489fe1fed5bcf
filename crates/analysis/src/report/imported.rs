//! How an imported run (fio measured it, fsynclab stored it) is shown: which figures are
//! fio's own, what fsynclab rebuilt from them, and what an import does not have.

use std::fmt::Write as _;

use super::units::{fmt_bytes_per_sec, fmt_ns};
use crate::metrics::{ReportedLatency, RunResult};
use crate::store::RunOrigin;

/// What an imported fio run has and lacks, in one line (listings, series lines).
pub fn imported_line(r: &RunResult) -> String {
    let Some(rep) = &r.reported else {
        return "imported from fio (fio's figures were not stored)".into();
    };
    let host = r
        .system
        .hostname
        .as_deref()
        .map(|h| format!(" on {h}"))
        .unwrap_or_default();
    let histograms = if rep.histograms {
        "latency histograms from fio's json+ bins"
    } else {
        "no latency histogram (plain JSON: fio's percentiles only)"
    };
    let s = r.summary();
    format!(
        "imported from {}{host} · {:.0} IOPS · {} · sync p50 {} p99 {} · {histograms} · \
         device flushes not measured · machine facts unknown",
        rep.tool,
        rep.iops,
        fmt_bytes_per_sec(rep.bw_bytes_per_sec / (1024.0 * 1024.0)),
        fmt_ns(s.sync_lat.p50_ns as f64),
        fmt_ns(s.sync_lat.p99_ns as f64),
    )
}

fn percentiles(lat: &ReportedLatency) -> String {
    if lat.count == 0 {
        return "(none)".into();
    }
    let shown: Vec<String> = lat
        .percentiles
        .iter()
        .filter(|p| [50.0, 90.0, 99.0, 99.9, 99.99].contains(&p.pct))
        .map(|p| format!("p{} {}", p.pct, fmt_ns(p.ns as f64)))
        .collect();
    format!(
        "N {} · min {} · mean {} · {} · max {}",
        lat.count,
        fmt_ns(lat.min_ns as f64),
        fmt_ns(lat.mean_ns),
        shown.join(" · "),
        fmt_ns(lat.max_ns as f64)
    )
}

/// The lines of the run summary that say which figures are fio's own and what an import
/// lacks (empty for fsynclab's own runs).
pub fn imported_section(r: &RunResult) -> String {
    let Some(rep) = &r.reported else {
        return String::new();
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "fio       as {} reported it: {:.3} IOPS · {} ({:.0} B/s) · write runtime {} ms",
        rep.tool,
        rep.iops,
        fmt_bytes_per_sec(rep.bw_bytes_per_sec / (1024.0 * 1024.0)),
        rep.bw_bytes_per_sec,
        rep.runtime_ms
    );
    let _ = writeln!(out, "  clat    {}", percentiles(&rep.write_lat));
    let _ = writeln!(out, "  sync    {}", percentiles(&rep.sync_lat));
    let _ = writeln!(
        out,
        "          {}",
        if rep.histograms {
            "latency histograms: fio's json+ bins; the table above is computed from them \
             (percentiles within 0.1% of fio's; min, max and mean within fio's bin width, \
             about 1.6%)"
        } else {
            "latency histograms: not available (fio's plain JSON has percentiles only; the table \
             above shows fio's; min/p50/p90/p99/p99.9/max only where fio printed them)"
        }
    );
    for d in &rep.disks {
        let _ = writeln!(
            out,
            "  disk    {} (fio's disk_util): {} write I/Os, {} merges, {:.1}% busy; no flush count",
            d.name, d.write_ios, d.write_merges, d.util_pct
        );
    }
    let _ = writeln!(
        out,
        "          not in fio's output: device flushes, interval samples, per-thread figures, \
         kernel/CPU/filesystem/device facts"
    );
    out
}

/// `origin ...` and `options ...` lines of `show` for a run with an origin.
pub fn origin_lines(origin: &RunOrigin) -> String {
    let mut out = String::new();
    let mut parts = vec![origin.kind.as_str().to_string()];
    if let Some(file) = &origin.file {
        parts.push(format!("file {file}"));
    }
    if let Some(job) = &origin.job {
        parts.push(format!("job {job}"));
    }
    if let Some(host) = &origin.hostname {
        parts.push(format!("host {host}"));
    }
    if let Some(v) = &origin.tool_version {
        parts.push(v.clone());
    }
    let _ = writeln!(out, "origin    {}", parts.join(" · "));
    if !origin.job_options.is_empty() {
        let options: Vec<String> = origin
            .job_options
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let _ = writeln!(out, "options   {}", options.join(" "));
    }
    out
}
