//! What one durable operation of a workload is: the unit a user compares when two runs make
//! their writes durable in different ways (fdatasync after a buffered write against an
//! O_DSYNC write). Its latency runs from a write's start to the moment that write is
//! durable; the engine records it for the specs [`durable_op`] accepts, the reports word the
//! reasons it gives for the others.

use super::WorkloadSpec;

/// Most write start times one worker keeps while waiting for the sync that makes them
/// durable (8 bytes each, allocated before the start gate): a spec that could need more
/// (a sync every million writes on many files) gets no durable latency instead of an
/// allocation in the timed loop.
pub const MAX_PENDING_STARTS: u64 = 1 << 20;

/// The unit of a workload's durable-operation latency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DurableOp {
    /// An O_SYNC or O_DSYNC write: durable when it returns.
    Write,
    /// A write made durable by the fsync or fdatasync that follows it (every write of a
    /// batch of `sync_every` is durable when the batch's sync returns).
    WriteThenSync,
    /// A group-commit record: from its append to its acknowledgement.
    Commit,
    /// A small file: from its create to the end of its sync (or its O_SYNC write).
    File,
}

/// Why a workload has no durable-operation latency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoDurableOp {
    /// Writes are buffered (or O_DIRECT into the device cache) and nothing syncs them
    /// before the run's end.
    NoSync,
    /// sync_file_range writes the range back but flushes no device cache and no metadata.
    SyncFileRange,
    /// sysbench mode: a write's sync is a shared event another thread may run.
    SysbenchShared,
    /// io_uring with unordered syncs: a sync need not cover the writes queued before it.
    UnorderedSyncs,
    /// A sync every so many writes on so many files that the start times would not fit
    /// in [`MAX_PENDING_STARTS`].
    TooManyPending,
    /// smallfiles with one syncfs per thread at its end.
    Syncfs,
    /// fileserver: a mix of operations, no one of them is "the" durable operation.
    Mix,
    /// A group commit that acknowledges each record before its flush (grouplog's unsafe
    /// `early-ack` control): what it acknowledges is not durable yet.
    EarlyAck,
    /// fileio's `sync_only`: syncs with nothing written before them.
    NothingWritten,
    /// An imported fio result: fio timed writes and syncs apart, and a write p99 plus a
    /// sync p99 is not the p99 of their sum.
    Imported,
}

/// What one durable operation of `spec` is, or why it has none (the kind's own answer).
pub fn durable_op(spec: &WorkloadSpec) -> Result<DurableOp, NoDurableOp> {
    if spec.kind() == super::WorkloadKind::Fio {
        return Err(NoDurableOp::Imported);
    }
    spec.kind_durable_op()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::FlatSpec;
    use crate::spec::{
        FileSync, FileioMode, IoEngine, OpenFlags, SyncMethod, SyncOrder, WorkloadKind,
    };

    fn fileio(sync: SyncMethod, flags: OpenFlags) -> WorkloadSpec {
        FlatSpec {
            sync,
            open_flags: flags,
            ..FlatSpec::default()
        }
        .typed()
    }

    #[test]
    fn each_way_of_committing_has_its_durable_operation() {
        let dsync = OpenFlags {
            dsync: true,
            ..Default::default()
        };
        let direct = OpenFlags {
            direct: true,
            ..Default::default()
        };
        let plain = OpenFlags::default();
        assert_eq!(
            durable_op(&fileio(SyncMethod::None, dsync)),
            Ok(DurableOp::Write)
        );
        assert_eq!(
            durable_op(&fileio(SyncMethod::Fdatasync, dsync)),
            Ok(DurableOp::Write),
            "an O_DSYNC write is durable before the sync that follows it"
        );
        assert_eq!(
            durable_op(&fileio(SyncMethod::Fdatasync, plain)),
            Ok(DurableOp::WriteThenSync)
        );
        assert_eq!(
            durable_op(&fileio(SyncMethod::None, direct)),
            Err(NoDurableOp::NoSync),
            "O_DIRECT alone leaves the data in the device cache"
        );
        assert_eq!(
            durable_op(&fileio(SyncMethod::SyncFileRange, plain)),
            Err(NoDurableOp::SyncFileRange)
        );
        let sysbench = FlatSpec {
            mode: FileioMode::Sysbench,
            ..fileio(SyncMethod::Fsync, plain).flat()
        }
        .typed();
        assert_eq!(durable_op(&sysbench), Err(NoDurableOp::SysbenchShared));
        let unordered = FlatSpec {
            ioengine: IoEngine::IoUring,
            sync_order: SyncOrder::Unordered,
            ..fileio(SyncMethod::Fsync, plain).flat()
        }
        .typed();
        assert_eq!(durable_op(&unordered), Err(NoDurableOp::UnorderedSyncs));
        let huge = FlatSpec {
            sync_every: u32::MAX,
            ..fileio(SyncMethod::Fsync, plain).flat()
        }
        .typed();
        assert_eq!(durable_op(&huge), Err(NoDurableOp::TooManyPending));
    }

    #[test]
    fn other_kinds_say_what_their_operation_is() {
        let kind = |kind| {
            FlatSpec {
                kind,
                ..FlatSpec::default()
            }
            .typed()
        };
        assert_eq!(
            durable_op(&kind(WorkloadKind::Grouplog)),
            Ok(DurableOp::Commit)
        );
        assert_eq!(
            durable_op(&kind(WorkloadKind::Smallfiles)),
            Ok(DurableOp::File)
        );
        assert_eq!(
            durable_op(&kind(WorkloadKind::Fileserver)),
            Err(NoDurableOp::Mix)
        );
        assert_eq!(
            durable_op(&kind(WorkloadKind::Fio)),
            Err(NoDurableOp::Imported)
        );
        let mut syncfs = kind(WorkloadKind::Smallfiles);
        syncfs.edit(|f| f.smallfiles.sync = FileSync::Syncfs);
        assert_eq!(durable_op(&syncfs), Err(NoDurableOp::Syncfs));
    }
}
