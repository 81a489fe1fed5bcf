//! What a side's crash tests found (issue 33): the findings of its crash-tested runs added
//! up, so a comparison says "2.1× faster" and, beside it, "lost 37 acknowledged records".

use serde::{Deserialize, Serialize};

use crate::crashlog::CrashReport;

/// The crash tests of one side's runs, added up.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashFindings {
    /// Crash-tested runs among the side's runs.
    pub runs: usize,
    /// Crash states checked, over those runs.
    pub states: usize,
    /// Records acknowledged before the last cut.
    pub acknowledged: usize,
    /// Acknowledged records lost in at least one state.
    pub lost: usize,
    /// Acknowledged records torn in at least one state.
    pub torn: usize,
    /// Acknowledged records found stale in at least one state.
    pub stale: usize,
    /// States whose filesystem did not mount.
    pub mount_failures: usize,
    /// States the filesystem's checker found errors in.
    pub fsck_failures: usize,
}

impl CrashFindings {
    /// The findings of `reports` (those of the runs in `run_ids` only); `None` when none of
    /// those runs was crash-tested.
    pub fn of(reports: &[(i64, CrashReport)], run_ids: &[i64]) -> Option<CrashFindings> {
        let mut f = CrashFindings::default();
        for (_, r) in reports.iter().filter(|(id, _)| run_ids.contains(id)) {
            f.runs += 1;
            f.states += r.states;
            f.acknowledged += r.acknowledged;
            f.lost += r.lost;
            f.torn += r.torn;
            f.stale += r.stale;
            f.mount_failures += r.mount_failures;
            f.fsck_failures += r.fsck_failures;
        }
        (f.runs > 0).then_some(f)
    }

    /// Whether an acknowledged record was lost, torn or stale, or a state did not mount or
    /// check clean.
    pub fn failed(&self) -> bool {
        self.lost + self.torn + self.stale + self.mount_failures + self.fsck_failures > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sides_findings_add_up_over_its_crash_tested_runs_only() {
        let report = |lost, acknowledged| CrashReport {
            cuts: 20,
            states: 40,
            acknowledged,
            lost,
            ..CrashReport::default()
        };
        let reports = vec![
            (1, report(0, 100)),
            (2, report(7, 120)),
            (9, report(50, 50)),
        ];
        let f = CrashFindings::of(&reports, &[1, 2, 3]).unwrap();
        assert_eq!((f.runs, f.states, f.acknowledged, f.lost), (2, 80, 220, 7));
        assert!(f.failed());
        let clean = CrashFindings::of(&reports, &[1]).unwrap();
        assert!(!clean.failed());
        assert_eq!(CrashFindings::of(&reports, &[3, 4]), None);
    }
}
