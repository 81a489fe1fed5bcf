//! What every worker shares, whatever its kind: the live counters the sampler reads, the
//! run-wide stop flag, request budget and deadline, the worker's output, and the harness
//! ([`run_worker`]) that owns the prologue and epilogue of every worker (open before the
//! gate, arrive or abort, start, deadline, stop on error, end, per-thread totals), so a
//! kind keeps only its hot loop.
//!
//! This module sits below the kinds: it imports only the backend, the gate and the
//! metrics, never a kind or the dispatcher.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

use super::api::{CancelToken, EngineError};
use super::file::{Backend, Clock};
use super::gate::StartGate;
use super::scratch::{IoSite, io_failure};
use crate::metrics::{LatencyHistogram, LiveBuckets, OpStats, PhaseStats, ThreadStats, bump};
use crate::spec::StopRule;

/// Counters a worker publishes for the interval sampler: one writer, relaxed atomics,
/// padded to its own cache lines so workers never share one.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct Live {
    pub writes: AtomicU64,
    /// Bytes, for kinds whose writes vary in size (see `kinds::bytes_per_write`).
    pub bytes: AtomicU64,
    pub syncs: AtomicU64,
    pub write_buckets: LiveBuckets,
    pub sync_buckets: LiveBuckets,
    /// io_uring workers: requests in flight integrated over time (request·ns on the
    /// worker's clock), for the sampler's mean depth per interval.
    pub inflight_area: AtomicU64,
}

/// A value alone on its cache lines (no false sharing with its neighbours).
#[repr(align(128))]
pub(crate) struct Padded<T>(pub T);

/// State shared by all workers of a run.
pub(crate) struct Shared {
    /// Set on cancel or when any worker fails: every worker stops after its current call.
    pub stop: Padded<AtomicBool>,
    /// Requests left under [`StopRule::TotalRequests`] (written by every worker).
    pub remaining: Padded<AtomicI64>,
    /// Next event of the shared sysbench-mode sequence (see `sysbench::event_of`).
    pub ticket: Padded<AtomicU64>,
    /// The run's one deadline under [`StopRule::Duration`], on the workers' clock, set
    /// before the start gate opens (see [`Shared::set_deadline`]); `u64::MAX` otherwise.
    pub deadline: Padded<AtomicU64>,
    /// The end of the warm-up on the workers' clock (0: no warm-up), set with the deadline.
    pub warm_end: Padded<AtomicU64>,
    /// Next event of the sysbench-mode sequence during the warm-up: warm-up events are
    /// drawn apart, so the measured part is the same event sequence with or without one.
    pub warm_ticket: Padded<AtomicU64>,
}

impl Shared {
    /// State for a run under `rule`.
    pub fn new(rule: StopRule) -> Self {
        Shared {
            stop: Padded(AtomicBool::new(false)),
            remaining: Padded(AtomicI64::new(match rule {
                StopRule::TotalRequests(n) => i64::try_from(n).unwrap_or(i64::MAX),
                _ => 0,
            })),
            ticket: Padded(AtomicU64::new(0)),
            deadline: Padded(AtomicU64::new(u64::MAX)),
            warm_end: Padded(AtomicU64::new(0)),
            warm_ticket: Padded(AtomicU64::new(0)),
        }
    }

    /// Sets the run's one deadline under a duration: `gate_ns` (the workers' clock, read
    /// by the coordinator as it opens the start gate) plus the warm-up (`warmup_ns`, 0 for
    /// none) plus the duration. Every worker reads it after the gate, so workers scheduled
    /// late (many threads on few cores) run shorter instead of each running the full
    /// duration from its own start. The warm-up ends at `gate_ns + warmup_ns` for all.
    pub fn set_deadline(&self, rule: StopRule, gate_ns: u64, warmup_ns: u64) {
        let measured_from = gate_ns.saturating_add(warmup_ns);
        if warmup_ns > 0 {
            self.warm_end.0.store(measured_from, Ordering::Release);
        }
        if let StopRule::Duration(d) = rule {
            let deadline =
                measured_from.saturating_add(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
            self.deadline.0.store(deadline, Ordering::Release);
        }
    }

    /// The run's deadline (`u64::MAX` without a duration); read once per worker.
    pub fn deadline(&self) -> u64 {
        self.deadline.0.load(Ordering::Acquire)
    }
}

/// What one worker measured.
pub(crate) struct WorkerOutput {
    pub stats: ThreadStats,
    pub write_lat: LatencyHistogram,
    pub sync_lat: LatencyHistogram,
    /// Durable-operation latency (`spec::durable_op`; grouplog's is its commit operation).
    pub durable_lat: LatencyHistogram,
    /// Whether it passed the start gate and ran (start/end are meaningful only then).
    pub started: bool,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Opening a file failed (the run never started): a usage-type error.
    pub open_error: Option<super::failure::IoFailure>,
    /// An I/O error during the run.
    pub error: Option<crate::metrics::RunFailure>,
    /// Per-operation latency (kinds beyond fileio).
    pub ops: Vec<OpStats>,
    /// Timed phases (smallfiles).
    pub phases: Vec<PhaseSpan>,
    /// Syncs counted in the run's total but not in `stats` (sysbench mode's end fsyncs,
    /// which are not events).
    pub extra_syncs: u64,
}

/// One worker's part of a timed phase.
pub(crate) struct PhaseSpan {
    pub phase: &'static str,
    pub items: u64,
    pub start_ns: u64,
    pub end_ns: u64,
}

impl WorkerOutput {
    /// An output with nothing measured yet, for worker `thread`.
    pub fn new(thread: u32) -> Self {
        Self {
            stats: ThreadStats {
                thread,
                ..Default::default()
            },
            write_lat: LatencyHistogram::new(),
            sync_lat: LatencyHistogram::new(),
            durable_lat: LatencyHistogram::new(),
            started: false,
            start_ns: 0,
            end_ns: 0,
            open_error: None,
            error: None,
            ops: Vec::new(),
            phases: Vec::new(),
            extra_syncs: 0,
        }
    }
}

/// Records one timed sync: in the worker's histogram and in its live counters.
#[inline(always)]
pub(crate) fn record_sync(hist: &mut LatencyHistogram, live: &Live, sync_ns: u64) {
    hist.record(sync_ns);
    live.sync_buckets.record(sync_ns);
    bump(&live.syncs, 1);
}

/// Why preparation stopped.
pub(crate) enum PrepareStop {
    /// The user cancelled while files were being prepared.
    Cancelled,
    /// Preparation failed.
    Error(EngineError),
}

impl PrepareStop {
    /// Why preparation stopped when `op` on `site` failed with `e`: the user's cancel (a
    /// long fill interrupted by it fails too), else the I/O failure.
    pub(crate) fn after_io(
        site: IoSite<'_>,
        op: &str,
        e: &std::io::Error,
        cancel: &CancelToken,
    ) -> Self {
        if cancel.is_cancelled() {
            PrepareStop::Cancelled
        } else {
            PrepareStop::Error(EngineError::Prepare(io_failure(site, op, None, e)))
        }
    }
}

/// What a worker gets from the coordinator besides the backend, the spec and its kind's
/// plan.
pub(crate) struct Worker<'a> {
    /// Index of the worker (0-based).
    pub thread: u32,
    /// Run-wide state.
    pub shared: &'a Shared,
    /// This worker's live counters.
    pub live: &'a Live,
    /// The start gate.
    pub gate: &'a StartGate,
    /// Set once the worker has reached the gate, so the coordinator's guard knows
    /// whether to count it.
    pub arrived: &'a mut bool,
    /// Allocate the write and sync histograms whole before the gate ([`super::kind::Kind::DENSE_LATENCY`]).
    pub dense_latency: bool,
    /// Whether the worker records durable-operation latencies itself (not grouplog, whose
    /// durable latency is its commit operation): its histogram is then allocated whole too.
    pub records_durable: bool,
    /// A crash test's acknowledgements, when the run is one.
    pub acks: Option<&'a super::api::AckSink>,
}

/// Per-thread totals a kind's loop returns (the harness turns them into
/// [`ThreadStats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Counted writes.
    pub writes: u64,
    /// Counted syncs.
    pub syncs: u64,
    /// Application bytes written.
    pub bytes: u64,
    /// Time spent inside timed calls.
    pub busy_ns: u64,
}

/// What a kind's loop works with after the gate opened.
pub(crate) struct Timed<'a, C> {
    /// The worker's clock.
    pub clock: C,
    /// The output being filled (histograms, error, ops, phases).
    pub out: WorkerOutput,
    /// Run-wide state (stop flag, request budget, sysbench ticket).
    pub shared: &'a Shared,
    /// This worker's live counters.
    pub live: &'a Live,
    /// When the worker started, on `clock`.
    pub start_ns: u64,
    /// The run's deadline on `clock` (`u64::MAX` without a duration).
    pub deadline_ns: u64,
    /// The end of the warm-up on `clock` (0: no warm-up). A kind's loop calls
    /// [`end_warmup`] the first time its clock passes it; `start_ns` then moves there.
    pub warm_end_ns: u64,
    /// A crash test's acknowledgements, when the run is one.
    pub acks: Option<&'a super::api::AckSink>,
}

/// Ends a worker's warm-up: forgets what `out` and `counts` recorded so far (histograms,
/// operations, counts; no allocation), so the figures start here. The live counters are
/// left alone: the timeline keeps the warm-up, flagged.
pub(crate) fn end_warmup(out: &mut WorkerOutput, counts: &mut Counts) {
    out.write_lat.clear();
    out.sync_lat.clear();
    out.durable_lat.clear();
    for op in &mut out.ops {
        op.clear();
    }
    *counts = Counts::default();
}

impl<C> Timed<'_, C> {
    /// Whether the run asked every worker to stop (cancel, or another worker failed).
    #[inline(always)]
    pub fn stopped(&self) -> bool {
        self.shared.stop.0.load(Ordering::Relaxed)
    }

    /// Whether a worker whose clock reads `now` must start no other request: the run
    /// stopped, its deadline passed, or (`counted`: a request-count stop rule) the run's
    /// requests are spent. Takes one request from the run's count when it is not.
    #[inline(always)]
    pub fn request_denied(&self, now: u64, counted: bool) -> bool {
        self.stopped()
            || now >= self.deadline_ns
            || (counted && self.shared.remaining.0.fetch_sub(1, Ordering::Relaxed) <= 0)
    }
}

/// Runs one worker: `open` (before the gate; an error is an open error that aborts the
/// run), arrive at the gate, then — if the gate opens — `body`, the kind's hot loop, on
/// the worker's clock. The clock is read once before `body` (start) and once after
/// (end); an error `body` leaves in `out.error` stops the other workers.
pub(crate) fn run_worker<B: Backend, S>(
    backend: &B,
    w: Worker<'_>,
    open: impl FnOnce() -> Result<S, super::failure::IoFailure>,
    body: impl FnOnce(&mut S, &mut Timed<'_, B::Clock>) -> Counts,
) -> WorkerOutput {
    let clock = backend.clock(w.thread);
    let mut out = WorkerOutput::new(w.thread);
    if w.dense_latency {
        out.write_lat = LatencyHistogram::preallocated();
        out.sync_lat = LatencyHistogram::preallocated();
        if w.records_durable {
            out.durable_lat = LatencyHistogram::preallocated();
        }
    }
    let opened = open();
    if let Err(message) = &opened {
        out.open_error = Some(message.clone());
        w.shared.stop.0.store(true, Ordering::Relaxed);
    }
    *w.arrived = true;
    if !w.gate.arrive_and_wait() {
        return out;
    }
    let Ok(mut state) = opened else { return out };

    let start_ns = clock.now_ns();
    out.started = true;
    let mut timed = Timed {
        clock,
        out,
        shared: w.shared,
        live: w.live,
        start_ns,
        deadline_ns: w.shared.deadline(),
        warm_end_ns: w.shared.warm_end.0.load(Ordering::Acquire),
        acks: w.acks,
    };
    let counts = body(&mut state, &mut timed);
    // After a warm-up the worker's figures start where it ended.
    let start_ns = timed.start_ns;
    let Timed { clock, mut out, .. } = timed;
    if out.error.is_some() {
        w.shared.stop.0.store(true, Ordering::Relaxed);
    }
    out.start_ns = start_ns;
    out.end_ns = clock.now_ns();
    out.stats = ThreadStats {
        thread: w.thread,
        writes: counts.writes,
        syncs: counts.syncs,
        bytes: counts.bytes,
        busy_ns: counts.busy_ns,
        wall_ns: out.end_ns.saturating_sub(start_ns),
    };
    drop(state);
    out
}

/// Merges the workers' phase spans by name: items add up, the wall time runs from the
/// earliest start to the latest end.
pub(crate) fn merge_phases(outs: &[WorkerOutput]) -> Vec<PhaseStats> {
    let mut merged: Vec<(PhaseStats, u64, u64)> = Vec::new();
    for span in outs.iter().filter(|o| o.started).flat_map(|o| &o.phases) {
        match merged.iter_mut().find(|(p, _, _)| p.phase == span.phase) {
            Some((p, start, end)) => {
                p.items += span.items;
                *start = (*start).min(span.start_ns);
                *end = (*end).max(span.end_ns);
            }
            None => merged.push((
                PhaseStats {
                    phase: span.phase.to_string(),
                    items: span.items,
                    wall_ns: 0,
                },
                span.start_ns,
                span.end_ns,
            )),
        }
    }
    merged
        .into_iter()
        .map(|(mut p, start, end)| {
            p.wall_ns = end.saturating_sub(start);
            p
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::FakeBackend;

    /// The histograms a worker holds when it reaches the gate (the run is aborted there).
    fn histogram_bytes_at_the_gate(dense_latency: bool) -> (usize, usize) {
        let backend = FakeBackend::new(vec![1_000], vec![1_000]);
        let (shared, live, gate) = (
            Shared::new(StopRule::TotalRequests(1)),
            Live::default(),
            StartGate::new(),
        );
        std::thread::scope(|scope| {
            let worker = scope.spawn(|| {
                let mut arrived = false;
                let w = Worker {
                    thread: 0,
                    shared: &shared,
                    live: &live,
                    gate: &gate,
                    arrived: &mut arrived,
                    dense_latency,
                    records_durable: false,
                    acks: None,
                };
                run_worker(&backend, w, || Ok(()), |_, _| Counts::default())
            });
            gate.wait_for(1);
            gate.abort();
            let out = worker.join().unwrap();
            assert!(!out.started);
            (out.write_lat.heap_bytes(), out.sync_lat.heap_bytes())
        })
    }

    #[test]
    fn dense_kinds_allocate_their_histograms_before_the_gate() {
        let whole = LatencyHistogram::preallocated().heap_bytes();
        assert!(whole > 200 << 10, "{whole}");
        assert_eq!(histogram_bytes_at_the_gate(true), (whole, whole));
        assert_eq!(histogram_bytes_at_the_gate(false), (0, 0));
    }
}
