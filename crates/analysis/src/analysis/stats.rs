//! Descriptive statistics, 95% confidence intervals and Welch's t-test.
//!
//! Reference values in the tests were computed independently with SciPy 1.17.1:
//! `numpy.mean`, `scipy.stats.hmean`, `numpy.std(ddof=1)`,
//! `scipy.stats.t.interval(0.95, n-1, loc=mean, scale=sem)` and
//! `scipy.stats.ttest_ind(a, b, equal_var=False)`.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Summary of one metric over the runs of one side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Number of values.
    pub n: usize,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// Arithmetic mean.
    pub amean: f64,
    /// Harmonic mean (the right mean of rates); `None` unless every value is positive.
    pub hmean: Option<f64>,
    /// Sample standard deviation (n − 1); 0 for n = 1.
    pub stddev: f64,
    /// Coefficient of variation, % of the mean.
    pub coeff_var_pct: f64,
    /// 95% confidence interval of the mean (Student's t); `None` for n < 2.
    pub ci95: Option<(f64, f64)>,
}

/// Statistics of `values`; `None` when empty or any value is not finite.
pub fn describe(values: &[f64]) -> Option<Stats> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let n = values.len();
    let nf = n as f64;
    let amean = values.iter().sum::<f64>() / nf;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let hmean = if values.iter().all(|&v| v > 0.0) {
        Some(nf / values.iter().map(|v| 1.0 / v).sum::<f64>())
    } else {
        None
    };
    let stddev = if n > 1 {
        (values.iter().map(|v| (v - amean).powi(2)).sum::<f64>() / (nf - 1.0)).sqrt()
    } else {
        0.0
    };
    let coeff_var_pct = if amean != 0.0 {
        stddev / amean.abs() * 100.0
    } else {
        0.0
    };
    let ci95 = if n > 1 {
        let t = t_quantile(0.975, nf - 1.0);
        let half = t * stddev / nf.sqrt();
        Some((amean - half, amean + half))
    } else {
        None
    };
    Some(Stats {
        n,
        min,
        max,
        amean,
        hmean,
        stddev,
        coeff_var_pct,
        ci95,
    })
}

/// Student's t quantile; falls back to the normal 1.96 if the distribution is unusable.
fn t_quantile(p: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df)
        .map(|t| t.inverse_cdf(p))
        .unwrap_or(1.959_963_984_540_054)
}

/// Result of Welch's unequal-variances t-test.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Welch {
    /// t statistic (a − b).
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p_value: f64,
}

/// Welch's t-test of the means of `a` and `b`; `None` unless both have n ≥ 2.
/// Two constant samples give p = 1 when equal and p = 0 when different.
pub fn welch_t_test(a: &[f64], b: &[f64]) -> Option<Welch> {
    let (sa, sb) = (describe(a)?, describe(b)?);
    if sa.n < 2 || sb.n < 2 {
        return None;
    }
    let va = sa.stddev.powi(2) / sa.n as f64;
    let vb = sb.stddev.powi(2) / sb.n as f64;
    let se2 = va + vb;
    let diff = sa.amean - sb.amean;
    if se2 == 0.0 {
        let p_value = if diff == 0.0 { 1.0 } else { 0.0 };
        return Some(Welch {
            t: if diff == 0.0 {
                0.0
            } else {
                diff.signum() * f64::INFINITY
            },
            df: f64::NAN,
            p_value,
        });
    }
    let t = diff / se2.sqrt();
    let df = se2.powi(2) / (va.powi(2) / (sa.n as f64 - 1.0) + vb.powi(2) / (sb.n as f64 - 1.0));
    let p_value = StudentsT::new(0.0, 1.0, df)
        .map(|d| 2.0 * d.sf(t.abs()))
        .unwrap_or(f64::NAN);
    Some(Welch { t, df, p_value })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn describe_matches_scipy() {
        let s = describe(&[71.22, 69.8, 73.1, 70.5, 72.0]).unwrap();
        assert_eq!(s.n, 5);
        assert!(close(s.amean, 71.324, 1e-12));
        assert!(close(s.hmean.unwrap(), 71.305494176418, 1e-12));
        assert!(close(s.stddev, 1.286810009286529, 1e-12));
        let (lo, hi) = s.ci95.unwrap();
        assert!(close(lo, 69.72621433894066, 1e-9), "{lo}");
        assert!(close(hi, 72.92178566105933, 1e-9), "{hi}");
        assert!(close(
            s.coeff_var_pct,
            1.286810009286529 / 71.324 * 100.0,
            1e-12
        ));
        assert_eq!((s.min, s.max), (69.8, 73.1));
        assert!(close(t_quantile(0.975, 4.0), 2.7764451051977934, 1e-9));
    }

    #[test]
    fn welch_matches_scipy() {
        let w = welch_t_test(
            &[71.22, 69.8, 73.1, 70.5, 72.0],
            &[64.94, 66.1, 63.2, 65.5, 64.0],
        )
        .unwrap();
        assert!(close(w.t, 8.486185699230404, 1e-9));
        assert!(close(w.df, 7.915958322151995, 1e-9));
        assert!(
            close(w.p_value, 3.0358968269498082e-05, 1e-6),
            "{}",
            w.p_value
        );
        let w = welch_t_test(&[5301.0, 4890.0, 5602.0], &[529.0, 540.0, 515.0, 533.0]).unwrap();
        assert!(close(w.t, 22.93908395920999, 1e-9));
        assert!(
            close(w.p_value, 0.001882798452325489, 1e-6),
            "{}",
            w.p_value
        );
        let w = welch_t_test(&[10.0, 10.5, 9.8], &[10.1, 10.2, 9.9]).unwrap();
        assert!(close(w.t, 0.14744195615490466, 1e-9));
        assert!(close(w.df, 2.695541401273882, 1e-9));
        assert!(close(w.p_value, 0.8931081195559912, 1e-6), "{}", w.p_value);
    }

    #[test]
    fn single_values_and_degenerate_cases() {
        let s = describe(&[42.0]).unwrap();
        assert_eq!((s.n, s.stddev, s.ci95), (1, 0.0, None));
        assert!(
            welch_t_test(&[1.0], &[2.0, 3.0]).is_none(),
            "n = 1 claims nothing"
        );
        assert!(describe(&[]).is_none());
        assert!(describe(&[1.0, f64::NAN]).is_none());
        assert_eq!(describe(&[0.0, 2.0]).unwrap().hmean, None);
        assert_eq!(welch_t_test(&[2.0, 2.0], &[2.0, 2.0]).unwrap().p_value, 1.0);
        assert_eq!(welch_t_test(&[2.0, 2.0], &[3.0, 3.0]).unwrap().p_value, 0.0);
    }
}
