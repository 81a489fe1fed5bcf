//! The report image: PNG and SVG pages of comparisons made from scripted fake-engine runs.

use fsynclab::spec::FlatSpec;
use std::collections::HashSet;

use fsynclab::analysis::{Comparison, PublishedRow, SideInput, TimelinePoint, compare};
use fsynclab::metrics::RunResult;
use fsynclab::probe::SystemInfo;
use fsynclab::report::{ImageFormat, ImageOptions, ReportError, render_comparison};
use fsynclab::spec::{PublishedFigure, WorkloadSpec};

fn fake_run(id: i64, write_ns: Vec<u64>, sync_ns: Vec<u64>, spec: WorkloadSpec) -> RunResult {
    fsynclab::engine::fake_run(id, write_ns, sync_ns, &spec, SystemInfo::default()).unwrap()
}

fn spec() -> WorkloadSpec {
    FlatSpec {
        threads: 1,
        file_size: 400 * 4096,
        ..FlatSpec::default()
    }
    .typed()
}

/// A run whose syncs cycle through a spread around `sync_us` (so percentiles differ).
fn run_at(id: i64, sync_us: u64, spec: WorkloadSpec) -> RunResult {
    let base = sync_us * 1_000;
    let syncs: Vec<u64> = (0..100u64)
        .map(|i| match i {
            0 => base * 20,
            1..=3 => base * 6,
            4..=12 => base * 2,
            _ => base + (i * 37 % 50) * base / 100,
        })
        .collect();
    fake_run(id, vec![2_000, 3_000, 2_500, 9_000], syncs, spec)
}

fn side(name: &str, runs: Vec<RunResult>) -> SideInput {
    SideInput {
        name: name.into(),
        runs,
        unmeasured: vec![],
        crash: Vec::new(),
    }
}

/// Fake runs end within one sampling interval of real time, so their timelines are
/// empty: give both sides a plausible 30 s timeline around their measured IOPS and p99.
fn add_timelines(c: &mut Comparison, iops: [f64; 2]) {
    for (side, m) in [(&mut c.baseline, 0), (&mut c.candidate, 1)] {
        let iops = iops[m];
        let p99 = side.sync_percentiles[2].1;
        side.timeline = (1..=30)
            .map(|t| {
                let wobble = ((t * 7 + m * 3) % 11) as f64 / 10.0 - 0.5;
                TimelinePoint {
                    t_s: t as f64,
                    iops: iops * (1.0 + 0.15 * wobble),
                    sync_p99_us: Some(p99 * (1.0 - 0.3 * wobble)),
                }
            })
            .collect();
    }
}

fn comparison() -> Comparison {
    let base = side(
        "label ext4-barrier",
        vec![
            run_at(1, 400, spec()),
            run_at(2, 420, spec()),
            run_at(3, 390, spec()),
        ],
    );
    let cand = side(
        "label ext4-nobarrier",
        vec![
            run_at(4, 120, spec()),
            run_at(5, 130, spec()),
            run_at(6, 125, spec()),
        ],
    );
    let mut c = compare(&base, &cand, &[]).unwrap();
    let iops = [
        c.metrics[0].baseline_value.unwrap(),
        c.metrics[0].candidate_value.unwrap(),
    ];
    add_timelines(&mut c, iops);
    c.published = vec![PublishedRow {
        figure: PublishedFigure {
            side: "before".into(),
            metric: "iops".into(),
            value: 2400.0,
            unit: "writes/s".into(),
            as_published: "2.4k IOPS".into(),
            threads: None,
        },
        baseline: c.metrics[0].baseline_value,
        candidate: c.metrics[0].candidate_value,
    }];
    c
}

fn sweep_comparison() -> Comparison {
    let at = |id: i64, threads: u32, sync_us: u64| {
        run_at(
            id,
            sync_us,
            FlatSpec {
                threads,
                ..spec().flat()
            }
            .typed(),
        )
    };
    let base = side(
        "experiment 7 (barrier)",
        vec![at(1, 1, 400), at(2, 2, 420), at(3, 4, 450), at(4, 8, 520)],
    );
    let cand = side(
        "experiment 8 (nobarrier)",
        vec![at(5, 1, 150), at(6, 2, 160), at(7, 4, 170), at(8, 8, 210)],
    );
    let mut c = compare(&base, &cand, &[]).unwrap();
    assert!(c.sweep.is_some(), "threads is swept");
    add_timelines(&mut c, [1500.0, 4000.0]);
    c.warnings
        .push("the two sides ran DIFFERENT WORKLOADS: test warning".into());
    c
}

/// A single-run baseline with a different block size: no CI, warnings shown.
fn single_run_comparison() -> Comparison {
    let base = side("run 12", vec![run_at(12, 300, spec())]);
    let cand = side(
        "label bs8k",
        vec![
            run_at(
                13,
                200,
                FlatSpec {
                    block_size: 8192,
                    ..spec().flat()
                }
                .typed(),
            ),
            run_at(
                14,
                210,
                FlatSpec {
                    block_size: 8192,
                    ..spec().flat()
                }
                .typed(),
            ),
        ],
    );
    let mut c = compare(&base, &cand, &[]).unwrap();
    assert!(
        c.warnings.iter().any(|w| w.contains("single run")),
        "{:?}",
        c.warnings
    );
    // Fake runs usually end within one sampling interval, but not always on a loaded
    // machine: no timeline at all, deterministically.
    c.baseline.timeline.clear();
    c.candidate.timeline.clear();
    c
}

fn png(c: &Comparison, opts: &ImageOptions) -> image::RgbImage {
    let bytes = render_comparison(c, ImageFormat::Png, opts).expect("png renders");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    image::load_from_memory(&bytes)
        .expect("PNG decodes")
        .to_rgb8()
}

fn svg(c: &Comparison) -> String {
    let bytes =
        render_comparison(c, ImageFormat::Svg, &ImageOptions::default()).expect("svg renders");
    String::from_utf8(bytes).expect("SVG is UTF-8 text")
}

/// Share of non-white pixels in rows `y0..y1`.
fn ink_share(img: &image::RgbImage, y0: u32, y1: u32) -> f64 {
    let mut ink = 0u64;
    for y in y0..y1 {
        for x in 0..img.width() {
            if img.get_pixel(x, y).0 != [255, 255, 255] {
                ink += 1;
            }
        }
    }
    ink as f64 / f64::from((y1 - y0) * img.width())
}

fn dark_pixels(img: &image::RgbImage, y0: u32, y1: u32) -> usize {
    (y0..y1)
        .flat_map(|y| (0..img.width()).map(move |x| (x, y)))
        .filter(|&(x, y)| img.get_pixel(x, y).0.iter().all(|&c| c < 110))
        .count()
}

#[test]
fn png_has_the_requested_size_and_real_content() {
    let c = comparison();
    for (w, h) in [(1600, 2000), (1200, 1700)] {
        let opts = ImageOptions {
            width: w,
            height: h,
            title: None,
        };
        let img = png(&c, &opts);
        assert_eq!((img.width(), img.height()), (w, h));
        let colours: HashSet<[u8; 3]> = img.pixels().map(|p| p.0).collect();
        assert!(
            colours.len() > 200,
            "{} distinct colours: blank or flat image",
            colours.len()
        );
        // The chart grid spans roughly 13%..70% of the height.
        let share = ink_share(&img, h * 15 / 100, h * 68 / 100);
        assert!(
            share > 0.04,
            "chart area is {:.1}% non-white",
            share * 100.0
        );
        assert!(
            share < 0.6,
            "chart area is {:.1}% non-white: filled, not drawn",
            share * 100.0
        );
        // Title text: dark pixels in the title band; the page corner is white.
        assert!(dark_pixels(&img, 0, h * 3 / 100) > 300, "no title text");
        assert_eq!(
            img.get_pixel(w - 2, h - 2).0,
            [255, 255, 255],
            "white background"
        );
    }
}

#[test]
fn svg_is_text_with_title_axis_units_and_both_sides() {
    let c = comparison();
    let s = svg(&c);
    assert!(s.contains("<svg"), "not an SVG document");
    assert!(
        s.contains("label ext4-barrier vs label ext4-nobarrier"),
        "default title"
    );
    assert!(
        s.contains("baseline: label ext4-barrier"),
        "baseline legend"
    );
    assert!(
        s.contains("candidate: label ext4-nobarrier"),
        "candidate legend"
    );
    for unit in [
        "writes/s",
        "MiB/s",
        "(µs, log scale)",
        "time since start (s)",
        "fraction of syncs",
    ] {
        assert!(s.contains(unit), "axis label with {unit:?} missing");
    }
    for text in [
        "Statistics",
        "+218",
        "better",
        "Published (seed thread) vs measured",
        "2.4k IOPS",
        "p99.99",
    ] {
        assert!(s.contains(text), "{text:?} missing");
    }
    let titled = render_comparison(
        &c,
        ImageFormat::Svg,
        &ImageOptions {
            title: Some("nobarrier: does it help?".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(
        String::from_utf8(titled)
            .unwrap()
            .contains("nobarrier: does it help?")
    );
}

#[test]
fn a_sweep_comparison_renders_metric_vs_parameter() {
    let c = sweep_comparison();
    let img = png(&c, &ImageOptions::default());
    assert_eq!((img.width(), img.height()), (1600, 2000));
    assert!(ink_share(&img, 300, 1360) > 0.04);
    let s = svg(&c);
    for text in [
        "IOPS vs threads",
        "Sync p99 vs threads",
        "threads (log scale)",
        "IOPS @ threads = 8",
        "DIFFERENT WORKLOADS",
    ] {
        assert!(s.contains(text), "{text:?} missing");
    }
}

#[test]
fn a_single_run_side_renders_without_a_ci_and_with_its_warnings() {
    let c = single_run_comparison();
    let img = png(&c, &ImageOptions::default());
    assert!(ink_share(&img, 300, 1360) > 0.03);
    let s = svg(&c);
    assert!(
        s.contains("n=1, no CI"),
        "the single-run bar says why it has no whisker"
    );
    assert!(s.contains("n=2)"));
    assert!(s.contains("DIFFERENT WORKLOADS"));
    assert!(s.contains("single run"));
    assert!(s.contains("workload"), "the differing field is listed");
    // No timeline samples in fake runs: the charts say so instead of drawing empty axes.
    assert!(s.contains("no data on either side"));
}

#[test]
fn a_page_too_small_is_refused_with_the_size_needed() {
    let c = comparison();
    let e = render_comparison(
        &c,
        ImageFormat::Png,
        &ImageOptions {
            width: 500,
            height: 400,
            title: None,
        },
    )
    .unwrap_err();
    assert!(matches!(e, ReportError::PageTooSmall { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("500×400") && msg.contains("at least"), "{msg}");
    let e = render_comparison(
        &c,
        ImageFormat::Svg,
        &ImageOptions {
            width: 100_000,
            height: 2000,
            title: None,
        },
    )
    .unwrap_err();
    assert!(matches!(e, ReportError::PageTooLarge { .. }), "{e:?}");
}

/// Writes the example pages for a look when `FSYNCLAB_REPORT_EXAMPLES` names a directory.
#[test]
fn write_examples_when_asked() {
    let Some(dir) = std::env::var_os("FSYNCLAB_REPORT_EXAMPLES") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let opts = ImageOptions::default();
    for (name, c) in [
        ("report-example", comparison()),
        ("report-sweep", sweep_comparison()),
        ("report-single", single_run_comparison()),
    ] {
        let png = render_comparison(&c, ImageFormat::Png, &opts).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
        let svg = render_comparison(&c, ImageFormat::Svg, &opts).unwrap();
        std::fs::write(dir.join(format!("{name}.svg")), svg).unwrap();
    }
}

#[test]
fn traced_runs_get_a_kernel_panel_with_the_kernel_figures() {
    let traced = |id, sync_us, handles: f64| {
        let mut r = run_at(id, sync_us, spec());
        r.kernel_trace = Some(fsynclab::metrics::KernelTrace {
            enabled: true,
            journal_commits: Some(100),
            commits_per_sync: Some(1.0 / handles),
            handles_per_commit: Some(handles),
            dstate_us_per_sync: Some(sync_us as f64 * 0.8),
            ..Default::default()
        });
        r
    };
    let c = compare(
        &side("1 thread", vec![traced(1, 400, 2.5), traced(2, 420, 2.6)]),
        &side(
            "8 threads",
            vec![traced(3, 300, 12.0), traced(4, 310, 12.3)],
        ),
        &[],
    )
    .unwrap();
    let page = svg(&c);
    assert!(page.contains("from kernel tracepoints"), "no Kernel panel");
    assert!(page.contains("handles/commit") && page.contains("D state/sync"));
    // Untraced runs: no panel.
    assert!(!svg(&comparison()).contains("from kernel tracepoints"));
}
