//! The Markdown report, snapshot-tested (insta) on runs from the scripted fake engine,
//! whose figures are exact, so the snapshot is stable.

use fsynclab::analysis::{SideInput, compare};
use fsynclab::engine::fake_run;
use fsynclab::metrics::RunResult;
use fsynclab::probe::SystemInfo;
use fsynclab::report::{compare_csv, compare_markdown, compare_table};
use fsynclab::spec::FlatSpec;
use fsynclab::spec::PublishedFigure;

fn run(id: i64, sync_ns: u64, fs: &str) -> RunResult {
    let system = SystemInfo {
        tool_version: "0.1.0".into(),
        kernel_release: Some("6.18.44".into()),
        cpu_count: 2,
        mount: Some(fsynclab::probe::MountInfo {
            fs_type: fs.into(),
            source: "/dev/loop0".into(),
            mount_options: "rw,relatime".into(),
            super_options: if fs == "btrfs" {
                "rw,nossd".into()
            } else {
                "rw".into()
            },
            ..Default::default()
        }),
        ..Default::default()
    };
    let spec = FlatSpec {
        threads: 1,
        file_size: 64 * 4096,
        // Every write followed by a sync: fio's count skips the periodic sync of the last
        // write of a size-based run, and end_fsync syncs it.
        final_sync: true,
        ..FlatSpec::default()
    }
    .typed();
    fake_run(
        id,
        vec![1_000, 1_200],
        vec![sync_ns, sync_ns + 500, sync_ns - 500],
        &spec,
        system,
    )
    .unwrap()
}

fn comparison() -> fsynclab::analysis::Comparison {
    let base = SideInput {
        name: "nossd".into(),
        runs: vec![
            run(1, 15_000, "btrfs"),
            run(2, 16_000, "btrfs"),
            run(3, 15_500, "btrfs"),
        ],
        unmeasured: vec![],
        crash: Vec::new(),
    };
    let cand = SideInput {
        name: "ext4".into(),
        runs: vec![
            run(4, 2_000, "ext4"),
            run(5, 2_100, "ext4"),
            run(6, 1_900, "ext4"),
        ],
        unmeasured: vec![],
        crash: Vec::new(),
    };
    let published = vec![PublishedFigure {
        side: "before".into(),
        metric: "mib_per_sec".into(),
        value: 2.585,
        unit: "MiB/s".into(),
        as_published: "WRITE: bw=2647KiB/s".into(),
        threads: None,
    }];
    compare(&base, &cand, &published).unwrap()
}

#[test]
fn markdown_report_snapshot() {
    insta::assert_snapshot!(compare_markdown(
        &comparison(),
        "nossd vs ext4",
        Some("report.png")
    ));
}

#[test]
fn mmtests_table_snapshot() {
    insta::assert_snapshot!(compare_table(&comparison()));
}

#[test]
fn csv_has_a_row_per_metric() {
    let csv = compare_csv(&comparison());
    let generic = fsynclab::analysis::METRICS
        .iter()
        .filter(|m| !fsynclab::analysis::is_kind_metric(m.key))
        .count();
    // Both sides made durable operations: their 4 rows come too.
    let durable = fsynclab::analysis::METRICS
        .iter()
        .filter(|m| m.key.starts_with("durable_"))
        .count();
    assert_eq!(csv.lines().count(), 1 + generic + durable);
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .starts_with(",iops,writes/s,Hmean,")
    );
}
