//! The figures of a run that belong to its workload kind (smallfiles phases, the
//! per-operation table, fileserver throughput, grouplog's group-commit accounting), laid
//! out in grids so labels and values line up in the window's proportional font. The
//! Run tab's result and the History details share it. Every figure comes from the result
//! or the report module's formatters; the text form (`report::kind_section`) stays the
//! CLI's and the Copy button's.

use egui::{Grid, Label, RichText, Ui};

use fsynclab::metrics::{GroupCommitStats, OpStats, PhaseStats, RunResult};
use fsynclab::report::{
    batch_sizes, fileserver_throughput, fmt_ns, imported_section, op_wall_secs, sysbench_text,
};

/// Header of the per-operation grid.
pub const OPS_HEADER: [&str; 7] = ["operation", "count", "per sec", "mean", "p50", "p99", "max"];

/// Header of the phases grid.
pub const PHASES_HEADER: [&str; 4] = ["phase", "items", "time", "per second"];

/// Row names of the group-commit grid, in their order (a row whose figure the run does
/// not have is left out).
pub const GROUP_ROWS: [&str; 9] = [
    "Strategy",
    "Commits",
    "Engine flushes",
    "Records per flush",
    "Device cache flushes",
    "Learned flush time",
    "Leaders' gather wait",
    "Flushes in flight at once",
    "Batch sizes (records × flushes)",
];

/// Draws the kind-specific figures of `r` (nothing for a plain fileio run); `salt` keeps
/// the grids' ids apart when several results are shown.
pub(super) fn kind_figures(ui: &mut Ui, r: &RunResult, salt: &str) {
    // Imported and sysbench summaries keep their tool's own text shape: that is what a
    // reader compares them against.
    if r.reported.is_some() {
        ui.label(RichText::new(imported_section(r)).monospace());
    }
    if let Some(s) = fsynclab::metrics::SysbenchSummary::of(r) {
        ui.label(RichText::new(sysbench_text(&s)).monospace());
    }
    if !r.phases.is_empty() {
        phases_grid(ui, &r.phases, salt);
        ui.add_space(4.0);
    }
    if !r.ops.is_empty() {
        ops_grid(ui, r, salt);
        ui.add_space(4.0);
    }
    if let Some(t) = fileserver_throughput(r) {
        // dbench's own closing line, as readers know it.
        let line = format!(
            "Throughput {:.3} MB/sec  {} clients  max_latency={:.3} ms  ({:.1} ops/s)",
            t.mb_per_sec, t.clients, t.max_latency_ms, t.ops_per_sec
        );
        ui.label(RichText::new(line).monospace());
    }
    if let Some(g) = &r.group {
        group_grid(ui, g, r, salt);
    }
}

fn header(ui: &mut Ui, names: &[&str]) {
    for name in names {
        ui.label(RichText::new(*name).strong());
    }
    ui.end_row();
}

fn phases_grid(ui: &mut Ui, phases: &[PhaseStats], salt: &str) {
    Grid::new(("kind-phases", salt))
        .num_columns(PHASES_HEADER.len())
        .spacing([24.0, 4.0])
        .striped(true)
        .show(ui, |ui| {
            header(ui, &PHASES_HEADER);
            for p in phases {
                ui.label(&p.phase);
                ui.label(p.items.to_string());
                ui.label(fmt_ns(p.wall_ns as f64));
                ui.label(format!("{:.1}", p.items_per_sec()));
                ui.end_row();
            }
        });
}

fn ops_grid(ui: &mut Ui, r: &RunResult, salt: &str) {
    let mut slowest = 0u64;
    Grid::new(("kind-ops", salt))
        .num_columns(OPS_HEADER.len())
        .spacing([24.0, 4.0])
        .striped(true)
        .show(ui, |ui| {
            header(ui, &OPS_HEADER);
            for op in &r.ops {
                slowest = slowest.max(op_row(ui, r, op));
            }
        });
    ui.label(format!(
        "max latency of any operation: {}",
        fmt_ns(slowest as f64)
    ));
}

/// One operation's row; its slowest call, ns.
fn op_row(ui: &mut Ui, r: &RunResult, op: &OpStats) -> u64 {
    let s = op.lat.summary();
    let secs = op_wall_secs(r, &op.op);
    let rate = if secs > 0.0 {
        op.count as f64 / secs
    } else {
        0.0
    };
    ui.label(&op.op);
    ui.label(op.count.to_string());
    ui.label(format!("{rate:.1}"));
    for ns in [s.mean_ns, s.p50_ns as f64, s.p99_ns as f64, s.max_ns as f64] {
        ui.label(fmt_ns(ns));
    }
    ui.end_row();
    s.max_ns
}

/// The group-commit rows: (name from [`GROUP_ROWS`], value), the ones this run has.
pub fn group_rows(g: &GroupCommitStats, r: &RunResult) -> Vec<(&'static str, String)> {
    let [
        strategy,
        commits,
        flushes,
        batch,
        device,
        learned,
        gather,
        in_flight,
        sizes,
    ] = GROUP_ROWS;
    let secs = r.wall_secs();
    let mut rows = vec![(strategy, g.strategy.clone())];
    let per_sec = if secs > 0.0 {
        format!(" ({:.1}/s)", g.commits as f64 / secs)
    } else {
        String::new()
    };
    rows.push((commits, format!("{}{per_sec}", g.commits)));
    let per_commit = g
        .flushes_per_commit()
        .map(|f| format!(" ({f:.3} per commit)"))
        .unwrap_or_default();
    rows.push((flushes, format!("{}{per_commit}", g.flushes)));
    if let Some(b) = g.mean_batch() {
        rows.push((batch, format!("{b:.2}")));
    }
    if let Some(f) = r.device.counters().and_then(|c| c.flushes())
        && g.commits > 0
    {
        let per_commit = f as f64 / g.commits as f64;
        rows.push((device, format!("{f} ({per_commit:.3} per commit)")));
    }
    if let Some(ns) = g.learned_flush_ns {
        rows.push((learned, fmt_ns(ns as f64)));
    }
    if g.gather_wait_ns > 0 {
        rows.push((
            gather,
            format!("{} in total", fmt_ns(g.gather_wait_ns as f64)),
        ));
    }
    if let Some(peak) = g.peak_in_flight.filter(|&p| p > 1) {
        rows.push((in_flight, format!("up to {peak}")));
    }
    let batches = batch_sizes(g);
    if !batches.is_empty() {
        rows.push((sizes, batches.join("  ")));
    }
    rows
}

fn group_grid(ui: &mut Ui, g: &GroupCommitStats, r: &RunResult, salt: &str) {
    ui.label(RichText::new("group commit").strong());
    Grid::new(("kind-group", salt))
        .num_columns(2)
        .spacing([24.0, 4.0])
        .striped(true)
        .show(ui, |ui| {
            for (name, value) in group_rows(g, r) {
                ui.label(name);
                ui.add(Label::new(value).wrap());
                ui.end_row();
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_rows_keep_their_order_and_leave_out_what_the_run_lacks() {
        let mut g = GroupCommitStats {
            strategy: "adaptive".into(),
            commits: 553,
            flushes: 70,
            ..Default::default()
        };
        g.record_batches(8, 69);
        g.record_batch(1);
        let spec = fsynclab::spec::WorkloadSpec::default();
        let r = fsynclab::engine::fake_run(1, vec![1_000], vec![1_000], &spec, Default::default())
            .unwrap();
        let rows = group_rows(&g, &r);
        let names: Vec<&str> = rows.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "Strategy",
                "Commits",
                "Engine flushes",
                "Records per flush",
                "Batch sizes (records × flushes)"
            ]
        );
        assert_eq!(rows[0].1, "adaptive");
        assert_eq!(rows[2].1, "70 (0.127 per commit)");
        assert_eq!(rows[3].1, "7.90");
        assert_eq!(rows[4].1, "1×1  8×69");

        g.learned_flush_ns = Some(7_480_000);
        g.gather_wait_ns = 483_910_000;
        let rows = group_rows(&g, &r);
        let names: Vec<&str> = rows.iter().map(|(n, _)| *n).collect();
        assert!(names.windows(2).all(|w| {
            let at = |n| GROUP_ROWS.iter().position(|x| *x == n).unwrap();
            at(w[0]) < at(w[1])
        }));
        assert!(rows.contains(&("Learned flush time", "7.48 ms".into())));
        assert!(rows.contains(&("Leaders' gather wait", "483.91 ms in total".into())));
    }
}
