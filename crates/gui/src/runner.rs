//! The run handle: a run (or a repeat/sweep series) on its own thread with its own
//! database connection, streaming engine events back to the UI, which drains them each
//! frame. Cancel goes through the engine's cancel token.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use super::task::Task;
use fsynclab::engine::{CancelToken, EngineEvent};
use fsynclab::lab::{self, Launch, LaunchOutcome, ValidLaunch};
use fsynclab::metrics::{IntervalSample, RunResult, RunStatus};
use fsynclab::store::Store;

/// What the run thread reports while it goes.
#[derive(Debug)]
enum Done {
    /// One run stored (a series sends one per run).
    Run(Box<RunResult>),
    /// A note for the phase line (waiting for another process's database lock).
    Note(String),
}

/// How a launch ended: its experiment (if any), or what went wrong.
type End = Result<Option<i64>, String>;

/// What the Run tab shows about the run in progress (or the last one).
#[derive(Debug, Default)]
pub struct LiveRun {
    /// A launch is in progress.
    pub active: bool,
    /// Current phase in words ("preparing 8 files", "running", "finished"...).
    pub phase: String,
    /// Store id of the current run.
    pub run_id: Option<i64>,
    /// When the timed part of the current run started.
    pub started: Option<Instant>,
    /// Writes the current run will do, when known.
    pub expected_writes: Option<u64>,
    /// Planned duration of a time-based run.
    pub duration: Option<Duration>,
    /// Warm-up of the current run in ms (0: none), shaded in its timeline.
    pub warmup_ms: u64,
    /// Writes done so far in the current run.
    pub writes_done: u64,
    /// Device flushes so far in the current run (when the device is known).
    pub flushes_done: Option<u64>,
    /// Syncs so far in the current run.
    pub syncs_done: u64,
    /// Interval samples of the current run.
    pub samples: Vec<IntervalSample>,
    /// Runs completed in this launch.
    pub results: Vec<RunResult>,
    /// Runs this launch will do.
    pub planned_runs: usize,
    /// Experiment of a series.
    pub experiment_id: Option<i64>,
    /// The error that ended the launch.
    pub error: Option<String>,
    /// Ids of the runs this launch stored (each announced by `Finished`, whatever its
    /// status): empty when a launch failed before any run existed.
    pub stored_runs: Vec<i64>,
    /// What was launched, in words (workload, target, label), fixed at start.
    pub description: String,
    /// The launch is a matrix (it makes and destroys scratch filesystems).
    pub matrix: bool,
    /// Each planned run's workload in words (`o_dsync: fileio 4 threads…`), in launch order;
    /// empty for a matrix.
    pub planned: Vec<String>,
}

impl LiveRun {
    /// The run in progress: its position (1-based, runs recorded so far + 1) and its
    /// workload in words, when the launch planned its runs.
    pub fn current_point(&self) -> (usize, Option<&str>) {
        let k = self.stored_runs.len();
        (
            (k + 1).min(self.planned_runs.max(1)),
            self.planned.get(k).map(String::as_str),
        )
    }
}

impl LiveRun {
    /// Fraction done of the current run (0..=1), when it can be known.
    pub fn progress(&self) -> Option<f32> {
        if let Some(n) = self.expected_writes.filter(|n| *n > 0) {
            return Some((self.writes_done as f32 / n as f32).min(1.0));
        }
        let (d, t) = (self.duration?, self.started?);
        Some((t.elapsed().as_secs_f32() / d.as_secs_f32().max(1e-3)).min(1.0))
    }

    /// Estimated time left in the current run.
    pub fn eta(&self) -> Option<Duration> {
        let p = self.progress()? as f64;
        let elapsed = self.started?.elapsed().as_secs_f64();
        (p > 0.01).then(|| Duration::from_secs_f64(elapsed * (1.0 - p) / p))
    }
}

/// Starts, cancels and drains runs.
pub struct Runner {
    db_path: PathBuf,
    cancel: Option<CancelToken>,
    events: Option<Receiver<EngineEvent>>,
    done: Option<Receiver<Done>>,
    end: Option<Task<End>>,
    repaint: Option<egui::Context>,
    /// The run in progress or the last one.
    pub live: LiveRun,
    /// Runs stored since the UI last looked (history should refresh when non-zero).
    pub stored_since_refresh: usize,
}

impl Runner {
    /// A runner that stores into the database at `db_path`.
    pub fn new(db_path: PathBuf) -> Self {
        Self {
            db_path,
            cancel: None,
            events: None,
            done: None,
            end: None,
            repaint: None,
            live: LiveRun::default(),
            stored_since_refresh: 0,
        }
    }

    /// The database runs are stored in (the Fleet tab stores there too).
    pub fn db_path(&self) -> &Path {
        &self.db_path
    }

    /// Lets the end of a launch wake this egui context.
    pub fn set_context(&mut self, ctx: &egui::Context) {
        self.repaint = Some(ctx.clone());
    }

    /// Whether a launch is in progress.
    pub fn is_active(&self) -> bool {
        self.live.active
    }

    /// Starts `launch` on a background thread. Refused while another launch runs.
    pub fn start(&mut self, launch: ValidLaunch) -> Result<(), String> {
        if self.live.active {
            return Err("a run is already in progress; cancel it first".into());
        }
        let planned_runs = launch.planned_runs();
        let planned: Vec<String> = launch
            .planned_points()
            .into_iter()
            .map(|(label, spec)| match label {
                Some(l) => format!("{l}: {}", spec.describe()),
                None => spec.describe(),
            })
            .collect();
        let (description, is_matrix) = describe(launch.launch());
        let (etx, erx) = mpsc::channel();
        let (dtx, drx) = mpsc::channel();
        let cancel = CancelToken::new();
        let token = cancel.clone();
        let db_path = self.db_path.clone();
        let end = Task::spawn("fsynclab-run", self.repaint.as_ref(), move || {
            run_launch(&db_path, &launch, &etx, &dtx, &token)
        })
        .map_err(|e| format!("cannot start the run thread: {e}"))?;
        self.end = Some(end);
        self.cancel = Some(cancel);
        self.events = Some(erx);
        self.done = Some(drx);
        self.live = LiveRun {
            active: true,
            description,
            phase: "starting".into(),
            planned_runs,
            matrix: is_matrix,
            planned,
            ..Default::default()
        };
        Ok(())
    }

    /// Asks the run to stop after the calls in flight (it is stored as cancelled).
    pub fn cancel(&self) {
        if let Some(c) = &self.cancel {
            c.cancel();
        }
    }

    /// Drains events; returns true when anything changed.
    pub fn poll(&mut self) -> bool {
        let mut changed = false;
        if let Some(rx) = &self.events {
            for event in rx.try_iter() {
                changed = true;
                apply_event(&mut self.live, event);
            }
        }
        // The end first: every run the thread reported was sent before it, so the drain
        // below sees them all before the end is applied.
        let end = Task::take_done(&mut self.end);
        if let Some(rx) = &self.done {
            for done in rx.try_iter() {
                changed = true;
                match done {
                    Done::Note(note) => self.live.phase = note,
                    Done::Run(result) => {
                        self.stored_since_refresh += 1;
                        self.live.results.push(*result);
                    }
                }
            }
        }
        if let Some(end) = end {
            changed = true;
            let end = end.unwrap_or_else(|lost| Err(format!("the run thread failed: {lost}")));
            self.finish(end);
        }
        if !self.live.active && changed {
            self.events = None;
            self.cancel = None;
        }
        changed
    }
}

/// What was launched, in words (workload, where, label), and whether it is a matrix.
fn describe(launch: &Launch) -> (String, bool) {
    let request = launch.request();
    let place = match launch {
        Launch::Matrix { matrix, .. } => format!(
            "a fresh scratch filesystem per configuration ({})",
            matrix
                .configs()
                .iter()
                .map(lab::MatrixConfig::label)
                .collect::<Vec<_>>()
                .join(" | ")
        ),
        _ => request.target.display().to_string(),
    };
    let label = request.label.as_deref();
    let description = format!(
        "{} on {}{}",
        request.spec.describe(),
        place,
        label.map(|l| format!(", label {l}")).unwrap_or_default()
    );
    (description, matches!(launch, Launch::Matrix { .. }))
}

/// The run thread: its own database connection, the launch, and what the Run tab shows
/// at the end (the experiment, or what went wrong).
fn run_launch(
    db_path: &Path,
    launch: &ValidLaunch,
    events: &Sender<EngineEvent>,
    done: &Sender<Done>,
    cancel: &CancelToken,
) -> Result<Option<i64>, String> {
    let mut store = Store::open(db_path).map_err(|e| crate::names::words(&e))?;
    let note = done.clone();
    store.set_lock_wait_notice(move || {
        let _ = note.send(Done::Note(
            "waiting for the database lock held by another process...".into(),
        ));
    });
    let outcome = lab::launch(&store, launch, events, cancel, |_, r| {
        let _ = done.send(Done::Run(Box::new(r.clone())));
    });
    match outcome.map_err(|e| crate::names::words(&e))? {
        LaunchOutcome::Single(_) => Ok(None),
        LaunchOutcome::Repeat(series) => Ok(Some(series.experiment_id)),
        LaunchOutcome::Series(variants) => Ok(variants.last().map(|v| v.series.experiment_id)),
        LaunchOutcome::Matrix(o) => match (o.stopped, o.problems.first()) {
            (_, Some(problem)) => Err(fsynclab::spec::Worded::worded(
                problem,
                &crate::names::GuiLabels,
            )),
            (Some(why), None) if !cancel.is_cancelled() => Err(format!(
                "the matrix stopped after {} configuration(s): {} (experiment {})",
                o.configs.len(),
                fsynclab::spec::Worded::worded(&why, &crate::names::GuiLabels),
                o.experiment_id
            )),
            _ => Ok(Some(o.experiment_id)),
        },
    }
}

impl Runner {
    /// The launch ended: what the Run tab shows afterwards.
    fn finish(&mut self, end: End) {
        self.live.active = false;
        match end {
            Ok(exp) => {
                self.live.experiment_id = exp;
                let last = self.live.results.last().map(|r| r.status);
                self.live.phase = match last {
                    Some(RunStatus::Finished) => "finished".into(),
                    Some(s) => s.as_str().into(),
                    None => "ended".into(),
                };
            }
            Err(e) => {
                self.live.phase = "failed".into();
                self.live.error = Some(e);
                // A failed start may still have stored a failed run row.
                self.stored_since_refresh += 1;
            }
        }
    }
}

fn apply_event(live: &mut LiveRun, event: EngineEvent) {
    match event {
        EngineEvent::Preparing {
            files,
            bytes_per_file,
        } => {
            live.phase = format!(
                "preparing {files} file(s) of {}",
                fsynclab::spec::format_size(bytes_per_file)
            );
            live.samples.clear();
            live.writes_done = 0;
            live.syncs_done = 0;
            live.flushes_done = None;
            live.started = None;
        }
        EngineEvent::Started {
            run_id,
            expected_writes,
            duration,
            warmup,
            ..
        } => {
            live.phase = "running".into();
            live.run_id = Some(run_id);
            live.expected_writes = expected_writes;
            live.duration = duration;
            live.warmup_ms = warmup.map_or(0, |w| w.as_millis() as u64);
            live.started = Some(Instant::now());
        }
        EngineEvent::Interval(sample) => {
            live.writes_done += sample.writes;
            live.syncs_done += sample.syncs;
            if let Some(f) = sample.device_flushes {
                live.flushes_done = Some(live.flushes_done.unwrap_or(0) + f);
            }
            live.samples.push(sample);
        }
        EngineEvent::RunDirCreated { .. }
        | EngineEvent::CountingFrom { .. }
        | EngineEvent::CountingUntil { .. } => {}
        EngineEvent::Finished { run_id, status } => {
            live.phase = format!("run {}", status.as_str());
            live.stored_runs.push(run_id);
        }
    }
}
