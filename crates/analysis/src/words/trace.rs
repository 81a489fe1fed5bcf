//! The words of why a run's kernel trace was off or incomplete (issue 32): the tracer hands
//! over [`TraceNote`]s as data and the front ends word them here. A reason stored as text
//! by an earlier release is shown as it was.

use crate::metrics::{Recorded, TraceNote, TraceReason, os_error_text};

/// Where tracefs is (`fsynclab_sys::ktrace::TRACEFS`).
const TRACEFS: &str = "/sys/kernel/tracing";
/// The reader's environment variable (`fsynclab_sys::ktrace::READER_ENV`).
const READER_ENV: &str = "FSYNCLAB_KTRACE_READER";

/// The reason in words: each note, joined by "; ".
pub fn trace_reason_text(reason: &TraceReason) -> String {
    match reason {
        Recorded::Text(text) => text.clone(),
        Recorded::Typed(notes) => notes
            .iter()
            .map(trace_note_text)
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// One note in words: why tracing could not be done ("kernel tracing is unavailable: …"
/// for the reasons that make it so), or what went wrong while it was on.
pub fn trace_note_text(note: &TraceNote) -> String {
    match note {
        TraceNote::TurnedOff
        | TraceNote::FileFailed { .. }
        | TraceNote::UnsafeLock { .. }
        | TraceNote::ReaderFailed
        | TraceNote::LossesUnread
        | TraceNote::NotRecorded => bare_text(note),
        _ => format!("kernel tracing is unavailable: {}", bare_text(note)),
    }
}

fn bare_text(note: &TraceNote) -> String {
    match note {
        TraceNote::TurnedOff => "turned off (kernel_trace = off)".into(),
        TraceNote::NotRoot => "tracefs needs root".into(),
        TraceNote::BadReaderSetting { value } => {
            format!("{READER_ENV}={value} is not a reader; set it to raw or text, or unset it")
        }
        TraceNote::NoEvents => "the kernel offers none of the events fsynclab uses".into(),
        TraceNote::NoMountTable { errno } => {
            format!("cannot read the mount table: {}", os_error_text(*errno))
        }
        TraceNote::WrongMount { fs_type } => format!("{TRACEFS} is a {fs_type} mount, not tracefs"),
        TraceNote::MountPointUnusable => {
            format!("{TRACEFS} is missing or not empty; mount tracefs there")
        }
        TraceNote::MountFailed { errno } => {
            format!(
                "mounting tracefs on {TRACEFS} failed: {}",
                os_error_text(*errno)
            )
        }
        TraceNote::FileFailed { what, path, errno } => {
            format!(
                "cannot {what} {}: {}",
                path.display(),
                os_error_text(*errno)
            )
        }
        TraceNote::UnsafeLock { path } => format!(
            "{} is not a regular file owned by root and writable only by it; remove it",
            path.display()
        ),
        TraceNote::ReaderFailed => "the trace reader failed".into(),
        TraceNote::LossesUnread => "the lost-event counters could not be read".into(),
        TraceNote::NotRecorded => {
            "not recorded (stored before kernel tracing existed, or imported)".into()
        }
    }
}

/// Why tracing could not be done, as `kernel_trace = on` refuses it (the note's words).
pub fn trace_refusal_text(note: &TraceNote) -> String {
    trace_note_text(note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_worded_and_joined_and_text_shows_as_it_was() {
        let reason: TraceReason = Recorded::Typed(vec![
            TraceNote::ReaderFailed,
            TraceNote::FileFailed {
                what: "remove".into(),
                path: "/sys/kernel/tracing/instances/x".into(),
                errno: Some(libc::EBUSY),
            },
        ]);
        let text = trace_reason_text(&reason);
        assert!(
            text.starts_with("the trace reader failed; cannot remove /sys/kernel/tracing/instances/x: Device or resource busy"),
            "{text}"
        );
        assert_eq!(
            trace_refusal_text(&TraceNote::NotRoot),
            "kernel tracing is unavailable: tracefs needs root"
        );
        // As `auto` recorded it when tracing could not be done (the release before said
        // the same in its sentence).
        assert_eq!(
            trace_reason_text(&Recorded::Typed(vec![TraceNote::NotRoot])),
            "kernel tracing is unavailable: tracefs needs root"
        );
        assert_eq!(
            trace_note_text(&TraceNote::TurnedOff),
            "turned off (kernel_trace = off)"
        );
        let old: TraceReason = Recorded::Text("tracefs needs root".into());
        assert_eq!(trace_reason_text(&old), "tracefs needs root");
        let json = serde_json::to_value(&reason).unwrap();
        assert_eq!(json[1]["why"], "file_failed");
        assert_eq!(serde_json::from_value::<TraceReason>(json).unwrap(), reason);
    }
}
