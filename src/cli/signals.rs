//! SIGINT, SIGTERM and SIGHUP (Ctrl-C, `kill`, `timeout`, an SSH disconnect) all stop a
//! run the same way: the run ends after the calls in flight, is stored as `cancelled` with
//! its data, its directory is removed, and the command exits with 128 + the signal (130,
//! 143, 129). A second signal exits at once (the run then stays `running` until the next
//! open marks it `interrupted`, and `fsynclab clean` removes its directory).

use std::sync::atomic::{AtomicI32, Ordering};

use nix::sys::signal::{SigSet, Signal};

use crate::engine::CancelToken;

/// The first signal received (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// The signals handled.
const HANDLED: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// Blocks the signals in this thread (and so in every thread it starts afterwards: call it
/// before the run's threads exist) and starts one thread that waits for them with
/// `sigwait`: the first cancels `cancel`, a second exits at once with 128 + the signal. No
/// handler runs inside a measuring thread, and nothing polls while the run measures.
pub fn install(cancel: CancelToken) {
    let mut set = SigSet::empty();
    for signal in HANDLED {
        set.add(signal);
    }
    if set.thread_block().is_err() {
        return; // the default actions stay: a signal still ends the process
    }
    let spawned = std::thread::Builder::new()
        .name("fsynclab-signals".into())
        .spawn(move || {
            loop {
                let Ok(signal) = set.wait() else { continue };
                let number = signal as i32;
                if RECEIVED
                    .compare_exchange(0, number, Ordering::SeqCst, Ordering::SeqCst)
                    .is_err()
                {
                    // The second signal: leave now; the next command finds the run
                    // interrupted with its streamed samples and removes its directory.
                    // SAFETY: _exit ends the process without running anything else.
                    unsafe { libc::_exit(128 + number) };
                }
                cancel.cancel();
            }
        });
    if spawned.is_err() {
        // No thread to receive them: unblock, so the signals keep their default action.
        let _ = set.thread_unblock();
    }
}

/// The exit code of a cancelled command: 128 + the signal that stopped it, or 130 (Ctrl-C's)
/// when no signal was seen.
pub fn cancelled_exit_code() -> u8 {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => super::EXIT_CANCELLED,
        signal => u8::try_from(128 + signal).unwrap_or(super::EXIT_CANCELLED),
    }
}
