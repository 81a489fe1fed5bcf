//! Layout decisions of the report's charts: bar headroom and tick counts (issue 15 item 4).

use super::*;

/// Pixels left between `highest` and the top of a `plot_px` tall plot whose range ends at
/// `top`.
fn pixels_above(highest: f64, top: f64, plot_px: f64) -> f64 {
    (top - highest) / top * plot_px
}

#[test]
fn bar_headroom_fits_the_value_label_at_every_plot_height() {
    for plot_px in [120.0, 150.0, 200.0, 300.0, 600.0] {
        for highest in [0.7, 13.0, 999.0, 6924.0, 1.2e6] {
            let top = bar_top(highest, plot_px, BAR_LABEL_PX);
            // The axis rounds its end up to a tick, never down.
            let yaxis = Axis::Linear {
                from_zero: true,
                fmt: fmt_si,
            };
            let (range, _) = yaxis.range(&[0.0, highest, top]);
            assert!(range.end >= top, "{range:?} cuts {top}");
            let free = pixels_above(highest, range.end, plot_px);
            assert!(
                free >= BAR_LABEL_PX - 1e-9,
                "{plot_px} px plot, highest {highest}: {free} px free, label needs {BAR_LABEL_PX}"
            );
        }
    }
}

#[test]
fn a_short_plot_gets_more_than_the_old_fixed_headroom() {
    // 15 % of the range left 20 px of a 150 px plot: the label (28.5 px) was clipped.
    let top = bar_top(100.0, 150.0, BAR_LABEL_PX);
    assert!(top > 115.0, "{top}");
    assert!(pixels_above(100.0, 115.0, 150.0) < BAR_LABEL_PX);
    // A tall plot keeps the 15 % minimum.
    assert_eq!(bar_top(100.0, 2000.0, BAR_LABEL_PX), 100.0 * 1.15);
    assert_eq!(bar_top(0.0, 150.0, BAR_LABEL_PX), 1.0);
    assert_eq!(bar_top(f64::NAN, 150.0, BAR_LABEL_PX), 1.0);
}

#[test]
fn value_axes_have_more_than_two_ticks() {
    let linear = Axis::Linear {
        from_zero: true,
        fmt: fmt_si,
    };
    let free = Axis::Linear {
        from_zero: false,
        fmt: fmt_si,
    };
    for vals in [
        vec![0.0, 1.0],
        vec![6352.0, 6924.0],
        vec![0.98, 1.02],
        vec![3.0],
        vec![],
    ] {
        for axis in [&linear, &free] {
            let (_, ticks) = axis.range(&vals);
            assert!(ticks.len() >= 3, "{vals:?} {axis:?}: {ticks:?}");
        }
    }
    for vals in [
        vec![100.0, 120.0],
        vec![1.0, 1e6],
        vec![950.0],
        vec![30.0, 31.0],
    ] {
        let (_, ticks) = Axis::LogUs.range(&vals);
        assert!(ticks.len() >= 3, "{vals:?}: {ticks:?}");
    }
}
