//! Repetitions and sweeps: one spec run N times, or once per value of a swept field
//! (× repeats), all in one experiment. Each run is stored as it finishes, so a failure
//! later in the series loses nothing.

use std::sync::mpsc::Sender;

use crate::engine::{CancelToken, EngineEvent};
use crate::metrics::{RunResult, RunStatus};
use crate::spec::{self, Setting, SpecError, WorkloadSpec};
use crate::store::Store;

use super::{LabError, RunRequest, run_one};

/// Most runs per configuration (`--repeat`): a typo guard, not a limit on real work.
pub const MAX_REPEAT: u32 = 1000;
/// Most values in one sweep list.
pub const MAX_SWEEP_VALUES: usize = 64;

/// Runs per point of a series or sweep started from a preset when no count is given: a
/// one-off point misleads (a 0.25-scale series once showed 2 threads slower than 1 where
/// three repeats showed them 1.6× faster), and three runs give every point a 95 %
/// confidence interval.
pub const PRESET_SERIES_REPEAT: u32 = 3;

/// The repetition count when none is given: [`PRESET_SERIES_REPEAT`] for a series or
/// sweep started from a preset, else 1.
pub fn default_repeat(preset_series_or_sweep: bool) -> u32 {
    if preset_series_or_sweep {
        PRESET_SERIES_REPEAT
    } else {
        1
    }
}

/// Checks a repetition count given in `field` (`--repeat`, `Repetitions`): 1 to
/// [`MAX_REPEAT`].
pub fn check_repeat(field: &str, repeat: u32) -> Result<(), String> {
    if (1..=MAX_REPEAT).contains(&repeat) {
        Ok(())
    } else {
        Err(format!(
            "{field}: {repeat} repetitions; use 1 to {MAX_REPEAT} (more runs: start another series)"
        ))
    }
}

/// A swept workload field and its values (`threads=1,2,4,8`).
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSpec {
    /// Field name, as in presets and `--set`.
    pub field: String,
    /// Values as written.
    pub values: Vec<String>,
}

impl SweepSpec {
    /// Parses `field=v1,v2,...`.
    pub fn parse(text: &str) -> Result<SweepSpec, SpecError> {
        let err = |problem: String| SpecError {
            field: Setting::Sweep,
            problem,
            fix: crate::hint!(
                "write ",
                (Setting::Sweep, "field=v1,v2,..."),
                " e.g. ",
                (Setting::Sweep, "threads=1,2,4,8,16")
            ),
        };
        let (field, values) = text
            .split_once('=')
            .ok_or_else(|| err(format!("'{text}' has no '='")))?;
        let values: Vec<String> = values
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect();
        if values.is_empty() {
            return Err(err(format!("'{text}' lists no values")));
        }
        if values.len() > MAX_SWEEP_VALUES {
            return Err(SpecError {
                field: Setting::Sweep,
                problem: format!("{} values", values.len()),
                fix: format!("list at most {MAX_SWEEP_VALUES} values per sweep").into(),
            });
        }
        Ok(SweepSpec {
            field: field.trim().to_string(),
            values,
        })
    }

    /// The spec for every value, validated up front so a typo fails before any run.
    pub fn specs(&self, base: &WorkloadSpec) -> Result<Vec<WorkloadSpec>, SpecError> {
        let specs = self.points(base)?;
        for s in &specs {
            s.validate()?;
        }
        Ok(specs)
    }

    /// The spec for every value, not validated (for callers that validate them already,
    /// as a preset's series plan does).
    pub fn points(&self, base: &WorkloadSpec) -> Result<Vec<WorkloadSpec>, SpecError> {
        self.values
            .iter()
            .map(|v| {
                // Named as the sweep, the option the user wrote.
                let s = spec::apply_setting(base, &format!("{}={v}", self.field)).map_err(|e| {
                    SpecError {
                        field: Setting::Sweep,
                        ..e
                    }
                })?;
                // A count, size or duration of the kind's table (`grouplog.record_size`).
                let numeric = spec::all_settings()
                    .iter()
                    .any(|d| d.key == self.field && d.ty.is_numeric());
                let read = spec::kind_def(s.kind()).is_none_or(|t| t.setting(&self.field).is_some());
                if numeric && !read {
                    return Err(SpecError {
                        field: Setting::Sweep,
                        problem: format!(
                            "'{}' is a setting of {} runs, not of {} runs: every point would be the same run",
                            self.field,
                            spec::kinds_with(&self.field).join(" and "),
                            s.kind().as_str()
                        ),
                        fix: "sweep a setting of this run's kind".into(),
                    });
                }
                if !numeric {
                    return Err(SpecError {
                        field: Setting::Sweep,
                        problem: format!("'{}' is not a numeric workload field", self.field),
                        fix: format!("sweep one of {}", numeric_keys()).into(),
                    });
                }
                Ok(s)
            })
            .collect()
    }
}

/// The keys a sweep can step through: every count, size and duration of the tables.
fn numeric_keys() -> String {
    let keys: Vec<_> = spec::all_settings()
        .iter()
        .filter(|d| d.ty.is_numeric())
        .map(|d| d.key)
        .collect();
    keys.join(", ")
}

/// What a series did.
#[derive(Debug)]
pub struct SeriesOutcome {
    /// Experiment holding every run.
    pub experiment_id: i64,
    /// Results in run order.
    pub results: Vec<RunResult>,
    /// Why the series stopped early, if it did.
    pub stopped: Option<String>,
}

/// Runs `run.request` `run.repeat` times for every spec of `specs` (validated by
/// [`super::Launch::validate`]) on the checked target, filing all runs under a new
/// experiment. `on_result` sees each run right after it is stored.
pub(super) fn run_series(
    store: &Store,
    run: &Checked,
    specs: &[WorkloadSpec],
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
    mut on_result: impl FnMut(&RunResult),
) -> Result<SeriesOutcome, LabError> {
    let (request, repeat) = (run.request, run.repeat);
    // Refused input (too few file descriptors, O_DIRECT misaligned...) fails here, before
    // the experiment is created.
    let system = match &run.place {
        super::Place::Dir(target) => crate::probe::collect_held(&target.held(), target.path()),
        super::Place::Device(device) => device.probe(&request.spec),
    };
    for spec in specs {
        super::preflight(spec, &system)?;
    }
    // The label first: a preset's series makes one experiment per variant, and the Compare
    // picker told five "fsync-methods sweep threads=1,2,4 ×3" apart only by id (issue 31).
    let name = format!(
        "{}{}{}{}",
        request
            .label
            .as_ref()
            .map(|l| format!("{l}: "))
            .unwrap_or_default(),
        request.preset.clone().unwrap_or_else(|| "fileio".into()),
        run.sweep
            .map(|s| format!(" sweep {}={}", s.field, s.values.join(",")))
            .unwrap_or_default(),
        if repeat > 1 {
            format!(" ×{repeat}")
        } else {
            String::new()
        }
    );
    let experiment_id = store.create_experiment(&name)?;
    let mut results = Vec::new();
    for spec in specs {
        for _ in 0..repeat {
            if cancel.is_cancelled() {
                return Ok(SeriesOutcome {
                    experiment_id,
                    results,
                    stopped: Some("cancelled".into()),
                });
            }
            let one = RunRequest {
                spec: spec.clone(),
                experiment_id: Some(experiment_id),
                ..request.clone()
            };
            let result = run_one(store, &one, &run.place, events, cancel)?;
            on_result(&result);
            let status = result.status;
            results.push(result);
            if status != RunStatus::Finished {
                return Ok(SeriesOutcome {
                    experiment_id,
                    results,
                    stopped: Some(format!("a run ended {}", status.as_str())),
                });
            }
        }
    }
    Ok(SeriesOutcome {
        experiment_id,
        results,
        stopped: None,
    })
}

/// A series' request on its checked target (the canonical path).
pub(super) struct Checked<'a> {
    /// The run request (label, tags, spec of the first run...).
    pub request: &'a RunRequest,
    /// The target, checked and held open (a directory or a device).
    pub(crate) place: super::Place,
    /// Runs per spec.
    pub repeat: u32,
    /// The sweep, for the experiment's name.
    pub sweep: Option<&'a SweepSpec>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::FlatSpec;

    #[test]
    fn sweep_parsing_and_validation() {
        let s = SweepSpec::parse("threads=1,2, 4").unwrap();
        assert_eq!(s.values, vec!["1", "2", "4"]);
        let specs = s.specs(&WorkloadSpec::default()).unwrap();
        assert_eq!(
            specs.iter().map(|s| s.flat().threads).collect::<Vec<_>>(),
            vec![1, 2, 4]
        );
        assert!(SweepSpec::parse("threads").is_err());
        assert!(SweepSpec::parse("threads=").is_err());
        let long = format!("threads={}", vec!["1"; MAX_SWEEP_VALUES + 1].join(","));
        let e = SweepSpec::parse(&long).unwrap_err().to_string();
        assert!(e.contains("at most 64 values"), "{e}");
        assert!(check_repeat("--repeat", 0).is_err());
        assert!(check_repeat("--repeat", MAX_REPEAT).is_ok());
        let e = check_repeat("--repeat", MAX_REPEAT + 1).unwrap_err();
        assert!(
            e.starts_with("--repeat: 1001") && e.contains("1 to 1000"),
            "{e}"
        );
        let bad = SweepSpec::parse("threads=1,0")
            .unwrap()
            .specs(&WorkloadSpec::default())
            .unwrap_err();
        assert_eq!(bad.field.key(), "threads");
        let text = SweepSpec::parse("pattern=seq,rand")
            .unwrap()
            .specs(&WorkloadSpec::default())
            .unwrap_err();
        assert!(text.problem.contains("not a numeric"), "{text}");
    }

    /// A kind's own numeric fields are swept by their dotted keys; its other fields are
    /// refused as before.
    #[test]
    fn a_kinds_numeric_fields_sweep_by_their_dotted_keys() {
        let base = FlatSpec {
            kind: crate::spec::WorkloadKind::Grouplog,
            requests: Some(64),
            duration_s: None,
            ..FlatSpec::default()
        }
        .typed();
        let specs = SweepSpec::parse("grouplog.record_size=4k,16k")
            .unwrap()
            .specs(&base)
            .unwrap();
        let sizes: Vec<u64> = specs
            .iter()
            .map(|s| s.flat().grouplog.record_size)
            .collect();
        assert_eq!(sizes, [4096, 16384]);
        let smallfiles = FlatSpec {
            kind: crate::spec::WorkloadKind::Smallfiles,
            ..FlatSpec::default()
        }
        .typed();
        let files = SweepSpec::parse("smallfiles.files_per_thread=10,20")
            .unwrap()
            .points(&smallfiles)
            .unwrap();
        assert_eq!(files[1].flat().smallfiles.files_per_thread, 20);
        // Another kind's setting would make every point the same run: refused.
        let e = SweepSpec::parse("smallfiles.files_per_thread=10,20")
            .unwrap()
            .points(&WorkloadSpec::default())
            .unwrap_err();
        assert!(
            e.problem
                .contains("a setting of smallfiles runs, not of fileio"),
            "{e}"
        );
        let e = SweepSpec::parse("grouplog.strategy=leader,solo")
            .unwrap()
            .specs(&base)
            .unwrap_err();
        assert!(e.problem.contains("not a numeric"), "{e}");
        // The fix lists the tables' numeric keys, every kind's.
        let fix = e.fix.to_string();
        assert!(
            fix.contains("grouplog.record_size") && fix.contains("seed"),
            "{fix}"
        );
        assert!(!fix.contains("grouplog.strategy"), "{fix}");
    }
}
