//! A preset file's own fields held to what the built-in presets have: its name (stored
//! with every run of it and shown wherever runs are listed), its published figures (set
//! beside measured values) and its scale fields. The workload, matrix, watch and
//! requirement checks are [`super::Preset::from_toml`]'s.

use super::{MAX_THREADS, Preset, PresetError, check_text};

/// Longest preset name.
pub const MAX_PRESET_NAME_CHARS: usize = 64;

/// Checks a parsed preset's name, published figures and scale fields; `origin` names the
/// file.
pub(super) fn check_identity(preset: &Preset, origin: &str) -> Result<(), PresetError> {
    let fail = |field: &str, problem: String, fix: &str| {
        Err(PresetError::Scale(format!(
            "preset file {origin}: {field} {problem}; {fix}"
        )))
    };
    let name = &preset.name;
    let name_ok = (1..=MAX_PRESET_NAME_CHARS).contains(&name.chars().count())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.')
        && !name.ends_with(".toml");
    if !name_ok {
        return fail(
            "name",
            format!("'{}' is not a preset name", name.escape_debug()),
            "use 1 to 64 letters, digits, '-', '_' or '.' (not first), not ending in .toml \
             (e.g. name = \"my-nvme-check\")",
        );
    }
    for (i, f) in preset.published.iter().enumerate() {
        let field = format!("[[published]] {}", i + 1);
        let short = |v: &str| {
            !v.is_empty()
                && v.len() <= 64
                && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        if !short(&f.metric) {
            return fail(
                &format!("{field} metric"),
                format!("'{}' is not a metric name", f.metric.escape_debug()),
                "use a metric key of the lab (iops, mib_per_sec, wall_s, sync_p99_us...)",
            );
        }
        if !(f.value.is_finite() && f.value >= 0.0) {
            return fail(
                &format!("{field} value"),
                format!("{} is not a figure", f.value),
                "give the published number, 0 or more",
            );
        }
        for (what, text) in [
            ("side", &f.side),
            ("unit", &f.unit),
            ("as_published", &f.as_published),
        ] {
            if let Err(e) = check_text(what, text) {
                return fail(&format!("{field} {what}"), e.problem, &e.fix);
            }
        }
        if f.side.trim().is_empty() || f.side.chars().count() > 64 {
            return fail(
                &format!("{field} side"),
                format!("'{}' is not a side", f.side),
                "use before or after (or a configuration's name of at most 64 characters)",
            );
        }
        if let Some(t) = f.threads.filter(|t| *t == 0 || *t > MAX_THREADS) {
            return fail(
                &format!("{field} threads"),
                format!("{t} is not a thread count"),
                &format!("use 1 to {MAX_THREADS}, the count the figure was published at"),
            );
        }
    }
    let fields = &preset.scale.fields;
    if let Some(dup) = fields
        .iter()
        .enumerate()
        .find(|(i, f)| fields[..*i].contains(f))
    {
        return fail(
            "scale.fields",
            format!("names '{}' twice", dup.1),
            "list each field once",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::Preset;

    /// A preset file: a tiny valid workload plus `extra` TOML at the top level and
    /// `published` tables.
    fn preset(name: &str, published: &str, scale: &str) -> Result<Preset, String> {
        let text = format!(
            "name = \"{name}\"\ntitle = \"t\"\ndescription = \"d\"\n\
             [workload]\nkind = \"fileio\"\nthreads = 1\nblock_size = \"4k\"\nfile_size = \"64k\"\n\
             [scale]\nfields = [{scale}]\nquick = 0.5\n{published}"
        );
        Preset::from_toml(&text, "t.toml").map_err(|e| e.to_string())
    }

    const FIGURE: &str = "[[published]]\nside = \"before\"\nmetric = \"iops\"\nvalue = 10.0\nunit = \"writes/s\"\nas_published = \"10 IOPS\"\n";

    #[test]
    fn a_fine_file_loads() {
        preset("my-check.v2", FIGURE, "\"file_size\"").unwrap();
    }

    #[test]
    fn bad_names_figures_and_scale_fields_are_refused_by_field() {
        let long = "x".repeat(65);
        for (name, said) in [
            ("", "name '' is not a preset name"),
            (long.as_str(), "name 'xxxx"),
            ("../../etc/passwd", "name '../../etc/passwd'"),
            ("evil\\u001b[31m", "name 'evil\\u{1b}[31m'"),
            ("x.toml", "name 'x.toml'"),
        ] {
            let e = preset(name, "", "").unwrap_err();
            assert!(e.contains(said), "{name:?}: {e}");
        }
        for (change, said) in [
            (("iops", "nonsense metric"), "[[published]] 1 metric"),
            (
                ("value = 10.0", "value = nan"),
                "[[published]] 1 value NaN is not a figure",
            ),
            (
                ("value = 10.0", "value = -5.0"),
                "[[published]] 1 value -5 is not a figure",
            ),
            (("value = 10.0", "value = inf"), "[[published]] 1 value inf"),
            (("\"before\"", "\"\""), "[[published]] 1 side"),
            (
                ("unit = \"writes/s\"", "unit = \"\\u001b]0;x\""),
                "[[published]] 1 unit",
            ),
            (
                (
                    "as_published = \"10 IOPS\"",
                    "as_published = \"10 IOPS\"\nthreads = 0",
                ),
                "[[published]] 1 threads 0",
            ),
        ] {
            let figure = FIGURE.replace(change.0, change.1);
            let e = preset("p", &figure, "").unwrap_err();
            assert!(e.contains(said), "{change:?}: {e}");
        }
        let e = preset("p", "", "\"file_size\", \"file_size\"").unwrap_err();
        assert!(e.contains("scale.fields names 'file_size' twice"), "{e}");
    }
}
