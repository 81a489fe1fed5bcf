//! `fsynclab export`: which runs ([`Selection`], [`select`]) and the bundle format
//! ([`export_bundle`]); raw formats are added beside it.
//!
//! A bundle is written to a temp file (mode 0600, `O_EXCL`, never through a symlink) in the
//! destination's directory and renamed into place only when complete: a reader never sees
//! half a bundle, and an existing file is replaced only with `force` (a symlink at the
//! destination is refused, never followed).

use std::io::Write as _;
use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};

use super::LabError;
use crate::store::{RunFilter, Store, StoredRun};

/// Which runs to export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// These run ids (`--runs 3,5,8-10`), in this order.
    Runs(Vec<i64>),
    /// Every run with this label (`--label L`), oldest first.
    Label(String),
    /// Every run of this experiment (`--experiment N`), oldest first.
    Experiment(i64),
    /// Every run (`--all`), oldest first.
    All,
}

/// Why an export was not written. Each names the flag or path and the fix.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The selection holds no run.
    #[error("{}", crate::spec::Worded::worded(self, &crate::spec::Neutral))]
    NothingSelected {
        /// The selection, in words (`label "nosuch"`).
        what: String,
    },
    /// A list of run ids could not be read.
    #[error(
        "run ids {text:?}: {problem}; give run ids and ranges separated by commas, such as \
         3,5,8-10"
    )]
    BadRuns {
        /// The text given.
        text: String,
        /// What is wrong.
        problem: String,
    },
    /// Something other than a regular file is at the output path, or it names no file.
    #[error("{}: {problem}", path.display())]
    Out {
        /// The path given.
        path: PathBuf,
        /// What is wrong and the fix.
        problem: String,
    },
    /// A file is at the output path and replacing it was not asked for.
    #[error("{} already exists; choose another file or allow replacing it", path.display())]
    Exists {
        /// The path given.
        path: PathBuf,
    },
    /// Writing the output failed.
    #[error(
        "cannot write {}: {source}; check the directory's permissions (under sudo: yours, as \
         fsynclab writes files with your rights) and free space",
        path.display()
    )]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl crate::spec::Worded for ExportError {
    fn worded(&self, names: &dyn crate::spec::SettingNames) -> String {
        match self {
            ExportError::NothingSelected { what } => format!(
                "{what} holds no run; see {} for labels, experiments and ids",
                names.action(crate::spec::Action::ListRuns)
            ),
            ExportError::Exists { path } => format!(
                "{} already exists; choose another file, or replace it with {} (a link is \
                 never followed)",
                path.display(),
                names.name(crate::spec::Setting::Force, None)
            ),
            other => other.to_string(),
        }
    }
}

impl ExportError {
    /// True when the user's input is at fault (exit code 2).
    pub fn is_usage(&self) -> bool {
        !matches!(self, ExportError::Io { .. })
    }
}

/// Most run ids one `--runs` may name.
pub const MAX_RUN_IDS: usize = 100_000;

/// Parses `--runs`: ids and inclusive ranges separated by commas (`3,5,8-10`).
pub fn parse_run_ids(text: &str) -> Result<Vec<i64>, ExportError> {
    let bad = |problem: String| ExportError::BadRuns {
        text: text.to_string(),
        problem,
    };
    let id = |part: &str| {
        part.trim()
            .parse::<i64>()
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| {
                bad(format!(
                    "{part:?} is not a run id (a positive whole number)"
                ))
            })
    };
    let mut ids = Vec::new();
    for part in text.split(',') {
        match part.split_once('-') {
            Some((from, to)) => {
                let (from, to) = (id(from)?, id(to)?);
                if to < from {
                    return Err(bad(format!("the range {part:?} runs backwards")));
                }
                if usize::try_from(to - from).unwrap_or(usize::MAX) >= MAX_RUN_IDS - ids.len() {
                    return Err(bad(format!("more than {MAX_RUN_IDS} ids")));
                }
                ids.extend(from..=to);
            }
            None => ids.push(id(part)?),
        }
        if ids.len() > MAX_RUN_IDS {
            return Err(bad(format!("more than {MAX_RUN_IDS} ids")));
        }
    }
    let mut seen = std::collections::HashSet::new();
    ids.retain(|id| seen.insert(*id));
    Ok(ids)
}

/// The runs `selection` names, loaded whole; an unknown id is an error, and so is a
/// selection that holds no run.
pub fn select(store: &Store, selection: &Selection) -> Result<Vec<StoredRun>, LabError> {
    let (ids, what) = match selection {
        Selection::Runs(ids) => (ids.clone(), "the list of run ids".to_string()),
        Selection::Label(label) => (store.run_ids_with_label(label)?, format!("label {label:?}")),
        Selection::Experiment(id) => (
            store.run_ids_in_experiment(*id)?,
            format!("experiment {id}"),
        ),
        Selection::All => {
            let mut rows = store.list_runs(&RunFilter::default())?;
            rows.reverse(); // newest first → oldest first
            (
                rows.into_iter().map(|r| r.id).collect(),
                "the database".to_string(),
            )
        }
    };
    if ids.is_empty() {
        return Err(ExportError::NothingSelected { what }.into());
    }
    ids.into_iter()
        .map(|id| store.load_run(id).map_err(LabError::from))
        .collect()
}

/// What [`export_bundle`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleWritten {
    /// The file.
    pub path: PathBuf,
    /// How many runs it holds.
    pub runs: usize,
    /// Its size in bytes.
    pub bytes: u64,
}

/// Writes `runs` as a bundle to `out` (see the module documentation); `force` replaces an
/// existing regular file. Under `sudo fsynclab` the file is checked and written with the
/// invoking user's rights ([`crate::probe::with_invoking_user_files`], docs/SECURITY.md).
pub fn export_bundle(
    store: &Store,
    runs: &[StoredRun],
    out: &Path,
    force: bool,
) -> Result<BundleWritten, LabError> {
    use crate::probe::with_invoking_user_files as as_user;
    let dir = as_user(|| check_out(out, force))?;
    let ids: Vec<i64> = runs.iter().map(|r| r.row.id).collect();
    let bytes = store.write_bundle(&ids)?;
    as_user(|| place_file(&dir, out, &bytes, force))?;
    Ok(BundleWritten {
        path: out.to_path_buf(),
        runs: ids.len(),
        bytes: u64::try_from(bytes.len()).unwrap_or(u64::MAX),
    })
}

/// Checks the destination before any work: its directory exists, and nothing but (with
/// `force`) a regular file is at the path. Returns the directory.
fn check_out(out: &Path, force: bool) -> Result<PathBuf, ExportError> {
    let bad = |problem: &str| ExportError::Out {
        path: out.to_path_buf(),
        problem: problem.to_string(),
    };
    if out.file_name().is_none() || out.as_os_str().to_string_lossy().ends_with('/') {
        return Err(bad(
            "is not a file name; give the bundle's file, such as runs.fsynclab",
        ));
    }
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        return Err(bad(
            "its directory does not exist; create it first or choose another path",
        ));
    }
    match std::fs::symlink_metadata(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(dir),
        Err(source) => Err(ExportError::Io {
            path: out.to_path_buf(),
            source,
        }),
        Ok(meta) => {
            let kind = meta.file_type();
            if kind.is_symlink() {
                Err(bad(
                    "is a symbolic link; it is never followed: remove it or choose another path",
                ))
            } else if kind.is_dir() {
                Err(bad("is a directory; give a file path inside it"))
            } else if kind.is_fifo()
                || kind.is_block_device()
                || kind.is_char_device()
                || kind.is_socket()
                || !kind.is_file()
            {
                Err(bad(
                    "is not a regular file (a device, FIFO or socket); choose another path",
                ))
            } else if !force {
                Err(ExportError::Exists {
                    path: out.to_path_buf(),
                })
            } else {
                Ok(dir)
            }
        }
    }
}

/// Writes `bytes` to a fresh temp file (0600, `O_EXCL`) in `dir`, syncs it and renames it
/// to `out` (replacing a file only with `force`; without it the link fails if one appeared).
pub(crate) fn place_file(
    dir: &Path,
    out: &Path,
    bytes: &[u8],
    force: bool,
) -> Result<(), ExportError> {
    let io = |source: std::io::Error| ExportError::Io {
        path: out.to_path_buf(),
        source,
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".fsynclab-export-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io)?;
    tmp.write_all(bytes).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    if force {
        // rename(2) replaces the name itself: a symlink put there meanwhile is replaced,
        // never followed.
        tmp.persist(out).map_err(|e| io(e.error))?;
    } else {
        tmp.persist_noclobber(out).map_err(|e| {
            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                ExportError::Exists {
                    path: out.to_path_buf(),
                }
            } else {
                io(e.error)
            }
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_and_ranges() {
        assert_eq!(parse_run_ids("3,5,8-10").unwrap(), vec![3, 5, 8, 9, 10]);
        assert_eq!(parse_run_ids(" 2 , 2,1").unwrap(), vec![2, 1]);
        for bad in ["", "a", "0", "-1", "3-1", "1,,2", "1-999999999999"] {
            let err = parse_run_ids(bad).unwrap_err();
            assert!(err.to_string().starts_with("run ids"), "{bad}: {err}");
        }
    }

    #[test]
    fn out_paths_are_checked_before_any_work() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("b.fsynclab");
        assert!(check_out(&file, false).is_ok());
        std::fs::write(&file, b"x").unwrap();
        assert!(matches!(
            check_out(&file, false),
            Err(ExportError::Exists { .. })
        ));
        assert!(check_out(&file, true).is_ok());
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(
            check_out(&link, true)
                .unwrap_err()
                .to_string()
                .contains("symbolic link")
        );
        assert!(
            check_out(dir.path(), true)
                .unwrap_err()
                .to_string()
                .contains("directory")
        );
        let missing = dir.path().join("no/such/b");
        assert!(
            check_out(&missing, false)
                .unwrap_err()
                .to_string()
                .contains("does not exist")
        );
        assert!(
            check_out(Path::new("/dev/null"), true)
                .unwrap_err()
                .to_string()
                .contains("regular")
        );
    }

    #[test]
    fn placed_files_are_private_and_complete() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("b");
        place_file(dir.path(), &out, b"bundle", false).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"bundle");
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(place_file(dir.path(), &out, b"other", false).is_err());
        place_file(dir.path(), &out, b"other", true).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"other");
        // No temp file left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
