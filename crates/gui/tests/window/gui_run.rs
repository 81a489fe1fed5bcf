//! The Run tab, driven headless with egui_kittest: start a tiny real run and read its
//! summary, cancel a long run, and a launch that cannot start.

use crate::gui_common;
use fsynclab::spec::FlatSpec;

use std::time::{Duration, Instant};

use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use fsynclab::metrics::RunStatus;
use fsynclab::spec::{SyncMethod, WorkloadSpec};
use fsynclab_gui::{LabApp, Tab, UiState};

fn harness(db_dir: &tempfile::TempDir, state: UiState) -> Harness<'static, LabApp> {
    gui_common::harness_with(&db_dir.path().join("gui.sqlite"), state)
}

/// The Run tab with `spec` on `target` (no preset, one run).
fn state(spec: WorkloadSpec, target: &str) -> UiState {
    UiState {
        tab: Tab::Run,
        target: target.to_string(),
        preset: None,
        spec: spec.flat(),
        ..Default::default()
    }
}

/// Steps the app until the launch is no longer active (the app repaints every 250 ms
/// while a run is active, so `run()` would hit its step limit).
fn step_until_idle(h: &mut Harness<'static, LabApp>, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    loop {
        h.run_steps(5);
        if !h.state().runner.is_active() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the run did not end within {timeout:?} (phase {})",
            h.state().runner.live.phase
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Draw the end state.
    h.run_steps(3);
}

/// A text label (not a plot legend entry or a button) with exactly `text`.
fn has_text_label(h: &Harness<'static, LabApp>, text: &str) -> bool {
    h.query_all_by_label(text)
        .any(|n| n.accesskit_node().role() == Role::Label)
}

#[test]
fn an_io_uring_run_plots_its_depth_and_a_sync_run_does_not() {
    let db = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let spec = FlatSpec {
        threads: 1,
        file_size: 4 << 20,
        duration_s: Some(0.5),
        ioengine: fsynclab::spec::IoEngine::IoUring,
        iodepth: 8,
        sync: SyncMethod::None,
        ..FlatSpec::default()
    }
    .typed();
    let mut h = harness(&db, state(spec, &target.path().display().to_string()));
    h.run();
    h.get_by_label("Start run").click();
    step_until_idle(&mut h, Duration::from_secs(60));
    let live = &h.state().runner.live;
    assert!(live.error.is_none(), "launch failed: {:?}", live.error);
    assert!(live.samples.iter().any(|s| s.inflight.is_some()));
    let depth_label = |h: &Harness<'static, LabApp>| {
        h.query_all_by_label_contains("requests in flight per thread on average")
            .any(|n| n.accesskit_node().role() == Role::Label)
    };
    assert!(depth_label(&h), "no depth caption for an io_uring run");

    let sync_spec = FlatSpec {
        threads: 1,
        file_size: 64 * 1024,
        ..FlatSpec::default()
    }
    .typed();
    let mut h = harness(&db, state(sync_spec, &target.path().display().to_string()));
    h.run();
    h.get_by_label("Start run").click();
    step_until_idle(&mut h, Duration::from_secs(60));
    assert!(!depth_label(&h), "a synchronous run has no depth plot");
}

#[test]
fn tiny_run_finishes_and_shows_its_summary() {
    let db = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let spec = FlatSpec {
        threads: 1,
        file_size: 64 * 1024,
        ..FlatSpec::default()
    }
    .typed();
    let mut h = harness(&db, state(spec, &target.path().display().to_string()));
    h.run();
    assert!(has_text_label(&h, "Next run"));
    h.get_by_label("Start run").click();
    h.run_steps(2);
    assert!(
        h.state().runner.is_active() || !h.state().runner.live.results.is_empty(),
        "the run did not start: {:?}",
        h.state().status.message
    );
    step_until_idle(&mut h, Duration::from_secs(60));

    let live = &h.state().runner.live;
    assert!(live.error.is_none(), "launch failed: {:?}", live.error);
    assert_eq!(live.results.len(), 1);
    assert_eq!(live.results[0].status, RunStatus::Finished);
    assert!(has_text_label(&h, "finished"), "no 'finished' status label");
    assert!(has_text_label(&h, "IOPS"), "no IOPS figure in the summary");
    // Named in words: the figure carries its own unit (971.7 KiB/s), so "MiB/s" beside it
    // was wrong whenever the run was slower than 1 MiB/s.
    assert!(has_text_label(&h, "Throughput"), "no throughput figure");
    assert!(!has_text_label(&h, "MiB/s"));
    // A size-based fsync run: 16 writes, 15 syncs, and the window says why (newcomer walk).
    let r = &h.state().runner.live.results[0];
    assert_eq!((r.writes, r.syncs), (16, 15));
    assert!(
        h.query_all_by_label_contains("Each thread's last write has no sync")
            .next()
            .is_some(),
        "the missing sync is not explained"
    );

    // "Show in History" switches tabs.
    h.get_by_label("Show in History").click();
    h.run_steps(2);
    assert_eq!(h.state().state.tab, Tab::History);
}

#[test]
fn long_run_is_cancelled_and_kept_with_its_data() {
    let db = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let spec = FlatSpec {
        threads: 1,
        file_size: 1024 * 1024,
        duration_s: Some(30.0),
        sync: SyncMethod::None,
        ..FlatSpec::default()
    }
    .typed();
    let mut h = harness(&db, state(spec, &target.path().display().to_string()));
    gui_common::start_run(&mut h);

    // Watch it for ~0.5 s of timed work (preparation comes first).
    let deadline = Instant::now() + Duration::from_secs(20);
    while h
        .state()
        .runner
        .live
        .started
        .is_none_or(|t| t.elapsed() < Duration::from_millis(500))
    {
        assert!(
            Instant::now() < deadline,
            "the run never reached its timed part"
        );
        assert!(h.state().runner.is_active(), "the run ended early");
        h.run_steps(2);
        std::thread::sleep(Duration::from_millis(50));
    }
    h.run_steps(2);
    assert!(has_text_label(&h, "Running"));
    assert!(has_text_label(&h, "Current IOPS"));

    let cancelled_at = Instant::now();
    h.get_by_label("Cancel run").click();
    step_until_idle(&mut h, Duration::from_secs(5));
    assert!(cancelled_at.elapsed() < Duration::from_secs(5));

    let live = &h.state().runner.live;
    assert_eq!(live.results.len(), 1, "error: {:?}", live.error);
    assert_eq!(live.results[0].status, RunStatus::Cancelled);
    assert!(live.results[0].writes > 0);
    assert!(has_text_label(&h, "cancelled"));
}

#[test]
fn escape_cancels_a_running_run() {
    let db = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let spec = FlatSpec {
        threads: 1,
        file_size: 256 * 1024,
        duration_s: Some(30.0),
        sync: SyncMethod::None,
        ..FlatSpec::default()
    }
    .typed();
    let mut h = harness(&db, state(spec, &target.path().display().to_string()));
    h.run();
    h.get_by_label("Start run").click();
    h.run_steps(2);
    let deadline = Instant::now() + Duration::from_secs(20);
    while h.state().runner.live.started.is_none() {
        assert!(
            Instant::now() < deadline,
            "the run never reached its timed part"
        );
        h.run_steps(2);
        std::thread::sleep(Duration::from_millis(50));
    }
    h.key_press(egui::Key::Escape);
    step_until_idle(&mut h, Duration::from_secs(5));
    let live = &h.state().runner.live;
    assert_eq!(live.results.len(), 1, "error: {:?}", live.error);
    assert_eq!(live.results[0].status, RunStatus::Cancelled);
}

#[test]
fn missing_target_shows_the_error_and_no_run_is_active() {
    let db = tempfile::tempdir().unwrap();
    let parent = tempfile::tempdir().unwrap();
    let missing = parent.path().join("no-such-dir");
    let spec = FlatSpec {
        threads: 1,
        file_size: 64 * 1024,
        ..FlatSpec::default()
    }
    .typed();
    let mut h = harness(&db, state(spec, &missing.display().to_string()));
    h.run();
    h.get_by_label("Start run").click();
    step_until_idle(&mut h, Duration::from_secs(10));

    assert!(!h.state().runner.is_active());
    assert!(h.state().runner.live.results.is_empty());
    assert!(
        h.query_all_by_label_contains("does not exist")
            .next()
            .is_some(),
        "no 'does not exist' error shown; live error: {:?}",
        h.state().runner.live.error
    );
    // Cancel is disabled, Start is enabled again.
    assert!(h.get_by_label("Cancel run").accesskit_node().is_disabled());
    assert!(!h.get_by_label("Start run").accesskit_node().is_disabled());
}

#[test]
fn a_sweeps_header_describes_the_point_running() {
    // Issue 31: the Run tab's header showed the form's workload ("1 threads …") while the
    // other points of a series ran, and "run k of n" beside another run's id.
    let db = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let spec = FlatSpec {
        threads: 1,
        file_size: 256 << 10,
        duration_s: Some(1.0),
        requests: None,
        sync: SyncMethod::None,
        ..FlatSpec::default()
    }
    .typed();
    let mut s = state(spec, &target.path().display().to_string());
    s.sweep = "threads=1,3".into();
    s.repeat = 1;
    let mut h = harness(&db, s);
    gui_common::start_run(&mut h);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let live = &h.state().runner.live;
        if live.stored_runs.len() == 1 && live.started.is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "the second point never started");
        assert!(h.state().runner.is_active(), "the sweep ended early");
        h.run_steps(2);
        std::thread::sleep(Duration::from_millis(30));
    }
    h.run_steps(2);
    let id = h.state().runner.live.run_id.unwrap();
    assert!(
        h.query_all_by_label_contains("fileio 3 threads")
            .next()
            .is_some(),
        "the header does not describe the second point"
    );
    assert!(has_text_label(&h, &format!("run 2 of 2 (id {id})")));
    h.get_by_label("Cancel run").click();
    step_until_idle(&mut h, Duration::from_secs(10));
}
