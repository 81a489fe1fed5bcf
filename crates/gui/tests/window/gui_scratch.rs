//! Scratch filesystems and matrices from the Setup tab, for real: loop images are made,
//! mounted, run on and destroyed (root only; skipped with a reason otherwise, never when
//! CI=true).

use crate::gui_common;

use crate::gui_common::step_until;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use fsynclab::metrics::RunStatus;
use fsynclab::scratch::ScratchManager;
use fsynclab::store::{RunFilter, Store};
use fsynclab_gui::{CloseState, LabApp, Tab, UiState};

/// True when the test may run; prints why not otherwise (fails under CI=true).
fn root_or_skip(test: &str) -> bool {
    crate::common::scratch_or_skip(test, "scratch filesystems: losetup, mkfs, mount")
}

/// A temporary state directory and a RAM directory under /dev/shm, removed on drop.
struct Dirs {
    tmp: tempfile::TempDir,
    ram: tempfile::TempDir,
}

impl Dirs {
    fn new() -> Dirs {
        use std::os::unix::fs::PermissionsExt;
        let dirs = Dirs {
            tmp: tempfile::tempdir().expect("tempdir"),
            ram: tempfile::Builder::new()
                .prefix("fsynclab-gui-test-")
                .tempdir_in("/dev/shm")
                .expect("a directory in /dev/shm"),
        };
        // Scratch roots must be private (fsynclab refuses others-accessible ones).
        std::fs::set_permissions(dirs.ram.path(), std::fs::Permissions::from_mode(0o700))
            .expect("chmod ram dir");
        dirs
    }
    fn state(&self) -> PathBuf {
        self.tmp.path().join("scratch")
    }
    fn manager(&self) -> ScratchManager {
        ScratchManager::with_roots(self.state(), self.ram.path().to_path_buf())
    }
    fn db(&self) -> PathBuf {
        self.tmp.path().join("gui.sqlite")
    }
}

impl Drop for Dirs {
    fn drop(&mut self) {
        // Never leave a mount or loop device behind, even when an assertion failed.
        let _ = self.manager().destroy_all();
    }
}

fn harness(dirs: &Dirs, state: UiState) -> Harness<'static, LabApp> {
    let mut app = LabApp::new(dirs.db(), state);
    app.setup.set_scratch_manager(dirs.manager());
    gui_common::window(app, gui_common::WINDOW_SIZE)
}

/// Scrolls to the widget and lets the scroll animation end (a click lands on the rect's
/// centre, so the rect must be where it is drawn).
fn show(h: &mut Harness<'static, LabApp>, label: &str) {
    h.get_by_label(label).scroll_to_me();
    h.run_steps(20);
}

fn click(h: &mut Harness<'static, LabApp>, label: &str) {
    show(h, label);
    h.get_by_label(label).click();
    h.run_steps(3);
}

fn retype(h: &mut Harness<'static, LabApp>, label: &str, text: &str) {
    show(h, label);
    h.get_by_label(label).click();
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    h.get_by_label(label).type_text(text);
    h.run_steps(2);
}

/// Mount points under `dir` in /proc/self/mountinfo.
fn mounts_under(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    let dir = dir.display().to_string();
    text.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .filter(|m| m.starts_with(&dir))
        .map(str::to_string)
        .collect()
}

#[test]
fn create_use_and_destroy_a_scratch_filesystem() {
    if !root_or_skip("create_use_and_destroy_a_scratch_filesystem") {
        return;
    }
    let dirs = Dirs::new();
    let mut h = harness(&dirs, UiState::default());
    h.run_steps(3);

    retype(&mut h, "Scratch size", "300M");
    click(&mut h, "Create scratch filesystem");
    step_until(
        &mut h,
        "the new filesystem in the list",
        Duration::from_secs(60),
        |h| h.query_by_label("Use as target").is_some(),
    );
    let list = dirs.manager().list().expect("list");
    assert_eq!(list.len(), 1);
    let recipe = &list[0].recipe;
    assert!(list[0].mounted);
    assert_eq!(recipe.size_bytes, 300 << 20);
    assert_eq!(recipe.fs.as_str(), "ext4");
    let mount = recipe.mount_point.display().to_string();
    assert_eq!(
        h.state().state.target,
        mount,
        "a new filesystem becomes the target"
    );
    // At least one node: the mounts table may show the same device name too (another
    // test's loop filesystem, or this one's mount), and query_by_label panics on two.
    assert!(
        h.query_all_by_label(&recipe.device).next().is_some(),
        "the list shows the device"
    );

    h.state_mut().state.target = "/tmp".into();
    click(&mut h, "Use as target");
    assert_eq!(h.state().state.target, mount);

    // Esc cancels the confirmation.
    click(&mut h, "Destroy");
    assert!(
        h.query_by_label("Yes, destroy").is_some(),
        "a confirmation dialog"
    );
    h.key_press(Key::Escape);
    h.run_steps(3);
    assert!(
        h.query_by_label("Yes, destroy").is_none(),
        "Esc closes the dialog"
    );
    assert_eq!(mounts_under(&dirs.state()).len(), 1, "Esc destroys nothing");

    click(&mut h, "Destroy");
    click(&mut h, "Yes, destroy");
    step_until(
        &mut h,
        "the filesystem to go",
        Duration::from_secs(60),
        |h| {
            h.query_by_label("Use as target").is_none()
                && h.query_by_label_contains("destroying").is_none()
        },
    );
    assert!(
        mounts_under(&dirs.state()).is_empty(),
        "{:?}",
        mounts_under(&dirs.state())
    );
    assert!(dirs.manager().list().expect("list").is_empty());
}

#[test]
fn a_bad_mount_option_is_shown_and_leaves_nothing() {
    if !root_or_skip("a_bad_mount_option_is_shown_and_leaves_nothing") {
        return;
    }
    let dirs = Dirs::new();
    let mut h = harness(&dirs, UiState::default());
    h.run_steps(3);
    retype(&mut h, "Scratch size", "300M");
    // Off the allow-list: the library's refusal is shown inline and nothing can start.
    retype(&mut h, "Mount options", "no_such_option_xyz");
    h.run_steps(2);
    assert!(
        h.query_by_label_contains("mount option `no_such_option_xyz` is not allowed for ext4")
            .is_some()
    );
    assert!(
        h.get_by_label("Create scratch filesystem")
            .accesskit_node()
            .is_disabled()
    );
    retype(&mut h, "mkfs options", "-L b /dev/loop0");
    h.run_steps(2);
    assert!(
        h.query_by_label_contains("mkfs option `/dev/loop0` is not allowed")
            .is_some()
    );
    retype(&mut h, "mkfs options", "-q");
    // On the allow-list, refused by the kernel: mount's and the kernel's message are shown.
    retype(&mut h, "Mount options", "inode_readahead_blks=3");
    h.run_steps(2);
    click(&mut h, "Create scratch filesystem");
    step_until(&mut h, "the mount error", Duration::from_secs(60), |h| {
        h.query_by_label_contains("mount -o 'inode_readahead_blks=3' failed")
            .is_some()
    });
    h.run_steps(5);
    assert!(h.query_by_label("Use as target").is_none());
    assert!(dirs.manager().list().expect("list").is_empty());
    assert!(mounts_under(&dirs.state()).is_empty());
    let ram_left = std::fs::read_dir(dirs.ram.path()).expect("ram dir").count();
    assert_eq!(ram_left, 0, "no image left in the RAM directory");
}

#[test]
fn start_matrix_runs_each_configuration_on_its_own_filesystem() {
    if !root_or_skip("start_matrix_runs_each_configuration_on_its_own_filesystem") {
        return;
    }
    let dirs = Dirs::new();
    let mut state = UiState {
        preset: None,
        ..Default::default()
    };
    state.spec.threads = 2;
    state.spec.file_size = 64 << 10;
    state.spec.io_size = None;
    state.spec.duration_s = None;
    state.spec.requests = None;
    state.sweep.clear();
    state.repeat = 1;
    let mut h = harness(&dirs, state);
    h.run_steps(3);

    click(&mut h, "Matrix (scratch filesystems)");
    h.run_steps(20);
    h.get_by_role_and_label(Role::CheckBox, "btrfs")
        .scroll_to_me();
    h.run_steps(20);
    h.get_by_role_and_label(Role::CheckBox, "btrfs").click();
    h.run_steps(2);
    retype(&mut h, "Mount option sets", "nossd\nssd");
    retype(&mut h, "Matrix image size", "512M");
    assert!(
        h.query_by_label("btrfs -o nossd").is_some(),
        "the configurations are listed"
    );
    assert!(h.query_by_label("btrfs -o ssd").is_some());

    click(&mut h, "Start matrix");
    assert_eq!(
        h.state().state.tab,
        Tab::Run,
        "Start matrix shows the Run tab"
    );
    step_until(&mut h, "the matrix to end", Duration::from_secs(90), |h| {
        !h.state().runner.is_active()
    });
    let live = &h.state().runner.live;
    assert_eq!(live.error, None);
    assert_eq!(live.results.len(), 2);
    for r in &live.results {
        assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    }
    let store = Store::open(&dirs.db()).expect("store");
    let mut labels: Vec<String> = store
        .list_runs(&RunFilter::default())
        .expect("runs")
        .into_iter()
        .filter_map(|r| r.label)
        .collect();
    labels.sort();
    assert_eq!(labels, vec!["btrfs -o nossd", "btrfs -o ssd"]);
    assert!(
        mounts_under(&dirs.state()).is_empty(),
        "{:?}",
        mounts_under(&dirs.state())
    );
    assert!(dirs.manager().list().expect("list").is_empty());
}

/// Answers the close dialog "Cancel the run and close" and steps until the window closes,
/// looking at every frame from the click on: the window sends its one `Close` command in
/// the frame that sees the run thread gone (issue 29: the test used `click`, which steps
/// three frames after the click, and looked only at the frame after; when the run thread
/// ended within those frames, slow under load, the Close went by unseen and the test
/// waited out its bound with the window already `Closing` and everything cleaned up).
fn cancel_and_close(h: &mut Harness<'static, LabApp>, dirs: &Dirs) {
    use egui::{ViewportCommand, ViewportId};
    show(h, "Cancel the run and close");
    h.get_by_label("Cancel the run and close").click();
    h.run_steps(1);
    assert_eq!(
        h.state().close,
        CloseState::Stopping,
        "the click did not cancel"
    );
    // No frame for a while, as a starved UI thread on a loaded machine: the run thread
    // usually ends first (0.1-5 s measured at load 2-19), the case that used to hang.
    std::thread::sleep(Duration::from_secs(2));
    let start = Instant::now();
    let mut reported = false;
    loop {
        // Cancel, store, umount and losetup -d take under 5 s even at load 19; a slow
        // close says where it waits.
        assert!(start.elapsed() < Duration::from_secs(60), "never closed");
        if !reported && start.elapsed() > Duration::from_secs(10) {
            reported = true;
            eprintln!(
                "SLOW CLOSE: still closing after 10 s; close {:?}, run phase {:?}, status {:?}, mounts {:?}",
                h.state().close,
                h.state().runner.live.phase,
                h.state().status.message,
                mounts_under(&dirs.state())
            );
        }
        h.run_steps(1);
        let close_sent = h
            .output()
            .viewport_output
            .get(&ViewportId::ROOT)
            .is_some_and(|v| v.commands.contains(&ViewportCommand::Close));
        if h.state().close == CloseState::Closing {
            assert!(close_sent, "Closing without sending Close in that frame");
            break;
        }
        assert!(!close_sent, "Close sent in state {:?}", h.state().close);
        std::thread::sleep(Duration::from_millis(30));
    }
    if start.elapsed() > Duration::from_secs(10) {
        eprintln!("SLOW CLOSE: the window took {:?} to close", start.elapsed());
    }
    assert!(!h.state().runner.is_active());
}

#[test]
fn closing_during_a_matrix_destroys_its_scratch_filesystem_first() {
    if !root_or_skip("closing_during_a_matrix_destroys_its_scratch_filesystem_first") {
        return;
    }
    let dirs = Dirs::new();
    let mut state = UiState {
        preset: None,
        ..Default::default()
    };
    state.spec.threads = 1;
    state.spec.file_size = 1 << 20;
    state.spec.io_size = None;
    state.spec.duration_s = Some(30.0);
    state.spec.requests = None;
    state.spec.sync = fsynclab::spec::SyncMethod::None;
    state.sweep.clear();
    state.repeat = 1;
    let mut h = harness(&dirs, state);
    h.run_steps(3);
    click(&mut h, "Matrix (scratch filesystems)");
    h.run_steps(20);
    h.get_by_role_and_label(Role::CheckBox, "btrfs")
        .scroll_to_me();
    h.run_steps(20);
    h.get_by_role_and_label(Role::CheckBox, "btrfs").click();
    h.run_steps(2);
    retype(&mut h, "Mount option sets", "nossd\nssd");
    retype(&mut h, "Matrix image size", "512M");
    click(&mut h, "Start matrix");
    step_until(
        &mut h,
        "the first timed run",
        Duration::from_secs(60),
        |h| {
            h.state()
                .runner
                .live
                .started
                .is_some_and(|t| t.elapsed() > Duration::from_millis(500))
        },
    );
    assert_eq!(
        mounts_under(&dirs.state()).len(),
        1,
        "the first filesystem is mounted"
    );

    // The window manager's close button.
    gui_common::press_close(&mut h);
    h.run_steps(2);
    assert!(
        h.query_all_by_label_contains("scratch filesystem is unmounted and destroyed")
            .next()
            .is_some(),
        "the dialog does not say the matrix is cleaned up"
    );
    cancel_and_close(&mut h, &dirs);
    // By the time the window closes, the filesystem is gone and the run is stored.
    assert!(
        mounts_under(&dirs.state()).is_empty(),
        "{:?}",
        mounts_under(&dirs.state())
    );
    assert!(dirs.manager().list().expect("list").is_empty());
    let store = Store::open(&dirs.db()).expect("store");
    let rows = store.list_runs(&RunFilter::default()).expect("runs");
    assert_eq!(rows.len(), 1, "the second configuration never started");
    assert_eq!(rows[0].status, RunStatus::Cancelled);
    assert!(store.load_run(rows[0].id).expect("run").result.is_some());
}
