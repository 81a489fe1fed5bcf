//! The pieces of the smallfiles worker that need no run: the phase barrier, the file name
//! rewritten in place and how files are opened.

use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::engine::file::OpenAt;
use crate::spec::FileSync;

/// Makes workers wait for each other between phases, so each phase is timed on its own.
/// It never hangs a run: once `stop` is set (cancel, an error, a panicking worker), every
/// waiter returns false and skips the phases left.
pub(super) struct PhaseBarrier {
    parties: usize,
    /// (arrived in this generation, generation).
    state: Mutex<(usize, u64)>,
    changed: Condvar,
}

impl PhaseBarrier {
    pub(super) fn new(parties: usize) -> Self {
        Self {
            parties,
            state: Mutex::new((0, 0)),
            changed: Condvar::new(),
        }
    }

    /// Arrives and waits for the others; false when the run is stopping.
    pub(super) fn wait(&self, stop: &AtomicBool) -> bool {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let generation = g.1;
        g.0 += 1;
        if g.0 >= self.parties {
            g.0 = 0;
            g.1 += 1;
            self.changed.notify_all();
            return !stop.load(Ordering::Relaxed);
        }
        loop {
            if g.1 != generation {
                return !stop.load(Ordering::Relaxed);
            }
            if stop.load(Ordering::Relaxed) {
                return false;
            }
            // Stop is an atomic set without this lock: poll it now and then.
            g = self
                .changed
                .wait_timeout(g, Duration::from_millis(20))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// Sets `stop` if the worker unwinds, so the others do not wait for it at a barrier.
pub(super) struct StopOnPanic<'a>(pub(super) &'a AtomicBool);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// Digits in a file name: enough for the largest `files_per_thread` (10^8); the core's, so
/// a crash test's checker finds each file by the same name.
pub(super) use crate::spec::kinds::smallfiles::NAME_DIGITS;

/// `f0000000042\0`: a file name rewritten in place for each index.
pub(super) struct FileName {
    bytes: [u8; NAME_DIGITS + 2],
}

impl FileName {
    pub(super) fn new() -> Self {
        let mut bytes = [b'0'; NAME_DIGITS + 2];
        bytes[0] = crate::spec::kinds::smallfiles::NAME_PREFIX.as_bytes()[0];
        bytes[NAME_DIGITS + 1] = 0;
        Self { bytes }
    }

    /// Points the name at file `index` (zero-padded decimal, no allocation).
    #[inline(always)]
    pub(super) fn set(&mut self, mut index: u64) {
        for slot in self.bytes[1..=NAME_DIGITS].iter_mut().rev() {
            *slot = b'0' + (index % 10) as u8;
            index /= 10;
        }
    }

    #[inline(always)]
    pub(super) fn as_cstr(&self) -> &CStr {
        // The buffer always ends in its own NUL and holds no other.
        CStr::from_bytes_with_nul(&self.bytes).unwrap_or(c"")
    }

    /// The name as text (error messages only).
    pub(super) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..=NAME_DIGITS]).unwrap_or("?")
    }
}

/// How a new small file is opened: created, write only, `O_SYNC` for `o_sync`.
pub(super) fn open_how(sync: FileSync) -> OpenAt {
    OpenAt {
        write_only: true,
        create: true,
        o_sync: sync == FileSync::OSync,
    }
}
