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
            let mut spec = base.clone();
            for setting in &v.set {
                spec = apply_setting(&spec, setting)?;
            }
            spec.validate()?;
            for point in &sweep_values {
                apply_setting(&spec, point)?.validate()?;
            }
            out.push((v.label.clone(), spec));
        }
        Ok(out)
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
        let bad_set = plan(None, &[("a", &["no_such_field=1"])]);
        assert!(bad_set.variant_specs(&WorkloadSpec::default()).is_err());
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
