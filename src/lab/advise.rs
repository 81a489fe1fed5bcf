//! The commit advisor (issue 35): [`advise`] runs the plan of [`super::advise_plan`] on one
//! target — every run a normal stored run in one experiment — reads each strategy's stored
//! crash-test verdict for the target's filesystem type, judges it all with
//! [`crate::analysis::Advice::build`] and stores the answer. Front ends render it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use crate::analysis::{Advice, AdviceInputs, AdvicePoint};
use crate::engine::{self, CancelToken, EngineEvent};
use crate::metrics::RunStatus;
use crate::probe::SystemInfo;
use crate::spec::{Setting, SpecError, Strategy, WorkloadSpec};
use crate::store::{NewAdvice, Store};

use super::advise_gather::Gathered;
pub use super::advise_plan::{AdvisePlan, AdviseStep, EMPTY_SYNC, LogShape, METHODS, RECORD_SIZE};
use super::{DeviceRequest, LabError, Place, RunRequest, run_one};

/// Background CPU measured before each of the advisor's runs (instead of a second).
const BACKGROUND_WINDOW: Duration = Duration::from_millis(250);

/// Most strategies one advice compares.
pub const MAX_ADVISE_STRATEGIES: usize = 16;

/// Most rounds (runs per strategy and writer count) an advice makes.
pub const MAX_ADVISE_REPEAT: u32 = 10;

/// Most writers the headline writer count may name.
pub const MAX_ADVISE_WRITERS: u32 = 256;

/// What to advise on.
#[derive(Clone, Debug)]
pub struct AdviseRequest {
    /// The directory measured (a private run directory is made in it per run).
    pub target: PathBuf,
    /// The p99 commit latency the recommendation must keep, µs (`None`: 2× solo's).
    pub budget_p99_us: Option<f64>,
    /// The short plan.
    pub quick: bool,
    /// The writer count the headline recommendation is for (added to the plan's).
    pub writers: u32,
    /// Runs per strategy and writer count instead of the plan's 3 (3 to
    /// [`MAX_ADVISE_REPEAT`]): more rounds narrow the intervals that tell strategies apart.
    pub repeat: Option<u32>,
    /// Run in a directory other users may write (as `run` allows it).
    pub allow_shared_target: bool,
    /// A label before each run's own.
    pub label: Option<String>,
    /// How the group-commit runs' log is laid out.
    pub log: LogShape,
    /// Whether its runs trace the kernel's side (the flush latency comes from the tracer).
    pub kernel_trace: crate::ktrace::KernelTraceMode,
    /// The strategies to compare instead of the plan's (at most [`MAX_ADVISE_STRATEGIES`]).
    pub strategies: Option<Vec<Strategy>>,
    /// The plan, when not the quick or full one (tests).
    pub plan: Option<AdvisePlan>,
    /// Measure this bare block device instead of `target` (checked and confirmed as
    /// `run --device` does): its sync figures only — no group-commit strategies, which
    /// need a log file.
    pub device: Option<DeviceRequest>,
}

/// Where the advisor is, for a front end's progress line and live frontier.
#[derive(Debug)]
pub struct AdviseProgress<'a> {
    /// Runs done.
    pub done: usize,
    /// Runs planned.
    pub planned: usize,
    /// The run just done.
    pub step: &'a AdviseStep,
    /// Its label (as stored, after `advise `).
    pub label: String,
    /// The strategies' points so far.
    pub points: &'a [AdvicePoint],
    /// About how long the rest of the plan takes ([`super::advise_plan::time_left`]);
    /// `None` after the last.
    pub left: Option<Duration>,
}

/// What an advice did.
#[derive(Debug)]
pub struct AdviseOutcome {
    /// The stored answer.
    pub advice_id: i64,
    /// The experiment of its runs.
    pub experiment_id: i64,
    /// The answer.
    pub advice: Advice,
    /// What the plan left out here, and why (io_uring unavailable...).
    pub skipped: Vec<String>,
}

/// Runs the advisor's plan on `request.target` and stores its answer. Bad input is refused
/// before anything is stored; a run that fails or a cancel stops the measurement, and what
/// was measured until then is judged and stored, saying it stopped.
pub fn advise(
    store: &Store,
    request: &AdviseRequest,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
    mut on_progress: impl FnMut(AdviseProgress<'_>),
) -> Result<AdviseOutcome, LabError> {
    let (plan, skipped) = checked_plan(request)?;
    if let Some(label) = &request.label {
        crate::spec::check_text("label", label)?;
    }
    if request.kernel_trace == crate::ktrace::KernelTraceMode::On {
        crate::ktrace::available().map_err(super::kernel::trace_refused)?;
    }
    let steps = plan.steps();
    let specs: Vec<WorkloadSpec> = steps.iter().map(|s| plan.spec(s)).collect();
    let (place, system) = place_for(store, request, &specs)?;
    for spec in &specs {
        super::preflight(spec, &system)?;
    }
    let fs_type = system.mount.as_ref().map(|m| m.fs_type.clone());
    let verdicts = crash_verdicts(store, fs_type.as_deref())?;
    let target = place.path().display().to_string();
    let experiment_id = store.create_experiment(&format!(
        "advice {target}{}",
        if request.quick { " (quick)" } else { "" }
    ))?;
    let mut acc = Gathered::default();
    let mut stopped = None;
    let started = Instant::now();
    let timed: Vec<f64> = specs
        .iter()
        .map(|s| s.common.duration_s.unwrap_or(0.0))
        .collect();
    for (done, step) in steps.iter().enumerate() {
        if cancel.is_cancelled() {
            stopped = Some("cancelled".to_string());
            break;
        }
        let one = RunRequest {
            label: Some(match &request.label {
                Some(l) => format!("{l}: advise {}", plan.label(step)),
                None => format!("advise {}", plan.label(step)),
            }),
            experiment_id: Some(experiment_id),
            ..run_request(request, specs[done].clone())
        };
        let cpu_before = process_cpu_ns();
        let result = match run_one(store, &one, &place, events, cancel) {
            Ok(r) => r,
            Err(LabError::RunFailed { run_id, source }) => {
                stopped = Some(format!("run {run_id} failed: {source}"));
                break;
            }
            // Refused before anything of it was stored (the checks above make this rare):
            // nothing else is stored either.
            Err(e) if done == 0 && e.is_usage() => {
                let _ = store.delete_empty_experiment(experiment_id);
                return Err(e);
            }
            // Whatever else ends a run (its directory gone, the database), the runs made
            // until then are judged and stored, saying why it stopped.
            Err(e) => {
                stopped = Some(e.to_string());
                break;
            }
        };
        let cpu_ns = process_cpu_ns().saturating_sub(cpu_before);
        if result.status == RunStatus::Cancelled && cancel.is_cancelled() {
            stopped = Some(format!(
                "cancelled during run {} of {}",
                done + 1,
                steps.len()
            ));
            break;
        }
        if result.status != RunStatus::Finished {
            stopped = Some(format!(
                "run {} ended {}",
                result.id,
                result.status.as_str()
            ));
            break;
        }
        acc.add(step, &result, cpu_ns);
        let points = acc.points(&plan, &verdicts);
        on_progress(AdviseProgress {
            done: done + 1,
            planned: steps.len(),
            step,
            label: plan.label(step),
            points: &points,
            left: super::advise_plan::time_left(
                started.elapsed(),
                timed[..=done].iter().sum(),
                timed[done + 1..].iter().sum(),
            ),
        });
    }
    let advice = Advice::build(AdviceInputs {
        target: target.clone(),
        fs_type: fs_type.clone(),
        quick: request.quick,
        record_size: RECORD_SIZE,
        log: plan.log.as_str().to_string(),
        budget_p99_us: request.budget_p99_us,
        writers: request.writers,
        points: acc.points(&plan, &verdicts),
        sync_samples: acc.sync,
        flushes: acc.flushes,
        methods: acc.methods,
        busy_before: acc.busy_before,
        stopped,
        raw_device: request.device.is_some(),
    });
    let inputs = serde_json::json!({
        "target": target,
        "budget_p99_us": request.budget_p99_us,
        "quick": request.quick,
        "log": plan.log.as_str(),
        "writers": request.writers,
        "strategies": plan.strategies.iter().map(Strategy::name).collect::<Vec<_>>(),
        "writer_counts": plan.writers,
        "repeat": plan.repeat,
        "skipped": skipped,
        "device": request.device.as_ref().map(|d| serde_json::json!({
            "path": d.path,
            "offset": d.offset,
        })),
    });
    let advice_id = store.save_advice(&NewAdvice {
        experiment_id: Some(experiment_id),
        target: &target,
        fs_type: fs_type.as_deref(),
        inputs_json: &inputs.to_string(),
        advice_json: &serde_json::to_string(&advice).map_err(crate::store::StoreError::from)?,
    })?;
    Ok(AdviseOutcome {
        advice_id,
        experiment_id,
        advice,
        skipped,
    })
}

/// One run of the advice, before its label and experiment.
fn run_request(request: &AdviseRequest, spec: WorkloadSpec) -> RunRequest {
    RunRequest {
        spec,
        target: match &request.device {
            Some(d) => d.path.clone(),
            None => request.target.clone(),
        },
        label: None,
        tags: vec!["advise".into()],
        preset: None,
        preset_scale: None,
        experiment_id: None,
        keep_files: false,
        allow_shared_target: request.allow_shared_target,
        background_window: Some(BACKGROUND_WINDOW),
        quiet: None,
        origin: None,
        warnings: Vec::new(),
        kernel_trace: request.kernel_trace,
        device: request.device.clone(),
    }
}

/// Where the advice measures, checked once for every run of it: the target directory
/// (held open), or the bare block device (every refusal of `run --device`, each run's
/// range; held `O_EXCL` until the advice ends), with what the probe found there.
fn place_for(
    store: &Store,
    request: &AdviseRequest,
    specs: &[WorkloadSpec],
) -> Result<(Place, SystemInfo), LabError> {
    match &request.device {
        None => {
            let checked = engine::check_target(&request.target, request.allow_shared_target)?;
            let system = crate::probe::collect_held(&checked.held(), checked.path());
            Ok((Place::Dir(checked), system))
        }
        Some(device) => {
            // The widest run first: a range past the device's end is said of it.
            let (refs, widest) = super::advise_plan::widest_first(specs);
            let spec = specs.first().cloned().unwrap_or_default();
            let held = super::device::check_device(
                &run_request(request, spec),
                device,
                &refs,
                store.path(),
            )
            .map_err(|e| past_the_end(e, widest))?;
            let system = held.probe(&specs.first().cloned().unwrap_or_default());
            Ok((Place::Device(held), system))
        }
    }
}

/// A run's range past the device's end, said as the advice's: the runs' file size and
/// threads are the plan's, so the fix is the offset (or a larger device).
fn past_the_end(e: LabError, widest: u64) -> LabError {
    match e {
        LabError::Engine(crate::engine::EngineError::Spec(s)) if s.field == Setting::FILE_SIZE => {
            LabError::Engine(crate::engine::EngineError::Spec(SpecError {
                field: Setting::DeviceOffset,
                problem: format!(
                    "the advice writes up to {} from its offset: {}",
                    crate::spec::format_size(widest),
                    s.problem
                ),
                fix: crate::hint!(
                    "lower ",
                    Setting::DeviceOffset,
                    format!(
                        ", or use a device with {} after it",
                        crate::spec::format_size(widest)
                    )
                ),
            }))
        }
        other => other,
    }
}

/// Parses a latency with its unit (`5ms`, `800us`, `800µs`, `1.5s`, `250000ns`) into µs.
pub fn parse_latency_us(text: &str) -> Result<f64, String> {
    let t = text.trim();
    if t.starts_with('-') && t[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return Err(format!("'{t}' is negative; use 1us to 60s, e.g. 5ms"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    if number.is_empty() && !unit.is_empty() {
        return Err(format!("'{t}' is not a latency such as 5ms or 800us"));
    }
    let scale = match unit.trim() {
        "ns" => 1e-3,
        "us" | "µs" => 1.0,
        "ms" => 1e3,
        "s" => 1e6,
        "" => return Err(format!("'{t}' has no unit; write e.g. 5ms or 800us")),
        other => return Err(format!("'{other}' in '{t}' is not ns, us, ms or s")),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{t}' is not a latency such as 5ms or 800us"))?;
    let us = value * scale;
    if !(us.is_finite() && (1.0..=60e6).contains(&us)) {
        return Err(format!("'{t}': use 1us to 60s"));
    }
    Ok(us)
}

/// The plan for `request`, checked: the headline writer count among the plan's, io_uring's
/// steps left out (and said) where the kernel refuses it, every spec valid.
fn checked_plan(request: &AdviseRequest) -> Result<(AdvisePlan, Vec<String>), LabError> {
    let refuse = |field: Setting, problem: String, fix: String| {
        LabError::Engine(crate::engine::EngineError::Spec(SpecError {
            field,
            problem,
            fix: fix.into(),
        }))
    };
    if !(1..=MAX_ADVISE_WRITERS).contains(&request.writers) {
        return Err(refuse(
            Setting::THREADS,
            format!("{} writers", request.writers),
            format!("use 1 to {MAX_ADVISE_WRITERS} writers"),
        ));
    }
    if let Some(b) = request.budget_p99_us
        && !(b.is_finite() && (1.0..=60e6).contains(&b))
    {
        return Err(refuse(
            Setting::AdviseBudget,
            format!("a p99 budget of {b} µs"),
            "give a latency from 1us to 60s, e.g. 5ms".into(),
        ));
    }
    let mut plan = request.plan.clone().unwrap_or_else(|| {
        if request.quick {
            AdvisePlan::quick()
        } else {
            AdvisePlan::full()
        }
    });
    plan.log = request.log;
    if let Some(n) = request.repeat {
        if !(3..=MAX_ADVISE_REPEAT).contains(&n) {
            return Err(refuse(
                Setting::Repeat,
                format!("{n} runs per strategy and writer count"),
                format!("use 3 to {MAX_ADVISE_REPEAT} (3 is the fewest an interval is given on)"),
            ));
        }
        plan.repeat = n;
    }
    if request.device.is_some() {
        if request.strategies.is_some() {
            return Err(refuse(
                Setting::STRATEGY,
                "group-commit strategies on a bare block device".into(),
                "measure them on a filesystem (advise DIR); a device has no log file".into(),
            ));
        }
        plan = plan.on_device();
    } else if let Some(list) = &request.strategies {
        let mut unique: Vec<Strategy> = Vec::new();
        for s in list {
            if !unique.contains(s) {
                unique.push(*s);
            }
        }
        if unique.is_empty() || unique.len() > MAX_ADVISE_STRATEGIES {
            return Err(refuse(
                Setting::STRATEGY,
                format!("{} strategies", unique.len()),
                format!(
                    "name 1 to {MAX_ADVISE_STRATEGIES} strategies, solo among them, such as \
                     solo,leader,delay:500,pipelined:4"
                ),
            ));
        }
        // The default budget is 2× solo's p99: without solo and a budget nothing could be
        // recommended, which would be found out only after the whole plan ran.
        if request.budget_p99_us.is_none() && !unique.contains(&Strategy::Solo) {
            return Err(refuse(
                Setting::STRATEGY,
                "no solo among the strategies and no p99 budget (the default budget is 2× \
                 solo's p99)"
                    .into(),
                "add solo to the strategies, or give a p99 budget (e.g. 5ms)".into(),
            ));
        }
        plan.strategies = unique;
    }
    if !plan.device && !plan.writers.contains(&request.writers) {
        plan.writers.push(request.writers);
        plan.writers.sort_unstable();
    }
    let mut skipped = Vec::new();
    let uring = plan.spec(&AdviseStep::Strategy {
        strategy: Strategy::Uring,
        writers: 1,
    });
    if let Some((_, why)) = engine::io_uring_problem(&uring) {
        plan.strategies.retain(|s| *s != Strategy::Uring);
        skipped.push(format!(
            "uring and io_uring_fdatasync: {}",
            crate::words::uring::uring_unavailable_text(&why)
        ));
    }
    for step in plan.steps() {
        if matches!(step, AdviseStep::Method("io_uring_fdatasync")) && !skipped.is_empty() {
            continue;
        }
        plan.spec(&step)
            .validate()
            .map_err(|e| LabError::Engine(crate::engine::EngineError::Spec(e)))?;
    }
    Ok((plan, skipped))
}

/// Each strategy's durability verdict on `fs_type` from the stored crash tests: `false`
/// when any lost an acknowledged record, `true` when some judged records and none lost.
fn crash_verdicts(store: &Store, fs_type: Option<&str>) -> Result<HashMap<String, bool>, LabError> {
    let mut out: HashMap<String, bool> = HashMap::new();
    let Some(fs) = fs_type else {
        return Ok(out);
    };
    for row in store.crash_verdicts("grouplog", fs)? {
        let safe = row.lost == 0;
        if row.acknowledged == 0 && safe {
            continue;
        }
        let entry = out.entry(row.strategy).or_insert(true);
        *entry &= safe;
    }
    Ok(out)
}

/// The process's CPU time so far (user + system, all threads), ns.
fn process_cpu_ns() -> u64 {
    use nix::sys::resource::{UsageWho, getrusage};
    let Ok(usage) = getrusage(UsageWho::RUSAGE_SELF) else {
        return 0;
    };
    let ns = |t: nix::sys::time::TimeVal| {
        u64::try_from(t.tv_sec()).unwrap_or(0) * 1_000_000_000
            + u64::try_from(t.tv_usec()).unwrap_or(0) * 1_000
    };
    ns(usage.user_time()) + ns(usage.system_time())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> AdviseRequest {
        AdviseRequest {
            target: "/nonexistent".into(),
            budget_p99_us: None,
            quick: true,
            writers: 16,
            repeat: None,
            allow_shared_target: false,
            label: None,
            log: LogShape::Preallocated,
            kernel_trace: crate::ktrace::KernelTraceMode::Off,
            strategies: None,
            plan: None,
            device: None,
        }
    }

    #[test]
    fn rounds_and_a_device_shape_the_plan() {
        let (plan, _) = checked_plan(&request()).unwrap();
        assert_eq!(plan.repeat, 3);
        let five = AdviseRequest {
            repeat: Some(5),
            ..request()
        };
        let (plan, _) = checked_plan(&five).unwrap();
        assert_eq!(plan.repeat, 5);
        let strategy_runs = plan
            .steps()
            .iter()
            .filter(|s| matches!(s, AdviseStep::Strategy { .. }))
            .count();
        assert_eq!(
            strategy_runs,
            plan.strategies.len() * plan.writers.len() * 5
        );
        for n in [0, 2, 11] {
            let Err(LabError::Engine(crate::engine::EngineError::Spec(e))) =
                checked_plan(&AdviseRequest {
                    repeat: Some(n),
                    ..request()
                })
            else {
                panic!("{n} rounds taken");
            };
            assert_eq!(e.field, Setting::Repeat);
        }
        let device = AdviseRequest {
            device: Some(DeviceRequest {
                path: "/dev/loop63".into(),
                confirm: Some("/dev/loop63".into()),
                overwrite_signature: false,
                offset: 0,
                range: None,
            }),
            ..request()
        };
        let (plan, _) = checked_plan(&device).unwrap();
        assert!(plan.device && plan.strategies.is_empty() && plan.writers.is_empty());
        let with_strategies = AdviseRequest {
            strategies: Some(vec![Strategy::Solo]),
            ..device
        };
        assert!(checked_plan(&with_strategies).is_err());
    }

    #[test]
    fn latencies_need_a_unit_and_a_sane_value() {
        assert_eq!(parse_latency_us("5ms"), Ok(5000.0));
        assert_eq!(parse_latency_us("800us"), Ok(800.0));
        assert_eq!(parse_latency_us("800µs"), Ok(800.0));
        assert_eq!(parse_latency_us(" 1.5s "), Ok(1.5e6));
        assert_eq!(parse_latency_us("250000ns"), Ok(250.0));
        for bad in [
            "5",
            "5 parsecs",
            "-5ms",
            "0ms",
            "ms",
            "1e9s",
            "nanms",
            "",
            "61s",
            "0.0000001ns",
            "999ns",
        ] {
            assert!(parse_latency_us(bad).is_err(), "{bad}");
        }
        assert!(
            parse_latency_us("-5ms")
                .unwrap_err()
                .contains("is negative")
        );
        assert_eq!(parse_latency_us("1us"), Ok(1.0));
    }
}
