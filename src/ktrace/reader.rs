//! The thin reader: one thread reading an instance's `trace_pipe` opened `O_NONBLOCK`, so it
//! is never blocked inside a tracefs read. It wakes on a fixed period and drains what the
//! ring buffers hold, rather than waiting in `poll`: a `poll` waiter is woken by the kernel
//! after every event, which put thousands of reader wake-ups a second on the CPUs the run
//! measures (docs/PERFORMANCE.md, "Kernel tracer overhead"). Stopping sets a flag; the
//! thread reads what is left, closes its descriptor and returns the accumulator. Only after
//! it is joined may the instance be disabled and removed.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use super::TraceError;
use super::accum::Accumulator;

/// Sleep between drains, ms. The ring buffer (`tracefs::BUFFER_KB` per CPU, ~40k events)
/// holds far more than a period's events at any rate the reader keeps up with.
const PERIOD_MS: u64 = 50;
/// Bytes per read.
const CHUNK: usize = 64 * 1024;
/// Reads per drain: enough to empty what the buffers hold, bounded so a flood cannot keep
/// the reader from seeing the stop flag.
const DRAIN_READS: u32 = 4096;

/// A running reader.
pub struct Reader {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Accumulator>>,
}

impl Reader {
    /// Opens `trace_pipe` of the instance at `dir` (non-blocking) and starts reading into
    /// `acc`.
    pub fn start(dir: &Path, acc: Accumulator) -> Result<Reader, TraceError> {
        let path = dir.join("trace_pipe");
        let pipe = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|source| TraceError::Io {
                what: "open",
                path: path.clone(),
                source,
            })?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("fsynclab-ktrace".into())
            .spawn(move || read_loop(pipe, acc, &flag))
            .map_err(|source| TraceError::Io {
                what: "start the reader thread for",
                path,
                source,
            })?;
        Ok(Reader {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the reader and waits for it: its descriptor is closed when this returns.
    /// `None` when the thread panicked (its descriptor is closed too).
    pub fn stop(mut self) -> Option<Accumulator> {
        self.stop_and_join()
    }

    fn stop_and_join(&mut self) -> Option<Accumulator> {
        self.stop.store(true, Ordering::Release);
        self.thread.take()?.join().ok()
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        let _ = self.stop_and_join();
    }
}

fn read_loop(mut pipe: File, mut acc: Accumulator, stop: &AtomicBool) -> Accumulator {
    run_when_idle();
    let mut buf = vec![0u8; CHUNK];
    // Bytes of a line not yet complete (a read may end mid-line).
    let mut partial: Vec<u8> = Vec::new();
    loop {
        let stopping = stop.load(Ordering::Acquire);
        // Bounded, so a flood cannot keep the reader from seeing the stop flag; after the
        // flag, one last drain of what the buffers still hold.
        let emptied = drain(&mut pipe, &mut buf, &mut partial, &mut acc);
        if stopping {
            break;
        }
        if emptied {
            std::thread::sleep(std::time::Duration::from_millis(PERIOD_MS));
        }
    }
    if !partial.is_empty() {
        acc.feed_line(&String::from_utf8_lossy(&partial));
    }
    drop(pipe);
    acc
}

/// Puts the calling thread in `SCHED_IDLE`, so it reads (and the kernel formats) the trace
/// only on CPU time the run leaves unused and never delays the work on the fsync path. Best
/// effort: a refusal leaves the thread where it was.
fn run_when_idle() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param for SCHED_IDLE.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
}

/// Reads until the pipe is empty (or an error), at most [`DRAIN_READS`] times, feeding
/// whole lines. False when it stopped at the bound with data perhaps left.
fn drain(pipe: &mut File, buf: &mut [u8], partial: &mut Vec<u8>, acc: &mut Accumulator) -> bool {
    for _ in 0..DRAIN_READS {
        match pipe.read(buf) {
            Ok(0) => return true,
            Ok(n) => take_lines(partial, &buf[..n], acc),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // Empty (`WouldBlock`) or unexpected: try again next period.
            Err(_) => return true,
        }
    }
    false
}

/// Feeds the complete lines of `partial` + `bytes` to `acc`, keeping an unfinished tail.
fn take_lines(partial: &mut Vec<u8>, bytes: &[u8], acc: &mut Accumulator) {
    partial.extend_from_slice(bytes);
    let Some(last_newline) = partial.iter().rposition(|&b| b == b'\n') else {
        return;
    };
    acc.feed_text(&String::from_utf8_lossy(&partial[..last_newline]));
    partial.drain(..=last_newline);
}
