//! The sweep plots of the Compare tab: each side's headline per swept value with its
//! 95 % CI as a whisker, and `≈` over a point whose CI overlaps the previous point's (not
//! distinguishable). The points and the overlap come from
//! [`fsynclab::analysis::sweep_points`]; only drawing happens here.

use egui::RichText;
use egui_plot::{GridMark, Line, PlotPoint, Points, Text};

use super::{AxisKind, SideStyle, base_plot, log_marks, plot_title};
use fsynclab::analysis::{Neighbour, Sweep, sweep_points};

/// What [`sweep_chart`] draws: metric `key` over the sweep, titled `what`.
pub(super) struct SweepChart<'a> {
    pub sweep: &'a Sweep,
    pub key: &'a str,
    pub what: &'a str,
    /// The metric's unit, named on a linear y axis (a latency axis names its own).
    pub unit: &'a str,
    pub y: AxisKind,
}

/// The plot-coordinate whisker of a point: its CI on the y axis (a lower end a log axis
/// cannot show is drawn a decade under the value).
fn whisker(y: AxisKind, value: f64, ci: (f64, f64)) -> Option<(f64, f64)> {
    let hi = y.to_plot(ci.1)?;
    let lo = y.to_plot(ci.0).or_else(|| y.to_plot(value / 10.0))?;
    Some((lo, hi))
}

/// One sweep plot, both sides, with CI whiskers and the not-distinguishable marks.
pub(super) fn sweep_chart(
    ui: &mut egui::Ui,
    names: [&str; 2],
    styles: &[SideStyle; 2],
    chart: SweepChart,
) {
    let field = chart.sweep.field.as_str();
    plot_title(
        ui,
        &format!(
            "{} vs {field} (headline per point; whiskers: 95% CI; ≈: CI overlaps the previous point's, not distinguishable)",
            chart.what
        ),
    );
    let y = chart.y;
    let sides = [false, true].map(|cand| sweep_points(chart.sweep, chart.key, cand));
    let (unit, y_label) = match y {
        AxisKind::LogUs => y.unit_and_label(
            chart.what,
            sides
                .iter()
                .flatten()
                .flat_map(|p| [Some(p.value), p.ci95.map(|c| c.1)].into_iter().flatten()),
        ),
        _ if chart.unit.is_empty() => y.unit_and_label(chart.what, []),
        _ => y.unit_and_label(&format!("{} ({})", chart.what, chart.unit), []),
    };
    let mut plot = base_plot(
        &format!("sweep-{}", chart.key),
        field,
        &y_label,
        egui_plot::Corner::LeftTop,
    )
    .include_x(0.0);
    let fmt = move |m: GridMark, _: &std::ops::RangeInclusive<f64>| y.tick(m.value, unit);
    plot = match y {
        AxisKind::LogUs => plot.y_grid_spacer(log_marks).y_axis_formatter(fmt),
        _ => plot.include_y(0.0),
    };
    let text_color = ui.visuals().text_color();
    plot.show(ui, |plot_ui| {
        for (i, points) in sides.iter().enumerate() {
            let (style, name) = (styles[i], names[i]);
            let pts: Vec<[f64; 2]> = points
                .iter()
                .filter_map(|p| Some([p.x, y.to_plot(p.value)?]))
                .collect();
            plot_ui.line(
                Line::new(name, pts.clone())
                    .id((chart.key, i, "sweep-line"))
                    .color(style.color)
                    .style(style.line)
                    .width(2.0),
            );
            plot_ui.points(
                Points::new(name, pts)
                    .id((chart.key, i, "sweep-marks"))
                    .color(style.color)
                    .shape(style.marker)
                    .filled(i == 0)
                    .radius(4.0),
            );
            // Side by side at one x: the candidate's whisker a little to the right.
            let dx = if i == 0 { 0.0 } else { 0.06 };
            for (j, p) in points.iter().enumerate() {
                let Some((lo, hi)) = p.ci95.and_then(|ci| whisker(y, p.value, ci)) else {
                    continue;
                };
                let x = p.x + dx;
                plot_ui.line(
                    Line::new("95% CI", vec![[x, lo], [x, hi]])
                        .id((chart.key, i, j, "ci"))
                        .color(style.color.gamma_multiply(0.8))
                        .width(1.5),
                );
                if p.vs_previous == Neighbour::Overlaps {
                    plot_ui.text(
                        Text::new(
                            "not distinguishable",
                            PlotPoint::new(x, hi),
                            RichText::new("≈").strong().size(15.0).color(text_color),
                        )
                        .id((chart.key, i, j, "overlap"))
                        .anchor(egui::Align2::CENTER_BOTTOM),
                    );
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whiskers_on_a_log_axis_never_vanish() {
        assert_eq!(whisker(AxisKind::Linear, 5.0, (4.0, 6.0)), Some((4.0, 6.0)));
        let (lo, hi) = whisker(AxisKind::LogUs, 100.0, (-5.0, 1000.0)).unwrap();
        assert_eq!((lo, hi), (1.0, 3.0));
    }
}
