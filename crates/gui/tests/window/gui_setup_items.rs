//! Issue 15's Setup-tab defects, each driven headless with egui_kittest: a new preset
//! starts at its own quick scale, Enter in a field starts the run, a label left from the
//! last run is said so, a run that never started says nothing was stored (in window words),
//! the Browse… note goes away, and the target line follows a mount made after the window
//! read the mount table.

use crate::gui_common;
use fsynclab::spec::FlatSpec;

use std::time::{Duration, Instant};

use crate::gui_common::{retype, step_until};
use egui::Key;
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsynclab::metrics::RunStatus;
use fsynclab::spec::{WorkloadSpec, load_preset};
use fsynclab_gui::panels::BROWSE_NOTE_TTL;
use fsynclab_gui::{LabApp, Tab, UiState};

fn harness(dir: &tempfile::TempDir, state: UiState) -> Harness<'static, LabApp> {
    gui_common::harness_with(&dir.path().join("gui.sqlite"), state)
}

fn has_label_containing(h: &Harness<'static, LabApp>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

/// A tiny ad-hoc run in a fresh directory.
fn tiny_state(target: &tempfile::TempDir) -> UiState {
    UiState {
        preset: None,
        spec: FlatSpec {
            file_size: 64 << 10,
            ..FlatSpec::default()
        },
        target: target.path().display().to_string(),
        ..UiState::default()
    }
}

#[test]
fn another_preset_starts_at_its_own_quick_scale() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(&dir, UiState::default());
    h.run_steps(3);
    assert_eq!(h.state().state.preset.as_deref(), Some("btrfs-log-commit"));
    assert_eq!(h.state().state.scale, 0.05);
    let methods = load_preset("fsync-methods").unwrap();
    assert_ne!(
        methods.scale.quick, 0.05,
        "the test needs presets of different scales"
    );
    h.get_by_role_and_label(Role::ComboBox, "Preset").click();
    h.run_steps(2);
    h.get_by_label("fsync-methods").click();
    h.run_steps(3);
    let state = &h.state().state;
    assert_eq!(state.preset.as_deref(), Some("fsync-methods"));
    assert_eq!(state.scale, methods.scale.quick);
    assert_eq!(
        state.spec,
        methods.scaled(methods.scale.quick).unwrap().flat()
    );
}

#[test]
fn enter_in_a_single_line_field_starts_the_run_and_the_label_is_flagged_after() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut h = harness(&dir, tiny_state(&target));
    h.run_steps(2);
    // The run options are in view at the default size (crates/gui/tests/window/gui_layout.rs): a click.
    h.get_by_label("Label").click();
    h.run_steps(2);
    h.get_by_label("Label").type_text("enter-test");
    h.run_steps(1);
    assert!(!has_label_containing(&h, "same as the last run"));
    // One Enter, still in the field: the run starts.
    h.key_press(Key::Enter);
    h.run_steps(2);
    assert_eq!(
        h.state().state.tab,
        Tab::Run,
        "Enter in the Label field starts the run"
    );
    step_until(&mut h, "the run to end", Duration::from_secs(30), |h| {
        !h.state().runner.is_active()
    });
    assert_eq!(h.state().runner.live.results[0].status, RunStatus::Finished);
    assert!(
        h.state()
            .runner
            .live
            .description
            .contains("label enter-test"),
        "{}",
        h.state().runner.live.description
    );
    // Back on Setup the label that would carry into the next run is marked as such.
    h.state_mut().state.tab = Tab::Setup;
    h.run_steps(3);
    assert!(has_label_containing(&h, "same as the last run"));
    retype(&mut h, "Label", "another");
    h.run_steps(2);
    assert!(!has_label_containing(&h, "same as the last run"));
}

#[test]
fn a_run_refused_before_storing_says_so_in_window_words() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = UiState {
        preset: None,
        spec: FlatSpec {
            file_size: 64 << 10,
            ..FlatSpec::default()
        },
        ..UiState::default()
    };
    // A kernel pseudo filesystem: refused before any run row exists.
    state.target = "/proc".into();
    let mut h = harness(&dir, state);
    h.run_steps(2);
    h.get_by_label("Start run").click();
    h.run_steps(2);
    step_until(&mut h, "the launch to end", Duration::from_secs(30), |h| {
        !h.state().runner.is_active()
    });
    h.run_steps(2);
    let status = &h.state().status;
    assert!(status.is_error);
    assert!(
        !status.message.contains("run failed"),
        "nothing was stored, yet: {}",
        status.message
    );
    assert!(
        status.message.contains("nothing was stored"),
        "{}",
        status.message
    );
    for cli in ["--", "fsynclab scratch"] {
        assert!(
            !status.message.contains(cli),
            "a window message names {cli:?}: {}",
            status.message
        );
    }
    assert!(
        status.message.contains("\"Target directory\""),
        "{}",
        status.message
    );
    assert!(
        status.message.contains("Scratch filesystems"),
        "{}",
        status.message
    );
}

#[test]
fn the_browse_note_goes_when_the_target_changes_or_after_a_while() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut h = harness(&dir, tiny_state(&target));
    h.run_steps(2);
    let note = "cancelled or no file dialog available";
    // As the dialog thread answers when no dialog could be shown.
    let app = h.state_mut();
    app.setup.browse_answered(&mut app.state, None);
    h.run_steps(2);
    assert!(has_label_containing(&h, note));
    retype(&mut h, "Target directory", "/tmp");
    h.run_steps(3);
    assert!(!has_label_containing(&h, note), "typing a target clears it");

    let app = h.state_mut();
    app.setup.browse_answered(&mut app.state, None);
    h.run_steps(2);
    assert!(has_label_containing(&h, note));
    let shown = Instant::now();
    step_until(&mut h, "the note to go", BROWSE_NOTE_TTL * 3, |h| {
        !has_label_containing(h, note)
    });
    assert!(shown.elapsed() >= BROWSE_NOTE_TTL - Duration::from_millis(100));
}

fn root_or_skip(test: &str) -> bool {
    crate::common::require_root(test, "mounting a tmpfs")
}

/// Unmounts its directory on drop.
struct Mounted(std::path::PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        crate::common::unmount_or_detach(&self.0);
    }
}

#[test]
fn the_target_line_follows_a_mount_made_after_the_window_read_the_table() {
    if !root_or_skip("the_target_line_follows_a_mount_made_after_the_window_read_the_table") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mnt = tempfile::tempdir_in("/var/tmp").unwrap();
    let path = mnt.path().display().to_string();
    let mut state = UiState {
        preset: None,
        target: "/var/tmp".into(),
        ..UiState::default()
    };
    state.spec = WorkloadSpec::default().flat();
    let mut h = harness(&dir, state);
    step_until(
        &mut h,
        "the first mount line",
        Duration::from_secs(20),
        |h| has_label_containing(h, "Target is on "),
    );
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "fsynclab-i15", &path])
        .status()
        .unwrap()
        .success();
    assert!(ok, "mount tmpfs on {path}");
    let _mounted = Mounted(mnt.path().to_path_buf());
    // As "Use as target" or a new scratch filesystem does: the target changes in code.
    h.state_mut().state.target = path.clone();
    step_until(
        &mut h,
        "the new mount's line",
        Duration::from_secs(20),
        |h| has_label_containing(h, &format!("Target is on tmpfs mounted at {path}")),
    );
}
