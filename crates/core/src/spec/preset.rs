//! Presets: TOML files that replay a seed thread's benchmark, carry its published
//! figures, and scale down for quick runs. The files in `presets/` are compiled in.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{SpecError, Worded, WorkloadSpec};

/// The presets shipped in `presets/`, compiled into the binary (name, TOML text).
const BUILTIN: &[(&str, &str)] = &[
    (
        "btrfs-log-commit",
        include_str!("../../../../presets/btrfs-log-commit.toml"),
    ),
    (
        "ext4-fsync-coordination",
        include_str!("../../../../presets/ext4-fsync-coordination.toml"),
    ),
    (
        "btrfs-fsync-unplug",
        include_str!("../../../../presets/btrfs-fsync-unplug.toml"),
    ),
    (
        "fsync-methods",
        include_str!("../../../../presets/fsync-methods.toml"),
    ),
    (
        "xfs-cil-dbench",
        include_str!("../../../../presets/xfs-cil-dbench.toml"),
    ),
    (
        "xfs-cil-fsmark",
        include_str!("../../../../presets/xfs-cil-fsmark.toml"),
    ),
    (
        "jbd-sync-writers",
        include_str!("../../../../presets/jbd-sync-writers.toml"),
    ),
    (
        "uring-depth",
        include_str!("../../../../presets/uring-depth.toml"),
    ),
    (
        "pg-test-fsync",
        include_str!("../../../../presets/pg-test-fsync.toml"),
    ),
    (
        "etcd-disk",
        include_str!("../../../../presets/etcd-disk.toml"),
    ),
];

/// A figure published in the seed thread, kept beside what the lab measures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedFigure {
    /// Which side of the thread's before/after (`before`, `after`, or a configuration name).
    pub side: String,
    /// The lab's metric it corresponds to (`mib_per_sec`, `iops`, `wall_s`, `sync_p95_ms`...).
    pub metric: String,
    /// The value converted to the lab metric's unit.
    pub value: f64,
    /// Unit of `value`.
    pub unit: String,
    /// The figure exactly as the thread printed it.
    pub as_published: String,
    /// The thread or client count it was measured at, when the thread published a table
    /// over counts: a comparison shows it only beside runs (or sweep points) at that count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
}

/// A suggested matrix: the scratch-filesystem configurations worth comparing with this
/// preset (`fsynclab matrix --preset NAME --suggested N`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixSuggestion {
    /// What is compared, in a few words.
    pub title: String,
    /// Why it is worth comparing.
    pub why: String,
    /// Filesystems (`ext4`, `xfs`, `btrfs`).
    #[serde(default)]
    pub fs: Vec<String>,
    /// mkfs option sets, one configuration each (empty: the default).
    #[serde(default)]
    pub mkfs_opts: Vec<String>,
    /// Mount option sets, one configuration each (empty: the default).
    #[serde(default)]
    pub mount_opts: Vec<String>,
    /// Backings (`disk`, `ram`).
    #[serde(default)]
    pub backing: Vec<String>,
}

/// How `--scale F` shrinks a preset: the listed fields are multiplied by F.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleRule {
    /// Fields scaled: any of `file_size`, `io_size`, `requests`, `duration_s`.
    pub fields: Vec<String>,
    /// The scale of a quick run (under a minute on a 2-core machine).
    pub quick: f64,
}

/// A named, documented workload that replays a seed thread's benchmark.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    /// Short name used on the command line.
    pub name: String,
    /// One-line title.
    pub title: String,
    /// The seed document it replays (file stem in the seeds folder), if any.
    pub seed: Option<String>,
    /// The seed thread's subject line.
    pub seed_title: Option<String>,
    /// What the benchmark shows and what to vary, one paragraph.
    pub description: String,
    /// The original command or job file, as published.
    pub original: Option<String>,
    /// The workload at full (published) scale.
    pub workload: WorkloadSpec,
    /// How to shrink it.
    pub scale: ScaleRule,
    /// Published figures.
    #[serde(default)]
    pub published: Vec<PublishedFigure>,
    /// Why a seed preset carries no published figures (the thread had none inline).
    #[serde(default)]
    pub published_note: Option<String>,
    /// Suggested scratch-filesystem matrices.
    #[serde(default)]
    pub matrix: Vec<MatrixSuggestion>,
    /// The series the seed thread compared (`run --preset NAME --series`).
    #[serde(default)]
    pub series: Option<super::SeriesPlan>,
    /// The kernel-trace figures that bear on the seed's patch ("what to watch").
    #[serde(default)]
    pub watch: Vec<super::Watch>,
    /// Thresholds a published check holds a run to (pass or fail beside each run).
    #[serde(default, rename = "requirement")]
    pub requirements: Vec<super::Requirement>,
}

/// Why a preset could not be loaded or scaled.
#[derive(Debug, thiserror::Error)]
pub enum PresetError {
    /// No built-in preset has that name and it is not a file path.
    #[error(
        "unknown preset '{name}'; {}built-in presets: {available} (or give a path to a .toml file)",
        suggestion.as_ref().map(|s| format!("did you mean {s}? ")).unwrap_or_default()
    )]
    Unknown {
        /// What the user asked for.
        name: String,
        /// The built-in name closest to it, when one is a few edits away.
        suggestion: Option<String>,
        /// Comma-separated built-in names.
        available: String,
    },
    /// The preset file could not be read (or is not a small regular file).
    #[error(
        "cannot read preset file {path}: {source}; give the path of a preset .toml file \
         (a regular file of at most 1 MiB)"
    )]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: super::InputFileError,
    },
    /// The TOML is malformed or has wrong fields.
    #[error("{origin}:{line}:{column}: {message}")]
    Parse {
        /// File path or `builtin:NAME`.
        origin: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the TOML parser said.
        message: String,
    },
    /// The preset's workload is invalid.
    #[error("{}", self.worded(&super::Neutral))]
    Invalid {
        /// Preset name.
        name: String,
        /// The first problem.
        source: SpecError,
    },
    /// The scale factor or rule is unusable.
    #[error("{0}")]
    Scale(String),
    /// The scale factor asked for is out of range.
    #[error("{}", self.worded(&super::Neutral))]
    ScaleOutOfRange {
        /// The factor given.
        factor: f64,
        /// The preset's quick factor, proposed instead.
        quick: f64,
    },
    /// A suggested matrix names an mkfs or mount option the allow-list refuses.
    #[error("{}", self.worded(&super::Neutral))]
    MatrixOption {
        /// File path or `builtin:NAME`.
        origin: String,
        /// 1-based position of the `[[matrix]]` table.
        index: usize,
        /// `mkfs_opts` or `mount_opts`.
        field: &'static str,
        /// 0-based position in that list.
        item: usize,
        /// The filesystem it was checked for.
        fs: String,
        /// What the allow-list said.
        source: Box<crate::fsopts::OptionError>,
    },
}

impl super::Worded for PresetError {
    fn worded(&self, names: &dyn super::SettingNames) -> String {
        match self {
            PresetError::Invalid { name, source } => {
                format!("preset '{name}': {}", source.worded(names))
            }
            PresetError::ScaleOutOfRange { factor, quick } => format!(
                "scale {} is out of range; use a factor above 0 and at most 100 \
                 (e.g. {} for a quick run)",
                short_number(*factor),
                names.name(super::Setting::Scale, Some(&quick.to_string()))
            ),
            PresetError::MatrixOption {
                origin,
                index,
                field,
                item,
                fs,
                source,
            } => format!(
                // The refusal names the option and the filesystem, never a front end's control.
                "{origin}: [[matrix]] {index} {field}[{item}] (for {fs}): {source}; fix or remove it in the preset file"
            ),
            other => other.to_string(),
        }
    }
}

impl Preset {
    /// Parses preset TOML; `origin` names the file in error messages.
    pub fn from_toml(text: &str, origin: &str) -> Result<Preset, PresetError> {
        let mut preset: Preset = toml::from_str(text).map_err(|e| {
            let offset = e.span().map(|s| s.start).unwrap_or(0);
            let (line, column) = line_column(text, offset);
            PresetError::Parse {
                origin: origin.to_string(),
                line,
                column,
                message: e.message().trim().to_string(),
            }
        })?;
        super::preset_checks::check_identity(&preset, origin)?;
        // Presets replay published benchmarks whose prepare ran seconds before the timed
        // phase: they settle unless the preset says `settle = false`.
        let workload = toml::from_str::<toml::Table>(text)
            .ok()
            .and_then(|t| t.get("workload").cloned());
        let says_settle = workload.as_ref().and_then(|w| w.get("settle")).is_some();
        if !says_settle {
            preset.workload.common.settle = true;
        }
        // The typed spec keeps its kind's settings only: a value of another kind's is
        // refused from the flat form, before it is left behind.
        let flat: super::FlatSpec = workload.and_then(|w| w.try_into().ok()).unwrap_or_default();
        if let Some(def) = super::foreign_settings(&flat).first() {
            return Err(PresetError::Invalid {
                name: preset.name.clone(),
                source: foreign_setting(def, flat.kind),
            });
        }
        preset
            .workload
            .validate()
            .map_err(|source| PresetError::Invalid {
                name: preset.name.clone(),
                source,
            })?;
        for (index, m) in preset.matrix.iter().enumerate() {
            let bad_fs =
                m.fs.iter()
                    .find(|f| !["ext4", "xfs", "btrfs"].contains(&f.as_str()));
            let bad_backing = m
                .backing
                .iter()
                .find(|b| !["disk", "ram"].contains(&b.as_str()));
            if let Some(bad) = bad_fs.or(bad_backing) {
                return Err(PresetError::Scale(format!(
                    "preset '{}': matrix '{}' names '{bad}'; use fs ext4, xfs or btrfs and backing disk or ram",
                    preset.name, m.title
                )));
            }
            check_matrix_options(m, index + 1, origin)?;
        }
        super::check_watch(&preset.watch).map_err(|problem| {
            PresetError::Scale(format!("preset '{}' ({origin}): {problem}", preset.name))
        })?;
        super::check_requirements(&preset.requirements).map_err(|problem| {
            PresetError::Scale(format!("preset '{}' ({origin}): {problem}", preset.name))
        })?;
        if let Some(plan) = &preset.series {
            plan.variant_specs(&preset.workload)
                .map_err(|source| PresetError::Invalid {
                    name: preset.name.clone(),
                    source,
                })?;
        }
        let quick = preset.scale.quick;
        if !(quick > 0.0 && quick <= 100.0) {
            return Err(PresetError::Scale(format!(
                "preset '{}': scale.quick {} is out of range; use a factor above 0 and at \
                 most 100 (e.g. quick = 0.05)",
                preset.name,
                short_number(quick)
            )));
        }
        for field in &preset.scale.fields {
            if !scalable().any(|d| d.key == field) {
                let keys: Vec<_> = scalable().map(|d| d.key).collect();
                return Err(PresetError::Scale(format!(
                    "preset '{}': scale field '{field}' cannot be scaled; use {}",
                    preset.name,
                    keys.join(", ")
                )));
            }
        }
        Ok(preset)
    }

    /// The workload scaled by `factor` (1.0 = as published). Sizes are rounded down to
    /// whole blocks (at least one), counts to at least 1.
    pub fn scaled(&self, factor: f64) -> Result<WorkloadSpec, PresetError> {
        if !(factor > 0.0 && factor <= 100.0) {
            return Err(PresetError::ScaleOutOfRange {
                factor,
                quick: self.scale.quick,
            });
        }
        let spec = scale_fields(&self.workload, &self.scale.fields, factor);
        spec.validate().map_err(|source| PresetError::Invalid {
            name: self.name.clone(),
            source,
        })?;
        Ok(spec)
    }
}

/// A preset's setting its kind never reads, refused (it would be silently ignored).
fn foreign_setting(def: &'static super::SettingDef, kind: super::WorkloadKind) -> super::SpecError {
    let it = super::Setting::Field(def);
    super::SpecError {
        field: it,
        problem: format!(
            "a setting of {} runs, not of this {} preset",
            super::kinds_with(def.key).join(" and "),
            kind.as_str()
        ),
        fix: crate::hint!("drop ", it, ", or change the preset's kind"),
    }
}

/// The settings a preset's `scale.fields` may name: the rows marked `scale`.
fn scalable() -> impl Iterator<Item = &'static super::SettingDef> {
    super::all_settings().into_iter().filter(|d| d.scale)
}

/// `spec` with each of `fields` multiplied by `factor`, by its row's type: a size rounded
/// down to whole blocks (at least one), a count to at least 1, a duration as it comes; an
/// unset optional field stays unset.
fn scale_fields(spec: &WorkloadSpec, fields: &[String], factor: f64) -> WorkloadSpec {
    let mut json = spec.full_json();
    // Sizes round to whole blocks (fileio's; the flat form's default for other kinds).
    let bs = spec.flat().block_size.max(1);
    for def in scalable().filter(|d| fields.iter().any(|f| f == d.key)) {
        let pointer = format!("/{}", def.key.replace('.', "/"));
        let Some(slot) = json.pointer_mut(&pointer) else {
            continue;
        };
        let scaled = match (def.ty.inner(), slot.as_f64()) {
            (_, None) => continue,
            (super::Ty::Size { .. }, Some(v)) => {
                serde_json::json!((((v * factor) as u64) / bs).max(1) * bs)
            }
            (super::Ty::Count { .. }, Some(v)) => serde_json::json!(((v * factor) as u64).max(1)),
            (_, Some(v)) => serde_json::json!(v * factor),
        };
        *slot = scaled;
    }
    serde_json::from_value(json).unwrap_or_else(|_| spec.clone())
}

/// A number as a message echoes it: plainly, or in scientific notation when plain digits
/// would run long (`1e308`, not 309 digits).
fn short_number(v: f64) -> String {
    let plain = v.to_string();
    if plain.len() > 16 {
        format!("{v:e}")
    } else {
        plain
    }
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map(|l| l.chars().count())
        .unwrap_or(0)
        + 1;
    (line, column)
}

/// Every built-in preset, parsed. A broken built-in is a bug caught by the tests.
pub fn builtin_presets() -> Vec<Preset> {
    BUILTIN
        .iter()
        .filter_map(|(name, text)| Preset::from_toml(text, &format!("builtin:{name}")).ok())
        .collect()
}

/// Checks every option set of a suggested matrix against the allow-list of each of its
/// filesystems (the 1-based `index` and `origin` name it in the error).
fn check_matrix_options(
    m: &MatrixSuggestion,
    index: usize,
    origin: &str,
) -> Result<(), PresetError> {
    use crate::fsopts::{check_mkfs_options, check_mount_options};
    use crate::sysinfo::FsKind;
    for fs in m.fs.iter().filter_map(|f| f.parse::<FsKind>().ok()) {
        let failure = |field, item, source| PresetError::MatrixOption {
            origin: origin.to_string(),
            index,
            field,
            item,
            fs: fs.as_str().to_string(),
            source: Box::new(source),
        };
        for (item, text) in m.mkfs_opts.iter().enumerate() {
            check_mkfs_options(fs, text).map_err(|e| failure("mkfs_opts", item, e))?;
        }
        for (item, text) in m.mount_opts.iter().enumerate() {
            check_mount_options(fs, text).map_err(|e| failure("mount_opts", item, e))?;
        }
    }
    Ok(())
}

/// Loads a preset by built-in name, or from a path (anything ending in `.toml` or
/// containing a `/`).
pub fn load_preset(name_or_path: &str) -> Result<Preset, PresetError> {
    if name_or_path.ends_with(".toml") || name_or_path.contains('/') {
        let path = Path::new(name_or_path);
        let text =
            super::read_small_file(path, super::MAX_INPUT_FILE_BYTES, false).map_err(|source| {
                PresetError::Read {
                    path: path.to_path_buf(),
                    source,
                }
            })?;
        return Preset::from_toml(&text, &path.display().to_string());
    }
    match BUILTIN.iter().find(|(name, _)| *name == name_or_path) {
        Some((name, text)) => Preset::from_toml(text, &format!("builtin:{name}")),
        None => Err(PresetError::Unknown {
            name: name_or_path.to_string(),
            suggestion: super::suggest::closest(name_or_path, BUILTIN.iter().map(|(n, _)| *n)),
            available: BUILTIN
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

#[cfg(test)]
#[path = "preset_tests.rs"]
mod tests;
