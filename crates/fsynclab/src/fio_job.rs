//! `fsynclab run --fio-job FILE [--job NAME] [--strict]`: every job of a fio job file (or
//! the one named) translated by [`fsynclab::fio::job`] and run by the engine, one run per job.
//! All jobs are read, translated and validated before anything runs or is stored; a job's
//! warnings are printed on stderr before the runs and stored with its run; the run keeps
//! the job file's text, name and job in its origin.

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use anyhow::anyhow;

use super::run::{RunArgs, launch_with};
use super::{CliError, EXIT_FAILED, open_store};
use fsynclab::engine::{CancelToken, EngineEvent};
use fsynclab::fio::job::{self, FioJob, JobSpec};
use fsynclab::lab::{self, Launch, LaunchOutcome, ValidLaunch};
use fsynclab::metrics::{RunResult, RunStatus};
use fsynclab::report;
use fsynclab::store::{OriginKind, RunOrigin, Store};

/// One job to run: its name and its launch.
struct JobLaunch {
    name: String,
    launch: ValidLaunch,
    /// The line of the job's `directory=` when it is the target (no `--target`).
    directory_line: Option<usize>,
}

impl JobLaunch {
    /// `error` with the job's `directory=` named when the engine refused the target and
    /// the target is that directory: the user looks for a `--target` they never gave
    /// otherwise.
    fn blame_directory(&self, path: &Path, error: CliError) -> CliError {
        match self.directory_line {
            Some(line) if is_target_error(&error.error) => CliError {
                code: error.code,
                error: error.error.context(format!(
                    "{}, job [{}]: the target is the job's directory= (line {line}); fix it there or give --target DIR",
                    fsynclab::spec::shown_path(path),
                    self.name
                )),
            },
            _ => error,
        }
    }
}

/// Reads and translates the job file: one validated launch per job run.
fn plan(args: &RunArgs, path: &Path) -> Result<Vec<JobLaunch>, CliError> {
    let text = job::read_job_file(path).map_err(CliError::usage)?;
    let env = |name: &str| std::env::var(name).ok();
    let file = job::parse_job_file(&text, &env)
        .map_err(|e| CliError::usage(anyhow!("{}: {e}", fsynclab::spec::shown_path(path))))?;
    let jobs: Vec<&FioJob> = match &args.job {
        Some(name) => vec![file.job(name).ok_or_else(|| {
            CliError::usage(anyhow!(
                "--job {name}: {} has no job of that name; its jobs: {}",
                fsynclab::spec::shown_path(path),
                file.names().join(", ")
            ))
        })?],
        None => file.jobs.iter().collect(),
    };
    if jobs.len() > 1 {
        errln!(
            "note: {} has {} jobs ({}); fio runs them at the same time (unless stonewall), fsynclab runs them one after another, one run each (--job NAME picks one)",
            fsynclab::spec::shown_path(path),
            jobs.len(),
            file.names().join(", ")
        );
    }
    let several = jobs.len() > 1;
    let mut out = Vec::with_capacity(jobs.len());
    for fio_job in jobs {
        let translated = job::options_to_spec(&fio_job.options, args.strict).map_err(|e| {
            CliError::usage(anyhow!(
                "{}, job [{}]: {e}",
                fsynclab::spec::shown_path(path),
                fio_job.name
            ))
        })?;
        for warning in &translated.warnings {
            errln!(
                "warning: job [{}]: {}",
                fio_job.name,
                fsynclab::report::warning_text(&warning.clone().into(), None)
            );
        }
        let launch = launch_of(args, path, &text, fio_job, translated, several)?;
        out.push(JobLaunch {
            name: fio_job.name.clone(),
            launch,
            directory_line: args.target.is_none().then(|| directory_line(fio_job)),
        });
    }
    Ok(out)
}

/// The launch of one job: its target (`--target`, else its `directory=`), its label
/// (`--label` as given when one job runs, `<label>/<job>` when several do, else the job
/// name), its origin and warnings.
fn launch_of(
    args: &RunArgs,
    path: &Path,
    text: &str,
    fio_job: &FioJob,
    translated: JobSpec,
    several: bool,
) -> Result<ValidLaunch, CliError> {
    let target: PathBuf = match (&args.target, &translated.directory, &translated.device) {
        (_, _, Some(device)) => device.clone(),
        (Some(target), _, None) => target.clone(),
        (None, Some(directory), None) => directory.clone(),
        (None, None, None) => {
            return Err(CliError::usage(anyhow!(
                "{}, job [{}]: no directory to run in: the job has no directory= and --target is not given; add one of them",
                fsynclab::spec::shown_path(path),
                fio_job.name
            )));
        }
    };
    let label = match args.label.as_deref() {
        Some(label) if !several => label.to_string(),
        Some(prefix) => format!("{prefix}/{}", fio_job.name),
        None => fio_job.name.clone(),
    };
    fsynclab::spec::check_text("job name", &label).map_err(CliError::usage)?;
    let origin = RunOrigin {
        kind: OriginKind::FioJob,
        file: Some(path.display().to_string()),
        job: Some(fio_job.name.clone()),
        job_text: Some(text.to_string()),
        ..RunOrigin::default()
    };
    if translated.device.is_some() && args.target.is_some() {
        return Err(CliError::usage(anyhow!(
            "{}, job [{}]: the job runs on the device its filename= names; drop --target",
            fsynclab::spec::shown_path(path),
            fio_job.name
        )));
    }
    let device = translated.device.map(|path| lab::DeviceRequest {
        path,
        confirm: args.device.destroy_data_on.clone(),
        overwrite_signature: args.device.overwrite_signature,
        offset: translated.offset,
        range: None,
    });
    if device.is_none() && args.device.destroy_data_on.is_some() {
        return Err(CliError::usage(anyhow!(
            "{}, job [{}]: --destroy-data-on confirms a device run, and the job has no filename=/dev/...; drop it",
            fsynclab::spec::shown_path(path),
            fio_job.name
        )));
    }
    launch_with(args, translated.spec, None, None, |request| {
        lab::RunRequest {
            target,
            label: Some(label),
            origin: Some(origin),
            warnings: translated.warnings,
            device,
            ..request
        }
    })
}

/// The line of the job's effective `directory=` (the last one wins).
fn directory_line(fio_job: &FioJob) -> usize {
    fio_job
        .options
        .iter()
        .rev()
        .find(|o| o.key == "directory")
        .map_or(0, |o| o.line)
}

/// Whether `error` is the engine refusing the target directory.
fn is_target_error(error: &anyhow::Error) -> bool {
    use fsynclab::engine::EngineError;
    error.chain().any(|cause| {
        cause.is::<fsynclab::engine::TargetError>()
            || matches!(
                cause.downcast_ref::<lab::LabError>(),
                Some(lab::LabError::Engine(EngineError::Target(_)))
            )
    })
}

/// `fsynclab run --fio-job FILE`.
pub(super) fn execute(db: &Option<PathBuf>, args: &RunArgs) -> Result<u8, CliError> {
    // The progress settings are checked first, as for every run.
    super::progress::Progress::for_stderr(args.quiet, args.status_interval)?;
    let path = args.fio_job.as_deref().unwrap_or(Path::new(""));
    let mut jobs = plan(args, path)?;
    let store = open_store(db, fsynclab::store::OpenMode::ReadWrite)?;
    // Every job's device before the first job writes anything; a range the job's options
    // set is named by those options.
    let launches: Vec<&ValidLaunch> = jobs.iter().map(|j| &j.launch).collect();
    lab::check_devices(&store, &launches).map_err(|e| match e {
        lab::LabError::Engine(fsynclab::engine::EngineError::Spec(s)) => CliError::usage(anyhow!(
            "{}: {}",
            fsynclab::spec::shown_path(path),
            fsynclab::spec::Worded::worded(&s, &job::FioNames)
        )),
        e => super::launch::lab_error(e),
    })?;
    if jobs.len() == 1 {
        let only = jobs.remove(0);
        let progress = super::progress::Progress::for_stderr(args.quiet, args.status_interval)?;
        return super::launch::run(&store, &only.launch, progress, args.json)
            .map_err(|e| only.blame_directory(path, e));
    }
    // Single runs of several jobs go into one experiment; repeats and sweeps make one
    // experiment per job, as a preset's series makes one per variant.
    if super::run::repeat_of(args) == 1 && args.sweep.is_none() {
        let name = format!("fio job file {}", fsynclab::spec::shown_path(path));
        let experiment = store.create_experiment(&name)?;
        for job in &mut jobs {
            let mut request = job.launch.launch().request().clone();
            request.experiment_id = Some(experiment);
            job.launch = Launch::Single(request)
                .validate()
                .map_err(super::launch::lab_error)?;
        }
    }
    run_jobs(&store, &jobs, args, path)
}

/// Runs every job in turn with one progress display; prints each run (or one JSON array
/// of them) and stops at the first run that does not finish.
fn run_jobs(
    store: &Store,
    jobs: &[JobLaunch],
    args: &RunArgs,
    path: &Path,
) -> Result<u8, CliError> {
    let cancel = CancelToken::new();
    super::signals::install(cancel.clone());
    let (tx, rx) = mpsc::channel::<EngineEvent>();
    let shown = super::progress::Progress::for_stderr(args.quiet, args.status_interval)?;
    let progress = std::thread::spawn(move || super::progress::show_progress(rx, shown));
    let mut results: Vec<(String, RunResult)> = Vec::new();
    let mut failure = None;
    for job in jobs {
        if cancel.is_cancelled() {
            break;
        }
        let outcome = lab::launch(store, &job.launch, &tx, &cancel, |_, r| {
            results.push((job.name.clone(), r.clone()));
        });
        match outcome {
            Ok(LaunchOutcome::Repeat(series)) if series.stopped.is_some() => break,
            Ok(_) => {}
            Err(e) => {
                failure = Some((job, e));
                break;
            }
        }
        if results
            .last()
            .is_some_and(|(_, r)| r.status != RunStatus::Finished)
        {
            break;
        }
    }
    drop(tx);
    let _ = progress.join();
    print_results(&results, args.json)?;
    if let Some((job, e)) = failure {
        return Err(job.blame_directory(path, super::launch::lab_error(e)));
    }
    Ok(if cancel.is_cancelled() {
        super::signals::cancelled_exit_code()
    } else if results.len() < jobs.len() * super::run::repeat_of(args) as usize
        && args.sweep.is_none()
        || results.iter().any(|(_, r)| r.status != RunStatus::Finished)
    {
        EXIT_FAILED
    } else {
        0
    })
}

fn print_results(results: &[(String, RunResult)], json: bool) -> Result<(), CliError> {
    if json {
        let all: Vec<serde_json::Value> = results
            .iter()
            .map(|(name, r)| {
                let mut value = report::run_json(r);
                value["fio_job"] = serde_json::json!(name);
                value
            })
            .collect();
        super::launch::print_json(&report::run_shape(all, &[]))?;
    } else {
        for (name, r) in results {
            outln!("== job [{name}]");
            out!("{}", report::run_summary_text(r, &crate::names::CliNames));
        }
    }
    Ok(())
}
