//! One crash state of a stored crash test built again (issue 33): `fsynclab crash-state ID
//! --out IMAGE` writes the device as the power cut left it — the first failing state the
//! crash test stored, or the "all lost" state of another cut — so it can be mounted, checked
//! and looked at. Only a failing crash test keeps its log (`crashdev::keep_log`).

use std::path::{Path, PathBuf};

use crate::crashdev::{BuiltState, CheckError, NewImage, build_state, kept_log_dir};
use crate::store::{Store, StoreError};

/// Which state to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateChoice {
    /// The first failing state the crash test stored (its cut and what it dropped).
    FirstFailure,
    /// The state of a power cut just before log entry `cut`, every write since the flush
    /// before it lost.
    AllLostAt(usize),
}

/// Why a state could not be built.
#[derive(Debug, thiserror::Error)]
pub enum CrashStateError {
    /// Only root reads the state directory's logs.
    #[error("only root builds crash states: the crash tests' logs are root's")]
    NotRoot,
    /// The run is not in the database.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The run was not crash-tested.
    #[error("run {0} was not crash-tested")]
    NotCrashTested(i64),
    /// The crash test found nothing, so it kept no log.
    #[error("run {0}'s crash test lost nothing, so its log was not kept")]
    NothingFailed(i64),
    /// The log is not on this machine (an imported run, or removed), or the stored name is
    /// not one a kept log has.
    #[error("run {run}'s crash-test log is not on this machine{where_}")]
    NoLog {
        /// The run.
        run: i64,
        /// Where it was looked for (empty when the stored name was refused).
        where_: String,
    },
    /// The cut asked for is past the log's end.
    #[error("{0}")]
    NoSuchCut(String),
    /// Stopped by the caller (a signal): the image was removed.
    #[error("cancelled: the image was removed")]
    Cancelled,
    /// The image file could not be made.
    #[error("the image {path}: {source}")]
    Image {
        /// The file asked for.
        path: PathBuf,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// The log could not be read or the state written.
    #[error(transparent)]
    Build(#[from] CheckError),
}

/// Builds the crash state `choice` of run `run_id` (its log kept in `state_dir`) into the new
/// file `out` (created, never replaced, with the invoking user's rights under sudo); when
/// `cancel` is set by the end, the image is removed again (a half-built image is not left
/// looking like a state).
pub fn crash_state(
    store: &Store,
    state_dir: &Path,
    run_id: i64,
    choice: StateChoice,
    out: &Path,
    cancel: &crate::engine::CancelToken,
) -> Result<BuiltState, CrashStateError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(CrashStateError::NotRoot);
    }
    let report = store
        .crash_test(run_id)?
        .ok_or(CrashStateError::NotCrashTested(run_id))?;
    let failure = report
        .first_failure
        .as_ref()
        .ok_or(CrashStateError::NothingFailed(run_id))?;
    let name = report.kept_log.as_deref().unwrap_or_default();
    let dir = kept_log_dir(state_dir, name);
    let kept = dir
        .clone()
        .filter(|dir| dir.is_dir())
        .ok_or_else(|| CrashStateError::NoLog {
            run: run_id,
            where_: dir
                .map(|d| format!(" (looked for {})", d.display()))
                .unwrap_or_default(),
        })?;
    let image =
        crate::identity::with_invoking_user_files(|| NewImage::create(out)).map_err(|source| {
            CrashStateError::Image {
                path: out.to_path_buf(),
                source,
            }
        })?;
    let built = match choice {
        StateChoice::FirstFailure => build_state(
            &kept,
            failure.cut,
            Some(&failure.dropped),
            failure.reordered,
            &image.file,
        ),
        StateChoice::AllLostAt(cut) => build_state(&kept, cut, None, false, &image.file),
    };
    let built = match built {
        Ok(_) if cancel.is_cancelled() => Err(CheckError::NoSuchState(String::new())),
        other => other,
    };
    match built {
        Ok(built) => Ok(built),
        Err(_) if cancel.is_cancelled() => {
            let _ = crate::identity::with_invoking_user_files(|| image.discard());
            Err(CrashStateError::Cancelled)
        }
        Err(e) => {
            // Removed from the directory it was made in, whatever the path points at now.
            let _ = crate::identity::with_invoking_user_files(|| image.discard());
            Err(match (choice, e) {
                (StateChoice::AllLostAt(_), CheckError::NoSuchState(why)) => {
                    CrashStateError::NoSuchCut(why)
                }
                (_, e) => CrashStateError::Build(e),
            })
        }
    }
}
