//! The request slots of an io_uring `fileio` worker (`super::fileio_uring`): what each slot
//! holds, which are free, and the per-file counters that decide when a sync may be linked
//! and which writes a completed sync covers. Sized before the gate; nothing here allocates
//! after it.

use crate::spec::SyncMethod;

/// What a slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SlotState {
    Free,
    Write,
    Sync(SyncMethod),
    /// A sync cancelled behind a failed or short linked write: queued again once its
    /// file's writes have all completed.
    Deferred(SyncMethod),
}

/// One request slot (its index is the request's `user_data`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Slot {
    pub(super) state: SlotState,
    pub(super) file: u32,
    pub(super) offset: u64,
    /// Bytes of the block already written (short writes continue from here).
    pub(super) done: u32,
    pub(super) submitted_ns: u64,
    /// A sync: how many of its file's writes it covers (a lower bound, see
    /// [`Slots::completed`]).
    pub(super) covers: u64,
    /// A write: its file's sync generation when it was queued (see
    /// [`Slots::uncovered`]).
    pub(super) sync_gen: u64,
    /// Queued since the last submission (its submission time is not set yet); a request
    /// queued again (short write, -EAGAIN, cancelled sync) keeps its first submission time.
    pub(super) fresh: bool,
    /// A crash test's write: its record's acknowledgement.
    pub(super) ack: Option<crate::crashlog::Ack>,
    /// A crash test's sync: its file's records issued before it was queued.
    pub(super) acks_upto: u64,
}

/// The bookkeeping of the requests in flight.
pub(super) struct Slots {
    pub(super) slots: Vec<Slot>,
    pub(super) free: Vec<u32>,
    /// Requests queued or in the kernel.
    pub(super) in_flight: u32,
    /// Writes in flight per file.
    pub(super) writes_in_flight: Vec<u32>,
    /// Writes since each file's last sync was issued.
    pub(super) pending: Vec<u64>,
    /// Writes in flight per file queued since its last sync was queued: no sync covers
    /// them yet. A sync may go linked behind its write only when this is 0 (the link
    /// makes the kernel wait for that one write, not for the others).
    pub(super) uncovered: Vec<u32>,
    /// Syncs queued per file: a write queued under an older generation is covered by a
    /// sync queued after it, so its completion leaves `uncovered` alone.
    pub(super) sync_gen: Vec<u64>,
    /// Writes completed per file. A sync covers the writes that completed before the
    /// kernel started it: at least those completed when it was queued (ordered: every
    /// write issued before it) plus, when linked, the write it is linked behind. Writes
    /// completing while it runs are not covered — they keep the file needing the final
    /// sync.
    pub(super) completed: Vec<u64>,
    /// Per file, the most writes a completed ordered sync covered (`completed` above it
    /// means the file has writes no completed sync covers).
    pub(super) synced: Vec<u64>,
    /// Clock of the last change of `in_flight`, and the time-weighted sum so far
    /// (request·ns), published for the sampler's mean depth.
    pub(super) last_change_ns: u64,
    pub(super) area: u64,
    /// Start times of completed writes waiting for a sync that covers them (the
    /// durable-operation latency; allocated before the gate and moved in).
    pub(super) durable: Option<super::durable::PendingStarts>,
    /// Whether each write is durable when it completes (O_SYNC, O_DSYNC).
    pub(super) durable_writes: bool,
    /// A crash test's records not yet acknowledged (`None` in a plain run).
    pub(super) acks: Option<super::uring_acks::UringAcks>,
}

impl Slots {
    pub(super) fn new(depth: u32, files: usize, now_ns: u64) -> Self {
        Self {
            slots: vec![
                Slot {
                    state: SlotState::Free,
                    file: 0,
                    offset: 0,
                    done: 0,
                    submitted_ns: 0,
                    covers: 0,
                    sync_gen: 0,
                    fresh: false,
                    ack: None,
                    acks_upto: 0,
                };
                depth as usize
            ],
            free: (0..depth).rev().collect(),
            in_flight: 0,
            writes_in_flight: vec![0; files],
            pending: vec![0; files],
            uncovered: vec![0; files],
            sync_gen: vec![0; files],
            completed: vec![0; files],
            synced: vec![0; files],
            last_change_ns: now_ns,
            area: 0,
            durable: None,
            durable_writes: false,
            acks: None,
        }
    }

    /// Accounts the depth held since the last change, up to `now_ns`.
    #[inline(always)]
    pub(super) fn advance(&mut self, now_ns: u64) {
        let dt = now_ns.saturating_sub(self.last_change_ns);
        self.area = self
            .area
            .saturating_add(u64::from(self.in_flight).saturating_mul(dt));
        self.last_change_ns = now_ns.max(self.last_change_ns);
    }

    pub(super) fn take(&mut self, state: SlotState, file: u32, offset: u64) -> u32 {
        let slot = self.free.pop().expect("the caller checked a slot is free");
        self.slots[slot as usize] = Slot {
            state,
            file,
            offset,
            done: 0,
            submitted_ns: 0,
            covers: 0,
            sync_gen: self.sync_gen[file as usize],
            fresh: true,
            ack: None,
            acks_upto: 0,
        };
        self.in_flight += 1;
        slot
    }

    pub(super) fn release(&mut self, slot: u32) {
        self.slots[slot as usize].state = SlotState::Free;
        self.free.push(slot);
        self.in_flight -= 1;
    }
}
