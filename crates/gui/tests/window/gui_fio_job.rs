//! "Open fio job…" driven headless with egui_kittest: a job file's text given as the dialog
//! would read it, the job list of a multi-job file, the form filled from the picked job with
//! its warnings, a run that records the job as its origin, and an edited form that says it
//! is no longer the job (and whose run records none).

use crate::gui_common;

use std::time::Duration;

use crate::gui_common::{retype, step_until};

use egui::accesskit::{Role, Toggled};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use fsynclab::metrics::RunStatus;
use fsynclab::spec::{Pattern, Prepare, SyncMethod};
use fsynclab::store::{OriginKind, Store};
use fsynclab_gui::{LabApp, UiState};

fn harness(dir: &tempfile::TempDir) -> Harness<'static, LabApp> {
    gui_common::harness_with(&dir.path().join("gui.sqlite"), UiState::default())
}

fn has_label_containing(h: &Harness<'static, LabApp>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

fn job_text(directory: &std::path::Path) -> String {
    format!(
        "[global]\nbs=4k\nfallocate=none\n\n[first]\nrw=write\nsize=64k\n\n\
         [second]\nrw=randwrite\nsize=128k\nnumjobs=2\nfdatasync=2\nloops=3\ndirectory={}\n",
        directory.display()
    )
}

/// Starts the form's run and waits for it; the stored run.
fn run_and_load(
    h: &mut Harness<'static, LabApp>,
    db: &std::path::Path,
) -> fsynclab::store::StoredRun {
    h.get_by_label("Start run").click();
    h.run_steps(2);
    step_until(h, "the run to end", Duration::from_secs(30), |h| {
        !h.state().runner.is_active()
    });
    let live = &h.state().runner.live;
    assert_eq!(live.error, None);
    let result = live.results.last().expect("a result");
    assert_eq!(result.status, RunStatus::Finished);
    Store::open(db).unwrap().load_run(result.id).unwrap()
}

#[test]
fn a_picked_job_fills_the_form_and_its_run_keeps_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let text = job_text(target.path());
    let mut h = harness(&dir);
    h.run_steps(2);
    assert!(has_label_containing(&h, "Open fio job…"));
    {
        let app = h.state_mut();
        app.setup
            .fio_job()
            .load_text(&mut app.state, "two.fio", &text);
    }
    h.run_steps(2);
    // Two jobs: the list, nothing filled yet.
    assert!(has_label_containing(&h, "two.fio has 2 jobs"));
    assert!(h.state().state.fio_job.is_none());
    h.get_by_label("[second]").click();
    h.run_steps(3);
    let state = &h.state().state;
    let loaded = state.fio_job.as_ref().expect("the job is loaded");
    assert_eq!(
        (loaded.file.as_str(), loaded.job.as_str()),
        ("two.fio", "second")
    );
    assert_eq!(state.preset, None);
    assert_eq!(state.spec.threads, 2);
    assert_eq!(state.spec.file_size, 128 << 10);
    assert_eq!(state.spec.pattern, Pattern::Rand);
    assert_eq!(
        (state.spec.sync, state.spec.sync_every),
        (SyncMethod::Fdatasync, 2)
    );
    assert_eq!(state.target, target.path().display().to_string());
    assert_eq!(state.label, "second");
    // [global] fallocate=none: the files start empty, and the form's radio says so.
    assert_eq!(state.spec.prepare, Prepare::Empty);
    assert!(
        h.get_by_role_and_label(Role::RadioButton, "empty")
            .accesskit_node()
            .toggled()
            == Some(Toggled::True)
    );
    assert!(has_label_containing(
        &h,
        "From fio job file two.fio, job [second]"
    ));
    assert!(has_label_containing(&h, "loops (line 14)"));
    assert!(has_label_containing(&h, "fio job [second] of two.fio"));

    let db = dir.path().join("gui.sqlite");
    let stored = run_and_load(&mut h, &db);
    let origin = stored.origin.expect("the run records the job");
    assert_eq!(origin.kind, OriginKind::FioJob);
    assert_eq!(origin.job.as_deref(), Some("second"));
    assert_eq!(origin.file.as_deref(), Some("two.fio"));
    assert_eq!(origin.job_text.as_deref(), Some(text.as_str()));
    let result = stored.result.expect("finished");
    assert!(
        fsynclab::report::run_warning_texts(&result)
            .iter()
            .any(|w| w.contains("loops (line 14)")),
        "{:?}",
        result.warnings
    );
    // fio's count: 32 writes per thread, fdatasync every 2, none after the last write.
    assert_eq!((result.writes, result.syncs), (64, 2 * 15));

    // Edited: the window says so, and the next run records no origin.
    h.state_mut().state.tab = fsynclab_gui::Tab::Setup;
    h.run_steps(2);
    retype(&mut h, "File size", "64k");
    h.run_steps(2);
    assert!(has_label_containing(
        &h,
        "the form no longer equals the fio job"
    ));
    let stored = run_and_load(&mut h, &db);
    assert_eq!(stored.origin, None);
}

#[test]
fn a_bad_job_file_shows_its_error_and_leaves_the_form() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(&dir);
    h.run_steps(2);
    let before = h.state().state.clone();
    {
        let app = h.state_mut();
        app.setup
            .fio_job()
            .load_text(&mut app.state, "bad.fio", "[j]\nrw=randrw\nsize=1m\n");
    }
    h.run_steps(2);
    assert!(has_label_containing(
        &h,
        "fio option rw=randrw (line 2): mixes reads and writes"
    ));
    assert_eq!(h.state().state, before);
}
