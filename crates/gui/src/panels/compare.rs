//! The Compare tab: choose a baseline and a candidate (run ids, `exp:N` or a label), ask
//! the database worker for the [`Comparison`], and show it side by side — warnings, what
//! differs, the plots, the mmtests-style statistics table and the published figures — with
//! "Export report…" and "Copy table". Every number comes from the library.

use egui::{Color32, RichText};

use super::compare_export::ExportDialog;
use super::compare_plots::{SideStyle, plots_grid, side_styles};
use super::compare_sides::{distinct_labels, side_picker, swatch};
use crate::{Cx, DbRequest};
use fsynclab::analysis::{Comparison, MetricComparison, Stats, Verdict};
use fsynclab::lab::SideSpec;
use fsynclab::report;

/// The Compare tab's own state (runtime only; the side texts live in `UiState`).
#[derive(Debug, Default)]
pub struct ComparePanel {
    export: ExportDialog,
    /// The tab has asked for labels and experiments since it was created.
    asked: bool,
    /// "Compare sides" was pressed: empty sides are errors from now on.
    tried: bool,
    /// What the status line says once the comparison (or ranking) asked for arrives.
    awaiting: Option<String>,
}

/// A value with its unit, as the tables show it.
/// A value in its metric's unit, never rescaled: the table names rows by their keys
/// (`sync_p99_us`, `wall_s`: the names `--fail-on` and `--json` use), so the value is in
/// the unit the key names (issue 15: `_us` rows once showed ms).
/// A value in its metric's unit, as the row's key names it (`sync_p99_us`: µs).
fn fmt_value(v: f64, unit: &str) -> String {
    report::fmt_in_unit(v, unit)
}

fn stats_hover(stats: Option<&Stats>, unit: &str) -> String {
    let Some(s) = stats else {
        return "not measured".into();
    };
    let ci = s.ci95.map_or("none (n = 1)".to_string(), |(lo, hi)| {
        format!("{} … {}", fmt_value(lo, unit), fmt_value(hi, unit))
    });
    format!(
        "n = {}\nmean {}\nstddev {} ({:.1}%)\nmin {}  max {}\n95% CI of the mean: {ci}",
        s.n,
        fmt_value(s.amean, unit),
        fmt_value(s.stddev, unit),
        s.coeff_var_pct,
        fmt_value(s.min, unit),
        fmt_value(s.max, unit),
    )
}

fn better_color(ui: &egui::Ui) -> Color32 {
    if ui.visuals().dark_mode {
        Color32::from_rgb(110, 210, 110)
    } else {
        Color32::from_rgb(0, 125, 30)
    }
}

/// Rows of the statistics table: (metric label, metric).
fn stat_rows(c: &Comparison) -> Vec<(String, &MetricComparison)> {
    match &c.sweep {
        Some(sw) => sw
            .points
            .iter()
            .flat_map(|p| {
                let point = egui_plot::format_number(p.value, 2);
                p.metrics
                    .iter()
                    .map(move |m| (format!("{}-{point}", m.key), m))
            })
            .collect(),
        None => c.metrics.iter().map(|m| (m.key.clone(), m)).collect(),
    }
}

fn statistics_table(ui: &mut egui::Ui, c: &Comparison, styles: &[SideStyle; 2]) {
    ui.heading("Statistics");
    ui.label(
        RichText::new(
            "Change: candidate / baseline of the per-run geometric means, with its 95% interval \
             (Welch's t-test on the logarithms); * marks a change called better or worse. Hover \
             a value for n, spread and CI, a verdict for the test and the runs a 5% change needs.",
        )
        .weak(),
    );
    let better = better_color(ui);
    let worse = ui.visuals().error_fg_color;
    egui::Grid::new("compare-stats")
        .striped(true)
        .num_columns(6)
        .spacing([18.0, 4.0])
        .show(ui, |ui| {
            ui.strong("metric");
            ui.strong("headline");
            side_headers(ui, c, styles);
            ui.strong("change [95% CI]");
            ui.strong("verdict");
            ui.end_row();
            for (label, m) in stat_rows(c) {
                ui.label(&label)
                    .on_hover_text(format!("{} ({})", m.label, m.unit));
                ui.label(m.headline.as_str());
                for (value, stats) in [
                    (m.baseline_value, m.baseline.as_ref()),
                    (m.candidate_value, m.candidate.as_ref()),
                ] {
                    let text = value.map_or("-".into(), |v| fmt_value(v, &m.unit));
                    ui.label(text).on_hover_text(stats_hover(stats, &m.unit));
                }
                let mark = if m.significant() { " *" } else { "" };
                let change = match m.ratio {
                    Some(_) => {
                        format!("{} {}{mark}", report::ratio_text(m), report::change_text(m))
                    }
                    None => "-".into(),
                };
                ui.label(change);
                let words = RichText::new(report::verdict_text(m));
                let words = match m.verdict {
                    Verdict::Better => words.color(better).strong(),
                    Verdict::Worse => words.color(worse).strong(),
                    _ => words.weak(),
                };
                let mut hover = m.welch.map_or(
                    "no test: a side has a single run".to_string(),
                    |w| {
                        format!(
                            "Welch's t-test on the logarithms: p = {:.4}, t = {:.2}, df = {:.1}",
                            w.p_value, w.t, w.df
                        )
                    },
                );
                if let Some(power) = report::power_text(m) {
                    hover.push_str(&format!("\n{power} (80% power)"));
                }
                ui.label(words).on_hover_text(hover);
                ui.end_row();
            }
        });
    // The runs a 5 % change would need, for IOPS and the headline latency.
    for m in c
        .metrics
        .iter()
        .filter(|m| m.key == "iops" || m.key == c.headline_latency)
    {
        if let Some(text) = report::power_text(m) {
            ui.label(RichText::new(format!("{text} (80% power)")).weak());
        }
    }
}

fn published_table(ui: &mut egui::Ui, c: &Comparison) {
    if let Some(said) = report::published_withheld_text(c) {
        ui.heading("Published in the seed thread");
        ui.label(RichText::new(said).color(ui.visuals().warn_fg_color));
    }
    if c.published.is_empty() {
        return;
    }
    ui.heading("Published in the seed thread vs measured here");
    if let Some(said) = report::published_scaled_text(c) {
        ui.label(RichText::new(said).color(ui.visuals().warn_fg_color));
    }
    let ratios = fsynclab::analysis::published_ratios(c);
    if !ratios.is_empty() {
        egui::Grid::new("compare-published-ratios")
            .striped(true)
            .num_columns(3)
            .spacing([18.0, 4.0])
            .show(ui, |ui| {
                for h in [
                    "metric",
                    "published after / before",
                    "measured candidate / baseline",
                ] {
                    ui.strong(h);
                }
                ui.end_row();
                for r in &ratios {
                    ui.label(&r.metric);
                    ui.label(format!("×{:.2}", r.published));
                    ui.label(r.measured.map_or("-".into(), |m| format!("×{m:.2}")));
                    ui.end_row();
                }
            });
        ui.add_space(6.0);
    }
    egui::Grid::new("compare-published")
        .striped(true)
        .num_columns(5)
        .spacing([18.0, 4.0])
        .show(ui, |ui| {
            for h in [
                "published side",
                "metric",
                "published",
                "measured (baseline / candidate)",
                "as published",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for p in &c.published {
                let f = &p.figure;
                let measured = |v: Option<f64>| v.map_or("-".into(), |v| fmt_value(v, &f.unit));
                ui.label(&f.side);
                ui.label(&f.metric);
                ui.label(fmt_value(f.value, &f.unit));
                ui.label(format!(
                    "{} / {}",
                    measured(p.baseline),
                    measured(p.candidate)
                ));
                ui.label(RichText::new(&f.as_published).italics());
                ui.end_row();
            }
        });
}

/// The two sides' column headers, each named by its runs and in its plot colour.
fn side_headers(ui: &mut egui::Ui, c: &Comparison, styles: &[SideStyle; 2]) {
    for (side, name, style) in [
        ("baseline", &c.baseline, &styles[0]),
        ("candidate", &c.candidate, &styles[1]),
    ] {
        ui.label(
            RichText::new(format!("{side} {}", name.title()))
                .color(style.color)
                .strong(),
        );
    }
}

fn metadata_table(ui: &mut egui::Ui, c: &Comparison, styles: &[SideStyle; 2]) {
    ui.heading("What differs");
    let warn = ui.visuals().warn_fg_color;
    let header = |ui: &mut egui::Ui| {
        ui.strong("field");
        side_headers(ui, c, styles);
        ui.end_row();
    };
    let differing: Vec<_> = c.metadata.iter().filter(|m| m.differs).collect();
    if differing.is_empty() {
        ui.label("Nothing recorded differs between the two sides.");
    } else {
        egui::Grid::new("compare-meta-differs")
            .striped(true)
            .num_columns(3)
            .max_col_width(520.0)
            .show(ui, |ui| {
                header(ui);
                for m in differing {
                    ui.label(RichText::new(format!("≠ {}", m.field)).color(warn).strong());
                    ui.add(egui::Label::new(RichText::new(&m.baseline).strong()).wrap());
                    ui.add(egui::Label::new(RichText::new(&m.candidate).strong()).wrap());
                    ui.end_row();
                }
            });
    }
    let same: Vec<_> = c.metadata.iter().filter(|m| !m.differs).collect();
    if !same.is_empty() {
        egui::CollapsingHeader::new(format!("{} fields are the same on both sides", same.len()))
            .id_salt("compare-meta-same")
            .show(ui, |ui| {
                egui::Grid::new("compare-meta-same-grid")
                    .striped(true)
                    .num_columns(2)
                    .max_col_width(900.0)
                    .show(ui, |ui| {
                        for m in same {
                            ui.label(&m.field);
                            ui.add(egui::Label::new(&m.baseline).wrap());
                            ui.end_row();
                        }
                    });
            });
    }
}

fn sides_legend(ui: &mut egui::Ui, c: &Comparison, styles: &[SideStyle; 2]) {
    for (i, side) in [&c.baseline, &c.candidate].into_iter().enumerate() {
        let ids: Vec<String> = side.run_ids.iter().map(|i| i.to_string()).collect();
        ui.horizontal(|ui| {
            swatch(ui, styles[i].color);
            ui.label(
                RichText::new(format!("{} {}", ["baseline", "candidate"][i], side.name))
                    .color(styles[i].color)
                    .strong(),
            );
            let runs = if ids.len() == 1 { "run" } else { "runs" };
            ui.label(format!("{runs} {} — {}", ids.join(","), styles[i].look));
        });
    }
}

fn warnings(ui: &mut egui::Ui, c: &Comparison) {
    let warn = ui.visuals().warn_fg_color;
    for w in &c.warnings {
        egui::Frame::group(ui.style())
            .stroke(egui::Stroke::new(2.0, warn))
            .show(ui, |ui| {
                ui.set_width(ui.available_width());
                ui.label(
                    RichText::new(format!("WARNING: {w}"))
                        .color(warn)
                        .strong()
                        .size(15.0),
                );
            });
    }
}

/// What each side's crash tests found (issue 33), when either side was crash-tested: a
/// loss in red.
fn durability(ui: &mut egui::Ui, c: &Comparison) {
    let sides = fsynclab::report::crash_sides(c);
    if sides.is_empty() {
        return;
    }
    ui.label(RichText::new("Durability (crash tests)").strong());
    for (name, said, failed) in sides {
        let color = if failed {
            ui.visuals().error_fg_color
        } else {
            ui.visuals().text_color()
        };
        ui.label(RichText::new(format!("{name}: {said}")).color(color));
    }
}

fn comparison_view(ui: &mut egui::Ui, c: &Comparison, styles: &[SideStyle; 2]) {
    sides_legend(ui, c, styles);
    ui.add_space(4.0);
    warnings(ui, c);
    durability(ui, c);
    ui.add_space(8.0);
    metadata_table(ui, c, styles);
    ui.add_space(8.0);
    ui.separator();
    plots_grid(ui, c, styles);
    ui.separator();
    statistics_table(ui, c, styles);
    ui.add_space(8.0);
    published_table(ui, c);
}

impl ComparePanel {
    /// Draws the tab.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        if let Some(path) = self.export.poll(cx.status) {
            cx.state.export_path = path;
        }
        if !cx.cache.comparison_pending
            && let Some(done) = self.awaiting.take()
            && cx.cache.comparison_error.is_none()
        {
            cx.status.info(done);
        }
        let mut refresh = !self.asked;
        self.asked = true;
        let styles = side_styles(ui.visuals().dark_mode);
        let labels = distinct_labels(cx);
        egui::ScrollArea::vertical()
            // Each tab its own scroll position (one id would be shared by every tab's area).
            .id_salt("compare-scroll")
            .auto_shrink(false)
            .show(ui, |ui| {
                ui.heading("Compare");
                let mut go = false;
                egui::Grid::new("compare-sides")
                    .num_columns(5)
                    .spacing([10.0, 6.0])
                    .show(ui, |ui| {
                        for (i, which) in ["Baseline", "Candidate"].into_iter().enumerate() {
                            let text = if i == 0 {
                                &mut cx.state.compare_baseline
                            } else {
                                &mut cx.state.compare_candidate
                            };
                            let picked = side_picker(
                                ui,
                                which,
                                text,
                                &labels,
                                &cx.cache.experiments,
                                self.tried,
                                &styles[i],
                            );
                            go |= picked.enter;
                            refresh |= picked.opened;
                        }
                    });
                ui.horizontal(|ui| {
                    let pending = cx.cache.comparison_pending;
                    go |= ui
                        .add_enabled(!pending, egui::Button::new("Compare sides"))
                        .clicked();
                    let rank = ui
                        .add_enabled(!pending, egui::Button::new("Rank variants"))
                        .on_hover_text(
                            "Rank every variant of the baseline (and the candidate, if given) \
                             by durable operations per second: a preset's series is one \
                             experiment per variant, so give them all (exp:3-7)",
                        )
                        .clicked();
                    if rank && !pending {
                        self.rank(cx);
                    }
                    if ui.button("Swap sides").clicked() {
                        std::mem::swap(
                            &mut cx.state.compare_baseline,
                            &mut cx.state.compare_candidate,
                        );
                    }
                    if go && !pending {
                        self.compare(cx);
                    }
                    if cx.cache.comparison_pending {
                        ui.spinner();
                        ui.label("comparing…");
                    }
                    ui.separator();
                    let comparison = cx.cache.comparison.as_deref();
                    let ranking = cx.cache.ranking.as_deref();
                    let has = comparison.is_some();
                    if ui
                        .add_enabled(has, egui::Button::new("Export report…"))
                        .clicked()
                    {
                        self.export.show(&cx.state.export_path);
                    }
                    if ui
                        .add_enabled(has || ranking.is_some(), egui::Button::new("Copy table"))
                        .clicked()
                    {
                        if let Some(c) = comparison {
                            ui.ctx().copy_text(report::compare_table(c));
                            cx.status.info(
                                "copied the statistics table (mmtests style) to the clipboard",
                            );
                        } else if let Some((r, name)) = ranking {
                            ui.ctx().copy_text(report::rank_table(r, name));
                            cx.status.info("copied the ranking to the clipboard");
                        }
                    }
                });
                if let Some(e) = &cx.cache.comparison_error {
                    ui.colored_label(
                        ui.visuals().error_fg_color,
                        format!("comparison failed: {e}"),
                    );
                }
                ui.separator();
                if let Some(r) = cx.cache.ranking.as_deref() {
                    super::compare_rank::ranking_view(ui, &r.0, &r.1);
                }
                match cx.cache.comparison.as_deref() {
                    Some(c) => comparison_view(ui, c, &styles),
                    None if cx.cache.ranking.is_some() => {}
                    None if !cx.cache.comparison_pending => {
                        ui.label(
                            RichText::new(
                                "Choose a baseline and a candidate — run ids (12 or 12,13), an \
                                 experiment (exp:3) or a label — then press Compare sides.",
                            )
                            .weak(),
                        );
                    }
                    None => {}
                }
            });
        if (refresh || cx.cache.runs_stale) && !cx.cache.runs_pending {
            cx.refresh_runs();
            cx.db.request(DbRequest::ListExperiments);
        }
        self.export.ui(ui.ctx(), cx.cache.comparison.as_deref());
    }

    /// Parses the baseline (and the candidate, when given) and asks the database worker
    /// for the ranking of their variants.
    fn rank(&mut self, cx: &mut Cx) {
        self.tried = true;
        let mut sides = Vec::new();
        for text in [&cx.state.compare_baseline, &cx.state.compare_candidate] {
            if text.trim().is_empty() && !sides.is_empty() {
                continue;
            }
            match SideSpec::parse(text) {
                Ok(side) => sides.push(side),
                Err(_) => {
                    cx.status
                        .error("fix the sides first (see the messages next to them)");
                    return;
                }
            }
        }
        let name: Vec<String> = sides.iter().map(SideSpec::describe).collect();
        let name = name.join(" + ");
        cx.status.info(format!("ranking the variants of {name}…"));
        self.awaiting = Some(format!("ranked the variants of {name}"));
        cx.db.request(DbRequest::Rank(sides));
        cx.cache.comparison_pending = true;
        cx.cache.comparison_error = None;
    }

    /// Parses both sides and asks the database worker for the comparison.
    fn compare(&mut self, cx: &mut Cx) {
        self.tried = true;
        let sides = (
            SideSpec::parse(&cx.state.compare_baseline),
            SideSpec::parse(&cx.state.compare_candidate),
        );
        let (Ok(baseline), Ok(candidate)) = sides else {
            cx.status
                .error("fix the sides first (see the messages next to them)");
            return;
        };
        let sides = format!("{} with {}", baseline.describe(), candidate.describe());
        cx.status.info(format!("comparing {sides}…"));
        self.awaiting = Some(format!("compared {sides}"));
        cx.db.request(DbRequest::Compare {
            baseline,
            candidate,
        });
        cx.cache.comparison_pending = true;
        cx.cache.comparison_error = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every metric whose key names a unit shows its values in that unit.
    #[test]
    fn values_are_shown_in_the_unit_their_key_names() {
        for m in fsynclab::analysis::METRICS {
            let shown = fmt_value(18_071.55, m.unit);
            for (suffix, unit) in [("_us", " µs"), ("_ms", " ms"), ("_s", " s")] {
                if m.key.ends_with(suffix) {
                    assert!(shown.ends_with(unit), "{}: {shown}", m.key);
                    assert!(shown.starts_with("18 072 "), "{}: {shown}", m.key);
                }
            }
        }
    }
}
