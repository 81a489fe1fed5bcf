//! The commit advisor's answer in words (issue 35): the text `advise` prints, the Markdown
//! of `--md`, the `--json` object (the stored [`Advice`] with each recommendation's reason).
//! One wording for every front end; nothing here measures.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::analysis::{
    Advice, AdvicePoint, BUSY_ABOVE, ImplausibleSync, OVERLAPPING_BELOW, SERIALIZED_ABOVE,
    SyncClass, SyncFit, WaitNote, writer_count,
};

pub use super::advice_reason::reason;
use super::advice_reason::{ci, evidence_text, us};
use crate::spec::format_size as fmt_size;

/// A point's durability in words.
pub fn durability_text(p: &AdvicePoint) -> &'static str {
    match p.durable {
        _ if p.acks_before_durable => "NOT DURABLE: acknowledges before the flush",
        Some(true) => "crash-tested: no loss",
        Some(false) => "LOST ACKNOWLEDGED RECORDS in a crash test",
        None => "not crash-tested",
    }
}

/// The machine was busy before some runs, in words.
pub fn busy_text(advice: &Advice) -> Option<String> {
    let b = advice.busy.as_ref()?;
    Some(format!(
        "before {} of {} runs other work used more than {:.0} % of the CPUs (up to {:.0} %): \
         another benchmark or job ran beside the advice, and its figures are suspect; run it \
         again on a quiet machine",
        b.runs,
        b.of,
        BUSY_ABOVE * 100.0,
        b.max * 100.0
    ))
}

/// The class in words.
pub fn sync_class_text(class: SyncClass) -> &'static str {
    match class {
        SyncClass::Overlapping => "overlapping",
        SyncClass::Serialized => "serialized",
        SyncClass::Partial => "partial",
    }
}

/// What an implausibly fast sync means.
pub fn implausible_text(why: &ImplausibleSync) -> String {
    match why {
        ImplausibleSync::MemoryFs { fs_type } => format!(
            "{fs_type} keeps files in memory: an fsync there makes nothing durable, so these \
             figures say nothing about a disk's commits"
        ),
        ImplausibleSync::TooFast { p50_us } => format!(
            "an fsync of a changed 4 KiB block took {} at the median, faster than any device \
             can make it durable: a volatile write cache that ignores flushes, or a \
             write-back cache without flush between the filesystem and the medium \
             (pg_test_fsync's \"your drive may be lying\"); the strategies' figures are \
             then not what durable commits cost",
            us(*p50_us)
        ),
    }
}

/// What a waiting strategy did against leader, in one sentence.
pub fn wait_text(n: &WaitNote) -> String {
    let lat = if n.p99_us > n.leader_p99_us {
        "raises p99"
    } else {
        "lowers p99"
    };
    let gain = if n.buys_throughput {
        "and buys throughput"
    } else if n.costs_throughput {
        "and costs throughput"
    } else {
        "and buys no throughput told apart from noise"
    };
    format!(
        "{}: {} leader's commits/s, p99 {} vs {} — its wait {lat} {gain} here",
        n.strategy,
        ci(&n.vs_leader),
        us(n.p99_us),
        us(n.leader_p99_us)
    )
}

fn point_line(advice: &Advice, p: &AdvicePoint, recommended: bool) -> String {
    let mark = if recommended { "*" } else { " " };
    let cps = p.throughput().map_or("—".into(), |t| format!("{t:.0}/s"));
    let vs = match (p.strategy.as_str(), advice.vs_solo(p)) {
        ("solo", _) | (_, None) => String::new(),
        (_, Some(r)) => format!("{} solo", ci(&r)),
    };
    let lat = |v: Option<f64>| v.map_or("—".into(), us);
    let flushes = p
        .flushes_per_commit
        .map_or("—".into(), |f| format!("{f:.3}"));
    let cpu = p.cpu_us_per_commit.map_or("—".into(), us);
    let durable = durability_text(p);
    format!(
        " {mark} {:<12} {cps:>9} {vs:<30} p50 {:>9} p99 {:>9} p99.9 {:>9}  {flushes:>6} flushes  {cpu:>9} CPU  {durable}",
        p.strategy,
        lat(p.p50()),
        lat(p.p99()),
        lat(p.p999()),
    )
}

fn fit_line(name: &str, fit: &SyncFit) -> String {
    let interval = fit.factor_ci95.map_or(String::new(), |(lo, hi)| {
        format!(" [{}, {}]", factor_text(lo), factor_text(hi))
    });
    let mut ks: Vec<u32> = fit.points.iter().map(|p| p.k).collect();
    ks.sort_unstable();
    ks.dedup();
    let per_k: Vec<String> = ks
        .iter()
        .map(|&k| {
            let lats: Vec<f64> = fit
                .points
                .iter()
                .filter(|p| p.k == k)
                .map(|p| p.sync_p50_us)
                .collect();
            let mid = lats.iter().sum::<f64>() / lats.len().max(1) as f64;
            format!("k={k} {}", us(mid))
        })
        .collect();
    let unsettled = match (fit.settled, fit.factor_ci95) {
        (true, _) => String::new(),
        (false, Some((lo, hi))) => format!(
            " (NOT SETTLED: the interval spans {} to {}; the classes part at \
             {OVERLAPPING_BELOW} and {SERIALIZED_ABOVE})",
            sync_class_text(SyncClass::of(lo)),
            sync_class_text(SyncClass::of(hi))
        ),
        (false, None) => " (NOT SETTLED: too few points for an interval)".to_string(),
    };
    format!(
        "  {name:<11} {}, factor {}{interval}{unsettled}   {}",
        sync_class_text(fit.class),
        factor_text(fit.factor),
        per_k.join(" · ")
    )
}

/// A sync-parallelism factor to two decimals, or as many more as it takes for the printed
/// figure to be in the factor's own class (0.2475 is "0.247", below 0.25, not "0.25").
fn factor_text(f: f64) -> String {
    (2..=6)
        .map(|d| format!("{:.d$}", f + 0.0))
        .find(|t| {
            t.parse::<f64>()
                .is_ok_and(|v| SyncClass::of(v) == SyncClass::of(f))
        })
        .unwrap_or_else(|| format!("{f}"))
}

/// The text `advise` and `advise show` print.
pub fn advice_text(advice: &Advice) -> String {
    let mut out = String::new();
    let fs = fs_words(advice);
    let _ = writeln!(
        out,
        "Commit advice for {} ({fs}){}",
        crate::spec::shown_path(std::path::Path::new(&advice.target)),
        if advice.quick { ", quick" } else { "" }
    );
    if let Some(why) = &advice.stopped {
        let _ = writeln!(
            out,
            "STOPPED EARLY ({why}): judged on the runs made until then"
        );
    }
    if let Some(busy) = busy_text(advice) {
        let _ = writeln!(out, "THE MACHINE WAS BUSY: {busy}");
    }
    let _ = writeln!(
        out,
        "\nSync parallelism (k threads each writing 4 KiB and fsyncing; per-fsync p50 against k):"
    );
    match (&advice.sync_parallelism, advice.raw_device) {
        (Some(f), _) => {
            let _ = writeln!(out, "{}", fit_line("shared file", f));
        }
        (None, false) => {
            let _ = writeln!(out, "  shared file: not measured");
        }
        // A bare device is one file: each thread has its own region of it.
        (None, true) => {}
    }
    let layout = if advice.raw_device {
        "own regions"
    } else {
        "own files"
    };
    match &advice.sync_parallelism_own_files {
        Some(f) => {
            let _ = writeln!(out, "{}", fit_line(layout, f));
        }
        None => {
            let _ = writeln!(out, "  {layout}: not measured");
        }
    }
    duckdb_line(&mut out, advice);
    flush_and_methods(&mut out, advice);
    if advice.raw_device && advice.points.is_empty() {
        let _ = writeln!(
            out,
            "\nGroup-commit strategies: not measured — {}",
            crate::analysis::RAW_DEVICE_NO_STRATEGIES
        );
        return out;
    }
    strategies_text(&mut out, advice);
    out
}

/// How the target is named in a heading: its filesystem type, or a bare block device.
pub(crate) fn fs_words(advice: &Advice) -> &str {
    if advice.raw_device {
        "bare block device"
    } else {
        advice.fs_type.as_deref().unwrap_or("unknown filesystem")
    }
}

/// duckdb's rule beside the measured class (none for a bare device: it goes by the
/// filesystem type).
fn duckdb_line(out: &mut String, advice: &Advice) {
    if advice.raw_device {
        let _ = writeln!(
            out,
            "  duckdb's rule: it goes by the filesystem type, and a bare block device has none"
        );
        return;
    }
    let fs = fs_words(advice);
    let rule = &advice.duckdb_rule;
    let agrees = match (rule.agrees, &advice.sync_parallelism) {
        (Some(true), _) => "agrees with the measurement",
        (Some(false), _) => "DISAGREES with the measurement",
        (None, Some(_)) => "the measurement did not settle on a class to check it against",
        (None, None) => "nothing measured to check it",
    };
    let _ = writeln!(
        out,
        "  duckdb's rule for {fs} ({}): {} — {agrees}",
        if rule.network { "network" } else { "local" },
        sync_class_text(rule.guess)
    );
}

/// The traced cache flushes, an implausibly fast sync, and the sync methods.
fn flush_and_methods(out: &mut String, advice: &Advice) {
    match &advice.flush_lat_us {
        Some(f) => {
            let _ = writeln!(
                out,
                "\nCache flushes (block layer, traced): p50 {}, p99 {} ({} runs)",
                us(f.p50),
                us(f.p99),
                f.run_ids.len()
            );
        }
        None => {
            let _ = writeln!(
                out,
                "\nCache flushes: none traced (no block device below the target, or the kernel \
                 tracer was off: it needs root and tracefs)"
            );
        }
    }
    if let Some(why) = advice.implausible_sync() {
        let _ = writeln!(out, "\nIMPLAUSIBLY FAST SYNC: {}", implausible_text(&why));
    }
    if !advice.methods.is_empty() {
        let _ = writeln!(
            out,
            "\nSync methods (1 writer, 4 KiB writes; durable writes/s, write+sync p50/p99; \
             fsync_empty: syncs/s and sync p50/p99 with nothing changed since the last sync):"
        );
        for m in &advice.methods {
            let rate = crate::analysis::geometric_ci(&m.per_sec)
                .map_or("—".into(), |(g, _)| format!("{g:.0}/s"));
            let mut vs = m
                .vs_fdatasync
                .map_or(String::new(), |r| format!("{} fdatasync", ci(&r)));
            if let Some(r) = m.vs_fsync {
                vs = format!("{vs}, {} fsync after a one-block change", ci(&r));
            }
            let lat = |v: Option<f64>| v.map_or("—".into(), us);
            let _ = writeln!(
                out,
                "  {:<26} {rate:>9}  p50 {:>9} p99 {:>9}  {vs}",
                m.method,
                lat(m.p50_us),
                lat(m.p99_us)
            );
        }
    }
}

/// The strategies at every writer count, the frontier, the waiting strategies and the
/// recommendations.
fn strategies_text(out: &mut String, advice: &Advice) {
    let _ = writeln!(
        out,
        "\nStrategies on a shared {} log of {} records, fdatasync (commits/s: geometric mean of the runs; commit latency; device flushes and process CPU per commit; * recommended):",
        advice.log,
        fmt_size(advice.record_size)
    );
    for at in &advice.by_writers {
        let _ = writeln!(out, " {}:", writer_count(at.writers));
        for p in advice.points.iter().filter(|p| p.writers == at.writers) {
            let recommended = at.strategy() == Some(p.strategy.as_str());
            let _ = writeln!(out, "{}", point_line(advice, p, recommended));
        }
    }
    let _ = writeln!(
        out,
        "\nFrontier (no other strategy has both more commits/s and a lower p99):"
    );
    for f in &advice.frontier {
        let _ = writeln!(
            out,
            "  {}: {}",
            writer_count(f.writers),
            f.strategies.join(", ")
        );
    }
    let notes = advice.wait_notes();
    if !notes.is_empty() {
        let _ = writeln!(
            out,
            "\nWaiting to gather followers, against leader (no wait) at {}:",
            writer_count(advice.writers)
        );
        for n in &notes {
            let _ = writeln!(out, "  {}", wait_text(n));
        }
    }
    let _ = writeln!(
        out,
        "\nRecommended at {}: {}",
        writer_count(advice.recommended.writers),
        reason(advice, &advice.recommended)
    );
    evidence_text(out, advice, &advice.recommended);
    for at in advice
        .by_writers
        .iter()
        .filter(|a| a.writers != advice.writers)
    {
        let _ = writeln!(
            out,
            "  at {}: {}",
            writer_count(at.writers),
            reason(advice, at)
        );
    }
}

/// The Markdown of an advice (the text in a fenced block under a heading, and the
/// recommendation as a sentence), for pasting into an issue or a review.
pub fn advice_markdown(advice: &Advice) -> String {
    let text = advice_text(advice);
    // A fence longer than any run of backticks in the text, so no stored name closes it.
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let headline = if advice.raw_device && advice.points.is_empty() {
        format!(
            "**Group-commit strategies:** not measured — {}",
            crate::analysis::RAW_DEVICE_NO_STRATEGIES
        )
    } else {
        format!(
            "**Recommended at {}:** {}",
            writer_count(advice.recommended.writers),
            super::compare::md_escape(&reason(advice, &advice.recommended)),
        )
    };
    format!(
        "## Commit advice: {} ({})\n\n{headline}\n\n{fence}text\n{text}{fence}\n",
        super::compare::md_escape(&advice.target),
        super::compare::md_escape(fs_words(advice)),
    )
}

/// The `advice` object of `advise --json`: the stored answer with each recommendation's
/// `reason` and the strategies `not_crash_tested`.
pub fn advice_json(advice: &Advice) -> Value {
    let mut value = serde_json::to_value(advice).unwrap_or(Value::Null);
    if let Some(obj) = value.as_object_mut() {
        if let Some(r) = obj.get_mut("recommended").and_then(Value::as_object_mut) {
            r.insert("reason".into(), json!(reason(advice, &advice.recommended)));
            r.insert(
                "vs_best".into(),
                json!(advice.against_best(&advice.recommended)),
            );
        }
        if let Some(list) = obj.get_mut("by_writers").and_then(Value::as_array_mut) {
            for (v, at) in list.iter_mut().zip(&advice.by_writers) {
                if let Some(o) = v.as_object_mut() {
                    o.insert("reason".into(), json!(reason(advice, at)));
                    o.insert("vs_best".into(), json!(advice.against_best(at)));
                }
            }
        }
        obj.insert("not_crash_tested".into(), json!(advice.not_crash_tested()));
        let waits: Vec<Value> = advice
            .wait_notes()
            .iter()
            .map(|n| {
                let mut v = json!(n);
                v["text"] = json!(wait_text(n));
                v
            })
            .collect();
        obj.insert("wait_notes".into(), Value::Array(waits));
        obj.insert(
            "implausible_sync".into(),
            advice
                .implausible_sync()
                .map_or(Value::Null, |why| json!(implausible_text(&why))),
        );
    }
    value
}

/// One CSV row per strategy and writer count: the point's figures (medians of the runs'
/// percentiles, the geometric mean of their commits/s), its durability verdict, its runs.
pub fn advice_csv(advice: &Advice) -> String {
    if advice.raw_device && advice.points.is_empty() {
        return methods_csv(advice);
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "strategy",
        "writers",
        "commits_per_sec",
        "p50_us",
        "p99_us",
        "p999_us",
        "flushes_per_commit",
        "cpu_us_per_commit",
        "durable",
        "run_ids",
    ]);
    let num = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.3}"));
    for p in &advice.points {
        let ids: Vec<String> = p.run_ids.iter().map(i64::to_string).collect();
        let _ = w.write_record([
            super::raw::csv_text(&p.strategy),
            p.writers.to_string(),
            num(p.throughput()),
            num(p.p50()),
            num(p.p99()),
            num(p.p999()),
            num(p.flushes_per_commit),
            num(p.cpu_us_per_commit),
            p.durable.map_or(String::new(), |d| d.to_string()),
            ids.join(" "),
        ]);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// A bare device's advice as CSV: it has no strategies, so one row per sync method — its
/// rate (the geometric mean of the runs), the medians of its runs' p50 and p99, its ratios
/// over fdatasync (and, for `fsync_empty`, over fsync) with their intervals, its runs.
fn methods_csv(advice: &Advice) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "method",
        "per_sec",
        "p50_us",
        "p99_us",
        "vs_fdatasync",
        "vs_fdatasync_low",
        "vs_fdatasync_high",
        "vs_fsync",
        "vs_fsync_low",
        "vs_fsync_high",
        "run_ids",
    ]);
    let num = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.3}"));
    let ratio = |r: Option<crate::analysis::RatioCi>| {
        [
            num(r.map(|r| r.ratio)),
            num(r.and_then(|r| r.ci95).map(|c| c.0)),
            num(r.and_then(|r| r.ci95).map(|c| c.1)),
        ]
    };
    for m in &advice.methods {
        let ids: Vec<String> = m.run_ids.iter().map(i64::to_string).collect();
        let mut row = vec![
            super::raw::csv_text(&m.method),
            num(crate::analysis::geometric_ci(&m.per_sec).map(|(g, _)| g)),
            num(m.p50_us),
            num(m.p99_us),
        ];
        row.extend(ratio(m.vs_fdatasync));
        row.extend(ratio(m.vs_fsync));
        row.push(ids.join(" "));
        let _ = w.write_record(&row);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::factor_text;

    /// A strategy or method name from an imported advice cannot be a spreadsheet formula.
    #[test]
    fn csv_names_are_guarded_against_formulas() {
        use crate::analysis::{Advice, AdviceInputs, AdvicePoint};
        let advice = Advice::build(AdviceInputs {
            writers: 16,
            points: vec![AdvicePoint {
                strategy: "=cmd|' /C calc'!A0".into(),
                writers: 16,
                commits_per_sec: vec![10.0],
                p99_us: vec![5.0],
                ..AdvicePoint::default()
            }],
            ..AdviceInputs::default()
        });
        let csv = super::advice_csv(&advice);
        let row = csv.lines().nth(1).unwrap();
        assert!(row.starts_with("'=cmd"), "{row}");
    }

    #[test]
    fn a_factor_is_printed_in_its_own_class() {
        assert_eq!(factor_text(0.4213), "0.42");
        assert_eq!(factor_text(0.2475), "0.247");
        assert_eq!(factor_text(0.24999), "0.24999");
        assert_eq!(factor_text(0.25), "0.25");
        assert_eq!(factor_text(0.7504), "0.7504");
        assert_eq!(factor_text(-0.001), "-0.00");
    }
}
