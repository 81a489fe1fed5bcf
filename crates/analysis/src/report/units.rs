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
