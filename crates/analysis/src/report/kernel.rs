//! The kernel's account of a run in words: one place that formats a [`KernelTrace`] for
//! the text summary (`run`, `show`) and the window's History details.

use crate::metrics::{FlushLatency, KernelTrace};

/// `(label, text)` rows describing `kt`: whether tracing was on and why not, then each
/// figure that applies, filesystem by filesystem.
pub fn kernel_rows(kt: &KernelTrace) -> Vec<(&'static str, String)> {
    let mut rows = Vec::new();
    if !kt.enabled {
        let why = kt.reason.as_ref().map_or_else(
            || "not recorded".into(),
            crate::words::trace::trace_reason_text,
        );
        rows.push(("kernel trace", format!("off: {why}")));
        return rows;
    }
    let lost = match kt.dropped {
        Some(0) => "none lost".to_string(),
        Some(n) => format!("{n} LOST (figures are low)"),
        None => "losses unknown".to_string(),
    };
    rows.push((
        "kernel trace",
        format!(
            "on: {} events read, {lost} · {}",
            kt.events_read.unwrap_or(0),
            kt.events.join(", ")
        ),
    ));
    if let Some(flushes) = kt.block_flushes {
        let lat = kt.flush_lat_us.map(lat_text).unwrap_or_default();
        let fua = kt
            .fua_writes
            .map(|f| format!(" · {f} FUA writes"))
            .unwrap_or_default();
        let backing = kt
            .backing_flushes
            .map(|f| format!(" · backing disk {f} flushes"))
            .unwrap_or_default();
        rows.push(("flushes", format!("{flushes}{lat}{fua}{backing}")));
    }
    if let Some(commits) = kt.journal_commits {
        let mut text = format!("{commits} jbd2 commits");
        push_opt(&mut text, kt.commits_per_sync, "per sync", 3);
        push_opt(&mut text, kt.handles_per_commit, "handles/commit", 2);
        push_opt(&mut text, kt.blocks_per_commit, "blocks/commit", 1);
        if let Some(c) = kt.commit_us {
            text.push_str(&format!(" · commit{}", lat_text(c)));
        }
        rows.push(("journal", text));
    }
    if let Some(forces) = kt.log_forces {
        let mut text = format!("{forces} xfs log forces");
        push_opt(&mut text, kt.log_forces_per_sync, "per sync", 3);
        if let Some(writes) = kt.log_writes {
            text.push_str(&format!(" · {writes} log writes"));
        }
        rows.push(("log", text));
    }
    if let (Some(syncs), Some(trans)) = (kt.log_commits, kt.transaction_commits) {
        rows.push((
            "btrfs",
            format!("{syncs} sync_file (log path) · {trans} transaction commits"),
        ));
    }
    if kt.journal_commits.is_none() && kt.log_forces.is_none() && kt.log_commits.is_none() {
        // Null, not 0: a journal-less ext4, tmpfs... has no commit to count.
        rows.push((
            "journal",
            "— (does not apply: no jbd2 journal, xfs log or btrfs log on this filesystem)".into(),
        ));
    }
    if let Some(total) = kt.dstate_us {
        let mut text = format!("{:.3} s in D state", total as f64 / 1e6);
        push_opt(&mut text, kt.dstate_us_per_sync, "µs per sync", 1);
        rows.push(("D state", text));
    }
    rows
}

/// Appends ` · <value> <unit>`; a figure that does not apply (or had nothing to divide by)
/// is `—`, never 0.
fn push_opt(text: &mut String, value: Option<f64>, unit: &str, decimals: usize) {
    match value {
        Some(v) => text.push_str(&format!(" · {v:.decimals$} {unit}")),
        None => text.push_str(&format!(" · — {unit}")),
    }
}

fn lat_text(l: FlushLatency) -> String {
    format!(
        " · p50 {:.0} µs · p99 {:.0} µs · max {:.0} µs",
        l.p50, l.p99, l.max
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_says_why_and_on_shows_what_applies() {
        let rows = kernel_rows(&KernelTrace::off(crate::metrics::TraceNote::NotRoot));
        assert_eq!(
            rows,
            vec![(
                "kernel trace",
                "off: kernel tracing is unavailable: tracefs needs root".into()
            )]
        );
        let kt = KernelTrace {
            enabled: true,
            events: vec!["jbd2:jbd2_end_commit".into()],
            dropped: Some(3),
            events_read: Some(10),
            journal_commits: Some(4),
            handles_per_commit: Some(2.5),
            ..Default::default()
        };
        let rows = kernel_rows(&kt);
        assert!(rows[0].1.contains("3 LOST"), "{rows:?}");
        assert_eq!(rows[1].0, "journal");
        assert!(rows[1].1.contains("2.50 handles/commit"), "{rows:?}");
        // A figure of a shown row that is null is a dash, never 0.
        assert!(rows[1].1.contains("· — per sync"), "{rows:?}");
        assert_eq!(
            rows.len(),
            2,
            "no xfs, btrfs, flush or D-state rows: {rows:?}"
        );
    }

    #[test]
    fn a_journal_less_filesystem_says_the_journal_does_not_apply() {
        let kt = KernelTrace {
            enabled: true,
            events_read: Some(10),
            dropped: Some(0),
            block_flushes: Some(7),
            ..Default::default()
        };
        let rows = kernel_rows(&kt);
        let journal = rows.iter().find(|r| r.0 == "journal").expect("journal row");
        assert!(journal.1.starts_with("— (does not apply"), "{rows:?}");
        assert!(!journal.1.contains('0'), "{rows:?}");
    }
}
