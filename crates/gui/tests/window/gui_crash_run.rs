//! A crash test started from the window (issue 33): the scratch form's "Crash test" runs the
//! Setup workload on a recording device made with the form's filesystem, size and options,
//! shows the verdict over every power cut and opens the stored run in History. A workload
//! that does not acknowledge its records, or a size the device cannot take, is refused inline
//! before anything starts. The real run needs root, /dev/fuse and loop devices.

use crate::gui_common::{self, step_until};

use std::time::Duration;

use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use fsynclab::crashdev::DaemonProgram;
use fsynclab::scratch::ScratchManager;
use fsynclab::spec::{FlatSpec, SyncMethod, WorkloadKind};
use fsynclab::store::Store;
use fsynclab_gui::{LabApp, Tab, UiState};

fn harness(dir: &std::path::Path, spec: FlatSpec) -> Harness<'static, LabApp> {
    let state = UiState {
        spec,
        ..UiState::default()
    };
    let mut app = LabApp::new(dir.join("gui.sqlite"), state);
    let state_dir = dir.join("state");
    std::fs::create_dir_all(&state_dir).unwrap();
    app.setup
        .set_scratch_manager(ScratchManager::with_roots(state_dir, dir.join("ram")));
    // The test's executable is not fsynclab: the device is served by the built binary.
    let program = assert_cmd::cargo::cargo_bin("fsynclab");
    app.setup.set_crash_daemon(DaemonProgram::fsynclab(program));
    gui_common::window(app, gui_common::WINDOW_SIZE)
}

fn show(h: &mut Harness<'static, LabApp>, label: &str) {
    h.get_by_label(label).scroll_to_me();
    h.run_steps(20);
}

fn retype(h: &mut Harness<'static, LabApp>, label: &str, text: &str) {
    show(h, label);
    h.get_by_label(label).click();
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    h.get_by_label(label).type_text(text);
    h.run_steps(2);
}

fn disabled(h: &Harness<'static, LabApp>, label: &str) -> bool {
    h.get_by_label(label).accesskit_node().is_disabled()
}

/// A small fileio workload: 100 records, each fdatasynced.
fn small_fileio() -> FlatSpec {
    FlatSpec {
        threads: 1,
        block_size: 4096,
        file_size: 64 * 4096,
        requests: Some(100),
        sync: SyncMethod::Fdatasync,
        sync_every: 1,
        ..FlatSpec::default()
    }
}

#[test]
fn a_workload_or_size_the_crash_test_cannot_take_is_refused_inline() {
    let dir = tempfile::tempdir().unwrap();
    let fileserver = FlatSpec {
        kind: WorkloadKind::Fileserver,
        duration_s: Some(5.0),
        ..FlatSpec::default()
    };
    let mut h = harness(dir.path(), fileserver);
    h.run_steps(3);
    show(&mut h, "Run crash test");
    assert!(
        h.query_by_label_contains("does not acknowledge its records yet")
            .is_some(),
        "fileserver does not acknowledge its records"
    );
    assert!(disabled(&h, "Run crash test"));
    // An acknowledging workload, but a device too large.
    h.state_mut().state.spec = small_fileio();
    retype(&mut h, "Scratch size", "8G");
    assert!(
        h.query_by_label_contains("a ext4 recording device takes 64M to 4G")
            .is_some()
    );
    assert!(disabled(&h, "Run crash test"));
    retype(&mut h, "Scratch size", "64M");
    h.run_steps(2);
    assert!(!disabled(&h, "Run crash test"), "a valid form can start");
}

#[test]
fn a_crash_test_from_the_window_is_stored_and_opens_in_history() {
    if !crate::common::scratch_or_skip(
        "a_crash_test_from_the_window_is_stored_and_opens_in_history",
        "a crash test mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(dir.path(), small_fileio());
    h.run_steps(3);
    retype(&mut h, "Scratch size", "64M");
    retype(&mut h, "Power cuts", "12");
    show(&mut h, "Run crash test");
    h.get_by_label("Run crash test").click();
    h.run_steps(3);
    step_until(
        &mut h,
        "the crash test's verdict",
        Duration::from_secs(180),
        |h| h.query_by_label_contains("Durability of run").is_some(),
    );
    assert!(
        h.query_by_label_contains("0 of 100 acknowledged records lost over 12 power cuts")
            .is_some(),
        "the verdict"
    );
    // Stored with its findings.
    let store = Store::open(&dir.path().join("gui.sqlite")).unwrap();
    let runs = store.list_runs(&Default::default()).unwrap();
    assert_eq!(runs.len(), 1);
    let report = store
        .crash_test(runs[0].id)
        .unwrap()
        .expect("findings stored");
    assert_eq!(
        (report.acknowledged, report.lost, report.cuts),
        (100, 0, 12)
    );
    // Nothing of the device is left in the state directory.
    let left: Vec<_> = std::fs::read_dir(dir.path().join("state"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("crash-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    show(&mut h, "Open in History");
    h.get_by_label("Open in History").click();
    h.run_steps(10);
    assert_eq!(h.state().state.tab, Tab::History);
    step_until(
        &mut h,
        "the run's Durability section",
        Duration::from_secs(20),
        |h| {
            h.query_by_label_contains("Durability (crash test)")
                .is_some()
        },
    );
}

/// A 20-second crash test started from the window, its workload running.
fn a_long_crash_test_running(dir: &std::path::Path) -> Harness<'static, LabApp> {
    let long = FlatSpec {
        requests: None,
        duration_s: Some(20.0),
        ..small_fileio()
    };
    let mut h = harness(dir, long);
    h.run_steps(3);
    retype(&mut h, "Scratch size", "64M");
    show(&mut h, "Run crash test");
    h.get_by_label("Run crash test").click();
    step_until(
        &mut h,
        "the crash test to start",
        Duration::from_secs(60),
        |h| h.query_by_label("Cancel crash test").is_some(),
    );
    // Let the workload begin.
    std::thread::sleep(Duration::from_secs(2));
    h
}

/// Nothing of a crash test's device is left: no directory of it, nothing mounted under
/// `dir`.
fn assert_no_device_left(dir: &std::path::Path) {
    let left: Vec<_> = std::fs::read_dir(dir.join("state"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("crash-"))
        .filter(|e| e.file_name() != fsynclab::crashdev::KEPT_LOGS)
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(dir.to_str().unwrap()), "{mounts}");
}

#[test]
fn a_cancelled_crash_test_says_so_and_leaves_no_device() {
    if !crate::common::scratch_or_skip(
        "a_cancelled_crash_test_says_so_and_leaves_no_device",
        "a crash test mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut h = a_long_crash_test_running(dir.path());
    h.get_by_label("Cancel crash test").click();
    step_until(
        &mut h,
        "the cancelled crash test to end",
        Duration::from_secs(120),
        |h| h.query_by_label("Cancel crash test").is_none(),
    );
    assert!(
        h.query_by_label_contains("crash test cancelled").is_some(),
        "the panel says it was cancelled"
    );
    assert!(h.query_by_label_contains("Durability of run").is_none());
    assert_no_device_left(dir.path());
}

#[test]
fn closing_the_window_during_a_crash_test_asks_then_stops_it_cleanly() {
    if !crate::common::scratch_or_skip(
        "closing_the_window_during_a_crash_test_asks_then_stops_it_cleanly",
        "a crash test mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut h = a_long_crash_test_running(dir.path());
    // On another tab: the crash test is still seen.
    h.state_mut().state.tab = Tab::History;
    h.run_steps(3);
    gui_common::press_close(&mut h);
    h.run_steps(3);
    assert_eq!(h.state().close, fsynclab_gui::CloseState::Asking);
    assert!(h.query_by_label("A crash test is in progress").is_some());
    h.get_by_label("Cancel the run and close").click();
    step_until(
        &mut h,
        "the window to close once the crash test stopped",
        Duration::from_secs(120),
        |h| h.state().close == fsynclab_gui::CloseState::Closing,
    );
    assert_no_device_left(dir.path());
}
