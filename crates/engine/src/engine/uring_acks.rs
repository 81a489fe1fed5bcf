//! A crash test's acknowledgements in an io_uring fileio worker (issue 33): every write is a
//! whole record, acknowledged when the worker treats it as durable — at its completion when
//! the file is opened O_SYNC/O_DSYNC (or nothing will sync it: the control), else when a
//! sync of its file completes: every record *issued* before that sync was queued. With
//! ordered syncs those writes had completed (the sync waits for them); with unordered ones
//! (`--sync-order unordered`, fio's io_uring engine) some may still have been in flight, and
//! a crash test then finds the ones the sync did not cover — the point of acknowledging as
//! an application that trusts the completion order would.
//!
//! Only a crash test allocates here (its queues, sized before the gate); a plain run has no
//! `UringAcks`.

use std::collections::VecDeque;

use super::api::AckSink;
use super::buf::AlignedBuf;
use crate::crashlog::{Ack, RecordId, fill_record};

/// The records of one worker not yet acknowledged.
pub(super) struct UringAcks {
    /// The acknowledgement file number of the worker's first file.
    first_file: u32,
    /// Blocks over all the worker's files (a pass over them is one version of each place).
    total_blocks: u64,
    block_size: u32,
    thread: u32,
    /// Acknowledged when written, not when synced.
    at_write: bool,
    /// Records written so far by the worker (the next one's sequence number).
    seq: u64,
    /// Per file: records issued so far, and those issued but not yet acknowledged.
    issued: Vec<u64>,
    acked: Vec<u64>,
    unacked: Vec<VecDeque<Ack>>,
}

impl UringAcks {
    /// The acknowledgements of worker `thread` over `files` files of `blocks_per_file`
    /// blocks each, numbered from `first_file`; `at_write` when each write is durable (or
    /// acknowledged anyway) when it completes; `window` records per file may wait for a
    /// sync (allocated now).
    pub(super) fn new(
        (thread, first_file): (u32, u32),
        (files, blocks_per_file, block_size): (usize, u64, u32),
        at_write: bool,
        window: usize,
    ) -> Self {
        Self {
            first_file,
            total_blocks: (blocks_per_file * files as u64).max(1),
            block_size,
            thread,
            at_write,
            seq: 0,
            issued: vec![0; files],
            acked: vec![0; files],
            unacked: (0..files)
                .map(|_| VecDeque::with_capacity(if at_write { 0 } else { window }))
                .collect(),
        }
    }

    /// Fills `buf` with the next record, for `file` at `offset`; returns its
    /// acknowledgement (kept by the write's slot when written means acknowledged).
    pub(super) fn fill(
        &mut self,
        sink: &AckSink,
        buf: &mut AlignedBuf,
        file: u32,
        offset: u64,
    ) -> Ack {
        let id = RecordId {
            run: sink.run(),
            thread: self.thread,
            seq: self.seq,
            version: self.seq / self.total_blocks,
        };
        self.seq += 1;
        buf.fill_with(|bytes| {
            fill_record(bytes, &id);
        });
        let ack = Ack {
            id,
            file: self.first_file + file,
            offset,
            len: self.block_size,
        };
        self.issued[file as usize] += 1;
        if !self.at_write {
            self.unacked[file as usize].push_back(ack);
        }
        ack
    }

    /// Records issued for `file` so far: what a sync queued now is taken to cover.
    pub(super) fn issued(&self, file: u32) -> u64 {
        self.issued[file as usize]
    }

    /// A write completed: acknowledged now when written means durable.
    pub(super) fn written(&mut self, sink: &AckSink, ack: &Ack) -> std::io::Result<()> {
        if self.at_write {
            sink.ack(ack)?;
        }
        Ok(())
    }

    /// A sync of `file` completed that was queued after its first `upto` records were
    /// issued: those not acknowledged yet are, in issue order.
    pub(super) fn synced(&mut self, sink: &AckSink, file: u32, upto: u64) -> std::io::Result<()> {
        let f = file as usize;
        while self.acked[f] < upto {
            let Some(ack) = self.unacked[f].pop_front() else {
                break;
            };
            sink.ack(&ack)?;
            self.acked[f] += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crashlog::ACK_BYTES;

    fn sink() -> (tempfile::TempDir, std::path::PathBuf, AckSink) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("marks");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap();
        (dir, path, AckSink::new(file, 5))
    }

    fn acked(path: &std::path::Path) -> Vec<(u32, u64)> {
        std::fs::read(path)
            .unwrap()
            .chunks(ACK_BYTES)
            .map(|c| Ack::decode(c).unwrap())
            .map(|a| (a.file, a.id.seq))
            .collect()
    }

    #[test]
    fn a_sync_acknowledges_what_was_issued_before_it_was_queued_in_issue_order() {
        let (_dir, path, sink) = sink();
        let mut acks = UringAcks::new((1, 1), (2, 4, 512), false, 8);
        let mut buf = AlignedBuf::new(512, 0);
        // Three records to file 0, one to file 1, one more to file 0.
        for (file, offset) in [(0, 0), (0, 512), (0, 1024), (1, 0), (0, 1536)] {
            acks.fill(&sink, &mut buf, file, offset);
        }
        assert_eq!(acks.issued(0), 4);
        // A sync of file 0 queued after its first three records.
        acks.synced(&sink, 0, 3).unwrap();
        assert_eq!(acked(&path), vec![(1, 0), (1, 1), (1, 2)]);
        // Completing again (or late) adds nothing; a later one covers the rest.
        acks.synced(&sink, 0, 3).unwrap();
        acks.synced(&sink, 1, 1).unwrap();
        acks.synced(&sink, 0, 4).unwrap();
        assert_eq!(acked(&path), vec![(1, 0), (1, 1), (1, 2), (2, 3), (1, 4)]);
        // Eight blocks in all: the ninth record is the second version of its place.
        for _ in 0..4 {
            acks.fill(&sink, &mut buf, 1, 0);
        }
        let last = acks.fill(&sink, &mut buf, 1, 0);
        assert_eq!((last.id.seq, last.id.version), (9, 1));
    }

    #[test]
    fn durable_writes_are_acknowledged_as_they_complete_and_syncs_add_nothing() {
        let (_dir, path, sink) = sink();
        let mut acks = UringAcks::new((0, 0), (1, 4, 512), true, 0);
        let mut buf = AlignedBuf::new(512, 0);
        let first = acks.fill(&sink, &mut buf, 0, 0);
        let second = acks.fill(&sink, &mut buf, 0, 512);
        acks.written(&sink, &second).unwrap();
        acks.synced(&sink, 0, 2).unwrap();
        acks.written(&sink, &first).unwrap();
        assert_eq!(acked(&path), vec![(0, 1), (0, 0)]);
    }
}
