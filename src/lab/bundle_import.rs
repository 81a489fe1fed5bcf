//! `fsynclab import` of a bundle (and the window's Import…): the file is read whole (a
//! regular file, never through a symlink, at most [`MAX_BUNDLE_FILE_BYTES`]) and handed to
//! [`Bundle::from_bytes`], which checks it in private memory; [`Store::merge_bundle`]
//! then merges it in one transaction. The file is never opened by SQLite nor written.

use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use super::LabError;
use crate::spec::InputFileError;
use crate::store::{Bundle, BundleError, MergeCounts, SQLITE_HEADER, Store};

/// Largest bundle file read: 1 GiB (a run with its histograms and a minute of intervals
/// takes tens of KiB).
pub const MAX_BUNDLE_FILE_BYTES: u64 = 1 << 30;

/// Why a bundle was not imported; names the file.
#[derive(Debug, thiserror::Error)]
pub enum BundleImportError {
    /// The file could not be read as asked.
    #[error("{}: {source}; give a bundle written by fsynclab's export in bundle format", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: InputFileError,
    },
    /// The file is not a bundle this build can merge, or merging failed.
    #[error("{}: {source}", path.display())]
    Bundle {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<BundleError>,
    },
}

impl BundleImportError {
    /// True when the file is at fault (exit code 2), false when the database failed.
    pub fn is_usage(&self) -> bool {
        !matches!(
            self,
            BundleImportError::Bundle { source, .. } if matches!(**source, BundleError::Store(_))
        )
    }
}

/// Whether `path` is an SQLite file (a bundle) rather than text such as fio's JSON. Only a
/// regular file is opened (non-blocking); anything else answers `false` and is left to the
/// reader that refuses it by name.
pub fn is_bundle_file(path: &Path) -> bool {
    // Under sudo with the user's rights: a root-only file is not even sniffed.
    crate::probe::with_invoking_user_files(|| sniff_bundle(path))
}

fn sniff_bundle(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
    else {
        return false;
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = [0u8; 16];
    file.take(16).read_exact(&mut head).is_ok() && &head == SQLITE_HEADER
}

/// Reads and checks the bundle at `path` (see [`Bundle::from_bytes`]).
pub fn read_bundle(path: &Path) -> Result<Bundle, BundleImportError> {
    // A bundle a user names: under sudo, read with their rights (as presets and fio files
    // are, see `spec::read_small_bytes`), so root's own databases cannot be imported.
    let bytes = crate::probe::with_invoking_user_files(|| {
        crate::spec::read_small_bytes(path, MAX_BUNDLE_FILE_BYTES, true)
    })
    .map_err(|source| BundleImportError::File {
        path: path.to_path_buf(),
        source,
    })?;
    Bundle::from_bytes(bytes).map_err(|source| BundleImportError::Bundle {
        path: path.to_path_buf(),
        source: Box::new(source),
    })
}

/// Reads the bundle at `path` and merges it into `store`: "N new, M already present".
pub fn import_bundle(store: &Store, path: &Path) -> Result<MergeCounts, LabError> {
    let bundle = read_bundle(path)?;
    store.merge_bundle(&bundle).map_err(|source| {
        BundleImportError::Bundle {
            path: path.to_path_buf(),
            source: Box::new(source),
        }
        .into()
    })
}

/// `3 new, 1 already present` (and the experiments created).
pub fn merge_summary(counts: &MergeCounts) -> String {
    let mut text = format!(
        "{} new, {} already present",
        counts.new_ids.len(),
        counts.already_present
    );
    if counts.new_experiments > 0 {
        text.push_str(&format!(
            " ({} new experiment{})",
            counts.new_experiments,
            if counts.new_experiments == 1 { "" } else { "s" }
        ));
    }
    if !counts.new_advice.is_empty() {
        let ids: Vec<String> = counts.new_advice.iter().map(i64::to_string).collect();
        text.push_str(&format!("; stored advice {}", ids.join(", ")));
    }
    if !counts.sanitised.is_empty() {
        let fields: Vec<String> = counts
            .sanitised
            .iter()
            .map(|(id, field)| format!("run {id} {field}"))
            .collect();
        text.push_str(&format!(
            "; cleaned as a label or tag given on the command line would have to be \
             (control characters escaped, cut to 256 bytes, a target to 4096): {}",
            fields.join(", ")
        ));
    }
    text
}
