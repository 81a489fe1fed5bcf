//! Matrices: run one workload on a fresh scratch filesystem per configuration (filesystem
//! × mkfs options × mount options × backing), label each run by its configuration, file
//! them all in one experiment, and destroy each filesystem after its runs.

use std::sync::mpsc::Sender;

use super::matrix_words::{MatrixProblem, MatrixStop};
use crate::engine::{CancelToken, EngineEvent};
use crate::metrics::{RunResult, RunStatus};
use crate::scratch::{
    Backing, CreateRequest, FsKind, ScratchError, ScratchManager, check_mkfs_options,
    check_mount_options,
};
use crate::spec::MatrixSuggestion;
use crate::store::Store;

use super::{LabError, RunRequest, run_one};

/// The dimensions of a matrix; every combination is one configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct MatrixSpec {
    /// Filesystems.
    pub fs: Vec<FsKind>,
    /// mkfs option sets (`""` = defaults).
    pub mkfs_opts: Vec<String>,
    /// Mount option sets (`""` = defaults).
    pub mount_opts: Vec<String>,
    /// Backings.
    pub backing: Vec<Backing>,
    /// Image size of each scratch filesystem.
    pub size_bytes: u64,
    /// Attach loop devices with direct I/O to their images.
    pub loop_direct_io: bool,
}

/// One point of a matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct MatrixConfig {
    /// Filesystem.
    pub fs: FsKind,
    /// mkfs options.
    pub mkfs_opts: String,
    /// Mount options.
    pub mount_opts: String,
    /// Backing.
    pub backing: Backing,
}

impl MatrixConfig {
    /// The run label: `btrfs -o ssd`, `ext4 mkfs "-J size=64" (ram)`...
    pub fn label(&self) -> String {
        let mut label = self.fs.as_str().to_string();
        if !self.mkfs_opts.trim().is_empty() {
            label.push_str(&format!(" mkfs \"{}\"", self.mkfs_opts.trim()));
        }
        if !self.mount_opts.trim().is_empty() {
            label.push_str(&format!(" -o {}", self.mount_opts.trim()));
        }
        match &self.backing {
            Backing::Disk => {}
            Backing::Ram => label.push_str(" (ram)"),
            Backing::Device { path } => label.push_str(&format!(" ({})", path.display())),
        }
        label
    }
}

impl MatrixSpec {
    /// A matrix from a preset's suggestion (size and loop mode given by the caller).
    pub fn from_suggestion(s: &MatrixSuggestion, size_bytes: u64) -> Result<MatrixSpec, String> {
        let fs =
            s.fs.iter()
                .map(|f| f.parse::<FsKind>())
                .collect::<Result<Vec<_>, _>>();
        let backing = s
            .backing
            .iter()
            .map(|b| b.parse::<Backing>())
            .collect::<Result<Vec<_>, _>>();
        let (fs, backing) = (
            fs.map_err(|e| e.to_string())?,
            backing.map_err(|e| e.to_string())?,
        );
        Ok(MatrixSpec {
            fs,
            mkfs_opts: s.mkfs_opts.clone(),
            mount_opts: s.mount_opts.clone(),
            backing,
            size_bytes,
            loop_direct_io: false,
        })
    }

    /// How many configurations [`MatrixSpec::configs`] makes, computed without making
    /// them (saturating: a product too large to count is `usize::MAX`).
    pub fn config_count(&self) -> usize {
        [
            self.fs.len(),
            self.mkfs_opts.len(),
            self.mount_opts.len(),
            self.backing.len(),
        ]
        .iter()
        .fold(1usize, |n, len| n.saturating_mul((*len).max(1)))
    }

    /// Checks every mkfs and mount option set against the allow-list of every filesystem
    /// of the matrix, so a refused option stops the matrix before anything is made.
    pub fn check_options(&self) -> Result<(), ScratchError> {
        for fs in &self.fs {
            for text in &self.mkfs_opts {
                check_mkfs_options(*fs, text)?;
            }
            for text in &self.mount_opts {
                check_mount_options(*fs, text)?;
            }
        }
        Ok(())
    }

    /// Every configuration, in order (filesystem, then mkfs, mount options, backing).
    pub fn configs(&self) -> Vec<MatrixConfig> {
        let or_default = |v: &Vec<String>| {
            if v.is_empty() {
                vec![String::new()]
            } else {
                v.clone()
            }
        };
        let backings = if self.backing.is_empty() {
            vec![Backing::Disk]
        } else {
            self.backing.clone()
        };
        let mut out = Vec::new();
        for fs in &self.fs {
            for mkfs in or_default(&self.mkfs_opts) {
                for mount in or_default(&self.mount_opts) {
                    for backing in &backings {
                        out.push(MatrixConfig {
                            fs: *fs,
                            mkfs_opts: mkfs.clone(),
                            mount_opts: mount.clone(),
                            backing: backing.clone(),
                        });
                    }
                }
            }
        }
        out
    }
}

/// What a matrix did: the experiment and, per configuration, its label and run ids.
#[derive(Debug)]
pub struct MatrixOutcome {
    /// Experiment holding every run.
    pub experiment_id: i64,
    /// (label, run ids) per configuration, in order.
    pub configs: Vec<(String, Vec<i64>)>,
    /// Why the matrix stopped early, if it did.
    pub stopped: Option<MatrixStop>,
    /// Whether it stopped because it was cancelled.
    pub cancelled: bool,
    /// Things that went wrong without stopping it (a filesystem that could not be
    /// destroyed).
    pub problems: Vec<MatrixProblem>,
}

/// Runs `request` (its target is replaced) `repeat` times on a fresh scratch filesystem
/// per configuration; the matrix, spec and request were checked by
/// [`super::Launch::validate`]. Each filesystem is destroyed after its runs, also on
/// failure.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_matrix(
    store: &Store,
    scratch: &ScratchManager,
    request: &RunRequest,
    matrix: &MatrixSpec,
    repeat: u32,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
    mut on_result: impl FnMut(&str, &RunResult),
) -> Result<MatrixOutcome, LabError> {
    let configs = matrix.configs();
    let name = format!(
        "matrix {}: {}",
        request.preset.clone().unwrap_or_else(|| "fileio".into()),
        configs
            .iter()
            .map(MatrixConfig::label)
            .collect::<Vec<_>>()
            .join(" | ")
    );
    // The experiment is created once the first filesystem exists, so a matrix refused
    // outright (not root, a bad option) leaves no empty experiment behind.
    let mut outcome = MatrixOutcome {
        experiment_id: 0,
        configs: Vec::new(),
        stopped: None,
        cancelled: false,
        problems: Vec::new(),
    };
    if nix::unistd::geteuid().is_root() {
        outcome.problems.extend(destroy_orphans(scratch));
    }
    for (index, config) in configs.iter().enumerate() {
        if cancel.is_cancelled() {
            outcome.stopped = Some(MatrixStop::Cancelled);
            outcome.cancelled = true;
            break;
        }
        let label = config.label();
        let created = scratch.create(&CreateRequest {
            name: Some(matrix_scratch_name(index + 1)),
            fs: config.fs,
            size_bytes: matrix.size_bytes,
            mkfs_opts: config.mkfs_opts.clone(),
            mount_opts: config.mount_opts.clone(),
            backing: config.backing.clone(),
            loop_direct_io: matrix.loop_direct_io,
            destroy_data_on: None,
        });
        let recipe = match created {
            Ok(r) => r,
            Err(e) if outcome.configs.is_empty() => return Err(e.into()),
            Err(e) => {
                // Later configurations failing keeps what the earlier ones measured.
                outcome.stopped = Some(MatrixStop::Scratch { label, error: e });
                break;
            }
        };
        if outcome.experiment_id == 0 {
            match store.create_experiment(&name) {
                Ok(id) => outcome.experiment_id = id,
                Err(e) => {
                    if let Err(error) = scratch.destroy(&recipe.name) {
                        outcome.problems.push(MatrixProblem {
                            name: recipe.name.clone(),
                            context: format!(" ({label})"),
                            error,
                        });
                    }
                    return Err(e.into());
                }
            }
        }
        let one = RunRequest {
            target: recipe.mount_point.clone(),
            label: Some(label.clone()),
            experiment_id: Some(outcome.experiment_id),
            ..request.clone()
        };
        let ran = run_config(store, &one, repeat, events, cancel, |r| {
            on_result(&label, r)
        });
        outcome.cancelled |= ran.cancelled;
        let (ids, failure) = (ran.ids, ran.failure);
        // Destroy even after a failure: a matrix never leaves filesystems behind, and a
        // filesystem that will not go is reported, not dropped.
        if let Err(error) = scratch.destroy(&recipe.name) {
            outcome.problems.push(MatrixProblem {
                name: recipe.name.clone(),
                context: format!(" ({label})"),
                error,
            });
        }
        outcome.configs.push((label, ids));
        if let Some(f) = failure {
            outcome.stopped = Some(f);
            break;
        }
    }
    Ok(outcome)
}

/// What the runs on one configuration's filesystem did.
struct ConfigRuns {
    /// Stored runs, in order.
    ids: Vec<i64>,
    /// Why the configuration (and so the matrix) stopped early.
    failure: Option<MatrixStop>,
    /// It stopped because a run was cancelled.
    cancelled: bool,
}

/// Runs `request` `repeat` times on its target (a fresh filesystem's mount point, checked
/// once for all its runs); stops at the first run that does not finish.
fn run_config(
    store: &Store,
    request: &RunRequest,
    repeat: u32,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
    mut on_result: impl FnMut(&RunResult),
) -> ConfigRuns {
    let mut done = ConfigRuns {
        ids: Vec::new(),
        failure: None,
        cancelled: false,
    };
    let label = request.label.clone().unwrap_or_default();
    let target = match crate::engine::check_target(&request.target, request.allow_shared_target) {
        Ok(target) => target,
        Err(e) => {
            done.failure = Some(MatrixStop::Target(e));
            return done;
        }
    };
    for _ in 0..repeat {
        match run_one(
            store,
            request,
            &super::Place::Dir(target.clone()),
            events,
            cancel,
        ) {
            Ok(result) => {
                on_result(&result);
                done.ids.push(result.id);
                if result.status != RunStatus::Finished {
                    done.cancelled = result.status == RunStatus::Cancelled;
                    done.failure = Some(MatrixStop::Ended {
                        label,
                        status: result.status,
                    });
                    break;
                }
            }
            Err(e) => {
                done.failure = Some(MatrixStop::Run(Box::new(e)));
                break;
            }
        }
    }
    done
}

/// Prefix of the scratch filesystems a matrix makes, `matrix-<pid>-<start ticks>-<n>`: a
/// later matrix tells those of a matrix process that is gone (killed mid-matrix) from the
/// user's own and destroys them, so a `kill -9` leaves no mounted image (or RAM image in
/// /dev/shm) behind for long.
const MATRIX_PREFIX: &str = "matrix-";

/// The name of this process's `n`-th matrix filesystem.
fn matrix_scratch_name(n: usize) -> String {
    let (pid, ticks) = crate::owner::current_owner();
    format!("{MATRIX_PREFIX}{pid}-{}-{n}", ticks.unwrap_or(0))
}

/// The owner (pid, start ticks; 0 when unknown) a matrix filesystem's name records, `None`
/// for any other name.
fn matrix_owner(name: &str) -> Option<(i64, i64)> {
    let mut parts = name.strip_prefix(MATRIX_PREFIX)?.split('-');
    let pid = parts.next()?.parse().ok()?;
    let ticks = parts.next()?.parse().ok()?;
    let _n: u32 = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((pid, ticks))
}

/// Destroys the filesystems left by matrix processes that are gone; returns a problem per
/// filesystem that would not go (those destroyed are not reported).
fn destroy_orphans(scratch: &ScratchManager) -> Vec<MatrixProblem> {
    let Ok(list) = scratch.list() else {
        return Vec::new();
    };
    list.into_iter()
        .filter_map(|status| {
            let name = status.recipe.name;
            let (pid, ticks) = matrix_owner(&name)?;
            if crate::owner::owner_alive(Some(pid), (ticks != 0).then_some(ticks)) {
                return None;
            }
            scratch.destroy(&name).err().map(|error| MatrixProblem {
                name,
                context: ", left by a matrix that was killed,".into(),
                error,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_are_the_product_with_readable_labels() {
        let m = MatrixSpec {
            fs: vec![FsKind::Btrfs, FsKind::Ext4],
            mkfs_opts: vec![],
            mount_opts: vec!["nossd".into(), "ssd".into()],
            backing: vec![Backing::Disk, Backing::Ram],
            size_bytes: 512 << 20,
            loop_direct_io: false,
        };
        let configs = m.configs();
        assert_eq!(configs.len(), 8);
        assert_eq!(configs[0].label(), "btrfs -o nossd");
        assert_eq!(configs[1].label(), "btrfs -o nossd (ram)");
        let s = MatrixSuggestion {
            title: "t".into(),
            why: "w".into(),
            fs: vec!["ext4".into()],
            mkfs_opts: vec![],
            mount_opts: vec![],
            backing: vec!["disk".into(), "ram".into()],
        };
        let m = MatrixSpec::from_suggestion(&s, 1 << 30).unwrap();
        assert_eq!(m.configs().len(), 2);
    }

    #[test]
    fn matrix_scratch_names_record_their_owner_and_nothing_else_matches() {
        let name = matrix_scratch_name(3);
        let (pid, _) = matrix_owner(&name).unwrap();
        assert_eq!(pid, i64::from(std::process::id()));
        assert!(crate::scratch::validate_name(&name).is_ok(), "{name}");
        for other in [
            "ext4-1",
            "matrix-1-2",
            "matrix-1-2-3-4",
            "matrix-a-2-3",
            "mine",
        ] {
            assert_eq!(matrix_owner(other), None, "{other}");
        }
        assert_eq!(matrix_owner("matrix-12-34-5"), Some((12, 34)));
    }
}
