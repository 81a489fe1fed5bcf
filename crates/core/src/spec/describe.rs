//! A spec in one line a storage engineer reads at a glance ([`WorkloadSpec::describe`]):
//! what the run list, reports and the window show beside the figures.

use super::format_size;
use super::kinds::fileio::Spec as FileioSpec;
use super::{KindSpec, StopRule, SyncMethod, WorkloadSpec};

impl WorkloadSpec {
    /// One line a storage engineer reads at a glance.
    pub fn describe(&self) -> String {
        match &self.kind {
            KindSpec::Fio(f) => self.describe_fio(f),
            kind => kind.params().describe(self),
        }
    }

    /// An imported fio run: what fio's job options said, in fio's words where the spec
    /// could not say more.
    fn describe_fio(&self, f: &FileioSpec) -> String {
        // threads 0: the importer could not translate fio's job options.
        if self.common.threads == 0 {
            return "fio (imported): workload not translated (see the run's fio options)".into();
        }
        let sync = if f.sync == SyncMethod::None {
            "no sync".to_string()
        } else {
            format!("{}={}", f.sync.as_str(), f.sync_every)
        };
        format!(
            "fio (imported) {} job(s), bs={}, {}, {:?}, {}",
            self.common.threads,
            format_size(f.block_size),
            sync,
            f.pattern,
            self.describe_stop()
        )
        .replace("Rand", "randwrite")
        .replace("Seq", "write")
    }

    /// How the run ends: bytes per thread, a duration or a request count.
    pub(in crate::spec) fn describe_stop(&self) -> String {
        match self.stop_rule() {
            StopRule::BytesPerThread(b) => format!("{} per thread", format_size(b)),
            StopRule::Duration(d) => format!("{:.1} s", d.as_secs_f64()),
            StopRule::TotalRequests(n) => format!("{n} requests"),
            StopRule::Own => "no stop rule".into(),
        }
    }
}

#[cfg(test)]
mod tests {

    use crate::spec::FlatSpec;

    #[test]
    fn every_stop_rule_is_worded_the_same_for_fileio_and_grouplog() {
        for (duration_s, requests, want) in [
            (Some(2.0), None, "2.0 s"),
            (None, Some(500), "500 requests"),
            (None, None, "per thread"),
        ] {
            for kind in [
                super::super::WorkloadKind::Fileio,
                super::super::WorkloadKind::Grouplog,
            ] {
                // A grouplog run has no stop of its own: bytes per thread are fileio's.
                let want = match (kind, want) {
                    (super::super::WorkloadKind::Grouplog, "per thread") => "no stop rule",
                    (super::super::WorkloadKind::Fileio, "per thread") => "1M per thread",
                    _ => want,
                };
                let spec = FlatSpec {
                    kind,
                    duration_s,
                    requests,
                    file_size: 1 << 20,
                    ..FlatSpec::default()
                }
                .typed();
                let line = spec.describe();
                assert!(line.contains(want), "{kind:?}: {line}");
            }
        }
    }
}
