//! Issue 15 item 26 in the report image: every point of a sweep carries its 95 % CI, and a
//! point whose CI overlaps the previous point's is marked `≈` (not distinguishable).

use fsynclab::analysis::{Neighbour, SideInput, compare, sweep_points};
use fsynclab::probe::SystemInfo;
use fsynclab::report::{ImageFormat, ImageOptions, render_comparison};
use fsynclab::spec::FlatSpec;

/// A run at `threads` whose writes and syncs take `op_ns` in all.
fn run(id: i64, threads: u32, op_ns: u64) -> fsynclab::metrics::RunResult {
    let spec = FlatSpec {
        threads,
        file_size: 100 * 4096,
        final_sync: true,
        ..FlatSpec::default()
    }
    .typed();
    fsynclab::engine::fake_run(
        id,
        vec![1_000],
        vec![op_ns - 1_000],
        &spec,
        SystemInfo::default(),
    )
    .unwrap()
}

fn side(name: &str, runs: Vec<fsynclab::metrics::RunResult>) -> SideInput {
    SideInput {
        name: name.into(),
        runs,
        unmeasured: vec![],
        crash: Vec::new(),
    }
}

#[test]
fn sweep_charts_carry_ci_whiskers_and_mark_overlaps() {
    // Baseline: 1 and 2 threads noisy enough to overlap, 4 threads clearly apart.
    let base = side(
        "before",
        vec![
            run(1, 1, 10_000),
            run(2, 1, 12_000),
            run(3, 2, 11_000),
            run(4, 2, 9_500),
            run(5, 4, 3_000),
            run(6, 4, 3_050),
        ],
    );
    let cand = side(
        "after",
        vec![
            run(7, 1, 8_000),
            run(8, 1, 8_100),
            run(9, 2, 6_000),
            run(10, 2, 6_050),
            run(11, 4, 2_000),
            run(12, 4, 2_020),
        ],
    );
    let c = compare(&base, &cand, &[]).unwrap();
    let sweep = c.sweep.as_ref().expect("threads is swept");
    let points = sweep_points(sweep, "iops", false);
    assert_eq!(points.len(), 3);
    assert!(points.iter().all(|p| p.ci95.is_some() && p.n == 2));
    assert_eq!(points[1].vs_previous, Neighbour::Overlaps);
    assert_eq!(points[2].vs_previous, Neighbour::Distinct);

    let svg = render_comparison(&c, ImageFormat::Svg, &ImageOptions::default()).unwrap();
    let svg = String::from_utf8(svg).unwrap();
    assert!(
        svg.contains("IOPS vs threads (hmean; whiskers: 95% CI"),
        "no CI caption"
    );
    assert!(svg.contains("≈"), "no not-distinguishable mark");
}
