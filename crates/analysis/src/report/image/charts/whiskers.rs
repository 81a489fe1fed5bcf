//! The 95 % CI whiskers of a sweep chart's points, and `≈` over a point whose CI overlaps
//! the previous point's (not distinguishable). The points come from
//! [`crate::analysis::sweep_points`]; only drawing happens here.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Axis, Chart, DrawResult, LineChart};
use crate::analysis::{Neighbour, SeriesPoint};
use crate::report::image::style::{BASE, CAND, INK, Scale};

/// The data values a chart's y range must hold for every whisker to show whole.
pub(super) fn whisker_values(lc: &LineChart) -> Vec<f64> {
    let Some(ci) = &lc.ci else {
        return Vec::new();
    };
    ci.iter()
        .flatten()
        .filter_map(|p| p.ci95)
        .flat_map(|(lo, hi)| [lo, hi])
        .filter(|v| lc.y.map(*v).is_some())
        .collect()
}

/// A whisker in plot coordinates (a lower end the axis cannot show: a decade under).
fn ends(y: &Axis, p: &SeriesPoint) -> Option<(f64, f64)> {
    let (lo, hi) = p.ci95?;
    let top = y.map(hi)?;
    let bottom = y.map(lo).or_else(|| y.map(p.value / 10.0))?;
    Some((bottom, top))
}

/// Draws both sides' whiskers and marks on `chart`.
pub(super) fn draw<DB: DrawingBackend>(
    chart: &mut Chart<DB>,
    s: Scale,
    lc: &LineChart,
    ci: &[Vec<SeriesPoint>; 2],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    for (i, points) in ci.iter().enumerate() {
        let color = if i == 0 { BASE } else { CAND };
        let style = color.stroke_width(s.i(1.5).max(1) as u32);
        for p in points {
            let (Some(x), Some((lo, hi))) = (lc.x.map(p.x), ends(&lc.y, p)) else {
                continue;
            };
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, lo), (x, hi)],
                style,
            )))?;
            if p.vs_previous == Neighbour::Overlaps {
                let font = s
                    .sans(18.0)
                    .color(&INK)
                    .pos(Pos::new(HPos::Center, VPos::Bottom));
                chart.draw_series(std::iter::once(Text::new("≈", (x, hi), font)))?;
            }
        }
    }
    Ok(())
}
