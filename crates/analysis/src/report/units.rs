//! Figures in the unit that reads best, shared by every text the reports write.

/// A latency in the unit that keeps 3–4 significant digits: `850 ns`, `12.3 µs`, `4.01 ms`, `1.20 s`.
pub fn fmt_ns(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.0} ns")
    } else if ns < 1_000_000.0 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1_000_000_000.0 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// A throughput in MiB/s or KiB/s.
pub fn fmt_bytes_per_sec(mib_per_sec: f64) -> String {
    if mib_per_sec >= 1.0 {
        format!("{mib_per_sec:.2} MiB/s")
    } else {
        format!("{:.1} KiB/s", mib_per_sec * 1024.0)
    }
}

/// A metric value in its unit, as every table shows it: latencies and durations in the unit
/// that keeps 3–4 significant digits (`221 ns`, `10.31 ms`), throughput in MiB/s or KiB/s,
/// counts with grouped digits from 1000 (`12 345 writes/s`), else 3 significant digits.
pub fn fmt_metric(v: f64, unit: &str) -> String {
    match unit {
        "ns" => fmt_ns(v),
        "µs" => fmt_ns(v * 1e3),
        "ms" => fmt_ns(v * 1e6),
        "s" => fmt_ns(v * 1e9),
        "MiB/s" => fmt_bytes_per_sec(v),
        "" => trim_num(v),
        u if v.abs() >= 1000.0 => format!("{} {u}", grouped(v)),
        u => format!("{} {u}", trim_num(v)),
    }
}

/// A value in the unit it was given in (a table whose rows are named `sync_p99_us` keeps
/// µs), readable: grouped whole numbers from 1000 (`18 072 µs`), else 4 significant digits
/// without trailing zeros (`0.221 µs`, `146.4 µs`); MiB/s as [`fmt_bytes_per_sec`].
pub fn fmt_in_unit(v: f64, unit: &str) -> String {
    let number = if !v.is_finite() {
        format!("{v}")
    } else if v.abs() >= 1000.0 {
        grouped(v)
    } else if v == 0.0 {
        "0".to_string()
    } else {
        let decimals = (3 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
        let s = format!("{v:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    match unit {
        "MiB/s" => fmt_bytes_per_sec(v),
        "" => number,
        u => format!("{number} {u}"),
    }
}

/// A plain number with up to 3 significant digits and no trailing zeros.
pub fn trim_num(v: f64) -> String {
    let a = v.abs();
    let s = if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A value label without its unit: grouped digits from 100 up (`12 345`), else 3
/// significant digits (`0.221`, `42.5`).
pub fn fmt_plain(v: f64) -> String {
    if v.abs() >= 100.0 {
        grouped(v)
    } else {
        trim_num(v)
    }
}

/// Digits grouped by spaces: `123 456` (the image's bundled fonts lack a thin space).
pub fn grouped(v: f64) -> String {
    let s = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(ch);
    }
    if v < 0.0 { format!("-{out}") } else { out }
}

/// A time still to wait, rounded as a progress line says it: `about 40 s left`,
/// `about 2 min 10 s left`, `about 1 h 5 min left`.
pub fn fmt_left(left: std::time::Duration) -> String {
    let s = left.as_secs_f64().round() as u64;
    let said = match s {
        0 => return "under 1 s left".into(),
        1..=59 => format!("{s} s"),
        60..=3599 if s.is_multiple_of(60) => format!("{} min", s / 60),
        60..=3599 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s % 3600 / 60),
    };
    format!("about {said} left")
}

/// A value with two decimals, or four significant digits below 1 (0.0123 s, not 0.00),
/// right-aligned in 10 characters.
pub fn num(v: f64) -> String {
    if v != 0.0 && v.abs() < 1.0 {
        let decimals = (3 - v.abs().log10().floor() as i32).clamp(2, 9) as usize;
        format!("{v:>10.decimals$}")
    } else {
        format!("{v:>10.2}")
    }
}

/// Text for a Markdown cell or line: `|` escaped (tables), and `&`, `<`, `>` as entities so
/// a title or label holding HTML (`<script>`, `<img onerror=…>`) is shown, never rendered.
pub(crate) fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_left_is_said_in_whole_units() {
        use std::time::Duration;
        assert_eq!(fmt_left(Duration::from_millis(300)), "under 1 s left");
        assert_eq!(fmt_left(Duration::from_secs(40)), "about 40 s left");
        assert_eq!(fmt_left(Duration::from_secs(130)), "about 2 min 10 s left");
        assert_eq!(fmt_left(Duration::from_secs(120)), "about 2 min left");
        assert_eq!(fmt_left(Duration::from_secs(3900)), "about 1 h 5 min left");
    }

    #[test]
    fn a_metric_reads_in_the_unit_that_fits_it() {
        assert_eq!(fmt_metric(0.221, "µs"), "221 ns");
        assert_eq!(fmt_metric(10313.73, "µs"), "10.31 ms");
        assert_eq!(fmt_metric(0.001062, "s"), "1.06 ms");
        assert_eq!(fmt_metric(628.1, "s"), "628.10 s");
        assert_eq!(fmt_metric(371.2, "ms"), "371.20 ms");
        assert_eq!(fmt_metric(0.5, "MiB/s"), "512.0 KiB/s");
        assert_eq!(fmt_metric(60240.96, "writes/s"), "60 241 writes/s");
        assert_eq!(fmt_metric(29.21, "events"), "29.2 events");
        assert_eq!(fmt_metric(1.25, ""), "1.25");
        assert_eq!(grouped(-1234567.0), "-1 234 567");
        assert_eq!(fmt_in_unit(18_071.55, "µs"), "18 072 µs");
        assert_eq!(fmt_in_unit(0.2210, "µs"), "0.221 µs");
        assert_eq!(fmt_in_unit(146.44, "µs"), "146.4 µs");
        assert_eq!(fmt_in_unit(0.002671, "s"), "0.002671 s");
        assert_eq!(fmt_in_unit(0.99, ""), "0.99");
        assert_eq!(fmt_in_unit(0.0, "µs"), "0 µs");
    }
}
