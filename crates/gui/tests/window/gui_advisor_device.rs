//! The Advisor tab on a bare block device (issue 35 with issue 34's checks) driven headless:
//! the device's fields replace the directory, budget and log; a start without the typed
//! confirmation, or on a path that is no block device, is refused in the tab with nothing
//! stored; and — as root, on a loop device over a temporary image — a small plan runs from
//! the window, its answer says there are no strategies on a device, and it is stored.

use crate::gui_common::{self, retype, step_until};

use std::time::Duration;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsynclab::lab::advise::{AdvisePlan, LogShape};
use fsynclab::store::Store;
use fsynclab_gui::{LabApp, Tab, UiState};

fn shows(h: &Harness<'static, LabApp>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

fn advisor(db: &std::path::Path) -> Harness<'static, LabApp> {
    let state = UiState {
        tab: Tab::Advisor,
        kernel_trace: fsynclab::ktrace::KernelTraceMode::Off,
        ..Default::default()
    };
    let mut h = gui_common::harness_with(db, state);
    h.run_steps(3);
    h
}

#[test]
fn the_advisors_device_form_refuses_before_anything_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    let image = dir.path().join("image");
    std::fs::write(&image, vec![0u8; 1 << 20]).unwrap();
    let mut h = advisor(&db);
    assert!(shows(&h, "Directory to measure"));
    gui_common::on_device(&mut h, image.to_str().unwrap());
    // The device's fields instead of the directory, the budget and the log.
    assert!(!shows(&h, "Directory to measure"));
    assert!(!shows(&h, "Latency budget (p99)"));
    assert!(shows(&h, "No group-commit strategies"));
    assert!(shows(&h, "Device offset"));
    assert!(!shows(&h, "Device range"), "each run takes its own length");
    // Not confirmed: refused in the tab.
    h.get_by_label("Start advice").click();
    h.run_steps(3);
    assert!(shows(&h, "again in \"Type the device's name to confirm\""));
    // Confirmed, but a regular file: the lab's refusal, worded.
    retype(
        &mut h,
        "Type the device's name to confirm",
        image.to_str().unwrap(),
    );
    h.get_by_label("Start advice").click();
    step_until(&mut h, "the refusal", Duration::from_secs(20), |h| {
        !h.state().advisor.is_running()
    });
    h.run_steps(3);
    assert!(shows(&h, "not a block device"), "no refusal shown");
    assert!(h.state().advisor.outcome.is_none());
    if db.exists() {
        let store = Store::open(&db).unwrap();
        assert!(store.list_advice().unwrap().is_empty());
        assert!(store.list_runs(&Default::default()).unwrap().is_empty());
    }
    assert_eq!(std::fs::read(&image).unwrap(), vec![0u8; 1 << 20]);
}

#[test]
fn an_advice_on_a_loop_device_runs_from_the_tab() {
    if !crate::common::scratch_or_skip(
        "an_advice_on_a_loop_device_runs_from_the_tab",
        "a loop device over a temporary image",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let device = gui_common::LoopDevice::over_image(dir.path(), 32 << 20);
    let node = device.node.clone();
    let db = dir.path().join("gui.sqlite");
    let mut h = advisor(&db);
    // k = 1, 2 in own regions, the six methods a device can do: 8 runs of 50 ms.
    h.state_mut().advisor.plan = Some(AdvisePlan {
        strategies: Vec::new(),
        writers: Vec::new(),
        repeat: 3,
        run_s: 0.05,
        log: LogShape::Preallocated,
        sync_ks: vec![1, 2],
        sync_repeat: 1,
        sync_s: 0.05,
        method_repeat: 1,
        method_s: 0.05,
        device: true,
    });
    gui_common::on_device(&mut h, &node);
    retype(&mut h, "Device offset", "1M");
    retype(&mut h, "Type the device's name to confirm", &node);
    h.get_by_label("Start advice").click();
    step_until(&mut h, "the advice", Duration::from_secs(120), |h| {
        h.state().advisor.outcome.is_some() || h.state().advisor.error().is_some()
    });
    h.run_steps(3);
    assert_eq!(h.state().advisor.error(), None);
    let (id, advice) = h.state().advisor.outcome.clone().unwrap();
    assert!(advice.raw_device, "{advice:?}");
    assert_eq!(advice.target, node);
    assert!(advice.points.is_empty());
    assert_eq!(advice.methods.len(), 6, "{:?}", advice.methods);
    assert!(shows(&h, "Group-commit strategies: not measured"));
    let store = Store::open(&db).unwrap();
    let stored = store.list_advice().unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].id, id);
    let runs = store
        .run_ids_in_experiment(stored[0].experiment_id.unwrap())
        .unwrap();
    assert_eq!(runs.len(), 8);
}
