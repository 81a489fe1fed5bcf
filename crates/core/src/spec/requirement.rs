//! A preset's published requirement: a threshold a documented check holds a run to (etcd:
//! "the 99th percentile of fdatasync should be less than 10 ms"), shown as pass or fail
//! beside the run it applies to.

use serde::{Deserialize, Serialize};

/// The metrics a requirement may name (catalogue keys; the analysis crate checks they are in
/// its catalogue).
pub const REQUIRABLE: &[&str] = &[
    "iops",
    "durable_ops_per_sec",
    "durable_p99_us",
    "durable_p999_us",
    "sync_p50_us",
    "sync_p90_us",
    "sync_p99_us",
    "sync_p999_us",
    "write_p99_us",
    "flushes_per_sync",
];

/// A threshold from a published check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// The metric (one of [`REQUIRABLE`]), in its catalogue unit (latencies in µs).
    pub metric: String,
    /// The value must be below this (`10000` µs: under 10 ms).
    #[serde(default)]
    pub below: Option<f64>,
    /// The value must be above this.
    #[serde(default)]
    pub above: Option<f64>,
    /// Who sets it and where, as they wrote it (`etcd FAQ: "99th percentile of fdatasync
    /// ... less than 10ms"`).
    pub source: String,
}

/// Checks a preset's requirements: known metrics, one finite bound each.
pub fn check_requirements(reqs: &[Requirement]) -> Result<(), String> {
    for r in reqs {
        if !REQUIRABLE.contains(&r.metric.as_str()) {
            return Err(format!(
                "requirement metric '{}' is not one of {}",
                r.metric,
                REQUIRABLE.join(", ")
            ));
        }
        let bounds = [r.below, r.above];
        if bounds.iter().flatten().count() != 1 {
            return Err(format!(
                "requirement on '{}' needs exactly one of below = N or above = N",
                r.metric
            ));
        }
        if bounds.iter().flatten().any(|v| !v.is_finite() || *v < 0.0) {
            return Err(format!(
                "requirement on '{}' has a bound that is not a finite number ≥ 0",
                r.metric
            ));
        }
        if r.source.trim().is_empty() || r.source.len() > 500 {
            return Err(format!(
                "requirement on '{}' needs its source (who sets it, where), at most 500 bytes",
                r.metric
            ));
        }
    }
    Ok(())
}

impl Requirement {
    /// Whether `value` meets it.
    pub fn met_by(&self, value: f64) -> bool {
        match (self.below, self.above) {
            (Some(b), _) => value < b,
            (None, Some(a)) => value > a,
            (None, None) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(metric: &str, below: Option<f64>, above: Option<f64>) -> Requirement {
        Requirement {
            metric: metric.into(),
            below,
            above,
            source: "etcd FAQ".into(),
        }
    }

    #[test]
    fn a_requirement_names_a_known_metric_and_one_bound() {
        assert!(check_requirements(&[req("sync_p99_us", Some(10_000.0), None)]).is_ok());
        assert!(check_requirements(&[req("nope", Some(1.0), None)]).is_err());
        assert!(check_requirements(&[req("iops", None, None)]).is_err());
        assert!(check_requirements(&[req("iops", Some(1.0), Some(2.0))]).is_err());
        assert!(check_requirements(&[req("iops", Some(f64::NAN), None)]).is_err());
        let r = req("sync_p99_us", Some(10_000.0), None);
        assert!(r.met_by(9_999.0) && !r.met_by(10_000.0) && !r.met_by(12_000.0));
        assert!(req("iops", None, Some(500.0)).met_by(501.0));
    }
}
