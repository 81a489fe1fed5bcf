//! The words of a run's warnings (issue 32): the engine, the probe and the lab hand over
//! [`RunWarning`]s as data, and the front ends (the CLI's text and JSON, the window) word
//! them here. A warning stored as text by an earlier release is shown as it was.

use crate::metrics::{BackingUnknown, RunResult, RunWarning, Warning, os_error_text};
use crate::spec::format_size;

/// The warning in words. `run` gives the context some warnings point into (the kernel
/// trace's own reason for [`RunWarning::TraceIncomplete`]).
pub fn warning_text(warning: &Warning, run: Option<&RunResult>) -> String {
    match warning {
        Warning::Text(text) => text.clone(),
        Warning::Typed(w) => typed_text(w, run),
    }
}

/// Every warning of `run` in words, its probe's first (as they were recorded).
pub fn run_warning_texts(run: &RunResult) -> Vec<String> {
    run.warnings
        .iter()
        .map(|w| warning_text(w, Some(run)))
        .collect()
}

/// The codes of `warnings` (`text` for one stored as text), for `--json`'s
/// `warning_codes`.
pub fn warning_codes(warnings: &[Warning]) -> Vec<&'static str> {
    warnings.iter().map(Warning::code).collect()
}

fn typed_text(w: &RunWarning, run: Option<&RunResult>) -> String {
    match w {
        RunWarning::MemoryFilesystem { fs_type } => format!(
            "target is on {fs_type}: fsync and fdatasync return immediately (nothing is persisted), \
             so sync latency here is pure syscall cost"
        ),
        RunWarning::BarriersOff { mount_point } => format!(
            "{mount_point} is mounted with barriers off (nobarrier): fsync does not flush the device \
             cache, so sync latency is lower than a safe configuration and data may be lost \
             on power failure"
        ),
        RunWarning::WriteThrough { device } => format!(
            "device {device} reports write_cache = write through: the block layer sends it no cache \
             flushes, so fsync cost here excludes a device cache flush"
        ),
        RunWarning::TargetUnresolved { target, errno } => format!(
            "cannot resolve target {} ({}); mount and device are looked up for it as given",
            target.display(),
            os_error_text(*errno)
        ),
        RunWarning::BackingDiskNotCounted { file, why } => format!(
            "backing disk of the loop device not counted: {}",
            backing_text(file, *why)
        ),
        RunWarning::LowSpace { needed, free } => format!(
            "the test files need up to {} but {} is free on the target; the run may stop with 'no space left'",
            format_size(*needed),
            format_size(*free)
        ),
        RunWarning::FlushesNotCounted { device } => format!(
            "{device} is a device-mapper/md device: its flush counter stays 0 (flushes are counted on \
             the disks below it), so flushes per sync are not measured"
        ),
        RunWarning::SyncFileRangeNotDurable => "sync_file_range writes the range back \
             and waits for it, but flushes no device cache and writes no metadata: these writes are \
             not durable when it returns (fsync and fdatasync are); compare it for speed, not as a \
             way to commit"
            .into(),
        RunWarning::GrouplogOnMemory => "grouplog on a memory filesystem: fdatasync does nothing \
             there, so commits/s and batch sizes measure only the coordination overhead, not \
             storage; run it on a disk-backed filesystem (fsynclab scratch create) for meaningful \
             figures"
            .into(),
        RunWarning::SharedTarget { target, mode } => format!(
            "target {} (mode {:04o}) is writable by other users and not sticky, and the run was \
             allowed to use it: every file of the run was reached through directory descriptors, \
             but another user could rename the run directory away; prefer a private directory",
            target.display(),
            mode & 0o7777
        ),
        RunWarning::FilesKept { dir } => {
            format!("test files kept in {} (kept as asked)", dir.display())
        }
        RunWarning::CleanupIncomplete { left } => format!(
            "scratch cleanup incomplete ({}); remove it by hand",
            left.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
        ),
        RunWarning::RunDirLeft { dir, why } => {
            format!("{}: {why}", dir.display())
        }
        RunWarning::SettleSyncfsFailed { errno } => format!(
            "settle: syncfs of the target failed ({}); the timed part may meet the fill's writeback",
            os_error_text(*errno)
        ),
        RunWarning::SettleUnreadable { path, errno } => match path {
            Some(path) => format!(
                "settle: cannot read the device or page-cache counters ({}: {}); started after \
                 syncfs alone",
                path.display(),
                os_error_text(*errno)
            ),
            None => "settle: the device or page-cache counters were not in the expected format; \
                     started after syncfs alone"
                .into(),
        },
        RunWarning::SettleTimedOut {
            timeout_ms,
            in_flight,
            dirty_kib,
            writeback_kib,
        } => format!(
            "settle: the device and page cache were still busy after {:.1} s ({in_flight} in \
             flight, {dirty_kib} KiB dirty, {writeback_kib} KiB under writeback); the run started \
             anyway",
            *timeout_ms as f64 / 1000.0
        ),
        RunWarning::TraceEventsLost { events } => format!(
            "the kernel tracer lost {events} events (ring buffer overrun or unreadable lines): \
             its counts are low"
        ),
        RunWarning::FlushCountsDisagree {
            device,
            traced,
            counted,
        } => flush_disagreement(device, *traced, *counted),
        RunWarning::FioEmptyDirectory { .. }
        | RunWarning::FioFallocateKeep
        | RunWarning::FioSharedFilename { .. }
        | RunWarning::FioIodepthUnordered { .. }
        | RunWarning::FioIodepthIgnored { .. }
        | RunWarning::FioUnknownOptions { .. }
        | RunWarning::FioDirectoryReplaced { .. }
        | RunWarning::FioMachineFactsUnknown
        | RunWarning::FioNoHistogram
        | RunWarning::FioRuntimeReached { .. }
        | RunWarning::FioRuntimeNotReached { .. }
        | RunWarning::FioAsWorkload { .. }
        | RunWarning::FioNotAWorkload { .. }
        | RunWarning::FioCloneApart { .. } => fio_text(w, run),
        RunWarning::TraceIncomplete => {
            let reason = run
                .and_then(|r| r.kernel_trace.as_ref())
                .and_then(|k| k.reason.as_ref())
                .map_or_else(
                    || "the run's kernel trace says why".into(),
                    super::trace::trace_reason_text,
                );
            format!("kernel trace incomplete: {reason}")
        }
    }
}

/// The words of the fio job translator's and importer's notes.
fn fio_text(w: &RunWarning, run: Option<&RunResult>) -> String {
    match w {
        RunWarning::FioEmptyDirectory { line } => format!(
            "directory={} is empty (an unset ${{VAR}}?): fio would run in its working directory; \
             this run goes to the target given instead",
            at_line(*line)
        ),
        RunWarning::FioFallocateKeep => "fallocate=keep: fio reserves the blocks without \
             changing the file size (the writes extend it); the engine fallocates with the size \
             set, as fio's fallocate=native does"
            .into(),
        RunWarning::FioSharedFilename { name, threads } => format!(
            "filename={name}: all {threads} threads share one file, as fio's numjobs clones \
             share a named file; the engine names it itself, inside its private run directory"
        ),
        RunWarning::FioIodepthUnordered { depth, sync } => format!(
            "iodepth={depth} with {sync}: fio's io_uring engine queues each sync right behind its \
             write without waiting for it, so a sync may complete before the write it follows; \
             the run keeps fio's shape (sync_order = unordered) — a benchmark shape, not a \
             durability guarantee"
        ),
        RunWarning::FioIodepthIgnored { depth } => format!(
            "iodepth={depth} ignored: the synchronous engines (psync, sync, pvsync) have one \
             write in flight, in fio too; ioengine=io_uring keeps the depth"
        ),
        RunWarning::FioUnknownOptions { options } => format!(
            "unknown fio option(s) ignored, so the run does not do what they ask: {}",
            options
                .iter()
                .map(|(key, line)| format!("{key}{}", at_line(*line)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        RunWarning::FioDirectoryReplaced { directory, target } => format!(
            "the job's directory={} is replaced by the target on the servers, {target}",
            directory.display()
        ),
        RunWarning::FioMachineFactsUnknown => "imported: machine facts unknown (fio's JSON names \
             no kernel, CPU, memory, filesystem or device; only the host in client mode)"
            .into(),
        RunWarning::FioNoHistogram => "no latency histogram: fio's plain JSON has percentiles \
             only (fio's json+ output format has the histogram); fio's printed percentiles are \
             the figures"
            .into(),
        RunWarning::FioRuntimeReached { cap, runtime_ms } => format!(
            "fio's runtime={cap} (without time_based) was reached (the job wrote for \
             {runtime_ms} ms): the workload is described as time based"
        ),
        RunWarning::FioRuntimeNotReached { value, runtime_ms } => format!(
            "fio's runtime={value} (without time_based) was a cap the job did not reach (it \
             wrote for {runtime_ms} ms): the workload is its size"
        ),
        RunWarning::FioAsWorkload { note } => {
            format!("fio's job options as a workload: {}", typed_text(note, run))
        }
        RunWarning::FioNotAWorkload { option } => format!(
            "fio's job options do not describe a workload fsynclab knows ({}); the workload is \
             shown as unknown (the options are kept in the run's origin)",
            match option {
                Some(o) => format!("fio option {o} does not translate"),
                None => "they do not translate".into(),
            }
        ),
        RunWarning::FioCloneApart { clones } => format!(
            "one of numjobs={clones} clones reported apart (no group_reporting): the figures and \
             the workload are this clone's alone"
        ),
        other => typed_text(other, run),
    }
}

/// " (line N)", or nothing for an option not read from a file.
fn at_line(line: usize) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(" (line {line})")
    }
}

fn backing_text(file: &std::path::Path, why: BackingUnknown) -> String {
    match why {
        BackingUnknown::Unreadable { errno } => {
            format!("cannot stat {} ({})", file.display(), os_error_text(errno))
        }
        BackingUnknown::NoBlockDevice => format!(
            "{} is on a filesystem without a block device (tmpfs or similar)",
            file.display()
        ),
        BackingUnknown::NotInSysfs => format!(
            "the device holding {} was not found under /sys",
            file.display()
        ),
    }
}

fn flush_disagreement(device: &str, traced: u64, counted: u64) -> String {
    let apart = traced.abs_diff(counted);
    let share = apart as f64 / traced.max(counted).max(1) as f64;
    format!(
        "the kernel tracer counted {traced} flushes completed on {device} while the run \
         counted, the device's counter (/sys/block/{device}/stat) {counted}: {apart} apart \
         ({:.1} %); flushes per sync comes from the counter, and the traced flush figures \
         (flushes/s, flush latency) are in doubt",
        share * 100.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{LeftBecause, PathFailure};

    #[test]
    fn text_warnings_are_shown_as_stored() {
        let w = Warning::Text("as it was".into());
        assert_eq!(warning_text(&w, None), "as it was");
    }

    #[test]
    fn typed_warnings_are_worded_with_their_parameters() {
        let low = Warning::from(RunWarning::LowSpace {
            needed: 2 << 30,
            free: 1 << 20,
        });
        assert_eq!(
            warning_text(&low, None),
            "the test files need up to 2G but 1M is free on the target; the run may stop \
             with 'no space left'"
        );
        let left = Warning::from(RunWarning::CleanupIncomplete {
            left: vec![PathFailure {
                path: "/t/run-1/f0".into(),
                why: LeftBecause::Os {
                    errno: Some(libc::EBUSY),
                },
            }],
        });
        assert_eq!(
            warning_text(&left, None),
            "scratch cleanup incomplete (/t/run-1/f0: Device or resource busy (os error 16)); \
             remove it by hand"
        );
        let disagree = Warning::from(RunWarning::FlushCountsDisagree {
            device: "loop0".into(),
            traced: 100,
            counted: 106,
        });
        let text = warning_text(&disagree, None);
        assert!(
            text.contains("counted 100 flushes completed on loop0")
                && text.contains("(/sys/block/loop0/stat) 106: 6 apart (5.7 %)"),
            "{text}"
        );
        assert_eq!(
            warning_codes(&[low, Warning::Text("x".into())]),
            ["low_space", "text"]
        );
    }

    #[test]
    fn an_incomplete_trace_quotes_the_traces_reason() {
        let spec = crate::spec::WorkloadSpec::default();
        let mut run =
            crate::engine::fake_run(1, vec![1_000], vec![9_000], &spec, Default::default())
                .unwrap();
        run.kernel_trace = Some(crate::metrics::KernelTrace {
            enabled: true,
            reason: Some(crate::metrics::Recorded::Typed(vec![
                crate::metrics::TraceNote::ReaderFailed,
            ])),
            ..Default::default()
        });
        run.warnings = vec![RunWarning::TraceIncomplete.into()];
        assert_eq!(
            run_warning_texts(&run),
            ["kernel trace incomplete: the trace reader failed"]
        );
    }
}
