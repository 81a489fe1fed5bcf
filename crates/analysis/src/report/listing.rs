//! Text for run listings, run headers and suggested matrices.

use std::fmt::Write as _;

use super::units::{fmt_bytes_per_sec, fmt_ns};
use crate::spec::MatrixSuggestion;
use crate::store::RunRow;

fn opt_f(v: Option<f64>, digits: usize) -> String {
    v.map(|x| format!("{x:.digits$}"))
        .unwrap_or_else(|| "-".into())
}

/// Local-time-free timestamp: `YYYY-MM-DD HH:MM` in UTC.
pub fn fmt_utc_ms(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// How wide a text column of `fsynclab list` may grow before it is cut in the middle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListWidth {
    /// Columns fit their longest value up to a cap (label 24, preset 28, kernel 24,
    /// filesystem 8 characters); longer values keep their start and end (`6.18.…-v1045`).
    Fit,
    /// Every value in full (`fsynclab list --wide`).
    Wide,
}

/// The `fsynclab list` table. Label, preset, kernel and filesystem columns are as wide as
/// their longest value (up to a cap unless `width` is [`ListWidth::Wide`]); a longer value
/// is cut in the middle, since what tells runs apart is often at its end (a kernel's local
/// version, a series variant's label).
pub fn runs_table(rows: &[RunRow], width: ListWidth) -> String {
    let mut out = String::new();
    if rows.is_empty() {
        out.push_str("no runs stored yet\n");
        return out;
    }
    let presets: Vec<String> = rows
        .iter()
        .map(|r| match (&r.preset, r.preset_scale) {
            (Some(p), Some(s)) if s != 1.0 => format!("{p} ×{s}"),
            (Some(p), _) => p.clone(),
            (None, _) => r.kind.clone(),
        })
        .collect();
    let label = |r: &RunRow| r.label.clone().unwrap_or_else(|| "-".into());
    let kernel = |r: &RunRow| r.kernel_release.clone().unwrap_or_else(|| "-".into());
    let fs = |r: &RunRow| r.fs_type.clone().unwrap_or_else(|| "-".into());
    let cap = |n: usize| {
        if width == ListWidth::Wide {
            usize::MAX
        } else {
            n
        }
    };
    let fit = |values: &mut dyn Iterator<Item = String>, header: &str, max: usize| {
        values
            .map(|v| v.chars().count())
            .max()
            .unwrap_or(0)
            .max(header.chars().count())
            .min(max)
    };
    let w_label = fit(&mut rows.iter().map(label), "label", cap(24));
    let w_preset = fit(&mut presets.iter().cloned(), "preset", cap(28));
    let w_kernel = fit(&mut rows.iter().map(kernel), "kernel", cap(24));
    let w_fs = fit(&mut rows.iter().map(fs), "fs", cap(8));
    let _ = writeln!(
        out,
        "{:>5}  {:<16}  {:<11}  {}  {}  {}  {}  {:>9}  {:>12}  {:>10}  {:>11}  {:>7}",
        "id",
        "created (UTC)",
        "status",
        pad("label", w_label),
        pad("preset", w_preset),
        pad("kernel", w_kernel),
        pad("fs", w_fs),
        "IOPS",
        "throughput",
        "sync p99",
        "durable p99",
        "fl/sync"
    );
    for (r, preset) in rows.iter().zip(&presets) {
        // A run stopped before its timed part stored zeros, not a measurement.
        let measured = r.wall_ns != Some(0);
        let _ = writeln!(
            out,
            "{:>5}  {:<16}  {:<11}  {}  {}  {}  {}  {:>9}  {:>12}  {:>10}  {:>11}  {:>7}",
            r.id,
            fmt_utc_ms(r.created_at_ms),
            r.status.as_str(),
            pad(&cut_middle(&label(r), w_label), w_label),
            pad(&cut_middle(preset, w_preset), w_preset),
            pad(&cut_middle(&kernel(r), w_kernel), w_kernel),
            pad(&cut_middle(&fs(r), w_fs), w_fs),
            if measured { iops_cell(r) } else { "-".into() },
            match r.mib_per_sec {
                Some(_) if measured && r.writes == Some(0) => "—".into(),
                Some(v) if measured => fmt_bytes_per_sec(v),
                _ => "-".into(),
            },
            match r.sync_p99_ns {
                Some(n) if measured => fmt_ns(n as f64),
                // Finished without syncs: O_SYNC/O_DSYNC writes or no sync at all.
                None if measured => "—".into(),
                _ => "-".into(),
            },
            match r.durable_p99_ns {
                Some(n) if measured => fmt_ns(n as f64),
                // No durable operation (buffered, sync_file_range, imports, older runs).
                None if measured => "—".into(),
                _ => "-".into(),
            },
            opt_f(r.flushes_per_sync, 2),
        );
    }
    out
}

/// `text` left-aligned in `width` characters. Padded by hand: a format width above
/// `u16::MAX` panics ("Formatting argument out of range"), and `--wide` prints a label of
/// any length in full.
fn pad(text: &str, width: usize) -> String {
    let len = text.chars().count();
    let mut out = String::with_capacity(text.len() + width.saturating_sub(len));
    out.push_str(text);
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(len)));
    out
}

/// IOPS of a run; for one that stored no result (killed), `~N` from what it streamed.
fn iops_cell(r: &RunRow) -> String {
    match (r.iops, r.progress_t_ms, r.progress_writes) {
        // A sync-only run writes nothing: no write rate, not a rate of 0.
        (Some(_), ..) if r.writes == Some(0) => "—".into(),
        (Some(iops), ..) => format!("{iops:.0}"),
        (None, Some(t_ms), Some(writes)) if t_ms > 0 => {
            format!("~{:.0}", writes as f64 * 1000.0 / t_ms as f64)
        }
        _ => "-".into(),
    }
}

/// `s` in at most `n` characters: its start and its end around `…` when it is longer
/// (the end gets the larger half: a kernel's local version, a variant's label).
pub fn cut_middle(s: &str, n: usize) -> String {
    let len = s.chars().count();
    if len <= n {
        return s.to_string();
    }
    if n <= 1 {
        return "…".chars().take(n).collect();
    }
    let head = (n - 1) / 2;
    let tail = n - 1 - head;
    let mut t: String = s.chars().take(head).collect();
    t.push('…');
    t.extend(s.chars().skip(len - tail));
    t
}

/// Header lines of `fsynclab show`: identity, label, tags, preset, experiment.
pub fn run_header(row: &RunRow) -> String {
    let mut out = String::new();
    let _ = write!(out, "created   {} UTC", fmt_utc_ms(row.created_at_ms));
    if let Some(l) = &row.label {
        let _ = write!(out, " · label {l}");
    }
    if !row.tags.is_empty() {
        let _ = write!(out, " · tags {}", row.tags.join(","));
    }
    if let Some(p) = &row.preset {
        let _ = write!(out, " · preset {p}");
        if let Some(s) = row.preset_scale {
            let _ = write!(out, " ×{s}");
        }
    }
    if let Some(e) = row.experiment_id {
        let _ = write!(out, " · experiment {e}");
    }
    out.push('\n');
    out
}

/// How far a run that stored no result got, from what it streamed:
/// `interrupted after 12.3 s: 4567 writes, 4567 syncs; measurements up to 12.0 s kept`.
pub fn progress_line(status: &str, progress: &crate::store::RunProgress) -> String {
    format!(
        "{status} after {:.1} s: {} writes, {} syncs; measurements up to {:.1} s kept",
        progress.elapsed_s().max(progress.t_ms as f64 / 1000.0),
        progress.writes,
        progress.syncs,
        progress.t_ms as f64 / 1000.0
    )
}

/// A suggested matrix's exact dimensions, each option set quoted as it will be checked and
/// passed: `fs ext4, xfs · mkfs "(defaults)" · mount -o "barrier=1" | "barrier=0" · backing disk`.
pub fn matrix_options_line(m: &MatrixSuggestion) -> String {
    let sets = |v: &[String]| {
        if v.is_empty() {
            "(defaults)".to_string()
        } else {
            v.iter()
                .map(|s| {
                    if s.trim().is_empty() {
                        "(defaults)".to_string()
                    } else {
                        format!("{s:?}")
                    }
                })
                .collect::<Vec<_>>()
                .join(" | ")
        }
    };
    let backing = if m.backing.is_empty() {
        "disk".to_string()
    } else {
        m.backing.join(", ")
    };
    format!(
        "fs {} · mkfs {} · mount -o {} · backing {backing}",
        m.fs.join(", "),
        sets(&m.mkfs_opts),
        sets(&m.mount_opts)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_longer_than_a_format_width_is_listed_in_full() {
        // `list --wide` panicked on a label of 65 536 bytes (an imported bundle's).
        assert_eq!(pad("ab", 4), "ab  ");
        assert_eq!(pad("abcdef", 4), "abcdef");
        let huge = "x".repeat(70_000);
        assert_eq!(pad(&huge, 70_000).len(), 70_000);
        assert_eq!(pad("y", 70_000).chars().count(), 70_000);
    }

    #[test]
    fn utc_dates() {
        assert_eq!(fmt_utc_ms(0), "1970-01-01 00:00");
        // 2026-11-29 22:19:56 UTC
        assert_eq!(fmt_utc_ms(1_795_990_796_000), "2026-11-29 22:19");
        assert_eq!(fmt_utc_ms(951_782_400_000), "2000-02-29 00:00");
    }

    #[test]
    fn cut_middle_keeps_both_ends() {
        assert_eq!(cut_middle("6.18.44-fc-v1045", 20), "6.18.44-fc-v1045");
        assert_eq!(cut_middle("6.18.44-fc-v1045-debug", 12), "6.18.…-debug");
        assert_eq!(cut_middle("jbd-sync-writers-2threads", 10), "jbd-…reads");
        assert_eq!(cut_middle("abc", 1), "…");
        assert_eq!(cut_middle("abc", 0), "");
        assert_eq!(cut_middle("ääääää", 5).chars().count(), 5);
    }
}
