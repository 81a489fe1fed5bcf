//! A spec in one line a storage engineer reads at a glance ([`WorkloadSpec::describe`]):
//! what the run list, reports and the window show beside the figures.

use super::format_size;
use super::{
    FileioMode, IoEngine, Prepare, StopRule, SyncMethod, SyncOrder, WorkloadKind, WorkloadSpec,
};

impl WorkloadSpec {
    /// One line a storage engineer reads at a glance.
    pub fn describe(&self) -> String {
        match self.kind {
            WorkloadKind::Fileio => self.describe_fileio(),
            WorkloadKind::Smallfiles => self.describe_smallfiles(),
            WorkloadKind::Fileserver => format!(
                "fileserver {} clients, {} files each, {}",
                self.threads,
                self.fileserver.files_per_client,
                self.describe_stop()
            ),
            WorkloadKind::Grouplog => format!(
                "grouplog {} writers, {} records, {} log, {}, strategy {}, {}",
                self.threads,
                format_size(self.grouplog.record_size),
                format_size(self.grouplog.log_size),
                self.sync.as_str(),
                self.grouplog.strategy,
                self.describe_stop()
            ),
            WorkloadKind::Fio => self.describe_fio(),
        }
    }

    /// An imported fio run: what fio's job options said, in fio's words where the spec
    /// could not say more.
    fn describe_fio(&self) -> String {
        // threads 0: the importer could not translate fio's job options.
        if self.threads == 0 {
            return "fio (imported): workload not translated (see the run's fio options)".into();
        }
        let sync = if self.sync == SyncMethod::None {
            "no sync".to_string()
        } else {
            format!("{}={}", self.sync.as_str(), self.sync_every)
        };
        format!(
            "fio (imported) {} job(s), bs={}, {}, {:?}, {}",
            self.threads,
            format_size(self.block_size),
            sync,
            self.pattern,
            self.describe_stop()
        )
        .replace("Rand", "randwrite")
        .replace("Seq", "write")
    }

    /// How the run ends: bytes per thread, a duration or a request count.
    fn describe_stop(&self) -> String {
        match self.stop_rule() {
            StopRule::BytesPerThread(b) => format!("{} per thread", format_size(b)),
            StopRule::Duration(d) => format!("{:.1} s", d.as_secs_f64()),
            StopRule::TotalRequests(n) => format!("{n} requests"),
        }
    }

    fn describe_smallfiles(&self) -> String {
        let s = &self.smallfiles;
        let mut extras = Vec::new();
        if s.xattr {
            extras.push("64-byte xattr");
        }
        if s.chown {
            extras.push("chown phase");
        }
        if s.unlink {
            extras.push("unlink phase");
        }
        let limit = match self.duration_s {
            Some(d) => format!("up to {} files/thread or {d:.1} s", s.files_per_thread),
            None => format!("{} files/thread", s.files_per_thread),
        };
        format!(
            "smallfiles {} threads, {}, {}, sync {}{}{}",
            self.threads,
            limit,
            if s.file_size == 0 {
                "empty files".to_string()
            } else {
                format!("{} each", format_size(s.file_size))
            },
            s.sync.as_str(),
            if extras.is_empty() { "" } else { ", " },
            extras.join(", ")
        )
    }

    fn describe_fileio(&self) -> String {
        let files = if self.shares_files() {
            format!("{} shared file(s)", self.file_count())
        } else {
            "1 file/thread".into()
        };
        let sync = if self.sync == SyncMethod::None {
            "no sync".into()
        } else if self.mode == FileioMode::Sysbench {
            // sysbench counts the interval in requests of all threads together.
            format!(
                "{} every {} requests{}",
                self.sync.as_str(),
                self.sync_every,
                if self.final_sync { " + at the end" } else { "" }
            )
        } else {
            format!("{} every {}", self.sync.as_str(), self.sync_every)
        };
        let prepare = match self.prepare {
            Prepare::Empty => ", files start empty",
            Prepare::Sparse | Prepare::Fallocate | Prepare::Fill => "",
        };
        let engine = match self.ioengine {
            IoEngine::Sync => String::new(),
            IoEngine::IoUring => format!(
                ", io_uring depth {}{}{}{}",
                self.iodepth,
                if self.link_sync { ", linked syncs" } else { "" },
                if self.sync_order == SyncOrder::Unordered {
                    ", unordered syncs"
                } else {
                    ""
                },
                if self.fixedbufs {
                    ", fixed buffers"
                } else {
                    ""
                }
            ),
        };
        format!(
            "fileio{} {} threads, {} {:?} writes, {}, {} × {}{}, {}, flags {}{engine}",
            if self.mode == FileioMode::Sysbench {
                " (sysbench)"
            } else {
                ""
            },
            self.threads,
            block_words(self.block_size),
            self.pattern,
            sync,
            files,
            format_size(self.file_size),
            prepare,
            self.describe_stop(),
            self.open_flags.describe()
        )
        .replace("Rand", "random")
        .replace("Seq", "sequential")
    }
}

/// A block size as the description names it: `4k`, or `2300-byte` for one that is no
/// whole KiB (a bare `2300` would read as a count).
fn block_words(bytes: u64) -> String {
    if bytes.is_multiple_of(1024) {
        format_size(bytes)
    } else {
        format!("{bytes}-byte")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stop_rule_is_worded_the_same_for_fileio_and_grouplog() {
        for (duration_s, requests, want) in [
            (Some(2.0), None, "2.0 s"),
            (None, Some(500), "500 requests"),
            (None, None, "1M per thread"),
        ] {
            for kind in [WorkloadKind::Fileio, WorkloadKind::Grouplog] {
                let spec = WorkloadSpec {
                    kind,
                    duration_s,
                    requests,
                    file_size: 1 << 20,
                    ..Default::default()
                };
                let line = spec.describe();
                assert!(line.contains(want), "{kind:?}: {line}");
            }
        }
    }
}
