//! The window's kernel-trace elements (issue 14), driven headless with egui_kittest on
//! stored runs built in the test (nothing is traced here: crates/fsynclab/tests/system/ktrace.rs is the only test
//! that traces): the Kernel trace setting in Setup reaches the run, the Run tab's live
//! commits/s and flushes/s plot, History details' Kernel section (a figure that does not
//! apply is a dash, never 0), and each preset's "what to watch" list.

use crate::gui_common;
use fsynclab::spec::FlatSpec;

use crate::gui_common::{step_until, wait_for};
use std::path::Path;
use std::time::Duration;

use egui::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsynclab::ktrace::KernelTraceMode;
use fsynclab::metrics::{FlushLatency, IntervalSample, KernelTrace, RunStatus};
use fsynclab::probe::SystemInfo;
use fsynclab::spec::builtin_presets;
use fsynclab::store::{NewRun, Store};
use fsynclab_gui::{LabApp, Tab, UiState};

fn has_label_containing(h: &Harness<'static, LabApp>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

/// Four 1 s intervals with 10 journal commits and 20 flushes each.
fn kernel_samples() -> Vec<IntervalSample> {
    (1..=4)
        .map(|i| IntervalSample {
            t_ms: i * 1000,
            dur_ms: 1000,
            writes: 100,
            syncs: 100,
            kernel_commits: Some(10),
            kernel_flushes: Some(20),
            ..Default::default()
        })
        .collect()
}

/// A traced ext4 run on a journal-less filesystem: flushes and D state, no journal.
fn journal_less_trace() -> KernelTrace {
    KernelTrace {
        enabled: true,
        events: vec![
            "block:block_rq_complete".into(),
            "sched:sched_switch".into(),
        ],
        dropped: Some(0),
        events_read: Some(812),
        block_flushes: Some(80),
        fua_writes: Some(0),
        flush_lat_us: Some(FlushLatency {
            p50: 250.0,
            p99: 900.0,
            max: 1200.0,
        }),
        dstate_us: Some(40_000),
        dstate_us_per_sync: Some(100.0),
        ..Default::default()
    }
}

/// A finished run's result (a scripted one: nothing is measured).
fn tiny_result() -> fsynclab::metrics::RunResult {
    let spec = FlatSpec {
        threads: 1,
        file_size: 8 * 4096,
        ..FlatSpec::default()
    }
    .typed();
    fsynclab::engine::fake_run(
        0,
        vec![1_000; 400],
        vec![9_000; 400],
        &spec,
        SystemInfo::default(),
    )
    .unwrap()
}

/// Stores a finished run labelled `label` with `kernel` and [`kernel_samples`].
fn store_traced_run(db: &Path, label: &str, kernel: KernelTrace) -> i64 {
    let store = Store::open(db).unwrap();
    let mut result = tiny_result();
    let spec = result.spec.clone();
    result.intervals = kernel_samples();
    result.kernel_trace = Some(kernel);
    let new = NewRun {
        label: Some(label.into()),
        ..NewRun::new(spec, SystemInfo::default(), "/mnt/kt")
    };
    store.insert_finished(&new, &result).unwrap()
}

/// Clicks the Kernel trace radio button `mode`: the three are labelled by the row's
/// label, in the order auto, on, off.
fn click_kernel_trace(h: &mut Harness<'static, LabApp>, mode: KernelTraceMode) {
    h.get_by_role_and_label(Role::Label, "Kernel trace")
        .scroll_to_me();
    let _ = h.try_run();
    let mut radios: Vec<_> = h
        .get_all_by_role_and_label(Role::RadioButton, "Kernel trace")
        .collect();
    assert_eq!(radios.len(), 3, "auto, on, off");
    radios.sort_by(|a, b| a.rect().left().total_cmp(&b.rect().left()));
    let at = [
        KernelTraceMode::Auto,
        KernelTraceMode::On,
        KernelTraceMode::Off,
    ]
    .iter()
    .position(|m| *m == mode)
    .unwrap();
    radios.swap_remove(at).click();
    h.run_steps(3);
    assert_eq!(
        h.state().state.kernel_trace,
        mode,
        "after clicking {mode:?}"
    );
}

#[test]
fn the_kernel_trace_setting_reaches_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    let state = UiState {
        preset: None,
        spec: FlatSpec {
            file_size: 64 << 10,
            ..FlatSpec::default()
        },
        target: target.path().display().to_string(),
        ..UiState::default()
    };
    assert_eq!(state.kernel_trace, KernelTraceMode::Auto, "auto by default");
    let app = LabApp::new(db.clone(), state);
    let mut h = Harness::builder()
        .with_size(egui::vec2(1360.0, 900.0))
        .build_ui_state(|ui, app: &mut LabApp| app.ui_root(ui), app);
    h.run_steps(3);
    click_kernel_trace(&mut h, KernelTraceMode::On);
    click_kernel_trace(&mut h, KernelTraceMode::Auto);
    click_kernel_trace(&mut h, KernelTraceMode::Off);
    // The run started from the form is untraced, and says it was turned off.
    h.get_by_label("Start run").click();
    h.run_steps(2);
    step_until(&mut h, "the run to end", Duration::from_secs(60), |h| {
        !h.state().runner.is_active() && !h.state().runner.live.results.is_empty()
    });
    let result = &h.state().runner.live.results[0];
    assert_eq!(result.status, RunStatus::Finished);
    let kt = result.kernel_trace.as_ref().expect("kernel_trace recorded");
    assert!(!kt.enabled, "{kt:?}");
    assert_eq!(
        kt.reason,
        Some(fsynclab::metrics::Recorded::Typed(vec![
            fsynclab::metrics::TraceNote::TurnedOff
        ]))
    );
    let stored = Store::open_read_only(&db)
        .unwrap()
        .load_run(result.id)
        .unwrap()
        .result
        .unwrap();
    assert_eq!(stored.kernel_trace.as_ref(), Some(kt));
}

#[test]
fn the_run_tab_plots_the_kernels_commits_and_flushes_live() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = gui_common::harness_on(&dir.path().join("gui.sqlite"), Tab::Run);
    h.run_steps(3);
    assert!(!has_label_containing(&h, "kernel trace:"));
    // The Run tab as a launch leaves it: a result, then its intervals.
    h.state_mut().runner.live.results = vec![tiny_result()];
    // An untraced run's intervals draw no kernel plot.
    h.state_mut().runner.live.samples = kernel_samples()
        .into_iter()
        .map(|s| IntervalSample {
            kernel_commits: None,
            kernel_flushes: None,
            ..s
        })
        .collect();
    h.run_steps(3);
    assert!(h.query_by_label("Last run timeline").is_some());
    assert!(!has_label_containing(&h, "kernel trace:"));
    // Intervals carrying kernel counts: 10 commits and 20 flushes a second.
    h.state_mut().runner.live.samples = kernel_samples();
    h.run_steps(3);
    assert!(
        h.query_by_label("kernel trace: 10.0 commits/s, 20.0 flushes/s on average")
            .is_some()
    );
    // A journal-less filesystem has flushes but no commits: a dash, not 0.
    h.state_mut().runner.live.samples = kernel_samples()
        .into_iter()
        .map(|s| IntervalSample {
            kernel_commits: None,
            ..s
        })
        .collect();
    h.run_steps(3);
    assert!(
        h.query_by_label("kernel trace: — commits/s, 20.0 flushes/s on average")
            .is_some()
    );
}

#[test]
fn history_details_show_the_kernel_section_with_dashes_for_what_does_not_apply() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gui.sqlite");
    let journalled = store_traced_run(
        &db,
        "journalled",
        KernelTrace {
            journal_commits: Some(40),
            commits_per_sync: Some(0.1),
            handles_per_commit: Some(2.5),
            blocks_per_commit: None,
            ..journal_less_trace()
        },
    );
    let journal_less = store_traced_run(&db, "nojournal", journal_less_trace());
    let mut h = gui_common::harness_on(&db, Tab::History);
    wait_for(&mut h, "two rows", |a| a.cache.runs.len() == 2);
    gui_common::open_details(&mut h, "journalled", journalled);
    assert!(
        h.query_all_by_label("Kernel").next().is_some(),
        "no Kernel section"
    );
    assert!(has_label_containing(&h, "on: 812 events read, none lost"));
    assert!(has_label_containing(
        &h,
        "80 · p50 250 µs · p99 900 µs · max 1200 µs"
    ));
    assert!(has_label_containing(
        &h,
        "40 jbd2 commits · 0.100 per sync · 2.50 handles/commit · — blocks/commit"
    ));
    assert!(has_label_containing(
        &h,
        "0.040 s in D state · 100.0 µs per sync"
    ));
    assert!(has_label_containing(
        &h,
        "kernel trace: 10.0 commits/s, 20.0 flushes/s"
    ));

    gui_common::open_details(&mut h, "nojournal", journal_less);
    assert!(has_label_containing(
        &h,
        "— (does not apply: no jbd2 journal, xfs log or btrfs log on this filesystem)"
    ));
    assert!(!has_label_containing(&h, "jbd2 commits"));
    assert!(!has_label_containing(&h, "xfs log forces"));
}

#[test]
fn each_presets_what_to_watch_list_is_shown_in_setup() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = gui_common::harness_on(&dir.path().join("gui.sqlite"), Tab::Setup);
    h.run_steps(3);
    let presets = builtin_presets();
    assert!(
        presets.iter().all(|p| !p.watch.is_empty()),
        "every preset names its figures"
    );
    for preset in presets {
        if h.state().state.preset.as_deref() != Some(preset.name.as_str()) {
            h.get_by_role_and_label(Role::ComboBox, "Preset").click();
            h.run_steps(2);
            h.get_by_label(&preset.name).click();
            h.run_steps(3);
        }
        assert_eq!(
            h.state().state.preset.as_deref(),
            Some(preset.name.as_str())
        );
        let line = |w: &fsynclab::spec::Watch| format!("{}: {}", w.metric, w.why);
        // Collapsed until opened (it stays open from one preset to the next).
        if h.query_all_by_label(&line(&preset.watch[0]))
            .next()
            .is_none()
        {
            let header = format!("What to watch in the kernel trace ({})", preset.watch.len());
            h.get_by_label(&header).click();
            h.run_steps(3);
        }
        for w in &preset.watch {
            assert!(
                h.query_all_by_label(&line(w)).next().is_some(),
                "{}: no watch line {:?}",
                preset.name,
                line(w)
            );
        }
    }
}
