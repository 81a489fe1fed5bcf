//! A scripted fake [`Ring`]: every request "takes" the fake backend's scripted write or
//! sync latency on the worker's fake clock, all requests in flight run side by side, a
//! linked request starts when the one before it completes (and is cancelled with
//! `-ECANCELED` when that one fails or comes back short, as io_uring does), and chosen
//! requests return scripted results (short writes, `-EAGAIN`, `-EINTR`, `-EIO`). Every
//! queued request and every completion is logged, so tests can check ordering and depth.

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::buf::AlignedBuf;
use super::ring::{Ring, RingOp, RingSetup};

/// What a fake ring saw, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FakeRingEvent {
    /// A request was queued (`n`: its number on this ring, from 0).
    Queued {
        /// Worker thread.
        thread: u32,
        /// Request number on the ring.
        n: u64,
        /// The request.
        op: RingOp,
        /// Linked to the next one.
        link: bool,
    },
    /// Requests were submitted; `in_flight` were then in the kernel's hands.
    Submitted {
        /// Worker thread.
        thread: u32,
        /// Requests in flight after the submission.
        in_flight: usize,
    },
    /// A request completed with `result` at `at_ns` on the worker's clock.
    Completed {
        /// Worker thread.
        thread: u32,
        /// The request's `user_data`.
        user_data: u64,
        /// Bytes or negative errno.
        result: i32,
        /// Completion time.
        at_ns: u64,
    },
}

struct Running {
    done_at: u64,
    user_data: u64,
    result: i32,
}

/// The fake ring of one worker (see the module comment).
pub struct FakeRing {
    pub(super) thread: u32,
    pub(super) clock: Arc<AtomicU64>,
    pub(super) write_ns: Vec<u64>,
    pub(super) sync_ns: Vec<u64>,
    /// Request number → result instead of success.
    pub(super) results: Vec<(u64, i32)>,
    pub(super) log: Arc<Mutex<Vec<FakeRingEvent>>>,
    bufs: Vec<AlignedBuf>,
    queued: Vec<(RingOp, u64, bool)>,
    running: Vec<Running>,
    ready: VecDeque<(u64, i32)>,
    requests: u64,
    writes: usize,
    syncs: usize,
}

impl FakeRing {
    /// A ring for `thread` on `clock` with the buffers `setup` asks for.
    pub(super) fn new(
        thread: u32,
        clock: Arc<AtomicU64>,
        setup: RingSetup,
        latencies: (Vec<u64>, Vec<u64>),
        results: Vec<(u64, i32)>,
        log: Arc<Mutex<Vec<FakeRingEvent>>>,
    ) -> Self {
        Self {
            thread,
            clock,
            write_ns: latencies.0,
            sync_ns: latencies.1,
            results,
            log,
            bufs: (0..setup.depth)
                .map(|s| AlignedBuf::new(setup.block_size, setup.seed ^ u64::from(s)))
                .collect(),
            queued: Vec::new(),
            running: Vec::new(),
            ready: VecDeque::new(),
            requests: 0,
            writes: 0,
            syncs: 0,
        }
    }

    fn record(&self, event: FakeRingEvent) {
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(event);
    }

    fn latency(&mut self, op: RingOp) -> u64 {
        let (list, i) = match op {
            RingOp::Write { .. } => {
                self.writes += 1;
                (&self.write_ns, self.writes - 1)
            }
            RingOp::Sync { .. } => {
                self.syncs += 1;
                (&self.sync_ns, self.syncs - 1)
            }
        };
        list.get(i % list.len().max(1)).copied().unwrap_or(1)
    }
}

impl Ring for FakeRing {
    fn queue(&mut self, op: RingOp, user_data: u64, link: bool) -> io::Result<()> {
        self.record(FakeRingEvent::Queued {
            thread: self.thread,
            n: self.requests + self.queued.len() as u64,
            op,
            link,
        });
        self.queued.push((op, user_data, link));
        Ok(())
    }

    fn submit(&mut self, wait_for: u32) -> io::Result<()> {
        let now = self.clock.load(Ordering::Relaxed);
        // (completion time, failed) of the previous request when it linked to this one.
        let mut chain: Option<(u64, bool)> = None;
        for (op, user_data, link) in std::mem::take(&mut self.queued) {
            let n = self.requests;
            self.requests += 1;
            let full = match op {
                RingOp::Write { len, .. } => len as i32,
                RingOp::Sync { .. } => 0,
            };
            let (done_at, result) = match chain {
                Some((at, true)) => (at, -libc::ECANCELED),
                prev => {
                    let start = prev.map_or(now, |(at, _)| at);
                    let result = self
                        .results
                        .iter()
                        .find(|(k, _)| *k == n)
                        .map_or(full, |(_, r)| *r);
                    (start + self.latency(op), result)
                }
            };
            chain = link.then_some((done_at, result != full));
            self.running.push(Running {
                done_at,
                user_data,
                result,
            });
        }
        self.record(FakeRingEvent::Submitted {
            thread: self.thread,
            in_flight: self.running.len() + self.ready.len(),
        });
        let mut now = now;
        loop {
            self.running.sort_by_key(|r| std::cmp::Reverse(r.done_at));
            while self.running.last().is_some_and(|r| r.done_at <= now) {
                let r = self.running.pop().expect("checked");
                self.record(FakeRingEvent::Completed {
                    thread: self.thread,
                    user_data: r.user_data,
                    result: r.result,
                    at_ns: r.done_at,
                });
                self.ready.push_back((r.user_data, r.result));
            }
            if self.ready.len() >= wait_for as usize {
                break;
            }
            match self.running.last() {
                Some(r) => now = r.done_at,
                None => {
                    return Err(io::Error::other(
                        "fake ring: waiting with nothing in flight",
                    ));
                }
            }
        }
        self.clock.fetch_max(now, Ordering::Relaxed);
        Ok(())
    }

    fn next_completion(&mut self) -> Option<(u64, i32)> {
        self.ready.pop_front()
    }

    fn buffer(&mut self, slot: u32) -> &mut AlignedBuf {
        &mut self.bufs[slot as usize]
    }
}
