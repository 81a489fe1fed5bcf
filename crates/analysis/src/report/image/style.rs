//! Colours, fonts, number formats and text fitting shared by the charts and the tables.

use plotters::prelude::*;
use plotters::style::FontStyle;

use super::ReportError;

/// Baseline: dark blue, solid lines, circle markers (dark in greyscale).
pub(super) const BASE: RGBColor = RGBColor(20, 60, 140);
/// Candidate: orange, dashed lines, triangle markers (light in greyscale).
pub(super) const CAND: RGBColor = RGBColor(235, 125, 0);
/// Candidate text: a darker orange than the lines, readable on white.
pub(super) const CAND_TEXT: RGBColor = RGBColor(185, 90, 0);
/// Left and right page margin in px at 1600 px wide.
pub(super) const PAD: f64 = 28.0;
/// Body text.
pub(super) const INK: RGBColor = RGBColor(25, 25, 25);
/// Secondary text (subtitles, "same:" fields, notes).
pub(super) const MUTED: RGBColor = RGBColor(95, 95, 95);
/// Warnings and worse verdicts.
pub(super) const ALERT: RGBColor = RGBColor(190, 20, 20);
/// Better verdicts.
pub(super) const GOOD: RGBColor = RGBColor(20, 120, 40);
/// Rules between sections and table header background.
pub(super) const RULE: RGBColor = RGBColor(200, 200, 200);
/// Zebra stripes of tables.
pub(super) const STRIPE: RGBColor = RGBColor(243, 245, 248);

/// Font family of everything but the tables.
pub(super) const SANS: &str = "sans-serif";
/// Font family of the tables (aligned digits).
pub(super) const MONO: &str = "monospace";

/// Registers egui's bundled fonts with plotters once (plotters has no system fonts here).
pub(super) fn register_fonts() -> Result<(), ReportError> {
    static DONE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    DONE.get_or_init(|| {
        let reg = |name: &str, style: FontStyle, bytes: &'static [u8]| {
            plotters::style::register_font(name, style, bytes)
                .map_err(|_| format!("{name} ({})", style.as_str()))
        };
        reg(SANS, FontStyle::Normal, epaint_default_fonts::UBUNTU_LIGHT)?;
        reg(MONO, FontStyle::Normal, epaint_default_fonts::HACK_REGULAR)?;
        Ok(())
    })
    .clone()
    .map_err(ReportError::Font)
}

/// Sizes scaled to the page width (tuned for 1600 px).
#[derive(Clone, Copy, Debug)]
pub(super) struct Scale(pub f64);

impl Scale {
    /// `base` px at 1600 px wide.
    pub fn px(self, base: f64) -> f64 {
        (base * self.0).round()
    }
    /// `base` px as an integer.
    pub fn i(self, base: f64) -> i32 {
        self.px(base) as i32
    }
    /// A sans font of `base` px.
    pub fn sans(self, base: f64) -> FontDesc<'static> {
        FontDesc::new(FontFamily::Name(SANS), self.px(base), FontStyle::Normal)
    }
    /// A monospace font of `base` px.
    pub fn mono(self, base: f64) -> FontDesc<'static> {
        FontDesc::new(FontFamily::Name(MONO), self.px(base), FontStyle::Normal)
    }
}

/// Width in px of `text` in `font` (a rough estimate if the font cannot measure it).
pub(super) fn text_width(text: &str, font: &FontDesc) -> i32 {
    match font.box_size(text) {
        Ok((w, _)) => w as i32,
        Err(_) => (text.chars().count() as f64 * font.get_size() * 0.55) as i32,
    }
}

/// `text` cut with "…" to fit `max_px`.
pub(super) fn fit(text: &str, font: &FontDesc, max_px: i32) -> String {
    if text_width(text, font) <= max_px {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let (mut lo, mut hi) = (0, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let s: String = chars[..mid].iter().collect::<String>() + "…";
        if text_width(&s, font) <= max_px {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    chars[..lo].iter().collect::<String>() + "…"
}

/// `items` joined by `sep`, wrapped into lines of at most `max_px`; at most `max_lines`
/// lines, the last one ending in "…" when items were left out.
pub(super) fn wrap_items(
    items: &[String],
    sep: &str,
    font: &FontDesc,
    max_px: i32,
    max_lines: usize,
) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for item in items {
        let candidate = if cur.is_empty() {
            item.clone()
        } else {
            format!("{cur}{sep}{item}")
        };
        if cur.is_empty() || text_width(&candidate, font) <= max_px {
            cur = candidate;
        } else {
            lines.push(std::mem::take(&mut cur));
            cur = item.clone();
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    if lines.len() > max_lines {
        lines.truncate(max_lines);
        if let Some(last) = lines.last_mut() {
            *last = fit(&format!("{last}{sep}…"), font, max_px);
        }
    }
    lines.into_iter().map(|l| fit(&l, font, max_px)).collect()
}

/// Words of `text` wrapped into lines of at most `max_px`.
pub(super) fn wrap_words(
    text: &str,
    font: &FontDesc,
    max_px: i32,
    max_lines: usize,
) -> Vec<String> {
    let words: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    wrap_items(&words, " ", font, max_px, max_lines)
}

/// A latency given in µs, 3 significant digits: `850 ns`, `12.3 µs`, `4.01 ms`, `1.20 s`.
pub(super) fn fmt_us(us: f64) -> String {
    crate::report::fmt_ns(us * 1e3)
}

/// A latency tick label (µs): short, no needless decimals.
pub(super) fn fmt_us_tick(us: f64) -> String {
    let (v, unit) = if us >= 1e6 {
        (us / 1e6, "s")
    } else if us >= 1e3 {
        (us / 1e3, "ms")
    } else {
        (us, "µs")
    };
    format!("{} {unit}", trim_num(v))
}

pub(super) use crate::report::units::trim_num;

/// A count-like axis label: `950`, `12.5k`, `1.2M`.
pub(super) fn fmt_si(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim_num(v / 1e6))
    } else if a >= 1e3 {
        format!("{}k", trim_num(v / 1e3))
    } else {
        trim_num(v)
    }
}

pub(super) use crate::report::units::fmt_plain;

/// A metric value in its unit for the tables ([`crate::report::fmt_metric`]).
pub(super) fn fmt_value(v: f64, unit: &str) -> String {
    crate::report::fmt_metric(v, unit)
}

/// Nice tick values of a log axis between `lo` and `hi` (both > 0): powers of ten first,
/// then 2 and 5, then the other multiples, each kept only if it is not too close to a kept
/// one, so short spans (< 1 decade) still get a few readable labels.
pub(super) fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi / lo).log10();
    if !(span.is_finite() && span > 0.0) {
        return vec![lo];
    }
    let min_gap = span / 9.0;
    let mut candidates: Vec<(u8, f64)> = Vec::new();
    let mut decade = 10f64.powf(lo.log10().floor());
    while decade <= hi {
        for m in 1..=9 {
            let t = f64::from(m) * decade;
            if t >= lo && t <= hi {
                let priority = match m {
                    1 => 0,
                    2 | 5 => 1,
                    _ => 2,
                };
                candidates.push((priority, t));
            }
        }
        decade *= 10.0;
    }
    candidates.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut kept: Vec<f64> = Vec::new();
    for (_, t) in candidates {
        if kept.iter().all(|k| (t / k).log10().abs() >= min_gap) {
            kept.push(t);
        }
    }
    kept.sort_by(f64::total_cmp);
    if kept.len() < 2 { vec![lo, hi] } else { kept }
}

/// `text` cut into pieces, each marked whether it is command-line text: a flag (`--repeat`,
/// `-O`) or an `fsynclab` command with its subcommand. Those are drawn in the monospace face,
/// where each hyphen stays a hyphen (the proportional face runs `--` into one dash).
pub(super) fn code_spans(text: &str) -> Vec<(&str, bool)> {
    let flag = |w: &str| {
        w.strip_prefix("--")
            .or_else(|| w.strip_prefix('-'))
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| c.is_ascii_alphabetic())
    };
    let mut spans = Vec::new();
    let (mut plain_from, mut at, mut after_fsynclab) = (0, 0, false);
    for word in text.split(' ') {
        let start = at;
        at += word.len() + 1;
        // Quotes and punctuation around a flag stay in the surrounding face.
        let core = word
            .trim_end_matches([',', '.', ')', ';', ':', '\'', '"', '`'])
            .trim_start_matches(['(', '\'', '"', '`']);
        let command = core == "fsynclab" || (after_fsynclab && !core.is_empty());
        after_fsynclab = core == "fsynclab";
        if core.is_empty() || !(flag(core) || command) {
            continue;
        }
        let from = start + word.find(core).unwrap_or(0);
        let to = from + core.len();
        if from > plain_from {
            spans.push((&text[plain_from..from], false));
        }
        spans.push((&text[from..to], true));
        plain_from = to;
    }
    if plain_from < text.len() || spans.is_empty() {
        spans.push((&text[plain_from..], false));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_fsynclab_commands_are_code() {
        assert_eq!(
            code_spans("repeat it (fsynclab run --repeat 3), or -O ^has_journal"),
            vec![
                ("repeat it (", false),
                ("fsynclab", true),
                (" ", false),
                ("run", true),
                (" ", false),
                ("--repeat", true),
                (" 3), or ", false),
                ("-O", true),
                (" ^has_journal", false),
            ]
        );
        // Prose with hyphens, negative numbers and dashes is not.
        for prose in ["a non-zero gain of -5 % – then", "", "x - y"] {
            assert_eq!(code_spans(prose), vec![(prose, false)]);
        }
    }
}
