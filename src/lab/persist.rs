//! Streaming a run to the database while it goes: the engine's events pass through a
//! persister thread that forwards each one to the caller and appends interval samples to
//! the store at most every second, so `kill -9` loses at most the last second.
//!
//! The engine never sees the store: the persister sits between the engine's sender and the
//! caller's, with its own connection on the same file (a [`Store`] is not `Sync`). An
//! in-memory store has no second connection and keeps the store-at-end path.

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use std::sync::atomic::Ordering;

use crate::engine::EngineEvent;
use crate::ktrace::LiveKernel;
use crate::metrics::IntervalSample;
use crate::store::{RunProgress, Store};

/// Longest time between two saves of a running run's samples.
pub const SAVE_EVERY: Duration = Duration::from_secs(1);

/// The kernel tracer's commits and flushes per interval, by the interval's `t_ms`, as
/// the persister filled them in (the engine's own samples know nothing of the tracer).
pub(super) type KernelCounts = Vec<(u64, u64, u64)>;

/// Runs `measure` with an event sender whose interval samples are also appended to run
/// `run_id` in `store`'s file; every event is forwarded to `events` in order. With
/// `kernel`, each interval sample gets the tracer's commits and flushes since the previous
/// one (returned too, for the final result).
pub(super) fn streamed<T>(
    store: &Store,
    run_id: i64,
    events: &Sender<EngineEvent>,
    kernel: Option<&LiveKernel>,
    measure: impl FnOnce(&Sender<EngineEvent>) -> T,
) -> (T, KernelCounts) {
    let writer = match store.reopen() {
        Some(Ok(writer)) => writer,
        // In memory, or the second connection failed: the result is still stored at the
        // end, as before streaming existed.
        _ => return (relayed(events, kernel, measure), Vec::new()),
    };
    let (tx, rx) = mpsc::channel::<EngineEvent>();
    std::thread::scope(|scope| {
        let forward = events.clone();
        let persister = std::thread::Builder::new()
            .name("fsynclab-persist".into())
            .spawn_scoped(scope, move || {
                persist(&writer, run_id, &rx, &forward, kernel)
            });
        let outcome = match persister {
            Ok(_) => measure(&tx),
            Err(_) => measure(events),
        };
        // The engine is done: the persister saves what is left and ends.
        drop(tx);
        let counts = match persister {
            Ok(handle) => handle.join().unwrap_or_default(),
            Err(_) => Vec::new(),
        };
        (outcome, counts)
    })
}

/// What the kernel tracer learns from the engine's events: the window the device's counters
/// cover (the settle step's syncfs and a warm-up are left out of both), and that the
/// workers exist (so its scheduler filter can name them).
fn tell_tracer(event: &EngineEvent, live: &LiveKernel) {
    match event {
        EngineEvent::CountingFrom { at_ns } => {
            live.window_start_ns.store(*at_ns, Ordering::Relaxed)
        }
        EngineEvent::CountingUntil { at_ns } => live.window_end_ns.store(*at_ns, Ordering::Relaxed),
        EngineEvent::Started { at_ns, .. } => {
            live.origin_ns.store(*at_ns, Ordering::Relaxed);
            live.workers_started.store(true, Ordering::Relaxed);
        }
        _ => {}
    }
}

/// `measure` with its events passed on to `events` through [`tell_tracer`] (when tracing),
/// without a store.
fn relayed<T>(
    events: &Sender<EngineEvent>,
    kernel: Option<&LiveKernel>,
    measure: impl FnOnce(&Sender<EngineEvent>) -> T,
) -> T {
    let Some(live) = kernel else {
        return measure(events);
    };
    let (tx, rx) = mpsc::channel::<EngineEvent>();
    std::thread::scope(|scope| {
        let forward = events.clone();
        scope.spawn(move || {
            for event in rx {
                tell_tracer(&event, live);
                let _ = forward.send(event);
            }
        });
        let outcome = measure(&tx);
        drop(tx);
        outcome
    })
}

/// The tracer's totals at the previous interval.
struct KernelDeltas<'a> {
    live: &'a LiveKernel,
    commits: u64,
    flushes: u64,
    counts: KernelCounts,
}

impl KernelDeltas<'_> {
    /// Fills `sample` with what the tracer counted since the previous sample.
    fn fill(&mut self, sample: &mut IntervalSample) {
        let commits = self.live.commits.load(Ordering::Relaxed);
        let flushes = self.live.flushes.load(Ordering::Relaxed);
        let (dc, df) = (
            commits.saturating_sub(self.commits),
            flushes.saturating_sub(self.flushes),
        );
        (self.commits, self.flushes) = (commits, flushes);
        sample.kernel_commits = Some(dc);
        sample.kernel_flushes = Some(df);
        self.counts.push((sample.t_ms, dc, df));
    }
}

/// The persister loop: forward, batch, save every [`SAVE_EVERY`] and at the end.
fn persist(
    writer: &Store,
    run_id: i64,
    rx: &mpsc::Receiver<EngineEvent>,
    forward: &Sender<EngineEvent>,
    kernel: Option<&LiveKernel>,
) -> KernelCounts {
    let mut batch = Batch::default();
    let mut last_save = Instant::now();
    let mut deltas = kernel.map(|live| KernelDeltas {
        live,
        commits: 0,
        flushes: 0,
        counts: Vec::new(),
    });
    loop {
        let wait = SAVE_EVERY.saturating_sub(last_save.elapsed());
        match rx.recv_timeout(wait) {
            Ok(mut event) => {
                match &mut event {
                    EngineEvent::Interval(sample) => {
                        if let Some(deltas) = &mut deltas {
                            deltas.fill(sample);
                        }
                        batch.push(sample);
                        // A sample that completes a second of the run is saved at once,
                        // so a kill loses less than the last second.
                        if batch.completes_a_second() {
                            batch.save(writer, run_id);
                            last_save = Instant::now();
                        }
                    }
                    EngineEvent::RunDirCreated { dev, ino } => {
                        // Best effort: without it, clean falls back to the mode check.
                        let _ = writer.set_run_dir_identity(run_id, *dev, *ino);
                    }
                    EngineEvent::Started { .. } => {
                        let _ = writer.set_started(run_id, crate::store::now_ms());
                    }
                    _ => {}
                }
                if let Some(live) = kernel {
                    tell_tracer(&event, live);
                }
                let _ = forward.send(event);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                batch.save(writer, run_id);
                return deltas.map(|d| d.counts).unwrap_or_default();
            }
        }
        if last_save.elapsed() >= SAVE_EVERY {
            batch.save(writer, run_id);
            last_save = Instant::now();
        }
    }
}

/// Samples not yet saved, and the totals so far.
#[derive(Default)]
struct Batch {
    pending: Vec<IntervalSample>,
    /// Index of the first pending sample in the run's interval list.
    first_idx: usize,
    progress: RunProgress,
}

impl Batch {
    fn push(&mut self, sample: &IntervalSample) {
        self.pending.push(sample.clone());
    }

    /// Whether the newest pending sample reaches a whole second later than the last save.
    fn completes_a_second(&self) -> bool {
        self.pending
            .last()
            .is_some_and(|s| s.t_ms / 1000 > self.progress.t_ms / 1000)
    }

    /// Appends the pending samples in one transaction. On failure (another process holds
    /// the lock past the short timeout) they stay pending for the next try: nothing is
    /// dropped while this process lives.
    fn save(&mut self, writer: &Store, run_id: i64) {
        if self.pending.is_empty() {
            return;
        }
        let mut progress = self.progress.clone();
        for sample in &self.pending {
            progress.add(sample);
        }
        progress.at_ms = crate::store::now_ms();
        if writer
            .append_intervals(run_id, self.first_idx, &self.pending, &progress)
            .is_ok()
        {
            self.first_idx += self.pending.len();
            self.pending.clear();
            self.progress = progress;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t_ms: u64) -> IntervalSample {
        IntervalSample {
            t_ms,
            dur_ms: 100,
            writes: 10,
            syncs: 5,
            bytes: 40960,
            ..Default::default()
        }
    }

    #[test]
    fn samples_are_saved_within_a_second_and_forwarded_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.sqlite");
        let store = Store::open(&path).unwrap();
        let new = crate::store::NewRun::new(Default::default(), Default::default(), dir.path());
        let id = store.begin_run(&new).unwrap();
        let (events, seen) = mpsc::channel();
        let reader = Store::open_read_only(&path).unwrap();
        let (saved_midway, _) = streamed(&store, id, &events, None, |tx| {
            for t in 1..=5 {
                tx.send(EngineEvent::Interval(sample(t * 100))).unwrap();
            }
            // Within a second and a bit, the samples are in the file while the run goes.
            std::thread::sleep(Duration::from_millis(1300));
            let midway = reader.run_progress(id).unwrap();
            for t in 6..=8 {
                tx.send(EngineEvent::Interval(sample(t * 100))).unwrap();
            }
            midway
        });
        let midway = saved_midway.expect("progress saved while running");
        assert_eq!((midway.writes, midway.syncs, midway.t_ms), (50, 25, 500));
        // After the run, the rest was saved too, under the following indexes.
        let end = reader.run_progress(id).unwrap().unwrap();
        assert_eq!((end.writes, end.t_ms), (80, 800));
        let forwarded: Vec<u64> = seen
            .try_iter()
            .map(|e| match e {
                EngineEvent::Interval(s) => s.t_ms,
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(forwarded, (1..=8).map(|t| t * 100).collect::<Vec<_>>());
        let stored = reader.load_intervals(id).unwrap();
        assert_eq!(stored.len(), 8);
        assert_eq!(stored[7].t_ms, 800);
    }
}
