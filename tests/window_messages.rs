//! Issue 15 item 10: a library error the window can show names the window's controls,
//! never a command-line command or flag; the CLI's wording (the errors' `Display`) still
//! names the command.

use std::error::Error;
use std::path::PathBuf;

use fsynclab::analysis::AnalysisError;
use fsynclab::engine::{EngineError, TargetError};
use fsynclab::gui::names::{GuiLabels, words};
use fsynclab::lab::export::ExportError;
use fsynclab::lab::{LabError, MatrixProblem, MatrixStop};
use fsynclab::metrics::RunStatus;
use fsynclab::scratch::ScratchError;
use fsynclab::spec::Worded;
use fsynclab::store::StoreError;

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
        let cli = error.to_string();
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
        TargetError::RunDirExists {
            path: PathBuf::from("/t/fsynclab-3")
        }
        .to_string(),
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
