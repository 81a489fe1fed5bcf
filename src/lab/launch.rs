//! One way to launch: a [`Launch`] says what to run (one run, a repeat/sweep series, a
//! preset's series of variants, or a matrix of scratch filesystems), [`Launch::validate`]
//! checks every input once, and [`launch`] runs it. The CLI and the window only build a
//! `Launch` from their own input and render what comes back.
//!
//! Each spec is validated once, in [`Launch::validate`], and each target is checked and
//! canonicalised once, in [`launch`] (once per configuration for a matrix); the engine
//! then opens that canonical path once and re-checks it through the descriptor.

use std::sync::mpsc::Sender;

use crate::engine::{self, CancelToken, EngineError, EngineEvent};
use crate::metrics::RunResult;
use crate::scratch::ScratchManager;
use crate::spec::{SeriesPlan, Setting, SpecError, WorkloadSpec};
use crate::store::Store;

use super::matrix::{MatrixOutcome, MatrixSpec, run_matrix};
use super::plan::VariantOutcome;
use super::series::{Checked, SeriesOutcome, SweepSpec, run_series};
use super::{LabError, MAX_REPEAT, MAX_SWEEP_VALUES, Place, RunRequest, run_one};

/// What to launch. Every variant carries the run request (spec, target, label...); the
/// repeat count is runs per configuration.
#[derive(Clone, Debug)]
pub enum Launch {
    /// One run.
    Single(RunRequest),
    /// The request `repeat` times, once per value of `sweep` when there is one, all in
    /// one experiment.
    Repeat {
        /// The run.
        request: RunRequest,
        /// Runs per configuration (1 to [`MAX_REPEAT`]).
        repeat: u32,
        /// The swept field and its values.
        sweep: Option<SweepSpec>,
    },
    /// A preset's series: every variant over the plan's sweep, `repeat` times per point,
    /// one experiment per variant labelled with the variant's name.
    Series {
        /// The run (its spec is the preset's, scaled).
        request: RunRequest,
        /// The preset's plan.
        plan: SeriesPlan,
        /// Runs per sweep point.
        repeat: u32,
    },
    /// The request `repeat` times on a fresh scratch filesystem per configuration (the
    /// request's target is replaced by each filesystem's mount point).
    Matrix {
        /// The run.
        request: RunRequest,
        /// The configurations.
        matrix: MatrixSpec,
        /// Makes and destroys the scratch filesystems.
        scratch: ScratchManager,
        /// Runs per configuration.
        repeat: u32,
    },
}

/// A [`Launch`] whose inputs [`Launch::validate`] checked, with the specs it will run;
/// only a `ValidLaunch` can be passed to [`launch`], so nothing is validated twice.
#[derive(Clone, Debug)]
pub struct ValidLaunch {
    launch: Launch,
    /// (variant label, specs to run): one group, unlabelled, except for a series.
    pub(super) groups: Vec<(Option<String>, Vec<WorkloadSpec>)>,
    /// The sweep of a repeat/sweep launch or of a series' plan.
    sweep: Option<SweepSpec>,
}

/// What a launch did, by its shape.
#[derive(Debug)]
pub enum LaunchOutcome {
    /// The run, stored.
    Single(Box<RunResult>),
    /// The runs of a repeat/sweep series.
    Repeat(SeriesOutcome),
    /// What each variant of a series did, in order (stops after one that stopped).
    Series(Vec<VariantOutcome>),
    /// What the matrix did.
    Matrix(MatrixOutcome),
}

impl Launch {
    /// The request, to change (the device's range applied to its spec).
    pub(super) fn request_mut(&mut self) -> &mut RunRequest {
        match self {
            Launch::Single(request)
            | Launch::Repeat { request, .. }
            | Launch::Series { request, .. }
            | Launch::Matrix { request, .. } => request,
        }
    }

    /// The run request every shape carries.
    pub fn request(&self) -> &RunRequest {
        match self {
            Launch::Single(request)
            | Launch::Repeat { request, .. }
            | Launch::Series { request, .. }
            | Launch::Matrix { request, .. } => request,
        }
    }

    /// Runs per configuration (1 for a single run).
    pub fn repeat(&self) -> u32 {
        match self {
            Launch::Single(_) => 1,
            Launch::Repeat { repeat, .. }
            | Launch::Series { repeat, .. }
            | Launch::Matrix { repeat, .. } => *repeat,
        }
    }

    /// Checks every input that needs no database and no target: each spec (and each
    /// sweep point) once, the label and tags, the repeat count, a matrix's size and
    /// option sets. Nothing is stored before this passes.
    pub fn validate(self) -> Result<ValidLaunch, LabError> {
        let spec_error = |e: SpecError| LabError::Engine(EngineError::Spec(e));
        let (groups, sweep) = match &self {
            Launch::Single(request) => {
                request.spec.validate().map_err(spec_error)?;
                (vec![(None, vec![request.spec.clone()])], None)
            }
            Launch::Repeat {
                request,
                repeat,
                sweep,
            } => {
                check_repeat(*repeat)?;
                let specs = match sweep {
                    Some(s) => s.specs(&request.spec).map_err(spec_error)?,
                    None => {
                        request.spec.validate().map_err(spec_error)?;
                        vec![request.spec.clone()]
                    }
                };
                (vec![(None, specs)], sweep.clone())
            }
            Launch::Series {
                request,
                plan,
                repeat,
            } => {
                check_repeat(*repeat)?;
                series_groups(request, plan)?
            }
            Launch::Matrix {
                request,
                matrix,
                repeat,
                ..
            } => {
                check_matrix(matrix, *repeat)?;
                request.spec.validate().map_err(spec_error)?;
                (vec![(None, vec![request.spec.clone()])], None)
            }
        };
        self.request().check_text()?;
        // io_uring refused by the kernel (too old, io_uring_disabled, seccomp) is a usage
        // error found here, before anything is stored; probed once per launch.
        let first_uring = groups
            .iter()
            .flat_map(|(_, specs)| specs)
            .find(|s| crate::engine::uses_io_uring(s));
        if let Some((field, why)) = first_uring.and_then(crate::engine::io_uring_problem) {
            return Err(spec_error(uring_refused(field, &why)));
        }
        if let Launch::Matrix { matrix, .. } = &self {
            if self.request().device.is_some() {
                return Err(spec_error(SpecError {
                    field: Setting::Device,
                    problem: "a matrix makes a scratch filesystem for each configuration; a \
                              bare block device has none"
                        .into(),
                    fix: crate::hint!(
                        "run the matrix on scratch filesystems, or the device without ",
                        Setting::Matrix
                    ),
                }));
            }
            matrix.check_options()?;
        }
        let (launch, groups) = super::device::apply_range(self, groups, sweep.as_ref())?;
        Ok(ValidLaunch {
            launch,
            groups,
            sweep,
        })
    }
}

impl ValidLaunch {
    /// The launch as given.
    pub fn launch(&self) -> &Launch {
        &self.launch
    }

    /// What each run of the launch runs, in order: (the variant's label in a series, the
    /// workload), each point `repeat` times in a row, as the launch runs them. Empty for a
    /// matrix (its runs are the request's workload on each configuration).
    pub fn planned_points(&self) -> Vec<(Option<&str>, &WorkloadSpec)> {
        if matches!(self.launch, Launch::Matrix { .. }) {
            return Vec::new();
        }
        let repeat = self.launch.repeat() as usize;
        self.groups
            .iter()
            .flat_map(|(label, specs)| {
                specs
                    .iter()
                    .flat_map(move |spec| std::iter::repeat_n((label.as_deref(), spec), repeat))
            })
            .collect()
    }

    /// How many runs the launch does when nothing stops it early.
    pub fn planned_runs(&self) -> usize {
        let repeat = self.launch.repeat() as usize;
        match &self.launch {
            Launch::Matrix { matrix, .. } => matrix.config_count().saturating_mul(repeat),
            _ => self
                .groups
                .iter()
                .map(|(_, specs)| specs.len() * repeat)
                .sum(),
        }
    }
}

fn check_repeat(repeat: u32) -> Result<(), LabError> {
    if (1..=MAX_REPEAT).contains(&repeat) {
        return Ok(());
    }
    Err(LabError::Engine(EngineError::Spec(SpecError {
        field: Setting::Repeat,
        problem: format!("{repeat} repetitions"),
        fix: crate::hint!("use ", (Setting::Repeat, format!("1 to {MAX_REPEAT}"))),
    })))
}

fn check_matrix(matrix: &MatrixSpec, repeat: u32) -> Result<(), LabError> {
    let count = matrix.config_count();
    if (2..=MAX_SWEEP_VALUES).contains(&count) && (1..=MAX_REPEAT).contains(&repeat) {
        return Ok(());
    }
    Err(LabError::Engine(EngineError::Spec(SpecError {
        field: Setting::Matrix,
        problem: format!("{count} configuration(s), {repeat} repetition(s)"),
        fix: crate::hint!(
            format!("give 2 to {MAX_SWEEP_VALUES} configurations across "),
            Setting::ScratchFs,
            "/",
            Setting::MkfsOpts,
            "/",
            Setting::MountOpts,
            "/",
            Setting::Backing,
            ", and ",
            (Setting::Repeat, format!("1 to {MAX_REPEAT}"))
        ),
    })))
}

type Groups = (Vec<(Option<String>, Vec<WorkloadSpec>)>, Option<SweepSpec>);

/// Every variant of `plan` (labelled `prefix/variant` under the request's label), with its
/// sweep points. `variant_specs` validates each variant and each point.
fn series_groups(request: &RunRequest, plan: &SeriesPlan) -> Result<Groups, LabError> {
    let spec_error = |e: SpecError| LabError::Engine(EngineError::Spec(e));
    // The front end read the plan from this preset a moment ago; were it gone since, there
    // is no workload of its own to hold the request to.
    if let Some(preset) = request
        .preset
        .as_deref()
        .and_then(|name| crate::spec::load_preset(name).ok())
    {
        plan.check_unvaried(&request.spec, &preset.workload)
            .map_err(spec_error)?;
    }
    let variants = plan.variant_specs(&request.spec).map_err(spec_error)?;
    let sweep = plan
        .sweep
        .as_deref()
        .map(SweepSpec::parse)
        .transpose()
        .map_err(spec_error)?;
    let groups = variants
        .into_iter()
        .map(|(label, spec)| {
            let specs = match &sweep {
                Some(s) => s.points(&spec).map_err(spec_error)?,
                None => vec![spec],
            };
            Ok((Some(label), specs))
        })
        .collect::<Result<_, LabError>>()?;
    Ok((groups, sweep))
}

/// Runs `launch` and stores every run as soon as it ends; `on_result` sees each stored
/// run with its group's label (a series' variant, a matrix's configuration; empty
/// otherwise). Only this module sends [`EngineEvent::Finished`], once per stored run.
pub fn launch(
    store: &Store,
    launch: &ValidLaunch,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
    mut on_result: impl FnMut(&str, &RunResult),
) -> Result<LaunchOutcome, LabError> {
    let request = launch.launch.request();
    match &launch.launch {
        Launch::Matrix {
            matrix,
            scratch,
            repeat,
            ..
        } => run_matrix(
            store, scratch, request, matrix, *repeat, events, cancel, on_result,
        )
        .map(LaunchOutcome::Matrix),
        Launch::Single(_) => {
            let place = check_place(store, launch)?;
            let result = run_one(store, request, &place, events, cancel)?;
            on_result("", &result);
            Ok(LaunchOutcome::Single(Box::new(result)))
        }
        Launch::Repeat { repeat, .. } => {
            let place = check_place(store, launch)?;
            let specs = launch.groups.first().map_or(&[][..], |(_, s)| s);
            let run = Checked {
                request,
                place,
                repeat: *repeat,
                sweep: launch.sweep.as_ref(),
            };
            run_series(store, &run, specs, events, cancel, |r| on_result("", r))
                .map(LaunchOutcome::Repeat)
        }
        Launch::Series { repeat, .. } => {
            let place = check_place(store, launch)?;
            let mut outcomes = Vec::with_capacity(launch.groups.len());
            for (label, specs) in &launch.groups {
                if cancel.is_cancelled() {
                    break;
                }
                let label = label.clone().unwrap_or_default();
                let one = RunRequest {
                    label: Some(match &request.label {
                        Some(prefix) => format!("{prefix}/{label}"),
                        None => label.clone(),
                    }),
                    ..request.clone()
                };
                let run = Checked {
                    request: &one,
                    place: place.clone(),
                    repeat: *repeat,
                    sweep: launch.sweep.as_ref(),
                };
                let series =
                    run_series(store, &run, specs, events, cancel, |r| on_result(&label, r))?;
                let stopped = series.stopped.is_some();
                outcomes.push(VariantOutcome { label, series });
                if stopped {
                    break;
                }
            }
            Ok(LaunchOutcome::Series(outcomes))
        }
    }
}

/// Checks the device of each of `launches` that runs on one (every refusal, each run's
/// range) and lets it go again: a file of several fio jobs is refused whole, before its
/// first job writes anything, when any job's device is refused.
pub fn check_devices(store: &Store, launches: &[&ValidLaunch]) -> Result<(), LabError> {
    for launch in launches {
        if launch.launch.request().device.is_some() {
            check_place(store, launch)?;
        }
    }
    Ok(())
}

/// Checks where the runs of `launch` happen, once: its target directory (checked and held
/// open), or its bare block device (every refusal, the range of each run; held `O_EXCL`
/// until the launch ends; the database's device is protected).
pub(super) fn check_place(store: &Store, launch: &ValidLaunch) -> Result<Place, LabError> {
    let request = launch.launch.request();
    match &request.device {
        None => Ok(Place::Dir(engine::check_target(
            &request.target,
            request.allow_shared_target,
        )?)),
        Some(device) => {
            let specs: Vec<&WorkloadSpec> =
                launch.groups.iter().flat_map(|(_, specs)| specs).collect();
            let held = super::device::check_device(request, device, &specs, store.path())?;
            Ok(Place::Device(held))
        }
    }
}

/// The refusal of a spec whose `field` asks for io_uring where the kernel refuses it: why
/// (in words) and the fix.
fn uring_refused(field: Setting, why: &crate::uring::UringUnavailable) -> SpecError {
    let other = if field == Setting::IO_ENGINE {
        (Setting::IO_ENGINE, "sync")
    } else {
        (Setting::STRATEGY, "leader")
    };
    SpecError {
        field,
        problem: crate::words::uring::uring_unavailable_text(why),
        fix: crate::hint!(
            "use ",
            other,
            ", or let this user use io_uring (as root: sysctl kernel.io_uring_disabled=0)"
        ),
    }
}
