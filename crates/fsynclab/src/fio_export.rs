//! `fsynclab export-fio-job`: a preset (scaled, optionally one variant of its series) or a
//! stored run's workload as a fio job file, on stdout or in a new file. The library writes
//! the job file ([`fsynclab::fio::export`]); this only picks the spec, words the errors with
//! the flags and writes the output.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::{ArgGroup, Args};

use super::{CliError, CliNames, open_store};
use fsynclab::fio::export::{ExportError, ExportNotes, export_device_job_noted, export_job_noted};
use fsynclab::spec::{self, Setting, SettingNames, Worded, WorkloadSpec};
use fsynclab::store::{OpenMode, OriginKind};

/// Arguments of `fsynclab export-fio-job`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("source").required(true).args(["preset", "run"])))]
pub struct ExportFioArgs {
    /// Preset name (see `fsynclab presets`) or path to a preset .toml file.
    #[arg(long)]
    pub preset: Option<String>,
    /// Scale the preset's sizes/counts by this factor (default 1: as published).
    #[arg(long, requires = "preset")]
    pub scale: Option<f64>,
    /// One variant of the preset's series (its label); default: the preset's base workload.
    #[arg(long, requires = "preset")]
    pub variant: Option<String>,
    /// A stored run's id: export the workload it ran.
    #[arg(long)]
    pub run: Option<i64>,
    /// Change any workload field before exporting: --set key=value (repeatable), e.g.
    /// --set requests=1000 or --set mode=fio.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<String>,
    /// Directory fio writes its files in (fio's directory=); none: a comment says to add it.
    #[arg(long)]
    pub target: Option<PathBuf>,
    /// The fio job's section name (default: the preset's name, or run-ID).
    #[arg(long)]
    pub job: Option<String>,
    /// Write the job file here (created; never replaces a file without --force, never
    /// writes through a symlink) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace an existing --output file (a symlink there is replaced, not followed).
    #[arg(long, requires = "output")]
    pub force: bool,
}

/// The workload to export, where it came from (for the header and the errors) and the
/// default job name.
struct Source {
    spec: WorkloadSpec,
    /// `preset btrfs-log-commit at scale 0.01`, `run 12 (label before)`.
    said: String,
    /// The flag that chose it, for errors: `--preset NAME`, `--run 12`.
    flag: String,
    job: String,
    /// Said on stderr once the export succeeded (which variant, where a run came from).
    notes: Vec<String>,
    /// A run on a bare block device: its node and the range's first byte.
    device: Option<(PathBuf, u64)>,
}

/// Names settings as this command changes them: `--set key=value` for workload fields
/// (export-fio-job has no `--mode`, `--requests`... of its own), the CLI's flags otherwise.
struct ExportNames;

impl SettingNames for ExportNames {
    fn name(&self, setting: Setting, value: Option<&str>) -> String {
        if setting.is_workload_field() {
            format!("--set {}={}", setting.key(), value.unwrap_or("N"))
        } else {
            CliNames.name(setting, value)
        }
    }
}

/// `fsynclab export-fio-job`.
pub fn export_fio_job(db: &Option<PathBuf>, args: ExportFioArgs) -> Result<u8, CliError> {
    let mut source = match (&args.preset, args.run) {
        (Some(name), _) => preset_source(name, args.scale, args.variant.as_deref())?,
        (None, Some(id)) => run_source(db, id)?,
        (None, None) => {
            return Err(CliError::usage(anyhow!(
                "say what to export: --preset NAME or --run ID"
            )));
        }
    };
    for setting in &args.settings {
        source.spec = spec::apply_setting(&source.spec, setting)
            .map_err(|e| CliError::usage(anyhow!("--set {setting}: {}", e.worded(&ExportNames))))?;
        source.said.push_str(&format!(", {setting}"));
    }
    let job = args.job.clone().unwrap_or_else(|| source.job.clone());
    let notes = ExportNotes {
        source: source.said.clone(),
        commands: commands(
            &args,
            source.device.as_ref().map(|(node, _)| node.as_path()),
        ),
    };
    let text = match &source.device {
        Some((node, offset)) => {
            if args.target.is_some() {
                return Err(CliError::usage(anyhow!(
                    "{}: the run was on the device {}; its job writes there: drop --target",
                    source.flag,
                    fsynclab::spec::shown_path(node)
                )));
            }
            export_device_job_noted(&source.spec, &job, node, *offset, &notes)
        }
        None => export_job_noted(&source.spec, &job, args.target.as_deref(), &notes),
    }
    .map_err(|e| export_error(&e, &source, !args.settings.is_empty()))?;
    for note in &source.notes {
        errln!("note: {note}");
    }
    match &args.output {
        None => out!("{text}"),
        Some(path) => {
            let files = [(path.clone(), text.into_bytes())];
            fsynclab::report::write_report_files(&files, args.force)
                .map_err(|e| CliError::usage_if(e.is_usage(), e))?;
            errln!("wrote {}", fsynclab::spec::shown_path(path));
        }
    }
    Ok(0)
}

/// The flag an export error is about, then the library's message in the CLI's words.
fn export_error(error: &ExportError, source: &Source, with_settings: bool) -> CliError {
    let flag = match error {
        ExportError::Directory { .. } => "--target".to_string(),
        ExportError::JobName { .. } => "--job".to_string(),
        _ if with_settings => format!("{} with --set", source.flag),
        _ => source.flag.clone(),
    };
    CliError::usage(anyhow!("{flag}: {}", error.worded(&ExportNames)))
}

fn preset_source(
    name: &str,
    scale: Option<f64>,
    variant: Option<&str>,
) -> Result<Source, CliError> {
    let preset = spec::load_preset(name).map_err(CliError::usage)?;
    let factor = scale.unwrap_or(1.0);
    let base = preset.scaled(factor).map_err(CliError::usage)?;
    let mut said = format!("preset {} at scale {factor}", preset.name);
    let mut job = preset.name.clone();
    let mut notes = Vec::new();
    let spec = match (variant, &preset.series) {
        (None, None) => base,
        (None, Some(plan)) => {
            let labels: Vec<&str> = plan.variants.iter().map(|v| v.label.as_str()).collect();
            notes.push(format!(
                "preset {} has a series (variants {}{}); exported its base workload. \
                 Export one variant with --variant NAME.",
                preset.name,
                labels.join(", "),
                plan.sweep
                    .as_deref()
                    .map(|s| format!(", each swept over {s}"))
                    .unwrap_or_default()
            ));
            said.push_str(", base workload (not a series variant)");
            base
        }
        (Some(wanted), None) => {
            return Err(CliError::usage(anyhow!(
                "--variant {wanted}: preset {} has no series of variants; drop --variant",
                preset.name
            )));
        }
        (Some(wanted), Some(plan)) => {
            let specs = plan.variant_specs(&base).map_err(CliError::usage)?;
            let labels: Vec<&str> = specs.iter().map(|(l, _)| l.as_str()).collect();
            let Some((label, spec)) = specs.iter().find(|(l, _)| l == wanted) else {
                return Err(CliError::usage(anyhow!(
                    "--variant {wanted}: preset {} has no such variant; use one of {}",
                    preset.name,
                    labels.join(", ")
                )));
            };
            notes.push(format!(
                "exported variant {label} of preset {}{}",
                preset.name,
                plan.sweep
                    .as_deref()
                    .map(|s| format!(" at its base workload (the series sweeps {s})"))
                    .unwrap_or_default()
            ));
            said.push_str(&format!(", variant {label}"));
            job = format!("{}-{label}", preset.name);
            spec.clone()
        }
    };
    Ok(Source {
        spec,
        said,
        flag: format!("--preset {name}"),
        job: fallback_job_name(job),
        notes,
        device: None,
    })
}

fn run_source(db: &Option<PathBuf>, id: i64) -> Result<Source, CliError> {
    let store = open_store(db, OpenMode::ReadOnly)?;
    let stored = store.load_run(id)?;
    let imported = stored
        .origin
        .as_ref()
        .is_some_and(|o| o.kind == OriginKind::FioImport)
        || stored.spec.kind().as_str() == "fio";
    if imported {
        return Err(CliError::usage(anyhow!(
            "--run {id}: run {id} was imported from fio; its job options are in `fsynclab show {id}`"
        )));
    }
    let mut notes = Vec::new();
    if let Some(origin) = stored
        .origin
        .as_ref()
        .filter(|o| o.kind == OriginKind::FioJob)
    {
        notes.push(format!(
            "run {id} ran the fio job file {}; this is the workload fsynclab ran from it \
             (the original text is in `fsynclab show {id}`)",
            origin.file.as_deref().unwrap_or("(unnamed)")
        ));
    }
    let mut said = format!("run {id}");
    let row = &stored.row;
    let mut about = Vec::new();
    if let Some(label) = &row.label {
        about.push(format!("label {label}"));
    }
    if let Some(preset) = &row.preset {
        match row.preset_scale {
            Some(scale) => about.push(format!("preset {preset} at scale {scale}")),
            None => about.push(format!("preset {preset}")),
        }
    }
    if !about.is_empty() {
        said.push_str(&format!(" ({})", about.join(", ")));
    }
    Ok(Source {
        device: stored
            .system
            .raw_device
            .as_ref()
            .map(|raw| (raw.node.clone(), raw.offset)),
        spec: stored.spec,
        said,
        flag: format!("--run {id}"),
        job: format!("run-{id}"),
        notes,
    })
}

/// A preset name from a file may not be a usable section name: fall back to `fsynclab`
/// rather than refuse what `--job` did not ask for.
fn fallback_job_name(name: String) -> String {
    let usable = !name.is_empty()
        && name.len() <= fsynclab::fio::export::MAX_JOB_NAME_CHARS
        && !name.eq_ignore_ascii_case("global")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if usable { name } else { "fsynclab".into() }
}

/// How to run the job file: with fio (JSON for `fsynclab import`), with fsynclab's engine
/// for the cross-check.
fn commands(args: &ExportFioArgs, device: Option<&std::path::Path>) -> Vec<String> {
    let file = args
        .output
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "JOB.fio".into());
    if let Some(node) = device {
        let node = node.display();
        return vec![
            format!("fio --output-format=json --output=fio-result.json {file}"),
            "fsynclab import fio-result.json".into(),
            format!("fsynclab run --fio-job {file} --destroy-data-on {node}"),
        ];
    }
    let dir = match &args.target {
        Some(_) => String::new(),
        None => " --directory=DIR".into(),
    };
    let target = match &args.target {
        Some(t) => t.display().to_string(),
        None => "DIR".into(),
    };
    vec![
        format!("fio{dir} --output-format=json --output=fio-result.json {file}"),
        "fsynclab import fio-result.json".into(),
        format!("fsynclab run --fio-job {file} --target {target}"),
    ]
}
