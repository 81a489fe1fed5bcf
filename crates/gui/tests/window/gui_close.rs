//! Closing the window during a run (issue 10, section 3), driven headless with
//! egui_kittest: the close is cancelled and a dialog asks; "Keep running" keeps the run;
//! confirming cancels it, waits until it is stored as `cancelled` with its data, then
//! closes. A series says it stopped. Also: a label with a control character is refused
//! inline.

use crate::gui_common;
use fsynclab::spec::FlatSpec;

use std::time::{Duration, Instant};

use crate::gui_common::step_until;
use egui::{ViewportCommand, ViewportId};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsynclab::metrics::RunStatus;
use fsynclab::spec::SyncMethod;
use fsynclab::store::{RunFilter, Store};
use fsynclab_gui::{CloseState, LabApp, Tab, UiState};

fn harness(db_dir: &tempfile::TempDir, state: UiState) -> Harness<'static, LabApp> {
    gui_common::harness_with(&db_dir.path().join("gui.sqlite"), state)
}

/// A 30 s run on `target` (cancelled long before it ends), `repeat` times.
fn long_run(target: &tempfile::TempDir, repeat: u32) -> UiState {
    UiState {
        tab: Tab::Run,
        target: target.path().display().to_string(),
        preset: None,
        repeat,
        spec: FlatSpec {
            threads: 1,
            file_size: 1024 * 1024,
            duration_s: Some(30.0),
            sync: SyncMethod::None,
            ..FlatSpec::default()
        },
        ..Default::default()
    }
}

/// Starts the run and steps until its timed part has gone on for a little while.
fn start_and_wait_for_data(h: &mut Harness<'static, LabApp>) {
    gui_common::start_run(h);
    step_until(h, "the timed part", Duration::from_secs(20), |h| {
        h.state()
            .runner
            .live
            .started
            .is_some_and(|t| t.elapsed() > Duration::from_millis(600))
    });
}

/// The window manager's close button: one frame with a close event.
fn press_close(h: &mut Harness<'static, LabApp>) {
    gui_common::press_close(h);
    h.run_steps(1);
}

/// The viewport commands of the last frame.
fn commands(h: &Harness<'static, LabApp>) -> Vec<ViewportCommand> {
    h.output()
        .viewport_output
        .get(&ViewportId::ROOT)
        .map(|v| v.commands.clone())
        .unwrap_or_default()
}

#[test]
fn closing_during_a_run_asks_and_keep_running_keeps_it() {
    let db = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut h = harness(&db, long_run(&target, 1));
    start_and_wait_for_data(&mut h);

    press_close(&mut h);
    assert!(
        commands(&h).contains(&ViewportCommand::CancelClose),
        "the close was not cancelled: {:?}",
        commands(&h)
    );
    h.run_steps(2);
    assert_eq!(h.state().close, CloseState::Asking);
    assert!(h.query_by_label("A run is in progress").is_some());
    assert!(
        h.query_all_by_label_contains("stored as cancelled with the data measured so far")
            .next()
            .is_some()
    );
    h.get_by_label("Keep running").click();
    h.run_steps(3);
    assert_eq!(h.state().close, CloseState::Open);
    assert!(h.query_by_label("A run is in progress").is_none());
    assert!(h.state().runner.is_active(), "Keep running stopped the run");

    // Esc answers the dialog the same way (it does not reach the Run tab, where Esc
    // cancels the run).
    press_close(&mut h);
    h.run_steps(2);
    assert_eq!(h.state().close, CloseState::Asking);
    h.key_press(egui::Key::Escape);
    h.run_steps(3);
    assert_eq!(h.state().close, CloseState::Open);
    // A cancelled run ends within a few hundred ms; this one must go on.
    for _ in 0..10 {
        std::thread::sleep(Duration::from_millis(100));
        h.run_steps(1);
    }
    assert!(
        h.state().runner.is_active(),
        "Esc on the dialog cancelled the run"
    );

    // Done with it: cancel the normal way so the test ends quickly.
    h.state().runner.cancel();
    step_until(&mut h, "the run to end", Duration::from_secs(10), |h| {
        !h.state().runner.is_active()
    });
}

#[test]
fn confirming_close_stores_the_run_as_cancelled_with_its_data_then_closes() {
    let db = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut h = harness(&db, long_run(&target, 1));
    start_and_wait_for_data(&mut h);

    press_close(&mut h);
    h.run_steps(2);
    let asked = Instant::now();
    h.get_by_label("Cancel the run and close").click();
    h.run_steps(1);
    // The window stays open (and says why) until the run is stored.
    let mut closed = false;
    while !closed {
        assert!(
            asked.elapsed() < Duration::from_secs(10),
            "the window never closed (state {:?}, phase {})",
            h.state().close,
            h.state().runner.live.phase
        );
        if h.state().runner.is_active() {
            assert!(
                !commands(&h).contains(&ViewportCommand::Close),
                "closed while the run was still going"
            );
        }
        h.run_steps(1);
        closed = commands(&h).contains(&ViewportCommand::Close);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(h.state().close, CloseState::Closing);
    assert!(!h.state().runner.is_active());

    // The next frame's close request (what eframe sends after Close) goes through.
    press_close(&mut h);
    assert!(!commands(&h).contains(&ViewportCommand::CancelClose));

    // Stored as cancelled, with its measurements, and its files cleaned up.
    let store = Store::open(&db.path().join("gui.sqlite")).unwrap();
    let rows = store.list_runs(&RunFilter::default()).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, RunStatus::Cancelled);
    let stored = store.load_run(rows[0].id).unwrap();
    let result = stored.result.expect("the cancelled run keeps its data");
    assert!(result.writes > 0);
    assert!(!result.intervals.is_empty());
    assert!(
        std::fs::read_dir(target.path()).unwrap().next().is_none(),
        "the run directory was left behind"
    );
}

#[test]
fn closing_a_series_stops_it_and_says_so() {
    let db = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut h = harness(&db, long_run(&target, 3));
    start_and_wait_for_data(&mut h);
    press_close(&mut h);
    h.run_steps(2);
    assert!(
        h.query_all_by_label_contains("remaining 2 run(s) of the series are not started")
            .next()
            .is_some(),
        "the dialog does not say the series stops"
    );
    h.get_by_label("Cancel the run and close").click();
    step_until(&mut h, "the close", Duration::from_secs(10), |h| {
        h.state().close == CloseState::Closing
    });
    let live = &h.state().runner.live;
    assert_eq!(live.results.len(), 1, "error: {:?}", live.error);
    assert_eq!(live.results[0].status, RunStatus::Cancelled);
    let message = &h.state().status.message;
    assert!(
        message.contains("the series stopped after 1 of 3 runs"),
        "{message}"
    );
    let store = Store::open(&db.path().join("gui.sqlite")).unwrap();
    let rows = store.list_runs(&RunFilter::default()).unwrap();
    assert_eq!(rows.len(), 1, "no further run of the series was started");
}

#[test]
fn closing_when_idle_is_not_held_up() {
    let db = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut h = harness(&db, long_run(&target, 1));
    h.run();
    press_close(&mut h);
    assert!(!commands(&h).contains(&ViewportCommand::CancelClose));
    assert_eq!(h.state().close, CloseState::Open);
    assert!(h.query_by_label("A run is in progress").is_none());
}

#[test]
fn a_label_with_a_control_character_is_refused_inline() {
    let db = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut state = long_run(&target, 1);
    state.tab = Tab::Setup;
    state.label = "evil\u{1b}]0;x\u{7}".into();
    let mut h = harness(&db, state);
    h.run();
    assert!(
        h.query_all_by_label_contains("Label: 'evil\\u001b]0;x\\u0007' contains the control")
            .next()
            .is_some(),
        "no inline error for the label"
    );
    h.get_by_label("Start run").click();
    h.run_steps(3);
    assert!(!h.state().runner.is_active(), "started with a bad label");
    let message = &h.state().status.message;
    assert!(message.starts_with("Label: "), "{message}");
    assert!(
        Store::open(&db.path().join("gui.sqlite"))
            .unwrap()
            .list_runs(&RunFilter::default())
            .unwrap()
            .is_empty()
    );
}
