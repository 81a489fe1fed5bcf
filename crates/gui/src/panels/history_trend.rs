//! History → Trend: a metric over the runs the History filters show (one workload: a label
//! or a preset chosen), oldest first, with the change points `analysis::trend` finds: the
//! plot (values, each segment's level, a line at each change point) and one row per change
//! point with the ratio, its interval and what differs either side.
//!
//! The trend is computed when the shown runs or the metric change, never per frame.

use egui::RichText;
use egui_plot::{HLine, Line, Plot, PlotPoints, Points, VLine};

use fsynclab::analysis::{TREND_METRICS, Trend};
use fsynclab::report;
use fsynclab::store::RunRow;

/// The Trend view's state.
#[derive(Debug, Default)]
pub(super) struct TrendView {
    /// Catalogue key of the metric followed (`iops` until one is chosen).
    metric: Option<&'static str>,
    /// The trend of the shown runs, and the view generation it was computed for.
    trend: Option<(u64, &'static str, Trend)>,
}

/// The geometric mean of a segment (the arithmetic one when a value is not positive).
fn level(values: &[f64]) -> f64 {
    let n = values.len().max(1) as f64;
    if values.iter().all(|v| *v > 0.0) {
        (values.iter().map(|v| v.ln()).sum::<f64>() / n).exp()
    } else {
        values.iter().sum::<f64>() / n
    }
}

impl TrendView {
    fn metric(&self) -> &'static str {
        self.metric.unwrap_or(TREND_METRICS[0].0)
    }

    /// Draws the view over `shown` (the History's filtered runs; `generation` changes
    /// whenever they do). `one_workload` says whether a label or preset filter is set.
    pub(super) fn ui(
        &mut self,
        ui: &mut egui::Ui,
        shown: &[&RunRow],
        generation: u64,
        one_workload: bool,
    ) {
        ui.horizontal_wrapped(|ui| {
            let name = ui.label("Metric");
            let current = self.metric();
            let label = |key: &str| {
                TREND_METRICS
                    .iter()
                    .find(|m| m.0 == key)
                    .map_or(key.to_string(), |m| m.1.to_string())
            };
            egui::ComboBox::from_id_salt("history-trend-metric")
                .selected_text(label(current))
                .show_ui(ui, |ui| {
                    for m in TREND_METRICS {
                        if ui.selectable_label(current == m.0, m.1).clicked() {
                            self.metric = Some(m.0);
                        }
                    }
                })
                .response
                .labelled_by(name.id);
        });
        if !one_workload {
            ui.label(
                "A trend follows one workload over time: choose a Label or a Preset in the \
                 filters above.",
            );
            return;
        }
        let metric = self.metric();
        let fresh = matches!(&self.trend, Some((g, m, _)) if *g == generation && *m == metric);
        if !fresh {
            self.trend = fsynclab::analysis::trend(shown, metric).map(|t| (generation, metric, t));
        }
        let Some((_, _, trend)) = &self.trend else {
            return;
        };
        if trend.points.is_empty() {
            ui.label(format!("No finished run shown has {}.", trend.label));
            return;
        }
        summary(ui, trend);
        plot(ui, trend);
        change_points(ui, trend);
    }
}

fn summary(ui: &mut egui::Ui, t: &Trend) {
    let cps = match t.change_points.len() {
        0 => "no change point".to_string(),
        1 => "1 change point".to_string(),
        n => format!("{n} change points"),
    };
    ui.label(
        RichText::new(format!(
            "{} over {} finished runs, oldest first: {cps}",
            t.label,
            t.points.len()
        ))
        .strong(),
    );
}

fn plot(ui: &mut egui::Ui, t: &Trend) {
    let unit = if t.unit.is_empty() {
        t.label.clone()
    } else {
        format!("{} ({})", t.label, t.unit)
    };
    let values: Vec<f64> = t.points.iter().map(|p| p.value).collect();
    let ids: Vec<i64> = t.points.iter().map(|p| p.run_id).collect();
    let points: Vec<[f64; 2]> = values
        .iter()
        .enumerate()
        .map(|(i, v)| [i as f64, *v])
        .collect();
    let mut bounds = vec![0];
    bounds.extend(t.change_points.iter().map(|c| c.index));
    bounds.push(values.len());
    let (points_color, level_color) = (
        ui.visuals().hyperlink_color,
        ui.visuals().strong_text_color(),
    );
    let change_color = ui.visuals().warn_fg_color;
    Plot::new("history-trend")
        .height(260.0)
        .x_axis_label("run, oldest → newest")
        .y_axis_label(unit)
        .include_y(0.0)
        .allow_scroll(false)
        .label_formatter(move |pos: &egui_plot::HoverPosition<'_>| {
            let p = match pos {
                egui_plot::HoverPosition::NearDataPoint { position, .. } => position,
                egui_plot::HoverPosition::Elsewhere { position } => position,
            };
            let i = p.x.round();
            let id = (i >= 0.0).then(|| ids.get(i as usize)).flatten()?;
            Some(format!("run {id}\n{}", egui_plot::format_number(p.y, 3)))
        })
        .show(ui, |plot_ui| {
            plot_ui.points(
                Points::new("runs", PlotPoints::from(points))
                    .radius(3.0)
                    .color(points_color),
            );
            for w in bounds.windows(2) {
                let (from, to) = (w[0], w[1]);
                if from < to {
                    let y = level(&values[from..to]);
                    let seg = vec![[from as f64, y], [(to - 1) as f64, y]];
                    plot_ui.line(
                        Line::new("segment level", seg)
                            .width(2.0)
                            .color(level_color),
                    );
                }
            }
            for c in &t.change_points {
                plot_ui.vline(
                    VLine::new("change point", c.index as f64 - 0.5)
                        .width(1.5)
                        .color(change_color),
                );
            }
            if t.points.len() == 1 {
                plot_ui.hline(HLine::new("value", values[0]));
            }
        });
}

fn change_points(ui: &mut egui::Ui, t: &Trend) {
    if t.change_points.is_empty() {
        ui.label(
            "No change point: no split of these runs into an earlier and a later part (3 runs \
             or more each) is significant.",
        );
        return;
    }
    // One block per change point: a line of figures, then what differs, one wrapped line a
    // field (a mount option list is long; a grid cell would run under the details panel).
    for c in &t.change_points {
        ui.separator();
        ui.horizontal_wrapped(|ui| {
            ui.strong("between runs");
            ui.label(format!("{} → {}", c.before_run, c.after_run));
            ui.strong("change [95% CI]");
            ui.label(format!(
                "{} {}",
                report::change_ratio_text(c),
                if c.better { "better" } else { "worse" }
            ));
            ui.strong("runs before / after");
            ui.label(format!("{} / {}", c.runs.0, c.runs.1));
        });
        if c.differs.is_empty() {
            ui.label("what differs: nothing recorded");
        }
        for d in &c.differs {
            ui.add(
                egui::Label::new(format!("{}: {} → {}", d.field, d.baseline, d.candidate)).wrap(),
            );
        }
    }
}
