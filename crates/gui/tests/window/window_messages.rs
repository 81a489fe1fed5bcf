//! Issue 15 item 10: a library error the window can show names the window's controls,
//! never a command-line command or flag; the CLI's wording (the errors' `Display`) still
//! names the command. Also triggered in the window (egui_kittest): the History transfer
//! dialogs and their errors, and the refusal to clean with another user's database.

use crate::gui_common;

use std::error::Error;
use std::path::{Path, PathBuf};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsynclab::ktrace::TraceError;
use fsynclab::metrics::TraceNote;
use fsynclab_gui::{LabApp, Tab};

use fsynclab::analysis::AnalysisError;
use fsynclab::engine::{EngineError, TargetError};
use fsynclab::lab::export::ExportError;
use fsynclab::lab::{LabError, MatrixProblem, MatrixStop};
use fsynclab::metrics::RunStatus;
use fsynclab::scratch::ScratchError;
use fsynclab::spec::Worded;
use fsynclab::store::StoreError;
use fsynclab_gui::names::{GuiLabels, words};

/// The CLI commands and flags a library message used to name.
fn names_the_cli(text: &str) -> bool {
    text.contains("fsynclab ") || text.contains("--") || text.contains("scratch destroy")
}

fn mount_failed() -> ScratchError {
    ScratchError::MountFailed {
        options: "bogus".into(),
        stderr: "wrong fs type".into(),
        kernel_message: None,
        left_over: Some(("/dev/loop7 still attached".into(), "nossd".into())),
    }
}

/// Every library error of the kind that proposed a command, with the words the window
/// must use instead.
fn cases() -> Vec<(Box<dyn Error + 'static>, &'static str)> {
    vec![
        (
            Box::new(TargetError::RunDirExists {
                path: PathBuf::from("/mnt/t/fsynclab-3"),
            }),
            "restart the lab",
        ),
        (
            Box::new(TargetError::TooManyRunDirs {
                target: PathBuf::from("/mnt/t"),
                run_id: 3,
            }),
            "restart the lab",
        ),
        (
            Box::new(ScratchError::NotFound { name: "x".into() }),
            "\"Scratch filesystems\" on the Setup tab",
        ),
        (
            Box::new(ScratchError::Exists { name: "x".into() }),
            "\"Destroy\" beside x",
        ),
        (Box::new(mount_failed()), "\"Destroy\" beside nossd"),
        (
            Box::new(ScratchError::BadRecipe {
                path: PathBuf::from("/var/lib/fsynclab/scratch/old/recipe.json"),
                source: "expected value".into(),
            }),
            "\"Destroy\" beside old",
        ),
        (Box::new(StoreError::NotFound { id: 42 }), "the History tab"),
        (
            Box::new(LabError::Store(StoreError::NotFound { id: 42 })),
            "the History tab",
        ),
        (
            Box::new(ExportError::NothingSelected {
                what: "label \"nosuch\"".into(),
            }),
            "the History tab",
        ),
        (
            Box::new(AnalysisError::EmptySide {
                side: "before".into(),
                detail: String::new(),
            }),
            "the History tab",
        ),
        (
            Box::new(LabError::Analysis(AnalysisError::EmptySide {
                side: "before".into(),
                detail: String::new(),
            })),
            "the History tab",
        ),
    ]
}

#[test]
fn window_wording_of_library_errors_names_no_cli_command_or_flag() {
    for (error, place) in cases() {
        // The library's neutral words (what the command line builds on).
        let cli = fsynclab::lab::worded_error(error.as_ref(), &fsynclab::spec::Neutral);
        assert!(
            names_the_cli(&cli),
            "the CLI wording names its command: {cli}"
        );
        let window = words(error.as_ref());
        assert!(
            !names_the_cli(&window),
            "the window names a CLI command: {window}"
        );
        assert!(window.contains(place), "{window:?} should point to {place}");
    }
}

#[test]
fn the_cli_wording_is_kept() {
    assert_eq!(
        StoreError::NotFound { id: 42 }.to_string(),
        "no run with id 42; see `fsynclab list`"
    );
    assert_eq!(
        ScratchError::NotFound { name: "x".into() }.to_string(),
        "no scratch filesystem named x; see fsynclab scratch list"
    );
    assert_eq!(
        fsynclab::words::target::target_error_text(
            &TargetError::RunDirExists {
                path: PathBuf::from("/t/fsynclab-3")
            },
            &fsynclab::spec::Neutral
        ),
        "run directory /t/fsynclab-3 already exists; remove it (fsynclab clean) or choose \
         another target"
    );
}

#[test]
fn a_matrix_problem_and_stop_are_worded_by_the_window() {
    let problem = MatrixProblem {
        name: "matrix-1-2-0".into(),
        context: " (btrfs nossd)".into(),
        error: mount_failed(),
    };
    assert!(
        problem
            .to_string()
            .ends_with("remove it with fsynclab scratch destroy matrix-1-2-0"),
        "{problem}"
    );
    let window = problem.worded(&GuiLabels);
    assert!(!names_the_cli(&window), "{window}");
    assert!(
        window.contains("\"Destroy\" beside matrix-1-2-0"),
        "{window}"
    );

    let stops = [
        MatrixStop::Scratch {
            label: "btrfs ssd".into(),
            error: mount_failed(),
        },
        MatrixStop::Target(EngineError::Target(TargetError::TooManyRunDirs {
            target: PathBuf::from("/mnt/m"),
            run_id: 9,
        })),
        MatrixStop::Run(Box::new(LabError::Store(StoreError::NotFound { id: 1 }))),
    ];
    for stop in stops {
        assert!(names_the_cli(&stop.to_string()), "{stop}");
        let window = stop.worded(&GuiLabels);
        assert!(!names_the_cli(&window), "{window}");
    }
    let ended = MatrixStop::Ended {
        label: "ext4".into(),
        status: RunStatus::Failed,
    };
    assert_eq!(ended.worded(&GuiLabels), "a run on ext4 ended failed");
}

#[test]
fn the_kernel_trace_error_names_the_setting_in_each_front_ends_words() {
    let e = LabError::KernelTrace(TraceError::Unavailable(TraceNote::NoEvents));
    let window = words(&e);
    assert!(!window.contains("--"), "{window}");
    assert!(
        window.starts_with("Kernel trace: kernel tracing is unavailable")
            && window.ends_with("or use \"Kernel trace\" = off"),
        "{window}"
    );
    // The command line's words for the same error: crates/fsynclab/tests/cli/cli_words.rs.
}

/// Opens History's `button` dialog and types `path` into its File box.
fn dialog_with_file(h: &mut Harness<'static, LabApp>, button: &str, path: &Path) {
    h.get_by_label(button).click();
    h.run_steps(2);
    gui_common::retype(h, "File", &path.display().to_string());
}

#[test]
fn the_history_transfer_dialogs_name_window_actions_not_commands() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.sqlite");
    let mut h = gui_common::harness_on(&db, Tab::History);
    h.run_steps(3);
    let shows_cli = |h: &Harness<'static, LabApp>| {
        [
            "fsynclab export",
            "fsynclab import",
            "--format",
            "--output-format",
        ]
        .iter()
        .any(|cli| h.query_all_by_label_contains(cli).next().is_some())
    };
    // Import: the dialog says how a bundle is made, in the window's words.
    let neither = dir.path().join("notes.txt");
    std::fs::write(&neither, "{\"not\": \"fio\"}").unwrap();
    dialog_with_file(&mut h, "Import…", &neither);
    assert!(h.query_by_label("Import runs").is_some());
    assert!(!shows_cli(&h), "the Import dialog names a command");
    assert!(
        h.query_by_label_contains("made by Export selected… on the History tab")
            .is_some()
    );
    let before = h.state().status.message.clone();
    h.get_by_label("Import").click();
    gui_common::wait_for(&mut h, "the import's outcome", |a| {
        a.status.message != before
    });
    let status = &h.state().status;
    assert!(status.is_error, "{}", status.message);
    assert!(
        status
            .message
            .contains("neither a bundle (made by Export selected… on the History tab)")
            && !names_the_cli(&status.message),
        "{}",
        status.message
    );
}

#[test]
fn cleaning_with_another_users_database_is_explained_in_the_window() {
    if !crate::common::require_root(
        "cleaning_with_another_users_database_is_explained_in_the_window",
        "giving the database to another user",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.sqlite");
    drop(fsynclab::store::Store::open(&db).unwrap());
    // nobody's database, opened by root (as under sudo with the user's database).
    std::os::unix::fs::chown(&db, Some(65534), Some(65534)).unwrap();
    let mut h = gui_common::harness_on(&db, Tab::History);
    gui_common::wait_for(&mut h, "the clean refusal", |a| {
        a.status
            .message
            .contains("leftover run directories not removed")
    });
    let status = &h.state().status;
    assert!(
        status.message.contains("owned by uid 65534")
            && status.message.contains("start the lab as its owner")
            && !names_the_cli(&status.message),
        "{}",
        status.message
    );
    // The CLI keeps its command.
    let cleaned =
        fsynclab::lab::clean_run_dirs(&fsynclab::store::Store::open_read_only(&db).unwrap())
            .unwrap();
    let neutral = fsynclab::words::cleanup::clean_refusal_text(
        &cleaned.skipped[0].1,
        &fsynclab::spec::Neutral,
    );
    assert!(
        neutral.ends_with("run `fsynclab clean` as its owner"),
        "{neutral}"
    );
}
