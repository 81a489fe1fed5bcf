//! Why the commit advisor says what it says at a writer count (issue 35): the reason with
//! its numbers, and the comparison it rests on (each strategy that fits the budget against
//! the best one, and what was left out). Nothing here measures.

use std::fmt::Write as _;

use crate::analysis::{Advice, RatioCi, Recommendation, RecommendedAt, writer_count};

use super::units::fmt_ns;

/// A latency given in µs, in the unit that reads best.
pub(super) fn us(v: f64) -> String {
    fmt_ns(v * 1e3)
}

/// A ratio with its 95 % interval, or said to have none.
pub(super) fn ci(r: &RatioCi) -> String {
    match r.ci95 {
        Some((lo, hi)) => format!("{:.2}× [{lo:.2}, {hi:.2}]", r.ratio),
        None => format!("{:.2}× (no interval: fewer than 3 runs a side)", r.ratio),
    }
}

/// Why the advice says what it says at one writer count, with its numbers — and, when the
/// advice stopped early, the strategies it measured elsewhere but never at that count.
pub fn reason(advice: &Advice, at: &RecommendedAt) -> String {
    let mut out = verdict_reason(advice, at);
    if advice.stopped.is_some() {
        let mut missing: Vec<&str> = Vec::new();
        for p in &advice.points {
            let here = advice
                .point(&p.strategy, at.writers)
                .is_some_and(|q| q.throughput().is_some());
            if !here && !missing.contains(&p.strategy.as_str()) {
                missing.push(&p.strategy);
            }
        }
        if !missing.is_empty() {
            let _ = write!(
                out,
                " — the advice stopped before measuring {} at {}",
                missing.join(", "),
                writer_count(at.writers)
            );
        }
    }
    out
}

/// [`reason`] without the note on an early stop.
fn verdict_reason(advice: &Advice, at: &RecommendedAt) -> String {
    let w = at.writers;
    let budget = match (advice.budget_p99_us, at.budget_p99_us) {
        (Some(b), _) => format!("p99 within the budget of {}", us(b)),
        (None, Some(b)) => format!("p99 within 2× solo's ({})", us(b)),
        (None, None) => "no budget".to_string(),
    };
    match &at.verdict {
        Recommendation::One {
            strategy,
            vs_runner_up,
            ..
        } => {
            let Some(p) = advice.point(strategy, w) else {
                return format!("{strategy} at {}", writer_count(w));
            };
            let mut out = format!("{strategy}: ");
            match (strategy.as_str(), advice.point("solo", w)) {
                ("solo", _) => out.push_str("no coordination beats each writer syncing alone"),
                (_, Some(solo)) => {
                    if let Some(r) = advice.vs_solo(p) {
                        let _ = write!(out, "{} solo's commits/s", ci(&r));
                    }
                    if let (Some(a), Some(b)) = (p.p99(), solo.p99()) {
                        let _ = write!(out, ", p99 {} vs {}", us(a), us(b));
                    }
                }
                (_, None) => {}
            }
            let _ = write!(out, " at {} ({budget})", writer_count(w));
            // The runner-up's interval is solo's when solo is the runner-up: said once.
            let runner_up_is_solo = matches!(
                (vs_runner_up, advice.vs_solo(p)),
                (Some((_, ci)), Some(solo)) if solo.ci95 == Some(*ci)
            );
            if runner_up_is_solo {
                out.push_str("; solo is the next best that fits");
            } else if let Some((ratio, (lo, hi))) = vs_runner_up {
                // Named: the reader checks the interval against that strategy's row.
                let next = advice
                    .against_best(at)
                    .into_iter()
                    .next()
                    .map(|a| format!(" ({})", a.strategy))
                    .unwrap_or_default();
                let _ = write!(
                    out,
                    "; {ratio:.2}× [{lo:.2}, {hi:.2}] the next best that fits{next}"
                );
            } else {
                out.push_str("; the only strategy that fits");
            }
            out
        }
        Recommendation::Equivalent { strategies } => {
            let best = strategies
                .first()
                .and_then(|s| advice.point(s, w))
                .and_then(|p| p.throughput().map(|t| (p, t)));
            // With fewer than 3 runs a side there is no interval to cite.
            let intervals = advice.against_best(at).iter().any(|a| a.ci95.is_some());
            let why = if intervals {
                "the 95 % interval of each one's commits/s over the best's includes 1"
            } else {
                "fewer than 3 runs each, so no interval tells them apart"
            };
            let mut out = format!(
                "{} cannot be told apart at {} ({budget}): {why}",
                strategies.join(", "),
                writer_count(w)
            );
            if let Some((p, t)) = best {
                let _ = write!(out, "; best measured {} at {t:.0} commits/s", p.strategy);
            }
            out
        }
        Recommendation::Nothing { why } => why.clone(),
    }
}

/// The comparison a recommendation rests on: each strategy that fits the budget against
/// the best that does, then what was left out and why.
pub(super) fn evidence_text(out: &mut String, advice: &Advice, at: &RecommendedAt) {
    let best = match &at.verdict {
        Recommendation::One { strategy, .. } => strategy,
        Recommendation::Equivalent { strategies } => match strategies.first() {
            Some(s) => s,
            None => return,
        },
        Recommendation::Nothing { .. } => return,
    };
    let against = advice.against_best(at);
    if !against.is_empty() {
        let _ = writeln!(
            out,
            "  commits/s of each strategy that fits, over {best}'s (95 % interval; told apart \
             when it excludes 1):"
        );
        let width = against.iter().map(|a| a.strategy.len()).max().unwrap_or(0);
        for a in &against {
            let r = RatioCi {
                ratio: a.ratio,
                ci95: a.ci95,
            };
            let verdict = if a.told_apart {
                "lower"
            } else {
                "not told apart"
            };
            let _ = writeln!(out, "    {:<width$}  {}  {verdict}", a.strategy, ci(&r));
        }
    }
    let left: Vec<String> = advice
        .left_out(at)
        .iter()
        .map(|p| match p.durable {
            Some(false) => format!("{} (not durable)", p.strategy),
            _ => format!("{} (p99 {})", p.strategy, p.p99().map_or("—".into(), us)),
        })
        .collect();
    if !left.is_empty() {
        let _ = writeln!(
            out,
            "  left out at {}: {}",
            writer_count(at.writers),
            left.join(", ")
        );
    }
}

/// A progress line's account of the run just done: its label, its writers and about how
/// long the rest takes — `leader ×16 (16 writers) · about 2 min 10 s left`.
pub fn progress_step_text(
    label: &str,
    writers: Option<u32>,
    left: Option<std::time::Duration>,
) -> String {
    let writers = match writers {
        Some(1) => " (1 writer)".to_string(),
        Some(n) => format!(" ({n} writers)"),
        None => String::new(),
    };
    let left = left
        .map(|d| format!(" · {}", super::fmt_left(d)))
        .unwrap_or_default();
    format!("{label}{writers}{left}")
}

#[cfg(test)]
mod tests {
    use crate::analysis::{Advice, AdviceInputs, AdvicePoint};

    fn point(strategy: &str, writers: u32, cps: f64) -> AdvicePoint {
        AdvicePoint {
            strategy: strategy.into(),
            writers,
            commits_per_sec: vec![cps],
            p99_us: vec![1000.0],
            ..AdvicePoint::default()
        }
    }

    #[test]
    fn an_early_stop_names_what_it_never_measured_and_one_run_cites_no_interval() {
        // Stopped after solo, leader and adaptive at 1 writer and solo at 16: one run each.
        let advice = Advice::build(AdviceInputs {
            writers: 16,
            points: vec![
                point("solo", 1, 900.0),
                point("leader", 1, 950.0),
                point("adaptive", 1, 920.0),
                point("solo", 16, 5000.0),
            ],
            stopped: Some("cancelled".into()),
            ..AdviceInputs::default()
        });
        let at16 = super::reason(&advice, &advice.recommended);
        assert!(
            at16.ends_with(" — the advice stopped before measuring leader, adaptive at 16 writers"),
            "{at16}"
        );
        let one = advice.by_writers.iter().find(|a| a.writers == 1).unwrap();
        let at1 = super::reason(&advice, one);
        assert!(
            at1.contains("cannot be told apart at 1 writer")
                && at1.contains("fewer than 3 runs each, so no interval tells them apart"),
            "{at1}"
        );
        assert!(!at1.contains("95 % interval"), "{at1}");
        assert!(!at1.contains("stopped before"), "{at1}");
    }
}
