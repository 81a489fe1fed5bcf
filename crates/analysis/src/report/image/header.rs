//! The top of the report page: title, subtitle with run counts, the legend, what differs
//! between the sides (and what is the same), and the warnings.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::charts::DrawResult;
use super::style::{
    ALERT, BASE, CAND, CAND_TEXT, INK, MUTED, PAD, Scale, code_spans, fit, text_width, wrap_items,
    wrap_words,
};
use crate::analysis::Comparison;

/// One coloured piece of a text line.
pub(super) type Seg = (String, RGBColor);

/// The arrow between baseline and candidate values (drawn in the monospace font, which
/// has the glyph).
const ARROW: &str = " → ";

fn ids(ids: &[i64]) -> String {
    let mut shown: Vec<String> = ids.iter().take(8).map(|i| format!("#{i}")).collect();
    if ids.len() > 8 {
        shown.push("…".into());
    }
    shown.join(" ")
}

fn runs(n: usize) -> String {
    if n == 1 {
        "1 run".into()
    } else {
        format!("{n} runs")
    }
}

/// Draws the title, the subtitle with run counts and the page legend.
pub(super) fn draw_header<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: Scale,
    c: &Comparison,
    title: &str,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (w, _) = area.dim_in_pixel();
    let max = w as i32 - 2 * s.i(PAD);
    let x = s.i(PAD);
    let title_font = s.sans(36.0);
    area.draw_text(
        &fit(title, &title_font, max),
        &title_font.color(&INK),
        (x, s.i(16.0)),
    )?;
    let mut sub = format!(
        "baseline {} ({}) · candidate {} ({})",
        runs(c.baseline.run_ids.len()),
        ids(&c.baseline.run_ids),
        runs(c.candidate.run_ids.len()),
        ids(&c.candidate.run_ids),
    );
    if let Some(sw) = &c.sweep {
        sub.push_str(&format!(
            " · sweep over {} ({} values)",
            sw.field,
            sw.points.len()
        ));
    }
    let sub_font = s.sans(19.0);
    area.draw_text(
        &fit(&sub, &sub_font, max),
        &sub_font.color(&MUTED),
        (x, s.i(62.0)),
    )?;
    // Legend: the same line and marker styles as the charts.
    let y = s.i(104.0);
    let font = s.sans(19.0);
    let half = max / 2;
    let seg = s.i(46.0);
    area.draw(&PathElement::new(
        vec![(x, y), (x + seg, y)],
        BASE.stroke_width(s.i(2.5).max(2) as u32),
    ))?;
    area.draw(&Circle::new((x + seg / 2, y), s.i(5.0), BASE.filled()))?;
    let label = fit(
        &format!("baseline: {}", c.baseline.title()),
        &font,
        half - seg - s.i(24.0),
    );
    let left = Pos::new(HPos::Left, VPos::Center);
    area.draw_text(
        &label,
        &font.color(&BASE).pos(left),
        (x + seg + s.i(10.0), y),
    )?;
    let x2 = x + half;
    area.draw(&DashedPathElement::new(
        vec![(x2, y), (x2 + seg, y)],
        s.i(10.0),
        s.i(6.0),
        CAND.stroke_width(s.i(3.0).max(2) as u32),
    ))?;
    area.draw(&TriangleMarker::new(
        (x2 + seg / 2, y),
        s.i(6.0),
        CAND.filled(),
    ))?;
    let label = fit(
        &format!("candidate: {}", c.candidate.title()),
        &font,
        half - seg - s.i(24.0),
    );
    area.draw_text(
        &label,
        &font.color(&CAND_TEXT).pos(left),
        (x2 + seg + s.i(10.0), y),
    )?;
    Ok(())
}

/// Height of the header in px.
pub(super) fn header_height(s: Scale) -> i32 {
    s.i(128.0)
}

/// The metadata strip as coloured lines: differing fields (baseline → candidate), the
/// fields that are the same, then the warnings.
pub(super) fn meta_lines(c: &Comparison, s: Scale, width: i32) -> Vec<Vec<Seg>> {
    let font = s.sans(17.0);
    let max = width - 2 * s.i(PAD);
    let mut lines: Vec<Vec<Seg>> = Vec::new();
    for w in &c.warnings {
        for (i, l) in wrap_words(w, &font, max - s.i(110.0), 2)
            .into_iter()
            .enumerate()
        {
            let head = if i == 0 { "WARNING: " } else { "             " };
            lines.push(vec![(head.into(), ALERT), (l, ALERT)]);
        }
    }
    // Published figures left out because a run was edited from its preset.
    if let Some(said) = crate::report::published_withheld_text(c) {
        for l in wrap_words(&said, &font, max, 2) {
            lines.push(vec![(l, INK)]);
        }
    }
    // What the sides' crash tests found (issue 33): a loss in the alert colour.
    for (name, said, failed) in crate::report::crash_sides(c) {
        let text = format!("Durability, {name}: {said}");
        for l in wrap_words(&text, &font, max, 2) {
            lines.push(vec![(l, if failed { ALERT } else { INK })]);
        }
    }
    let differing: Vec<_> = c.metadata.iter().filter(|m| m.differs).collect();
    if differing.is_empty() {
        lines.push(vec![(
            "Nothing differs between the sides in the recorded metadata.".into(),
            INK,
        )]);
    } else {
        lines.push(vec![
            ("Differs (baseline".into(), INK),
            (ARROW.into(), MUTED),
            ("candidate):".into(), INK),
        ]);
    }
    const MAX_DIFF: usize = 7;
    let arrow_w = text_width(ARROW, &s.mono(17.0));
    for m in differing.iter().take(MAX_DIFF) {
        let field = format!("    {}: ", m.field);
        let avail = (max - text_width(&field, &font) - arrow_w) / 2;
        if text_width(&m.baseline, &font) <= avail && text_width(&m.candidate, &font) <= avail {
            lines.push(vec![
                (field, INK),
                (m.baseline.clone(), BASE),
                (ARROW.into(), MUTED),
                (m.candidate.clone(), CAND_TEXT),
            ]);
        } else {
            // Too long for one line: one line per side.
            let head = text_width(&field, &font);
            lines.push(vec![
                (field, INK),
                (fit(&m.baseline, &font, max - head), BASE),
            ]);
            lines.push(vec![
                ("    ".into(), INK),
                (ARROW.into(), MUTED),
                (fit(&m.candidate, &font, max - head), CAND_TEXT),
            ]);
        }
    }
    if differing.len() > MAX_DIFF {
        let rest: Vec<String> = differing[MAX_DIFF..]
            .iter()
            .map(|m| m.field.clone())
            .collect();
        lines.push(vec![(
            fit(&format!("    also differ: {}", rest.join(", ")), &font, max),
            INK,
        )]);
    }
    let same: Vec<String> = c
        .metadata
        .iter()
        .filter(|m| !m.differs && m.baseline != "-" && !m.baseline.is_empty())
        .map(|m| format!("{} {}", m.field, m.baseline))
        .collect();
    if !same.is_empty() {
        let mut items = same;
        items[0] = format!("Same on both sides:  {}", items[0]);
        lines.extend(
            wrap_items(&items, " · ", &font, max, 3)
                .into_iter()
                .map(|l| vec![(l, MUTED)]),
        );
    }
    lines
}

/// Draws coloured lines from the top of `area`, `line_h` apart.
pub(super) fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: Scale,
    lines: &[Vec<Seg>],
    line_h: i32,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (sans, mono) = (s.sans(17.0), s.mono(17.0));
    for (row, line) in lines.iter().enumerate() {
        let mut x = s.i(PAD);
        let y = row as i32 * line_h;
        for (text, colour) in line {
            if text == ARROW {
                area.draw_text(text, &mono.color(colour), (x, y))?;
                x += text_width(text, &mono);
                continue;
            }
            // Flags and commands in the monospace face: "--repeat" keeps both hyphens.
            for (piece, code) in code_spans(text) {
                let font = if code { &mono } else { &sans };
                area.draw_text(piece, &font.color(colour), (x, y))?;
                x += text_width(piece, font);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{DirtySettings, KernelSettings, SystemInfo};
    use crate::spec::FlatSpec;

    fn run(id: i64, dirty_ratio: u64) -> crate::metrics::RunResult {
        let system = SystemInfo {
            kernel_settings: Some(KernelSettings {
                hz: Some(250),
                vm: DirtySettings {
                    dirty_ratio: Some(dirty_ratio),
                    ..DirtySettings::default()
                },
                ..KernelSettings::default()
            }),
            ..SystemInfo::default()
        };
        let spec = crate::spec::FlatSpec {
            threads: 1,
            file_size: 8 * 4096,
            final_sync: true,
            ..FlatSpec::default()
        }
        .typed();
        crate::engine::fake_run(id, vec![1_000], vec![9_000], &spec, system).unwrap()
    }

    #[test]
    fn a_changed_kernel_setting_is_drawn_as_a_difference() {
        super::super::style::register_fonts().unwrap();
        let side = |name: &str, runs| crate::analysis::SideInput {
            name: name.into(),
            runs,
            unmeasured: vec![],
            crash: Vec::new(),
        };
        let c = crate::analysis::compare(
            &side("before", vec![run(1, 20), run(2, 20)]),
            &side("after", vec![run(3, 40), run(4, 40)]),
            &[],
        )
        .unwrap();
        let lines = meta_lines(&c, Scale(1.0), 1600);
        let texts: Vec<Vec<&str>> = lines
            .iter()
            .map(|l| l.iter().map(|(t, _)| t.as_str()).collect())
            .collect();
        assert!(
            texts.contains(&vec!["    vm.dirty_ratio: ", "20", ARROW, "40"]),
            "{texts:?}"
        );
        // The same HZ is listed with the same fields, not as a difference.
        let same: String = texts
            .iter()
            .map(|l| l.concat())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(same.contains("HZ 250"), "{same}");
    }

    #[test]
    fn each_sides_crash_findings_are_drawn_a_loss_in_the_alert_colour() {
        super::super::style::register_fonts().unwrap();
        let report = |lost| crate::crashlog::CrashReport {
            cuts: 20,
            states: 40,
            acknowledged: 200,
            lost,
            ..Default::default()
        };
        let side = |name: &str, runs, crash| crate::analysis::SideInput {
            name: name.into(),
            runs,
            unmeasured: vec![],
            crash,
        };
        let c = crate::analysis::compare(
            &side("barrier", vec![run(1, 20)], vec![(1, report(0))]),
            &side("nobarrier", vec![run(2, 20)], vec![(2, report(37))]),
            &[],
        )
        .unwrap();
        let lines = meta_lines(&c, Scale(1.0), 1600);
        let said: Vec<(String, RGBColor)> = lines
            .iter()
            .filter(|l| l.iter().any(|(t, _)| t.starts_with("Durability")))
            .map(|l| (l.iter().map(|(t, _)| t.as_str()).collect(), l[0].1))
            .collect();
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(
            said[0]
                .0
                .starts_with("Durability, baseline: 0 of 200 acknowledged")
        );
        assert_eq!(said[0].1, INK);
        assert!(
            said[1]
                .0
                .starts_with("Durability, candidate: LOST: 37 of 200")
        );
        assert_eq!(said[1].1, ALERT);
    }

    /// The ink column runs of the first text line drawn by [`draw_lines`] for `lines`.
    fn drawn_ink_runs(lines: &[Vec<Seg>]) -> Vec<(i32, i32)> {
        use super::super::glyphs::GlyphFixed;
        super::super::style::register_fonts().unwrap();
        let (w, h) = (400u32, 40u32);
        let mut buf = vec![255u8; (w * h * 3) as usize];
        {
            let root = GlyphFixed(BitMapBackend::with_buffer(&mut buf, (w, h))).into_drawing_area();
            draw_lines(&root, Scale(1.0), lines, 24).unwrap();
            root.present().unwrap();
        }
        let inked = |x: u32| (0..h).any(|y| buf[((y * w + x) * 3) as usize] < 200);
        let mut runs: Vec<(i32, i32)> = Vec::new();
        for x in 0..w {
            if !inked(x) {
                continue;
            }
            let x = x as i32;
            match runs.last_mut() {
                Some(run) if run.1 + 1 == x => run.1 = x,
                _ => runs.push((x, x)),
            }
        }
        runs
    }

    #[test]
    fn two_hyphens_of_a_flag_draw_as_two_separate_inks() {
        let runs = drawn_ink_runs(&[vec![("--repeat 3".into(), INK)]]);
        // Two hyphen-wide inks (under half the 17 px em each) with blank columns between
        // them, then the word.
        assert!(runs.len() >= 3, "{runs:?}");
        let width = |r: (i32, i32)| r.1 - r.0 + 1;
        assert!(
            width(runs[0]) < 9 && (width(runs[0]) - width(runs[1])).abs() <= 1,
            "'--' did not draw as two hyphens: ink columns {runs:?}"
        );
        assert!(runs[1].0 > runs[0].1 + 1, "{runs:?}");
    }
}
