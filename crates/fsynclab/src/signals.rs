//! SIGINT, SIGTERM and SIGHUP (Ctrl-C, `kill`, `timeout`, an SSH disconnect) all stop a
//! run the same way: the run ends after the calls in flight, is stored as `cancelled` with
//! its data, its directory is removed, and the command exits with 128 + the signal (130,
//! 143, 129). A second signal exits at once (the run then stays `running` until the next
//! open marks it `interrupted`, and `fsynclab clean` removes its directory).
//!
//! The same signal sent again by the same process within half a second is the same request,
//! not a second one: `timeout` sends its signal to the child and then to the child's whole
//! process group (and systemd to the main process and then to its cgroup), so one `timeout -s
//! INT` delivers SIGINT twice; counting that as a second signal lost the run's data.

use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{SigSet, Signal};

use fsynclab::engine::CancelToken;

/// The first signal received (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// The signals handled.
const HANDLED: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// How long a repeat of the first signal from the same sender counts as the same request.
const REPEAT_WINDOW: Duration = Duration::from_millis(500);

/// One signal as `sigwaitinfo` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Received {
    /// The signal number.
    number: i32,
    /// The sending process (0 when the kernel sent it, e.g. Ctrl-C at a terminal).
    sender: i32,
    /// When it was received.
    at: Instant,
}

/// Whether `next` is the same request as `first` delivered again: the same signal from the
/// same process (not the kernel) within [`REPEAT_WINDOW`].
fn is_repeat(first: Received, next: Received) -> bool {
    next.number == first.number
        && first.sender != 0
        && next.sender == first.sender
        && next.at.saturating_duration_since(first.at) < REPEAT_WINDOW
}

/// Waits for one of the signals in `set`.
fn wait_for(set: &SigSet) -> Option<Received> {
    // SAFETY: siginfo_t is plain data that sigwaitinfo fills in; an all-zero value is valid.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid sigset_t and `info` a valid out-pointer for the call.
    let number = unsafe { libc::sigwaitinfo(set.as_ref(), &mut info) };
    if number < 0 {
        return None;
    }
    // SAFETY: for SIGINT/SIGTERM/SIGHUP the kernel fills the kill fields (si_pid).
    let sender = unsafe { info.si_pid() };
    Some(Received {
        number,
        sender,
        at: Instant::now(),
    })
}

/// Blocks the signals in this thread (and so in every thread it starts afterwards: call it
/// before the run's threads exist) and starts one thread that waits for them with
/// `sigwaitinfo`: the first cancels `cancel`, a second exits at once with 128 + the signal
/// (a repeat of the first by the same sender within half a second is not a second). No
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
            let mut first: Option<Received> = None;
            loop {
                let Some(signal) = wait_for(&set) else {
                    continue;
                };
                match first {
                    None => {
                        first = Some(signal);
                        RECEIVED.store(signal.number, Ordering::SeqCst);
                        cancel.cancel();
                    }
                    Some(first) if is_repeat(first, signal) => {}
                    Some(_) => {
                        // The second signal: leave now; the next command finds the run
                        // interrupted with its streamed samples and removes its directory.
                        // SAFETY: _exit ends the process without running anything else.
                        unsafe { libc::_exit(128 + signal.number) };
                    }
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn received(number: i32, sender: i32, after_ms: u64, base: Instant) -> Received {
        Received {
            number,
            sender,
            at: base + Duration::from_millis(after_ms),
        }
    }

    #[test]
    fn timeouts_double_delivery_is_one_request() {
        let base = Instant::now();
        let first = received(libc::SIGINT, 4242, 0, base);
        assert!(is_repeat(first, received(libc::SIGINT, 4242, 0, base)));
        assert!(is_repeat(first, received(libc::SIGINT, 4242, 499, base)));
    }

    #[test]
    fn a_real_second_signal_is_not_a_repeat() {
        let base = Instant::now();
        let first = received(libc::SIGTERM, 4242, 0, base);
        // Later, another signal, another sender, or sent by the kernel (Ctrl-C twice).
        assert!(!is_repeat(first, received(libc::SIGTERM, 4242, 500, base)));
        assert!(!is_repeat(first, received(libc::SIGHUP, 4242, 10, base)));
        assert!(!is_repeat(first, received(libc::SIGTERM, 4243, 10, base)));
        let ctrl_c = received(libc::SIGINT, 0, 0, base);
        assert!(!is_repeat(ctrl_c, received(libc::SIGINT, 0, 10, base)));
    }
}
