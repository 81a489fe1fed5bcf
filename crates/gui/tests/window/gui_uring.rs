//! The Setup tab's io_uring controls (issue 16) driven headless with egui_kittest: they
//! reach the run request, an invalid depth shows the library's message under its field in
//! the window's words, and without io_uring the choices are disabled with the reason.

use fsynclab::spec::FlatSpec;
use std::time::Duration;

use crate::gui_common::{retype, step_until};

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use fsynclab::metrics::RunStatus;
use fsynclab::spec::{IoEngine, SyncOrder, WorkloadKind};
use fsynclab_gui::{LabApp, Tab, UiState};

fn harness(db: &tempfile::TempDir, state: UiState) -> Harness<'static, LabApp> {
    let app = LabApp::new(db.path().join("gui.sqlite"), state);
    Harness::builder()
        .with_size(egui::vec2(1360.0, 900.0))
        .build_ui_state(|ui, app: &mut LabApp| app.ui_root(ui), app)
}

fn small_fileio(target: &tempfile::TempDir) -> UiState {
    UiState {
        tab: Tab::Setup,
        preset: None,
        target: target.path().display().to_string(),
        // Tests never use the kernel's tracefs (only crates/fsynclab/tests/system/ktrace.rs does).
        kernel_trace: fsynclab::ktrace::KernelTraceMode::Off,
        spec: FlatSpec {
            threads: 1,
            file_size: 64 << 10,
            ..FlatSpec::default()
        },
        ..UiState::default()
    }
}

/// A small fileio Setup with the io_uring engine chosen and io_uring available, drawn; the
/// database and target directories live as long as the returned guards.
fn on_io_uring() -> (
    tempfile::TempDir,
    tempfile::TempDir,
    Harness<'static, LabApp>,
) {
    let db = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut state = small_fileio(&target);
    state.spec.ioengine = IoEngine::IoUring;
    let mut h = harness(&db, state);
    h.state_mut().setup.set_io_uring_available(Ok(()));
    h.run_steps(2);
    (db, target, h)
}

fn has_label_containing(h: &Harness<'static, LabApp>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

/// The io_uring settings' field labels, drawn only once io_uring is chosen.
const URING_SETTINGS: [&str; 4] = [
    "I/O depth",
    "Link each sync to its write",
    "Sync order",
    "Fixed buffers",
];

fn has_label(h: &Harness<'static, LabApp>, text: &str) -> bool {
    h.query_by_label(text).is_some()
}

fn is_disabled(h: &Harness<'static, LabApp>, label: &str) -> bool {
    h.get_by_label(label).accesskit_node().is_disabled()
}

#[test]
fn the_io_uring_controls_reach_the_run_request() {
    let db = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut h = harness(&db, small_fileio(&target));
    // The window's own probe (a thread) answers: wait for it.
    step_until(&mut h, "the io_uring probe", Duration::from_secs(10), |h| {
        !has_label_containing(h, "checking whether io_uring works")
    });
    if let Err(e) = fsynclab::engine::probe_io_uring() {
        // No io_uring on this machine: the window must say so and refuse the choice.
        let reason = fsynclab::words::uring::uring_unavailable_text(
            &fsynclab::engine::uring_unavailable(&e),
        );
        assert!(has_label_containing(&h, &reason), "{reason} not shown");
        assert!(is_disabled(&h, "io_uring"));
        return;
    }
    assert!(!has_label_containing(&h, "io_uring unavailable"));
    // Until io_uring is chosen its settings are not drawn (the engine choice is).
    assert!(!is_disabled(&h, "io_uring"));
    for setting in URING_SETTINGS {
        assert!(
            !has_label(&h, setting),
            "{setting} drawn on the sync engine"
        );
    }
    h.get_by_label("io_uring").click();
    h.run_steps(2);
    for setting in URING_SETTINGS {
        assert!(has_label(&h, setting), "{setting} missing on io_uring");
    }
    assert!(!is_disabled(&h, "I/O depth"));
    retype(&mut h, "I/O depth", "4");
    h.get_by_label("unordered").click();
    h.get_by_label("registered (WRITE_FIXED)").click();
    h.run_steps(2);
    let spec = &h.state().state.spec;
    assert_eq!(
        (spec.ioengine, spec.iodepth, spec.sync_order, spec.fixedbufs),
        (IoEngine::IoUring, 4, SyncOrder::Unordered, true)
    );
    assert!(spec.problems().is_empty(), "{:?}", spec.problems());

    h.get_by_label("Start run").click();
    h.run_steps(2);
    assert_eq!(h.state().state.tab, Tab::Run);
    step_until(&mut h, "the run to end", Duration::from_secs(30), |h| {
        !h.state().runner.is_active()
    });
    let live = &h.state().runner.live;
    assert_eq!(live.error, None);
    let run = &live.results[0];
    assert_eq!(run.status, RunStatus::Finished);
    assert_eq!(
        (
            run.spec.flat().ioengine,
            run.spec.flat().iodepth,
            run.spec.flat().sync_order,
            run.spec.flat().fixedbufs
        ),
        (IoEngine::IoUring, 4, SyncOrder::Unordered, true)
    );
    assert!(run.writes > 0 && run.syncs > 0);
}

#[test]
fn an_invalid_depth_shows_the_fields_message_in_the_windows_words() {
    let (_db, _target, mut h) = on_io_uring();
    retype(&mut h, "I/O depth", "5000");
    assert_eq!(h.state().state.spec.iodepth, 5000);
    assert!(has_label_containing(&h, "5000 requests in flight"));
    assert!(has_label_containing(&h, "\"I/O depth\""));
    assert!(!has_label_containing(&h, "--iodepth"));
    retype(&mut h, "I/O depth", "8");
    assert!(!has_label_containing(&h, "requests in flight"));
    // Unordered with a linked sync: the library's refusal, under Sync order.
    h.get_by_label("linked (IOSQE_IO_LINK)").click();
    h.get_by_label("unordered").click();
    h.run_steps(2);
    assert!(has_label_containing(&h, "cannot be unordered"));
}

#[test]
fn without_io_uring_the_choices_are_disabled_with_the_reason() {
    let db = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut h = harness(&db, small_fileio(&target));
    let reason = "io_uring is disabled on this machine (kernel.io_uring_disabled = 2)";
    h.state_mut()
        .setup
        .set_io_uring_available(Err(reason.into()));
    h.run_steps(2);
    assert!(has_label_containing(
        &h,
        &format!("io_uring unavailable: {reason}")
    ));
    assert!(is_disabled(&h, "io_uring"));
    assert!(!is_disabled(&h, "sync"));
    h.get_by_label("io_uring").click();
    h.run_steps(2);
    assert_eq!(h.state().state.spec.ioengine, IoEngine::Sync);
    // The grouplog strategy that needs io_uring is disabled too.
    h.state_mut().state.spec.kind = WorkloadKind::Grouplog;
    h.run_steps(3);
    assert!(is_disabled(&h, "uring"));
    assert!(!is_disabled(&h, "leader"));
}

#[test]
fn back_on_the_sync_engine_a_setting_only_io_uring_takes_stays_in_view_to_drop() {
    let (_db, _target, mut h) = on_io_uring();
    retype(&mut h, "I/O depth", "4");
    // Back to sync: the depth it cannot take stays drawn with the library's refusal
    // under it, and the field is there to drop it.
    h.get_by_label("sync").click();
    h.run_steps(2);
    assert_eq!(h.state().state.spec.ioengine, IoEngine::Sync);
    assert!(has_label(&h, "I/O depth"));
    assert!(has_label_containing(&h, "need the io_uring engine"));
    assert!(!is_disabled(&h, "I/O depth"));
    retype(&mut h, "I/O depth", "1");
    assert!(h.state().state.spec.problems().is_empty());
    // Dropped: the settings leave with it.
    for setting in URING_SETTINGS {
        assert!(!has_label(&h, setting), "{setting} still drawn");
    }
}
