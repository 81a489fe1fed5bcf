//! The Setup tab's workload-kind section: choosing a kind shows its parameters, typed values
//! reach the spec, the library's validation message shows beside the field, and a grouplog
//! run started from the window stores its group-commit figures (a fileserver run its dbench-style
//! figures).

use crate::gui_common;
use fsynclab::spec::FlatSpec;

use std::time::Duration;

use crate::gui_common::{retype, step_until};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsynclab::spec::{Strategy, WorkloadKind, WorkloadSpec};
use fsynclab_gui::{LabApp, UiState};

fn harness(dir: &tempfile::TempDir, state: UiState) -> Harness<'static, LabApp> {
    let app = LabApp::new(dir.path().join("gui.sqlite"), state);
    gui_common::window(app, (1360.0, 1400.0))
}

/// The window on the Setup tab's default fileio form (no preset).
fn fileio_form(dir: &tempfile::TempDir) -> Harness<'static, LabApp> {
    let state = UiState {
        preset: None,
        spec: WorkloadSpec::default().flat(),
        ..UiState::default()
    };
    let mut h = harness(dir, state);
    h.run_steps(3);
    h
}

fn has(h: &Harness<'static, LabApp>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

#[test]
fn each_kind_shows_its_own_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fileio_form(&dir);
    assert!(has(&h, "Block size"), "fileio shows its file shape");
    assert!(!has(&h, "Record size"));

    h.get_by_label("grouplog").click();
    h.run_steps(3);
    assert_eq!(h.state().state.spec.kind, WorkloadKind::Grouplog);
    assert!(has(&h, "Record size") && has(&h, "Strategy"));
    assert!(!has(&h, "Block size"), "fileio's shape is hidden");
    h.get_by_label("jbd").click();
    h.run_steps(2);
    assert_eq!(h.state().state.spec.grouplog.strategy, Strategy::Jbd);
    retype(&mut h, "Strategy", "delay:250");
    assert_eq!(
        h.state().state.spec.grouplog.strategy,
        Strategy::Delay { us: 250 }
    );
    // A record larger than the log: the library's message, next to the field.
    retype(&mut h, "Log size", "2k");
    h.run_steps(2);
    assert!(has(&h, "does not fit in a 2k log"));
    retype(&mut h, "Log size", "1M");
    h.run_steps(2);
    assert!(!has(&h, "does not fit"));

    h.get_by_label("smallfiles").click();
    h.run_steps(3);
    assert!(has(&h, "Files per thread") && has(&h, "File sync"));
    h.get_by_label("64-byte xattr").click();
    h.get_by_label("syncfs").click();
    h.run_steps(2);
    let s = &h.state().state.spec.smallfiles;
    assert!(s.xattr);
    assert_eq!(s.sync, fsynclab::spec::FileSync::Syncfs);

    h.get_by_label("fileserver").click();
    h.run_steps(3);
    assert!(has(&h, "Files per client") && has(&h, "Clients"));
}

#[test]
fn a_grouplog_run_from_the_window_shows_its_group_commit_figures() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut spec = FlatSpec {
        kind: WorkloadKind::Grouplog,
        threads: 4,
        requests: Some(200),
        sync: fsynclab::spec::SyncMethod::Fdatasync,
        ..FlatSpec::default()
    }
    .typed();
    spec.edit(|f| f.grouplog.strategy = Strategy::Leader);
    spec.edit(|f| f.grouplog.record_size = 512);
    let state = UiState {
        preset: None,
        spec: spec.flat(),
        target: target.path().display().to_string(),
        ..UiState::default()
    };
    let mut h = harness(&dir, state);
    h.run_steps(3);
    h.get_by_label("Start run").click();
    step_until(
        &mut h,
        "the grouplog figures",
        Duration::from_secs(60),
        |h| has(h, "grouplog figures"),
    );
    // A grid, not a block aligned with spaces: each figure in its own cell.
    assert!(has(&h, "Strategy") && h.query_by_label("leader").is_some());
    assert!(h.query_by_label("Commits").is_some());
    assert!(has(&h, "200 ("), "no commit count cell");
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
}

/// An append run set up by clicking: the kind, its segment size typed into its own row,
/// a stop rule chosen; it runs, stores its figures and switches segments.
#[test]
fn an_append_run_from_the_window_switches_segments() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let state = UiState {
        preset: None,
        spec: WorkloadSpec::default().flat(),
        target: target.path().display().to_string(),
        ..UiState::default()
    };
    let mut h = harness(&dir, state);
    h.run_steps(3);
    h.get_by_label("append").click();
    h.run_steps(3);
    assert_eq!(h.state().state.spec.kind, WorkloadKind::Append);
    retype(&mut h, "Segment size", "16k");
    assert_eq!(h.state().state.spec.append.segment_size, 16 << 10);
    h.get_by_label("by requests").click();
    h.run_steps(3);
    let spec = &h.state().state.spec;
    assert!(
        spec.requests.is_some() && spec.validate().is_ok(),
        "{spec:?}"
    );
    h.get_by_label("Start run").click();
    step_until(&mut h, "the append run", Duration::from_secs(60), |h| {
        h.state()
            .runner
            .live
            .results
            .first()
            .is_some_and(|r| r.status == fsynclab::metrics::RunStatus::Finished)
    });
    let r = &h.state().runner.live.results[0];
    assert_eq!(r.spec.kind(), WorkloadKind::Append);
    let rotations = r
        .ops
        .iter()
        .find(|o| o.op == "rotate")
        .map_or(0, |o| o.count);
    assert!(rotations > 0, "no segment switch: {:?}", r.ops);
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
}

#[test]
fn a_preset_series_runs_every_variant_from_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let preset = fsynclab::spec::load_preset("ext4-fsync-coordination").unwrap();
    let scale = 0.002;
    let state = UiState {
        preset: Some(preset.name.clone()),
        spec: preset.scaled(scale).unwrap().flat(),
        scale,
        target: target.path().display().to_string(),
        // Repetitions set to 1 (a preset's series otherwise repeats each point 3 times;
        // gui::state tests that default): one run per point keeps this test short.
        repeat: 1,
        repeat_set: true,
        ..UiState::default()
    };
    let mut h = harness(&dir, state);
    h.run_steps(3);
    h.get_by_label("Run series").click();
    h.run_steps(2);
    assert!(h.state().runner.is_active(), "the series started");
    step_until(&mut h, "the series to end", Duration::from_secs(180), |h| {
        !h.state().runner.is_active()
    });
    let store = fsynclab::store::Store::open(&dir.path().join("gui.sqlite")).unwrap();
    let runs = store.list_runs(&Default::default()).unwrap();
    // 4 strategies × 5 writer counts, each labelled with its variant.
    assert_eq!(runs.len(), 20, "{runs:?}");
    for label in ["solo", "leader", "adaptive", "delay500"] {
        assert_eq!(
            runs.iter()
                .filter(|r| r.label.as_deref() == Some(label))
                .count(),
            5
        );
    }
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
}

#[test]
fn a_fileserver_run_from_the_window_shows_its_dbench_figures() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut spec = FlatSpec {
        kind: WorkloadKind::Fileserver,
        threads: 2,
        duration_s: Some(0.5),
        ..FlatSpec::default()
    }
    .typed();
    spec.edit(|f| f.fileserver.files_per_client = 8);
    let state = UiState {
        preset: None,
        spec: spec.flat(),
        target: target.path().display().to_string(),
        ..UiState::default()
    };
    let mut h = harness(&dir, state);
    h.run_steps(3);
    h.get_by_label("Start run").click();
    step_until(
        &mut h,
        "the fileserver figures",
        Duration::from_secs(60),
        |h| has(h, "fileserver figures"),
    );
    assert!(has(&h, "MB/sec  2 clients  max_latency="));
    assert!(has(&h, "readdir") && has(&h, "flush"));
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
}

/// The rows of `kind` in the Setup tab, and rows only other kinds have: an exhaustive
/// `match`, so a kind added to the enum does not compile until it says here what the window
/// shows for it (issue 32; the command line's half is crates/fsynclab/tests/cli/kinds_wired.rs).
/// `None`: not a kind the window runs (imported results).
fn rows(kind: WorkloadKind) -> Option<(&'static [&'static str], &'static [&'static str])> {
    match kind {
        WorkloadKind::Fileio => Some((
            &["Block size", "File size"],
            &["Record size", "Files per client"],
        )),
        WorkloadKind::Smallfiles => Some((
            &["Files per thread", "File sync"],
            &["Record size", "Block size"],
        )),
        WorkloadKind::Fileserver => Some((
            &["Files per client", "Clients"],
            &["Record size", "Files per thread"],
        )),
        WorkloadKind::Grouplog => Some((
            &["Record size", "Log size", "Strategy"],
            &["Block size", "Files per client"],
        )),
        WorkloadKind::Append => Some((
            &["Writers", "Record size", "Segment size", "Sync every"],
            &["Block size", "Log size", "Files per client"],
        )),
        WorkloadKind::Fio => None,
    }
}

#[test]
fn every_kind_the_window_runs_has_its_rows_and_only_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fileio_form(&dir);
    let mut names: Vec<&str> = fsynclab::spec::KINDS
        .iter()
        .map(|k| k.kind.as_str())
        .collect();
    names.push("fio");
    for name in names {
        let kind: WorkloadKind = serde_json::from_value(serde_json::json!(name)).unwrap();
        // Imported results are not a kind to run ("fio" in the window is fileio's request
        // counting mode).
        let Some((own, others)) = rows(kind) else {
            continue;
        };
        h.get_by_label(name).click();
        h.run_steps(3);
        assert_eq!(h.state().state.spec.kind, kind);
        for row in own {
            assert!(has(&h, row), "{name} shows {row}");
        }
        for row in others {
            assert!(!has(&h, row), "{name} hides {row}");
        }
    }
}
