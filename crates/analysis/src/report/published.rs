//! The seed thread's published figures in the text and Markdown reports: the figures beside
//! what each side measured, the published before → after ratio beside the measured one, the
//! scales the runs ran at, or why the figures are left out.

use std::fmt::Write as _;

use super::units::{md_escape, num};
use crate::analysis::{Comparison, published_ratios};

/// Why the preset's published figures are not shown, when a run was edited from the
/// preset: `The published figures of preset fsync-methods are left out: run 12 ran another
/// workload than the preset's (sync: fdatasync → none), and they describe the preset's.`
pub fn published_withheld_text(c: &Comparison) -> Option<String> {
    let w = c.published_withheld.as_ref()?;
    const SHOWN: usize = 4;
    let mut edits: Vec<String> = w.edits.iter().take(SHOWN).map(|e| e.to_string()).collect();
    if w.edits.len() > SHOWN {
        edits.push(format!("{} more", w.edits.len() - SHOWN));
    }
    Some(format!(
        "The published figures of preset {} are left out: run {} ran another workload than \
         the preset's ({}), and they describe the preset's.",
        w.preset,
        w.run_id,
        edits.join("; ")
    ))
}

/// What a scaled replay can be held to: `These runs were scaled (×0.05 of the published
/// workload): their absolute figures are not the published ones; compare the ratios after /
/// before.` None at full scale.
pub fn published_scaled_text(c: &Comparison) -> Option<String> {
    if c.published.is_empty() || c.preset_scales.is_empty() {
        return None;
    }
    let scales: Vec<String> = c.preset_scales.iter().map(|s| format!("×{s}")).collect();
    Some(format!(
        "These runs were scaled ({} of the published workload): their absolute figures are \
         not the published ones; compare the ratios after / before.",
        scales.join(", ")
    ))
}

/// The text report's published section.
pub(super) fn published_text(c: &Comparison, out: &mut String) {
    if let Some(said) = published_withheld_text(c) {
        let _ = writeln!(out, "\n{said}");
    }
    if c.published.is_empty() {
        return;
    }
    let _ = writeln!(out, "\npublished in the seed thread vs measured here:");
    if let Some(said) = published_scaled_text(c) {
        let _ = writeln!(out, "  {said}");
    }
    let shown = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| num(v).trim().to_string());
    for p in &c.published {
        let _ = writeln!(
            out,
            "  {:<8} {:<14} published {:>10} {:<6} measured {} / {}   ({})",
            p.figure.side,
            p.figure.metric,
            num(p.figure.value).trim(),
            p.figure.unit,
            shown(p.baseline),
            shown(p.candidate),
            p.figure.as_published
        );
    }
    for r in published_ratios(c) {
        let measured = r
            .measured
            .map_or_else(|| "-".into(), |m| format!("×{m:.2}"));
        let _ = writeln!(
            out,
            "  {:<23} published after / before ×{:.2}, measured candidate / baseline {measured}",
            r.metric, r.published
        );
    }
}

/// The Markdown report's published section.
pub(super) fn published_markdown(c: &Comparison, out: &mut String) {
    if let Some(said) = published_withheld_text(c) {
        let _ = writeln!(
            out,
            "\n## Published in the seed thread\n\n{}",
            md_escape(&said)
        );
    }
    if c.published.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## Published in the seed thread\n");
    if let Some(said) = published_scaled_text(c) {
        let _ = writeln!(out, "{}\n", md_escape(&said));
    }
    let _ = writeln!(
        out,
        "| side | metric | published | measured baseline | measured candidate | as published |\n|---|---|---:|---:|---:|---|"
    );
    for p in &c.published {
        let v = |x: Option<f64>| x.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "| {} | {} | {} {} | {} | {} | `{}` |",
            p.figure.side,
            p.figure.metric,
            p.figure.value,
            p.figure.unit,
            v(p.baseline),
            v(p.candidate),
            md_escape(&p.figure.as_published)
        );
    }
    let ratios = published_ratios(c);
    if !ratios.is_empty() {
        let _ = writeln!(
            out,
            "\n| metric | published after / before | measured candidate / baseline |\n|---|---:|---:|"
        );
        for r in ratios {
            let measured = r
                .measured
                .map_or_else(|| "-".into(), |m| format!("×{m:.2}"));
            let _ = writeln!(out, "| {} | ×{:.2} | {measured} |", r.metric, r.published);
        }
    }
}
