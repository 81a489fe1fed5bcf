//! `--set key=value`: change any spec field by its preset name, through serde, so every
//! field (present and future) is settable with the same validation as a preset file.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{FlatSpec, Setting, SettingDef, SpecError, Ty, WorkloadKind, WorkloadSpec};

/// A form of the spec a setting is set on by its key: the typed [`WorkloadSpec`], or the
/// flat form a front end edits ([`FlatSpec`]).
pub trait SpecForm: Serialize + DeserializeOwned + Clone {
    /// The kind the form is of.
    fn form_kind(&self) -> WorkloadKind;
}

impl SpecForm for WorkloadSpec {
    fn form_kind(&self) -> WorkloadKind {
        self.kind()
    }
}

impl SpecForm for FlatSpec {
    fn form_kind(&self) -> WorkloadKind {
        self.kind
    }
}

/// Applies one `key=value` (dotted keys reach nested tables: `open_flags.direct=true`).
/// Values are read as TOML scalars when they parse as one (numbers, booleans), else as
/// strings, so `file_size=64M` and `pattern=seq` work unquoted.
pub fn apply_setting<S: SpecForm>(spec: &S, assignment: &str) -> Result<S, SpecError> {
    let Some((key, raw)) = assignment.split_once('=') else {
        return Err(SpecError {
            field: Setting::Set,
            problem: format!("'{assignment}' has no '='"),
            fix: crate::hint!(
                "write ",
                (Setting::Set, "key=value"),
                ", e.g. ",
                (Setting::Set, "threads=4")
            ),
        });
    };
    let key = key.trim();
    let raw = raw.trim();
    let value = parse_scalar(raw);
    // A warm-up of 0 is none: stored unset, as `--warmup 0` stores it.
    let number = value.as_float().or(value.as_integer().map(|i| i as f64));
    if key == super::kinds::common::WARMUP.key && number == Some(0.0) {
        return unset_value(spec, &super::kinds::common::WARMUP);
    }
    let mut table = as_table(spec)?;
    let mut slot = &mut table;
    let parts: Vec<&str> = key.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let Some(tbl) = slot.as_table_mut() else {
            return Err(unknown_key(key));
        };
        if i + 1 == parts.len() {
            tbl.insert((*part).to_string(), value.clone());
            break;
        }
        slot = tbl
            .entry((*part).to_string())
            .or_insert_with(|| toml::Value::Table(Default::default()));
    }
    let updated: S = table.try_into().map_err(|e: toml::de::Error| {
        let msg = e.message().to_string();
        if msg.contains("unknown field") {
            unknown_key(key)
        } else {
            SpecError {
                field: Setting::Set,
                problem: format!("{key}={raw}: {msg}"),
                fix: "check the value's type (number, size like 64M, or a name)".into(),
            }
        }
    })?;
    refuse_foreign(key, updated.form_kind())?;
    Ok(updated)
}

/// A key of a setting the kind does not have: refused, since the typed spec would leave
/// its value behind (`open_flags.dsync` is the row `open_flags`).
fn refuse_foreign(key: &str, kind: WorkloadKind) -> Result<(), SpecError> {
    let Some(table) = super::kind_def(kind) else {
        return Ok(());
    };
    let row = super::all_settings()
        .into_iter()
        .find(|d| key == d.key || key.starts_with(&format!("{}.", d.key)));
    match row {
        Some(d) if table.setting(d.key).is_none() => Err(SpecError {
            field: Setting::Set,
            problem: format!(
                "{key} is a setting of {} runs, not of {} runs",
                super::kinds_with(d.key).join(" and "),
                kind.as_str()
            ),
            fix: match table.instead.iter().find(|(other, ..)| *other == d.key) {
                Some((_, own, value)) => format!("set {} = {value} instead", own.key).into(),
                None => "drop it, or choose the kind first".into(),
            },
        }),
        _ => Ok(()),
    }
}

/// Sets the setting of `def` from its text as a flag or a form gives it (`4k`, `leader`,
/// `true`; a flag set as a comma-separated list of its names, `none` for none), through
/// [`apply_setting`], so the value meets the same checks as a preset line.
/// A warm-up of 0 unsets it (fio's `ramp_time=0`), so a flag can take away a preset's.
pub fn set_value<S: SpecForm>(
    spec: &S,
    def: &'static SettingDef,
    text: &str,
) -> Result<S, SpecError> {
    if def.key == super::kinds::common::WARMUP.key && text.trim().parse::<f64>() == Ok(0.0) {
        return unset_value(spec, def);
    }
    let Ty::FlagSet(names) = def.ty else {
        return apply_setting(spec, &format!("{}={text}", def.key));
    };
    let mut on = Vec::new();
    for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let word = word.to_ascii_lowercase();
        let word = word.trim_start_matches("o_");
        if word == "none" {
            continue;
        }
        match names.iter().find(|n| **n == word) {
            Some(name) => on.push(*name),
            None => {
                return Err(SpecError {
                    field: Setting::Set,
                    problem: format!("{}: unknown name '{word}'", def.key),
                    fix: format!("use {}, comma-separated, or none", names.join(", ")).into(),
                });
            }
        }
    }
    let mut out = spec.clone();
    for name in names {
        out = apply_setting(&out, &format!("{}.{name}={}", def.key, on.contains(name)))?;
    }
    Ok(out)
}

/// `spec` with the optional setting of `def` unset (a duration, a request count).
pub fn unset_value<S: SpecForm>(spec: &S, def: &'static SettingDef) -> Result<S, SpecError> {
    let mut table = as_table(spec)?;
    let mut slot = &mut table;
    let parts: Vec<&str> = def.key.split('.').collect();
    for part in &parts[..parts.len() - 1] {
        match slot.get_mut(*part) {
            Some(next) => slot = next,
            None => return Ok(spec.clone()),
        }
    }
    if let Some(t) = slot.as_table_mut() {
        t.remove(parts[parts.len() - 1]);
    }
    table.try_into().map_err(|e: toml::de::Error| SpecError {
        field: Setting::Field(def),
        problem: e.message().to_string(),
        fix: "set a value instead".into(),
    })
}

/// The spec as a TOML table, as a preset writes it.
fn as_table<S: SpecForm>(spec: &S) -> Result<toml::Value, SpecError> {
    toml::Value::try_from(spec).map_err(|e| SpecError {
        field: Setting::Set,
        problem: format!("cannot represent the spec: {e}"),
        fix: "report this as a bug".into(),
    })
}

fn parse_scalar(raw: &str) -> toml::Value {
    if raw.eq_ignore_ascii_case("none") || raw.is_empty() {
        return toml::Value::String(raw.to_string());
    }
    match format!("v = {raw}").parse::<toml::Table>() {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(raw.into())),
        Err(_) => toml::Value::String(raw.to_string()),
    }
}

fn unknown_key(key: &str) -> SpecError {
    SpecError {
        field: Setting::Set,
        problem: format!("unknown setting '{key}'"),
        fix: format!("use a key of the workload table: {}", settable_keys()).into(),
    }
}

/// Every key `--set` takes, from the settings tables (a flag set by its names:
/// `open_flags.{sync,dsync,direct}`).
pub fn settable_keys() -> String {
    let mut keys: Vec<String> = Vec::new();
    for d in super::all_settings() {
        let key = match d.ty {
            Ty::FlagSet(names) => format!("{}.{{{}}}", d.key, names.join(",")),
            _ => d.key.to_string(),
        };
        // A fileserver's clients are its threads: one key.
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Pattern, SyncMethod};

    #[test]
    fn sets_numbers_sizes_names_and_nested_flags() {
        let spec = WorkloadSpec::default();
        let spec = apply_setting(&spec, "threads=4").unwrap();
        let spec = apply_setting(&spec, "file_size=8M").unwrap();
        let spec = apply_setting(&spec, "pattern=seq").unwrap();
        let spec = apply_setting(&spec, "sync=fdatasync").unwrap();
        let spec = apply_setting(&spec, "open_flags.direct=true").unwrap();
        let spec = apply_setting(&spec, "duration_s=2.5").unwrap();
        assert_eq!(spec.common.threads, 4);
        assert_eq!(spec.flat().file_size, 8 << 20);
        assert_eq!(spec.flat().pattern, Pattern::Seq);
        assert_eq!(spec.flat().sync, SyncMethod::Fdatasync);
        assert!(spec.flat().open_flags.direct);
        assert_eq!(spec.common.duration_s, Some(2.5));
    }

    #[test]
    fn bad_settings_are_explained() {
        let spec = WorkloadSpec::default();
        assert!(
            apply_setting(&spec, "threads")
                .unwrap_err()
                .fix
                .to_string()
                .contains("key=value")
        );
        let e = apply_setting(&spec, "thread=4").unwrap_err();
        assert!(e.problem.contains("unknown setting"), "{e}");
        // The help lists every kind's keys, from the tables.
        let fix = e.fix.to_string();
        for key in [
            "threads",
            "open_flags.{sync,dsync,direct}",
            "grouplog.strategy",
            "smallfiles.unlink",
        ] {
            assert!(fix.contains(key), "{key}: {fix}");
        }
        let e = apply_setting(&spec, "threads=many").unwrap_err();
        assert!(e.problem.contains("threads=many"), "{e}");
        let e = apply_setting(&spec, "pattern=zigzag").unwrap_err();
        assert!(e.problem.contains("zigzag"), "{e}");
    }
}
