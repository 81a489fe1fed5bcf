//! fileio's part of the typed spec: its own settings, read from and written to the flat
//! form, and the questions asked of a kind's settings ([`KindParams`]).

use super::super::super::FlatSpec;
use super::super::super::{
    DurableOp, IoEngine, NoDurableOp, OpenFlags, Pattern, Prepare, Setting, SpecError, SyncMethod,
    SyncOrder, WorkloadSpec,
};
use super::super::def::KindParams;
use super::FileioMode;

/// A fileio run's own settings (also what an imported fio run's options translate to).
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// fio-style or sysbench-style request and sync counting.
    pub mode: FileioMode,
    /// Bytes per write: 512 or more (a multiple of 512 with O_DIRECT).
    pub block_size: u64,
    /// Size of each test file.
    pub file_size: u64,
    /// Bytes each thread writes before it stops (fio `io_size`); default the file size.
    /// Ignored when a duration or a request count is set.
    pub io_size: Option<u64>,
    /// Block order.
    pub pattern: Pattern,
    /// `None`: one file per thread (fio). `Some(n)`: n files shared by all threads; every
    /// thread writes blocks of all n files, as sysbench `--file-num` does.
    pub shared_files: Option<u32>,
    /// File preparation.
    pub prepare: Prepare,
    /// Sync call.
    pub sync: SyncMethod,
    /// Writes between two sync calls, per thread (fio `fsync=N`).
    pub sync_every: u32,
    /// Open flags.
    pub open_flags: OpenFlags,
    /// One more sync per file when a thread finishes (fio `end_fsync`), timed as a sync.
    pub final_sync: bool,
    /// Synchronous calls or io_uring (fio `ioengine`).
    pub ioengine: IoEngine,
    /// io_uring: requests in flight per thread, writes and syncs together (fio `iodepth`).
    pub iodepth: u32,
    /// io_uring: submit each sync linked (`IOSQE_IO_LINK`) behind the write before it.
    pub link_sync: bool,
    /// io_uring: write from registered buffers (`IORING_OP_WRITE_FIXED`, fio `fixedbufs`).
    pub fixedbufs: bool,
    /// io_uring: whether an unlinked sync waits for the writes before it.
    pub sync_order: SyncOrder,
    /// Each request a sync with no write before it (the cost of an empty fsync).
    pub sync_only: bool,
}

impl Default for Spec {
    fn default() -> Self {
        <Self as KindParams>::from_flat(&FlatSpec::default())
    }
}

impl Spec {
    /// Bytes each thread writes under the byte-count stop rule.
    pub fn io_size_per_thread(&self) -> u64 {
        self.io_size.unwrap_or(self.file_size)
    }

    /// Number of distinct test files of a run of `threads` threads (sysbench mode shares
    /// one file unless `shared_files` says otherwise).
    pub fn file_count(&self, threads: u32) -> u32 {
        match self.mode {
            FileioMode::Sysbench => self.shared_files.unwrap_or(1),
            FileioMode::Fio => self.shared_files.unwrap_or(threads),
        }
    }

    /// Whether threads write shared files (always in sysbench mode).
    pub fn shares_files(&self) -> bool {
        self.shared_files.is_some() || self.mode == FileioMode::Sysbench
    }

    /// Start times one file of a worker may hold before a sync covers them: a batch; with
    /// io_uring, a batch behind each sync in flight (up to the depth) plus the writes in
    /// flight.
    pub fn pending_starts_per_file(&self) -> u64 {
        let batch = u64::from(self.sync_every);
        if self.ioengine == IoEngine::IoUring {
            let depth = u64::from(self.iodepth);
            batch
                .saturating_mul(depth.saturating_add(1))
                .saturating_add(depth)
                .saturating_add(1)
        } else {
            batch.saturating_add(1)
        }
    }

    /// Files one worker of a run of `threads` threads writes (each of its own, or all the
    /// shared ones).
    pub fn files_per_worker(&self, threads: u32) -> u64 {
        if self.shares_files() {
            u64::from(self.file_count(threads))
        } else {
            1
        }
    }

    /// Blocks per file (whole blocks only; a tail shorter than a block is never written).
    pub fn blocks_per_file(&self) -> u64 {
        self.file_size / self.block_size.max(1)
    }
}

/// The name of test file `i`: one per thread, or one of the shared files.
pub fn file_name(shared: bool, i: u32) -> String {
    if shared {
        format!("shared-{i}.dat")
    } else {
        format!("thread-{i}.dat")
    }
}

impl KindParams for Spec {
    fn from_flat(flat: &FlatSpec) -> Self {
        Self {
            mode: flat.mode,
            block_size: flat.block_size,
            file_size: flat.file_size,
            io_size: flat.io_size,
            pattern: flat.pattern,
            shared_files: flat.shared_files,
            prepare: flat.prepare,
            sync: flat.sync,
            sync_every: flat.sync_every,
            open_flags: flat.open_flags,
            final_sync: flat.final_sync,
            ioengine: flat.ioengine,
            iodepth: flat.iodepth,
            link_sync: flat.link_sync,
            fixedbufs: flat.fixedbufs,
            sync_order: flat.sync_order,
            sync_only: flat.sync_only,
        }
    }

    fn write_flat(&self, flat: &mut FlatSpec) {
        flat.mode = self.mode;
        flat.block_size = self.block_size;
        flat.file_size = self.file_size;
        flat.io_size = self.io_size;
        flat.pattern = self.pattern;
        flat.shared_files = self.shared_files;
        flat.prepare = self.prepare;
        flat.sync = self.sync;
        flat.sync_every = self.sync_every;
        flat.open_flags = self.open_flags;
        flat.final_sync = self.final_sync;
        flat.ioengine = self.ioengine;
        flat.iodepth = self.iodepth;
        flat.link_sync = self.link_sync;
        flat.fixedbufs = self.fixedbufs;
        flat.sync_order = self.sync_order;
        flat.sync_only = self.sync_only;
    }

    fn problems(&self, spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
        super::size_problems(self, errs);
        super::problems(spec, self, errs);
        super::uring_checks::ioengine_problems(self, errs);
    }

    fn describe(&self, spec: &WorkloadSpec) -> String {
        super::describe(spec, self)
    }

    fn durable_op(&self, spec: &WorkloadSpec) -> Result<DurableOp, NoDurableOp> {
        super::durable_op(spec, self)
    }

    fn sync(&self) -> Option<SyncMethod> {
        Some(self.sync)
    }

    fn open_flags(&self) -> OpenFlags {
        self.open_flags
    }

    fn sync_every(&self) -> Option<u32> {
        Some(self.sync_every)
    }

    fn syncs_unchanged_files(&self) -> bool {
        self.sync_only
    }

    /// Whether each thread's last write goes without its periodic sync: a size-based run
    /// (`common` has no duration and no request count) in fio mode syncs when it fetches the
    /// next write, as fio does, and after a thread's last write there is none; a final sync
    /// (fio's `end_fsync`) syncs it at the end. So such a thread of W writes makes
    /// ⌊(W − 1) / sync_every⌋ syncs, one fewer than W / sync_every when that divides.
    fn skips_last_periodic_sync(&self, common: &crate::spec::CommonSpec) -> bool {
        self.mode == FileioMode::Fio
            && common.duration_s.is_none()
            && common.requests.is_none()
            && self.sync != crate::spec::SyncMethod::None
            && self.sync_every > 0
            && !self.final_sync
            && !self.sync_only
    }

    fn pending_starts(&self) -> u64 {
        self.pending_starts_per_file()
    }

    fn io_uring_setting(&self) -> Option<Setting> {
        (self.ioengine == IoEngine::IoUring).then_some(Setting::IO_ENGINE)
    }

    fn bytes_per_thread(&self) -> Option<u64> {
        Some(self.io_size_per_thread())
    }

    fn acknowledged_files(
        &self,
        spec: &WorkloadSpec,
    ) -> Result<crate::crashlog::AckedFiles, super::super::def::NoAcks> {
        if self.mode != FileioMode::Fio {
            return Err(super::super::def::NoAcks::setting(
                Setting::MODE,
                "sysbench mode shares its syncs between threads",
            ));
        }
        if self.sync_only {
            return Err(super::super::def::NoAcks::setting(
                Setting::SYNC_ONLY,
                "sync only writes no records",
            ));
        }
        if self.shared_files.is_some() {
            return Err(super::super::def::NoAcks::setting(
                Setting::SHARED_FILES,
                "shared files interleave several writers' records",
            ));
        }
        Ok(crate::crashlog::AckedFiles::Listed(
            (0..spec.common.threads)
                .map(|i| file_name(false, i))
                .collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use crate::spec::{FlatSpec, SyncMethod};

    /// Whether `flat`'s run leaves each thread's last write without its periodic sync.
    fn skips(flat: FlatSpec) -> bool {
        flat.typed().skips_last_periodic_sync()
    }

    #[test]
    fn only_a_size_based_fio_mode_run_without_a_final_sync_skips_the_last_sync() {
        let sized = FlatSpec {
            duration_s: None,
            requests: None,
            sync: SyncMethod::Fsync,
            sync_every: 1,
            final_sync: false,
            ..FlatSpec::default()
        };
        assert!(skips(sized.clone()));
        for other in [
            FlatSpec {
                duration_s: Some(1.0),
                ..sized.clone()
            },
            FlatSpec {
                requests: Some(10),
                ..sized.clone()
            },
            FlatSpec {
                final_sync: true,
                ..sized.clone()
            },
            FlatSpec {
                sync: SyncMethod::None,
                ..sized.clone()
            },
            FlatSpec {
                mode: crate::spec::FileioMode::Sysbench,
                ..sized.clone()
            },
        ] {
            assert!(!skips(other.clone()), "{other:?}");
        }
    }
}
