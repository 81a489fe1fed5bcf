//! The CLI's own text about runs and presets: it shows `fsynclab` command lines and flags,
//! so it lives here rather than in the library's `report`.

use std::fmt::Write as _;

use fsynclab::report::matrix_options_line;
use fsynclab::spec::Preset;

/// What `fsynclab list` says when there are no runs.
pub const NO_RUNS_HINT: &str = "no runs stored yet; start one with `fsynclab run --preset btrfs-log-commit --scale 0.05 --target DIR`";

/// The line naming a run's directory while it still exists (or `None`).
pub fn run_dir_line(dir: &fsynclab::store::RunDir, running: bool) -> Option<String> {
    let path = dir.path();
    std::fs::symlink_metadata(&path).ok()?;
    Some(if dir.keep_files {
        format!(
            "directory {} (files kept with --keep)",
            fsynclab::spec::shown_path(&path)
        )
    } else if running {
        format!(
            "directory {} (in use by the run)",
            fsynclab::spec::shown_path(&path)
        )
    } else {
        format!(
            "directory {} is still there; `fsynclab clean` removes it",
            fsynclab::spec::shown_path(&path)
        )
    })
}

/// `fsynclab presets NAME`.
pub fn preset_text(p: &Preset) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} — {}", p.name, p.title);
    if let Some(t) = &p.seed_title {
        let _ = writeln!(out, "seed: {t} ({})", p.seed.as_deref().unwrap_or("-"));
    }
    let _ = writeln!(out, "\n{}\n", p.description.trim());
    let _ = writeln!(out, "workload (full scale): {}", p.workload.describe());
    if let Ok(q) = p.scaled(p.scale.quick) {
        let _ = writeln!(out, "quick (--scale {}): {}", p.scale.quick, q.describe());
    }
    if !p.watch.is_empty() {
        let _ = writeln!(out, "\nwhat to watch (kernel trace, docs/KERNEL-TRACE.md):");
        for w in &p.watch {
            let _ = writeln!(out, "  {:<20} {}", w.metric, w.why);
        }
    }
    if !p.published.is_empty() {
        let _ = writeln!(out, "\npublished figures:");
        for f in &p.published {
            let _ = writeln!(
                out,
                "  {:<8} {:<12} {:>10} {:<6} ({})",
                f.side, f.metric, f.value, f.unit, f.as_published
            );
        }
    }
    if let Some(plan) = &p.series {
        let _ = writeln!(
            out,
            "\nseries (fsynclab run --preset {} --series){}:",
            p.name,
            plan.sweep
                .as_deref()
                .map(|s| format!(", each over {s}"))
                .unwrap_or_default()
        );
        let width = plan.variants.iter().map(|v| v.label.chars().count()).max();
        for v in &plan.variants {
            let set = match v.set.is_empty() {
                true => "(the preset's own workload)".to_string(),
                false => v.set.join(" "),
            };
            let _ = writeln!(out, "  {:<w$}  {set}", v.label, w = width.unwrap_or(0));
        }
    }
    if p.published.is_empty() {
        let why = p
            .published_note
            .as_deref()
            .unwrap_or("no benchmark figures were published for it");
        let _ = writeln!(out, "\nno published figures: {}", why.trim());
    }
    if !p.matrix.is_empty() {
        let _ = writeln!(
            out,
            "\nsuggested matrices (fsynclab matrix --preset {} --suggested N):",
            p.name
        );
        for (i, m) in p.matrix.iter().enumerate() {
            let _ = writeln!(out, "  {}. {} — {}", i + 1, m.title, m.why);
            let _ = writeln!(out, "     {}", matrix_options_line(m));
        }
    }
    if let Some(o) = &p.original {
        let _ = writeln!(out, "\noriginal benchmark:\n{}", o.trim_end());
    }
    let _ = writeln!(out, "\n--scale multiplies: {}", p.scale.fields.join(", "));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preset_text_shows_each_matrix_with_its_exact_options() {
        let preset = fsynclab::spec::load_preset("btrfs-log-commit").unwrap();
        let text = preset_text(&preset);
        assert!(
            text.contains(
                "fs btrfs · mkfs (defaults) · mount -o \"nossd\" | \"ssd\" · backing disk"
            ),
            "{text}"
        );
        assert!(
            text.contains("mount -o \"logbsize=32k\" | \"logbsize=256k\""),
            "{text}"
        );
        let fsmark = fsynclab::spec::load_preset("xfs-cil-fsmark").unwrap();
        assert!(
            preset_text(&fsmark).contains("mount -o \"logbsize=32k\" | (defaults)"),
            "{}",
            preset_text(&fsmark)
        );
    }
}
