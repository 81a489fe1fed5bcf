//! Counters that tests read to prove how often a check runs (test builds only): each is
//! per thread, so tests running in parallel do not see each other's counts.

use std::cell::Cell;

thread_local! {
    /// Calls of [`crate::spec::WorkloadSpec::validate`] on this thread.
    pub static VALIDATIONS: Cell<u32> = const { Cell::new(0) };
    /// Calls of [`crate::engine::check_target`] (the target's canonicalisation) on this
    /// thread.
    pub static TARGET_CHECKS: Cell<u32> = const { Cell::new(0) };
}

/// Adds one to `counter`.
pub fn bump(counter: &'static std::thread::LocalKey<Cell<u32>>) {
    counter.with(|n| n.set(n.get() + 1));
}

/// Reads `counter` and sets it back to zero.
pub fn take(counter: &'static std::thread::LocalKey<Cell<u32>>) -> u32 {
    counter.with(|n| n.replace(0))
}
