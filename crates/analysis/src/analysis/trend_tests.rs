//! Change points on seeded synthetic series (a known step, flat noise) and the trend of
//! listing rows.

use super::*;

/// xorshift64* with Box–Muller: a seeded normal generator, so the rates below are exact
/// figures of this code, not of the machine.
struct Normal(u64);

impl Normal {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn next(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// A series of `n` log-normal values around 1000 with a log spread of 0.05, multiplied by
/// `exp(step × 0.05)` from index `at` on.
fn series(rng: &mut Normal, n: usize, at: usize, step_sds: f64) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let shift = if i >= at { step_sds * 0.05 } else { 0.0 };
            1000.0 * (0.05 * rng.next() + shift).exp()
        })
        .collect()
}

#[test]
fn a_two_sd_step_is_found_within_two_runs_in_nine_cases_of_ten() {
    let mut rng = Normal(0x5EED_0030);
    let trials = 400;
    let mut found = 0;
    for trial in 0..trials {
        // Lengths 20..=120, the step anywhere with at least 5 runs on each side.
        let n = 20 + (trial % 101);
        let at = 5 + (rng.uniform() * (n - 10) as f64) as usize;
        let cps = change_points(&series(&mut rng, n, at, 2.0));
        found += usize::from(cps.iter().any(|(i, _)| i.abs_diff(at) <= 2));
    }
    let rate = found as f64 / trials as f64;
    eprintln!("2-SD step found within 2 runs: {found} of {trials}");
    assert!(rate >= 0.9, "found {found} of {trials}");
}

#[test]
fn flat_series_rarely_have_a_change_point() {
    let mut rng = Normal(0x5EED_0031);
    let trials = 400;
    let mut false_alarms = 0;
    for trial in 0..trials {
        let n = 20 + (trial % 181);
        false_alarms += usize::from(!change_points(&series(&mut rng, n, n, 0.0)).is_empty());
    }
    let rate = false_alarms as f64 / trials as f64;
    eprintln!("flat series with a change point: {false_alarms} of {trials}");
    assert!(
        rate <= 0.05,
        "{false_alarms} of {trials} flat series had a change point"
    );
}

#[test]
fn two_steps_are_both_found_in_order() {
    let mut rng = Normal(7);
    let mut values = series(&mut rng, 40, 20, 4.0);
    values.extend(series(&mut rng, 30, 0, -2.0));
    let cps: Vec<usize> = change_points(&values).iter().map(|c| c.0).collect();
    assert_eq!(cps.len(), 2, "{cps:?}");
    assert!(
        cps[0].abs_diff(20) <= 2 && cps[1].abs_diff(40) <= 2,
        "{cps:?}"
    );
}

#[test]
fn short_constant_and_zero_series_are_handled() {
    assert!(change_points(&[]).is_empty());
    assert!(change_points(&[1.0; 5]).is_empty(), "too short to split");
    assert!(change_points(&[2.0; 50]).is_empty(), "constant");
    let mut steps = vec![1.0; 10];
    steps.extend([2.0; 10]);
    assert_eq!(
        change_points(&steps)
            .iter()
            .map(|c| c.0)
            .collect::<Vec<_>>(),
        [10]
    );
    // A zero (0 flushes per sync) switches to raw values instead of failing.
    let mut flushes = vec![0.0; 10];
    flushes.extend([1.0; 10]);
    assert_eq!(change_points(&flushes)[0].0, 10);
}

fn row(id: i64, iops: f64, kernel: &str) -> RunRow {
    RunRow {
        id,
        uuid: format!("u{id}"),
        experiment_id: None,
        label: Some("nightly".into()),
        tags: Vec::new(),
        status: RunStatus::Finished,
        error: None,
        kind: "fileio".into(),
        preset: None,
        preset_scale: None,
        target: "/srv".into(),
        fs_type: Some("ext4".into()),
        mount_options: Some("rw,relatime".into()),
        device: Some("vda".into()),
        kernel_release: Some(kernel.into()),
        created_at_ms: 1_000 * id,
        wall_ns: Some(1_000_000_000),
        writes: Some(1000),
        syncs: Some(1000),
        iops: Some(iops),
        mib_per_sec: Some(iops / 256.0),
        write_p99_ns: None,
        sync_p50_ns: None,
        sync_p99_ns: None,
        flushes_per_sync: None,
        durable_p99_ns: None,
        durable_ops_per_sec: None,
        progress_t_ms: None,
        progress_writes: None,
        threads: Some(1),
        sync: Some("fsync".into()),
        super_options: None,
        spec_json: None,
    }
}

#[test]
fn a_trend_names_the_runs_either_side_and_what_differs() {
    let mut rng = Normal(11);
    let mut rows: Vec<RunRow> = (1..=30)
        .map(|id| {
            let (level, kernel) = if id <= 15 {
                (1000.0, "6.1")
            } else {
                (700.0, "6.2")
            };
            row(id, level * (0.03 * rng.next()).exp(), kernel)
        })
        .collect();
    rows.reverse(); // any order: sorted by creation time
    rows.push(RunRow {
        status: RunStatus::Failed,
        ..row(31, 1.0, "6.2")
    });
    let rows: Vec<&RunRow> = rows.iter().collect();
    let t = trend(&rows, "iops").unwrap();
    assert_eq!(t.points.len(), 30, "the failed run is left out");
    assert_eq!(t.points[0].run_id, 1);
    let [cp] = &t.change_points[..] else {
        panic!("{:?}", t.change_points)
    };
    assert_eq!((cp.before_run, cp.after_run, cp.runs), (15, 16, (15, 15)));
    assert!(!cp.better);
    let ratio = cp.ratio.unwrap();
    assert!((0.65..0.75).contains(&ratio), "{ratio}");
    let (low, high) = cp.ratio_ci95.unwrap();
    assert!(low < ratio && ratio < high && high < 1.0);
    assert_eq!(cp.differs.len(), 1, "{:?}", cp.differs);
    assert_eq!(
        (
            cp.differs[0].field.as_str(),
            cp.differs[0].baseline.as_str()
        ),
        ("kernel", "6.1")
    );
    assert!(trend(&rows, "no_such_metric").is_none());
    let sync = trend(&rows, "sync_p99_us").unwrap();
    assert_eq!((sync.points.len(), sync.without_metric), (0, 30));
}

#[test]
fn a_step_a_changed_workload_made_names_the_field() {
    // One preset's runs; from run 11 the block size was 8k: the step is put down to it.
    let spec = |bs: u64| {
        let mut s = crate::spec::WorkloadSpec::default();
        s.fileio_mut().unwrap().block_size = bs;
        serde_json::to_string(&s).unwrap()
    };
    let mut rng = Normal(5);
    let rows: Vec<RunRow> = (1..=20)
        .map(|id| {
            let (level, bs) = if id <= 10 {
                (1000.0, 4096)
            } else {
                (1800.0, 8192)
            };
            RunRow {
                spec_json: Some(spec(bs)),
                ..row(id, level * (0.03 * rng.next()).exp(), "6.1")
            }
        })
        .collect();
    let rows: Vec<&RunRow> = rows.iter().collect();
    let t = trend(&rows, "iops").unwrap();
    let [cp] = &t.change_points[..] else {
        panic!("{:?}", t.change_points)
    };
    let fields: Vec<(&str, &str, &str)> = cp
        .differs
        .iter()
        .map(|d| (d.field.as_str(), d.baseline.as_str(), d.candidate.as_str()))
        .collect();
    assert_eq!(fields, vec![("workload: block_size", "4k", "8k")]);
}

#[test]
fn a_one_sd_step_in_ten_thousand_runs_is_found() {
    // (Its time is measured by scripts/bench-trend.sh, not asserted here.)
    let mut rng = Normal(3);
    let values = series(&mut rng, 10_000, 6_000, 1.0);
    let cps = change_points(&values);
    assert!(cps.iter().any(|(i, _)| i.abs_diff(6_000) <= 2), "{cps:?}");
}

#[test]
fn a_real_step_rarely_brings_a_false_one() {
    // Each half of a series is searched again after a step is found: with the segment's
    // own Bonferroni factor (its splits), 53 of these 1000 series with one step got a
    // second, false change point; with the whole series' factor, 24.
    let mut rng = Normal(0x5EED_0032);
    let trials = 1000;
    let mut extra = 0;
    for trial in 0..trials {
        let n = 20 + (trial % 101);
        let step = [2.0, 4.0, 12.0][trial % 3];
        let at = 5 + (rng.uniform() * (n - 10) as f64) as usize;
        let cps = change_points(&series(&mut rng, n, at, step));
        extra += usize::from(cps.len() > 1);
    }
    eprintln!("series with one step and more than one change point: {extra} of {trials}");
    assert!(
        extra as f64 / trials as f64 <= 0.05,
        "{extra} of {trials} series with one step had another change point"
    );
}
