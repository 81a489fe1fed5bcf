//! The Setup tab driven headless with egui_kittest: choose a preset, type a target, see the
//! mount it is on and the tmpfs warning, get the library's validation message inline
//! (worded with the form's labels), start a tiny real run.

use crate::gui_common;

use std::time::Duration;

use crate::gui_common::{retype, step_until};

use egui::Key;
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsynclab::metrics::RunStatus;
use fsynclab::spec::{Prepare, WorkloadSpec, builtin_presets};
use fsynclab_gui::{LabApp, Tab, UiState};

fn harness(dir: &tempfile::TempDir, state: UiState) -> Harness<'static, LabApp> {
    gui_common::harness_with(&dir.path().join("gui.sqlite"), state)
}

/// An ad-hoc workload with an empty target.
fn ad_hoc_state() -> UiState {
    UiState {
        preset: None,
        spec: WorkloadSpec::default().flat(),
        target: String::new(),
        ..UiState::default()
    }
}

fn has_label_containing(h: &Harness<'static, LabApp>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

#[test]
fn choosing_a_preset_fills_the_form_with_its_scaled_workload() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(&dir, ad_hoc_state());
    h.run_steps(3);
    let preset = builtin_presets()
        .into_iter()
        .next()
        .expect("a built-in preset");
    h.get_by_role_and_label(Role::ComboBox, "Preset").click();
    h.run_steps(2);
    h.get_by_label(&preset.name).click();
    h.run_steps(3);
    let state = &h.state().state;
    assert_eq!(state.preset.as_deref(), Some(preset.name.as_str()));
    assert_eq!(state.spec, preset.scaled(state.scale).unwrap().flat());
    assert!(has_label_containing(&h, &preset.title));
    assert!(!has_label_containing(&h, "(edited)"));

    // Editing a field keeps the preset name and marks the form as edited.
    retype(&mut h, "File size", "1M");
    assert_eq!(h.state().state.spec.file_size, 1 << 20);
    assert_eq!(
        h.state().state.preset.as_deref(),
        Some(preset.name.as_str())
    );
    assert!(has_label_containing(&h, "(edited)"));
}

#[test]
fn typed_target_shows_the_mount_it_is_on() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let path = target.path().display().to_string();
    let mut h = harness(&dir, ad_hoc_state());
    h.run_steps(2);
    retype(&mut h, "Target directory", &path);
    assert_eq!(h.state().state.target, path);
    step_until(&mut h, "the mount line", Duration::from_secs(20), |h| {
        has_label_containing(h, "Target is on ")
    });
    let line = h.get_by_label_contains("Target is on ");
    let text = line.value().unwrap_or_default();
    assert!(text.contains(" mounted at /"), "{text}");
}

#[test]
fn bad_block_size_shows_the_label_wording_and_start_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut state = ad_hoc_state();
    state.target = target.path().display().to_string();
    let mut h = harness(&dir, state);
    h.run_steps(2);
    // Below 512 bytes (a buffered write of 1000 bytes is fine since issue 31).
    retype(&mut h, "Block size", "100");
    assert_eq!(h.state().state.spec.block_size, 100);
    let inline = h
        .query_all_by_label_contains("not a multiple of 512")
        .count();
    assert_eq!(inline, 1, "the message next to the field");
    // The window names the field by its label, never by a command-line flag or a key.
    let inline = h
        .get_by_label_contains("not a multiple of 512")
        .value()
        .unwrap_or_default();
    assert!(
        inline.starts_with("Block size: 100 bytes") && inline.ends_with("(\"Block size\")"),
        "{inline}"
    );

    h.get_by_label("Start run").click();
    h.run_steps(3);
    assert_eq!(h.state().state.tab, Tab::Setup);
    assert!(!h.state().runner.is_active());
    assert!(h.state().status.is_error);
    assert!(h.state().status.message.contains("not a multiple of 512"));
    // Next to the field, next to the button, and in the status line.
    assert!(
        h.query_all_by_label_contains("not a multiple of 512")
            .count()
            >= 2
    );
    assert!(has_label_containing(
        &h,
        "cannot start: Block size: 100 bytes"
    ));
    assert!(!has_label_containing(&h, "--bs"));
    assert!(!has_label_containing(&h, "block_size"));
}

#[test]
fn tiny_ad_hoc_run_starts_switches_to_run_and_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut h = harness(&dir, ad_hoc_state());
    h.run_steps(2);
    retype(
        &mut h,
        "Target directory",
        &target.path().display().to_string(),
    );
    retype(&mut h, "Threads", "1");
    retype(&mut h, "File size", "64k");
    assert_eq!(h.state().state.spec.threads, 1);
    assert_eq!(h.state().state.spec.file_size, 64 << 10);
    assert!(h.state().state.spec.problems().is_empty());

    h.get_by_label("Start run").click();
    h.run_steps(2);
    assert_eq!(h.state().state.tab, Tab::Run);
    step_until(&mut h, "the run to end", Duration::from_secs(20), |h| {
        !h.state().runner.is_active()
    });
    let live = &h.state().runner.live;
    assert_eq!(live.error, None);
    assert_eq!(live.results[0].status, RunStatus::Finished);
}

/// Whether `/dev/shm` is a tmpfs mount on this machine.
fn dev_shm_is_tmpfs() -> bool {
    let Ok(mounts) = fsynclab::probe::list_mounts() else {
        return false;
    };
    fsynclab::probe::mount_for_path(&mounts, std::path::Path::new("/dev/shm"))
        .is_some_and(|m| m.fs_type == "tmpfs")
}

#[test]
fn tmpfs_target_shows_the_loud_warning() {
    if !dev_shm_is_tmpfs() {
        eprintln!("skipped: /dev/shm is not tmpfs here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(&dir, ad_hoc_state());
    h.run_steps(2);
    retype(&mut h, "Target directory", "/dev/shm");
    step_until(&mut h, "the tmpfs warning", Duration::from_secs(20), |h| {
        has_label_containing(
            h,
            "fsync does nothing on tmpfs: sync latency here is pure syscall cost",
        )
    });
    // Once: the probe's own wording of the same warning is not repeated under it (issue 31).
    assert!(
        !has_label_containing(&h, "fsync and fdatasync return immediately"),
        "the tmpfs warning appears twice"
    );
}

#[test]
fn a_target_that_does_not_exist_says_so_inline() {
    // Issue 31: it showed its nearest existing parent's mount ("Target is on ext4 mounted
    // at /") until Start.
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(&dir, ad_hoc_state());
    h.run_steps(2);
    let missing = dir.path().join("no-such-dir");
    retype(&mut h, "Target directory", &missing.display().to_string());
    step_until(&mut h, "the inline error", Duration::from_secs(20), |h| {
        has_label_containing(h, "does not exist; choose an existing directory")
    });
    assert!(!has_label_containing(&h, "Target is on"));
    retype(
        &mut h,
        "Target directory",
        &dir.path().display().to_string(),
    );
    step_until(&mut h, "the mount line", Duration::from_secs(20), |h| {
        has_label_containing(h, "Target is on")
    });
    assert!(!has_label_containing(&h, "does not exist"));
}

#[test]
fn enter_with_no_field_focused_starts_the_run() {
    // (Enter inside a single-line field starts it too: crates/gui/tests/window/gui_setup_items.rs.)
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut state = ad_hoc_state();
    state.target = target.path().display().to_string();
    state.spec.file_size = 64 << 10;
    let mut h = harness(&dir, state);
    h.run_steps(2);
    h.key_press(Key::Enter);
    h.run_steps(2);
    assert_eq!(h.state().state.tab, Tab::Run);
    step_until(&mut h, "the run to end", Duration::from_secs(20), |h| {
        !h.state().runner.is_active()
    });
    assert_eq!(h.state().runner.live.results[0].status, RunStatus::Finished);
}

/// A target other users may write (mode 0777, not sticky): refused with the fix unless
/// the "Shared target" box is ticked, then run with a loud warning.
#[test]
fn shared_target_needs_the_checkbox_and_then_warns() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    std::fs::set_permissions(target.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut state = ad_hoc_state();
    state.target = target.path().display().to_string();
    state.spec.threads = 1;
    state.spec.file_size = 64 << 10;

    let mut h = harness(&dir, state.clone());
    h.run_steps(2);
    h.get_by_label("Start run").click();
    step_until(&mut h, "the refusal", Duration::from_secs(20), |h| {
        !h.state().runner.is_active()
            && (h.state().runner.live.error.is_some() || h.state().status.is_error)
    });
    let shown = format!(
        "{:?} {}",
        h.state().runner.live.error,
        h.state().status.message
    );
    // The window names its own checkbox, not the command-line flag.
    assert!(
        shown.contains("(\"Shared target\")") && !shown.contains("--allow-shared-target"),
        "{shown}"
    );
    assert!(h.state().runner.live.results.is_empty(), "nothing ran");

    let mut h = harness(&dir, state);
    h.run_steps(2);
    assert!(!h.state().state.allow_shared_target, "off by default");
    h.get_by_role_and_label(Role::CheckBox, "Shared target")
        .scroll_to_me();
    h.run_steps(5);
    h.get_by_role_and_label(Role::CheckBox, "Shared target")
        .click();
    h.run_steps(2);
    assert!(h.state().state.allow_shared_target);
    h.get_by_label("Start run").click();
    h.run_steps(2);
    step_until(&mut h, "the run to end", Duration::from_secs(20), |h| {
        !h.state().runner.is_active()
    });
    let live = &h.state().runner.live;
    assert_eq!(live.error, None);
    assert_eq!(live.results[0].status, RunStatus::Finished);
    assert!(
        fsynclab::report::run_warning_texts(&live.results[0])
            .iter()
            .any(|w| w.contains("not sticky") && !w.contains("--allow-shared-target")),
        "{:?}",
        live.results[0].warnings
    );
}

#[test]
fn a_presets_suggested_matrices_show_their_exact_options() {
    let dir = tempfile::tempdir().unwrap();
    // Taller than `harness`: the preset's description, its "what to watch" header and the
    // form stand above the matrices, whose rows must be on screen once expanded.
    let app = LabApp::new(dir.path().join("gui.sqlite"), ad_hoc_state());
    let mut h = gui_common::window(app, (1360.0, 1400.0));
    h.run_steps(3);
    h.get_by_role_and_label(Role::ComboBox, "Preset").click();
    h.run_steps(2);
    h.get_by_label("btrfs-log-commit").click();
    h.run_steps(3);
    let header = h.get_by_label_contains("Suggested matrices (");
    header.scroll_to_me();
    h.run_steps(2);
    h.get_by_label_contains("Suggested matrices (").click();
    h.run_steps(3);
    assert!(has_label_containing(
        &h,
        "fs btrfs · mkfs (defaults) · mount -o \"nossd\" | \"ssd\" · backing disk"
    ));
    assert!(has_label_containing(
        &h,
        "fs xfs · mkfs (defaults) · mount -o \"logbsize=32k\" | \"logbsize=256k\""
    ));
}

#[test]
fn the_prepare_row_offers_empty_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(&dir, ad_hoc_state());
    h.run_steps(3);
    assert_eq!(h.state().state.spec.prepare, Prepare::Sparse);
    h.get_by_role_and_label(Role::RadioButton, "empty").click();
    h.run_steps(2);
    assert_eq!(h.state().state.spec.prepare, Prepare::Empty);
}
