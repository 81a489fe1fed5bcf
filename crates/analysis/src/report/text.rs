//! The readable run summary (CLI `run` and `show`) and the `--json` object.

use crate::probe::merged_options;
use std::fmt::Write as _;

use serde_json::json;

use crate::analysis::kernel_setting_rows;
use crate::metrics::{LatencySummary, RunResult};
use crate::probe::{KernelSettings, SystemInfo};
use crate::spec::SettingNames;

use super::units::{fmt_bytes_per_sec, fmt_ns};

fn lat_row(out: &mut String, name: &str, s: &LatencySummary) {
    if s.count == 0 {
        let _ = writeln!(out, "  {name:<7} (none)");
        return;
    }
    let _ = write!(out, "  {name:<7}");
    for v in [
        s.min_ns as f64,
        s.p50_ns as f64,
        s.p90_ns as f64,
        s.p99_ns as f64,
        s.p999_ns as f64,
        s.max_ns as f64,
        s.mean_ns,
    ] {
        let _ = write!(out, " {:>10}", fmt_ns(v));
    }
    let _ = writeln!(out, "  ({} calls)", s.count);
}

/// One line describing the mount and device of a run.
pub fn where_line(system: &SystemInfo) -> String {
    if let Some(raw) = &system.raw_device {
        return raw_device_line(raw);
    }
    let mut line = crate::spec::shown_path(&system.target);
    if let Some(m) = &system.mount {
        let _ = write!(
            line,
            "  {} on {} ({}; {})",
            m.fs_type, m.source, m.mount_options, m.super_options
        );
    }
    line
}

/// A run on a bare block device: "raw device", the node, the range and what the disk says.
fn raw_device_line(raw: &crate::probe::RawDevice) -> String {
    use crate::spec::format_size;
    let mut line = format!(
        "raw device {} (no filesystem) · bytes {}–{} of {}",
        crate::spec::shown_path(&raw.node),
        format_size(raw.offset),
        format_size(raw.offset.saturating_add(raw.length)),
        format_size(raw.size_bytes)
    );
    if let Some(serial) = &raw.serial {
        let _ = write!(line, " · serial {serial}");
    }
    if let Some(firmware) = &raw.firmware {
        let _ = write!(line, " · firmware {firmware}");
    }
    if let Some(signature) = &raw.signature_overwritten {
        let _ = write!(line, " · wrote over {signature}");
    }
    line
}

fn device_line(system: &SystemInfo) -> String {
    match &system.device {
        Some(d) => {
            let mut parts = vec![d.name.clone()];
            if let Some(m) = &d.model {
                parts.push(m.clone());
            }
            match d.rotational {
                Some(true) => parts.push("rotational".into()),
                Some(false) => parts.push("non-rotational".into()),
                None => {}
            }
            if let Some(w) = &d.write_cache {
                parts.push(format!("cache {w}"));
            }
            if let Some(f) = d.fua {
                parts.push(if f { "FUA".into() } else { "no FUA".into() });
            }
            if let Some(s) = &d.scheduler {
                parts.push(format!("sched {s}"));
            }
            if let Some(b) = &d.loop_backing_file {
                parts.push(format!(
                    "backing {b}{}",
                    if d.loop_dio == Some(true) {
                        " (dio)"
                    } else {
                        ""
                    }
                ));
            }
            parts.join(", ")
        }
        None => system
            .device_note
            .as_ref()
            .map_or_else(|| "unknown".into(), crate::words::notes::system_note_text),
    }
}

/// The kernel settings of a run, one line per group (`kernel`, `vm`, `queue`, `cmdline`):
/// `HZ 250 (/proc/config.gz) · preemption none (...)`.
pub fn kernel_settings_text(settings: &KernelSettings) -> String {
    kernel_settings_lines(settings, true)
}

/// [`kernel_settings_text`], with or without the kernel command line (a long line every
/// run would repeat; `show` has it).
fn kernel_settings_lines(settings: &KernelSettings, cmdline: bool) -> String {
    let rows = kernel_setting_rows(settings);
    let mut out = String::new();
    for group in ["kernel", "vm", "queue", "backing", "cmdline"] {
        if group == "cmdline" && !cmdline {
            continue;
        }
        let in_group: Vec<_> = rows.iter().filter(|r| r.group == group).collect();
        let Some(first) = in_group.first() else {
            continue;
        };
        let items: Vec<String> = in_group
            .iter()
            .map(|r| match (group, &r.source) {
                ("cmdline", _) => r.value.clone(),
                ("queue" | "backing", _) => format!("{} {}", r.name, r.value),
                (_, Some(source)) => format!("{} {} ({source})", r.name, r.value),
                (_, None) => format!("{} {}", r.name, r.value),
            })
            .collect();
        let (label, device) = match group {
            // The queue rows name their device in `source`.
            "queue" => (
                "queue",
                format!("{}: ", first.source.as_deref().unwrap_or("?")),
            ),
            "backing" => (
                "queue",
                format!(
                    "{} (loop backing disk): ",
                    first.source.as_deref().unwrap_or("?")
                ),
            ),
            other => (other, String::new()),
        };
        let _ = writeln!(out, "{label:<9} {device}{}", items.join(" · "));
    }
    out
}

/// The run-control line: the settle step and the warm-up.
pub fn control_line(r: &RunResult) -> String {
    let settle = if r.spec.common.settle {
        "settled after prepare (syncfs, device and page cache quiet)"
    } else {
        "no settle step after prepare"
    };
    let warmup_ms = r.spec.warmup_ns() / 1_000_000;
    if warmup_ms == 0 {
        return format!("{settle} · no warm-up");
    }
    let flagged = r
        .intervals
        .iter()
        .filter(|s| s.in_warmup(warmup_ms))
        .count();
    format!(
        "{settle} · warm-up {:.1} s left out of the figures ({flagged} of {} timeline windows)",
        warmup_ms as f64 / 1000.0,
        r.intervals.len()
    )
}

/// The readable summary of a run; a failure names the settings to change by `names`.
pub fn summary_text(r: &RunResult, names: &dyn SettingNames) -> String {
    summary_lines(r, true, names)
}

/// [`summary_text`] as a run prints it when it ends: without the kernel command line,
/// which every run would repeat (`show` prints it).
pub fn run_summary_text(r: &RunResult, names: &dyn SettingNames) -> String {
    summary_lines(r, false, names)
}

fn summary_lines(r: &RunResult, cmdline: bool, names: &dyn SettingNames) -> String {
    let s = r.summary();
    let mut out = String::new();
    let _ = writeln!(out, "run {} {}", r.id, r.status.as_str());
    if let Some(e) = &r.error {
        let _ = writeln!(
            out,
            "error     {}",
            crate::words::failures::failure_text(e, names)
        );
    }
    let _ = writeln!(out, "workload  {}", r.spec.describe());
    if r.reported.is_none() {
        let _ = writeln!(out, "control   {}", control_line(r));
    }
    let _ = writeln!(out, "target    {}", where_line(&r.system));
    let _ = writeln!(out, "device    {}", device_line(&r.system));
    let sys = &r.system;
    out.push_str(&system_line(r));
    if let Some(settings) = &sys.kernel_settings {
        out.push_str(&kernel_settings_lines(settings, cmdline));
    }
    let _ = writeln!(out);
    if r.wall_ns == 0 && r.writes == 0 && r.syncs == 0 {
        // Stopped before its timed part: a table of zeros would read as a measurement.
        let _ = writeln!(
            out,
            "nothing measured: the run was {} before its timed part started",
            r.status.as_str()
        );
        for w in crate::words::warnings::run_warning_texts(r) {
            let _ = writeln!(out, "warning   {w}");
        }
        return out;
    }
    let _ = writeln!(
        out,
        "throughput {:.0} IOPS · {} · {:.0} syncs/s · {} writes, {} syncs in {:.3} s",
        s.iops,
        fmt_bytes_per_sec(s.mib_per_sec),
        s.syncs_per_sec,
        r.writes,
        r.syncs,
        r.wall_secs()
    );
    let _ = writeln!(
        out,
        "latency   {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "min", "p50", "p90", "p99", "p99.9", "max", "mean"
    );
    lat_row(&mut out, "write", &s.write_lat);
    lat_row(&mut out, "sync", &s.sync_lat);
    match &s.durable_lat {
        Some(d) => {
            lat_row(&mut out, "durable", d);
            let _ = writeln!(
                out,
                "          durable: from a write's start to the moment it is durable · {:.0} ops/s",
                s.durable_ops_per_sec.unwrap_or(0.0)
            );
        }
        None => {
            let why = super::durable_unavailable(r).unwrap_or_default();
            let _ = writeln!(out, "  durable {why}");
        }
    }
    if let Some(why) = super::not_durable_text(r) {
        let _ = writeln!(out, "durable   NOT DURABLE: {why}");
    }
    out.push_str(&device_lines(r, &s));
    if let Some(f) = crate::analysis::implausible_flush(r) {
        let _ = writeln!(out, "flush     {}", f.text());
    }
    if let Some(secs) = crate::analysis::short_run(r) {
        let _ = writeln!(out, "short     {}", crate::analysis::short_run_text(secs));
    }
    if let Some(pct) = crate::analysis::busy_run(r) {
        let _ = writeln!(out, "busy      {}", crate::analysis::busy_run_text(pct));
    }
    // An import has no per-thread figures (its section says so).
    if r.reported.is_none() {
        let _ = writeln!(
            out,
            "fairness  writes/thread {:.1} ± {:.1} · busy/thread {:.3} ± {:.3} s",
            s.thread_writes_mean,
            s.thread_writes_stddev,
            s.thread_busy_mean_s,
            s.thread_busy_stddev_s
        );
    }
    if let Some(depth) = r.mean_inflight() {
        let _ = writeln!(
            out,
            "queue     io_uring depth {} · {depth:.2} requests in flight per thread on average",
            r.spec.fileio().map_or(1, |f| f.iodepth)
        );
    }
    out.push_str(&super::kinds::kind_section(r));
    if let Some(kt) = &r.kernel_trace {
        for (label, text) in super::kernel::kernel_rows(kt) {
            let _ = writeln!(out, "{label:<9} {text}");
        }
    }
    for w in crate::words::warnings::run_warning_texts(r) {
        let _ = writeln!(out, "warning   {w}");
    }
    out
}

/// The `system` line: the machine a run was measured on (or that an import does not say).
fn system_line(r: &RunResult) -> String {
    let mut out = String::new();
    let sys = &r.system;
    if let Some(rep) = &r.reported {
        let _ = writeln!(
            out,
            "system    imported: machine facts unknown · host {} · measured by {}",
            sys.hostname.as_deref().unwrap_or("not in fio's output"),
            rep.tool
        );
    } else {
        let _ = writeln!(
            out,
            "system    {} · {} × {} · {:.1} GiB · fsynclab {} · clock {}",
            sys.kernel_release.as_deref().unwrap_or("?"),
            sys.cpu_count,
            sys.cpu_model.as_deref().unwrap_or("?"),
            sys.memory_bytes as f64 / (1u64 << 30) as f64,
            sys.tool_version,
            sys.clock_source.as_deref().unwrap_or("?")
        );
    }
    out
}

/// The `device` and `backing` lines: the counters of the device under the target (and of
/// the disk under a loop device), or why there are none.
fn device_lines(r: &RunResult, s: &crate::metrics::RunSummary) -> String {
    let mut out = String::new();
    match r.device.counters() {
        Some(c) => {
            let flushes = match (s.device_flushes, s.flushes_per_sync) {
                (Some(f), Some(per)) => format!("{f} flushes ({per:.2} per sync)"),
                (Some(f), None) => format!("{f} flushes"),
                _ => "flush counters not reported by this kernel".into(),
            };
            let amp = s
                .device_bytes_per_app_byte
                .map(|a| format!(" · {a:.2} device bytes per app byte"))
                .unwrap_or_default();
            let flush_ms = c
                .flush_ms()
                .map(|ms| format!(" · {ms} ms flushing"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "device    {}: {flushes} · {} write I/Os{amp}{flush_ms}",
                c.device,
                c.write_ios()
            );
        }
        None => {
            let reason = match &r.device {
                crate::metrics::DeviceAccounting::Unavailable { reason } => {
                    crate::words::notes::device_note_text(reason)
                }
                _ => String::new(),
            };
            let _ = writeln!(out, "device    not measured: {reason}");
        }
    }
    if let Some(b) = r.device.backing() {
        let flushes = b
            .flushes()
            .map(|f| format!("{f} flushes · "))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "backing   {}: {flushes}{} write I/Os · {} written (the whole disk under the loop device, other traffic included)",
            b.device,
            b.write_ios(),
            crate::spec::format_size(b.bytes_written())
        );
    }
    out
}

/// One line per run of a series: id, status, the swept-looking fields, headline figures.
pub fn run_line(r: &RunResult) -> String {
    let s = r.summary();
    let flushes = s
        .flushes_per_sync
        .map(|f| format!(" · {f:.2} flushes/sync"))
        .unwrap_or_default();
    let busy = r
        .noise
        .as_ref()
        .and_then(|n| n.background_cpu_busy)
        .map(|b| format!(" · bg CPU {:.0}%", b * 100.0))
        .unwrap_or_default();
    if let Some(line) = super::kinds::kind_line(r) {
        return format!("run {} {} · {line}{busy}", r.id, r.status.as_str());
    }
    // Without syncs (O_SYNC/O_DSYNC writes, no sync) there is no sync latency to print.
    let sync = if r.syncs == 0 {
        "sync —".to_string()
    } else {
        format!(
            "sync p50 {} p99 {}",
            fmt_ns(s.sync_lat.p50_ns as f64),
            fmt_ns(s.sync_lat.p99_ns as f64)
        )
    };
    format!(
        "run {} {} · {} threads, bs {} · {:.0} IOPS · {} · {sync}{flushes}{busy}",
        r.id,
        r.status.as_str(),
        r.spec.common.threads,
        crate::spec::format_size(r.spec.fileio().map_or(0, |f| f.block_size)),
        s.iops,
        fmt_bytes_per_sec(s.mib_per_sec),
    )
}

fn lat_json(s: &LatencySummary) -> serde_json::Value {
    let us = |ns: u64| ns as f64 / 1e3;
    json!({
        "count": s.count,
        "min": us(s.min_ns),
        "mean": s.mean_ns / 1e3,
        "p50": us(s.p50_ns),
        "p90": us(s.p90_ns),
        "p99": us(s.p99_ns),
        "p999": us(s.p999_ns),
        "max": us(s.max_ns),
    })
}

/// The `--json` object of a run (latencies in µs).
pub fn run_json(r: &RunResult) -> serde_json::Value {
    let s = r.summary();
    let mount = r.system.mount.as_ref();
    json!({
        "id": r.id,
        "status": r.status.as_str(),
        "error": r.error.as_ref().map(crate::words::failures::stored_failure_text),
        "error_code": r.error.as_ref().map(|e| e.code()),
        "workload": r.spec,
        "started_at_ms": r.started_at_ms,
        "wall_s": r.wall_secs(),
        "writes": r.writes,
        "syncs": r.syncs,
        "bytes": r.bytes,
        "iops": s.iops,
        "syncs_per_sec": s.syncs_per_sec,
        "mib_per_sec": s.mib_per_sec,
        "write_lat_us": lat_json(&s.write_lat),
        "sync_lat_us": lat_json(&s.sync_lat),
        "durable_lat_us": s.durable_lat.as_ref().map(lat_json),
        "durable_ops_per_sec": s.durable_ops_per_sec,
        "durable_unavailable": super::durable_unavailable(r),
        "not_durable": crate::analysis::not_durable(r).map(|n| n.explain()),
        "implausible_flush": crate::analysis::implausible_flush(r).map(|f| json!({
            "device": f.device,
            "class": f.class,
            "flush_us": f.flush_us,
            "evidence": f.evidence,
            "floor_us": f.floor_us,
            "text": f.text(),
        })),
        "raw_device": r.system.raw_device,
        "device": r.device.counters().map(|c| c.device.clone()),
        "device_flushes": s.device_flushes,
        "device_write_ios": r.device.counters().map(|c| c.write_ios()),
        "device_bytes_written": r.device.counters().map(|c| c.bytes_written()),
        "flushes_per_sync": s.flushes_per_sync,
        "backing_device": r.device.backing().map(|b| b.device.clone()),
        "backing_flushes": r.device.backing().and_then(|b| b.flushes()),
        "backing_write_ios": r.device.backing().map(|b| b.write_ios()),
        "device_bytes_per_app_byte": s.device_bytes_per_app_byte,
        "device_note": match &r.device {
            crate::metrics::DeviceAccounting::Unavailable { reason } => {
                Some(crate::words::notes::device_note_text(reason))
            }
            _ => None,
        },
        "threads": r.threads,
        "fairness": {
            "writes_mean": s.thread_writes_mean,
            "writes_stddev": s.thread_writes_stddev,
            "busy_mean_s": s.thread_busy_mean_s,
            "busy_stddev_s": s.thread_busy_stddev_s,
        },
        "fs_type": mount.map(|m| m.fs_type.clone()),
        "mount_source": mount.map(|m| m.source.clone()),
        "mount_options": mount.map(|m| merged_options(&m.mount_options, &m.super_options)),
        "kernel": r.system.kernel_release,
        "target": r.system.target,
        "warnings": crate::words::warnings::run_warning_texts(r),
        "warning_codes": crate::words::warnings::warning_codes(&r.warnings),
        "noise": r.noise,
        "clock_source": r.system.clock_source,
        "kind": r.spec.kind().as_str(),
        "kind_detail": super::kinds::kind_json(r),
        "has_histograms": r.has_histograms(),
        "reported": r.reported,
        "kernel_settings": r.system.kernel_settings,
        "kernel_trace": kernel_trace_json(r.kernel_trace.as_ref()),
        "inflight_mean": r.mean_inflight(),
    })
}

/// The RUN object's `kernel_trace`: the stored trace (or "not recorded"), its `reason` in
/// words, as before the notes were typed.
fn kernel_trace_json(trace: Option<&crate::metrics::KernelTrace>) -> serde_json::Value {
    let not_recorded;
    let trace = match trace {
        Some(trace) => trace,
        None => {
            not_recorded = crate::metrics::KernelTrace::off(crate::metrics::TraceNote::NotRecorded);
            &not_recorded
        }
    };
    let mut value = json!(trace);
    value["reason"] = json!(
        trace
            .reason
            .as_ref()
            .map(crate::words::trace::trace_reason_text)
    );
    value
}

/// The `--json` object of a run that stored no result (running, failed, interrupted): the
/// keys of [`run_json`], the figures null (what was streamed is in `show`'s `progress`
/// and `intervals`), so a script reads one shape whatever the status.
pub fn unfinished_run_json(stored: &crate::store::StoredRun) -> serde_json::Value {
    let (row, system) = (&stored.row, &stored.system);
    let mount = system.mount.as_ref();
    json!({
        "id": row.id,
        "status": row.status.as_str(),
        "error": row.error.as_ref().map(crate::words::failures::stored_failure_text),
        "error_code": row.error.as_ref().map(|e| e.code()),
        "workload": stored.spec,
        "started_at_ms": stored
            .progress
            .as_ref()
            .and_then(|p| p.started_at_ms)
            .unwrap_or(row.created_at_ms),
        "wall_s": null,
        "writes": null,
        "syncs": null,
        "bytes": null,
        "iops": null,
        "syncs_per_sec": null,
        "mib_per_sec": null,
        "write_lat_us": null,
        "sync_lat_us": null,
        "durable_lat_us": null,
        "durable_ops_per_sec": null,
        "durable_unavailable": null,
        "not_durable": crate::analysis::not_durable_spec(&stored.spec, system).map(|n| n.explain()),
        "implausible_flush": null,
        "raw_device": system.raw_device,
        "device": row.device,
        "device_flushes": null,
        "device_write_ios": null,
        "device_bytes_written": null,
        "flushes_per_sync": null,
        "backing_device": system.backing_device.as_ref().map(|d| d.name.clone()),
        "backing_flushes": null,
        "backing_write_ios": null,
        "device_bytes_per_app_byte": null,
        "device_note": system.device_note.as_ref().map(crate::words::notes::system_note_text),
        "threads": [],
        "fairness": null,
        "fs_type": mount.map(|m| m.fs_type.clone()),
        "mount_source": mount.map(|m| m.source.clone()),
        "mount_options": mount.map(|m| merged_options(&m.mount_options, &m.super_options)),
        "kernel": system.kernel_release,
        "target": system.target,
        "warnings": system.warnings.iter().map(|w| crate::words::warnings::warning_text(w, None)).collect::<Vec<_>>(),
        "warning_codes": crate::words::warnings::warning_codes(&system.warnings),
        "noise": null,
        "clock_source": system.clock_source,
        "kind": stored.spec.kind().as_str(),
        "kind_detail": null,
        "has_histograms": false,
        "reported": null,
        "kernel_settings": system.kernel_settings,
        "kernel_trace": null,
        "inflight_mean": null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_units() {
        assert_eq!(fmt_ns(850.0), "850 ns");
        assert_eq!(fmt_ns(12_345.0), "12.3 µs");
        assert_eq!(fmt_ns(4_010_000.0), "4.01 ms");
        assert_eq!(fmt_ns(1_200_000_000.0), "1.20 s");
        assert_eq!(fmt_bytes_per_sec(14.9), "14.90 MiB/s");
        assert_eq!(fmt_bytes_per_sec(2.5), "2.50 MiB/s");
        assert_eq!(fmt_bytes_per_sec(0.5), "512.0 KiB/s");
    }
}
