//! The regression gate's outputs: a text block under the comparison table and the `gate`
//! object of `compare --json`. Every verdict comes from [`crate::analysis::gate`].

use std::fmt::Write as _;

use super::compare::num;
use crate::analysis::{Comparison, GateCheck, GateOutcome, GateStatus};

fn where_at(o: &GateOutcome, c: &GateCheck) -> String {
    match (c.point, &o.sweep_field) {
        (Some(v), Some(field)) => format!("{} at {field}={v}", c.key),
        _ => c.key.clone(),
    }
}

use super::verdict::fmt_p as p_text;

/// `0.00470× [0.00420, 0.00526] -99.5%`, or `-` without a ratio.
fn check_ratio(c: &GateCheck) -> String {
    let text = super::verdict::ratio_ci_text(c.ratio, c.ratio_ci95);
    match (c.ratio, c.ratio_ci95) {
        (Some(r), Some(_)) => format!("{text} {:+.1}%", (r - 1.0) * 100.0),
        _ => text,
    }
}

/// The rule in words: `worse=iops,sync_p99_us, minimum change 5%`.
fn rule_text(o: &GateOutcome) -> String {
    let mut s = format!("worse={}", o.rule.metrics.join(","));
    let min = o
        .rule
        .min_change_pct
        .unwrap_or(crate::analysis::DEFAULT_MIN_CHANGE_PCT);
    let _ = write!(s, ", minimum change {min}%");
    s
}

/// The gate as text: one line per checked metric (values, the comparison's ratio with its
/// interval and p-value, the gate's verdict), then `PASS`, `FAIL` naming the worse metrics, or
/// `UNDECIDED` with the reasons.
pub fn gate_text(c: &Comparison, o: &GateOutcome) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "regression gate ({}):", rule_text(o));
    let column = |name: &str| name.chars().take(10).collect::<String>();
    let _ = writeln!(
        out,
        "  {:<30} {:>10} {:>10}  {:<26} {:<9} verdict",
        "metric",
        column(&c.baseline.name),
        column(&c.candidate.name),
        "ratio [95% CI]",
        "p"
    );
    let value = |v: Option<f64>| v.map_or_else(|| format!("{:>10}", "-"), num);
    for check in &o.checks {
        let ratio = check_ratio(check);
        let p = check.p_value.map(p_text).unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:<30} {} {}  {ratio:<26} {p:<9} {}",
            where_at(o, check),
            value(check.baseline_value),
            value(check.candidate_value),
            check.verdict.describe()
        );
    }
    let (base, cand) = (&c.baseline.name, &c.candidate.name);
    match o.status {
        GateStatus::Pass => {
            let _ = writeln!(
                out,
                "PASS: no chosen metric of {cand} is significantly worse than {base}"
            );
        }
        GateStatus::Fail => {
            let worse: Vec<String> = o
                .worse()
                .iter()
                .map(|w| {
                    let p = w.p_value.map(p_text).unwrap_or_default();
                    format!("{} ({}, {p})", where_at(o, w), check_ratio(w))
                })
                .collect();
            let _ = writeln!(
                out,
                "FAIL: {cand} is significantly worse than {base} on: {}",
                worse.join(", ")
            );
        }
        GateStatus::Undecided => {
            let _ = writeln!(
                out,
                "UNDECIDED: nothing chosen got significantly worse, but the gate could not check \
                 everything it was asked to: {}",
                o.undecided_because.join("; ")
            );
        }
    }
    out
}

/// The comparison as JSON (the shape of [`super::compare_json`]) with the gate's outcome
/// under `gate`: null when no gate was asked for, so `compare --json` has one shape.
pub fn compare_gate_json(
    c: &Comparison,
    o: Option<&GateOutcome>,
) -> Result<String, serde_json::Error> {
    let mut value = serde_json::to_value(c)?;
    if let serde_json::Value::Object(map) = &mut value {
        map.insert("gate".into(), serde_json::to_value(o)?);
        map.insert("schema_version".into(), super::JSON_SCHEMA_VERSION.into());
    }
    serde_json::to_string_pretty(&value)
}
