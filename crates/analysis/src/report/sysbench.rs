//! The sysbench-shaped part of a sysbench-mode run's summary: the same sections, in the
//! same order and units, as `sysbench fileio run` prints, so figures can be read side by
//! side with seed 001 ("Btrfs: improve fsync/osync write performance") and with a real
//! sysbench run on the same filesystem.

use std::fmt::Write as _;

use serde_json::json;

use crate::metrics::SysbenchSummary;

/// sysbench's "File operations" ... "Threads fairness" block.
pub fn sysbench_text(s: &SysbenchSummary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "sysbench  File operations:");
    let _ = writeln!(
        out,
        "              writes/s:                     {:.2}",
        s.writes_per_sec
    );
    let _ = writeln!(
        out,
        "              fsyncs/s:                     {:.2}",
        s.fsyncs_per_sec
    );
    let _ = writeln!(out, "          Throughput:");
    let _ = writeln!(
        out,
        "              written, MiB/s:               {:.2}",
        s.written_mib_per_sec
    );
    let _ = writeln!(out, "          General statistics:");
    let _ = writeln!(
        out,
        "              total time:                          {:.4}s",
        s.total_time_s
    );
    let _ = writeln!(
        out,
        "              total number of events:              {}",
        s.events
    );
    let _ = writeln!(
        out,
        "                ({} writes + {} fsyncs; {} end fsyncs are not events)",
        s.event_writes, s.event_syncs, s.end_syncs
    );
    let _ = writeln!(out, "          Latency (ms):");
    for (name, v) in [
        ("min:", s.latency_min_ms),
        ("avg:", s.latency_avg_ms),
        ("max:", s.latency_max_ms),
        ("95th percentile:", s.latency_p95_ms),
        ("sum:", s.latency_sum_ms),
    ] {
        let _ = writeln!(out, "                   {name:<16} {v:>20.2}");
    }
    let _ = writeln!(out, "          Threads fairness:");
    let _ = writeln!(
        out,
        "              events (avg/stddev):           {:.4}/{:.2}",
        s.thread_events_avg, s.thread_events_stddev
    );
    let _ = writeln!(
        out,
        "              execution time (avg/stddev):   {:.4}/{:.2}",
        s.thread_time_avg_s, s.thread_time_stddev_s
    );
    out
}

/// The same figures for `--json` (`kind_detail.sysbench`).
pub fn sysbench_json(s: &SysbenchSummary) -> serde_json::Value {
    json!({
        "writes_per_sec": s.writes_per_sec,
        "fsyncs_per_sec": s.fsyncs_per_sec,
        "written_mib_per_sec": s.written_mib_per_sec,
        "total_time_s": s.total_time_s,
        "events": s.events,
        "event_writes": s.event_writes,
        "event_syncs": s.event_syncs,
        "end_syncs": s.end_syncs,
        "latency_ms": {
            "min": s.latency_min_ms,
            "avg": s.latency_avg_ms,
            "max": s.latency_max_ms,
            "p95": s.latency_p95_ms,
            "sum": s.latency_sum_ms,
        },
        "threads_fairness": {
            "events_avg": s.thread_events_avg,
            "events_stddev": s.thread_events_stddev,
            "execution_time_avg_s": s.thread_time_avg_s,
            "execution_time_stddev_s": s.thread_time_stddev_s,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary() -> SysbenchSummary {
        SysbenchSummary {
            writes_per_sec: 14069.5,
            fsyncs_per_sec: 2844.28,
            written_mib_per_sec: 54.96,
            total_time_s: 0.1179,
            events: 2000,
            event_writes: 1667,
            event_syncs: 333,
            end_syncs: 4,
            latency_min_ms: 0.001,
            latency_avg_ms: 0.2339,
            latency_max_ms: 2.66,
            latency_p95_ms: 1.55,
            latency_sum_ms: 467.77,
            thread_events_avg: 500.0,
            thread_events_stddev: 5.7,
            thread_time_avg_s: 0.1169,
            thread_time_stddev_s: 0.0,
        }
    }

    #[test]
    fn text_has_sysbench_s_sections_and_figures() {
        let t = sysbench_text(&summary());
        for want in [
            "File operations:",
            "writes/s:                     14069.50",
            "fsyncs/s:                     2844.28",
            "written, MiB/s:               54.96",
            "total time:                          0.1179s",
            "total number of events:              2000",
            "(1667 writes + 333 fsyncs; 4 end fsyncs are not events)",
            "Latency (ms):",
            "95th percentile:",
            "1.55",
            "467.77",
            "events (avg/stddev):           500.0000/5.70",
            "execution time (avg/stddev):   0.1169/0.00",
        ] {
            assert!(t.contains(want), "missing {want:?} in\n{t}");
        }
    }

    #[test]
    fn json_carries_the_same_figures() {
        let j = sysbench_json(&summary());
        assert_eq!(j["events"], 2000);
        assert_eq!(j["latency_ms"]["p95"], 1.55);
        assert_eq!(j["threads_fairness"]["events_stddev"], 5.7);
    }
}
