//! The thin reader: one thread draining an instance's ring buffers on a fixed period,
//! every descriptor opened `O_NONBLOCK` so it is never blocked inside a tracefs read.
//!
//! It reads binary pages from each CPU's `per_cpu/cpuN/trace_pipe_raw` (decoded by
//! `super::raw` and `super::decode`), and falls back to the text `trace_pipe` only when the
//! running kernel's page or event layout is not one fsynclab decodes. The text pipe costs
//! the run more: the kernel formats every event inside the reader's `read()`, and on a
//! kernel without preemption a reader in a system call is not preempted even in
//! `SCHED_IDLE` (docs/PERFORMANCE.md, "Kernel tracer overhead"). It drains on a period
//! rather than waiting in `poll`: a `poll` waiter is woken after every event.
//!
//! Each CPU's pages are in time order, but the accumulator pairs events across CPUs (a
//! flush issued on one completes on another), so records are merged by timestamp: each
//! drain feeds the records older than a watermark (the drain's start less [`SKEW_NS`], or
//! the last record read from a CPU whose drain hit its bound) and keeps the rest for the
//! next. Stopping sets a flag; the thread drains what is left, closes its descriptors and
//! returns the accumulator. Only after it is joined may the instance be disabled and removed.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use super::TraceError;
use super::accum::Accumulator;
use super::decode::{Decoder, decode_page, parse_format};
use super::events::{EventChoice, WORKER_COMM_GLOB, sched_filter_for_threads};
use super::parse::Event;
use super::raw::{PageLayout, parse_header_page};
// CLOCK_MONOTONIC: the clock of the instance's `mono` trace clock.
use crate::clock::monotonic_ns;

/// Sleep between drains, ms. The ring buffer (`tracefs::BUFFER_KB` per CPU, ~40k events)
/// holds far more than a period's events at any rate the reader keeps up with.
const PERIOD_MS: u64 = 50;
/// Bytes per read: at least one ring-buffer page (`buffer_subbuf_size_kb`, 4 KiB unless
/// changed); a `trace_pipe_raw` read returns one page.
const CHUNK: usize = 64 * 1024;
/// Reads per drain and descriptor: enough to empty what a CPU's buffer holds, bounded so
/// a flood cannot keep the reader from seeing the stop flag.
const DRAIN_READS: u32 = 4096;
/// How long before a drain's start a record must be to be fed: room for an event that took
/// its timestamp just before the drain to be committed to its page (events are written with
/// preemption off, in microseconds).
const SKEW_NS: u64 = 10_000_000;

/// How the session asks the reader to read: the instance's directory, tracefs's root
/// (for `events/header_page`) and the events enabled (for their `format` files).
pub struct Source<'a> {
    /// The instance (`instances/fsynclab-…`).
    pub dir: &'a Path,
    /// tracefs's mount point.
    pub root: &'a Path,
    /// The enabled events.
    pub events: &'a [EventChoice],
    /// Read text even when binary pages would decode (`FSYNCLAB_KTRACE_READER=text`).
    pub force_text: bool,
}

/// A running reader.
pub struct Reader {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Accumulator>>,
    /// `raw` or `text`.
    kind: crate::metrics::TraceReader,
}

/// What the thread reads.
enum Input {
    Raw(RawInput),
    Text(File),
}

impl Reader {
    /// Opens the instance's per-CPU binary pipes (or, when the layout does not decode, its
    /// text pipe), non-blocking, and starts reading into `acc`.
    pub fn start(source: &Source<'_>, acc: Accumulator) -> Result<Reader, TraceError> {
        let raw = if source.force_text {
            Err("FSYNCLAB_KTRACE_READER=text".to_string())
        } else {
            RawInput::open(source)
        };
        let input = match raw {
            Ok(raw) => Input::Raw(raw),
            Err(why) => {
                log::info!("reading the kernel trace as text: {why}");
                Input::Text(open_pipe(&source.dir.join("trace_pipe"))?)
            }
        };
        let kind = match input {
            Input::Raw(_) => crate::metrics::TraceReader::Raw,
            Input::Text(_) => crate::metrics::TraceReader::Text,
        };
        let follow = source
            .events
            .iter()
            .find(|e| e.system == "sched" && e.name == "sched_switch")
            .map(|e| {
                source
                    .dir
                    .join("events")
                    .join(e.system)
                    .join(e.name)
                    .join("filter")
            });
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("fsynclab-ktrace".into())
            .spawn(move || read_loop(input, acc, &flag, follow))
            .map_err(|source_err| TraceError::Io {
                what: "start the reader thread for",
                path: source.dir.to_path_buf(),
                source: source_err,
            })?;
        Ok(Reader {
            stop,
            thread: Some(thread),
            kind,
        })
    }

    /// `raw` or `text`: how this reader reads.
    pub fn kind(&self) -> crate::metrics::TraceReader {
        self.kind
    }

    /// Stops the reader and waits for it: its descriptors are closed when this returns.
    /// `None` when the thread panicked (its descriptors are closed too).
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

fn open_pipe(path: &Path) -> Result<File, TraceError> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|source| TraceError::Io {
            what: "open",
            path: path.to_path_buf(),
            source,
        })
}

fn read_loop(
    input: Input,
    mut acc: Accumulator,
    stop: &AtomicBool,
    mut follow: Option<PathBuf>,
) -> Accumulator {
    run_when_idle();
    let mut buf = vec![0u8; CHUNK];
    match input {
        Input::Raw(mut raw) => loop {
            follow_workers(&mut follow, &acc);
            let stopping = stop.load(Ordering::Acquire);
            // After the flag, one last drain of what the buffers still hold, all fed.
            let emptied = raw.drain(&mut buf, &mut acc, stopping);
            // Events held until the window's start was known count once it is.
            acc.release_held();
            if stopping {
                break;
            }
            if emptied {
                std::thread::sleep(std::time::Duration::from_millis(PERIOD_MS));
            }
        },
        Input::Text(mut pipe) => {
            // Bytes of a line not yet complete (a read may end mid-line).
            let mut partial: Vec<u8> = Vec::new();
            loop {
                follow_workers(&mut follow, &acc);
                let stopping = stop.load(Ordering::Acquire);
                let emptied = drain_text(&mut pipe, &mut buf, &mut partial, &mut acc);
                acc.release_held();
                if stopping {
                    break;
                }
                if emptied {
                    std::thread::sleep(std::time::Duration::from_millis(PERIOD_MS));
                }
            }
            if !partial.is_empty() {
                acc.feed_line(&String::from_utf8_lossy(&partial));
                acc.release_held();
            }
        }
    }
    acc
}

/// Once the engine's workers exist, narrows the scheduler filter at `follow` from their
/// name (which every fsynclab's workers share) to this process's worker threads, and
/// forgets the path; best effort (the name filter stays on a failure, and the accumulator
/// keeps only this process's threads either way).
fn follow_workers(follow: &mut Option<PathBuf>, acc: &Accumulator) {
    if follow.is_none() || !acc.workers_started() {
        return;
    }
    let Some(path) = follow.take() else {
        return;
    };
    let Some(filter) = sched_filter_for_threads(&own_workers()) else {
        return;
    };
    if let Err(e) = super::tracefs::set_filter(&path, &filter) {
        log::warn!("kernel trace: the scheduler filter stays by name: {e}");
    }
}

/// This process's worker threads (named `fsynclab-w…`), from `/proc/self/task`.
fn own_workers() -> Vec<u32> {
    let prefix = WORKER_COMM_GLOB.trim_end_matches('*');
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|comm| comm.starts_with(prefix))
        })
        .filter_map(|task| task.file_name().to_str()?.parse().ok())
        .collect()
}

/// Puts the calling thread in `SCHED_IDLE`, so it reads the trace only on CPU time the run
/// leaves unused and never delays the work on the fsync path. Best effort: a refusal leaves
/// the thread where it was.
fn run_when_idle() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param for SCHED_IDLE.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
}

/// The per-CPU binary pipes, the decoding of their pages and the records not yet fed.
struct RawInput {
    cpus: Vec<File>,
    layout: PageLayout,
    decoder: Decoder,
    /// Records read but newer than the last watermark, in no particular order.
    pending: Vec<(u64, Event)>,
}

impl RawInput {
    /// Reads the page layout and the enabled events' formats and opens every CPU's pipe;
    /// `Err` says why binary reading is not possible (the caller reads text instead).
    fn open(source: &Source<'_>) -> Result<RawInput, String> {
        let read =
            |path: PathBuf| read_whole(&path).map_err(|e| format!("{}: {e}", path.display()));
        let header = read(source.root.join("events").join("header_page"))?;
        let layout = parse_header_page(&header)
            .ok_or("events/header_page does not describe a page fsynclab reads")?;
        let mut formats = Vec::new();
        for event in source.events {
            let path = source
                .dir
                .join("events")
                .join(event.system)
                .join(event.name)
                .join("format");
            let format = parse_format(&read(path)?)
                .ok_or_else(|| format!("the format of {} does not parse", event.full_name()))?;
            formats.push(format);
        }
        let decoder = Decoder::new(&formats)?;
        let per_cpu = source.dir.join("per_cpu");
        let mut names: Vec<(u32, PathBuf)> = std::fs::read_dir(&per_cpu)
            .map_err(|e| format!("{}: {e}", per_cpu.display()))?
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name();
                let cpu = name.to_str()?.strip_prefix("cpu")?.parse().ok()?;
                Some((cpu, entry.path().join("trace_pipe_raw")))
            })
            .collect();
        names.sort();
        let cpus = names
            .into_iter()
            .map(|(_, path)| open_pipe(&path).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        if cpus.is_empty() {
            return Err(format!("no CPU under {}", per_cpu.display()));
        }
        Ok(RawInput {
            cpus,
            layout,
            decoder,
            pending: Vec::new(),
        })
    }

    /// Reads every CPU's pages (bounded) and feeds the records older than the watermark
    /// (all of them when `last`). False when a CPU stopped at the bound with pages left.
    fn drain(&mut self, page: &mut [u8], acc: &mut Accumulator, last: bool) -> bool {
        let mut watermark = if last {
            u64::MAX
        } else {
            monotonic_ns().saturating_sub(SKEW_NS)
        };
        let mut emptied = true;
        for cpu in &mut self.cpus {
            let mut newest = 0;
            let mut cpu_emptied = false;
            for _ in 0..DRAIN_READS {
                let n = match cpu.read(page) {
                    Ok(0) => {
                        cpu_emptied = true;
                        break;
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    // Empty (`WouldBlock`) or unexpected: try again next period.
                    Err(_) => {
                        cpu_emptied = true;
                        break;
                    }
                };
                let (page_newest, undecoded) =
                    decode_page(&page[..n], &self.layout, &self.decoder, &mut self.pending);
                newest = newest.max(page_newest);
                acc.count_unparsed(undecoded);
            }
            if !cpu_emptied {
                emptied = false;
                // This CPU's older records than `newest` are all read; later ones are not.
                watermark = watermark.min(newest);
            }
        }
        acc.feed_merged(&mut self.pending, watermark);
        emptied
    }
}

/// A tracefs control file's text, read with a buffer larger than it: on this kernel
/// `read_to_string` of `events/header_page` returned its first 33 bytes (`\tfield: u64
/// timestamp;\toffset:0;`) and then end of file, where one 64 KiB read returns all of it.
fn read_whole(path: &Path) -> std::io::Result<String> {
    let mut file = File::open(path)?;
    let mut text = Vec::new();
    let mut buf = vec![0u8; CHUNK];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => text.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    String::from_utf8(text).map_err(|e| std::io::Error::new(ErrorKind::InvalidData, e))
}

/// Reads until the pipe is empty (or an error), at most [`DRAIN_READS`] times, feeding
/// whole lines. False when it stopped at the bound with data perhaps left.
fn drain_text(
    pipe: &mut File,
    buf: &mut [u8],
    partial: &mut Vec<u8>,
    acc: &mut Accumulator,
) -> bool {
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
