//! The values of a bundle held to what fsynclab itself stores (see [`super::bundle_merge`]):
//! each value against its column's type and range, each run's workload against what every
//! run ever had, and text against the rules `run --label` applies.

use rusqlite::types::Value;

use super::bundle::LOCAL_RUN_COLUMNS;
use super::bundle::{BundleError, Column};

/// 9999-12-31T23:59:59.999Z in milliseconds since the epoch.
const MAX_TIME_MS: i64 = 253_402_300_799_999;

/// Checks a bundle value against the column's declared type; integers are accepted for
/// REAL columns (SQLite stores 2.0 as 2 sometimes).
pub(super) fn checked(
    table: &'static str,
    col: &Column,
    run: i64,
    value: Value,
) -> Result<Value, BundleError> {
    let bad = |problem: String| BundleError::BadValue {
        table,
        column: col.name.clone(),
        run,
        problem,
    };
    let what = |v: &Value| match v {
        Value::Null => "NULL",
        Value::Integer(_) => "an integer",
        Value::Real(_) => "a real number",
        Value::Text(_) => "text",
        Value::Blob(_) => "a blob",
    };
    match (col.decl.as_str(), value) {
        (_, Value::Null) if col.not_null => Err(bad("is NULL where a value is required".into())),
        (_, Value::Null) => Ok(Value::Null),
        // Every INTEGER column holds a count, nanoseconds, a time, an id or a flag; the
        // exporting machine's own columns are cleared, whatever they hold.
        ("INTEGER", Value::Integer(i))
            if i < 0 && !(table == "runs" && LOCAL_RUN_COLUMNS.contains(&col.name.as_str())) =>
        {
            Err(bad(format!(
                "is negative ({i}) where a count, duration, time or id belongs"
            )))
        }
        // A time in milliseconds past the year 9999 is no time a run was made or updated.
        ("INTEGER", Value::Integer(i)) if col.name.ends_with("_at_ms") && i > MAX_TIME_MS => {
            Err(bad(format!("is {i}, a time after the year 9999")))
        }
        ("INTEGER", v @ Value::Integer(_)) => Ok(v),
        // Every REAL column is a rate, a ratio or a scale: finite, never negative; a preset
        // scale within what `--scale` takes.
        ("REAL", Value::Real(r)) if !(r.is_finite() && r >= 0.0) => Err(bad(format!(
            "is {r} where a finite figure of 0 or more belongs"
        ))),
        ("REAL", Value::Real(r)) if col.name == "preset_scale" && !(r > 0.0 && r <= 100.0) => Err(
            bad(format!("is {r}; a preset scale is above 0 and at most 100")),
        ),
        ("REAL", v @ Value::Real(_)) => Ok(v),
        #[allow(clippy::cast_precision_loss)] // small integers stored for a REAL
        ("REAL", Value::Integer(i)) => checked(table, col, run, Value::Real(i as f64)),
        ("TEXT", v @ Value::Text(_)) => Ok(v),
        ("BLOB", v @ Value::Blob(_)) => Ok(v),
        (decl, v) => Err(bad(format!("holds {} where {decl} belongs", what(&v)))),
    }
}

/// Why a bundle run's workload is one no run can have made, for the settings that came with
/// their checks (issue 35's `sync_only` and `sync_file_range+fdatasync`: no release ever ran
/// them unchecked). Specs stored before a check was tightened are not judged by it.
pub(super) fn impossible_workload(spec: &crate::spec::WorkloadSpec) -> Option<String> {
    if let Some(broken) = broken_basics(spec) {
        return Some(format!("is a workload no run can have made ({broken})"));
    }
    let sync_only = spec.kind.params().syncs_unchanged_files();
    let both = spec.sync() == Some(crate::spec::SyncMethod::SyncFileRangeFdatasync);
    if !(sync_only || both) {
        return None;
    }
    spec.validate()
        .err()
        .map(|e| format!("is a workload no run can have made ({e})"))
}

/// What every run ever stored had, whatever later checks were added: 1 to
/// [`crate::spec::MAX_THREADS`] threads, a sampling interval, a positive finite duration and
/// a finite warm-up when set, and a block size.
fn broken_basics(spec: &crate::spec::WorkloadSpec) -> Option<String> {
    let c = &spec.common;
    let max = crate::spec::MAX_THREADS;
    if c.threads == 0 || c.threads > max {
        return Some(format!("threads {} (runs have 1 to {max})", c.threads));
    }
    if c.interval_ms == 0 {
        return Some("interval_ms 0".into());
    }
    if let Some(d) = c.duration_s.filter(|d| !(d.is_finite() && *d > 0.0)) {
        return Some(format!("duration_s {d}"));
    }
    if let Some(w) = c.warmup_s.filter(|w| !(w.is_finite() && *w >= 0.0)) {
        return Some(format!("warmup_s {w}"));
    }
    if spec.u64_at("block_size") == Some(0) {
        return Some("block_size 0".into());
    }
    None
}

/// Longest target path kept on import (the system's path limit).
pub(super) const MAX_TARGET_BYTES: usize = 4096;

/// Holds a text value to the rules `run --label` applies: control characters escaped
/// (`\u001b`), then cut to `max` bytes at a character boundary. True when it changed.
pub(super) fn sanitise(value: &mut Value, max: usize) -> bool {
    let Value::Text(text) = value else {
        return false;
    };
    let mut clean = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || crate::spec::is_unsafe_char(c) {
            clean.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            clean.push(c);
        }
    }
    if clean.len() > max {
        let mut end = max;
        while !clean.is_char_boundary(end) {
            end -= 1;
        }
        clean.truncate(end);
    }
    if clean == *text {
        return false;
    }
    *text = clean;
    true
}

#[cfg(test)]
mod sanitise_tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_long_text_cut() {
        let mut v = Value::Text("a\u{1b}]0;x\u{7}b\n".into());
        assert!(sanitise(&mut v, 256));
        assert_eq!(v, Value::Text("a\\u001b]0;x\\u0007b\\u000a".into()));
        let mut long = Value::Text("é".repeat(200));
        assert!(sanitise(&mut long, 256));
        let Value::Text(t) = long else { panic!() };
        assert_eq!(t.len(), 256);
        let mut fine = Value::Text("nossd".into());
        assert!(!sanitise(&mut fine, 256));
        assert!(!sanitise(&mut Value::Null, 256));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_of_the_wrong_type_is_named() {
        let col = Column {
            name: "wall_ns".into(),
            decl: "INTEGER".into(),
            not_null: false,
        };
        let err = checked("runs", &col, 4, Value::Text("x".into())).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the bundle's runs.wall_ns (run 4 in the bundle) holds text where INTEGER belongs; \
             nothing was imported"
        );
        assert_eq!(checked("runs", &col, 4, Value::Null).unwrap(), Value::Null);
        let real = Column {
            name: "iops".into(),
            decl: "REAL".into(),
            not_null: true,
        };
        assert_eq!(
            checked("runs", &real, 1, Value::Integer(2)).unwrap(),
            Value::Real(2.0)
        );
        assert!(checked("runs", &real, 1, Value::Null).is_err());
    }

    #[test]
    fn a_negative_count_is_named_by_its_column_and_a_local_column_is_let_through() {
        let col = |name: &str| Column {
            name: name.into(),
            decl: "INTEGER".into(),
            not_null: false,
        };
        let err = checked("runs", &col("syncs"), 3, Value::Integer(-1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the bundle's runs.syncs (run 3 in the bundle) is negative (-1) where a count, \
             duration, time or id belongs; nothing was imported"
        );
        assert!(checked("intervals", &col("writes"), 3, Value::Integer(-5)).is_err());
        assert_eq!(
            checked("runs", &col("syncs"), 3, Value::Integer(0)).unwrap(),
            Value::Integer(0)
        );
        // Cleared on import: a wrapped inode number is not the bundle's fault.
        assert!(checked("runs", &col("target_ino"), 3, Value::Integer(-7)).is_ok());
        let far = checked("runs", &col("created_at_ms"), 3, Value::Integer(i64::MAX));
        assert!(
            far.unwrap_err()
                .to_string()
                .contains("a time after the year 9999")
        );
    }

    #[test]
    fn a_figure_that_is_negative_infinite_or_an_impossible_scale_is_refused() {
        let col = |name: &str| Column {
            name: name.into(),
            decl: "REAL".into(),
            not_null: false,
        };
        for bad in [-5.0, f64::INFINITY, f64::NAN] {
            assert!(
                checked("runs", &col("iops"), 1, Value::Real(bad)).is_err(),
                "{bad}"
            );
        }
        assert!(checked("runs", &col("iops"), 1, Value::Integer(-5)).is_err());
        for bad in [0.0, 101.0] {
            let e = checked("runs", &col("preset_scale"), 1, Value::Real(bad)).unwrap_err();
            assert!(e.to_string().contains("runs.preset_scale"), "{e}");
        }
        assert!(checked("runs", &col("preset_scale"), 1, Value::Real(0.05)).is_ok());
        assert!(checked("intervals", &col("inflight"), 1, Value::Real(0.0)).is_ok());
    }
}
