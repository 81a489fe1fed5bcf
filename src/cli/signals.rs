//! SIGINT, SIGTERM and SIGHUP (Ctrl-C, `kill`, `timeout`, an SSH disconnect) all stop a
//! run the same way: the run ends after the calls in flight, is stored as `cancelled` with
//! its data, its directory is removed, and the command exits with 128 + the signal (130,
//! 143, 129). A second signal exits at once (the run then stays `running` until the next
//! open marks it `interrupted`, and `fsynclab clean` removes its directory).

use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

use crate::engine::CancelToken;

/// The first signal received (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// The signals handled.
const HANDLED: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// Async-signal-safe: one atomic exchange, and `_exit` on the second signal.
extern "C" fn on_signal(signal: libc::c_int) {
    if RECEIVED
        .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        // SAFETY: _exit is async-signal-safe; nothing else runs in the handler.
        unsafe { libc::_exit(128 + signal) };
    }
}

/// Installs the handlers; the first signal cancels `cancel` (a watcher thread turns the
/// atomic the handler set into the token's flag).
pub fn install(cancel: CancelToken) {
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for signal in HANDLED {
        // SAFETY: the handler only touches an atomic and calls _exit (async-signal-safe).
        let _ = unsafe { sigaction(signal, &action) };
    }
    let _ = std::thread::Builder::new()
        .name("fsynclab-signals".into())
        .spawn(move || {
            while RECEIVED.load(Ordering::SeqCst) == 0 {
                std::thread::sleep(Duration::from_millis(20));
            }
            cancel.cancel();
        });
}

/// The exit code of a cancelled command: 128 + the signal that stopped it, or 130 (Ctrl-C's)
/// when no signal was seen.
pub fn cancelled_exit_code() -> u8 {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => super::EXIT_CANCELLED,
        signal => u8::try_from(128 + signal).unwrap_or(super::EXIT_CANCELLED),
    }
}
