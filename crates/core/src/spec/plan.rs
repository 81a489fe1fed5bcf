//! A preset's suggested series: the variants a seed thread compared (strategies, sync
//! methods, kernels' behaviours reproduced by a setting), each run over a swept field —
//! "solo / leader / adaptive / delay:500 over threads 1..16" as one command.

use serde::{Deserialize, Serialize};

use super::{Setting, SpecError, WorkloadSpec, apply_setting};

/// One labelled variant: settings applied on top of the preset's (scaled) workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// Label given to the variant's runs (`solo`, `fdatasync`...).
    pub label: String,
    /// `key=value` settings, as `--set` takes them.
    #[serde(default)]
    pub set: Vec<String>,
}

/// The series a preset suggests (`fsynclab run --preset NAME --series`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeriesPlan {
    /// `field=v1,v2,...` swept within every variant (e.g. `threads=1,2,4,8,16`).
    #[serde(default)]
    pub sweep: Option<String>,
    /// The variants compared, in order; at least one.
    pub variants: Vec<Variant>,
}

impl SeriesPlan {
    /// Refuses a `base` that changes a setting the variants set, against the preset's own
    /// workload `preset`: each variant that sets it would override the change, and a variant
    /// that does not (fsync-methods' `fdatasync` is the preset's own sync) would run it under
    /// its own label.
    pub fn check_unvaried(
        &self,
        base: &WorkloadSpec,
        preset: &WorkloadSpec,
    ) -> Result<(), SpecError> {
        let (ours, theirs) = (base.flat().full_json(), preset.flat().full_json());
        let keys = self
            .variants
            .iter()
            .flat_map(|v| &v.set)
            .filter_map(|a| a.split_once('=').map(|(k, _)| k.trim()));
        for key in keys {
            let at = format!("/{}", key.replace('.', "/"));
            if ours.pointer(&at) == theirs.pointer(&at) {
                continue;
            }
            let labels: Vec<&str> = self.variants.iter().map(|v| v.label.as_str()).collect();
            // `open_flags.dsync` is the row `open_flags`.
            let field = super::all_settings()
                .into_iter()
                .find(|d| key == d.key || key.starts_with(&format!("{}.", d.key)))
                .map_or(Setting::Series, Setting::Field);
            return Err(SpecError {
                field,
                problem: format!(
                    "the series sets {key} per variant ({}), so a change of it would be \
                     overridden or run under another variant's label",
                    labels.join(", ")
                ),
                fix: crate::hint!(
                    "leave ",
                    field,
                    " as the preset has it, or run without ",
                    Setting::Series
                ),
            });
        }
        Ok(())
    }

    /// The workload of every variant, validated (with every sweep value) so a broken plan
    /// fails before anything runs.
    pub fn variant_specs(
        &self,
        base: &WorkloadSpec,
    ) -> Result<Vec<(String, WorkloadSpec)>, SpecError> {
        if self.variants.is_empty() {
            return Err(SpecError {
                field: Setting::Series,
                problem: "a series without variants".into(),
                fix: "list at least one [[series.variants]] with a label".into(),
            });
        }
        let sweep_values: Vec<String> = match &self.sweep {
            None => Vec::new(),
            Some(text) => {
                let (field, values) = text.split_once('=').ok_or_else(|| SpecError {
                    field: Setting::SeriesSweep,
                    problem: format!("'{text}' has no '='"),
                    fix: "write field=v1,v2,... e.g. threads=1,2,4,8,16".into(),
                })?;
                values
                    .split(',')
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .map(|v| format!("{}={v}", field.trim()))
                    .collect()
            }
        };
        let mut out = Vec::with_capacity(self.variants.len());
        for v in &self.variants {
            let spec = Self::variant_spec(v, base, &sweep_values).map_err(|e| SpecError {
                problem: format!("series variant '{}': {}", v.label, e.problem),
                ..e
            })?;
            out.push((v.label.clone(), spec));
        }
        Ok(out)
    }

    /// One variant's workload, checked at every sweep value.
    fn variant_spec(
        v: &Variant,
        base: &WorkloadSpec,
        sweep_values: &[String],
    ) -> Result<WorkloadSpec, SpecError> {
        let mut spec = base.clone();
        for setting in &v.set {
            spec = apply_setting(&spec, setting)?;
        }
        spec.validate()?;
        for point in sweep_values {
            apply_setting(&spec, point)?.validate()?;
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(sweep: Option<&str>, sets: &[(&str, &[&str])]) -> SeriesPlan {
        SeriesPlan {
            sweep: sweep.map(str::to_string),
            variants: sets
                .iter()
                .map(|(label, set)| Variant {
                    label: label.to_string(),
                    set: set.iter().map(|s| s.to_string()).collect(),
                })
                .collect(),
        }
    }

    #[test]
    fn a_change_of_what_the_variants_set_is_refused() {
        let p = plan(
            None,
            &[("fdatasync", &[]), ("o_dsync", &["open_flags.dsync=true"])],
        );
        let preset = WorkloadSpec::default();
        assert_eq!(p.check_unvaried(&preset, &preset), Ok(()));
        let threads = apply_setting(&preset, "threads=4").unwrap();
        assert_eq!(p.check_unvaried(&threads, &preset), Ok(()));
        let dsync = apply_setting(&preset, "open_flags.dsync=true").unwrap();
        let e = p.check_unvaried(&dsync, &preset).unwrap_err();
        assert_eq!(e.field.key(), "open_flags");
        assert!(e.problem.contains("fdatasync, o_dsync"), "{e}");
        // Another flag of the same row is not varied.
        let direct = apply_setting(&preset, "open_flags.direct=true").unwrap();
        assert_eq!(p.check_unvaried(&direct, &preset), Ok(()));
    }

    #[test]
    fn variants_apply_their_settings() {
        let p = plan(
            Some("threads=1,2"),
            &[
                ("fsync", &["sync=fsync"]),
                ("dsync", &["sync=none", "open_flags.dsync=true"]),
            ],
        );
        let specs = p.variant_specs(&WorkloadSpec::default()).unwrap();
        assert_eq!(specs[0].0, "fsync");
        assert!(specs[1].1.open_flags().dsync);
        assert_eq!(specs[1].1.sync(), Some(crate::spec::SyncMethod::None));
    }

    #[test]
    fn broken_plans_are_refused_before_running() {
        assert!(
            plan(None, &[])
                .variant_specs(&WorkloadSpec::default())
                .is_err()
        );
        let bad_value = plan(Some("threads=1,0"), &[("a", &[])]);
        assert_eq!(
            bad_value
                .variant_specs(&WorkloadSpec::default())
                .unwrap_err()
                .field
                .key(),
            "threads"
        );
        let bad_set = plan(None, &[("ok", &[]), ("b", &["no_such_field=1"])]);
        let e = bad_set.variant_specs(&WorkloadSpec::default()).unwrap_err();
        assert!(
            e.problem.starts_with("series variant 'b': "),
            "{}",
            e.problem
        );
        let no_eq = plan(Some("threads"), &[("a", &[])]);
        assert_eq!(
            no_eq
                .variant_specs(&WorkloadSpec::default())
                .unwrap_err()
                .field
                .key(),
            "series.sweep"
        );
    }
}
