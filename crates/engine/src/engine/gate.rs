//! The start gate: workers open their files, arrive, and wait; the coordinator starts the
//! clock only when every worker has arrived, or aborts the run. Unlike `std::sync::Barrier`
//! it cannot hang when a worker dies or a thread fails to spawn: a worker that exits
//! without arriving still counts (through [`ArrivalGuard`]), and the coordinator can abort.

use std::sync::{Condvar, Mutex, MutexGuard};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Waiting,
    Open,
    Aborted,
}

/// See the module documentation.
pub(super) struct StartGate {
    inner: Mutex<(usize, State)>,
    changed: Condvar,
}

impl StartGate {
    pub fn new() -> Self {
        Self {
            inner: Mutex::new((0, State::Waiting)),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, (usize, State)> {
        // A poisoned gate only means a worker panicked while holding it; the state is a
        // counter and a flag, still meaningful.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A worker is ready; blocks until the gate opens (true) or is aborted (false).
    pub fn arrive_and_wait(&self) -> bool {
        let mut g = self.lock();
        g.0 += 1;
        self.changed.notify_all();
        while g.1 == State::Waiting {
            g = self.changed.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        g.1 == State::Open
    }

    /// A worker exits without arriving (panic before its start).
    fn arrive_without_waiting(&self) {
        let mut g = self.lock();
        g.0 += 1;
        self.changed.notify_all();
    }

    /// Blocks until `workers` have arrived.
    pub fn wait_for(&self, workers: usize) {
        let mut g = self.lock();
        while g.0 < workers {
            g = self.changed.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Lets every worker start.
    pub fn open(&self) {
        self.set(State::Open);
    }

    /// Sends every waiting and future worker home without running.
    pub fn abort(&self) {
        self.set(State::Aborted);
    }

    fn set(&self, state: State) {
        let mut g = self.lock();
        if g.1 == State::Waiting {
            g.1 = state;
        }
        self.changed.notify_all();
    }
}

/// Held by a worker thread: on drop (normal exit or panic) it counts the worker as
/// arrived if it never did, and reports the worker done to the coordinator.
pub(super) struct ArrivalGuard<'a> {
    pub gate: &'a StartGate,
    pub arrived: bool,
    pub done: std::sync::mpsc::Sender<()>,
}

impl Drop for ArrivalGuard<'_> {
    fn drop(&mut self) {
        if !self.arrived {
            self.gate.arrive_without_waiting();
        }
        let _ = self.done.send(());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_worker_that_dies_before_arriving_does_not_block_the_start() {
        let gate = StartGate::new();
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|s| {
            let dies = s.spawn(|| {
                let _guard = ArrivalGuard {
                    gate: &gate,
                    arrived: false,
                    done: tx.clone(),
                };
                panic!("worker dies (expected in this test)");
            });
            let ok = s.spawn(|| {
                let mut guard = ArrivalGuard {
                    gate: &gate,
                    arrived: false,
                    done: tx.clone(),
                };
                guard.arrived = true;
                gate.arrive_and_wait()
            });
            gate.wait_for(2);
            gate.abort();
            assert!(!ok.join().unwrap(), "aborted gate sends workers home");
            assert!(dies.join().is_err());
        });
        assert_eq!(rx.try_iter().count(), 2, "both reported done");
    }
}
