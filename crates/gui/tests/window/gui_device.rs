//! The Setup tab's block-device choice (issue 34) driven headless: the fields it shows, the
//! check of a typed path (a regular file is refused by name, before any run), a start
//! without the typed confirmation refused with nothing stored, a fio job on a device filling
//! the choice, and — as root, on a loop device over a temporary image — a confirmed run
//! from the window stored as a raw-device run.

use crate::gui_common::{self, retype, step_until};

use std::time::Duration;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsynclab::store::{RunFilter, Store};
use fsynclab_gui::{LabApp, UiState};

fn has_label_containing(h: &Harness<'static, LabApp>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

#[test]
fn the_device_choice_checks_the_path_and_wants_the_name_typed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    let image = dir.path().join("image");
    std::fs::write(&image, vec![0u8; 1 << 20]).unwrap();
    let mut h = gui_common::harness_with(&db, UiState::default());
    h.run_steps(2);
    assert!(!has_label_containing(&h, "Device offset"));
    gui_common::on_device(&mut h, image.to_str().unwrap());
    for field in [
        "Device offset",
        "Device range",
        "Type the device's name to confirm",
    ] {
        assert!(has_label_containing(&h, field), "{field}");
    }
    assert!(has_label_containing(
        &h,
        "is a regular file, not a block device"
    ));
    assert!(has_label_containing(&h, "not confirmed"));
    assert!(has_label_containing(&h, "on device"));
    h.get_by_label("Start run").click();
    h.run_steps(3);
    assert!(
        has_label_containing(&h, "cannot start: type"),
        "a start without the typed name is refused on the Setup tab: {:?}",
        gui_common::painted_texts(&h)
    );
    retype(
        &mut h,
        "Type the device's name to confirm",
        image.to_str().unwrap(),
    );
    assert!(has_label_containing(
        &h,
        "confirmed: the run overwrites the range"
    ));
    // Confirmed, the lab's own checks refuse it when the run starts.
    h.get_by_label("Start run").click();
    h.run_steps(2);
    step_until(&mut h, "the refusal", Duration::from_secs(10), |h| {
        !h.state().runner.is_active()
    });
    let error = h.state().runner.live.error.clone().unwrap_or_default();
    assert!(
        error.contains("is a regular file, not a block device"),
        "{error}"
    );
    if db.exists() {
        let rows = Store::open(&db)
            .unwrap()
            .list_runs(&RunFilter::default())
            .unwrap();
        assert!(rows.is_empty(), "nothing stored");
    }
    assert_eq!(std::fs::read(&image).unwrap(), vec![0u8; 1 << 20]);
}

#[test]
fn a_fio_job_on_a_device_fills_the_device_choice() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = gui_common::harness_with(&dir.path().join("gui.sqlite"), UiState::default());
    h.run_steps(2);
    {
        let app = h.state_mut();
        let job =
            "[dev]\nfilename=/dev/loop9\nrw=randwrite\nbs=4k\nsize=2m\noffset=8m\nfdatasync=1\n";
        app.setup
            .fio_job()
            .load_text(&mut app.state, "dev.fio", job);
    }
    h.run_steps(3);
    let d = &h.state().state.device;
    assert!(d.on);
    assert_eq!(
        (d.path.as_str(), d.offset.as_str()),
        ("/dev/loop9", "8388608")
    );
    assert!(
        d.confirm.is_empty(),
        "the confirmation is typed, never filled"
    );
}

#[test]
fn a_confirmed_run_from_the_window_is_a_raw_device_run() {
    if !crate::common::scratch_or_skip(
        "a_confirmed_run_from_the_window_is_a_raw_device_run",
        "a loop device over a temporary image",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let device = gui_common::LoopDevice::over_image(dir.path(), 32 << 20);
    let node = device.node.clone();
    let db = dir.path().join("gui.sqlite");
    let mut state = UiState::default();
    state.spec.threads = 1;
    state.spec.block_size = 4096;
    state.spec.duration_s = None;
    state.spec.requests = Some(64);
    state.kernel_trace = fsynclab::ktrace::KernelTraceMode::Off;
    let mut h = gui_common::harness_with(&db, state);
    h.run_steps(2);
    gui_common::on_device(&mut h, &node);
    assert!(has_label_containing(&h, "32M"), "the size is shown");
    retype(&mut h, "Device offset", "4M");
    retype(&mut h, "Device range", "1M");
    retype(&mut h, "Type the device's name to confirm", &node);
    h.get_by_label("Start run").click();
    h.run_steps(2);
    step_until(&mut h, "the run to end", Duration::from_secs(30), |h| {
        !h.state().runner.is_active()
    });
    let live = &h.state().runner.live;
    assert_eq!(live.error, None);
    let id = live.results.last().expect("a result").id;
    let stored = Store::open(&db).unwrap().load_run(id).unwrap();
    let raw = stored.system.raw_device.expect("a raw-device run");
    assert_eq!((raw.offset, raw.length), (4 << 20, 1 << 20));
    assert_eq!(raw.node, std::path::PathBuf::from(&node));
}
