//! The Advisor tab driven headless with egui_kittest: a budget that does not read keeps
//! Start off and is said under the field; a small plan runs for real on a temp directory,
//! the frontier and the recommendation appear with the report's own sentence, the advice is
//! stored, and Export report writes Markdown once (over an existing file only with Replace
//! existing files); a directory that is not there is refused by the tab's own field name,
//! the answer shown before kept.

use crate::gui_common;

use std::time::Duration;

use crate::gui_common::{retype, step_until};

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use fsynclab::lab::advise::{AdvisePlan, LogShape};
use fsynclab::spec::Strategy;
use fsynclab::store::Store;
use fsynclab_gui::{LabApp, Tab, UiState};

fn shows(h: &Harness<'static, LabApp>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

/// 2 strategies × writers 1 and 16 × 3 rounds, k = 1, 2 in both layouts, the eight
/// methods: 24 runs of 50 ms.
fn tiny_plan() -> AdvisePlan {
    AdvisePlan {
        strategies: vec![Strategy::Solo, Strategy::Leader],
        writers: vec![1, 16],
        repeat: 3,
        run_s: 0.05,
        log: LogShape::Preallocated,
        sync_ks: vec![1, 2],
        sync_repeat: 1,
        sync_s: 0.05,
        method_repeat: 1,
        method_s: 0.05,
        device: false,
    }
}

#[test]
fn an_advice_runs_from_the_tab_and_its_answer_is_shown_stored_and_exported() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let state = UiState {
        tab: Tab::Advisor,
        kernel_trace: fsynclab::ktrace::KernelTraceMode::Off,
        ..Default::default()
    };
    let mut h = gui_common::harness_with(&db, state);
    h.state_mut().advisor.plan = Some(tiny_plan());
    h.run_steps(3);
    assert!(shows(
        &h,
        "Advisor: which way of committing is fastest here"
    ));

    // A budget without a unit is said under the field and keeps Start off.
    retype(&mut h, "Latency budget (p99)", "5");
    assert!(shows(&h, "has no unit"), "no budget message");
    assert!(
        h.get_by_label("Start advice")
            .accesskit_node()
            .is_disabled()
    );
    retype(&mut h, "Latency budget (p99)", "5m");
    h.key_press(egui::Key::Backspace);
    h.key_press(egui::Key::Backspace);
    h.run_steps(2);
    assert!(h.state().advisor.budget.is_empty());
    assert!(
        !h.get_by_label("Start advice")
            .accesskit_node()
            .is_disabled()
    );

    retype(&mut h, "Directory to measure", target.to_str().unwrap());
    h.get_by_label("Start advice").click();
    step_until(&mut h, "the advice", Duration::from_secs(120), |h| {
        h.state().advisor.outcome.is_some()
    });
    h.run_steps(3);
    let (id, advice) = h.state().advisor.outcome.clone().unwrap();
    assert_eq!(advice.points.len(), 4, "{:?}", advice.points);
    assert!(advice.stopped.is_none());
    assert!(shows(&h, "Frontier at 16 writers"));
    let sentence = format!(
        "Recommended at 16 writers: {}",
        fsynclab::report::advice_reason(&advice, &advice.recommended)
    );
    assert!(shows(&h, &sentence), "no recommendation: {sentence}");
    assert!(shows(&h, &format!("The whole answer (advice {id})")));

    // Stored, with its 24 runs in one experiment.
    let store = Store::open(&db).unwrap();
    let stored = store.list_advice().unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].id, id);
    let runs = store
        .run_ids_in_experiment(stored[0].experiment_id.unwrap())
        .unwrap();
    assert_eq!(runs.len(), 24);

    // Export writes Markdown once; a second export to the same file is refused, inline.
    let report = dir.path().join("advice.md");
    retype(
        &mut h,
        "Report file (.png, .svg, .md, .json, .csv)",
        report.to_str().unwrap(),
    );
    h.get_by_label("Export report").click();
    h.run_steps(3);
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(text.starts_with("## Commit advice:"), "{text}");
    // The image beside it, embedded by the Markdown.
    let png = std::fs::read(dir.path().join("advice.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    assert!(text.contains("![advice](advice.png)"), "{text}");
    assert!(shows(&h, "saved"));
    h.get_by_label("Export report").click();
    h.run_steps(3);
    assert!(
        shows(&h, "exists"),
        "a second export must not replace the file"
    );
    // ...unless asked, with the tab's own "Replace existing files" (the refusal names it).
    h.get_by_label("Replace existing files").click();
    h.get_by_label("Export report").click();
    h.run_steps(3);
    // Said with the files' full paths.
    assert!(shows(&h, &format!(" and {}", report.display())));

    // A directory that is not there: refused by this tab's name for the field, and the
    // answer shown before stays.
    retype(
        &mut h,
        "Directory to measure",
        dir.path().join("gone").to_str().unwrap(),
    );
    h.get_by_label("Start advice").click();
    step_until(&mut h, "the refusal", Duration::from_secs(30), |h| {
        !h.state().advisor.is_running() && h.state().advisor.error().is_some()
    });
    h.run_steps(3);
    let error = h.state().advisor.error().unwrap().to_string();
    assert!(
        error.contains("\"Directory to measure\"") && !error.contains("Target directory"),
        "{error}"
    );
    assert_eq!(h.state().advisor.outcome.as_ref().map(|o| o.0), Some(id));
    assert!(shows(&h, &format!("The whole answer (advice {id})")));
}
