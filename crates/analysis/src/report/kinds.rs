//! The parts of a run summary that belong to one workload kind: the per-operation table
//! (smallfiles, fileserver, grouplog), timed phases (smallfiles), group-commit accounting
//! (grouplog), and the sysbench-shaped summary of fileio sysbench-mode runs.

use std::fmt::Write as _;

use serde_json::json;

use super::units::fmt_ns;
use crate::analysis::run_value;
use crate::metrics::{GroupCommitStats, OpStats, PhaseStats, RunResult, SysbenchSummary};
use crate::spec::{KindSpec, WorkloadKind};

/// The kind-specific lines of the run summary (empty for plain fileio runs).
pub fn kind_section(r: &RunResult) -> String {
    let mut out = String::new();
    if r.reported.is_some() {
        out.push_str(&super::imported::imported_section(r));
    }
    if let Some(s) = SysbenchSummary::of(r) {
        out.push_str(&super::sysbench::sysbench_text(&s));
    }
    if !r.phases.is_empty() {
        out.push_str(&phases_text(&r.phases));
    }
    if !r.ops.is_empty() {
        out.push_str(&ops_table_timed(&r.ops, |op| op_wall_secs(r, op)));
    }
    if let Some(t) = fileserver_throughput(r) {
        let _ = writeln!(
            out,
            "          Throughput {:.3} MB/sec  {} clients  max_latency={:.3} ms  ({:.1} ops/s)",
            t.mb_per_sec, t.clients, t.max_latency_ms, t.ops_per_sec
        );
    }
    if let Some(g) = &r.group {
        out.push_str(&group_text(g, r));
    }
    out
}

/// The headline of a run of a kind beyond fileio, for one-line-per-run listings
/// (`None` for fileio runs, which keep the IOPS line).
pub fn kind_line(r: &RunResult) -> Option<String> {
    let v = |key: &str| crate::analysis::run_value(key, r);
    let f = |key: &str, digits: usize| {
        v(key)
            .map(|x| format!("{x:.digits$}"))
            .unwrap_or_else(|| "-".into())
    };
    let spec = &r.spec;
    // Today's kinds have lines of their own (each its reference tool's figures); any other
    // kind gets the generic one.
    Some(match &spec.kind {
        KindSpec::Fileio(_) => return None,
        KindSpec::Grouplog(g) => format!(
            "{} writers, {} · {} commits/s · {} flushes/commit (device {}) · commit p50 {} p99 {}",
            spec.common.threads,
            g.strategy,
            f("commits_per_sec", 0),
            f("flushes_per_commit", 3),
            f("device_flushes_per_commit", 3),
            v("commit_p50_us")
                .map(|u| fmt_ns(u * 1e3))
                .unwrap_or_else(|| "-".into()),
            v("commit_p99_us")
                .map(|u| fmt_ns(u * 1e3))
                .unwrap_or_else(|| "-".into()),
        ),
        KindSpec::Smallfiles(s) => {
            let phases: Vec<String> = r
                .phases
                .iter()
                .map(|p| format!("{} {:.0}/s", p.phase, p.items_per_sec()))
                .collect();
            let flushes = r
                .summary()
                .flushes_per_sync
                .map(|f| format!(" · {f:.2} flushes/sync"))
                .unwrap_or_default();
            // A directory's fsync is not a file's sync: its flushes still count per sync.
            let then = match (s.rename_over, s.dir_sync) {
                (true, true) => ", rename over current, directory fsync",
                (true, false) => ", rename over current",
                (false, true) => ", directory fsync",
                (false, false) => "",
            };
            format!(
                "{} threads, sync {}{then} · {}{flushes}",
                spec.common.threads,
                s.sync.as_str(),
                phases.join(" · ")
            )
        }
        KindSpec::Fileserver(_) => format!(
            "{} clients · {} MB/s · {} ops/s · max latency {} ms",
            spec.common.threads,
            f("io_mb_per_sec", 2),
            f("ops_per_sec", 0),
            f("op_max_ms", 3),
        ),
        KindSpec::Fio(_) => super::imported::imported_line(r),
        _ => generic_line(r),
    })
}

/// The line of a kind with none of its own: its workers, the figure its series are
/// summarised by, and the sync and durable-operation tails.
fn generic_line(r: &RunResult) -> String {
    let spec = &r.spec;
    let table = crate::spec::kind_def(spec.kind());
    let workers = table.map_or("threads", |t| t.workers.unit);
    let metric = table.map_or("iops", |t| t.series_metric);
    let us = |key: &str| {
        crate::analysis::run_value(key, r)
            .map(|u| fmt_ns(u * 1e3))
            .unwrap_or_else(|| "-".into())
    };
    let per_sec = crate::analysis::run_value(metric, r)
        .map(|x| format!("{x:.0}"))
        .unwrap_or_else(|| "-".into());
    format!(
        "{} {workers} · {per_sec} {} · sync p99 {} · durable p99 {}",
        spec.common.threads,
        metric.replace('_', " ").replace(" per sec", "/s"),
        us("sync_p99_us"),
        us("durable_p99_us"),
    )
}

/// The dbench-style closing figures of a fileserver run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FileserverThroughput {
    /// Bytes read and written per second / 10^6 (dbench's "MB/sec" is decimal).
    pub mb_per_sec: f64,
    /// Clients.
    pub clients: u32,
    /// Slowest single operation, ms.
    pub max_latency_ms: f64,
    /// Operations of every kind per second.
    pub ops_per_sec: f64,
}

/// dbench's `Throughput X MB/sec N clients max_latency=Y ms` for a fileserver run.
pub fn fileserver_throughput(r: &RunResult) -> Option<FileserverThroughput> {
    if r.spec.kind() != WorkloadKind::Fileserver || r.ops.is_empty() {
        return None;
    }
    Some(FileserverThroughput {
        mb_per_sec: run_value("io_mb_per_sec", r)?,
        clients: r.spec.common.threads,
        max_latency_ms: run_value("op_max_ms", r)?,
        ops_per_sec: run_value("ops_per_sec", r)?,
    })
}

/// `phase  files  time  files/s` lines.
pub fn phases_text(phases: &[PhaseStats]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "phases    {:<8} {:>10} {:>10} {:>12}",
        "", "items", "time", "per second"
    );
    for p in phases {
        let _ = writeln!(
            out,
            "          {:<8} {:>10} {:>10} {:>12.1}",
            p.phase,
            p.items,
            fmt_ns(p.wall_ns as f64),
            p.items_per_sec()
        );
    }
    out
}

/// Seconds an operation's rate is computed over: the phase of the same name (smallfiles'
/// `chown`, `unlink`), else the first phase (the per-file calls of the `create` phase), else
/// the whole run.
pub fn op_wall_secs(r: &RunResult, op: &str) -> f64 {
    r.phases
        .iter()
        .find(|p| p.phase == op)
        .or(r.phases.first())
        .map(|p| p.wall_ns as f64 / 1e9)
        .unwrap_or_else(|| r.wall_secs())
}

/// The dbench-style operation table with percentiles: count, mean, p50, p99, max.
pub fn ops_table(ops: &[OpStats], wall_secs: f64) -> String {
    ops_table_timed(ops, |_| wall_secs)
}

/// [`ops_table`] with each operation's rate over its own time span.
fn ops_table_timed(ops: &[OpStats], wall_secs_of: impl Fn(&str) -> f64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "operation {:<10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "", "count", "per sec", "mean", "p50", "p99", "max"
    );
    let mut max_lat = 0u64;
    for op in ops {
        let s = op.lat.summary();
        max_lat = max_lat.max(s.max_ns);
        let wall_secs = wall_secs_of(&op.op);
        let rate = if wall_secs > 0.0 {
            op.count as f64 / wall_secs
        } else {
            0.0
        };
        let _ = writeln!(
            out,
            "          {:<10} {:>10} {:>10.1} {:>10} {:>10} {:>10} {:>10}",
            op.op,
            op.count,
            rate,
            fmt_ns(s.mean_ns),
            fmt_ns(s.p50_ns as f64),
            fmt_ns(s.p99_ns as f64),
            fmt_ns(s.max_ns as f64)
        );
    }
    let _ = writeln!(
        out,
        "          max latency of any operation {}",
        fmt_ns(max_lat as f64)
    );
    out
}

/// Commits, flushes, batch sizes, and the device's view of the same flushes.
pub fn group_text(g: &GroupCommitStats, r: &RunResult) -> String {
    let mut out = String::new();
    let secs = r.wall_secs();
    let commits_per_sec = if secs > 0.0 {
        g.commits as f64 / secs
    } else {
        0.0
    };
    let _ = writeln!(
        out,
        "group     strategy {} · {} commits ({commits_per_sec:.1}/s) · {} flushes · {} flushes per commit (engine) · {} records per flush",
        g.strategy,
        g.commits,
        g.flushes,
        g.flushes_per_commit()
            .map(|f| format!("{f:.3}"))
            .unwrap_or_else(|| "-".into()),
        g.mean_batch()
            .map(|b| format!("{b:.2}"))
            .unwrap_or_else(|| "-".into()),
    );
    if let Some(flushes) = r.device.counters().and_then(|c| c.flushes())
        && g.commits > 0
    {
        let _ = writeln!(
            out,
            "          device: {flushes} cache flushes = {:.3} per commit",
            flushes as f64 / g.commits as f64
        );
    }
    if let Some(ns) = g.learned_flush_ns {
        let _ = writeln!(out, "          learned flush time {}", fmt_ns(ns as f64));
    }
    if g.gather_wait_ns > 0 {
        let _ = writeln!(
            out,
            "          leaders waited {} in total to gather followers",
            fmt_ns(g.gather_wait_ns as f64)
        );
    }
    if let Some(peak) = g.peak_in_flight.filter(|&p| p > 1) {
        let _ = writeln!(out, "          up to {peak} flushes in flight at once");
    }
    let batches = batch_sizes(g);
    if !batches.is_empty() {
        let _ = writeln!(
            out,
            "          batch sizes (records × flushes): {}",
            batches.join(" ")
        );
    }
    out
}

/// The group-commit batch sizes that occurred, as `size×flushes` ("≥size" for the last,
/// open-ended bucket), smallest first.
pub fn batch_sizes(g: &GroupCommitStats) -> Vec<String> {
    g.batch_sizes
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(size, n)| {
            let more = if size == GroupCommitStats::MAX_TRACKED_BATCH {
                "≥"
            } else {
                ""
            };
            format!("{more}{size}×{n}")
        })
        .collect()
}

/// The kind-specific part of the `--json` object (latencies in µs).
pub fn kind_json(r: &RunResult) -> serde_json::Value {
    let us = |ns: u64| ns as f64 / 1e3;
    let ops: Vec<serde_json::Value> = r
        .ops
        .iter()
        .map(|o| {
            let s = o.lat.summary();
            json!({
                "op": o.op,
                "count": o.count,
                "bytes": o.bytes,
                "mean_us": s.mean_ns / 1e3,
                "p50_us": us(s.p50_ns),
                "p99_us": us(s.p99_ns),
                "max_us": us(s.max_ns),
            })
        })
        .collect();
    let phases: Vec<serde_json::Value> = r
        .phases
        .iter()
        .map(|p| {
            json!({
                "phase": p.phase,
                "items": p.items,
                "wall_s": p.wall_ns as f64 / 1e9,
                "per_sec": p.items_per_sec(),
            })
        })
        .collect();
    let group = r.group.as_ref().map(|g| {
        json!({
            "strategy": g.strategy,
            "commits": g.commits,
            "flushes": g.flushes,
            "flushes_per_commit": g.flushes_per_commit(),
            "records_per_flush": g.mean_batch(),
            "device_flushes_per_commit": r
                .device
                .counters()
                .and_then(|c| c.flushes())
                .filter(|_| g.commits > 0)
                .map(|f| f as f64 / g.commits as f64),
            "batch_sizes": g.batch_sizes,
            "learned_flush_us": g.learned_flush_ns.map(us),
            "gather_wait_s": g.gather_wait_ns as f64 / 1e9,
            "peak_in_flight": g.peak_in_flight,
        })
    });
    let sysbench = SysbenchSummary::of(r).map(|s| super::sysbench::sysbench_json(&s));
    let fileserver = fileserver_throughput(r).map(|t| {
        json!({
            "clients": t.clients,
            "mb_per_sec": t.mb_per_sec,
            "ops_per_sec": t.ops_per_sec,
            "max_latency_ms": t.max_latency_ms,
        })
    });
    json!({
        "ops": ops,
        "phases": phases,
        "group": group,
        "sysbench": sysbench,
        "fileserver": fileserver,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::FlatSpec;

    /// A kind with no line of its own reads as its workers, its series figure and its
    /// sync and durable tails (here on a fileio run's figures).
    #[test]
    fn the_generic_line_names_workers_figure_and_tails() {
        let spec = crate::spec::FlatSpec {
            threads: 3,
            requests: Some(60),
            ..FlatSpec::default()
        }
        .typed();
        let r = crate::engine::fake_run(1, vec![1000], vec![250_000], &spec, Default::default())
            .unwrap();
        let line = generic_line(&r);
        assert!(line.starts_with("3 threads · "), "{line}");
        assert!(
            line.contains(" iops · sync p99 ") && line.contains("durable p99"),
            "{line}"
        );
        assert!(!line.contains(" - "), "every figure is known: {line}");
    }
}
