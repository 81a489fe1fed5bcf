//! The thin reader: one thread reading an instance's `trace_pipe` opened `O_NONBLOCK`,
//! waiting in `poll` with a short timeout, so it is never blocked inside a tracefs read.
//! Stopping sets a flag; the thread reads what is left, closes its descriptor and returns
//! the accumulator. Only after it is joined may the instance be disabled and removed.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use super::TraceError;
use super::accum::Accumulator;

/// Longest wait in `poll` before the stop flag is looked at again, ms.
const POLL_MS: u8 = 50;
/// Bytes per read.
const CHUNK: usize = 64 * 1024;
/// Reads after the stop flag is seen: enough to drain what the buffers still hold, bounded
/// so a flood cannot keep the reader from returning.
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
    let mut buf = vec![0u8; CHUNK];
    // Bytes of a line not yet complete (a read may end mid-line).
    let mut partial: Vec<u8> = Vec::new();
    let mut drain_left = DRAIN_READS;
    loop {
        let stopping = stop.load(Ordering::Acquire);
        if stopping {
            if drain_left == 0 {
                break;
            }
            drain_left -= 1;
        } else if !wait_readable(&pipe) {
            continue;
        }
        match pipe.read(&mut buf) {
            Ok(0) => {
                if stopping {
                    break;
                }
            }
            Ok(n) => take_lines(&mut partial, &buf[..n], &mut acc),
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if stopping {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => {
                if stopping {
                    break;
                }
                // Unexpected: wait for the stop flag without spinning.
                std::thread::sleep(std::time::Duration::from_millis(u64::from(POLL_MS)));
            }
        }
    }
    if !partial.is_empty() {
        acc.feed_line(&String::from_utf8_lossy(&partial));
    }
    drop(pipe);
    acc
}

/// Waits up to [`POLL_MS`] for data.
fn wait_readable(pipe: &File) -> bool {
    let mut fd = libc::pollfd {
        fd: pipe.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `fd` is one valid pollfd for a descriptor `pipe` keeps open during the call.
    unsafe { libc::poll(&mut fd, 1, libc::c_int::from(POLL_MS)) > 0 }
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
