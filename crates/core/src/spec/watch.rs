//! A preset's "what to watch": the kernel-trace figures (see `metrics::KernelTrace` and
//! docs/KERNEL-TRACE.md) that bear on its seed's patch, each with why. Checked against an
//! allow-list of the figure names, so a preset cannot name a figure that does not exist.

use serde::{Deserialize, Serialize};

/// One `[[watch]]` entry of a preset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Watch {
    /// A `kernel_trace` figure name (one of [`WATCHABLE`]).
    pub metric: String,
    /// What it shows about the patch, one sentence.
    pub why: String,
}

/// The `kernel_trace` figures a preset may name.
pub const WATCHABLE: &[&str] = &[
    "block_flushes",
    "fua_writes",
    "flush_lat_us",
    "journal_commits",
    "commits_per_sync",
    "handles_per_commit",
    "blocks_per_commit",
    "commit_us",
    "log_forces",
    "log_forces_per_sync",
    "log_writes",
    "log_commits",
    "transaction_commits",
    "dstate_us_per_sync",
];

/// Longest `why`, in characters.
pub const MAX_WHY_CHARS: usize = 400;

/// Checks every entry: a known figure, a non-empty `why` of printable text.
pub fn check_watch(items: &[Watch]) -> Result<(), String> {
    for (n, item) in items.iter().enumerate() {
        let at = n + 1;
        if !WATCHABLE.contains(&item.metric.as_str()) {
            return Err(format!(
                "[[watch]] {at}: '{}' is not a kernel_trace figure; use one of {}",
                item.metric.escape_debug(),
                WATCHABLE.join(", ")
            ));
        }
        let why = item.why.trim();
        if why.is_empty() || why.chars().count() > MAX_WHY_CHARS {
            return Err(format!(
                "[[watch]] {at} ({}): 'why' must say in 1 to {MAX_WHY_CHARS} characters what the figure shows",
                item.metric
            ));
        }
        super::check_text("why", why).map_err(|e| format!("[[watch]] {at}: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch(metric: &str, why: &str) -> Watch {
        Watch {
            metric: metric.into(),
            why: why.into(),
        }
    }

    #[test]
    fn only_known_figures_with_a_reason() {
        assert!(check_watch(&[watch("handles_per_commit", "batching")]).is_ok());
        let e = check_watch(&[watch("ok", "x"), watch("iops", "x")]).unwrap_err();
        assert!(e.contains("[[watch]] 1") && e.contains("'ok'"), "{e}");
        let e = check_watch(&[watch("log_forces", " ")]).unwrap_err();
        assert!(e.contains("'why'"), "{e}");
        let e = check_watch(&[watch("log_forces", &"x".repeat(401))]).unwrap_err();
        assert!(e.contains("400"), "{e}");
        assert!(check_watch(&[watch("log_forces", "a\u{202e}b")]).is_err());
        assert!(check_watch(&[watch("log_forces\n", "x")]).is_err());
    }
}
