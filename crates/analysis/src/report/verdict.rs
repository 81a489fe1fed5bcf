//! A metric's verdict in words, with what it rests on: the ratio and its interval, the
//! p-value, the run counts, and how many runs a 5 % change would need. One wording for every
//! front end (CLI table, Markdown, CSV, image, window); never "unchanged": a comparison that
//! finds no significant difference says how wide its interval is.

use crate::analysis::{MAX_RUNS_NEEDED, MIN_RUNS, MetricComparison, Verdict};

/// A ratio with three significant digits and `×`: `0.00470×`, `1.05×`, `216×`.
pub fn fmt_ratio(r: f64) -> String {
    format!("{}×", sig3(r))
}

/// Three significant digits, never in exponent form.
fn sig3(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = (2 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{v:.decimals$}")
}

/// `0.00470× [0.00420, 0.00526]`, or the ratio alone without an interval; `-` without a
/// ratio.
pub fn ratio_text(m: &MetricComparison) -> String {
    ratio_ci_text(m.ratio, m.ratio_ci95)
}

/// A ratio and its interval: `0.00470× [0.00420, 0.00526]`, the ratio alone without an
/// interval, `-` without a ratio (a gate check, a trend's change point).
pub fn ratio_ci_text(ratio: Option<f64>, ci: Option<(f64, f64)>) -> String {
    match (ratio, ci) {
        (Some(r), Some((low, high))) => format!("{} [{}, {}]", fmt_ratio(r), sig3(low), sig3(high)),
        (Some(r), None) => fmt_ratio(r),
        _ => "-".into(),
    }
}

/// The change in % from the ratio, signed: `-99.5%`, `+5.2%`.
pub fn change_text(m: &MetricComparison) -> String {
    match m.change_pct() {
        Some(c) if c.abs() >= 0.05 || c == 0.0 => format!("{c:+.1}%"),
        Some(c) => format!("{c:+.2}%"),
        None => "-".into(),
    }
}

/// A p-value: `p=0.0123`, `p<0.0001`.
pub fn fmt_p(p: f64) -> String {
    if p < 0.0001 {
        "p<0.0001".into()
    } else {
        format!("p={p:.4}")
    }
}

fn runs(m: &MetricComparison) -> (usize, usize) {
    (
        m.baseline.as_ref().map_or(0, |s| s.n),
        m.candidate.as_ref().map_or(0, |s| s.n),
    )
}

/// The verdict with what it rests on:
/// `worse (p<0.0001)`; `no significant difference (n=3, CI 0.91–1.12)`;
/// `too few runs to tell (n=1 and 3; 3 per side needed)`; `no ratio: the candidate is 0`.
pub fn verdict_text(m: &MetricComparison) -> String {
    let (nb, nc) = runs(m);
    let n = if nb == nc {
        format!("n={nb}")
    } else {
        format!("n={nb} and {nc}")
    };
    match m.verdict {
        Verdict::Better | Verdict::Worse | Verdict::BelowMinChange => match m.p_value {
            Some(p) => format!("{} ({})", m.verdict.describe(), fmt_p(p)),
            None => m.verdict.describe().to_string(),
        },
        Verdict::NoSignificantDifference => match m.ratio_ci95 {
            Some((low, high)) => format!(
                "no significant difference ({n}, CI {}–{})",
                sig3(low),
                sig3(high)
            ),
            None => format!("no significant difference ({n})"),
        },
        Verdict::TooFewRuns => format!("too few runs to tell ({n}; {MIN_RUNS} per side needed)"),
        Verdict::NoRatio => {
            let zero = |v: Option<f64>| v.is_some_and(|x| x <= 0.0);
            let side = match (zero(m.baseline_value), zero(m.candidate_value)) {
                (true, true) => "both sides are 0",
                (true, false) => "the baseline is 0",
                (false, true) => "the candidate is 0",
                // The headline is positive but a run's value is 0.
                (false, false) => "a run is 0",
            };
            format!("no ratio: {side}")
        }
        Verdict::Missing | Verdict::NotComparable => m.verdict.describe().to_string(),
    }
}

/// [`verdict_text`] for a table whose change column already shows the interval: `no
/// significant difference (n=3)` without it.
pub fn verdict_brief(m: &MetricComparison) -> String {
    match m.verdict {
        Verdict::NoSignificantDifference => {
            let (nb, nc) = runs(m);
            if nb == nc {
                format!("no significant difference (n={nb})")
            } else {
                format!("no significant difference (n={nb} and {nc})")
            }
        }
        _ => verdict_text(m),
    }
}

/// `to see a 5 % change in sync p99 here you need 9 runs per side`, when the spread was
/// measurable.
pub fn power_text(m: &MetricComparison) -> Option<String> {
    let needed = m.runs_needed_for_5pct?;
    let runs = if needed > MAX_RUNS_NEEDED {
        format!("more than {MAX_RUNS_NEEDED} runs")
    } else {
        format!("{needed} runs")
    };
    Some(format!(
        "to see a 5 % change in {} here you need {runs} per side",
        m.label
    ))
}

/// `9`, `>10000` or `-`: the runs per side a 5 % change needs, for table cells.
pub fn runs_needed_cell(m: &MetricComparison) -> String {
    match m.runs_needed_for_5pct {
        Some(n) if n > MAX_RUNS_NEEDED => format!(">{MAX_RUNS_NEEDED}"),
        Some(n) => n.to_string(),
        None => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_keep_three_significant_digits() {
        assert_eq!(fmt_ratio(0.004700278844307293), "0.00470×");
        assert_eq!(fmt_ratio(1.0426), "1.04×");
        assert_eq!(fmt_ratio(216.4), "216×");
        assert_eq!(fmt_ratio(16.29), "16.3×");
        assert_eq!(sig3(0.0000123456), "0.0000123");
    }

    #[test]
    fn p_values_have_a_floor() {
        assert_eq!(fmt_p(0.00001), "p<0.0001");
        assert_eq!(fmt_p(0.0462), "p=0.0462");
    }
}
