//! The Compare tab's plots (egui_plot 0.38): throughput bars with 95% CI whiskers or the
//! sweep, latency percentiles, the sync latency CDF and the overlaid timelines. Every
//! series comes from [`Comparison`]; only unit conversion (µs → log10 for the log axes
//! egui_plot lacks) happens here.
//!
//! Baseline and candidate keep one colour each in every plot, and differ without colour
//! too: the baseline is a solid line with circles, the candidate a dashed line with
//! diamonds; bars are named on the x axis.

use egui::{Color32, RichText};
use egui_plot::{
    Bar, BarChart, ColorConflictHandling, GridInput, GridMark, HoverPosition, Legend, Line,
    LineStyle, MarkerShape, Plot, PlotPoint, Points, Text,
};

use crate::axis::{LatencyUnit, log_marks};
use fsynclab::analysis::{Comparison, MetricComparison, SideSummary, Stats};
use fsynclab::report::fmt_ns;

mod sweep;

/// Height of one plot of the grid.
const PLOT_HEIGHT: f32 = 230.0;

/// Names of the percentile categories of [`SideSummary::write_percentiles`].
const PCT_NAMES: [&str; 6] = {
    let p = fsynclab::analysis::PERCENTILE_POINTS;
    [p[0].1, p[1].1, p[2].1, p[3].1, p[4].1, p[5].1]
};

/// How one side is drawn.
#[derive(Clone, Copy, Debug)]
pub(super) struct SideStyle {
    /// Colour of the side in every plot and table.
    pub color: Color32,
    line: LineStyle,
    marker: MarkerShape,
    /// How the side is told apart without colour, for the legend line above the plots.
    pub look: &'static str,
}

/// Styles of (baseline, candidate), readable on the light and the dark theme.
pub(super) fn side_styles(dark: bool) -> [SideStyle; 2] {
    let (base, cand) = if dark {
        (
            Color32::from_rgb(110, 170, 250),
            Color32::from_rgb(255, 160, 70),
        )
    } else {
        (
            Color32::from_rgb(25, 95, 180),
            Color32::from_rgb(205, 90, 0),
        )
    };
    [
        SideStyle {
            color: base,
            line: LineStyle::Solid,
            marker: MarkerShape::Circle,
            look: "solid line, filled circles, left bar",
        },
        SideStyle {
            color: cand,
            line: LineStyle::dashed_loose(),
            marker: MarkerShape::Diamond,
            look: "dashed line, hollow diamonds, right bar",
        },
    ]
}

/// What an axis shows.
#[derive(Clone, Copy, PartialEq)]
enum AxisKind {
    /// Plain numbers.
    Linear,
    /// A latency in µs, plotted as log10(µs).
    LogUs,
    /// Index into [`PCT_NAMES`].
    Percentile,
}

impl AxisKind {
    /// Plot coordinate of a value (`None`: not drawable on this axis).
    fn to_plot(self, v: f64) -> Option<f64> {
        match self {
            AxisKind::LogUs => (v > 0.0 && v.is_finite()).then(|| v.log10()),
            _ => v.is_finite().then_some(v),
        }
    }

    /// The unit a latency axis showing `values` (not plot coordinates) is drawn in, and
    /// its label: what it measures and the unit, "latency (ms)". Other axes keep `what`.
    fn unit_and_label(
        self,
        what: &str,
        values: impl IntoIterator<Item = f64>,
    ) -> (LatencyUnit, String) {
        let unit = LatencyUnit::for_values_us(values);
        match self {
            AxisKind::LogUs => (unit, unit.axis_label(what)),
            _ => (unit, what.to_string()),
        }
    }

    /// A tick's label: a latency as a number in the axis' `unit` (named in the axis
    /// label), other axes as [`AxisKind::text`].
    fn tick(self, v: f64, unit: LatencyUnit) -> String {
        match self {
            AxisKind::LogUs => unit.log_tick(v),
            _ => self.text(v),
        }
    }

    /// Text of a plot coordinate, with its unit (hover labels).
    fn text(self, v: f64) -> String {
        match self {
            AxisKind::Linear => egui_plot::format_number(v, 2),
            AxisKind::LogUs => fmt_ns(10f64.powf(v) * 1e3),
            AxisKind::Percentile => {
                let i = v.round();
                if (v - i).abs() < 0.05 && (0.0..6.0).contains(&i) {
                    PCT_NAMES[i as usize].to_string()
                } else {
                    String::new()
                }
            }
        }
    }
}

/// Grid marks at the percentile categories.
fn category_marks(input: GridInput) -> Vec<GridMark> {
    (0..PCT_NAMES.len())
        .map(|i| i as f64)
        .filter(|v| (input.bounds.0..=input.bounds.1).contains(v))
        .map(|value| GridMark {
            value,
            step_size: 1.0,
        })
        .collect()
}

/// A line chart with one series per side.
struct LineChart<'a> {
    id: &'a str,
    title: String,
    x_label: &'a str,
    y_label: &'a str,
    x: AxisKind,
    y: AxisKind,
    /// Values (not plot coordinates) of the baseline and the candidate.
    series: [Vec<(f64, f64)>; 2],
}

fn plot_title(ui: &mut egui::Ui, title: &str) {
    ui.label(RichText::new(title).strong());
}

fn base_plot<'a>(id: &str, x_label: &str, y_label: &str, corner: egui_plot::Corner) -> Plot<'a> {
    bare_plot(id, x_label, y_label).legend(
        Legend::default()
            .position(corner)
            .color_conflict_handling(ColorConflictHandling::PickFirst),
    )
}

/// The top of a bar plot's y range: room above the highest bar or whisker for the value
/// label (plots clipped the labels and whiskers at their top).
fn bars_top(sides: &[(Option<f64>, Option<&Stats>)]) -> f64 {
    let highest = sides
        .iter()
        .flat_map(|(value, stats)| [*value, stats.and_then(|s| s.ci95).map(|c| c.1)])
        .flatten()
        .fold(0.0, f64::max);
    highest * 1.2
}

/// A plot without legend (bar charts name their bars on the x axis, and a legend would
/// cover the value labels).
fn bare_plot<'a>(id: &str, x_label: &str, y_label: &str) -> Plot<'a> {
    Plot::new(format!("compare-{id}"))
        .height(PLOT_HEIGHT)
        .x_axis_label(x_label.to_string())
        .y_axis_label(y_label.to_string())
        // The page scrolls: the wheel must not zoom or pan the plots under it.
        .allow_scroll(false)
        .allow_zoom(false)
}

fn line_chart(ui: &mut egui::Ui, names: [&str; 2], styles: &[SideStyle; 2], chart: LineChart) {
    plot_title(ui, &chart.title);
    let (xk, yk) = (chart.x, chart.y);
    let (x_unit, x_label) =
        xk.unit_and_label(chart.x_label, chart.series.iter().flatten().map(|p| p.0));
    let (y_unit, y_label) =
        yk.unit_and_label(chart.y_label, chart.series.iter().flatten().map(|p| p.1));
    let series: Vec<Vec<[f64; 2]>> = chart
        .series
        .iter()
        .map(|pts| {
            pts.iter()
                .filter_map(|&(x, y)| Some([xk.to_plot(x)?, yk.to_plot(y)?]))
                .collect()
        })
        .collect();
    // The legend in the corner with the fewest points (top left covered the p50 of a
    // sync percentile plot whose values fall to the right).
    let corner = crate::plots::legend_corner_in(
        &series.iter().map(Vec::as_slice).collect::<Vec<_>>(),
        yk == AxisKind::Linear,
    );
    let mut plot = base_plot(chart.id, &x_label, &y_label, corner).label_formatter(
        move |pos: &HoverPosition<'_>| {
            let (name, p) = crate::plots::hover_parts(pos);
            Some(
                format!("{name}\nx = {}\ny = {}", xk.text(p.x), yk.text(p.y))
                    .trim()
                    .into(),
            )
        },
    );
    for (kind, unit, is_x) in [(xk, x_unit, true), (yk, y_unit, false)] {
        let fmt = move |m: GridMark, _: &std::ops::RangeInclusive<f64>| kind.tick(m.value, unit);
        plot = match (kind, is_x) {
            (AxisKind::Linear, true) => plot.include_x(0.0),
            (AxisKind::Linear, false) => plot.include_y(0.0),
            (AxisKind::LogUs, true) => plot.x_grid_spacer(log_marks).x_axis_formatter(fmt),
            (AxisKind::LogUs, false) => plot.y_grid_spacer(log_marks).y_axis_formatter(fmt),
            (AxisKind::Percentile, true) => {
                plot.x_grid_spacer(category_marks).x_axis_formatter(fmt)
            }
            (AxisKind::Percentile, false) => plot.y_axis_formatter(fmt),
        };
    }
    plot.show(ui, |plot_ui| {
        for (i, pts) in series.into_iter().enumerate() {
            let (style, name) = (styles[i], names[i]);
            // Markers on at most ~25 points so dense series (the CDF) stay readable.
            let every = (pts.len() / 25).max(1);
            let marks: Vec<[f64; 2]> = pts.iter().step_by(every).copied().collect();
            plot_ui.line(
                Line::new(name, pts)
                    .id((chart.id, i, "line"))
                    .color(style.color)
                    .style(style.line)
                    .width(2.0),
            );
            plot_ui.points(
                Points::new(name, marks)
                    .id((chart.id, i, "marks"))
                    .color(style.color)
                    .shape(style.marker)
                    .filled(i == 0)
                    .radius(4.0),
            );
        }
    });
}

fn find<'a>(metrics: &'a [MetricComparison], key: &str) -> Option<&'a MetricComparison> {
    metrics.iter().find(|m| m.key == key)
}

/// Headline bars of `key` with 95% CI whiskers (none for n = 1).
fn throughput_bars(
    ui: &mut egui::Ui,
    c: &Comparison,
    names: [&str; 2],
    styles: &[SideStyle; 2],
    key: &str,
    what: &str,
) {
    let m = find(&c.metrics, key);
    let unit = m.map_or("", |m| m.unit.as_str());
    let how = m.map_or("", |m| m.headline.as_str());
    plot_title(ui, &format!("{what} ({unit}, {how}; whiskers: 95% CI)"));
    let sides = [
        (
            m.and_then(|m| m.baseline_value),
            m.and_then(|m| m.baseline.as_ref()),
        ),
        (
            m.and_then(|m| m.candidate_value),
            m.and_then(|m| m.candidate.as_ref()),
        ),
    ];
    let text_color = ui.visuals().text_color();
    let axis_names = names.map(str::to_string);
    bare_plot(&format!("bars-{key}"), "", &format!("{what} ({unit})"))
        .include_y(0.0)
        .include_y(bars_top(&sides))
        .include_x(-0.6)
        .include_x(1.6)
        // Labels only on x: a grid line through each bar's centre read as a whisker
        // spanning the whole plot (the baseline seemed to have a 0..2000 CI).
        .show_grid([false, true])
        // 1-2-5 steps: egui_plot's powers of ten labelled a bar plot only 0 and 1000.
        .y_grid_spacer(egui_plot::uniform_grid_spacer(crate::plots::y_steps))
        .y_axis_formatter(crate::plots::y_label)
        .x_grid_spacer(|input: GridInput| {
            [0.0, 1.0]
                .into_iter()
                .filter(|v| (input.bounds.0..=input.bounds.1).contains(v))
                .map(|value| GridMark {
                    value,
                    step_size: 1.0,
                })
                .collect()
        })
        .x_axis_formatter(move |mark, _| {
            let i = mark.value.round();
            if (mark.value - i).abs() < 0.01 && (0.0..2.0).contains(&i) {
                axis_names[i as usize].clone()
            } else {
                String::new()
            }
        })
        .show(ui, |plot_ui| {
            for (i, (value, stats)) in sides.iter().enumerate() {
                let Some(value) = *value else { continue };
                let x = i as f64;
                let style = styles[i];
                let fill = if i == 0 {
                    style.color
                } else {
                    style.color.gamma_multiply(0.45)
                };
                let bar = Bar::new(x, value)
                    .width(0.6)
                    .fill(fill)
                    .stroke(egui::Stroke::new(2.0, style.color))
                    .name(names[i]);
                plot_ui.bar_chart(
                    BarChart::new(names[i], vec![bar])
                        .id((key, i, "bar"))
                        .color(style.color),
                );
                plot_ui.text(
                    // Beside the bar's top, clear of the CI whisker at the centre.
                    Text::new(
                        names[i],
                        PlotPoint::new(x + 0.14, value),
                        RichText::new(fsynclab::report::fmt_plain(value))
                            .strong()
                            .size(14.0),
                    )
                    .id((key, i, "value"))
                    .anchor(egui::Align2::LEFT_BOTTOM),
                );
                let Some((lo, hi)) = stats.and_then(|s| s.ci95) else {
                    continue;
                };
                let (lo, hi) = bar_whisker(lo, hi);
                for (j, pts) in [
                    vec![[x, lo], [x, hi]],
                    vec![[x - 0.1, lo], [x + 0.1, lo]],
                    vec![[x - 0.1, hi], [x + 0.1, hi]],
                ]
                .into_iter()
                .enumerate()
                {
                    plot_ui.line(
                        Line::new("95% CI", pts)
                            .id((key, i, "ci", j))
                            .color(text_color)
                            .width(1.5),
                    );
                }
            }
        });
}

/// A bar's 95 % whisker: a rate is never below 0, so the whisker stops there (the t
/// interval of a wide spread at n = 3 reached below it and drew a "-0" tick, issue 31).
fn bar_whisker(lo: f64, hi: f64) -> (f64, f64) {
    (lo.max(0.0), hi.max(0.0))
}

fn percentiles(side: &SideSummary, sync: bool) -> Vec<(f64, f64)> {
    side.percentile_series(sync)
}

/// A cell of the plots' grid: draws one chart into its column.
type Draw<'d> = Box<dyn FnOnce(&mut egui::Ui) + 'd>;

/// The throughput cells: IOPS and sync p99 over a sweep's points, or IOPS and MiB/s bars.
fn throughput_cells<'d>(
    c: &'d Comparison,
    names: [&'d str; 2],
    styles: &'d [SideStyle; 2],
    cells: &mut Vec<Draw<'d>>,
) {
    match &c.sweep {
        Some(sw) => {
            for (key, what, y) in [
                ("iops", "IOPS", AxisKind::Linear),
                ("sync_p99_us", "sync p99", AxisKind::LogUs),
            ] {
                let unit = find(&c.metrics, key).map_or("", |m| m.unit.as_str());
                cells.push(Box::new(move |ui| {
                    sweep::sweep_chart(
                        ui,
                        names,
                        styles,
                        sweep::SweepChart {
                            sweep: sw,
                            key,
                            what,
                            unit,
                            y,
                        },
                    )
                }));
            }
        }
        None => {
            cells.push(Box::new(move |ui| {
                throughput_bars(ui, c, names, styles, "iops", "IOPS")
            }));
            cells.push(Box::new(move |ui| {
                throughput_bars(ui, c, names, styles, "mib_per_sec", "throughput")
            }));
        }
    }
}

/// Draws every plot of the comparison, two per row.
pub(super) fn plots_grid(ui: &mut egui::Ui, c: &Comparison, styles: &[SideStyle; 2]) {
    let names = [c.baseline.name.as_str(), c.candidate.name.as_str()];
    let legend = [0, 1].map(|i| format!("{} {}", ["baseline", "candidate"][i], names[i]));
    let names = [legend[0].as_str(), legend[1].as_str()];
    let run_note = format!(
        "median-IOPS run: #{} vs #{}",
        c.baseline.timeline_run, c.candidate.timeline_run
    );
    let mut cells: Vec<Draw> = Vec::new();
    throughput_cells(c, names, styles, &mut cells);
    for (sync, which) in [(false, "write"), (true, "sync")] {
        cells.push(Box::new(move |ui| {
            line_chart(
                ui,
                names,
                styles,
                LineChart {
                    id: &format!("pct-{which}"),
                    title: format!("{which} latency percentiles (all runs merged, log scale)"),
                    x_label: "percentile",
                    y_label: "latency",
                    x: AxisKind::Percentile,
                    y: AxisKind::LogUs,
                    series: [
                        percentiles(&c.baseline, sync),
                        percentiles(&c.candidate, sync),
                    ],
                },
            )
        }));
    }
    cells.push(Box::new(move |ui| {
        line_chart(
            ui,
            names,
            styles,
            LineChart {
                id: "cdf",
                title: "sync latency CDF (all runs merged, log x)".into(),
                x_label: "sync latency",
                y_label: "fraction of syncs ≤ x",
                x: AxisKind::LogUs,
                y: AxisKind::Linear,
                series: [c.baseline.sync_cdf.clone(), c.candidate.sync_cdf.clone()],
            },
        )
    }));
    let timeline = |s: &SideSummary, p99: bool| -> Vec<(f64, f64)> {
        s.timeline
            .iter()
            .filter_map(|p| Some((p.t_s, if p99 { p.sync_p99_us? } else { p.iops })))
            .collect()
    };
    for (p99, what, y) in [
        (false, "IOPS", AxisKind::Linear),
        (true, "sync p99", AxisKind::LogUs),
    ] {
        let series = [timeline(&c.baseline, p99), timeline(&c.candidate, p99)];
        let title = format!("{what} over time ({run_note})");
        cells.push(Box::new(move |ui| {
            line_chart(
                ui,
                names,
                styles,
                LineChart {
                    id: &format!("timeline-{what}"),
                    title,
                    x_label: "time since start (s)",
                    y_label: if p99 { what } else { "IOPS (writes/s)" },
                    x: AxisKind::Linear,
                    y,
                    series,
                },
            )
        }));
    }
    let mut cells = cells.into_iter();
    while let Some(left) = cells.next() {
        let right = cells.next();
        ui.columns(2, |cols| {
            left(&mut cols[0]);
            if let Some(right) = right {
                right(&mut cols[1]);
            }
        });
        ui.add_space(8.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whisker_stops_at_zero() {
        assert_eq!(bar_whisker(-1200.0, 6500.0), (0.0, 6500.0));
        assert_eq!(bar_whisker(350.0, 620.0), (350.0, 620.0));
    }

    #[test]
    fn bar_plots_leave_room_above_the_highest_whisker() {
        let stats = fsynclab::analysis::describe(&[80.0, 100.0, 120.0]).unwrap();
        let hi = stats.ci95.unwrap().1;
        assert!(hi > 120.0, "{hi}");
        let top = bars_top(&[(Some(100.0), Some(&stats)), (Some(90.0), None)]);
        assert!(top >= hi * 1.15, "{top}");
        assert_eq!(bars_top(&[(None, None), (None, None)]), 0.0);
    }
}
