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
    store
        .merge_bundle(&bundle, &check_imported_advice)
        .map_err(|source| {
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

/// Most points an imported advice may hold: every strategy the advisor takes at five writer
/// counts (the plan's four and the headline's), as `advise` itself can store.
const MAX_IMPORTED_POINTS: usize = super::advise::MAX_ADVISE_STRATEGIES * 5;

/// Checks an imported advice's JSON (its run ids already this database's, see
/// [`Store::merge_bundle`]): what `advise --show` reads back, with no more points, runs or
/// methods than an advice of this build can hold, each strategy and writer count once, and
/// printable names. Its problem in words.
pub fn check_imported_advice(json: &serde_json::Value) -> Result<(), String> {
    use super::advise::{MAX_ADVISE_REPEAT, MAX_ADVISE_WRITERS};
    let advice: crate::analysis::Advice = serde_json::from_value(json.clone())
        .map_err(|e| format!("is not an advice this build reads ({e})"))?;
    let writers_ok = |w: u32| (1..=MAX_ADVISE_WRITERS).contains(&w);
    if !writers_ok(advice.writers) || !advice.points.iter().all(|p| writers_ok(p.writers)) {
        return Err(format!(
            "has a writer count outside 1 to {MAX_ADVISE_WRITERS}"
        ));
    }
    if advice.points.len() > MAX_IMPORTED_POINTS || advice.methods.len() > 16 {
        return Err(format!(
            "holds {} points and {} methods (at most {MAX_IMPORTED_POINTS} and 16)",
            advice.points.len(),
            advice.methods.len()
        ));
    }
    let runs = MAX_ADVISE_REPEAT as usize;
    let mut seen = std::collections::HashSet::new();
    for p in &advice.points {
        crate::spec::check_text("strategy", &p.strategy).map_err(|e| e.to_string())?;
        if !seen.insert((p.strategy.as_str(), p.writers)) {
            return Err(format!(
                "holds {} at {} writers twice",
                p.strategy, p.writers
            ));
        }
        if [&p.commits_per_sec, &p.p50_us, &p.p99_us, &p.p999_us]
            .iter()
            .any(|v| v.len() > runs)
            || p.run_ids.len() > runs
        {
            return Err(format!("holds more than {runs} runs of {}", p.strategy));
        }
    }
    for m in &advice.methods {
        crate::spec::check_text("method", &m.method).map_err(|e| e.to_string())?;
    }
    let fits = [&advice.sync_parallelism, &advice.sync_parallelism_own_files];
    if fits
        .iter()
        .flat_map(|f| f.iter())
        .any(|f| f.points.len() > 200)
    {
        return Err("holds more than 200 sync-parallelism samples".into());
    }
    Ok(())
}
