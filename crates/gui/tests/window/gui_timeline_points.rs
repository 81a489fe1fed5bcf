//! Issue 15 items 4 and 5 in the Run and History tabs' timelines: the last, partial
//! interval is not plotted as if full (no fake spike or drop at the end), and the legend
//! goes to the corner the data leaves free (not over a p99 spike).

use egui_plot::Corner;
use fsynclab::metrics::IntervalSample;
use fsynclab_gui::plots::{flushes_per_sync_points, iops_points, latency_points, legend_corner};

/// Five full 1 s windows at 1000 writes/s, one flush per sync, p99 2 ms; then a 50 ms
/// tail whose rate (10k/s), flushes per sync (1.4) and p99 (80 ms) are what a short window
/// gives when plotted as if full.
fn samples() -> Vec<IntervalSample> {
    let mut out: Vec<IntervalSample> = (1..=5)
        .map(|i| IntervalSample {
            t_ms: i * 1000,
            dur_ms: 1000,
            writes: 1000,
            syncs: 500,
            device_flushes: Some(500),
            sync_p50_ns: Some(1_000_000),
            sync_p99_ns: Some(2_000_000),
            ..Default::default()
        })
        .collect();
    out.push(IntervalSample {
        t_ms: 5050,
        dur_ms: 50,
        writes: 500,
        syncs: 50,
        device_flushes: Some(70),
        sync_p50_ns: Some(1_000_000),
        sync_p99_ns: Some(80_000_000),
        ..Default::default()
    });
    out
}

#[test]
fn a_partial_last_interval_is_not_plotted_as_full() {
    let s = samples();
    let iops = iops_points(&s);
    assert_eq!(iops.len(), 5, "{iops:?}");
    assert!(
        iops.iter().all(|[_, y]| (*y - 1000.0).abs() < 1e-9),
        "{iops:?}"
    );
    assert_eq!(iops.last().unwrap()[0], 5.0);

    let per_sync = flushes_per_sync_points(&s);
    assert!(per_sync.iter().all(|[_, y]| *y <= 1.0), "{per_sync:?}");

    let p99 = latency_points(&s, |w| w.sync_p99_ns);
    assert!(p99.iter().all(|[_, y]| *y < 3.0), "{p99:?}");
}

#[test]
fn full_intervals_are_all_plotted() {
    let mut s = samples();
    s.pop();
    assert_eq!(iops_points(&s).len(), 5);
    assert_eq!(flushes_per_sync_points(&s).len(), 5);
}

fn line(values: &[f64]) -> Vec<[f64; 2]> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| [i as f64, *v])
        .collect()
}

#[test]
fn the_legend_leaves_a_p99_spike_at_the_end_uncovered() {
    let p50 = line(&[1.0; 20]);
    let mut p99 = vec![2.0; 20];
    p99[18] = 40.0;
    p99[19] = 38.0;
    let p99 = line(&p99);
    let corner = legend_corner(&[&p50, &p99]);
    assert!(matches!(corner, Corner::LeftTop), "{corner:?}");

    // The spike at the start instead: the top left is taken.
    let mut early = vec![2.0; 20];
    early[0] = 40.0;
    early[1] = 39.0;
    let early = line(&early);
    let corner = legend_corner(&[&p50, &early]);
    assert!(matches!(corner, Corner::RightTop), "{corner:?}");
}

#[test]
fn the_legend_leaves_a_plateau_at_the_top_uncovered() {
    // IOPS steady near its maximum: both top corners hold the line.
    let iops: Vec<f64> = (0..30).map(|i| 9000.0 + (i % 3) as f64 * 100.0).collect();
    let corner = legend_corner(&[&line(&iops)]);
    assert!(
        matches!(corner, Corner::LeftBottom | Corner::RightBottom),
        "{corner:?}"
    );
}

#[test]
fn no_data_keeps_the_default_corner() {
    assert!(matches!(legend_corner(&[]), Corner::LeftTop));
    assert!(matches!(
        legend_corner(&[&[[1.0, f64::NAN]]]),
        Corner::LeftTop
    ));
}

#[test]
fn timeline_y_axes_get_three_to_six_labelled_marks() {
    use fsynclab_gui::plots::tick_step;
    for span in [
        0.9, 1.0, 2.5, 7.0, 120.0, 130.0, 999.0, 1800.0, 6924.0, 1.2e6,
    ] {
        let step = tick_step(span);
        let marks = (span / step).floor() as usize + 1;
        assert!(
            (3..=6).contains(&marks),
            "span {span}: step {step}, {marks} marks"
        );
    }
    assert_eq!(tick_step(0.0), 1.0);
    assert_eq!(tick_step(f64::NAN), 1.0);
}

#[test]
fn tick_labels_have_the_decimals_their_step_needs() {
    use fsynclab_gui::plots::tick_decimals;
    assert_eq!(tick_decimals(0.5), 1);
    assert_eq!(tick_decimals(0.2), 1);
    assert_eq!(tick_decimals(0.1), 1);
    assert_eq!(tick_decimals(0.05), 2);
    assert_eq!(tick_decimals(1.0), 0);
    assert_eq!(tick_decimals(250.0), 0);
    assert_eq!(tick_decimals(0.0), 0);
}

#[test]
fn every_grid_step_is_a_1_2_5_step() {
    use egui_plot::GridInput;
    use fsynclab_gui::plots::y_steps;
    for span in [0.9, 2.2, 7.0, 130.0, 1800.0, 2.4e5] {
        for step in y_steps(GridInput {
            bounds: (0.0, span),
            base_step_size: span / 1000.0,
        }) {
            let mantissa = step / 10f64.powf(step.log10().floor());
            assert!(
                [1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-6),
                "span {span}: step {step}"
            );
        }
    }
}
